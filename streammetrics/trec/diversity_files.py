"""``streammetrics trec`` with the diversity measures: subtopic qrels and a run, as ndeval reads them.

:func:`evaluate_diversity_files` reads the subtopic qrels (:func:`.subtopics.read_subtopic_qrels`)
and the run in any line order (:class:`.runqueries.RunQueries`: a run whose queries are
contiguous in bounded memory, any other through the external sort), ranks each query as pyndeval
does (score descending in double precision, then document id ascending; ``max_docs``: the top M),
evaluates it (:func:`.diversity.diversity_values`) and prints trec_eval's lines
(``name<TAB>qid<TAB>value``) under the names given: a line per query with ``per_query``, then the
means (``all``) over the queries of both the run and the qrels (ndeval's), or with ``complete``
over every query of the qrels, a query missing from the run scoring 0 (ndeval's ``-c``, and
ir_measures' average). A document retrieved twice for a query is an error naming the line.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from typing import IO, Any

from .checked import TrecFormatError
from .diversity import DiversityMeasure, diversity_values, is_diversity, parse_diversity
from .evaluate import c_float, qid_key
from .runfile import MEMORY_LINES, QueryLines
from .runqueries import RunQueries
from .subtopics import read_subtopic_qrels

__all__ = ["diversity_run_values", "evaluate_diversity_files", "rank_lines"]


def rank_lines(path: str, qid: str, q: QueryLines, max_docs: int | None = None) -> list[str]:
    """A query's retrieved documents in pyndeval's order: score descending, then document id
    ascending; the top ``max_docs``. O(n log n).

    Parameters
    ----------
    path : str
        The run file, for the error message.
    qid : str
        The query.
    q : QueryLines
        Its lines.
    max_docs : int, optional
        Keep the top ``max_docs`` (``-M``).

    Returns
    -------
    list of str
        The documents, best first.

    Raises
    ------
    TrecFormatError
        A document retrieved twice for the query, naming the line.

    Examples
    --------
    >>> import numpy as np
    >>> from streammetrics.trec.runfile import QueryLines
    >>> from streammetrics.trec.diversity_files import rank_lines
    >>> rank_lines("run", "1", QueryLines(["b", "a", "c"], np.array([1.0, 1.0, 2.0]), np.array([1, 2, 3])))
    ['c', 'a', 'b']
    """
    scores = q.scores.tolist()
    if len(set(q.docs)) != len(q.docs):
        seen: set[str] = set()
        for i, d in enumerate(q.docs):
            if d in seen:
                raise TrecFormatError(f"{path}:{int(q.lines[i])}: duplicate document {d!r} for query {qid!r}")
            seen.add(d)
    order = sorted(range(len(q.docs)), key=lambda i: (-scores[i], q.docs[i]))
    if max_docs is not None:
        order = order[:max_docs]
    return [q.docs[i] for i in order]


def _specs(measures: Sequence[str]) -> list[DiversityMeasure]:
    specs: dict[str, DiversityMeasure] = {}
    for text in measures:
        if not is_diversity(text):
            raise ValueError(
                f"measure {text!r}: the diversity measures read subtopic qrels ('topic subtopic docno "
                "judgment'), which the other measures do not: evaluate them in a command of their own"
            )
        m = parse_diversity(text)
        specs.setdefault(m.name, m)
    return list(specs.values())


def diversity_run_values(
    judgments: Mapping[str, Mapping[str, Mapping[Any, int]]],
    run_path: str,
    measures: Sequence[DiversityMeasure | str],
    *,
    rel_level: int = 1,
    max_docs: int | None = None,
    judged_only: bool = False,
    memory_lines: int = MEMORY_LINES,
) -> tuple[dict[str, list[float]], str]:
    """Each judged query's values of the diversity ``measures`` on one run file, and its run id.

    Cost: one read of the run (:class:`.runqueries.RunQueries`), then
    :func:`.diversity.diversity_values` per query both in the run and in ``judgments``; memory:
    one query's lines (a run in query order) and a value per query and measure.

    Parameters
    ----------
    judgments : mapping
        ``{qid: {docno: {subtopic: judgment}}}`` (:func:`.subtopics.read_subtopic_qrels`'s
        ``queries``).
    run_path : str
        ``qid Q0 docno rank score runid`` lines.
    measures : sequence of DiversityMeasure or str
        Diversity measures (:mod:`.diversity`).
    rel_level : int, default 1
        The smallest relevant judgment of the measures that do not set ``rel``.
    max_docs : int, optional
        The top ``max_docs`` documents of each query.
    judged_only : bool, default False
        Drop the documents the query's judgments do not name, for every measure.
    memory_lines : int
        Run lines held at once when the run's queries are not contiguous.

    Returns
    -------
    (dict of str to list of float, str)
        ``{qid: [value per measure]}`` for the queries of the run that are judged, and the run id
        of the run's last line.

    Examples
    --------
    >>> import os, tempfile
    >>> run_path = os.path.join(tempfile.mkdtemp(), "run.txt")
    >>> with open(run_path, "w") as f:
    ...     _ = f.write("1 Q0 A 1 2.0 r1\\n1 Q0 B 2 1.0 r1\\n")
    >>> diversity_run_values({"1": {"A": {"a": 1}, "B": {"b": 1}}}, run_path, ["StRecall@1", "alpha_nDCG@2"])
    ({'1': [0.5, 1.0]}, 'r1')
    """
    found: dict[str, list[float]] = {}
    queries = RunQueries(run_path, memory_lines)
    for qid, lines in queries:
        if qid in judgments:  # a query that comes again (not grouped) comes complete: it replaces
            ranked = rank_lines(run_path, qid, lines, max_docs)
            found[qid] = diversity_values(ranked, judgments[qid], measures, rel_level, judged_only)
    return found, queries.runid


def evaluate_diversity_files(
    qrels_path: str,
    run_path: str,
    measures: Sequence[str],
    *,
    per_query: bool = False,
    complete: bool = False,
    rel_level: int = 1,
    digits: int = 4,
    out: IO[str] | None = None,
    max_docs: int | None = None,
    judged_only: bool = False,
    summary: bool = True,
    memory_lines: int = MEMORY_LINES,
) -> dict[str, float]:
    """Evaluate a run's diversity against subtopic qrels; print trec_eval-style lines to ``out``.

    Cost: one read of each file (the run as :class:`.runqueries.RunQueries` reads it), then
    :func:`.diversity.diversity_values` per judged query; memory: the judgments, one query's
    lines (a run in query order) and a value per query and measure.

    Parameters
    ----------
    qrels_path : str
        ``topic subtopic docno judgment`` lines (ndeval's format).
    run_path : str
        ``qid Q0 docno rank score runid`` lines (the rank column is not used: pyndeval ranks by
        score).
    measures : sequence of str
        Diversity measures (:mod:`.diversity`): ``"alpha_nDCG@20"``, ``"ERR_IA@20"``, ``"NRBP"``.
    per_query, complete : bool, default False
        A line per query too (``-q``); average over every query of the qrels (``-c``).
    rel_level : int, default 1
        The smallest relevant judgment of the measures that do not set ``rel`` (``-l``).
    digits : int, default 4
        Decimals printed.
    out : text stream, optional
        Where the lines go (default: standard output).
    max_docs : int, optional
        Evaluate the top ``max_docs`` documents of each query (``-M``).
    judged_only : bool, default False
        Drop the documents the query's qrels do not name, for every measure (``-J``).
    summary : bool, default True
        ``False``: no ``all`` lines (``-n``).
    memory_lines : int
        Run lines held at once when the run's queries are not contiguous.

    Returns
    -------
    dict of str to float
        The mean of each measure by printed name.

    Raises
    ------
    ValueError
        A measure that is not a diversity measure (or malformed), a malformed file (naming file and
        line), or no query both in the run and in the qrels.

    Examples
    --------
    >>> import io, os, tempfile
    >>> from streammetrics.trec.diversity_files import evaluate_diversity_files
    >>> d = tempfile.mkdtemp()
    >>> qrels, run = os.path.join(d, "qrels"), os.path.join(d, "run")
    >>> _ = open(qrels, "w").write("1 a A 1\\n1 b B 1\\n1 b D 1\\n1 c C 1\\n")
    >>> _ = open(run, "w").write("1 Q0 A 1 9.3 r\\n1 Q0 D 2 8.4 r\\n1 Q0 E 3 8.1 r\\n1 Q0 B 4 7.6 r\\n")
    >>> out = io.StringIO()
    >>> means = evaluate_diversity_files(qrels, run, ["alpha_nDCG@5", "StRecall@5"], out=out)
    >>> [line.split() for line in out.getvalue().splitlines()]
    [['alpha_nDCG@5', 'all', '0.7869'], ['StRecall@5', 'all', '0.6667']]
    """
    specs = _specs(measures)
    if max_docs is not None and (isinstance(max_docs, bool) or not isinstance(max_docs, int) or max_docs < 0):
        raise ValueError(f"max_docs: expected a non-negative integer, got {max_docs!r}")
    if isinstance(rel_level, bool) or not isinstance(rel_level, int):
        raise ValueError(f"rel_level: expected an integer (judgments are integers), got {rel_level!r}")
    if isinstance(digits, bool) or not isinstance(digits, int) or not 0 <= digits <= 17:
        raise ValueError(f"digits: expected an integer from 0 to 17, got {digits!r}")
    judgments = read_subtopic_qrels(qrels_path).queries
    found, _ = diversity_run_values(judgments, run_path, specs, rel_level=rel_level, max_docs=max_docs,
                                 judged_only=judged_only, memory_lines=memory_lines)
    printer = sys.stdout if out is None else out
    sums, num_q = [0.0] * len(specs), 0
    for qid in sorted(judgments, key=qid_key):
        values = found.get(qid)
        if values is None:
            if not complete:
                continue
            values = [0.0] * len(specs)
        elif per_query:
            for m, v in zip(specs, values, strict=True):
                printer.write(f"{m.name:<22}\t{qid}\t{c_float(v, digits)}\n")
        num_q += 1
        for i, v in enumerate(values):
            sums[i] += v
    if not num_q:
        raise ValueError(f"no query of the run {run_path!r} is judged in the qrels {qrels_path!r}")
    means = {m.name: s / num_q for m, s in zip(specs, sums, strict=True)}
    if summary:
        for name, v in means.items():
            printer.write(f"{name:<22}\tall\t{c_float(v, digits)}\n")
    return means
