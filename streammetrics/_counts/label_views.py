"""Two reads of multiclass/multilabel counts that scikit-learn users expect.

* :class:`SelectedCounts` -- ``labels=`` with scikit-learn's meaning: the confusion counts of all
  classes are kept (so merges and other members of a set see every sample), and the reads cover
  the chosen classes, in the given order: the per-class one-vs-rest counts (whose FP and FN
  still count the samples of the other classes, as ``multilabel_confusion_matrix(labels=...)``
  does) and the matrix restricted to the chosen rows and columns (as
  ``confusion_matrix(labels=...)``).
* :class:`SampleRatios` -- ``average="samples"`` (multilabel): the weighted mean over samples of
  one ratio of each sample's own counts over its labels (its TP, FP, FN, TN). State: Σ w·v over
  the samples whose ratio is defined, their weight, the weight and the number of samples whose
  denominator is 0 (they take ``zero_division``, or are left out for nan, as scikit-learn's
  sample average does). O(n·L) per update (O(z) for sparse input), O(1) memory.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from streammetrics._core.labels import is_sparse, refuse_huge_ints
from streammetrics._core.sparse_labels import indicator_rows, row_counts
from streammetrics._core.state import SummedState
from streammetrics._core.validation import (
    as_numpy,
    check_binary_labels,
    check_multilabel_batch,
    check_scores,
    check_weights,
)

from .confusion_counts import ConfusionCounts
from .tasks import OneVsRest


class SelectedCounts(ConfusionCounts):
    """Confusion counts read through a selection of classes (``selection``: their indices, the
    ``labels=`` argument of the classification metrics); every other argument is
    :class:`ConfusionCounts`'. Counting is unchanged; the reads (one-vs-rest counts, matrices)
    see the selected classes only. O(1) beyond :class:`ConfusionCounts`."""

    def __init__(self, task: str, num_classes: int | None, threshold: float, ignore_index: int | None,
                 cells: bool, selection: np.ndarray) -> None:  # fmt: skip
        super().__init__(task, num_classes, threshold, ignore_index, cells=cells)
        self.selection = selection

    def key(self) -> tuple[Any, ...]:
        return (*super().key(), ("labels", tuple(int(i) for i in self.selection)))

    def one_vs_rest(self, squared: bool = False) -> OneVsRest:
        s = super().one_vs_rest(squared)  # every class's counts (O(C) for a sparse store)
        if self.task == "binary":
            return s
        i = self.selection
        return OneVsRest(s.tp[i], s.fp[i], s.fn[i], s.tn[i])

    def _restricted(self, m: np.ndarray) -> np.ndarray:
        if self.task == "multilabel":
            return m[self.selection]
        return m[np.ix_(self.selection, self.selection)]

    def matrix(self) -> np.ndarray:
        if self._sparse is not None:  # only the selected block is built
            self._flush()
            return self._sparse_matrix(False, self.selection)
        return self._restricted(super().matrix())

    def matrix_w2(self) -> np.ndarray:
        if self._sparse is not None:
            self._flush()
            return self._sparse_matrix(True, self.selection)
        return self._restricted(super().matrix_w2())


#: per-row ratio of one metric: OneVsRest of per-row arrays -> (numerator, denominator)
Ratio = Callable[[OneVsRest], tuple[np.ndarray, np.ndarray]]


class SampleRatios(SummedState):
    """``sums`` = (Σ w·v over defined samples, their weight, weight of undefined samples, number
    of undefined samples) of one per-sample ratio ``ratio`` over the labels ``selection``."""

    weight_powers = {"sums": (1.0, 1.0, 1.0, 0.0)}

    def __init__(self, name: str, ratio: Ratio, num_labels: int, threshold: float,
                 ignore_index: int | None, selection: np.ndarray | None) -> None:
        # ``ratio``: the metric's bound ``_ratio`` (a callable: shared, not copied, by ``copy``)
        self.name, self.ratio, self.num_labels = name, ratio, num_labels
        self.threshold, self.ignore_index = threshold, ignore_index
        self.selection = selection
        self._arrays = {"sums": np.zeros(4)}

    def key(self) -> tuple[Any, ...]:
        sel = None if self.selection is None else tuple(int(i) for i in self.selection)
        beta = getattr(getattr(self.ratio, "__self__", None), "beta", None)  # F-beta's parameter
        return ("samples", self.name, beta, self.num_labels, self.threshold,
                self.ignore_index, sel)

    def _check_loaded(self, arrays: Any) -> None:
        s = arrays["sums"]
        if s[3] != np.round(s[3]):
            raise ValueError("state: array 'sums' must count undefined samples in a whole number")

    def prepare(self, y_true: Any, y_pred: Any, sample_weight: Any = None) -> Any:
        L = self.num_labels
        if is_sparse(y_true) or is_sparse(y_pred):
            if self.ignore_index is not None:
                y_true, y_pred = (a.toarray() if is_sparse(a) else a for a in (y_true, y_pred))
            else:
                n = y_true.shape[0]
                y = indicator_rows(y_true, "y_true", (n, L), None)
                p = indicator_rows(y_pred, "y_pred", (n, L), self.threshold)
                if self.selection is not None:
                    y, p = y[:, self.selection], p[:, self.selection]
                return self._delta(*row_counts(y, p), p.shape[1], None, check_weights(sample_weight, n))
        rule = "labels must be 0 or 1"
        y_true, y_pred = (refuse_huge_ints(a, nm, rule) for a, nm in ((y_true, "y_true"), (y_pred, "y_pred")))
        y, p, w = check_multilabel_batch(as_numpy(y_true, "y_true"), as_numpy(y_pred, "y_pred"),
                                         sample_weight, L, "y_pred")
        y = check_binary_labels(y, "y_true", self.ignore_index)
        pred = (check_scores(p, "y_pred") >= self.threshold if p.dtype.kind == "f"
                else check_binary_labels(p, "y_pred"))
        valid = None if self.ignore_index is None else (y != self.ignore_index)
        if self.selection is not None:
            y, pred = y[:, self.selection], pred[:, self.selection]
            valid = None if valid is None else valid[:, self.selection]
        yb, pb = y == 1, pred.astype(bool)
        if valid is not None:
            yb, pb = yb & valid, pb & valid
        tp, pos, pp = (yb & pb).sum(axis=1), yb.sum(axis=1), pb.sum(axis=1)
        labels = y.shape[1] if valid is None else valid.sum(axis=1)
        return self._delta(tp, pos, pp, labels, valid, w)

    def _delta(self, tp: np.ndarray, pos: np.ndarray, pp: np.ndarray, labels: Any,
               valid: Any, w: np.ndarray | None) -> Any:
        if tp.shape[0] == 0:
            return None
        tp, pos, pp = (np.asarray(a, dtype=np.float64) for a in (tp, pos, pp))
        s = OneVsRest(tp, pp - tp, pos - tp, np.asarray(labels, dtype=np.float64) - pos - pp + tp)
        num, den = self.ratio(s)
        num = np.broadcast_to(np.asarray(num, dtype=np.float64), tp.shape)
        den = np.broadcast_to(np.asarray(den, dtype=np.float64), tp.shape)
        undefined = den == 0
        ww = np.ones(tp.shape[0]) if w is None else w
        with np.errstate(divide="ignore", invalid="ignore"):
            v = np.where(undefined, 0.0, num / np.where(undefined, 1.0, den))
        return np.array([float(np.dot(ww[~undefined], v[~undefined])), float(ww[~undefined].sum()),
                         float(ww[undefined].sum()), float(np.count_nonzero(undefined))])

    def apply(self, delta: Any) -> None:
        if delta is not None:
            self._arrays["sums"] += delta

    def value(self, zero_division: float) -> tuple[float, bool]:
        """(the sample average with ``zero_division`` for undefined samples -- nan: left out --,
        whether any sample was undefined). O(1)."""
        total, w_def, w_undef, n_undef = self.arrays()["sums"]
        if w_def + w_undef == 0:  # no sample (or only zero weights): undefined
            return float(zero_division), True
        if np.isnan(zero_division):
            return (float(total / w_def) if w_def > 0 else float("nan")), bool(n_undef)
        weight = w_def + w_undef
        return float((total + zero_division * w_undef) / weight), bool(n_undef)


def sample_average_state(metric: Any, average: str) -> Any:
    """The state of a ratio metric (precision, recall, F-beta, Jaccard, ...) for scikit-learn's
    ``average="binary"`` (binary metrics only: their state, unchanged) or ``"samples"``
    (multilabel only: a :class:`SampleRatios` over the metric's ``_ratio`` and its ``labels=``).
    ``ValueError`` naming ``average`` for any other task, as scikit-learn. O(1)."""
    task = metric.task
    if average == "binary":
        if task != "binary":
            raise ValueError(f"average: 'binary' is for binary metrics (num_classes=None), this one is "
                             f"{task}; choose 'micro', 'macro', 'weighted' or None")
        return metric._state
    if task != "multilabel":
        raise ValueError(f"average: 'samples' is for multilabel metrics, this one is {task} "
                         "(sample-wise averages need several labels per sample)")
    st = metric._state
    return SampleRatios(type(metric).__name__, metric._ratio, st.num_classes, st.threshold,
                        st.ignore_index, metric._labels.selection)
