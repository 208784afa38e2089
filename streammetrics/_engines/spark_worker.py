"""What a streammetrics Spark task leaves in its Python worker: the imports frozen out of the collector.

PySpark's daemon runs a full ``gc.collect()`` in a reused Python worker after every task
(``pyspark/daemon.py``, ``spark.python.worker.reuse``, the default). A worker that has run a
streammetrics task holds ~180,000 objects the cyclic collector tracks -- pyspark, pyarrow,
numpy, numba and this package imported, almost all of them alive as long as the process --
and walking them costs 0.04-0.09 s of CPU per task, however small the task (measured in
``local[2]``: 0.08 s per task at load 16, 0 after :func:`settle`). On 10M rows the two range
tasks of :mod:`~streammetrics._engines.spark_ranges` paid ~0.16 s for it, about 0.18x of one
process's whole evaluation.

:func:`settle`, called by each task function as its work ends, collects once and then moves
every object the collector tracks into its permanent generation (``gc.freeze()``, what the
CPython documentation recommends for long-lived servers): the daemon's collections after this
and later tasks walk only the objects made since. It does so in a Spark task only, and only
when modules were imported since its last freeze (the first streammetrics task of a worker;
later only when a task imported more), so a freeze happens a few times per worker at most.
The cost: an object alive at a freeze that later becomes part of unreachable cyclic garbage is
not reclaimed (objects freed by their reference count -- arrays, most task data -- are freed as
before); at a freeze the task's own data are the few objects its frame still holds.

Complexity: O(1) when nothing was imported since the last freeze; else one full collection.
"""

from __future__ import annotations

import gc
import sys

#: ``len(sys.modules)`` at this worker's last freeze (0: none yet).
_frozen_at = 0


def in_task() -> bool:
    """Whether this process is running a Spark task (a Python worker inside a task), not the
    driver or a test calling a task function directly."""
    try:
        from pyspark import TaskContext
    except ImportError:  # pragma: no cover - pyspark is what runs these functions
        return False
    return TaskContext.get() is not None


def settle() -> None:
    """In a Spark task's Python worker, when modules were imported since the last freeze (or
    none was made): one ``gc.collect()``, then ``gc.freeze()`` (see the module docstring);
    elsewhere nothing. O(1) when nothing was imported since; else one full collection."""
    global _frozen_at
    if len(sys.modules) == _frozen_at or not in_task():
        return
    gc.collect()
    gc.freeze()
    _frozen_at = len(sys.modules)
