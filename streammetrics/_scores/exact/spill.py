"""The exact buffer's queue of one group's large unit-weight batches, in anonymous memory maps.

:class:`~streammetrics._scores.exact.buffer.SortedScores` queues each batch's per-group copies
and folds them in on the next read. Kept as the batches' own arrays (small heap blocks of a few
tens of KB), a queue of millions of scores leaves the allocator holding all of them after the
fold: ``free`` keeps small blocks for reuse, so the process stays as large as the queue plus
its concatenation (peak resident memory ~2x the queue). Once one group's queue passes
``SPILL_MIN`` bytes, :class:`Spill` takes it over: the scores are copied into chunks of
``CHUNK`` bytes, each a private anonymous memory map (``mmap``) that goes back to the system as
soon as it is released; :meth:`Spill.take` copies the chunks into one array and releases each
chunk as soon as it is copied, so the queue and its concatenation never both exist whole (peak:
the queue plus one chunk). Platforms without private anonymous maps keep the plain queue.

The same maps hold the buffer's large sorted runs (:func:`mapped_empty`, :func:`regrow`, used by
:func:`~streammetrics._scores.exact.runs.merge_into_last`): a run of ``MAP_MIN`` bytes or more
grows by ``mremap`` (its pages move, nothing is copied) and goes back to the system when merged
away, where a heap block grown by ``realloc`` and freed would stay resident.

Complexity: :meth:`Spill.append` O(m) for m scores (one copy); :meth:`Spill.take` O(n).
"""

from __future__ import annotations

import mmap
from typing import Any

import numpy as np

#: Bytes of one chunk (a multiple of the page size).
CHUNK = 4 << 20
#: A group's queue spills once its queued scores reach this many bytes.
SPILL_MIN = 1 << 20
#: ``mmap``'s private-mapping flag, None where there is none (the plain queue is kept there).
_PRIVATE: int | None = getattr(mmap, "MAP_PRIVATE", None)


class _Map(mmap.mmap):
    """A private anonymous map made here (:func:`mapped_empty`): only these are ever resized."""


#: Runs of at least this many bytes are grown in anonymous maps (:func:`regrow`).
MAP_MIN = 256 << 10


def mapped_empty(n: int, dtype: np.dtype) -> np.ndarray | None:
    """An uninitialised array of ``n`` elements over its own private anonymous map (None where
    there are none): released to the system with its last view, and grown by :func:`regrow`
    without copying (``mremap``). O(1)."""
    if _PRIVATE is None or n <= 0:
        return None
    dtype = np.dtype(dtype)
    try:
        mm = _Map(-1, n * dtype.itemsize, flags=_PRIVATE)
    except OSError:  # no map left (Linux's vm.max_map_count) or no memory: the heap instead
        return None
    return np.frombuffer(mm, dtype=dtype)


def map_of(a: np.ndarray) -> _Map | None:
    """The map under ``a`` when ``a`` is the whole of an array made by :func:`mapped_empty`."""
    base = a.base
    if isinstance(base, memoryview) and isinstance(base.obj, _Map) and a.nbytes == base.nbytes:
        return base.obj
    return None


def regrow(mm: _Map, dtype: np.dtype, n: int) -> np.ndarray | None:
    """The array of :func:`mapped_empty` whose map is ``mm``, grown to ``n`` elements in place
    (its first elements kept; the pages move, they are not copied). The caller must have
    dropped its own references to the array first; while any view of it remains (another
    state's copy, a caller's array) the map cannot change and this returns None. O(1)."""
    try:
        mm.resize(n * np.dtype(dtype).itemsize)
    except (BufferError, OSError, ValueError, SystemError):
        return None
    return np.frombuffer(mm, dtype=dtype)


def grown(box: list[np.ndarray], n: int) -> np.ndarray:
    """The 1-D array ``box.pop()`` grown to ``n`` >= its length elements, its elements first
    (the rest uninitialised). The caller hands over its reference in ``box`` and keeps none:
    then a map of :func:`mapped_empty` grows by :func:`regrow` (no copy, no second array at any
    time) and a heap array under ``MAP_MIN`` bytes by ``realloc``; an array that reaches
    ``MAP_MIN`` bytes moves to a map of its own once (freed, its memory goes back to the system,
    where a large freed heap block stays resident). An array held elsewhere (a view, another
    reference) is left as it is and copied. O(1) grown in place, else O(n)."""
    a = box.pop()
    na, dtype = a.shape[0], a.dtype
    big = n * dtype.itemsize >= MAP_MIN
    mm = map_of(a)
    if mm is not None:
        del a
        out = regrow(mm, dtype, n)
        if out is not None:
            return out
        a = np.frombuffer(mm, dtype=dtype)[:na]  # a view of it remains: copied below
    elif not big:
        try:
            a.resize(n, refcheck=True)
        except ValueError:  # held elsewhere, or a view: copied below
            pass
        else:
            return a
    made = mapped_empty(n, dtype) if big else None
    out = np.empty(n, dtype=dtype) if made is None else made
    out[:na] = a
    return out


def can_spill(v: np.ndarray) -> bool:
    """Whether :class:`Spill` can hold scores like ``v``: a 1-D float array, on a platform
    with private anonymous memory maps. O(1)."""
    return _PRIVATE is not None and v.ndim == 1 and v.dtype.kind == "f"


def _chunk(dtype: np.dtype) -> np.ndarray:
    """A writable array of ``CHUNK`` bytes over a private anonymous memory map (unmapped when
    the array is released: the map is its base, held by nothing else); a heap array where no
    map can be made (Linux's ``vm.max_map_count`` maps already in use): the queue still works,
    its memory goes back to the heap instead."""
    assert _PRIVATE is not None
    try:
        mm = mmap.mmap(-1, CHUNK, flags=_PRIVATE)
    except OSError:
        return np.empty(CHUNK // np.dtype(dtype).itemsize, dtype=dtype)
    return np.frombuffer(mm, dtype=dtype)


class Spill:
    """One group's queued unit-weight scores of one dtype, in memory-mapped chunks (module
    docstring). ``n`` scores in all; only the last chunk is partly filled."""

    __slots__ = ("dtype", "chunks", "n", "fill")

    def __init__(self, dtype: np.dtype) -> None:
        self.dtype = np.dtype(dtype)
        self.chunks: list[np.ndarray] = []
        self.n = 0
        self.fill = 0  # scores in the last chunk

    def append(self, v: np.ndarray) -> None:
        """Copy the scores ``v`` (1-D, this spill's dtype) to the end of the queue. O(m)."""
        i, m = 0, v.shape[0]
        while i < m:
            if not self.chunks or self.fill == self.chunks[-1].shape[0]:
                self.chunks.append(_chunk(self.dtype))
                self.fill = 0
            last = self.chunks[-1]
            k = min(m - i, last.shape[0] - self.fill)
            last[self.fill : self.fill + k] = v[i : i + k]
            self.fill += k
            i += k
        self.n += m

    def values(self) -> np.ndarray:
        """A copy of the queued scores as one array; the queue is unchanged. O(n)."""
        if not self.chunks:
            return np.zeros(0, dtype=self.dtype)
        return np.concatenate([*self.chunks[:-1], self.chunks[-1][: self.fill]])

    def take(self, extra: list[np.ndarray] | None = None) -> np.ndarray:
        """Every queued score as one array of its own, followed by the arrays of ``extra``
        (emptied; each of this spill's dtype), emptying the queue: the chunks are copied first
        to last, each released (unmapped) once copied. O(n)."""
        extra = [] if extra is None else extra
        out = np.empty(self.n + sum(a.shape[0] for a in extra), dtype=self.dtype)
        chunks, self.chunks = self.chunks, []
        chunks.reverse()
        i = 0
        while chunks:
            c = chunks.pop()
            k = c.shape[0] if chunks else self.fill
            out[i : i + k] = c[:k]
            i += k
            del c  # the chunk's map goes back to the system here
        for a in extra:
            out[i : i + a.shape[0]] = a
            i += a.shape[0]
        extra.clear()
        self.n = self.fill = 0
        return out

    @property
    def nbytes(self) -> int:
        """Bytes mapped (whole chunks)."""
        return len(self.chunks) * CHUNK

    # memory maps are neither copied nor pickled: the queued scores are
    def __deepcopy__(self, memo: dict[int, Any]) -> Spill:
        out = Spill(self.dtype)
        if self.n:
            out.append(self.values())
        return out

    def __reduce__(self) -> tuple[Any, ...]:
        return (_rebuilt, (self.dtype.str, self.values()))


def _rebuilt(dtype: str, values: np.ndarray) -> Spill:
    """A :class:`Spill` holding ``values`` (unpickling)."""
    out = Spill(np.dtype(dtype))
    if values.shape[0]:
        out.append(values)
    return out
