"""How far the TREC readers are in their files, for a progress line (``streammetrics trec`` shows
one on a terminal when a run takes more than a few seconds).

The readers call :func:`advanced` with the file and the byte offset reached, once per chunk read
(a few times per MiB: no cost that shows); nothing happens unless a callback is installed with
:func:`reporting` (a context variable, so threads and other callers are not affected).
:class:`ProgressLine` is the command line's callback: one line on a terminal, rewritten in place.
"""

from __future__ import annotations

import contextlib
import contextvars
import os
import time
from collections.abc import Callable, Iterator
from typing import IO

__all__ = ["DELAY", "advanced", "current", "reporting", "ProgressLine"]

#: Seconds before a progress line first appears (short runs show none).
DELAY = 2.0
Callback = Callable[[str, int], None]
_CALLBACK: contextvars.ContextVar[Callback | None] = contextvars.ContextVar("trec_progress", default=None)


def advanced(path: str, offset: int) -> None:
    """Tell the installed callback (if any) that ``path`` has been read up to byte ``offset``.

    Parameters
    ----------
    path : str
        The file being read.
    offset : int
        The bytes of it read so far.

    Returns
    -------
    None
        Nothing; O(1) when no callback is installed.

    Examples
    --------
    >>> from streammetrics.trec.progress import advanced, reporting
    >>> seen = []
    >>> with reporting(lambda path, offset: seen.append((path, offset))):
    ...     advanced("run.txt", 4096)
    >>> advanced("run.txt", 8192)  # no callback: nothing happens
    >>> seen
    [('run.txt', 4096)]
    """
    callback = _CALLBACK.get()
    if callback is not None:
        callback(path, offset)


def current() -> Callback | None:
    """The installed callback, or None (a reader asks once, then reports only if there is one).

    Returns
    -------
    callable or None
        ``callback(path, offset)`` as given to :func:`reporting`.
    """
    return _CALLBACK.get()


@contextlib.contextmanager
def reporting(callback: Callback | None) -> Iterator[None]:
    """Within the block, the readers report their progress to ``callback(path, offset)``.

    Parameters
    ----------
    callback : callable or None
        Called with the file and the byte offset reached; None: no reports.

    Yields
    ------
    None
    """
    token = _CALLBACK.set(callback)
    try:
        yield
    finally:
        _CALLBACK.reset(token)


class ProgressLine:
    """A progress line on ``stream`` -- ``prog: reading FILE: 42% of 1.2 GB, 7 s`` -- shown once
    ``delay`` seconds have passed, rewritten at most every ``interval`` seconds, erased by
    :meth:`close`. Use it as :func:`reporting`'s callback.

    Parameters
    ----------
    prog : str
        The command's name, the start of the line.
    stream : text stream
        Where the line goes (a terminal: the line is rewritten with carriage returns).
    delay : float, optional
        Seconds before the line first appears (default :data:`DELAY`, 2 s: short runs show nothing).
    interval : float, default 0.5
        Seconds between updates.
    clock : callable, default time.monotonic
        The time source (for tests).

    Examples
    --------
    >>> import io
    >>> from streammetrics.trec.progress import ProgressLine
    >>> now = [0.0]
    >>> out = io.StringIO()
    >>> line = ProgressLine("streammetrics trec", out, clock=lambda: now[0])
    >>> line.total["run.txt"] = 2000  # the size, known without stat()
    >>> line("run.txt", 500)  # too early: nothing shown
    >>> now[0] = 3.0
    >>> line("run.txt", 1000)
    >>> out.getvalue().strip()
    'streammetrics trec: reading run.txt: 50% of 2.0 kB, 3 s'
    >>> line.close()
    """

    def __init__(self, prog: str, stream: IO[str], delay: float | None = None, interval: float = 0.5,
                 clock: Callable[[], float] = time.monotonic) -> None:  # fmt: skip
        self.prog, self.stream, self.interval, self.clock = prog, stream, interval, clock
        self.delay = DELAY if delay is None else delay
        self.start = clock()
        self.shown_at: float | None = None
        self.width = 0
        self.total: dict[str, int] = {}

    def __call__(self, path: str, offset: int) -> None:
        now = self.clock()
        early = now - self.start < self.delay
        if early or (self.shown_at is not None and now - self.shown_at < self.interval):
            return
        if path not in self.total:
            try:
                self.total[path] = os.stat(path).st_size
            except OSError:
                self.total[path] = 0
        size = self.total[path]
        share = f"{min(100, 100 * offset // size)}% of {_bytes(size)}" if size else _bytes(offset)
        text = f"{self.prog}: reading {os.path.basename(path)}: {share}, {now - self.start:.0f} s"
        self._write(text)
        self.shown_at = now

    def _write(self, text: str) -> None:
        pad = max(0, self.width - len(text))
        with contextlib.suppress(OSError, ValueError):
            self.stream.write("\r" + text + " " * pad)
            self.stream.flush()
        self.width = len(text)

    def close(self) -> None:
        """Erase the line if one was shown."""
        if self.width:
            with contextlib.suppress(OSError, ValueError):
                self.stream.write("\r" + " " * self.width + "\r")
                self.stream.flush()
            self.width = 0


def _bytes(n: int) -> str:
    if n < 1000:
        return f"{n} B"
    value, unit = n / 1000, "kB"
    for bigger in ("MB", "GB", "TB"):
        if value < 1000:
            break
        value, unit = value / 1000, bigger
    return f"{value:.1f} {unit}"
