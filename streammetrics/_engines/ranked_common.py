"""What Spark's and Ray's ``evaluate_ranked`` share around the steps of :mod:`.ranked`.

The request (the checked metrics, the plan of the exact ``AUROC`` twin each partition feeds,
the number of ranges or the given edges, whether curves are wanted), the sorted pieces and the
range summaries as bytes (Spark ships them in Arrow rows; a flat little-endian layout of float64
arrays, read back with its sizes checked), and the values from the combined ranges. The steps
themselves (runs, sample, edges, split, totals, merge, summary, combine) are those of
:mod:`streammetrics._engines.ranked`; the argument checks are those of
:mod:`streammetrics._engines.dask_ranked`, so the three engines accept and refuse alike.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from streammetrics._core.params import check_param
from streammetrics._scores.thresholds import ThresholdCounts

from . import ap_envelope, label_codes
from . import ranked as ranked_engine
from .dask_ranked import CHUNK_ROWS_PARAM, SAMPLE_SIZE, check_names, check_ranges
from .messages import brief
from .plan import Plan, Shape, normalise
from .request import check_nulls

#: The per-range summaries (increasing ranges) and the totals (P, N) an engine returns.
Summaries = tuple[list[ranked_engine.RangeSummary], tuple[float, float]]


@dataclass(frozen=True)
class RankedRequest:
    """A checked ``evaluate_ranked`` call: the template and shape of ``metrics``, the twin's
    plan, R, the given edges (None: sampled), the sample size, whether curves are wanted and
    the rows read, validated and sorted at a time."""

    template: Any
    shape: Shape
    plan: Plan
    n_ranges: int
    edges: np.ndarray | None
    sample_size: int
    curves: bool
    chunk_rows: int

    @property
    def envelope(self) -> bool:
        """Whether an AP member reads the interpolated or 11-point AP: the range summaries carry
        their envelopes (:func:`~streammetrics._engines.ranked.needs_envelope`). O(members)."""
        return ranked_engine.needs_envelope(m._config() for _, m in self.template.items())

    @property
    def max_fprs(self) -> tuple[float, ...]:
        """The readouts each range computes from its offset curve points: the AUROC members'
        distinct ``max_fpr`` below 1, then the KS slot with a ``KSStatistic``
        (:func:`~streammetrics._engines.ranked.readouts`). O(members)."""
        return ranked_engine.readouts((type(m).__name__, m._config()) for _, m in self.template.items())


def request(metrics: Any, *, label: str, score: str, weight: str | None, ranges: int | Sequence[float],
            sample_size: int, chunk_rows: int, available: Sequence[str],
            nulls: str = "error") -> RankedRequest:
    """Check the arguments as :func:`streammetrics.dask.evaluate_ranked` does (the same errors,
    in the same order; a column given as anything but its name -- a Spark ``Column`` expression
    -- is refused by name); ``available``: the frame's column names; ``nulls``: rows holding a
    null refused (``"error"``) or dropped (``"skip"``) by the tasks."""
    template, shape = normalise(metrics)
    members = dict(template.items())
    ignore = ranked_engine.check_metrics(members, label_codes.LABEL_KEYS)
    labels = ranked_engine.twin_options(m._config() for m in members.values())
    n_ranges, fixed = check_ranges(ranges)
    sample_size = check_param(sample_size, "sample_size", SAMPLE_SIZE)
    chunk_rows = check_param(chunk_rows, "chunk_rows", CHUNK_ROWS_PARAM)
    nulls = check_nulls(nulls)
    check_names(label=label, score=score, weight=weight)
    plan = Plan(config=ranked_engine.runs_config(ignore, labels), family="classification", label=label,
                score=score, weight=weight, nulls=nulls)
    missing = [c for c in plan.columns() if c not in available]
    if missing:
        raise ValueError(f"columns {brief(missing)} are not in the DataFrame (has {brief(list(available))})")
    curves = ranked_engine.wants_curve(members.values())
    return RankedRequest(template, shape, plan, n_ranges, fixed, sample_size, curves, chunk_rows)


def values(req: RankedRequest, summaries: Sequence[ranked_engine.RangeSummary],
           totals: tuple[float, float]) -> Any:
    """The values in the shape of the request's ``metrics`` from the per-range summaries
    (increasing ranges), with the single process's warnings. O(R) plus the curve."""
    res = ranked_engine.combine(summaries, totals, req.max_fprs)
    return req.shape.values(ranked_engine.member_values(req.template.items(), res))


def empty_runs() -> ranked_engine.Runs:
    """The runs of no rows (a range no partition sent a piece to)."""
    return np.zeros(0), None, np.zeros(0), None


def grand(totals: Sequence[tuple[float, float]]) -> tuple[float, float]:
    """(P, N) over all ranges."""
    return float(sum(t[0] for t in totals)), float(sum(t[1] for t in totals))


def chunks(piece: ranked_engine.Runs, size: int) -> list[ranked_engine.Runs]:
    """``piece`` cut into sorted pieces of at most ``size`` scores each (views): what one
    shipped row holds. A piece of no score gives none."""
    nv, nw, pv, pw = piece

    def cut(v: np.ndarray, w: np.ndarray | None, lo: int, hi: int) -> tuple[np.ndarray, np.ndarray | None]:
        return v[lo:hi], None if w is None else w[lo:hi]

    out: list[ranked_engine.Runs] = []
    for lo in range(0, nv.shape[0], size):
        out.append((*cut(nv, nw, lo, lo + size), *cut(pv, pw, 0, 0)))
    for lo in range(0, pv.shape[0], size):
        out.append((*cut(nv, nw, 0, 0), *cut(pv, pw, lo, lo + size)))
    return out


# -- bytes: a header of int64 counts, then the float64 arrays, little-endian ----------------------

def _pack(counts: Sequence[int], floats: Sequence[float], arrays: Sequence[np.ndarray | None]) -> bytes:
    head = struct.pack(f"<{len(counts)}q{len(floats)}d", *counts, *floats)
    body = [np.ascontiguousarray(a, dtype="<f8").tobytes() for a in arrays if a is not None]
    return b"".join([head, *body])


def _unpack(data: bytes, n_counts: int, n_floats: int,
            what: str) -> tuple[tuple[int, ...], tuple[float, ...], int]:
    size = struct.calcsize(f"<{n_counts}q{n_floats}d")
    if len(data) < size:
        raise ValueError(f"{what}: {len(data)} bytes, shorter than its {size}-byte header")
    fields = struct.unpack_from(f"<{n_counts}q{n_floats}d", data)
    return tuple(int(c) for c in fields[:n_counts]), tuple(float(f) for f in fields[n_counts:]), size


def _arrays(data: bytes, at: int, lengths: Sequence[int], what: str) -> list[np.ndarray]:
    if any(n < 0 for n in lengths) or len(data) != at + 8 * sum(lengths):
        raise ValueError(f"{what}: {len(data)} bytes do not hold arrays of lengths {list(lengths)}")
    out = []
    for n in lengths:
        out.append(np.frombuffer(data, dtype="<f8", count=n, offset=at).astype(np.float64, copy=False))
        at += 8 * n
    return out


def piece_to_bytes(piece: ranked_engine.Runs) -> bytes:
    """A piece (sorted negatives and positives, weights or None) as bytes. O(piece)."""
    nv, nw, pv, pw = piece
    return _pack([nv.shape[0], nw is not None, pv.shape[0], pw is not None], [], [nv, nw, pv, pw])


def piece_from_bytes(data: bytes) -> ranked_engine.Runs:
    """Read back :func:`piece_to_bytes` (read-only views of ``data``). O(1) plus a size check."""
    (n_neg, neg_w, n_pos, pos_w), _, at = _unpack(data, 4, 0, "ranked piece")
    lengths = [n_neg, n_neg * neg_w, n_pos, n_pos * pos_w]
    nv, nw, pv, pw = _arrays(data, at, lengths, "ranked piece")
    return nv, nw if neg_w else None, pv, pw if pos_w else None


def summary_to_bytes(s: ranked_engine.RangeSummary) -> bytes:
    """A range's summary as bytes (its curve piece included when it has one, then its AP
    envelope when it has one, then its partial areas). O(curve + envelope)."""
    c, e = s.curve, s.envelope
    n = -1 if c is None else c.thresholds.shape[0]
    m = -1 if e is None else e.values.shape[0]
    x = 0 if e is None else e.exact.shape[0]
    floats = [s.pos, s.neg, s.pairs, s.ap_part] + ([] if c is None else [c.total_pos, c.total_neg])
    arrays = (([] if c is None else [c.thresholds, c.tps, c.fps])
              + ([] if e is None else [e.values, e.masses, e.levels, e.exact])
              + [np.array(s.partial, dtype=np.float64)])
    return _pack([s.n_scores, n, m, x], floats + [0.0] * (6 - len(floats)), arrays)


def summary_from_bytes(data: bytes) -> ranked_engine.RangeSummary:
    """Read back :func:`summary_to_bytes` (the partial areas: the float64 values after the
    curve and the envelope). O(curve + envelope)."""
    counts, (pos, neg, pairs, ap, total_pos, total_neg), at = _unpack(data, 4, 6, "range summary")
    n_scores, n, m, x = counts  # x: the envelope's exact part (weighted 11-point levels)
    levels = 0 if m < 0 else ap_envelope.LEVELS.shape[0]
    lengths = [n] * 3 * (n >= 0) + [m, m, levels, x] * (m >= 0)
    k = max(0, (len(data) - at) // 8 - sum(lengths))
    *got, partial = _arrays(data, at, [*lengths, k], "range summary")
    curve = ThresholdCounts(got[0], got[1], got[2], total_pos, total_neg) if n >= 0 else None
    envelope = ap_envelope.EnvelopePart(got[-4], got[-3], got[-2], got[-1]) if m >= 0 else None
    return ranked_engine.RangeSummary(n_scores, pos, neg, pairs, ap, curve,
                                      tuple(float(a) for a in partial), None, envelope)
