"""Array kernels of the bounded ranking state: sorted unions and insertions, run lengths, a
per-thread scratch workspace, key-span searches and coarsening, and the check of fixed
``thresholds=`` (see :mod:`streammetrics._scores.binned.bins` for how they are used and their costs).
"""

from __future__ import annotations

import threading
from typing import Any

import numpy as np

from streammetrics._core.load_checks import reserve
from streammetrics._core.params import Param, check_param, float_array_param

#: Elements per chunk of the branch-free loops (their temporaries stay in cache).
CHUNK = 8192


def pair_runs(c: np.ndarray, w: np.ndarray | None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per distinct key of the pairs ``c = key << 1 | label`` (sorted in place when unweighted:
    ``c`` is a workspace): (keys increasing, positive weight, negative weight), each weight
    summed in sorted order. O(m log m)."""
    if w is None:
        c.sort()
        cs, ws = c, None
    else:
        order = np.argsort(c)
        cs, ws = c[order], np.asarray(w, dtype=np.float64)[order]
    lab = (cs & 1).astype(np.float64)
    k = cs >> 1
    first = np.empty(k.shape[0], dtype=bool)
    first[0] = True
    np.not_equal(k[1:], k[:-1], out=first[1:])
    uk = k[first]
    slot = np.cumsum(first)
    slot -= 1
    u = uk.shape[0]
    if ws is None:
        up = np.bincount(slot, weights=lab, minlength=u)
        un = np.bincount(slot, minlength=u) - up  # counts: exact
    else:
        up = np.bincount(slot, weights=ws * lab, minlength=u)
        lab -= 1.0
        lab *= -ws
        un = np.bincount(slot, weights=lab, minlength=u)
    return uk, up, un


def union_sorted(parts: list[np.ndarray]) -> np.ndarray:
    """Distinct elements of increasing arrays (each without repeats), increasing: a stable
    sort of the concatenation (a merge of sorted runs) and a pass dropping repeats. O(n)
    for two parts."""
    if len(parts) == 1:
        return parts[0]
    k = np.sort(np.concatenate(parts), kind="stable")
    if k.shape[0] < 2:
        return k
    keep = np.empty(k.shape[0], dtype=bool)
    keep[0] = True
    np.not_equal(k[1:], k[:-1], out=keep[1:])
    return k[keep]


#: insert_sorted: up to this many insertions copy the segments between them one by one.
FEW_INSERTS = 256
#: BinnedScores: a column's pending bins are folded in beyond max(this, stored bins / 16).
PENDING_MIN = 4096


def insert_sorted(a: np.ndarray, at: np.ndarray, v: np.ndarray) -> np.ndarray:
    """``np.insert(a, at, v)`` for increasing ``at`` (values inserted before ``a[at]``, in
    order): a new array. Few insertions copy the runs of ``a`` between them (memcpy speed);
    many go through ``np.insert``. O(len(a) + len(at))."""
    u = at.shape[0]
    if u > FEW_INSERTS:
        return np.insert(a, at, v)
    out = np.empty(a.shape[0] + u, dtype=a.dtype)
    prev = 0
    for j, i in enumerate(at.tolist()):
        out[prev + j : i + j] = a[prev:i]
        out[i + j] = v[j]
        prev = i
    out[prev + u :] = a[prev:]
    return out


def insert_sorted_many(
    arrays: tuple[np.ndarray, ...], at: np.ndarray, values: tuple[np.ndarray, ...]
) -> tuple[np.ndarray, ...]:
    """:func:`insert_sorted` of each ``values[i]`` into ``arrays[i]`` at the same positions
    ``at``: many insertions compute the destinations once (old element i goes to i + the
    number of insertions at or before it) and scatter each array. O(len(a) + len(at))."""
    u = at.shape[0]
    if u <= FEW_INSERTS:
        return tuple(insert_sorted(a, at, v) for a, v in zip(arrays, values, strict=True))
    nb = arrays[0].shape[0]
    new_at = at + np.arange(u)
    dst = np.bincount(at, minlength=nb + 1)[:nb]
    np.cumsum(dst, out=dst)
    dst += np.arange(nb)
    out = []
    for a, v in zip(arrays, values, strict=True):
        o = np.empty(nb + u, dtype=a.dtype)
        o[dst] = a
        o[new_at] = v
        out.append(o)
    return tuple(out)


def run_length(
    keys: np.ndarray, w: np.ndarray | None, in_place: bool = False
) -> tuple[np.ndarray, np.ndarray]:
    """Distinct keys (increasing; a new array) and the weight of each (count for ``w is None``);
    ``in_place``: ``keys`` may be sorted in place."""
    n = keys.shape[0]
    if w is None:
        if in_place:
            keys.sort()
            ks = keys
        else:
            ks = np.sort(keys)
        ws = None
    else:
        order = np.argsort(keys)
        ks, ws = keys[order], np.asarray(w, dtype=np.float64)[order]
    start = np.empty(n, dtype=bool)
    if n:
        start[0] = True
        np.not_equal(ks[1:], ks[:-1], out=start[1:])
    idx = np.flatnonzero(start)
    if ws is None:
        sums = np.diff(np.append(idx, n)).astype(np.float64)
    else:
        sums = np.add.reduceat(ws, idx) if n else np.zeros(0)
    return ks[idx], sums


WORK = threading.local()
#: Scratch memory one thread keeps between updates, all names together (larger temporaries
#: are allocated per batch and freed).
WORK_MAX_BYTES = 16 << 20


def workspace(name: str, n: int, dtype: Any) -> np.ndarray:
    """A reusable scratch array of ``n`` elements (contents undefined), one per name and
    thread: the fold's temporaries cost page faults when freshly allocated on every batch.
    Per thread, so concurrent updates of different states never share one."""
    kept: dict[str, np.ndarray] | None = getattr(WORK, "arrays", None)
    if kept is None:
        kept = WORK.arrays = {}
    buf = kept.get(name)
    if buf is None or buf.shape[0] < n or buf.dtype != dtype:
        old = kept.pop(name, None)
        buf = np.empty(max(n, 1024), dtype=dtype)
        held = sum(a.nbytes for a in kept.values())
        if held + buf.nbytes <= WORK_MAX_BYTES:
            kept[name] = buf
        elif old is not None and old.dtype == dtype:
            kept[name] = old  # keep the smaller one for the usual batch size
    return buf[:n]


def min_above(k: np.ndarray, a: int, init: int) -> int:
    """min(init, smallest element of ``k`` greater than ``a``), in cache-sized chunks: the
    minimum of ``k − (a + 1)`` read as unsigned (elements <= a wrap to >= 2^63). The caller
    guarantees |k|, |a| < 2^62 (keys at shift >= 1), so the difference cannot overflow. O(len(k))."""
    out = init
    b = np.int64(a + 1)
    t = np.empty(min(k.shape[0], CHUNK), dtype=np.int64)
    for i in range(0, k.shape[0], CHUNK):
        c = k[i : i + CHUNK]
        tt = t[: c.shape[0]]
        np.subtract(c, b, out=tt)
        m = int(tt.view(np.uint64).min())
        if m < 2**63:
            out = min(out, a + 1 + m)
    return out


def sub_above(idx: np.ndarray, a: int, gap: int) -> None:
    """In place: ``idx[idx > a] -= gap``, branch-free in chunks. O(len(idx))."""
    t = np.empty(min(idx.shape[0], CHUNK), dtype=np.int64)
    ia, g = np.int64(a), np.int64(gap)
    for i in range(0, idx.shape[0], CHUNK):
        c = idx[i : i + CHUNK]
        tt = t[: c.shape[0]]
        np.subtract(ia, c, out=tt)  # negative where c > a
        tt >>= 63  # -1 where c > a
        tt &= g
        c -= tt


def distinct_after(keys: np.ndarray, d: int) -> int:
    k = keys >> d
    return 1 + int(np.count_nonzero(k[1:] != k[:-1]))


def bits_to_fit(keys: np.ndarray, capacity: int, most: int) -> int:
    """Smallest d with at most ``capacity`` distinct ``keys >> d`` (keys increasing, unique):
    a binary search, the count being non-increasing in d. O(b log 64)."""
    lo, hi = 1, most  # total shift 63 leaves at most two keys (-1 and 0) <= MIN_BINS
    while lo < hi:
        mid = (lo + hi) // 2
        if distinct_after(keys, mid) <= capacity:
            hi = mid
        else:
            lo = mid + 1
    return lo


def coarsen(
    keys: np.ndarray, p: np.ndarray, n: np.ndarray, d: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Raise the shift by ``d``: merge bins whose keys agree above the lowest d bits. O(b)."""
    k = keys >> d
    start = np.empty(k.shape[0], dtype=bool)
    start[0] = True
    np.not_equal(k[1:], k[:-1], out=start[1:])
    idx = np.flatnonzero(start)
    return k[idx], np.add.reduceat(p, idx), np.add.reduceat(n, idx)


_THRESHOLD_COUNT = Param("int", "must be an int >= 2 or an array of numbers", low=2,
                         range_rule="an int must be >= 2")


def check_thresholds(thresholds: Any) -> np.ndarray:
    if isinstance(thresholds, (int, np.integer)):  # a bool too: refused by the check
        count = check_param(thresholds, "thresholds", _THRESHOLD_COUNT)
        reserve(48.0 * count, f"thresholds={count}")
        return np.linspace(0.0, 1.0, count)
    arr = float_array_param(thresholds, "thresholds", "an int >= 2 or a non-empty 1-D array of numbers")
    if arr.ndim != 1 or arr.shape[0] == 0:
        raise ValueError("thresholds: must be an int >= 2 or a non-empty 1-D array of numbers")
    if np.isnan(arr).any():
        raise ValueError(f"thresholds: must not hold NaN (index {int(np.argmax(np.isnan(arr)))})")
    return np.unique(arr + 0.0)
