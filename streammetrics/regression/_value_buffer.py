"""The exact whole-set state of the regression family: every value of one kind, sorted, per output.

:class:`ValueBuffer` keeps, per output, the absolute errors ``|y - y_pred|`` (``kind="abs_error"``:
the median absolute error) or the targets ``y`` (``kind="y_true"``: the quantile of ``y_true``
that D² needs, with the running sums of the pinball loss of the predictions) of every row of
positive weight, with their weights. Storage is the exact score buffer's :class:`Group` (sorted
runs of geometrically decreasing size, merged as they grow: an LSM layout), one per output, so a
read after each batch never re-sorts what is held.

Complexity: ``update`` O(n k log n) (each batch's columns sorted in ``prepare``, outside the
lock; ``apply`` pushes the runs, amortised O(log(N / n)) linear merge passes per value). A read
consolidates each output into one run (O(N) once after new data) and reads the percentile in
O(N) (a cumulative sum; unweighted O(1)). ``merge`` pushes the other's runs. Memory: 8 bytes
per row and output, plus 8 per row and output once a weight differs from 1. Rows of weight 0
are dropped (scikit-learn gives them no weight either).

Persistence: per output, in order, its values as one sorted run (``values`` concatenated,
``offsets`` delimiting the outputs), ``weights`` if any weight differed from 1, and for
``kind="y_true"`` the per-output pinball sums ``loss``. Loading checks every invariant (sorted,
finite, weights in the library's range, one value per output for every row).
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from typing import Any

import numpy as np

from streammetrics._core.load_checks import check_array_names, check_sums, check_total
from streammetrics._core.state import State
from streammetrics._core.validation import check_offsets
from streammetrics._scores.exact.runs import Group
from streammetrics._scores.exact.sort_kernels import stable_sort_with

from ._base import check_row_weights, check_same_outputs, positive_rows

KINDS = ("abs_error", "y_true")


def pinball_sums(y: np.ndarray, p: np.ndarray, w: np.ndarray | None, alpha: float) -> np.ndarray:
    """Per column of (n, k) arrays, ``sum_i w_i L_alpha(y_i - p_i)`` with scikit-learn's
    pinball loss ``alpha d [d >= 0] - (1 - alpha) d [d < 0]``. O(n k)."""
    d = y - p
    sign = (d >= 0).astype(np.float64)
    loss = alpha * sign * d - (1 - alpha) * (1 - sign) * d
    return loss.sum(axis=0) if w is None else w @ loss



def loaded_loss(arrays: Mapping[str, Any], kind: str, k: int) -> np.ndarray:
    """The loaded ``loss`` array of a state of ``kind`` with ``k`` outputs: the pinball loss
    sums of ``"y_true"`` (k weight sums), zeros for the other kinds (which hold none)."""
    if kind != "y_true":
        return np.zeros(k)
    loss = np.asarray(arrays["loss"])
    if loss.shape != (k,) or loss.dtype.kind not in "biuf":
        raise ValueError(f"state: array 'loss' must be {k} numbers, got {loss.dtype} {loss.shape}")
    loss = loss.astype(np.float64)
    check_sums(loss, "loss")
    return loss


class ValueBuffer(State):
    """Sorted values of one kind per output (see the module docstring).

    Parameters
    ----------
    kind : {"abs_error", "y_true"}
        What is kept: the absolute errors, or the targets (with the pinball sums at ``alpha``).
    alpha : float, optional
        The pinball level of ``kind="y_true"``.
    """

    def __init__(self, kind: str, alpha: float | None = None) -> None:
        assert kind in KINDS
        self.kind = kind
        self.alpha = alpha
        self.reset()

    def key(self) -> Hashable:
        return ("regression_values", self.kind, self.alpha)

    @property
    def k(self) -> int:
        """Number of outputs held (0 until a row of positive weight arrives)."""
        return len(self._groups)

    def reset(self) -> None:
        self._groups: list[Group] = []
        self._loss = np.zeros(0)

    # -- update ------------------------------------------------------------------------------
    def prepare(self, y_true: Any, y_pred: Any, sample_weight: Any = None) -> Any:
        if (rows := positive_rows(y_true, y_pred, sample_weight, self.k)) is None:
            return None
        b, y, p, w = rows
        values = np.abs(y - p) if self.kind == "abs_error" else y
        loss = pinball_sums(y, p, w, float(self.alpha or 0.0)) if self.kind == "y_true" else None
        if w is not None and (w == 1.0).all():
            w = None
        if w is not None and w is b.w:
            w = w.copy()  # the state keeps its own arrays, never the caller's
        runs: list[tuple[np.ndarray, np.ndarray | None]] = []
        for j in range(values.shape[1]):
            col = np.array(values[:, j], dtype=np.float64)  # a copy: the caller's y may be sorted
            if w is None:
                runs.append((np.sort(col), None))
            else:
                v, ww = stable_sort_with(col, w)
                runs.append((v, ww))
        return runs, loss

    def apply(self, delta: Any) -> None:
        if delta is None:
            return
        runs, loss = delta
        if not self._groups:
            self._groups = [Group() for _ in runs]
            self._loss = np.zeros(len(runs))
        for g, (v, w) in zip(self._groups, runs, strict=True):
            g.push(v, w, v.shape[0] if w is None else float(w.sum()))
        if loss is not None:
            self._loss = self._loss + loss

    # -- reads -------------------------------------------------------------------------------
    def column(self, j: int) -> tuple[np.ndarray, np.ndarray | None]:
        """Output ``j``'s values, ascending, and their weights (None: all 1). O(N) after new
        data (one consolidation), O(1) after."""
        return self._groups[j].consolidate()

    def loss(self) -> np.ndarray:
        """Per output, ``sum w L_alpha(y - y_pred)`` (``kind="y_true"``)."""
        return self._loss.copy()

    def rows(self) -> int:
        """Rows of positive weight held."""
        return int(self.column(0)[0].shape[0]) if self._groups else 0

    def sample_count(self) -> float | None:
        return float(self._groups[0].total) if self._groups else 0.0

    @property
    def nbytes(self) -> int:
        return int(sum(g.nbytes for g in self._groups) + self._loss.nbytes)

    # -- state protocol ----------------------------------------------------------------------
    def arrays(self) -> dict[str, Any]:
        cols = [self.column(j) for j in range(self.k)]
        values = np.concatenate([v for v, _ in cols]) if cols else np.zeros(0)
        offsets = np.zeros(self.k + 1, dtype=np.int64)
        offsets[1:] = np.cumsum([v.shape[0] for v, _ in cols])
        out: dict[str, Any] = {"values": values.astype(np.float64), "offsets": offsets}
        if any(w is not None for _, w in cols):
            out["weights"] = np.concatenate([np.ones(v.shape[0]) if w is None else w for v, w in cols])
        if self.kind == "y_true":
            out["loss"] = self._loss.copy()
        return out

    def load_arrays(self, arrays: Mapping[str, Any]) -> None:
        loss_name = ("loss",) if self.kind == "y_true" else ()
        check_array_names(arrays, ("values", "offsets", *loss_name), ("weights",))
        values = np.asarray(arrays["values"])
        if values.ndim != 1 or values.dtype.kind not in "biuf":
            raise ValueError(f"state: array 'values' must be 1-D numbers, got {values.dtype} {values.shape}")
        values = values.astype(np.float64)
        if values.size and not np.isfinite(values).all():
            raise ValueError("state: array 'values' holds non-finite values")
        raw_off = np.asarray(arrays["offsets"])
        if raw_off.ndim != 1 or raw_off.shape[0] < 1:
            raise ValueError("state: array 'offsets' must be 1-D with at least one entry")
        k = raw_off.shape[0] - 1
        offsets = check_offsets(raw_off, "offsets", k, values.shape[0], "values")
        sizes = np.diff(offsets)
        if k and (sizes != sizes[0]).any():
            raise ValueError(f"state: every output must hold one value per row, got sizes {sizes.tolist()}")
        if k and sizes[0] == 0:
            raise ValueError("state: outputs are declared but no row is held")
        weights = None
        if "weights" in arrays:
            weights = np.asarray(arrays["weights"])
            if weights.shape != values.shape or weights.dtype.kind not in "biuf":
                raise ValueError(f"state: array 'weights' must match 'values' {values.shape}, got "
                                 f"{weights.dtype} {weights.shape}")
            weights = weights.astype(np.float64)
            check_row_weights(weights)
            for a, b in zip(offsets[:-1], offsets[1:], strict=True):
                check_total(weights[a:b], "weights")
        for j in range(k):
            v = values[offsets[j]:offsets[j + 1]]
            if v.shape[0] > 1 and (v[1:] < v[:-1]).any():
                raise ValueError(f"state: the values of output {j} are not sorted")
        loss = loaded_loss(arrays, self.kind, k)
        if self.kind == "abs_error" and values.size and values[offsets[:-1]].min() < 0:
            raise ValueError("state: absolute errors must be >= 0")
        groups = []
        for j in range(k):
            g = Group()
            a, b = int(offsets[j]), int(offsets[j + 1])
            w = None if weights is None else weights[a:b].copy()
            if w is not None and (w == 1.0).all():
                w = None
            g.push(values[a:b].copy(), w, b - a if w is None else float(w.sum()))
            groups.append(g)
        self._groups, self._loss = groups, loss

    def merge(self, other: State) -> None:
        assert isinstance(other, ValueBuffer)
        if not other._groups:
            return
        check_same_outputs(self.k, other.k)
        runs = []
        for j in range(other.k):
            v, w = other.column(j)
            runs.append((v.copy(), None if w is None else w.copy()))
        self.apply((runs, other._loss.copy() if self.kind == "y_true" else None))
