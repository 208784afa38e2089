"""Confusion counts of many classes without a C x C matrix (docs/definitions/confusion.md,
"Many classes").

A multiclass state of more than :data:`DENSE_MAX_CLASSES` classes keeps one of two sparse
stores instead of the dense (C, C) ``counts`` / ``counts_w2`` (16·C² bytes: 1.6 GB at 10^4
classes, 160 GB at 10^5):

* :class:`ClassVectors` -- per class the (weighted) true positives, support (row sums) and
  predicted positives (column sums), each with its sum of squared weights, and the three sums
  Σ w·|i-j|, Σ w·(i-j)² and Σ w·[i≠j] over the samples (actual i, predicted j) of Cohen's
  linear, quadratic and unweighted kappa (kept, not derived: a difference of two large sums
  would lose the small one). O(C) memory; every measure but the matrix itself reads from it (accuracy,
  precision ... F-beta, balanced accuracy, MCC, kappa).
* :class:`CellStore` -- only the cells that occur: sorted flat cell indices ``i·C + j`` with
  their weight sums. O(distinct (actual, predicted) pairs) memory, for the metrics that read the
  matrix (:class:`~streammetrics.ConfusionMatrix`, ``labels=`` restrictions of it). New cells
  are buffered and merged in when the buffer outgrows the store (amortised O(log) merges per
  cell).

Both give the same values as the dense matrix (the same sums, added in another order: equal
for integer weights, within a few ulps for float weights). :class:`ConfusionCounts` holds one
of them and delegates to it; the choice is made once from ``num_classes``
(:func:`sparse_layout`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from streammetrics._core.load_checks import check_fits, check_sums, check_weight_pair, reserve
from streammetrics._core.state_checks import check_part_of

from .cells import cell_sums

#: The most classes a multiclass state keeps as a dense (C, C) matrix (16 MiB of counts and
#: squared-weight counts); beyond, a sparse store (:func:`sparse_layout`).
DENSE_MAX_CLASSES = 1024

#: Largest number of classes whose flat cell indices ``i·C + j`` fit in int64.
_MAX_CELL_CLASSES = 3_037_000_499

Rows = tuple[np.ndarray, np.ndarray, "np.ndarray | None"]


def sparse_layout(task: str, num_classes: int, cells: bool) -> str:
    """The state layout of a confusion state: ``"dense"`` (binary, multilabel, and multiclass
    with at most :data:`DENSE_MAX_CLASSES` classes), else ``"cells"`` when the owner reads the
    matrix and ``"vectors"`` otherwise. O(1)."""
    if task != "multiclass" or num_classes <= DENSE_MAX_CLASSES:
        return "dense"
    if cells and num_classes > _MAX_CELL_CLASSES:
        raise ValueError(f"num_classes: a confusion matrix of more than {_MAX_CELL_CLASSES} classes "
                         f"has more cells than int64 indexes, got {num_classes}")
    return "cells" if cells else "vectors"


def _weighted_sum(values: np.ndarray, w: np.ndarray | None) -> float:
    return float(values.sum()) if w is None else float(np.dot(values, w))


def _add(target: np.ndarray, idx: np.ndarray, w: np.ndarray | None) -> None:
    """``target[idx] += w`` (1 where ``w`` is None), repeated indices summed. O(len(idx)) (a
    ``bincount`` of length C when the batch is not much shorter than C)."""
    if idx.shape[0] * 8 >= target.shape[0]:
        target += np.bincount(idx, weights=w, minlength=target.shape[0])
    else:
        np.add.at(target, idx, 1.0 if w is None else w)


def _side_sums(c: np.ndarray, power: int) -> np.ndarray:
    """``out[i] = Σ_{j<i} c_j·(i-j)**power`` for ``power`` 0, 1 or 2, by running sums of
    non-negative terms only (no cancellation). O(C)."""
    k = c.shape[0]
    before = np.zeros(k)  # Σ_{j<i} c_j
    np.cumsum(c[:-1], out=before[1:])
    if power == 0:
        return before
    lin = np.zeros(k)  # Σ_{j<i} c_j (i - j) = Σ_{t=1..i} before[t]
    np.cumsum(before[1:], out=lin[1:])
    if power == 1:
        return lin
    sq = np.zeros(k)  # sq[i+1] = sq[i] + 2 lin[i] + before[i+1]
    np.cumsum(2.0 * lin[:-1] + before[1:], out=sq[1:])
    return sq


def _expected_disagreement(support: np.ndarray, predicted: np.ndarray, weights: str | None) -> float:
    """Σ_ij W_ij · support_i · predicted_j for Cohen's disagreement weights W (None: 1 off the
    diagonal; "linear": |i-j|; "quadratic": (i-j)²), not yet divided by the total. O(C)."""
    power = {None: 0, "linear": 1}.get(weights, 2)  # type: ignore[arg-type]
    near = _side_sums(predicted, power) + _side_sums(predicted[::-1], power)[::-1]
    return float(np.dot(support, near))


def kappa_of_matrix(m: np.ndarray, weights: str | None) -> tuple[float, float]:
    """``(Σ W∘C, Σ W∘E)`` of Cohen's kappa for a dense count matrix ``m`` (E = outer(row sums,
    column sums) / total), as scikit-learn computes them. O(C²)."""
    k = m.shape[0]
    total = m.sum()
    idx = np.arange(k)
    if weights is None:
        w = 1.0 - np.eye(k)
    elif weights == "linear":
        w = np.abs(idx[:, None] - idx[None, :]).astype(np.float64)
    else:
        w = ((idx[:, None] - idx[None, :]) ** 2).astype(np.float64)
    expected = np.outer(m.sum(axis=1), m.sum(axis=0)) / total if total else np.zeros_like(m)
    return float((w * m).sum()), float((w * expected).sum())


def _disagreements(y: np.ndarray, pred: np.ndarray, w: np.ndarray | None) -> np.ndarray:
    """``[Σ w·|y-p|, Σ w·(y-p)², Σ w·[y≠p]]`` of a batch (float64: exact distances), in blocks
    of 2**16 rows (no batch-sized temporary). O(n) time, O(1) extra memory."""
    out = np.zeros(3)
    for lo in range(0, y.shape[0], 1 << 16):
        hi = lo + (1 << 16)
        d = y[lo:hi].astype(np.float64)
        d -= pred[lo:hi]
        np.abs(d, out=d)
        wb = None if w is None else w[lo:hi]
        out += (_weighted_sum(d, wb), _weighted_sum(d * d, wb), _weighted_sum((d > 0).astype(np.float64), wb))
    return out


class ClassVectors:
    """Per-class sums of a multiclass stream (see the module docstring); O(C) memory.

    Arrays (float64): ``tp``, ``support``, ``predicted`` (C,) and their ``*_w2`` sums of
    squared weights, ``disagreement`` (3,) = (Σ w·|i-j|, Σ w·(i-j)², Σ w·[i≠j]).
    """

    NAMES = ("tp", "support", "predicted", "tp_w2", "support_w2", "predicted_w2")

    def __init__(self, k: int) -> None:
        reserve(8.0 * (6 * k + 3), f"num_classes={k}")
        self.k = k
        self.arrays = {name: np.zeros(k) for name in self.NAMES}
        self.arrays["disagreement"] = np.zeros(3)

    # -- counting ------------------------------------------------------------------------------
    def delta(self, y: np.ndarray, pred: np.ndarray, w: np.ndarray | None) -> Any:
        """The increment of a checked batch (class indices in [0, C)); no state change. O(n)."""
        y = y.astype(np.intp, copy=False)
        pred = pred.astype(np.intp, copy=False)
        hit = y == pred
        return ("rows", y, pred, w, hit, _disagreements(y, pred, w))

    def apply(self, delta: Any) -> None:
        _, y, pred, w, hit, dis = delta
        a = self.arrays
        w2 = None if w is None else w * w
        for name, idx in (("support", y), ("predicted", pred), ("tp", y[hit])):
            sub = slice(None) if name != "tp" else hit
            if w is None and idx.shape[0] * 8 >= self.k:  # unit weights: one count, two sums
                counts = np.bincount(idx, minlength=self.k)
                a[name] += counts
                a[name + "_w2"] += counts
                continue
            _add(a[name], idx, None if w is None else w[sub])
            _add(a[name + "_w2"], idx, None if w2 is None else w2[sub])
        a["disagreement"] += dis

    def add_cells(self, cells: np.ndarray, counts: np.ndarray, counts_w2: np.ndarray) -> None:
        """Fold in flat cells ``i·C + j`` with their weight sums. O(len(cells))."""
        i, j = np.divmod(cells.astype(np.int64), self.k)
        a = self.arrays
        hit = i == j
        for name, idx, values in (("support", i, counts), ("predicted", j, counts),
                                  ("tp", i[hit], counts[hit]), ("support_w2", i, counts_w2),
                                  ("predicted_w2", j, counts_w2), ("tp_w2", i[hit], counts_w2[hit])):
            _add(a[name], idx, values)
        d = np.abs(i - j).astype(np.float64)
        a["disagreement"] += (float(np.dot(d, counts)), float(np.dot(d * d, counts)),
                              float(counts[~hit].sum()))

    def merge(self, other: Any) -> None:
        if isinstance(other, ClassVectors):
            for name, arr in self.arrays.items():
                arr += other.arrays[name]
        else:
            self.add_cells(*other.cell_arrays())

    # -- reads ---------------------------------------------------------------------------------
    def class_sums(self, squared: bool = False) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        a, s = self.arrays, "_w2" if squared else ""
        return a["tp" + s].copy(), a["support" + s].copy(), a["predicted" + s].copy()

    def totals(self, squared: bool = False) -> tuple[float, float]:
        a, s = self.arrays, "_w2" if squared else ""
        return float(a["tp" + s].sum()), float(a["support" + s].sum())

    def kappa(self, weights: str | None) -> tuple[float, float]:
        """``(Σ W∘C, Σ W∘E)`` of Cohen's kappa without the matrix. O(C)."""
        a = self.arrays
        support, predicted = a["support"], a["predicted"]
        total = float(support.sum())
        observed = float(a["disagreement"][{None: 2, "linear": 0}.get(weights, 1)])  # type: ignore[arg-type]
        expected = _expected_disagreement(support, predicted, weights) / total if total else 0.0
        return observed, expected

    # -- persistence -----------------------------------------------------------------------------
    def copy_arrays(self) -> dict[str, np.ndarray]:
        return {name: arr.copy() for name, arr in self.arrays.items()}

    def load(self, arrays: dict[str, np.ndarray], untrusted: bool) -> None:
        """Replace the sums with ``arrays`` (float64, shapes, signs and finiteness checked by the
        caller); ``untrusted``: also the relations every stream of updates keeps."""
        if untrusted:
            a = arrays
            for name in ("tp", "support", "predicted"):
                check_weight_pair(a[name], a[name + "_w2"], f"arrays {name!r}/{name + '_w2'!r}")
            check_part_of(a["tp"], a["support"], "array 'tp' (true positives vs support)")
            check_part_of(a["tp"], a["predicted"], "array 'tp' (true positives vs predicted)")
            rows, cols = float(a["support"].sum()), float(a["predicted"].sum())
            check_part_of(rows, cols, "array 'support' (total weight vs 'predicted')")
            check_part_of(cols, rows, "array 'predicted' (total weight vs 'support')")
            lin, quad, wrong = (float(v) for v in a["disagreement"])
            far = float(self.k - 1)
            check_part_of(wrong, rows, "array 'disagreement' (misclassified weight vs total weight)")
            check_part_of(wrong, lin, "array 'disagreement' (misclassified weight vs linear)")
            check_part_of(lin, quad, "array 'disagreement' (linear vs quadratic)")
            check_part_of(lin, far * wrong, "array 'disagreement' (linear vs misclassified weight)")
            check_part_of(quad, far * far * wrong, "array 'disagreement' (quadratic)")
        self.arrays = {name: np.asarray(arrays[name], dtype=np.float64).copy() for name in self.arrays}

    def from_matrix(self, m: np.ndarray, m2: np.ndarray) -> None:
        """Fold in a dense (C, C) matrix and its squared-weight matrix (a state saved by a
        version that kept every C dense, or a dense state merged in). O(C²)."""
        a = self.arrays
        a["tp"] += np.diag(m)
        a["support"] += m.sum(axis=1)
        a["predicted"] += m.sum(axis=0)
        a["tp_w2"] += np.diag(m2)
        a["support_w2"] += m2.sum(axis=1)
        a["predicted_w2"] += m2.sum(axis=0)
        d = np.abs(np.arange(self.k)[:, None] - np.arange(self.k)[None, :]).astype(np.float64)
        a["disagreement"] += ((d * m).sum(), (d * d * m).sum(), m[d > 0].sum())


class CellStore:
    """The occupied cells of a C x C confusion matrix (see the module docstring).

    ``cells`` (int64, sorted, distinct) are flat indices ``i·C + j`` (actual i, predicted j);
    ``cell_counts`` / ``cell_counts_w2`` their sums of weights and of squared weights.
    """

    NAMES = ("cells", "cell_counts", "cell_counts_w2")

    def __init__(self, k: int) -> None:
        reserve(24.0 * k, f"num_classes={k}")  # its reads: per-class sums of C classes
        self.k = k
        self.cells: np.ndarray = np.zeros(0, np.int64)
        self.sums: np.ndarray = np.zeros(0)
        self.sums_w2: np.ndarray = np.zeros(0)
        self._pending: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
        self._pending_rows = 0

    # -- counting ------------------------------------------------------------------------------
    def delta(self, y: np.ndarray, pred: np.ndarray, w: np.ndarray | None) -> Any:
        """The batch's distinct cells and their sums; no state change. O(n log n)."""
        return ("cellsum", *cell_sums(y, pred, self.k, w))

    def apply(self, delta: Any) -> None:
        self.add_cells(delta[1], delta[2], delta[3])

    def add_cells(self, cells: np.ndarray, counts: np.ndarray, counts_w2: np.ndarray) -> None:
        """Buffer cells (merged in on the next read, or when the buffer outgrows the store)."""
        if cells.shape[0] == 0:
            return
        self._pending.append((cells.astype(np.int64, copy=False), counts, counts_w2))
        self._pending_rows += cells.shape[0]
        if self._pending_rows > max(self.cells.shape[0], 1 << 16):
            self.flush()

    def flush(self) -> None:
        """Merge the buffered cells into the store. O((s + p) log(s + p))."""
        if not self._pending:
            return
        parts = [(self.cells, self.sums, self.sums_w2), *self._pending]
        self._pending, self._pending_rows = [], 0
        cells = np.concatenate([p[0] for p in parts])
        sums = np.concatenate([p[1] for p in parts])
        sums_w2 = np.concatenate([p[2] for p in parts])
        self.cells, inverse = np.unique(cells, return_inverse=True)
        size = self.cells.shape[0]
        self.sums = np.bincount(inverse, weights=sums, minlength=size)
        self.sums_w2 = np.bincount(inverse, weights=sums_w2, minlength=size)

    def merge(self, other: Any) -> None:
        if not isinstance(other, CellStore):
            raise ValueError("merge: per-class counts cannot be merged into a confusion matrix "
                             "state (the cells are not kept)")
        self.add_cells(*(a.copy() for a in other.cell_arrays()))

    def cell_arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        self.flush()
        return self.cells, self.sums, self.sums_w2

    # -- reads ---------------------------------------------------------------------------------
    def _coords(self) -> tuple[np.ndarray, np.ndarray]:
        self.flush()
        return np.divmod(self.cells, self.k)

    def class_sums(self, squared: bool = False) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        i, j = self._coords()
        v = self.sums_w2 if squared else self.sums
        hit = i == j
        k = self.k
        return (np.bincount(i[hit], weights=v[hit], minlength=k), np.bincount(i, weights=v, minlength=k),
                np.bincount(j, weights=v, minlength=k))

    def totals(self, squared: bool = False) -> tuple[float, float]:
        i, j = self._coords()
        v = self.sums_w2 if squared else self.sums
        return float(v[i == j].sum()), float(v.sum())

    def kappa(self, weights: str | None) -> tuple[float, float]:
        i, j = self._coords()
        d = np.abs(i - j).astype(np.float64)
        if weights is None:
            observed = float(self.sums[d > 0].sum())
        else:
            observed = float(np.dot(d if weights == "linear" else d * d, self.sums))
        _, support, predicted = self.class_sums()
        total = float(support.sum())
        expected = _expected_disagreement(support, predicted, weights) / total if total else 0.0
        return observed, expected

    def block(self, selection: np.ndarray | None, squared: bool = False) -> np.ndarray:
        """The dense matrix of the rows and columns ``selection`` (None: all C), in that order.
        O(nnz + C + len(selection)²); ``ValueError`` if it cannot fit in memory."""
        size = self.k if selection is None else selection.shape[0]
        check_fits(8.0 * size * size, f"a confusion matrix of {size} classes")
        i, j = self._coords()
        v = self.sums_w2 if squared else self.sums
        out = np.zeros((size, size))
        if selection is None:
            out[i, j] = v
            return out
        pos = np.full(self.k, -1, dtype=np.intp)
        pos[selection] = np.arange(size)
        pi, pj = pos[i], pos[j]
        keep = (pi >= 0) & (pj >= 0)
        out[pi[keep], pj[keep]] = v[keep]
        return out

    def unit_counts(self) -> bool:
        """True if every cell holds unit-weight counts (its weights sum to its squared weights
        and to a whole number below 2**63). O(nnz)."""
        self.flush()
        s = self.sums
        return bool(np.array_equal(s, self.sums_w2) and (s == np.round(s)).all()
                    and (s.size == 0 or float(s.max()) < 2.0**63))

    # -- persistence -----------------------------------------------------------------------------
    def copy_arrays(self) -> dict[str, np.ndarray]:
        self.flush()
        return {"cells": self.cells.copy(), "cell_counts": self.sums.copy(),
                "cell_counts_w2": self.sums_w2.copy()}

    def load(self, arrays: Any, untrusted: bool) -> None:
        """Replace the cells with ``arrays`` (checked here: untrusted input). O(nnz)."""
        cells = np.asarray(arrays["cells"])
        n = cells.shape[0] if cells.ndim == 1 else -1
        if cells.ndim != 1 or cells.dtype.kind not in "iu":
            raise ValueError(f"state: array 'cells' must be a 1-D integer array, got {cells.dtype} "
                             f"of shape {cells.shape}")
        sums = []
        for name in ("cell_counts", "cell_counts_w2"):
            arr = np.asarray(arrays[name])
            if arr.shape != (n,) or arr.dtype.kind not in "biuf":
                raise ValueError(f"state: array {name!r} must hold {n} numbers like 'cells', got "
                                 f"{arr.dtype} of shape {arr.shape}")
            arr = arr.astype(np.float64)
            check_sums(arr, name)
            sums.append(arr)
        if n and (int(cells.min()) < 0 or int(cells.max()) >= self.k * self.k):
            raise ValueError(f"state: array 'cells' must hold flat cells in [0, {self.k * self.k}), got "
                             f"{int(cells.min()) if int(cells.min()) < 0 else int(cells.max())}")
        cells = cells.astype(np.int64)
        if n > 1 and not (np.diff(cells) > 0).all():
            raise ValueError("state: array 'cells' must be strictly increasing")
        if untrusted:
            check_weight_pair(sums[0], sums[1], "arrays 'cell_counts'/'cell_counts_w2'")
        self.cells, self.sums, self.sums_w2 = cells, sums[0], sums[1]
        self._pending, self._pending_rows = [], 0

    def from_matrix(self, m: np.ndarray, m2: np.ndarray) -> None:
        """Fold in a dense (C, C) matrix and its squared-weight matrix. O(C²)."""
        flat = np.flatnonzero((m != 0) | (m2 != 0))
        self.add_cells(flat.astype(np.int64), m.reshape(-1)[flat], m2.reshape(-1)[flat])

    def subtract(self, other: CellStore) -> None:
        """Remove ``other``'s cells (data this store absorbed; negatives from rounding are
        clamped to 0 and empty cells dropped). O(nnz log nnz)."""
        cells, sums, sums_w2 = other.cell_arrays()
        self.add_cells(cells, -sums, -sums_w2)
        self.flush()
        np.maximum(self.sums, 0.0, out=self.sums)
        np.maximum(self.sums_w2, 0.0, out=self.sums_w2)
        keep = (self.sums > 0) | (self.sums_w2 > 0)
        if not keep.all():
            self.cells, self.sums, self.sums_w2 = self.cells[keep], self.sums[keep], self.sums_w2[keep]

    def scale(self, factor: float) -> None:
        self.flush()
        self.sums = self.sums * factor
        self.sums_w2 = self.sums_w2 * (factor * factor)


def load_store(store: ClassVectors | CellStore, arrays: Any, untrusted: bool) -> ClassVectors | CellStore:
    """``store`` (empty) loaded with a state's ``arrays``: its own, or a dense (C, C)
    ``counts`` / ``counts_w2`` pair (a state saved when every C was kept dense), checked as
    untrusted input (``untrusted``: also the relations between the arrays). O(state size)."""
    k = store.k
    legacy = "counts" in arrays
    names = ("counts", "counts_w2") if legacy else store.NAMES + (
        ("disagreement",) if isinstance(store, ClassVectors) else ())
    extra = set(arrays) - set(names)
    if extra:
        raise ValueError(f"state: unexpected arrays {sorted(extra)}")
    for name in names:
        if name not in arrays:
            raise ValueError(f"state: missing array {name!r}")
    if isinstance(store, CellStore) and not legacy:
        store.load(arrays, untrusted)
        return store
    new: dict[str, np.ndarray] = {}
    for name in names:
        arr = np.asarray(arrays[name])
        shape = (k, k) if legacy else ((3,) if name == "disagreement" else (k,))
        if arr.shape != shape:
            raise ValueError(f"state: array {name!r} has shape {arr.shape}, expected {shape} "
                             f"(num_classes={k})")
        if arr.dtype.kind not in "biuf":
            raise ValueError(f"state: array {name!r} has non-numeric dtype {arr.dtype}")
        new[name] = arr = arr.astype(np.float64)
        check_sums(arr, name)
    if legacy:
        check_weight_pair(new["counts"], new["counts_w2"], "arrays 'counts'/'counts_w2'")
        store.from_matrix(new["counts"], new["counts_w2"])
    else:
        assert isinstance(store, ClassVectors)
        store.load(new, untrusted)
    return store
