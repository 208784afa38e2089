"""Saving, loading and merging the exact score buffer (a part of
:class:`~streammetrics._scores.exact.buffer.SortedScores`).

:class:`BufferPersistence` holds the generic state protocol's array methods of the sorted
buffer: ``arrays`` (every group as one sorted run: ``values`` concatenated, ``offsets``
delimiting the groups, ``weights`` if any weight differed from 1), ``load_arrays`` (a hostile
file checked before anything changes; ``u2`` recomputed, never read), the trusted in-process
copy path, and ``merge`` / ``merge_many``. Complexities are on each method.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from streammetrics._core.load_checks import check_array_names, check_total
from streammetrics._core.metric import states_trusted
from streammetrics._core.state import State
from streammetrics._core.validation import check_offsets, first_bad
from streammetrics._scores.batches import FLOAT_KINDS

from .merge import merged_groups
from .u2_counter import counter_copy

if TYPE_CHECKING:
    from .runs import Group

#: Entries :meth:`BufferPersistence.arrays` adds inside ``trusted_states()`` (never written to
#: files: ``load_arrays`` outside that block rejects them as unexpected arrays).
_TRUSTED_U2 = "trusted.u2"
_TRUSTED_DTYPE = "trusted.dtype"
_TRUSTED_LIVE = "trusted.u2_live"


class BufferPersistence:
    """Array and merge methods of the exact score buffer (a base of
    :class:`~streammetrics._scores.exact.buffer.SortedScores`; see the module docstring)."""

    # the buffer's layout and storage (set by SortedScores)
    n_columns: int
    n_groups: int
    _groups: list[list[Group]]
    _u2: np.ndarray
    _u2_live: bool
    _weighted: bool
    _dtype: np.dtype | None

    if TYPE_CHECKING:  # SortedScores' own methods

        def _init_storage(self) -> None: ...

        def _flush(self) -> None: ...

        def _ensure_u2(self) -> None: ...

        def _purge_tombstones(self) -> None: ...

        def _fold(self, new: list[list[tuple[np.ndarray, np.ndarray | None]]],
                  inner_u2: np.ndarray | None = None) -> None: ...

    def arrays(self) -> dict[str, Any]:
        """Every group as one sorted run: ``values`` (the buffer's dtype), ``offsets`` and, if
        weighted, ``weights`` (1 for the groups that have none). O(n) time and one new array of
        the n scores (plus one of the weights if weighted): the runs are concatenated once, never
        converted again when their dtype already is the buffer's, and no unit weights are built
        for an unweighted buffer (they are not stored)."""
        self._flush()
        values, offsets, weights = [], [0], []
        for row in self._groups:
            for grp in row:
                v, w = grp.consolidate()
                values.append(v)
                offsets.append(offsets[-1] + v.shape[0])
                if self._weighted:
                    weights.append(np.ones(v.shape[0]) if w is None else w)
        dtype = self._dtype if self._dtype is not None else np.dtype(np.float64)
        out: dict[str, Any] = {
            # concatenate returns a new array (never a run's): no copy by astype on top of it
            "values": np.concatenate(values).astype(dtype, copy=False) if values else np.zeros(0),
            "offsets": np.asarray(offsets, dtype=np.int64),
        }
        if self._weighted:
            out["weights"] = np.concatenate(weights) if weights else np.zeros(0)
        if states_trusted():  # pickling / in-process copies: carry the derived counts along
            out[_TRUSTED_U2] = self._u2.copy()
            out[_TRUSTED_LIVE] = self._u2_live
            out[_TRUSTED_DTYPE] = "" if self._dtype is None else self._dtype.str
        return out

    def _load_trusted(self, arrays: Mapping[str, Any]) -> None:
        """Restore a state written by :meth:`arrays` under ``trusted_states()`` as given: one
        sorted run per group and the stored ``u2``, no validation, no re-ranking. O(n) (a copy
        of the scores, plus the cumulative weights and coarse index of each run)."""
        values = np.asarray(arrays["values"])
        offsets = np.asarray(arrays["offsets"], dtype=np.int64)
        weights = arrays.get("weights")
        self._init_storage()
        for col in range(self.n_columns):
            for grp in range(self.n_groups):
                i = col * self.n_groups + grp
                lo, hi = int(offsets[i]), int(offsets[i + 1])
                v = values[lo:hi].copy()
                w = None if weights is None else np.asarray(weights[lo:hi], dtype=np.float64).copy()
                self._groups[col][grp].push(v, w, v.shape[0] if w is None else float(w.sum()))
        self._weighted = weights is not None
        self._u2 = counter_copy(arrays[_TRUSTED_U2], self._weighted)
        self._u2_live = bool(arrays.get(_TRUSTED_LIVE, True))
        dtype = arrays[_TRUSTED_DTYPE]
        self._dtype = np.dtype(dtype) if dtype else None

    def load_arrays(self, arrays: Mapping[str, Any]) -> None:
        if _TRUSTED_U2 in arrays and states_trusted():
            self._load_trusted(arrays)
            return
        check_array_names(arrays, ("values", "offsets"), ("weights",))
        values = np.asarray(arrays["values"])
        offsets = np.asarray(arrays["offsets"])
        if values.ndim != 1 or values.dtype not in FLOAT_KINDS:
            raise ValueError(
                f"state: array 'values' must be 1-D float16/32/64, got {values.dtype} {values.shape}"
            )
        if values.size and np.isnan(values).any():
            raise ValueError(f"state: array 'values' holds NaN at index {first_bad(np.isnan(values))}")
        ng = self.n_columns * self.n_groups
        offsets = check_offsets(offsets, "offsets", ng, values.shape[0], "values")
        weights = None
        if "weights" in arrays:
            weights = np.asarray(arrays["weights"])
            if weights.shape != values.shape or weights.dtype.kind not in "iuf":
                raise ValueError(
                    f"state: array 'weights' must match 'values' ({values.shape}), got {weights.shape}"
                )
            weights = weights.astype(np.float64, copy=False)  # read only: each group copies its slice
            if weights.size and not (np.isfinite(weights).all() and (weights > 0).all()):
                raise ValueError("state: array 'weights' must be finite and > 0")
            check_total(weights, "weights")
        if values.shape[0] > 1:
            down = values[1:] < values[:-1]
            down[offsets[1:-1][(offsets[1:-1] > 0) & (offsets[1:-1] < values.shape[0])] - 1] = False
            if down.any():
                raise ValueError(
                    "state: array 'values' is not sorted within its groups "
                    f"(index {int(np.argmax(down)) + 1})"
                )
        new = []
        for col in range(self.n_columns):
            row = []
            for grp in range(self.n_groups):
                i = col * self.n_groups + grp
                lo, hi = int(offsets[i]), int(offsets[i + 1])
                row.append((values[lo:hi].copy(), None if weights is None else weights[lo:hi].copy()))
            new.append(row)
        self._init_storage()
        self._fold(new)
        if weights is not None and not self._weighted:
            self._weighted = True
            self._u2 = self._u2.astype(np.float64)

    def merge(self, other: State) -> None:
        assert isinstance(other, BufferPersistence)
        other._flush()
        self._flush()
        if self._u2_live:
            other._ensure_u2()
        new = [[grp.consolidate() for grp in row] for row in other._groups]
        new = [[(v.copy(), None if w is None else w.copy()) for v, w in row] for row in new]
        # the pairs within ``other``: counted in its u2 (not needed while this one's is not live)
        self._fold(new, other._u2.copy() if self._u2_live else None)
        if other._weighted and not self._weighted:
            self._purge_tombstones()
            self._weighted = True
            self._u2 = self._u2.astype(np.float64)

    def merge_many(self, others: Sequence[State]) -> None:
        """Fold several states in at once: each group's runs (this state's and the others')
        sorted together once, then ``u2`` counted once over the merged groups. O(n log n) for
        n samples in all, instead of ranking each state against the accumulated runs in turn
        (what a merge tree's nodes and the root of an engine's evaluation call)."""
        if len(others) <= 1:  # one state (e.g. a small batch of rows) is cheaper ranked in
            for other in others:
                self.merge(other)
            return
        states: list[BufferPersistence] = [self]
        for other in others:
            assert isinstance(other, BufferPersistence)
            states.append(other)
        for st in states:
            st._flush()
        old_dtype = self._dtype
        weighted = any(st._weighted for st in states)
        new = merged_groups([st._groups for st in states], self.n_columns, self.n_groups)
        self._init_storage()
        self._fold(new)
        if self._dtype is None:
            self._dtype = old_dtype
        if weighted and not self._weighted:
            self._weighted = True
            self._u2 = self._u2.astype(np.float64)
