"""The ranking family's base: the constructor shared by AUROC, average precision and the curves
(task, labels, ``max_bytes``/``thresholds``, the score state chosen once) and the average over
columns (definitions: docs/definitions/ranking.md); the undefined-value warning is the shared
:func:`streammetrics._core.averaging.warn_undefined_nan`. The metrics
are in :mod:`streammetrics.ranking.metrics` and :mod:`streammetrics.ranking._curves`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Iterable
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from streammetrics._core.averaging import average_classes, warn_undefined_nan
from streammetrics._core.metric import M, Metric, R_co, Value
from streammetrics._core.params import Param, check_param
from streammetrics._counts.label_options import label_options
from streammetrics._counts.tasks import task_of
from streammetrics._scores.binned.bins import BinnedScores
from streammetrics._scores.exact.buffer import SortedScores
from streammetrics._scores.probability_scores import ProbabilityScores
from streammetrics._scores.protocol import ScoreState
from streammetrics._scores.thresholds import (
    ThresholdCounts,
)

_AVERAGES = ("macro", "weighted", "micro", None)
_AVERAGE = Param("choice", f"must be one of {_AVERAGES}", choices=_AVERAGES)
#: ``scores``: how a state reads the scores.
SCORES = Param("choice", "must be 'raw', 'logit' or 'probability'", choices=("raw", "logit", "probability"))


def make_state(
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
        Bound on the state's memory: adaptive bins (:class:`~streammetrics._scores.binned.bins.BinnedScores`).
    thresholds : int or array-like, optional
        Fixed bin edges instead.
    scores : str
        ``"raw"``, ``"logit"`` or ``"probability"``: the declared score range (bins; exact
        binary / multiclass ``"probability"``: the checked probability buffer shared with
        quantile calibration, :mod:`streammetrics._scores.probability_scores`).

    Returns
    -------
    ScoreState
        The exact sorted buffer without ``max_bytes`` / ``thresholds``, else the bins.

    Raises ``ValueError`` naming the argument for a bad ``scores`` or a one-vs-one layout with
    bins. O(num_classes).
    """
    if max_bytes is None and thresholds is None:
        scores = check_param(scores, "scores", SCORES)
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


class RankingMetric(Metric[R_co]):
    """Constructor, state and per-class plumbing shared by the four ranking accumulators.

    ``update`` validates a batch (vectorised) and queues a copy split by group: O(n) (O(n·C) for
    multiclass scores); a scalar sample is a tuple append. Reads fold the queue into the sorted
    buffer first (see :mod:`streammetrics._scores.exact.buffer`). Memory: one score per sample and
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
        thresholds: int | ArrayLike | None = None,
        scores: str = "raw",
        classes: Iterable[Hashable] | None = None,
        pos_label: Hashable | None = None,
    ) -> None:
        super().__init__()
        self._labels = label_options(num_classes, bool(multilabel), classes=classes, pos_label=pos_label,
                                     ignore_index=ignore_index)  # labels as users have them
        num_classes = self._labels.num_classes
        self.num_classes = num_classes
        self.multilabel = bool(multilabel)
        self.task = task_of(num_classes, self.multilabel)
        if isinstance(average, str) and average == "none":  # torchmetrics' spelling of None
            average = None
        self.average = check_param(average, "average", _AVERAGE)
        self._state: ScoreState = make_state(
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

    @property
    def is_exact(self) -> bool:
        """True when the value is exact: always for the exact state; for ``max_bytes`` while
        every bin is one distinct score; never with ``thresholds=``."""
        with self._lock:
            return bool(self._state.is_exact)

    def _by_class(self) -> bool:
        return False

    def update(self: M, y_true: ArrayLike, y_score: ArrayLike, *,  # type: ignore[override]
               sample_weight: ArrayLike | None = None) -> M:
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

    def bounds(self) -> tuple[Value, Value]:
        """Certified (low, high) interval holding the exact value on the data seen: (value,
        value) whenever the state is exact. Binned state (``max_bytes``/``thresholds``): AUROC
        A ± ½ Σ_b p_b n_b / (P N) (:func:`streammetrics._scores.thresholds.auroc_bounds`; with
        ``max_fpr``: the standardised partial areas under the ROC envelope,
        :func:`streammetrics._scores.thresholds.roc_auc_certified`), AP by
        :func:`streammetrics._scores.thresholds.average_precision_certified`; curves: those of their area
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

    def _value(self, column: int | None) -> float:
        """This metric's value for one column (None: pooled) alone; a metric whose certified
        bounds cost more than its value (binned AP) reads the value without them."""
        return self._stat(column)[0]

    def _value_read(self, column: int | None) -> float:
        """:meth:`_value`, memoised until the state changes."""
        return self._cached(("value", column), lambda: self._value(column))

    def _exact_columns(self) -> np.ndarray | None:
        """(K,) exact values of every column in one vectorised pass (low = high = value), or
        None when the metric has none for its state (then the columns are read one by one)."""
        return None

    def _column_stats(self) -> np.ndarray:
        """(K, 3) (value, low, high) of every column, memoised until the state changes (a
        read-only array: copy before handing it out). Call under the lock."""
        def every_column() -> np.ndarray:
            exact = self._exact_columns()
            if exact is not None:
                stats = np.repeat(exact[:, None], 3, axis=1)
            else:
                stats = np.array([self._stat_read(c) for c in range(self._state.n_columns)])
                stats = stats.reshape(-1, 3)
            stats.flags.writeable = False
            return stats
        return self._cached(("stats",), every_column)

    def _column_values(self) -> np.ndarray:
        """(K,) value of every column, memoised as :meth:`_column_stats` (read-only)."""
        def every_column() -> np.ndarray:
            values = self._exact_columns()
            if values is None:
                values = np.array([self._value_read(c) for c in range(self._state.n_columns)],
                                  dtype=np.float64)
            values.flags.writeable = False
            return values
        return self._cached(("values",), every_column)

    def _values(self) -> tuple[Any, Any, Any]:
        """(value, low, high): binary floats, per-class arrays, or their average (micro: from
        the pooled state). Call under the lock."""
        st = self._state
        if self.task != "binary" and self.average == "micro":
            return self._stat_read(None)
        stats = self._column_stats()
        if self.task == "binary":
            return float(stats[0, 0]), float(stats[0, 1]), float(stats[0, 2])
        if self.average is None:
            return stats[:, 0].copy(), stats[:, 1].copy(), stats[:, 2].copy()
        weights = st.support() if self.average == "weighted" else None
        return tuple(average_classes(stats[:, i], weights, skip_nan=True) for i in range(3))  # type: ignore[return-value]

    def _scalar_compute(self, undefined_what: str) -> Any:
        """The value (binary, per class or averaged) with one warning for undefined values;
        the certified bounds are not computed (``bounds()`` does)."""
        if self.task == "binary" or self.average == "micro":
            return self._value_given(self._value_read(0 if self.task == "binary" else None), None, None,
                                     undefined_what)
        return self._value_given(None, self._column_values().copy(), self._state.support, undefined_what)

    def _value_given(self, value: float | None, columns: np.ndarray | None,
                     support: Callable[[], np.ndarray] | np.ndarray | None, undefined_what: str) -> Any:
        """What ``compute`` gives from values read elsewhere (the state's, or an engine's range
        summaries): ``value`` the binary or micro (pooled) value, else ``columns`` the per-column
        values with their ``support`` (positive weight per column; a callable read only for
        ``average="weighted"``); one warning for undefined values, then the average. O(C)."""
        if columns is None:
            assert value is not None
            if math.isnan(value):
                warn_undefined_nan(self._name, undefined_what)
            return value
        undefined = np.isnan(columns)
        if undefined.any():
            warn_undefined_nan(self._name, undefined_what, np.flatnonzero(undefined))
        if self.average is None:
            return columns
        weights = None
        if self.average == "weighted":
            weights = support() if callable(support) else support
        return average_classes(columns, weights, skip_nan=True)

    # -- helpers (call under the lock) -----------------------------------------------------------
    def _counts(self, column: int | None, positive_thresholds: bool = False) -> ThresholdCounts:
        """Counts of one column (None: every column pooled) from the score state."""
        if column is None:
            return self._state.pooled_counts(positive_thresholds=positive_thresholds)
        return self._state.counts(column, positive_thresholds=positive_thresholds)
