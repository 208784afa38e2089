"""Subtopic (diversity) qrels: NIST ndeval's ``topic subtopic docno judgment`` lines.

The format of the TREC Web track's diversity judgments, which ndeval, pyndeval and ir_measures'
pyndeval provider read (ir_measures: the qrels' ``iteration`` column holds the subtopic). It has
the columns of an ordinary qrels file; the second column names the subtopic (intent) the document
is judged for, so a document may have a line per subtopic. :func:`read_subtopic_qrels` reads it with
the tokens every TREC reader shares (:mod:`.tokens`): blank and ``#`` lines skipped, other than 4
fields an error naming the file and the line, a judgment that is not a number (or not finite, or
beyond C's ``long``: :func:`.checked.check_grades`) an error naming the file, the line and the
value; so is a judgment that is not an integer (ndeval reads natural numbers), and a document judged
twice for one subtopic of a query. Any line order.

Subtopics are numbered in the order they first appear in the file (pyndeval numbers them so); the
diversity measures (:mod:`.diversity`) add a document's gains over its subtopics in that order.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .checked import TrecFormatError, check_grades
from .tokens import fixed_fields, line_chunks, parse_numbers, text_fields

__all__ = ["SubtopicQrels", "read_subtopic_qrels"]

_LAYOUT = "topic subtopic docno judgment"


@dataclass
class SubtopicQrels:
    """Per-subtopic judgments of each query.

    Attributes
    ----------
    queries : dict of str to dict of str to dict of int to int
        ``{qid: {docno: {subtopic: judgment}}}``, subtopics as their index in ``subtopics``.
    subtopics : list of str
        The subtopic ids, in the order they first appear.

    Examples
    --------
    >>> from streammetrics.trec.subtopics import SubtopicQrels
    >>> q = SubtopicQrels({"1": {"d1": {0: 1, 1: 0}}}, ["a", "b"])
    >>> q.queries["1"]["d1"][q.subtopics.index("a")]
    1
    """

    queries: dict[str, dict[str, dict[int, int]]] = field(default_factory=dict)
    subtopics: list[str] = field(default_factory=list)


_Columns = tuple[list[str], list[str], list[str], list[str], list[int]]


def _columns(path: str, first: int, lines: list[str]) -> _Columns:
    """(topic, subtopic, docno, judgment) columns and line numbers of one chunk of lines."""
    n = len(lines)
    tokens = fixed_fields("".join(lines), n, 4)
    if tokens is not None:
        return tokens[0::5], tokens[1::5], tokens[2::5], tokens[3::5], list(range(first, first + n))
    rows = list(text_fields(path, lines, first, 4, _LAYOUT))
    cols = [[p[j] for _, p in rows] for j in range(4)]
    return cols[0], cols[1], cols[2], cols[3], [k for k, _ in rows]


def read_subtopic_qrels(path: str, chunk_lines: int = 1 << 17) -> SubtopicQrels:
    """Read ``topic subtopic docno judgment`` lines (ndeval's diversity qrels).

    Cost: one pass over the file, judgments parsed per chunk of lines; O(judgments) memory.

    Parameters
    ----------
    path : str
        The qrels file.
    chunk_lines : int, default 131072
        Lines read at once.

    Returns
    -------
    SubtopicQrels
        The judgments per query, document and subtopic.

    Raises
    ------
    TrecFormatError
        Naming the file and the line: a line without 4 fields, a judgment that is not an integer
        (or beyond C's ``long``), a document judged twice for a subtopic of a query, text that is
        not UTF-8.

    Examples
    --------
    >>> import os, tempfile
    >>> from streammetrics.trec.subtopics import read_subtopic_qrels
    >>> with tempfile.NamedTemporaryFile("w", suffix=".qrels", delete=False) as fh:
    ...     _ = fh.write("1 a d1 1\\n1 b d1 0\\n1 b d2 2\\n")
    >>> q = read_subtopic_qrels(fh.name)
    >>> q.queries, q.subtopics
    ({'1': {'d1': {0: 1, 1: 0}, 'd2': {1: 2}}}, ['a', 'b'])
    >>> os.remove(fh.name)
    """
    out = SubtopicQrels()
    index: dict[str, int] = {}
    for first, lines in line_chunks(path, chunk_lines):
        qs, ss, ds, g_tok, line_of = _columns(path, first, lines)
        if not qs:
            continue
        grades = parse_numbers(path, g_tok, line_of, "judgment")
        check_grades(path, grades, g_tok, line_of)
        bad = np.flatnonzero(grades != np.trunc(grades))
        if len(bad):
            k = int(bad[0])
            raise TrecFormatError(f"{path}:{line_of[k]}: judgment {g_tok[k]!r} is not an integer")
        values = grades.astype(np.int64).tolist()
        for q, s, d, g, line in zip(qs, ss, ds, values, line_of, strict=True):
            sub = index.get(s)
            if sub is None:
                sub = index[s] = len(out.subtopics)
                out.subtopics.append(s)
            docs = out.queries.get(q)
            if docs is None:
                docs = out.queries[q] = {}
            subs = docs.get(d)
            if subs is None:
                subs = docs[d] = {}
            elif sub in subs:
                raise TrecFormatError(
                    f"{path}:{line}: duplicate judgment of document {d!r} for subtopic {s!r} of query {q!r}"
                )
            subs[sub] = g
    return out
