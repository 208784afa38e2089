"""Exact ranking metrics over scores: AUROC, average precision, ROC and PR curves
(docs/definitions/ranking.md).

All four accumulators keep the same state, a :class:`~streammetrics._sorted_buffer.SortedScores`
buffer (one sorted copy of every score per column, at its input precision), so in a
:class:`~streammetrics.MetricSet` they share it: one ``update`` pass feeds all of them. Options
that only change the readout (``average``, ``max_fpr``, ``interpolated``, ...) are not part of the
state. Every value is exact: it equals scikit-learn's on the same data.

With ``max_bytes=`` or ``thresholds=`` the state is binned (:mod:`streammetrics._bins`; exact
while every bin is one distinct score). Both states implement one protocol
(:class:`streammetrics._score_state.ScoreState`) and the metrics below are written once against
it: the exact state simply certifies (v, v) and every readout is certified (docs/bounded.md):
``bounds()`` holds the exact value (AUROC, also with ``max_fpr``; AP, also interpolated and
11-point), curve results carry per-point exactness, envelopes, ``area_bounds`` and
``best_threshold`` with a certified ``score_bound`` (:mod:`streammetrics._curves`). One-vs-one
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
from typing import Any

import numpy as np

from ._averaging import average_classes
from ._base import Metric, UndefinedMetricWarning
from ._bins import BinnedScores
from ._confusion_counts import task_of
from ._curve_results import PRCurveResult, ROCCurveResult
from ._curves import (
    ThresholdCounts,
    average_precision_certified,
    counts_from_sorted,
    roc_auc_certified,
    roc_auc_from_counts,
)
from ._delong import delong
from ._intervals import z_value
from ._label_options import label_options
from ._operating_points import OperatingPoint
from ._probability_scores import ProbabilityScores
from ._score_state import ScoreState
from ._sorted_buffer import SortedScores
from ._warnings import warn

__all__ = [
    "AUROC",
    "AveragePrecision",
    "ROCCurve",
    "PRCurve",
    "ROCCurveResult",
    "PRCurveResult",
    "OperatingPoint",
]

_AVERAGES = ("macro", "weighted", "micro", None)


def warn_undefined(name: str, what: str, classes: Any = None) -> None:
    """One :class:`~streammetrics.UndefinedMetricWarning`: ``name`` is undefined (for
    ``classes``, if given) because of ``what``; the value returned is nan.

    Parameters
    ----------
    name : str
        The metric's name, as the message shows it.
    what : str
        Why it is undefined (``"no positives"``, ...).
    classes : array-like of int, optional
        The class indices it is undefined for (multiclass, multilabel).

    Returns
    -------
    None
        The warning is issued (attributed to the caller's line).
    """
    where = "" if classes is None else f" for classes {[int(c) for c in classes]}"
    warn(f"{name} is undefined{where} ({what}); returning nan", UndefinedMetricWarning)


def _make_state(
    task: str,
    num_classes: int | None,
    ignore_index: int | None,
    *,
    by_class: bool = False,
    max_bytes: int | None = None,
    thresholds: Any = None,
    scores: str = "raw",
) -> ScoreState:
    """The state a ranking metric's constructor arguments ask for.

    Parameters
    ----------
    task, num_classes, ignore_index
        The task (see :class:`ScoreState`).
    by_class : bool
        One-vs-one layout (multiclass; one group per true class in every column): exact only.
    max_bytes : int, optional
        Bound on the state's memory: adaptive bins (:class:`~streammetrics._bins.BinnedScores`).
    thresholds : int or array-like, optional
        Fixed bin edges instead.
    scores : str
        ``"raw"``, ``"logit"`` or ``"probability"``: the declared score range (bins; exact
        binary / multiclass ``"probability"``: the checked probability buffer shared with
        quantile calibration, :mod:`streammetrics._probability_scores`).

    Returns
    -------
    ScoreState
        The exact sorted buffer without ``max_bytes`` / ``thresholds``, else the bins.

    Raises ``ValueError`` naming the argument for a bad ``scores`` or a one-vs-one layout with
    bins. O(num_classes).
    """
    if max_bytes is None and thresholds is None:
        if scores not in ("raw", "logit", "probability"):
            raise ValueError(f"scores: must be 'raw', 'logit' or 'probability', got {scores!r}")
        if scores == "probability" and task != "multilabel" and ignore_index is None and not by_class:
            return ProbabilityScores(task, num_classes)  # checked probabilities, shared with calibration
        return SortedScores(task, num_classes, ignore_index, by_class)
    if by_class:
        raise ValueError(
            "multi_class: one-vs-one AUROC is not available with max_bytes/thresholds: "
            "it compares class i's column-i scores with those of each other class j "
            "separately, and the binned state keeps one negative histogram per column "
            "(all other classes pooled), so AUC(i|j) has no certified bound from it; "
            "use the exact state or one-vs-rest (multi_class='ovr')"
        )
    return BinnedScores(
        task, num_classes, ignore_index, max_bytes=max_bytes, thresholds=thresholds, scores=scores
    )


class _Ranking(Metric):
    """Constructor, state and per-class plumbing shared by the four ranking accumulators.

    ``update`` validates a batch (vectorised) and queues a copy split by group: O(n) (O(n·C) for
    multiclass scores); a scalar sample is a tuple append. Reads fold the queue into the sorted
    buffer first (see :mod:`streammetrics._sorted_buffer`). Memory: one score per sample and
    class at input precision (+16 bytes per sample with non-unit weights).
    """

    _name = "metric"

    def __init__(
        self,
        num_classes: int | None = None,
        *,
        multilabel: bool = False,
        average: str | None = "macro",
        ignore_index: int | None = None,
        max_bytes: int | None = None,
        thresholds: Any = None,
        scores: str = "raw",
        classes: Any = None,
        pos_label: Any = None,
    ) -> None:
        super().__init__()
        self._labels = label_options(num_classes, bool(multilabel), classes=classes, pos_label=pos_label,
                                     ignore_index=ignore_index)  # labels as users have them
        num_classes = self._labels.num_classes
        self.num_classes = num_classes
        self.multilabel = bool(multilabel)
        self.task = task_of(num_classes, self.multilabel)
        if average not in _AVERAGES:
            raise ValueError(f"average: must be one of {_AVERAGES}, got {average!r}")
        self.average = average
        self._state: ScoreState = _make_state(
            self.task,
            num_classes,
            ignore_index,
            by_class=self._by_class(),
            max_bytes=max_bytes,
            thresholds=thresholds,
            scores=scores,
        )
        self.max_bytes = max_bytes
        self.thresholds = thresholds
        self.scores = scores
        self.ignore_index = self._state.ignore_index  # validated there
        self._state = self._labels.attach(self._state)

    @property
    def is_exact(self) -> bool:
        """True when the value is exact: always for the exact state; for ``max_bytes`` while
        every bin is one distinct score; never with ``thresholds=``."""
        with self._lock:
            return bool(self._state.is_exact)

    def _by_class(self) -> bool:
        return False

    def update(self, y_true: Any, y_score: Any, *, sample_weight: Any = None) -> Any:  # type: ignore[override]
        """Fold in one batch (or one sample given as scalars); atomic; returns ``self``."""
        return self._update_state(y_true, y_score, sample_weight)

    def _config(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "num_classes": self.num_classes,
            "multilabel": self.multilabel,
            "average": self.average,
            "ignore_index": self.ignore_index,
        }
        if self.max_bytes is not None:
            out["max_bytes"] = int(self.max_bytes)
        if self.thresholds is not None:
            t = self.thresholds
            out["thresholds"] = (
                int(t) if isinstance(t, (int, np.integer)) else [float(x) for x in np.asarray(t).ravel()]
            )
        if self.scores != "raw":
            out["scores"] = self.scores
        return {**out, **self._labels.config()}

    def bounds(self) -> tuple[Any, Any]:
        """Certified (low, high) interval holding the exact value on the data seen: (value,
        value) whenever the state is exact. Binned state (``max_bytes``/``thresholds``): AUROC
        A ± ½ Σ_b p_b n_b / (P N) (:func:`streammetrics._curves.auroc_bounds`; with
        ``max_fpr``: the standardised partial areas under the ROC envelope,
        :func:`streammetrics._curves.roc_auc_certified`), AP by
        :func:`streammetrics._curves.average_precision_certified`; curves: those of their area
        (AUROC; step AP for PR curves; the point-wise certificates are on the curve results:
        ``exact``, ``envelope()``, ``area_bounds()``, ``best_threshold``). Per class with
        ``average=None``, and for averages the same average of the per-class ends. Issues no
        warning (``compute`` reports undefined values). O(bins) binned."""
        with self._lock:
            _, lo, hi = self._values()
        return lo, hi

    def _stat(self, column: int | None) -> tuple[float, float, float]:
        """(value, low, high) of this metric's scalar for one column (None: every column
        pooled, micro averaging), from the score state (call under the lock)."""
        raise NotImplementedError

    def _stat_read(self, column: int | None) -> tuple[float, float, float]:
        """:meth:`_stat`, memoised until the state changes (a repeated read is O(1))."""
        return self._cached(("stat", column), lambda: self._stat(column))

    def _values(self) -> tuple[Any, Any, Any]:
        """(value, low, high): binary floats, per-class arrays, or their average (micro: from
        the pooled state). Call under the lock."""
        st = self._state
        if self.task != "binary" and self.average == "micro":
            return self._stat_read(None)
        stats = np.array([self._stat_read(c) for c in range(st.n_columns)]).reshape(-1, 3)
        if self.task == "binary":
            return float(stats[0, 0]), float(stats[0, 1]), float(stats[0, 2])
        if self.average is None:
            return stats[:, 0], stats[:, 1], stats[:, 2]
        weights = st.support() if self.average == "weighted" else None
        return tuple(average_classes(stats[:, i], weights, skip_nan=True) for i in range(3))  # type: ignore[return-value]

    def _scalar_compute(self, undefined_what: str) -> Any:
        """The value (binary, per class or averaged) with one warning for undefined values."""
        if self.task == "binary" or self.average == "micro":
            value = self._stat_read(0 if self.task == "binary" else None)[0]
            if math.isnan(value):
                warn_undefined(self._name, undefined_what)
            return value
        per = np.array([self._stat_read(c)[0] for c in range(self._state.n_columns)])
        return self._average(per, undefined_what)

    # -- helpers (call under the lock) -----------------------------------------------------------
    def _counts(self, column: int | None, positive_thresholds: bool = False) -> ThresholdCounts:
        """Counts of one column (None: every column pooled) from the score state."""
        if column is None:
            return self._state.pooled_counts(positive_thresholds=positive_thresholds)
        return self._state.counts(column, positive_thresholds=positive_thresholds)

    def _average(self, values: np.ndarray, undefined_what: str) -> Any:
        undefined = np.isnan(values)
        if undefined.any():
            warn_undefined(self._name, undefined_what, np.flatnonzero(undefined))
        if self.average is None:
            return values
        weights = self._state.support() if self.average == "weighted" else None
        return average_classes(values, weights, skip_nan=True)


class AUROC(_Ranking):
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
    (:func:`streammetrics._curves.roc_auc_bounds`). ``multi_class="ovo"`` is refused there:
    the binned state pools each column's negatives over classes, which leaves AUC(i|j)
    unbounded.

    Parameters
    ----------
    num_classes : int, optional
        ``None``: binary (scores shape (n,)); C: multiclass (scores (n, C)); L with
        ``multilabel=True``.
    multilabel : bool, default False
        Labels and scores are (n, L) matrices.
    average : {'macro', 'weighted', 'micro', None}, default 'macro'
        Multiclass / multilabel: the mean over classes, weighted by support, pooled over every
        (sample, class) pair, or ``None`` for the per-class array.
    ignore_index : int, optional
        Rows whose ``y_true`` equals it are skipped.
    max_fpr : float, optional
        The McClish-standardised partial AUROC up to this false positive rate, in (0, 1].
    multi_class : {'ovr', 'ovo'}, default 'ovr'
        Multiclass: one-vs-rest per class, or Hand & Till's one-vs-one.
    max_bytes : int, optional
        A memory budget for the whole state: exact until it is reached, then adaptive mergeable bins
        with certified ``bounds()`` (docs/definitions/ranking.md#bounded-memory).
    thresholds : array-like, optional
        Fixed bin edges instead of adaptive bins (exclusive with ``max_bytes``).
    scores : {'raw', 'logit', 'probability'}, default 'raw'
        The declared score range, used to place adaptive bins (bins only).
    classes, pos_label : optional
        Labels as the data has them (see :class:`~streammetrics.Accuracy`).

    Examples
    --------
    >>> import streammetrics as sm
    >>> sm.AUROC().update([0, 0, 1, 1], [0.1, 0.4, 0.35, 0.8]).compute()
    0.75
    >>> scores = [[0.8, 0.1, 0.1], [0.2, 0.5, 0.3], [0.1, 0.2, 0.7], [0.3, 0.4, 0.3]]
    >>> m = sm.AUROC(3, average=None).update([0, 1, 2, 2], scores)
    >>> m.compute()
    array([1.   , 1.   , 0.875])
    """

    _name = "AUROC"

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
        thresholds: Any = None,
        scores: str = "raw",
        classes: Any = None,
        pos_label: Any = None,
    ) -> None:
        if multi_class not in ("ovr", "ovo"):
            raise ValueError(f"multi_class: must be 'ovr' or 'ovo', got {multi_class!r}")
        self.multi_class = multi_class
        if max_fpr is not None:
            if isinstance(max_fpr, bool) or not isinstance(max_fpr, (int, float, np.floating, np.integer)):
                raise ValueError(f"max_fpr: must be a number in (0, 1], got {max_fpr!r}")
            max_fpr = float(max_fpr)
            if not 0.0 < max_fpr <= 1.0:
                raise ValueError(f"max_fpr: must be in (0, 1], got {max_fpr!r}")
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

    def _ovo(self) -> float:
        st: Any = self._state  # the exact one-vs-one layout (the constructor refuses bins)
        u2 = st.u2()
        w = st.totals()[0]  # weight of every class (the same in every column)
        c = st.n_columns
        pairs: list[float] = []
        prev: list[float] = []
        missing: set[int] = set()
        for i in range(c):
            for j in range(i + 1, c):
                if w[i] <= 0 or w[j] <= 0:
                    missing.update(k for k in (i, j) if w[k] <= 0)
                    continue
                if self.max_fpr is not None:
                    a_ij = roc_auc_from_counts(self._pair_counts(i, j), self.max_fpr)
                    a_ji = roc_auc_from_counts(self._pair_counts(j, i), self.max_fpr)
                else:
                    den = 2.0 * w[i] * w[j]
                    a_ij, a_ji = float(u2[i, j]) / den, float(u2[j, i]) / den
                pairs.append((a_ij + a_ji) / 2.0)
                prev.append(w[i] + w[j])
        if missing:
            warn_undefined(self._name, "class absent: its one-vs-one pairs are left out", sorted(missing))
        if not pairs:
            return math.nan
        if self.average == "weighted":
            return float(np.average(pairs, weights=prev))
        return float(np.mean(pairs))

    def _pair_counts(self, i: int, j: int) -> ThresholdCounts:
        st: Any = self._state  # the exact one-vs-one layout
        pv, pw = st.group(i, i)
        nv, nw = st.group(i, j)
        return counts_from_sorted(pv, pw, nv, nw)

    def _stat(self, column: int | None) -> tuple[float, float, float]:
        if self.max_fpr is None or self.max_fpr == 1.0:  # the full area: the state's pair counts
            return self._state.auroc(column) if column is not None else self._state.pooled_auroc()
        return roc_auc_certified(self._counts(column), self.max_fpr)

    def _values(self) -> tuple[Any, Any, Any]:
        if self.multi_class == "ovo":
            v = self._ovo()
            return v, v, v
        return super()._values()

    def _compute(self) -> Any:
        if self.multi_class == "ovo":
            return self._ovo()
        return self._scalar_compute("no positives or no negatives")

    def interval(self, confidence: float = 0.95) -> Any:
        """DeLong confidence interval (O(n log n), Sun & Xu's algorithm): AUROC ± z·sqrt(Var),
        clipped to [0, 1]. Binary gives a (low, high) pair; multiclass/multilabel with
        ``average=None`` gives two per-class arrays. Undefined (fewer than two positives or
        negatives) gives nan. Not available with ``max_fpr``, one-vs-one, or other averages."""
        z = z_value(confidence)
        if not getattr(self._state, "keeps_scores", False):
            raise ValueError("interval: DeLong's interval needs the exact state (no max_bytes/thresholds)")
        if self.max_fpr is not None or self.multi_class == "ovo":
            raise ValueError("interval: DeLong's interval is for the full one-vs-rest AUROC only")
        if self.task != "binary" and self.average is not None:
            raise ValueError(
                "interval: defined for binary and per-class (average=None) values, "
                f"not average={self.average!r}"
            )
        st: Any = self._state  # keeps every score (checked above)
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
            warn_undefined("AUROC interval", what, None if self.task == "binary" else undefined)
        if self.task == "binary":
            return float(lo[0]), float(hi[0])
        return lo, hi


class AveragePrecision(_Ranking):
    """Average precision AP = sum_k (R_k - R_{k-1}) P_k over the distinct thresholds in decreasing
    order, R_0 = 0 (step, no interpolation; ``sklearn.metrics.average_precision_score``).

    ``interpolated=True``: P_k replaced by max_{r' >= R_k} P(r'). ``eleven_point=True``: the mean
    of that interpolated precision at recall 0, 0.1, ..., 1. ``average`` as for AUROC (macro AP
    over classes is mAP). Undefined without positives (nan + ``UndefinedMetricWarning``).

    Complexity: the first ``compute`` O(n) per class (a merge of the sorted runs, then the
    precision at the distinct positive scores); later ones, unweighted, O(P + m log n) per class
    (P distinct positive scores, m samples added since the last read: the counts at the
    positive scores are kept and brought up to date, nothing is re-sorted or re-merged); a
    repeated read with no change in between is O(1) (memoised, as for every ranking metric).

    Binned (``max_bytes`` / ``thresholds``): ``compute`` treats each bin as tied scores (O(bins)
    per class) and ``bounds()`` certifies it: step AP by
    :func:`streammetrics._bins.ap_bounds`, interpolated / 11-point AP from the bin edges (low
    end, = ``compute()``) and the bins' best corners (high end), see
    :func:`streammetrics._curves.average_precision_bounds`.

    Parameters
    ----------
    num_classes : int, optional
        ``None``: binary (scores shape (n,)); C: multiclass (scores (n, C)); L with
        ``multilabel=True``.
    multilabel : bool, default False
        Labels and scores are (n, L) matrices.
    average : {'macro', 'weighted', 'micro', None}, default 'macro'
        Multiclass / multilabel: the mean over classes, weighted by support, pooled over every
        (sample, class) pair, or ``None`` for the per-class array.
    ignore_index : int, optional
        Rows whose ``y_true`` equals it are skipped.
    interpolated : bool, default False
        Replace each precision by the best precision at the same or a higher recall.
    eleven_point : bool, default False
        The mean interpolated precision at recall 0, 0.1, ..., 1.
    max_bytes : int, optional
        A memory budget for the whole state: exact until it is reached, then adaptive mergeable bins
        with certified ``bounds()`` (docs/definitions/ranking.md#bounded-memory).
    thresholds : array-like, optional
        Fixed bin edges instead of adaptive bins (exclusive with ``max_bytes``).
    scores : {'raw', 'logit', 'probability'}, default 'raw'
        The declared score range, used to place adaptive bins (bins only).
    classes, pos_label : optional
        Labels as the data has them (see :class:`~streammetrics.Accuracy`).

    Examples
    --------
    >>> import streammetrics as sm
    >>> sm.AveragePrecision().update([0, 0, 1, 1], [0.1, 0.4, 0.35, 0.8]).compute()
    0.8333333333333333
    """

    _name = "AveragePrecision"

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
        thresholds: Any = None,
        scores: str = "raw",
        classes: Any = None,
        pos_label: Any = None,
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

    def _stat(self, column: int | None) -> tuple[float, float, float]:
        counts = self._counts(column, positive_thresholds=True)
        return average_precision_certified(counts, self.interpolated, self.eleven_point)

    def _compute(self) -> Any:
        return self._scalar_compute("no positives")


class CurveMetric(_Ranking):
    """Base of the curve accumulators (ROC, PR, DET): binary gives one result;
    multiclass/multilabel give a list with one curve per class (in class order), or one pooled
    curve with ``average="micro"``. A curve subclass gives ``_curve(counts)`` and ``_check``;
    ``bounds()`` certifies its area (the AUROC unless ``_stat`` says otherwise).

    Parameters
    ----------
    num_classes : int, optional
        ``None``: binary (scores shape (n,)); C: multiclass (scores (n, C)); L with
        ``multilabel=True``.
    multilabel : bool, default False
        Labels and scores are (n, L) matrices.
    average : {'macro', 'weighted', 'micro', None}, default 'macro'
        Multiclass / multilabel: the mean over classes, weighted by support, pooled over every
        (sample, class) pair, or ``None`` for the per-class array.
    ignore_index : int, optional
        Rows whose ``y_true`` equals it are skipped.
    max_bytes : int, optional
        A memory budget for the whole state: exact until it is reached, then adaptive mergeable bins
        with certified ``bounds()`` (docs/definitions/ranking.md#bounded-memory).
    thresholds : array-like, optional
        Fixed bin edges instead of adaptive bins (exclusive with ``max_bytes``).
    scores : {'raw', 'logit', 'probability'}, default 'raw'
        The declared score range, used to place adaptive bins (bins only).
    classes, pos_label : optional
        Labels as the data has them (see :class:`~streammetrics.Accuracy`).

    Examples
    --------
    >>> import streammetrics as sm
    >>> roc = sm.ROCCurve().update([0, 0, 1, 1], [0.1, 0.4, 0.35, 0.8])
    >>> isinstance(roc, sm.ranking.CurveMetric)
    True
    """

    def _curve(self, counts: ThresholdCounts) -> Any:
        raise NotImplementedError

    def _check(self, counts: ThresholdCounts) -> None:
        raise NotImplementedError

    def _stat(self, column: int | None) -> tuple[float, float, float]:
        """The certified area the curve's ``bounds()`` report: the AUROC (PR curves: step AP)."""
        if column is None:
            return self._state.pooled_auroc()
        return self._state.auroc(column)

    def _compute(self) -> Any:
        if self.task == "binary" or self.average == "micro":
            counts = self._counts(0 if self.task == "binary" else None)
            self._check(counts)
            return self._curve(counts)
        out = []
        bad = []
        for c in range(self._state.n_columns):
            counts = self._counts(c)
            if counts.total_pos <= 0 or (self._needs_neg and counts.total_neg <= 0):
                bad.append(c)
            out.append(self._curve(counts))
        if bad:
            warn_undefined(self._name, self._what, bad)
        return out

    _needs_neg = True
    _what = "no positives or no negatives"

    def plot(self, ax: Any = None, *, labels: Any = None, **kwargs: Any) -> Any:
        """Draw the current curve (one per class for multiclass / multilabel, named by ``labels``
        or the ``classes`` given) and return the display; see
        :func:`streammetrics.plot.plot_curves` (matplotlib needed: the ``plot`` extra)."""
        from .plot import plot_curves

        value = self.compute()
        if labels is None and isinstance(value, list) and self._labels.mapping is not None:
            labels = [str(c) for c in self._labels.mapping.classes][: len(value)]
        return plot_curves(value, ax, labels=labels, **kwargs)


class ROCCurve(CurveMetric):
    """The ROC curve (FPR(t), TPR(t)) at every distinct score t, starting at (0, 0) for t = +inf;
    ``compute()`` returns a :class:`ROCCurveResult` (``fpr``, ``tpr``, ``thresholds``,
    ``best_threshold``, ``at``, ``area``) equal to ``sklearn.metrics.roc_curve(...,
    drop_intermediate=False)``, or with ``drop_intermediate=True`` to scikit-learn's default.
    Multiclass / multilabel: a list with one curve per class (one-vs-rest, in class order), or
    one pooled curve with ``average="micro"``. O(n log n) per ``compute`` (a linear merge of the
    sorted positives and negatives, then a ranking of the distinct scores).

    Binned (``max_bytes`` / ``thresholds``): one point per bin edge, each an exact point of the
    exact curve; ``exact``, ``envelope()``, ``area_bounds(max_fpr)``, ``at`` count ranges and
    ``best_threshold``'s ``score_bound`` / ``search_range`` certify the rest
    (:class:`ROCCurveResult`); O(bins) per ``compute``.

    Parameters
    ----------
    num_classes : int, optional
        ``None``: binary (scores shape (n,)); C: multiclass (scores (n, C)); L with
        ``multilabel=True``.
    drop_intermediate : bool, default False
        Drop the points that are not corners of the curve (scikit-learn's default ``True``).
    **kw
        The arguments of :class:`CurveMetric` (``multilabel``, ``average``, ``ignore_index``,
        ``max_bytes``, ``thresholds``, ``scores``, ``classes``, ``pos_label``).

    Examples
    --------
    >>> import streammetrics as sm
    >>> curve = sm.ROCCurve().update([0, 0, 1, 1], [0.1, 0.4, 0.35, 0.8]).compute()
    >>> curve.fpr.tolist(), curve.tpr.tolist()
    ([0.0, 0.0, 0.5, 0.5, 1.0], [0.0, 0.5, 0.5, 1.0, 1.0])
    >>> curve.thresholds.tolist()
    [inf, 0.8, 0.4, 0.35, 0.1]
    """

    _name = "ROCCurve"

    def __init__(self, num_classes: int | None = None, *, drop_intermediate: bool = False, **kw: Any) -> None:
        self.drop_intermediate = bool(drop_intermediate)
        super().__init__(num_classes, **kw)

    def _config(self) -> dict[str, Any]:
        return {**super()._config(), "drop_intermediate": self.drop_intermediate}

    def _curve(self, counts: ThresholdCounts) -> ROCCurveResult:
        return ROCCurveResult(counts, self.drop_intermediate)

    def _check(self, counts: ThresholdCounts) -> None:
        if counts.total_pos <= 0 or counts.total_neg <= 0:
            warn_undefined(self._name, "no positives or no negatives: tpr or fpr is nan")


class PRCurve(CurveMetric):
    """The precision-recall curve at every distinct score (decreasing threshold); ``compute()``
    returns a :class:`PRCurveResult` (``precision``, ``recall``, ``thresholds``, ``area(method=
    "step" | "interpolated" | "eleven_point" | "trapezoid")``, ``best_threshold``, ``at``) equal to
    ``sklearn.metrics.precision_recall_curve`` reversed, without its appended (0, 1) point.
    Multiclass / multilabel: one curve per class, or one pooled curve with ``average="micro"``.
    O(n log n) per ``compute``.

    Binned (``max_bytes`` / ``thresholds``): one point per bin edge, each an exact point of the
    exact curve, with ``precision_low`` / ``precision_high`` per point, ``envelope()``,
    ``area_bounds(method)`` and the certified ``best_threshold`` (:class:`PRCurveResult`);
    O(bins) per ``compute``.

    Parameters
    ----------
    num_classes : int, optional
        ``None``: binary (scores shape (n,)); C: multiclass (scores (n, C)); L with
        ``multilabel=True``.
    multilabel : bool, default False
        Labels and scores are (n, L) matrices.
    average : {'macro', 'weighted', 'micro', None}, default 'macro'
        Multiclass / multilabel: the mean over classes, weighted by support, pooled over every
        (sample, class) pair, or ``None`` for the per-class array.
    ignore_index : int, optional
        Rows whose ``y_true`` equals it are skipped.
    max_bytes : int, optional
        A memory budget for the whole state: exact until it is reached, then adaptive mergeable bins
        with certified ``bounds()`` (docs/definitions/ranking.md#bounded-memory).
    thresholds : array-like, optional
        Fixed bin edges instead of adaptive bins (exclusive with ``max_bytes``).
    scores : {'raw', 'logit', 'probability'}, default 'raw'
        The declared score range, used to place adaptive bins (bins only).
    classes, pos_label : optional
        Labels as the data has them (see :class:`~streammetrics.Accuracy`).

    Examples
    --------
    >>> import streammetrics as sm
    >>> curve = sm.PRCurve().update([0, 0, 1, 1], [0.1, 0.4, 0.35, 0.8]).compute()
    >>> curve.precision.tolist(), curve.recall.tolist()
    ([1.0, 0.5, 0.6666666666666666, 0.5], [0.5, 0.5, 1.0, 1.0])
    >>> float(curve.area())
    0.8333333333333333
    """

    _name = "PRCurve"
    _needs_neg = False
    _what = "no positives: recall is nan"

    def _curve(self, counts: ThresholdCounts) -> PRCurveResult:
        return PRCurveResult(counts)

    def _check(self, counts: ThresholdCounts) -> None:
        if counts.total_pos <= 0:
            warn_undefined(self._name, "no positives: recall is nan")

    def _stat(self, column: int | None) -> tuple[float, float, float]:
        return average_precision_certified(self._counts(column, positive_thresholds=True))
