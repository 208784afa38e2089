"""trec_eval's judgment-group input (``-R qrels_jg``) and its measures averaged over groups.

A ``qrels_jg`` file has the qrels columns with the second one naming the judgment group (the user)
that judged the document: ``qid jg docno grade``. Each query is evaluated once per group (groups
sorted bytewise, as trec_eval does) and ``map_avgjg``, ``P_avgjg``, ``Rprec_mult_avgjg`` average the
per-group ``map``, ``P`` and ``Rprec_mult`` over the query's groups.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from . import _kernels as trec_kernels
from .checked import GRADE_LIMIT, TrecFormatError, check_grades, utf8_errors
from .tokens import text_fields


def read_qrels_jg(path: str) -> dict[str, dict[str, dict[str, int]]]:
    """``qid jg docno grade`` lines -> {qid: {jg: {docno: grade}}}; grades read as C's ``atol``
    (truncated), ``#`` comment lines and blank lines skipped, a document judged twice by one group
    is an error naming the line. O(judgments) memory.

    Parameters
    ----------
    path : str
        The ``qrels_jg`` file.

    Returns
    -------
    dict of str to dict of str to dict of str to int
        ``{qid: {jg: {docno: grade}}}``, in file order.

    Raises
    ------
    TrecFormatError
        Naming the line: other than 4 fields, a grade that is not a finite number, or a document
        judged twice by one group.

    Examples
    --------
    >>> import os, tempfile
    >>> from streammetrics.trec.judgment_groups import read_qrels_jg
    >>> with tempfile.NamedTemporaryFile("w", suffix=".qrels_jg", delete=False) as fh:
    ...     _ = fh.write("q1 u1 d1 1\\nq1 u2 d1 0\\nq1 u1 d2 2.7\\n")
    >>> read_qrels_jg(fh.name)
    {'q1': {'u1': {'d1': 1, 'd2': 2}, 'u2': {'d1': 0}}}
    >>> os.remove(fh.name)
    """
    out: dict[str, dict[str, dict[str, int]]] = {}
    with utf8_errors(path), open(path, encoding="utf-8") as fh:
        for lineno, parts in text_fields(path, fh, 1, 4, "qid jg docno grade"):
            qid, jg, docno, grade = parts
            try:
                g = int(float(grade))
            except (ValueError, OverflowError):
                raise TrecFormatError(f"{path}:{lineno}: grade {grade!r} is not a finite number") from None
            if not -GRADE_LIMIT < g < GRADE_LIMIT:
                check_grades(path, np.array([float(grade)]), [grade], [lineno])
            per_jg = out.setdefault(qid, {}).setdefault(jg, {})
            if docno in per_jg:
                raise TrecFormatError(
                    f"{path}:{lineno}: duplicate judgment of document {docno!r} "
                    f"for query {qid!r}, group {jg!r}"
                )
            per_jg[docno] = g
    return out


def _group_key(name: str) -> bytes:
    return name.encode("utf-8")


def groups_in_order(groups: Mapping[str, dict[str, int]]) -> list[dict[str, int]]:
    """A query's judgment groups ({jg: {docno: grade}}) in trec_eval's order: by name, bytewise.

    Parameters
    ----------
    groups : mapping of str to dict of str to int
        Each judgment group's grades by document.

    Returns
    -------
    list of dict of str to int
        The groups' grades, in trec_eval's order of the group names.

    Examples
    --------
    >>> from streammetrics.trec.judgment_groups import groups_in_order
    >>> groups_in_order({"b": {"d1": 1}, "a": {"d2": 0}})
    [{'d2': 0}, {'d1': 1}]
    """
    return [groups[jg] for jg in sorted(groups, key=_group_key)]


def groups_from_rows(rows: Any, where: str) -> list[dict[str, int]]:
    """A query's judgment groups, in trec_eval's order, from rows as a ``qrels_jg`` file has
    them after the query id: ``(jg, docno, grade)``; grades truncated to integers as
    :func:`read_qrels_jg` reads them; None is no row. ValueError naming ``where`` and the first
    malformed row or document judged twice by one group. O(rows).

    Parameters
    ----------
    rows : iterable of (jg, docno, grade), or None
        The query's judgment rows.
    where : str
        What the rows are, for error messages (e.g. the query).

    Returns
    -------
    list of dict of str to int
        The groups' grades by document, in trec_eval's order (see :func:`groups_in_order`).

    Examples
    --------
    >>> from streammetrics.trec.judgment_groups import groups_from_rows
    >>> groups_from_rows([("1", "d1", 2), ("0", "d2", "1.7")], "query 7")
    [{'d2': 1}, {'d1': 2}]
    """
    groups: dict[str, dict[str, int]] = {}
    for i, row in enumerate(() if rows is None else rows):
        try:
            if isinstance(row, (str, bytes)):
                raise TypeError
            jg, docno, grade = row
            g = int(float(grade))
        except (TypeError, ValueError, OverflowError):
            raise ValueError(f"{where}: expected rows (jg, docno, grade) with a finite grade, "
                             f"row {i} is {row!r}") from None  # fmt: skip
        per_jg = groups.setdefault(str(jg), {})
        if str(docno) in per_jg:
            raise ValueError(f"{where}: row {i} judges document {str(docno)!r} a second time "
                             f"in group {str(jg)!r}")  # fmt: skip
        per_jg[str(docno)] = g
    return groups_in_order(groups)


def qrels_from_rows(rows: Any, where: str) -> dict[str, int]:
    """A query's judgments ``{docno: grade}`` in the order given, from a mapping ``{docno:
    grade}`` (a pytrec_eval-style qrels entry) or rows ``(docno, grade)``; grades truncated to
    integers as trec_eval's ``atol`` reads them; None is no judgment. ValueError naming ``where``
    and the first malformed row or document judged twice. O(rows).

    Parameters
    ----------
    rows : mapping of str to number, iterable of (docno, grade), or None
        The query's judgments, in the qrels' order.
    where : str
        What the rows are, for error messages (e.g. the query).

    Returns
    -------
    dict of str to int
        The grades by document, in the order given.

    Examples
    --------
    >>> from streammetrics.trec.judgment_groups import qrels_from_rows
    >>> qrels_from_rows({"d2": 1, "d1": "2.7"}, "query 7"), qrels_from_rows([("d1", 0)], "q")
    ({'d2': 1, 'd1': 2}, {'d1': 0})
    """
    items = rows.items() if isinstance(rows, Mapping) else () if rows is None else rows
    out: dict[str, int] = {}
    for i, row in enumerate(items):
        try:
            if isinstance(row, (str, bytes)):
                raise TypeError
            docno, grade = row
            g = int(float(grade))
        except (TypeError, ValueError, OverflowError):
            raise ValueError(f"{where}: expected {{docno: grade}} or rows (docno, grade), finite grades, "
                             f"row {i} is {row!r}") from None  # fmt: skip
        if str(docno) in out:
            raise ValueError(f"{where}: row {i} judges document {str(docno)!r} a second time")
        out[str(docno)] = g
    return out


def _average(groups: Sequence[trec_kernels.ResRels], per_group: list[list[float]], width: int) -> list[float]:
    sums = [0.0] * width
    for vals in per_group:
        for i, v in enumerate(vals):
            sums[i] += v
    if len(groups) > 1:
        sums = [s / len(groups) for s in sums]
    return sums


def map_avgjg(groups: Sequence[trec_kernels.ResRels]) -> list[float]:
    """map_avgjg: the query's average precision per judgment group, averaged over the groups.

    Parameters
    ----------
    groups : sequence of ResRels
        The query's ranked judgments, one per judgment group (groups sorted bytewise).

    Returns
    -------
    list of float
        One value: the mean over groups (the sum when there is none or one).
    """
    return _average(groups, [[trec_kernels.average_precision(rr)] for rr in groups], 1)


def precision_avgjg(groups: Sequence[trec_kernels.ResRels], cutoffs: Sequence[int]) -> list[float]:
    """P_avgjg: the query's precision at each cutoff per judgment group, averaged over the groups.

    Parameters
    ----------
    groups : sequence of ResRels
        The query's ranked judgments, one per judgment group (groups sorted bytewise).
    cutoffs : sequence of int
        The ranking depths (``P_avgjg.5,10``).

    Returns
    -------
    list of float
        One value per cutoff: the mean over groups.
    """
    return _average(groups, [trec_kernels.precision_at(rr, cutoffs) for rr in groups], len(cutoffs))


def rprec_mult_avgjg(groups: Sequence[trec_kernels.ResRels], mults: Sequence[float]) -> list[float]:
    """Rprec_mult_avgjg: the query's precision at ``mult * R`` per judgment group, averaged over
    the groups.

    Parameters
    ----------
    groups : sequence of ResRels
        The query's ranked judgments, one per judgment group (groups sorted bytewise).
    mults : sequence of float
        The multiples of R (each group's number of relevant documents) to cut at.

    Returns
    -------
    list of float
        One value per multiple: the mean over groups.
    """
    return _average(groups, [trec_kernels.rprec_mult(rr, mults) for rr in groups], len(mults))
