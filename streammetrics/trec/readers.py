"""TREC file readers: qrels (``qid iter docno grade``) and streamed runs (``qid Q0 docno rank score runid``).

:func:`read_qrels` reads the judgments into memory (they are small); lines whose first non-blank
character is ``#`` and blank lines are skipped. :func:`read_run_chunks` streams a run whose queries
are contiguous in chunks of complete queries (one chunk in memory); :func:`iter_run` yields them
query by query. ``streammetrics trec`` reads runs in any order with :mod:`.runqueries` instead.
:func:`read_judgments` reads the judgments as ``streammetrics trec`` evaluates them (every ``-R``
format: compact qrels, judgment groups), :func:`read_zscores` its ``-Z`` file. The tokens every
reader shares (``atol``, ``atof``, fields of text lines) are in :mod:`.tokens`.
"""

from __future__ import annotations

import itertools
import math
import operator
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from streammetrics._core.docstrings import filled

from .checked import TrecFormatError, check_grades, utf8_errors
from .compactqrels import read_compact_qrels
from .judgment_groups import groups_in_order, read_qrels_jg
from .tokens import atof, atol, fixed_fields, line_chunks, parse_numbers, qrels_text_columns, text_fields

__all__ = ["atof", "atol", "TrecFormatError", "Qrels", "read_qrels", "RunChunk", "read_run_chunks",
           "iter_run", "qrels_text_columns", "text_fields", "read_judgments", "read_zscores",
           "PREFS_FORMATS"]
__all__ += ["fixed_fields", "line_chunks", "parse_numbers"]  # also here, where they were defined before

#: The judgment formats (``-R``) of preferences, read by :func:`.preferences.read_prefs`.
PREFS_FORMATS = ("prefs", "qrels_prefs")


@dataclass
class Qrels:
    """Judgments per query: document ids and their grades (in file order).

    Attributes
    ----------
    docs : dict of str to dict of str to float
        ``{qid: {docno: grade}}``.

    Examples
    --------
    >>> from streammetrics.trec import Qrels
    >>> Qrels({"q1": {"d1": 2.0, "d2": 0.0}}).grades("q1")
    array([2., 0.])
    """

    docs: dict[str, dict[str, float]]

    def grades(self, qid: str) -> np.ndarray:
        return np.fromiter(self.docs.get(qid, {}).values(), dtype=np.float64)


def _qrels_chunks(
    path: str, chunk_lines: int = 1 << 17
) -> Iterator[tuple[list[str], list[str], np.ndarray, list[int]]]:
    """(qid, docno, grade, line number) columns of a qrels file, per chunk of lines.

    Fast path: one ``split`` of the chunk with a sentinel per line end proves every line has 4
    fields; otherwise line by line (blank and ``#`` lines skipped, other than 4 fields an error).
    """
    for first, lines in line_chunks(path, chunk_lines):
        n, text = len(lines), "".join(lines)
        tokens = fixed_fields(text, n, 4)
        if tokens is not None:
            cols = (tokens[0::5], tokens[2::5], tokens[3::5], list(range(first, first + n)))
        else:
            cols = qrels_text_columns(path, lines, first)
        qs, ds, g_tok, line_of = cols
        grades = parse_numbers(path, g_tok, line_of, "grade")
        check_grades(path, grades, g_tok, line_of)
        yield qs, ds, grades, line_of


def read_qrels_grades(
    path: str, integer: bool = False, chunk_lines: int = 1 << 17
) -> dict[str, dict[str, Any]]:
    """{qid: {docno: grade}} of a qrels file (``integer``: grades truncated toward zero, as
    trec_eval's ``atol`` reads them). A document judged twice for a query is an error naming the
    line. Cost: one pass, parsing vectorised per chunk; O(judgments) memory."""
    docs: dict[str, dict[str, Any]] = {}
    for qs, ds, grades, line_of in _qrels_chunks(path, chunk_lines):
        if not qs:
            continue
        values = (grades.astype(np.int64) if integer else grades).tolist()
        change = np.fromiter(map(operator.ne, qs[1:], qs[:-1]), dtype=bool, count=len(qs) - 1)
        starts = np.flatnonzero(np.concatenate([[True], change])).tolist()
        for a, b in zip(starts, [*starts[1:], len(qs)], strict=True):
            block = dict(zip(ds[a:b], values[a:b], strict=True))
            per_q = docs.get(qs[a])
            if len(block) != b - a or (per_q is not None and not per_q.keys().isdisjoint(block)):
                seen = set(per_q or ())
                for k in range(a, b):
                    if ds[k] in seen:
                        raise TrecFormatError(
                            f"{path}:{line_of[k]}: duplicate judgment of document {ds[k]!r} "
                            f"for query {qs[k]!r}"
                        )
                    seen.add(ds[k])
            if per_q is None:
                docs[qs[a]] = block
            else:
                per_q.update(block)
    return docs


def read_qrels(path: str) -> Qrels:
    """Read ``qid iter docno grade`` lines (whitespace separated; ``#`` comment lines skipped).

    A document judged twice for a query is an error naming the line. O(judgments) memory.

    Parameters
    ----------
    path : str
        The qrels file.

    Returns
    -------
    Qrels
        The grades per query and document.

    Raises
    ------
    TrecFormatError
        A malformed line, or a document judged twice for a query, naming file and line.

    Examples
    --------
    >>> from importlib.resources import files
    >>> from streammetrics.trec import read_qrels
    >>> qrels = files("streammetrics") / "data" / "example.qrels"
    >>> read_qrels(str(qrels)).docs
    {'q1': {'d1': 1.0, 'd2': 0.0}, 'q2': {'d3': 2.0}}
    """
    return Qrels(read_qrels_grades(path))


def read_judgments(path: str, rel_format: str) -> Mapping[str, list[dict[str, int]]]:
    """Each query's grades by document: one mapping (qrels, held as :class:`.compactqrels.
    CompactQrels`) or one per judgment group (qrels_jg). trec_eval reads grades with ``atol``:
    integers, fractions truncated toward zero.

    Parameters
    ----------
    path : str
        The judgments file.
    rel_format : {"qrels", "qrels_jg", "prefs", "qrels_prefs"}
        trec_eval's ``-R``; the preference formats are read by :func:`.preferences.read_prefs`
        instead (an empty mapping here).

    Returns
    -------
    mapping of str to list of dict of str to int
        ``judgments[qid]``: a list of ``{docno: grade}``, one item (qrels) or one per judgment
        group in bytewise order (qrels_jg).

    Raises
    ------
    ValueError
        For an unsupported ``rel_format`` (a :class:`TrecFormatError` for a malformed line).

    Examples
    --------
    >>> from importlib.resources import files
    >>> from streammetrics.trec.readers import read_judgments
    >>> qrels = read_judgments(str(files("streammetrics") / "data" / "example.qrels"), "qrels")
    >>> qrels["q1"]
    [{'d1': 1, 'd2': 0}]
    """
    if rel_format == "qrels":
        return read_compact_qrels(path)
    if rel_format in PREFS_FORMATS:
        return {}
    if rel_format == "qrels_jg":
        return {q: groups_in_order(groups) for q, groups in read_qrels_jg(path).items()}
    raise ValueError(
        f"rel_format (-R) {rel_format!r} is not supported; supported: qrels, qrels_jg, prefs, qrels_prefs"
    )


def read_zscores(path: str) -> dict[str, dict[str, tuple[float, float]]]:
    """trec_eval's ``-Z`` file: ``qid measure mean stddev`` lines -> {qid: {measure: (mean, sd)}}.

    Parameters
    ----------
    path : str
        The file; blank and ``#`` lines are skipped.

    Returns
    -------
    dict of str to dict of str to (float, float)
        Per query and measure, the mean and the standard deviation.

    Raises
    ------
    TrecFormatError
        Naming the line: other than 4 fields, or a mean or deviation that is not a finite number.

    Examples
    --------
    >>> import os, tempfile
    >>> from streammetrics.trec.readers import read_zscores
    >>> with tempfile.NamedTemporaryFile("w", suffix=".z", delete=False) as fh:
    ...     _ = fh.write("q1 map 0.3 0.1\\n")
    >>> read_zscores(fh.name)
    {'q1': {'map': (0.3, 0.1)}}
    >>> os.remove(fh.name)
    """
    out: dict[str, dict[str, tuple[float, float]]] = {}
    with utf8_errors(path), open(path, encoding="utf-8") as fh:
        for lineno, parts in text_fields(path, fh, 1, 4, "qid measure mean stddev"):
            try:
                mean, sd = float(parts[2]), float(parts[3])
            except ValueError:
                mean = sd = math.nan
            if not (math.isfinite(mean) and math.isfinite(sd)):
                raise TrecFormatError(f"{path}:{lineno}: mean and stddev must be finite numbers, "
                                      f"got {parts[2]!r} {parts[3]!r}")  # fmt: skip
            out.setdefault(parts[0], {})[parts[1]] = (mean, sd)
    return out


@filled
@dataclass
class RunChunk:
    """Complete queries read from a run file (what :func:`read_run_chunks` yields).

    Attributes
    ----------
    qids : list of str
        One per query, in file order.
    lengths : ndarray of int
        The documents of each query.
    docs : list of str
        The document ids of all the chunk's queries, query after query.
    scores : ndarray of float64
        Their scores, in the same order.
    runid : str
        The run id.

    Examples
    --------
    {example: run_file}
    >>> from streammetrics.trec import read_run_chunks
    >>> chunk = next(read_run_chunks(str(run)))
    >>> chunk.qids, chunk.lengths.tolist(), chunk.docs, chunk.scores.tolist(), chunk.runid
    (['q1'], [2], ['d2', 'd1'], [0.9, 0.5], 'sys')
    """

    qids: list[str]
    lengths: np.ndarray
    docs: list[str]
    scores: np.ndarray
    runid: str


def _bad_run_line(path: str, lineno: int, line: str) -> TrecFormatError | None:
    """The error for one run line, or None if it is well formed."""
    parts = line.split()
    if not parts:
        return None
    if len(parts) != 6:
        return TrecFormatError(
            f"{path}:{lineno}: expected 6 fields 'qid Q0 docno rank score runid', "
            f"got {len(parts)}: {line.strip()!r}"
        )
    try:
        s = float(parts[4])
    except ValueError:
        return TrecFormatError(f"{path}:{lineno}: score {parts[4]!r} is not a number")
    if math.isnan(s):
        return TrecFormatError(f"{path}:{lineno}: score is NaN")
    return None


def _split_run_lines(
    path: str, lines: list[str], first: int
) -> tuple[list[str], list[str], list[str], list[str], list[int]]:
    """Columns (qid, docno, score, runid) and line numbers of the non-blank run lines.

    Fast path: one ``split`` of the whole chunk with a sentinel token per line end, which also
    proves that every line has exactly 6 fields; otherwise line by line (blank lines skipped,
    anything else that is not 6 fields is an error naming the line).
    """
    n = len(lines)
    if not n:
        return [], [], [], [], []
    text = "".join(lines)
    if "\x00" not in text:
        tokens = text.replace("\n", " \x00 ").split()
        if not text.endswith("\n"):
            tokens.append("\x00")
        if len(tokens) == 7 * n and tokens[6::7].count("\x00") == n:
            return tokens[0::7], tokens[2::7], tokens[4::7], tokens[5::7], list(range(first, first + n))
    rows = [line.split() for line in lines]
    for i, r in enumerate(rows):
        if r and len(r) != 6:
            err = _bad_run_line(path, first + i, lines[i])
            assert err is not None
            raise err
    line_of = [first + i for i, r in enumerate(rows) if r]
    rows = [r for r in rows if r]
    if not rows:
        return [], [], [], [], []
    q_col, _, d_col, _, s_col, r_col = zip(*rows, strict=True)
    return list(q_col), list(d_col), list(s_col), list(r_col), line_of


def _first_duplicate(docs: list[str], starts: np.ndarray, ends: np.ndarray) -> int | None:
    """Index of the first document that repeats within its query (queries are [start, end)).

    Vectorised on string hashes (sort by query, hash); candidate queries are confirmed on the
    strings, so a hash collision is never reported.
    """
    cut = int(ends[-1]) if len(ends) else 0
    if cut < 2:
        return None
    keys = np.fromiter(map(hash, docs[:cut]), dtype=np.int64, count=cut)
    block = np.repeat(np.arange(len(starts)), ends - starts)
    order = np.lexsort((keys, block))
    k, bl = keys[order], block[order]
    same = (k[1:] == k[:-1]) & (bl[1:] == bl[:-1])
    if not same.any():
        return None
    for b in np.unique(bl[1:][same]).tolist():
        found: set[str] = set()
        for i in range(int(starts[b]), int(ends[b])):
            if docs[i] in found:
                return i
            found.add(docs[i])
    return None


@filled
def read_run_chunks(path: str, chunk_lines: int = 1 << 17) -> Iterator[RunChunk]:
    """Stream a run file (``qid Q0 docno rank score runid``) in chunks of complete queries.

    Parsing is per chunk: one ``split`` of the chunk, columns by slicing, scores converted by numpy;
    a malformed line, a NaN score, a document twice in a query, or a query whose lines are not
    contiguous raises :class:`TrecFormatError` naming file and line. Memory: one chunk.

    Parameters
    ----------
    {trec: run_path, chunk_lines}

    Yields
    ------
    RunChunk
        Complete queries, in file order.

    Examples
    --------
    {example: run_file}
    >>> from streammetrics.trec import read_run_chunks
    >>> [chunk.qids for chunk in read_run_chunks(str(run))]  # the last query waits for the end
    [['q1'], ['q2']]
    """
    seen: set[str] = set()
    carry: tuple[list[str], list[str], np.ndarray, list[int]] | None = None  # last, maybe partial, query
    runid = ""
    lineno = 0
    with utf8_errors(path), open(path, encoding="utf-8") as fh:
        while True:
            lines = list(itertools.islice(fh, chunk_lines))
            first = lineno + 1
            lineno += len(lines)
            qs, ds, s_col, r_col, line_of = _split_run_lines(path, lines, first)
            if qs:
                try:
                    sc = np.array(s_col, dtype=np.float64)
                except ValueError:
                    sc = np.zeros(0)
                    for i, tok in enumerate(s_col):
                        err = _bad_run_line(path, line_of[i], f"q Q0 d 0 {tok} r")
                        if err is not None:
                            raise err from None
                if np.isnan(sc).any():
                    i = int(np.flatnonzero(np.isnan(sc))[0])
                    raise TrecFormatError(f"{path}:{line_of[i]}: score is NaN")
                runid = r_col[-1]
            else:
                sc = np.zeros(0)
            if carry is not None:
                qs, ds = carry[0] + qs, carry[1] + ds
                sc = np.concatenate([carry[2], sc])
                line_of = carry[3] + line_of
            if not qs:
                if not lines:
                    break
                continue
            change = np.fromiter(map(operator.ne, qs[1:], qs[:-1]), dtype=bool, count=len(qs) - 1)
            starts = np.flatnonzero(np.concatenate([[True], change]))
            ends = np.append(starts[1:], len(qs))
            done = len(starts) - (1 if lines else 0)  # the last query may continue in the next chunk
            block_ids = [qs[i] for i in starts.tolist()]
            errors: list[tuple[int, str]] = []  # (line, message): the first in file order is raised
            for j, q in enumerate(block_ids):
                if q in seen:
                    errors.append(
                        (
                            line_of[int(starts[j])],
                            f"query {q!r} reappears after other queries; each query's lines must be "
                            "contiguous (sort the run with: sort -s -k1,1)",
                        )
                    )
                    break
                if j < done:
                    seen.add(q)
            cut = int(ends[done - 1]) if done > 0 else 0
            if cut:
                dup = _first_duplicate(ds, starts[:done], ends[:done])
                if dup is not None:
                    errors.append((line_of[dup], f"duplicate document {ds[dup]!r} for query {qs[dup]!r}"))
            if errors:
                line, message = min(errors)
                raise TrecFormatError(f"{path}:{line}: {message}")
            if done > 0:
                yield RunChunk(block_ids[:done], (ends - starts)[:done], ds[:cut], sc[:cut], runid)
            carry = (qs[cut:], ds[cut:], sc[cut:], line_of[cut:]) if cut < len(qs) else None
            if not lines:
                break


@filled
def iter_run(path: str) -> Iterator[tuple[str, list[str], list[float], str]]:
    """Stream a run file query by query as (qid, docnos, scores, runid); see
    :func:`read_run_chunks` for the checks.

    Parameters
    ----------
    {trec: run_path}

    Yields
    ------
    tuple of (str, list of str, list of float, str)
        Each query's id, document ids, scores and the run id.

    Examples
    --------
    {example: run_file}
    >>> from streammetrics.trec import iter_run
    >>> list(iter_run(str(run)))
    [('q1', ['d2', 'd1'], [0.9, 0.5], 'sys'), ('q2', ['d3'], [0.7], 'sys')]
    """
    for chunk in read_run_chunks(path):
        pos = 0
        for q, n in zip(chunk.qids, chunk.lengths.tolist(), strict=True):
            yield q, chunk.docs[pos : pos + n], chunk.scores[pos : pos + n].tolist(), chunk.runid
            pos += n
