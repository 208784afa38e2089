"""Bounded-memory ranking state: adaptive mergeable binned counts (SPEC section 3, "Bounded memory").

Keys
----
Every score is mapped to an order-preserving 64-bit integer *key* after a declared transform
(never guessed from a batch):

* ``scores="raw"`` (default; also ``"logit"``): any orderable float. key = the float64 bits with
  the low 63 bits flipped for negative numbers (so integer order = float order; -0.0 is folded
  into 0.0). Float32 scores are widened to float64 first (exact).
* ``scores="probability"``: scores in [0, 1]. key(p) = bits(p) for p <= 1/2 and
  2·bits(1/2) − bits(1 − p) above (1 − p is exact there, Sterbenz), so resolution is relative
  near both 0 and 1 -- the shape of the logit, without any rounding in the transform.

Both maps are strictly increasing and injective on distinct scores, so at shift 0 every bin is
one distinct score and the state is exact.

Bins
----
Per column (binary: 1; one-vs-rest column per class or label) the state is a sparse map
``key >> shift -> (positive weight, negative weight)`` with at most ``capacity`` entries, stored
as sorted arrays. When a fold would exceed the capacity, the shift is raised to the smallest value
at which the column fits. The shift is therefore the smallest L with at most ``capacity`` distinct
``key >> L`` over the data seen -- a function of the multiset of inputs only -- so the state of a
stream split in any way and merged (align shifts, add, coarsen) is bit-for-bit the single-stream
state for unit or integer weights (float weights: the same bins, sums within rounding).

With ``thresholds=`` (fixed edges e_0 < ... < e_{T-1}) the key is the number of edges <= score,
bins never coarsen, and the state is a plain per-bin count.

Every bin is an interval of scores, so the counts at each bin's lower edge are the exact counts
of "score >= edge": curve points read from binned state are exact points of the true curve at
those thresholds; only the order *inside* a bin is lost, which the certificates of
:func:`auroc_bounds` and :func:`ap_bounds` account for.

Folding a batch
---------------
A batch's keys (computed in ``prepare``, outside the lock; a multiclass batch in one pass over
all its scores) are shifted to the column's current resolution. When the stored and new keys
span at most about 2·(m + b) key values -- the steady state once the column is binned, also for
logits after cutting out the empty stretch around 0 -- their weights are summed into dense
slots (O(m + span), no sort) in a per-thread workspace that is reused between updates (it grows
with the batches seen, at most 16 MiB per thread in all; larger temporaries are freed after the
batch); otherwise (while the state is exact) the
keys are sorted and run-length encoded (O(m log m + b)). Either way the column is then the union
at that shift, coarsened only if it exceeds the capacity, so the result does not depend on the
path taken.

Removal and decay
-----------------
:meth:`BinnedScores.subtract` removes a sub-multiset of the samples (sliding windows) and
:meth:`BinnedScores.scale` multiplies every weight by a factor in [0, 1] (exponential decay).
Neither refines the bins: afterwards the state depends on its history, not only on the multiset
of remaining samples, but every bin is still an interval of scores, so the certificates hold.

Complexity: a fold of m scores into a column of b bins is O(m + b) on the dense path,
O(m log m + b) while exact; coarsening O(b log 64); reads O(b). Memory: 24 bytes per bin + 16
per column (the scratch workspace, at most 16 MiB per thread that has updated a bounded state,
is not per state and is not counted).
"""

from __future__ import annotations

import math
import threading
from collections.abc import Hashable, Mapping
from typing import Any

import numpy as np

from ._curves import ThresholdCounts
from ._load_checks import check_total, reserve
from ._params import float_array_param
from ._sorted_buffer import SortedScores, _unit_or_positive
from ._state import State
from ._validation import (
    as_numpy,
    check_binary_labels,
    check_class_labels,
    check_multilabel_batch,
    check_offsets,
    check_scores,
    check_weights,
    drop_ignored,
    is_scalar,
)

__all__ = ["BinnedScores", "auroc_bounds", "ap_bounds", "SCORE_TRANSFORMS", "BIN_BYTES"]

SCORE_TRANSFORMS = ("raw", "logit", "probability")
#: Bytes per bin (int64 key, float64 positive and negative weight) and per column (offset, shift).
BIN_BYTES = 24
COLUMN_BYTES = 16
#: The smallest number of bins per column a budget may give.
MIN_BINS = 16

#: subtract: a weight going negative by more than this (relative) is not contained; a remainder
#: within _SNAP_RTOL of the bin's weight before is float rounding and set to 0.
_SUB_RTOL = 1e-9
_SNAP_RTOL = 1e-12
#: Smallest normal float64: scaled weights below it are flushed to 0 (subnormal ratios overflow).
_TINY = float(np.finfo(np.float64).tiny)
#: apply: fold by ``bincount`` over the key span when span <= _DENSE_FACTOR·(new + stored) +
#: _DENSE_MIN (temporary memory 16 bytes per slot), else sort.
_DENSE_FACTOR = 2
_DENSE_MIN = 4096
#: Elements per chunk of the branch-free loops (their temporaries stay in cache).
_CHUNK = 8192
#: Scores per block of columns keyed at once when folding a multiclass / multilabel batch.
_BLOCK = 1 << 18

_LOW63 = np.int64(0x7FFFFFFFFFFFFFFF)
_HALF_BITS = int(np.float64(0.5).view(np.int64))
_NEG_INF_KEY = int(np.float64(-np.inf).view(np.int64)) ^ 0x7FFFFFFFFFFFFFFF
_POS_INF_KEY = int(np.float64(np.inf).view(np.int64))


def _raw_keys(s: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """Float64 bits with the low 63 bits flipped for negatives (into ``out`` if given)."""
    f = None if out is None else out.view(np.float64)
    b = np.add(s, 0.0, dtype=np.float64, out=f).view(np.int64)  # a copy; + 0.0 folds -0.0 into 0.0
    m = b >> 63
    m &= _LOW63
    b ^= m
    return b


def _raw_decode(k: np.ndarray) -> np.ndarray:
    k = np.asarray(k, dtype=np.int64)
    below = k < _NEG_INF_KEY  # a lower bin edge below -inf's key: everything -> -inf
    b = k ^ ((k >> 63) & _LOW63)
    out = b.view(np.float64).copy()
    out[below] = -np.inf
    return out


def _prob_keys(p: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """key(p) = bits(p) for p < 1/2, 2·bits(1/2) − bits(1 − p) for p >= 1/2 (equal at 1/2).

    Out-of-range scores (p < 0 or p > 1) get keys outside [0, 2·bits(1/2)], so a range check
    is a min/max of the keys. Branch-free, in place, in cache-sized chunks (no large temporary:
    fresh large arrays cost page faults)."""
    p = np.asarray(p).reshape(-1)
    if p.dtype != np.float32:
        p = p.astype(np.float64, copy=False)
    n = p.shape[0]
    if out is None:
        out = np.empty(n, dtype=np.int64)
    q = out.view(np.float64)
    np.subtract(1.0, p, out=q, dtype=np.float64)  # exact for p in [1/2, 1]
    np.minimum(q, p, out=q)  # p below 1/2, 1 - p above
    q += 0.0  # -0.0 -> 0.0
    t = np.empty(min(n, _CHUNK), dtype=np.int64)
    tf = t.view(np.float64)
    for i in range(0, n, _CHUNK):
        j = min(i + _CHUNK, n)
        b, tt = out[i:j], t[: j - i]
        np.subtract(p[i:j], 0.5, out=tf[: j - i], dtype=np.float64)  # sign bit set iff p < 1/2
        tt >>= 63
        np.invert(tt, out=tt)  # -1 where p >= 1/2, else 0
        b ^= tt
        b -= tt  # -bits where p >= 1/2
        tt &= 2 * _HALF_BITS
        b += tt
    return out


def _prob_decode(k: np.ndarray) -> np.ndarray:
    """Smallest probability whose key is >= k (for every k in [0, 2·bits(1/2)])."""
    k = np.asarray(k, dtype=np.int64)
    out = np.empty(k.shape[0])
    low = k <= _HALF_BITS
    out[low] = k[low].view(np.float64)
    hk = k[~low]
    if hk.shape[0]:
        q = (2 * _HALF_BITS - hk).view(np.float64)
        t = 1.0 - q
        up = _prob_keys(t) < hk
        t[up] = np.nextafter(t[up], 2.0)
        prev = np.nextafter(t, 0.0)
        down = _prob_keys(prev) >= hk
        t[down] = prev[down]
        out[~low] = t
    return out


def auroc_bounds(pos: np.ndarray, neg: np.ndarray) -> tuple[float, float, float]:
    """(estimate, low, high) of the AUROC from per-bin weights in *increasing* score order.

    Estimate A = (Σ_b p_b·(Σ_{b'<b} n_b') + ½ Σ_b p_b·n_b) / (P·N) (ties-as-half = the trapezoid
    over the bin edges); the exact AUROC lies in A ± ½ Σ_b p_b·n_b / (P·N) (SPEC section 3).
    nan if P or N is 0. O(b).
    """
    P, N = float(pos.sum()), float(neg.sum())
    if P <= 0 or N <= 0:
        return math.nan, math.nan, math.nan
    if P * N < 2.0**61 and (pos == np.floor(pos)).all() and (neg == np.floor(neg)).all():
        # integer weights: 2U and the tied mass as exact integers, one correctly rounded division
        pi, ni = pos.astype(np.int64), neg.astype(np.int64)
        bi = np.cumsum(ni) - ni
        tied = int(np.dot(pi, ni))
        u2 = 2 * int(np.dot(pi, bi)) + tied
        den = 2 * int(P) * int(N)
        return u2 / den, max(0.0, (u2 - tied) / den), min(1.0, (u2 + tied) / den)
    below = np.cumsum(neg) - neg
    within = float(np.dot(pos, neg))
    a = (float(np.dot(pos, below)) + 0.5 * within) / (P * N)
    half = 0.5 * within / (P * N)
    return a, max(0.0, a - half), min(1.0, a + half)


def ap_bounds(pos: np.ndarray, neg: np.ndarray) -> tuple[float, float]:
    """Certified (low, high) of the average precision from per-bin weights in increasing order.

    With T_b, F_b the positive / negative weight above bin b: the high end ranks each bin's
    positives first, (1/P) Σ_b p_b (T_b + p_b) / (T_b + F_b + p_b); the low end ranks its
    negatives first and bounds the positives' precisions from below by an integral,
    (1/P) Σ_b [p_b − (F_b + n_b)·ln(1 + p_b / (T_b + F_b + n_b))] (valid for any weights; for
    unit weights within O(p_b / (T_b + F_b + n_b)²) of the exact minimum of the notes). nan if
    P = 0. O(b).
    """
    P = float(pos.sum())
    if P <= 0:
        return math.nan, math.nan
    p, n = pos[::-1], neg[::-1]  # decreasing score
    T = np.cumsum(p) - p
    F = np.cumsum(n) - n
    m = p > 0
    p, n, T, F = p[m], n[m], T[m], F[m]
    hi = float(np.sum(p * (T + p) / (T + F + p))) / P
    x = T + F + n
    fn = F + n
    with np.errstate(divide="ignore", invalid="ignore"):
        lo_terms = np.where(fn > 0, p - fn * np.log1p(p / np.where(x > 0, x, 1.0)), p)
    lo = float(np.sum(lo_terms)) / P
    return max(0.0, lo), min(1.0, hi)


def _widen(lo: float, hi: float) -> tuple[float, float]:
    """Guard the certified ends against the rounding of their own float evaluation."""
    eps = 1e-12
    return max(0.0, lo - eps * max(1.0, abs(lo))), min(1.0, hi + eps * max(1.0, abs(hi)))


class BinnedScores(State):
    """Adaptive (or fixed-edge) binned positive/negative weights per column (module docstring).

    ``max_bytes`` bounds the whole state (all columns); ``thresholds`` fixes the edges instead.
    """

    def __init__(
        self,
        task: str,
        num_classes: int | None = None,
        ignore_index: int | None = None,
        *,
        max_bytes: int | None = None,
        thresholds: Any = None,
        scores: str = "raw",
    ) -> None:
        self._split = SortedScores(task, num_classes, ignore_index)  # validation and splitting
        self.task = task
        self.num_classes = self._split.num_classes
        self.ignore_index = self._split.ignore_index
        self.n_columns = self._split.n_columns
        reserve(512.0 * self.n_columns, f"num_classes={self.num_classes}")
        if scores not in SCORE_TRANSFORMS:
            raise ValueError(f"scores: must be one of {SCORE_TRANSFORMS}, got {scores!r}")
        self.scores = "raw" if scores == "logit" else scores
        if max_bytes is None and thresholds is None:
            raise ValueError("max_bytes: a binned state needs max_bytes= or thresholds=")
        self.edges: np.ndarray | None = None
        if thresholds is not None:
            self.edges = _check_thresholds(thresholds)
            if self.scores != "raw":
                raise ValueError("scores: fixed thresholds= compare raw scores; leave scores='raw'")
        self.max_bytes: int | None = None
        cap = None
        if max_bytes is not None:
            if isinstance(max_bytes, bool) or not isinstance(max_bytes, (int, np.integer)):
                raise ValueError(f"max_bytes: must be an int, got {max_bytes!r}")
            self.max_bytes = int(max_bytes)
            cap = (self.max_bytes - COLUMN_BYTES * (self.n_columns + 1)) // (BIN_BYTES * self.n_columns)
            if cap < MIN_BINS:
                need = BIN_BYTES * self.n_columns * MIN_BINS + COLUMN_BYTES * (self.n_columns + 1)
                raise ValueError(
                    f"max_bytes: {self.max_bytes} is too small for {self.n_columns} column(s); "
                    f"need at least {need}"
                )
        if self.edges is not None:
            nb = self.edges.shape[0] + 1
            if cap is not None and nb > cap:
                raise ValueError(
                    f"thresholds: {self.edges.shape[0]} thresholds need {nb} bins per column, "
                    f"max_bytes={self.max_bytes} allows {cap}"
                )
            cap = nb
        assert cap is not None
        self.capacity = int(cap)
        self.reset()

    # -- configuration --------------------------------------------------------------------------
    def key(self) -> Hashable:
        edges = None if self.edges is None else tuple(float(e) for e in self.edges)
        return (
            "binned_scores",
            self.task,
            self.num_classes,
            self.ignore_index,
            self.max_bytes,
            edges,
            self.scores,
        )

    def reset(self) -> None:
        k = self.n_columns
        self._keys: list[np.ndarray] = [np.zeros(0, dtype=np.int64) for _ in range(k)]
        self._pos: list[np.ndarray] = [np.zeros(0) for _ in range(k)]
        self._neg: list[np.ndarray] = [np.zeros(0) for _ in range(k)]
        self._shift = np.zeros(k, dtype=np.int64)
        #: per column, None or pending bins (keys, pos, neg) at the column's shift: sorted,
        #: disjoint from the stored keys, folded in by :meth:`_settle` (see :meth:`_merge_sorted`)
        self._pend: list[tuple[np.ndarray, np.ndarray, np.ndarray] | None] = [None] * k

    # -- keys ---------------------------------------------------------------------------------------
    def to_keys(
        self, s: np.ndarray, name: str = "y_score", check: bool = True, out: np.ndarray | None = None
    ) -> np.ndarray:
        """Order-preserving int64 keys of scores (validates the declared transform's range
        unless ``check=False``; ``out``: an int64 array of the same size to write them to, for
        the adaptive transforms). float32 scores are read as they are (widened exactly)."""
        s = np.asarray(s)
        if s.dtype != np.float32:
            s = s.astype(np.float64, copy=False)
        if self.edges is not None:
            return np.searchsorted(self.edges, s, "right").astype(np.int64)
        if self.scores == "probability":
            bad = (s < 0) | (s > 1) if check else None
            if bad is not None and bad.any():
                i = int(np.argmax(bad))
                raise ValueError(
                    f"{name}: scores='probability' needs scores in [0, 1]; got {float(s[i])!r} at index {i}"
                )
            return _prob_keys(s, out)
        return _raw_keys(s, out)

    def lower_edges(self, col: int) -> np.ndarray:
        """Per bin of ``col`` (increasing), the smallest score the bin can hold: the counts at
        this threshold (score >= edge) are exact."""
        self._settle()
        k = self._keys[col]
        if self.edges is not None:
            return np.concatenate([[-np.inf], self.edges])[k]
        lo = k << self._shift[col]
        return _prob_decode(lo) if self.scores == "probability" else _raw_decode(lo)

    # -- updates --------------------------------------------------------------------------------------
    def prepare(self, y_true: Any, y_score: Any, sample_weight: Any = None) -> Any:
        if not (is_scalar(y_true) and is_scalar(y_score)):
            y_true, y_score = as_numpy(y_true, "y_true"), as_numpy(y_score, "y_score")  # lists, tensors
            if self.task == "multilabel":
                return self._prepare_multilabel(y_true, y_score, sample_weight)
            if y_true.ndim == 1:
                if self.task == "binary":
                    return self._prepare_binary(y_true, y_score, sample_weight)
                if y_score.ndim == 2:
                    return self._prepare_multiclass(y_true, y_score, sample_weight)
        return self._prepare_generic(y_true, y_score, sample_weight)

    def _prepare_generic(self, y_true: Any, y_score: Any, sample_weight: Any = None) -> Any:
        """Any batch (scalars, multilabel, other shapes): :class:`SortedScores` validates and
        splits it by column and label; the increment is a list of (column, label, keys,
        weights)."""
        parts = self._split.prepare(y_true, y_score, sample_weight)  # validates everything else
        if self.scores == "probability" and self.edges is None:
            self._check_probability(y_true, y_score)
        if parts is None:
            return None
        if type(parts) is tuple:  # one scalar sample
            _, y, score, w = parts
            parts = [(0, int(y), np.array([score]), None if w is None else np.array([w]))]
        out = []
        for col, grp, v, w in parts:
            if v.shape[0]:
                out.append((col, grp, self.to_keys(v), w))
        return out

    def _prepare_binary(self, y: np.ndarray, s: np.ndarray, sample_weight: Any) -> Any:
        """Binary batch of arrays: the validation of :class:`SortedScores` (same rules and
        messages) without splitting by label; the increment is ``("binary", keys, labels,
        weights, min key, max key)``, split (or not) at apply."""
        n = y.shape[0]
        if s.shape != (n,):
            raise ValueError(f"y_score: expected shape ({n},) like y_true, got {s.shape}")
        w = check_weights(sample_weight, n)
        y0, s0 = y, s
        y = check_binary_labels(y, "y_true", self.ignore_index)
        s = check_scores(s, "y_score")
        if n == 0:
            return None
        y, s, w = drop_ignored(y, s, w, self.ignore_index)
        if y.shape[0] == 0:
            return None
        keys = self.to_keys(s, check=False)
        kmin, kmax = int(keys.min()), int(keys.max())
        if self.scores == "probability" and self.edges is None and (kmin < 0 or kmax > 2 * _HALF_BITS):
            self._check_probability(y0, s0)  # raises, naming the first offending row
        w, keep = _unit_or_positive(w, None)
        if keep is not None:  # rows of weight 0
            keys, y, w = keys[keep], y[keep], None if w is None else w[keep]
            if keys.shape[0] == 0:
                return None
        return ("binary", keys, y.astype(bool, copy=False), w, kmin, kmax)

    def _prepare_multiclass(self, y: np.ndarray, s: np.ndarray, sample_weight: Any) -> Any:
        """Multiclass batch of arrays: the validation of :class:`SortedScores` (same rules and
        messages); the increment is :meth:`_scores_delta`'s."""
        n, c = y.shape[0], self.n_columns
        if s.shape != (n, c):
            raise ValueError(f"y_score: expected scores of shape ({n}, {c}), got {s.shape}")
        w = check_weights(sample_weight, n)
        y0, s0 = y, s
        y = check_class_labels(y, "y_true", c, self.ignore_index)
        s = check_scores(s, "y_score")
        if n == 0:
            return None
        y, s, w = drop_ignored(y, s, w, self.ignore_index)
        if y.shape[0] == 0:
            return None
        w, keep = _unit_or_positive(w, None)  # rows of weight 0: range-checked, then dropped
        return self._scores_delta(y.astype(np.intp, copy=False), s, w, keep, y0, s0)

    def _prepare_multilabel(self, y: np.ndarray, s: np.ndarray, sample_weight: Any) -> Any:
        """Multilabel batch: validated like :class:`SortedScores`; without ignored entries the
        increment is :meth:`_scores_delta`'s (labels as an (L, n) matrix) as for multiclass; a batch
        with ignored entries takes the generic split."""
        y2, s2, w = check_multilabel_batch(y, s, sample_weight, self.n_columns, "y_score")
        n = y2.shape[0]
        lab = check_binary_labels(y2, "y_true", self.ignore_index)
        sc = check_scores(s2, "y_score")
        if n == 0:
            return None
        if self.ignore_index is not None and (lab == self.ignore_index).any():
            return self._prepare_generic(y, s, sample_weight)
        w, keep = _unit_or_positive(w, None)
        return self._scores_delta(np.ascontiguousarray(lab.T, dtype=bool), sc, w, keep, y2, s2)

    def _scores_delta(
        self, labels: np.ndarray, sc: np.ndarray, w: np.ndarray | None, keep: np.ndarray | None,
        y0: np.ndarray, s0: np.ndarray,
    ) -> Any:
        """The increment of a validated (n, C) score matrix: ``("scores", scores, labels,
        weights, min key, max key per column)`` -- labels a class per row (multiclass) or a
        (C, n) boolean matrix (multilabel). No keys yet: :meth:`apply` keys the scores in
        cache-sized blocks of columns, so a batch never holds a second (n, C) array. The range
        check and the per-column key extremes come from each column's min / max score (the key
        maps are increasing). O(n·C)."""
        if sc.dtype != np.float32:
            sc = sc.astype(np.float64, copy=False)
        lo_s, hi_s = sc.min(axis=0), sc.max(axis=0)
        if self.scores == "probability" and self.edges is None and (
            float(lo_s.min()) < 0.0 or float(hi_s.max()) > 1.0
        ):
            self._check_probability(y0, s0)  # raises, naming the first offending row or entry
        kmin, kmax = self.to_keys(lo_s, check=False), self.to_keys(hi_s, check=False)
        if keep is not None:
            sc, w = sc[keep], None if w is None else w[keep]
            labels = labels[:, keep] if labels.ndim == 2 else labels[keep]
            if sc.shape[0] == 0:
                return None
        return ("scores", sc, labels, w, kmin, kmax)

    def _check_probability(self, y_true: Any, y_score: Any) -> None:
        """``scores="probability"``: every score of a row that counts is in [0, 1] (rows or
        elements whose label is ``ignore_index`` are skipped). Inputs already validated."""
        arr = as_numpy(y_score, "y_score")
        if arr.dtype.kind not in "fiub" or not arr.size:
            return
        bad = (arr < 0) | (arr > 1)
        if not bad.any():
            return
        if self.ignore_index is not None:
            y = np.asarray(as_numpy(y_true, "y_true"))
            ign = y == self.ignore_index
            if ign.ndim < bad.ndim and ign.shape == bad.shape[: ign.ndim]:
                ign = ign.reshape(ign.shape + (1,) * (bad.ndim - ign.ndim))  # whole rows
            if np.broadcast_shapes(ign.shape, bad.shape) == bad.shape:
                bad &= ~ign
            if not bad.any():
                return
        i = np.unravel_index(int(np.argmax(bad)), arr.shape)
        where = i[0] if len(i) == 1 else tuple(int(j) for j in i)
        raise ValueError(
            f"y_score: scores='probability' needs scores in [0, 1]; got {float(arr[i])!r} at index {where}"
        )

    def apply(self, delta: Any) -> None:
        if not delta:
            return
        if type(delta) is tuple:
            if delta[0] == "binary":  # ("binary", keys, labels, weights, min key, max key)
                self._apply_binary(0, *delta[1:])
                return
            _, sc, y, w, kmin, kmax = delta  # ("scores", ...): one-vs-rest per column
            n, c = sc.shape
            step = max(1, _BLOCK // max(n, 1))
            for c0 in range(0, c, step):  # key a block of columns in a reused workspace
                c1 = min(c, c0 + step)
                blk = _workspace("block", (c1 - c0) * n, np.float64).reshape(c1 - c0, n)
                np.copyto(blk, sc[:, c0:c1].T)  # float32 widened here (exact), keyed as float64
                kb = self.to_keys(
                    blk.reshape(-1), check=False, out=_workspace("block_keys", (c1 - c0) * n, np.int64)
                ).reshape(c1 - c0, n)
                for col in range(c0, c1):  # y: class per row, or a (column, row) label matrix
                    lab = y[col] if y.ndim == 2 else y == col
                    self._apply_binary(col, kb[col - c0], lab, w, int(kmin[col]), int(kmax[col]))
            return
        by_col: dict[int, list[tuple[int, np.ndarray, np.ndarray | None]]] = {}
        for col, grp, keys, w in delta:
            by_col.setdefault(col, []).append((grp, keys, w))
        for col, items in by_col.items():
            self._apply_column(col, items)

    def _dense_plan(
        self, col: int, ks: list[np.ndarray], m: int, lo: int | None = None, hi: int | None = None,
        coarse: bool = True,
    ) -> tuple[int, int, int, int] | None:
        """How to fold keys ``ks`` (at the column's shift; ``lo``/``hi`` their extremes if known)
        by ``bincount``: (lo, span, a, gap) with slot = key − lo, minus ``gap`` for keys above
        ``a`` (the largest empty stretch between stored keys, e.g. around 0 for logits), when
        the slots needed are at most _DENSE_FACTOR·(new + stored) + _DENSE_MIN; None: sort
        instead. O(m)."""
        keys = self._keys[col]
        nb = keys.shape[0]
        if lo is None or hi is None:
            lo = min(int(k.min()) for k in ks)
            hi = max(int(k.max()) for k in ks)
        if nb:
            lo, hi = min(lo, int(keys[0])), max(hi, int(keys[-1]))
        limit = _DENSE_FACTOR * (m + nb) + _DENSE_MIN
        if hi - lo < limit:
            return lo, hi - lo + 1, hi, 0
        if nb < 2 or not coarse:  # at shift 0 raw keys are too far apart to gain from a gap
            return None
        j = int(np.argmax(np.diff(keys.view(np.uint64))))  # exact: int64 gaps can exceed 2**63
        a, above = int(keys[j]), int(keys[j + 1])
        if above - a - 1 < hi - lo + 1 - limit:
            return None  # even an empty stretch would not make it dense enough
        for k in ks:
            above = _min_above(k, a, above)
        gap = above - a - 1
        span = hi - lo + 1 - gap
        if gap <= 0 or span > limit:
            return None
        return lo, span, a, gap

    @staticmethod
    def _slots(
        k: np.ndarray, plan: tuple[int, int, int, int], shift: int = 0, own: bool = False
    ) -> np.ndarray:
        """Dense slot of each key ``k >> shift`` of a plan: a new array (``own``: may reuse
        ``k``, which the caller no longer needs). Branch-free, chunked for the gap."""
        lo, _, a, gap = plan
        if shift:
            idx = np.right_shift(k, shift)
        elif own:
            idx = k
        else:
            idx = k.copy()
        idx -= np.int64(lo)
        if gap:
            _sub_above(idx, a - lo, gap)
        return idx

    def _store_dense(self, col: int, dp: np.ndarray, dn: np.ndarray, plan: tuple[int, int, int, int],
                     sh: int) -> None:
        """Set column ``col`` from per-slot weights of a plan (stored bins already added),
        coarsened to fit."""
        lo, span, a, gap = plan
        tot = np.add(dp, dn, out=_workspace("tot", span, np.float64))
        occ = np.flatnonzero(np.greater(tot, 0.0, out=_workspace("occupied", span, np.bool_)))
        p, n = dp[occ], dn[occ]
        uniq = occ
        uniq += np.int64(lo)
        if gap:
            uniq[np.searchsorted(uniq, a, "right"):] += np.int64(gap)
        self._store_fitted(col, uniq, p, n, sh)

    def _stored_slots(self, col: int, plan: tuple[int, int, int, int]) -> np.ndarray:
        """Dense slots of the stored bins of ``col`` (a workspace view)."""
        lo, _, a, gap = plan
        keys = self._keys[col]
        at = np.subtract(keys, np.int64(lo), out=_workspace("stored", keys.shape[0], np.int64))
        if gap:
            at[np.searchsorted(keys, a, "right"):] -= np.int64(gap)
        return at

    def _apply_binary(
        self, col: int, keys: np.ndarray, y: np.ndarray, w: np.ndarray | None, kmin: int, kmax: int
    ) -> None:
        """Fold the keys of one column with boolean labels: dense -- the weights of (slot,
        label) pairs summed into a zeroed workspace -- or split by label and sorted
        (:meth:`_apply_column`)."""
        sh = int(self._shift[col])
        m = keys.shape[0]
        k = np.right_shift(keys, sh, out=_workspace("slots", m, np.int64)) if sh else keys
        plan = (
            self._dense_plan(col, [k], m, kmin >> sh, kmax >> sh, sh > 0)
            if self._keys[col].shape[0] or sh
            else None
        )
        if plan is None and sh:  # keys >> sh < 2^62: sort (key, label) pairs as one int64
            k <<= 1
            k |= y
            self._merge_sorted(col, *_pair_runs(k, w), sh, lazy=True)
            return
        if self._pend[col] is not None:  # the other paths read the stored bins: fold it first
            self._settle_column(col)
            plan = self._dense_plan(col, [k], m, kmin >> sh, kmax >> sh, sh > 0)
        if plan is None:
            items: list[tuple[int, np.ndarray, np.ndarray | None]] = []
            for grp, sel in ((0, ~y), (1, y)):
                if sel.any():
                    items.append((grp, keys[sel], None if w is None else w[sel]))
            self._apply_column(col, items)
            return
        if not sh:  # the workspace gets the slots, never the caller's keys
            k = _workspace("slots", m, np.int64)
            np.copyto(k, keys)
        idx = self._slots(k, plan, own=True)
        idx <<= 1
        idx |= y
        span = plan[1]
        c = _workspace("dense", 2 * span, np.float64)
        c.fill(0.0)
        np.add.at(c, idx, 1.0 if w is None else w)  # like bincount, into a reused buffer
        c2 = c.reshape(span, 2)
        dn, dp = c2[:, 0], c2[:, 1]
        if self._keys[col].shape[0]:
            at = self._stored_slots(col, plan)
            np.add.at(dp, at, self._pos[col])
            np.add.at(dn, at, self._neg[col])
        self._store_dense(col, dp, dn, plan, sh)

    def _apply_column(self, col: int, items: list[tuple[int, np.ndarray, np.ndarray | None]]) -> None:
        """Fold new keys into one column at its current shift, then coarsen if it overflows.

        Dense path (the steady state: the stored and new keys need at most a few times as many
        slots as they hold, see :meth:`_dense_plan`): one ``bincount`` per group over the slots,
        the stored bins added in, the occupied slots read back -- O(m + slots), no sort.
        Otherwise (e.g. while exact: raw float bits are sparse) each group is sorted and
        run-length encoded and the few distinct keys are folded with the stored bins:
        O(m log m + b). Both give the same bins (integer weights: the same sums exactly)."""
        self._settle_column(col)
        sh = int(self._shift[col])
        keys = self._keys[col]
        nb = keys.shape[0]
        shifted = [(grp, k >> sh if sh else k, w) for grp, k, w in items]
        plan = self._dense_plan(
            col, [k for _, k, _ in shifted], sum(k.shape[0] for _, k, _ in shifted), coarse=sh > 0
        )
        if plan is not None:
            span = plan[1]
            dense = [np.zeros(span), np.zeros(span)]  # negative, positive weight per slot
            for grp, k, w in shifted:
                dense[grp] += np.bincount(self._slots(k, plan, own=sh > 0), weights=w, minlength=span)
            dn, dp = dense
            if nb:
                at = self._stored_slots(col, plan)
                dp[at] += self._pos[col]
                dn[at] += self._neg[col]
            self._store_dense(col, dp, dn, plan, sh)
            return
        # sorted path: run-length encode each group of the batch (O(m log m)), then fold the
        # batch's few distinct keys into the stored sorted keys by a linear merge -- never a
        # sort of the stored bins (O(b) per batch, not O(b log b))
        runs = [(grp, *_run_length(k, w)) for grp, k, w in shifted if k.shape[0]]
        if not runs:
            return
        if len(runs) == 1:
            grp, uk, sums = runs[0]
            z = np.zeros(uk.shape[0])
            up, un = (sums, z) if grp == 1 else (z, sums)
        else:
            uk = _union_sorted([r[1] for r in runs])
            up, un = np.zeros(uk.shape[0]), np.zeros(uk.shape[0])
            for grp, k, sums in runs:
                (up if grp == 1 else un)[np.searchsorted(uk, k)] += sums  # k unique: no lost updates
        self._merge_sorted(col, uk, up, un, sh)

    def _merge_sorted(
        self, col: int, uk: np.ndarray, up: np.ndarray, un: np.ndarray, sh: int, lazy: bool = False
    ) -> None:
        """Fold distinct increasing keys ``uk`` (at the column's shift ``sh``) with weights
        ``up``/``un`` into column ``col``: keys already binned add in place, the others are
        inserted at their ``searchsorted`` positions (a linear merge of two sorted arrays); the
        column is then coarsened if it exceeds the capacity. The union at shift ``sh`` -- the
        same bins and sums as folding them in any other way. O(b + u log b).

        ``lazy`` (binned batches of the sorted path, where most keys hit stored bins): new keys
        go to a small sorted *pending* set of bins instead (O(p + u log b) per batch, no copy of
        the stored bins); it is folded in (:meth:`_settle_column`, O(b + p)) when it grows past
        1/16 of the stored bins, when the column overflows (then coarsened from the union, as
        always) and before anything reads the state. Stored and pending keys are disjoint and
        each bin's weight is summed in arrival order wherever it lives, so the state and its
        sums do not depend on when the pending set is folded; stored + pending bins never exceed
        the capacity, and ``nbytes`` counts both."""
        keys, pos, neg = self._keys[col], self._pos[col], self._neg[col]
        nb = keys.shape[0]
        if lazy and nb:
            at = np.searchsorted(keys, uk)
            idx = np.minimum(at, nb - 1)
            hit = keys[idx] == uk
            if hit.all():
                pos[idx] += up  # in place (the caller holds the state's lock); idx unique
                neg[idx] += un
                return
            ih = idx[hit]
            pos[ih] += up[hit]
            neg[ih] += un[hit]
            miss = ~hit
            uk, up, un = uk[miss], up[miss], un[miss]
            pend = self._pend[col]
            if pend is not None:
                pk, pp, pn = pend
                pat = np.searchsorted(pk, uk)
                pidx = np.minimum(pat, pk.shape[0] - 1)
                phit = pk[pidx] == uk
                jh = pidx[phit]
                pp[jh] += up[phit]
                pn[jh] += un[phit]
                if not phit.all():
                    pmiss = ~phit
                    pat = pat[pmiss]
                    pend = (_insert_sorted(pk, pat, uk[pmiss]), _insert_sorted(pp, pat, up[pmiss]),
                            _insert_sorted(pn, pat, un[pmiss]))
            else:
                pend = (uk, up, un)
            self._pend[col] = pend
            np_ = pend[0].shape[0]
            if nb + np_ > self.capacity or np_ > max(_PENDING_MIN, nb >> 4):
                self._settle_column(col)
                self._store_fitted(col, self._keys[col], self._pos[col], self._neg[col], sh)
            return
        self._settle_column(col)
        keys, pos, neg = self._keys[col], self._pos[col], self._neg[col]
        nb = keys.shape[0]
        if nb:
            at = np.searchsorted(keys, uk)
            idx = np.minimum(at, nb - 1)
            hit = keys[idx] == uk
            if hit.all():  # new arrays: arrays handed out by bins() are never changed
                pos, neg = pos.copy(), neg.copy()
                pos[idx] += up  # idx unique: no lost updates
                neg[idx] += un
                self._pos[col], self._neg[col] = pos, neg
                return
            miss = ~hit
            keys, pos, neg = _insert_sorted_many((keys, pos, neg), at[miss], (uk[miss], up[miss], un[miss]))
            at_miss = at[miss]
            if not miss.all():
                ih = idx[hit]
                ih += np.searchsorted(at_miss, ih, "right")  # the stored bins' new places
                pos[ih] += up[hit]
                neg[ih] += un[hit]
        else:
            keys, pos, neg = uk, up, un
        self._store_fitted(col, keys, pos, neg, sh)

    def _store_fitted(
        self, col: int, keys: np.ndarray, pos: np.ndarray, neg: np.ndarray, shift: int
    ) -> None:
        """Store increasing unique ``keys`` (at ``shift``) with their weights as column ``col``,
        coarsened by the fewest bits that bring it within the capacity. O(b log 64)."""
        if keys.shape[0] > self.capacity:
            d = _bits_to_fit(keys, self.capacity, 63 - shift)
            shift += d
            keys, pos, neg = _coarsen(keys, pos, neg, d)
        self._keys[col], self._pos[col], self._neg[col] = keys, pos, neg
        self._shift[col] = shift

    def _settle_column(self, col: int) -> None:
        """Fold column ``col``'s pending bins into its stored bins (disjoint keys: an insertion,
        no sums). No coarsening: the union fits (checked when the pending set grows). O(b + p)."""
        pend = self._pend[col]
        if pend is None:
            return
        at = np.searchsorted(self._keys[col], pend[0])
        self._keys[col], self._pos[col], self._neg[col] = _insert_sorted_many(
            (self._keys[col], self._pos[col], self._neg[col]), at, pend
        )
        self._pend[col] = None

    def _settle(self) -> None:
        """Fold every column's pending bins in (before any read of the bins)."""
        for col in range(self.n_columns):
            if self._pend[col] is not None:
                self._settle_column(col)

    def _fold(self, col: int, keys: np.ndarray, pos: np.ndarray, neg: np.ndarray, shift: int) -> None:
        """Set column ``col`` to the bins of (keys at ``shift``, weights), coarsened to fit."""
        uniq, inv = np.unique(keys, return_inverse=True)
        p = np.bincount(inv, weights=pos, minlength=uniq.shape[0])
        n = np.bincount(inv, weights=neg, minlength=uniq.shape[0])
        self._store_fitted(col, uniq, p, n, shift)

    def merge(self, other: State) -> None:
        assert isinstance(other, BinnedScores)
        self._settle()
        other._settle()
        for col in range(self.n_columns):
            sh = max(int(self._shift[col]), int(other._shift[col]))
            ka = self._keys[col] >> (sh - int(self._shift[col]))
            kb = other._keys[col] >> (sh - int(other._shift[col]))
            self._fold(
                col,
                np.concatenate([ka, kb]),
                np.concatenate([self._pos[col], other._pos[col]]),
                np.concatenate([self._neg[col], other._neg[col]]),
                sh,
            )

    # -- removal and decay (used by Window / Decayed) -------------------------------------------------
    def subtract(self, other: State) -> None:
        """Remove ``other``'s samples, which must be a sub-multiset of this state's (same
        :meth:`key`; e.g. the expired rows of a window folded into a fresh state).

        Per column, ``other``'s bins are coarsened to this state's shift (they are never coarser
        when ``other`` holds a subset of what this state absorbed) and their weights subtracted
        from the matching bins; bins left with no weight are dropped. This state keeps its
        current resolution: coarsening is never undone, so after a subtraction the state depends
        on the history of the stream, not only on the multiset of remaining samples (it may be
        coarser than a fresh state built from them; merges of such states are still exact
        unions, and every bin is still an interval of scores, so the certificates still hold).
        Integer weights subtract exactly; float residues within 1e-12 of the bin's weight are
        set to 0.

        Raises ``ValueError`` (leaving this state unchanged) when ``other`` is not contained:
        another configuration, a coarser column, a bin this state does not have, or a weight
        that would go negative by more than float rounding (1e-9 relative). O(b + b_other).
        """
        if not isinstance(other, BinnedScores) or other.key() != self.key():
            raise ValueError("subtract: other must be a binned state of the same configuration")
        self._settle()
        other._settle()
        new: list[tuple[np.ndarray, np.ndarray, np.ndarray] | None] = []
        for col in range(self.n_columns):
            ko = other._keys[col]
            if ko.shape[0] == 0:
                new.append(None)
                continue
            ss, so = int(self._shift[col]), int(other._shift[col])
            if so > ss:
                raise ValueError(
                    f"subtract: column {col} of other is coarser (shift {so}) than this state "
                    f"(shift {ss}); it cannot hold a subset of these samples"
                )
            po, no = other._pos[col], other._neg[col]
            if so < ss:
                ko, po, no = _coarsen(ko, po, no, ss - so)
            ks = self._keys[col]
            idx = np.searchsorted(ks, ko)
            np.minimum(idx, max(ks.shape[0] - 1, 0), out=idx)
            hit = ks[idx] == ko if ks.shape[0] else np.zeros(ko.shape[0], dtype=bool)
            if not hit.all():
                j = int(np.argmin(hit))
                raise ValueError(
                    f"subtract: other holds samples in a bin this state does not have "
                    f"(column {col}, bin key {int(ko[j])} at shift {ss})"
                )
            p, n = self._pos[col].copy(), self._neg[col].copy()
            for name, mine, theirs in (("positive", p, po), ("negative", n, no)):
                before = mine[idx]
                after = before - theirs
                if (after < -_SUB_RTOL * before).any():
                    j = int(np.argmax(after < -_SUB_RTOL * before))
                    raise ValueError(
                        f"subtract: other holds more {name} weight than this state in column "
                        f"{col} (bin key {int(ko[j])}: {float(theirs[j])!r} > {float(before[j])!r})"
                    )
                after[after <= _SNAP_RTOL * before] = 0.0
                mine[idx] = after
            keep = (p + n) > 0
            new.append((ks[keep], p[keep], n[keep]))
        for col, got in enumerate(new):
            if got is not None:
                self._keys[col], self._pos[col], self._neg[col] = got

    def scale(self, factor: float) -> None:
        """Multiply the weight of every sample seen so far by ``factor`` (0 <= factor <= 1;
        exponential decay). Bins are unchanged (weights that fall below the smallest normal float
        are flushed to 0, as ``load`` refuses subnormal weights, and bins left empty are dropped;
        ``factor=0`` empties the state but keeps its shifts), so the certificates still hold for
        the rescaled weights. Counts are float64 throughout; after a scale the state depends on
        the history (weights are no longer integers, merges are exact up to rounding). O(b).
        """
        f = float(factor)
        if not 0.0 <= f <= 1.0:
            raise ValueError(f"factor: must be in [0, 1], got {factor!r}")
        if f == 1.0:
            return
        self._settle()
        for col in range(self.n_columns):
            p, n = self._pos[col] * f, self._neg[col] * f
            p[p < _TINY], n[n < _TINY] = 0.0, 0.0
            keep = (p + n) > 0
            if keep.all():
                self._pos[col], self._neg[col] = p, n
            else:
                self._keys[col], self._pos[col], self._neg[col] = self._keys[col][keep], p[keep], n[keep]

    # -- reads ------------------------------------------------------------------------------------------
    def bins(self, col: int) -> tuple[np.ndarray, np.ndarray]:
        """(positive, negative) weights per bin of ``col``, increasing score."""
        self._settle()
        return self._pos[col], self._neg[col]

    def column_exact(self, col: int) -> bool:
        """True when every bin of ``col`` is a single distinct score (shift 0, adaptive keys)."""
        return self.edges is None and int(self._shift[col]) == 0

    @property
    def is_exact(self) -> bool:
        return all(self.column_exact(c) for c in range(self.n_columns))

    def counts(self, col: int) -> ThresholdCounts:
        """Exact counts at every bin's lower edge (decreasing), for the curve views."""
        self._settle()
        p, n = self._pos[col], self._neg[col]
        thr = self.lower_edges(col)[::-1]
        tps, fps = np.cumsum(p[::-1]), np.cumsum(n[::-1])
        P = float(tps[-1]) if tps.shape[0] else 0.0
        N = float(fps[-1]) if fps.shape[0] else 0.0
        return ThresholdCounts(thr, tps, fps, P, N)

    def pooled(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
        """All columns' bins aligned to the largest shift and added (micro averaging):
        (keys, pos, neg, shift), increasing."""
        self._settle()
        sh = int(self._shift.max()) if self.n_columns else 0
        keys = np.concatenate([self._keys[c] >> (sh - int(self._shift[c])) for c in range(self.n_columns)])
        uniq, inv = np.unique(keys, return_inverse=True)
        p = np.bincount(inv, weights=np.concatenate(self._pos), minlength=uniq.shape[0])
        n = np.bincount(inv, weights=np.concatenate(self._neg), minlength=uniq.shape[0])
        return uniq, p, n, sh

    def pooled_counts(self) -> tuple[ThresholdCounts, np.ndarray, np.ndarray, bool]:
        uniq, p, n, sh = self.pooled()
        if self.edges is not None:
            thr = np.concatenate([[-np.inf], self.edges])[uniq]
        else:
            lo = uniq << sh
            thr = _prob_decode(lo) if self.scores == "probability" else _raw_decode(lo)
        tps, fps = np.cumsum(p[::-1]), np.cumsum(n[::-1])
        P = float(tps[-1]) if tps.shape[0] else 0.0
        N = float(fps[-1]) if fps.shape[0] else 0.0
        exact = self.edges is None and sh == 0
        return ThresholdCounts(thr[::-1], tps, fps, P, N), p, n, exact

    # -- persistence ------------------------------------------------------------------------------------
    def arrays(self) -> dict[str, Any]:
        self._settle()
        offsets = np.zeros(self.n_columns + 1, dtype=np.int64)
        np.cumsum([k.shape[0] for k in self._keys], out=offsets[1:])
        return {
            "bin_keys": np.concatenate(self._keys).astype(np.int64),
            "bin_pos": np.concatenate(self._pos).astype(np.float64),
            "bin_neg": np.concatenate(self._neg).astype(np.float64),
            "bin_offsets": offsets,
            "bin_shift": self._shift.copy(),
        }

    def load_arrays(self, arrays: Mapping[str, Any]) -> None:
        names = {"bin_keys", "bin_pos", "bin_neg", "bin_offsets", "bin_shift"}
        extra = set(arrays) - names
        if extra:
            raise ValueError(f"state: unexpected arrays {sorted(extra)}")
        for name in sorted(names):
            if name not in arrays:
                raise ValueError(f"state: missing array {name!r}")
        keys = np.asarray(arrays["bin_keys"])
        pos = np.asarray(arrays["bin_pos"])
        neg = np.asarray(arrays["bin_neg"])
        offsets = np.asarray(arrays["bin_offsets"])
        shift = np.asarray(arrays["bin_shift"])
        k = self.n_columns
        if keys.ndim != 1 or keys.dtype.kind not in "iu" or keys.dtype.itemsize > 8:
            raise ValueError(f"state: array 'bin_keys' must be 1-D integers, got {keys.dtype} {keys.shape}")
        if keys.dtype == np.uint64 and keys.size and int(keys.max()) > 2**63 - 1:
            raise ValueError("state: array 'bin_keys' holds values outside int64")
        keys = keys.astype(np.int64)
        for name, arr in (("bin_pos", pos), ("bin_neg", neg)):
            if arr.shape != keys.shape or arr.dtype.kind not in "biuf":
                raise ValueError(
                    f"state: array {name!r} must be numbers of shape {keys.shape}, "
                    f"got {arr.dtype} {arr.shape}"
                )
        pos, neg = pos.astype(np.float64), neg.astype(np.float64)
        for name, arr in (("bin_pos", pos), ("bin_neg", neg)):
            if arr.size and not (np.isfinite(arr).all() and (arr >= 0).all()):
                raise ValueError(f"state: array {name!r} must be finite and >= 0")
            check_total(arr, name, normal=True)  # (subnormal ratios overflow in the bounds)
        if keys.size and ((pos + neg) <= 0).any():
            raise ValueError(f"state: empty bin at index {int(np.argmax((pos + neg) <= 0))}")
        offsets = check_offsets(offsets, "bin_offsets", k, keys.shape[0], "bin_keys")
        if shift.shape != (k,) or shift.dtype.kind not in "iu":
            raise ValueError(
                f"state: array 'bin_shift' must be {k} integers, got {shift.dtype} {shift.shape}"
            )
        shift = shift.astype(np.int64)
        if (shift < 0).any() or (shift > 63).any() or (self.edges is not None and (shift != 0).any()):
            raise ValueError("state: array 'bin_shift' out of range")
        new_k, new_p, new_n = [], [], []
        for c in range(k):
            lo, hi = int(offsets[c]), int(offsets[c + 1])
            kc = keys[lo:hi]
            if hi - lo > self.capacity:
                raise ValueError(
                    f"state: column {c} has {hi - lo} bins, more than the capacity {self.capacity}"
                )
            if kc.shape[0] > 1 and (kc[1:] <= kc[:-1]).any():  # (np.diff overflows int64)
                raise ValueError(f"state: array 'bin_keys' is not strictly increasing in column {c}")
            if kc.shape[0]:
                if self.edges is not None:
                    if kc[0] < 0 or kc[-1] > self.edges.shape[0]:
                        raise ValueError(f"state: array 'bin_keys' out of range in column {c}")
                else:
                    top = 2 * _HALF_BITS if self.scores == "probability" else _POS_INF_KEY
                    bottom = 0 if self.scores == "probability" else _NEG_INF_KEY
                    s = int(shift[c])
                    if int(kc[0]) < (bottom >> s) or int(kc[-1]) > (top >> s):
                        raise ValueError(f"state: array 'bin_keys' out of range in column {c}")
            new_k.append(kc.copy())
            new_p.append(pos[lo:hi].copy())
            new_n.append(neg[lo:hi].copy())
        self._keys, self._pos, self._neg, self._shift = new_k, new_p, new_n, shift.copy()
        self._pend = [None] * k

    @property
    def nbytes(self) -> int:
        return int(
            sum(
                a.nbytes + b.nbytes + c.nbytes
                for a, b, c in zip(self._keys, self._pos, self._neg, strict=True)
            )
            + sum(3 * p[0].nbytes for p in self._pend if p is not None)
            + COLUMN_BYTES * (self.n_columns + 1)
        )

    def copy(self) -> BinnedScores:
        self._settle()
        out = BinnedScores.__new__(BinnedScores)
        out.__dict__.update(self.__dict__)
        out._keys = [a.copy() for a in self._keys]
        out._pos = [a.copy() for a in self._pos]
        out._neg = [a.copy() for a in self._neg]
        out._shift = self._shift.copy()
        out._pend = [None] * self.n_columns
        return out


def _pair_runs(c: np.ndarray, w: np.ndarray | None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
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


def _union_sorted(parts: list[np.ndarray]) -> np.ndarray:
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


#: _insert_sorted: up to this many insertions copy the segments between them one by one.
_FEW_INSERTS = 256
#: BinnedScores: a column's pending bins are folded in beyond max(this, stored bins / 16).
_PENDING_MIN = 4096


def _insert_sorted(a: np.ndarray, at: np.ndarray, v: np.ndarray) -> np.ndarray:
    """``np.insert(a, at, v)`` for increasing ``at`` (values inserted before ``a[at]``, in
    order): a new array. Few insertions copy the runs of ``a`` between them (memcpy speed);
    many go through ``np.insert``. O(len(a) + len(at))."""
    u = at.shape[0]
    if u > _FEW_INSERTS:
        return np.insert(a, at, v)
    out = np.empty(a.shape[0] + u, dtype=a.dtype)
    prev = 0
    for j, i in enumerate(at.tolist()):
        out[prev + j : i + j] = a[prev:i]
        out[i + j] = v[j]
        prev = i
    out[prev + u :] = a[prev:]
    return out


def _insert_sorted_many(
    arrays: tuple[np.ndarray, ...], at: np.ndarray, values: tuple[np.ndarray, ...]
) -> tuple[np.ndarray, ...]:
    """:func:`_insert_sorted` of each ``values[i]`` into ``arrays[i]`` at the same positions
    ``at``: many insertions compute the destinations once (old element i goes to i + the
    number of insertions at or before it) and scatter each array. O(len(a) + len(at))."""
    u = at.shape[0]
    if u <= _FEW_INSERTS:
        return tuple(_insert_sorted(a, at, v) for a, v in zip(arrays, values, strict=True))
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


def _run_length(
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


_WORK = threading.local()
#: Scratch memory one thread keeps between updates, all names together (larger temporaries
#: are allocated per batch and freed).
_WORK_MAX_BYTES = 16 << 20


def _workspace(name: str, n: int, dtype: Any) -> np.ndarray:
    """A reusable scratch array of ``n`` elements (contents undefined), one per name and
    thread: the fold's temporaries cost page faults when freshly allocated on every batch.
    Per thread, so concurrent updates of different states never share one."""
    kept: dict[str, np.ndarray] | None = getattr(_WORK, "arrays", None)
    if kept is None:
        kept = _WORK.arrays = {}
    buf = kept.get(name)
    if buf is None or buf.shape[0] < n or buf.dtype != dtype:
        old = kept.pop(name, None)
        buf = np.empty(max(n, 1024), dtype=dtype)
        held = sum(a.nbytes for a in kept.values())
        if held + buf.nbytes <= _WORK_MAX_BYTES:
            kept[name] = buf
        elif old is not None and old.dtype == dtype:
            kept[name] = old  # keep the smaller one for the usual batch size
    return buf[:n]


def _min_above(k: np.ndarray, a: int, init: int) -> int:
    """min(init, smallest element of ``k`` greater than ``a``), in cache-sized chunks: the
    minimum of ``k − (a + 1)`` read as unsigned (elements <= a wrap to >= 2^63). The caller
    guarantees |k|, |a| < 2^62 (keys at shift >= 1), so the difference cannot overflow. O(len(k))."""
    out = init
    b = np.int64(a + 1)
    t = np.empty(min(k.shape[0], _CHUNK), dtype=np.int64)
    for i in range(0, k.shape[0], _CHUNK):
        c = k[i : i + _CHUNK]
        tt = t[: c.shape[0]]
        np.subtract(c, b, out=tt)
        m = int(tt.view(np.uint64).min())
        if m < 2**63:
            out = min(out, a + 1 + m)
    return out


def _sub_above(idx: np.ndarray, a: int, gap: int) -> None:
    """In place: ``idx[idx > a] -= gap``, branch-free in chunks. O(len(idx))."""
    t = np.empty(min(idx.shape[0], _CHUNK), dtype=np.int64)
    ia, g = np.int64(a), np.int64(gap)
    for i in range(0, idx.shape[0], _CHUNK):
        c = idx[i : i + _CHUNK]
        tt = t[: c.shape[0]]
        np.subtract(ia, c, out=tt)  # negative where c > a
        tt >>= 63  # -1 where c > a
        tt &= g
        c -= tt


def _distinct_after(keys: np.ndarray, d: int) -> int:
    k = keys >> d
    return 1 + int(np.count_nonzero(k[1:] != k[:-1]))


def _bits_to_fit(keys: np.ndarray, capacity: int, most: int) -> int:
    """Smallest d with at most ``capacity`` distinct ``keys >> d`` (keys increasing, unique):
    a binary search, the count being non-increasing in d. O(b log 64)."""
    lo, hi = 1, most  # total shift 63 leaves at most two keys (-1 and 0) <= MIN_BINS
    while lo < hi:
        mid = (lo + hi) // 2
        if _distinct_after(keys, mid) <= capacity:
            hi = mid
        else:
            lo = mid + 1
    return lo


def _coarsen(
    keys: np.ndarray, p: np.ndarray, n: np.ndarray, d: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Raise the shift by ``d``: merge bins whose keys agree above the lowest d bits. O(b)."""
    k = keys >> d
    start = np.empty(k.shape[0], dtype=bool)
    start[0] = True
    np.not_equal(k[1:], k[:-1], out=start[1:])
    idx = np.flatnonzero(start)
    return k[idx], np.add.reduceat(p, idx), np.add.reduceat(n, idx)


def _check_thresholds(thresholds: Any) -> np.ndarray:
    if isinstance(thresholds, bool):
        raise ValueError(f"thresholds: must be an int >= 2 or an array of numbers, got {thresholds!r}")
    if isinstance(thresholds, (int, np.integer)):
        if thresholds < 2:
            raise ValueError(f"thresholds: an int must be >= 2, got {thresholds!r}")
        reserve(48.0 * int(thresholds), f"thresholds={int(thresholds)}")
        return np.linspace(0.0, 1.0, int(thresholds))
    arr = float_array_param(thresholds, "thresholds", "an int >= 2 or a non-empty 1-D array of numbers")
    if arr.ndim != 1 or arr.shape[0] == 0:
        raise ValueError("thresholds: must be an int >= 2 or a non-empty 1-D array of numbers")
    if np.isnan(arr).any():
        raise ValueError(f"thresholds: must not hold NaN (index {int(np.argmax(np.isnan(arr)))})")
    return np.unique(arr + 0.0)
