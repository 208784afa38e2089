"""Which ranking kernels the exact score buffer uses: numpy's, or the optional compiled ones.

With the ``fast`` extra installed (``pip install streammetrics[fast]``: numba), the searches of
sorted needles in the stored runs and the average-precision read run compiled
(:mod:`streammetrics._scores.exact.numba_kernels`); without it, numpy's ``searchsorted`` and array passes.
Both give the same results bit for bit. Each dispatch point (a :data:`MIN_SIZES` key) has its
own size threshold, measured against its numpy twin (``benchmarks/bench_kernels.py``). numba
is imported on the first call that has at least ``_LOAD_SIZE`` elements and reaches its
kernel's threshold (never by ``import streammetrics``), and its kernels are compiled once and
cached on disk; once loaded, each kernel takes every call from its own threshold.
``STREAMMETRICS_NUMBA=0`` in the environment keeps the numpy path.
:func:`compiled_kernels` switches the path for a block (tests and benchmarks compare them).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from types import ModuleType

import numpy as np

#: A call loads numba (the first compiled call of the process) only from this many elements
#: (or its kernel's ``_LOAD_SIZES`` entry): loading it and the cached kernels costs ~0.6 s once
#: per process (~4 s the first time they compile), which only a large state repays: a script
#: over fewer than a million scores never pays it. Once loaded, each kernel takes the calls
#: from its own :data:`MIN_SIZES` entry.
_LOAD_SIZE = 1 << 20
#: Kernels that load numba from fewer elements: the inversion count is 40-55x faster compiled
#: from 1e3 rows (a Kendall read of 4096 rows: ~1.5 ms numpy, ~0.03 ms compiled).
_LOAD_SIZES: dict[str, int] = {"inversions": 1 << 12}
#: Per dispatch point, the fewest elements of a call (needles plus stored scores; the state's
#: samples for ``add`` / ``ap``; rows for ``inversions``) from which it runs compiled once numba
#: is loaded (None: never). Measured by ``benchmarks/bench_kernels.py`` on 2026-12-06 01:45-01:54
#: UTC (load 6-13 on 2 shared cores; each kernel against its numpy twin on the same data, sizes
#: 1e3, 3e3, ..., 1e7, sparse / dense / tied needles, median CPU ratio numpy / compiled of 5
#: alternated rounds; the full table in docs/benchmarks.md): the smallest timed size from
#: which every case wins at every larger size, except where noted.
MIN_SIZES: dict[str, int | None] = {
    # runs.rank_left (sorted needles' left ranks in a run): 0.77-0.89 at 1e3 (numpy's one
    # searchsorted call), dense / tied 1.08 / 1.21 at 3e3, 1.8-25 from 3e5; fewer than
    # _FEW_NEEDLES needles without a coarse index stay in numpy at any size (sparse: 0.77-0.84
    # up to 1e5, ~0.7 us a call); sparse at 1e7 0.90 (both ~100 ns a needle: memory bound),
    # 1.19 since the prefetching coarse walk (2026-12-06 05:51 UTC, load 22-25; 3e6: 1.69)
    "rank_left": 3_000,
    # runs._left_right (and the engines' range counts): 1.4-1.8 at 1e3, 2-35 from 3e5 (dense
    # without the coarse index: was 0.70-0.99); sparse at 1e7 0.98 (parity), 1.15 since the
    # prefetching coarse walk
    "ranks": 1_000,
    # runs.count2, unweighted: 1.4-1.6 at 1e3, 1.9-4.7 after; heavily tied needles (1/64 steps)
    # 0.43-0.70 from 1e6: numpy searches each distinct needle once (~600 here), the walk passes
    # over all of them (~1.7 ns each) -- data, not size; sparse at 1e7 1.00, 1.24 since the
    # prefetching coarse walk (ties then 0.42-0.77 from 1e6)
    "count2": 1_000,
    # runs.sort_batch (a batch's float64 scores, radix sort against numpy's introsort): 2.4x
    # at 1e4 (98 vs 237 us), 1.1x at 1e3; measured 2026-12-06 08:45 UTC, load 5-9. Its own
    # bench_kernels case (plain / 1/64 ties / uniform), 12:01-12:05 UTC, load 8-13, 3 runs: 512
    # loses in every case and run (0.62-0.86, 1-3 us a call: it was the threshold), 768 0.89-1.10,
    # 1024 0.86-1.30 (plain / uniform 1.0-1.3, ties at parity), 1536-2048 1.2-1.8 (ties 0.96-1.2),
    # 4096 1.7-2.0, 16k-64k 2.5-3.8
    "sort": 1_024,
    # runs.merge_into_last (a run merged in place, numpy: copy in + stable sort): 1.25 at 1e3,
    # 1.03-1.95 after (memory bound from 1e5)
    "merge_back": 1_000,
    # PositiveCounts.add (the AP read cache, pending thresholds): 1.16-1.6 at 1e3, 1.2-5.7 after
    "add": 1_000,
    # PositiveCounts.average_precision (the one-pass read): 6.5 at 1e3, 1.17-1.4 from 1e5 plain
    "ap": 1_000,
    # regression._ranks.inversions (Kendall): 44-55 at 1e3, 6-12 at 1e6
    "inversions": 1_000,
    # the engines' range routing (range_counts._partition: numpy's count and ndarray.partition
    # vs one branch-free pass), 2026-12-06 05:25 UTC (load ~13): 11-17 from 3e2 to 1e6
    "partition": 1_000,
    # the engines' split of a batch by class into one buffer (range_counts._ClassBuffer.add:
    # blocked compress vs one branch-free pass), same run: 2.6-5.8 from 3e2 to 1e6
    "split": 1_000,
}
_SETTINGS: dict[str, object] = {"enabled": None, "min_size": None, "sizes": {}}
_LOADED: list[ModuleType | None] = []  # [] until looked up, then [the kernels or None]
_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))


def kernels() -> ModuleType | None:
    """The compiled kernels module, or None (numba absent, disabled, or switched off)."""
    enabled = _SETTINGS["enabled"]
    if enabled is False:
        return None
    if not _LOADED:
        mod: ModuleType | None = None
        if os.environ.get("STREAMMETRICS_NUMBA", "1") != "0" or enabled:
            try:
                from . import numba_kernels as mod  # imports numba
            except ImportError:
                mod = None
        _LOADED.append(mod)
    return _LOADED[0]


def kernels_at(size: int, kernel: str = "ranks") -> ModuleType | None:
    """The compiled kernels for a call of ``kernel`` (a :data:`MIN_SIZES` key) on ``size``
    elements: from its own threshold once numba is loaded, from at least ``_LOAD_SIZE``
    before (``_LOAD_SIZES``; a call smaller than that never loads it); else None. Inside
    :func:`compiled_kernels` with a ``min_size`` or ``sizes``, those thresholds instead, loading
    numba when needed. O(1)."""
    sizes: dict[str, int | None] = _SETTINGS["sizes"]  # type: ignore[assignment]
    forced: int | None = _SETTINGS["min_size"]  # type: ignore[assignment]
    if kernel in sizes or forced is not None:
        floor = sizes.get(kernel, forced)
        return None if floor is None or size < floor else kernels()
    floor = MIN_SIZES[kernel]
    if floor is None or size < floor:
        return None
    if size < _LOAD_SIZES.get(kernel, _LOAD_SIZE) and (not _LOADED or _LOADED[0] is None):
        return None
    return kernels()


def kernels_for(values: np.ndarray, x: np.ndarray, kernel: str = "ranks") -> ModuleType | None:
    """The compiled kernels when they apply to ranking ``x`` in ``values`` by ``kernel`` (a
    :data:`MIN_SIZES` key): both float32 or float64 of one dtype, ``values`` contiguous, and
    :func:`kernels_at` of their total size; else None. (The kernels take contiguous needles:
    ``np.ascontiguousarray(x)``.)"""
    if values.dtype != x.dtype or values.dtype not in _DTYPES:
        return None
    if not values.flags.c_contiguous:
        return None
    return kernels_at(values.shape[0] + x.shape[0], kernel)


#: The compiled walks skip a run's coarse index for needles at least 1/_DENSE of the run: a
#: galloping walk from the previous answer then beats the index's extra phase (ranks of n / 10
#: sorted needles in 3e5 to 1e7 scores: 0.6-0.95x numpy with the index; count2 already did it).
_DENSE = 32


def coarse_arg(values: np.ndarray, coarse: np.ndarray | None, x: np.ndarray | None = None) -> np.ndarray:
    """A run's coarse index as the kernels take it: an empty array when there is none, or when
    the needles ``x`` (if given) number at least 1/``_DENSE`` of ``values``."""
    if coarse is None or (x is not None and _DENSE * x.shape[0] >= values.shape[0]):
        return np.empty(0, dtype=values.dtype)
    return coarse


@contextmanager
def compiled_kernels(enabled: bool, min_size: int | None = None,
                     sizes: dict[str, int | None] | None = None) -> Iterator[None]:
    """Use the compiled kernels (``enabled``; they must be installed) or numpy inside the block:
    every kernel from ``min_size`` elements per call (None: each kernel's :data:`MIN_SIZES`),
    those named in ``sizes`` from their entry there (None: never); the settings before are
    restored after it."""
    before = dict(_SETTINGS)
    unknown = set(sizes or ()) - set(MIN_SIZES)
    if unknown:
        raise ValueError(f"sizes: unknown kernel {sorted(unknown)[0]!r}")
    _SETTINGS["enabled"] = enabled
    _SETTINGS["min_size"] = min_size
    _SETTINGS["sizes"] = dict(sizes or {})
    try:
        if enabled and kernels() is None:
            raise ImportError("the compiled kernels need numba (pip install 'streammetrics[fast]')")
        yield
    finally:
        _SETTINGS.clear()
        _SETTINGS.update(before)
