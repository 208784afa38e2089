"""Validating and splitting a batch of (label, score, weight) rows for the score states.

The one place where ranking input is checked: :class:`ScoreBatches` gives both score states
(the exact sorted buffer and the bins) the same rules and messages. ``prepare`` is two steps:
:func:`~streammetrics._core.validation.score_batch` converts and checks the arguments once,
into a :class:`~streammetrics._core.validation.ScoreBatch` (canonical arrays), and
:meth:`ScoreBatches.split` splits it by one-vs-rest column and label into ``(column, group,
scores, weights)`` parts without checking anything again. A caller that has checked its arrays
already (:mod:`streammetrics.functional`) hands them over as a batch
(:func:`~streammetrics._core.validation.checked_batch`); a single binary sample given as Python
scalars takes a plain-Python path (about a microsecond).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from streammetrics._core.load_checks import reserve
from streammetrics._core.params import IGNORE_INDEX, Param, check_param
from streammetrics._core.validation import (
    ScoreBatch,
    is_scalar,
    one_label,
    one_score,
    one_weight,
    score_batch,
)
from streammetrics._scores.exact.sort_kernels import sort_split

#: A split batch: (column, group, scores, weights or None) per non-empty part.
Parts = list[tuple[int, int, np.ndarray, "np.ndarray | None"]]

_PY_SCALARS = (int, float, bool)
#: The score dtypes kept as they are.
FLOAT_KINDS = {np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.float64)}
#: A score state's ``task``.
_TASKS = ("binary", "multiclass", "multilabel")
_TASK = Param("choice", "must be binary, multiclass or multilabel", choices=_TASKS)


def check_layout(
    task: str, num_classes: int | None, ignore_index: int | None, by_class: bool = False
) -> tuple[int | None, int | None, int]:
    """Validate a score state's layout: ``(num_classes, ignore_index, n_columns)`` normalised
    (num_classes None for binary). Raises ``ValueError`` naming the argument; refuses layouts
    whose empty state alone would not fit in memory. O(1).
    """
    task = check_param(task, "task", _TASK)
    if by_class and task != "multiclass":
        raise ValueError("by_class: only meaningful for multiclass scores")
    ignore_index = check_param(ignore_index, "ignore_index", IGNORE_INDEX)
    nc = None if task == "binary" else int(num_classes)  # type: ignore[arg-type]
    k = 1 if task == "binary" else int(num_classes)  # type: ignore[arg-type]
    reserve(384.0 * k * (k if by_class else 2), f"num_classes={nc}")
    return nc, None if ignore_index is None else int(ignore_index), k


def score_dtype(arr: np.ndarray) -> np.ndarray:
    """Keep float16/32/64 scores as they are; anything else (ints, bools) becomes float64."""
    if arr.dtype in FLOAT_KINDS:
        return arr
    return arr.astype(np.float64)


def unit_or_positive(
    w: np.ndarray | None, keep: np.ndarray | None
) -> tuple[np.ndarray | None, np.ndarray | None]:
    """Drop rows of weight 0 (they change nothing), then the weights if every kept one is 1
    (unit mode), so that a state's layout depends on its samples, not on how they were split."""
    if w is None:
        return None, keep
    zero = w == 0.0
    if zero.any():
        keep = ~zero if keep is None else keep & ~zero
    if (w == 1.0).all() if keep is None else (w[keep] == 1.0).all():
        return None, keep
    return w, keep


def _sorted_parts(col: int, s: np.ndarray, pos: np.ndarray, w: np.ndarray) -> Parts:
    """The two parts (negatives, positives) of one weighted column, each already sorted by
    score with its weights (:func:`~streammetrics._scores.exact.sort_kernels.sort_split`: one key sort for
    both, which the state's own sort then finds sorted); small or unusual columns are split
    unsorted. O(n log n)."""
    both = sort_split(s, pos, w)
    if both is None:
        neg = ~pos
        return [(col, 0, s.compress(neg), w.compress(neg)), (col, 1, s.compress(pos), w.compress(pos))]
    (nv, nw), (pv, pw) = both
    return [(col, 0, nv, nw), (col, 1, pv, pw)]


class ScoreBatches:
    """Batch validation shared by the score states; a state sets ``task``, ``n_columns``,
    ``ignore_index`` and ``by_class`` (one-vs-one groups). ``prepare`` is two steps per batch:
    :func:`~streammetrics._core.validation.score_batch` (every input rule, one call) and then
    :meth:`split` (no checks)."""

    task: str
    n_columns: int
    ignore_index: int | None
    by_class: bool = False

    def prepare(self, y_true: Any, y_score: Any, sample_weight: Any = None) -> Any:
        """The increment of one batch (:meth:`ScoreState.prepare
        <streammetrics._scores.protocol.ScoreState.prepare>`): :meth:`split` of the batch
        checked once (:func:`~streammetrics._core.validation.score_batch`); one binary sample
        given as Python scalars takes a plain-Python path (about a
        microsecond). Never mutates. O(n) (O(n·C) for score matrices)."""
        if self.task == "binary" and (
            (type(y_true) in _PY_SCALARS and type(y_score) in _PY_SCALARS)
            or (is_scalar(y_true) and is_scalar(y_score))
        ):
            return self._split_one(y_true, y_score, sample_weight)
        return self.split(self.check(y_true, y_score, sample_weight))

    def check(self, y_true: Any, y_score: Any, sample_weight: Any = None) -> ScoreBatch:
        """The checks of :meth:`prepare` alone: the batch converted and checked
        (:func:`~streammetrics._core.validation.score_batch` with this state's layout), not split
        -- what a route that splits the rows itself (the engines' range tasks) applies to the
        ranked members' batches. Never mutates. O(n) (O(n·C) for score matrices)."""
        return score_batch(y_true, y_score, sample_weight, self.task, self.n_columns, self.ignore_index)

    def prepare_checked(self, batch: ScoreBatch) -> Any:
        """The increment of a :class:`ScoreBatch` its maker has checked: :meth:`split` of it as it
        is (no array converted or checked again). O(n) (O(n log n) weighted)."""
        return self.split(batch)

    def split(self, batch: ScoreBatch) -> Any:
        """A checked batch split by one-vs-rest column and label: a list of ``(column, group,
        scores, weights)`` (group 1: the column's positives, 0: the others; one-vs-one layouts:
        the true class), or None when nothing counts. Weights None when all are 1; rows of
        weight 0 and labels ``ignore_index`` are dropped. No checks. O(n) (O(n·C) for score
        matrices)."""
        y, s = batch.y, batch.s
        if self.task == "multilabel":
            return self._split_multilabel(y, s, batch.w)
        if y.shape[0] == 0:
            return None
        keep = None
        if self.ignore_index is not None:
            keep = y != self.ignore_index
        w, keep = unit_or_positive(batch.w, keep)
        if keep is not None:
            y, s = y[keep], s[keep]
            w = None if w is None else w[keep]
        if y.shape[0] == 0:
            return None
        if self.task == "binary":
            pos = y.astype(bool, copy=False)
            if w is not None:
                return _sorted_parts(0, s, pos, w)
            if pos.all():  # every row positive (Drift's scores): one copy, no mask; the empty
                # negative part stays (a window counts both classes' parts per batch)
                return [(0, 0, s[:0].copy(), None), (0, 1, s.copy(), None)]
            neg = ~pos
            return [  # compress: a third faster than boolean indexing
                (0, 0, s.compress(neg), None),
                (0, 1, s.compress(pos), None),
            ]
        return self._split_multiclass(y.astype(np.intp, copy=False), s, w)

    def _split_multiclass(self, y: np.ndarray, s: np.ndarray, w: np.ndarray | None) -> Parts:
        c = self.n_columns
        parts: Parts = []
        if self.by_class:
            order = np.argsort(y, kind="stable")
            counts = np.bincount(y, minlength=c)
            ends = np.cumsum(counts)
            block = s[order].T.copy()  # (C, n): column-major copy, rows grouped by class
            wb = None if w is None else w[order]
            for k in range(c):
                lo, hi = int(ends[k] - counts[k]), int(ends[k])
                if hi == lo:
                    continue
                for col in range(c):
                    parts.append((col, k, block[col, lo:hi], None if wb is None else wb[lo:hi]))
            return parts
        onehot = y[None, :] == np.arange(c)[:, None]  # (C, n)
        st = np.ascontiguousarray(s.T)  # one copy; boolean selections then read contiguous rows
        for col in range(c):  # compress: a third faster than boolean indexing
            m = onehot[col]
            if w is not None:
                parts += _sorted_parts(col, st[col], m, w)
                continue
            nm = ~m
            pos_v, neg_v = st[col].compress(m), st[col].compress(nm)
            parts.append((col, 1, pos_v, None if w is None else w.compress(m)))
            parts.append((col, 0, neg_v, None if w is None else w.compress(nm)))
        return parts

    def _split_multilabel(self, y: np.ndarray, s: np.ndarray, w: np.ndarray | None) -> Any:
        num_labels = self.n_columns
        if y.shape[0] == 0:
            return None
        w, keep = unit_or_positive(w, None)
        if keep is not None:
            y, s = y[keep], s[keep]
            w = None if w is None else w[keep]
        # one copy of the scores, column-major: each column's sort then reads contiguous values
        yt, st = y.T, np.ascontiguousarray(s.T)
        parts: Parts = []
        for col in range(num_labels):
            lab = yt[col]
            if self.ignore_index is not None:  # entries labelled ignore_index dropped, 0 or 1 too
                pos = (lab == 1) if self.ignore_index != 1 else np.zeros(lab.shape, dtype=bool)
                neg = (lab == 0) if self.ignore_index != 0 else np.zeros(lab.shape, dtype=bool)
            else:
                pos = lab.astype(bool, copy=False)
                if w is not None:
                    parts += _sorted_parts(col, st[col], pos, w)
                    continue
                neg = ~pos
            parts.append((col, 1, st[col][pos], None if w is None else w[pos]))
            parts.append((col, 0, st[col][neg], None if w is None else w[neg]))
        return parts

    def _split_one(self, y: Any, p: Any, sample_weight: Any) -> Any:
        """The per-sample path: plain Python, no numpy (about a microsecond). The same rules and
        messages as a batch (the shared ``one_*`` helpers fall back to the array checks)."""
        w = None if sample_weight is None else one_weight(sample_weight)
        label = one_label(y, "y_true", None, self.ignore_index)
        score = one_score(p, "y_score")
        if label is None or w == 0.0:
            return None
        return ("one", label, score, None if w == 1.0 else w)
