"""trec_eval's common measures over a block of queries at once (the fast path of ``streammetrics trec``).

For the measures of :data:`FAST` (trec_eval's ``official`` set, ``recall``, ``success``) a block
of complete queries (:class:`.runfile.Block`) is judged, ranked and evaluated with numpy over
``(queries, documents)`` matrices, one matrix per distinct ranking length, instead of one Python
call per query and measure. The arithmetic is the per-query kernel's
(:mod:`streammetrics._queries.per_query` with ``rounding="trec_eval"``, as :mod:`._kernels` reads it), in the
same order: every sum is a row-wise ``cumsum`` (left to right, as trec_eval's loops; zeros added
where the kernel skips a term), so the values are the kernels' to the last bit. Queries whose
ranking needs document ids (tied scores) or that retrieve a document twice are left to the
per-query path, which breaks the ties and reports the duplicate.

Cost per block of n rows: O(n log n) to rank, O(n) numpy work per measure; one Python call per
query only to look its documents up in the judgments.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from streammetrics._core.docstrings import filled
from streammetrics._queries.per_query import Ranked

from ._kernels import NONPOOL, UNJUDGED, gm_log
from ._measures import Options, Selected
from .compactqrels import MISSING, CompactQrels
from .runfile import Block, QueryLines

__all__ = ["FAST", "fast_path", "block_values", "split_row"]

FAST = frozenset({"runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref",
                  "recip_rank", "iprec_at_recall", "P", "recall", "success"})  # fmt: skip


@filled
def fast_path(selected: Sequence[Selected], opts: Options, rel_level: float, max_docs: int | None,
              judged_only: bool, rel_format: str) -> bool:  # fmt: skip
    """True if every selected measure (and option) is computed by :func:`block_values`.

    Parameters
    ----------
    selected : sequence of Selected
        The measures asked for (as :func:`.irnames.select` returns them).
    {trec: opts, rel_level, max_docs}
    judged_only : bool
        Whether unjudged documents are dropped (``-J``).
    rel_format : str
        The judgment format (``-R``: ``"qrels"``, ``"qrels_jg"``, ``"prefs"``, ...).

    Returns
    -------
    bool
        True if :func:`block_values` gives every value asked for.

    Examples
    --------
    >>> from streammetrics.trec.batched import fast_path
    >>> from streammetrics.trec.evaluate import Options
    >>> from streammetrics.trec.irnames import select
    >>> fast_path(select(["map", "P.5"]), Options(), 1, None, False, "qrels")
    True
    >>> fast_path(select(["ndcg"]), Options(), 1, None, False, "qrels")
    False
    """
    return (rel_format == "qrels" and not judged_only and rel_level > 0 and not opts.fused
            and (max_docs is None or max_docs >= 1)
            and all(s.measure.name in FAST and s.level is None and not s.judged_only
                    for s in selected))  # fmt: skip


@filled
def block_values(
    block: Block,
    judgments: CompactQrels,
    selected: Sequence[Selected],
    opts: Options,
    rel_level: float,
    max_docs: int | None,
) -> tuple[list[str], np.ndarray, list[tuple[str, QueryLines]]]:
    """The block's judged queries, their values (one row per query: the selected measures'
    values in order, :func:`split_row` splits it), and the queries left to the per-query path.

    Parameters
    ----------
    block : Block
        Complete queries of the run.
    judgments : CompactQrels
        The judgments.
    selected : sequence of Selected
        The measures asked for; :func:`fast_path` must be true for them.
    {trec: opts, rel_level, max_docs}

    Returns
    -------
    qids : list of str
        The judged queries evaluated here, in block order.
    values : numpy.ndarray of shape (len(qids), values per query)
        Their values.
    slow : list of (str, QueryLines)
        The judged queries left to the per-query path (tied scores, a document retrieved twice).

    Examples
    --------
    >>> import numpy as np
    >>> from streammetrics.trec.batched import block_values
    >>> from streammetrics.trec.compactqrels import CompactQrels
    >>> from streammetrics.trec.evaluate import Options
    >>> from streammetrics.trec.irnames import select
    >>> from streammetrics.trec.runfile import Block
    >>> block = Block(["q1", "q2"], np.array([0, 2, 3]), [b"d1", b"d2", b"d1"],
    ...               np.array([2.0, 1.0, 0.5]), np.array([1, 2, 3]))
    >>> qrels = CompactQrels.from_dict({"q1": {"d1": 0, "d2": 1}, "q2": {"d1": 1}})
    >>> qids, values, slow = block_values(block, qrels, select(["map", "P.1,2"]), Options(), 1, None)
    >>> qids, values.tolist(), slow
    (['q1', 'q2'], [[0.5, 0.0, 0.5], [1.0, 1.0, 0.5]], [])
    """
    b = block.bounds
    lengths = np.diff(b)
    nq = len(block.qids)
    qnum = np.fromiter((judgments.index.get(q, -1) for q in block.qids), dtype=np.int64, count=nq)
    judged = qnum >= 0
    scores = block.scores
    if opts.version < 10:
        with np.errstate(over="ignore"):
            scores = scores.astype(np.float32).astype(np.float64)
    keys = block.hashes
    if keys is None:
        keys = np.fromiter(map(hash, block.docs), dtype=np.int64, count=len(block.docs))
    slow = np.zeros(nq, dtype=bool)
    slow[judged] = judgments.ambiguous[qnum[judged]]
    ranked: list[tuple[np.ndarray, np.ndarray]] = []  # per ranking length: its queries, their ranked rows
    for n in np.unique(lengths).tolist():
        group = np.flatnonzero(lengths == n)
        idx = b[group][:, None] + np.arange(n)
        s = scores[idx]
        order = np.argsort(-s, axis=1, kind="stable")
        by_score = np.take_along_axis(s, order, axis=1)
        by_key = np.sort(keys[idx], axis=1)  # equal hashes: maybe a duplicate document
        slow[group] |= ((by_score[:, 1:] == by_score[:, :-1]) | (by_key[:, 1:] == by_key[:, :-1])).any(axis=1)
        ranked.append((group, np.take_along_axis(idx, order, axis=1)))
    slow_out = [(block.qids[i], QueryLines([d.decode("utf-8") for d in block.docs[b[i]:b[i + 1]]],
                                           block.scores[b[i]:b[i + 1]], block.lines[b[i]:b[i + 1]]))
                for i in np.flatnonzero(slow & judged).tolist()]  # fmt: skip
    is_fast = judged & ~slow
    fast = np.flatnonzero(is_fast)
    width = [len(s.names) for s in selected if s.measure.name != "runid"]
    if not len(fast):
        return [], np.zeros((0, sum(width))), slow_out
    row_q = np.where(np.repeat(is_fast, lengths), np.repeat(qnum, lengths), -1)
    rels = judgments.lookup(row_q, block.docs, keys)
    rels = np.where(rels == MISSING, NONPOOL, np.where(rels < 0, UNJUDGED, rels))
    counts = judgments.counts(rel_level)[qnum]
    out_row = np.cumsum(is_fast) - 1
    values = np.zeros((len(fast), sum(width)))
    for group, rows in ranked:
        sub = is_fast[group]
        if not sub.any():
            continue
        q = group[sub]
        n = rows.shape[1] if max_docs is None else min(rows.shape[1], max_docs)
        values[out_row[q]] = _matrix_values(rels[rows[sub, :n]], counts[q, 0], counts[q, 1], selected, opts,
                                            rel_level)  # fmt: skip
    return [block.qids[j] for j in fast.tolist()], values, slow_out


def split_row(row: np.ndarray, selected: Sequence[Selected]) -> list[list[Any]]:
    """A row of :func:`block_values` as the per-query evaluator's values (a list per measure).

    Parameters
    ----------
    row : numpy.ndarray of shape (values per query,)
        One query's values.
    selected : sequence of Selected
        The measures the row holds, in order (``runid`` holds no value here).

    Returns
    -------
    list of list
        The values of each selected measure.

    Examples
    --------
    >>> import numpy as np
    >>> from streammetrics.trec.batched import split_row
    >>> from streammetrics.trec.irnames import select
    >>> split_row(np.array([0.5, 0.0, 0.5]), select(["map", "P.1,2"]))
    [[0.5], [0.0, 0.5]]
    """
    flat = row.tolist()
    out: list[list[Any]] = []
    at = 0
    for s in selected:
        n = 0 if s.measure.name == "runid" else len(s.names)
        out.append(flat[at : at + n])
        at += n
    return out


def _matrix_values(m: np.ndarray, R: np.ndarray, nonrel: np.ndarray, selected: Sequence[Selected],
                   opts: Options, level: float) -> np.ndarray:  # fmt: skip
    """Per row of ``m`` (ranked judgments, (q, n), n >= 1) the selected measures' values: the
    per-query kernel (:class:`~streammetrics._queries.per_query.Ranked`) with trec_eval's rounding,
    as the per-query path reads it one query at a time."""
    q, n = m.shape
    is_rel = m >= level
    ranked = Ranked(is_rel, "trec_eval")
    nrr = ranked.cum[:, -1]
    Rf = R.astype(np.float64)
    cache: dict[str, np.ndarray] = {}

    def ap() -> np.ndarray:
        if "ap" not in cache:
            cache["ap"] = ranked.average_precision(Rf)
        return cache["ap"]

    cols: list[np.ndarray] = []
    for s in selected:
        name = s.measure.name
        if name == "runid":
            continue
        if name == "num_q":
            cols.append(np.ones((q, 1)))
        elif name == "num_ret":
            cols.append(np.full((q, 1), float(n)))
        elif name == "num_rel":
            cols.append(Rf[:, None])
        elif name == "num_rel_ret":
            cols.append(nrr[:, None].astype(np.float64))
        elif name == "map":
            cols.append(ap()[:, None])
        elif name == "gm_map":
            cols.append(np.array([gm_log(v) for v in ap().tolist()])[:, None])
        elif name == "Rprec":
            cols.append(ranked.r_precision(Rf)[:, None])
        elif name == "bpref":
            cols.append(_bpref(m, is_rel, R, nonrel, level)[:, None])
        elif name == "recip_rank":
            cols.append(ranked.reciprocal_rank()[:, None])
        elif name == "P":
            cols.append(ranked.precision_at(s.params))
        elif name == "recall":
            cols.append(ranked.recall_at(s.params, Rf))
        elif name == "success":
            cols.append(ranked.success_at(s.params))
        elif name == "iprec_at_recall":
            cols.append(_iprec(ranked.precision, ranked.cum, nrr, R, s.params, opts.version))
        else:  # pragma: no cover - fast_path admits FAST only
            raise AssertionError(name)
    return np.hstack(cols) if cols else np.zeros((q, 0))


def _bpref(m: np.ndarray, is_rel: np.ndarray, R: np.ndarray, nonrel: np.ndarray, level: float) -> np.ndarray:
    judged_nonrel = (m >= 0) & (m < level)
    before = np.cumsum(judged_nonrel, axis=1)
    denom = np.minimum(nonrel, R).astype(np.float64)[:, None]
    with np.errstate(divide="ignore", invalid="ignore"):
        part = np.where(before > 0, 1.0 - np.minimum(before, R[:, None]) / denom, 1.0)
    s = np.cumsum(np.where(is_rel, part, 0.0), axis=1)[:, -1]
    return np.where(R > 0, s / np.maximum(R, 1), s)


def _iprec(prec: np.ndarray, cum: np.ndarray, nrr: np.ndarray, R: np.ndarray, fractions: Sequence[float],
           version: int) -> np.ndarray:  # fmt: skip
    """iprec_at_recall: the interpolated precision at the c-th relevant document (c from the
    recall-cutoff rule), 0 when fewer than c are retrieved, at the first one for c = 0."""
    q = prec.shape[0]
    best = np.maximum.accumulate(prec[:, ::-1], axis=1)[:, ::-1]  # max precision at this rank or below
    rows = np.arange(q)
    out = np.zeros((q, len(fractions)))
    for j, c in enumerate(fractions):
        x = c * R.astype(np.float64)
        if version >= 10:
            f = np.floor(x)
            cut = (f + (x - f >= 0.5)).astype(np.int64)
        else:
            cut = (x + 0.9).astype(np.int64)
        target = np.maximum(cut, 1)
        pos = np.argmax(cum >= target[:, None], axis=1)
        value = best[rows, pos]
        out[:, j] = np.where((cut <= nrr) & (nrr > 0), value, 0.0)
    return out
