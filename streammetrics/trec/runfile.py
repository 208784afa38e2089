"""Reading a TREC run as trec_eval does: any line order, comments, extra trailing fields.

:class:`RunStream` reads a run whose queries are contiguous query by query, :class:`RunBlocks` in
blocks of queries; :class:`SpilledRun` groups a run in any line order by query in bounded memory
(an external merge sort through temporary files, :func:`external_sort`); :func:`read_run_grouped`
groups it in memory (O(run lines), as trec_eval, which reads the whole file).
:class:`.runqueries.RunQueries`, the reading path of ``streammetrics trec``, reads a run once in
blocks and, from the first query that reappears on, through the external sort.

Lines are ``qid Q0 docno rank score runid [anything ...]``; blank lines and lines whose first
non-blank character is ``#`` are skipped; fields after the sixth are ignored; the rank column is
ignored (trec_eval ranks by score). Unlike trec_eval (whose ``atof`` reads ``high`` as 0), a score
that is not a number, or NaN, is an error naming file and line.
"""

from __future__ import annotations

import itertools
import operator
import os
import sys
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from streammetrics._core.docstrings import filled
from streammetrics._core.params import Param, check_param

from . import progress
from .binread import byte_chunks, run_columns, run_scores, text_run_columns
from .checked import utf8_errors
from .readers import read_zscores  # noqa: F401 -- importable here, as before
from .spill import SpillRuns, spill_directory
from .tokens import fixed_fields, line_chunks


@filled
@dataclass
class QueryLines:
    """One query's retrieved documents in file order, with their scores and line numbers.

    Attributes
    ----------
    docs : list of str
        The document ids, in file order.
    scores : numpy.ndarray of float64
        Their scores.
    lines : numpy.ndarray of int64
        The line number of each in the run file.

    Examples
    --------
    {example: run_file}
    >>> from streammetrics.trec.runfile import RunStream
    >>> qid, q = next(iter(RunStream(run)))
    >>> qid, q.docs, q.scores.tolist(), q.lines.tolist()
    ('q1', ['d2', 'd1'], [0.9, 0.5], [1, 2])
    """

    docs: list[str]
    scores: np.ndarray
    lines: np.ndarray


@filled
@dataclass
class GroupedRun:
    """A run grouped by query (what :func:`read_run_grouped` returns).

    Attributes
    ----------
    queries : dict of str to QueryLines
        Each query's document ids, scores and line numbers, queries in file order of first
        appearance.
    runid : str
        The run id (the last line's, as trec_eval reports it).

    Examples
    --------
    {example: run_file}
    >>> from streammetrics.trec import read_run_grouped
    >>> q1 = read_run_grouped(str(run)).queries["q1"]
    >>> q1.docs, q1.scores.tolist()
    (['d2', 'd1'], [0.9, 0.5])
    """

    queries: dict[str, QueryLines]
    runid: str


def _columns(
    path: str, lines: list[str], first: int
) -> tuple[list[str], list[str], list[str], list[str], list[int]]:
    """(qid, docno, score, runid) columns and line numbers of a chunk's run lines.

    Fast path: one ``split`` of the chunk with a sentinel per line end proves every line has exactly
    6 fields; otherwise line by line (blank and ``#`` lines skipped, fields after the sixth ignored).
    """
    n = len(lines)
    text = "".join(lines)
    tokens = fixed_fields(text, n, 6) if n else None
    if tokens is not None:
        return tokens[0::7], tokens[2::7], tokens[4::7], tokens[5::7], list(range(first, first + n))
    return text_run_columns(path, lines, first)


_Piece = tuple[str, list[str], np.ndarray, np.ndarray, str]  # qid, docs, scores, line numbers, runid


def _pieces(path: str, chunk_lines: int, grouped_only: bool = False) -> Iterator[_Piece]:
    """Each query's lines per chunk of lines, in file order within the query, with the run id of
    the chunk's last line. When every query of a chunk is one contiguous block the pieces come in
    file order; otherwise the chunk is grouped by a stable sort on the query id (``grouped_only``:
    :class:`NotGrouped` is raised instead, naming the line where a query reappears)."""
    for first, lines in line_chunks(path, chunk_lines):
        qs, ds, s_tok, rs, line_of = _columns(path, lines, first)
        if not qs:
            continue
        sc = run_scores(path, s_tok, line_of)
        ln = np.asarray(line_of, dtype=np.int64)
        change = np.fromiter(map(operator.ne, qs[1:], qs[:-1]), dtype=bool, count=len(qs) - 1)
        starts = np.flatnonzero(np.concatenate([[True], change])).tolist()
        block_qids = [qs[a] for a in starts]
        if len(set(block_qids)) == len(block_qids):
            for a, b in zip(starts, [*starts[1:], len(qs)], strict=True):
                yield qs[a], ds[a:b], sc[a:b], ln[a:b], rs[-1]
            continue
        if grouped_only:
            seen: set[str] = set()
            for a, q in zip(starts, block_qids, strict=True):
                if q in seen:
                    raise NotGrouped(f"{path}:{line_of[a]}: query {q!r} reappears")
                seen.add(q)
        index: dict[str, int] = {}
        codes = np.fromiter((index.setdefault(q, len(index)) for q in qs), dtype=np.int64, count=len(qs))
        order = np.argsort(codes, kind="stable")
        bounds = np.searchsorted(codes[order], np.arange(len(index) + 1)).tolist()
        ordered = [ds[i] for i in order.tolist()]
        sc, ln = sc[order], ln[order]
        for q, c in index.items():
            a, b = bounds[c], bounds[c + 1]
            yield q, ordered[a:b], sc[a:b], ln[a:b], rs[-1]


def _join(parts: list[_Piece]) -> QueryLines:
    if len(parts) == 1:
        return QueryLines(parts[0][1], parts[0][2], parts[0][3])
    return QueryLines(
        [d for p in parts for d in p[1]],
        np.concatenate([p[2] for p in parts]),
        np.concatenate([p[3] for p in parts]),
    )


@filled
def read_run_grouped(path: str, chunk_lines: int = 1 << 17) -> GroupedRun:
    """Read a run file into per-query arrays. Cost: one pass, O(lines) time and memory; parsing is
    per chunk of lines (one ``split``, scores converted by numpy).

    Parameters
    ----------
    path : str
        The run file (its queries' lines need not be contiguous).
    {trec: chunk_lines}

    Returns
    -------
    GroupedRun
        The lines of each query and the run id.

    Examples
    --------
    {example: run_file}
    >>> from streammetrics.trec import read_run_grouped
    >>> grouped = read_run_grouped(str(run))
    >>> list(grouped.queries), grouped.runid
    (['q1', 'q2'], 'sys')
    """
    pieces: dict[str, list[_Piece]] = {}
    runid = ""
    for piece in _pieces(path, chunk_lines):
        pieces.setdefault(piece[0], []).append(piece)
        runid = piece[4]
    return GroupedRun({q: _join(parts) for q, parts in pieces.items()}, runid)


class NotGrouped(Exception):
    """A query's lines are not contiguous in the run file (raised by :class:`RunStream`)."""


@filled
class RunStream:
    """A run whose queries are contiguous, query by query in one pass with one chunk of lines and
    one query in memory; raises :class:`NotGrouped` when a query reappears (the caller then reads
    the run with :func:`read_run_grouped`). ``runid`` is the run id of the last line read.

    Parameters
    ----------
    {trec: run_path, chunk_lines}

    Examples
    --------
    {example: run_file}
    >>> from streammetrics.trec.runfile import RunStream
    >>> stream = RunStream(run)
    >>> [(qid, q.docs) for qid, q in stream], stream.runid
    ([('q1', ['d2', 'd1']), ('q2', ['d3'])], 'sys')
    """

    def __init__(self, path: str, chunk_lines: int = 1 << 17) -> None:
        self.path, self.chunk_lines, self.runid = path, chunk_lines, ""

    def __iter__(self) -> Iterator[tuple[str, QueryLines]]:
        seen: set[str] = set()
        current: list[_Piece] = []
        for piece in _pieces(self.path, self.chunk_lines, grouped_only=True):
            self.runid = piece[4]
            if current and piece[0] == current[0][0]:
                current.append(piece)
                continue
            if piece[0] in seen:
                raise NotGrouped(f"{self.path}:{int(piece[3][0])}: query {piece[0]!r} reappears")
            if current:
                yield current[0][0], _join(current)
            seen.add(piece[0])
            current = [piece]
        if current:
            yield current[0][0], _join(current)


@filled
@dataclass
class Block:
    """Complete queries of a run, flat: ``qids`` (file order), each query's rows
    ``[bounds[i], bounds[i + 1])`` of ``docs`` (UTF-8 bytes), ``scores``, ``lines`` and
    ``hashes`` (the docs' ``hash``, computed when absent).

    Attributes
    ----------
    qids : list of str
        The queries, in file order.
    bounds : numpy.ndarray of int64
        Query ``i``'s rows are ``[bounds[i], bounds[i + 1])``.
    docs : list of bytes
        The document id of each row (UTF-8).
    scores : numpy.ndarray of float64
        The score of each row.
    lines : numpy.ndarray of int64
        The line number of each row in the run file.
    hashes : numpy.ndarray of int64 or None, default=None
        ``hash`` of each document id (None: computed by whoever needs them).

    Examples
    --------
    {example: run_file}
    >>> from streammetrics.trec.runfile import RunBlocks
    >>> block = next(iter(RunBlocks(run)))
    >>> block.qids, block.bounds.tolist(), block.docs, block.scores.tolist()
    (['q1', 'q2'], [0, 2, 3], [b'd2', b'd1', b'd3'], [0.9, 0.5, 0.7])
    """

    qids: list[str]
    bounds: np.ndarray
    docs: list[bytes]
    scores: np.ndarray
    lines: np.ndarray
    hashes: np.ndarray | None = None


_Cols = list[tuple[np.ndarray, np.ndarray, np.ndarray]]  # scores, lines, hashes of consecutive rows


@dataclass
class Unread:
    """Where :class:`RunBlocks` stopped at the first query that reappears (``stop=True``).

    Attributes
    ----------
    qids, docs : list of bytes
        The query and document of every row read but not yielded (one per row).
    scores, lines : numpy.ndarray
        Their scores and line numbers.
    chunks : iterator of bytes
        The chunks of the file not yet read.
    lineno : int
        The number of the next line.

    Examples
    --------
    >>> import os, tempfile
    >>> from streammetrics.trec.runfile import RunBlocks
    >>> run = os.path.join(tempfile.mkdtemp(), "late.run")
    >>> with open(run, "w") as f:
    ...     _ = f.write("q1 Q0 d1 1 0.9 sys\\nq2 Q0 d2 1 0.8 sys\\nq1 Q0 d3 2 0.7 sys\\n")
    >>> blocks = RunBlocks(run, stop=True)  # q1 reappears on line 3, inside the first block
    >>> [block.qids for block in blocks], blocks.unread.qids, blocks.unread.lineno
    ([], [b'q1', b'q2', b'q1'], 4)
    """

    qids: list[bytes]
    docs: list[bytes]
    scores: np.ndarray
    lines: np.ndarray
    chunks: Iterator[bytes]
    lineno: int


@filled
class RunBlocks:
    """A run whose queries are contiguous, in blocks of complete queries of about ``block_rows``
    lines; raises :class:`NotGrouped` when a query reappears (``stop=True``: stops instead, with
    what is left to read in ``unread``). The file is read in small chunks (``chunk_bytes``; their
    tokens are used while in the CPU cache) as :mod:`.binread` reads it: document ids as
    ``bytes``. Memory: one block, and the byte offset and line number of each query's first
    chunk (``starts``, to read a query back). ``runid``: the run id of the last line read.

    Parameters
    ----------
    {trec: run_path}
    chunk_bytes : int, default 16384
        The bytes read at once.
    block_rows : int, default 65536
        The lines of a block (a block ends with a complete query, so it may hold more).
    stop : bool, default False
        At the first query that reappears, stop (set ``unread``) instead of raising.

    Examples
    --------
    {example: run_file}
    >>> from streammetrics.trec.runfile import RunBlocks
    >>> blocks = RunBlocks(run)
    >>> [block.qids for block in blocks], blocks.runid
    ([['q1', 'q2']], 'sys')
    """

    def __init__(self, path: str, chunk_bytes: int = 1 << 14, block_rows: int = 1 << 16,
                 stop: bool = False) -> None:  # fmt: skip
        self.path, self.chunk_bytes, self.block_rows, self.runid = path, chunk_bytes, block_rows, ""
        self.stop = stop
        self.starts: dict[bytes, tuple[int, int]] = {}  # yielded queries: (offset, line) of their first chunk
        self.unread: Unread | None = None

    def __iter__(self) -> Iterator[Block]:
        self.starts, self.unread = {}, None
        qids: list[bytes] = []  # the pending queries, their line counts and first chunks (the last may go on)
        counts: list[int] = []
        firsts: list[tuple[int, int]] = []
        docs: list[bytes] = []
        cols: _Cols = []
        lineno, offset = 1, 0
        chunks = byte_chunks(self.path, self.chunk_bytes)
        for chunk in chunks:
            qs, ds, sc, runid, ln, n = run_columns(self.path, chunk, lineno)
            at = (offset, lineno)
            lineno, offset = lineno + n, offset + len(chunk)
            if not qs:
                continue
            self.runid = runid
            cols.append((sc, ln, np.fromiter(map(hash, ds), dtype=np.int64, count=len(ds))))
            docs += ds
            for q, group in itertools.groupby(qs):
                k = len(list(group))
                if qids and qids[-1] == q:
                    counts[-1] += k
                else:
                    qids.append(q)
                    counts.append(k)
                    firsts.append(at)
            if len(docs) >= self.block_rows and len(qids) > 1:
                done = len(qids) - 1
                block = self._block(qids, counts, firsts, docs, cols, done)
                if block is None:
                    self.unread = _unread(qids, counts, docs, cols, chunks, lineno)
                    return
                yield block
                cut = len(docs) - counts[-1]
                del qids[:done], counts[:done], firsts[:done], docs[:cut]
                sc, ln, h = _cat(cols)
                cols = [(sc[cut:], ln[cut:], h[cut:])]
        if qids:
            block = self._block(qids, counts, firsts, docs, cols, len(qids))
            if block is None:
                self.unread = _unread(qids, counts, docs, cols, iter(()), lineno)
                return
            yield block

    def _block(self, qids: list[bytes], counts: list[int], firsts: list[tuple[int, int]], docs: list[bytes],
               cols: _Cols, done: int) -> Block | None:  # fmt: skip
        """The first ``done`` pending queries as a :class:`Block` (NotGrouped, or None with ``stop``,
        if one was seen)."""
        sc, ln, h = _cat(cols)
        bounds = np.concatenate([[0], np.cumsum(counts[:done])]).astype(np.int64)
        block_qids = qids[:done]
        seen = self.starts
        if len(set(block_qids)) != len(block_qids) or not seen.keys().isdisjoint(block_qids):
            if self.stop:
                return None
            again: set[bytes] = set(seen)
            for a, q in zip(bounds.tolist(), block_qids, strict=False):
                if q in again:
                    raise NotGrouped(f"{self.path}:{int(ln[a])}: query {q.decode('utf-8')!r} reappears")
                again.add(q)
        seen.update(zip(block_qids, firsts[:done], strict=True))
        cut = int(bounds[-1])
        return Block([q.decode("utf-8") for q in block_qids], bounds, docs[:cut], sc[:cut], ln[:cut], h[:cut])


def _unread(qids: list[bytes], counts: list[int], docs: list[bytes], cols: _Cols, chunks: Iterator[bytes],
            lineno: int) -> Unread:  # fmt: skip
    """The pending rows of :class:`RunBlocks` (one query id per row) and the rest of the file."""
    sc, ln, _ = _cat(cols)
    rows = [q for q, k in zip(qids, counts, strict=True) for _ in range(k)]
    return Unread(rows, docs, sc, ln, chunks, lineno)


def _cat(cols: _Cols) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    if len(cols) == 1:
        return cols[0]
    sc, ln, h = zip(*cols, strict=True)
    return np.concatenate(sc), np.concatenate(ln), np.concatenate(h)


@filled
def as_blocks(queries: Iterator[tuple[str, QueryLines]], rows: int = 1 << 17) -> Iterator[Block]:
    """Queries (as :class:`SpilledRun` yields them) in :class:`Block` s of about ``rows`` lines.

    Parameters
    ----------
    queries : iterator of (str, QueryLines)
        Complete queries.
    rows : int, default 131072
        A block ends with the first query that takes it to this many lines.

    Yields
    ------
    Block
        The queries in order (``hashes`` left None).

    Examples
    --------
    {example: run_file}
    >>> from streammetrics.trec.runfile import SpilledRun, as_blocks
    >>> [block.qids for block in as_blocks(iter(SpilledRun(run)), rows=2)]
    [['q1'], ['q2']]
    """
    batch: list[tuple[str, QueryLines]] = []
    size = 0
    for item in itertools.chain(queries, [None]):
        if item is not None:
            batch.append(item)
            size += len(item[1].docs)
        if batch and (item is None or size >= rows):
            lengths = [len(q.docs) for _, q in batch]
            yield Block([qid for qid, _ in batch], np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64),
                        [d.encode("utf-8") for _, q in batch for d in q.docs],
                        np.concatenate([q.scores for _, q in batch]),
                        np.concatenate([q.lines for _, q in batch]))  # fmt: skip
            batch, size = [], 0


#: Default bound of :class:`SpilledRun`: run lines held in memory at once (two chunks at most).
MEMORY_LINES = 1 << 18
_MEMORY_LINES = Param("int", "expected a positive integer", low=1)


@filled
class SpilledRun:
    """A run in any line order, query by query (query ids in bytewise order, each query's lines in
    file order), grouped in bounded memory: chunks of ``memory_lines`` lines are parsed, sorted
    by query id and written to temporary files, which are then merged (k-way heap merges of at
    most :data:`.spill.MERGE_FAN_IN` files, smallest first) -- an external merge sort. A run of at
    most ``memory_lines`` lines is grouped in memory without temporary files. ``runid`` is the run
    id of the file's last line, known once iteration has started.

    Memory: two chunks of lines while spilling, then one line per merged file plus one query;
    disk: the run about twice (query id, document, score, line number per line); at most
    ``MERGE_FAN_IN + 1`` open files and ``ALIVE_RUNS * MERGE_FAN_IN`` alive ones, whatever
    ``memory_lines`` is (see :mod:`.spill`: the files live in ``streammetrics-trec-<pid>-*``,
    removed at the end, and stale ones of killed processes are removed by the next sort). Cost:
    O(n log n) for n lines. Malformed lines raise :class:`TrecFormatError` as
    :func:`read_run_grouped` does.

    Parameters
    ----------
    path : str
        The run file (its queries' lines need not be contiguous).
    memory_lines : int, default MEMORY_LINES
        The lines parsed and sorted at once, a positive integer.
    tmpdir : str, optional
        Where the temporary files go (default: the system's temporary directory).

    Examples
    --------
    {example: run_file}
    >>> from streammetrics.trec.runfile import SpilledRun
    >>> spilled = SpilledRun(run, memory_lines=2)  # two chunks, merged from temporary files
    >>> [(qid, q.docs) for qid, q in spilled], spilled.runid
    ([('q1', ['d2', 'd1']), ('q2', ['d3'])], 'sys')
    """

    def __init__(self, path: str, memory_lines: int = MEMORY_LINES, tmpdir: str | None = None) -> None:
        memory_lines = check_param(memory_lines, "memory_lines", _MEMORY_LINES)
        self.path, self.memory_lines, self.tmpdir, self.runid = path, memory_lines, tmpdir, ""

    def _chunks(self) -> Iterator[SortedChunk]:
        """(qid, docno, score, line) columns of each chunk of lines, sorted by query id (stable)."""
        lineno = 0
        report = progress.current()
        with utf8_errors(self.path), open(self.path, encoding="utf-8") as fh:
            while True:
                lines = list(itertools.islice(fh, min(self.memory_lines, sys.maxsize)))
                if not lines:
                    return
                if report is not None:
                    report(self.path, os.lseek(fh.fileno(), 0, os.SEEK_CUR))
                first, lineno = lineno + 1, lineno + len(lines)
                qs, ds, s_tok, rs, line_of = _columns(self.path, lines, first)
                del lines
                if not qs:
                    continue
                sc = run_scores(self.path, s_tok, line_of)
                self.runid = rs[-1]
                order = sorted(range(len(qs)), key=lambda i: qs[i].encode("utf-8"))
                yield [qs[i] for i in order], [ds[i] for i in order], sc[order], [line_of[i] for i in order]

    def __iter__(self) -> Iterator[tuple[str, QueryLines]]:
        return external_sort(self._chunks(), self.tmpdir)


SortedChunk = tuple[list[str], list[str], np.ndarray, list[int]]  # qids, docs, scores, lines; by qid


def external_sort(
    chunks: Iterator[SortedChunk], tmpdir: str | None = None
) -> Iterator[tuple[str, QueryLines]]:
    """Chunks of rows, each sorted by query id (bytewise, stable), grouped by query: the
    :class:`SpilledRun`'s merge. One chunk is grouped in memory; more are written to temporary
    files (:class:`.spill.SpillRuns` in a :func:`.spill.spill_directory`) and merged.

    Parameters
    ----------
    chunks : iterator of (list of str, list of str, numpy.ndarray, list of int)
        Query ids, document ids, scores and line numbers of each chunk, sorted by query id.
    tmpdir : str, optional
        Where the temporary files go (default: the system's temporary directory).

    Yields
    ------
    (str, QueryLines)
        Each query (bytewise order) with its rows in line order.
    """
    pending = next(chunks, None)
    if pending is None:
        return
    following = next(chunks, None)
    if following is None:  # one chunk: no temporary files
        yield from _group_rows(zip(*pending, strict=True))
        return
    with spill_directory(tmpdir) as tmp:
        runs = SpillRuns(tmp)
        while pending is not None:
            qs, ds, sc, ln = pending
            runs.add(zip(qs, ds, sc.tolist(), ln, strict=True))
            pending, following = following, (next(chunks, None) if following is not None else None)
        with runs.merged() as rows:
            yield from _group_rows(rows)


def _group_rows(rows: Iterator[tuple[str, str, float, int]]) -> Iterator[tuple[str, QueryLines]]:
    """Consecutive rows of one query id as its :class:`QueryLines`."""
    for qid, group in itertools.groupby(rows, key=operator.itemgetter(0)):
        _, docs, scores, lines = zip(*group, strict=True)
        yield qid, QueryLines(list(docs), np.array(scores, dtype=np.float64), np.array(lines, dtype=np.int64))

