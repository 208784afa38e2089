"""Exact ranking metrics over scores: AUROC, average precision, ROC and PR curves (SPEC section 3).

All four accumulators keep the same state, a :class:`~streammetrics._sorted_buffer.SortedScores`
buffer (one sorted copy of every score per column, at its input precision), so in a
:class:`~streammetrics.MetricSet` they share it: one ``update`` pass feeds all of them. Options
that only change the readout (``average``, ``max_fpr``, ``interpolated``, ...) are not part of the
state. Every value is exact: it equals scikit-learn's on the same data.

With ``max_bytes=`` or ``thresholds=`` the state is binned (:mod:`streammetrics._bins`; exact
while every bin is one distinct score) and every readout is certified (docs/bounded.md):
``bounds()`` holds the exact value (AUROC, also with ``max_fpr``; AP, also interpolated and
11-point), curve results carry per-point exactness, envelopes, ``area_bounds`` and
``best_threshold`` with a certified ``score_bound`` (:mod:`streammetrics._curves`). One-vs-one
AUROC and DeLong intervals need the exact state.

Tasks (SPEC section 0): ``num_classes=None`` binary (scores shape (n,)); ``num_classes=C``
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
from dataclasses import replace
from typing import Any

import numpy as np

from ._averaging import average_classes
from ._base import Metric, UndefinedMetricWarning
from ._bins import BinnedScores, _widen, ap_bounds, auroc_bounds
from ._confusion_counts import task_of
from ._curves import (
    OperatingPoint,
    PRCurveResult,
    ROCCurveResult,
    ThresholdCounts,
    average_precision,
    average_precision_bounds,
    counts_from_sorted,
    roc_auc_bounds,
    roc_auc_from_counts,
)
from ._delong import delong
from ._intervals import z_value
from ._label_options import label_options
from ._sorted_buffer import SortedScores, count2
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


def _warn(name: str, what: str, classes: Any = None) -> None:
    where = "" if classes is None else f" for classes {[int(c) for c in classes]}"
    warn(f"{name} is undefined{where} ({what}); returning nan", UndefinedMetricWarning)


def _distinct_desc(v: np.ndarray) -> np.ndarray:
    """Distinct values of an ascending array, in decreasing order."""
    if v.shape[0] == 0:
        return v.astype(np.float64)
    last = np.empty(v.shape[0], dtype=bool)
    np.not_equal(v[1:], v[:-1], out=last[:-1])
    last[-1] = True
    return v[last][::-1].astype(np.float64)


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
        self._state: Any
        if max_bytes is None and thresholds is None:
            if scores not in ("raw", "logit", "probability"):
                raise ValueError(f"scores: must be 'raw', 'logit' or 'probability', got {scores!r}")
            self._state = SortedScores(self.task, num_classes, ignore_index, self._by_class())
        else:
            if self._by_class():
                raise ValueError(
                    "multi_class: one-vs-one AUROC is not available with max_bytes/thresholds: "
                    "it compares class i's column-i scores with those of each other class j "
                    "separately, and the binned state keeps one negative histogram per column "
                    "(all other classes pooled), so AUC(i|j) has no certified bound from it; "
                    "use the exact state or one-vs-rest (multi_class='ovr')"
                )
            self._state = BinnedScores(
                self.task,
                num_classes,
                ignore_index,
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
    def _binned(self) -> bool:
        return isinstance(self._state, BinnedScores)

    @property
    def is_exact(self) -> bool:
        """True when the value is exact: always for the exact state; for ``max_bytes`` while
        every bin is one distinct score; never with ``thresholds=``."""
        if not self._binned:
            return True
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
        """Certified (low, high) interval holding the exact value on the data seen. Exact
        state: (value, value). Binned state (``max_bytes``/``thresholds``): AUROC
        A ± ½ Σ_b p_b n_b / (P N) (with ``max_fpr``: the standardised partial areas under the
        ROC envelope, :func:`streammetrics._curves.roc_auc_bounds`), the AP interval of
        :func:`streammetrics._bins.ap_bounds` (interpolated / 11-point:
        :func:`streammetrics._curves.average_precision_bounds`); curves: those of their area
        (the point-wise certificates are on the curve results: ``exact``, ``envelope()``,
        ``area_bounds()``, ``best_threshold``). Per class with ``average=None``, and for
        averages the same average of the per-class ends. O(bins)."""
        if not self._binned:
            v = self.compute()
            return v, v
        with self._lock:
            _, lo, hi = self._binned_values()
        return lo, hi

    def _bin_stats(self, pos: np.ndarray, neg: np.ndarray, exact: bool) -> tuple[float, float, float]:
        """(estimate, low, high) of this metric from one column's bins (increasing score)."""
        raise NotImplementedError

    def _binned_values(self) -> tuple[Any, Any, Any]:
        """(value, low, high) from the binned state (call under the lock); binary floats,
        per-class arrays, or their average (micro: from the pooled bins)."""
        st: BinnedScores = self._state
        if self.task != "binary" and self.average == "micro":
            _, p, n, exact = st.pooled_counts()
            return self._bin_stats(p, n, exact)
        stats = np.array(
            [self._bin_stats(*st.bins(c), st.column_exact(c)) for c in range(st.n_columns)]
        ).reshape(-1, 3)
        if self.task == "binary":
            return float(stats[0, 0]), float(stats[0, 1]), float(stats[0, 2])
        if self.average is None:
            return stats[:, 0], stats[:, 1], stats[:, 2]
        weights = (
            np.array([float(st.bins(c)[0].sum()) for c in range(st.n_columns)])
            if self.average == "weighted"
            else None
        )
        return tuple(average_classes(stats[:, i], weights, skip_nan=True) for i in range(3))  # type: ignore[return-value]

    def _binned_compute(self, undefined_what: str) -> Any:
        value, _, _ = self._binned_values()
        if self.task != "binary" and self.average == "micro":
            if isinstance(value, float) and math.isnan(value):
                _warn(self._name, undefined_what)
            return value
        st: BinnedScores = self._state
        per = np.array([self._bin_stats(*st.bins(c), st.column_exact(c))[0] for c in range(st.n_columns)])
        return self._average(per, undefined_what)

    # -- helpers (call under the lock) -----------------------------------------------------------
    def _column_counts(self, col: int, positive_thresholds: bool = False) -> ThresholdCounts:
        if self._binned:
            return replace(self._state.counts(col), binned=not self._state.column_exact(col))
        pv, pw, nv, nw = self._state.column(col)
        return counts_from_sorted(pv, pw, nv, nw, _distinct_desc(pv) if positive_thresholds else None)

    def _pooled_counts(self, positive_thresholds: bool = False) -> ThresholdCounts:
        if self._binned:
            counts, _, _, exact = self._state.pooled_counts()
            return replace(counts, binned=not exact)
        pv, pw, nv, nw = self._state.pooled()
        return counts_from_sorted(pv, pw, nv, nw, _distinct_desc(pv) if positive_thresholds else None)

    def _support(self) -> np.ndarray:
        """Weight of the positives of every column, shape (K,)."""
        if self._binned:
            return np.array([float(self._state.bins(c)[0].sum()) for c in range(self._state.n_columns)])
        tot = self._state.totals()
        return np.array([tot[c, self._state.pos_group(c)] for c in range(tot.shape[0])])

    def _average(self, values: np.ndarray, undefined_what: str) -> Any:
        undefined = np.isnan(values)
        if self.task == "binary":
            if undefined[0]:
                _warn(self._name, undefined_what)
            return float(values[0])
        if undefined.any():
            _warn(self._name, undefined_what, np.flatnonzero(undefined))
        if self.average is None:
            return values
        weights = self._support() if self.average == "weighted" else None
        return average_classes(values, weights, skip_nan=True)


class AUROC(_Ranking):
    """Area under the ROC curve = Mann-Whitney U / (P·N), a tied positive/negative pair counting
    1/2: P(f(x+) > f(x-)) + 1/2 P(f(x+) = f(x-)). Equals ``sklearn.metrics.roc_auc_score``.

    Parameters: the task arguments of SPEC section 0; ``average`` ("macro", "weighted" by
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

    def _per_column(self) -> np.ndarray:
        st = self._state
        u2 = st.u2()
        tot = st.totals()
        out = np.full(st.n_columns, math.nan)
        exact = not st.is_weighted
        for c in range(st.n_columns):
            p = st.pos_group(c)
            P = tot[c, p]
            N = tot[c].sum() - P
            if P <= 0 or N <= 0:
                continue
            if self.max_fpr is not None:
                out[c] = roc_auc_from_counts(self._column_counts(c), self.max_fpr)
            elif exact:  # exact rational: Python ints divide with one rounding
                s = int(u2[c].sum())
                out[c] = s / (2 * int(P) * int(N))
            else:
                out[c] = float(u2[c].sum()) / (2.0 * P * N)
        return out

    def _ovo(self) -> float:
        st = self._state
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
            _warn(self._name, "class absent: its one-vs-one pairs are left out", sorted(missing))
        if not pairs:
            return math.nan
        if self.average == "weighted":
            return float(np.average(pairs, weights=prev))
        return float(np.mean(pairs))

    def _pair_counts(self, i: int, j: int) -> ThresholdCounts:
        pv, pw = self._state.group(i, i)
        nv, nw = self._state.group(i, j)
        return counts_from_sorted(pv, pw, nv, nw)

    def _bin_stats(self, pos: np.ndarray, neg: np.ndarray, exact: bool) -> tuple[float, float, float]:
        if getattr(self, "max_fpr", None) not in (None, 1.0):  # ROCCurve borrows this method
            counts = _bin_counts(pos, neg, exact)
            a = roc_auc_from_counts(counts, self.max_fpr)  # type: ignore[attr-defined]
            lo, hi = roc_auc_bounds(counts, self.max_fpr)  # type: ignore[attr-defined]
            return a, lo, hi
        a, lo, hi = auroc_bounds(pos, neg)
        if exact or math.isnan(a):
            return a, a, a
        lo, hi = _widen(lo, hi)
        return a, lo, hi

    def _compute(self) -> Any:
        if self._binned:
            return self._binned_compute("no positives or no negatives")
        if self.task == "binary" and self.max_fpr is None:  # the O(1) read
            u2, P, N = self._state.binary_stat()
            if P <= 0 or N <= 0:
                _warn(self._name, "no positives or no negatives")
                return math.nan
            return u2 / (2 * P * N)  # unit weights: Python ints, one correctly rounded division
        if self.multi_class == "ovo":
            return self._ovo()
        if self.task != "binary" and self.average == "micro":
            pv, pw, nv, nw = self._state.pooled()
            if pv.shape[0] == 0 or nv.shape[0] == 0:
                _warn(self._name, "no positives or no negatives")
                return math.nan
            if self.max_fpr is not None:
                return roc_auc_from_counts(self._pooled_counts(), self.max_fpr)
            P = float(pv.shape[0] if pw is None else pw.sum())
            N = float(nv.shape[0] if nw is None else nw.sum())
            cw = None if nw is None else np.concatenate([[0.0], np.cumsum(nw)])
            u2 = count2(nv, cw, pv, pw)
            if isinstance(u2, int):
                return u2 / (2 * int(P) * int(N))
            return float(u2) / (2.0 * P * N)
        return self._average(self._per_column(), "no positives or no negatives")

    def interval(self, confidence: float = 0.95) -> Any:
        """DeLong confidence interval (O(n log n), Sun & Xu's algorithm): AUROC ± z·sqrt(Var),
        clipped to [0, 1]. Binary gives a (low, high) pair; multiclass/multilabel with
        ``average=None`` gives two per-class arrays. Undefined (fewer than two positives or
        negatives) gives nan. Not available with ``max_fpr``, one-vs-one, or other averages."""
        z = z_value(confidence)
        if self._binned:
            raise ValueError("interval: DeLong's interval needs the exact state (no max_bytes/thresholds)")
        if self.max_fpr is not None or self.multi_class == "ovo":
            raise ValueError("interval: DeLong's interval is for the full one-vs-rest AUROC only")
        if self.task != "binary" and self.average is not None:
            raise ValueError(
                "interval: defined for binary and per-class (average=None) values, "
                f"not average={self.average!r}"
            )
        with self._lock:
            cols = [self._state.column(c) for c in range(self._state.n_columns)]
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
            _warn("AUROC interval", what, None if self.task == "binary" else undefined)
        if self.task == "binary":
            return float(lo[0]), float(hi[0])
        return lo, hi


class AveragePrecision(_Ranking):
    """Average precision AP = sum_k (R_k - R_{k-1}) P_k over the distinct thresholds in decreasing
    order, R_0 = 0 (step, no interpolation; ``sklearn.metrics.average_precision_score``).

    ``interpolated=True``: P_k replaced by max_{r' >= R_k} P(r'). ``eleven_point=True``: the mean
    of that interpolated precision at recall 0, 0.1, ..., 1. ``average`` as for AUROC (macro AP
    over classes is mAP). Undefined without positives (nan + ``UndefinedMetricWarning``).

    Complexity: ``compute`` O(P log n) per class (the precision is read at the distinct positive
    scores by ranking them among the sorted negatives).

    Binned (``max_bytes`` / ``thresholds``): ``compute`` treats each bin as tied scores (O(bins)
    per class) and ``bounds()`` certifies it: step AP by
    :func:`streammetrics._bins.ap_bounds`, interpolated / 11-point AP from the bin edges (low
    end, = ``compute()``) and the bins' best corners (high end), see
    :func:`streammetrics._curves.average_precision_bounds`.
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

    def _ap(self, counts: ThresholdCounts) -> float:
        return average_precision(counts, self.interpolated, self.eleven_point)

    def _bin_stats(self, pos: np.ndarray, neg: np.ndarray, exact: bool) -> tuple[float, float, float]:
        if self.interpolated or self.eleven_point:
            counts = _bin_counts(pos, neg, exact)
            v = average_precision(counts, self.interpolated, self.eleven_point)
            lo, hi = average_precision_bounds(counts, self.interpolated, self.eleven_point)
            return v, lo, hi
        return _ap_stats(pos, neg, exact)

    def _compute(self) -> Any:
        if self._binned:
            return self._binned_compute("no positives")
        if self.task != "binary" and self.average == "micro":
            counts = self._pooled_counts(positive_thresholds=True)
            if counts.total_pos <= 0:
                _warn(self._name, "no positives")
            return self._ap(counts)
        values = np.array([self._ap(self._column_counts(c, True)) for c in range(self._state.n_columns)])
        return self._average(values, "no positives")


class _CurveMetric(_Ranking):
    """Curves: binary gives one result; multiclass/multilabel give a list with one curve per
    class (in class order), or one pooled curve with ``average="micro"``."""

    def _curve(self, counts: ThresholdCounts) -> Any:
        raise NotImplementedError

    def _check(self, counts: ThresholdCounts) -> None:
        raise NotImplementedError

    def _compute(self) -> Any:
        if self.task == "binary" or self.average == "micro":
            counts = self._column_counts(0) if self.task == "binary" else self._pooled_counts()
            self._check(counts)
            return self._curve(counts)
        out = []
        bad = []
        for c in range(self._state.n_columns):
            counts = self._column_counts(c)
            if counts.total_pos <= 0 or (self._needs_neg and counts.total_neg <= 0):
                bad.append(c)
            out.append(self._curve(counts))
        if bad:
            _warn(self._name, self._what, bad)
        return out

    _needs_neg = True
    _what = "no positives or no negatives"


class ROCCurve(_CurveMetric):
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
    (:class:`ROCCurveResult`); O(bins) per ``compute``."""

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
            _warn(self._name, "no positives or no negatives: tpr or fpr is nan")

    def _bin_stats(self, pos: np.ndarray, neg: np.ndarray, exact: bool) -> tuple[float, float, float]:
        return AUROC._bin_stats(self, pos, neg, exact)  # type: ignore[arg-type]


class PRCurve(_CurveMetric):
    """The precision-recall curve at every distinct score (decreasing threshold); ``compute()``
    returns a :class:`PRCurveResult` (``precision``, ``recall``, ``thresholds``, ``area(method=
    "step" | "interpolated" | "eleven_point" | "trapezoid")``, ``best_threshold``, ``at``) equal to
    ``sklearn.metrics.precision_recall_curve`` reversed, without its appended (0, 1) point.
    Multiclass / multilabel: one curve per class, or one pooled curve with ``average="micro"``.
    O(n log n) per ``compute``.

    Binned (``max_bytes`` / ``thresholds``): one point per bin edge, each an exact point of the
    exact curve, with ``precision_low`` / ``precision_high`` per point, ``envelope()``,
    ``area_bounds(method)`` and the certified ``best_threshold`` (:class:`PRCurveResult`);
    O(bins) per ``compute``."""

    _name = "PRCurve"
    _needs_neg = False
    _what = "no positives: recall is nan"

    def _curve(self, counts: ThresholdCounts) -> PRCurveResult:
        return PRCurveResult(counts)

    def _check(self, counts: ThresholdCounts) -> None:
        if counts.total_pos <= 0:
            _warn(self._name, "no positives: recall is nan")

    def _bin_stats(self, pos: np.ndarray, neg: np.ndarray, exact: bool) -> tuple[float, float, float]:
        return _ap_stats(pos, neg, exact)


def _bin_counts(pos: np.ndarray, neg: np.ndarray, exact: bool) -> ThresholdCounts:
    """Counts at the lower edges of one column's bins (given in increasing score; thresholds
    left as placeholders: only the counts are read)."""
    tps, fps = np.cumsum(pos[::-1]), np.cumsum(neg[::-1])
    P = float(tps[-1]) if tps.shape[0] else 0.0
    N = float(fps[-1]) if fps.shape[0] else 0.0
    return ThresholdCounts(np.zeros(tps.shape[0]), tps, fps, P, N, not exact)


def _ap_stats(pos: np.ndarray, neg: np.ndarray, exact: bool) -> tuple[float, float, float]:
    """(estimate, low, high) of the AP from one column's bins (increasing score): the estimate
    treats each bin as tied scores (the step AP at the bin edges), which lies in the interval."""
    tps, fps = np.cumsum(pos[::-1]), np.cumsum(neg[::-1])
    P = float(tps[-1]) if tps.shape[0] else 0.0
    N = float(fps[-1]) if fps.shape[0] else 0.0
    v = average_precision(ThresholdCounts(np.zeros(tps.shape[0]), tps, fps, P, N))
    if exact or math.isnan(v):
        return v, v, v
    lo, hi = _widen(*ap_bounds(pos, neg))
    return v, min(lo, v), max(hi, v)
