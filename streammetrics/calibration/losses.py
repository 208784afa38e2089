"""Proper scoring rules: log loss and the Brier score with its decomposition.

``LogLoss`` = sum_i w_i * (-log q_i) / sum_i w_i, q_i the probability given to the true class,
clipped to [eps, 1 - eps] with eps of the input's float type (scikit-learn's ``log_loss``).
``BrierScore`` = sum_i w_i * sum_c (p_ic - [y_i = c])^2 / sum_i w_i for multiclass, and
sum_i w_i (p_i - y_i)^2 / sum_i w_i for binary (scikit-learn's ``brier_score_loss``; for
multiclass with ``scale_by_half=False``).

Both hold O(1) sums (Brier O(K n_bins) for its decomposition), merge by addition, and are exact
(float64 sums; the one-shot value to rounding). An empty state (total weight 0) is nan with an
:class:`~streammetrics.UndefinedMetricWarning`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from streammetrics._core.averaging import undefined_without_weight as undefined
from streammetrics._core.docstrings import filled

from ._common import ProbabilityMetric

__all__ = ["LogLoss", "BrierScore", "BrierDecomposition"]


@filled
class LogLoss(ProbabilityMetric[float]):
    """Streaming log loss (cross-entropy), equal to ``sklearn.metrics.log_loss``.

    Parameters
    ----------
    num_classes : int or None
        None: binary (``y_pred`` = P(class 1)); C: multiclass ((n, C) probabilities).
    from_logits : bool
        ``y_pred`` are logits: the sigmoid (binary) or row softmax (multiclass) is taken in
        float64 first.
    {labels: classes_pos_label}

    Notes
    -----
    Clipping is per batch, with eps of that batch's float type (float32 input: float32 eps, as
    scikit-learn does; the log is taken in float64). ``update`` O(n C), ``compute`` O(1),
    memory 3 floats.

    Examples
    --------
    >>> m = LogLoss()
    >>> _ = m.update([0, 1], [0.2, 0.7]).update([1], [0.9])
    >>> round(m.compute(), 6)
    0.228393
    """

    def __init__(self, num_classes: int | None = None, *, from_logits: bool = False,
                 classes: Any = None, pos_label: Any = None) -> None:
        super().__init__()
        self._init_state(num_classes, 0, "right", from_logits, allow_zero=True, classes=classes,
                         pos_label=pos_label)

    def _config(self) -> dict[str, Any]:
        return {"num_classes": self.num_classes, "from_logits": self.from_logits, **self._labels.config()}

    def _compute(self) -> float:
        w, loss, _ = self._state.totals()
        if w <= 0:
            return undefined("LogLoss")
        return float(loss / w)


@dataclass(frozen=True)
class BrierDecomposition:
    """Murphy's decomposition of the Brier score over uniform forecast bins (summed over
    classes for multiclass, one-vs-rest), with the two within-bin terms that make it exact::

        brier = reliability - resolution + uncertainty
                + within_bin_variance - 2 * within_bin_covariance

    With N = sum of weights, per bin b of forecasts p with outcomes o: weight n_b, mean forecast
    p_b, observed frequency o_b; o = overall frequency:
    reliability = sum_b n_b (p_b - o_b)^2 / N, resolution = sum_b n_b (o_b - o)^2 / N,
    uncertainty = o (1 - o), within_bin_variance = sum_i (p_i - p_b(i))^2 / N,
    within_bin_covariance = sum_i (p_i - p_b(i)) (o_i - o_b(i)) / N (weighted).

    Attributes
    ----------
    reliability : float
        Weighted mean squared gap between each bin's mean forecast and observed frequency.
    resolution : float
        Weighted spread of the bins' observed frequencies around the overall frequency.
    uncertainty : float
        o (1 - o) of the overall frequency o (summed over classes for multiclass).
    within_bin_variance : float
        Spread of the forecasts around their bin's mean forecast.
    within_bin_covariance : float
        Covariance of forecasts and outcomes within the bins.
    brier : float
        The Brier score itself, equal to the identity above.

    Examples
    --------
    >>> d = BrierScore(n_bins=2).update([0, 1, 1, 0], [0.1, 0.8, 0.6, 0.4]).decomposition()
    >>> total = (d.reliability - d.resolution + d.uncertainty
    ...          + d.within_bin_variance - 2 * d.within_bin_covariance)
    >>> round(total, 12) == round(d.brier, 12)
    True
    >>> round(d.uncertainty, 6)
    0.25
    """

    reliability: float
    resolution: float
    uncertainty: float
    within_bin_variance: float
    within_bin_covariance: float
    brier: float


@filled
class BrierScore(ProbabilityMetric[float]):
    """Streaming Brier score, equal to ``sklearn.metrics.brier_score_loss``.

    Binary: mean of w (p - y)^2; multiclass: mean over samples of the sum over classes of the
    squared error (scikit-learn's ``scale_by_half=False``; it is not halved, also for C = 2).

    Parameters
    ----------
    num_classes : int or None
        None: binary; C: multiclass.
    n_bins : int
        Uniform bins (``numpy.histogram`` on [0, 1]) of :meth:`decomposition`.
    from_logits : bool
        ``y_pred`` are logits (sigmoid / softmax taken first).
    {labels: classes_pos_label}

    Notes
    -----
    ``update`` O(n C), ``compute`` O(1), :meth:`decomposition` O(C n_bins); memory
    5 C n_bins + 3 floats. Shares its state in a MetricSet with a ``CalibrationError`` of the same
    ``num_classes``, ``n_bins`` and ``from_logits`` (multiclass: with ``classwise=True``).

    Examples
    --------
    >>> m = BrierScore()
    >>> _ = m.update([0, 1], [0.2, 0.7]).update([1], [0.9])
    >>> round(m.compute(), 6)
    0.046667
    """

    def __init__(
        self, num_classes: int | None = None, *, n_bins: int = 15, from_logits: bool = False,
        classes: Any = None, pos_label: Any = None,
    ) -> None:
        super().__init__()
        self._init_state(num_classes, n_bins, "right", from_logits, classes=classes, pos_label=pos_label)
        self.n_bins = int(n_bins)

    def _config(self) -> dict[str, Any]:
        return {"num_classes": self.num_classes, "n_bins": self.n_bins,
                "from_logits": self.from_logits, **self._labels.config()}

    def _compute(self) -> float:
        w, _, brier = self._state.totals()
        if w <= 0:
            return undefined("BrierScore")
        return float(brier / w)

    def decomposition(self) -> BrierDecomposition:
        """Reliability, resolution, uncertainty and the within-bin terms (see
        :class:`BrierDecomposition`); all nan on an empty state. O(C n_bins)."""
        with self._lock:
            bins = self._state.bins().copy()
            brier = self._compute()
        if math.isnan(brier):
            nan = math.nan
            return BrierDecomposition(nan, nan, nan, nan, nan, nan)
        parts = np.zeros(5)
        for k in range(bins.shape[0]):
            parts += _decompose(bins[k])
        rel, res, unc, wbv, wbc = (float(v) for v in parts)
        return BrierDecomposition(rel, res, unc, wbv, wbc, brier)


def _decompose(b: np.ndarray) -> np.ndarray:
    """(rel, res, unc, wbv, wbc) of one column's bins (n_bins, 5)."""
    w, wp, wo, wp2, wpo = b.T
    n = w.sum()
    full = w > 0
    w, wp, wo, wp2, wpo = w[full], wp[full], wo[full], wp2[full], wpo[full]
    pb, ob = wp / w, wo / w
    o = wo.sum() / n
    rel = (w * (pb - ob) ** 2).sum() / n
    res = (w * (ob - o) ** 2).sum() / n
    unc = o * (1.0 - o)
    wbv = (wp2 - wp * pb).sum() / n
    wbc = (wpo - wp * ob).sum() / n
    return np.array([rel, res, unc, wbv, wbc])
