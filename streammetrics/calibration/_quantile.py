"""Quantile bins: the probabilities, kept in a score state (exact or bounded).

``QuantileProbabilities(mode, num_classes, from_logits, max_bytes, ignore_index)`` validates
probabilities as every calibration metric does
(:func:`~streammetrics._scores.probability_inputs.prepare_batch`, which leaves out the rows
labelled ``ignore_index``) and keeps
them in an inner score state (:class:`~streammetrics._scores.protocol.ScoreState`: the exact sorted
buffer, or bounded bins with ``max_bytes``):

* ``mode="binary"``: the binary buffer of (label, P(1));
* ``mode="top"`` (multiclass top-label): a binary buffer of ([argmax == y], max_k p_k);
* ``mode="ovr"`` (multiclass one-vs-rest): the multiclass buffer of (y, p), one column per class.

Bin edges are the quantiles of the values of a column at ``linspace(0, 1, n_bins + 1)`` --
unweighted, exactly ``numpy.percentile`` as scikit-learn's ``calibration_curve`` places them;
weighted, the same linear rule on the weights' cumulative sum (:func:`weighted_quantiles`, which
equals ``numpy.percentile`` of the samples repeated by integer weights). The readouts read only
the protocol's per-column threshold counts (:meth:`QuantileProbabilities.counts`): every distinct
value with its weight and outcome-1 weight, which is all a quantile bin needs. Reading a column
costs O(n) (a merge of the sorted runs) exact, O(bins) bounded; memory one float64 per sample and
column (+16 bytes with non-unit weights) exact.

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

from streammetrics._core.params import IGNORE_INDEX, Param, check_param
from streammetrics._core.state import State
from streammetrics._scores.binned.bins import BinnedScores
from streammetrics._scores.exact.buffer import SortedScores
from streammetrics._scores.probability_inputs import prepare_batch
from streammetrics._scores.protocol import ScoreState
from streammetrics._scores.thresholds import ThresholdCounts

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
    """Validated probabilities in an inner score state (see the module docstring)."""

    def __init__(
        self, mode: str, num_classes: int | None, from_logits: bool, max_bytes: int | None = None,
        ignore_index: int | None = None,
    ) -> None:
        mode = check_param(mode, "mode", _MODE)
        check_ovr_classes(mode, num_classes)
        self.mode = mode
        self.num_classes = num_classes
        self.from_logits = bool(from_logits)
        self.ignore_index = check_param(ignore_index, "ignore_index", IGNORE_INDEX)
        task, classes = ("multiclass", num_classes) if mode == "ovr" else ("binary", None)
        self.max_bytes = None if max_bytes is None else max_bytes
        self.inner: ScoreState
        if max_bytes is None:
            self.inner = SortedScores(task, classes)
        else:  # bounded: bins of probabilities (certified readouts, see _quantile_bounds)
            self.inner = BinnedScores(task, classes, None, max_bytes=max_bytes, scores="probability")
        self.n_columns = self.inner.n_columns

    def key(self) -> Hashable:
        base = ("quantile", self.mode, self.num_classes, self.from_logits, self.max_bytes)
        return base if self.ignore_index is None else (*base, ("ignore_index", self.ignore_index))

    @property
    def is_exact(self) -> bool:
        """True when every column's counts are exact at every distinct value (the inner
        state's :attr:`~streammetrics._scores.protocol.ScoreState.is_exact`)."""
        return bool(self.inner.is_exact)

    def column_exact(self, k: int) -> bool:
        """True when column k's counts are exact at every distinct value."""
        return bool(self.inner.column_exact(k))

    def sorted_values(self, k: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Column k's ascending (values, weights, outcome-1 weights); see
        :meth:`~streammetrics._scores.protocol.ScoreState.sorted_values`."""
        return self.inner.sorted_values(k)

    def counts(self, k: int) -> ThresholdCounts:
        """Column k's counts at its distinct values (exact) or bin edges (bounded); see
        :meth:`~streammetrics._scores.protocol.ScoreState.counts`."""
        return self.inner.counts(k)

    def prepare(self, y_true: Any, y_pred: Any, sample_weight: Any = None) -> Any:
        b = prepare_batch(y_true, y_pred, sample_weight, self.num_classes, self.from_logits,
                          losses=False, ignore_index=self.ignore_index)
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


def quantile_bin_sums(v: np.ndarray, m: np.ndarray, p: np.ndarray, n_bins: int, side: str) -> np.ndarray:
    """(n_bins, 3) sums of (w, w v, w o) over the quantile bins of values ``v`` (ascending)
    carrying weight ``m`` (> 0) of which ``p`` has outcome 1: ``side="left"`` as
    ``calibration_curve`` (``searchsorted(edges[1:-1], v)``: a value on an inner edge in the
    lower bin), ``"right"`` as ``numpy.histogram`` on the edges (last bin closed). ``v`` sorted
    makes every bin a contiguous run: its sums are one ``add.reduceat`` per column. Zeros when
    empty. O(n + n_bins log n)."""
    out = np.zeros((n_bins, 3))
    if v.shape[0] == 0:
        return out
    edges = weighted_quantiles(v, m, np.linspace(0.0, 1.0, n_bins + 1))
    # bin b starts at the first value with b inner edges below it ("left") / at or below it
    starts = np.r_[0, np.searchsorted(v, edges[1:-1], side="right" if side == "left" else "left")]
    full = np.diff(np.r_[starts, v.shape[0]]) > 0
    for j, x in enumerate((m, m * v, p)):
        out[full, j] = np.add.reduceat(x, starts[full])
    return out
