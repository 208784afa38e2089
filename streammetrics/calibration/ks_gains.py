"""Business curves over the exact sorted score buffer: KS statistic, cumulative gains and lift.

All three hold the binary :class:`~streammetrics._sorted_buffer.SortedScores` state that
``AUROC()``, ``AveragePrecision()``, ``ROCCurve()`` and ``PRCurve()`` hold, so in a
:class:`~streammetrics.MetricSet` they share one buffer (one update pass). They read the
counts at every distinct threshold t (decreasing; ``score >= t`` selects): TP(t), FP(t), with
P, N the total positive and negative weight.

* ``KSStatistic``: max over thresholds of |TPR(t) - FPR(t)|, which is scipy's ``ks_2samp``
  statistic between the positives' and the negatives' scores (the two-sample Kolmogorov-Smirnov
  distance between their empirical CDFs; weighted ECDFs with weights). ``threshold()`` is the
  highest threshold where the maximum is attained.
* ``GainsCurve`` / ``LiftCurve``: per threshold, the share of samples selected
  (TP + FP) / (P + N), the share of positives captured (the gain, TP / P) and the lift
  (gain / share selected); ``at_fraction(q)`` reads gain and lift at the top q, interpolating
  linearly inside a block of tied scores (the expected value with random tie-breaking).

Scores are any non-NaN numbers (as for AUROC). ``compute`` O(n log n) (a linear merge of the
sorted runs); memory one score per sample (see the sorted buffer). Undefined values (no
positives, or for KS no negatives) are nan with an UndefinedMetricWarning.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._base import Metric
from .._curves import ThresholdCounts
from .._result_output import CurveOutput
from .._sorted_buffer import SortedScores
from ._common import undefined

__all__ = ["KSStatistic", "GainsCurve", "LiftCurve", "GainsCurveResult"]


class _SortedBinary(Metric):
    """A binary metric on the shared exact sorted buffer."""

    _state: SortedScores

    def __init__(self) -> None:
        super().__init__()
        self._state = SortedScores("binary")

    def _config(self) -> dict[str, Any]:
        return {}

    def update(self, y_true: Any, y_score: Any, *, sample_weight: Any = None) -> Any:  # type: ignore[override]
        """Fold in one batch (labels 0/1 and scores) or one sample; atomic; returns ``self``.
        O(n) plus the buffer's amortised folding (see the sorted buffer)."""
        return self._update_state(y_true, y_score, sample_weight)

    def _counts(self) -> ThresholdCounts:
        return self._state.counts(0)


class KSStatistic(_SortedBinary):
    """Kolmogorov-Smirnov statistic max_t |TPR(t) - FPR(t)| (scipy's ``ks_2samp`` statistic).

    ``KSStatistic()`` takes no arguments. ``update(y_true, y_score, *, sample_weight=None)``
    takes binary labels and any non-NaN scores (one sample or a batch); ``threshold()`` is the
    highest threshold where the maximum is attained.

    Notes
    -----
    Exact, from the sorted score buffer that AUROC, AveragePrecision and the curves hold (one
    buffer for all of them in a MetricSet): ``update`` O(n) plus the buffer's amortised folding,
    ``compute`` O(n), memory 8 bytes per score (16 with weights). nan with an
    ``UndefinedMetricWarning`` until both classes were seen.

    Examples
    --------
    >>> m = KSStatistic().update([0, 0, 1, 1], [0.1, 0.6, 0.4, 0.9])
    >>> m.compute(), m.threshold()
    (0.5, 0.9)
    """

    def _ks(self) -> tuple[float, float]:
        c = self._counts()
        if c.total_pos <= 0 or c.total_neg <= 0:
            return undefined("KSStatistic"), math.nan
        gap = np.abs(c.tps / c.total_pos - c.fps / c.total_neg)
        i = int(np.argmax(gap))
        return float(gap[i]), float(c.thresholds[i])

    def _compute(self) -> float:
        return self._ks()[0]

    def threshold(self) -> float:
        """The highest threshold t (select ``score >= t``) where the statistic is attained;
        nan when undefined. O(n log n)."""
        with self._lock:
            return self._ks()[1]


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


class GainsCurve(_SortedBinary):
    """Cumulative gains (and lift) curve; ``compute()`` returns a :class:`GainsCurveResult`.

    ``GainsCurve()`` takes no arguments; ``update(y_true, y_score, *, sample_weight=None)``
    takes binary labels and any non-NaN scores. One point per distinct score (tied samples are
    selected together); :meth:`GainsCurveResult.at_fraction` reads gain and lift at any share
    selected.

    Notes
    -----
    Exact, from the sorted score buffer shared with AUROC (see :class:`KSStatistic`):
    ``compute`` O(n), memory 8 bytes per score (16 with weights). Gain and lift are nan with an
    ``UndefinedMetricWarning`` until a positive was seen.

    Examples
    --------
    >>> r = GainsCurve().update([0, 0, 1, 1], [0.1, 0.6, 0.4, 0.9]).compute()
    >>> r.fraction.tolist(), r.gain.tolist(), r.at_fraction(0.5)
    ([0.25, 0.5, 0.75, 1.0], [0.5, 0.5, 1.0, 1.0], (0.5, 1.0))
    """

    _name = "GainsCurve"
    _plot_kind = "gains"

    def plot(self, ax: Any = None, **kwargs: Any) -> Any:
        """The cumulative gains chart of the current curve (``LiftCurve``: the lift chart); see
        :func:`streammetrics.plot.plot_gains`."""
        from ..plot import plot_gains

        kwargs.setdefault("kind", self._plot_kind)
        return plot_gains(self.compute(), ax, **kwargs)

    def _compute(self) -> GainsCurveResult:
        c = self._counts()
        total = c.total_pos + c.total_neg
        if c.total_pos <= 0:
            undefined(self._name)
            nan = np.full(c.tps.shape[0], np.nan)
            frac = (c.tps + c.fps) / total if total > 0 else nan
            return GainsCurveResult(c.thresholds, frac, nan, nan)
        frac = (c.tps + c.fps) / total
        gain = c.tps / c.total_pos
        return GainsCurveResult(c.thresholds, frac, gain, gain / frac)


class LiftCurve(GainsCurve):
    """The lift curve: the same :class:`GainsCurveResult` as :class:`GainsCurve` (read its
    ``lift`` and ``fraction``).

    ``LiftCurve()`` takes no arguments; inputs, cost and undefined cases are those of
    :class:`GainsCurve`.

    Examples
    --------
    >>> r = LiftCurve().update([0, 0, 1, 1], [0.1, 0.6, 0.4, 0.9]).compute()
    >>> r.fraction.tolist(), r.lift.tolist()
    ([0.25, 0.5, 0.75, 1.0], [2.0, 1.0, 1.3333333333333333, 1.0])
    """

    _name = "LiftCurve"
    _plot_kind = "lift"
