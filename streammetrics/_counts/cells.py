"""Counting a batch of (true class, predicted class, weight) rows into a confusion matrix.

:func:`cell_counts` is the confusion state's counting kernel for weighted and multiclass
batches: the (weighted) number of rows in every cell ``true * k + predicted``, and the sum of the
squared weights per cell. It walks the batch in cache-sized blocks, each block's cell indices and
squared weights computed into two reused buffers and counted with ``np.bincount``; no
batch-sized temporary is allocated (two at 1e6 rows cost more than the counting itself).
"""

from __future__ import annotations

import numpy as np

#: Rows per block: a block's cell indices and squared weights (256 KiB each) stay in cache.
_BLOCK = 1 << 15


def cell_counts(
    y: np.ndarray, pred: np.ndarray, k: int, w: np.ndarray | None
) -> tuple[np.ndarray, np.ndarray | None]:
    """``(counts, counts_w2)`` of shape (k, k): per cell (row: true class ``y``, column: predicted
    class ``pred``, both integer arrays of values in [0, k)) the weight of its rows and the sum of
    their squared weights (``None`` when ``w`` is None: unit weights, the squares equal the
    counts). Each block's bincount is added to the running totals, so the sums are taken block
    by block (a rounding difference of a few ulps from one sequential sum). O(n + k² · n / 32768).

    Parameters
    ----------
    y, pred : ndarray of int (or bool) of shape (n,)
        True and predicted classes, already checked to lie in [0, k).
    k : int
        Number of classes.
    w : ndarray of float64 of shape (n,), or None
        Sample weights (None: unit weights).

    Returns
    -------
    tuple of ndarray
        ``counts`` (float64, or int64 when ``w`` is None) and ``counts_w2`` (float64 or None).
    """
    n, size = y.shape[0], k * k
    counts = np.zeros(size, dtype=np.float64 if w is not None else np.int64)
    w2 = None if w is None else np.zeros(size)
    cell = np.empty(min(n, _BLOCK), dtype=np.intp)
    sq = None if w is None else np.empty(cell.shape[0])
    for lo in range(0, n, _BLOCK):
        hi = min(n, lo + _BLOCK)
        c = cell[: hi - lo]
        np.multiply(y[lo:hi].astype(np.intp, copy=False), k, out=c)
        c += pred[lo:hi].astype(np.intp, copy=False)
        if w is None:
            counts += np.bincount(c, minlength=size)
            continue
        assert sq is not None and w2 is not None
        wb = w[lo:hi]
        counts += np.bincount(c, weights=wb, minlength=size)
        s = sq[: hi - lo]
        np.multiply(wb, wb, out=s)
        w2 += np.bincount(c, weights=s, minlength=size)
    return counts.reshape(k, k), None if w2 is None else w2.reshape(k, k)


def cell_sums(
    y: np.ndarray, pred: np.ndarray, k: int, w: np.ndarray | None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The distinct cells ``true * k + predicted`` of a batch (int64, sorted) with their sums of
    weights and of squared weights (float64; unit weights when ``w`` is None): the sparse
    counterpart of :func:`cell_counts`, O(n log n) time and O(n) memory whatever ``k``.

    Parameters
    ----------
    y, pred : ndarray of int (or bool) of shape (n,)
        True and predicted classes, already checked to lie in [0, k).
    k : int
        Number of classes (``k * k`` fits in int64).
    w : ndarray of float64 of shape (n,), or None
        Sample weights (None: unit weights).

    Returns
    -------
    tuple of ndarray
        ``(cells, sums, sums_w2)``.
    """
    c = np.multiply(y, k, dtype=np.int64, casting="unsafe")
    c += pred.astype(np.int64, copy=False)
    if w is None:
        cells, counts = np.unique(c, return_counts=True)
        sums = counts.astype(np.float64)
        return cells, sums, sums.copy()
    cells, inverse = np.unique(c, return_inverse=True)
    size = cells.shape[0]
    return (cells, np.bincount(inverse, weights=w, minlength=size),
            np.bincount(inverse, weights=w * w, minlength=size))
