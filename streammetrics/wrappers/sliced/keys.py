"""Slice keys: reading the ``slices=`` argument, factorising keys, and storing them safely.

A slice key is one of

* a string (valid Unicode: a lone surrogate such as ``"\\ud800"`` is refused, it could be
  neither saved nor exported; NUL characters are kept, ``"a\\x00"`` and ``"a"`` are two keys --
  but numpy's fixed-width string arrays drop trailing NULs themselves, so pass such keys as a
  list or an object array);
* an integer in [-2**63, 2**64) (numpy integers included; booleans are the integers 0 and 1);
* a float, grouped as Fairlearn's ``MetricFrame`` groups a float feature (pandas' grouping):
  by distinct value, ``-0.0`` and ``0.0`` one group (keyed as it first occurred), an integer and
  a float that compare equal one group, ``inf`` a group of its own, NaN refused (a missing value,
  refused by ``MetricFrame`` too); float16 / float32 keys as the float64 values they hold, a list
  holding a float read as float64 (as pandas reads it);
* a tuple of strings, integers, booleans (read as 0 and 1) and finite floats, as ``zip`` or a
  pandas ``MultiIndex`` gives them (not nested: a tuple inside a tuple is refused).

The keys of one column are all of one kind (all strings, all numbers -- integers and floats -- or
all tuples): ``1`` and ``"1"`` would be one label when exported. Several key columns make tuples
of their keys (the crossed slices). Factorising a batch's keys is one pass:

* integer keys whose range is small (at most ``max(4096, n)`` values) are their own codes
  (``key - min``): no sort at all;
* other integers and floats go through one ``numpy.unique(..., return_inverse=True)`` (a sort;
  floats keep the first occurrence of each value as its key); strings
  through a vectorised 64-bit hash, one sort of the hashes and a check against collisions;
* lists holding strings or tuples, and object arrays (pandas columns, tuples), through one dict
  lookup per row (the only per-row Python loop, for inputs that are Python objects already);
  each distinct key is then checked once.

Keys are persisted as UTF-8 JSON (strings, integers, floats, lists for tuples) inside a uint8 array and
validated on load: never pickle, never anything but the keys above.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from streammetrics._core.load_checks import MAX_DEPTH, json_depth
from streammetrics._core.params import nonempty_param

__all__ = [
    "OTHER",
    "OtherSlice",
    "Factorized",
    "split_slices",
    "factorize",
    "cross",
    "encode_keys",
    "decode_keys",
    "list_keys",
    "short_repr",
    "decode_key",
    "key_kind",
    "same_kind",
    "plain_key",
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
    #: the kind of every key (see :func:`key_kind`)
    kind: str = "integer"

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
    if isinstance(values, Iterator):  # zip(...), a generator
        values = list(values)
    arr = list_keys(values) if isinstance(values, (list, tuple)) else np.asarray(values)
    if np.ma.isMaskedArray(values) and np.ma.getmaskarray(values).any():
        i = int(np.argmax(np.ma.getmaskarray(values).reshape(-1)))
        raise ValueError(f"{what}: masked keys are not supported (first masked key at index {i}); "
                         "fill or drop the masked rows")
    if arr.ndim == 0:
        arr = arr.reshape(1)
    if arr.ndim != 1 or arr.shape[0] != n:
        raise ValueError(f"{what}: expected one key per row, shape ({n},), got shape {arr.shape}")
    return arr


def list_keys(values: list[Any] | tuple[Any, ...]) -> np.ndarray:
    """A list of keys as the array :func:`factorize` reads. Strings become a fixed-width
    string array (the fast path) unless one is wider than ``WIDE`` characters or ends with a
    NUL; then, and for tuples or a mix with strings, an object array: numpy would make tuples a
    2-D array, give every string the width of the longest (one long key: n x its length), drop
    trailing NULs and turn an integer among strings into a string. O(n)."""
    strings = [isinstance(v, str) for v in values]
    if any(strings):
        if all(strings) and max(map(len, values)) <= WIDE \
                and not any(v.endswith("\x00") for v in values):
            return np.asarray(values)
        return np.fromiter(values, dtype=object, count=len(values))
    if any(isinstance(v, tuple) for v in values):
        return np.fromiter(values, dtype=object, count=len(values))
    try:
        arr = np.asarray(values)
    except ValueError:  # ragged (a list among the keys): refused, by key, in factorize
        return np.fromiter(values, dtype=object, count=len(values))
    if arr.dtype.kind == "f" and not any(isinstance(v, (float, np.floating)) for v in values):
        # integers no integer dtype holds (-1 and 2**63): kept exact, as Python integers
        return np.fromiter(values, dtype=object, count=len(values))
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
        if arr.dtype.itemsize < 8:  # narrow integers: offsets computed in their dtype would wrap
            arr = arr.astype(np.int64)
            kind = "i"
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
            first = arr.dtype.type(lo)  # in the keys' own dtype: uint64 keys beyond 2**63 stay exact
            return Factorized(codes, hi - lo + 1,
                              lambda c, f=first: (np.asarray(c).astype(f.dtype) + f).tolist(), lo)
        uniques, codes = np.unique(arr, return_inverse=True)
        return Factorized(codes.reshape(-1).astype(np.intp, copy=False), len(uniques),
                          lambda c, u=uniques: u[c].tolist())
    if kind == "f":
        return _factorize_floats(arr, what)
    if kind == "U":
        return _factorize_strings(arr, what)
    if kind == "O":
        return _factorize_objects(arr, what)
    first = arr[0]
    raise ValueError(
        f"{what}: keys must be strings, integers or tuples of them, got {arr.dtype} keys "
        f"(first value {first!r})"
    )


def _factorize_floats(arr: np.ndarray, what: str) -> Factorized:
    """Float keys as ``MetricFrame`` groups them: by value (``-0.0 == 0.0``), each group keyed by
    its first occurrence in the batch (a stable sort), NaN refused. O(n log n)."""
    arr = arr.astype(np.float64, copy=False)
    nan = np.isnan(arr)
    if nan.any():
        i = int(np.argmax(nan))
        raise ValueError(f"{what}: a float key is nan at index {i} (a missing value: fill or drop "
                         "the row; Fairlearn's MetricFrame refuses missing values too)")
    _, first, codes = np.unique(arr, return_index=True, return_inverse=True)
    table = arr[first]
    return Factorized(codes.reshape(-1).astype(np.intp, copy=False), len(first),
                      lambda c, t=table: t[c].tolist(), kind="float")


_MIX = np.uint64(0x9E3779B97F4A7C15)


def _factorize_strings(arr: np.ndarray, what: str) -> Factorized:
    """Fixed-width strings: a 64-bit polynomial hash of each string's code points (vectorised,
    one pass per character position), one sort of the hashes, then one vectorised comparison of
    every string with its hash's representative; on a collision (never seen in practice) the
    strings themselves are sorted. About 3x faster than sorting the strings. Wide strings (more
    than ``WIDE`` characters) go through the dict path instead (one pass per character
    position would cost a numpy call per character)."""
    n = arr.shape[0]
    width = arr.dtype.itemsize // 4
    if width > WIDE:
        return _factorize_objects(arr.astype(object), what)
    if width:
        u = np.ascontiguousarray(arr).view(np.uint32).reshape(n, width)
        bad = ((u >= 0xD800) & (u <= 0xDFFF)) | (u > 0x10FFFF)
        if bad.any():
            i = int(np.argmax(bad.any(axis=1)))
            _check_str(str(arr[i]), what, i)
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
            return Factorized(inv, len(uniq), lambda c, t=table: t[c].tolist(), kind="string")
    uniques, codes = np.unique(arr, return_inverse=True)
    return Factorized(codes.reshape(-1).astype(np.intp, copy=False), len(uniques),
                      lambda c, u=uniques: u[c].tolist(), kind="string")


#: Strings wider than this many characters are factorised through the dict path.
WIDE = 256
_INT_RANGE = (-(2**63), 2**64)
_RULE = ("keys must be strings, integers, floats or tuples of strings, integers, booleans and "
         "finite floats")


def _factorize_objects(arr: np.ndarray, what: str) -> Factorized:
    values = arr.tolist()
    lookup: dict[Any, int] = {}
    setdefault = lookup.setdefault
    try:
        codes = np.fromiter((setdefault(v, len(lookup)) for v in values), np.intp, len(values))
    except TypeError:  # an unhashable key
        for i, v in enumerate(values):
            try:
                hash(v)
            except TypeError:
                raise ValueError(f"{what}: {_RULE}; first invalid key {v!r} "
                                 f"({type(v).__name__}) at index {i}") from None
        raise
    uniques = []
    for c, k in enumerate(lookup):
        try:
            uniques.append(plain_key(k))
        except ValueError as exc:
            raise ValueError(f"{what}: {exc} at index {int(np.argmax(codes == c))}") from None
    kind = key_kind(uniques[0]) if uniques else "integer"
    for c, k in enumerate(uniques):
        if not same_kind(key_kind(k), kind):
            raise ValueError(
                f"{what}: the keys of one column must be of one kind (all strings, all numbers "
                f"or all tuples of one shape: 1 and '1' would be one label when exported); got "
                f"{short_repr(uniques[0])} ({kind}) and {short_repr(k)} ({key_kind(k)}) at "
                f"index {int(np.argmax(codes == c))}"
            )
    table = np.empty(len(uniques), dtype=object)
    table[:] = uniques
    return Factorized(codes, len(uniques), lambda c, t=table: t[c].tolist(), kind=kind)


def key_kind(key: Any) -> str:
    """The kind of a (valid) key: ``"string"``, ``"integer"``, or for a tuple its length and
    the kind of each element, e.g. ``"tuple (string, number)"`` (integers and floats are both
    numbers: equal ones are one key, distinct ones print differently). Keys of one column share
    one kind, so distinct keys never print alike (``1`` / ``"1"``, ``("a", 1)`` / ``("a",
    "1")``)."""
    if isinstance(key, str):
        return "string"
    if isinstance(key, tuple):
        return "tuple (" + ", ".join("string" if isinstance(v, str) else "number" for v in key) + ")"
    return "float" if isinstance(key, float) else "integer"


def same_kind(a: str, b: str) -> bool:
    """True if keys of kinds ``a`` and ``b`` may share a column: equal kinds, or integers and
    floats (numbers: equal ones are one key, as in ``MetricFrame``)."""
    return a == b or {a, b} == {"integer", "float"}


def _check_str(k: str, what: str, i: int | None = None) -> None:
    try:
        k.encode("utf-8")
    except UnicodeEncodeError as exc:
        where = "" if i is None else f" at index {i}"
        raise ValueError(f"{what}: key {k!r}{where} is not valid Unicode ({exc.reason}: "
                         f"{k[exc.start:exc.end]!r}); it could be neither saved nor exported") from None


def plain_key(k: Any) -> Any:
    """A key as stored (``str``, ``int``, ``float`` or a tuple of ``str`` / ``int`` /
    ``float``), or ``ValueError`` saying why ``k`` is not a key (the caller adds where it
    is)."""
    if isinstance(k, str):
        s = str(k)
        _check_str(s, "key")
        return s
    if isinstance(k, (bool, np.bool_)):
        return int(k)
    if isinstance(k, (int, np.integer)):
        v = int(k)
        if not _INT_RANGE[0] <= v < _INT_RANGE[1]:
            raise ValueError(f"integer keys must be in [-2**63, 2**64); got one of {v.bit_length()} bits")
        return v
    if isinstance(k, (float, np.floating)):
        f = float(k)
        if f != f:
            raise ValueError("a float key is nan (a missing value: fill or drop the row; "
                             "Fairlearn's MetricFrame refuses missing values too)")
        return f
    if isinstance(k, tuple) and k:
        return tuple(_element(v) for v in k)
    raise ValueError(f"{_RULE}; first invalid key {short_repr(k)} ({type(k).__name__})")


def _element(v: Any) -> Any:
    if isinstance(v, (float, np.floating)):
        f = float(v)
        if not np.isfinite(f):
            raise ValueError(f"a tuple key holds {f!r} (tuples may hold finite floats only)")
        return f
    if isinstance(v, tuple):
        raise ValueError(f"tuple keys may not be nested; got {short_repr(v)} inside a key")
    return plain_key(v)


def short_repr(k: Any) -> str:
    """``repr(k)``, cut to 80 characters (a key in an error message)."""
    text = repr(k)
    return text if len(text) <= 80 else text[:77] + "..."


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


def _jsonable(key: Any) -> Any:
    return [_jsonable(v) for v in key] if isinstance(key, tuple) else key


def encode_keys(keys: list[Any]) -> np.ndarray:
    """Slice keys as a uint8 JSON array; tuples become lists."""
    return encode_json([_jsonable(k) for k in keys])


def decode_keys(arr: Any, width: int | None, what: str) -> list[Any]:
    """Validated slice keys (see the module docstring): each a key (``width`` None) or a
    list of ``width`` keys (returned as tuples); no duplicates. O(keys)."""
    raw = decode_json(arr, what)
    if not isinstance(raw, list):
        raise ValueError(f"state: {what} must be a JSON list of keys")
    out: list[Any]
    if width is None and all(type(k) is int for k in raw):  # the common cases, without a loop
        if raw and not (_INT_RANGE[0] <= min(raw) and max(raw) < _INT_RANGE[1]):
            raise ValueError(f"state: {what} holds an integer key outside [-2**63, 2**64)")
        out = raw
    elif width is None and all(type(k) is str for k in raw):
        try:
            "".join(raw).encode("utf-8")
        except UnicodeEncodeError:
            _check_str("".join(raw), f"state: {what}")
        out = raw
    else:
        # Keys of several kinds in one column are not refused: earlier versions accepted them
        # (an object column of ints and strings), and what they saved still loads. New keys
        # must then be of the kind of the column's first key.
        out = [decode_key(k, width, what, i) for i, k in enumerate(raw)]
    if len(set(out)) != len(out):
        raise ValueError(f"state: {what} holds a key twice")
    return out


def decode_key(k: Any, width: int | None, what: str, i: int) -> Any:
    def one(v: Any) -> Any:
        if isinstance(v, list):
            if not v or any(isinstance(e, (list, bool)) or e is None or isinstance(e, dict)
                            for e in v):
                raise ValueError("a tuple key must be a non-empty list of strings and numbers")
            return tuple(_element(e) for e in v)
        if isinstance(v, bool) or not isinstance(v, (str, int, float)):
            raise ValueError(f"not a key: {v!r}")
        return plain_key(v)

    try:
        if width is None:
            return one(k)
        if not (isinstance(k, list) and len(k) == width):
            raise ValueError(f"expected a list of {width} keys")
        return tuple(one(v) for v in k)
    except ValueError as exc:
        raise ValueError(f"state: {what}[{i}] is not a valid key: {exc} (got {short_repr(k)})") from None
