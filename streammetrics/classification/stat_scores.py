"""``StatScores``: the one-vs-rest counts themselves, torchmetrics' ``BinaryStatScores`` /
``MulticlassStatScores`` / ``MultilabelStatScores`` (definitions: see
docs/definitions/confusion.md, "Stat scores").

A view of the confusion-count kernel every confusion metric reads (or, with ``top_k`` > 1, of
the top-k counts of :mod:`streammetrics._counts.topk_counts`): nothing is counted twice, and in
a :class:`~streammetrics.MetricSet` it shares its state with the ratios of the same task.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable
from typing import Any

import numpy as np

from streammetrics._core.averaging import AVERAGES
from streammetrics._core.docstrings import filled
from streammetrics._core.params import Param, check_param

from ._base import ConfusionMetric

_AVERAGE = Param("choice", f"must be one of {AVERAGES}", choices=AVERAGES)

__all__ = ["StatScores"]


@filled
class StatScores(ConfusionMetric[np.ndarray]):
    """The counts ``[TP, FP, TN, FN, support]`` (support = TP + FN), per class or averaged.

    torchmetrics' ``StatScores``: binary gives one row of five counts; multiclass and
    multilabel give one row per class (``average=None``), their sum (``"micro"``), their plain
    mean over the classes (``"macro"``) or their mean weighted by support (``"weighted"``;
    with no true sample at all, the plain mean, as every weighted average here -- torchmetrics
    gives nan). Counts are weighted sums (float64).

    Parameters
    ----------
    {confusion: num_classes, multilabel}
    average : {'macro', 'micro', 'weighted', None}, default 'macro'
        How the per-class rows combine (multiclass, multilabel; torchmetrics' ``"none"`` is
        None); binary ignores it.
    {confusion: threshold, ignore_index, classes, pos_label, labels, top_k, multidim_average}

    Returns
    -------
    numpy.ndarray
        ``compute()``: shape (5,) (binary or averaged) or (C, 5) (``average=None``; with
        ``labels=``, one row per selected class); with ``multidim_average="samplewise"`` one
        such result per sample: (N, 5) or (N, C, 5).

    Notes
    -----
    Complexity: as the confusion family (``update`` O(n), O(n·C) with ``top_k`` > 1;
    ``compute`` O(C^2), O(C) with ``top_k`` > 1 or beyond ``DENSE_MAX_CLASSES`` classes;
    memory independent of n).

    Examples
    --------
    {example: confusion}
    >>> sm.StatScores().update(y_true, y_pred).compute()
    array([2., 1., 1., 1., 3.])
    >>> sm.StatScores(3, average=None).update(y3_true, y3_pred).compute()
    array([[1., 0., 3., 0., 1.],
           [0., 1., 2., 1., 1.],
           [1., 1., 1., 1., 2.]])
    """

    _takes_labels = True

    def __init__(self, num_classes: int | None = None, *, multilabel: bool = False,
                 average: str | None = "macro", threshold: float = 0.5, ignore_index: int | None = None,
                 classes: Iterable[Hashable] | None = None, pos_label: Hashable | None = None,
                 labels: Iterable[Hashable] | None = None, top_k: int = 1,
                 multidim_average: str = "global") -> None:
        super().__init__(num_classes, multilabel=multilabel, threshold=threshold, ignore_index=ignore_index,
                         zero_division=0.0, classes=classes, pos_label=pos_label, labels=labels)
        if isinstance(average, str) and average == "none":  # torchmetrics' spelling of None
            average = None
        self.average = check_param(average, "average", _AVERAGE)
        self.top_k = self._check_top_k(top_k)
        self._top_k_state()
        self.multidim_average = self._samplewise_state(multidim_average)

    def _config(self) -> dict[str, Any]:
        config = super()._config()
        config.pop("zero_division")  # (no ratio: nothing is undefined)
        config["average"] = self.average
        config["top_k"] = self.top_k
        config["multidim_average"] = self.multidim_average
        return config

    def _rows(self) -> np.ndarray:
        """(K, 5): per class [TP, FP, TN, FN, support] (binary: K = 1, the positive class);
        sample-wise (m, K, 5)."""
        s = self._state.one_vs_rest()
        return np.stack([s.tp, s.fp, s.tn, s.fn, s.tp + s.fn], axis=-1).astype(np.float64)

    def _compute(self) -> np.ndarray:
        rows = self._rows()
        if self.multidim_average == "global":
            rows = rows[None]  # one "sample": the whole stream
        if self.task == "binary":
            out = rows[:, 0]
        elif self.average is None:
            out = rows
        elif self.average == "micro":
            out = rows.sum(axis=1)
        elif rows.shape[1] == 0:
            out = np.full((rows.shape[0], 5), np.nan)
        else:
            weights = np.ones(rows.shape[:2])
            if self.average == "weighted":  # by support; a sample without any: the plain mean
                support = rows[:, :, 4]
                weights = np.where((support.sum(axis=1) > 0)[:, None], support, 1.0)
            out = (rows * weights[:, :, None]).sum(axis=1) / weights.sum(axis=1)[:, None]
        return out[0] if self.multidim_average == "global" else out
