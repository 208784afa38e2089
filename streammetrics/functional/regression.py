"""One-shot regression metrics with scikit-learn 1.9's names, signatures, defaults and error
messages (``sklearn.metrics``): thin calls into the accumulators of
:mod:`streammetrics.regression` (one ``update``, one ``compute``), so the one-shot value is the
streaming one.

Differences from scikit-learn: negative ``sample_weight`` is a ``ValueError`` (the
accumulators' rule); a row of weight 0 is no sample at all (``r2_score`` of two rows, one of
weight 0, is undefined: nan with a warning); values are computed in float64 also for float32
input.

One section per kind: the errors of the summed states (MSE, MAE, R², ..., regcore), then the
whole-set metrics (median absolute error, D² absolute / pinball, correlations, intervals).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from streammetrics._core.metric import UndefinedMetricWarning
from streammetrics._core.warn import warn
from streammetrics.regression import (
    ExplainedVariance,
    MaxError,
    MeanAbsoluteError,
    MeanAbsolutePercentageError,
    MeanSquaredError,
    MeanSquaredLogError,
    PinballLoss,
    R2Score,
    RootMeanSquaredError,
    RootMeanSquaredLogError,
    TweedieDeviance,
)
from streammetrics.regression._base import RegressionBatch, RegressionMetric, regression_batch
from streammetrics.regression._sums import tweedie_deviance, tweedie_domain
from streammetrics.regression._value_buffer import pinball_sums
from streammetrics.regression.quantiles import D2AbsoluteErrorScore, D2PinballScore, MedianAbsoluteError

__all__ = [
    "d2_absolute_error_score",
    "d2_pinball_score",
    "median_absolute_error",
    "d2_tweedie_score",
    "explained_variance_score",
    "max_error",
    "mean_absolute_error",
    "mean_absolute_percentage_error",
    "mean_gamma_deviance",
    "mean_pinball_loss",
    "mean_poisson_deviance",
    "mean_squared_error",
    "mean_squared_log_error",
    "mean_tweedie_deviance",
    "r2_score",
    "root_mean_squared_error",
    "root_mean_squared_log_error",
]


# -- shared: one validated batch ---------------------------------------------------------------
def _batch(y_true: Any, y_pred: Any, sample_weight: Any, multioutput: Any = None,
           single: str | None = None) -> RegressionBatch:
    """Validate as scikit-learn's ``_check_reg_targets``: equal lengths and outputs, finite,
    at least one sample; custom output weights only with several outputs, one per output;
    ``single``: the function's name when it refuses multioutput."""
    b = regression_batch(y_true, y_pred, sample_weight)
    if b.w is not None and b.n and not b.w.any():  # scikit-learn's words, exactly
        raise ValueError("Sample weights must contain at least one non-zero number.")
    if b.n == 0:
        raise ValueError(f"y_true: Found array with 0 sample(s) (shape={np.shape(y_true)}) while "
                         "a minimum of 1 is required.")
    if single is not None and b.k > 1:
        raise ValueError(f"Multioutput not supported in {single}")
    if multioutput is not None and not isinstance(multioutput, str):
        weights = np.asarray(multioutput)
        if b.k == 1:
            raise ValueError("multioutput: Custom weights are useful only in multi-output cases.")
        if weights.ndim == 1 and weights.shape[0] != b.k:
            raise ValueError(f"multioutput: There must be equally many custom weights "
                             f"({weights.shape[0]}) as outputs ({b.k}).")
    return b


def _run(metric: RegressionMetric, b: RegressionBatch) -> Any:
    """``metric`` fed the validated batch once, its value (a float or, raw values, an array)."""
    return metric.update(b.y, b.p, sample_weight=b.w).compute()


# -- errors (regcore): the moments and loss-sum states ---------------------------------------
def mean_squared_error(y_true: Any, y_pred: Any, *, sample_weight: Any = None,
                       multioutput: Any = "uniform_average") -> Any:
    """Mean squared error: ``sklearn.metrics.mean_squared_error`` on
    :class:`~streammetrics.MeanSquaredError`.

    Parameters
    ----------
    y_true, y_pred : array-like of shape (n,) or (n, k)
        Targets and predictions.
    sample_weight : array-like of shape (n,), optional
        Non-negative sample weights.
    multioutput : {"raw_values", "uniform_average"} or array-like of shape (k,)
        How the per-output values are combined.

    Returns
    -------
    float or numpy.ndarray
        The value (per output for ``raw_values``).
    """
    b = _batch(y_true, y_pred, sample_weight, multioutput)
    return _run(MeanSquaredError(multioutput), b)


def root_mean_squared_error(y_true: Any, y_pred: Any, *, sample_weight: Any = None,
                            multioutput: Any = "uniform_average") -> Any:
    """Root mean squared error: ``sklearn.metrics.root_mean_squared_error`` on
    :class:`~streammetrics.RootMeanSquaredError`.

    Parameters
    ----------
    y_true, y_pred : array-like of shape (n,) or (n, k)
        Targets and predictions.
    sample_weight : array-like of shape (n,), optional
        Non-negative sample weights.
    multioutput : {"raw_values", "uniform_average"} or array-like of shape (k,)
        How the per-output roots are combined.

    Returns
    -------
    float or numpy.ndarray
        The value (per output for ``raw_values``).
    """
    b = _batch(y_true, y_pred, sample_weight, multioutput)
    return _run(RootMeanSquaredError(multioutput), b)


def mean_absolute_error(y_true: Any, y_pred: Any, *, sample_weight: Any = None,
                        multioutput: Any = "uniform_average") -> Any:
    """Mean absolute error: ``sklearn.metrics.mean_absolute_error`` on
    :class:`~streammetrics.MeanAbsoluteError`.

    Parameters
    ----------
    y_true, y_pred : array-like of shape (n,) or (n, k)
        Targets and predictions.
    sample_weight : array-like of shape (n,), optional
        Non-negative sample weights.
    multioutput : {"raw_values", "uniform_average"} or array-like of shape (k,)
        How the per-output values are combined.

    Returns
    -------
    float or numpy.ndarray
        The value (per output for ``raw_values``).
    """
    b = _batch(y_true, y_pred, sample_weight, multioutput)
    return _run(MeanAbsoluteError(multioutput), b)


def r2_score(y_true: Any, y_pred: Any, *, sample_weight: Any = None,
             multioutput: Any = "uniform_average", force_finite: bool = True) -> Any:
    """Coefficient of determination: ``sklearn.metrics.r2_score`` on
    :class:`~streammetrics.R2Score`.

    Parameters
    ----------
    y_true, y_pred : array-like of shape (n,) or (n, k)
        Targets and predictions.
    sample_weight : array-like of shape (n,), optional
        Non-negative sample weights.
    multioutput : {"raw_values", "uniform_average", "variance_weighted"} or array-like
        How the per-output values are combined.
    force_finite : bool, default True
        Constant ``y_true``: 1.0 (perfect predictions) or 0.0 instead of nan / -inf.

    Returns
    -------
    float or numpy.ndarray
        The value (per output for ``raw_values``); nan with an ``UndefinedMetricWarning`` for
        fewer than two samples.
    """
    metric = R2Score(multioutput, force_finite=force_finite)
    b = _batch(y_true, y_pred, sample_weight, multioutput)
    if b.n < 2:
        warn("R^2 score is not well-defined with less than two samples.", UndefinedMetricWarning)
        return float("nan")
    return _run(metric, b)


def explained_variance_score(y_true: Any, y_pred: Any, *, sample_weight: Any = None,
                             multioutput: Any = "uniform_average", force_finite: bool = True) -> Any:
    """Explained variance: ``sklearn.metrics.explained_variance_score`` on
    :class:`~streammetrics.ExplainedVariance`.

    Parameters
    ----------
    y_true, y_pred : array-like of shape (n,) or (n, k)
        Targets and predictions.
    sample_weight : array-like of shape (n,), optional
        Non-negative sample weights.
    multioutput : {"raw_values", "uniform_average", "variance_weighted"} or array-like
        How the per-output values are combined.
    force_finite : bool, default True
        Constant ``y_true``: 1.0 or 0.0 instead of nan / -inf.

    Returns
    -------
    float or numpy.ndarray
        The value (per output for ``raw_values``).
    """
    b = _batch(y_true, y_pred, sample_weight, multioutput)
    return _run(ExplainedVariance(multioutput, force_finite=force_finite), b)


def max_error(y_true: Any, y_pred: Any) -> float:
    """Largest absolute error: ``sklearn.metrics.max_error`` on :class:`~streammetrics.MaxError`.

    Parameters
    ----------
    y_true, y_pred : array-like of shape (n,)
        Targets and predictions (one output).

    Returns
    -------
    float
        max |y_true - y_pred|.
    """
    b = _batch(y_true, y_pred, None, single="max_error")
    return float(_run(MaxError(), b))


def mean_absolute_percentage_error(y_true: Any, y_pred: Any, *, sample_weight: Any = None,
                                   multioutput: Any = "uniform_average") -> Any:
    """Mean absolute percentage error (a fraction):
    ``sklearn.metrics.mean_absolute_percentage_error`` on
    :class:`~streammetrics.MeanAbsolutePercentageError`.

    Parameters
    ----------
    y_true, y_pred : array-like of shape (n,) or (n, k)
        Targets and predictions.
    sample_weight : array-like of shape (n,), optional
        Non-negative sample weights.
    multioutput : {"raw_values", "uniform_average"} or array-like of shape (k,)
        How the per-output values are combined.

    Returns
    -------
    float or numpy.ndarray
        The value (per output for ``raw_values``).
    """
    b = _batch(y_true, y_pred, sample_weight, multioutput)
    return _run(MeanAbsolutePercentageError(multioutput), b)


def mean_squared_log_error(y_true: Any, y_pred: Any, *, sample_weight: Any = None,
                           multioutput: Any = "uniform_average") -> Any:
    """Mean squared logarithmic error: ``sklearn.metrics.mean_squared_log_error`` on
    :class:`~streammetrics.MeanSquaredLogError` (values must be > -1).

    Parameters
    ----------
    y_true, y_pred : array-like of shape (n,) or (n, k)
        Targets and predictions, each > -1.
    sample_weight : array-like of shape (n,), optional
        Non-negative sample weights.
    multioutput : {"raw_values", "uniform_average"} or array-like of shape (k,)
        How the per-output values are combined.

    Returns
    -------
    float or numpy.ndarray
        The value (per output for ``raw_values``).
    """
    b = _batch(y_true, y_pred, sample_weight, multioutput)
    return _run(MeanSquaredLogError(multioutput), b)


def root_mean_squared_log_error(y_true: Any, y_pred: Any, *, sample_weight: Any = None,
                                multioutput: Any = "uniform_average") -> Any:
    """Root mean squared logarithmic error: ``sklearn.metrics.root_mean_squared_log_error`` on
    :class:`~streammetrics.RootMeanSquaredLogError` (values must be > -1).

    Parameters
    ----------
    y_true, y_pred : array-like of shape (n,) or (n, k)
        Targets and predictions, each > -1.
    sample_weight : array-like of shape (n,), optional
        Non-negative sample weights.
    multioutput : {"raw_values", "uniform_average"} or array-like of shape (k,)
        How the per-output roots are combined.

    Returns
    -------
    float or numpy.ndarray
        The value (per output for ``raw_values``).
    """
    b = _batch(y_true, y_pred, sample_weight, multioutput)
    return _run(RootMeanSquaredLogError(multioutput), b)


def mean_pinball_loss(y_true: Any, y_pred: Any, *, sample_weight: Any = None, alpha: float = 0.5,
                      multioutput: Any = "uniform_average") -> Any:
    """Mean pinball (quantile) loss: ``sklearn.metrics.mean_pinball_loss`` on
    :class:`~streammetrics.PinballLoss`.

    Parameters
    ----------
    y_true, y_pred : array-like of shape (n,) or (n, k)
        Targets and predictions.
    sample_weight : array-like of shape (n,), optional
        Non-negative sample weights.
    alpha : float, default 0.5
        The quantile level, in [0, 1].
    multioutput : {"raw_values", "uniform_average"} or array-like of shape (k,)
        How the per-output values are combined.

    Returns
    -------
    float or numpy.ndarray
        The value (per output for ``raw_values``).
    """
    metric = PinballLoss(alpha, multioutput=multioutput)
    b = _batch(y_true, y_pred, sample_weight, multioutput)
    return _run(metric, b)


def mean_tweedie_deviance(y_true: Any, y_pred: Any, *, sample_weight: Any = None,
                          power: float = 0) -> float:
    """Mean Tweedie deviance: ``sklearn.metrics.mean_tweedie_deviance`` on
    :class:`~streammetrics.TweedieDeviance`.

    Parameters
    ----------
    y_true, y_pred : array-like of shape (n,)
        Targets and predictions, in the domain of ``power``.
    sample_weight : array-like of shape (n,), optional
        Non-negative sample weights.
    power : float, default 0
        The Tweedie power (<= 0 or >= 1): 0 normal, 1 Poisson, 2 gamma.

    Returns
    -------
    float
        The mean deviance.
    """
    metric = TweedieDeviance(power)
    b = _batch(y_true, y_pred, sample_weight, single="mean_tweedie_deviance")
    return float(_run(metric, b))


def mean_poisson_deviance(y_true: Any, y_pred: Any, *, sample_weight: Any = None) -> float:
    """Mean Poisson deviance: ``mean_tweedie_deviance(..., power=1)``
    (``sklearn.metrics.mean_poisson_deviance``).

    Parameters
    ----------
    y_true, y_pred : array-like of shape (n,)
        Targets (>= 0) and predictions (> 0).
    sample_weight : array-like of shape (n,), optional
        Non-negative sample weights.

    Returns
    -------
    float
        The mean deviance.
    """
    return mean_tweedie_deviance(y_true, y_pred, sample_weight=sample_weight, power=1)


def mean_gamma_deviance(y_true: Any, y_pred: Any, *, sample_weight: Any = None) -> float:
    """Mean gamma deviance: ``mean_tweedie_deviance(..., power=2)``
    (``sklearn.metrics.mean_gamma_deviance``).

    Parameters
    ----------
    y_true, y_pred : array-like of shape (n,)
        Targets and predictions, both > 0.
    sample_weight : array-like of shape (n,), optional
        Non-negative sample weights.

    Returns
    -------
    float
        The mean deviance.
    """
    return mean_tweedie_deviance(y_true, y_pred, sample_weight=sample_weight, power=2)


def d2_tweedie_score(y_true: Any, y_pred: Any, *, sample_weight: Any = None,
                     power: float = 0) -> float:
    """D² Tweedie score, the fraction of Tweedie deviance explained:
    ``sklearn.metrics.d2_tweedie_score``.

    D² = 1 - D(y, y_pred) / D(y, ybar), D the mean Tweedie deviance of ``power`` (the numerator
    from :class:`~streammetrics.TweedieDeviance`), ybar the weighted mean of ``y_true``;
    ``power=0`` is R².

    Parameters
    ----------
    y_true, y_pred : array-like of shape (n,)
        Targets and predictions, in the domain of ``power``.
    sample_weight : array-like of shape (n,), optional
        Non-negative sample weights.
    power : float, default 0
        The Tweedie power (<= 0 or >= 1).

    Returns
    -------
    float
        The score; nan with an ``UndefinedMetricWarning`` for fewer than two samples.
    """
    metric = TweedieDeviance(power)
    b = _batch(y_true, y_pred, sample_weight, single="d2_tweedie_score")
    if b.n < 2:
        warn("D^2 score is not well-defined with less than two samples.", UndefinedMetricWarning)
        return float("nan")
    tweedie_domain(b.y, b.p, metric.power)
    numerator = float(_run(metric, b))
    y = b.y[:, 0]
    ybar = float(np.average(y, weights=b.w))
    denominator = float(np.average(tweedie_deviance(y, np.full_like(y, ybar), metric.power), weights=b.w))
    with np.errstate(divide="ignore", invalid="ignore"):
        return float(1 - np.float64(numerator) / np.float64(denominator))


# -- whole-set (regwhole): every value kept, sorted ----------------------------------------------
def median_absolute_error(y_true: Any, y_pred: Any, *, multioutput: Any = "uniform_average",
                          sample_weight: Any = None) -> Any:
    """Median absolute error: ``sklearn.metrics.median_absolute_error`` on
    :class:`~streammetrics.MedianAbsoluteError` (unweighted ``numpy.median`` of the absolute
    errors; weighted, scikit-learn's ``averaged_inverted_cdf`` percentile).

    Parameters
    ----------
    y_true, y_pred : array-like of shape (n,) or (n, k)
        Targets and predictions.
    multioutput : {"raw_values", "uniform_average"} or array-like of shape (k,)
        How the per-output medians are combined.
    sample_weight : array-like of shape (n,), optional
        Non-negative sample weights.

    Returns
    -------
    float or numpy.ndarray
        The value (per output for ``raw_values``).
    """
    metric = MedianAbsoluteError(multioutput)
    b = _batch(y_true, y_pred, sample_weight, multioutput)
    return _run(metric, b)


def d2_pinball_score(y_true: Any, y_pred: Any, *, sample_weight: Any = None, alpha: float = 0.5,
                     multioutput: Any = "uniform_average") -> Any:
    """D² pinball score, the fraction of pinball loss explained:
    ``sklearn.metrics.d2_pinball_score`` on :class:`~streammetrics.D2PinballScore`.

    Parameters
    ----------
    y_true, y_pred : array-like of shape (n,) or (n, k)
        Targets and predictions.
    sample_weight : array-like of shape (n,), optional
        Non-negative sample weights.
    alpha : float, default 0.5
        The quantile level, in [0, 1].
    multioutput : {"raw_values", "uniform_average"} or array-like of shape (k,)
        How the per-output scores are combined.

    Returns
    -------
    float or numpy.ndarray
        The score (per output for ``raw_values``); nan with an ``UndefinedMetricWarning`` for
        fewer than two rows (scikit-learn's rule, which counts rows of weight 0 too: a row of
        weight 0 then adds nothing else).
    """
    metric = D2PinballScore(alpha, multioutput)
    b = _batch(y_true, y_pred, sample_weight, multioutput)
    if b.n < 2:
        warn("D^2 score is not well-defined with less than two samples.", UndefinedMetricWarning)
        return float("nan")
    if b.w is not None and (b.w > 0).sum() < 2:
        return _few_positive(b, alpha, multioutput)
    return _run(metric, b)


def _few_positive(b: RegressionBatch, alpha: float, multioutput: Any) -> Any:
    """scikit-learn's D² when one row has positive weight: the quantile is that row's target,
    so the denominator is 0 and the score 1 (a pinball loss of 0) or 0, per output."""
    w = b.w if b.w is not None else np.ones(b.n)
    i = int(np.argmax(w > 0))
    loss = pinball_sums(b.y[i:i + 1], b.p[i:i + 1], None, alpha)
    scores = np.where(loss == 0, 1.0, 0.0)
    if multioutput == "raw_values":
        return scores
    if isinstance(multioutput, str):
        return float(np.mean(scores))
    return float(np.average(scores, weights=np.asarray(multioutput, dtype=np.float64)))


def d2_absolute_error_score(y_true: Any, y_pred: Any, *, sample_weight: Any = None,
                            multioutput: Any = "uniform_average") -> Any:
    """D² absolute error score: ``sklearn.metrics.d2_absolute_error_score`` (``d2_pinball_score``
    at ``alpha=0.5``) on :class:`~streammetrics.D2AbsoluteErrorScore`.

    Parameters
    ----------
    y_true, y_pred : array-like of shape (n,) or (n, k)
        Targets and predictions.
    sample_weight : array-like of shape (n,), optional
        Non-negative sample weights.
    multioutput : {"raw_values", "uniform_average"} or array-like of shape (k,)
        How the per-output scores are combined.

    Returns
    -------
    float or numpy.ndarray
        The score (per output for ``raw_values``); nan for fewer than two rows.
    """
    D2AbsoluteErrorScore(multioutput)  # checks multioutput as the class does
    return d2_pinball_score(y_true, y_pred, sample_weight=sample_weight, alpha=0.5, multioutput=multioutput)
