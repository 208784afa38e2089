"""Per-slice accumulators for :class:`~streammetrics.Sliced`: one table of keys, two layouts.

:class:`SliceStore` maps slice keys to slots (with the ``max_slices`` cap and the overflow slot)
and holds one accumulator of the wrapped kind per slot, in one of two layouts:

* **stacked counts** (the wrapped metric's whole state is one binary or multiclass confusion
  count block): every slot's C x C matrix is a row of one (slots, C^2) array. A batch is
  validated once (:meth:`ConfusionCounts.row_cells`) and counted for every slice at once with
  one ``bincount`` over ``slice * C^2 + cell`` -- one scatter-add, whatever the number of slices.
  A slot's accumulator is materialised on demand (O(C^2)).
* **one accumulator per slot** (ranking buffers, bins, wrappers, multilabel, mixed MetricSets):
  the rows are grouped by slot with one stable ``argsort`` and every slot's ``State.prepare``
  gets its contiguous block; all blocks are prepared (validated) before any is applied.

The overflow slot is slot 0 of the stacked array / ``other`` of the per-slot list; it exists only
with ``overflow="other"`` and counts the distinct keys it absorbed (in bounded memory:
:mod:`~streammetrics.wrappers.sliced.absorbed`). The per-slot accumulators are saved grouped by state
entry (:mod:`~streammetrics.wrappers.sliced.files`), so a file's header does not grow with the slices.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from streammetrics._core.averaging import warn_undefined
from streammetrics._core.intervals import wilson
from streammetrics._core.load_checks import check_fits
from streammetrics._core.metric import Metric
from streammetrics._core.state import State
from streammetrics._counts.confusion_counts import ConfusionCounts
from streammetrics._counts.tasks import OneVsRest
from streammetrics.classification._base import AveragedMetric, ProportionMetric
from streammetrics.plot._output import MetricResults
from streammetrics.wrappers.metricset import MetricSet

from .absorbed import Absorbed
from .files import check_stacked, pack_slots, unpack_slots
from .keys import Factorized, decode_keys, encode_keys, short_repr

__all__ = ["SliceStore", "states_of", "stackable", "twin_of", "prepare_pairs", "outputs_held", "wrapped"]

#: Integer keys spanning at most this many values get a vectorised key -> slot table.
TABLE_SPAN = 1 << 20


def states_of(metric: Metric) -> list[State]:
    """The distinct state blocks of an accumulator (one per MetricSet sharing group)."""
    if isinstance(metric, MetricSet):
        return [metric[g[0]]._state for g in metric.groups]
    return [metric._state]


def owners_of(metric: Metric) -> list[Metric]:
    """The accumulators owning the distinct states of ``metric`` (itself, or one member per
    MetricSet sharing group): a batch goes through each one's ``_prepare``."""
    if isinstance(metric, MetricSet):
        return metric._owners()
    return [metric]


def prepare_pairs(metric: Metric, args: tuple[Any, ...], kwargs: dict[str, Any]) -> list[tuple[State, Any]]:
    """One batch (``update``'s arguments) made into ``[(state, increment)]`` for every state of
    ``metric``, changing nothing: each owner's ``_prepare`` (:func:`owners_of`), or the
    metric's own ``_prepare_pairs`` where its update feeds several states in its own way
    (``monitoring.Estimated``: the wrapped metric's duplicated rows and its moments). The
    caller applies the increments once every accumulator of the batch was prepared. O(n)."""
    own = getattr(metric, "_prepare_pairs", None)
    if own is not None:
        pairs: list[tuple[State, Any]] = own(*args, **kwargs)
        return pairs
    return [(m._state, m._prepare(*args, **kwargs)) for m in owners_of(metric)]


def wrapped(metric: Any) -> Metric:
    """The accumulator a wrapper (``Estimated``, ``Window``, ``Decayed``) holds."""
    inner: Metric = metric.metric
    return inner


def outputs_held(metric: Metric) -> int:
    """The number of outputs a regression accumulator holds (the largest of its states'
    ``k``; a window's or decay's inner state's), 0 while none is fixed. O(states)."""
    out = 0
    for st in states_of(metric):
        k = getattr(st, "k", None)
        if k is None:
            k = getattr(getattr(st, "inner", None), "k", None)
        if isinstance(k, (int, np.integer)) and not isinstance(k, bool):
            out = max(out, int(k))
    return out


def twin_of(metric: Metric) -> Metric:
    """An empty accumulator of ``metric``'s class and configuration."""
    return type(metric)._from_config(metric._config())


def stackable(template: Metric) -> bool:
    """True if ``template``'s whole state is one binary/multiclass confusion count block."""
    states = states_of(template)
    return (
        len(states) == 1
        and type(states[0]) is ConfusionCounts
        and states[0].layout == "dense"  # not the sparse stores of many classes
        and states[0].task != "multilabel"
        and (isinstance(template, MetricSet) or template._plain_layout())
        and all(m._codec is None for m in owners_of(template))  # no label step before the counts
    )


class SliceStore:
    """Slots of one slicing (the crossed keys, or one key alone). See the module docstring."""

    def __init__(self, template: Metric, width: int | None, max_slices: int, overflow: str) -> None:
        self.template = template
        self.width = width  # None: plain keys; else tuples of this many
        self.max_slices = max_slices
        self.overflow = overflow
        self.keys: list[Any] = []
        self.index: dict[Any, int] = {}
        self.absorbed = Absorbed()
        self.stacked = stackable(template)
        # integer keys: slot of key (base + i) at table[i] (0: not a slice yet), kept while the
        # keys span at most TABLE_SPAN values, so a batch of known keys needs no Python loop
        self._base: int | None = None
        self._table = np.zeros(0, np.intp)
        self._dropped = False
        self._length = 0  # table[:_length] is in use (the rest: room to grow)
        self._low = 0  # the smallest integer key tabulated
        self._ordered = False  # table[i] == i + 1 for every i < _length: key base + i is slot i + 1
        self.rows = np.zeros(1, np.int64)  # rows[0]: the overflow slot; rows[1 + i]: slot i
        if self.stacked:
            st = states_of(template)[0]
            assert isinstance(st, ConfusionCounts)
            self.k = st.num_classes
            self.counts = np.zeros((1, self.k * self.k))
            self.counts_w2: np.ndarray | None = None  # None while every weight was 1
        else:
            self.metrics: list[Metric | None] = [None]  # [0]: the overflow slot (lazy)

    # -- keys -> slots -----------------------------------------------------------------------
    def resolve(self, keys: list[Any]) -> tuple[np.ndarray, list[Any], set[Any]]:
        """Slots (1-based; 0 = overflow) for a batch's distinct keys; new keys take the next
        slots in the given order. Raises the cap's ``ValueError`` (overflow="error"); never
        mutates."""
        index = self.index
        try:  # the common case: every key has its slot already
            return np.array([index[k] for k in keys], dtype=np.intp), [], set()
        except KeyError:
            pass
        slots = np.empty(len(keys), np.intp)
        new: list[Any] = []
        absorbed: set[Any] = set()
        room = self.max_slices - len(self.keys)
        nxt = len(self.keys) + 1
        for i, key in enumerate(keys):
            slot = index.get(key)
            if slot is None:
                if len(new) < room:
                    slot = nxt + len(new)
                    new.append(key)
                elif self.overflow == "error":
                    raise ValueError(
                        f"slices: more than max_slices={self.max_slices} distinct slice keys "
                        f"(first key beyond the cap: {short_repr(key)}); raise max_slices or pass "
                        "overflow='other'"
                    )
                else:
                    slot = 0
                    if key not in self.absorbed:  # an exact set: not counted yet
                        absorbed.add(key)
            slots[i] = slot
        return slots, new, absorbed

    def _commit_keys(self, new: list[Any], absorbed: set[Any]) -> None:
        start = len(self.keys)
        self.keys.extend(new)
        for i, key in enumerate(new):
            self.index[key] = start + 1 + i
        if new and self.width is None:
            self._tabulate(new, start + 1)
        if absorbed:
            self.absorbed.add(absorbed)
        self.reserve(len(new))
        need = 1 + len(self.keys)
        if not self.stacked and need > len(self.metrics):
            self.metrics.extend([None] * (need - len(self.metrics)))

    def reserve(self, extra: int) -> None:
        """Room for ``extra`` more slots in the per-slot arrays (called when a batch is
        prepared, so that applying it allocates nothing; a table that does not fit in memory
        is a ``ValueError`` then, not a ``MemoryError`` half-way through). The capacity grows
        by half: keys arriving a few per batch cost O(1) amortised copies per slot (growing to
        the exact size copied every array on each batch with a new key: quadratic). Rows past
        the slots in use stay zero; every read stops at ``len(keys) + 1``."""
        need = 1 + len(self.keys) + extra
        if need <= self.rows.shape[0]:
            return
        cap = max(need, self.rows.shape[0] + self.rows.shape[0] // 2 + 8)
        per_slot = 8 + (self.counts.shape[1] * 8 * (1 if self.counts_w2 is None else 2)
                        if self.stacked else 0)
        check_fits(float(cap) * per_slot, f"slices: {need} slices")
        try:
            rows = _grown(self.rows, cap)
            if self.stacked:
                counts = _grown(self.counts, cap)
                w2 = None if self.counts_w2 is None else _grown(self.counts_w2, cap)
        except MemoryError:
            raise ValueError(f"slices: {need} slices ({cap * per_slot} bytes of per-slot "
                             "state) do not fit in the memory available") from None
        self.rows = rows
        if self.stacked:
            self.counts, self.counts_w2 = counts, w2

    def _drop_table(self) -> None:
        self._base, self._table, self._dropped = None, np.zeros(0, np.intp), True
        self._length, self._ordered = 0, False

    def _tabulate(self, new: list[Any], first_slot: int) -> None:
        """Record new integer keys in the lookup table (dropped if the keys are not all
        integers, span more than ``TABLE_SPAN`` values or leave int64). ``table[i]`` is the
        slot of key ``base + i`` (0: none) for ``i < _length``; the buffer grows by doubling
        (room above the keys, or below them when smaller keys arrive), so a stream of new ids
        costs O(1) amortised per key."""
        if self._dropped:
            return
        if not all(type(k) is int for k in new):
            self._drop_table()
            return
        lo, hi = min(new), max(new)
        small = lo if self._base is None else min(lo, self._low)
        top = hi if self._base is None else max(hi, self._base + self._length - 1)
        if top - small >= TABLE_SPAN or small < -(2**63) or top >= 2**63:  # beyond int64: no table
            self._drop_table()
            return
        old_base, old_length = self._base, self._length
        if old_base is None or small < old_base or top - old_base + 1 > self._table.shape[0]:
            cap = min(TABLE_SPAN, max(top - small + 1, 2 * self._table.shape[0]))
            if old_base is not None and small < old_base:  # smaller ids: the room goes below
                base = max(top - cap + 1, -(2**63))
            elif old_base is not None and top - old_base < cap:  # larger ids: room above
                base = old_base
            else:  # the first ids, or a rebase up to the smallest id (dropping room below)
                base = small
            table = np.zeros(cap, np.intp)
            if old_base is not None:  # the old keys' entries: the overlap of the two ranges
                first, last = max(old_base, base), min(old_base + old_length, base + cap)
                if last > first:
                    table[first - base : last - base] = self._table[first - old_base : last - old_base]
            self._base, self._table = base, table
        assert self._base is not None
        self._low = small
        self._length = top - self._base + 1
        idx = np.asarray(new, dtype=np.int64) - self._base
        self._table[idx] = np.arange(first_slot, first_slot + len(new))
        # ordered (table[i] == i + 1 for every i < _length) holds while the ids arrive in
        # increasing order from the first one, each batch's new ids right after the last
        expect = 0 if old_base is None else old_length
        self._ordered = bool(
            (old_base is None or (self._ordered and self._base == old_base))
            and self._base == small and first_slot == expect + 1
            and np.array_equal(idx, np.arange(expect, expect + len(new)))
        )

    def _known(self, fact: Factorized, present: np.ndarray) -> np.ndarray | None:
        """Slots of the present codes when every one is a known integer key, else None."""
        if fact.offset is None or self._base is None or not present.shape[0]:
            return None
        shift = fact.offset - self._base  # Python ints: keys near 2**64 do not overflow
        if shift + int(present[0]) < 0 or shift + int(present[-1]) >= self._length:
            return None
        slots = self._table[present + shift]
        return slots if slots.all() else None

    def _span(self, fact: Factorized) -> int:
        """The slot of code 0 when the codes ``0 .. size-1`` are integer keys whose slots are
        consecutive (a running stream of known integer ids that were admitted in increasing
        order: the table is the identity ``key - base + 1``), else 0. O(1)."""
        if not self._ordered or fact.offset is None or self._base is None:
            return 0
        a = fact.offset - self._base
        if a < 0 or a + fact.size > self._length:
            return 0
        return a + 1

    def _slots(self, fact: Factorized, present: np.ndarray) -> tuple[np.ndarray, list[Any], set[Any]]:
        known = self._known(fact, present)
        if known is not None:
            return known, [], set()
        return self.resolve(fact.keys(present))

    # -- update ------------------------------------------------------------------------------
    def prepare_cells(self, fact: Factorized, flat: np.ndarray, w: np.ndarray | None,
                      kept: np.ndarray | None) -> Any:
        """Stacked layout: count a batch per slice with one bincount. ``flat`` holds each kept
        row's ``code * C**2 + cell`` (see :meth:`ConfusionCounts.row_cells`)."""
        kk = self.k * self.k
        c = np.bincount(flat, weights=w, minlength=fact.size * kk).reshape(fact.size, kk)
        c2 = None
        if w is not None:
            c2 = np.bincount(flat, weights=w * w, minlength=fact.size * kk).reshape(fact.size, kk)
        if w is None and kept is None:
            rows = c.sum(axis=1).astype(np.int64, copy=False)
        else:
            rows = np.bincount(fact.codes, minlength=fact.size)
        first = self._span(fact)
        if first:  # the codes are consecutive known slots: added as one block, no gather
            return ("span", first, c, c2, rows, [], set())
        present = np.flatnonzero(rows)
        slots, new, absorbed = self._slots(fact, present)
        self.reserve(len(new))  # room only: the state is unchanged
        return ("cells", slots, c[present], None if c2 is None else c2[present], rows[present],
                new, absorbed)

    def prepare_rows(self, fact: Factorized, args: tuple[Any, ...], kwargs: dict[str, Any],
                     n: int) -> Any:
        """Per-slot layout: group rows by slot (one argsort), prepare each slot's block."""
        rows = np.bincount(fact.codes, minlength=fact.size)
        present = np.flatnonzero(rows)
        slots, new, absorbed = self._slots(fact, present)
        self.reserve(len(new))  # room only: the state is unchanged
        slot_of = np.zeros(fact.size, np.intp)
        slot_of[present] = slots
        first_new = len(self.keys) + 1
        fresh: dict[int, Metric] = {}
        deltas = []
        if len(set(slots.tolist())) == 1:  # one slot: the batch as it is, no grouping
            blocks: Any = [(int(slots[0]), None)]
        else:
            # Slot numbers that fit 16 bits: numpy's stable sort of uint16 is a radix sort,
            # O(n) and ~10x faster than sorting intp.
            dtype = np.uint16 if len(self.keys) + len(new) < 65535 else np.uint32
            row_slot = slot_of.astype(dtype)[fact.codes]
            order = np.argsort(row_slot, kind="stable")
            sorted_slots = row_slot[order]
            starts = np.flatnonzero(np.r_[True, sorted_slots[1:] != sorted_slots[:-1]])
            ends = np.r_[starts[1:], n]
            blocks = [(int(sorted_slots[a]), order[a:b])
                      for a, b in zip(starts.tolist(), ends.tolist(), strict=True)]
        for slot, idx in blocks:
            metric = self.metrics[slot] if slot < first_new and slot < len(self.metrics) else None
            if metric is None:
                metric = fresh.setdefault(slot, twin_of(self.template))
            if idx is None:
                block, kw = args, kwargs
            else:
                block = tuple(_take(x, idx, n) for x in args)
                kw = {k: _take(v, idx, n) for k, v in kwargs.items()}
            deltas.append((slot, prepare_pairs(metric, block, kw)))
        slot_rows = np.zeros(len(slots), np.int64)
        slot_rows[:] = rows[present]
        return ("rows", slots, fresh, deltas, slot_rows, new, absorbed)

    def apply(self, delta: Any) -> None:
        """Fold a prepared batch in (never raises)."""
        if delta[0] == "span":  # consecutive slots from ``first``, every one known already
            _, first, c, c2, rows, _, _ = delta
            end = first + rows.shape[0]
            if c2 is not None and self.counts_w2 is None:
                self.counts_w2 = self.counts.copy()
            self.counts[first:end] += c
            if self.counts_w2 is not None:
                self.counts_w2[first:end] += c if c2 is None else c2
            self.rows[first:end] += rows
            return
        if delta[0] == "cells":
            _, slots, c, c2, rows, new, absorbed = delta
            self._commit_keys(new, absorbed)
            if c2 is not None and self.counts_w2 is None:
                self.counts_w2 = self.counts.copy()
            if slots.shape[0] and slots[0] != 0 and not (slots == 0).any():  # distinct slots
                self.counts[slots] += c
                if self.counts_w2 is not None:
                    self.counts_w2[slots] += c if c2 is None else c2
                self.rows[slots] += rows
                return
            np.add.at(self.counts, slots, c)
            if self.counts_w2 is not None:
                np.add.at(self.counts_w2, slots, c if c2 is None else c2)
            np.add.at(self.rows, slots, rows)
            return
        _, slots, fresh, deltas, rows, new, absorbed = delta
        self._commit_keys(new, absorbed)
        for slot, metric in fresh.items():
            self.metrics[slot] = metric
        for _, pairs in deltas:
            for st, d in pairs:
                st.apply(d)
        np.add.at(self.rows, slots, rows)

    # -- reads -------------------------------------------------------------------------------
    def slots(self) -> list[tuple[Any, int]]:
        """(key, slot) of every slice, in insertion order (the overflow slot not included)."""
        return [(k, i + 1) for i, k in enumerate(self.keys)]

    def has_other(self) -> bool:
        return bool(self.rows[0]) or bool(self.absorbed)

    def metric(self, slot: int) -> Metric:
        """The accumulator of a slot (stacked: materialised; per-slot: the live one)."""
        if self.stacked:
            m = twin_of(self.template)
            k = self.k
            st = states_of(m)[0]
            w2 = self.counts if self.counts_w2 is None else self.counts_w2
            st.load_arrays({"counts": self.counts[slot].reshape(k, k).copy(),
                            "counts_w2": w2[slot].reshape(k, k).copy()})
            return m
        m_slot = self.metrics[slot]
        return twin_of(self.template) if m_slot is None else m_slot

    def values(self, slots: np.ndarray, confidence: float | None = None) -> list[Any] | None:
        """``compute()`` (or, given ``confidence``, ``interval(confidence)``) of the slots
        ``slots`` at once, vectorised over slots: the stacked binary counts of a per-class ratio
        metric (precision, recall, F-beta, Jaccard, ...; or a MetricSet of them). The same
        arithmetic as each slot's own read, one warning for all undefined slots; None for other
        metrics (read slot by slot). O(slots)."""
        if not self.stacked or self.k != 2:
            return None
        single = not isinstance(self.template, MetricSet)
        members = dict(self.template.items()) if isinstance(self.template, MetricSet) \
            else {"": self.template}
        if not all(_ratio_metric(m) for m in members.values()):
            return None
        c = self.counts[slots]
        s = OneVsRest(c[:, 3], c[:, 1], c[:, 2], c[:, 0])
        cols: dict[str, list[Any]] = {}
        for name, m in members.items():
            assert isinstance(m, AveragedMetric)
            if confidence is None:
                values, undefined = m._per_class(s)
                if undefined.any() and m.zero_division == "warn":
                    warn_undefined(m._label, m._undefined)
                cols[name] = values.tolist()
            elif getattr(type(m), "interval", None) is ProportionMetric.interval:
                w2 = self.counts if self.counts_w2 is None else self.counts_w2
                q = w2[slots]
                num, den = m._ratio(s)
                _, den2 = m._ratio(OneVsRest(q[:, 3], q[:, 1], q[:, 2], q[:, 0]))
                low, high = wilson(num, den, den2, confidence)
                cols[name] = list(zip(low.tolist(), high.tolist(), strict=True))
            elif hasattr(m, "interval") or single:
                return None  # an interval of its own (or none at all: its error, slot by slot)
        if single:
            return cols[""]
        if confidence is not None:
            return [{name: col[i] for name, col in cols.items()} for i in range(len(slots))]
        return [MetricResults({name: col[i] for name, col in cols.items()})
                for i in range(len(slots))]

    def total(self) -> Metric | None:
        """Stacked layout: the accumulator of all rows (the slots' sum); else None."""
        if not self.stacked:
            return None
        m = twin_of(self.template)
        k = self.k
        w2 = self.counts if self.counts_w2 is None else self.counts_w2
        states_of(m)[0].load_arrays({"counts": self.counts.sum(axis=0).reshape(k, k),
                                     "counts_w2": w2.sum(axis=0).reshape(k, k)})
        return m

    @property
    def nbytes(self) -> int:
        """Bytes of the slots in use (the arrays' spare capacity, at most half, not counted)."""
        n = len(self.keys) + 1
        size = 8 * n + 64 * len(self.keys) + self.absorbed.nbytes
        if self.stacked:
            size += n * self.counts.shape[1] * 8 * (1 if self.counts_w2 is None else 2)
        else:
            size += sum(m.nbytes for m in self.metrics if m is not None)
        return size

    # -- merge / reset / persistence ---------------------------------------------------------
    def merge(self, other: SliceStore) -> None:
        """Fold ``other``'s slices in: shared keys merge, new keys take new slots (beyond the
        cap they go to the overflow slot with ``overflow="other"``; with ``"error"`` the merge
        was refused by :meth:`check_merge` beforehand)."""
        slots, new, absorbed = self.resolve(list(other.keys)) if other.keys else (
            np.zeros(0, np.intp), [], set())
        self.reserve(len(new))
        self._commit_keys(new, absorbed)
        self.absorbed.update(other.absorbed)
        src = np.arange(len(other.keys) + 1)
        dst = np.r_[0, slots].astype(np.intp)
        if self.stacked:
            if other.counts_w2 is not None and self.counts_w2 is None:
                self.counts_w2 = self.counts.copy()
            np.add.at(self.counts, dst, other.counts[src])
            if self.counts_w2 is not None:
                w2 = other.counts if other.counts_w2 is None else other.counts_w2
                np.add.at(self.counts_w2, dst, w2[src])
        else:
            for s, d in zip(src.tolist(), dst.tolist(), strict=True):
                theirs = other.metrics[s]
                if theirs is None:
                    continue
                mine = self.metrics[d]
                if mine is None:
                    self.metrics[d] = theirs.copy()
                else:
                    mine.merge(theirs)
        np.add.at(self.rows, dst, other.rows[src])

    def check_merge(self, other: SliceStore) -> None:
        if self.overflow != "error":
            return
        extra = [k for k in other.keys if k not in self.index]
        if len(self.keys) + len(extra) > self.max_slices:
            raise ValueError(
                f"merge: the merged slices would exceed max_slices={self.max_slices} "
                f"({len(self.keys)} + {len(extra)} new keys; first beyond the cap: "
                f"{short_repr(extra[self.max_slices - len(self.keys)])}); raise max_slices or pass "
                "overflow='other'"
            )

    def copy(self) -> SliceStore:
        out = SliceStore(self.template, self.width, self.max_slices, self.overflow)
        out.merge(self)
        return out

    def arrays(self, prefix: str) -> dict[str, Any]:
        n = len(self.keys) + 1
        out: dict[str, Any] = {
            f"{prefix}keys": encode_keys(self.keys),
            f"{prefix}absorbed": encode_keys(self.absorbed.sorted_keys()),
            f"{prefix}rows": self.rows[:n].copy(),
        }
        if self.absorbed.sketch is not None:
            out[f"{prefix}absorbed_sketch"] = self.absorbed.sketch.copy()
        if self.stacked:
            out[f"{prefix}counts"] = self.counts[:n].copy()
            w2 = self.counts if self.counts_w2 is None else self.counts_w2
            out[f"{prefix}counts_w2"] = w2[:n].copy()
        else:
            out.update(pack_slots(self.metrics, n, prefix))
        return out

    def load(self, arrays: dict[str, Any], prefix: str) -> set[str]:
        """Replace the contents from ``arrays`` (untrusted); returns the entry names used.
        O(state size): the stacked counts are checked for every slot at once."""
        used = {f"{prefix}keys", f"{prefix}absorbed", f"{prefix}rows"}
        for name in used:
            if name not in arrays:
                raise ValueError(f"state: missing entry {name!r}")
        keys = decode_keys(arrays[f"{prefix}keys"], self.width, f"{prefix}keys")
        sketch = arrays.get(f"{prefix}absorbed_sketch")
        if sketch is not None:
            used.add(f"{prefix}absorbed_sketch")
        absorbed = Absorbed.loaded(
            decode_keys(arrays[f"{prefix}absorbed"], self.width, f"{prefix}absorbed"), sketch,
            f"{prefix}absorbed_sketch")
        if len(keys) > self.max_slices:
            raise ValueError(f"state: {prefix}keys holds {len(keys)} slices, more than "
                             f"max_slices={self.max_slices}")
        if absorbed and self.overflow != "other":
            raise ValueError(f"state: {prefix}absorbed is not empty but overflow={self.overflow!r}")
        n = len(keys) + 1
        rows = np.asarray(arrays[f"{prefix}rows"])
        # at most 2**53 rows a slice: what updates can count, and far from int64's end (a merge
        # of two files adds the counts: near 2**63 they wrapped negative and the merge did not load)
        if rows.shape != (n,) or rows.dtype.kind not in "iu" or (rows < 0).any() or (rows > 2**53).any():
            raise ValueError(f"state: {prefix}rows must be {n} integers in [0, 2**53]")
        fresh = SliceStore(self.template, self.width, self.max_slices, self.overflow)
        fresh._commit_keys(keys, set())
        fresh.absorbed = absorbed
        fresh.rows = rows.astype(np.int64)
        if self.stacked:
            k = self.k
            used |= {f"{prefix}counts", f"{prefix}counts_w2"}
            for name in (f"{prefix}counts", f"{prefix}counts_w2"):
                if name not in arrays:
                    raise ValueError(f"state: missing entry {name!r}")
                a = np.asarray(arrays[name])
                if a.shape != (n, k * k) or a.dtype.kind not in "biuf":
                    raise ValueError(f"state: {name} has shape {a.shape} and dtype {a.dtype}, "
                                     f"expected {(n, k * k)} numbers")
            counts = np.array(arrays[f"{prefix}counts"], dtype=np.float64)
            w2 = np.array(arrays[f"{prefix}counts_w2"], dtype=np.float64)
            check_stacked(counts, w2, prefix)
            fresh.counts = counts
            fresh.counts_w2 = None if np.array_equal(w2, counts) else w2
        else:
            metrics, names = unpack_slots(arrays, prefix, n, self.template)
            used |= names
            for i, m in metrics.items():
                fresh.metrics[i] = m
        self.__dict__.update(fresh.__dict__)
        return used


def _grown(a: np.ndarray, rows: int) -> np.ndarray:
    """``a`` with zero rows appended up to ``rows`` rows."""
    out = np.zeros((rows, *a.shape[1:]), a.dtype)
    out[: a.shape[0]] = a
    return out


def _ratio_metric(m: Metric) -> bool:
    """A binary per-class ratio metric whose ``compute()`` is its ``_per_class`` of the one
    positive class (see :meth:`AveragedMetric._compute`)."""
    if not isinstance(m, AveragedMetric) or m.task != "binary":
        return False
    cls = type(m)
    return cls._compute is AveragedMetric._compute and cls._per_class is AveragedMetric._per_class


def _take(x: Any, idx: np.ndarray, n: int) -> Any:
    """Rows ``idx`` of a per-row argument (an array whose first axis has length n); anything
    else (None, a scalar, a batch timestamp) is passed through."""
    if x is None or np.isscalar(x):
        return x
    arr = np.asarray(x)
    if arr.ndim >= 1 and arr.shape[0] == n:
        return arr[idx]
    return x
