"""Control features of :class:`~streammetrics.Sliced` (Fairlearn's ``control_features``).

Some key columns are *controls*: the slices are still the crossed keys of every column, but the
disparity summaries and the overall value are given per control group -- the rows whose control
columns hold one combination of keys -- as ``MetricFrame(..., control_features=...)`` gives
them. A control group's overall accumulator is the merge of its slices' accumulators (exact for
exact metrics: merging equals one pass over the rows).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from streammetrics._core.metric import Metric

from .store import SliceStore, twin_of

__all__ = ["controls_param", "check_controls", "control_groups"]


def controls_param(controls: Any) -> tuple[str, ...] | None:
    """``controls`` as a tuple of column names (None: no controls); ``ValueError`` naming the
    problem: not a string or a sequence of non-empty strings, empty, or a name twice. O(columns)."""
    if controls is None:
        return None
    names = (controls,) if isinstance(controls, str) else controls
    if not isinstance(names, Sequence) or isinstance(names, (bytes, bytearray)):
        raise ValueError(f"controls: expected a key column name or a sequence of them, got {controls!r}")
    names = tuple(names)
    if not names:
        raise ValueError("controls: expected at least one key column name (or None: no controls)")
    for name in names:
        if not isinstance(name, str) or not name:
            raise ValueError(f"controls: key column names are non-empty strings, got {name!r}")
    if len(set(names)) != len(names):
        twice = next(n for n in names if names.count(n) > 1)
        raise ValueError(f"controls: the key column {twice!r} is named twice")
    return names


def check_controls(controls: tuple[str, ...], names: tuple[str, ...] | None, what: str) -> None:
    """``ValueError`` (prefixed ``what``) unless the key columns ``names`` hold every control
    column and at least one other (sensitive) column. O(columns)."""
    if names is None:
        raise ValueError(f"{what}: controls={list(controls)} name key columns: pass slices as a dict "
                         "holding them and at least one sensitive column (or a tuple: key0, key1, ...)")
    missing = [c for c in controls if c not in names]
    if missing:
        raise ValueError(f"{what}: the control column {missing[0]!r} is not among the key columns "
                         f"{list(names)}")
    if len(controls) >= len(names):
        raise ValueError(f"{what}: every key column {list(names)} is a control column; leave at least "
                         "one sensitive column to compare the groups of")


def control_groups(template: Metric, store: SliceStore | None, names: tuple[str, ...] | None,
                   controls: tuple[str, ...]) -> list[tuple[Any, list[Any], Metric]]:
    """``(control key, the crossed keys of its slices, the accumulator of all its rows)`` of
    every control group, in the order its first slice was seen. The control key is the control
    column's key (a tuple of them for several control columns). O(slices) merges."""
    if store is None or names is None:
        return []
    pos = [names.index(c) for c in controls]
    groups: dict[Any, list[tuple[Any, int]]] = {}
    for key, slot in store.slots():
        ck = key[pos[0]] if len(pos) == 1 else tuple(key[j] for j in pos)
        groups.setdefault(ck, []).append((key, slot))
    out = []
    for ck, members in groups.items():
        total = twin_of(template)
        total.merge(*(store.metric(slot) for _, slot in members))
        out.append((ck, [key for key, _ in members], total))
    return out
