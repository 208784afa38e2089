"""Timestamps of the time-aware wrappers (``Window(seconds=...)``, ``Decayed(half_life_seconds=
...)``, ``DelayedLabels``): one check for a timestamp given to an update, read from the clock,
or given to ``advance``/``expire``. A timestamp is a real number (not a string), finite, and
not older than the newest seen where order matters; ``ValueError`` names it otherwise.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from .validation import as_numpy, first_bad, is_scalar

Clock = Callable[[], float]


def check_timestamps(timestamp: Any, n: int, clock: Clock, newest: float | None,
                     seconds: float | None = None) -> np.ndarray:
    """Per-row float64 timestamps: a scalar for the batch or one per row, finite, non-decreasing
    within the batch and not older than ``newest``. ``None`` asks ``clock``. With ``seconds`` (a
    time window), the newest must be far enough below float64's limits that t - seconds < t."""
    if timestamp is None:
        timestamp = clock()
    if is_scalar(timestamp) or np.ndim(timestamp) == 0:
        ts = np.full(n, _one_time(timestamp, None, f"expected a number, got {timestamp!r}"))
    else:
        ts = as_numpy(timestamp, "timestamp").astype(np.float64)
        if ts.shape != (n,):
            raise ValueError(f"timestamp: expected a scalar or shape ({n},), got {ts.shape}")
        if n:
            bad = ~np.isfinite(ts)
            if bad.any():
                i = first_bad(bad)
                raise ValueError(f"timestamp: must be finite; first invalid value {ts[i]!r} at index {i}")
            dec = ts[1:] < ts[:-1]
            if dec.any():
                i = int(first_bad(dec)) + 1  # type: ignore[arg-type]
                raise ValueError(
                    f"timestamp: must be non-decreasing; {ts[i]!r} at index {i} follows {ts[i - 1]!r}"
                )
    if n and newest is not None and ts[0] < newest:
        raise ValueError(
            f"timestamp: must be non-decreasing; {float(ts[0])!r} is older than the newest seen ({newest!r})"
        )
    if n and seconds is not None:
        resolvable(float(ts[-1]), seconds)
    return ts


def resolvable(t: float, seconds: float) -> float:
    """``t`` if a window of ``seconds`` can hold a row stamped ``t`` (else every row would
    expire on arrival: float64 rounds t - seconds to t)."""
    if t - seconds >= t:
        raise ValueError(f"timestamp: {t!r} is too far from 0 for a window of {seconds!r} seconds "
                         "(float64 cannot tell t - seconds from t there)")
    return t


def clock_now(clock: Clock, newest: float | None) -> float:
    """The clock's time as a validated timestamp (finite, not older than ``newest``)."""
    t = clock()
    return _one_time(t, newest, f"the clock returned {t!r}, not a number")


def _one_time(value: Any, newest: float | None, not_a_number: str) -> float:
    """One timestamp as a float: a number (else ``ValueError("timestamp: " + not_a_number)``),
    finite, and not older than ``newest`` (when given)."""
    try:
        if isinstance(value, (str, bytes, bytearray)):  # float() would parse them
            raise TypeError
        t = float(value)
    except OverflowError as exc:
        raise ValueError("timestamp: must be finite, got an int beyond the float64 range") from exc
    except (TypeError, ValueError) as exc:
        raise ValueError(f"timestamp: {not_a_number}") from exc
    if not math.isfinite(t):
        raise ValueError(f"timestamp: must be finite, got {t!r}")
    if newest is not None and t < newest:
        raise ValueError(
            f"timestamp: must be non-decreasing; {t!r} is older than the newest seen ({newest!r})"
        )
    return t


def call_time(clock: Clock, timestamp: Any) -> float:
    """The time of a call: ``timestamp``, else the clock's reading; a finite float (in any
    order: no ``newest``). O(1)."""
    value = clock() if timestamp is None else timestamp
    if type(value) is float and math.isfinite(value):
        return value
    return _one_time(value, None, f"expected a number, got {value!r}")
