"""The progress bar of ``streammetrics evaluate``: rows read and rows/s on stderr (rich), shown only
when stdout and stderr are terminals and ``--quiet`` is not given; the total is known for Parquet
inputs (their footers hold the row counts). Shared by the classification and regression runs.
"""

from __future__ import annotations

import contextlib
import sys
import time
from collections.abc import Callable, Iterator
from typing import Any

from .readers import format_of

__all__ = ["known_rows", "row_progress"]


def known_rows(files: list[str]) -> int | None:
    """Total rows when every file is Parquet (read from the footers), else None.

    Parameters
    ----------
    files : list of str
        The input files.

    Returns
    -------
    int or None
        The number of rows, or None when a file is not Parquet or its footer cannot be read
        (reading reports the real error). O(files).
    """
    if not all(format_of(f) == "parquet" for f in files):
        return None
    import pyarrow.parquet as pq

    try:
        return sum(pq.ParquetFile(f).metadata.num_rows for f in files)
    except Exception:  # noqa: BLE001 - only for the progress bar; reading reports real errors
        return None


def _ignore(rows: int, path: str) -> None:
    """No progress bar: nothing to advance."""


@contextlib.contextmanager
def row_progress(files: list[str], quiet: bool) -> Iterator[Callable[[int, str], None]]:
    """Within the block, a transient progress bar on stderr; yields ``advance(rows, path)``, which
    sets the rows read so far and names the file being read.

    Parameters
    ----------
    files : list of str
        The input files (Parquet footers give the total).
    quiet : bool
        No bar (``--quiet``); there is none either when stdout or stderr is not a terminal or rich
        is not installed.

    Yields
    ------
    callable
        ``advance(rows, path)``: O(1) per call.
    """
    show = not quiet and sys.stdout.isatty() and sys.stderr.isatty()
    if not show:
        yield _ignore
        return
    try:
        from rich.console import Console
        from rich.progress import BarColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn
    except ImportError:
        yield _ignore
        return
    progress: Any = Progress(SpinnerColumn(), TextColumn("{task.description}"), BarColumn(),
                             TextColumn("{task.completed:,.0f} rows"),
                             TextColumn("{task.fields[rate]}"), TimeElapsedColumn(),
                             console=Console(stderr=True), transient=True)
    progress.start()
    task_id = progress.add_task("evaluating", total=known_rows(files), rate="")
    start = time.perf_counter()

    def advance(rows: int, path: str) -> None:
        rate = rows / max(time.perf_counter() - start, 1e-9)
        progress.update(task_id, completed=rows, rate=f"{rate:,.0f} rows/s",
                        description=path.rsplit("/", 1)[-1])

    try:
        yield advance
    finally:
        progress.stop()
