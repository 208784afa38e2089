"""The bounded whole-set state of the regression family: adaptive mergeable bins of values per
output, with certified percentiles ("Bounded memory" in docs/definitions/regression.md).

:class:`ValueBins` keeps what :class:`~streammetrics.regression._value_buffer.ValueBuffer` keeps
(absolute errors, or targets with the pinball sums), as bins: every value maps to the
order-preserving int64 key of the bounded ranking state (:func:`streammetrics._scores.binned.keys.raw_keys`),
and output j keeps the weight of every ``key >> shift_j``. The shift is the smallest with at most
``capacity`` distinct shifted keys over the values seen -- a function of the multiset of values
only, so any split into batches and any merge give the same bins (bit for bit with unit or integer
weights). At shift 0 every bin is one distinct value and every read is exact.

A bin is an interval of values [lo, hi] (the smallest and largest float with a key in it), so:

* the percentile lies in [lo of the bin its cumulative weight reaches, hi of the bin of the next
  value when it is averaged with it] (:func:`percentile_bounds`);
* the minimum over q of ``sum w L_alpha(y - q)`` (D²'s denominator: scikit-learn's quantile is a
  minimiser) lies between the minima of the lower and upper envelopes of that sum, each bin's
  values put where they cost the least / the most (:func:`pinball_min_bounds`).

Complexity: a fold of m values into b bins O((m + b) log(m + b)); a read O(b log b). Memory: 16
bytes per bin (key and weight) and 8 per output.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from typing import Any

import numpy as np

from streammetrics._core.load_checks import check_array_names, check_total
from streammetrics._core.state import State
from streammetrics._core.validation import MAX_WEIGHT, MIN_WEIGHT, check_offsets
from streammetrics._scores.binned.keys import NEG_INF_KEY, POS_INF_KEY, raw_decode, raw_keys

from ._base import check_same_outputs, positive_rows
from ._value_buffer import KINDS, loaded_loss, pinball_sums

BIN_BYTES = 16
MIN_BINS = 16
_OUTPUT_BYTES = 16
#: Relative slack of the cumulative weights (their rounding differs from a per-sample sum).
_CW_SLACK = 1e-9


def _unique_sum(keys: np.ndarray, w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    uniq, inv = np.unique(keys, return_inverse=True)
    return uniq, np.bincount(inv.reshape(-1), weights=w, minlength=uniq.shape[0])


def _fit(keys: np.ndarray, w: np.ndarray, shift: int, cap: int) -> tuple[np.ndarray, np.ndarray, int]:
    """The bins at the smallest shift >= ``shift`` with at most ``cap`` distinct keys."""
    if keys.shape[0] <= cap:
        return keys, w, shift
    lo, hi = shift + 1, 64
    while lo < hi:  # smallest L with at most cap distinct keys >> (L - shift)
        mid = (lo + hi) // 2
        if np.unique(keys >> (mid - shift)).shape[0] <= cap:
            hi = mid
        else:
            lo = mid + 1
    k2, w2 = _unique_sum(keys >> (lo - shift), w)
    return k2, w2, lo


def bin_edges(keys: np.ndarray, shift: int) -> tuple[np.ndarray, np.ndarray]:
    """(lo, hi) per bin: the smallest and the largest float whose key is in it."""
    lo_key = keys << shift
    hi_key = lo_key | ((1 << shift) - 1) if shift else lo_key
    big = float(np.finfo(np.float64).max)  # every value held is finite
    lo = np.clip(raw_decode(lo_key), -big, big)
    hi = np.clip(raw_decode(np.minimum(hi_key, POS_INF_KEY)), -big, big)
    return lo, hi


def percentile_bounds(lo: np.ndarray, hi: np.ndarray, w: np.ndarray, rank: float, average: bool
                      ) -> tuple[float, float]:
    """Certified bounds of scikit-learn's weighted percentile (see
    :func:`streammetrics.regression._ranks.weighted_percentile`) of values known only by bin:
    bin b holds weight ``w[b]`` of values in [``lo[b]``, ``hi[b]``], bins ascending and disjoint.
    O(b)."""
    cw = np.cumsum(w)
    total = float(cw[-1])
    t = rank / 100 * total
    tol = _CW_SLACK * total
    last = cw.shape[0] - 1
    j1 = min(int(np.searchsorted(cw, t - tol, "left")), last)
    j2 = min(int(np.searchsorted(cw, max(t, 0.0) + tol, "left")), last)
    if average and float(cw[j2]) - t <= tol:
        j2 = min(j2 + 1, last)
    return float(lo[j1]), float(hi[j2])


def pinball_min_bounds(lo: np.ndarray, hi: np.ndarray, w: np.ndarray, alpha: float
                       ) -> tuple[float, float]:
    """:func:`_pinball_min_bounds` with float overflow allowed: values near the float maximum
    times large weights overflow to inf, which is still a (loose) certified bound."""
    with np.errstate(over="ignore", invalid="ignore"):
        low, high = _pinball_min_bounds(lo, hi, w, alpha)
    return (low if low == low else -np.inf), (high if high == high else np.inf)


def _pinball_min_bounds(lo: np.ndarray, hi: np.ndarray, w: np.ndarray, alpha: float
                        ) -> tuple[float, float]:
    """Bounds of ``min_q sum_i w_i L_alpha(y_i - q)`` for values known by bin (as
    :func:`percentile_bounds`). The lower envelope puts each bin's values at the point of
    [lo, hi] nearest q, the upper at the farthest; both are convex and piecewise linear in q, so
    their minima are at their breakpoints (the edges; for the upper one also each bin's point
    ``alpha hi + (1 - alpha) lo``). O(b log b) with prefix sums."""
    a = float(alpha)
    cw = np.concatenate([[0.0], np.cumsum(w)])
    clo = np.concatenate([[0.0], np.cumsum(w * lo)])
    chi = np.concatenate([[0.0], np.cumsum(w * hi)])
    tot_w, tot_lo, tot_hi = cw[-1], clo[-1], chi[-1]
    edges = np.unique(np.concatenate([lo, hi]))
    # lower envelope: bins above q (lo > q) at lo, below q (hi < q) at hi, containing q at q
    i_above = np.searchsorted(lo, edges, "right")
    i_below = np.searchsorted(hi, edges, "left")
    f_lo = (a * ((tot_lo - clo[i_above]) - edges * (tot_w - cw[i_above]))
            + (1 - a) * (edges * cw[i_below] - chi[i_below]))
    q = np.concatenate([edges, a * hi + (1 - a) * lo])
    # upper envelope: bins with lo >= q at hi, with hi <= q at lo, one bin may straddle q
    j_above = np.searchsorted(lo, q, "left")
    j_below = np.searchsorted(hi, q, "right")
    f_hi = (a * ((tot_hi - chi[j_above]) - q * (tot_w - cw[j_above]))
            + (1 - a) * (q * cw[j_below] - clo[j_below]))
    straddle = j_below < j_above
    if straddle.any():
        b = j_below[straddle]
        qs = q[straddle]
        f_hi[straddle] += w[b] * np.maximum(a * (hi[b] - qs), (1 - a) * (qs - lo[b]))
    low = max(float(f_lo.min()), 0.0)
    return low, max(float(f_hi.min()), low)


class ValueBins(State):
    """Binned values of one kind per output (see the module docstring).

    Parameters
    ----------
    kind : {"abs_error", "y_true"}
        As :class:`~streammetrics.regression._value_buffer.ValueBuffer`.
    alpha : float, optional
        The pinball level of ``kind="y_true"``.
    max_bytes : int
        The state's size bound (all outputs): ``(max_bytes - 16 (k + 1)) // (16 k)`` bins per
        output, at least 16 (checked when the first batch fixes k).
    """

    def __init__(self, kind: str, alpha: float | None, max_bytes: int) -> None:
        assert kind in KINDS
        self.kind, self.alpha, self.max_bytes = kind, alpha, int(max_bytes)
        self.reset()

    def key(self) -> Hashable:
        return ("regression_value_bins", self.kind, self.alpha, self.max_bytes)

    def capacity(self, k: int) -> int:
        """Bins per output for ``k`` outputs."""
        return (self.max_bytes - _OUTPUT_BYTES * (k + 1)) // (BIN_BYTES * max(k, 1))

    def reset(self) -> None:
        self._keys: list[np.ndarray] = []
        self._w: list[np.ndarray] = []
        self._shift: list[int] = []
        self._loss = np.zeros(0)
        self._rows = 0

    @property
    def k(self) -> int:
        return len(self._keys)

    def prepare(self, y_true: Any, y_pred: Any, sample_weight: Any = None) -> Any:
        if (rows := positive_rows(y_true, y_pred, sample_weight, self.k)) is None:
            return None
        _, y, p, w = rows
        k = y.shape[1]
        if self.capacity(k) < MIN_BINS:
            need = BIN_BYTES * k * MIN_BINS + _OUTPUT_BYTES * (k + 1)
            raise ValueError(f"max_bytes: {self.max_bytes} is too small for {k} output(s); need "
                             f"at least {need}")
        values = np.abs(y - p) if self.kind == "abs_error" else y
        ww = np.ones(y.shape[0]) if w is None else w
        cols = [_unique_sum(raw_keys(np.ascontiguousarray(values[:, j])), ww) for j in range(k)]
        loss = pinball_sums(y, p, w, float(self.alpha or 0.0)) if self.kind == "y_true" else None
        return cols, loss, y.shape[0]

    def apply(self, delta: Any) -> None:
        if delta is None:
            return
        cols, loss, rows = delta
        self._rows += rows
        if not self._keys:
            self._keys = [np.zeros(0, dtype=np.int64) for _ in cols]
            self._w = [np.zeros(0) for _ in cols]
            self._shift = [0] * len(cols)
            self._loss = np.zeros(len(cols))
        cap = self.capacity(len(cols))
        for j, (keys, w) in enumerate(cols):
            self._fold(j, keys, w, 0, cap)
        if loss is not None:
            self._loss = self._loss + loss

    def _fold(self, j: int, keys: np.ndarray, w: np.ndarray, shift: int, cap: int) -> None:
        mine = self._shift[j]
        sh = max(mine, shift)
        k2, w2 = _unique_sum(np.concatenate([self._keys[j] >> (sh - mine), keys >> (sh - shift)]),
                             np.concatenate([self._w[j], w]))
        self._keys[j], self._w[j], self._shift[j] = _fit(k2, w2, sh, cap)

    # -- reads -------------------------------------------------------------------------------
    def column_exact(self, j: int) -> bool:
        """True when output ``j``'s bins are single distinct values."""
        return self._shift[j] == 0

    def bins(self, j: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(lo, hi, weight) per bin of output ``j``, ascending."""
        lo, hi = bin_edges(self._keys[j], self._shift[j])
        return lo, hi, self._w[j]

    def loss(self) -> np.ndarray:
        return self._loss.copy()

    def rows(self) -> int:
        """Rows of positive weight folded in."""
        return self._rows

    def sample_count(self) -> float | None:
        return float(self._w[0].sum()) if self._w else 0.0

    @property
    def nbytes(self) -> int:
        return int(sum(a.nbytes + b.nbytes for a, b in zip(self._keys, self._w, strict=True))
                   + _OUTPUT_BYTES * (self.k + 1))

    # -- state protocol ----------------------------------------------------------------------
    def arrays(self) -> dict[str, Any]:
        offsets = np.zeros(self.k + 1, dtype=np.int64)
        offsets[1:] = np.cumsum([a.shape[0] for a in self._keys])
        out: dict[str, Any] = {
            "keys": np.concatenate(self._keys) if self._keys else np.zeros(0, dtype=np.int64),
            "bin_weights": np.concatenate(self._w) if self._w else np.zeros(0),
            "offsets": offsets,
            "shifts": np.asarray(self._shift, dtype=np.int64),
            "rows": np.asarray(self._rows, dtype=np.int64),
        }
        if self.kind == "y_true":
            out["loss"] = self._loss.copy()
        return out

    def load_arrays(self, arrays: Mapping[str, Any]) -> None:
        check_array_names(arrays, ("keys", "bin_weights", "offsets", "shifts", "rows")
                          + (("loss",) if self.kind == "y_true" else ()))
        keys = np.asarray(arrays["keys"])
        if keys.ndim != 1 or keys.dtype.kind not in "iu":
            raise ValueError(f"state: array 'keys' must be 1-D integers, got {keys.dtype} {keys.shape}")
        keys = keys.astype(np.int64)
        weights = np.asarray(arrays["bin_weights"])
        if weights.shape != keys.shape or weights.dtype.kind not in "biuf":
            raise ValueError("state: array 'bin_weights' must be numbers matching 'keys'")
        weights = weights.astype(np.float64)
        raw_off = np.asarray(arrays["offsets"])
        if raw_off.ndim != 1 or raw_off.shape[0] < 1:
            raise ValueError("state: array 'offsets' must be 1-D with at least one entry")
        k = raw_off.shape[0] - 1
        offsets = check_offsets(raw_off, "offsets", k, keys.shape[0], "keys")
        shifts = np.asarray(arrays["shifts"])
        if shifts.shape != (k,) or shifts.dtype.kind not in "iu":
            raise ValueError(f"state: array 'shifts' must be {k} integers")
        shifts = shifts.astype(np.int64)
        if k and ((shifts < 0) | (shifts > 63)).any():
            raise ValueError("state: array 'shifts' must hold shifts in [0, 63]")
        if k and self.capacity(k) < MIN_BINS:
            raise ValueError(f"state: max_bytes={self.max_bytes} holds no bins for {k} outputs")
        bad = ~((weights >= MIN_WEIGHT) & (weights <= MAX_WEIGHT * 2.0**53))
        if bad.any():  # each bin sums weights of at least MIN_WEIGHT
            i = int(np.argmax(bad))
            raise ValueError(f"state: array 'bin_weights' must hold weights >= {MIN_WEIGHT:g}, got "
                             f"{float(weights[i])!r} at index {i}")
        rows_arr = np.asarray(arrays["rows"])
        if rows_arr.shape != () or rows_arr.dtype.kind not in "iu":
            raise ValueError("state: array 'rows' must be one integer")
        rows = int(rows_arr)
        if rows < 0 or rows > 2**53 or (rows == 0) != (k == 0):
            raise ValueError(f"state: array 'rows' ({rows}) must be positive exactly when outputs are held")
        ks, ws = [], []
        cap = self.capacity(k)
        for j in range(k):
            a, b = int(offsets[j]), int(offsets[j + 1])
            kj, wj = keys[a:b], weights[a:b]
            if b == a or b - a > min(cap, rows):
                raise ValueError(f"state: output {j} holds {b - a} bins, expected 1 to {min(cap, rows)}")
            if kj.shape[0] > 1 and (kj[1:] <= kj[:-1]).any():
                raise ValueError(f"state: the keys of output {j} are not strictly increasing")
            s = int(shifts[j])
            if int(kj[-1]) > (POS_INF_KEY - 1) >> s or int(kj[0]) < (NEG_INF_KEY + 1) >> s:
                raise ValueError(f"state: output {j} has a key outside the finite values")
            if self.kind == "abs_error" and int(kj[0]) < 0:
                raise ValueError("state: absolute errors must be >= 0")
            check_total(wj, "bin_weights")
            ks.append(kj.copy())
            ws.append(wj.copy())
        loss = loaded_loss(arrays, self.kind, k)
        self._keys, self._w, self._shift, self._loss = ks, ws, [int(s) for s in shifts], loss
        self._rows = rows

    def merge(self, other: State) -> None:
        assert isinstance(other, ValueBins)
        if not other._keys:
            return
        check_same_outputs(self.k, other.k)
        self._rows += other._rows
        if not self._keys:
            self._keys = [a.copy() for a in other._keys]
            self._w = [a.copy() for a in other._w]
            self._shift = list(other._shift)
            self._loss = other._loss.copy()
            return
        cap = self.capacity(self.k)
        for j in range(self.k):
            self._fold(j, other._keys[j], other._w[j], other._shift[j], cap)
        self._loss = self._loss + other._loss
