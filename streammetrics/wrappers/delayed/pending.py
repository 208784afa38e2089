"""The pending predictions of :class:`~streammetrics.DelayedLabels`: their ids, their kind and
their persisted form.

A pending prediction is ``id -> (score, weight or None, time)`` in an ordered map, oldest first
(see ``delayed/order.py``). Ids are Python ints (within int64) or strings; all pending scores
share one kind (:data:`FLOAT_SPEC` for Python float scores, else a numpy dtype and row shape).
On disk (prefix ``pending.``): ``ids_int``, ``is_str``, ``str_bytes`` and ``str_offsets`` (the
ids: ints, or UTF-8 strings concatenated), ``scores``, ``weights`` (NaN: no weight) and
``times``; :func:`load_pending` validates them (untrusted input).
"""

from __future__ import annotations

import math
from collections import OrderedDict
from collections.abc import Hashable, Iterable, Mapping
from typing import Any

import numpy as np

from streammetrics._core.state import State
from streammetrics._core.validation import MAX_WEIGHT, MIN_WEIGHT, first_bad

__all__ = ["FLOAT_SPEC", "INT64_RANGE", "PENDING_ARRAYS", "NoState", "Pending", "check_ids",
           "load_pending", "pending_arrays", "pending_scalar"]

INT64_RANGE = (-(2**63), 2**63 - 1)
#: The kind of Python/numpy float64 scores, one per id (the fast paths compare it by identity).
FLOAT_SPEC = (np.dtype(np.float64).str, ())
#: The persisted arrays of the pending predictions (each under the prefix ``pending.``).
PENDING_ARRAYS = ("ids_int", "is_str", "str_bytes", "str_offsets", "scores", "weights", "times")

Pending = OrderedDict  # id -> (score, weight or None, time), oldest first
#: The dtypes of the predictions ``predict`` keeps (``kept_predictions``).
_KEPT = tuple(np.dtype(t) for t in (np.float64, np.float32, np.float16, np.int64, np.bool_))


def pending_scalar(score: Any) -> Any:
    """A pending scalar prediction as a Python scalar (float score, int or bool label)."""
    return score if type(score) is float else score.item()


class NoState(State):
    """DelayedLabels is fed by ``predict``/``label``; it never shares a state in a MetricSet."""

    def key(self) -> Hashable:
        return ("delayed", id(self))

    def prepare(self, *args: Any, **kwargs: Any) -> Any:
        raise ValueError("DelayedLabels: feed it with predict(ids, y_score) and label(ids, y_true)")

    def arrays(self) -> dict[str, Any]:
        return {}

    def equals(self, other: State) -> bool:
        return other is self


def check_ids(ids: Any) -> tuple[list[int | str], bool]:
    """Ids as a list of Python ints/strs (and whether a single id was given)."""
    if hasattr(ids, "tolist") and not isinstance(ids, str):  # numpy arrays/scalars, tensors (0-d: one id)
        ids = ids.tolist()
    single = isinstance(ids, (str, int)) and not isinstance(ids, bool)
    if not single and (isinstance(ids, (bytes, bytearray, Mapping)) or not isinstance(ids, Iterable)):
        raise ValueError(f"ids: expected an int, a str or a sequence of them, got {ids!r}")
    seq = [ids] if single else list(ids)
    out: list[int | str] = []
    for i, x in enumerate(seq):
        if isinstance(x, (bool, np.bool_)) or not isinstance(x, (int, str, np.integer)):
            raise ValueError(f"ids: must be ints or strings; first invalid value {x!r} at index {i}")
        if isinstance(x, str):
            out.append(x)
        else:
            v = int(x)
            if not INT64_RANGE[0] <= v <= INT64_RANGE[1]:
                raise ValueError(f"ids: integer ids must fit in int64; got {v} at index {i}")
            out.append(v)
    if len(set(out)) != len(out):
        seen: set[int | str] = set()
        for i, x in enumerate(out):
            if x in seen:
                raise ValueError(f"ids: duplicate id {x!r} at index {i}")
            seen.add(x)
    return out, single


def pending_arrays(pending: Pending) -> dict[str, np.ndarray]:
    """The pending predictions as the arrays :data:`PENDING_ARRAYS` (in time order). O(k)."""
    keys = list(pending)
    entries = list(pending.values())
    is_str = np.array([isinstance(x, str) for x in keys], dtype=bool)
    encoded = [x.encode("utf-8") if isinstance(x, str) else b"" for x in keys]
    offsets = np.zeros(len(keys) + 1, dtype=np.int64)
    np.cumsum([len(b) for b in encoded], out=offsets[1:])
    return {
        "ids_int": np.array([0 if isinstance(x, str) else x for x in keys], dtype=np.int64),
        "is_str": is_str,
        "str_bytes": np.frombuffer(b"".join(encoded), dtype=np.uint8).copy(),
        "str_offsets": offsets,
        "scores": np.stack([e[0] for e in entries]) if entries else np.zeros(0),
        "weights": np.array([math.nan if e[1] is None else e[1] for e in entries]),
        "times": np.array([e[2] for e in entries], dtype=np.float64),
    }


def load_pending(pend: Mapping[str, Any], capacity: int,
                 row_keys: list[Any] | None = None) -> tuple[Pending, Any, float]:
    """The pending predictions from (untrusted) :data:`PENDING_ARRAYS` (names without the
    prefix): the ordered map (put in time order, stable), the kind of their scores (``None``
    when there are none) and the newest time (-inf when none). ``row_keys`` (one per row, in
    the arrays' order, already validated): each entry's slice key, kept as its 4th item.
    ``ValueError`` saying what is malformed. O(k log k)."""
    names = PENDING_ARRAYS
    if set(pend) != set(names) or not all(isinstance(pend[n], np.ndarray) for n in names):
        raise ValueError(f"state: DelayedLabels needs arrays {['pending.' + n for n in names]}")
    ids_int, is_str = pend["ids_int"], pend["is_str"]
    raw, offsets = pend["str_bytes"], pend["str_offsets"]
    scores, weights, times = pend["scores"], pend["weights"], pend["times"]
    k = ids_int.shape[0] if ids_int.ndim == 1 else -1
    ok = (
        k >= 0 and ids_int.dtype.kind in "iu" and is_str.shape == (k,) and is_str.dtype == np.bool_
        and raw.ndim == 1 and raw.dtype == np.uint8 and offsets.shape == (k + 1,)
        and offsets.dtype.kind in "iu" and weights.shape == (k,) and weights.dtype.kind == "f"
        and times.shape == (k,) and times.dtype.kind == "f"
        and (k == 0 or (scores.ndim >= 1 and scores.shape[0] == k))
    )
    if not ok:
        raise ValueError("state: DelayedLabels pending arrays have inconsistent shapes or dtypes")
    if k > capacity:
        raise ValueError(f"state: {k} pending predictions exceed capacity {capacity}")
    if k and (offsets[0] != 0 or offsets[-1] != raw.shape[0] or bool((np.diff(offsets) < 0).any())):
        raise ValueError("state: DelayedLabels id offsets are corrupted")
    if k and not np.isfinite(times).all():
        raise ValueError("state: DelayedLabels pending times must be finite")
    # a weight predict would refuse (0 or in [MIN_WEIGHT, MAX_WEIGHT]; NaN: none) would make
    # its label() fail much later
    bad_w = ~np.isnan(weights) & ~((weights == 0) | ((weights >= MIN_WEIGHT) & (weights <= MAX_WEIGHT)))
    if bad_w.any():
        i = first_bad(bad_w)
        raise ValueError(f"state: DelayedLabels pending.weights[{i}] = {float(weights[i])!r} is not a "
                         f"weight predict takes (0 or in [2**-128, 2**128])")
    if k and scores.dtype not in _KEPT:
        raise ValueError(f"state: DelayedLabels pending.scores has dtype {scores.dtype}; predict keeps "
                         f"float16/32/64, int64 or bool")
    if k and scores.dtype.kind == "f" and np.isnan(scores).any():
        raise ValueError("state: DelayedLabels pending scores hold NaN")
    data = raw.tobytes()
    keys: list[int | str] = []
    try:
        for i in range(k):
            keys.append(data[offsets[i]:offsets[i + 1]].decode("utf-8") if is_str[i] else int(ids_int[i]))
    except UnicodeDecodeError as exc:
        raise ValueError(f"state: DelayedLabels string id is not UTF-8 ({exc})") from exc
    if len(set(keys)) != k:
        raise ValueError("state: DelayedLabels pending ids are not unique")
    pending: Pending = OrderedDict()
    rows = list(scores) if k else []
    # expiry walks from the front (oldest first): out-of-order times would never expire, so
    # the pending predictions are put in time order (stable, as ``merge`` does)
    for i in (np.argsort(times, kind="stable") if k else ()):
        ident = keys[i]
        w = float(weights[i])
        entry = (rows[i], None if math.isnan(w) else w, float(times[i]))
        pending[ident] = entry if row_keys is None else entry + (row_keys[i],)
    spec = (scores.dtype.str, scores.shape[1:])
    kind = (FLOAT_SPEC if spec == FLOAT_SPEC else spec) if k else None
    return pending, kind, (float(times.max()) if k else -math.inf)
