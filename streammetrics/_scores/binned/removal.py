"""Removal and decay for the bounded ranking state (sliding windows, exponential decay).

:class:`BinRemoval` is the part of :class:`~streammetrics._scores.binned.bins.BinnedScores` that subtracts a
sub-multiset of the samples and rescales every weight. Neither refines the bins, so afterwards
the state depends on its history, but every bin is still an interval of scores and the
certificates hold. Complexities are on each method.
"""

from __future__ import annotations

import numpy as np

from streammetrics._core.params import Param, check_param
from streammetrics._core.state import State

from .arrays import coarsen
from .fields import BinFields

#: subtract: a weight going negative by more than this (relative) is not contained; a remainder
#: within _SNAP_RTOL of the bin's weight before is float rounding and set to 0.
_SUB_RTOL = 1e-9
_SNAP_RTOL = 1e-12
#: Smallest normal float64: scaled weights below it are flushed to 0 (subnormal ratios overflow).
_TINY = float(np.finfo(np.float64).tiny)
#: ``scale``'s decay factor: a number in [0, 1].
_FACTOR = Param("number", "must be in [0, 1]", low=0.0, high=1.0)


class BinRemoval(BinFields):
    """``subtract`` and ``scale`` of the bounded ranking state (see the module docstring)."""

    def subtract(self, other: State) -> None:
        """Remove ``other``'s samples, which must be a sub-multiset of this state's (same
        :meth:`key`; e.g. the expired rows of a window folded into a fresh state).

        Per column, ``other``'s bins are coarsened to this state's shift (they are never coarser
        when ``other`` holds a subset of what this state absorbed) and their weights subtracted
        from the matching bins; bins left with no weight are dropped. This state keeps its
        current resolution: coarsening is never undone, so after a subtraction the state depends
        on the history of the stream, not only on the multiset of remaining samples (it may be
        coarser than a fresh state built from them; merges of such states are still exact
        unions, and every bin is still an interval of scores, so the certificates still hold).
        Integer weights subtract exactly; float residues within 1e-12 of the bin's weight are
        set to 0.

        Raises ``ValueError`` (leaving this state unchanged) when ``other`` is not contained:
        another configuration, a coarser column, a bin this state does not have, or a weight
        that would go negative by more than float rounding (1e-9 relative). O(b + b_other).
        """
        if not isinstance(other, BinRemoval) or other.key() != self.key():
            raise ValueError("subtract: other must be a binned state of the same configuration")
        self._settle()
        other._settle()
        new: list[tuple[np.ndarray, np.ndarray, np.ndarray] | None] = []
        for col in range(self.n_columns):
            ko = other._keys[col]
            if ko.shape[0] == 0:
                new.append(None)
                continue
            ss, so = int(self._shift[col]), int(other._shift[col])
            if so > ss:
                raise ValueError(
                    f"subtract: column {col} of other is coarser (shift {so}) than this state "
                    f"(shift {ss}); it cannot hold a subset of these samples"
                )
            po, no = other._pos[col], other._neg[col]
            if so < ss:
                ko, po, no = coarsen(ko, po, no, ss - so)
            ks = self._keys[col]
            idx = np.searchsorted(ks, ko)
            np.minimum(idx, max(ks.shape[0] - 1, 0), out=idx)
            hit = ks[idx] == ko if ks.shape[0] else np.zeros(ko.shape[0], dtype=bool)
            if not hit.all():
                j = int(np.argmin(hit))
                raise ValueError(
                    f"subtract: other holds samples in a bin this state does not have "
                    f"(column {col}, bin key {int(ko[j])} at shift {ss})"
                )
            p, n = self._pos[col].copy(), self._neg[col].copy()
            for name, mine, theirs in (("positive", p, po), ("negative", n, no)):
                before = mine[idx]
                after = before - theirs
                if (after < -_SUB_RTOL * before).any():
                    j = int(np.argmax(after < -_SUB_RTOL * before))
                    raise ValueError(
                        f"subtract: other holds more {name} weight than this state in column "
                        f"{col} (bin key {int(ko[j])}: {float(theirs[j])!r} > {float(before[j])!r})"
                    )
                after[after <= _SNAP_RTOL * before] = 0.0
                mine[idx] = after
            keep = (p + n) > 0
            new.append((ks[keep], p[keep], n[keep]))
        for col, got in enumerate(new):
            if got is not None:
                self._keys[col], self._pos[col], self._neg[col] = got

    def scale(self, factor: float) -> None:
        """Multiply the weight of every sample seen so far by ``factor`` (0 <= factor <= 1;
        exponential decay). Bins are unchanged (weights that fall below the smallest normal float
        are flushed to 0, as ``load`` refuses subnormal weights, and bins left empty are dropped;
        ``factor=0`` empties the state but keeps its shifts), so the certificates still hold for
        the rescaled weights. Counts are float64 throughout; after a scale the state depends on
        the history (weights are no longer integers, merges are exact up to rounding). O(b).
        """
        f = check_param(factor, "factor", _FACTOR)
        if f == 1.0:
            return
        self._settle()
        for col in range(self.n_columns):
            p, n = self._pos[col] * f, self._neg[col] * f
            p[p < _TINY], n[n < _TINY] = 0.0, 0.0
            keep = (p + n) > 0
            if keep.all():
                self._pos[col], self._neg[col] = p, n
            else:
                self._keys[col], self._pos[col], self._neg[col] = self._keys[col][keep], p[keep], n[keep]
