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
from .checked import TrecFormatError

__all__ = ["CompactQrels", "read_compact_qrels", "MISSING"]

_LOW = (1 << 40) - 1
MISSING = -(2**62)  # the grade of a document not in the qrels


class CompactQrels(Mapping[str, list[dict[str, int]]]):
    """Judgments by query, as arrays (built by :func:`read_compact_qrels` or :meth:`from_dict`).

    As a mapping it is what :func:`.readers.read_judgments` gives: ``qrels[qid]`` is a one-item
    list with the query's ``{docno: grade}`` in file order (built on demand, O(judgments of the
    query)); :meth:`lookup` judges many run lines at once.

    Parameters
    ----------
    qids : list of str
        The queries in order of first appearance.
    bounds : ndarray of int64
        Query ``i``'s judgments are ``[bounds[i], bounds[i + 1])``, sorted by key.
    keys, grades, starts, lengths : ndarray
        Per judgment: lookup key, grade, and its docno as ``blob[start : start + length]``.
    blob : bytes
        The docnos (UTF-8), one after the other.
    ambiguous : ndarray of bool
        Per query: two of its docnos share a key (looked up query by query instead).

    Attributes
    ----------
    qids, bounds, grades, starts, lengths, blob, ambiguous
        As given.
    sorted_keys : ndarray of int64
        ``keys``.
    index : dict of str to int
        The position of each query in ``qids``.

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
        parts = _Parts()
        if ds:
            parts.add(qs, ds, grades, np.arange(1, len(ds) + 1, dtype=np.int64))
        return _build("<dict>", parts)

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
        ``hash``. O(n log judgments) (lines of :attr:`ambiguous` queries: a dict lookup each)."""
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
        for r in np.flatnonzero(valid & self.ambiguous[np.maximum(query, 0)]).tolist():  # rare: by dict
            out[r] = self[self.qids[int(query[r])]][0].get(docs[r].decode("utf-8"), MISSING)
        return out


class _Parts:
    """The packed chunks of a qrels file, one list per column (freed column by column)."""

    def __init__(self) -> None:
        self.index: dict[bytes, int] = {}
        self.keys: list[np.ndarray] = []
        self.lengths: list[np.ndarray] = []
        self.grades: list[np.ndarray] = []
        self.lines: list[np.ndarray] = []
        self.blobs: list[bytes] = []

    def add(self, qs: list[bytes], ds: list[bytes], g: np.ndarray, ln: np.ndarray) -> None:
        """A chunk's columns: lookup keys, docno lengths, grades, lines, docno blob (new query ids
        get the next numbers)."""
        runs = [(q, len(list(grp))) for q, grp in itertools.groupby(qs)]
        nums = np.asarray([self.index.setdefault(q, len(self.index)) for q, _ in runs], dtype=np.int64)
        qn = np.repeat(nums, np.asarray([n for _, n in runs], dtype=np.int64))
        self.keys.append((qn << 40) | (np.fromiter(map(hash, ds), dtype=np.int64, count=len(ds)) & _LOW))
        self.lengths.append(np.fromiter(map(len, ds), dtype=np.int32, count=len(ds)))
        self.grades.append(g.astype(np.int64))
        self.lines.append(ln)
        self.blobs.append(b"".join(ds))


def _take(chunks: list[np.ndarray], dtype: type) -> np.ndarray:
    """The chunks concatenated (the list emptied, so each chunk is freed)."""
    out = np.concatenate(chunks) if chunks else np.zeros(0, dtype=dtype)
    chunks.clear()
    return out


def _build(path: str, parts: _Parts) -> CompactQrels:
    """The :class:`CompactQrels` of the packed chunks (in file order): a docno judged twice for a
    query is an error naming the first repeating line. Memory: about 60 bytes per judgment at the
    peak, 28 plus the docno kept."""
    index = parts.index
    if len(index) >= 1 << 23:
        raise ValueError(f"qrels: more than {1 << 23} queries in {path!r}")
    keys = _take(parts.keys, np.int64)
    order = np.argsort(keys, kind="stable")  # by query, then key; file order among equal keys
    keys = keys[order]
    lengths = _take(parts.lengths, np.int32)
    start = np.zeros(len(lengths), dtype=np.int64)
    np.cumsum(lengths[:-1], out=start[1:])
    start, lengths = start[order], lengths[order]
    grades = _take(parts.grades, np.int64)[order]
    line = _take(parts.lines, np.int64)  # in file order: line[order[k]] is sorted row k's
    blob = b"".join(parts.blobs)
    parts.blobs.clear()
    ambiguous = np.zeros(len(index), dtype=bool)
    first_dup: tuple[int, str, str] | None = None
    qids = [q.decode("utf-8") for q in index]

    def doc(k: int) -> bytes:
        return blob[int(start[k]) : int(start[k]) + int(lengths[k])]

    for k in np.flatnonzero(keys[1:] == keys[:-1]).tolist():  # a docno judged twice, or a collision
        q = int(keys[k]) >> 40
        if doc(k) != doc(k + 1):
            ambiguous[q] = True
            continue
        later = int(max(line[order[k]], line[order[k + 1]]))
        if first_dup is None or later < first_dup[0]:
            first_dup = (later, doc(k).decode("utf-8"), qids[q])
    bounds = np.searchsorted(keys, np.arange(len(index) + 1, dtype=np.int64) << 40).astype(np.int64)
    for q in np.flatnonzero(ambiguous).tolist():  # colliding keys may separate repeats: compare all
        rows = np.arange(bounds[q], bounds[q + 1])
        seen: set[bytes] = set()
        for k in rows[np.argsort(line[order[rows]], kind="stable")].tolist():
            d = doc(k)
            if d in seen and (first_dup is None or int(line[order[k]]) < first_dup[0]):
                first_dup = (int(line[order[k]]), d.decode("utf-8"), qids[q])
            seen.add(d)
    if first_dup is not None:
        raise TrecFormatError(f"{path}:{first_dup[0]}: duplicate judgment of document {first_dup[1]!r} "
                              f"for query {first_dup[2]!r}")  # fmt: skip
    return CompactQrels(qids, bounds, keys, grades, start, lengths, blob, ambiguous)


def read_compact_qrels(path: str, chunk_bytes: int = CHUNK_BYTES) -> CompactQrels:
    """Read a qrels file (``qid iter docno grade`` lines; blank and ``#`` lines skipped) into
    :class:`CompactQrels`. A malformed line, or a docno judged twice for a query, is a
    :class:`.checked.TrecFormatError` naming the line (the first in file order). One pass, O(file)
    time, O(judgments) memory.

    Parameters
    ----------
    path : str
        The qrels file.
    chunk_bytes : int, default=CHUNK_BYTES
        The bytes read at once.

    Returns
    -------
    CompactQrels
        The judgments; grades read as C's ``atol`` (integers, fractions truncated toward zero).

    Raises
    ------
    TrecFormatError
        For a malformed line or a document judged twice for a query.

    Examples
    --------
    >>> from importlib.resources import files
    >>> from streammetrics.trec.compactqrels import read_compact_qrels
    >>> qrels = read_compact_qrels(str(files("streammetrics") / "data" / "example.qrels"))
    >>> dict(qrels)
    {'q1': [{'d1': 1, 'd2': 0}], 'q2': [{'d3': 2}]}
    """
    parts = _Parts()
    lineno = 1
    try:
        for chunk in byte_chunks(path, chunk_bytes):
            qs, ds, grades, line_of, n = qrels_columns(path, chunk, lineno)
            lineno += n
            if qs:
                parts.add(qs, ds, grades, line_of)
    except TrecFormatError:
        _build(path, parts)  # a duplicate judgment before the malformed line is reported first
        raise
    return _build(path, parts)
