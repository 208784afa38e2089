"""Errors of TREC files that name the file and the line: text that is not UTF-8, and grades out of
the range of trec_eval's ``long``.

A reader decodes its file in blocks (a text file's buffer, a chunk of lines), so the
``UnicodeDecodeError`` it meets knows neither the file nor the line: :func:`utf8_errors` turns it
into a :class:`TrecFormatError` naming both, found by :func:`utf8_error`'s scan of the
file (only when there is an error; lines counted as the readers count them, universal newlines).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence

import numpy as np

__all__ = ["TrecFormatError", "GRADE_LIMIT", "utf8_error", "utf8_errors", "check_grades"]


class TrecFormatError(ValueError):
    """A malformed line in a qrels or run file (the message names file and line)."""


#: Grades are C ``long`` in trec_eval: a grade must be below this in magnitude (2**63).
GRADE_LIMIT = 2.0**63


def _line_ends(data: bytes) -> int:
    return data.count(b"\n") + data.count(b"\r") - data.count(b"\r\n")


def utf8_error(path: str, block_bytes: int = 1 << 20) -> TrecFormatError:
    """The error for the first byte of ``path`` that is not UTF-8, naming the line (1-based, line
    ends ``\\n``, ``\\r\\n`` or ``\\r``) and the byte. One pass over the file up to that byte.

    Parameters
    ----------
    path : str
        The file.
    block_bytes : int, default 1 MiB
        The bytes read at once.

    Returns
    -------
    TrecFormatError
        ``"<path>:<line>: not UTF-8 text (byte 0x.. at offset N)"``, or a message without a line
        if the file decodes (it changed since it was read).

    Examples
    --------
    >>> import os, tempfile
    >>> from streammetrics.trec.checked import utf8_error
    >>> with tempfile.NamedTemporaryFile("wb", delete=False) as fh:
    ...     _ = fh.write(b"q1 0 d1 1\\r\\nq1 0 d\\xe9 0\\n")
    >>> str(utf8_error(fh.name)).endswith(":2: not UTF-8 text (byte 0xe9 at offset 17)")
    True
    >>> os.remove(fh.name)
    """
    line, offset, pending, cr = 1, 0, b"", False
    with open(path, "rb") as fh:
        while True:
            block = fh.read(block_bytes)
            data = pending + block
            if not data:
                return TrecFormatError(f"{path}: not UTF-8 text")
            try:
                data.decode("utf-8")
                good, bad = len(data), False
            except UnicodeDecodeError as exc:
                cut_short = exc.reason == "unexpected end of data" and exc.end == len(data) and bool(block)
                good, bad = exc.start, not cut_short
            seen = data[:good]
            line += _line_ends(seen) - (cr and seen.startswith(b"\n"))
            if seen:
                cr = seen.endswith(b"\r")
            if bad:
                return TrecFormatError(f"{path}:{line}: not UTF-8 text "
                                       f"(byte 0x{data[good]:02x} at offset {offset + good})")  # fmt: skip
            offset += good
            pending = data[good:]


@contextlib.contextmanager
def utf8_errors(path: str) -> Iterator[None]:
    """Within the block, a ``UnicodeDecodeError`` (reading ``path``) becomes :func:`utf8_error`'s
    :class:`TrecFormatError`, naming the file and the line.

    Parameters
    ----------
    path : str
        The file read in the block.

    Yields
    ------
    None

    Examples
    --------
    >>> import os, tempfile
    >>> from streammetrics.trec.checked import utf8_errors
    >>> with tempfile.NamedTemporaryFile("wb", delete=False) as fh:
    ...     _ = fh.write(b"ok\\n\\xff\\n")
    >>> try:
    ...     with utf8_errors(fh.name), open(fh.name, encoding="utf-8") as text:
    ...         _ = text.read()
    ... except ValueError as exc:
    ...     print(str(exc).split(":", 1)[1])
    2: not UTF-8 text (byte 0xff at offset 3)
    >>> os.remove(fh.name)
    """
    try:
        yield
    except UnicodeDecodeError:
        raise utf8_error(path) from None


def check_grades(path: str, grades: np.ndarray, tokens: Sequence[str] | Sequence[bytes],
                 line_of: Sequence[int] | np.ndarray) -> None:  # fmt: skip
    """Refuse a grade that is not finite or not below :data:`GRADE_LIMIT` in magnitude (trec_eval
    reads grades as C ``long``), naming the file, the line and the grade. O(n).

    Parameters
    ----------
    path : str
        The file, for the message.
    grades : numpy.ndarray of float64
        The grades read.
    tokens : sequence of str or bytes
        The grades as written.
    line_of : sequence of int or numpy.ndarray
        The line of each grade.

    Returns
    -------
    None
        When every grade is in range.

    Raises
    ------
    TrecFormatError
        For the first grade out of range.

    Examples
    --------
    >>> import numpy as np
    >>> from streammetrics.trec.checked import check_grades
    >>> try:
    ...     check_grades("qrels", np.array([1.0, 1e20]), ["1", "1e20"], [1, 2])
    ... except ValueError as exc:
    ...     print(exc)
    qrels:2: grade '1e20' is out of range (at most 2**63 - 1 in magnitude, trec_eval's long)
    """
    bad = np.flatnonzero(~(np.abs(grades) < GRADE_LIMIT))
    if len(bad):
        k = int(bad[0])
        tok = tokens[k]
        text = tok.decode("utf-8", "replace") if isinstance(tok, bytes) else tok
        problem = "is not finite" if not np.isfinite(grades[k]) else \
            "is out of range (at most 2**63 - 1 in magnitude, trec_eval's long)"  # fmt: skip
        raise TrecFormatError(f"{path}:{int(line_of[k])}: grade {text!r} {problem}")
