"""Constructor arguments: one check per kind of parameter, shared by every public class, so a
wrong argument is a ``ValueError`` that names it, states the rule and shows the value -- the same
whether the class is built directly or by ``load`` from a file's configuration.
"""

from __future__ import annotations

import math
import os
from typing import Any

import numpy as np

__all__ = ["check_fits", "float_array_param", "real_param"]


def real_param(value: Any, name: str, rule: str = "a finite number", *, allow_inf: bool = False) -> float:
    """``value`` as a Python float: a real number (int, float or a numpy scalar of either; not a
    bool, string, complex, sequence or None) that is finite (or +-inf with ``allow_inf``; never
    NaN). Else ``ValueError`` reading ``"<name>: expected <rule>, got <value>"``. Range checks
    stay with the caller, which words them with the same ``rule``. O(1)."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise ValueError(f"{name}: expected {rule}, got {value!r}"[:300])
    try:
        out = float(value)
    except OverflowError:  # an int beyond float64
        if allow_inf:
            return math.inf if value > 0 else -math.inf
        raise ValueError(f"{name}: expected {rule}, got an int beyond the float64 range") from None
    if math.isnan(out) or (math.isinf(out) and not allow_inf):
        raise ValueError(f"{name}: expected {rule}, got {out!r}")
    return out


def float_array_param(value: Any, name: str, rule: str) -> np.ndarray:
    """``value`` as a float64 array of real numbers (no strings, bytes, complex, None or
    ragged nesting); ``ValueError`` ``"<name>: expected <rule>, got <value>"`` otherwise. Shape
    and value rules stay with the caller. O(size)."""
    bad = f"{name}: expected {rule}, got {value!r}"[:300]
    if isinstance(value, (str, bytes, bytearray)) or value is None:
        raise ValueError(bad)
    try:
        arr = np.asarray(value)
    except (TypeError, ValueError, OverflowError):
        raise ValueError(bad) from None
    numeric = arr.dtype.kind in "iuf" or (arr.dtype.kind == "O" and all(
        isinstance(x, (int, float, np.integer, np.floating)) and not isinstance(x, (bool, np.bool_))
        for x in arr.reshape(-1).tolist()))
    if not numeric:
        raise ValueError(bad)
    try:
        return arr.astype(np.float64)
    except (TypeError, ValueError, OverflowError):
        raise ValueError(bad) from None


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
