"""One reading path for a run in any line order: :class:`RunQueries`, read once.

The run is read in binary chunks (:class:`.runfile.RunBlocks`) and its queries are handed on as
soon as each is complete, as long as every query's lines are contiguous (most runs: memory is
one block). At the first query that reappears, the reader does not start again: the rows read
but not yet handed on and the rest of the file go through the external sort
(:func:`.runfile.external_sort`, ``memory_lines`` rows at a time), and so do the earlier lines
of the queries that had been handed on and reappear: read back in one forward sweep of the chunks
that hold them (each query's earlier lines are contiguous; only those chunks, each at most once:
not a second pass). Such a query is handed on again, complete: it may come twice, and the later
one replaces the first. ``grouped`` tells, after the pass, which way the
run was read.
"""

from __future__ import annotations

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
    had already come and reappears comes again with all its lines (its earlier lines read back,
    each chunk at most once): **keep the last value of each query**. ``grouped`` (after the pass)
    tells whether every query was contiguous; ``runid`` is the run id of the file's last line.
    Malformed lines raise :class:`.checked.TrecFormatError` naming the line. Cost: one read of
    the file, O(n) for a grouped run of n lines; otherwise O(n log n), and at most the part
    before the first reappearance read back (only the chunks of the queries that reappear).

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
        """After ``head`` stopped: the rest of the run through the external sort, with the earlier
        lines of the queries that had come from ``head`` and come again."""
        self.runid = head.runid
        self.grouped = head.unread is None
        if head.unread is not None:
            yield from external_sort(self._sorted_chunks(head, head.unread), self.tmpdir)

    def _sorted_chunks(self, head: RunBlocks, unread: Unread) -> Iterator[SortedChunk]:
        """The unread rows, the rest of the file, then the earlier lines of the queries among them
        that had come from ``head`` (read back), ``memory_lines`` rows at a time, each chunk sorted
        by query id (bytewise), then line."""
        rows = _Rows(self.memory_lines, unread.qids, unread.docs, unread.scores, unread.lines)
        later = set(unread.qids)
        lineno = unread.lineno
        for chunk in unread.chunks:
            qs, ds, sc, runid, ln, n = run_columns(self.path, chunk, lineno)
            lineno += n
            if qs:
                self.runid = runid
                later.update(qs)
                yield from rows.add(qs, ds, sc, ln)
        back = sorted((head.starts[q], q) for q in later if q in head.starts)
        rows.by_line = bool(back)
        for qs, ds, sc, ln in self._read_back(back, int(unread.lines[0])):
            yield from rows.add(qs, ds, sc, ln)
        yield from rows.flush()

    def _read_back(self, back: list[tuple[tuple[int, int], bytes]], bound: int
                   ) -> Iterator[tuple[list[bytes], list[bytes], np.ndarray, np.ndarray]]:  # fmt: skip
        """The rows before line ``bound`` of the queries ``back`` (each with the byte offset and line
        number of the chunk where it starts, by offset), reading only the chunks that hold them:
        each query's rows are contiguous there, so a read goes on while the last row read is one
        of them (or the next query has not been seen yet: its first row may come after the first
        chunk read from its offset), then skips to the next query's chunk. Each chunk is read at
        most once."""
        wanted = {q for _, q in back}
        seen: set[bytes] = set()
        i = 0
        while i < len(back):
            (offset, lineno), _ = back[i]
            for chunk in byte_chunks(self.path, CHUNK_BYTES, start=offset):
                qs, ds, sc, _, ln, n = run_columns(self.path, chunk, lineno)
                lineno, offset = lineno + n, offset + len(chunk)
                if not qs:  # blank and comment lines only (inside a query, too)
                    continue
                keep = np.fromiter(map(wanted.__contains__, qs), dtype=bool, count=len(qs)) & (ln < bound)
                if keep.any():
                    idx = np.flatnonzero(keep).tolist()
                    seen.update(qs[k] for k in idx)
                    yield [qs[k] for k in idx], [ds[k] for k in idx], sc[keep], ln[keep]
                # The next query to read is the first not seen yet. A query's recorded offset is
                # the start of the chunk (as the first pass cut the file) where it starts, so its
                # first row may lie beyond the chunks read from there: read on until it is seen.
                while i < len(back) and back[i][1] in seen:
                    i += 1
                if not keep[-1] and (i == len(back) or back[i][0][0] > offset):
                    break  # then skip to the next query's chunk (or stop)
            else:  # the end of the file
                return


class _Rows:
    """Rows gathered and handed on ``size`` at a time, sorted by query id (bytewise, stable; then by
    line when ``by_line``: rows read back come after later lines of the same query)."""

    def __init__(self, size: int, qs: list[bytes], ds: list[bytes], sc: np.ndarray, ln: np.ndarray) -> None:
        self.size, self.qs, self.ds, self.sc, self.ln, self.by_line = size, qs, ds, [sc], [ln], False

    def add(self, qs: list[bytes], ds: list[bytes], sc: np.ndarray, ln: np.ndarray) -> Iterator[SortedChunk]:
        """Add rows; hand on every full chunk."""
        self.qs += qs
        self.ds += ds
        self.sc.append(sc)
        self.ln.append(ln)
        if len(self.qs) >= self.size:
            yield from self._chunks(len(self.qs) - len(self.qs) % self.size)

    def flush(self) -> Iterator[SortedChunk]:
        """Hand on the rows left."""
        yield from self._chunks(len(self.qs))

    def _chunks(self, full: int) -> Iterator[SortedChunk]:
        m, qs, ds = self.size, self.qs, self.ds
        sc, ln = np.concatenate(self.sc), np.concatenate(self.ln)
        for a in range(0, full, m):
            q, d, lines = qs[a : a + m], ds[a : a + m], ln[a : a + m]
            keys = list(zip(q, lines.tolist(), strict=True)) if self.by_line else q
            order = sorted(range(len(q)), key=keys.__getitem__)
            yield ([q[k].decode("utf-8") for k in order], [d[k].decode("utf-8") for k in order],
                   sc[a : a + m][order], lines[order].tolist())  # fmt: skip
        self.qs, self.ds, self.sc, self.ln = qs[full:], ds[full:], [sc[full:]], [ln[full:]]
