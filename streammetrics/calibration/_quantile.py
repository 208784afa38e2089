"""Quantile bins: the exact probabilities, kept in a sorted score buffer.

``QuantileProbabilities(mode, num_classes, from_logits)`` validates probabilities as every
calibration metric does (:func:`~streammetrics._probability_inputs.prepare_batch`) and keeps them
in an inner :class:`~streammetrics._sorted_buffer.SortedScores`:

* ``mode="binary"``: the binary buffer of (label, P(1));
* ``mode="top"`` (multiclass top-label): a binary buffer of ([argmax == y], max_k p_k);
* ``mode="ovr"`` (multiclass one-vs-rest): the multiclass buffer of (y, p), one column per class.

Bin edges are the quantiles of the values of a column at ``linspace(0, 1, n_bins + 1)`` --
unweighted, exactly ``numpy.percentile`` as scikit-learn's ``calibration_curve`` places them;
weighted, the same linear rule on the weights' cumulative sum (:func:`weighted_quantiles`, which
equals ``numpy.percentile`` of the samples repeated by integer weights). Reading a column costs
O(n log n); memory one float64 per sample and column (+16 bytes with non-unit weights).

Quantile calibration uses it only where no ranking buffer holds the same data: top-label
confidences, multiclass logits (their softmax needs the whole row) and bounded bins
(``max_bytes``); binary / one-vs-rest probabilities and binary logits live in the ranking
metrics' buffers (:func:`streammetrics.calibration.binned._quantile_state`). Windows and decay
rebuild it from their rows (it neither subtracts nor rescales).
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from typing import Any

import numpy as np

from .._bins import BinnedScores
from .._curves import ThresholdCounts
from .._params import Param, check_param
from .._probability_inputs import prepare_batch
from .._sorted_buffer import SortedScores
from .._state import State

__all__ = [
    "QuantileProbabilities",
    "check_ovr_classes",
    "quantile_bin_sums",
    "quantile_positions",
    "sorted_column",
    "weighted_quantiles",
]

MODES = ("binary", "top", "ovr")
_MODE = Param("choice", f"must be one of {MODES}", choices=MODES)
#: Largest number of classes of a one-vs-rest quantile state (two buffers per class).
MAX_OVR_CLASSES = 1 << 16


def quantile_positions(total: float, q: np.ndarray) -> np.ndarray:
    """0-based positions (ranks with a fraction) of the quantiles ``q`` among ``total`` samples,
    rounded exactly as ``numpy.percentile(..., q * 100)`` rounds them ("linear": (total - 1) times
    q * 100 / 100; so 2/3 of 10 samples is 5.999..., not 6), never below 0. O(T)."""
    return np.maximum((total - 1.0) * ((q * 100.0) / 100.0), 0.0)


def weighted_quantiles(v: np.ndarray, w: np.ndarray | None, q: np.ndarray) -> np.ndarray:
    """Quantiles ``q`` of sorted values ``v`` with weights ``w`` (None: ``numpy.percentile``).

    Weighted: with cumulative weights cw and N = sum w, position h (:func:`quantile_positions`);
    the k-th value (0-based) of the implicit repeated array is v[i] for the first i with
    cw[i] > k; the quantile interpolates linearly between the values a, b at floor(h) and
    floor(h) + 1 as numpy does (t = h - floor(h): a + (b - a) t, or b - (b - a)(1 - t) when
    t >= 1/2), so that integer weights give bit for bit ``numpy.percentile`` of the repeated
    values. O(T log n).
    """
    if w is None:
        return np.asarray(np.percentile(v, q * 100.0), dtype=np.float64)
    cw = np.cumsum(w)
    h = quantile_positions(float(cw[-1]), q)
    lo = np.floor(h)
    last = v.shape[0] - 1
    a = v[np.minimum(np.searchsorted(cw, lo, side="right"), last)]
    b = v[np.minimum(np.searchsorted(cw, lo + 1.0, side="right"), last)]
    t = h - lo
    diff = b - a
    return np.asarray(np.where(t >= 0.5, b - diff * (1.0 - t), a + diff * t), dtype=np.float64)


def check_ovr_classes(mode: str, num_classes: int | None) -> None:
    """``ValueError`` naming ``num_classes`` when a one-vs-rest quantile state would exceed
    :data:`MAX_OVR_CLASSES` columns."""
    if mode == "ovr" and int(num_classes or 0) > MAX_OVR_CLASSES:
        raise ValueError(
            f"num_classes: at most {MAX_OVR_CLASSES} for one-vs-rest quantile bins "
            f"(one sorted buffer per class), got {num_classes!r}"
        )


class QuantileProbabilities(State):
    """Validated probabilities in an inner sorted buffer (see the module docstring)."""

    def __init__(
        self, mode: str, num_classes: int | None, from_logits: bool, max_bytes: int | None = None
    ) -> None:
        mode = check_param(mode, "mode", _MODE)
        check_ovr_classes(mode, num_classes)
        self.mode = mode
        self.num_classes = num_classes
        self.from_logits = bool(from_logits)
        task, classes = ("multiclass", num_classes) if mode == "ovr" else ("binary", None)
        self.max_bytes = None if max_bytes is None else max_bytes
        self.inner: SortedScores | BinnedScores
        if max_bytes is None:
            self.inner = SortedScores(task, classes)
        else:  # bounded: bins of probabilities (certified readouts, see _quantile_bounds)
            self.inner = BinnedScores(task, classes, None, max_bytes=max_bytes, scores="probability")

    def key(self) -> Hashable:
        return ("quantile", self.mode, self.num_classes, self.from_logits, self.max_bytes)

    @property
    def bounded(self) -> bool:
        """True for the bounded bins (``max_bytes``)."""
        return isinstance(self.inner, BinnedScores)

    def weight(self) -> float:
        """Total weight seen (of column 0: every sample is in every column). O(bins)."""
        if isinstance(self.inner, SortedScores):
            return float(self.inner.totals().sum())
        c = self.inner.counts(0)
        return float(c.total_pos + c.total_neg)

    def counts(self, k: int) -> ThresholdCounts:
        """Column k's counts at its distinct values (exact) or bin edges (bounded)."""
        return self.inner.counts(k)

    def prepare(self, y_true: Any, y_pred: Any, sample_weight: Any = None) -> Any:
        b = prepare_batch(y_true, y_pred, sample_weight, self.num_classes, self.from_logits)
        if b is None:
            return None
        if self.mode == "top":
            correct = (b.p.argmax(axis=1) == b.y).astype(np.int8)
            return self.inner.prepare(correct, b.p.max(axis=1), b.w)
        return self.inner.prepare(b.y, b.p, b.w)

    def apply(self, delta: Any) -> None:
        if delta is not None:
            self.inner.apply(delta)

    def arrays(self) -> dict[str, Any]:
        return self.inner.arrays()

    def load_arrays(self, arrays: Mapping[str, Any]) -> None:
        """The inner buffer's validation, and every value must be a probability in [0, 1]."""
        values = np.asarray(arrays.get("values", np.zeros(0)))
        if values.dtype.kind == "f" and values.size and not (
            (values >= 0).all() and (values <= 1).all()
        ):
            raise ValueError("state: array 'values' holds a probability outside [0, 1]")
        self.inner.load_arrays(arrays)

    def merge(self, other: State) -> None:
        assert isinstance(other, QuantileProbabilities)
        self.inner.merge(other.inner)

    def reset(self) -> None:
        self.inner.reset()

    @property
    def nbytes(self) -> int:
        return self.inner.nbytes

    def column(self, k: int) -> tuple[np.ndarray, np.ndarray | None, np.ndarray]:
        """Column k's values sorted ascending, their weights (None: all 1) and outcomes."""
        assert isinstance(self.inner, SortedScores), "column reads the exact buffer"
        return sorted_column(self.inner, k)

    def bin_sums(self, k: int, n_bins: int, side: str) -> np.ndarray:
        """(n_bins, 3) sums of (w, w p, w o) of column k over its quantile bins (see
        :func:`quantile_bin_sums`). O(n log n)."""
        v, w, o = self.column(k)
        return quantile_bin_sums(v, w, o, n_bins, side)


def sorted_column(buffer: SortedScores, k: int) -> tuple[np.ndarray, np.ndarray | None, np.ndarray]:
    """Column k of an exact buffer: its values sorted ascending, their weights (None: all 1)
    and outcomes (1 for the column's positives). O(n log n)."""
    pv, pw, nv, nw = buffer.column(k)
    v = np.concatenate([nv, pv]).astype(np.float64)
    o = np.concatenate([np.zeros(nv.shape[0]), np.ones(pv.shape[0])])
    order = np.argsort(v, kind="stable")
    w = None
    if pw is not None or nw is not None:
        w = np.concatenate([np.ones(nv.shape[0]) if nw is None else nw,
                            np.ones(pv.shape[0]) if pw is None else pw])[order]
    return v[order], w, o[order]


def quantile_bin_sums(
    v: np.ndarray, w: np.ndarray | None, o: np.ndarray, n_bins: int, side: str
) -> np.ndarray:
    """(n_bins, 3) sums of (w, w p, w o) of sorted values ``v`` (weights ``w``, None: all 1;
    outcomes ``o``) over their quantile bins: ``side="left"`` as ``calibration_curve``
    (``searchsorted(edges[1:-1], p)``), ``"right"`` as ``numpy.histogram`` on the edges (last
    bin closed). Zeros when empty. O(n log n)."""
    if v.shape[0] == 0:
        return np.zeros((n_bins, 3))
    edges = weighted_quantiles(v, w, np.linspace(0.0, 1.0, n_bins + 1))
    if side == "left":
        ids = np.searchsorted(edges[1:-1], v, side="left")
    else:
        ids = np.clip(np.searchsorted(edges, v, side="right") - 1, 0, n_bins - 1)
    ww = np.ones(v.shape[0]) if w is None else w
    return np.stack([np.bincount(ids, weights=ww, minlength=n_bins),
                     np.bincount(ids, weights=ww * v, minlength=n_bins),
                     np.bincount(ids, weights=ww * o, minlength=n_bins)], axis=-1)
