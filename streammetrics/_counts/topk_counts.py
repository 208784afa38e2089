"""Top-k one-vs-rest counts: the kernel of the multiclass confusion ratios with ``top_k`` > 1
(docs/definitions/confusion.md, "Top-k predictions").

torchmetrics' ``top_k`` (``MulticlassPrecision(top_k=k)`` ..., torchmetrics >= 1.6, checked on
1.9): with scores of shape (n, C), each sample has ONE predicted class -- its actual class when
that is among its k highest scores, else its highest-scored class (torchmetrics'
``_refine_preds_oh``). Per class c, over the samples' weights w:

* TP_c = Σ w·[y = c, c among the top k]; PP_c = Σ w·[predicted = c]; P_c = Σ w·[y = c];
* FP_c = PP_c - TP_c, FN_c = P_c - TP_c, TN_c = n - TP_c - FP_c - FN_c.

So micro precision = micro recall = top-k accuracy, and k = C gives 1. These are sums over
samples: they merge, subtract and scale as every summed state does.

Ties: among equal scores the lower class index is taken first, both for the top k and for the
highest score (for k = 1 this is ``argmax``, as the classes read scores without ``top_k``, and
as ``torch.argmax`` does). ``torch.topk`` (torchmetrics' choice for k > 1) does not specify
which of several classes tied at the k-th highest score it keeps, nor which of tied highest
scores comes first, and on CPU neither the lower nor the higher index is kept consistently;
where no such tie decides the outcome the two agree exactly.

State: ``ovr`` (4, C) = the rows TP, FP, FN, TN; ``ovr_w2`` the same summing squared weights
(for Wilson intervals). ``update`` O(n·C) time and batch memory (one ``np.partition`` and a few
passes), state memory O(C), independent of n.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from streammetrics._core.load_checks import check_weight_pair, reserve
from streammetrics._core.state import SummedState
from streammetrics._core.state_checks import check_part_of
from streammetrics._core.validation import (
    as_column,
    as_numpy,
    check_class_labels,
    check_scores,
    check_weights,
    drop_ignored,
)

from .tasks import OneVsRest

#: Relative slack of the load checks' sums (float weights are added in another order).
_SLACK = 1e-9


def top_k_mask(scores: np.ndarray, k: int) -> np.ndarray:
    """Boolean (n, C): True where the class is among the row's ``k`` highest scores, ties at
    the k-th score broken towards the lower class index. ``scores`` (n, C) without NaN, 1 <= k
    <= C. O(n·C) (``np.partition``, no sort)."""
    n, c = scores.shape
    if k >= c:
        return np.ones((n, c), dtype=bool)
    if k == 1:
        mask = np.zeros((n, c), dtype=bool)
        mask[np.arange(n), scores.argmax(axis=1)] = True
        return mask
    kth = np.partition(scores, c - k, axis=1)[:, c - k : c - k + 1]  # the k-th highest score
    above = scores > kth
    tied = scores == kth
    room = k - above.sum(axis=1, keepdims=True)  # how many tied classes fit, >= 1
    return above | (tied & (np.cumsum(tied, axis=1) <= room))


class TopKCounts(SummedState):
    """Weighted per-class (TP, FP, FN, TN) of top-k predictions, torchmetrics' meaning (see the
    module docstring).

    Parameters
    ----------
    num_classes : int
        C >= 2; ``prepare`` takes labels in [0, C) and scores of shape (n, C).
    k : int
        1 <= k <= C (checked by the owner).
    ignore_index : int, optional
        Rows whose label equals it are skipped.
    selection : numpy.ndarray, optional
        The classes the reads cover (``labels=``), in that order; counting is unchanged.
    """

    def __init__(self, num_classes: int, k: int, ignore_index: int | None = None,
                 selection: np.ndarray | None = None) -> None:
        self.task = "multiclass"
        self.num_classes, self.k, self.ignore_index = int(num_classes), int(k), ignore_index
        self.selection = selection
        reserve(64.0 * self.num_classes, f"num_classes={self.num_classes}")
        self._arrays = {"ovr": np.zeros((4, self.num_classes)), "ovr_w2": np.zeros((4, self.num_classes))}

    def key(self) -> tuple[Any, ...]:
        sel = None if self.selection is None else tuple(int(i) for i in self.selection)
        return ("topk_counts", self.num_classes, self.k, self.ignore_index, sel)

    def prepare(self, y_true: Any, y_pred: Any, sample_weight: Any = None) -> Any:
        y = as_numpy(y_true, "y_true")
        s = as_numpy(y_pred, "y_pred")
        if y.ndim == 0:  # one sample: a label and its row of scores
            y, s = y.reshape(1), s.reshape(1, -1)
        y = as_column(y)
        if y.ndim != 1:
            raise ValueError(f"y_true: expected a 1-D array of labels, got shape {y.shape}")
        n, c = y.shape[0], self.num_classes
        if s.shape != (n, c):
            raise ValueError(f"y_pred: top_k={self.k} needs scores of shape ({n}, {c}) "
                             f"(n samples, num_classes), got shape {s.shape}")
        w = check_weights(sample_weight, n)
        y = check_class_labels(y, "y_true", c, self.ignore_index)
        s = check_scores(s, "y_pred")
        if n == 0:
            return None
        y, s, w = drop_ignored(y, s, w, self.ignore_index)
        return self.counts(y, s, w)

    def counts(self, y: np.ndarray, s: np.ndarray, w: np.ndarray | None) -> np.ndarray | None:
        """The (2, 4, C) increment (sums of weights, of squared weights) of checked rows: labels
        ``y`` (m,), scores ``s`` (m, C), weights or None. O(m·C)."""
        m, c = s.shape
        if m == 0:
            return None
        hit = top_k_mask(s, self.k)[np.arange(m), y]  # the actual class is among the top k
        pred = np.where(hit, y, s.argmax(axis=1))  # the one predicted class of each sample
        out = np.empty((2, 4, c))
        miss = ~hit  # pred == y exactly where hit: a miss is a FP of pred and a FN of y
        neither = np.ones((m, c), dtype=bool)  # class c is neither the actual nor the predicted one
        neither[np.arange(m), y] = False
        neither[np.arange(m), pred] = False
        for j, ww in enumerate((w, None if w is None else w * w)):
            # every cell a sum of its own samples' weights (never a difference of sums): a
            # weight sum and its squared-weight sum are zero together and stay a consistent pair
            tp = np.bincount(y[hit], weights=None if ww is None else ww[hit], minlength=c)
            fp = np.bincount(pred[miss], weights=None if ww is None else ww[miss], minlength=c)
            fn = np.bincount(y[miss], weights=None if ww is None else ww[miss], minlength=c)
            tn = neither.sum(axis=0) if ww is None else ww @ neither
            out[j] = tp, fp, fn, tn
        return out

    def apply(self, delta: Any) -> None:
        if delta is not None:
            self._arrays["ovr"] += delta[0]
            self._arrays["ovr_w2"] += delta[1]

    def one_vs_rest(self, squared: bool = False) -> OneVsRest:
        """Per-class (tp, fp, fn, tn) of the (selected) classes. O(C)."""
        a = self._arrays["ovr_w2" if squared else "ovr"]
        if self.selection is not None:
            a = a[:, self.selection]
        return OneVsRest(a[0].copy(), a[1].copy(), a[2].copy(), a[3].copy())

    def totals(self, squared: bool = False) -> tuple[float, float]:
        """(Σ TP, total) -- the right predictions and the samples (multiclass accuracy's trace
        and n); ``squared``: their sums of squared weights. O(C)."""
        a = self._arrays["ovr_w2" if squared else "ovr"]
        return float(a[0].sum()), float(a[:, 0].sum())

    def sample_count(self) -> float:
        """Total weight counted (every class's four counts sum to it). O(1)."""
        return float(self._arrays["ovr"][:, 0].sum())

    def _check_loaded(self, arrays: Any) -> None:
        """Squared weights consistent cell by cell; every class's four counts sum to one total;
        the supports and the predicted positives (one per sample) each sum to it."""
        ovr = arrays["ovr"]
        check_weight_pair(ovr, arrays["ovr_w2"], "arrays 'ovr'/'ovr_w2'")
        totals = ovr.sum(axis=0)
        total = float(totals.max())
        slack = _SLACK * total + 1e-300
        if abs(float(totals.min()) - total) > slack:
            i = int(np.argmin(totals))
            raise ValueError(f"state: array 'ovr' of class {i} sums to {float(totals[i])!r}, "
                             f"other classes to {total!r}")
        support = float((ovr[0] + ovr[2]).sum())
        if abs(support - total) > slack:
            raise ValueError(f"state: array 'ovr': the supports sum to {support!r}, "
                             f"not to the {total!r} samples counted")
        check_part_of(float((ovr[0] + ovr[1]).sum()), total,
                      "array 'ovr' (predicted positives vs the samples counted)")
