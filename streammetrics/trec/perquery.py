"""Per-query values of trec_eval (and ir_measures) measures as arrays: :func:`per_query_values`.

The runs are read one at a time, each in one streaming pass (query by query when its queries are
contiguous, else grouped by an external sort in bounded memory), with the judgments read once; the
per-query kernels are trec_eval's (:mod:`._kernels`), so the mean of a column equals
``streammetrics trec``'s summary line of that measure.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ._measures import Options, check_options, check_trec_version
from .diversity import is_diversity, parse_diversity
from .diversity_files import diversity_run_values
from .evaluate import QueryEvaluator, evaluate_run, qid_key
from .irnames import select
from .readers import read_judgments
from .subtopics import read_subtopic_qrels

__all__ = ["PerQuery", "per_query_values"]


@dataclass(frozen=True)
class PerQuery:
    """Per-query values of several runs (what :func:`per_query_values` returns).

    Attributes
    ----------
    runs : tuple of str
        The run files, in the order given.
    runids : tuple of str
        The run id read from each run file.
    names : tuple of str
        The measure names, as the user gave them.
    qids : tuple of str
        The queries, sorted as trec_eval sorts them.
    values : ndarray of shape (runs, measures, queries)
        ``values[r, m, q]``: run ``runs[r]``'s value of measure ``names[m]`` on query ``qids[q]``.

    Examples
    --------
    >>> from importlib.resources import files
    >>> data = files("streammetrics") / "data"  # example files of the package
    >>> from streammetrics.trec import per_query_values
    >>> pq = per_query_values(str(data / "example.qrels"), [str(data / "example.run")], ["AP", "P@1"])
    >>> pq.runids, pq.names, pq.values.shape
    (('sys',), ('AP', 'P@1'), (1, 2, 2))
    """

    runs: tuple[str, ...]
    runids: tuple[str, ...]
    names: tuple[str, ...]
    qids: tuple[str, ...]
    values: np.ndarray


def per_query_values(
    qrels_path: str,
    run_paths: Sequence[str],
    measures: Sequence[str] = ("AP", "nDCG@10", "P@10", "RR"),
    *,
    rel_level: float = 1,
    max_docs: int | None = None,
    judged_only: bool = False,
    trec_version: int = 9,
    complete: bool = False,
) -> PerQuery:
    """Each run's per-query values of ``measures`` (trec_eval or ir_measures names).

    The queries are those of the qrels retrieved by at least one run (sorted as trec_eval sorts
    them; ``complete``: every query of the qrels, as trec_eval's ``-c`` and ranx's
    ``make_comparable=True``); a run that lacks one of them scores it as trec_eval's ``-c`` does
    (an empty ranking: 0 for every ranking measure), so that the runs pair query by query; a query on which a
    measure is undefined has NaN (``Accuracy@k``: its top k holds no relevant or no non-relevant
    document; ``streammetrics trec`` prints no line for it). Measures without
    per-query values (``runid``, ``relstring``, the geometric means ``gm_map``/``gm_bpref``) are
    left out. ndeval's diversity measures (``alpha_nDCG@20``, ...) are asked for alone, with
    subtopic qrels (``topic subtopic docno judgment``; :mod:`.diversity_files`). Raises
    ValueError (a :class:`.TrecFormatError` for a malformed file) naming the file, the line and
    the problem; OSError for an unreadable file.

    Cost: one pass over each run, O(documents) per query and measure; memory: the judgments, one
    value per run, measure and query, and one run's query (or, unsorted, one run) at a time.

    Parameters
    ----------
    qrels_path : str
        The judgments (``qid iter docno grade`` lines).
    run_paths : sequence of str
        The run files (``qid Q0 docno rank score runid`` lines).
    measures : sequence of str, default ('AP', 'nDCG@10', 'P@10', 'RR')
        trec_eval or ir_measures names.
    rel_level : float, default 1
        Minimum grade of a relevant document (trec_eval ``-l``).
    max_docs : int, optional
        Documents read per query (trec_eval ``-M``).
    judged_only : bool, default False
        Rank only judged documents (trec_eval ``-J``).
    trec_version : {9, 10}, default 9
        The trec_eval version whose score precision and recall cutoffs are used.
    complete : bool, default False
        Every query of the qrels, also those no run retrieves (trec_eval ``-c``; ranx's
        ``make_comparable=True``); default: the qrels' queries that some run retrieves.

    Returns
    -------
    PerQuery
        ``values[run, measure, query]`` with the runs, measure names and query ids.

    Examples
    --------
    >>> from importlib.resources import files
    >>> data = files("streammetrics") / "data"  # example files of the package
    >>> from streammetrics.trec import per_query_values
    >>> pq = per_query_values(str(data / "example.qrels"), [str(data / "example.run")], ["AP"])
    >>> pq.qids, pq.values.tolist()
    (('q1', 'q2'), [[[0.5, 1.0]]])
    """
    trec_version = check_trec_version(trec_version)
    rel_level, max_docs, _, _ = check_options(rel_level, max_docs)
    if any(is_diversity(m) for m in measures):
        return _diversity_per_query(qrels_path, run_paths, measures, rel_level, max_docs, judged_only,
                                    complete)
    selected = [s for s in select(measures) if s.measure.per_query and s.measure.value in ("double", "long")]
    names = [n for s in selected for n in s.printed]
    if not names:
        raise ValueError(f"measures {list(measures)!r} have no per-query values to compare")
    judgments = read_judgments(qrels_path, "qrels")
    ev = QueryEvaluator(
        "", selected, judgments, {}, Options(version=trec_version), "qrels",
        max_docs=max_docs, judged_only=judged_only, rel_level=rel_level, num_docs=0,
    )  # fmt: skip
    per_run: list[dict[str, list[float]]] = []
    runids: list[str] = []
    for path in run_paths:
        ev.run_path = path
        run = evaluate_run(ev)
        per_run.append({qid: [float(v) for vals in run.pop(qid, selected) or () for v in vals]
                        for qid in [*run.store, *run.packed]})  # fmt: skip
        runids.append(run.runid)
    qids = sorted(set().union(*per_run, judgments if complete else ()), key=qid_key)
    if not qids:
        raise ValueError(f"no query of the runs {list(run_paths)!r} is judged in the qrels {qrels_path!r}")
    values = np.empty((len(run_paths), len(names), len(qids)))
    for r, found in enumerate(per_run):
        for q, qid in enumerate(qids):
            row = found.get(qid)
            if row is None:
                row = [float(v) for vals in ev.values(qid, None) for v in vals]
            values[r, :, q] = row
    return PerQuery(tuple(run_paths), tuple(runids), tuple(names), tuple(qids), values)


def _diversity_per_query(qrels_path: str, run_paths: Sequence[str], measures: Sequence[str],
                         rel_level: float, max_docs: int | None, judged_only: bool,
                         complete: bool) -> PerQuery:
    """:func:`per_query_values` of ndeval's diversity measures: ``qrels_path`` holds subtopic
    qrels (``topic subtopic docno judgment``), so every measure must be one of them. A query on
    which a measure is undefined (``nNRBP`` without a relevant document: NaN, as ndeval) is
    refused, since the runs cannot be paired on it."""
    others = [m for m in measures if not is_diversity(m)]
    if others:
        raise ValueError(f"measures: {others[0]!r} is not a diversity measure; the diversity measures read "
                         "subtopic qrels, so they are compared alone")  # fmt: skip
    if rel_level != int(rel_level):
        raise ValueError("rel_level: expected an integer (subtopic judgments are integers), "
                         f"got {rel_level!r}")
    specs = [parse_diversity(m) for m in measures]
    judgments = read_subtopic_qrels(qrels_path).queries
    read = [diversity_run_values(judgments, path, specs, rel_level=int(rel_level), max_docs=max_docs,
                                 judged_only=judged_only) for path in run_paths]  # fmt: skip
    per_run = [found for found, _ in read]
    qids = sorted(set().union(*per_run, judgments if complete else ()), key=qid_key)
    if not qids:
        raise ValueError(f"no query of the runs {list(run_paths)!r} is judged in the qrels {qrels_path!r}")
    values = np.zeros((len(run_paths), len(specs), len(qids)))  # a run lacking a query scores 0
    for r, found in enumerate(per_run):
        for q, qid in enumerate(qids):
            if qid in found:
                values[r, :, q] = found[qid]
    undefined = np.argwhere(np.isnan(values))
    if len(undefined):
        r, m, q = (int(i) for i in undefined[0])
        raise ValueError(f"measure {measures[m]!r} has no value for query {qids[q]!r} of run "
                         f"{run_paths[r]!r} (no relevant document), so the runs cannot be paired "
                         "query by query")
    return PerQuery(tuple(run_paths), tuple(runid for _, runid in read), tuple(measures), tuple(qids), values)
