"""The one confusion-count kernel every confusion metric is a view of (docs/definitions/confusion.md).

State (float64, weighted sums; rows = actual class, columns = predicted class):

* binary: ``counts`` (2, 2) = ``[[TN, FP], [FN, TP]]``;
* multiclass (C classes): ``counts`` (C, C) up to
  :data:`~streammetrics._counts.class_counts.DENSE_MAX_CLASSES` classes; beyond, a sparse store
  (:mod:`streammetrics._counts.class_counts`): per-class vectors (O(C)),
  or the occupied cells only for the owners that read the matrix (``cells=True``);
* multilabel (L labels): ``counts`` (L, 2, 2), one binary matrix per label, plus ``rows`` (3,) =
  (weight of rows whose labels are all right, total row weight, total squared row weight) for
  subset accuracy;
* ``counts_w2``: the same cells summing squared weights (for Wilson intervals with the effective
  sample size). While every weight seen is 1 it equals ``counts`` and is not maintained.

``update`` cost: binary, unweighted -- three ``count_nonzero`` passes over the batch plus one
validation reduction per argument; weighted or multiclass -- one blocked
``bincount`` pass (:func:`streammetrics._counts.cells.cell_counts`). Scalars (one sample,
river style) take a pure-Python path into a small pending dict that is folded into the arrays on
the next read. Memory O(C^2) (O(L) multilabel; O(C) or O(cells) sparse), independent of n.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from streammetrics._core.labels import is_sparse, label_numbers, label_rule, refuse_huge_ints
from streammetrics._core.load_checks import loading, reserve
from streammetrics._core.params import IGNORE_INDEX, check_param, real_param
from streammetrics._core.sparse_labels import multilabel_delta
from streammetrics._core.state import State, SummedState
from streammetrics._core.state_checks import check_confusion_arrays
from streammetrics._core.validation import (
    LabelBatch,
    as_column,
    check_binary_labels,
    check_class_labels,
    check_multilabel_batch,
    check_scores,
    check_weights,
    drop_ignored,
    is_scalar,
    one_label,
    one_score,
    one_value,
    one_weight,
)

from .cells import cell_counts
from .class_counts import CellStore, ClassVectors, kappa_of_matrix, load_store, sparse_layout
from .tasks import TASK, OneVsRest, one_vs_rest_of

_UNSIGNED_VIEW = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}
try:  # numpy's C function: ``np.count_nonzero`` adds a Python-level dispatch (~0.4 µs a call)
    from numpy._core.multiarray import count_nonzero as _count_nonzero
except ImportError:  # pragma: no cover - numpy < 2
    _count_nonzero = np.count_nonzero


def _over_one(a: np.ndarray) -> bool:
    """True if a non-empty integer array holds a value above 1 read as unsigned (a negative
    value wraps to a huge one), i.e. anything but 0 and 1. ``argmax`` has a far smaller fixed
    cost than a ufunc reduction (~0.3 µs vs ~1.2 µs) and the same per-element speed."""
    if a.dtype.kind == "i":
        a = a.view(_UNSIGNED_VIEW[a.dtype.itemsize])
    return bool(a[a.argmax()] > 1)


#: The native integer and bool dtypes of the binary fast path, each mapped to how the bitwise
#: OR of two such arrays is checked for values other than 0 and 1: the unsigned dtype a signed
#: one is read as (a negative value wraps to a huge one), True for an unsigned dtype (read as
#: it is), False for bool (always 0/1). Keyed by the dtype object: a dict lookup, not a chain
#: of attribute tests (the 1k-sample batch path is call-bound).
_FAST_DTYPES: dict[np.dtype[Any], Any] = {
    **{np.dtype(f"i{k}"): np.dtype(f"u{k}") for k in (1, 2, 4, 8)},
    **{np.dtype(f"u{k}"): True for k in (1, 2, 4, 8)},
    np.dtype(bool): False,
}


def _binary_label_counts(y: Any, p: Any) -> Any:
    """The delta ``("bin", n, pos, pp, either)`` of 1-D integer/bool 0/1 label arrays -- the
    sample count, the positives, the predicted positives and the samples with either -- or
    ``None`` whenever anything is unusual (then the general path validates and reports).

    The batch path at its cheapest. Validation: the bitwise OR ``y | p`` holds only 0 and 1
    exactly when both arguments do; its largest value (as unsigned) is found with ``argmax``.
    The cells are linear in the four counts (TP = pos + pp - either, TN = n - either), so the
    state sums the counts and derives the cells when it is read: five numpy calls per batch.
    """
    if type(p) is not np.ndarray or y.ndim != 1 or p.shape != y.shape:
        return None
    n = len(y)
    if n == 0:
        return None
    dt = y.dtype
    if p.dtype is dt:  # the same (builtin, native) dtype object: the common case
        check = _FAST_DTYPES.get(dt)
        if check is None:  # not a native integer/bool dtype
            return None
        either = y | p
        if check is not False:
            u = either if check is True else either.view(check)
            if u[u.argmax()] > 1:
                return None
        return ("bin", n, _count_nonzero(y), _count_nonzero(p), _count_nonzero(either))
    kind = dt.kind
    if (kind != "i" and kind != "u" and kind != "b") or not (dt.isnative and p.dtype.isnative):
        return None  # (the unsigned views below read native byte order)
    if p.dtype.kind not in "iub":
        return None
    for a in (y, p):
        if a.dtype.kind != "b" and _over_one(a):
            return None
    pos = _count_nonzero(y)
    pp = _count_nonzero(p)
    return ("bin", n, pos, pp, pos + pp - _count_nonzero(np.logical_and(y, p)))


class ConfusionCounts(SummedState):
    """Weighted confusion counts for one task configuration (see the module docstring)."""

    #: ``rows`` = (exact-match weight, total weight, total squared weight), for ``scale``.
    weight_powers = {"rows": (1.0, 1.0, 2.0)}

    def __init__(
        self,
        task: str,
        num_classes: int | None = None,
        threshold: float = 0.5,
        ignore_index: int | None = None,
        cells: bool = False,
    ) -> None:
        task = check_param(task, "task", TASK)
        threshold = real_param(threshold, "threshold")
        ignore_index = check_param(ignore_index, "ignore_index", IGNORE_INDEX)
        self.task = task
        self.num_classes = 2 if task == "binary" else int(num_classes)  # type: ignore[arg-type]
        self.threshold = threshold
        # float32 scores are compared in float32 (numpy keeps their precision): against the
        # smallest float32 >= threshold, so that `score >= threshold` holds exactly as in float64.
        with np.errstate(over="ignore"):  # a threshold beyond float32: +-inf
            t32 = np.float32(threshold)
        if float(t32) < threshold:
            t32 = np.nextafter(t32, np.float32(np.inf))
        self._threshold32 = t32
        self.ignore_index = None if ignore_index is None else int(ignore_index)
        #: whether label batches may take the binary fast path (:func:`_binary_label_counts`)
        self._binary_batches = task == "binary" and ignore_index is None
        k = self.num_classes
        #: "dense" (the arrays below), "vectors" or "cells" (a sparse store, many classes)
        self.layout = sparse_layout(task, k, bool(cells))
        self._sparse: ClassVectors | CellStore | None = None
        self._arrays = {}
        self._w2_tracked = False  # False: every weight so far was 1, counts_w2 == counts
        if self.layout != "dense":
            self._sparse = self._new_store()
            self._w2_tracked = True  # the sparse stores always keep their squared weights
        else:
            shape = (k, 2, 2) if task == "multilabel" else (k, k)
            reserve(16.0 * k * shape[1] * (shape[2] if len(shape) == 3 else 1), f"num_classes={k}")
            self._arrays = {"counts": np.zeros(shape), "counts_w2": np.zeros(shape)}
            if task == "multilabel":
                self._arrays["rows"] = np.zeros(3)
        self._pending: dict[int, float] = {}
        self._pending_w2: dict[int, float] = {}
        # Unweighted binary batches' summed (n, pos, pp, either) (Python ints, see
        # :func:`_binary_label_counts`), folded into cells 0-3 of ``counts`` (and of
        # ``counts_w2`` when tracked: unit weights) on the next read.
        self._bin = [0, 0, 0, 0]

    def key(self) -> tuple[Any, ...]:
        base = (self.task, self.num_classes, self.threshold, self.ignore_index)
        return base if self.layout == "dense" else (*base, self.layout)

    def _new_store(self) -> ClassVectors | CellStore:
        return CellStore(self.num_classes) if self.layout == "cells" else ClassVectors(self.num_classes)

    # -- preparing a batch (validation; never mutates) ---------------------------------------
    def prepare(self, y_true: Any, y_pred: Any, sample_weight: Any = None) -> Any:
        if sample_weight is None:
            # Fast paths for the two hot shapes; anything unusual (including every invalid
            # input, which must get the general path's error message) falls through.
            ty = type(y_true)
            if ty is np.ndarray:
                if self._binary_batches:
                    delta = _binary_label_counts(y_true, y_pred)
                    if delta is not None:
                        return delta
            elif ty is int and type(y_pred) is int and self.task != "multilabel":
                # one unweighted sample, Python ints
                k = self.num_classes
                if y_true == self.ignore_index:
                    return None
                if 0 <= y_true < k and 0 <= y_pred < k:
                    return ("cell", y_true * k + y_pred)
        if self.task == "multilabel" and (is_sparse(y_true) or is_sparse(y_pred)):
            if self.ignore_index is None:  # counted from the sparse structure
                return multilabel_delta(y_true, y_pred, sample_weight, self.num_classes, self.threshold)
            y_true, y_pred = (a.toarray() if is_sparse(a) else a for a in (y_true, y_pred))
        if self.task != "multilabel" and is_scalar(y_true) and is_scalar(y_pred):
            return self._prepare_one(y_true, y_pred, sample_weight)
        y, p = self._numbers(y_true, y_pred)
        if self.task == "multilabel":
            return self._prepare_multilabel(y, p, sample_weight)
        y, pred, w = self._label_rows(y, p, sample_weight)
        return self._label_counts(y, pred, w)

    def prepare_checked(self, batch: LabelBatch) -> Any:
        """The increment of a batch its maker has checked (:func:`checked_labels`): no array
        converted or checked again. A sparse multilabel batch takes the general path (counted
        from its sparse structure, which checks nothing dense). O(n) (O(n·L) multilabel)."""
        if self.task == "multilabel":
            if is_sparse(batch.y) or is_sparse(batch.p):
                return self.prepare(batch.y, batch.p, batch.w)
            if batch.y.shape[0] == 0:
                return None
            return self._multilabel_counts(batch.y, batch.p, batch.w)
        return self._label_counts(batch.y, batch.p, batch.w)

    def _label_counts(self, y: np.ndarray, pred: np.ndarray, w: np.ndarray | None) -> Any:
        """The increment of checked binary or multiclass rows (labels, predicted classes,
        weights or None). O(n)."""
        n = y.shape[0]
        if n == 0:
            return None
        y, pred, w = drop_ignored(y, pred, w, self.ignore_index)
        if self.task == "binary" and w is None:
            n = y.shape[0]
            pos = int(np.count_nonzero(y))
            pp = int(np.count_nonzero(pred))
            tp = int(np.count_nonzero(np.logical_and(y, pred)))  # any int/uint/bool mix
            return ("cells", ((0, n - pos - pp + tp), (1, pp - tp), (2, pos - tp), (3, tp)))
        if self._sparse is not None:
            return self._sparse.delta(y, pred, w)
        counts, w2 = cell_counts(y, pred, self.num_classes, w)
        return ("arrays", counts, w2, None)

    def _rule(self, name: str) -> str:
        return label_rule(name, self.task, self.num_classes, self.ignore_index)

    def _numbers(self, y_true: Any, y_pred: Any) -> tuple[np.ndarray, np.ndarray]:
        return label_numbers(y_true, y_pred, self.task, self.num_classes, self.ignore_index)

    def _label_rows(
        self, y: np.ndarray, p: np.ndarray, sample_weight: Any
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
        """A binary or multiclass batch checked: ``(labels, predicted classes, weights or
        None)``, the n rows of ``y`` (a 0-d ``y`` is one sample, with a row of scores). O(n)."""
        if y.ndim == 0:  # one sample given as a 0-d array / scalar with a row of scores
            y = y.reshape(1)
            p = p.reshape(1, -1) if (self.task == "multiclass" and p.ndim == 1) else p.reshape(1)
        y = as_column(y)
        if y.ndim != 1:
            raise ValueError(f"y_true: expected a 1-D array of labels, got shape {y.shape}")
        n = y.shape[0]
        w = check_weights(sample_weight, n)
        y = (
            check_binary_labels(y, "y_true", self.ignore_index)
            if self.task == "binary"
            else check_class_labels(y, "y_true", self.num_classes, self.ignore_index)
        )
        pred = self._predicted_classes(p, n)
        return y, pred, w

    def _predicted_classes(self, p: np.ndarray, n: int) -> np.ndarray:
        """Hard predictions from labels or scores (binary: score >= threshold; argmax)."""
        if self.task == "binary":
            p = as_column(p)
            if p.shape != (n,):
                raise ValueError(f"y_pred: expected shape ({n},) like y_true, got {p.shape}")
            if p.dtype.kind == "f":
                return self._at_or_above(check_scores(p, "y_pred"))
            return check_binary_labels(p, "y_pred")
        k = self.num_classes
        if p.ndim == 2:
            if p.shape != (n, k):
                raise ValueError(f"y_pred: expected scores of shape ({n}, {k}), got {p.shape}")
            if n == 0:
                return np.zeros(0, dtype=np.intp)
            return np.argmax(check_scores(p, "y_pred"), axis=1)
        if p.shape != (n,):
            raise ValueError(
                f"y_pred: expected labels of shape ({n},) or scores of shape ({n}, {k}), got {p.shape}"
            )
        if p.dtype.kind == "f":
            p = check_scores(p, "y_pred")
        return check_class_labels(p, "y_pred", k)

    def _at_or_above(self, scores: np.ndarray) -> np.ndarray:
        """``scores >= threshold`` exactly, whatever the float precision of ``scores``."""
        if scores.dtype == np.float32:
            return scores >= self._threshold32
        return scores >= np.float64(self.threshold)

    def _prepare_one(self, y: Any, p: Any, sample_weight: Any) -> Any:
        """The per-sample path: plain Python, a few hundred nanoseconds. The same rules and
        messages as a batch (the shared ``one_*`` helpers fall back to the array checks)."""
        for v, name in ((y, "y_true"), (p, "y_pred")):  # 10**30 is a label, not a score
            if type(v) is int and not -(2**63) <= v < 2**63:
                refuse_huge_ints(v, name, self._rule(name))
        w = 1.0 if sample_weight is None else one_weight(sample_weight)
        binary = self.task == "binary"
        k = self.num_classes
        label = one_label(y, "y_true", None if binary else k, self.ignore_index)
        p = one_value(p, "y_pred")  # a score or a label, as a batch would tell
        if isinstance(p, (float, np.floating)):  # a score (binary) or a float class label
            score = one_score(p, "y_pred")
            j = int(score >= self.threshold) if binary else one_label(score, "y_pred", k)
        else:
            j = one_label(p, "y_pred", None if binary else k)
        if label is None:
            return None
        assert j is not None
        return ("cells", ((label * k + j, w),))

    def _prepare_multilabel(self, y: np.ndarray, p: np.ndarray, sample_weight: Any) -> Any:
        num_labels = self.num_classes
        y, p, w = check_multilabel_batch(y, p, sample_weight, num_labels, "y_pred")
        n = y.shape[0]
        y = check_binary_labels(y, "y_true", self.ignore_index)
        pred = (
            self._at_or_above(check_scores(p, "y_pred"))
            if p.dtype.kind == "f"
            else check_binary_labels(p, "y_pred")
        )
        if n == 0:
            return None
        return self._multilabel_counts(y, pred, w)

    def _multilabel_counts(self, y: np.ndarray, pred: np.ndarray, w: np.ndarray | None) -> Any:
        """The increment of checked multilabel rows: ``y`` 0/1 (or ``ignore_index``), ``pred``
        0/1 or bool, shape (n, L), n > 0; ``w`` weights or None. O(n·L)."""
        num_labels = self.num_classes
        n = y.shape[0]
        cell = 2 * y.astype(np.intp) + pred + 4 * np.arange(num_labels)
        ww = np.ones(n) if w is None else w
        correct = y == pred
        if self.ignore_index is not None:
            valid = y != self.ignore_index
            cell_w = np.broadcast_to(ww[:, None], y.shape)[valid]
            cell = cell[valid]
            row_ok = (correct | ~valid).all(axis=1)
            row_w = np.where(valid.any(axis=1), ww, 0.0)
        else:
            cell_w = np.broadcast_to(ww[:, None], y.shape).ravel()
            cell = cell.ravel()
            row_ok = correct.all(axis=1)
            row_w = ww
        size = 4 * num_labels
        counts = np.bincount(cell, weights=cell_w, minlength=size).reshape(num_labels, 2, 2)
        w2 = None
        if w is not None:
            w2 = np.bincount(cell, weights=cell_w * cell_w, minlength=size)
            w2 = w2.reshape(num_labels, 2, 2)
        rows = np.array([row_w[row_ok].sum(), row_w.sum(), (row_w * row_w).sum()])
        return ("arrays", counts, w2, rows)

    # -- applying (never raises) ---------------------------------------------------------------
    def apply(self, delta: Any) -> None:
        # bumps the version itself (marked below; the per-batch path is call-bound)
        self.version += 1
        if delta is None:
            return
        tag = delta[0]
        if tag == "bin":  # unweighted binary batch: integer (n, pos, pp, either)
            b = self._bin
            b[0] += delta[1]
            b[1] += delta[2]
            b[2] += delta[3]
            b[3] += delta[4]
            return
        if tag == "cell":  # one unweighted sample
            cell = delta[1]
            self._pending[cell] = self._pending.get(cell, 0) + 1
            if self._w2_tracked:
                self._pending_w2[cell] = self._pending_w2.get(cell, 0) + 1
            return
        if tag == "cells":
            pending = self._pending
            weighted = False
            for cell, w in delta[1]:
                pending[cell] = pending.get(cell, 0) + w
                if w != 1 and w != 0 and not isinstance(w, int):
                    weighted = True
            if weighted or self._w2_tracked:
                if not self._w2_tracked:
                    self._track_w2(exclude=delta[1])
                pw2 = self._pending_w2
                for cell, w in delta[1]:
                    pw2[cell] = pw2.get(cell, 0) + (w * w if not isinstance(w, int) else w)
            return
        if tag == "rows" or tag == "cellsum":  # a batch of a sparse store
            assert self._sparse is not None
            self._sparse.apply(delta)
            return
        _, counts, w2, rows = delta
        if w2 is not None and not self._w2_tracked:
            self._track_w2()
        arrays = self._arrays
        arrays["counts"] += counts
        if self._w2_tracked:
            arrays["counts_w2"] += counts if w2 is None else w2
        if rows is not None:
            arrays["rows"] += rows

    apply.bumps_version = True  # type: ignore[attr-defined]

    def _track_w2(self, exclude: Any = ()) -> None:
        """Start maintaining ``counts_w2`` (until now equal to ``counts``)."""
        self._flush()
        # The cells of the current delta were already added to pending and flushed into counts;
        # they are about to be added to counts_w2 with their squared weights, so take them out.
        w2 = self._arrays["counts"].copy()
        flat = w2.reshape(-1)
        for cell, w in exclude:
            flat[cell] -= w
        self._arrays["counts_w2"] = w2
        self._w2_tracked = True

    def _flush(self) -> None:
        if self._sparse is not None:
            if self._pending:  # per-sample updates: flat cells -> weight (and squared weight)
                pending, pw2 = self._pending, self._pending_w2
                self._pending, self._pending_w2 = {}, {}
                self._sparse.add_cells(np.fromiter(pending.keys(), dtype=np.int64, count=len(pending)),
                                       np.fromiter(pending.values(), dtype=np.float64, count=len(pending)),
                                       np.array([float(pw2.get(c, 0.0)) for c in pending]))
            return
        n, pos, pp, either = self._bin
        if n:
            tp = pos + pp - either
            cells = [n - either, pp - tp, pos - tp, tp]  # TN, FP, FN, TP
            self._arrays["counts"].reshape(-1)[:4] += cells
            if self._w2_tracked:  # unit weights: squared weights sum to the same counts
                self._arrays["counts_w2"].reshape(-1)[:4] += cells
            self._bin = [0, 0, 0, 0]
        if self._pending:
            flat = self._arrays["counts"].reshape(-1)
            for cell, w in self._pending.items():
                flat[cell] += w
            self._pending = {}
        if self._pending_w2:
            flat = self._arrays["counts_w2"].reshape(-1)
            for cell, w in self._pending_w2.items():
                flat[cell] += w
            self._pending_w2 = {}

    # -- reads -------------------------------------------------------------------------------
    def arrays(self) -> dict[str, Any]:
        self._flush()
        if self._sparse is not None:
            return self._sparse.copy_arrays()
        out = {k: v.copy() for k, v in self._arrays.items()}
        if not self._w2_tracked:
            out["counts_w2"] = out["counts"].copy()
        return out

    def matrix(self) -> np.ndarray:
        """The count matrix (a live view: read under the owner's lock, do not modify; the
        ``"cells"`` layout builds it, O(C^2); the ``"vectors"`` layout has none)."""
        self._flush()
        if self._sparse is not None:
            return self._sparse_matrix(False)
        return self._arrays["counts"]

    def _sparse_matrix(self, squared: bool, selection: np.ndarray | None = None) -> np.ndarray:
        if not isinstance(self._sparse, CellStore):
            raise ValueError(f"matrix: a state of num_classes={self.num_classes} (more than "
                             "DENSE_MAX_CLASSES) keeps per-class counts only, not the matrix")
        return self._sparse.block(selection, squared)

    def sample_count(self) -> float:
        """Total weight in the matrix (multilabel: the first label's). O(C^2) (O(C) sparse)."""
        if self._sparse is not None:
            self._flush()
            return self._sparse.totals()[1]
        m = self.matrix()
        return float(m[0].sum() if m.ndim == 3 else m.sum())

    def matrix_w2(self) -> np.ndarray:
        self._flush()
        if self._sparse is not None:
            return self._sparse_matrix(True)
        return self._arrays["counts_w2"] if self._w2_tracked else self._arrays["counts"]

    def _whole(self) -> bool:
        """True if the reads cover every class of a sparse store (no ``labels=`` selection)."""
        return self._sparse is not None and getattr(self, "selection", None) is None

    def class_sums(self, squared: bool = False) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(diagonal, row sums, column sums) of the (selected) matrix of a multiclass or binary
        state: per class the true positives, the support and the predicted positives. O(C^2)
        dense, O(C) for the sparse stores."""
        if self._whole():
            self._flush()
            return self._sparse.class_sums(squared)  # type: ignore[union-attr]
        m = self.matrix_w2() if squared else self.matrix()
        return np.diag(m).copy(), m.sum(axis=1), m.sum(axis=0)

    def totals(self, squared: bool = False) -> tuple[float, float]:
        """(trace, total) of the (selected) multiclass or binary matrix. O(C^2) dense, O(C)
        sparse."""
        if self._whole():
            self._flush()
            return self._sparse.totals(squared)  # type: ignore[union-attr]
        m = self.matrix_w2() if squared else self.matrix()
        return float(np.trace(m)), float(m.sum())

    def kappa_sums(self, weights: str | None) -> tuple[float, float]:
        """(Σ W∘C, Σ W∘E) of Cohen's kappa with disagreement weights ``weights`` (see
        :func:`~streammetrics._counts.class_counts.kappa_of_matrix`). O(C^2) dense, O(C) sparse."""
        if self._whole():
            self._flush()
            return self._sparse.kappa(weights)  # type: ignore[union-attr]
        return kappa_of_matrix(self.matrix(), weights)

    def unit_counts(self) -> bool:
        """True if the (selected) matrix holds unit-weight counts: every cell's sum of weights
        equals its sum of squared weights and is a whole number below 2**63 (int64 output)."""
        if self._whole() and isinstance(self._sparse, CellStore):
            self._flush()
            return self._sparse.unit_counts()
        m, w2 = self.matrix(), self.matrix_w2()
        return bool(np.array_equal(m, w2) and (m == np.round(m)).all()
                    and (m.size == 0 or float(m.max()) < 2.0**63))

    def rows(self) -> np.ndarray:
        return self._arrays["rows"]

    def one_vs_rest(self, squared: bool = False) -> OneVsRest:
        """Per-class (tp, fp, fn, tn) of every class; binary gives the positive class only
        (K = 1). O(C^2) dense, O(C) sparse."""
        self._flush()
        if self._sparse is not None:
            tp, support, predicted = self._sparse.class_sums(squared)
            fp, fn = predicted - tp, support - tp
            return OneVsRest(tp, fp, fn, support.sum() - tp - fp - fn)
        a = self._arrays
        return one_vs_rest_of(self.task, a["counts_w2"] if squared and self._w2_tracked else a["counts"])

    # -- generic hooks -----------------------------------------------------------------------
    def _after_load(self) -> None:
        self._w2_tracked = True

    def merge(self, other: State) -> None:
        assert isinstance(other, ConfusionCounts)
        if self._sparse is not None or other._sparse is not None:
            self._merge_layouts(other)
            return
        if other._w2_tracked and not self._w2_tracked:
            self._track_w2()
        self._flush()
        theirs = other.arrays()
        for name, arr in self._arrays.items():
            if name == "counts_w2" and not self._w2_tracked:
                continue
            arr += theirs[name]

    def _merge_layouts(self, other: ConfusionCounts) -> None:
        """Merge where either side keeps a sparse store: a dense side is folded into the sparse
        one (a dense ``self`` first turns into ``other``'s layout). O(C^2) for a dense side."""
        self._flush()
        other._flush()
        if self._sparse is None:  # e.g. built dense under a larger DENSE_MAX_CLASSES
            mine = self.arrays()
            self.layout = other.layout
            self._sparse = self._new_store()
            self._sparse.from_matrix(mine["counts"], mine["counts_w2"])
            self._arrays = {}
            self._w2_tracked = True
        if other._sparse is None:
            theirs = other.arrays()
            self._sparse.from_matrix(theirs["counts"], theirs["counts_w2"])
        else:
            self._sparse.merge(other._sparse)

    def subtract(self, other: State) -> None:
        assert isinstance(other, ConfusionCounts)
        if isinstance(self._sparse, CellStore) and isinstance(other._sparse, CellStore):
            self._flush()
            other._flush()
            self._sparse.subtract(other._sparse)
            return
        super().subtract(other)

    def scale(self, factor: float) -> None:
        if isinstance(self._sparse, CellStore):
            self._flush()
            self._sparse.scale(float(factor))
            return
        super().scale(factor)

    def reset(self) -> None:
        self._pending = {}
        self._pending_w2 = {}
        self._bin = [0, 0, 0, 0]
        if self._sparse is not None:
            self._sparse = self._new_store()
            return
        for arr in self._arrays.values():
            arr[...] = 0
        self._w2_tracked = False

    def _check_loaded(self, arrays: Any) -> None:
        check_confusion_arrays(arrays, self.task, self.ignore_index)

    def load_arrays(self, arrays: Any) -> None:
        self._pending = {}
        self._pending_w2 = {}
        self._bin = [0, 0, 0, 0]
        if self._sparse is not None:
            self._sparse = load_store(self._new_store(), arrays, loading())
            return
        super().load_arrays(arrays)
        a = self._arrays
        if self.task == "multilabel" and a["rows"][0] > a["rows"][1]:
            raise ValueError("state: array 'rows' has more exact matches than rows")
        if np.array_equal(a["counts_w2"], a["counts"]):
            self._w2_tracked = False

    # -- grouped counting (Sliced) -------------------------------------------------------------
    def row_cells(
        self, y_true: Any, y_pred: Any, sample_weight: Any = None, out: np.ndarray | None = None
    ) -> tuple[np.ndarray, np.ndarray | None, np.ndarray | None]:
        """Each row's flat cell ``actual * C + predicted`` of a binary or multiclass batch,
        validated exactly as :meth:`prepare` validates it (same rules, same messages).

        Returns ``(cells, weights, kept)``: ``cells`` (m,) intp, the weights of those rows (or
        None), and the mask of the n input rows that were kept (None when every row was; rows
        whose ``y_true`` is ``ignore_index`` are dropped). ``out``: an intp array of n
        per-row offsets (e.g. ``group * C**2``) that the cells are added into, in place (no
        temporary of the batch's size). The grouped variant of the kernel: the caller counts
        every group's matrix with one ``bincount`` of the offset cells. Never mutates the
        state. O(n).
        """
        if self.task == "multilabel":
            raise ValueError("row_cells: defined for binary and multiclass counts, not multilabel")
        y, pred, w = self._label_rows(*self._numbers(y_true, y_pred), sample_weight)
        n = y.shape[0]
        k = self.num_classes
        if out is None:
            cells = np.multiply(y, k, dtype=np.intp, casting="unsafe")
        else:
            cells = out
            if k == 2:  # two in-place adds: no temporary
                np.add(cells, y, out=cells, casting="unsafe")
                np.add(cells, y, out=cells, casting="unsafe")
            else:
                cells += np.multiply(y, k, dtype=np.intp, casting="unsafe")
        np.add(cells, pred, out=cells, casting="unsafe")
        kept = None
        if self.ignore_index is not None and n:
            keep = y != self.ignore_index
            if not keep.all():
                kept = keep
                cells = cells[keep]
                w = None if w is None else w[keep]
        return cells, w, kept
