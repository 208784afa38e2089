"""A guard for pyarrow's JSON reader: it recurses once per nesting level and crashes the process
(a segmentation fault, measured at 20,000 levels of ``[``) on deeply nested values, so a JSON Lines
file is scanned before pyarrow reads it and a value nested deeper than ``MAX_DEPTH`` is a data
error naming its line.

The scan is vectorised (numpy over chunks of whole lines, about 1 MiB, of the decompressed
bytes): a chunk in which no line can reach ``MAX_DEPTH`` -- no line with that many opening
brackets -- costs a few passes; only a chunk with such a line gets the exact scan, which skips the
brackets inside strings (a quote escaped by an odd run of backslashes does not end a string).
Memory: O(chunk + the longest line), lines being at most ``MAX_LINE``.
"""

from __future__ import annotations

import numpy as np

from .errors import InputError

__all__ = ["MAX_DEPTH", "MAX_LINE", "CHUNK", "check_depth"]

#: the deepest nesting accepted (pyarrow crashed at 20,000 levels; rows of labels and scores are
#: 2 levels deep)
MAX_DEPTH = 1000
CHUNK = 1 << 20
#: longer lines are refused (pyarrow's reader, with blocks of 512 KiB, refuses them too)
MAX_LINE = 8 << 20
_NL, _QUOTE, _BACKSLASH = ord("\n"), ord('"'), ord("\\")
_OPEN = (ord("["), ord("{"))
_CLOSE = (ord("]"), ord("}"))


def _per_line(delta: np.ndarray, newline: np.ndarray, start: int) -> np.ndarray:
    """Running sum of ``delta`` restarted after each newline (``start`` carried into the first line)."""
    c = np.cumsum(delta, dtype=np.int64)
    idx = np.where(newline, np.arange(len(delta)), -1)
    np.maximum.accumulate(idx, out=idx)
    base = np.where(idx >= 0, c[np.maximum(idx, 0)], -start)
    return c - base


def _first_too_deep(b: np.ndarray) -> int | None:
    """Index of the first byte of ``b`` (whole lines) nested deeper than ``MAX_DEPTH``, else None."""
    n = len(b)
    is_open = (b == _OPEN[0]) | (b == _OPEN[1])
    opens = np.flatnonzero(is_open)
    if len(opens) <= MAX_DEPTH:
        return None  # the fast paths: too few opening brackets in the chunk, or on each line
    newline = b == _NL
    per_line = np.bincount(np.searchsorted(np.flatnonzero(newline), opens))
    if int(per_line.max()) <= MAX_DEPTH:
        return None
    pos = np.arange(n)
    backslash = b == _BACKSLASH
    # the run of backslashes just before each byte: odd -> the byte is escaped
    last_other = np.where(~backslash, pos, -1)
    np.maximum.accumulate(last_other, out=last_other)
    before = np.zeros(n, dtype=np.int64)
    before[1:] = pos[:-1] - last_other[:-1]
    quote = (b == _QUOTE) & (before % 2 == 0)
    parity = _per_line(quote.astype(np.int8), newline, 0) % 2
    outside = (parity == 0) & ~quote  # the quote opening a string has parity 1 itself
    is_close = (b == _CLOSE[0]) | (b == _CLOSE[1])
    delta = (outside & is_open).astype(np.int8) - (outside & is_close).astype(np.int8)
    depth = _per_line(delta, newline, 0)
    return int(np.argmax(depth > MAX_DEPTH)) if int(depth.max()) > MAX_DEPTH else None


def check_depth(path: str) -> None:
    """Raise :class:`InputError` (data error) if a value of the JSON Lines file ``path`` (plain or
    compressed) is nested deeper than ``MAX_DEPTH``. Unreadable files pass (the reader reports them).

    Complexity: one read of the file; O(1) memory beyond a 1 MiB chunk.

    Parameters
    ----------
    path : str
        A JSON Lines file, plain or compressed.

    Returns
    -------
    None

    Raises
    ------
    InputError
        Exit status 1: a value nested deeper than ``MAX_DEPTH`` or a line longer than ``MAX_LINE``,
        naming the line.
    """
    import pyarrow as pa

    lines = 0  # newlines before ``pending``
    pending = b""  # the start of a line not yet complete
    try:
        with pa.input_stream(path, compression="detect") as fh:
            while True:
                chunk = fh.read(CHUNK)
                data = pending + chunk
                cut = data.rfind(b"\n") + 1 if chunk else len(data)
                if cut == 0 and len(data) > MAX_LINE:
                    raise InputError(f"{path}: line {lines + 1} is longer than {MAX_LINE >> 20} MiB", 1)
                whole, pending = data[:cut], data[cut:]
                b = np.frombuffer(whole, dtype=np.uint8)
                at = _first_too_deep(b) if len(b) else None
                if at is not None:
                    line = lines + int(np.count_nonzero(b[:at] == _NL)) + 1
                    raise InputError(f"{path}: line {line}: a value is nested more than {MAX_DEPTH} "
                                     "levels deep (refused: the JSON reader cannot parse it safely)", 1)
                lines += int(np.count_nonzero(b == _NL))
                if not chunk:
                    return
    except (pa.ArrowException, OSError):
        return
