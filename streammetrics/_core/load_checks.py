"""Checks for loading untrusted state (files and state dicts): sizes, plain values, invariants.

A state file is hostile input: a checksum only detects accidents. Loading must therefore fail
with a ``ValueError`` that says what is wrong, in time and memory bounded by what the file holds.
This module is the shared toolbox of those checks:

* :func:`load_budget` / :func:`reserve` -- a memory budget for one load. State constructors call
  ``reserve(nbytes, what)`` *before* they allocate what their configuration implies (C x C
  confusion counts, one group object per class, a grid of T thresholds); outside a load it is a
  no-op. The budget of a load is ``AMPLIFICATION`` times the bytes of state the input carries
  plus ``ALLOWANCE`` (so that a small valid file of a many-class metric still loads).
* :func:`check_plain` -- a configuration is JSON data (None, bool, int, float, str, lists and
  string-keyed dicts) nested at most ``MAX_DEPTH`` deep; :func:`json_depth` measures the nesting
  of a JSON text without parsing it (no recursion).
* :func:`check_sums` / :func:`check_weight_pair` -- counts and weight sums are finite, >= 0,
  at most ``MAX_SUM`` (so their squares stay finite), and a sum of squared weights is consistent
  with its sum of weights (``sum w**2 <= (sum w)**2``, and > 0 when the sum is).
* :func:`check_fits` -- outside a load, a constructor's allocation fits in this machine's memory.
* :func:`config_int` -- an int field of a configuration (not a bool, not a float);
  :func:`check_config_types` -- the flags, sizes and numeric parameters of a whole (nested)
  configuration have their types (``multilabel: nan`` is malformed, not truthy).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

import numpy as np

#: Deepest nesting of lists/dicts accepted in a header or configuration.
MAX_DEPTH = 64
#: Memory a load may use beyond AMPLIFICATION x the state bytes it carries (bytes).
ALLOWANCE = 64 * 2**20
#: Memory a load may use per byte of state it carries (object overheads, sort buffers).
AMPLIFICATION = 128
#: Largest count or weight sum a loaded state may hold: its square (a sum of squared weights,
#: a product of two sums) is still a finite float64.
MAX_SUM = 1e150
#: Most samples a loaded state may stand for (bounds its effective sample size).
MAX_SAMPLES = 2.0**53

_BUDGET: ContextVar[list[float] | None] = ContextVar("streammetrics_load_budget", default=None)


@contextmanager
def load_budget(carried: int) -> Iterator[None]:
    """Within this block, :func:`reserve` charges allocations against a budget of
    ``AMPLIFICATION * carried + ALLOWANCE`` bytes. Nested blocks keep the outer budget (one
    load, one budget)."""
    if _BUDGET.get() is not None:
        yield
        return
    budget = float(AMPLIFICATION) * max(int(carried), 0) + ALLOWANCE
    token = _BUDGET.set([budget, budget])
    try:
        yield
    finally:
        _BUDGET.reset(token)


def loading() -> bool:
    """True inside :func:`load_budget`: untrusted state is being loaded, so states also check
    the semantic invariants of what they load (not only when they reuse ``load_arrays``
    internally, e.g. to subtract or rescale, where rounding is expected)."""
    return _BUDGET.get() is not None


def reserve(nbytes: float, what: str) -> None:
    """Charge ``nbytes`` against the current load's budget; ``ValueError`` naming ``what`` (the
    configuration that implies the allocation) when it would exceed it. Outside a load (a
    constructor): ``ValueError`` when it exceeds the machine's memory (:func:`check_fits`).
    Call it before allocating."""
    budget = _BUDGET.get()
    if budget is None:
        check_fits(nbytes, what)  # a constructor: refuse what no allocation could hold
        return
    if not nbytes <= budget[0]:  # also refuses nan
        raise ValueError(
            f"state: {what} implies about {_human(nbytes)} of state, more than this load allows "
            f"({_human(budget[1])}: {AMPLIFICATION} x the state bytes the input carries "
            f"+ {_human(ALLOWANCE)})"
        )
    budget[0] -= nbytes


def _human(nbytes: float) -> str:
    for unit in ("bytes", "KiB", "MiB", "GiB", "TiB"):
        if abs(nbytes) < 1024 or unit == "TiB":
            return f"{nbytes:.0f} {unit}" if unit == "bytes" else f"{nbytes:.1f} {unit}"
        nbytes /= 1024
    return f"{nbytes:.3g} TiB"  # pragma: no cover


_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"', re.DOTALL)


def json_depth(text: bytes) -> int:
    """Deepest nesting of ``[``/``{`` in a JSON text (strings skipped). O(len(text)), no
    recursion, so a hostile header nested 100k deep is measured, not parsed."""
    bare = _STRING.sub(b'""', text)
    codes = np.frombuffer(bare, dtype=np.uint8)
    if codes.size == 0:
        return 0
    step = (np.isin(codes, (ord("["), ord("{"))).astype(np.int64)
            - np.isin(codes, (ord("]"), ord("}"))).astype(np.int64))
    return int(np.cumsum(step).max(initial=0))


def check_plain(value: Any, where: str, depth: int = 0) -> None:
    """``value`` is JSON data nested at most ``MAX_DEPTH`` deep (floats may be nan/inf: the
    metric's own validation judges them)."""
    if depth > MAX_DEPTH:
        raise ValueError(f"state: {where} is nested more than {MAX_DEPTH} deep")
    if value is None or isinstance(value, (bool, int, float, str)):
        return
    if isinstance(value, (list, tuple)):
        for i, item in enumerate(value):
            check_plain(item, f"{where}[{i}]", depth + 1)
        return
    if isinstance(value, Mapping):
        for key, item in value.items():
            if not isinstance(key, str):
                raise ValueError(f"state: {where} has a non-string key {key!r}")
            check_plain(item, f"{where}.{key}", depth + 1)
        return
    raise ValueError(f"state: {where} holds a {type(value).__name__}, not JSON data")


def config_int(config: Mapping[str, Any], key: str, where: str, *, default: Any = None) -> Any:
    """``config[key]`` if it is an int (or absent: ``default``); ``ValueError`` otherwise (a
    bool, a float such as ``1e7``, a string)."""
    value = config.get(key, default)
    if value is None or (isinstance(value, int) and not isinstance(value, bool)):
        return value
    raise ValueError(f"state: {where} config {key!r} must be an int, got {value!r}")


def check_version(version: Any, current: int, what: str) -> None:
    """A saved ``version`` number is the one this library writes, ``current``; ``what`` starts
    the message (``"state: unknown format version"``). A newer one says to upgrade."""
    if isinstance(version, int) and not isinstance(version, bool) and version > current:
        raise ValueError(f"{what} {version}, newer than this library reads (version {current}): "
                         "written by a later streammetrics, upgrade to load it")
    if version != current or isinstance(version, bool):
        raise ValueError(f"{what} {version!r} (this library reads version {current})")


def check_array_names(arrays: Mapping[str, Any], required: Any, optional: Any = ()) -> None:
    """An untrusted state's arrays are the names ``required`` and any of ``optional``, no
    other: a ``ValueError`` names the unexpected ones, or the first missing one."""
    extra = set(arrays) - set(required) - set(optional)
    if extra:
        raise ValueError(f"state: unexpected arrays {sorted(extra)}")
    for name in required:
        if name not in arrays:
            raise ValueError(f"state: missing array {name!r}")


def split_entries(arrays: Mapping[str, Any], prefixes: tuple[str, ...], owner: str) -> list[dict[str, Any]]:
    """A wrapper's saved entries by the prefix of their names: one dict per prefix, of the
    entries under it (names without the prefix). An entry under none of them is a
    ``ValueError`` naming it and ``owner``, the wrapper."""
    parts: list[dict[str, Any]] = [{} for _ in prefixes]
    for key, value in arrays.items():
        for part, prefix in zip(parts, prefixes, strict=True):
            if key.startswith(prefix):
                part[key[len(prefix):]] = value
                break
        else:
            raise ValueError(f"state: unexpected entry {key!r} in {owner}")
    return parts


def check_sums(arr: np.ndarray, name: str) -> None:
    """Counts / weight sums: finite, >= 0 and <= ``MAX_SUM``; names the first bad index."""
    if arr.size == 0:
        return
    bad = ~((arr >= 0) & (arr <= MAX_SUM))  # nan compares False
    if bad.any():
        i = int(np.argmax(bad.reshape(-1)))
        raise ValueError(
            f"state: array {name!r} must hold finite counts in [0, {MAX_SUM:g}], "
            f"got {float(arr.reshape(-1)[i])!r} at flat index {i}"
        )


def check_total(arr: np.ndarray, name: str, *, normal: bool = False) -> None:
    """Weights (or per-bin weight sums) whose every entry and whose total are finite counts
    in [0, ``MAX_SUM``]: sums over them (AUROC's products of totals, a window's running sums)
    stay finite. ``normal``: no subnormal entries either (ratios of them overflow)."""
    check_sums(arr, name)
    if normal:
        subnormal = (arr > 0) & (arr < np.finfo(np.float64).tiny)
        if subnormal.any():
            raise ValueError(f"state: array {name!r} holds a subnormal weight "
                             f"{float(arr[subnormal][0])!r} at index {int(np.argmax(subnormal))}")
    total = float(np.sum(arr, dtype=np.float64)) if arr.size else 0.0
    if not total <= MAX_SUM:
        raise ValueError(f"state: array {name!r} sums to {total!r}, more than {MAX_SUM:g}")


def check_weight_pair(total: np.ndarray, total_w2: np.ndarray, name: str) -> None:
    """Element-wise, a sum of weights ``total`` and its sum of squared weights ``total_w2``
    could come from one set of positive weights: ``total_w2 <= total**2`` (up to rounding),
    ``total_w2 == 0`` where ``total == 0``, and ``total_w2 >= total**2 / MAX_SAMPLES`` (unless
    ``total**2`` underflows): the effective sample size (sum w)**2 / sum w**2 of the intervals
    is between 1 and ``MAX_SAMPLES``, not infinite (a zero-width interval) or absurd."""
    t = np.asarray(total, dtype=np.float64)
    q = np.asarray(total_w2, dtype=np.float64)
    sq = t * t
    tiny = np.finfo(np.float64).tiny
    bad = ((q > sq * (1 + 1e-9) + tiny) | ((t == 0) & (q != 0))
           | ((sq > tiny * MAX_SAMPLES) & (q * MAX_SAMPLES < sq * (1 - 1e-9))))
    if bad.any():
        i = int(np.argmax(bad.reshape(-1)))
        raise ValueError(
            f"state: {name} is inconsistent at flat index {i}: sum of weights "
            f"{float(t.reshape(-1)[i])!r} with sum of squared weights {float(q.reshape(-1)[i])!r} "
            f"(needs (sum w)**2 / {MAX_SAMPLES:g} <= sum w**2 <= (sum w)**2: an effective "
            f"sample size between 1 and {MAX_SAMPLES:g})"
        )


def carried_nbytes(state: Mapping[str, Any]) -> int:
    """Bytes of state a state dict carries: its arrays, plus 16 per element of any list in
    its configuration (a grid of thresholds, class weights). O(number of entries)."""
    total = 0
    for key, value in state.items():
        if isinstance(value, np.ndarray):
            total += int(value.nbytes)
        elif key == "config":
            total += 16 * _count_leaves(value, 0)
    return total


def _count_leaves(value: Any, depth: int) -> int:
    if depth > MAX_DEPTH:
        return 0
    if isinstance(value, (list, tuple)):
        return sum(_count_leaves(v, depth + 1) for v in value)
    if isinstance(value, Mapping):
        return sum(_count_leaves(v, depth + 1) for v in value.values())
    return 1


#: Configuration keys (of any metric or wrapper) whose loaded values must have these types
#: (None is left to the constructor): flags are real bools, sizes real ints, parameters real
#: numbers -- a file saying ``multilabel: nan`` or ``threshold: true`` is malformed, not truthy.
_BOOL_KEYS = frozenset({"multilabel", "interpolated", "eleven_point", "per_query", "drop_intermediate",
                        "adjusted"})
_INT_KEYS = frozenset({"num_classes", "k", "ignore_index", "capacity", "batch_size", "size", "max_bytes"})
_NUMBER_KEYS = frozenset({"threshold", "beta", "rel_level", "rel_max", "max_fpr", "r", "half_life",
                          "half_life_seconds", "ttl", "max_delay", "seconds", "zero_division"})


def check_config_types(config: Any, where: str, depth: int = 0) -> None:
    """The typed keys of every mapping in a (nested) configuration; see ``_BOOL_KEYS`` etc."""
    if depth > MAX_DEPTH:
        raise ValueError(f"state: {where} is nested more than {MAX_DEPTH} deep")
    if isinstance(config, Mapping):
        for key, value in config.items():
            if key in _BOOL_KEYS and not isinstance(value, bool):
                raise ValueError(f"state: {where} {key!r} must be true or false, got {value!r}")
            if key == "thresholds" and isinstance(value, list) and any(isinstance(v, bool) for v in value):
                raise ValueError(f"state: {where} 'thresholds' must be numbers, got {value!r}")
            if value is not None:
                if key in _INT_KEYS and (isinstance(value, bool) or not isinstance(value, int)):
                    raise ValueError(f"state: {where} {key!r} must be an int, got {value!r}")
                if key in _NUMBER_KEYS and (
                    isinstance(value, bool) or not isinstance(value, (int, float, str))
                    or (isinstance(value, str) and key != "zero_division")
                ):
                    raise ValueError(f"state: {where} {key!r} must be a number, got {value!r}")
            if key == "members" and isinstance(value, Mapping):  # a MetricSet: names are free
                for spec in value.values():
                    check_config_types(spec, where, depth + 2)
            else:
                check_config_types(value, where, depth + 1)
    elif isinstance(config, list):
        for item in config:
            check_config_types(item, where, depth + 1)


def _physical_memory() -> float:
    """The machine's physical memory in bytes (1 TiB where the platform does not say)."""
    try:
        return float(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"))
    except (AttributeError, OSError, ValueError):
        return float(2**40)


def check_fits(nbytes: float, what: str) -> None:
    """``ValueError`` naming ``what`` (the argument and value that imply the allocation, e.g.
    ``"num_classes=1000000000"``) when a state of ``nbytes`` could not fit in this machine's
    memory: a constructor refuses it at once instead of failing inside numpy (MemoryError) or
    running for hours. O(1)."""
    limit = _physical_memory()
    if not nbytes <= limit:  # also refuses nan
        raise ValueError(f"{what}: implies about {nbytes:.3g} bytes of state, more than this "
                         f"machine's memory ({limit:.3g} bytes)")
