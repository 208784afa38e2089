"""Per-sample one-vs-rest counts: the kernel of ``multidim_average="samplewise"``
(torchmetrics' option; docs/definitions/confusion.md, "Sample-wise values").

Each input sample carries extra dimensions: binary ``y_true`` / ``y_pred`` of shape (N, ...),
multiclass ``y_true`` (N, ...) with ``y_pred`` labels (N, ...) or scores (N, C, ...) (argmax over
axis 1, the lower class index on ties), multilabel (N, L, ...). A sample's counts are its own
TP, FP, FN, TN per class over its extra dimensions (positions whose label is ``ignore_index``
skipped), and every metric value is read from one sample's counts: one value per sample.

State: ``counts`` (m, 4, K) float64 (rows TP, FP, FN, TN; K = 1 binary, C, or L), the m
samples in arrival order. It grows with the stream -- O(m·K) memory, 32·K bytes a sample --
unlike every other confusion state. It merges by concatenation in merge order (``a.merge(b)``:
a's samples, then b's), copies and saves as the others; it cannot subtract or rescale samples
(a ``Window`` rebuilds it from its rows; ``Decayed`` refuses it). Counts are unweighted:
``sample_weight`` is refused (a weight scales all of a sample's counts and leaves its value
unchanged). ``update`` O(N·D + N·K) time for D positions a sample (O(N·C·D) for scores).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from streammetrics._core.load_checks import reserve
from streammetrics._core.state import State
from streammetrics._core.validation import as_numpy, check_binary_labels, check_class_labels, check_scores

from .tasks import OneVsRest

MULTIDIM = ("global", "samplewise")


class SampleCounts(State):
    """Per-sample (TP, FP, FN, TN) of every class (see the module docstring).

    Parameters
    ----------
    task : {"binary", "multiclass", "multilabel"}
    num_classes : int or None
        C (multiclass) or L (multilabel); None for binary.
    threshold : float
        Binary and multilabel scores are positive at ``score >= threshold``.
    ignore_index : int, optional
        Positions whose label equals it are skipped.
    selection : numpy.ndarray, optional
        The classes the reads cover (``labels=``), in that order; counting is unchanged.
    """

    def __init__(self, task: str, num_classes: int | None, threshold: float, ignore_index: int | None,
                 selection: np.ndarray | None = None) -> None:
        self.task, self.threshold, self.ignore_index = task, float(threshold), ignore_index
        self.num_classes = num_classes
        self.k = 1 if task == "binary" else int(num_classes)  # type: ignore[arg-type]
        self.selection = selection
        self._chunks: list[np.ndarray] = []

    def key(self) -> tuple[Any, ...]:
        sel = None if self.selection is None else tuple(int(i) for i in self.selection)
        return ("sample_counts", self.task, self.k, self.threshold, self.ignore_index, sel)

    # -- a batch -------------------------------------------------------------------------------
    def prepare(self, y_true: Any, y_pred: Any, sample_weight: Any = None) -> Any:
        if sample_weight is not None:
            raise ValueError("sample_weight: multidim_average='samplewise' takes no sample weights (each "
                             "sample's value is a ratio of its own counts)")
        y = as_numpy(y_true, "y_true")
        p = as_numpy(y_pred, "y_pred")
        least = 3 if self.task == "multilabel" else 2
        if y.ndim < least:
            shape = "(N, L, ...)" if self.task == "multilabel" else "(N, ...)"
            raise ValueError(f"y_true: multidim_average='samplewise' needs labels of shape {shape} with "
                             f"at least {least} dimensions (samples, then the positions of each), got "
                             f"shape {y.shape}")
        n = y.shape[0]
        if self.task == "multilabel" and y.shape[1] != self.k:
            raise ValueError(f"y_true: expected {self.k} labels on axis 1, got shape {y.shape}")
        scores = self.task == "multiclass" and p.ndim == y.ndim + 1
        if scores:
            want = (n, self.k, *y.shape[1:])
            if p.shape != want:
                raise ValueError(f"y_pred: expected scores of shape {want} (N, C, ...), got {p.shape}")
        elif p.shape != y.shape:
            raise ValueError(f"y_pred: expected shape {y.shape} like y_true"
                             + (" (or scores (N, C, ...))" if self.task == "multiclass" else "")
                             + f", got {p.shape}")
        if n == 0 or y.size == 0:  # no sample, or samples without positions: nothing counted
            return None if n == 0 else np.zeros((n, 4, self.k))
        flat_y = y.reshape(-1)
        if self.task == "multiclass":
            flat_y = check_class_labels(flat_y, "y_true", self.k, self.ignore_index)
            if scores:
                s = check_scores(p.reshape(n, self.k, -1), "y_pred")
                pred = s.argmax(axis=1).reshape(-1)
            else:
                if p.dtype.kind == "f":
                    check_scores(p, "y_pred")
                pred = check_class_labels(p.reshape(-1), "y_pred", self.k)
        else:
            flat_y = check_binary_labels(flat_y, "y_true", self.ignore_index)
            if p.dtype.kind == "f":
                pred = check_scores(p.reshape(-1), "y_pred").astype(np.float64) >= self.threshold
            else:
                pred = check_binary_labels(p.reshape(-1), "y_pred").astype(bool)
        return self._counts(flat_y.reshape(y.shape), np.asarray(pred).reshape(y.shape))

    def _counts(self, y: np.ndarray, pred: np.ndarray) -> np.ndarray:
        """(n, 4, K) counts of checked labels and hard predictions of one shape."""
        n = y.shape[0]
        valid = np.ones(y.shape, bool) if self.ignore_index is None else (y != self.ignore_index)
        if self.task == "multiclass":
            k = self.k
            y2, p2, v2 = y.reshape(n, -1), pred.reshape(n, -1), valid.reshape(n, -1)
            row = np.broadcast_to(np.arange(n)[:, None] * k, y2.shape)
            yv, pv, rv = y2[v2].astype(np.intp), p2[v2].astype(np.intp), row[v2]
            size = n * k
            support = np.bincount(rv + yv, minlength=size).reshape(n, k)
            predicted = np.bincount(rv + pv, minlength=size).reshape(n, k)
            hit = yv == pv
            tp = np.bincount(rv[hit] + yv[hit], minlength=size).reshape(n, k)
            positions = v2.sum(axis=1)[:, None]
            fp, fn = predicted - tp, support - tp
            tn = positions - tp - fp - fn
        else:  # binary (n, ...) -> one class; multilabel (n, L, ...) -> per label
            shape = (n, 1, -1) if self.task == "binary" else (n, self.k, -1)
            yb = (y == 1).reshape(shape) & valid.reshape(shape)
            pb = pred.astype(bool).reshape(shape) & valid.reshape(shape)
            tp = (yb & pb).sum(axis=2)
            fp = (~yb & pb).sum(axis=2)
            fn = (yb & ~pb).sum(axis=2)
            tn = valid.reshape(shape).sum(axis=2) - tp - fp - fn
        return np.stack([tp, fp, fn, tn], axis=1).astype(np.float64)

    def apply(self, delta: Any) -> None:
        if delta is not None:
            self._chunks.append(delta)

    # -- reads ---------------------------------------------------------------------------------
    def counts(self) -> np.ndarray:
        """(m, 4, K): every sample's counts, in arrival order (one array: the chunks joined once).
        O(m·K)."""
        if len(self._chunks) != 1:
            joined = np.concatenate(self._chunks) if self._chunks else np.zeros((0, 4, self.k))
            self._chunks = [joined]
        return self._chunks[0]

    def one_vs_rest(self, squared: bool = False) -> OneVsRest:
        """Per-sample, per-(selected-)class counts: each field (m, K). O(m·K)."""
        if squared:
            raise ValueError("interval: not defined for sample-wise values")
        a = self.counts()
        if self.selection is not None:
            a = a[:, :, self.selection]
        return OneVsRest(a[:, 0].copy(), a[:, 1].copy(), a[:, 2].copy(), a[:, 3].copy())

    def sample_count(self) -> float:
        """The number of samples. O(chunks)."""
        return float(sum(c.shape[0] for c in self._chunks))

    # -- the generic protocol --------------------------------------------------------------------
    def arrays(self) -> dict[str, Any]:
        return {"counts": self.counts().copy()}

    def load_arrays(self, arrays: Any) -> None:
        if set(arrays) != {"counts"}:
            raise ValueError(f"state: expected the array 'counts' only, got {sorted(arrays)}")
        a = np.asarray(arrays["counts"])
        if a.ndim != 3 or a.shape[1:] != (4, self.k):
            raise ValueError(f"state: array 'counts' has shape {a.shape}, expected (m, 4, {self.k})")
        if a.dtype.kind not in "biuf":
            raise ValueError(f"state: array 'counts' has non-numeric dtype {a.dtype}")
        reserve(8.0 * a.size, f"{a.shape[0]} samples")
        a = a.astype(np.float64)
        if a.size and not (np.isfinite(a).all() and (a >= 0).all() and (a == np.round(a)).all()
                           and float(a.max()) < 2.0**53):
            raise ValueError("state: array 'counts' must hold whole, non-negative counts below 2**53")
        if self.task == "multiclass" and a.size:
            totals = a.sum(axis=1)  # every class of a sample counts the same positions
            bad = (totals != totals[:, :1]).any(axis=1)
            if bad.any():
                i = int(np.argmax(bad))
                raise ValueError(f"state: array 'counts': the classes of sample {i} count different "
                                 "numbers of positions")
            support = (a[:, 0] + a[:, 2]).sum(axis=1)  # one actual and one predicted class a position
            predicted = (a[:, 0] + a[:, 1]).sum(axis=1)
            wrong = (support != totals[:, 0]) | (predicted != totals[:, 0])
            if wrong.any():
                i = int(np.argmax(wrong))
                raise ValueError(f"state: array 'counts': the supports or predictions of sample {i} do "
                                 "not sum to its positions")
        self._chunks = [a]

    def merge(self, other: State) -> None:
        assert isinstance(other, SampleCounts)
        self._chunks.append(other.counts().copy())

    def reset(self) -> None:
        self._chunks = []

    def equals(self, other: State) -> bool:
        return (isinstance(other, SampleCounts) and self.key() == other.key()
                and np.array_equal(self.counts(), other.counts()))


def row_average(values: np.ndarray, weights: np.ndarray | None, skip_nan: bool,
                seen: np.ndarray | None, empty: float) -> np.ndarray:
    """The average of each row of ``values`` (m, K), as :func:`~streammetrics._core.averaging.
    average_classes` averages one row: ``weights`` (m, K) (supports; a row whose weights are all
    0 takes the plain mean) or None (the plain mean); ``skip_nan`` leaves nan entries out (a row
    of nan only: nan); ``seen`` (m, K) keeps only those entries (a row with none: ``empty``).
    O(m·K)."""
    keep = np.ones(values.shape, bool) if seen is None else seen.copy()
    if skip_nan:
        keep &= ~np.isnan(values)
    w = keep.astype(np.float64) if weights is None else np.where(keep, weights, 0.0)
    if weights is not None:
        flat = w.sum(axis=1) == 0
        w[flat] = keep[flat]
    total = w.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        out = (np.where(keep, values, 0.0) * w).sum(axis=1) / np.where(total > 0, total, 1.0)
    out[total == 0] = np.nan
    if seen is not None:
        out[~seen.any(axis=1)] = empty
    return out
