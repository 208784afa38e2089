"""The score-state protocol: what every ranking metric reads from its state.

Two states implement it: the exact sorted buffer (:class:`~streammetrics._scores.exact.buffer.
SortedScores`, every score kept) and the bounded bins (:class:`~streammetrics._scores.binned.bins.
BinnedScores`, at most ``capacity`` bins per column). The ranking metrics (AUROC, average
precision, ROC / PR / DET curves) and the business curves (KS, gains, lift) are written once
against :class:`ScoreState`; which state a metric holds only changes how tight the certified
bounds are (exact states: (v, v)).

Layout shared by both: ``n_columns`` one-vs-rest columns (binary: 1; multiclass: one per class;
multilabel: one per label); in each, the samples positive for the column and the others.

A new ranking metric reads :meth:`ScoreState.counts` (or :meth:`ScoreState.pooled_counts`)
and computes from the :class:`~streammetrics._scores.thresholds.ThresholdCounts` with the kernel of
:mod:`streammetrics._scores.thresholds`, whose ``*_bounds`` functions give the certificate; it never asks
which state it holds.

A few readouts need every individual score (one-vs-one AUROC, DeLong's interval, the vectorised
exact AUROC of every column). They ask the state for its pair-level view,
:meth:`ScoreState.pair_scores`: a :class:`PairScores` when the state keeps every score (the
exact buffer), None otherwise (bins) -- a declared capability, typed, not a test of the class.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from streammetrics._core.state import State

if TYPE_CHECKING:
    from .thresholds import ThresholdCounts


def ascending_steps(
    c: ThresholdCounts, drop_empty: bool = True
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(values, weight, positive weight) of counts ``c`` in increasing threshold order: each
    threshold with the weight and the positive weight added at it (``drop_empty``: without the
    thresholds where none is added). Contiguous float64 arrays. O(len(c.thresholds))."""

    def up(cum: np.ndarray) -> np.ndarray:  # the steps of a decreasing-order cumulative sum
        out = np.empty(cum.shape[0])
        if out.shape[0]:
            out[-1] = cum[0]
            np.subtract(cum[:0:-1], cum[-2::-1], out=out[:-1])
        return out

    v = c.thresholds[::-1].astype(np.float64)
    p, m = up(c.tps), up(c.tps + c.fps)
    keep = m > 0
    if not drop_empty or keep.all():
        return v, m, p
    return v[keep], m[keep], p[keep]


class PairScores(Protocol):
    """The pair-level reads of a state that keeps every score (the exact sorted buffer).

    Layout: ``n_columns`` columns K times ``n_groups`` groups G; in the default layout G = 2
    (group 1: the column's positives, group 0: its negatives); with ``by_class`` (one-vs-one,
    multiclass only) G = C and group k of column c holds the column-c scores of class k.
    A state reading its AUROC other than as ``sum_g u2[c, g] / (2 P_c N_c)`` must not offer
    this view.

    Attributes
    ----------
    task : str
        ``"binary"``, ``"multiclass"`` or ``"multilabel"``.
    n_columns : int
        Number of one-vs-rest columns K.
    by_class : bool
        One-vs-one layout (one group per true class in every column).
    """

    task: str
    n_columns: int
    by_class: bool

    @property
    def is_weighted(self) -> bool:
        """True once a weight other than 1 has been seen (the counts are then floats)."""
        ...

    def pos_group(self, column: int) -> int:
        """The group holding column ``column``'s positives. O(1)."""
        ...

    def u2(self) -> np.ndarray:
        """``u2[c, g]``: twice the Mann-Whitney U of column c's positives against group g,
        shape (K, G) (a tied pair counts 1/2; int64, Python ints past its range, or float64
        when weighted). Read only. O(n log n) on the first read, then kept current."""
        ...

    def totals(self) -> np.ndarray:
        """Total weight of every group, float64, shape (K, G). O(K G)."""
        ...

    def group(self, column: int, grp: int) -> tuple[np.ndarray, np.ndarray | None]:
        """One group's scores sorted increasing with their weights (None: all 1). O(n)."""
        ...

    def column(self, column: int) -> tuple[np.ndarray, np.ndarray | None, np.ndarray, np.ndarray | None]:
        """(positive scores, their weights, negative scores, their weights) of one column,
        each sorted increasing (weights None: all 1). O(n)."""
        ...


class ScoreState(State, ABC):
    """A mergeable state of (label, score, weight) samples per one-vs-rest column.

    An abstract base: the abstract methods below are the contract every implementation fulfils.
    Windows and decay use two more methods of :class:`~streammetrics._core.state.State`, which this
    class deliberately leaves as they are there (the wrappers test whether an implementation
    overrides them, and otherwise rebuild the state from their rows):

    * ``subtract(other)``: remove ``other``'s samples (a state of the same configuration
      holding a sub-multiset of this one's). ``ValueError`` (state unchanged) when ``other`` is
      not contained; ``NotImplementedError`` when this state cannot remove them (the exact
      buffer with non-unit weights).
    * ``scale(factor)``: multiply every weight seen so far by ``factor`` in [0, 1]
      (exponential decay); bins rescale, the exact buffer does not (it is rebuilt).

    Attributes
    ----------
    task : str
        ``"binary"``, ``"multiclass"`` or ``"multilabel"``.
    num_classes : int or None
        Number of classes or labels (None for binary).
    ignore_index : int or None
        Label value whose samples (or multilabel entries) are left out.
    n_columns : int
        Number of one-vs-rest columns (1 for binary).
    """

    task: str
    num_classes: int | None
    ignore_index: int | None
    n_columns: int

    def prepare(self, y_true: Any, y_score: Any, sample_weight: Any = None) -> Any:
        """Validate one batch (or one sample given as scalars) and return its increment.

        The only place input is checked: a bad input raises ``ValueError`` naming the argument,
        the problem and the first offending value, and the state is not touched. Never mutates.

        Parameters
        ----------
        y_true : array-like
            Labels: 0/1 (binary), class indices (multiclass) or an (n, L) 0/1 matrix
            (multilabel).
        y_score : array-like
            Scores: shape (n,) (binary) or (n, C) / (n, L); any non-NaN numbers (a bounded
            state may declare a narrower range).
        sample_weight : array-like, optional
            Finite weights >= 0, shape (n,); rows of weight 0 change nothing.

        Returns
        -------
        object
            An opaque increment for :meth:`apply` (None when nothing counts).

        Complexity: O(n) (O(n·C) for score matrices).
        """
        raise NotImplementedError

    def apply(self, delta: Any) -> None:
        """Fold an increment from :meth:`prepare` in. Never raises. Amortised O(len(delta))."""
        raise NotImplementedError

    @property
    @abstractmethod
    def is_exact(self) -> bool:
        """True when every column's counts are exact at every distinct score (then every
        certificate is (v, v))."""
        ...

    @abstractmethod
    def column_exact(self, column: int) -> bool:
        """True when column ``column``'s counts are exact at every distinct score."""
        ...

    @abstractmethod
    def counts(self, column: int, *, positive_thresholds: bool = False) -> ThresholdCounts:
        """Cumulative positive / negative weight at distinct thresholds of one column.

        Parameters
        ----------
        column : int
            The column, 0 <= column < ``n_columns``.
        positive_thresholds : bool
            Only the thresholds where a positive occurs are needed (average precision); a
            state may still return more.

        Returns
        -------
        ThresholdCounts
            Decreasing thresholds; the counts of "score >= threshold" are exact at every one;
            ``binned`` is True when the order inside a bin is unknown (never for an exact
            column). Exact states: every distinct score; binned states: every bin's lower edge.

        Complexity: O(n log n) for the exact buffer, O(bins) for bins.
        """
        ...

    @abstractmethod
    def pooled_counts(self, *, positive_thresholds: bool = False) -> ThresholdCounts:
        """The counts of every column's samples pooled (micro averaging); as :meth:`counts`."""
        ...

    @abstractmethod
    def support(self) -> np.ndarray:
        """Total positive weight of every column, shape (``n_columns``,). O(n_columns)."""
        ...

    @abstractmethod
    def auroc(self, column: int) -> tuple[float, float, float]:
        """(value, low, high) of one column's AUROC (a tied positive/negative pair counting
        1/2); the exact AUROC of the samples seen lies in [low, high], and an exact column
        gives (v, v, v). nan when the column has no positives or no negatives.
        Complexity: O(1) for the exact buffer (its pair counts are kept current), O(bins) for
        bins."""
        ...

    @abstractmethod
    def pooled_auroc(self) -> tuple[float, float, float]:
        """(value, low, high) of the AUROC of every column's samples pooled (micro); as
        :meth:`auroc`. O(n log n) exact, O(bins) binned."""
        ...

    def sorted_values(self, column: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Values of one column in increasing order with their weight and positive weight.

        Parameters
        ----------
        column : int
            The column, 0 <= column < ``n_columns``.

        Returns
        -------
        tuple of numpy.ndarray
            ``(v, w, p)``: ``v`` ascending, ``w`` >= 0 its weight, ``p`` the part of ``w`` that
            is positive for the column. An exact state gives the samples seen (ties in any
            order; the default, from :meth:`counts`: every distinct score once); a binned
            state every non-empty bin at its lower edge (exact when :meth:`column_exact`).

        Complexity: O(n) for the exact buffer (a merge of its sorted runs), O(bins) binned.
        """
        return ascending_steps(self.counts(column))

    def step_average_precision(self, column: int) -> float | None:
        """The exact step average precision of one column when this state has a faster path
        to it than :meth:`counts` (nan without positives), else None. The exact buffer's
        unweighted one-vs-rest columns: O(P) for P distinct positive scores."""
        return None

    def sample_count(self) -> float | None:
        """Total weight of column 0's samples (every sample of a binary or multiclass task).
        This default reads the pair-level view's group totals (the exact buffer); a state
        without one (bins) overrides it. O(K G)."""
        pairs = self.pair_scores()
        if pairs is None:
            raise NotImplementedError(f"{type(self).__name__} must implement sample_count")
        t = pairs.totals()
        return float(t[0].sum()) if t.size else 0.0

    def pair_scores(self) -> PairScores | None:
        """This state's pair-level view when it keeps every score, else None.

        Returns
        -------
        PairScores or None
            The exact buffer returns itself; a state that keeps no individual scores (bins)
            returns None, and the readouts that need them (one-vs-one AUROC, DeLong's interval)
            are refused. O(1).
        """
        return None
