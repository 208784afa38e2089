"""Judgments held compactly (numpy arrays, no Python object per judgment) and looked up a block of
run lines at a time.

Per judgment: its grade (int64, read with trec_eval's ``atol`` rule: truncated toward zero), a
lookup key (the query's number in the top 23 bits, 40 bits of the docno's hash below), and where
its docno lies in one bytes blob -- about 28 bytes plus the docno, where a dict of Python strings
takes about 130. Each query's judgments are sorted by key, so a block of run lines is judged by
one ``searchsorted``; every match is confirmed on the docno's bytes, so a hash collision never
gives a wrong grade (two judged docnos of one query sharing a key send that query to the
per-query path, :attr:`CompactQrels.ambiguous`).
"""

from __future__ import annotations

import itertools
import operator
from collections.abc import Iterator, Mapping

import numpy as np

from .binread import CHUNK_BYTES, byte_chunks, qrels_columns
from .readers import TrecFormatError

__all__ = ["CompactQrels", "read_compact_qrels", "MISSING"]

_LOW = (1 << 40) - 1
MISSING = -(2**62)  # the grade of a document not in the qrels


class CompactQrels(Mapping[str, list[dict[str, int]]]):
    """Judgments by query, as arrays (built by :func:`read_compact_qrels` or :meth:`from_dict`).

    As a mapping it is what :func:`.evaluate.read_judgments` gives: ``qrels[qid]`` is a one-item
    list with the query's ``{docno: grade}`` in file order (built on demand, O(judgments of the
    query)); :meth:`lookup` judges many run lines at once.

    Attributes
    ----------
    qids : list of str
        The queries in order of first appearance.
    bounds : ndarray of int64
        Query ``i``'s judgments are ``[bounds[i], bounds[i + 1])``, sorted by key.
    sorted_keys, grades, starts, lengths : ndarray
        Per judgment: lookup key, grade, and its docno as ``blob[start : start + length]``.
    ambiguous : ndarray of bool
        Per query: two of its docnos share a key (looked up query by query instead).

    Examples
    --------
    >>> from streammetrics.trec.compactqrels import CompactQrels
    >>> qrels = CompactQrels.from_dict({"q1": {"d1": 2, "d2": 0}})
    >>> qrels["q1"], len(qrels), "q2" in qrels
    ([{'d1': 2, 'd2': 0}], 1, False)
    """

    def __init__(self, qids: list[str], bounds: np.ndarray, keys: np.ndarray, grades: np.ndarray,
                 starts: np.ndarray, lengths: np.ndarray, blob: bytes,
                 ambiguous: np.ndarray) -> None:  # fmt: skip
        self.qids, self.bounds, self.sorted_keys, self.grades = qids, bounds, keys, grades
        self.starts, self.lengths, self.blob, self.ambiguous = starts, lengths, blob, ambiguous
        self.index = {q: i for i, q in enumerate(qids)}
        self._cached: tuple[str, list[dict[str, int]]] | None = None
        self._counts: dict[float, np.ndarray] = {}

    @classmethod
    def from_dict(cls, docs: Mapping[str, Mapping[str, int]]) -> CompactQrels:
        """The judgments ``{qid: {docno: grade}}`` (grades integers). O(judgments)."""
        qs = [q.encode("utf-8") for q, per_q in docs.items() for _ in per_q]
        ds = [d.encode("utf-8") for per_q in docs.values() for d in per_q]
        grades = np.fromiter((int(g) for per_q in docs.values() for g in per_q.values()), dtype=np.int64,
                             count=len(ds))  # fmt: skip
        index: dict[bytes, int] = {}
        lines = np.arange(1, len(ds) + 1, dtype=np.int64)
        return _build("<dict>", index, [_pack(index, qs, ds, grades, lines)])

    def __getitem__(self, qid: str) -> list[dict[str, int]]:
        if self._cached is not None and self._cached[0] == qid:
            return self._cached[1]
        i = self.index[qid]
        a, b = int(self.bounds[i]), int(self.bounds[i + 1])
        order = np.argsort(self.starts[a:b], kind="stable") + a  # file order
        st, ln = self.starts[order].tolist(), self.lengths[order].tolist()
        docs = [self.blob[s : s + n].decode("utf-8") for s, n in zip(st, ln, strict=True)]
        out = [dict(zip(docs, self.grades[order].tolist(), strict=True))]
        self._cached = (qid, out)
        return out

    def __iter__(self) -> Iterator[str]:
        return iter(self.qids)

    def __len__(self) -> int:
        return len(self.qids)

    def __contains__(self, qid: object) -> bool:
        return qid in self.index

    def counts(self, level: float) -> np.ndarray:
        """(relevant: grade >= level, judged nonrelevant: 0 <= grade < level) per query, shape
        (queries, 2). O(judgments), cached per level."""
        if level not in self._counts:
            seg = np.repeat(np.arange(len(self.qids)), np.diff(self.bounds))
            g = self.grades
            rel = np.bincount(seg, weights=g >= level, minlength=len(self.qids))
            nonrel = np.bincount(seg, weights=(g >= 0) & (g < level), minlength=len(self.qids))
            self._counts[level] = np.stack([rel, nonrel], axis=1).astype(np.int64)
        return self._counts[level]

    def lookup(self, query: np.ndarray, docs: list[bytes], hashes: np.ndarray) -> np.ndarray:
        """The grade of each run line (:data:`MISSING` when not judged): ``query`` its query's
        number here (-1: a query not in the qrels), ``docs`` its docno, ``hashes`` their
        ``hash``. O(n log judgments)."""
        out = np.full(len(docs), MISSING, dtype=np.int64)
        if not len(self.sorted_keys):
            return out
        valid = query >= 0
        key = (query.astype(np.int64) << 40) | (hashes & _LOW)
        pos = np.minimum(np.searchsorted(self.sorted_keys, key), len(self.sorted_keys) - 1)
        rows = np.flatnonzero(valid & (self.sorted_keys[pos] == key))
        p = pos[rows]
        st = self.starts[p]
        blob = self.blob
        judged = map(blob.__getitem__, map(slice, st.tolist(), (st + self.lengths[p]).tolist()))
        same = np.fromiter(map(operator.eq, map(docs.__getitem__, rows.tolist()), judged), dtype=bool,
                           count=len(rows))  # fmt: skip
        out[rows[same]] = self.grades[p[same]]
        return out


_Packed = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, bytes]


def _pack(index: dict[bytes, int], qs: list[bytes], ds: list[bytes], g: np.ndarray,
          ln: np.ndarray) -> _Packed:  # fmt: skip
    """A chunk's columns as arrays (query number, docno hash, docno length, grade, line, docno blob);
    new query ids get the next numbers in ``index``."""
    runs = [(q, len(list(grp))) for q, grp in itertools.groupby(qs)]
    nums = np.asarray([index.setdefault(q, len(index)) for q, _ in runs], dtype=np.int64)
    qn = np.repeat(nums, np.asarray([n for _, n in runs], dtype=np.int64))
    hashes = np.fromiter(map(hash, ds), dtype=np.int64, count=len(ds))
    lengths = np.fromiter(map(len, ds), dtype=np.int64, count=len(ds))
    return qn, hashes, lengths, g.astype(np.int64), ln, b"".join(ds)


def _build(path: str, index: dict[bytes, int], parts: list[_Packed]) -> CompactQrels:
    """The :class:`CompactQrels` of the packed chunks (in file order): a docno judged twice for a
    query is an error naming the first repeating line."""
    if len(index) >= 1 << 23:
        raise ValueError(f"qrels: more than {1 << 23} queries in {path!r}")

    def cat(j: int) -> np.ndarray:
        return np.concatenate([p[j] for p in parts]) if parts else np.zeros(0, dtype=np.int64)

    qn, h, ln_, g, line = cat(0), cat(1), cat(2), cat(3), cat(4)
    start = np.concatenate([[0], np.cumsum(ln_)[:-1]]).astype(np.int64) if len(ln_) else ln_
    keys = (qn << 40) | (h & _LOW)
    order = np.argsort(keys, kind="stable")  # by query, then key; file order among equal keys
    keys, g, start, ln_, line, qn = keys[order], g[order], start[order], ln_[order], line[order], qn[order]
    blob = b"".join(p[5] for p in parts)
    ambiguous = np.zeros(len(index), dtype=bool)
    same = np.flatnonzero(keys[1:] == keys[:-1])
    first_dup: tuple[int, str, str] | None = None
    qids = [q.decode("utf-8") for q in index]
    for k in same.tolist():  # equal keys: the same docno judged twice, or a hash collision
        a, b = blob[start[k] : start[k] + ln_[k]], blob[start[k + 1] : start[k + 1] + ln_[k + 1]]
        if a != b:
            ambiguous[qn[k]] = True
            continue
        later = int(max(line[k], line[k + 1]))
        if first_dup is None or later < first_dup[0]:
            first_dup = (later, a.decode("utf-8"), qids[int(qn[k])])
    for q in np.flatnonzero(ambiguous).tolist():  # colliding keys may separate repeats: compare all
        rows = np.flatnonzero(qn == q)
        seen: set[bytes] = set()
        for k in rows[np.argsort(line[rows], kind="stable")].tolist():
            d = blob[start[k] : start[k] + ln_[k]]
            if d in seen and (first_dup is None or int(line[k]) < first_dup[0]):
                first_dup = (int(line[k]), d.decode("utf-8"), qids[q])
            seen.add(d)
    if first_dup is not None:
        raise TrecFormatError(f"{path}:{first_dup[0]}: duplicate judgment of document {first_dup[1]!r} "
                              f"for query {first_dup[2]!r}")  # fmt: skip
    bounds = np.searchsorted(qn, np.arange(len(index) + 1)).astype(np.int64)
    return CompactQrels(qids, bounds, keys, g, start, ln_.astype(np.int32), blob, ambiguous)


def read_compact_qrels(path: str, chunk_bytes: int = CHUNK_BYTES) -> CompactQrels:
    """Read a qrels file (``qid iter docno grade`` lines; blank and ``#`` lines skipped) into
    :class:`CompactQrels`. A malformed line, or a docno judged twice for a query, is a
    :class:`.readers.TrecFormatError` naming the line (the first in file order). One pass, O(file)
    time, O(judgments) memory.

    Examples
    --------
    >>> from importlib.resources import files
    >>> from streammetrics.trec.compactqrels import read_compact_qrels
    >>> qrels = read_compact_qrels(str(files("streammetrics") / "data" / "example.qrels"))
    >>> dict(qrels)
    {'q1': [{'d1': 1, 'd2': 0}], 'q2': [{'d3': 2}]}
    """
    parts: list[_Packed] = []
    index: dict[bytes, int] = {}
    lineno = 1
    try:
        for chunk in byte_chunks(path, chunk_bytes):
            qs, ds, grades, line_of, n = qrels_columns(path, chunk, lineno)
            lineno += n
            if qs:
                parts.append(_pack(index, qs, ds, grades, line_of))
    except TrecFormatError:
        _build(path, index, parts)  # a duplicate judgment before the malformed line is reported first
        raise
    return _build(path, index, parts)
