"""Label-ranking metrics of multilabel scores: coverage error, label-ranking average precision
(LRAP) and label-ranking loss, as streaming accumulators (definitions: scikit-learn's
``coverage_error``, ``label_ranking_average_precision_score`` and ``label_ranking_loss``).

For a sample with relevant labels R (``y_true[i, j] == 1``) among L labels and scores s, let
``rank(j) = |{k : s_k >= s_j}|`` (how many labels score at least as high as j: ties count
against j) and ``L(j) = |{k in R : s_k >= s_j}|``. Then, per sample,

* coverage = max over j in R of rank(j) (how far down the ranking one must go to cover every
  relevant label; 0 when R is empty);
* LRAP = mean over j in R of L(j) / rank(j) (1 when R is empty or holds every label);
* ranking loss = |{(j, k) : j in R, k not in R, s_k >= s_j}| / (|R| (L - |R|)), which is
  sum over j in R of (rank(j) - L(j)) over the same denominator (0 when R is empty or full).

Each metric is the (weighted) mean of its per-sample values, so the state is three weighted sums
and their total weight (:class:`LabelRankingSums`, shared by the three metrics in a
``MetricSet``): ``update`` O(n L log(n L)) (one sort of the batch's scores within rows), O(1)
memory, ``compute`` O(1). Exact: equal to scikit-learn's functions to float rounding of the sums.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from streammetrics._core.averaging import undefined_without_weight
from streammetrics._core.docstrings import filled
from streammetrics._core.metric import M, Metric
from streammetrics._core.state import SummedState
from streammetrics._core.validation import as_numpy, check_scores, check_weights, first_bad

__all__ = ["CoverageError", "LabelRankingAveragePrecision", "LabelRankingLoss", "LabelRankingSums",
           "label_ranking_values"]


def label_ranking_values(
    y_true: np.ndarray, y_score: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per-sample (coverage, LRAP, ranking loss) of (n, L) 0/1 labels and scores (module
    docstring). Vectorised: one lexicographic sort of the n L scores (row, then score
    descending); ranks are read at the end of each run of tied scores. O(n L log(n L))."""
    n, n_labels = y_score.shape
    if n == 0 or n_labels == 0:
        z = np.zeros(n)
        return z, np.ones(n), z.copy()
    rows = np.repeat(np.arange(n), n_labels)
    flat = y_score.ravel()
    rel = y_true.ravel().astype(bool)
    order = np.lexsort((-flat, rows))  # within each row, highest score first
    v, r, is_rel = flat[order], rows[order], rel[order]
    # the last position of each run of equal scores within a row: ranks count ties against
    last = np.r_[(v[1:] != v[:-1]) | (r[1:] != r[:-1]), True]
    run_end = np.flip(np.minimum.accumulate(np.flip(np.where(last, np.arange(v.size), v.size))))
    rank = (run_end - r * n_labels + 1).astype(np.float64)  # labels scoring >= this one
    cum_rel = np.cumsum(is_rel)
    row_rel_before = np.r_[0, cum_rel][r * n_labels]
    rel_at_least = (cum_rel[run_end] - row_rel_before).astype(np.float64)  # relevant ones >= it
    n_rel = y_true.astype(bool).sum(axis=1).astype(np.float64)
    cover = np.zeros(n)
    np.maximum.at(cover, r[is_rel], rank[is_rel])
    precision = np.zeros(n)
    np.add.at(precision, r[is_rel], rel_at_least[is_rel] / rank[is_rel])
    wrong = np.zeros(n)
    np.add.at(wrong, r[is_rel], rank[is_rel] - rel_at_least[is_rel])
    trivial = (n_rel == 0) | (n_rel == n_labels)
    with np.errstate(divide="ignore", invalid="ignore"):
        lrap = np.where(trivial, 1.0, precision / n_rel)
        loss = np.where(trivial, 0.0, wrong / (n_rel * (n_labels - n_rel)))
    return cover, lrap, loss


class LabelRankingSums(SummedState):
    """Total weight and the weighted sums of the per-sample coverage, LRAP and ranking loss
    (``sums``, shape (4,)); merged by addition. ``num_labels`` (optional) fixes the width of the
    batches. O(1) memory."""

    _names = ("weight", "coverage", "lrap", "loss")
    _title = {"coverage": "CoverageError", "lrap": "LabelRankingAveragePrecision", "loss": "LabelRankingLoss"}

    def __init__(self, num_labels: int | None = None) -> None:
        self.num_labels = num_labels
        self._arrays = {"sums": np.zeros(4)}

    def key(self) -> Any:
        return ("label_ranking", self.num_labels)

    def prepare(self, y_true: Any, y_score: Any, sample_weight: Any = None) -> np.ndarray:
        y = as_numpy(y_true, "y_true")
        s = as_numpy(y_score, "y_score")
        if y.ndim == 1 and s.ndim == 1:  # one sample
            y, s = y[None], s[None]
            if sample_weight is not None and np.ndim(sample_weight) == 0:
                sample_weight = [sample_weight]
        if y.ndim != 2:
            raise ValueError(f"y_true: expected (n, L) 0/1 label indicators, got shape {y.shape}")
        if s.shape != y.shape:
            raise ValueError(f"y_score: expected shape {y.shape} like y_true, got {s.shape}")
        if self.num_labels is not None and y.shape[1] != self.num_labels:
            raise ValueError(f"y_true: expected {self.num_labels} labels per row, got {y.shape[1]}")
        bad = (y != 0) & (y != 1)
        if bad.any():
            idx = first_bad(bad)
            raise ValueError(f"y_true: labels must be 0 or 1; first invalid value {y[idx].item()!r} "
                             f"at index {idx}")
        s = check_scores(s, "y_score")
        w = check_weights(sample_weight, y.shape[0])
        cover, lrap, loss = label_ranking_values(y, s.astype(np.float64, copy=False))
        if w is None:
            return np.array([float(y.shape[0]), cover.sum(), lrap.sum(), loss.sum()])
        return np.array([w.sum(), w @ cover, w @ lrap, w @ loss])

    def apply(self, delta: np.ndarray) -> None:
        self._arrays["sums"] += delta
        self.version += 1

    def _check_loaded(self, arrays: Mapping[str, np.ndarray]) -> None:
        total, cover, lrap, loss = arrays["sums"]
        if lrap > total * (1 + 1e-9) or loss > total * (1 + 1e-9):
            raise ValueError("state: label-ranking sums exceed their total weight "
                             "(LRAP and loss lie in [0, 1])")
        if self.num_labels is not None and cover > total * self.num_labels * (1 + 1e-9):
            raise ValueError("state: coverage sum exceeds total weight x num_labels")

    def mean(self, which: str) -> float:
        """The weighted mean of ``which`` (``"coverage"``, ``"lrap"`` or ``"loss"``); nan with an
        ``UndefinedMetricWarning`` while the total weight is 0. O(1)."""
        sums = self._arrays["sums"]
        if sums[0] <= 0:
            return undefined_without_weight(self._title[which])
        return float(sums[self._names.index(which)] / sums[0])


class _LabelRankingMetric(Metric[float]):
    _which = "coverage"

    def __init__(self, num_labels: int | None = None) -> None:
        super().__init__()
        integer = isinstance(num_labels, (int, np.integer)) and not isinstance(num_labels, bool)
        if num_labels is not None and (not integer or num_labels < 1):
            raise ValueError(f"num_labels: expected a positive integer or None, got {num_labels!r}")
        self.num_labels = None if num_labels is None else int(num_labels)
        self._state = LabelRankingSums(self.num_labels)

    def _config(self) -> dict[str, Any]:
        return {} if self.num_labels is None else {"num_labels": self.num_labels}

    def update(self: M, y_true: ArrayLike, y_score: ArrayLike, *,  # type: ignore[override]
               sample_weight: ArrayLike | None = None) -> M:
        """Fold in (n, L) 0/1 labels and (n, L) scores (one sample: two rows of length L);
        atomic; returns ``self``. O(n L log(n L))."""
        return self._update_state(y_true, y_score, sample_weight)

    def _compute(self) -> float:
        state = self._state
        assert isinstance(state, LabelRankingSums)
        return state.mean(self._which)


@filled
class CoverageError(_LabelRankingMetric):
    """Coverage error: the mean over samples of how many top-scored labels cover every relevant
    one (``sklearn.metrics.coverage_error``; best value: the mean number of relevant labels).

    Parameters
    ----------
    {ranking: num_labels}

    Notes
    -----
    ``update`` O(n L log(n L)), ``compute`` O(1), memory O(1): see
    :mod:`streammetrics.ranking.label_ranking`.

    Examples
    --------
    >>> import streammetrics as sm
    >>> y, s = [[1, 0, 0], [0, 0, 1]], [[0.75, 0.5, 1.0], [1.0, 0.2, 0.1]]
    >>> sm.CoverageError().update(y, s).compute()
    2.5
    """

    _which = "coverage"

    def __init__(self, num_labels: int | None = None) -> None:
        super().__init__(num_labels)


@filled
class LabelRankingAveragePrecision(_LabelRankingMetric):
    """Label-ranking average precision (LRAP): per sample, the mean over its relevant labels of
    the share of relevant labels among those scored at least as high
    (``sklearn.metrics.label_ranking_average_precision_score``); 1 is perfect.

    Parameters
    ----------
    {ranking: num_labels}

    Notes
    -----
    ``update`` O(n L log(n L)), ``compute`` O(1), memory O(1).

    Examples
    --------
    >>> import streammetrics as sm
    >>> y, s = [[1, 0, 0], [0, 0, 1]], [[0.75, 0.5, 1.0], [1.0, 0.2, 0.1]]
    >>> round(sm.LabelRankingAveragePrecision().update(y, s).compute(), 4)
    0.4167
    """

    _which = "lrap"

    def __init__(self, num_labels: int | None = None) -> None:
        super().__init__(num_labels)


@filled
class LabelRankingLoss(_LabelRankingMetric):
    """Label-ranking loss: per sample, the share of (relevant, irrelevant) label pairs ordered
    wrongly (the irrelevant one scored at least as high), averaged over samples
    (``sklearn.metrics.label_ranking_loss``); 0 is perfect.

    Parameters
    ----------
    {ranking: num_labels}

    Notes
    -----
    ``update`` O(n L log(n L)), ``compute`` O(1), memory O(1).

    Examples
    --------
    >>> import streammetrics as sm
    >>> y, s = [[1, 0, 0], [0, 0, 1]], [[0.75, 0.5, 1.0], [1.0, 0.2, 0.1]]
    >>> sm.LabelRankingLoss().update(y, s).compute()
    0.75
    """

    _which = "loss"

    def __init__(self, num_labels: int | None = None) -> None:
        super().__init__(num_labels)
