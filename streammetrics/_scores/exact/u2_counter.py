"""The exact pair counter ``u2`` of the sorted score buffer at any size.

``u2[c, g]`` (twice the Mann-Whitney U of column c's positives against group g) is held as int64
for unweighted data: every update is then a few machine-integer additions. It is bounded by
``2 P N <= T**2 / 2`` for T = P + N samples in the column, so int64 holds it exactly up to about
3e9 samples per column. Before samples are added that could take it past that bound, the counter
becomes an object array of Python ints (exact at any size, the same cost per addition: the
counter has one entry per (column, group), not per sample). Weighted counters are float64.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

_SAFE_T = math.isqrt(2**63)  # T**2 / 2 <= 2**62 keeps every partial sum of u2 well inside int64
_NEVER = 2**100  # a float64 or object counter never needs another look


def exact_u2(u2: np.ndarray, groups: Iterable[Sequence[Any]], added: int,
             room: int) -> tuple[np.ndarray, int]:
    """``(u2, room)`` before ``added`` more unit-weight samples are folded in: ``u2``, or an
    exact Python-int (object) copy of it when they could take it past int64 -- T = the most
    samples in any column (the ``total`` of its groups) plus ``added``, and the bound
    ``T**2 / 2`` must stay within 2**62. ``room`` is how many samples may still be added without
    looking (0 on a fresh state): O(1) while there is room, else O(columns x groups) to count
    T again. Float64 (weighted) and object counters are returned as they are."""
    if added <= room:
        return u2, room - added
    if u2.dtype != np.int64:
        return u2, _NEVER
    t = max((sum(int(g.total) for g in row) for row in groups), default=0) + int(added)
    if t <= _SAFE_T:
        return u2, _SAFE_T - t
    return u2.astype(object), _NEVER  # elements become Python ints


def as_python(x: Any) -> Any:
    """One counter entry as a Python number (int64 / float64 scalars and Python ints alike)."""
    return x if type(x) is int else x.item()


def counter_copy(u2: Any, weighted: bool) -> np.ndarray:
    """A copy of a trusted counter in its kind: float64 when weighted, else int64 or (past
    int64's safe range) Python ints."""
    arr = np.asarray(u2)
    return np.array(arr, dtype=np.float64 if weighted else object if arr.dtype == object else np.int64)
