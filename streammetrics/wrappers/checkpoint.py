"""Periodic, crash-safe checkpoints of an accumulator for long-running services.

``Checkpointer(metric, path, every_seconds=60)`` saves ``metric`` (any accumulator, MetricSet or
wrapper) to ``path`` every ``every_seconds`` from a daemon thread; with ``background=False`` it
saves only when asked: :meth:`Checkpointer.checkpoint` (now) or
:meth:`Checkpointer.maybe_checkpoint` (if the period has elapsed -- call it from the request
loop). :meth:`Checkpointer.restore` loads the last checkpoint after a restart.

Durability: each checkpoint is :func:`streammetrics.save` -- the state is snapshotted under the
metric's lock (a consistent state between two updates), written to a temporary file beside
``path``, fsynced, checksummed (SHA-256) and renamed over ``path``. A process killed at any
moment therefore leaves either the previous checkpoint or the new one, both loadable; nothing
that a completed checkpoint held is lost. A leftover temporary file from a killed write is
ignored, and removed by :meth:`restore` (and by later saves) once stale -- never a write in
progress. A corrupted or truncated file is rejected with a
``ValueError`` (checksum), never half-loaded.

Cost: one ``state_dict`` under the lock (O(state)) plus the write outside it.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from pathlib import Path
from types import TracebackType
from typing import Any

from streammetrics._core.metric import Metric
from streammetrics._core.params import Param, check_accumulator, check_param
from streammetrics._core.persistence import load, remove_stale_temps, save

__all__ = ["Checkpointer"]

_LOG = logging.getLogger("streammetrics.checkpoint")

_EVERY_SECONDS = Param("real", "must be a finite number > 0 or None", low=0.0, low_open=True, optional=True)


class Checkpointer:
    """Save ``metric`` to ``path`` periodically, crash-safe (see the module docstring).

    Each checkpoint is :func:`streammetrics.save`: a consistent snapshot taken under the
    metric's lock, written to a temporary file, fsynced and renamed over ``path``, so a process
    killed at any moment leaves the previous or the new checkpoint, both loadable.

    Parameters
    ----------
    metric : Metric
        What to save: any accumulator, ``MetricSet`` or wrapper.
    path : str or os.PathLike
        The checkpoint file (its directory must exist).
    every_seconds : float, optional
        The period (> 0, finite), or None for explicit :meth:`checkpoint` calls only.
    background : bool, optional
        Run a daemon thread that saves every ``every_seconds`` (default: True when
        ``every_seconds`` is given). Otherwise call :meth:`maybe_checkpoint`.
    clock : callable, optional
        Time source for :meth:`maybe_checkpoint` (default :func:`time.monotonic`).

    Attributes
    ----------
    saves : int
        Checkpoints written so far.
    last_error : BaseException or None
        The last error of the background thread (it keeps running and retries next period).
    failures : int
        Background checkpoints that failed in a row (0 after a success). Every failure is
        also logged at ERROR level, with its traceback, on the logger
        ``"streammetrics.checkpoint"`` (with no logging configured, Python prints it to
        stderr): a service never stops saving silently.

    Notes
    -----
    Use as a context manager (or call :meth:`close`) to stop the thread and write a final
    checkpoint. Cost per checkpoint: one ``state_dict`` under the lock (O(state)) plus the
    write outside it.

    Examples
    --------
    >>> import os, tempfile
    >>> import streammetrics as sm
    >>> folder = tempfile.mkdtemp()
    >>> path = os.path.join(folder, "metrics.sm")
    >>> recall = sm.Recall()
    >>> with sm.Checkpointer(recall, path, every_seconds=30) as saver:
    ...     _ = recall.update([1, 0, 1], [0.9, 0.2, 0.3])
    >>> saver.saves  # the final checkpoint on leaving the block
    1
    >>> sm.Checkpointer.restore(path).compute()  # after a restart
    0.5
    """

    def __init__(self, metric: Metric, path: str | os.PathLike[str], *,
                 every_seconds: float | None = None, background: bool | None = None,
                 clock: Any = None) -> None:
        check_accumulator(metric)
        every_seconds = check_param(every_seconds, "every_seconds", _EVERY_SECONDS)
        if background and every_seconds is None:
            raise ValueError("background: needs every_seconds")
        self.metric = metric
        self.path = Path(path)
        if not self.path.parent.is_dir():
            raise ValueError(f"path: directory {str(self.path.parent)!r} does not exist")
        self.every_seconds = every_seconds
        self.clock = clock or time.monotonic
        self.saves = 0
        self.last_error: BaseException | None = None
        self.failures = 0
        self._last = self.clock()
        self._io_lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        if background if background is not None else every_seconds is not None:
            self._thread = threading.Thread(target=self._run, name="streammetrics-checkpoint", daemon=True)
            self._thread.start()

    def checkpoint(self) -> None:
        """Save now (atomic, checksummed). Raises what the write raises (e.g. ``OSError``)."""
        with self._io_lock:
            save(self.metric, self.path)
            self.saves += 1
            self._last = self.clock()

    def maybe_checkpoint(self) -> bool:
        """Save if ``every_seconds`` have passed since the last save (call it from a request loop).

        Returns
        -------
        bool
            Whether it saved.
        """
        if self.every_seconds is None or self.clock() - self._last < self.every_seconds:
            return False
        self.checkpoint()
        return True

    def _run(self) -> None:
        assert self.every_seconds is not None
        while not self._stop.wait(self.every_seconds):
            try:
                self.checkpoint()
            except Exception as exc:  # noqa: BLE001 - keep the service alive; report it
                self.last_error = exc
                self.failures += 1
                _LOG.error("checkpoint to %s failed (%d in a row; retrying every %g s): %s",
                           str(self.path), self.failures, self.every_seconds, exc, exc_info=exc)
            else:
                self.failures = 0

    def close(self, final: bool = True) -> None:
        """Stop the background thread and (by default) write a final checkpoint.

        Parameters
        ----------
        final : bool, default True
            Write a last checkpoint after the thread has stopped.
        """
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
            self._thread = None
        if final:
            self.checkpoint()

    def __enter__(self) -> Checkpointer:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close(final=True)

    @staticmethod
    def restore(path: str | os.PathLike[str], default: Metric | None = None, *,
                max_bytes: int | None = None) -> Metric:
        """Load the last checkpoint at ``path``; ``default`` (if given) when there is none yet.

        Temporary files left by a write that was killed are removed once stale (see
        :func:`~streammetrics._core.persistence.remove_stale_temps`: a save in progress, from this
        or another process, is never touched).

        Parameters
        ----------
        path : str or os.PathLike
            The checkpoint file.
        default : Metric, optional
            Returned when no checkpoint exists yet (a service's first start).
        max_bytes : int, optional
            :func:`streammetrics.load`'s size limit; None (the default here) lets a service's
            own checkpoint grow past ``load``'s 1 GiB.

        Returns
        -------
        Metric
            The restored accumulator, or ``default``.

        Raises
        ------
        ValueError
            A corrupted, truncated, malformed or foreign file.
        FileNotFoundError
            No checkpoint at ``path`` and no ``default``.
        """
        target = Path(path)
        remove_stale_temps(target)  # never a live writer's
        if not target.exists():
            if default is not None:
                return default
            raise FileNotFoundError(f"restore: no checkpoint at {str(target)!r}")
        return load(target, max_bytes=max_bytes)
