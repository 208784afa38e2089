"""``evaluate_files``: trec_eval's evaluation loop, measure values and output lines.

Queries are evaluated in trec_eval's order (query ids sorted bytewise) and only those present in
both files, unless ``complete`` (``-c``): then every qrels query counts, one missing from the run
scoring as trec_eval's placeholder ranking (trec_eval 10 prints its per-query lines, 9.x does not).
Each query's retrieved documents are ranked by score descending, ties broken by document id
descending (trec_eval's ``comp_sim_docno``); with ``trec_version=9`` scores are first rounded to
float32 (trec_eval 9.x kept them as C ``float``, so scores equal in float32 tie), with 10 they stay
doubles. ``max_docs`` (``-M``) keeps the top documents; a document retrieved twice among them is
an error (as in trec_eval). Summary values: the mean over queries (``gm_map``, ``gm_bpref``: the
geometric mean, ``exp`` of the mean log), sums for the ``num_*`` counts.

The steps: the judgments are read (:func:`.readers.read_judgments`), the run is read once and
evaluated (:func:`evaluate_run`, which :func:`.perquery.per_query_values` shares), the values are
summed and printed. Memory: the judgments, one value per measure and query, and one block of run
lines when each query's lines are contiguous in the run (most runs); from the first query that
reappears on, the rest of the run is grouped by query with an external sort in bounded memory
(``memory_lines`` lines at a time, spilled to temporary files), in the same pass (see
:class:`.runqueries.RunQueries`).
"""

from __future__ import annotations

import math
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import IO, Any

import numpy as np

from . import _kernels as trec_kernels
from ._measures import Options, Selected, check_options, check_trec_version, needs_run_order
from .batched import block_values, fast_path, split_row
from .binread import paused_gc
from .compactqrels import CompactQrels
from .irnames import select
from .preferences import PrefLine, form_prefs_counts, read_prefs
from .readers import PREFS_FORMATS, TrecFormatError, read_judgments, read_zscores
from .runfile import MEMORY_LINES, QueryLines
from .runqueries import RunQueries

MISSING_ZSCORE = -1000000.0
Value = float | str
DEFAULT_MEASURES = ("official",)


def qid_key(q: str) -> bytes:
    """The sort key of a query id in trec_eval's order (bytewise, as C's ``strcmp``).

    Parameters
    ----------
    q : str
        A query id.

    Returns
    -------
    bytes
        ``q`` in UTF-8.

    Examples
    --------
    >>> from streammetrics.trec.evaluate import qid_key
    >>> sorted(["b", "a", "Z", "10", "9"], key=qid_key)
    ['10', '9', 'Z', 'a', 'b']
    """
    return q.encode("utf-8")



def _rel_levels(grades: dict[str, int]) -> np.ndarray:
    g = np.fromiter(grades.values(), dtype=np.int64, count=len(grades))
    g = g[g >= 0]
    return np.bincount(g) if len(g) else np.zeros(0, dtype=np.int64)


BOGUS_DOC = "ceci_nest_pas_un_docno"  # trec_eval's ranking for a query missing from the run (-c)


def _rank_docs(
    path: str, qid: str, q: QueryLines, *, version: int, max_docs: int | None, ties_ascending: bool = False
) -> tuple[list[str], np.ndarray]:
    """A query's retrieved documents in trec_eval's rank order: score descending (float32 scores
    for version 9), then document id descending (``ties_ascending``: ascending, as trec_eval's
    preference measures break ties); the top ``max_docs``; and their scores as ranked. Raises
    TrecFormatError for a document retrieved twice among them, naming the line."""
    scores = np.asarray(q.scores, dtype=np.float64)
    if version < 10:
        with np.errstate(over="ignore"):
            scores = scores.astype(np.float32).astype(np.float64)
    order = np.argsort(-scores, kind="stable")
    ranked = scores[order]
    if len(ranked) > 1 and (ranked[1:] == ranked[:-1]).any():  # ties: break them by document id
        docs = np.array(q.docs)
        order = np.lexsort((docs, -scores)) if ties_ascending else np.lexsort((docs, scores))[::-1]
    if max_docs is not None:
        order = order[: max(max_docs, 0)]
    kept = [q.docs[i] for i in order.tolist()]
    ranked_scores = scores[order]
    if len(set(kept)) != len(kept):
        seen: set[str] = set()
        for i in sorted(order.tolist()):
            if q.docs[i] in seen:
                raise TrecFormatError(
                    f"{path}:{q.lines[i]}: duplicate document {q.docs[i]!r} for query {qid!r}"
                )
            seen.add(q.docs[i])
    return kept, ranked_scores


def _run_order(q: QueryLines, kept: list[str]) -> np.ndarray:
    """Each ranked document's place in the run's own order, as ir_measures reads a run: score
    descending (the scores as read, doubles), ties in line order. O(n log n)."""
    order = np.lexsort((q.lines, -np.asarray(q.scores, dtype=np.float64))).tolist()
    place = {q.docs[i]: r for r, i in enumerate(order)}
    return np.array([place[d] for d in kept], dtype=np.int64)


def _judge(kept: list[str], grades: dict[str, int], judged_only: bool) -> np.ndarray:
    """The judgment of each ranked document: its grade, -1 not in the qrels, -2 a negative grade
    (``judged_only``, -J: unjudged documents dropped)."""
    rels = np.array(
        [(trec_kernels.UNJUDGED if g < 0 else g) if (g := grades.get(d)) is not None else trec_kernels.NONPOOL
         for d in kept],
        dtype=np.int64,
    )
    return rels[rels >= 0] if judged_only else rels


def _zscore(
    qid: str, names: list[str], values: list[float], table: dict[str, dict[str, tuple[float, float]]]
) -> list[float]:
    """trec_eval's -Z: (value - mean) / sd per query and measure; -1000000 when unknown."""
    per_q = table.get(qid)
    if per_q is None:
        return [MISSING_ZSCORE] * len(values)
    out = []
    for n, v in zip(names, values, strict=True):
        ms = per_q.get(n)
        if ms is None:
            out.append(MISSING_ZSCORE)
        elif ms[1]:
            out.append((v - ms[0]) / ms[1])
        else:
            out.append(0.0 if v == ms[0] else MISSING_ZSCORE)
    return out


class _Printer:
    """trec_eval's line formats: ``%-22s\\t%s\\t%6.4f`` (``%ld`` for counts; ``Z`` before the name
    with -Z), ``'...'`` for relstring."""

    def __init__(self, out: IO[str], digits: int, zscore: bool) -> None:
        self.out, self.digits, self.z = out, digits, zscore

    def value(self, name: str, qid: str, value: Value, kind: str) -> None:
        if kind == "string":
            self.out.write(f"{name:<22}\t{qid}\t'{value}'\n")
        elif kind == "runid":
            self.out.write(f"{name:<22}\t{qid}\t{value}\n")
        elif kind == "long" and not self.z:
            self.out.write(f"{name:<22}\t{qid}\t{math.trunc(float(value))}\n")
        else:
            prefix = "Z" if self.z else ""
            self.out.write(f"{prefix}{name:<22}\t{qid}\t{c_float(float(value), self.digits)}\n")


def c_float(value: float, digits: int) -> str:
    """``value`` as C's ``printf("%6.<digits>f")`` prints it: NaN as ``nan`` or, with its sign
    bit set (x86-64's 0/0), ``-nan``, right-aligned in 6 characters.

    Parameters
    ----------
    value : float
        The number to print.
    digits : int
        Digits after the decimal point.

    Returns
    -------
    str
        The printed text, at least 6 characters wide.

    Examples
    --------
    >>> from streammetrics.trec.evaluate import c_float
    >>> c_float(0.25, 4), c_float(-float("nan"), 4)
    ('0.2500', '  -nan')
    """
    if math.isnan(value):
        return f"{'-nan' if math.copysign(1.0, value) < 0 else 'nan':>6}"
    return f"{value:6.{digits}f}"


def _bogus_fixups(sel: Selected, values: list[Value]) -> list[Value]:
    """trec_eval 10's clean-up of the placeholder ranking of a query missing from the run (-c)."""
    out = list(values)
    for i, n in enumerate(sel.names):
        if n in ("num_ret", "utility", "rbp_resid") or n.startswith("unj"):
            out[i] = 0.0
        elif n == "relstring":
            out[i] = ""
    return out


class QueryEvaluator:
    """One query's values of the selected measures (a list per measure), from its run lines or,
    for a query missing from the run (``lines=None``, -c), from trec_eval's placeholder ranking.

    :meth:`values` ranks the query's documents as trec_eval does (score descending, ties by
    document id), judges them and runs each measure's kernel. O(documents) per query and measure.

    Parameters
    ----------
    run_path : str
        The run file, for error messages.
    selected : list of Selected
        The measures (as :func:`.irnames.select` returns them).
    judgments : mapping of str to list of dict of str to int
        The judgments (:func:`read_judgments`).
    prefs : dict of str to list of (str, str, str, float)
        The preference lines per query (:func:`.preferences.read_prefs`; empty unless
        ``rel_format`` is a preference format).
    opts : Options
        The evaluation options (trec_eval version, fused rounding).
    rel_format : str
        trec_eval's ``-R``: ``"qrels"``, ``"qrels_jg"``, ``"prefs"`` or ``"qrels_prefs"``.
    max_docs : int or None
        Documents read per query (``-M``; None: all).
    judged_only : bool
        Rank only judged documents (``-J``).
    rel_level : float
        Minimum grade of a relevant document (``-l``).
    num_docs : int
        The number of documents in the collection (``-N``).

    Examples
    --------
    >>> import numpy as np
    >>> from importlib.resources import files
    >>> from streammetrics.trec.evaluate import Options, QueryEvaluator, read_judgments
    >>> from streammetrics.trec.irnames import select
    >>> from streammetrics.trec.runfile import QueryLines
    >>> qrels = read_judgments(str(files("streammetrics") / "data" / "example.qrels"), "qrels")
    >>> ev = QueryEvaluator("run", select(["map", "P.1"]), qrels, {}, Options(), "qrels",
    ...                     max_docs=None, judged_only=False, rel_level=1, num_docs=0)
    >>> ev.values("q1", QueryLines(["d2", "d1"], np.array([0.9, 0.4]), np.array([1, 2])))
    [[0.5], [0.0]]
    """

    def __init__(
        self,
        run_path: str,
        selected: list[Selected],
        judgments: Mapping[str, list[dict[str, int]]],
        prefs: dict[str, list[PrefLine]],
        opts: Options,
        rel_format: str,
        *,
        max_docs: int | None,
        judged_only: bool,
        rel_level: float,
        num_docs: int,
    ) -> None:
        self.run_path, self.selected, self.judgments, self.prefs = run_path, selected, judgments, prefs
        self.opts, self.rel_format, self.max_docs, self.judged_only = opts, rel_format, max_docs, judged_only
        self.rel_level, self.num_docs = rel_level, num_docs
        self.counts: list[list[int]] = []  # per value, the queries where it is defined (avg "defined")
        # the ranked documents' ids reach the kernels (Compat(ties='qrels'): the qrels' order of ties)
        self._needs_docs = any(s.measure.name == "Compat" for s in selected)
        # each ranked document's place in the run's own order (Accuracy(ties='run'), C/W/L ties='run')
        self._needs_run_order = any(needs_run_order(s) for s in selected)

    def values(self, qid: str, lines: QueryLines | None) -> list[list[Value]]:
        is_prefs = self.rel_format in PREFS_FORMATS
        scores: np.ndarray | None = None
        if lines is None:
            kept = [BOGUS_DOC]
        else:
            kept, scores = _rank_docs(
                self.run_path,
                qid,
                lines,
                version=self.opts.version,
                max_docs=self.max_docs,
                ties_ascending=is_prefs,
            )
        prefs = form_prefs_counts(self.prefs[qid], kept) if is_prefs else None
        run_order = _run_order(lines, kept) if self._needs_run_order and lines is not None else None
        ranked: dict[tuple[float, bool], list[trec_kernels.ResRels]] = {}  # per (relevance level, -J)
        out = []
        for sel in self.selected:
            inputs: Any = prefs
            if not is_prefs:
                level = self.rel_level if sel.level is None else sel.level
                key = (level, self.judged_only or sel.judged_only)
                inputs = ranked.get(key)
                if inputs is None:
                    inputs = ranked[key] = []
                    for g in self.judgments[qid]:
                        rels = _judge(kept, g, False)
                        keep = rels >= 0 if key[1] else slice(None)  # -J: the judged ones
                        docs = kept if not key[1] else [d for d, r in zip(kept, rels.tolist(), strict=True)
                                                        if r >= 0] if self._needs_docs else None  # fmt: skip
                        inputs.append(trec_kernels.ResRels(
                            rels[keep], _rel_levels(g), level=level, num_docs=self.num_docs,
                            scores=None if scores is None else scores[keep], doc_ids=docs, qrels=g,
                            run_order=None if run_order is None else run_order[keep]))
            vals = sel.measure.compute(
                inputs[0] if sel.measure.source == "qrels" else inputs, sel.params, self.opts
            )
            out.append(_bogus_fixups(sel, vals) if lines is None else vals)
        return out


def evaluate_files(
    qrels_path: str,
    run_path: str,
    measures: Sequence[str] = DEFAULT_MEASURES,
    *,
    per_query: bool = False,
    complete: bool = False,
    rel_level: float = 1,
    digits: int = 4,
    out: IO[str] | None = None,
    max_docs: int | None = None,
    judged_only: bool = False,
    num_docs: int = 0,
    summary: bool = True,
    zscores: str | None = None,
    trec_version: int = 9,
    fused_cutoffs: bool = False,
    rel_format: str = "qrels",
    rename: Mapping[str, str] | None = None,
    memory_lines: int = MEMORY_LINES,
) -> dict[str, float | int | str]:
    """Evaluate a run against qrels as trec_eval does; print trec_eval's lines to ``out``.

    Cost: O(run lines) to read and group, then O(documents) per query and measure.

    Parameters
    ----------
    qrels_path, run_path : str
        The judgments (``qid iter docno grade`` lines) and the run (``qid Q0 docno rank score
        runid`` lines).
    measures : sequence of str, default ('official',)
        trec_eval's ``-m``: ``"official"``, ``"all_trec"``, ``"map"``, ``"P.5,10"``, or
        ir_measures names such as ``"nDCG@10"``.
    per_query, complete : bool, default False
        trec_eval's ``-q`` (a line per query too) and ``-c`` (queries of the qrels that the run
        lacks score as empty rankings).
    rel_level : float, default 1
        Minimum grade of a relevant document (``-l``).
    digits : int, default 4
        Decimals of the printed values.
    out : text stream, optional
        Where the lines go (default: standard output).
    max_docs : int, optional
        Documents read per query (``-M``).
    judged_only : bool, default False
        Rank only judged documents (``-J``).
    num_docs : int, default 0
        The number of documents in the collection (``-N``).
    summary : bool, default True
        ``False``: no summary lines (``-n``).
    zscores : str, optional
        A file of per-measure means and deviations (``-Z``).
    trec_version : {9, 10}, default 9
        9: float32 scores and recall cutoffs ``(long)(c*R + 0.9)``; 10: double scores,
        ``lround(c*R)``, per-query lines of ``-c`` placeholder queries.
    fused_cutoffs : bool, default False
        Compute 9's ``c*R + 0.9`` with one rounding (a fused multiply-add, as trec_eval 9.x builds
        for arm64 and macOS do; pytrec_eval's x86-64 build rounds twice: ``0.3*77 + 0.9`` is
        23.999... there, 24 fused).
    rel_format : {'qrels', 'qrels_jg', 'prefs', 'qrels_prefs'}, default 'qrels'
        trec_eval's ``-R``: judgments, judgment groups (see :mod:`.judgment_groups`) or
        preferences (see :mod:`.preferences`).
    rename : mapping, optional
        Print (and return) values under other names (ir_measures', see :mod:`.irnames`).
    memory_lines : int
        The run lines held at once when a run's queries are not contiguous (they are then
        grouped by an external sort, :class:`.runfile.SpilledRun`).

    Returns
    -------
    dict
        The summary values by printed name.

    Examples
    --------
    >>> from importlib.resources import files
    >>> data = files("streammetrics") / "data"  # example files of the package
    >>> import io
    >>> from streammetrics.trec import evaluate_files
    >>> evaluate_files(str(data / "example.qrels"), str(data / "example.run"), ["map"], out=io.StringIO())
    {'map': 0.75}
    """
    trec_version = check_trec_version(trec_version)
    rel_level, max_docs, num_docs, digits = check_options(rel_level, max_docs, num_docs, digits)
    with paused_gc():
        return _evaluate_files(qrels_path, run_path, measures, per_query=per_query, complete=complete,
                               rel_level=rel_level, digits=digits, out=out, max_docs=max_docs,
                               judged_only=judged_only, num_docs=num_docs, summary=summary, zscores=zscores,
                               trec_version=trec_version, fused_cutoffs=fused_cutoffs, rel_format=rel_format,
                               rename=rename, memory_lines=memory_lines)  # fmt: skip


def _evaluate_files(
    qrels_path: str,
    run_path: str,
    measures: Sequence[str],
    *,
    per_query: bool,
    complete: bool,
    rel_level: float,
    digits: int,
    out: IO[str] | None,
    max_docs: int | None,
    judged_only: bool,
    num_docs: int,
    summary: bool,
    zscores: str | None,
    trec_version: int,
    fused_cutoffs: bool,
    rel_format: str,
    rename: Mapping[str, str] | None,
    memory_lines: int,
) -> dict[str, float | int | str]:
    """``evaluate_files`` once its options are checked: read, evaluate, print."""
    opts = Options(version=trec_version, fused=fused_cutoffs)
    ev = _evaluator(qrels_path, run_path, measures, opts, rel_format, max_docs=max_docs,
                    judged_only=judged_only, rel_level=rel_level, num_docs=num_docs)  # fmt: skip
    found = evaluate_run(ev, memory_lines)
    ztable = read_zscores(zscores) if zscores is not None else None
    printer = _Printer(sys.stdout if out is None else out, digits, ztable is not None)
    shown = dict(rename or {})
    if found.packed and not per_query and ztable is None:  # block path, nothing per query
        sums, num_q = _column_sums(ev, found, complete)
    else:
        sums, num_q = _query_sums(ev, found, printer if per_query else None, complete, ztable, shown)
    if not num_q:
        raise ValueError(
            f"no query of the run {run_path!r} is judged in the qrels {qrels_path!r} "
            "(trec_eval: 'No queries with both results and relevance info')"
        )
    return _summary(ev, sums, num_q, found.runid, printer if summary else None, complete,
                    ztable is None, shown)  # fmt: skip


def _evaluator(qrels_path: str, run_path: str, measures: Sequence[str], opts: Options, rel_format: str,
               **options: Any) -> QueryEvaluator:  # fmt: skip
    """The reading step: the measures, the judgments (or preferences), as a :class:`QueryEvaluator`."""
    selected = select(list(measures), rel_format)
    prefs = read_prefs(qrels_path, rel_format == "qrels_prefs") if rel_format in PREFS_FORMATS else {}
    judgments = read_judgments(qrels_path, rel_format) if not prefs else {q: [] for q in prefs}
    return QueryEvaluator(run_path, selected, judgments, prefs, opts, rel_format, **options)


@dataclass
class RunValues:
    """The values of a run's judged queries (what :func:`evaluate_run` returns).

    Attributes
    ----------
    store : dict of str to list of list
        Values per query (a list per measure), from the per-query path.
    packed : dict of str to (numpy.ndarray, int)
        The block path's values: a block's rows and the query's row (8 bytes a value).
    runid : str
        The run id of the run's last line.

    Examples
    --------
    >>> from streammetrics.trec.evaluate import RunValues
    >>> found = RunValues(store={"q1": [[0.5]]}, runid="sys")
    >>> found.pop("q1", []), found.store
    ([[0.5]], {})
    """

    store: dict[str, list[list[Value]]] = field(default_factory=dict)
    packed: dict[str, tuple[np.ndarray, int]] = field(default_factory=dict)
    runid: str = ""

    def pop(self, qid: str, selected: Sequence[Selected]) -> list[list[Value]] | None:
        """A query's values, removed (from either path). O(values).

        Parameters
        ----------
        qid : str
            The query.
        selected : sequence of Selected
            The measures evaluated (the block path's rows are split by them).

        Returns
        -------
        list of list or None
            A list of values per measure; None if the run has no values for ``qid``.
        """
        values = self.store.pop(qid, None)
        if values is None and qid in self.packed:
            rows, j = self.packed.pop(qid)
            values = split_row(rows[j], selected)
        return values


def evaluate_run(ev: QueryEvaluator, memory_lines: int = MEMORY_LINES) -> RunValues:
    """The evaluating step: the run ``ev.run_path`` read once (:class:`.runqueries.RunQueries`,
    any line order), each judged query evaluated, in blocks (:func:`.batched.block_values`) when
    every measure allows it. A query that comes again (complete) replaces its first values.

    Parameters
    ----------
    ev : QueryEvaluator
        The measures, judgments and options; ``ev.run_path`` is the run read.
    memory_lines : int, default MEMORY_LINES
        The lines sorted at once when the run's queries are not contiguous.

    Returns
    -------
    RunValues
        The values of the judged queries retrieved, and the run id.

    Examples
    --------
    >>> from importlib.resources import files
    >>> from streammetrics.trec.evaluate import Options, QueryEvaluator, evaluate_run
    >>> from streammetrics.trec.irnames import select
    >>> from streammetrics.trec.readers import read_judgments
    >>> data = files("streammetrics") / "data"
    >>> ev = QueryEvaluator(str(data / "example.run"), select(["ndcg"]),
    ...                     read_judgments(str(data / "example.qrels"), "qrels"), {}, Options(), "qrels",
    ...                     max_docs=None, judged_only=False, rel_level=1, num_docs=0)
    >>> found = evaluate_run(ev)
    >>> found.store, found.runid
    ({'q1': [[0.6309297535714575]], 'q2': [[1.0]]}, 'sys')
    """
    run, found = RunQueries(ev.run_path, memory_lines), RunValues()
    failed: dict[str, TrecFormatError] = {}  # -M: errors of queries that may come again
    if not fast_path(ev.selected, ev.opts, ev.rel_level, ev.max_docs, ev.judged_only, ev.rel_format):
        for qid, lines in run:
            if qid in ev.judgments:
                _evaluate_query(ev, run, found, failed, qid, lines)
    else:
        assert isinstance(ev.judgments, CompactQrels)  # rel_format "qrels"
        for block in run.blocks():
            qids, rows, slow = block_values(block, ev.judgments, ev.selected, ev.opts, ev.rel_level,
                                            ev.max_docs)  # fmt: skip
            for j, qid in enumerate(qids):
                found.packed[qid] = (rows, j)
                found.store.pop(qid, None)
                failed.pop(qid, None)
            for qid, lines in slow:
                _evaluate_query(ev, run, found, failed, qid, lines)
    for error in failed.values():
        raise error
    found.runid = run.runid
    return found


def _evaluate_query(ev: QueryEvaluator, run: RunQueries, found: RunValues, failed: dict[str, TrecFormatError],
                    qid: str, lines: QueryLines) -> None:  # fmt: skip
    """One query's values into ``found``, replacing earlier ones. With ``-M``, a query read before
    the run is known to be grouped may come again with more lines, which can push a duplicate
    document out of the top ``max_docs``: its error waits in ``failed`` until the run is read."""
    found.packed.pop(qid, None)
    failed.pop(qid, None)
    try:
        found.store[qid] = ev.values(qid, lines)
    except TrecFormatError as error:
        if ev.max_docs is None or run.grouped is not None:
            raise
        found.store.pop(qid, None)
        failed[qid] = error


def _column_sums(ev: QueryEvaluator, found: RunValues, complete: bool) -> tuple[list[list[float]], int]:
    """The sums of each value over the queries (and their count) when nothing is printed per query:
    each query's row in trec_eval's order, then a running sum down each column (the additions of
    :func:`_query_sums`, in the same order, exactly)."""
    ordered: list[np.ndarray] = []
    for qid in sorted(ev.judgments, key=qid_key):
        if qid in found.packed:
            rows, j = found.packed.pop(qid)
            ordered.append(rows[j])
            continue
        values = found.store.pop(qid, None)
        if values is None and not complete:
            continue
        values = values if values is not None else ev.values(qid, None)
        ordered.append(np.array([float(v) for vs in values for v in vs], dtype=np.float64))
    sums: list[list[float]] = [[0.0] * len(s.names) for s in ev.selected]
    if ordered:
        total = np.cumsum(np.vstack(ordered), axis=0)[-1].tolist()
        at = 0
        for si, sel in enumerate(ev.selected):
            sums[si] = total[at : at + len(sel.names)]
            at += len(sel.names)
    return sums, len(ordered)


def _query_sums(ev: QueryEvaluator, found: RunValues, printer: _Printer | None, complete: bool,
                ztable: dict[str, dict[str, tuple[float, float]]] | None,
                shown: Mapping[str, str]) -> tuple[list[list[float]], int]:  # fmt: skip
    """The sums of each value over the queries (and their count), queries in trec_eval's order,
    each query's lines printed (``printer``; -Z: its z-scores)."""
    sums: list[list[float]] = [[0.0] * len(s.names) for s in ev.selected]
    counts = ev.counts = [[0] * len(s.names) for s in ev.selected]  # of the defined values (avg "defined")
    num_q = 0
    for qid in sorted(ev.judgments, key=qid_key):
        found_values = found.pop(qid, ev.selected)
        if found_values is None and not complete:
            continue
        query_values = found_values if found_values is not None else ev.values(qid, None)
        show = printer is not None and (found_values is not None or ev.opts.version >= 10)
        num_q += 1
        for si, sel in enumerate(ev.selected):
            values = query_values[si]
            if ztable is not None and sel.measure.value != "string":
                values = list(_zscore(qid, list(sel.names), [float(v) for v in values], ztable))
            for vi, v in enumerate(values):
                if sel.measure.avg == "defined":  # NaN: undefined, left out of the mean and the lines
                    if v != v:
                        continue
                    counts[si][vi] += 1
                if not isinstance(v, str):
                    sums[si][vi] += v
                if show and sel.measure.per_query:
                    assert printer is not None
                    printer.value(shown.get(sel.names[vi], sel.printed[vi]), qid, v, sel.measure.value)
    return sums, num_q


def _summary(ev: QueryEvaluator, sums: list[list[float]], num_q: int, runid: str, printer: _Printer | None,
             complete: bool, truncate: bool, shown: Mapping[str, str]
             ) -> dict[str, float | int | str]:  # fmt: skip
    """The summary values by printed name (each measure's average: mean, geometric mean, sum or
    count), printed as ``all`` lines (``printer``); ``truncate``: counts as integers."""
    results: dict[str, float | int | str] = {}
    for si, sel in enumerate(ev.selected):
        m = sel.measure
        if m.value == "runid":
            results["runid"] = runid
            if printer is not None:
                printer.value("runid", "all", runid, "runid")
            continue
        if m.value == "string":
            continue
        for vi, trec_name in enumerate(sel.names):
            name = shown.get(trec_name, sel.printed[vi])
            v = sums[si][vi]
            if m.avg == "mean":
                v = v / num_q
            elif m.avg == "gm":
                v = math.exp(v / num_q)
            elif m.avg == "defined":
                n = ev.counts[si][vi] if ev.counts else 0
                v = v / n if n else math.nan
            elif m.avg == "num_q":
                v = float(num_q)
            elif m.avg == "num_rel" and complete:
                v = float(_num_rel(ev.judgments))
            results[name] = math.trunc(v) if m.value == "long" and truncate else v
            if printer is not None:
                printer.value(name, "all", v, m.value)
    return results


def _num_rel(judgments: Mapping[str, list[dict[str, int]]]) -> int:
    """The relevant documents (grade > 0) of every judged query (``num_rel`` with -c)."""
    if isinstance(judgments, CompactQrels):
        return int((judgments.grades > 0).sum())
    return sum(1 for gs in judgments.values() for j in gs for g in j.values() if g > 0)
