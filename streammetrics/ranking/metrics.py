"""Exact ranking metrics over scores: AUROC, average precision, ROC and PR curves
(docs/definitions/ranking.md).

All four accumulators keep the same state -- by default the exact
:class:`~streammetrics._scores.exact.buffer.SortedScores` buffer (one sorted copy of every score per
column, at its input precision) -- so in a :class:`~streammetrics.MetricSet` they share it: one
``update`` pass feeds all of them. Options
that only change the readout (``average``, ``max_fpr``, ``interpolated``, ...) are not part of the
state. Every value is exact: it equals scikit-learn's on the same data.

With ``max_bytes=`` or ``thresholds=`` the state is binned (:mod:`streammetrics._scores.binned.bins`; exact
while every bin is one distinct score). Both states implement one protocol
(:class:`streammetrics._scores.protocol.ScoreState`) and the metrics below are written once against
it: the exact state simply certifies (v, v) and every readout is certified (docs/bounded.md):
``bounds()`` holds the exact value (AUROC, also with ``max_fpr``; AP, also interpolated and
11-point), curve results carry per-point exactness, envelopes, ``area_bounds`` and
``best_threshold`` with a certified ``score_bound`` (:mod:`streammetrics._scores.thresholds`). One-vs-one
AUROC and DeLong intervals need the exact state.

Tasks (docs/definitions/index.md#task-arguments): ``num_classes=None`` binary (scores shape
(n,)); ``num_classes=C``
multiclass (scores (n, C), one-vs-rest per class, or one-vs-one for ``AUROC(multi_class="ovo")``);
``multilabel=True, num_classes=L`` (labels and scores (n, L)). A single sample may be given as
scalars (``update(1, 0.83)``) -- the cheap per-sample path.

Undefined values (AUROC with no positives or no negatives, AP or PR curves with no positives)
are nan with one :class:`~streammetrics.UndefinedMetricWarning` per ``compute``; class averages
leave undefined classes out.

Example
-------
>>> import numpy as np, streammetrics as sm
>>> from sklearn.metrics import roc_auc_score
>>> rng = np.random.default_rng(0)
>>> y = rng.integers(0, 2, 1000); s = rng.normal(size=1000) + y
>>> auroc = sm.AUROC()
>>> for i in range(0, 1000, 100):
...     _ = auroc.update(y[i:i + 100], s[i:i + 100])
>>> abs(auroc.compute() - roc_auc_score(y, s)) < 1e-12
True
"""


from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Iterable
from typing import Any, cast

import numpy as np
from numpy.typing import ArrayLike

from streammetrics._core.averaging import warn_undefined_nan
from streammetrics._core.docstrings import filled
from streammetrics._core.intervals import z_value
from streammetrics._core.metric import Value
from streammetrics._core.params import Param, check_param
from streammetrics._counts.label_options import label_options
from streammetrics._counts.tasks import task_of
from streammetrics._scores.column_auroc import auroc_columns
from streammetrics._scores.protocol import PairScores, ScoreState
from streammetrics._scores.thresholds import (
    ThresholdCounts,
    average_precision,
    average_precision_certified,
    counts_from_sorted,
    roc_auc_certified,
    roc_auc_from_counts,
)

from ._base import RankingMetric
from ._curves import CurveMetric, PRCurve, ROCCurve
from ._delong import delong
from ._operating_points import OperatingPoint
from ._results import PRCurveResult, ROCCurveResult

__all__ = [
    "AUROC",
    "AveragePrecision",
    "ROCCurve",
    "PRCurve",
    "ROCCurveResult",
    "PRCurveResult",
    "OperatingPoint",
    "CurveMetric",
]

_MULTI_CLASS = Param("choice", "must be 'ovr' or 'ovo'", choices=("ovr", "ovo"))
_MAX_FPR = Param("real", "must be a number in (0, 1]", finite=False, finite_rule="must be in (0, 1]",
                 optional=True)
_MAX_FPR_RANGE = Param("real", "must be in (0, 1]", low=0.0, low_open=True, high=1.0, optional=True)


@filled
class AUROC(RankingMetric[Value]):
    """Area under the ROC curve = Mann-Whitney U / (P·N), a tied positive/negative pair counting
    1/2: P(f(x+) > f(x-)) + 1/2 P(f(x+) = f(x-)). Equals ``sklearn.metrics.roc_auc_score``.

    Parameters: the task arguments of docs/definitions/index.md#task-arguments; ``average``
    ("macro", "weighted" by
    support, "micro" pooling every (sample, class) pair, ``None`` per class); ``max_fpr``: the
    McClish-standardised partial AUROC up to that false positive rate (as scikit-learn; also per
    class for multiclass, where scikit-learn has none); ``multi_class="ovo"`` (multiclass only):
    Hand & Till's one-vs-one AUROC, the mean over class pairs of (AUC(i|j) + AUC(j|i)) / 2,
    "weighted" by the pair's prevalence (average "macro" or "weighted").

    Complexity: ``compute`` is O(1) for binary (O(C) one-vs-rest, O(C^2) one-vs-one) once the
    buffer is current -- the exact 2U statistic is kept up to date as batches are folded in;
    ``max_fpr`` and ``micro`` walk the sorted scores (O(n log n)). ``interval`` is DeLong's.
    Undefined (no positives or no negatives): nan with an ``UndefinedMetricWarning``.

    Binned (``max_bytes`` / ``thresholds``): ``compute`` is the trapezoid over the bin edges
    (ties inside a bin count 1/2), ``bounds()`` certifies it, O(bins) per class; with
    ``max_fpr`` the bounds are the standardised partial areas under the ROC envelope
    (:func:`streammetrics._scores.thresholds.roc_auc_bounds`). ``multi_class="ovo"`` is refused there:
    the binned state pools each column's negatives over classes, which leaves AUC(i|j)
    unbounded.

    Parameters
    ----------
    {ranking: num_classes, multilabel, average, ignore_index}
    max_fpr : float, optional
        The McClish-standardised partial AUROC up to this false positive rate, in (0, 1].
    multi_class : {'ovr', 'ovo'}, default 'ovr'
        Multiclass: one-vs-rest per class, or Hand & Till's one-vs-one.
    {ranking: max_bytes, thresholds, scores, labels}

    Examples
    --------
    {example: ranking}
    >>> sm.AUROC().update(y_true, y_score).compute()
    0.75
    >>> scores = [[0.8, 0.1, 0.1], [0.2, 0.5, 0.3], [0.1, 0.2, 0.7], [0.3, 0.4, 0.3]]
    >>> m = sm.AUROC(3, average=None).update([0, 1, 2, 2], scores)
    >>> m.compute()
    array([1.   , 1.   , 0.875])
    """

    _name = "AUROC"
    #: Why a value is undefined (the warning's words).
    _undefined = "no positives or no negatives"

    def __init__(
        self,
        num_classes: int | None = None,
        *,
        multilabel: bool = False,
        average: str | None = "macro",
        ignore_index: int | None = None,
        max_fpr: float | None = None,
        multi_class: str = "ovr",
        max_bytes: int | None = None,
        thresholds: int | ArrayLike | None = None,
        scores: str = "raw",
        classes: Iterable[Hashable] | None = None,
        pos_label: Hashable | None = None,
    ) -> None:
        self.multi_class = multi_class = check_param(multi_class, "multi_class", _MULTI_CLASS)
        # a real number first (as a float), then its range (the message shows the float)
        max_fpr = check_param(check_param(max_fpr, "max_fpr", _MAX_FPR), "max_fpr", _MAX_FPR_RANGE)
        self.max_fpr = max_fpr
        if multi_class == "ovo":
            if task_of(label_options(num_classes, bool(multilabel), classes=classes).num_classes,
                       bool(multilabel)) != "multiclass":
                raise ValueError("multi_class: 'ovo' needs multiclass scores (num_classes=C)")
            if average not in ("macro", "weighted"):
                raise ValueError(f"average: one-vs-one AUROC takes 'macro' or 'weighted', got {average!r}")
        super().__init__(
            num_classes,
            multilabel=multilabel,
            average=average,
            ignore_index=ignore_index,
            max_bytes=max_bytes,
            thresholds=thresholds,
            scores=scores,
            classes=classes,
            pos_label=pos_label,
        )

    def _by_class(self) -> bool:
        return self.multi_class == "ovo"

    def _config(self) -> dict[str, Any]:
        return {**super()._config(), "max_fpr": self.max_fpr, "multi_class": self.multi_class}

    def _pairs(self, what: str) -> PairScores:
        """The state's pair-level view; ``ValueError`` saying ``what`` needs it when the state
        keeps no individual scores (bins)."""
        pairs = self._state.pair_scores()
        if pairs is None:
            raise ValueError(f"{what} needs the exact state (no max_bytes/thresholds)")
        return pairs

    def _ovo(self) -> float:
        st = self._pairs("multi_class: one-vs-one AUROC")  # the constructor refuses bins
        u2 = st.u2()
        w = st.totals()[0]  # weight of every class (the same in every column)

        def area(i: int, j: int) -> float:
            if self.max_fpr is not None and self.max_fpr != 1.0:  # 1: the full area, as _stat reads it
                return roc_auc_from_counts(self._pair_counts(i, j), self.max_fpr)
            return float(u2[i, j]) / (2.0 * w[i] * w[j])

        return self._ovo_given(w, area)

    def _ovo_given(self, w: np.ndarray, area: Callable[[int, int], float]) -> float:
        """Hand & Till's value from the weight ``w`` of each class and ``area(i, j)`` = AUC(i|j)
        (class i's column-i scores against class j's; read only for two present classes):
        the mean -- "weighted" by w_i + w_j -- over the pairs of present classes of
        (AUC(i|j) + AUC(j|i)) / 2; one warning naming the absent classes. What ``compute``
        gives from the state, and an engine from its per-pair areas. O(C^2) calls of ``area``."""
        c = len(w)
        pairs: list[float] = []
        prev: list[float] = []
        missing: set[int] = set()
        for i in range(c):
            for j in range(i + 1, c):
                if w[i] <= 0 or w[j] <= 0:
                    missing.update(k for k in (i, j) if w[k] <= 0)
                    continue
                pairs.append((area(i, j) + area(j, i)) / 2.0)
                prev.append(w[i] + w[j])
        if missing:
            warn_undefined_nan(self._name, "class absent: its one-vs-one pairs are left out", sorted(missing))
        if not pairs:
            return math.nan
        if self.average == "weighted":
            return float(np.average(pairs, weights=prev))
        return float(np.mean(pairs))

    def _pair_counts(self, i: int, j: int) -> ThresholdCounts:
        st = self._pairs("multi_class: one-vs-one AUROC")
        pv, pw = st.group(i, i)
        nv, nw = st.group(i, j)
        return counts_from_sorted(pv, pw, nv, nw)

    def _stat(self, column: int | None) -> tuple[float, float, float]:
        if self.max_fpr is None or self.max_fpr == 1.0:  # the full area: the state's pair counts
            return self._state.auroc(column) if column is not None else self._state.pooled_auroc()
        return roc_auc_certified(self._counts(column), self.max_fpr)

    def _exact_columns(self) -> np.ndarray | None:
        if self.max_fpr is not None and self.max_fpr != 1.0:
            return None
        return auroc_columns(self._state)  # the exact buffer: every column at once

    def _values(self) -> tuple[Any, Any, Any]:
        if self.multi_class == "ovo":
            v = self._ovo()
            return v, v, v
        return super()._values()

    def _compute(self) -> Any:
        if self.multi_class == "ovo":
            return self._ovo()
        return self._scalar_compute(self._undefined)

    def plot(self, ax: Any = None, *, labels: Any = None, **kwargs: Any) -> Any:
        """Draw the ROC curve this AUROC is the area under (one per class for multiclass /
        multilabel, pooled with ``average="micro"``; the certified envelope when binned), with
        the area in the legend, and return the display: :meth:`ROCCurve.plot` on the same
        state (matplotlib needed: the ``plot`` extra). O(n log n) exact, O(bins) binned.

        Parameters
        ----------
        ax : matplotlib Axes, optional
            Where to draw (a new figure when not given).
        labels : list of str, optional
            Curve names (default: the ``classes`` given, else the class indices).
        **kwargs
            Passed to :func:`streammetrics.plot.plot_curves`.

        Returns
        -------
        Display
            The axes and the artists drawn.
        """
        if self.multi_class == "ovo":
            raise ValueError("plot: a one-vs-one AUROC has no single ROC curve per class; plot "
                             "AUROC(num_classes, multi_class='ovr') or ROCCurve")
        return _curve_view(self, ROCCurve).plot(ax, labels=labels, **kwargs)

    def interval(self, confidence: float = 0.95) -> tuple[Value, Value]:
        """DeLong confidence interval (O(n log n), Sun & Xu's algorithm): AUROC ± z·sqrt(Var),
        clipped to [0, 1]. Binary gives a (low, high) pair; multiclass/multilabel with
        ``average=None`` gives two per-class arrays. Undefined (fewer than two positives or
        negatives) gives nan. Not available with ``max_fpr``, one-vs-one, or other averages."""
        z = z_value(confidence)
        st = self._pairs("interval: DeLong's interval")
        if self.max_fpr is not None or self.multi_class == "ovo":
            raise ValueError("interval: DeLong's interval is for the full one-vs-rest AUROC only")
        if self.task != "binary" and self.average is not None:
            raise ValueError(
                "interval: defined for binary and per-class (average=None) values, "
                f"not average={self.average!r}"
            )
        with self._lock:
            cols = [st.column(c) for c in range(st.n_columns)]
        lo, hi = np.full(len(cols), math.nan), np.full(len(cols), math.nan)
        undefined = []
        for c, (pv, pw, nv, nw) in enumerate(cols):
            auc, var = delong(pv, pw, nv, nw)
            if math.isnan(var):
                undefined.append(c)
                continue
            half = z * math.sqrt(max(var, 0.0))
            lo[c], hi[c] = max(0.0, auc - half), min(1.0, auc + half)
        if undefined:
            what = "DeLong's variance needs at least two positives and two negatives"
            warn_undefined_nan("AUROC interval", what, None if self.task == "binary" else undefined)
        if self.task == "binary":
            return float(lo[0]), float(hi[0])
        return lo, hi


@filled
class AveragePrecision(RankingMetric[Value]):
    """Average precision AP = sum_k (R_k - R_{k-1}) P_k over the distinct thresholds in decreasing
    order, R_0 = 0 (step, no interpolation; ``sklearn.metrics.average_precision_score``).

    ``interpolated=True``: P_k replaced by max_{r' >= R_k} P(r'). ``eleven_point=True``: the mean
    of that interpolated precision at recall 0, 0.1, ..., 1, a threshold reaching level l when
    10 TP >= l P in the exact sums of the weights (weights such as multiples of 0.1 reach a
    level exactly; every engine route decides it the same way). ``average`` as for AUROC (macro
    AP over classes is mAP). Undefined without positives (nan + ``UndefinedMetricWarning``).

    Complexity: the first ``compute`` O(n) per class (a merge of the sorted runs, then the
    precision at the distinct positive scores); later ones, unweighted, O(P + m log n) per class
    (P distinct positive scores, m samples added since the last read: the counts at the
    positive scores are kept and brought up to date, nothing is re-sorted or re-merged; the
    O(P) part is one pass over the counts -- every precision changes when a negative lands
    above it -- and with the ``fast`` extra the only one: new thresholds wait beside the kept
    counts until they outgrow 1/32 of them); a repeated read with no change in between is O(1)
    (memoised, as for every ranking metric).

    Binned (``max_bytes`` / ``thresholds``): ``compute`` treats each bin as tied scores (O(bins)
    per class) and ``bounds()`` certifies it: step AP by
    :func:`streammetrics._scores.thresholds.ap_bounds`, interpolated / 11-point AP from the bin edges (low
    end, = ``compute()``) and the bins' best corners (high end), see
    :func:`streammetrics._scores.thresholds.average_precision_bounds`.

    Parameters
    ----------
    {ranking: num_classes, multilabel, average, ignore_index}
    interpolated : bool, default False
        Replace each precision by the best precision at the same or a higher recall.
    eleven_point : bool, default False
        The mean interpolated precision at recall 0, 0.1, ..., 1 (levels decided in exact sums).
    {ranking: max_bytes, thresholds, scores, labels}

    Examples
    --------
    {example: ranking}
    >>> sm.AveragePrecision().update(y_true, y_score).compute()
    0.8333333333333333
    """

    _name = "AveragePrecision"
    #: Why a value is undefined (the warning's words).
    _undefined = "no positives"

    def __init__(
        self,
        num_classes: int | None = None,
        *,
        multilabel: bool = False,
        average: str | None = "macro",
        ignore_index: int | None = None,
        interpolated: bool = False,
        eleven_point: bool = False,
        max_bytes: int | None = None,
        thresholds: int | ArrayLike | None = None,
        scores: str = "raw",
        classes: Iterable[Hashable] | None = None,
        pos_label: Hashable | None = None,
    ) -> None:
        self.interpolated = bool(interpolated)
        self.eleven_point = bool(eleven_point)
        super().__init__(
            num_classes,
            multilabel=multilabel,
            average=average,
            ignore_index=ignore_index,
            max_bytes=max_bytes,
            thresholds=thresholds,
            scores=scores,
            classes=classes,
            pos_label=pos_label,
        )

    def _config(self) -> dict[str, Any]:
        return {**super()._config(), "interpolated": self.interpolated, "eleven_point": self.eleven_point}

    def _step_value(self, column: int | None) -> float | None:
        """The exact buffer's O(P) step AP of one column, or None (another state or form)."""
        if column is not None and not (self.interpolated or self.eleven_point):
            return self._state.step_average_precision(column)
        return None

    def _stat(self, column: int | None) -> tuple[float, float, float]:
        v = self._step_value(column)
        if v is not None:
            return v, v, v
        counts = self._counts(column, positive_thresholds=True)
        return average_precision_certified(counts, self.interpolated, self.eleven_point)

    def _value(self, column: int | None) -> float:
        v = self._step_value(column)
        if v is not None:
            return v
        # the value of ``_stat`` without the certified bounds (binned: half of a read's cost)
        return average_precision(self._counts(column, positive_thresholds=True), self.interpolated,
                                 self.eleven_point)

    def plot(self, ax: Any = None, *, labels: Any = None, **kwargs: Any) -> Any:
        """Draw the precision-recall curve this AP summarises (one per class for multiclass /
        multilabel, pooled with ``average="micro"``; the certified envelope when binned) and
        return the display: :meth:`PRCurve.plot` on the same state (matplotlib needed: the
        ``plot`` extra). O(n log n) exact, O(bins) binned.

        Parameters
        ----------
        ax : matplotlib Axes, optional
            Where to draw (a new figure when not given).
        labels : list of str, optional
            Curve names (default: the ``classes`` given, else the class indices).
        **kwargs
            Passed to :func:`streammetrics.plot.plot_curves`.

        Returns
        -------
        Display
            The axes and the artists drawn.
        """
        return _curve_view(self, PRCurve).plot(ax, labels=labels, **kwargs)

    def _compute(self) -> Any:
        return self._scalar_compute(self._undefined)


def _curve_view(metric: RankingMetric, curve: type[CurveMetric]) -> CurveMetric:
    """A curve accumulator of ``metric``'s task holding a copy of its state (the scalar ranking
    metrics and the curves keep interchangeable states: a MetricSet shares one). O(state)."""
    with metric._lock:
        view = curve._from_config(RankingMetric._config(metric))
        view._state = cast(ScoreState, metric._state.copy())
    return view
