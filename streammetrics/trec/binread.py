"""TREC files read in large binary chunks and tokenized by ``bytes.split`` (C speed).

A chunk (about ``chunk_bytes`` bytes, cut after its last newline; a longer line makes a longer
chunk) of plain lines -- ASCII, every line with the expected number of fields, no blank or ``#``
line -- is tokenized by one ``split`` with a sentinel token per line end (which proves that every
line has that many fields) and its columns are taken by slicing; numbers are converted in one
pass. Any other chunk (comments, blank lines, extra run fields, non-ASCII text, lone ``\\r`` line
ends) is decoded and read line by line as text, as Python's text files read it (universal
newlines), so both paths give the same tokens, line numbers and errors. Columns of ids are
``bytes`` (UTF-8).
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator

import numpy as np

from streammetrics._core.docstrings import filled

from . import progress
from .checked import TrecFormatError, check_grades, utf8_errors
from .tokens import parse_numbers, qrels_text_columns, text_fields

__all__ = ["paused_gc", "CHUNK_BYTES", "byte_chunks", "run_columns", "qrels_columns", "text_run_columns",
           "run_scores"]

#: Default size of the chunks read at once (the run's share of memory).
CHUNK_BYTES = 1 << 16
_ODD = (b"\x00", b"\x1c", b"\x1d", b"\x1e", b"\x1f")  # str.split() separators that bytes.split() keeps


@contextlib.contextmanager
def paused_gc() -> Iterator[None]:
    """Python's cyclic garbage collector paused (as it was before, afterwards): reading makes
    millions of small objects and no reference cycle, so the collections it would trigger (each
    walking every live container) find nothing.

    Returns
    -------
    context manager
        Disables the collector on entry and re-enables it on exit if it was enabled before.

    Examples
    --------
    >>> import gc
    >>> from streammetrics.trec.binread import paused_gc
    >>> with paused_gc():
    ...     gc.isenabled()
    False
    >>> gc.isenabled()
    True
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def byte_chunks(path: str, chunk_bytes: int = CHUNK_BYTES, start: int = 0) -> Iterator[bytes]:
    """The file in chunks of whole lines (each cut after a newline; the last may lack one).

    Parameters
    ----------
    path : str
        The file to read (binary).
    chunk_bytes : int, default=CHUNK_BYTES
        The bytes read at once; a chunk ends after the last newline read, so a line longer than
        this makes a longer chunk. Time and memory are linear in the file's size, however long its
        lines.
    start : int, default=0
        The byte offset to start at (a line's first byte); a read from a later offset (reading a
        part of the file back) reports no progress.

    Yields
    ------
    bytes
        Consecutive chunks; together they are the file (from ``start``).

    Examples
    --------
    >>> import os, tempfile
    >>> from streammetrics.trec.binread import byte_chunks
    >>> with tempfile.NamedTemporaryFile("wb", suffix=".txt", delete=False) as fh:
    ...     _ = fh.write(b"q1 0 d1 1\\nq1 0 d2 0\\nq2 0 d3 1")
    >>> list(byte_chunks(fh.name, chunk_bytes=12))
    [b'q1 0 d1 1\\n', b'q1 0 d2 0\\n', b'q2 0 d3 1']
    >>> os.remove(fh.name)
    """
    tail: list[bytes] = []  # the pieces of a line longer than a chunk (joined once: linear time)
    report = progress.current() if start == 0 else None
    with open(path, "rb") as fh:
        fh.seek(start)
        while True:
            data = fh.read(chunk_bytes)
            if report is not None:
                report(path, fh.tell())
            if not data:
                if tail:
                    yield b"".join(tail)
                return
            cut = data.rfind(b"\n") + 1
            if cut == 0:  # no line end in this read: the line goes on
                tail.append(data)
                continue
            yield b"".join([*tail, data[:cut]]) if tail else data[:cut]
            tail = [data[cut:]] if cut < len(data) else []


def _plain(chunk: bytes) -> bool:
    """True if the bytes path reads ``chunk`` exactly as the text path does."""
    return (chunk.isascii() and not any(c in chunk for c in _ODD)
            and chunk.count(b"\r") == chunk.count(b"\r\n"))  # fmt: skip


def _text_lines(chunk: bytes) -> list[str]:
    """The chunk's lines as a text-mode file yields them (UTF-8, universal newlines)."""
    text = chunk.decode("utf-8").replace("\r\n", "\n").replace("\r", "\n")
    lines = text.split("\n")
    last = lines.pop()
    out = [line + "\n" for line in lines]
    return [*out, last] if last else out


def _fields(chunk: bytes, width: int) -> list[bytes] | None:
    """The chunk's tokens if every line has exactly ``width`` fields and none starts with ``#``."""
    if not _plain(chunk):
        return None
    n = chunk.count(b"\n") + (not chunk.endswith(b"\n"))
    tokens = chunk.replace(b"\n", b" \x00 ").split()
    if not chunk.endswith(b"\n"):
        tokens.append(b"\x00")
    stride = width + 1
    if len(tokens) != stride * n or tokens[width::stride].count(b"\x00") != n:
        return None
    if b"#" in chunk and any(q.startswith(b"#") for q in tokens[0::stride]):
        return None
    return tokens


def _numbers(path: str, tokens: list[bytes], line_of: np.ndarray, what: str) -> np.ndarray:
    try:
        return np.fromiter(map(float, tokens), dtype=np.float64, count=len(tokens))
    except ValueError:  # the error names the first bad token (as text)
        return parse_numbers(path, [t.decode("utf-8") for t in tokens], line_of.tolist(), what)


@filled
def text_run_columns(
    path: str, lines: list[str], first: int
) -> tuple[list[str], list[str], list[str], list[str], list[int]]:
    """(qid, docno, score, runid) columns and line numbers of run lines read as text: blank and
    ``#`` lines skipped, fields after the sixth ignored, fewer than six an error naming the line.

    Parameters
    ----------
    {trec: path}
    lines : list of str
        The run lines, as read.
    {trec: first_of_lines}

    Returns
    -------
    qids, docnos, scores, runids : list of str
        The first, third, fifth and sixth field of each line (scores not yet converted).
    line_numbers : list of int
        The line number of each row.

    Raises
    ------
    TrecFormatError
        If a line has fewer than six fields.

    Examples
    --------
    >>> from streammetrics.trec.binread import text_run_columns
    >>> text_run_columns("run", ["q1 Q0 d1 1 2.5 sys", "# c", "q1 Q0 d2 2 1.0 sys"], 1)
    (['q1', 'q1'], ['d1', 'd2'], ['2.5', '1.0'], ['sys', 'sys'], [1, 3])
    """
    rows = list(text_fields(path, lines, first, 6, "qid Q0 docno rank score runid", extra=True))
    cols = [[p[j] for _, p in rows] for j in (0, 2, 4, 5)]
    return cols[0], cols[1], cols[2], cols[3], [n for n, _ in rows]


def run_scores(path: str, tokens: list[str], line_of: list[int]) -> np.ndarray:
    """Scores as float64; a token that is not a number, or NaN, is an error naming the line.

    Parameters
    ----------
    path : str
        The file name, for error messages.
    tokens : list of str
        The score fields.
    line_of : list of int
        The line number of each token.

    Returns
    -------
    numpy.ndarray of float64
        The scores (infinities kept).

    Raises
    ------
    TrecFormatError
        If a token is not a number, or is NaN.

    Examples
    --------
    >>> from streammetrics.trec.binread import run_scores
    >>> run_scores("run", ["2.5", "-inf"], [1, 2])
    array([ 2.5, -inf])
    """
    sc = parse_numbers(path, tokens, line_of, "score")
    _no_nan(path, sc, np.asarray(line_of, dtype=np.int64))
    return sc


def _no_nan(path: str, sc: np.ndarray, line_of: np.ndarray) -> None:
    bad = np.flatnonzero(np.isnan(sc))
    if len(bad):
        raise TrecFormatError(f"{path}:{int(line_of[int(bad[0])])}: score is NaN")


RunColumns = tuple[list[bytes], list[bytes], np.ndarray, str, np.ndarray, int]


@filled
def run_columns(path: str, chunk: bytes, first: int) -> RunColumns:
    """(qid, docno, score, runid of the last line, line numbers, lines in the chunk) of a chunk of
    run lines starting at line ``first``. O(chunk).

    Parameters
    ----------
    {trec: path, run_chunk, first_line}

    Returns
    -------
    {trec: ids}
    scores : numpy.ndarray of float64
        Their scores.
    runid : str
        The run id of the last run line ("" when there is none).
    {trec: line_numbers, chunk_count}

    Raises
    ------
    TrecFormatError
        If a line has fewer than six fields, or a score that is not a number or is NaN.

    Examples
    --------
    >>> from streammetrics.trec.binread import run_columns
    >>> q, d, sc, runid, line_of, n = run_columns("run", b"q1 Q0 d1 1 2.5 sys\\nq2 Q0 d7 1 0.5 sys\\n", 1)
    >>> q, d, sc.tolist(), runid, line_of.tolist(), n
    ([b'q1', b'q2'], [b'd1', b'd7'], [2.5, 0.5], 'sys', [1, 2], 2)
    """
    tokens = _fields(chunk, 6)
    if tokens is not None:
        n = len(tokens) // 7
        line_of = np.arange(first, first + n, dtype=np.int64)
        sc = _numbers(path, tokens[4::7], line_of, "score")
        _no_nan(path, sc, line_of)
        return tokens[0::7], tokens[2::7], sc, tokens[-2].decode("ascii"), line_of, n
    with utf8_errors(path):
        lines = _text_lines(chunk)
    q_txt, d_txt, s_tok, rs, lines_txt = text_run_columns(path, lines, first)
    sc = run_scores(path, s_tok, lines_txt) if q_txt else np.zeros(0)
    return ([q.encode("utf-8") for q in q_txt], [d.encode("utf-8") for d in d_txt], sc, rs[-1] if rs else "",
            np.asarray(lines_txt, dtype=np.int64), len(lines))  # fmt: skip


@filled
def qrels_columns(
    path: str, chunk: bytes, first: int
) -> tuple[list[bytes], list[bytes], np.ndarray, np.ndarray, int]:
    """(qid, docno, grade, line numbers, lines in the chunk) of a chunk of qrels lines starting at
    line ``first``; a grade that is not a finite number is an error naming the line. O(chunk).

    Parameters
    ----------
    {trec: path, qrels_chunk, first_line}

    Returns
    -------
    {trec: ids}
    grades : numpy.ndarray of float64
        Their grades.
    {trec: line_numbers, chunk_count}

    Raises
    ------
    TrecFormatError
        If a line has other than four fields, or a grade that is not a finite number.

    Examples
    --------
    >>> from streammetrics.trec.binread import qrels_columns
    >>> q, d, g, line_of, n = qrels_columns("qrels", b"q1 0 d1 2\\nq1 0 d2 0\\n", 1)
    >>> q, d, g.tolist(), line_of.tolist(), n
    ([b'q1', b'q1'], [b'd1', b'd2'], [2.0, 0.0], [1, 2], 2)
    """
    tokens = _fields(chunk, 4)
    if tokens is not None:
        n = len(tokens) // 5
        qs, ds, g_tok = tokens[0::5], tokens[2::5], tokens[3::5]
        line_of = np.arange(first, first + n, dtype=np.int64)
        grades = _numbers(path, g_tok, line_of, "grade")
    else:
        with utf8_errors(path):
            lines = _text_lines(chunk)
        n = len(lines)
        q_txt, d_txt, g_txt, lines_txt = qrels_text_columns(path, lines, first)
        qs, ds = [q.encode("utf-8") for q in q_txt], [d.encode("utf-8") for d in d_txt]
        g_tok = [g.encode("utf-8") for g in g_txt]
        line_of = np.asarray(lines_txt, dtype=np.int64)
        grades = parse_numbers(path, g_txt, lines_txt, "grade")
    check_grades(path, grades, g_tok, line_of)
    return qs, ds, grades, line_of, n
