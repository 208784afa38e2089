"""One reading path for a run in any line order: :class:`RunQueries`, read once.

The run is read in binary chunks (:class:`.runfile.RunBlocks`) and its queries are handed on as
soon as each is complete, as long as every query's lines are contiguous (most runs: memory is
one block). At the first query that reappears, the reader does not start again: the rows read
but not yet handed on and the rest of the file go through the external sort
(:func:`.runfile.external_sort`, ``memory_lines`` rows at a time); a query that had been handed on
and reappears is read back from its first chunk (its earlier lines are contiguous: a seek and a
read of them, not a second pass) and handed on again, complete. So a query may come twice: the
later one is complete, and replaces the first. ``grouped`` tells, after the pass, which way the
run was read.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator

import numpy as np

from streammetrics._core.docstrings import filled
from streammetrics._core.params import Param, check_param

from .binread import byte_chunks, run_columns
from .runfile import MEMORY_LINES, Block, QueryLines, RunBlocks, SortedChunk, Unread, as_blocks, external_sort

__all__ = ["RunQueries", "block_queries"]

CHUNK_BYTES = 1 << 14  # the bytes read at once (as RunBlocks reads them)
_MEMORY_LINES = Param("int", "expected a positive integer", low=1)


def block_queries(block: Block) -> Iterator[tuple[str, QueryLines]]:
    """Each query of a :class:`.runfile.Block` as ``(qid, QueryLines)`` (document ids as text).

    Parameters
    ----------
    block : Block
        Complete queries.

    Yields
    ------
    (str, QueryLines)
        The block's queries, in order.

    Examples
    --------
    >>> import numpy as np
    >>> from streammetrics.trec.runfile import Block
    >>> from streammetrics.trec.runqueries import block_queries
    >>> block = Block(["q1", "q2"], np.array([0, 2, 3]), [b"d1", b"d2", b"d1"],
    ...               np.array([2.0, 1.0, 0.5]), np.array([1, 2, 3]))
    >>> [(qid, q.docs) for qid, q in block_queries(block)]
    [('q1', ['d1', 'd2']), ('q2', ['d1'])]
    """
    bounds = block.bounds.tolist()
    for i, qid in enumerate(block.qids):
        a, b = bounds[i], bounds[i + 1]
        docs = [d.decode("utf-8") for d in block.docs[a:b]]
        yield qid, QueryLines(docs, block.scores[a:b], block.lines[a:b])


@filled
class RunQueries:
    """A run's complete queries, in one pass over the file, whatever its line order.

    Iterating gives ``(qid, QueryLines)``; :meth:`blocks` gives :class:`.runfile.Block` s. While
    every query's lines are contiguous, queries come in file order as each is complete (memory:
    one block); from the first query that reappears on, the rest of the run is grouped by the
    external sort (memory: ``memory_lines`` rows; queries in bytewise order), and a query that
    had already come and reappears comes again with all its lines (its earlier lines read back
    from its first chunk): **keep the last value of each query**. ``grouped`` (after the pass)
    tells whether every query was contiguous; ``runid`` is the run id of the file's last line.
    Malformed lines raise :class:`.checked.TrecFormatError` naming the line. Cost: one read of
    the file, O(n) for a grouped run of n lines, O(n log n) otherwise.

    Parameters
    ----------
    {trec: run_path}
    memory_lines : int, default MEMORY_LINES
        The rows sorted at once when the run's queries are not contiguous.
    tmpdir : str, optional
        Where the external sort's temporary files go (default: the system's temporary directory).
    block_rows : int, default 65536
        The lines of a block (a block ends with a complete query).

    Examples
    --------
    {example: run_file}
    >>> from streammetrics.trec.runqueries import RunQueries
    >>> queries = RunQueries(run)
    >>> [(qid, q.docs) for qid, q in queries], queries.grouped, queries.runid
    ([('q1', ['d2', 'd1']), ('q2', ['d3'])], True, 'sys')
    """

    def __init__(self, path: str, memory_lines: int = MEMORY_LINES, tmpdir: str | None = None,
                 block_rows: int = 1 << 16) -> None:  # fmt: skip
        memory_lines = check_param(memory_lines, "memory_lines", _MEMORY_LINES)
        self.path, self.memory_lines, self.tmpdir, self.block_rows = path, memory_lines, tmpdir, block_rows
        self.grouped: bool | None = None
        self.runid = ""

    def __iter__(self) -> Iterator[tuple[str, QueryLines]]:
        self.grouped = None  # not known until the end of the pass
        head = RunBlocks(self.path, CHUNK_BYTES, self.block_rows, stop=True)
        for block in head:
            yield from block_queries(block)
        yield from self._rest(head)

    def blocks(self) -> Iterator[Block]:
        """The run's complete queries in :class:`.runfile.Block` s of about ``block_rows`` lines.

        Yields
        ------
        Block
            Complete queries (a query may come again, complete, in a later block: see the class).
        """
        self.grouped = None  # not known until the end of the pass
        head = RunBlocks(self.path, CHUNK_BYTES, self.block_rows, stop=True)
        yield from head
        yield from as_blocks(self._rest(head), rows=self.block_rows)

    def _rest(self, head: RunBlocks) -> Iterator[tuple[str, QueryLines]]:
        """After ``head`` stopped: the rest of the run through the external sort, each query that
        had come from ``head`` joined to its earlier lines."""
        self.runid = head.runid
        self.grouped = head.unread is None
        if head.unread is None:
            return
        for qid, lines in external_sort(self._sorted_chunks(head.unread), self.tmpdir):
            start = head.starts.get(qid.encode("utf-8"))
            if start is not None:
                lines = _joined(self._read_back(qid, *start), lines)
            yield qid, lines

    def _sorted_chunks(self, unread: Unread) -> Iterator[SortedChunk]:
        """The unread rows, then the rest of the file, ``memory_lines`` rows at a time, each chunk
        sorted by query id (bytewise, stable)."""
        m = self.memory_lines
        qs, ds, sc, ln = unread.qids, unread.docs, [unread.scores], [unread.lines]
        lineno = unread.lineno
        for chunk in itertools.chain(unread.chunks, [None]):
            if chunk is not None:
                q2, d2, s2, runid, l2, n = run_columns(self.path, chunk, lineno)
                lineno += n
                if not q2:
                    continue
                self.runid = runid
                qs += q2
                ds += d2
                sc.append(s2)
                ln.append(l2)
                if len(qs) < m:
                    continue
            scores, lines = np.concatenate(sc), np.concatenate(ln)
            full = len(qs) if chunk is None else len(qs) - len(qs) % m
            for a in range(0, full, m):
                yield _sorted(qs[a : a + m], ds[a : a + m], scores[a : a + m], lines[a : a + m])
            qs, ds, sc, ln = qs[full:], ds[full:], [scores[full:]], [lines[full:]]

    def _read_back(self, qid: str, offset: int, lineno: int) -> QueryLines:
        """The lines of ``qid`` in the contiguous run of them that starts in the chunk at byte
        ``offset`` (line ``lineno``)."""
        key = qid.encode("utf-8")
        parts: list[tuple[list[bytes], np.ndarray, np.ndarray]] = []
        for chunk in byte_chunks(self.path, CHUNK_BYTES, start=offset):
            qs, ds, sc, _, ln, n = run_columns(self.path, chunk, lineno)
            lineno += n
            if not qs:  # blank and comment lines only
                continue
            mine = np.fromiter(map(key.__eq__, qs), dtype=bool, count=len(qs))
            if not mine.any() or (parts and not mine[0]):
                if parts:
                    break
                continue
            a = int(mine.argmax())
            after = np.flatnonzero(~mine[a:])
            b = a + int(after[0]) if len(after) else len(qs)
            parts.append((ds[a:b], sc[a:b], ln[a:b]))
            if b < len(qs):
                break
        docs = [d.decode("utf-8") for p in parts for d in p[0]]
        return QueryLines(docs, np.concatenate([p[1] for p in parts]), np.concatenate([p[2] for p in parts]))


def _sorted(qs: list[bytes], ds: list[bytes], scores: np.ndarray, lines: np.ndarray) -> SortedChunk:
    """Rows sorted by query id (bytewise, stable), ids as text."""
    order = sorted(range(len(qs)), key=qs.__getitem__)
    return ([qs[i].decode("utf-8") for i in order], [ds[i].decode("utf-8") for i in order], scores[order],
            lines[order].tolist())  # fmt: skip


def _joined(first: QueryLines, then: QueryLines) -> QueryLines:
    """A query's earlier lines, then its later ones."""
    return QueryLines(first.docs + then.docs, np.concatenate([first.scores, then.scores]),
                      np.concatenate([first.lines, then.lines]))  # fmt: skip
