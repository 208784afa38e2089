"""Time order of ``DelayedLabels``' pending predictions.

Expiry by ``ttl`` and eviction by ``capacity`` walk the pending predictions from the front
(oldest first), so the pending map must stay ordered by prediction time. Predictions usually
arrive in time order (appending keeps the order); an explicit ``timestamp`` older than the
newest pending one, or a clock that steps back, is put in its place instead: the pending
predictions newer than it move behind it. O(j) for j predictions newer than it (O(1) in order).
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

__all__ = ["reorder_tail"]


def reorder_tail(pending: OrderedDict[Any, tuple[Any, Any, float]], k: int, now: float) -> None:
    """The last ``k`` entries of ``pending`` were just appended, stamped ``now``: move the
    entries before them that are newer than ``now`` behind them (keeping their order), so that
    ``pending`` is ordered by time again (ties keep arrival order)."""
    newer: list[Any] = []
    keys = reversed(pending)
    for _ in range(k):
        next(keys)
    for key in keys:
        if pending[key][2] <= now:
            break
        newer.append(key)
    for key in reversed(newer):
        pending.move_to_end(key)
