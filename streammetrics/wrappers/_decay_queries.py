"""The decay over queries of :class:`~streammetrics.Decayed` for the retrieval family."""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from streammetrics._core.state import State
from streammetrics._core.timestamps import Clock
from streammetrics._queries.values import (
    TIMED_QUERY_OPTIONS,
    TimedQueryOptions,
    allows_nan,
    defined_columns,
    finite,
    query_values,
    spec_layout,
    split_timestamp,
    write_query_sums,
)

from ._decay_state import RENORM, DecayBase
from ._rows import optional_float

if TYPE_CHECKING:
    from typing import Unpack


class DecayedQueriesState(DecayBase):
    """Decay over queries, for the retrieval family.

    The q-th query of the n seen (0-based, arrival order: ``update`` calls, then queries in
    order of appearance) weighs ``w_q = 0.5 ** ((n - 1 - q) / h)`` by queries, or
    ``0.5 ** ((t_newest - t_q) / h)`` by time (one timestamp per query). The value is the
    decay-weighted mean over queries, ``sum_q w_q m_q / sum_q w_q`` (for micro-averaged set
    measures, the ratio of the decay-weighted pooled counts).

    Stored: ``S = sum_q a_q v_q`` (every per-query value column of the wrapped measure) and
    ``M = sum_q a_q`` with absolute weights ``a_q = 2 ** ((coord_q - ref) / h)``: an update is
    O(queries · width) and never touches the past; the reference moves only to keep the weights
    far from overflow (a weighted mean does not depend on it). Before a read the wrapped
    :class:`~streammetrics.retrieval.metrics.QueryState` is loaded, through its ``load_arrays``, with one
    pseudo-query holding ``S / M``, so the wrapped metric's own ``compute`` returns the decayed
    mean. Columns averaged over the queries that define them (``Accuracy@k`` of
    ``streammetrics.trec``) keep their own mass ``D_j = sum_q a_q [v_qj defined]`` (saved as
    ``defined``, only then) and read ``S_j / D_j``. Memory O(width).
    """

    unit = "queries"

    def __init__(self, inner: State, half_life: float | None, half_life_seconds: float | None,
                 clock: Clock) -> None:
        super().__init__(inner, half_life, half_life_seconds, clock)
        self.specs = list(inner.specs)  # type: ignore[attr-defined]
        if any(spec.per_query for spec in self.specs):
            raise ValueError("Decayed: per-query values are not decayed; wrap the metric without "
                             "per_query=True")
        self.width = sum(spec.width for spec in self.specs)
        self.sums = np.zeros(self.width)
        self.mass = 0.0
        #: the columns averaged over defined queries, and their masses (None: no such column)
        self.mask: np.ndarray | None = defined_columns(self.specs)
        self.defined: np.ndarray | None = None if self.mask is None else np.zeros(self.width)

    def key(self) -> Hashable:
        return ("decayed-queries", self.half_life, self.half_life_seconds,
                tuple(spec.name for spec in self.specs))

    #: The keyword arguments ``prepare`` takes (a MetricSet passes only these to it).
    update_keywords = TIMED_QUERY_OPTIONS

    def prepare(self, relevance: Any, scores: Any, **options: Unpack[TimedQueryOptions]) -> Any:
        timestamp, rest = split_timestamp(options)
        self._check_untimed(timestamp)
        vals = query_values(self.specs, relevance, scores, **rest)
        return vals, self._timestamps(timestamp, vals.shape[0])

    def apply(self, delta: Any) -> None:
        vals, ts = delta
        n = vals.shape[0]
        if n == 0:
            return
        if ts is not None:
            if self.newest is not None and ts[0] < self.newest:
                ts = np.maximum(ts, self.newest)  # lost a race with a newer batch
            coord = ts
        else:  # by queries: coordinates assigned here, so racing updates get consecutive ones
            coord = self.n_seen + np.arange(n, dtype=np.float64)
        last = float(coord[-1])
        if self.ref is None:
            self.ref = last
        elif (last - self.ref) / self.h > RENORM:
            self._rebase(last)
        a = np.exp2((coord - self.ref) / self.h)
        if self.defined is not None:
            undefined = np.isnan(vals) & self.mask
            vals = np.where(undefined, 0.0, vals)
            self.defined += a @ np.where(undefined, 0.0, 1.0)
        self.sums += a @ vals
        self.mass += float(a.sum())
        self.n_seen += n
        self.newest = last
        self._dirty = True

    def _rescale(self, factor: float) -> None:
        self.sums *= factor
        self.mass *= factor
        if self.defined is not None:
            self.defined *= factor

    def sync(self) -> None:
        """Load the decay-weighted mean into the wrapped state (one pseudo-query)."""
        if not self._dirty:
            return
        if self.n_seen == 0:
            self.inner.reset()
        else:
            self._rebase(self.newest)  # type: ignore[arg-type]  # the stored form (as saved)
            if self.defined is None or self.mask is None:
                write_query_sums(self.inner, self.specs, 1, self.sums / self.mass)
            else:  # one pseudo-query, defining a column where some query does
                mass = np.where(self.mask, self.defined, self.mass)
                means = np.where(mass > 0, self.sums / np.where(mass > 0, mass, 1.0), 0.0)
                write_query_sums(self.inner, self.specs, 1, means, defined=(mass > 0).astype(np.int64))
        self._dirty = False

    def arrays(self) -> dict[str, Any]:
        if self.newest is not None and self.ref is not None:
            self._rebase(self.newest)  # the stored form: the newest query weighs 1
        out = {"sums": self.sums.copy(), "mass": float(self.mass), "newest": self.newest,
               "n_seen": self.n_seen}
        if self.defined is not None:
            out["defined"] = self.defined.copy()
        return out

    def load_arrays(self, arrays: Mapping[str, Any]) -> None:
        expected = {"sums", "mass", "newest", "n_seen"} | ({"defined"} if self.mask is not None else set())
        if set(arrays) != expected:
            raise ValueError(f"state: a decayed query state has exactly {sorted(expected)}, got "
                             f"{sorted(arrays)}")
        newest, n_seen = self._load_counters(arrays)
        self._check_newest_index(newest, n_seen)
        sums = arrays["sums"]
        if not isinstance(sums, np.ndarray) or sums.shape != (self.width,) or sums.dtype.kind != "f" \
                or not finite(sums, allows_nan(self.specs)) \
                or (self.mask is not None and not np.isfinite(sums[self.mask]).all()):
            raise ValueError(f"state: 'sums' must be {self.width} finite floats")
        mass = optional_float(arrays["mass"], "mass")
        if mass is None or (mass < 1.0 if n_seen else mass != 0.0):
            raise ValueError("state: 'mass' must be >= 1 (the newest query weighs 1), or 0 when empty")
        # every query weighs at most 1 (merged shards by queries too: each keeps its own ages)
        most = float(n_seen)
        if mass > most * (1.0 + 1e-12):
            raise ValueError(f"state: 'mass' must be at most {most!r} for {n_seen} queries, "
                             f"got {mass!r}")
        if not n_seen and sums.any():
            raise ValueError("state: an empty decayed query state has non-zero sums")
        for spec, a, b in spec_layout(self.specs):  # sums within mass x each measure's range
            spec.check_block(sums[a:b], mass, f"decayed query 'sums' of {spec.name}", 0.5e-9)
        defined = None if self.mask is None else self._check_defined(arrays["defined"], sums, mass)
        self.sums, self.mass, self.defined = sums.astype(np.float64), float(mass), defined
        self.newest, self.n_seen = newest, n_seen
        self.ref = newest
        self._dirty = True
        self.sync()

    def _check_defined(self, stored: Any, sums: np.ndarray, mass: float) -> np.ndarray:
        """Untrusted masses of the queries defining each column: within [0, mass], the mass in
        the columns every query defines, and the sums within them times the range."""
        assert self.mask is not None
        if not isinstance(stored, np.ndarray) or stored.shape != (self.width,) or stored.dtype.kind != "f" \
                or not np.isfinite(stored).all():
            raise ValueError(f"state: 'defined' must be {self.width} finite floats")
        tol = 1e-9 * max(mass, 1.0)
        bad = (stored < 0) | (stored > mass + tol) | (~self.mask & (np.abs(stored - mass) > tol))
        if bad.any():
            j = int(np.flatnonzero(bad)[0])
            raise ValueError(f"state: 'defined'[{j}] = {float(stored[j])!r} is not a mass of queries within "
                             f"'mass' = {mass!r}")  # fmt: skip
        for spec, a, b in spec_layout(self.specs):  # defined columns: sums within their own mass
            cols = np.flatnonzero(self.mask[a:b])
            for j in cols.tolist():
                spec.check_block(np.where(np.arange(b - a) == j, sums[a:b], 0.0), float(stored[a + j]),
                                 f"decayed query 'sums' of {spec.name}", 0.5e-9)
        return stored.astype(np.float64)

    @property
    def nbytes(self) -> int:
        return self.sums.nbytes + 8 + self.inner.nbytes + (0 if self.defined is None else self.defined.nbytes)

    def merge(self, other: State) -> None:
        """By time: both sides aligned to the newer newest timestamp (the older side decays by
        the gap) and added. By queries: each shard's queries keep their ages in their shard."""
        assert isinstance(other, DecayedQueriesState)
        if other.n_seen == 0:
            return
        theirs = other.arrays()  # rebased to its newest (other is a snapshot)
        if self.n_seen == 0:
            self.sums, self.mass = theirs["sums"], theirs["mass"]
            self.defined = theirs.get("defined")
            self.newest = self.ref = theirs["newest"]
            self.n_seen = other.n_seen
            self._dirty = True
            return
        self.arrays()  # rebase to our newest
        assert self.newest is not None
        t_sums, t_mass, t_newest = theirs["sums"], theirs["mass"], float(theirs["newest"])
        if self.by_time:
            top, f_mine, f_theirs = self._gap_factors(t_newest)
            self.sums = self.sums * f_mine + t_sums * f_theirs
            self.mass = self.mass * f_mine + t_mass * f_theirs
            if self.defined is not None:
                self.defined = self.defined * f_mine + theirs["defined"] * f_theirs
            self.newest = top
        else:
            self.sums = self.sums + t_sums
            self.mass = self.mass + t_mass
            if self.defined is not None:
                self.defined = self.defined + theirs["defined"]
            self.newest = float(self.n_seen + other.n_seen - 1)
        self.ref = self.newest
        self.n_seen += other.n_seen
        self._dirty = True

    def reset(self) -> None:
        super().reset()
        self.sums = np.zeros(self.width)
        self.mass = 0.0
        self.defined = None if self.mask is None else np.zeros(self.width)
