"""The state of :class:`~streammetrics.Sliced`: the crossed slices, the marginal slices of each
key column alone, and (for order-dependent wrappers) an overall accumulator.

It is a :class:`~streammetrics._core.state.State` like any other, so the generic protocol -- merge,
reset, copy, ``state_dict``, save/load, torch ``sync`` -- needs no Sliced-specific code there.
Layout of ``arrays()``: ``names`` (UTF-8 JSON of the key column names), then each slicing's
entries under ``slices.`` (crossed) and ``by<j>.`` (key column j alone), see
:meth:`~streammetrics.wrappers.sliced.store.SliceStore.arrays`, and ``overall:<name>`` for a kept overall
accumulator.
"""

from __future__ import annotations

import json
from collections.abc import Hashable, Mapping
from typing import Any

import numpy as np

from streammetrics._core.metric import FORMAT_VERSION, Metric
from streammetrics._core.state import State
from streammetrics._core.validation import as_numpy
from streammetrics.regression._base import regression_batch
from streammetrics.wrappers.decay import Decayed
from streammetrics.wrappers.metricset import MetricSet
from streammetrics.wrappers.window import Window

from .keys import Factorized, cross, decode_json, encode_json, factorize, key_kind, same_kind, split_slices
from .store import SliceStore, outputs_held, prepare_pairs, stackable, states_of, twin_of, wrapped

__all__ = ["SlicedState", "order_dependent", "score_columns"]

_RESERVED = ("class", "format_version", "config")


def order_dependent(metric: Metric) -> bool:
    """True for windows and decay (and sets of them, and an ``Estimated`` of them): the
    overall value of such a metric is not the merge of its slices' values, so an overall
    accumulator is kept beside them."""
    if metric.family == "estimated" and not isinstance(metric, (Window, Decayed)):
        return order_dependent(wrapped(metric))
    members = list(dict(metric.items()).values()) if isinstance(metric, MetricSet) else [metric]
    return any(isinstance(m, (Window, Decayed)) for m in members)


def score_columns(metric: Metric) -> int | None:
    """The scores per row a Drift (or a window, decay or set of Drifts) takes: None for one
    score per row, else C (its reference's columns)."""
    members = list(dict(metric.items()).values()) if isinstance(metric, MetricSet) else [metric]
    for m in members:
        inner = getattr(m, "metric", m) if isinstance(m, (Window, Decayed)) else m
        reference = getattr(inner, "_reference", None)
        if reference is not None:
            columns: int | None = reference.columns
            return columns
    return None


class SlicedState(State):
    """See the module docstring."""

    def __init__(self, template: Metric, max_slices: int, overflow: str) -> None:
        self.template = template
        self.max_slices = max_slices
        self.overflow = overflow
        self.names: tuple[str, ...] | None = None
        self.fed = False  # True once the key columns are known (first non-empty update / load)
        self.crossed: SliceStore | None = None
        self.marginals: list[SliceStore] = []
        self.stacked = stackable(template)
        self.overall: Metric | None = twin_of(template) if order_dependent(template) else None
        self._scratch = np.empty(0, np.intp)  # stacked layout: the largest batch's offsets
        family = template.family
        #: what ``update`` takes: "labels" (y_true, y_pred), "scores" (Drift: y_score alone) or
        #: "probabilities" (Estimated: y_prob alone)
        self.mode = {"drift": "scores", "estimated": "probabilities"}.get(family, "labels")
        self.regression = family == "regression"
        self.columns = score_columns(template) if family == "drift" else None
        #: regression: the number of outputs the slices hold (0: none yet), one for all slices
        self.outputs = 0

    def key(self) -> Hashable:
        cfg = {"class": type(self.template).__name__, "config": self.template._config()}
        return ("sliced", json.dumps(cfg, sort_keys=True, default=str), self.max_slices,
                self.overflow)

    # -- update --------------------------------------------------------------------------------
    def _stores_for(self, names: tuple[str, ...] | None,
                    ncols: int) -> tuple[SliceStore, list[SliceStore], bool]:
        if self.fed:
            if names != self.names:
                raise ValueError(
                    f"slices: this accumulator was fed the key columns {self.shown(self.names)}, "
                    f"got {self.shown(names)}"
                )
            assert self.crossed is not None
            return self.crossed, self.marginals, False
        width = None if ncols == 1 else ncols
        crossed = SliceStore(self.template, width, self.max_slices, self.overflow)
        marginals = [] if ncols == 1 else [
            SliceStore(self.template, None, self.max_slices, self.overflow) for _ in range(ncols)
        ]
        return crossed, marginals, True

    def kinds(self) -> tuple[str, ...] | None:
        """The kind of key of each column (:func:`key_kind`), from the first slice."""
        if self.crossed is None or not self.crossed.keys:
            return None
        first = self.crossed.keys[0]
        if self.crossed.width is None:
            return (key_kind(first),)
        return tuple(key_kind(v) for v in first)

    def _check_kinds(self, kinds: tuple[str, ...] | None, names: tuple[str, ...] | None,
                     merging: bool = False) -> None:
        mine = self.kinds()
        if mine is None or kinds is None or all(map(same_kind, mine, kinds)):
            return
        j = next(i for i, (a, b) in enumerate(zip(mine, kinds, strict=True)) if not same_kind(a, b))
        col = ("merge: " if merging else "") + ("slices" if names is None else f"slices[{names[j]!r}]")
        raise ValueError(
            f"{col}: this accumulator holds {mine[j]} keys in this column, got "
            f"{kinds[j]} keys (one kind per column: 1 and '1' would be one label "
            "when exported)"
        )

    @staticmethod
    def shown(names: tuple[str, ...] | None) -> str:
        return "(one unnamed column)" if names is None else repr(list(names))

    def _rows(self, y_true: Any, y_pred: Any, sample_weight: Any,
              kwargs: dict[str, Any]) -> tuple[int, tuple[Any, ...], Any]:
        """The batch as (rows, the arguments each slice's ``prepare`` takes, the sample weights):
        ``(y_true, y_pred, w)`` for labelled metrics (regression: checked once, as (n, k)
        arrays), ``(labels placeholder, y_score, w)`` for Drift, ``(y_prob, w)`` for
        Estimated. O(n)."""
        if self.mode == "labels":
            y = as_numpy(y_true, "y_true")
            p = as_numpy(y_pred, "y_pred")
            if self.regression and y.ndim == p.ndim:  # not the (n, 2) intervals
                # checked once for the whole batch (indices name the user's rows), and made
                # (n, k): a slice's block of k rows of a 1-D batch is never read as one row
                b = regression_batch(y, p, sample_weight, outputs=self.outputs or None)
                _check_rows(b.n, "y_true", **kwargs)
                return b.n, (b.y, b.p, b.w), b.w
            if y.ndim == 0:  # one sample
                y = y.reshape(1)
                p = p.reshape(1, -1) if p.ndim == 1 else p.reshape(1)
                if sample_weight is not None and np.ndim(sample_weight) == 0:
                    sample_weight = [sample_weight]
            n = y.shape[0]
            _check_rows(n, "y_true", y_pred=p, sample_weight=sample_weight, **kwargs)
            return n, (y, p, sample_weight), sample_weight
        name = "y_score" if self.mode == "scores" else "y_prob"
        s = as_numpy(y_pred, name)
        if s.ndim == 0:  # one row
            s = s.reshape(1)
            if sample_weight is not None and np.ndim(sample_weight) == 0:
                sample_weight = [sample_weight]
        columns = self.columns
        if columns is not None and s.ndim == 1:
            if s.shape[0] != columns:  # blocks of C rows would each be read as one row
                raise ValueError(f"{name}: the reference holds {columns} scores per row: expected "
                                 f"shape (n, {columns}), got {s.shape}")
            s = s.reshape(1, columns)  # one row, as Drift reads it
        n = s.shape[0]
        _check_rows(n, name, sample_weight=sample_weight, **kwargs)
        if self.mode == "scores" or isinstance(self.template, (Window, Decayed)):
            # a window or decay of an Estimated stores rows too: placeholder labels (reg-delayed)
            return n, (np.zeros(n, np.int8), s, sample_weight), sample_weight
        return n, (s, sample_weight), sample_weight

    def prepare(self, y_true: Any, y_pred: Any, sample_weight: Any = None, *, slices: Any,
                **kwargs: Any) -> Any:
        """One batch with its slice keys made into the increment of every slicing (nothing
        changes). ``y_true`` is None for the metrics without labels (Drift: ``y_pred`` holds
        the scores; Estimated: the probabilities)."""
        n, args, sample_weight = self._rows(y_true, y_pred, sample_weight, kwargs)
        names, columns = split_slices(slices, n)
        if names is not None and len(columns) == 1 and not isinstance(slices, Mapping):
            names = None  # a 1-tuple is one unnamed column
        crossed, marginals, new_stores = self._stores_for(names, len(columns))
        if self.stacked and kwargs:
            raise TypeError(f"update() got unexpected keyword arguments {sorted(kwargs)}")
        if n == 0:
            if self.stacked:  # still validate (shapes, dtypes)
                states_of(self.template)[0].row_cells(*args)  # type: ignore[attr-defined]
            else:
                prepare_pairs(twin_of(self.template), args, kwargs)
            return None
        facts = [factorize(c, "slices" if names is None else f"slices[{nm!r}]")
                 for c, nm in zip(columns, names or (None,), strict=True)]
        if not new_stores:
            self._check_kinds(tuple(f.kind for f in facts), names)
        crossed_fact = facts[0] if len(facts) == 1 else cross(facts)
        pairs = [(crossed, crossed_fact)] + (list(zip(marginals, facts, strict=True)) if marginals else [])
        if self.stacked:
            y, p, _ = args
            deltas = self._count(pairs, y, p, sample_weight)
        else:
            try:
                deltas = [s.prepare_rows(f, args, kwargs, n) for s, f in pairs]
            except ValueError:
                # a slice's block was refused, its indices local to the block: the error of
                # the whole batch names the row the caller passed (the failure path only)
                prepare_pairs(twin_of(self.template), args, kwargs)
                raise
        overall = None
        if self.overall is not None:
            overall = prepare_pairs(self.overall, args, kwargs)
        stores = (names, crossed, marginals) if new_stores else None
        return (stores, deltas, overall)

    def _count(self, pairs: list[tuple[SliceStore, Factorized]], y: np.ndarray, p: np.ndarray,
               sample_weight: Any) -> list[Any]:
        """Stacked layout: validate once, then one bincount per slicing over (slice, cell). With
        one slicing the cells are added into the offsets ``code * C**2`` in place, in a scratch
        buffer kept between batches (fresh large temporaries cost page faults; the update holds
        the lock, so one buffer serves every batch)."""
        counts = states_of(self.template)[0]
        kk = pairs[0][0].k ** 2
        if len(pairs) == 1:
            store, fact = pairs[0]
            n = fact.codes.shape[0]
            if self._scratch.shape[0] < n:
                self._scratch = np.empty(n, np.intp)
            flat = np.multiply(fact.codes, kk, out=self._scratch[:n], casting="unsafe")
            flat, w, kept = counts.row_cells(y, p, sample_weight, out=flat)  # type: ignore[attr-defined]
            return [store.prepare_cells(fact, flat, w, kept)]
        cells, w, kept = counts.row_cells(y, p, sample_weight)  # type: ignore[attr-defined]
        out = []
        for store, fact in pairs:
            codes = fact.codes if kept is None else fact.codes[kept]
            flat = np.multiply(codes, kk, dtype=np.intp)
            flat += cells
            out.append(store.prepare_cells(fact, flat, w, kept))
        return out

    def apply(self, delta: Any) -> None:
        if delta is None:
            return
        stores, deltas, overall = delta
        if stores is not None:
            self.names, self.crossed, self.marginals = stores
            self.fed = True
        assert self.crossed is not None
        for store, d in zip([self.crossed, *self.marginals], deltas, strict=True):
            store.apply(d)
        for st, d in overall or ():
            st.apply(d)
        if self.regression and not self.outputs:
            self.outputs = self._outputs()

    def _outputs(self) -> int:
        """Regression: the outputs the slices hold (their states' ``k``; 0 while none is
        fixed). O(slices) -- called only while no slice holds any."""
        found = [outputs_held(m) for m in self._metrics()]
        return max(found, default=0)

    def _metrics(self) -> list[Metric]:
        """Every per-slot accumulator (and the overall one): not the stacked counts."""
        out = [m for store in self._stores() if not store.stacked for m in store.metrics if m is not None]
        return out + ([] if self.overall is None else [self.overall])

    # -- reads ---------------------------------------------------------------------------------
    def overall_metric(self) -> Metric:
        """The accumulator over every row: the kept one, else the merge of all slots."""
        if self.overall is not None:
            return self.overall
        if self.crossed is None:
            return twin_of(self.template)
        total = self.crossed.total()
        if total is not None:
            return total
        out = twin_of(self.template)
        parts = [m for m in self.crossed.metrics if m is not None]
        if parts:
            out.merge(*parts)
        return out

    @property
    def nbytes(self) -> int:
        size = sum(s.nbytes for s in self._stores())
        return size + (0 if self.overall is None else self.overall.nbytes)

    def _stores(self) -> list[SliceStore]:
        return [] if self.crossed is None else [self.crossed, *self.marginals]

    # -- merge / reset / copy ------------------------------------------------------------------
    def merge(self, other: State) -> None:
        assert isinstance(other, SlicedState)
        if not other.fed:
            if self.overall is not None and other.overall is not None:
                self.overall.merge(other.overall)
            return
        if self.fed and other.names != self.names:
            raise ValueError(
                f"merge: the accumulators were fed different key columns "
                f"({self.shown(self.names)} vs {self.shown(other.names)})"
            )
        if self.regression and self.outputs and other.outputs and self.outputs != other.outputs:
            raise ValueError(f"merge: the slices hold {self.outputs} and {other.outputs} outputs")
        if self.fed:
            self._check_kinds(other.kinds(), self.names, merging=True)
            for mine, theirs in zip(self._stores(), other._stores(), strict=True):
                mine.check_merge(theirs)
            for mine, theirs in zip(self._stores(), other._stores(), strict=True):
                mine.merge(theirs)
        else:
            assert other.crossed is not None
            self.names = other.names
            self.crossed = other.crossed.copy()
            self.marginals = [m.copy() for m in other.marginals]
            self.fed = True
        if self.overall is not None and other.overall is not None:
            self.overall.merge(other.overall)
        if self.regression and not self.outputs:
            self.outputs = other.outputs

    def reset(self) -> None:
        self.names = None
        self.fed = False
        self.crossed = None
        self.marginals = []
        self.outputs = 0
        if self.overall is not None:
            self.overall.reset()

    def copy(self) -> SlicedState:
        out = SlicedState(self.template, self.max_slices, self.overflow)
        out.merge(self)
        return out

    # -- persistence ---------------------------------------------------------------------------
    def arrays(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "names": encode_json({"fed": self.fed,
                                  "names": None if self.names is None else list(self.names)})
        }
        for prefix, store in self._prefixed():
            out.update(store.arrays(prefix))
        if self.overall is not None:
            for name, value in self.overall.state_dict().items():
                if name not in _RESERVED:
                    out[f"overall:{name}"] = value
        return out

    def _prefixed(self) -> list[tuple[str, SliceStore]]:
        if self.crossed is None:
            return []
        return [("slices.", self.crossed)] + [(f"by{j}.", m) for j, m in enumerate(self.marginals)]

    def load_arrays(self, arrays: Mapping[str, Any]) -> None:
        arrays = dict(arrays)
        if "names" not in arrays:
            raise ValueError("state: missing entry 'names'")
        head = decode_json(arrays["names"], "names")
        if not isinstance(head, dict) or set(head) != {"fed", "names"} \
                or not isinstance(head["fed"], bool):
            raise ValueError("state: 'names' must be {\"fed\": bool, \"names\": list or null}")
        names = head["names"]
        if names is not None and not (
            isinstance(names, list) and names and all(isinstance(s, str) and s for s in names)
            and len(set(names)) == len(names)
        ):
            raise ValueError(f"state: 'names' must be null or distinct non-empty strings, got {names!r}")
        fresh = SlicedState(self.template, self.max_slices, self.overflow)
        used = {"names"}
        if head["fed"]:
            tup = None if names is None else tuple(names)
            ncols = 1 if tup is None else len(tup)
            fresh.crossed, fresh.marginals, _ = fresh._stores_for(tup, ncols)
            fresh.names, fresh.fed = tup, True
            for prefix, store in fresh._prefixed():
                used |= store.load(arrays, prefix)
        elif names is not None:
            raise ValueError("state: 'names' given for an accumulator never fed")
        if fresh.overall is not None:
            entries = {k[len("overall:"):]: v for k, v in arrays.items() if k.startswith("overall:")}
            used |= {f"overall:{k}" for k in entries}
            cls = type(self.template)
            fresh.overall = cls.from_state_dict({"class": cls.__name__, "format_version": FORMAT_VERSION,
                                                 "config": self.template._config(), **entries})
        extra = sorted(set(arrays) - used)
        if extra:
            raise ValueError(f"state: unexpected entries {extra[:5]} in a Sliced state")
        if fresh.regression:  # one number of outputs for every slice (and the overall value)
            held = sorted({k for k in map(outputs_held, fresh._metrics()) if k})
            if len(held) > 1:
                raise ValueError(f"state: the slices hold different numbers of outputs {held[:5]}")
            fresh.outputs = held[0] if held else 0
        self.__dict__.update(fresh.__dict__)


def _check_rows(n: int, first: str, **arrays: Any) -> None:
    """Every per-row argument must have ``n`` rows, like ``first`` (``y_true``, or the scores
    of a metric without labels): the batch is cut into per-slice blocks by row, and a shorter
    array would otherwise pass through whole."""
    for name, value in arrays.items():
        if value is None:
            continue
        if type(value) is np.ndarray:
            shape = value.shape
        elif np.isscalar(value) or isinstance(value, (str, bytes)):
            continue
        else:
            shape = np.shape(value)
        if len(shape) >= 1 and shape[0] != n:
            raise ValueError(f"{name}: expected {n} rows like {first}, got shape {shape}")
