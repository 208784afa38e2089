"""Business curves over the shared score state: KS statistic, cumulative gains and lift.

All three hold the score state that ``AUROC()``, ``AveragePrecision()``, ``ROCCurve()`` and
``PRCurve()`` hold -- the exact sorted buffer, or with ``max_bytes=`` the bounded bins -- so in a
:class:`~streammetrics.MetricSet` they share one state (one update pass) with ranking metrics of
the same ``num_classes`` / ``max_bytes``. They read the counts at every distinct threshold t
(decreasing; ``score >= t`` selects): TP(t), FP(t), with P, N the total positive and negative
weight.

* ``KSStatistic``: max over thresholds of |TPR(t) - FPR(t)|, which is scipy's ``ks_2samp``
  statistic between the positives' and the negatives' scores (the two-sample Kolmogorov-Smirnov
  distance between their empirical CDFs; weighted ECDFs with weights). ``threshold()`` is the
  highest threshold where the maximum is attained.
* ``GainsCurve`` / ``LiftCurve``: per threshold, the share of samples selected
  (TP + FP) / (P + N), the share of positives captured (the gain, TP / P) and the lift
  (gain / share selected); ``at_fraction(q)`` reads gain and lift at the top q, interpolating
  linearly inside a block of tied scores (the expected value with random tie-breaking).

``num_classes=C``: multiclass scores (n, C), one-vs-rest per class (class k's scores against
[y == k]); KS gives per-class arrays, the curves a list of results in class order.

``max_bytes=``: the bounded bins (:class:`~streammetrics._scores.binned.bins.BinnedScores`); every point at a
bin edge is exact, and the values are certified (:mod:`streammetrics.calibration._business_curves`):
``KSStatistic.bounds()`` holds the exact statistic, ``GainsCurveResult.at_fraction_bounds(q)``
the exact gain and lift; ``is_exact`` says whether the value is exact.

Scores are any non-NaN numbers (as for AUROC). ``compute`` O(n log n) exact (a linear merge of
the sorted runs), O(bins) bounded; memory one score per sample (exact) or at most ``max_bytes``.
Undefined values (no positives, or for KS no negatives) are nan with an UndefinedMetricWarning.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from streammetrics._core.averaging import warn_undefined_nan
from streammetrics._core.metric import M, Metric, R_co, Value
from streammetrics._core.params import check_param
from streammetrics._counts.tasks import task_of
from streammetrics._scores.protocol import ScoreState
from streammetrics._scores.thresholds import ThresholdCounts
from streammetrics.plot._output import CurveOutput
from streammetrics.ranking._base import SCORES, make_state

from ._business_curves import gain_bounds, ks_certified

__all__ = ["KSStatistic", "GainsCurve", "LiftCurve", "GainsCurveResult"]


class _ScoreCurve(Metric[R_co]):
    """A business curve on the shared score state (exact buffer or bounded bins)."""

    _state: ScoreState
    _name = "KSStatistic"

    def __init__(
        self, num_classes: int | None = None, *, max_bytes: int | None = None, scores: str = "raw"
    ) -> None:
        super().__init__()
        task = task_of(num_classes, False)
        self.num_classes = None if num_classes is None else int(num_classes)
        scores = check_param(scores, "scores", SCORES)
        self._state = make_state(task, self.num_classes, None, max_bytes=max_bytes, scores=scores)
        self.max_bytes = None if max_bytes is None else int(max_bytes)
        self.scores = scores

    def _config(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.num_classes is not None:
            out["num_classes"] = self.num_classes
        if self.max_bytes is not None:
            out["max_bytes"] = self.max_bytes
        if self.scores != "raw":
            out["scores"] = self.scores
        return out

    @property
    def is_exact(self) -> bool:
        """True when the value is exact: always without ``max_bytes``; with it, while every bin
        holds one distinct score."""
        with self._lock:
            return bool(self._state.is_exact)

    def update(self: M, y_true: ArrayLike, y_score: ArrayLike, *,  # type: ignore[override]
               sample_weight: ArrayLike | None = None) -> M:
        """Fold in one batch (labels 0/1 and scores; multiclass: class indices and (n, C)
        scores) or one sample; atomic; returns ``self``. O(n) (O(n C)) plus the state's
        amortised folding."""
        return self._update_state(y_true, y_score, sample_weight)

    def _counts(self, column: int = 0) -> ThresholdCounts:
        return self._state.counts(column)

    def _columns(self) -> range:
        return range(self._state.n_columns)

    def _warn(self, bad: list[int], what: str) -> None:
        if bad:
            warn_undefined_nan(self._name, what, None if self.num_classes is None else bad)


class KSStatistic(_ScoreCurve[Value]):
    """Kolmogorov-Smirnov statistic max_t |TPR(t) - FPR(t)| (scipy's ``ks_2samp`` statistic).

    ``update(y_true, y_score, *, sample_weight=None)`` takes binary labels and any non-NaN
    scores (one sample or a batch); ``threshold()`` is the highest threshold where the maximum
    is attained.

    Parameters
    ----------
    num_classes : int or None
        None: binary; C: multiclass scores (n, C), one statistic per class (one-vs-rest);
        ``compute()``, ``threshold()`` and ``bounds()`` then give arrays of length C.
    max_bytes : int or None
        Bound the state's memory (bounded bins): the value is the maximum over the bin edges
        (exact there) and ``bounds()`` certifies the exact statistic.
    scores : {"raw", "logit", "probability"}
        The declared score range: ``"probability"`` checks scores as probabilities (multiclass
        rows summing to 1) and shares one buffer with quantile calibration in a MetricSet.

    Notes
    -----
    Exact, from the sorted score buffer that AUROC, AveragePrecision and the curves hold (one
    buffer for all of them in a MetricSet): ``update`` O(n) plus the buffer's amortised folding,
    ``compute`` O(n), memory 8 bytes per score (16 with weights); bounded: O(bins) per
    ``compute``. nan with an ``UndefinedMetricWarning`` until both classes were seen.

    Examples
    --------
    >>> m = KSStatistic().update([0, 0, 1, 1], [0.1, 0.6, 0.4, 0.9])
    >>> m.compute(), m.threshold()
    (0.5, 0.9)
    """

    _name = "KSStatistic"

    def __init__(self, num_classes: int | None = None, *, max_bytes: int | None = None,
                 scores: str = "raw") -> None:
        super().__init__(num_classes, max_bytes=max_bytes, scores=scores)

    def _stats(self) -> np.ndarray:
        """(C, 4) rows of (value, low, high, threshold) per column (call under the lock)."""
        return np.array([ks_certified(self._counts(k)) for k in self._columns()]).reshape(-1, 4)

    def _out(self, col: np.ndarray) -> Any:
        return float(col[0]) if self.num_classes is None else col.copy()

    def _compute(self) -> Any:
        return self._given(self._stats()[:, 0])

    def _given(self, values: np.ndarray) -> Any:
        """The value from the statistic per column (binary: one), with ``compute``'s warning
        where one is nan (no positives or no negatives): shared with the engines, which compute
        the statistics by score ranges. O(C)."""
        values = np.asarray(values, dtype=np.float64)
        self._warn(np.flatnonzero(np.isnan(values)).tolist(), "no positives or no negatives")
        return self._out(values)

    def threshold(self) -> Value:
        """The highest threshold t (select ``score >= t``) where the statistic is attained;
        nan when undefined (per class for multiclass). O(n log n); O(bins) bounded."""
        with self._lock:
            return self._out(self._stats()[:, 3])

    def bounds(self) -> tuple[Value, Value]:
        """Certified (low, high) interval holding the exact statistic of the data seen:
        (value, value) for the exact state; bounded: the edge maximum and the largest gap at a
        corner of a bin holding both classes (:func:`streammetrics.calibration._business_curves.
        ks_certified`). Per class for multiclass; nan when undefined; no warning. O(bins)."""
        with self._lock:
            stats = self._stats()
        return self._out(stats[:, 1]), self._out(stats[:, 2])


@dataclass(frozen=True)
class GainsCurveResult(CurveOutput):
    """Cumulative gains and lift at every distinct threshold (decreasing).

    Attributes
    ----------
    thresholds : numpy.ndarray
        The distinct scores, in decreasing order.
    fraction : numpy.ndarray
        Share of the (weighted) samples with ``score >= threshold``.
    gain : numpy.ndarray
        Share of the positives among them (nan without positives).
    lift : numpy.ndarray
        ``gain / fraction``.
    mixed : numpy.ndarray of bool or None
        Per point: True when the segment ending there is a bounded-state bin holding both
        classes in an unknown order (None: every segment exact).
    max_lift : float
        (P + N) / P: the lift of positives only, the steepest the gains curve can rise (nan
        without positives).

    Examples
    --------
    >>> r = GainsCurve().update([0, 1, 1, 0, 1], [0.2, 0.9, 0.7, 0.7, 0.1]).compute()
    >>> r.thresholds.tolist(), r.fraction.tolist()
    ([0.9, 0.7, 0.2, 0.1], [0.2, 0.6, 0.8, 1.0])
    >>> [round(v, 4) for v in r.lift.tolist()]
    [1.6667, 1.1111, 0.8333, 1.0]
    >>> r.at_fraction(0.4)  # half-way through the tied block at 0.7
    (0.5, 1.25)
    """

    thresholds: np.ndarray
    fraction: np.ndarray
    gain: np.ndarray
    lift: np.ndarray
    #: Per point: True when the segment ending there is a bounded-state bin holding both
    #: classes in an unknown order (None: every segment exact).
    mixed: np.ndarray | None = None
    #: (P + N) / P: the lift of positives only, the steepest the gains curve can rise (the
    #: bounded certificates use it; nan without positives).
    max_lift: float = math.nan

    @property
    def is_exact(self) -> bool:
        """True when ``at_fraction`` is exact at every q (always for the exact state)."""
        return self.mixed is None or not bool(self.mixed.any())

    def at_fraction_bounds(self, q: float) -> tuple[tuple[float, float], tuple[float, float]]:
        """Certified ((gain low, gain high), (lift low, lift high)) at share ``q``: the exact
        gain and lift of the data seen lie inside (equal ends where exact; see
        :func:`streammetrics.calibration._business_curves.gain_bounds`). O(log T)."""
        g, lift = self.at_fraction(q)
        if math.isnan(g) or self.is_exact:
            return (g, g), (lift, lift)
        assert self.mixed is not None
        q = float(q)
        slope = float(self.max_lift)
        if q == 0.0:
            if self.mixed[0]:
                return (0.0, 0.0), (0.0, slope)
            return (0.0, 0.0), (lift, lift)
        lo, hi = gain_bounds(self.fraction, self.gain, self.mixed, slope, q)
        return (lo, hi), (lo / q, hi / q)

    _output_columns = ("thresholds", "fraction", "gain", "lift")

    def _summary(self) -> list[tuple[str, Any]]:
        gain, lift = self.at_fraction(0.1)
        return [("gain at top 10%", gain), ("lift at top 10%", lift)]

    def at_fraction(self, q: float) -> tuple[float, float]:
        """(gain, lift) when the top share ``q`` in [0, 1] of the samples is selected, linear
        inside tied blocks (the gains curve joins (0, 0) and its points with segments); the
        lift at q = 0 is the limit, the first block's lift. O(log T)."""
        q = float(q)
        if not 0.0 <= q <= 1.0:
            raise ValueError(f"q: must lie in [0, 1], got {q!r}")
        if self.gain.shape[0] == 0 or math.isnan(self.gain[-1]):
            return math.nan, math.nan
        x = np.r_[0.0, self.fraction]
        g = float(np.interp(q, x, np.r_[0.0, self.gain]))
        if q == 0.0:
            return 0.0, float(self.lift[0])
        return g, g / q


class GainsCurve(_ScoreCurve[GainsCurveResult | list[GainsCurveResult]]):
    """Cumulative gains (and lift) curve; ``compute()`` returns a :class:`GainsCurveResult`.

    ``update(y_true, y_score, *, sample_weight=None)`` takes binary labels and any non-NaN
    scores. One point per distinct score (tied samples are selected together);
    :meth:`GainsCurveResult.at_fraction` reads gain and lift at any share selected.

    Parameters
    ----------
    num_classes : int or None
        None: binary; C: multiclass scores (n, C), ``compute()`` gives a list of C results
        (one-vs-rest, class order).
    max_bytes : int or None
        Bound the state's memory (bounded bins): one point per bin edge, each exact;
        :meth:`GainsCurveResult.at_fraction_bounds` certifies gain and lift between them.
    scores : {"raw", "logit", "probability"}
        As for :class:`KSStatistic`.

    Notes
    -----
    Exact, from the sorted score buffer shared with AUROC (see :class:`KSStatistic`):
    ``compute`` O(n), memory 8 bytes per score (16 with weights); bounded: O(bins) per
    ``compute``, memory at most ``max_bytes``. Gain and lift are nan with an
    ``UndefinedMetricWarning`` until a positive was seen.

    Examples
    --------
    >>> r = GainsCurve().update([0, 0, 1, 1], [0.1, 0.6, 0.4, 0.9]).compute()
    >>> r.fraction.tolist(), r.gain.tolist(), r.at_fraction(0.5)
    ([0.25, 0.5, 0.75, 1.0], [0.5, 0.5, 1.0, 1.0], (0.5, 1.0))
    """

    _name = "GainsCurve"
    _plot_kind = "gains"

    def __init__(self, num_classes: int | None = None, *, max_bytes: int | None = None,
                 scores: str = "raw") -> None:
        super().__init__(num_classes, max_bytes=max_bytes, scores=scores)

    def plot(self, ax: Any = None, **kwargs: Any) -> Any:
        """The cumulative gains chart of the current curve (``LiftCurve``: the lift chart); see
        :func:`streammetrics.plot.plot_gains`."""
        from streammetrics.plot import plot_gains

        kwargs.setdefault("kind", self._plot_kind)
        return plot_gains(self.compute(), ax, **kwargs)

    def _compute(self) -> Any:
        results = [self._result(self._counts(k)) for k in self._columns()]
        self._warn([k for k, r in enumerate(results) if math.isnan(r.max_lift)], "no positives")
        return results[0] if self.num_classes is None else results

    @staticmethod
    def _result(c: ThresholdCounts) -> GainsCurveResult:
        total = c.total_pos + c.total_neg
        mixed = c.mixed() if c.binned else None
        if c.total_pos <= 0:
            nan = np.full(c.tps.shape[0], np.nan)
            frac = (c.tps + c.fps) / total if total > 0 else nan
            return GainsCurveResult(c.thresholds, frac, nan, nan, mixed)
        frac = (c.tps + c.fps) / total
        gain = c.tps / c.total_pos
        return GainsCurveResult(c.thresholds, frac, gain, gain / frac, mixed, total / c.total_pos)


class LiftCurve(GainsCurve):
    """The lift curve: the same :class:`GainsCurveResult` as :class:`GainsCurve` (read its
    ``lift`` and ``fraction``).

    Inputs, cost and undefined cases are those of :class:`GainsCurve`.

    Parameters
    ----------
    num_classes, max_bytes, scores : optional
        As for :class:`GainsCurve`.

    Examples
    --------
    >>> r = LiftCurve().update([0, 0, 1, 1], [0.1, 0.6, 0.4, 0.9]).compute()
    >>> r.fraction.tolist(), r.lift.tolist()
    ([0.25, 0.5, 0.75, 1.0], [2.0, 1.0, 1.3333333333333333, 1.0])
    """

    _name = "LiftCurve"
    _plot_kind = "lift"

    def __init__(self, num_classes: int | None = None, *, max_bytes: int | None = None,
                 scores: str = "raw") -> None:
        super().__init__(num_classes, max_bytes=max_bytes, scores=scores)
