"""One k-way merge of several exact score states' groups (what engines' merge trees use).

Merging states one after another ranks each incoming state's scores against the runs held so
far (O(m log n) searches per state); when every state is at hand, sorting each group's runs
together once and counting the Mann-Whitney pairs once over the result is cheaper. This module
builds the merged groups; :meth:`streammetrics._scores.exact.buffer.SortedScores.merge_many` folds
them in.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .runs import Group, merge_many


def merged_groups(
    grids: Sequence[list[list[Group]]], n_columns: int, n_groups: int
) -> list[list[tuple[np.ndarray, np.ndarray | None]]]:
    """``out[col][grp]``: the (values, weights or None) of group (col, grp) of every grid, as
    one sorted run (tombstones purged, tails flushed: each group is consolidated first).

    The dtype is the common one of the non-empty groups (float16/32/64 promote as numpy does).
    The result never shares memory with a grid other than the first. Complexity: one
    concatenation and one sort per group, O(n log n) for n scores in all (O(n) extra memory).
    """
    out: list[list[tuple[np.ndarray, np.ndarray | None]]] = []
    for col in range(n_columns):
        row = []
        for grp in range(n_groups):
            items = [grid[col][grp].consolidate() for grid in grids]
            nonempty = [i for i, (v, _) in enumerate(items) if v.shape[0]]
            v, w = merge_many(items)
            if len(nonempty) == 1 and nonempty[0] != 0:  # merge_many returned another's run
                v, w = v.copy(), None if w is None else w.copy()
            row.append((v, w))
        out.append(row)
    return out
