"""The temporary files of :class:`.runfile.SpilledRun`'s external sort: a spill directory per sort,
sorted runs merged in passes of at most :data:`MERGE_FAN_IN` files, stale directories removed.

A sort's files live in ``streammetrics-trec-<pid>-<random>`` in the temporary directory; it is
removed when the sort ends, fails or is interrupted (``KeyboardInterrupt``; ``streammetrics trec``
turns SIGTERM into an exit that runs the same clean-up). A process killed outright (SIGKILL, power
loss) cannot clean up: the next sort in that temporary directory removes the spill directories
whose process no longer exists (last modified more than ``STALE_SECONDS`` ago), as
:func:`streammetrics.save` removes the temporary files of killed saves, and any spill directory
untouched for ``ABANDONED_SECONDS`` (a process of another host sharing the directory, or a name
without a pid, from streammetrics 0.1).

Sorted runs are merged (k-way heap merges) at most :data:`MERGE_FAN_IN` at a time, smallest first:
when ``ALIVE_RUNS * MERGE_FAN_IN`` (256) runs exist, the 64 smallest become one; at the end, as few
of the smallest as bring the count to 64, then the final merge. So at most 256 run files exist and
65 are open at once, whatever ``memory_lines`` is; a run of up to 64 chunks is merged once, and of
up to 256 chunks rewrites only its smallest runs; each line is rewritten O(log runs) times:
O(n log n) time for n lines.
"""

from __future__ import annotations

import contextlib
import heapq
import itertools
import os
import re
import shutil
import tempfile
import time
from collections.abc import Iterable, Iterator

from streammetrics._core.persistence import ABANDONED_SECONDS, STALE_SECONDS

__all__ = ["ALIVE_RUNS", "MERGE_FAN_IN", "PREFIX", "Row", "SpillRuns", "remove_stale_spills",
           "spill_directory"]

#: The most sorted runs merged at once (and open at once, with the one written).
MERGE_FAN_IN = 64
#: At most ``ALIVE_RUNS * MERGE_FAN_IN`` sorted runs exist at once (then the smallest are merged).
ALIVE_RUNS = 4
#: The name of a spill directory: ``PREFIX<pid>-<random>``.
PREFIX = "streammetrics-trec-"
_NAME = re.compile(re.escape(PREFIX) + r"(?:(\d+)-)?[A-Za-z0-9_]+\Z")

Row = tuple[str, str, float, int]  # query id, document id, score, line number


def _pid_alive(pid: int) -> bool:
    """False only when no process ``pid`` exists (as :func:`streammetrics.save`'s clean-up tells)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError, ValueError, OSError):
        return True  # exists (owned by someone else), or cannot tell: keep its files
    return True


def remove_stale_spills(directory: str | None = None, *, now: float | None = None) -> list[str]:
    """Remove the spill directories that killed sorts left behind in ``directory``; returns them.

    Parameters
    ----------
    directory : str, optional
        Where the sorts spilled (default: the system's temporary directory).
    now : float, optional
        The current time (``time.time()``; for tests).

    Returns
    -------
    list of str
        The directories removed: those named ``streammetrics-trec-<pid>-<random>`` whose process
        no longer exists, last modified more than ``STALE_SECONDS`` ago, and any
        ``streammetrics-trec-*`` directory last modified more than ``ABANDONED_SECONDS`` ago. A
        sort in progress is never touched. O(entries of the directory).

    Examples
    --------
    >>> import tempfile
    >>> from streammetrics.trec.spill import remove_stale_spills
    >>> remove_stale_spills(tempfile.mkdtemp())
    []
    """
    parent = tempfile.gettempdir() if directory is None else directory
    now = time.time() if now is None else now
    removed: list[str] = []
    try:
        entries = list(os.scandir(parent))
    except OSError:
        return removed
    for entry in entries:
        found = _NAME.match(entry.name)
        if found is None:
            continue
        try:
            if not entry.is_dir(follow_symlinks=False):
                continue
            age = now - entry.stat(follow_symlinks=False).st_mtime
        except OSError:
            continue
        pid = found.group(1)
        gone = pid is not None and int(pid) != os.getpid() and not _pid_alive(int(pid))
        if (gone and age > STALE_SECONDS) or age > ABANDONED_SECONDS:
            shutil.rmtree(entry.path, ignore_errors=True)
            if not os.path.exists(entry.path):
                removed.append(entry.path)
    return removed


@contextlib.contextmanager
def spill_directory(directory: str | None = None) -> Iterator[str]:
    """A new spill directory ``streammetrics-trec-<pid>-<random>`` in ``directory``, removed with
    its files on exit (also on an exception or ``KeyboardInterrupt``); stale spill directories
    are removed first (:func:`remove_stale_spills`).

    Parameters
    ----------
    directory : str, optional
        Where to create it (default: the system's temporary directory).

    Yields
    ------
    str
        The directory's path.

    Examples
    --------
    >>> import os
    >>> from streammetrics.trec.spill import spill_directory
    >>> with spill_directory() as tmp:
    ...     os.path.basename(tmp).startswith(f"streammetrics-trec-{os.getpid()}-")
    True
    >>> os.path.exists(tmp)
    False
    """
    remove_stale_spills(directory)
    tmp = tempfile.mkdtemp(prefix=f"{PREFIX}{os.getpid()}-", dir=directory)
    try:
        yield tmp
    finally:
        shutil.rmtree(tmp, ignore_errors=True)  # already gone (removed by hand) is not an error


def _write(path: str, rows: Iterable[Row]) -> int:
    """Write ``rows`` to ``path``; returns how many."""
    counter = itertools.count()  # zip takes one number per row: the next one is the count
    with open(path, "w", encoding="utf-8") as out:
        out.writelines(f"{q}\t{d}\t{v!r}\t{n}\n" for (q, d, v, n), _ in zip(rows, counter, strict=False))
    return next(counter)


def _row(line: str) -> Row:
    q, d, v, n = line.rstrip("\n").split("\t")
    return q, d, float(v), int(n)


def _key(row: Row) -> tuple[bytes, int]:
    return row[0].encode("utf-8"), row[3]


@contextlib.contextmanager
def _merged(paths: list[str]) -> Iterator[Iterator[Row]]:
    """The rows of sorted run files, merged in (query id bytewise, line number) order."""
    files = []
    try:
        for p in paths:
            files.append(open(p, encoding="utf-8"))  # noqa: SIM115 -- closed below
        yield heapq.merge(*(map(_row, f) for f in files), key=_key)
    finally:
        for f in files:
            f.close()


class SpillRuns:
    """Sorted runs written to files of one spill directory, merged at most :data:`MERGE_FAN_IN` at
    a time, smallest first (see the module's description).

    Parameters
    ----------
    directory : str
        The spill directory (:func:`spill_directory`).
    fan_in : int, optional
        The most runs merged at once, at least 2 (default :data:`MERGE_FAN_IN`); at most
        ``ALIVE_RUNS * fan_in`` runs exist at once.

    Examples
    --------
    >>> from streammetrics.trec.spill import SpillRuns, spill_directory
    >>> with spill_directory() as tmp:
    ...     runs = SpillRuns(tmp, fan_in=2)
    ...     for row in [("q2", "d1", 0.5, 1), ("q1", "d2", 1.0, 2), ("q1", "d3", 0.2, 3)]:
    ...         runs.add([row])
    ...     with runs.merged() as rows:
    ...         [(q, n) for q, _, _, n in rows]
    [('q1', 2), ('q1', 3), ('q2', 1)]
    """

    def __init__(self, directory: str, fan_in: int | None = None) -> None:
        self.directory, self.fan_in = directory, max(2, MERGE_FAN_IN if fan_in is None else fan_in)
        self.most_alive = ALIVE_RUNS * self.fan_in
        self.runs: list[tuple[int, int, str]] = []  # (rows, order written, path): a heap, smallest first
        self._count = 0

    def _path(self) -> str:
        self._count += 1
        return os.path.join(self.directory, f"{self._count}.tsv")

    def add(self, rows: Iterable[Row]) -> None:
        """Write one run (rows sorted by query id bytewise, then line number).

        Parameters
        ----------
        rows : iterable of (str, str, float, int)
            Query id, document id, score and line number of each line.
        """
        path = self._path()
        heapq.heappush(self.runs, (_write(path, rows), self._count, path))
        if len(self.runs) >= self.most_alive:
            self._merge_smallest(self.fan_in)

    def _merge_smallest(self, k: int) -> None:
        """Merge the ``k`` smallest runs into one new run file and delete them."""
        group = [heapq.heappop(self.runs) for _ in range(min(k, len(self.runs)))]
        out = self._path()
        with _merged([p for _, _, p in group]) as rows:
            n = _write(out, rows)
        for _, _, p in group:
            os.remove(p)
        heapq.heappush(self.runs, (n, self._count, out))

    def alive(self) -> list[str]:
        """The run files now on disk, smallest first.

        Returns
        -------
        list of str
            Their paths.
        """
        return [p for _, _, p in sorted(self.runs)]

    @contextlib.contextmanager
    def merged(self) -> Iterator[Iterator[Row]]:
        """All rows written, merged in order, reading at most ``fan_in`` files at once: while there
        are more runs, the smallest are merged first, as few as bring the count to ``fan_in``
        (each line is rewritten as few times as the fan-in allows).

        Yields
        ------
        iterator of (str, str, float, int)
            The rows, by query id bytewise, then line number.
        """
        while len(self.runs) > self.fan_in:
            self._merge_smallest(min(self.fan_in, len(self.runs) - self.fan_in + 1))
        with _merged(self.alive()) as rows:
            yield rows
