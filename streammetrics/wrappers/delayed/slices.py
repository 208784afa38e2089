"""Slice keys of :class:`~streammetrics.DelayedLabels` around a :class:`~streammetrics.Sliced`.

An inference service knows a request's segment (country, tenant, model version) when it
predicts, not when the label arrives. So ``predict(ids, y_score, slices=...)`` takes the slice
keys -- in any form ``Sliced.update`` takes them: one key per id, a tuple of key columns or a
dict of named key columns -- and each pending prediction keeps its own key beside its score in
the pending queue (so ``capacity``, ``ttl``, eviction, merge and persistence treat it as part of
the row). ``label(ids, y_true)`` then feeds the labelled rows to ``Sliced.update`` with their
keys, so every row lands in the slice it was predicted in.

A pending row's key is a slice key as ``Sliced`` takes it (one key column) or a tuple of them
(several); the
key column layout (``names``: ``None`` for one unnamed column, else the column names) is one
per wrapper. On disk (prefix ``pending.``): ``slice_names`` and ``slice_keys``, UTF-8 JSON in
uint8 arrays, in the order of the other pending arrays; validated on load.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from typing import Any

import numpy as np

from streammetrics.wrappers.sliced.keys import (
    decode_json,
    decode_key,
    encode_json,
    encode_keys,
    factorize,
    list_keys,
    split_slices,
)

__all__ = ["KeyLayout", "row_keys", "slices_argument", "key_arrays", "load_key_arrays", "check_layout",
           "key_bytes"]

#: The key column names of the pending rows (``None``: one unnamed column).
KeyLayout = tuple[str, ...] | None

#: The persisted entries (each under the prefix ``pending.``).
KEY_ARRAYS = ("slice_names", "slice_keys")


def row_keys(slices: Any, k: int) -> tuple[KeyLayout, list[Any]]:
    """The layout and one Python key per row of ``predict``'s ``slices=`` (validated as
    ``Sliced.update`` validates it: ``ValueError`` naming the argument). O(k)."""
    if slices is None:
        raise ValueError("slices: required around Sliced (one slice key per id)")
    names, columns = split_slices(slices, k)
    if names is not None and len(columns) == 1 and not isinstance(slices, Mapping):
        names = None  # a 1-tuple is one unnamed column, as in Sliced
    per_column = []
    for col, name in zip(columns, names or (None,), strict=True):
        fact = factorize(col, "slices" if name is None else f"slices[{name!r}]")
        per_column.append(fact.keys(fact.codes) if k else [])
    if len(per_column) == 1:
        return names, per_column[0]
    return names, list(zip(*per_column, strict=True))


def _column(values: list[Any]) -> np.ndarray:
    """Keys as an array ``Sliced`` factorises back to the same Python keys: as ``Sliced``
    reads a list of them (:func:`list_keys`: int64 or uint64 integers, strings, objects)."""
    return list_keys(values)


def slices_argument(names: KeyLayout, keys: list[Any]) -> Any:
    """The ``slices=`` argument of ``Sliced.update`` for rows with these keys. O(rows)."""
    if names is None:
        return _column(keys)
    if len(names) == 1:  # one named column (a mapping of one name): plain keys, as in Sliced
        return {names[0]: _column(keys)}
    return {name: _column([key[j] for key in keys]) for j, name in enumerate(names)}


def check_layout(mine: KeyLayout, theirs: KeyLayout, what: str) -> None:
    """``ValueError`` if two key column layouts differ."""
    if mine != theirs:
        def shown(x: KeyLayout) -> str:
            return "(one unnamed column)" if x is None else repr(list(x))

        raise ValueError(f"{what}: pending predictions have the key columns {shown(mine)}, "
                         f"got {shown(theirs)}")


def key_arrays(names: KeyLayout, keys: list[Any]) -> dict[str, np.ndarray]:
    """The persisted entries :data:`KEY_ARRAYS` (names without the prefix)."""
    return {"slice_names": encode_json(None if names is None else list(names)),
            "slice_keys": encode_keys(keys)}


def load_key_arrays(arrays: Mapping[str, Any], k: int) -> tuple[KeyLayout, list[Any]]:
    """The layout and the k pending rows' keys from (untrusted) :data:`KEY_ARRAYS`."""
    for name in KEY_ARRAYS:
        if name not in arrays:
            raise ValueError(f"state: DelayedLabels around Sliced needs 'pending.{name}'")
    raw = decode_json(arrays["slice_names"], "pending.slice_names")
    if raw is not None and not (
        isinstance(raw, list) and len(raw) >= 1 and all(isinstance(s, str) and s for s in raw)
        and len(set(raw)) == len(raw)
    ):
        raise ValueError(f"state: pending.slice_names must be null or distinct names, got {raw!r}")
    names = None if raw is None else tuple(raw)
    # one named column keeps plain keys (row_keys), several keep tuples
    keys = _decode_rows(arrays["slice_keys"], None if names is None or len(names) == 1 else len(names))
    if len(keys) != k:
        raise ValueError(f"state: pending.slice_keys holds {len(keys)} keys for {k} pending rows")
    return names, keys


def _decode_rows(arr: Any, width: int | None) -> list[Any]:
    """Per-row keys (repeats allowed, unlike a slice table), each a slice key, or a list of
    ``width`` of them (returned as a tuple)."""
    raw = decode_json(arr, "pending.slice_keys")
    if not isinstance(raw, list):
        raise ValueError("state: pending.slice_keys must be a JSON list of keys")
    return [decode_key(key, width, "pending.slice_keys", i) for i, key in enumerate(raw)]


def key_bytes(key: Any) -> int:
    """Bytes of one pending row's slice key: the object, and its parts when it is a tuple."""
    parts = key if isinstance(key, tuple) else ()
    return sys.getsizeof(key) + sum(sys.getsizeof(part) for part in parts)
