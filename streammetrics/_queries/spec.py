"""A retrieval measure's identity and per-query evaluation: :class:`Spec`.

A :class:`~streammetrics._queries.state.QueryState` keeps running sums per spec; the spec says what
is summed (the measure and its options), which range a per-query value lies in (to refuse
stored numbers no stream could produce) and how the per-query values are read off a ranked batch
(:mod:`streammetrics._queries.kernels`). Definitions: see docs/definitions/retrieval.md.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np

from streammetrics._core.validation import first_bad

from . import kernels as query_kernels

#: Relative slack of the stored-range checks (float rounding of sums).
STORED_RTOL = 1e-9


@dataclass(frozen=True)
class Spec:
    """One measure's identity inside a :class:`QueryState` (what is summed per query)."""

    kind: str
    k: int | None = None
    rel_level: float = 1.0
    gain: str = "linear"
    ties: str = "first"
    denominator: str = "R"
    levels: tuple[float, ...] = ()
    rel_max: float | None = None
    interpolation: str | None = None
    per_query: bool = False
    #: A query without relevant documents (FallOutAtK: without non-relevant ones): ``None`` scores
    #: it as the measure defines it (0, torchmetrics' ``"neg"``), ``"pos"`` 1, ``"skip"`` leaves
    #: it out of the mean, ``"error"`` refuses the batch (torchmetrics' ``empty_target_action``).
    empty: str | None = None
    #: P@k of a query of L < k documents divides by L (torchmetrics' ``adaptive_k``).
    adaptive: bool = False
    #: Rows whose relevance equals it are dropped before ranking (torchmetrics' ``ignore_index``);
    #: every spec of one query state has the same (:func:`ignored_rows_dropped`).
    ignore_index: int | None = None
    #: AUROCAtK: the standardised partial AUC up to this false positive rate (torchmetrics').
    max_fpr: float | None = None

    @property
    def width(self) -> int:
        if self.kind == "set":
            return 5
        if self.kind == "iprec":
            return len(self.levels)
        if self.kind == "prcurve":  # P@1..P@k, then R@1..R@k
            assert self.k is not None
            return 2 * self.k
        return 1

    @property
    def name(self) -> str:
        d = {k: v for k, v in asdict(self).items() if v not in (None, (), False) and k != "kind"}
        body = ",".join(f"{k}={v}" for k, v in d.items())
        return f"{self.kind}({body})"

    def value_range(self) -> tuple[np.ndarray, np.ndarray]:
        """(lowest, highest) possible per-query value of every column, each shape (width,).

        Fractions (P@k, R@k, R-precision, precision at recall, AP, RR, nDCG, interpolated
        precision, system efficiency, set precision/recall) lie in [0, 1]; gains are >= 0 (CG is
        at most k * rel_max when normalised, whose grades above rel_max are refused; DCG with
        linear or exponential gains is unbounded); set counts are >= 0. No measure is undefined
        (nan) for a query: empty denominators give 0.
        """
        lo = np.zeros(self.width)
        if self.kind == "set":
            return lo, np.array([1.0, 1.0, np.inf, np.inf, np.inf])
        if self.kind == "dcg":
            return lo, np.full(self.width, np.inf)
        if self.kind == "cg":
            assert self.k is not None
            top = np.inf if self.rel_max is None else self.k * max(self.rel_max, 0.0)
            return lo, np.full(self.width, top)
        return lo, np.ones(self.width)

    def check_block(self, x: np.ndarray, total: float | None, what: str, rtol: float = STORED_RTOL) -> None:
        """Refuse untrusted stored numbers no stream of queries could have produced.

        ``total=None``: ``x`` are per-query values, shape (n, width), each within
        :meth:`value_range`. Otherwise ``x`` are sums over queries of total weight ``total`` (the
        query count, or a decayed mass), within ``total`` times the range. ``rtol`` (relative to
        the bound, at least 1) absorbs float rounding. Set measures also need relevant retrieved
        <= retrieved and <= relevant, and per query whole counts. ValueError names ``what`` and
        the first offending index and value. O(x.size).
        """
        lo, hi = self.value_range()
        scale = 1.0 if total is None else float(total)
        finite_hi = np.where(np.isfinite(hi), hi, 0.0)
        tol = rtol * np.maximum(finite_hi, 1.0) * max(scale, 1.0)
        with np.errstate(invalid="ignore"):  # an unbounded range times no weight: no bound (NaN)
            bad = (x < lo * scale - tol) | (x > hi * scale + tol)
        if bad.any():
            idx = first_bad(bad)
            col = idx if isinstance(idx, int) else idx[-1]
            raise ValueError(
                f"state: {what}[{idx}] = {float(x[idx])!r} is outside the range of {self.name} "
                f"([{float(lo[col] * scale)!r}, {float(hi[col] * scale)!r}] for weight {scale!r})"
            )
        if self.kind != "set" or x.shape[-1] != 5:
            return
        hits, ret, rel = x[..., 2], x[..., 3], x[..., 4]
        slack = rtol * np.maximum(np.maximum(ret, rel), 1.0)
        bad = (hits > ret + slack) | (hits > rel + slack)
        if total is None:
            bad |= (x[:, 2:] != np.floor(x[:, 2:])).any(axis=1)
        if np.any(bad):
            if total is None:
                i = first_bad(bad)
                where, shown = f"{what}[{i}]", x[i].tolist()
            else:
                where, shown = what, x.tolist()
            raise ValueError(
                f"state: {where} = {shown}: set counts need whole numbers with relevant "
                "retrieved <= retrieved and <= relevant"
            )

    def empty_queries(self, rq: query_kernels.RankedQueries) -> np.ndarray:
        """Which queries are empty (bool, (queries,)): no relevant document (R = 0; nDCG: no
        positive grade, IDCG = 0), for FallOutAtK no non-relevant document in the list. O(n)."""
        if self.kind == "fallout":
            return query_kernels.non_relevant_total(rq, self.rel_level) == 0  # type: ignore[no-any-return]
        if self.kind == "ndcg":
            return rq.ideal_dcg(self.k, self.gain) == 0  # type: ignore[no-any-return]
        return rq.R(self.rel_level) == 0  # type: ignore[no-any-return]

    def evaluate_kept(self, rq: query_kernels.RankedQueries) -> np.ndarray:
        """:meth:`evaluate` with the ``empty`` action applied: empty queries scored 1
        (``"pos"``), left out (``"skip"``: fewer rows) or refused (``"error"``: a ValueError
        naming the first empty query). O(n)."""
        v = self.evaluate(rq)
        if self.empty is None:
            return v
        empty = self.empty_queries(rq)
        if not empty.any():
            return v
        if self.empty == "error":
            i = first_bad(empty)
            assert isinstance(i, int)
            what = "non-relevant" if self.kind == "fallout" else "relevant"
            raise ValueError(f"relevance: {rq._where(i)} has no {what} document "
                             f"(empty_target_action='error')")
        if self.empty == "pos":
            v = v.copy()
            v[empty] = 1.0
            return v
        return v[~empty]

    def evaluate(self, rq: query_kernels.RankedQueries) -> np.ndarray:
        """Per-query values, shape (queries, width); a value beyond ``query_kernels.MAX_QUERY_VALUE`` (a
        large exponential gain) or not finite is a ValueError."""
        with np.errstate(over="ignore", invalid="ignore"):
            v = self._evaluate(rq)
        if not (np.abs(v) <= query_kernels.MAX_QUERY_VALUE).all():  # NaN too
            q = first_bad(~(np.abs(v) <= query_kernels.MAX_QUERY_VALUE).all(axis=1))
            assert isinstance(q, int)
            raise ValueError(f"relevance: {self.name} of query {q + rq.offset} is beyond 2**256, the bound "
                             "that keeps sums over queries finite (grades too large)")
        return v

    def _evaluate(self, rq: query_kernels.RankedQueries) -> np.ndarray:
        kind = self.kind
        if kind == "p":
            assert self.k is not None
            v = query_kernels.precision_at_k(rq, self.k, self.rel_level, self.ties, self.adaptive)
        elif kind == "r":
            assert self.k is not None
            v = query_kernels.recall_at_k(rq, self.k, self.rel_level, self.ties)
        elif kind == "f1":
            assert self.k is not None
            v = query_kernels.f1_at_k(rq, self.k, self.rel_level, self.ties)
        elif kind == "rprec":
            v = query_kernels.r_precision(rq, self.rel_level, self.ties)
        elif kind == "p_at_r":
            v = query_kernels.precision_at_recall(rq, self.levels[0], self.rel_level)
        elif kind == "ap":
            v = query_kernels.average_precision(rq, self.k, self.rel_level, self.denominator)
        elif kind == "rr":
            v = query_kernels.reciprocal_rank(rq, self.k, self.rel_level)
        elif kind == "cg":
            assert self.k is not None
            if self.rel_max is not None:
                for g in rq.groups:
                    if g.grades.size and g.grades.max() > self.rel_max:
                        raise ValueError(
                            f"relevance: grade {g.grades.max()!r} exceeds rel_max={self.rel_max}"
                        )
            v = query_kernels.cumulative_gain(rq, self.k, self.ties)
        elif kind == "dcg":
            v = query_kernels.dcg(rq, self.k, self.gain, self.ties)
        elif kind == "ndcg":
            v = query_kernels.ndcg(rq, self.k, self.gain, self.ties)
        elif kind == "iprec":
            return query_kernels.interpolated_precision(
                rq, self.levels, self.rel_level, self.interpolation or "textbook"
            )
        elif kind == "hit":
            v = query_kernels.hit_rate(rq, self.k, self.rel_level)
        elif kind == "fallout":
            v = query_kernels.fall_out(rq, self.k, self.rel_level)
        elif kind == "auroc":
            v = query_kernels.auroc_at_k(rq, self.k, self.rel_level, self.max_fpr)
        elif kind == "eff":
            v = query_kernels.system_efficiency(rq, self.rel_level)
        elif kind == "set":
            return query_kernels.set_counts(rq, self.rel_level)
        elif kind == "prcurve":
            assert self.k is not None
            return query_kernels.precision_recall_curve(rq, self.k, self.rel_level, self.ties, self.adaptive)
        else:  # pragma: no cover - specs are built by the classes below
            raise AssertionError(kind)
        return v[:, None]
