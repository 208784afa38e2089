"""The reference side of :class:`~streammetrics.monitoring.Drift`: what it keeps of the
reference scores, built from an array once and carried in the accumulator's configuration
(so that a twin, a merge check and a saved file all see the same reference).

Per column (one for scores of shape (n,), C for (n, C)): the reference's quantile edges and its
counts in those bins (PSI, JS: always exact), its samples as ascending ``(low, high, count)``
rows (exact: one row per distinct score with ``low == high``; with ``max_bytes``: at most
``capacity`` rows of consecutive sorted scores, KS and Wasserstein then certified), and, for
C columns, the counts of the predicted classes (argmax of a row, first maximum on ties).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np

from streammetrics._core.validation import as_numpy, first_bad

#: Bytes one reference row costs (low, high, count as float64).
ROW_BYTES = 24
#: Fewest rows a bounded reference keeps per column.
MIN_ROWS = 16
#: Most bins of the PSI / JS histogram.
MAX_BINS = 100_000


def check_score_batch(y_score: Any, columns: int | None, name: str = "y_score") -> np.ndarray:
    """Scores as float64 of shape (n,) (``columns`` None) or (n, columns); finite. Raises
    ``ValueError`` naming ``name``, the rule and the first offending value. O(n)."""
    s = as_numpy(y_score, name)
    if s.dtype.kind not in "biuf":
        raise ValueError(f"{name}: expected numbers, got dtype {s.dtype}")
    s = s.astype(np.float64, copy=False)
    if columns is None:
        if s.ndim == 0:
            s = s.reshape(1)
        if s.ndim != 1:
            raise ValueError(f"{name}: the reference holds one score per row: expected shape (n,), "
                             f"got {s.shape}")
    else:
        if s.ndim == 1 and s.shape[0] == columns:
            s = s.reshape(1, columns)
        if s.ndim != 2 or s.shape[1] != columns:
            raise ValueError(f"{name}: the reference holds {columns} scores per row: expected shape "
                             f"(n, {columns}), got {s.shape}")
    if s.size and not np.isfinite(s.min() + s.max()):
        bad = ~np.isfinite(s)
        idx = first_bad(bad)
        raise ValueError(f"{name}: scores must be finite; first invalid value {float(s[idx])!r} "
                         f"at index {idx}")
    return s


#: Up to this many interior edges, unweighted bin counts are taken by one comparison pass per
#: edge (numpy's searchsorted costs ~10x more per score than a vectorised comparison).
COMPARE_EDGES = 32


def bin_counts(edges: np.ndarray, s: np.ndarray, w: np.ndarray | None) -> np.ndarray:
    """Weight of ``s`` in each bin of :func:`bin_index` (float64, shape (bins,)). Unweighted
    with few edges: ``#(s >= e)`` per interior edge, differenced (exact integer counts).
    O(n · bins) then, else O(n log bins)."""
    interior = edges[1:-1]
    bins = interior.shape[0] + 1
    if w is not None or interior.shape[0] > COMPARE_EDGES:
        return np.bincount(bin_index(edges, s), w, minlength=bins).astype(np.float64)
    ge = np.array([s.shape[0], *(np.count_nonzero(s >= e) for e in interior.tolist()), 0], dtype=np.float64)
    return ge[:-1] - ge[1:]


def bin_index(edges: np.ndarray, s: np.ndarray) -> np.ndarray:
    """The PSI / JS bin of each score: ``edges`` (bins + 1, outer ones open to ±inf), bins
    half-open ``[e_i, e_{i+1})`` as in ``numpy.histogram`` (a score equal to an interior edge
    goes to the bin above it; equal edges: to the highest bin starting there). O(n log bins)."""
    return np.searchsorted(edges[1:-1], s, "right")


@dataclass(frozen=True)
class Reference:
    """The reference kept by a Drift (see the module docstring). Arrays are read only."""

    columns: int | None
    bins: int
    edges: np.ndarray  # (K, bins + 1)
    hist: np.ndarray  # (K, bins)
    lows: tuple[np.ndarray, ...]
    highs: tuple[np.ndarray, ...]
    counts: tuple[np.ndarray, ...]
    classes: np.ndarray  # (C,) or (0,)

    @property
    def n_columns(self) -> int:
        return 1 if self.columns is None else self.columns

    @property
    def exact(self) -> bool:
        """True when every row is one distinct score (KS and Wasserstein exact)."""
        return all(bool(np.array_equal(lo, hi)) for lo, hi in zip(self.lows, self.highs, strict=True))

    def side(self, column: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        return self.lows[column], self.highs[column], self.counts[column]

    @cached_property
    def cdf(self) -> tuple[np.ndarray, ...]:
        """Per column, the reference's share at or below each row (its CDF at each distinct
        score when exact), computed once. O(rows)."""
        return tuple(_frozen(np.cumsum(n) / float(n.sum())) for n in self.counts)

    def to_config(self) -> dict[str, Any]:
        """JSON-able form (the ``reference`` entry of a Drift's configuration)."""
        def rows(arrs: tuple[np.ndarray, ...]) -> list[list[float]]:
            return [a.tolist() for a in arrs]
        out: dict[str, Any] = {
            "columns": self.columns,
            "edges": self.edges.tolist(),
            "hist": self.hist.tolist(),
            "lows": rows(self.lows),
            "counts": rows(self.counts),
        }
        if not self.exact:
            out["highs"] = rows(self.highs)
        if self.columns is not None:
            out["classes"] = self.classes.tolist()
        return out

    def compressed(self, capacity: int) -> Reference:
        """At most ``capacity`` rows per column: consecutive rows pooled into groups of about
        equal count (rows are never split). O(rows)."""
        lows, highs, counts = [], [], []
        for lo, hi, n in zip(self.lows, self.highs, self.counts, strict=True):
            if lo.shape[0] <= capacity:
                lows.append(lo)
                highs.append(hi)
                counts.append(n)
                continue
            cum = np.cumsum(n)
            group = np.minimum((cum - n) * capacity // max(cum[-1], 1.0), capacity - 1).astype(np.int64)
            starts = np.flatnonzero(np.concatenate([[True], group[1:] != group[:-1]]))
            ends = np.concatenate([starts[1:], [lo.shape[0]]]) - 1
            lows.append(lo[starts])
            highs.append(hi[ends])
            counts.append(np.add.reduceat(n, starts))
        return Reference(self.columns, self.bins, self.edges, self.hist, tuple(lows), tuple(highs),
                         tuple(counts), self.classes)


def _frozen(a: np.ndarray) -> np.ndarray:
    a = np.ascontiguousarray(a, dtype=np.float64)
    a.flags.writeable = False
    return a


def _from_scores(scores: np.ndarray, bins: int) -> Reference:
    columns = None if scores.ndim == 1 else int(scores.shape[1])
    cols = scores.reshape(scores.shape[0], 1 if columns is None else columns)
    if cols.shape[0] == 0:
        raise ValueError("reference: needs at least one score, got an empty array")
    q = np.linspace(0.0, 1.0, bins + 1)
    edges = np.stack([np.quantile(cols[:, k], q) for k in range(cols.shape[1])])
    hist = np.stack([bin_counts(edges[k], np.ascontiguousarray(cols[:, k]), None)
                     for k in range(cols.shape[1])])
    lows, counts = [], []
    for k in range(cols.shape[1]):
        v, n = np.unique(cols[:, k], return_counts=True)
        lows.append(_frozen(v))
        counts.append(_frozen(n))
    classes = (np.bincount(np.argmax(cols, axis=1), minlength=columns).astype(np.float64)
               if columns is not None else np.zeros(0))
    return Reference(columns, bins, _frozen(edges), _frozen(hist), tuple(lows), tuple(lows), tuple(counts),
                     _frozen(classes))


def _numbers(value: Any, name: str, shape: tuple[int, ...] | None = None) -> np.ndarray:
    try:
        a = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"reference: {name!r} must be numbers") from None
    if shape is not None and a.shape != shape:
        raise ValueError(f"reference: {name!r} has shape {a.shape}, expected {shape}")
    if a.size and not np.isfinite(a).all():
        raise ValueError(f"reference: {name!r} must be finite")
    return a


def _check_totals(hist: np.ndarray, counts: list[np.ndarray], classes: np.ndarray) -> None:
    """The reference is unweighted: every count is a whole number, and each column's bin counts,
    its rows' counts and (C columns) the predicted-class counts all total the same number of
    reference rows. Raises ``ValueError`` naming the first disagreement. O(rows)."""
    for name, a in [("hist", hist), ("counts", np.concatenate(counts)), ("classes", classes)]:
        frac = a != np.floor(a)
        if frac.any():
            raise ValueError(f"reference: {name!r} must be whole counts; first invalid value "
                             f"{float(a.reshape(-1)[np.flatnonzero(frac.reshape(-1))[0]])!r}")
    rows = float(hist[0].sum())
    for c in range(hist.shape[0]):
        if float(hist[c].sum()) != rows or float(counts[c].sum()) != rows:
            raise ValueError(f"reference: column {c} holds {float(hist[c].sum())!r} scores in 'hist' and "
                             f"{float(counts[c].sum())!r} in 'counts', expected {rows!r} (column 0's rows)")
    if classes.size and float(classes.sum()) != rows:
        raise ValueError(f"reference: 'classes' counts {float(classes.sum())!r} rows, 'hist' {rows!r}")


def _from_config(cfg: Mapping[str, Any], bins: int) -> Reference:
    """A reference from its JSON-able form (untrusted: every invariant is checked)."""
    known = {"columns", "edges", "hist", "lows", "highs", "counts", "classes"}
    extra = sorted(set(cfg) - known)
    if extra:
        raise ValueError(f"reference: unexpected entries {extra}")
    columns = cfg.get("columns")
    if columns is not None and (isinstance(columns, bool) or not isinstance(columns, int) or columns < 2):
        raise ValueError(f"reference: 'columns' must be None or an int >= 2, got {columns!r}")
    k = 1 if columns is None else columns
    edges = _numbers(cfg.get("edges"), "edges")
    if edges.ndim != 2 or edges.shape[0] != k or edges.shape[1] < 2:
        raise ValueError(f"reference: 'edges' has shape {edges.shape}, expected ({k}, bins + 1)")
    if edges.shape[1] - 1 != bins:
        raise ValueError(f"bins: {bins} does not match the reference's {edges.shape[1] - 1} bins")
    if (np.diff(edges, axis=1) < 0).any():
        raise ValueError("reference: 'edges' must be non-decreasing")
    hist = _numbers(cfg.get("hist"), "hist", (k, bins))
    if (hist < 0).any() or (hist.sum(axis=1) <= 0).any():
        raise ValueError("reference: 'hist' must be counts >= 0 with a positive total per column")
    raw_rows: dict[str, Any] = {name: cfg.get(name) for name in ("lows", "counts", "highs")}
    for name in ("lows", "counts"):
        if not isinstance(raw_rows[name], list) or len(raw_rows[name]) != k:
            raise ValueError(f"reference: {name!r} must be a list of {k} lists")
    highs_given = raw_rows["highs"] is not None
    if highs_given and (not isinstance(raw_rows["highs"], list) or len(raw_rows["highs"]) != k):
        raise ValueError(f"reference: 'highs' must be a list of {k} lists")
    lows, highs, counts = [], [], []
    for c in range(k):
        lo = _numbers(raw_rows["lows"][c], "lows")
        n = _numbers(raw_rows["counts"][c], "counts", lo.shape)
        hi = _numbers(raw_rows["highs"][c], "highs", lo.shape) if highs_given else lo
        if lo.ndim != 1 or lo.shape[0] == 0:
            raise ValueError("reference: every column needs at least one row in 'lows'")
        if (hi < lo).any() or (lo[1:] < hi[:-1]).any() or (lo[1:] <= lo[:-1]).any():
            raise ValueError("reference: rows must be increasing, disjoint intervals (lows <= highs)")
        if (n <= 0).any():
            raise ValueError("reference: 'counts' must be > 0")
        lows.append(_frozen(lo))
        highs.append(_frozen(hi))
        counts.append(_frozen(n))
    classes = np.zeros(0)
    if columns is not None:
        classes = _numbers(cfg.get("classes"), "classes", (columns,))
        if (classes < 0).any() or classes.sum() <= 0:
            raise ValueError("reference: 'classes' must be counts >= 0 with a positive total")
    elif cfg.get("classes") is not None:
        raise ValueError("reference: 'classes' is only for scores of shape (n, C)")
    _check_totals(hist, counts, classes)
    return Reference(columns, bins, _frozen(edges), _frozen(hist), tuple(lows), tuple(highs), tuple(counts),
                     _frozen(classes))


def reference_from(value: Any, bins: int) -> Reference:
    """The reference of a ``Drift(reference, bins=...)``: an array of scores ((n,) or (n, C)),
    the ``reference`` entry of a Drift's configuration (``Drift.fit_reference``), a Drift's
    state dict, or a Drift (its reference). O(n log n) for an array."""
    if hasattr(value, "reference_config") and callable(value.reference_config):
        value = value.reference_config()
    if isinstance(value, Mapping):
        if "config" in value and isinstance(value.get("config"), Mapping):  # a Drift's state dict
            if value.get("class") != "Drift":
                raise ValueError(f"reference: a state dict of a Drift, got one of {value.get('class')!r}")
            value = value["config"].get("reference")
            if not isinstance(value, Mapping):
                raise ValueError("reference: the state dict holds no reference")
        return _from_config(value, bins)
    s = as_numpy(value, "reference")
    if s.ndim == 2 and s.shape[1] == 1:
        raise ValueError("reference: scores of shape (n, 1): pass a 1-D array (one score per row)")
    if s.ndim not in (1, 2):
        raise ValueError(f"reference: expected scores of shape (n,) or (n, C), got shape {s.shape}")
    return _from_scores(check_score_batch(s, None if s.ndim == 1 else int(s.shape[1]), "reference"), bins)
