"""Every (y_true, y_pred) row, for the rank correlations ("Rank correlations" in
docs/definitions/regression.md).

:class:`PairRows` keeps the rows of positive weight (targets and predictions, (n, k) float64,
and the weights once one differs from 1) in arrival order, as a list of batches joined on the
first read after new data. Reads rank each output's two columns (two stable argsorts,
O(n log n)); nothing is ranked at ``update``.

Complexity: ``update`` O(n k) (validation and one copy, in ``prepare``); ``apply`` and
``merge`` append (O(1) and O(n)); the first read after new data joins the batches (O(N k)).
Memory: 16 bytes per row and output, plus 8 per row once a weight differs from 1 (twice that
while a join runs). Rows of weight 0 are dropped.

Persistence: ``y`` and ``p`` (N, k) and, if any weight differed from 1, ``weights`` (N,) in
arrival order. Loading checks shapes, finiteness and the weight range.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from typing import Any

import numpy as np

from streammetrics._core.load_checks import check_array_names, check_total
from streammetrics._core.state import State

from ._base import check_row_weights, check_same_outputs, positive_rows


class PairRows(State):
    """The rows of positive weight of a regression stream (see the module docstring)."""

    def __init__(self) -> None:
        self.reset()

    def key(self) -> Hashable:
        return ("regression_rows",)

    def reset(self) -> None:
        self._k = 0
        self._parts: list[tuple[np.ndarray, np.ndarray, np.ndarray | None]] = []

    @property
    def k(self) -> int:
        """Number of outputs (0 until a row of positive weight arrives)."""
        return self._k

    def prepare(self, y_true: Any, y_pred: Any, sample_weight: Any = None) -> Any:
        if (rows := positive_rows(y_true, y_pred, sample_weight, self._k)) is None:
            return None
        b, y, p, w = rows
        if w is not None and (w == 1.0).all():
            w = None
        own = y is b.y  # regression_batch may return the caller's own arrays: copy those
        return (y.copy() if own else y, p.copy() if own else p, None if w is None else w.copy())

    def apply(self, delta: Any) -> None:
        if delta is None:
            return
        self._k = delta[0].shape[1]
        self._parts.append(delta)

    def rows(self) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
        """``(y, p, w)``: every row held, (N, k), (N, k) and (N,) or None (all 1). O(N k) on the
        first read after new data (the batches are joined once), O(1) after."""
        parts = self._parts
        if len(parts) != 1:
            if not parts:
                return np.zeros((0, self._k)), np.zeros((0, self._k)), None
            y = np.concatenate([a for a, _, _ in parts])
            p = np.concatenate([b for _, b, _ in parts])
            w = None
            if any(c is not None for _, _, c in parts):
                w = np.concatenate([np.ones(a.shape[0]) if c is None else c for a, _, c in parts])
            self._parts = [(y, p, w)]
        return self._parts[0]

    def sample_count(self) -> float | None:
        y, _, w = self.rows()
        return float(y.shape[0]) if w is None else float(w.sum())

    @property
    def nbytes(self) -> int:
        return int(sum(a.nbytes + b.nbytes + (0 if c is None else c.nbytes) for a, b, c in self._parts))

    def arrays(self) -> dict[str, Any]:
        y, p, w = self.rows()
        out: dict[str, Any] = {"y": y.copy(), "p": p.copy()}
        if w is not None:
            out["weights"] = w.copy()
        return out

    def load_arrays(self, arrays: Mapping[str, Any]) -> None:
        check_array_names(arrays, ("y", "p"), ("weights",))
        y, p = np.asarray(arrays["y"]), np.asarray(arrays["p"])
        for name, a in (("y", y), ("p", p)):
            if a.ndim != 2 or a.dtype.kind not in "biuf":
                raise ValueError(f"state: array {name!r} must be 2-D numbers, got {a.dtype} {a.shape}")
            if a.size and not np.isfinite(a).all():
                raise ValueError(f"state: array {name!r} holds non-finite values")
        if y.shape != p.shape:
            raise ValueError(f"state: arrays 'y' {y.shape} and 'p' {p.shape} differ in shape")
        if y.shape[0] == 0 and y.shape[1] != 0:
            raise ValueError("state: outputs are declared but no row is held")
        w = None
        if "weights" in arrays:
            w = np.asarray(arrays["weights"])
            if w.shape != (y.shape[0],) or w.dtype.kind not in "biuf":
                raise ValueError(f"state: array 'weights' must be {y.shape[0]} numbers, got "
                                 f"{w.dtype} {w.shape}")
            w = w.astype(np.float64)
            check_row_weights(w)
            check_total(w, "weights")
        self._k = int(y.shape[1]) if y.shape[0] else 0
        self._parts = [(y.astype(np.float64), p.astype(np.float64), w)] if y.shape[0] else []

    def merge(self, other: State) -> None:
        assert isinstance(other, PairRows)
        if not other._parts:
            return
        check_same_outputs(self._k, other._k)
        y, p, w = other.rows()
        self.apply((y.copy(), p.copy(), None if w is None else w.copy()))
