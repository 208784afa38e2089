"""The persisted form of a ``Sliced`` slicing's per-slot accumulators, and its checks.

A file's JSON header describes each array it holds (name, dtype, shape, offset), so a state
that saved one entry per slot and state array (``slices.<slot>:<name>``) grew its header by
hundreds of bytes per slice, and a large enough state could be saved but not loaded (headers
are capped at 64 MiB). Here every state entry of the wrapped accumulator is one group of
arrays, however many slots hold it:

* ``<prefix>stored``: int64, the slots that hold an accumulator (increasing);
* ``<prefix>layout``: UTF-8 JSON ``{"arrays": [[name, ndim], ...], "scalars": {name:
  [[slot, value], ...]}}``: one group per (entry name, dtype, number of dimensions) and the
  scalar entries (a window's clock, a decay's counts);
* per group ``j``: ``<prefix>g<j>.slots`` (int64, the slots holding the entry, increasing),
  ``<prefix>g<j>.shapes`` (int64, one row of dimensions per slot) and ``<prefix>g<j>.data``
  (every slot's array flattened in C order, one after the other).

The header thus holds O(entry names) descriptions, whatever the number of slices. Files of the
earlier layout (one entry per slot: ``<prefix>present`` and ``<prefix><slot>:<name>``) still
load, within the header cap they were written under.

The stacked confusion counts (one row per slot) are checked here too, vectorised over slots with
the same rules a single confusion state applies (O(slots x C^2), no per-slot Python work).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from streammetrics._core.load_checks import check_sums, check_weight_pair, loading
from streammetrics._core.metric import RESERVED_KEYS, Metric

from .keys import decode_json, encode_json

__all__ = ["pack_slots", "unpack_slots", "check_stacked"]

_MAX_NDIM = 32


def _plain(value: Any) -> Any:
    return value.item() if isinstance(value, np.generic) else value


def pack_slots(metrics: list[Metric | None], n: int, prefix: str) -> dict[str, Any]:
    """The entries of slots ``0 .. n-1`` (None: no accumulator) in the grouped layout.
    O(total state size)."""
    stored = [i for i in range(n) if metrics[i] is not None]
    groups: dict[tuple[str, str, int], tuple[list[int], list[tuple[int, ...]], list[np.ndarray]]] = {}
    scalars: dict[str, list[list[Any]]] = {}
    for i in stored:
        m = metrics[i]
        assert m is not None
        for name, value in m.state_dict().items():
            if name in RESERVED_KEYS:
                continue
            if isinstance(value, np.ndarray):
                slots, shapes, parts = groups.setdefault((name, value.dtype.str, value.ndim), ([], [], []))
                slots.append(i)
                shapes.append(value.shape)
                parts.append(value.reshape(-1))
            else:
                scalars.setdefault(name, []).append([i, _plain(value)])
    out: dict[str, Any] = {f"{prefix}stored": np.asarray(stored, np.int64)}
    layout = []
    for j, ((name, dtype, ndim), (slots, shapes, parts)) in enumerate(groups.items()):
        layout.append([name, ndim])
        out[f"{prefix}g{j}.slots"] = np.asarray(slots, np.int64)
        out[f"{prefix}g{j}.shapes"] = np.asarray(shapes, np.int64).reshape(len(slots), ndim)
        out[f"{prefix}g{j}.data"] = np.concatenate(parts) if parts else np.zeros(0, dtype)
    out[f"{prefix}layout"] = encode_json({"arrays": layout, "scalars": scalars})
    return out


def _int_array(arrays: Mapping[str, Any], name: str, ndim: int) -> np.ndarray:
    if name not in arrays:
        raise ValueError(f"state: missing entry {name!r}")
    a = np.asarray(arrays[name])
    if a.ndim != ndim or a.dtype.kind not in "iu":
        raise ValueError(f"state: {name} must be a {ndim}-D integer array, got {a.dtype} {a.shape}")
    return a.astype(np.int64, copy=False)


def _increasing(a: np.ndarray, n: int, name: str) -> None:
    if a.size and (a[0] < 0 or a[-1] >= n or (a.size > 1 and not (np.diff(a) > 0).all())):
        raise ValueError(f"state: {name} must hold increasing slot numbers below {n}")


def unpack_slots(arrays: Mapping[str, Any], prefix: str, n: int,
                 template: Metric) -> tuple[dict[int, Metric], set[str]]:
    """The accumulators saved by :func:`pack_slots` (or the earlier one-entry-per-slot layout)
    for a slicing of ``n`` slots, each loaded as untrusted state; and the entry names used.
    O(total state size)."""
    if f"{prefix}stored" not in arrays and f"{prefix}present" in arrays:
        return _unpack_per_slot(arrays, prefix, n, template)
    stored = _int_array(arrays, f"{prefix}stored", 1)
    _increasing(stored, n, f"{prefix}stored")
    used = {f"{prefix}stored", f"{prefix}layout"}
    if f"{prefix}layout" not in arrays:
        raise ValueError(f"state: missing entry {prefix + 'layout'!r}")
    layout = decode_json(arrays[f"{prefix}layout"], f"{prefix}layout")
    if not (isinstance(layout, dict) and set(layout) == {"arrays", "scalars"}
            and isinstance(layout["arrays"], list) and isinstance(layout["scalars"], dict)):
        raise ValueError(f"state: {prefix}layout must be {{\"arrays\": [...], \"scalars\": {{...}}}}")
    entries: dict[int, dict[str, Any]] = {int(i): {} for i in stored.tolist()}

    def put(slot: int, name: str, value: Any, what: str) -> None:
        slot_entries = entries.get(slot)
        if slot_entries is None:
            raise ValueError(f"state: {what} names slot {slot}, which holds no accumulator")
        if name in slot_entries:
            raise ValueError(f"state: {what} gives entry {name!r} of slot {slot} twice")
        slot_entries[name] = value

    for j, spec in enumerate(layout["arrays"]):
        if not (isinstance(spec, list) and len(spec) == 2 and isinstance(spec[0], str)
                and spec[0] not in RESERVED_KEYS and type(spec[1]) is int
                and 0 <= spec[1] <= _MAX_NDIM):
            raise ValueError(f"state: {prefix}layout array {j} must be [name, ndim], got {spec!r}")
        name, ndim = spec
        g = f"{prefix}g{j}."
        used |= {g + "slots", g + "shapes", g + "data"}
        slots = _int_array(arrays, g + "slots", 1)
        _increasing(slots, n, g + "slots")
        shapes = _int_array(arrays, g + "shapes", 2)
        data = np.asarray(arrays[g + "data"]) if g + "data" in arrays else None
        if data is None or data.ndim != 1:
            raise ValueError(f"state: {g}data must be a 1-D array")
        if shapes.shape != (slots.shape[0], ndim) or (shapes < 0).any():
            raise ValueError(f"state: {g}shapes must be {slots.shape[0]} rows of {ndim} sizes >= 0")
        sizes = np.prod(shapes.astype(np.float64), axis=1)  # floats: no overflow
        if (sizes > data.shape[0]).any() or float(sizes.sum()) != data.shape[0]:
            raise ValueError(f"state: {g}shapes do not add up to the {data.shape[0]} values of {g}data")
        ends = np.cumsum(sizes.astype(np.int64)).tolist()
        start = 0
        for slot, shape, end in zip(slots.tolist(), shapes.tolist(), ends, strict=True):
            put(slot, name, data[start:end].reshape(shape).copy(), g + "slots")
            start = end
    for name, pairs in layout["scalars"].items():
        if name in RESERVED_KEYS or not isinstance(pairs, list):
            raise ValueError(f"state: {prefix}layout scalars {name!r} must be a list of [slot, value]")
        for pair in pairs:
            if not (isinstance(pair, list) and len(pair) == 2 and type(pair[0]) is int
                    and (pair[1] is None or isinstance(pair[1], (bool, int, float, str)))):
                raise ValueError(f"state: {prefix}layout scalars {name!r} must be [slot, scalar] pairs")
            put(pair[0], name, pair[1], f"{prefix}layout scalars")
    return _build(entries, template), used


def _build(entries: dict[int, dict[str, Any]], template: Metric) -> dict[int, Metric]:
    """One accumulator per slot: an empty twin of ``template`` (whose configuration was
    checked once, with the Sliced's) loading the slot's entries as untrusted arrays."""
    out = {}
    for i, e in entries.items():
        m = type(template)._from_config(template._config())
        m._load_arrays(e)
        out[i] = m
    return out


def _unpack_per_slot(arrays: Mapping[str, Any], prefix: str, n: int,
                     template: Metric) -> tuple[dict[int, Metric], set[str]]:
    """The layout of streammetrics up to 0.x: ``<prefix>present`` (JSON slot numbers) and one
    entry ``<prefix><slot>:<name>`` per slot and state entry."""
    pname = f"{prefix}present"
    present = decode_json(arrays[pname], pname)
    if (not isinstance(present, list)
            or not all(isinstance(i, int) and not isinstance(i, bool) for i in present)
            or sorted(set(present)) != present or (present and not present[0] >= 0)
            or (present and present[-1] >= n)):
        raise ValueError(f"state: {pname} must be increasing slot numbers below {n}")
    used = {pname}
    by_slot: dict[int, dict[str, Any]] = {i: {} for i in present}
    for name, value in arrays.items():
        if not name.startswith(prefix) or name == pname:
            continue
        head, sep, rest = name[len(prefix):].partition(":")
        if not sep or not head.isdigit() or int(head) not in by_slot:
            continue
        by_slot[int(head)][rest] = value
        used.add(name)
    return _build(by_slot, template), used


def check_stacked(counts: np.ndarray, w2: np.ndarray, prefix: str) -> None:
    """The stacked confusion counts of every slot (rows of ``counts`` / ``w2``) checked at
    once, as a confusion state checks its own: finite and non-negative, and while loading
    untrusted state also at most ``MAX_SUM`` with squared weights consistent with the weights
    (cell by cell). O(slots x C^2)."""
    for name, a in ((f"{prefix}counts", counts), (f"{prefix}counts_w2", w2)):
        if a.size and not (np.isfinite(a).all() and (a >= 0).all()):
            raise ValueError(f"state: array {name!r} holds negative or non-finite counts")
        if loading():
            check_sums(a, name)
    if loading():
        check_weight_pair(counts, w2, f"arrays {prefix + 'counts'!r}/{prefix + 'counts_w2'!r}")
