"""Slice keys: reading the ``slices=`` argument, factorising keys, and storing them safely.

A slice key is a string or an integer (booleans are read as the integers 0 and 1); several key
columns make tuples of them (the crossed slices). Factorising a batch's keys is one pass:

* integer keys whose range is small (at most ``max(4096, n)`` values) are their own codes
  (``key - min``): no sort at all;
* other integers go through one ``numpy.unique(..., return_inverse=True)`` (a sort); strings
  through a vectorised 64-bit hash, one sort of the hashes and a check against collisions;
* object arrays (mixed or foreign key types) through one dict lookup per row (the only per-row
  Python loop, for inputs that are Python objects already).

Keys are persisted as UTF-8 JSON (strings, integers, lists of them for tuples) inside a uint8
array and validated on load: never pickle, never anything but str / int / tuples of them.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from ._load_checks import MAX_DEPTH, json_depth
from ._params import nonempty_param

__all__ = [
    "OTHER",
    "OtherSlice",
    "Factorized",
    "split_slices",
    "factorize",
    "cross",
    "encode_keys",
    "decode_keys",
    "encode_json",
    "decode_json",
]

#: At most this many distinct values (or the batch size, if larger) for integer keys to be
#: their own codes; beyond it they are factorised with a sort.
DENSE_RANGE = 4096
#: The rule of a dict or tuple of key columns.
_KEYS_RULE = "expected at least one key column"


class OtherSlice:
    """The key of the slice that absorbs keys beyond ``max_slices`` (``overflow="other"``).

    One instance, :data:`streammetrics.OTHER`; it stays itself through ``copy`` and pickling.

    Examples
    --------
    >>> import streammetrics as sm
    >>> s = sm.Sliced(sm.Accuracy(), max_slices=1, overflow="other")
    >>> s.update([1, 0, 1], [1, 1, 1], slices=["a", "b", "c"]).compute()
    {'a': 1.0, OTHER: 0.5}
    >>> sm.OTHER is type(sm.OTHER)()
    True
    """

    _instance: OtherSlice | None = None

    def __new__(cls) -> OtherSlice:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "OTHER"

    def __reduce__(self) -> str:
        return "OTHER"


#: The overflow slice's key in ``Sliced.compute()``.
OTHER = OtherSlice()


@dataclass
class Factorized:
    """Codes of one batch's keys: ``codes[i]`` in ``[0, size)`` for row i; :meth:`keys` gives
    the key of each code. Codes need not all occur (integer keys use their offset as code)."""

    codes: np.ndarray
    size: int
    _lookup: Any  # callable: array of codes -> list of keys
    #: integer keys whose code is ``key - offset`` (the dense path), else None
    offset: int | None = None

    def keys(self, codes: np.ndarray) -> list[Any]:
        return list(self._lookup(codes))


def split_slices(slices: Any, n: int) -> tuple[tuple[str, ...] | None, list[np.ndarray]]:
    """``slices`` as (names, key columns): a mapping gives named columns, a tuple unnamed ones
    (``key0``, ``key1``, ...), anything else one column (names None). Each column must hold one
    key per row (shape (n,))."""
    if isinstance(slices, Mapping):
        names = tuple(nonempty_param(slices, "slices", _KEYS_RULE))
        for name in names:
            if not isinstance(name, str) or not name:
                raise ValueError(f"slices: key names must be non-empty strings, got {name!r}")
        columns = [slices[name] for name in names]
    elif isinstance(slices, tuple):
        columns = nonempty_param(slices, "slices", _KEYS_RULE)
        names = tuple(f"key{i}" for i in range(len(columns)))
    else:
        return None, [_column(slices, n, "slices")]
    return names, [_column(c, n, f"slices[{name!r}]") for c, name in zip(columns, names, strict=True)]


def _column(values: Any, n: int, what: str) -> np.ndarray:
    if values is None:
        raise ValueError(f"{what}: required, one key per row")
    arr = np.asarray(values)
    if arr.ndim == 0:
        arr = arr.reshape(1)
    if arr.ndim != 1 or arr.shape[0] != n:
        raise ValueError(f"{what}: expected one key per row, shape ({n},), got shape {arr.shape}")
    return arr


def factorize(arr: np.ndarray, what: str = "slices") -> Factorized:
    """Codes for one key column (see the module docstring). O(n) for small integer ranges,
    O(n log n) otherwise."""
    n = arr.shape[0]
    kind = arr.dtype.kind
    if n == 0:
        return Factorized(np.zeros(0, np.intp), 0, lambda c: [])
    if kind == "b":
        arr = arr.astype(np.int64)
        kind = "i"
    if kind in "iu":
        span = max(DENSE_RANGE, n)
        # Non-negative keys below the span (the usual ids 0..k-1) are their own codes: one
        # pass (the max of the unsigned view: a negative key reads as a huge one).
        top = int(arr.view(arr.dtype.str.replace("i", "u")).max())
        if top < span:
            codes = arr.astype(np.intp, copy=False)
            return Factorized(codes, top + 1, lambda c: np.asarray(c).tolist(), 0)
        lo, hi = int(arr.min()), int(arr.max())
        if hi - lo < max(DENSE_RANGE, n):
            codes = (arr - arr.dtype.type(lo)) if lo else arr
            codes = codes.astype(np.intp, copy=False)
            return Factorized(codes, hi - lo + 1, lambda c, lo=lo: (np.asarray(c) + lo).tolist(), lo)
        uniques, codes = np.unique(arr, return_inverse=True)
        return Factorized(codes.reshape(-1).astype(np.intp, copy=False), len(uniques),
                          lambda c, u=uniques: u[c].tolist())
    if kind == "U":
        return _factorize_strings(arr)
    if kind == "O":
        return _factorize_objects(arr, what)
    first = arr[0]
    raise ValueError(
        f"{what}: keys must be strings or integers, got {arr.dtype} keys (first value {first!r})"
    )


_MIX = np.uint64(0x9E3779B97F4A7C15)


def _factorize_strings(arr: np.ndarray) -> Factorized:
    """Fixed-width strings: a 64-bit polynomial hash of each string's code points (vectorised,
    one pass per character position), one sort of the hashes, then one vectorised comparison of
    every string with its hash's representative; on a collision (never seen in practice) the
    strings themselves are sorted. About 3x faster than sorting the strings."""
    n = arr.shape[0]
    width = arr.dtype.itemsize // 4
    if width:
        u = np.ascontiguousarray(arr).view(np.uint32).reshape(n, width)
        h = u[:, 0].astype(np.uint64)
        for j in range(1, width):
            h *= _MIX
            h += u[:, j]
        uniq, inv = np.unique(h, return_inverse=True)
        inv = inv.reshape(-1).astype(np.intp, copy=False)
        rep = np.empty(len(uniq), np.intp)
        rep[inv] = np.arange(n)
        if np.array_equal(arr, arr[rep[inv]]):
            table = arr[rep]
            return Factorized(inv, len(uniq), lambda c, t=table: t[c].tolist())
    uniques, codes = np.unique(arr, return_inverse=True)
    return Factorized(codes.reshape(-1).astype(np.intp, copy=False), len(uniques),
                      lambda c, u=uniques: u[c].tolist())


_KEY_TYPES = (str, int, np.str_, np.integer, np.bool_)


def _factorize_objects(arr: np.ndarray, what: str) -> Factorized:
    values = arr.tolist()
    lookup: dict[Any, int] = {}
    setdefault = lookup.setdefault
    try:
        codes = np.fromiter((setdefault(v, len(lookup)) for v in values), np.intp, len(values))
    except TypeError:  # an unhashable key
        codes = None
    ok = codes is not None and all(isinstance(k, _KEY_TYPES) for k in lookup)
    if not ok:
        for i, v in enumerate(values):
            if not isinstance(v, _KEY_TYPES) or isinstance(v, float):
                raise ValueError(
                    f"{what}: keys must be strings or integers; first invalid key {v!r} "
                    f"({type(v).__name__}) at index {i}"
                )
    assert codes is not None
    uniques = [_plain_key(k) for k in lookup]
    table = np.empty(len(uniques), dtype=object)
    table[:] = uniques
    return Factorized(codes, len(uniques), lambda c, t=table: t[c].tolist())


def _plain_key(k: Any) -> str | int:
    if isinstance(k, str):
        return str(k)
    return int(k)


def cross(parts: list[Factorized]) -> Factorized:
    """The crossed codes of several key columns (one code per combination), keys are tuples.
    O(n) while the product of the columns' code ranges is small, else one sort."""
    size = 1
    codes = np.zeros(parts[0].codes.shape[0], np.intp)
    for f in parts:
        size *= f.size
    sizes = [f.size for f in parts]
    n = codes.shape[0]
    if size < 2**62:
        for f in parts:
            codes *= f.size
            codes += f.codes
        if size <= max(DENSE_RANGE, n):
            return Factorized(codes, size, lambda c: _tuples(parts, sizes, np.asarray(c)))
        uniques, inv = np.unique(codes, return_inverse=True)
        return Factorized(inv.reshape(-1).astype(np.intp, copy=False), len(uniques),
                          lambda c, u=uniques: _tuples(parts, sizes, u[c]))
    stacked = np.stack([f.codes for f in parts], axis=1)
    uniques, inv = np.unique(stacked, axis=0, return_inverse=True)
    return Factorized(inv.reshape(-1).astype(np.intp, copy=False), len(uniques),
                      lambda c, u=uniques: _rows_tuples(parts, u[c]))


def _tuples(parts: list[Factorized], sizes: list[int], flat: np.ndarray) -> list[tuple[Any, ...]]:
    if flat.size == 0:
        return []
    idx = np.unravel_index(flat, sizes)
    return list(zip(*(f.keys(i) for f, i in zip(parts, idx, strict=True)), strict=True))


def _rows_tuples(parts: list[Factorized], rows: np.ndarray) -> list[tuple[Any, ...]]:
    if rows.shape[0] == 0:
        return []
    return list(zip(*(f.keys(rows[:, j]) for j, f in enumerate(parts)), strict=True))


# -- persistence --------------------------------------------------------------------------------
def encode_json(value: Any) -> np.ndarray:
    """JSON data as a uint8 array (UTF-8), the form a state dict stores it in."""
    text = json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    return np.frombuffer(text.encode("utf-8"), dtype=np.uint8).copy()


def decode_json(arr: Any, what: str) -> Any:
    """Inverse of :func:`encode_json` for untrusted input (``ValueError`` saying what)."""
    a = np.asarray(arr)
    if a.ndim != 1 or a.dtype != np.uint8:
        raise ValueError(f"state: {what} must be a 1-D uint8 array of UTF-8 JSON")
    raw = a.tobytes()
    if json_depth(raw) > MAX_DEPTH:
        raise ValueError(f"state: {what} is nested more than {MAX_DEPTH} deep")
    try:
        return json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise ValueError(f"state: {what} is not valid JSON ({exc})") from None


def encode_keys(keys: list[Any]) -> np.ndarray:
    """Slice keys (str, int, tuples of them) as a uint8 JSON array; tuples become lists."""
    return encode_json([list(k) if isinstance(k, tuple) else k for k in keys])


def decode_keys(arr: Any, width: int | None, what: str) -> list[Any]:
    """Validated slice keys: each a str or int (``width`` None) or a list of ``width`` of them
    (returned as tuples); no duplicates."""
    raw = decode_json(arr, what)
    if not isinstance(raw, list):
        raise ValueError(f"state: {what} must be a JSON list of keys")
    out: list[Any] = []
    for i, k in enumerate(raw):
        if width is None:
            if not _storable_key(k):
                raise ValueError(f"state: {what}[{i}] must be a string or an integer, got {k!r}")
            out.append(k)
        else:
            if not (isinstance(k, list) and len(k) == width and all(_storable_key(v) for v in k)):
                raise ValueError(
                    f"state: {what}[{i}] must be a list of {width} strings or integers, got {k!r}"
                )
            out.append(tuple(k))
    if len(set(out)) != len(out):
        raise ValueError(f"state: {what} holds a key twice")
    return out


def _storable_key(k: Any) -> bool:
    return isinstance(k, str) or (isinstance(k, int) and not isinstance(k, bool))
