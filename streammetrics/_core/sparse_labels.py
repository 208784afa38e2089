"""Multilabel indicator matrices kept sparse: counts read from the sparse structure.

A scipy.sparse indicator matrix of n rows and L labels with z stored ones is counted in O(z + L)
(plus O(n) per-row arithmetic), never densified: per label, the actual positives are a
``bincount`` of the column indices, the predicted positives likewise, and the true positives
those of the element-wise product; per row, the same counts from the row pointers. Every other
cell follows (FP = PP - TP, FN = P - TP, TN = n - P - PP + TP).

* :func:`indicator_rows` -- a checked CSR view of an indicator argument (0/1 values; a sparse
  float ``y_pred`` holds scores, positive iff ``score >= threshold``, which needs
  ``threshold > 0`` so that the implicit zeros stay negative);
* :func:`multilabel_delta` -- the (L, 2, 2) confusion counts, their squared-weight twin and the
  exact-match row counts of a batch, in the layout of
  :class:`~streammetrics._counts.confusion_counts.ConfusionCounts`;
* :func:`row_counts` -- per-row (TP, P, PP) for sample-wise averages (dense or sparse input).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .labels import is_sparse
from .validation import check_binary_labels, check_scores, check_weights


def indicator_rows(x: Any, name: str, shape: tuple[int, int] | None, threshold: float | None) -> Any:
    """``x`` (sparse, or a dense 2-D array) as a CSR matrix of booleans without stored zeros.

    ``threshold`` (for ``y_pred``): float values are scores, positive iff ``>= threshold``
    (``threshold`` must be > 0 for a sparse argument); ``None``: values must be 0 or 1 (a
    ``ValueError`` naming ``name`` and the first other value with its (row, column)). O(z), or
    O(n·L) for a dense argument.
    """
    from scipy import sparse

    if (is_sparse(x) and x.format == "csr" and x.dtype == bool and x.has_canonical_format
            and (shape is None or x.shape == shape) and bool(x.data.all())):
        return x  # already checked (e.g. by streammetrics.functional): O(z) to confirm
    m = sparse.csr_matrix(x, copy=True) if is_sparse(x) else sparse.csr_matrix(np.asarray(x))
    if m.ndim != 2 or (shape is not None and m.shape != shape):
        want = "(n, L)" if shape is None else str(shape)
        raise ValueError(f"{name}: expected an indicator matrix of shape {want}, got {m.shape}")
    m.sum_duplicates()
    data = m.data
    if data.dtype.kind == "f" and threshold is not None:
        check_scores(data, name)
        if not threshold > 0:
            raise ValueError(f"{name}: sparse scores need threshold > 0 (an implicit 0 would be a "
                             f"positive at threshold={threshold})")
        keep = data >= threshold
    else:
        if data.dtype.kind not in "biuf":
            raise ValueError(f"{name}: expected numbers or booleans, got dtype {data.dtype}")
        try:
            check_binary_labels(data, name)
        except ValueError:
            bad = int(np.flatnonzero((data != 0) & (data != 1))[0])
            row = int(np.searchsorted(m.indptr, bad, side="right") - 1)
            raise ValueError(f"{name}: labels must be 0 or 1; first invalid value {data[bad].item()!r} at "
                             f"index ({row}, {int(m.indices[bad])})") from None
        keep = data != 0
    out = sparse.csr_matrix((np.ones(int(keep.sum()), dtype=bool),
                             m.indices[keep], _kept_indptr(m.indptr, keep)), shape=m.shape)
    return out


def _kept_indptr(indptr: np.ndarray, keep: np.ndarray) -> np.ndarray:
    csum = np.concatenate([[0], np.cumsum(keep, dtype=np.int64)])
    return csum[indptr]


def _rows_of(m: Any) -> np.ndarray:
    return np.repeat(np.arange(m.shape[0]), np.diff(m.indptr))


def row_counts(y: Any, p: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per-row (TP, P, PP) of two checked indicators: CSR booleans or dense 0/1 arrays. O(z) or
    O(n·L)."""
    if is_sparse(y):
        both = y.multiply(p).tocsr()
        both.eliminate_zeros()
        return np.diff(both.indptr), np.diff(y.indptr), np.diff(p.indptr)
    yb, pb = y.astype(bool), p.astype(bool)
    return (yb & pb).sum(axis=1), yb.sum(axis=1), pb.sum(axis=1)


def multilabel_delta(y_true: Any, y_pred: Any, sample_weight: Any, num_labels: int,
                     threshold: float) -> Any:
    """The confusion-count increment ``("arrays", counts, counts_w2, rows)`` of a sparse batch.

    ``counts[l] = [[TN, FP], [FN, TP]]`` (weighted sums), ``rows`` = (weight of rows whose labels
    are all right, total weight, total squared weight). O(z + L + n).
    """
    n = y_true.shape[0] if hasattr(y_true, "shape") else len(y_true)
    y = indicator_rows(y_true, "y_true", (n, num_labels), None)
    p = indicator_rows(y_pred, "y_pred", (n, num_labels), threshold)
    w = check_weights(sample_weight, n)
    both = y.multiply(p).tocsr()
    both.eliminate_zeros()

    def per_label(m: Any, weights: np.ndarray | None) -> np.ndarray:
        wt = None if weights is None else weights[_rows_of(m)]
        return np.bincount(m.indices, weights=wt, minlength=num_labels).astype(np.float64)

    def cells(weights: np.ndarray | None) -> np.ndarray:
        pos, pp, tp = per_label(y, weights), per_label(p, weights), per_label(both, weights)
        total = float(n if weights is None else weights.sum())
        out = np.empty((num_labels, 2, 2))
        out[:, 1, 1] = tp
        out[:, 0, 1] = pp - tp
        out[:, 1, 0] = pos - tp
        out[:, 0, 0] = total - pos - pp + tp
        return out

    counts = cells(w)
    w2 = None if w is None else cells(w * w)
    tp_r, pos_r, pp_r = np.diff(both.indptr), np.diff(y.indptr), np.diff(p.indptr)
    exact = (pos_r + pp_r - 2 * tp_r) == 0
    ww = np.ones(n) if w is None else w
    rows = np.array([ww[exact].sum(), ww.sum(), (ww * ww).sum()])
    return ("arrays", counts, w2, rows)
