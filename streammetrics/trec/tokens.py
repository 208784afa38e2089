"""Tokens of TREC text files: C's ``atol`` / ``atof``, the fields of text lines, numbers of a column.

The shared first step of every TREC reader (:mod:`.readers`, :mod:`.binread`, :mod:`.runfile`,
:mod:`.judgment_groups`, :mod:`.preferences`): lines read ``chunk_lines`` at a time, split into
white-space separated fields (one ``split`` per chunk when every line fits, else line by line),
blank and ``#`` lines skipped, a line with the wrong number of fields an error naming it.
"""

from __future__ import annotations

import itertools
import os
import re
from collections.abc import Iterable, Iterator

import numpy as np

from streammetrics._core.docstrings import filled

from . import progress
from .checked import TrecFormatError, utf8_errors

__all__ = ["atof", "atol", "parse_numbers", "text_fields", "qrels_text_columns", "fixed_fields",
           "line_chunks"]

_ATOL = re.compile(r"\s*([+-]?\d*)")
_ATOF = re.compile(r"\s*([+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)")


def atol(text: str) -> int:
    """C's ``atol``: the leading integer of ``text`` (0 when there is none).

    Parameters
    ----------
    text : str
        The text; leading white space is skipped, then an optional sign and digits are read.

    Returns
    -------
    int
        The integer read, or 0.

    Examples
    --------
    >>> from streammetrics.trec.tokens import atol
    >>> atol(" 12abc"), atol("-3.7"), atol("x")
    (12, -3, 0)
    """
    m = _ATOL.match(text)
    digits = m.group(1) if m else ""
    return int(digits) if digits.strip("+-") else 0


def atof(text: str) -> float:
    """C's ``atof``: the leading decimal number of ``text`` (0.0 when there is none).

    Parameters
    ----------
    text : str
        The text; leading white space is skipped, then the longest decimal number (with an
        optional sign and exponent) is read.

    Returns
    -------
    float
        The number read, or 0.0.

    Examples
    --------
    >>> from streammetrics.trec.tokens import atof
    >>> atof("0.25x"), atof(" 1e-2,"), atof("abc")
    (0.25, 0.01, 0.0)
    """
    m = _ATOF.match(text)
    return float(m.group(1)) if m else 0.0



def parse_numbers(path: str, tokens: list[str], line_of: list[int], what: str) -> np.ndarray:
    """One column of a TREC file as float64, in one vectorised conversion. O(n).

    Parameters
    ----------
    path : str
        The file, for the error message.
    tokens : list of str
        The column's tokens.
    line_of : list of int
        The line number of each token.
    what : str
        What the column holds ("grade", "score"), for the error message.

    Returns
    -------
    numpy.ndarray
        The values (NaN and inf as read: each caller says which it refuses).

    Raises
    ------
    TrecFormatError
        A token that is not a number, naming the file, its line and the token.
    """
    try:
        return np.array(tokens, dtype=np.float64)
    except ValueError:
        for tok, line in zip(tokens, line_of, strict=True):
            try:
                float(tok)
            except ValueError:
                raise TrecFormatError(f"{path}:{line}: {what} {tok!r} is not a number") from None
        raise


@filled
def text_fields(path: str, lines: Iterable[str], first: int, fields: int, layout: str,
                extra: bool = False) -> Iterator[tuple[int, list[str]]]:  # fmt: skip
    """(line number, fields) of each line read as text, lazily (the first at line ``first``): blank and
    ``#`` lines skipped; a line without ``fields`` fields (``extra``: at least that many) is an
    error naming the line and the ``layout`` expected.

    Parameters
    ----------
    {trec: path}
    lines : iterable of str
        The lines, as read (a list, or an open text file).
    first : int
        The line number of the first line in the file (1-based).
    fields : int
        The number of white-space separated fields a line must have.
    layout : str
        The layout expected, for error messages (``"qid iter docno grade"``).
    extra : bool, default=False
        Accept lines with more than ``fields`` fields.

    Returns
    -------
    iterator of (int, list of str)
        The line number and the fields of each line that is neither blank nor a comment (a
        line is checked when it is reached).

    Raises
    ------
    TrecFormatError
        If a line has the wrong number of fields.

    Examples
    --------
    >>> from streammetrics.trec.tokens import text_fields
    >>> list(text_fields("qrels", ["q1 0 d1 1", "# note", "q1 0 d2 0"], 1, 4, "qid iter docno grade"))
    [(1, ['q1', '0', 'd1', '1']), (3, ['q1', '0', 'd2', '0'])]
    """
    for k, line in enumerate(lines):
        parts = line.split()
        if not parts or parts[0].startswith("#"):
            continue
        if "\x00" in line:
            raise TrecFormatError(f"{path}:{first + k}: a NUL byte (not text): {line.strip()!r}")
        if len(parts) < fields or (len(parts) > fields and not extra):
            raise TrecFormatError(
                f"{path}:{first + k}: expected {fields} fields '{layout}', got {len(parts)}: {line.strip()!r}"
            )
        yield first + k, parts


@filled
def qrels_text_columns(
    path: str, lines: list[str], first: int
) -> tuple[list[str], list[str], list[str], list[int]]:
    """(qid, docno, grade) columns and line numbers of qrels lines read as text (the first at line
    ``first``): blank and ``#`` lines skipped, other than 4 fields an error naming the line.

    Parameters
    ----------
    {trec: path}
    lines : list of str
        The qrels lines, as read.
    {trec: first_of_lines}

    Returns
    -------
    qids, docnos, grades : list of str
        The first, third and fourth field of each line (the grade not yet converted).
    line_numbers : list of int
        The line number of each row.

    Raises
    ------
    TrecFormatError
        If a line has other than 4 fields.

    Examples
    --------
    >>> from streammetrics.trec.tokens import qrels_text_columns
    >>> qrels_text_columns("qrels", ["q1 0 d1 2", "", "q2 0 d9 0"], 1)
    (['q1', 'q2'], ['d1', 'd9'], ['2', '0'], [1, 3])
    """
    rows = list(text_fields(path, lines, first, 4, "qid iter docno grade"))
    return [p[0] for _, p in rows], [p[2] for _, p in rows], [p[3] for _, p in rows], [n for n, _ in rows]


def fixed_fields(text: str, n: int, fields: int) -> list[str] | None:
    """The fields of ``n`` lines joined as ``text`` when every line has exactly ``fields`` fields,
    by one ``split`` with a sentinel per line end; else ``None`` (some line is blank, a ``#``
    comment, or has another number of fields: the caller reads line by line).

    Parameters
    ----------
    text : str
        The lines, joined as read.
    n : int
        The number of lines in ``text``.
    fields : int
        The number of white-space separated fields every line must have.

    Returns
    -------
    list of str or None
        The tokens, ``fields + 1`` a line (the fields, then the sentinel ``"\\x00"``): field ``j``
        of every line is ``tokens[j::fields + 1]``. ``None`` when a line does not fit.

    Examples
    --------
    >>> fixed_fields("q1 0 d1 1\\nq2 0 d9 0\\n", 2, 4)[2::5]
    ['d1', 'd9']
    >>> fixed_fields("q1 0 d1 1\\n# note\\n", 2, 4) is None
    True
    """
    if "\x00" in text:
        return None
    tokens = text.replace("\n", " \x00 ").split()
    if not text.endswith("\n"):
        tokens.append("\x00")
    stride = fields + 1
    if len(tokens) != stride * n or tokens[fields::stride].count("\x00") != n:
        return None
    if "#" in text and any(q.startswith("#") for q in tokens[0::stride]):
        return None
    return tokens


@filled
def line_chunks(path: str, chunk_lines: int) -> Iterator[tuple[int, list[str]]]:
    """The lines of a text file, ``chunk_lines`` at a time, each chunk with the number of its first
    line.

    Parameters
    ----------
    {trec: path}
    chunk_lines : int
        The number of lines a chunk holds (the last chunk may hold fewer).

    Returns
    -------
    iterator of (int, list of str)
        The 1-based line number of the chunk's first line and the chunk's lines, as read; an empty
        file gives no chunk.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "lines.txt"
    >>> _ = path.write_text("a\\nb\\nc\\n")
    >>> [(first, len(lines)) for first, lines in line_chunks(str(path), 2)]
    [(1, 2), (3, 1)]
    """
    lineno = 0
    report = progress.current()
    with utf8_errors(path), open(path, encoding="utf-8") as fh:
        while True:
            lines = list(itertools.islice(fh, chunk_lines))
            if not lines:
                return
            if report is not None:
                report(path, os.lseek(fh.fileno(), 0, os.SEEK_CUR))
            first, lineno = lineno + 1, lineno + len(lines)
            yield first, lines
