"""The state of :class:`~streammetrics.monitoring.Drift`: the current scores against a fixed
reference (:mod:`._drift_reference`, carried in the configuration, never in the state).

Three parts, every one mergeable, removable (windows) and rescalable (decay) where its parts are:

* ``hist`` (K, bins): the current weight in each of the reference's quantile bins per column
  (PSI, JS), summed;
* ``classes`` (C,): the current weight of each predicted class (argmax), summed; (0,) for
  one score per row;
* ``scores``: the current scores per column in the shared score state of the ranking family
  (the exact sorted buffer, or with ``max_bytes`` the bounded bins; a row's label is its
  predicted class, so the buffer's columns hold every row's score of that column), read for
  KS and Wasserstein. Its arrays are saved with the prefix ``scores_``.

``update`` is O(n log bins) on top of the score state's own update; memory: the score state
plus (K bins + C) floats.
"""

from __future__ import annotations

import re
from collections.abc import Hashable, Mapping
from typing import Any

import numpy as np

from streammetrics._core.state import State
from streammetrics._core.validation import ScoreBatch, as_numpy, check_weights
from streammetrics._scores.binned.bins import BinnedScores
from streammetrics._scores.exact.buffer import SortedScores
from streammetrics._scores.protocol import PairScores, ScoreState

from ._drift_reference import Reference, bin_counts, check_score_batch
from ._drift_stats import segment_sums

PREFIX = "scores_"


class DriftState(State):
    """Current scores against a :class:`Reference` (module docstring)."""

    def __init__(self, reference: Reference, max_bytes: int | None) -> None:
        self.reference = reference
        self.max_bytes = max_bytes
        columns = reference.columns
        task = "binary" if columns is None else "multiclass"
        self._hist = np.zeros((reference.n_columns, reference.bins))
        self._hist_stale = False  # exact: the bin counts are read off the sorted scores when asked
        self._classes = np.zeros(0 if columns is None else columns)
        if max_bytes is None:
            self.scores: ScoreState = SortedScores(task, columns)
        else:  # the whole state within max_bytes: the bins get what the counts leave
            own = self._hist.nbytes + self._classes.nbytes
            try:
                self.scores = BinnedScores(task, columns, max_bytes=max_bytes - own)
            except ValueError as exc:
                need = re.search(r"need at least (\d+)", str(exc))
                more = f"; need at least {own + int(need.group(1))}" if need else ""
                raise ValueError(f"max_bytes: {max_bytes} is too small for the score bins and {own} "
                                 f"bytes of bin counts{more}") from None

    def key(self) -> Hashable:
        return ("drift", self.reference.bins, self.max_bytes, self.scores.key())

    # -- updates ------------------------------------------------------------------------------------
    def prepare(self, y_true: Any, y_score: Any, sample_weight: Any = None) -> Any:
        """Validate a batch of scores ((n,) or (n, C) as the reference; finite) and weights;
        return (score-state increment, hist increment, class increment). Never mutates.
        ``y_true`` is None (``Drift.update``) or the wrappers' placeholder labels (one per row,
        ignored). O(n log bins)."""
        ref = self.reference
        s = check_score_batch(y_score, ref.columns)
        if y_true is not None and np.shape(y_true) not in ((), (s.shape[0],)):
            raise ValueError(f"y_true: Drift takes no labels; got shape {np.shape(y_true)} "
                             f"for {s.shape[0]} rows")
        w = check_weights(sample_weight, s.shape[0])
        hist = self._hist_increment(s, w)
        if ref.columns is None:
            labels = np.ones(s.shape[0], dtype=bool)
            classes = np.zeros(0)
        else:
            labels = np.argmax(s, axis=1)
            classes = np.bincount(labels, w, minlength=ref.columns).astype(np.float64)
        # the scores and weights are checked: the score state splits them as they are
        return self.scores.prepare_checked(ScoreBatch(labels, s, w, labels, s)), hist, classes

    def _hist_increment(self, s: np.ndarray, w: np.ndarray | None) -> np.ndarray | None:
        """The batch's bin counts; None for the exact buffer, whose counts are read off its
        sorted scores when asked (:meth:`hist`: a few binary searches, no pass per batch)."""
        return None

    def apply(self, delta: Any) -> None:
        inner, hist, classes = delta
        self.scores.apply(inner)
        if hist is None:
            self._hist_stale = True
        else:
            self._hist += hist
        self._classes += classes

    # -- reads --------------------------------------------------------------------------------------
    def hist(self) -> np.ndarray:
        """The current weight in each of the reference's bins, (K, bins). Exact buffer: read off
        the sorted scores (O(bins log n) unweighted, O(n) weighted) once per change."""
        if self._hist_stale:
            pairs = self.scores.pair_scores()
            assert pairs is not None  # only the exact buffer defers its counts
            self._hist = exact_hist(self.reference, pairs)
            self._hist_stale = False
        return self._hist.copy()

    def classes(self) -> np.ndarray:
        return self._classes.copy()

    def sample_count(self) -> float:
        hist = self.hist()
        return float(hist[0].sum()) if hist.size else 0.0

    # -- the protocol -------------------------------------------------------------------------------
    def arrays(self) -> dict[str, Any]:
        out: dict[str, Any] = {"hist": self.hist(), "classes": self._classes.copy()}
        out.update({PREFIX + k: v for k, v in self.scores.arrays().items()})
        return out

    def load_arrays(self, arrays: Mapping[str, Any]) -> None:
        mine = {}
        for name, current in (("hist", self._hist), ("classes", self._classes)):
            if name not in arrays:
                raise ValueError(f"state: missing array {name!r}")
            a = np.asarray(arrays[name])
            if a.shape != current.shape or a.dtype.kind not in "biuf":
                raise ValueError(f"state: array {name!r} must be numbers of shape {current.shape}, "
                                 f"got {a.dtype} {a.shape}")
            a = a.astype(np.float64)
            if a.size and not (np.isfinite(a).all() and (a >= 0).all()):
                raise ValueError(f"state: array {name!r} holds negative or non-finite weights")
            mine[name] = a
        inner = {k[len(PREFIX):]: v for k, v in arrays.items() if isinstance(k, str) and k.startswith(PREFIX)}
        extra = sorted(k for k in arrays if k not in ("hist", "classes") and not
                       (isinstance(k, str) and k.startswith(PREFIX)))
        if extra:
            raise ValueError(f"state: unexpected arrays {extra}")
        scores = self.scores.copy()
        scores.load_arrays(inner)  # validates; the state changes only once everything passed
        assert isinstance(scores, ScoreState)
        check_counts(self.reference, scores, mine["hist"], mine["classes"])
        self.scores = scores
        self._hist, self._classes = mine["hist"], mine["classes"]
        self._hist_stale = False

    def _check_other(self, other: State) -> DriftState:
        if not isinstance(other, DriftState) or other.key() != self.key():
            raise ValueError("merge: the states do not hold the same reference, bins and max_bytes")
        return other

    def merge(self, other: State) -> None:
        self.merge_many([other])

    def merge_many(self, others: Any) -> None:
        os_ = [self._check_other(o) for o in others]
        self.scores.merge_many([o.scores for o in os_])
        for o in os_:
            self._add_hist(o, 1.0)
            self._classes += o._classes

    def _add_hist(self, other: DriftState, sign: float) -> None:
        """Add (sign 1) or remove (-1) ``other``'s bin counts; the exact buffer's are re-read."""
        if self.max_bytes is None:
            self._hist_stale = True
        else:
            self._hist += sign * other.hist()
            np.maximum(self._hist, 0.0, out=self._hist)

    def reset(self) -> None:
        self.scores.reset()
        self._hist[...] = 0
        self._hist_stale = False
        self._classes[...] = 0

    def subtract(self, other: State) -> None:
        """Remove ``other``'s samples (windows); the score state's rules apply (the exact buffer
        cannot remove weighted samples: ``NotImplementedError``, and the window rebuilds)."""
        o = self._check_other(other)
        self.scores.subtract(o.scores)  # raises before anything changed
        self._add_hist(o, -1.0)
        np.maximum(self._classes - o._classes, 0.0, out=self._classes)

    @property
    def nbytes(self) -> int:
        return int(self._hist.nbytes + self._classes.nbytes + self.scores.nbytes)

    def rows_of(self, y_score: Any) -> tuple[Any, Any]:
        """(placeholder labels, scores) of a batch for the wrappers' row store: one 0 per row
        (a lone score, or a lone row of C scores, is one row). Not validated (``prepare`` does)."""
        s = as_numpy(y_score, "y_score")
        if s.ndim == 0:
            return 0, y_score
        if self.reference.columns is not None and s.ndim == 1:
            s = s.reshape(1, -1)
        return np.zeros(s.shape[0] if s.ndim else 1, dtype=np.int8), s


def exact_hist(reference: Reference, pairs: PairScores) -> np.ndarray:
    """The weight of the exact buffer's scores in each of the reference's bins (half-open
    ``[e_i, e_{i+1})``, as :func:`~._drift_reference.bin_index`), (K, bins): the scores below
    each interior edge by one binary search per edge in each sorted group, weights summed per
    stretch. O(bins log n) unweighted, O(n) weighted."""
    out = np.zeros((reference.n_columns, reference.bins))
    for k in range(reference.n_columns):
        interior = reference.edges[k][1:-1]
        pv, pw, nv, nw = pairs.column(k)
        for v, w in ((pv, pw), (nv, nw)):
            if v.shape[0]:
                bounds = np.concatenate([[0], np.searchsorted(v, interior, "left"), [v.shape[0]]])
                out[k] += np.diff(bounds) if w is None else segment_sums(w, bounds)
    return out


def check_finite_scores(reference: Reference, pairs: PairScores) -> None:
    """Refuse (``ValueError`` naming the column and the first offending value) a loaded exact
    buffer holding a non-finite score: an update refuses them, and the distances (KS,
    Wasserstein) are read off finite scores only. O(n)."""
    for k in range(reference.n_columns):
        pv, _, nv, _ = pairs.column(k)
        for v in (pv, nv):
            bad = ~np.isfinite(v)
            if bad.any():
                raise ValueError(f"state: column {k} holds a non-finite score; first invalid value "
                                 f"{float(v[int(np.flatnonzero(bad)[0])])!r}")


#: How far (relative to a column's total weight) a loaded state's bin and class counts may be from
#: what its scores give: float sums in another order, merges, decay; a file outside is refused.
COUNT_RTOL = 1e-9


def check_counts(reference: Reference, scores: ScoreState, hist: np.ndarray, classes: np.ndarray) -> None:
    """Refuse (``ValueError`` naming the first disagreement) loaded bin counts ``hist`` and class
    counts ``classes`` that the loaded ``scores`` cannot give: per column, the total weight;
    the weight below each interior quantile edge -- exactly that of the scores (exact buffer),
    or between that of the bins wholly below the edge and of those starting below it (bins);
    for scores of shape (n, C), each class's weight (the weight of the scores of the rows
    predicting it). Within :data:`COUNT_RTOL` of the column's total. O(n) (exact), O(bins)."""
    pairs = scores.pair_scores()
    if pairs is not None:
        check_finite_scores(reference, pairs)
    totals = hist.sum(axis=1)
    held = None if pairs is None else exact_hist(reference, pairs)
    for k in range(reference.n_columns):
        interior = reference.edges[k][1:-1]
        below = np.cumsum(hist[k])[:-1]  # weight of the bins under each interior edge
        if held is not None:
            low = high = np.cumsum(held[k])[:-1]
            total = float(held[k].sum())
        else:
            assert isinstance(scores, BinnedScores)
            pos, neg = scores.bins(k)
            cum = np.concatenate([[0.0], np.cumsum(pos + neg)])
            total = float(cum[-1])
            low = cum[np.searchsorted(scores.upper_edges(k), interior, "left")]  # bins wholly below
            high = cum[np.searchsorted(scores.lower_edges(k), interior, "left")]  # bins starting below
        tol = COUNT_RTOL * max(total, float(totals[k]), float(totals[0])) + _TINY
        if abs(total - float(totals[k])) > tol or abs(float(totals[k]) - float(totals[0])) > tol:
            raise ValueError(f"state: column {k} holds scores of total weight {total!r}, its bin counts "
                             f"{float(totals[k])!r} (column 0: {float(totals[0])!r})")
        bad = (below < low - tol) | (below > high + tol)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise ValueError(f"state: the bin counts of column {k} put weight {float(below[i])!r} below the "
                             f"edge {float(interior[i])!r}, the scores {float(low[i])!r}"
                             + ("" if high[i] == low[i] else f" to {float(high[i])!r}"))
    if classes.size:
        support = scores.support()
        tol = COUNT_RTOL * max(float(totals[0]), float(classes.sum())) + _TINY
        bad = np.abs(support - classes) > tol
        if bad.any():
            c = int(np.flatnonzero(bad)[0])
            raise ValueError(f"state: class {c} has weight {float(classes[c])!r} in the class counts, "
                             f"{float(support[c])!r} in the scores")


_TINY = float(np.finfo(np.float64).tiny)


class BinnedDriftState(DriftState):
    """A :class:`DriftState` over the bounded bins, which can also rescale (decay); its bin
    counts are summed per batch (the bins cannot give them)."""

    def _hist_increment(self, s: np.ndarray, w: np.ndarray | None) -> np.ndarray | None:
        ref = self.reference
        cols = s.reshape(s.shape[0], ref.n_columns)
        return np.stack([bin_counts(ref.edges[k], cols[:, k] if ref.columns is None else
                                    np.ascontiguousarray(cols[:, k]), w) for k in range(cols.shape[1])])

    def scale(self, factor: float) -> None:
        """Multiply every weight by ``factor`` (exponential decay). O(bins)."""
        self.scores.scale(factor)
        self._hist *= factor
        self._classes *= factor


def drift_state(reference: Reference, max_bytes: int | None) -> DriftState:
    """The state of a Drift: exact (sorted buffer) or, with ``max_bytes``, bounded (bins)."""
    return DriftState(reference, None) if max_bytes is None else BinnedDriftState(reference, max_bytes)
