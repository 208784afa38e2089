"""Validating a batch for the bounded ranking state and turning it into keys.

:class:`BinBatches` is the ``prepare`` side of :class:`~streammetrics._scores.binned.bins.BinnedScores`:
the rules and messages of :class:`~streammetrics._scores.batches.ScoreBatches` (shared with the
exact buffer), plus the declared score range of ``scores="probability"``; binary and
multiclass batches of arrays take vectorised paths that key the scores without splitting them
by label first. Complexities are on each method.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from streammetrics._core.validation import ScoreBatch, as_numpy, drop_ignored, is_scalar, score_batch
from streammetrics._scores.batches import ScoreBatches, unit_or_positive

from .keys import HALF_BITS


class BinBatches(ScoreBatches):
    """``prepare`` of the bounded ranking state (see the module docstring)."""

    scores: str
    edges: np.ndarray | None

    if TYPE_CHECKING:  # BinnedScores' own method

        def to_keys(
            self, s: np.ndarray, name: str = "y_score", check: bool = True, out: np.ndarray | None = None
        ) -> np.ndarray: ...

    def prepare(self, y_true: Any, y_score: Any, sample_weight: Any = None) -> Any:
        """The increment of one batch: :func:`score_batch` once, then keys. Binary and
        multiclass batches and multilabel batches without ignored entries take the vectorised
        paths; one binary sample given as scalars takes :meth:`_prepare_generic`, multilabel
        batches with ignored entries are split, then keyed. Never mutates. O(n) (O(n·C) for
        score matrices)."""
        if self.task == "binary" and is_scalar(y_true) and is_scalar(y_score):
            return self._prepare_generic(y_true, y_score, sample_weight)
        return self.prepare_checked(
            score_batch(y_true, y_score, sample_weight, self.task, self.n_columns, self.ignore_index))

    def prepare_checked(self, batch: ScoreBatch) -> Any:
        """The keyed increment of a checked :class:`ScoreBatch` (:meth:`prepare` after its
        checks, or :mod:`streammetrics.functional`'s batch as it is). O(n) (O(n·C))."""
        if self.task == "multilabel":
            return self._prepare_multilabel(batch)
        return self._prepare_rows(batch)

    def _prepare_generic(self, y_true: Any, y_score: Any, sample_weight: Any = None) -> Any:
        """Any batch (scalars, multilabel, other shapes) through the generic split
        (:meth:`ScoreBatches.prepare`: :func:`score_batch`, :meth:`split`), then keyed: a list of
        (column, label, keys, weights). The vectorised paths give the same state. O(n log n)
        at most (the weighted split sorts)."""
        return self._keyed(ScoreBatches.prepare(self, y_true, y_score, sample_weight), y_true, y_score)

    def _keyed(self, parts: Any, y_in: Any, s_in: Any) -> Any:
        """Keys of a split batch (:meth:`split`'s parts, or one sample's tuple): a list of
        (column, label, keys, weights). ``y_in`` and ``s_in``: the batch as given, for the
        probability range check. O(n)."""
        if self.scores == "probability" and self.edges is None:
            self._check_probability(y_in, s_in)
        if parts is None:
            return None
        if type(parts) is tuple:  # one scalar sample
            _, y, score, w = parts
            parts = [(0, int(y), np.array([score]), None if w is None else np.array([w]))]
        out = []
        for col, grp, v, w in parts:
            if v.shape[0]:
                out.append((col, grp, self.to_keys(v), w))
        return out

    def _prepare_rows(self, batch: ScoreBatch) -> Any:
        """A checked binary / multiclass batch, ignored rows dropped; None when no row counts.
        Binary: keyed without splitting by label, the increment is ``("binary", keys, labels,
        weights, min key, max key)``, split (or not) at apply; multiclass: :meth:`_scores_delta`'s
        increment. O(n) (O(n·C) for score matrices)."""
        if batch.y.shape[0] == 0:
            return None
        yc, sc, w = drop_ignored(batch.y, batch.s, batch.w, self.ignore_index)
        if yc.shape[0] == 0:
            return None
        if self.task != "binary":
            w, keep = unit_or_positive(w, None)  # rows of weight 0: range-checked, then dropped
            return self._scores_delta(yc.astype(np.intp, copy=False), sc, w, keep, batch.y_in, batch.s_in)
        keys = self.to_keys(sc, check=False)
        kmin, kmax = int(keys.min()), int(keys.max())
        if self.scores == "probability" and self.edges is None and (kmin < 0 or kmax > 2 * HALF_BITS):
            self._check_probability(batch.y_in, batch.s_in)  # raises, naming the first offending row
        w, keep = unit_or_positive(w, None)
        if keep is not None:  # rows of weight 0
            keys, yc, w = keys[keep], yc[keep], None if w is None else w[keep]
            if keys.shape[0] == 0:
                return None
        return ("binary", keys, yc.astype(bool, copy=False), w, kmin, kmax)

    def _prepare_multilabel(self, batch: ScoreBatch) -> Any:
        """A checked multilabel batch: without ignored entries the increment is
        :meth:`_scores_delta`'s (labels as an (L, n) matrix) as for multiclass; a batch with
        ignored entries is split by column and label, then keyed (:meth:`_keyed`)."""
        lab = batch.y
        if lab.shape[0] == 0:
            return None
        if self.ignore_index is not None and (lab == self.ignore_index).any():
            return self._keyed(self.split(batch), batch.y_in, batch.s_in)
        w, keep = unit_or_positive(batch.w, None)
        return self._scores_delta(np.ascontiguousarray(lab.T, dtype=bool), batch.s, w, keep,
                                  batch.y_in, batch.s_in)

    def _scores_delta(
        self, labels: np.ndarray, sc: np.ndarray, w: np.ndarray | None, keep: np.ndarray | None,
        y0: np.ndarray, s0: np.ndarray,
    ) -> Any:
        """The increment of a validated (n, C) score matrix: ``("scores", scores, labels,
        weights, min key, max key per column)`` -- labels a class per row (multiclass) or a
        (C, n) boolean matrix (multilabel). No keys yet: :meth:`apply` keys the scores in
        cache-sized blocks of columns, so a batch never holds a second (n, C) array. The range
        check and the per-column key extremes come from each column's min / max score (the key
        maps are increasing). O(n·C)."""
        if sc.dtype != np.float32:
            sc = sc.astype(np.float64, copy=False)
        lo_s, hi_s = sc.min(axis=0), sc.max(axis=0)
        if self.scores == "probability" and self.edges is None and (
            float(lo_s.min()) < 0.0 or float(hi_s.max()) > 1.0
        ):
            self._check_probability(y0, s0)  # raises, naming the first offending row or entry
        kmin, kmax = self.to_keys(lo_s, check=False), self.to_keys(hi_s, check=False)
        if keep is not None:
            sc, w = sc[keep], None if w is None else w[keep]
            labels = labels[:, keep] if labels.ndim == 2 else labels[keep]
            if sc.shape[0] == 0:
                return None
        return ("scores", sc, labels, w, kmin, kmax)

    def _check_probability(self, y_true: Any, y_score: Any) -> None:
        """``scores="probability"``: every score of a row that counts is in [0, 1] (rows or
        elements whose label is ``ignore_index`` are skipped). Inputs already validated."""
        arr = as_numpy(y_score, "y_score")
        if arr.dtype.kind not in "fiub" or not arr.size:
            return
        bad = (arr < 0) | (arr > 1)
        if not bad.any():
            return
        if self.ignore_index is not None:
            y = np.asarray(as_numpy(y_true, "y_true"))
            ign = y == self.ignore_index
            if ign.ndim < bad.ndim and ign.shape == bad.shape[: ign.ndim]:
                ign = ign.reshape(ign.shape + (1,) * (bad.ndim - ign.ndim))  # whole rows
            if np.broadcast_shapes(ign.shape, bad.shape) == bad.shape:
                bad &= ~ign
            if not bad.any():
                return
        i = np.unravel_index(int(np.argmax(bad)), arr.shape)
        where = i[0] if len(i) == 1 else tuple(int(j) for j in i)
        raise ValueError(
            f"y_score: scores='probability' needs scores in [0, 1]; got {float(arr[i])!r} at index {where}"
        )
