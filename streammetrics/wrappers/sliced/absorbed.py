"""The distinct keys a ``Sliced`` overflow slice absorbed, counted in bounded memory.

:class:`Absorbed` counts the distinct keys folded into the ``OTHER`` slice
(``overflow="other"``): exactly while there are at most :data:`EXACT` of them (the keys
themselves are kept, so merges count shared keys once), then with a HyperLogLog sketch of
:data:`REGISTERS` one-byte registers (16 KiB; relative standard error ``1.04 / sqrt(REGISTERS)``,
about 0.8 %), which is mergeable too. Memory: at most ``EXACT`` keys or the sketch, whatever
the number of keys absorbed (a stream of 10^7 distinct keys used to keep all of them).

A key's hash is a fixed function of the key (:func:`key_hash`: SplitMix64 of 64-bit integers,
vectorised; BLAKE2b of the text of anything else), so a sketch saved in one process merges
correctly with one built in another (Python's ``hash`` of strings changes from process to
process).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from typing import Any

import numpy as np

__all__ = ["Absorbed", "EXACT", "REGISTERS"]

#: Most distinct absorbed keys counted exactly (kept as a set).
EXACT = 4096
_P = 14
#: Registers of the HyperLogLog sketch used beyond ``EXACT`` keys.
REGISTERS = 1 << _P
_BITS = 64 - _P  # hash bits that give a register its rank
_MAX_RANK = _BITS + 1


def _jsonable(key: Any) -> Any:
    return [_jsonable(v) for v in key] if isinstance(key, tuple) else key


def key_hash(key: Any) -> int:
    """A 64-bit hash of a (valid) slice key, the same in every process: integers of int64 by
    :func:`_mix64` (vectorised in :func:`_hashes`), anything else by BLAKE2b of its type and
    text (strings as UTF-8, tuples, floats and wider integers as their JSON). A float equal to an
    int64 integer hashes as that integer (``-0.0``, ``0.0`` and ``0`` are one key)."""
    if type(key) is float and key.is_integer() and _LOW <= key < _HIGH:
        key = int(key)
    if type(key) is int and _LOW <= key < _HIGH:
        return int(_mix64(np.array([key], np.int64))[0])
    if isinstance(key, str):
        raw = b"s" + key.encode("utf-8")
    else:
        raw = b"j" + json.dumps(_jsonable(key), separators=(",", ":"), ensure_ascii=False).encode()
    return int.from_bytes(hashlib.blake2b(raw, digest_size=8).digest(), "little")


_LOW, _HIGH = -(2**63), 2**63


def _mix64(x: np.ndarray) -> np.ndarray:
    """SplitMix64's finaliser of int64 values (a bijection of their 64 bits)."""
    z = x.view(np.uint64) + np.uint64(0x9E3779B97F4A7C15)
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


def _hashes(keys: list[Any]) -> np.ndarray:
    """:func:`key_hash` of every key; int64 integers vectorised. O(len(keys))."""
    small = [type(k) is int and _LOW <= k < _HIGH for k in keys]
    if all(small):
        return _mix64(np.array(keys, np.int64)) if keys else np.zeros(0, np.uint64)
    return np.fromiter((key_hash(k) for k in keys), np.uint64, len(keys))


def _registers(keys: Iterable[Any]) -> np.ndarray:
    regs = np.zeros(REGISTERS, np.uint8)
    h = _hashes(list(keys))
    if h.size:
        idx = (h >> np.uint64(_BITS)).astype(np.intp)
        rest = (h & np.uint64((1 << _BITS) - 1)).astype(np.float64)  # < 2**50: exact
        _, bits = np.frexp(rest)  # bit length of rest (0 for 0)
        rank = (_MAX_RANK - bits).astype(np.uint8)
        np.maximum.at(regs, idx, rank)
    return regs


class Absorbed:
    """See the module docstring."""

    def __init__(self) -> None:
        self.keys: set[Any] = set()
        self.sketch: np.ndarray | None = None  # set once more than EXACT keys were absorbed

    def __bool__(self) -> bool:
        return bool(self.keys) or self.sketch is not None

    def __contains__(self, key: Any) -> bool:
        """True if ``key`` is known to be counted (exact mode only; a sketch says False)."""
        return key in self.keys

    def count(self) -> int:
        """The number of distinct absorbed keys (an estimate once past ``EXACT``). O(1) while
        exact, O(REGISTERS) for the sketch."""
        if self.sketch is None:
            return len(self.keys)
        m = float(REGISTERS)
        regs = self.sketch.astype(np.float64)
        estimate = 0.7213 / (1 + 1.079 / m) * m * m / float(np.sum(np.exp2(-regs)))
        zeros = int(np.count_nonzero(self.sketch == 0))
        if estimate <= 2.5 * m and zeros:
            estimate = m * np.log(m / zeros)  # linear counting for small cardinalities
        return max(int(round(estimate)), EXACT + 1)

    def add(self, keys: Iterable[Any]) -> None:
        """Count ``keys`` (duplicates of counted keys are ignored). O(len(keys))."""
        keys = list(keys)
        if self.sketch is not None:
            np.maximum(self.sketch, _registers(keys), out=self.sketch)
            return
        self.keys.update(keys)
        if len(self.keys) > EXACT:
            self.sketch = _registers(self.keys)
            self.keys = set()

    def update(self, other: Absorbed) -> None:
        """Count ``other``'s keys too (a merge). O(EXACT) or O(REGISTERS)."""
        if other.sketch is None:
            self.add(other.keys)
            return
        if self.sketch is None:
            self.sketch = _registers(self.keys)
            self.keys = set()
        np.maximum(self.sketch, other.sketch, out=self.sketch)

    def copy(self) -> Absorbed:
        out = Absorbed()
        out.keys = set(self.keys)
        out.sketch = None if self.sketch is None else self.sketch.copy()
        return out

    @property
    def nbytes(self) -> int:
        return 64 * len(self.keys) + (0 if self.sketch is None else REGISTERS)

    def sorted_keys(self) -> list[Any]:
        """The exact keys in a fixed order (for saving)."""
        return sorted(self.keys, key=repr)

    @classmethod
    def loaded(cls, keys: list[Any], sketch: Any, what: str) -> Absorbed:
        """From saved parts (untrusted): ``ValueError`` naming ``what`` if malformed."""
        out = cls()
        if sketch is None:
            out.add(keys)
            return out
        regs = np.asarray(sketch)
        if regs.shape != (REGISTERS,) or regs.dtype != np.uint8 or int(regs.max()) > _MAX_RANK:
            raise ValueError(f"state: {what} must be {REGISTERS} uint8 registers <= {_MAX_RANK}")
        if keys:
            raise ValueError(f"state: {what} is given beside exact absorbed keys")
        if not regs.any():
            raise ValueError(f"state: {what} is empty (an empty sketch is saved as no sketch)")
        out.sketch = regs.copy()
        return out
