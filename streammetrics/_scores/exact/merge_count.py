"""Which ranking kernels the exact score buffer uses: numpy's, or the optional compiled ones.

With the ``fast`` extra installed (``pip install streammetrics[fast]``: numba), the searches of
sorted needles in the stored runs and the average-precision read run compiled
(:mod:`streammetrics._scores.exact.numba_kernels`); without it, numpy's ``searchsorted`` and array passes.
Both give the same results bit for bit. numba is imported on the first read that has at least
``min_size`` scores to rank (never by ``import streammetrics``), and its kernels are compiled
once and cached on disk; once loaded, they also take the smaller calls (from ``_WARM_SIZE``).
``STREAMMETRICS_NUMBA=0`` in the environment keeps the numpy path.
:func:`compiled_kernels` switches the path for a block (tests and benchmarks compare them).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from types import ModuleType

import numpy as np

#: Below this many needles plus stored scores a call stays in numpy. Loading numba and the
#: cached kernels costs ~0.6 s once per process (~4 s the first time they compile), which only
#: a large state repays: a script over fewer than a million scores never pays it.
_MIN_SIZE = 1 << 20
#: Once loaded, the kernels take every call from this many elements (their load is paid; from
#: here on they beat numpy's calls: AUROC read after each of 200 batches of 10k, 0.70 -> 0.52 s).
_WARM_SIZE = 1 << 14
_SETTINGS: dict[str, object] = {"enabled": None, "min_size": _MIN_SIZE}
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


def kernels_at(size: int) -> ModuleType | None:
    """The compiled kernels for a call on a state of ``size`` scores (at least ``min_size``, or
    once loaded at least ``_WARM_SIZE``), else None."""
    if size < int(_SETTINGS["min_size"]) and (  # type: ignore[call-overload]
            size < _WARM_SIZE or not _LOADED or _LOADED[0] is None):
        return None
    return kernels()


def kernels_for(values: np.ndarray, x: np.ndarray) -> ModuleType | None:
    """The compiled kernels when they apply to ranking ``x`` in ``values``: both float32 or
    float64 of one dtype, ``values`` contiguous, at least ``min_size`` elements in all; else
    None; once loaded, from min(``min_size``, ``_WARM_SIZE``) elements (:func:`kernels_at`).
    (The kernels take contiguous needles: ``np.ascontiguousarray(x)``.)"""
    if kernels_at(values.shape[0] + x.shape[0]) is None:
        return None
    if values.dtype != x.dtype or values.dtype not in _DTYPES:
        return None
    if not values.flags.c_contiguous:
        return None
    return kernels()


def coarse_arg(values: np.ndarray, coarse: np.ndarray | None) -> np.ndarray:
    """A run's coarse index as the kernels take it: an empty array when there is none."""
    return np.empty(0, dtype=values.dtype) if coarse is None else coarse


@contextmanager
def compiled_kernels(enabled: bool, min_size: int | None = None) -> Iterator[None]:
    """Use the compiled kernels (``enabled``; they must be installed) or numpy inside the block,
    from ``min_size`` elements per call (None: the default threshold); the settings before are
    restored after it."""
    before = dict(_SETTINGS)
    _SETTINGS["enabled"] = enabled
    _SETTINGS["min_size"] = _MIN_SIZE if min_size is None else min_size
    try:
        if enabled and kernels() is None:
            raise ImportError("the compiled kernels need numba (pip install 'streammetrics[fast]')")
        yield
    finally:
        _SETTINGS.clear()
        _SETTINGS.update(before)
