"""TREC file readers and the ``streammetrics trec QRELS RUN`` command (trec_eval's output format).

``streammetrics trec QRELS RUN [-m MEASURE ...] [-q] [-c] [-l LEVEL]`` reads a qrels file
(``qid iter docno grade``) into memory (judgments are small) and streams the run file
(``qid Q0 docno rank score runid``) query by query, evaluating batches of queries with the
retrieval accumulators; it prints ``measure<TAB>qid|all<TAB>value`` lines as trec_eval does, so
existing scripts can switch. Measure names are trec_eval's: ``map``, ``map_cut_K``, ``P_K``,
``recall_K``, ``Rprec``, ``recip_rank``, ``ndcg``, ``ndcg_cut_K``, ``set_P``, ``set_recall``,
``iprec_at_recall_0.10``, ``11pt_avg``, ``num_q``, ``num_ret``, ``num_rel``, ``num_rel_ret``,
``runid``; a family name alone (``P``, ``map_cut``, ``ndcg_cut``, ``recall``, ``iprec_at_recall``)
means trec_eval's default cutoffs, and ``P.5,10`` picks cutoffs.

To print trec_eval's values the command uses trec_eval's conventions where the library's defaults
differ: AP@k divides by R (``denominator="R"``), interpolated precision uses trec_eval's rule
(``interpolation="trec"``), scores are rounded to float32 before ranking
(trec_eval stores them as C floats, so scores equal in float32 tie), ties are broken by document id
descending, and only queries present in both files are averaged (``-c``: every qrels query, a query
missing from the run scoring 0). The rank column is ignored (trec_eval sorts by score).

Differences from trec_eval: each query's lines must be contiguous in the run file (a query that
reappears is an error naming the line: sort the run with ``sort -s -k1,1``); with ``-q`` queries
are printed in run-file order. Memory: the qrels plus one batch of queries.
"""

from __future__ import annotations

import argparse
import itertools
import math
import operator
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import IO, Any

import numpy as np

from .metricset import MetricSet
from .retrieval import (
    MAP,
    MRR,
    NDCG,
    ElevenPointAP,
    InterpolatedPrecision,
    PrecisionAtK,
    RecallAtK,
    RetrievalMetric,
    RPrecision,
    SetPrecision,
    SetRecall,
)

__all__ = ["read_qrels", "iter_run", "trec_metrics", "evaluate_files", "main", "add_parser"]

DEFAULT_CUTOFFS = (5, 10, 15, 20, 30, 100, 200, 500, 1000)
IPREC_CUTOFFS = tuple(i / 10 for i in range(11))
DEFAULT_MEASURES = ("runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "Rprec", "recip_rank", "P")
_COUNTERS = {"num_ret": "retrieved", "num_rel": "relevant", "num_rel_ret": "relevant_retrieved"}
_COUNT_COLUMN = {"num_ret": 1, "num_rel": 2, "num_rel_ret": 0}


class TrecFormatError(ValueError):
    """A malformed line in a qrels or run file (the message names file and line)."""


@dataclass
class Qrels:
    """Judgments per query: document ids and their grades (in file order)."""

    docs: dict[str, dict[str, float]]

    def grades(self, qid: str) -> np.ndarray:
        return np.fromiter(self.docs.get(qid, {}).values(), dtype=np.float64)


def read_qrels(path: str) -> Qrels:
    """Read ``qid iter docno grade`` lines (whitespace separated). O(judgments) memory."""
    docs: dict[str, dict[str, float]] = {}
    with open(path, encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, start=1):
            parts = line.split()
            if not parts:
                continue
            if len(parts) != 4:
                raise TrecFormatError(
                    f"{path}:{lineno}: expected 4 fields 'qid iter docno grade', "
                    f"got {len(parts)}: {line.strip()!r}"
                )
            qid, _, docno, grade = parts
            try:
                g = float(grade)
            except ValueError:
                raise TrecFormatError(f"{path}:{lineno}: grade {grade!r} is not a number") from None
            if not math.isfinite(g):
                raise TrecFormatError(f"{path}:{lineno}: grade {grade!r} is not finite")
            per_q = docs.setdefault(qid, {})
            if docno in per_q:
                raise TrecFormatError(
                    f"{path}:{lineno}: duplicate judgment of document {docno!r} for query {qid!r}"
                )
            per_q[docno] = g
    return Qrels(docs)


@dataclass
class RunChunk:
    """Complete queries read from a run file: ``qids`` (one per query, file order), ``lengths``
    (documents per query), flat ``docs`` and ``scores`` (float64), and the run id."""

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


def read_run_chunks(path: str, chunk_lines: int = 1 << 17) -> Iterator[RunChunk]:
    """Stream a run file (``qid Q0 docno rank score runid``) in chunks of complete queries.

    Parsing is per chunk: one ``split`` of the chunk, columns by slicing, scores converted by numpy;
    a malformed line, a NaN score, a document twice in a query, or a query whose lines are not
    contiguous raises :class:`TrecFormatError` naming file and line. Memory: one chunk.
    """
    seen: set[str] = set()
    carry: tuple[list[str], list[str], np.ndarray, list[int]] | None = None  # last, maybe partial, query
    runid = ""
    lineno = 0
    with open(path, encoding="utf-8") as fh:
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


def iter_run(path: str) -> Iterator[tuple[str, list[str], list[float], str]]:
    """Stream a run file query by query as (qid, docnos, scores, runid); see
    :func:`read_run_chunks` for the checks."""
    for chunk in read_run_chunks(path):
        pos = 0
        for q, n in zip(chunk.qids, chunk.lengths.tolist(), strict=True):
            yield q, chunk.docs[pos : pos + n], chunk.scores[pos : pos + n].tolist(), chunk.runid
            pos += n


def _parse_measure(name: str) -> list[str]:
    """Expand trec_eval measure syntax to single names: ``P`` / ``P.5,10`` / ``P_5``."""
    families = {"P": "P_", "recall": "recall_", "map_cut": "map_cut_", "ndcg_cut": "ndcg_cut_"}
    if name.startswith("iprec_at_recall_"):
        return [name]
    base, dot, cuts = name.partition(".")
    if base == "iprec_at_recall":
        levels = IPREC_CUTOFFS if not dot else tuple(float(c) for c in cuts.split(",") if c)
        return [f"iprec_at_recall_{c:.2f}" for c in levels]
    if base in families:
        ks = DEFAULT_CUTOFFS if not dot else tuple(int(c) for c in cuts.split(",") if c)
        return [f"{families[base]}{k}" for k in ks]
    if dot:
        raise ValueError(
            f"measure {name!r}: only P, recall, map_cut, ndcg_cut and iprec_at_recall take cutoffs"
        )
    return [name]


def trec_metrics(
    names: Sequence[str], rel_level: float = 1, per_query: bool = False
) -> dict[str, RetrievalMetric]:
    """Accumulators that print trec_eval's values for the given (single) trec_eval measure names."""
    out: dict[str, RetrievalMetric] = {}
    kw: dict[str, Any] = {"rel_level": rel_level, "per_query": per_query}
    for name in names:
        if name in ("runid", "num_q"):
            continue
        if name in _COUNTERS:
            out["_set"] = SetPrecision(average="micro", **kw)
            continue
        family, _, k = name.rpartition("_")
        try:
            if name == "map":
                out[name] = MAP(**kw)
            elif name == "Rprec":
                out[name] = RPrecision(**kw)
            elif name == "recip_rank":
                out[name] = MRR(**kw)
            elif name == "ndcg":
                out[name] = NDCG(per_query=per_query)
            elif name == "set_P":
                out[name] = SetPrecision(**kw)
            elif name == "set_recall":
                out[name] = SetRecall(**kw)
            elif name == "11pt_avg":
                out[name] = ElevenPointAP(interpolation="trec", **kw)
            elif family == "iprec_at_recall":
                out[name] = InterpolatedPrecision(float(k), interpolation="trec", **kw)
            elif family == "P":
                out[name] = PrecisionAtK(int(k), **kw)
            elif family == "recall":
                out[name] = RecallAtK(int(k), **kw)
            elif family == "map_cut":
                out[name] = MAP(int(k), denominator="R", **kw)
            elif family == "ndcg_cut":
                out[name] = NDCG(int(k), per_query=per_query)
            else:
                raise ValueError
        except ValueError:
            raise ValueError(
                f"measure {name!r} is not supported; supported: runid num_q num_ret num_rel num_rel_ret map "
                "map_cut_K P_K recall_K Rprec recip_rank ndcg ndcg_cut_K set_P set_recall "
                "iprec_at_recall_X 11pt_avg"
            ) from None
    return out


def _key(name: str) -> str:
    """A MetricSet member name (an identifier) for a trec_eval measure name."""
    return "m_" + name.replace(".", "_dot_")


def _unkey(key: str) -> str:
    return key[2:].replace("_dot_", ".")


def _metric_set(metrics: dict[str, RetrievalMetric]) -> MetricSet:
    return MetricSet({_key(name): m for name, m in metrics.items()})


def _fmt(value: float | int | str, digits: int) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    return f"{value:.{digits}f}"


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
) -> dict[str, float | int | str]:
    """Evaluate a run against qrels as trec_eval does; print trec_eval's lines to ``out``.

    Returns the ``all`` values by measure name. Cost: one pass over the run file, each chunk of
    complete queries (see :func:`read_run_chunks`) through one MetricSet (one ranking per chunk).
    """
    out = sys.stdout if out is None else out
    names: list[str] = []
    for m in measures:
        for n in _parse_measure(m):
            if n not in names:
                names.append(n)
    total = _metric_set(trec_metrics(names, rel_level))
    qrels = read_qrels(qrels_path)
    seen: set[str] = set()
    runid = ""
    num_q = 0

    def lines(qid: str, values: dict[str, Any]) -> None:
        for n in names:
            if n in values:
                out.write(f"{n:<22}\t{qid}\t{_fmt(values[n], digits)}\n")

    def evaluate_chunk(chunk: RunChunk) -> None:
        nonlocal num_q
        lengths = chunk.lengths
        keep = np.array([q in qrels.docs for q in chunk.qids], dtype=bool)
        qids = [q for q, k in zip(chunk.qids, keep.tolist(), strict=True) if k]
        if not qids:
            return
        seen.update(qids)
        rel = np.zeros(len(chunk.docs))
        pos = 0
        for qid, n in zip(chunk.qids, lengths.tolist(), strict=True):
            judged = qrels.docs.get(qid)
            if judged:
                rel[pos : pos + n] = [judged.get(d, 0.0) for d in chunk.docs[pos : pos + n]]
            pos += n
        # trec_eval keeps scores as C floats: round to float32 so that its ties are ours.
        scores = chunk.scores.astype(np.float32).astype(np.float64)
        docs = np.array(chunk.docs, dtype=object)
        if not keep.all():  # trec_eval evaluates the queries judged in the qrels only
            rows = np.repeat(keep, lengths)
            rel, scores, docs, lengths = rel[rows], scores[rows], docs[rows], lengths[keep]
        kwargs = {
            "doc_ids": docs,
            "query_ids": np.repeat(np.arange(len(qids)), lengths),
            "judged": [qrels.grades(q) for q in qids],
        }
        total.update(rel, scores, **kwargs)
        num_q += len(qids)
        if per_query:
            part = _metric_set(trec_metrics(names, rel_level, per_query=True))
            part.update(rel, scores, **kwargs)
            members = {_unkey(name): m for name, m in part.items() if isinstance(m, RetrievalMetric)}
            cols = {name: m.per_query_values() for name, m in members.items()}
            pooled_q = members.get("_set")
            counts = pooled_q.per_query_counts() if isinstance(pooled_q, SetPrecision) else None
            for i, q in enumerate(qids):
                vals: dict[str, Any] = {}
                for n in names:
                    if n in cols:
                        vals[n] = float(cols[n][i])
                    elif n in _COUNTERS and counts is not None:
                        vals[n] = int(counts[i, _COUNT_COLUMN[n]])
                lines(q, vals)

    for chunk in read_run_chunks(run_path):
        runid = chunk.runid
        evaluate_chunk(chunk)
    if complete:  # every judged query counts; one missing from the run retrieved nothing
        for qid in qrels.docs:
            if qid not in seen:
                total.update(np.zeros(0), np.zeros(0), judged=qrels.grades(qid))
                num_q += 1

    results: dict[str, float | int | str] = {}
    values = {_unkey(k): v for k, v in total.compute().items()} if num_q else {}
    pooled = dict(total.items()).get(_key("_set"))
    for n in names:
        if n == "runid":
            results[n] = runid
        elif n == "num_q":
            results[n] = num_q
        elif n in _COUNTERS:
            results[n] = pooled.totals()[_COUNTERS[n]] if isinstance(pooled, SetPrecision) and num_q else 0
        else:
            results[n] = float(values[n]) if num_q else 0.0
    lines("all", results)
    return results


def add_parser(sub: Any) -> argparse.ArgumentParser:
    """Register the ``trec`` subcommand on an argparse subparsers object."""
    p: argparse.ArgumentParser = sub.add_parser(
        "trec", help="evaluate a TREC run against qrels (trec_eval's measures and output format)"
    )
    p.add_argument("qrels", help="qrels file: qid iter docno grade")
    p.add_argument("run", help="run file: qid Q0 docno rank score runid (each query's lines contiguous)")
    p.add_argument(
        "-m",
        dest="measures",
        action="append",
        default=None,
        help="measure (trec_eval name; repeatable), e.g. map, P_5, P.5,10, ndcg_cut_10",
    )
    p.add_argument("-q", dest="per_query", action="store_true", help="also print each query's values")
    p.add_argument(
        "-c",
        dest="complete",
        action="store_true",
        help="average over every qrels query (queries missing from the run score 0)",
    )
    p.add_argument("-l", dest="rel_level", type=float, default=1, help="relevance level of binary measures")
    p.add_argument("--digits", type=int, default=4, help="decimals printed (trec_eval: 4)")
    return p


def run(args: argparse.Namespace) -> int:
    """Entry point of ``streammetrics trec`` (errors go to stderr with exit status 2)."""
    try:
        evaluate_files(
            args.qrels,
            args.run,
            args.measures or DEFAULT_MEASURES,
            per_query=args.per_query,
            complete=args.complete,
            rel_level=args.rel_level,
            digits=args.digits,
        )
    except (OSError, ValueError) as exc:
        print(f"streammetrics trec: error: {exc}", file=sys.stderr)
        return 2
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="streammetrics")
    sub = parser.add_subparsers(dest="command", required=True)
    add_parser(sub)
    return run(parser.parse_args(argv))
