"""Reading a TREC run as trec_eval does: any line order, comments, extra trailing fields.

:func:`read_run_grouped` groups the run's lines by query in memory (trec_eval itself reads the
whole file): O(run lines) memory. Lines are ``qid Q0 docno rank score runid [anything ...]``; blank
lines and lines whose first non-blank character is ``#`` are skipped; fields after the sixth are
ignored; the rank column is ignored (trec_eval ranks by score). Unlike trec_eval (whose ``atof``
reads ``high`` as 0), a score that is not a number, or NaN, is an error naming file and line.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from .readers import TrecFormatError


@dataclass
class QueryLines:
    """One query's retrieved documents in file order, with their scores and line numbers."""

    docs: list[str] = field(default_factory=list)
    scores: list[float] = field(default_factory=list)
    lines: list[int] = field(default_factory=list)


@dataclass
class GroupedRun:
    """A run grouped by query (file order of first appearance) and its run id (the last line's,
    as trec_eval reports it)."""

    queries: dict[str, QueryLines]
    runid: str


def _score(path: str, lineno: int, token: str) -> float:
    try:
        s = float(token)
    except ValueError:
        raise TrecFormatError(f"{path}:{lineno}: score {token!r} is not a number") from None
    if math.isnan(s):
        raise TrecFormatError(f"{path}:{lineno}: score is NaN")
    return s


def read_run_grouped(path: str) -> GroupedRun:
    """Read a run file into per-query lists. Cost: one pass, O(lines) time and memory."""
    queries: dict[str, QueryLines] = {}
    runid = ""
    with open(path, encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, start=1):
            parts = line.split()
            if not parts or parts[0].startswith("#"):
                continue
            if len(parts) < 6:
                raise TrecFormatError(
                    f"{path}:{lineno}: expected 6 fields 'qid Q0 docno rank score runid', "
                    f"got {len(parts)}: {line.strip()!r}"
                )
            q = queries.get(parts[0])
            if q is None:
                q = queries[parts[0]] = QueryLines()
            q.docs.append(parts[2])
            q.scores.append(_score(path, lineno, parts[4]))
            q.lines.append(lineno)
            runid = parts[5]
    return GroupedRun(queries, runid)


def read_zscores(path: str) -> dict[str, dict[str, tuple[float, float]]]:
    """trec_eval's ``-Z`` file: ``qid measure mean stddev`` lines -> {qid: {measure: (mean, sd)}}."""
    out: dict[str, dict[str, tuple[float, float]]] = {}
    with open(path, encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, start=1):
            parts = line.split()
            if not parts or parts[0].startswith("#"):
                continue
            if len(parts) != 4:
                raise TrecFormatError(
                    f"{path}:{lineno}: expected 4 fields 'qid measure mean stddev', got {len(parts)}"
                )
            try:
                mean, sd = float(parts[2]), float(parts[3])
            except ValueError:
                raise TrecFormatError(f"{path}:{lineno}: mean and stddev must be numbers") from None
            out.setdefault(parts[0], {})[parts[1]] = (mean, sd)
    return out
