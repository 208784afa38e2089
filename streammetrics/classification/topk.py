"""Top-k accuracy for multiclass scores (scikit-learn's ``top_k_accuracy_score``)."""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from streammetrics._core.averaging import ZeroDivisionOption, check_zero_division, warn_undefined, zero_value
from streammetrics._core.intervals import wilson
from streammetrics._core.metric import Metric
from streammetrics._core.params import IGNORE_INDEX, Param, check_param
from streammetrics._core.state import SummedState
from streammetrics._core.state_checks import check_hit_counts
from streammetrics._core.validation import (
    as_column,
    as_numpy,
    check_class_labels,
    check_scores,
    check_weights,
    drop_ignored,
)
from streammetrics._counts.label_options import label_options

__all__ = ["TopKAccuracy"]

_NUM_CLASSES = Param("int", "must be an int >= 2", low=2)


class HitCounts(SummedState):
    """``hits`` = (weight of hits, total weight, total squared weight) of top-k membership."""

    weight_powers = {"hits": (1.0, 1.0, 2.0)}  # for ``scale``: the last entry sums w**2

    def __init__(self, num_classes: int, k: int, ignore_index: int | None) -> None:
        self.num_classes, self.k, self.ignore_index = num_classes, k, ignore_index
        self._arrays = {"hits": np.zeros(3)}

    def _check_loaded(self, arrays: Any) -> None:
        check_hit_counts(arrays["hits"])

    def key(self) -> tuple[Any, ...]:
        return ("topk", self.num_classes, self.k, self.ignore_index)

    def prepare(self, y_true: Any, y_score: Any, sample_weight: Any = None) -> Any:
        y = as_numpy(y_true, "y_true")
        s = as_numpy(y_score, "y_score")
        if y.ndim == 0:
            y, s = y.reshape(1), s.reshape(1, -1)
        c = self.num_classes
        y = as_column(y)
        if y.ndim != 1:
            raise ValueError(f"y_true: expected a 1-D array of labels, got shape {y.shape}")
        n = y.shape[0]
        if s.shape != (n, c):
            raise ValueError(f"y_score: expected scores of shape ({n}, {c}), got {s.shape}")
        w = check_weights(sample_weight, n)
        y = check_class_labels(y, "y_true", c, self.ignore_index)
        s = check_scores(s, "y_score")
        if n == 0:
            return None
        y, s, w = drop_ignored(y, s, w, self.ignore_index)
        rows = np.arange(y.shape[0])
        true_score = s[rows, y][:, None]
        # Rank of the true class as scikit-learn breaks ties: among equal scores the higher class
        # index ranks first (it reverses a stable argsort).
        ahead = (s > true_score).sum(axis=1) + (
            (s == true_score) & (np.arange(c)[None, :] > y[:, None])
        ).sum(axis=1)
        hit = ahead < self.k
        ww = np.ones(y.shape[0]) if w is None else w
        return np.array([ww[hit].sum(), ww.sum(), (ww * ww).sum()])

    def apply(self, delta: Any) -> None:
        if delta is not None:
            self._arrays["hits"] += delta


class TopKAccuracy(ZeroDivisionOption, Metric[float]):
    """Share of samples whose true class is among the k highest scores.

    Multiclass only (``num_classes`` >= 2, scores of shape (n, C)). Ties are ranked as
    scikit-learn's ``top_k_accuracy_score`` ranks them (higher class index first). ``update``
    O(n·C), ``compute`` O(1), memory O(1).

    Parameters
    ----------
    num_classes : int
        The number of classes C (>= 2); ``update`` takes labels in [0, C) and scores of shape
        (n, C).
    k : int, default 5
        How many of the highest-scored classes count as a hit (1 <= k <= C; k = 1 is accuracy
        of the argmax with scikit-learn's tie order).
    ignore_index : int, optional
        Rows whose label equals it are skipped.
    zero_division : {"warn", 0.0, 1.0, nan}, default "warn"
        The value before any sample was seen ("warn": 0.0 with an ``UndefinedMetricWarning``).
    classes : sequence, optional
        The labels as the data has them, in class order (then ``num_classes`` may be omitted;
        see :class:`~streammetrics.Accuracy`).

    Notes
    -----
    ``interval(confidence)`` is the Wilson score interval, with the effective sample size when
    weighted. Equals ``sklearn.metrics.top_k_accuracy_score(y, scores, k=k,
    labels=range(C))``.

    Examples
    --------
    >>> import streammetrics as sm
    >>> top2 = sm.TopKAccuracy(3, k=2)
    >>> _ = top2.update([0, 1], [[0.5, 0.3, 0.2], [0.6, 0.1, 0.3]])  # hit, miss
    >>> _ = top2.update([2], [[0.2, 0.3, 0.5]])                       # hit
    >>> round(top2.compute(), 4)
    0.6667
    """

    def __init__(
        self,
        num_classes: int | None = None,
        *,
        k: int = 5,
        ignore_index: int | None = None,
        zero_division: str | float = "warn",
        classes: Any = None,
    ) -> None:
        super().__init__()
        self._labels = label_options(num_classes, classes=classes, ignore_index=ignore_index)
        if self._labels.mapping is not None:  # the labels of the score columns, in order
            num_classes = len(self._labels.mapping)
        num_classes = check_param(num_classes, "num_classes", _NUM_CLASSES)
        k = check_param(k, "k", Param("int", f"must be an int in [1, num_classes={num_classes}]",
                                      low=1, high=num_classes))
        ignore_index = check_param(ignore_index, "ignore_index", IGNORE_INDEX)
        self.num_classes, self.k, self.ignore_index = num_classes, k, ignore_index
        self.zero_division = check_zero_division(zero_division)
        self._state: HitCounts = HitCounts(self.num_classes, self.k, ignore_index)

    def _config(self) -> dict[str, Any]:
        return {
            "num_classes": self.num_classes,
            "k": self.k,
            "ignore_index": self.ignore_index,
            "zero_division": self._zero_division_config(),
            **self._labels.config(),
        }

    def update(self, y_true: ArrayLike, y_score: ArrayLike, *,
               sample_weight: ArrayLike | None = None) -> TopKAccuracy:
        return self._update_state(y_true, y_score, sample_weight)

    def _compute(self) -> float:
        hits, total, _ = self._state.arrays()["hits"]
        if total == 0:
            if self.zero_division == "warn":
                warn_undefined("Top-k accuracy", "no samples")
            return zero_value(self.zero_division)
        return float(hits / total)

    def interval(self, confidence: float = 0.95) -> tuple[float, float]:
        """Wilson score interval (effective sample size with weights)."""
        with self._lock:
            hits, total, total_w2 = self._state.arrays()["hits"]
        low, high = wilson(np.array([hits]), np.array([total]), np.array([total_w2]), confidence)
        return float(low[0]), float(high[0])
