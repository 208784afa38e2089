"""Merge accumulators across ``torch.distributed`` ranks: :func:`sync`, plus sampler-padding helpers.

Uses the installed torch (streammetrics declares no torch dependency); importing this module
imports torch. Every rank must call :func:`sync` with an accumulator of the same configuration
(same class, constructor arguments and MetricSet layout), in the same order relative to other
collectives, like any ``torch.distributed`` collective.

How a state travels
-------------------
``state_dict()`` is split by merge rule:

* **fixed-shape counts** (every :class:`~streammetrics._core.state.SummedState` block: confusion
  counts, binned ranking counts, running sums) are packed into one float64 vector and summed with
  one ``all_reduce``;
* **everything else** (variable-length sorted score buffers, retrieval sums, and any other state,
  including fixed-shape bounded ranking states whose merge is not a plain sum) is serialised to one
  byte buffer per rank (a small JSON header naming each array, its dtype and shape, then the raw
  array bytes -- no pickle); ranks first exchange their buffer sizes (one small ``all_gather``),
  then ``all_gather`` their buffers padded to the largest, and every rank rebuilds all ranks' states
  (validated, as any untrusted state) and merges them in rank order.

The same small ``all_gather`` carries a digest of each rank's configuration and of the layout of
its summed arrays, so a mismatch raises the same ``ValueError`` on every rank instead of hanging or
silently mixing states. With NCCL the buffers go through the current CUDA device; with gloo they
stay on the CPU. A rank that saw no data contributes an empty state and works like any other.

Before any collective, every rank posts its call number and ``step`` in the process group's
key-value store and waits (``timeout=``) for the others' posts: a rank that never comes (it ran
out of data, say) is a ``TimeoutError`` naming it, and ranks at different steps a ``ValueError``
on every rank naming each one's step -- never a collective waiting for a rank that will not join.
A timed-out call is closed for every rank: a rank that reaches it later raises the same
``TimeoutError`` at once (instead of entering the collectives alone), so every rank has made
that call and the group's next ``sync`` pairs up again. Without a key-value store (a torch that
does not expose the default group's), ``step=`` or ``timeout=`` is a ``RuntimeError`` and a
plain ``sync`` warns once and goes straight to the collectives.

Result: every rank holds the same merged accumulator, equal to the single-process state (bit for
bit for unit or integer weights; with float weights, the all-reduced sums equal the sequential
ones within float rounding).

Complexity: one ``all_reduce`` of the summed arrays (O(C^2) for confusion counts) and, when there
are unsummed arrays, two ``all_gather`` rounds: O(W * max state bytes) received per rank (W
ranks), then an O(total state) merge on each rank. An exact ranking state is one score per sample,
so gathering 10^8 scores puts ~0.8 GB on every rank: use bounded ranking (``max_bytes``) there.

DistributedSampler padding
--------------------------
``torch.utils.data.DistributedSampler(drop_last=False)`` pads the dataset so every rank gets the
same number of samples: it repeats the first indices, so up to W - 1 samples are seen twice and
**counted twice** after :func:`sync`. :func:`num_unpadded` says how many of this rank's samples
are real (they come first), and :class:`PaddingFilter` trims the duplicates off the batches.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import time
import warnings
from collections.abc import Mapping
from datetime import timedelta
from typing import Any, TypeVar

import numpy as np
import torch
import torch.distributed as dist

from streammetrics._core.metric import RESERVED_KEYS, Metric
from streammetrics._core.params import check_accumulator, nonempty_param
from streammetrics._core.state import State, SummedState
from streammetrics.wrappers.metricset import MetricSet

__all__ = ["sync", "num_unpadded", "PaddingFilter"]

M = TypeVar("M", bound=Metric)

_SEP = "."
_HEADER_WORDS = 6  # 4 digest words, payload length, summed length


def _blocks(metric: Metric) -> list[tuple[str, State]]:
    """(key prefix, state block) pairs, in state_dict order."""
    if isinstance(metric, MetricSet):
        return [(f"{g[0]}{_SEP}", metric[g[0]]._state) for g in metric.groups]
    return [("", metric._state)]


def _summed_keys(metric: Metric, arrays: Mapping[str, Any]) -> list[str]:
    """State keys whose merge rule is element-wise addition (arrays of a SummedState block).

    Only for plain metrics and MetricSets, whose state dict is exactly their blocks' arrays;
    a wrapper that adds its own entries (windows, delayed labels, ...) takes the gather path,
    which merges with the wrapper's own ``merge`` and is always correct.
    """
    if type(metric)._state_arrays not in (Metric._state_arrays, MetricSet._state_arrays):
        return []
    out: list[str] = []
    for prefix, state in _blocks(metric):
        if isinstance(state, SummedState):
            out.extend(
                k for k in (prefix + name for name in state._arrays)
                if isinstance(arrays.get(k), np.ndarray)
            )
    return out


def _digest(sd: Mapping[str, Any], summed: list[str]) -> list[int]:
    layout = [(k, list(np.shape(sd[k])), str(np.asarray(sd[k]).dtype)) for k in summed]
    text = json.dumps({"class": sd["class"], "config": sd["config"], "summed": layout},
                      sort_keys=True, default=str)
    raw = hashlib.sha256(text.encode()).digest()
    return [int.from_bytes(raw[i : i + 8], "little", signed=True) for i in range(0, 32, 8)]


def _plain(v: Any) -> Any:
    return v.item() if isinstance(v, np.generic) else v


def _encode(arrays: Mapping[str, Any]) -> np.ndarray:
    """Arrays and scalars -> one uint8 buffer: [8-byte header length][JSON header][raw bytes]."""
    entries, scalars, chunks = [], {}, []
    for name, value in arrays.items():
        if isinstance(value, np.ndarray):
            arr = np.ascontiguousarray(value)  # a 0-d array comes back 1-d: keep value's shape
            entries.append([name, arr.dtype.str, list(value.shape)])
            chunks.append(arr.reshape(-1).view(np.uint8))
        else:
            scalars[name] = _plain(value)
    header = json.dumps({"arrays": entries, "scalars": scalars}).encode()
    parts = [np.frombuffer(len(header).to_bytes(8, "little"), np.uint8),
             np.frombuffer(header, np.uint8), *chunks]
    return np.concatenate(parts) if parts else np.zeros(0, np.uint8)


def _decode(buf: np.ndarray) -> dict[str, Any]:
    n = int.from_bytes(buf[:8].tobytes(), "little")
    header = json.loads(buf[8 : 8 + n].tobytes())
    out: dict[str, Any] = dict(header["scalars"])
    pos = 8 + n
    for name, dtype, shape in header["arrays"]:
        dt = np.dtype(dtype)
        size = dt.itemsize * math.prod(shape)
        out[name] = buf[pos : pos + size].view(dt).reshape(shape).copy()
        pos += size
    return out


def _device(group: Any, device: Any) -> torch.device:
    if device is not None:
        return torch.device(device)
    if dist.get_backend(group) == "nccl":
        return torch.device("cuda", torch.cuda.current_device())
    return torch.device("cpu")


def _all_gather(t: torch.Tensor, world: int, group: Any) -> list[torch.Tensor]:
    out = [torch.empty_like(t) for _ in range(world)]
    dist.all_gather(out, t, group=group)
    return out


#: Per process group (its global ranks): how many times this rank has called :func:`sync`.
_CALLS: dict[tuple[int, ...], int] = {}
#: Whether the no-store warning was given (once per process).
_WARNED: list[bool] = []


def _store() -> Any:
    """The default process group's key-value store (None where torch does not expose it)."""
    try:
        from torch.distributed import distributed_c10d

        return distributed_c10d._get_default_store()
    except Exception:  # noqa: BLE001 - no store: sync goes straight to the collectives
        return None


def _rendezvous(group: Any, world: int, step: Any, timeout: Any) -> tuple[Any, list[str]] | None:
    """Before any collective: every rank of ``group`` posts ``step`` in the process group's store
    and joins this call's roll (one store key, extended atomically with ``compare_set``), then
    waits for the roll to hold every rank, at most ``timeout``.

    A rank still missing by then is a ``TimeoutError`` naming it, and the waiting rank *closes*
    the roll (atomically: a roll that became complete first is never closed), so every rank of
    the call agrees on its outcome: the ranks waiting raise the same ``TimeoutError``, and a
    rank that comes after the close raises it at once instead of entering the collectives
    alone. Every rank has then made the call, so the ranks' call counts stay equal and the next
    ``sync`` on the group pairs up as before. Ranks at different steps: a ``ValueError`` on
    every rank naming each rank's step.

    The call's store keys go when no rank needs them: after a merge, each rank's post and the
    roll (:func:`sync`, once the collectives have joined every rank); after a ``TimeoutError``
    or the ``ValueError``, through :func:`_leave` (the last rank of the call to leave deletes
    them). Only a rank that never reaches a timed-out call leaves two keys behind: the closed
    roll, which must stay to turn that rank away should it come, and the count of ranks gone.

    Returns (store, keys to delete once the collectives are done); None when the process group
    exposes no key-value store and neither ``step`` nor ``timeout`` is given (a
    ``RuntimeWarning``, once per process; with either, a ``RuntimeError``: see :func:`sync`).
    O(W) small store operations, the wait polled (every 1 ms at first, then at most every 50 ms).
    """
    store = _store()
    if store is None:
        asked = [n for n, v in (("step", step), ("timeout", timeout)) if v is not None]
        reason = ("torch.distributed exposes no key-value store for the default process group "
                  "(torch.distributed.distributed_c10d._get_default_store failed)")
        if asked:
            raise RuntimeError(
                f"sync: {' and '.join(asked)}= cannot be honoured: {reason}, and checking the ranks' "
                "steps and naming a missing rank need it; call sync without step= and timeout= to "
                "go straight to the collectives (a rank that never comes then makes the others wait "
                "until the process group's timeout)")
        if not _WARNED:
            _WARNED.append(True)
            warnings.warn(f"sync: {reason}; sync goes straight to the collectives, like any "
                          "torch.distributed collective: a rank that skips a sync makes the others "
                          "wait until the process group's timeout", RuntimeWarning, stacklevel=3)
        return None
    ranks = tuple(dist.get_process_group_ranks(group)) if group is not None else tuple(range(world))
    call = _CALLS.get(ranks, 0)
    _CALLS[ranks] = call + 1  # counted whatever the outcome: every rank makes each call once
    name = "world" if group is None else "-".join(map(str, ranks))
    prefix = f"streammetrics/sync/{name}/{call}/"
    me = dist.get_rank()
    store.set(prefix + str(me), json.dumps(_plain_step(step)))
    roll_key = prefix + "roll"
    wait = timeout if timeout is None or isinstance(timeout, timedelta) else timedelta(seconds=float(timeout))
    limit = wait if wait is not None else getattr(store, "timeout", timedelta(minutes=30))
    where = f"sync call #{call}{'' if step is None else f' (step {step!r} on rank {me})'}"

    def timed_out(roll: str, by: str) -> TimeoutError:
        # raised only: this rank leaves the call (no rank reads a post of a closed call)
        _leave(store, prefix, len(ranks), [prefix + str(me)], [roll_key])
        joined = {int(r) for r in roll.split(",") if r}
        missing = [r for r in ranks if r not in joined]
        return TimeoutError(
            f"sync: rank(s) {missing} of {list(ranks)} did not reach {where} within "
            f"{limit if wait is not None else f'the process group timeout ({limit})'} ({by}); every "
            "rank must call sync the same number of times (pass step= to check that they sync the "
            "same step). Every rank of the call raises this error, the late ones when they reach "
            "it, so the ranks' next sync calls pair up again")

    roll = ""
    while True:  # join: append this rank to the roll unless it was closed
        got = store.compare_set(roll_key, roll, f"{roll}{me},").decode()
        if got == f"{roll}{me},":
            roll = got
            break
        if got.startswith("closed:"):
            raise timed_out(got[7:], "the ranks that came gave up waiting; this rank came after")
        roll = got
    deadline = time.monotonic() + limit.total_seconds()
    pause = 0.001
    while len([r for r in roll.split(",") if r]) < len(ranks):
        if roll.startswith("closed:"):
            raise timed_out(roll[7:], "another rank of the call gave up waiting")
        if time.monotonic() >= deadline:
            got = store.compare_set(roll_key, roll, "closed:" + roll).decode()
            if got == "closed:" + roll:
                raise timed_out(roll, "this rank gave up waiting")
            roll = got  # a rank joined meanwhile: look again
            continue
        time.sleep(pause)
        pause = min(2 * pause, 0.05)
        roll = store.get(roll_key).decode()
    keys = [prefix + str(r) for r in ranks]
    steps = {r: json.loads(store.get(k)) for r, k in zip(ranks, keys, strict=True)}
    if len({json.dumps(v) for v in steps.values()}) > 1:
        _leave(store, prefix, len(ranks), [], [*keys, roll_key])  # this rank has read every post
        shown = ", ".join(f"rank {r}: {v!r}" for r, v in steps.items())
        raise ValueError(f"sync: ranks reached sync call #{call} at different steps ({shown}); "
                         "every rank must sync at the same steps")
    return store, [prefix + str(me)] + ([roll_key] if me == ranks[0] else [])


def _leave(store: Any, prefix: str, world: int, mine: list[str], shared: list[str]) -> None:
    """A rank leaves a sync call that failed (timed out, or ranks at different steps): it
    deletes ``mine`` (keys no other rank reads any more) and counts itself gone; the last of the
    call's ``world`` ranks to go deletes ``shared`` and the count. Best effort: a store that
    cannot delete (or add) keeps the keys, and the caller's error is raised all the same. O(1)
    store operations (O(W) for the last rank)."""
    gone = prefix + "gone"
    with contextlib.suppress(Exception):
        for key in mine:
            store.delete_key(key)
        if store.add(gone, 1) == world:
            for key in (*shared, gone):
                store.delete_key(key)


def _checked_timeout(timeout: Any) -> timedelta | None:
    """``sync``'s ``timeout`` as a positive ``timedelta`` (None stays None).

    Parameters
    ----------
    timeout : float, int, datetime.timedelta or None
        Seconds (a finite real number > 0, not a bool) or a ``timedelta`` > 0.

    Returns
    -------
    datetime.timedelta or None

    Raises
    ------
    ValueError
        Naming ``timeout`` and the value, for anything else (a string, NaN, inf, 0, a negative
        duration). O(1).
    """
    if timeout is None:
        return None
    if isinstance(timeout, timedelta):
        if timeout > timedelta(0):
            return timeout
    elif isinstance(timeout, (int, float, np.integer, np.floating)) \
            and not isinstance(timeout, (bool, np.bool_)):
        seconds = float(timeout)
        if math.isfinite(seconds) and seconds > 0:
            try:
                return timedelta(seconds=seconds)
            except OverflowError:
                pass
    raise ValueError(f"timeout: expected None, a finite number of seconds > 0 or a positive "
                     f"datetime.timedelta, got {timeout!r:.80}")


def _plain_step(step: Any) -> Any:
    """``step`` as JSON: None, a bool, an int, a float or a string (anything else: its repr)."""
    if step is None or isinstance(step, (bool, int, float, str)):
        return step
    return repr(step)


def sync(metric: M, group: Any = None, *, device: Any = None, step: Any = None,
         timeout: float | timedelta | None = None) -> M:
    """The accumulator merged over all ranks of ``group``, returned on every rank.

    Parameters
    ----------
    metric : Metric or MetricSet
        This rank's accumulator. It is not modified (so calling ``sync`` again later, after more
        updates, does not double count).
    group : ProcessGroup, optional
        The ranks to merge over (default: the whole world).
    device : torch.device, optional
        Where the communication buffers live (default: the current CUDA device for NCCL, the CPU
        otherwise).
    step : int, str or None, optional
        What this call is for (a training step, ``"epoch-3"``, ...). Before any collective every
        rank posts its step in the process group's store: ranks at different steps raise a
        ``ValueError`` on every rank naming each rank's step, instead of pairing one rank's
        per-step sync with another's end-of-epoch one (which hangs or mixes states).
    timeout : float (seconds) or datetime.timedelta, optional
        How long to wait for the other ranks to reach this sync (default: the process group's
        timeout, 30 minutes unless set). A rank still missing then is a ``TimeoutError`` naming
        it (a rank that finished its data early, say), raised before any collective is entered.

    Returns
    -------
    Metric
        A new accumulator of the same class and configuration holding the merge of every rank's
        state (a copy of ``metric`` when torch.distributed is not initialised or the group has
        one rank).

    Raises
    ------
    ValueError
        On every rank, if the ranks' configurations (or summed-array layouts) differ, or if they
        reached this call at different ``step`` values.
    TimeoutError
        A rank did not reach this call within ``timeout``; the message names it. The call is
        then closed: every rank that reaches it, late ones included, raises this error (the
        late ones at once), so the ranks' call counts stay equal and the next ``sync`` on the
        group works.
    RuntimeError
        ``step`` or ``timeout`` given, and torch exposes no key-value store for the default
        process group (the checks need it). Without either, ``sync`` then warns once
        (``RuntimeWarning``) and goes straight to the collectives, which wait for a missing
        rank until the process group's timeout, as any ``torch.distributed`` collective does.

    Notes
    -----
    Complexity: see the module docstring -- one ``all_reduce`` of the fixed-shape counts, two
    ``all_gather`` rounds for anything else, then an O(total state) merge per rank.

    Examples
    --------
    In a script started with ``torchrun``, after ``torch.distributed.init_process_group``, each
    rank calls ``sync`` on its own accumulator and gets the merged one. Without an initialised
    process group (one process) it returns a copy:

    >>> import streammetrics as sm
    >>> from streammetrics.torch import sync
    >>> auroc = sm.AUROC().update([0, 0, 1, 1], [0.1, 0.4, 0.35, 0.8])
    >>> merged = sync(auroc)
    >>> merged.compute(), merged is auroc
    (0.75, False)
    """
    check_accumulator(metric)
    timeout = _checked_timeout(timeout)  # before anything is counted or posted: nothing to undo
    if not (dist.is_available() and dist.is_initialized()):
        return metric.copy()
    world = dist.get_world_size(group)
    if world == 1:
        return metric.copy()
    posted = _rendezvous(group, world, step, timeout)
    dev = _device(group, device)
    sd = metric.state_dict()
    arrays = {k: v for k, v in sd.items() if k not in RESERVED_KEYS}
    summed = _summed_keys(metric, arrays)
    rest = {k: v for k, v in arrays.items() if k not in summed}
    payload = _encode(rest) if rest else np.zeros(0, np.uint8)
    n_summed = int(sum(np.asarray(arrays[k]).size for k in summed))

    # Round 1: configuration digest and buffer sizes from every rank.
    header = torch.tensor([*_digest(sd, summed), payload.size, n_summed], dtype=torch.int64, device=dev)
    headers = [h.cpu().tolist() for h in _all_gather(header, world, group)]
    if any(h[:4] != headers[0][:4] or h[5] != headers[0][5] for h in headers):
        bad = [r for r, h in enumerate(headers) if h[:4] != headers[0][:4]]
        raise ValueError(
            f"sync: ranks hold accumulators of different configurations (ranks {bad} differ from "
            "rank 0); every rank must sync the same class with the same constructor arguments"
        )

    # Round 2: fixed-shape counts, summed in place.
    total = None
    if n_summed:
        flat = np.concatenate([np.asarray(arrays[k], dtype=np.float64).ravel() for k in summed])
        t = torch.from_numpy(flat).to(dev)
        dist.all_reduce(t, op=dist.ReduceOp.SUM, group=group)
        total = t.cpu().numpy()

    # Round 3: variable-length (or otherwise merged) states, padded to the largest.
    sizes = [h[4] for h in headers]
    per_rank: list[dict[str, Any]] = [{} for _ in range(world)]
    if max(sizes):
        buf = np.zeros(max(sizes), np.uint8)
        buf[: payload.size] = payload
        gathered = _all_gather(torch.from_numpy(buf).to(dev), world, group)
        per_rank = [
            _decode(g.cpu().numpy()[:size]) if size else {}
            for g, size in zip(gathered, sizes, strict=True)
        ]

    def state_of(rank: int) -> dict[str, Any]:
        out: dict[str, Any] = {k: sd[k] for k in RESERVED_KEYS}
        pos = 0
        for k in summed:
            ref = np.asarray(arrays[k])
            if total is not None and rank == 0:
                out[k] = total[pos : pos + ref.size].reshape(ref.shape).astype(ref.dtype)
            else:
                out[k] = np.zeros_like(ref)
            pos += ref.size
        out.update(per_rank[rank])
        return out

    cls = type(metric)
    merged = cls.from_state_dict(state_of(0))
    if any(sizes):
        merged.merge(*[cls.from_state_dict(state_of(r)) for r in range(1, world)])
    if posted is not None:  # every rank has read every post: the all_gather above joined them all
        store, keys = posted
        for key in keys:
            store.delete_key(key)
    return merged


def num_unpadded(sampler: Any) -> int:
    """How many of this rank's samples from a ``DistributedSampler`` are not padding duplicates.

    With ``drop_last=False`` the sampler pads the index list to ``num_samples * num_replicas`` by
    repeating its first indices, and rank r gets positions r, r + W, r + 2W, ... of it; position p
    is a duplicate iff p >= len(dataset). The real samples therefore come first: this returns
    ``ceil((len(dataset) - rank) / W)`` (never more than ``num_samples``). With ``drop_last=True``
    nothing is padded (the tail is dropped instead) and this is ``num_samples``.

    Works with any object that has ``dataset``, ``num_replicas``, ``rank``, ``num_samples`` and
    ``drop_last`` (duck-typed). O(1).

    Parameters
    ----------
    sampler : torch.utils.data.DistributedSampler
        This rank's sampler (or any object with the attributes above).

    Returns
    -------
    int
        The number of real samples at the start of this rank's epoch.

    Raises
    ------
    ValueError
        If ``sampler`` lacks one of the attributes.

    Examples
    --------
    Ten samples over four ranks: each rank gets three, two duplicates pad ranks 2 and 3.

    >>> from torch.utils.data import DistributedSampler
    >>> from streammetrics.torch import num_unpadded
    >>> [num_unpadded(DistributedSampler(range(10), num_replicas=4, rank=r, shuffle=False))
    ...  for r in range(4)]
    [3, 3, 2, 2]
    """
    try:
        n = len(sampler.dataset)
        world, rank, per_rank = int(sampler.num_replicas), int(sampler.rank), int(sampler.num_samples)
        drop_last = bool(sampler.drop_last)
    except AttributeError as exc:
        raise ValueError(f"sampler: expected a DistributedSampler-like object ({exc})") from exc
    if drop_last:
        return per_rank
    return max(0, min(per_rank, -(-(n - rank) // world)))


class PaddingFilter:
    """Trim ``DistributedSampler`` padding duplicates off batches, in iteration order.

    ``keep = PaddingFilter(sampler)``; then for each batch ``y, s = keep(y, s)`` before
    ``metric.update(y, s)``. It counts the samples it has seen this epoch and cuts every argument
    (tensors, arrays, anything sliceable along dim 0) to the real ones. Call :meth:`reset` at the
    start of each epoch (or build a new filter). O(1) per batch (a slice, no copy).

    Parameters
    ----------
    sampler : torch.utils.data.DistributedSampler
        This rank's sampler (see :func:`num_unpadded`), iterated in order (the filter keeps the
        first real samples, which is where ``DistributedSampler`` puts them).

    Attributes
    ----------
    remaining : int
        Real samples still expected this epoch.

    Examples
    --------
    Rank 3 of four over ten samples gets three indices, the last one a padding duplicate:

    >>> import torch
    >>> from torch.utils.data import DistributedSampler
    >>> from streammetrics.torch import PaddingFilter
    >>> sampler = DistributedSampler(range(10), num_replicas=4, rank=3, shuffle=False)
    >>> keep = PaddingFilter(sampler)
    >>> y, s = keep(torch.tensor([1, 0, 1]), torch.tensor([0.9, 0.2, 0.8]))
    >>> y.tolist(), keep.remaining
    ([1, 0], 0)
    """

    def __init__(self, sampler: Any) -> None:
        self._real = num_unpadded(sampler)
        self._seen = 0

    @property
    def remaining(self) -> int:
        """Real samples still expected this epoch."""
        return max(0, self._real - self._seen)

    def reset(self) -> PaddingFilter:
        """Start a new epoch (count from zero again); returns ``self``."""
        self._seen = 0
        return self

    def __call__(self, *batch: Any) -> Any:
        batch = tuple(nonempty_param(batch, "batch", "expected at least one batch argument"))
        n = len(batch[0])
        keep = min(n, self.remaining)
        self._seen += n
        out = tuple(b if keep == n else b[:keep] for b in batch)
        return out[0] if len(out) == 1 else out
