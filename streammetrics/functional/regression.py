"""One-shot regression metrics with scikit-learn 1.9's names, signatures, defaults and error
messages (``sklearn.metrics``): thin calls into the accumulators of
:mod:`streammetrics.regression` (one ``update``, one ``compute``), so the one-shot value is the
streaming one.

Differences from scikit-learn: negative ``sample_weight`` is a ``ValueError`` (the
accumulators' rule); a row of weight 0 is no sample at all (``r2_score`` of two rows, one of
weight 0, is undefined: nan with a warning); values are computed in float64 also for float32
input; ``d2_tweedie_score`` of a constant ``y_true`` is a ``ValueError`` (scikit-learn divides
by zero). Odd inputs are answered as scikit-learn answers them (``_targets``, ``_weights``;
tests/_support/functional_odd_inputs.py): 0-d arrays, sets, dicts and scalar weights raise
``InputTypeError`` (a ``ValueError`` and a ``TypeError``), numbers given as strings are read
(refused by ``max_error`` and ``median_absolute_error``, as scikit-learn's ``dtype="numeric"``).

One section per kind: the errors of the summed states (MSE, MAE, R², ..., regcore), then the
whole-set metrics (median absolute error, D² absolute / pinball, correlations, intervals).
"""

from __future__ import annotations

import numbers
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from streammetrics._core.docstrings import filled
from streammetrics._core.labels import is_sparse
from streammetrics._core.metric import UndefinedMetricWarning
from streammetrics._core.validation import InputTypeError
from streammetrics._core.warn import warn
from streammetrics.functional._targets import as_labels
from streammetrics.regression import (
    D2TweedieScore,
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
def _targets(y: Any, name: str, strings: bool = True) -> np.ndarray:
    """``y`` as scikit-learn's ``check_array(y, ensure_2d=False, dtype=float64)`` takes it: an
    array-like of at least one dimension (None, scalars, 0-d arrays, sets, dicts, iterators
    and sparse matrices are an :class:`InputTypeError`, a ``ValueError`` that is a ``TypeError`` too, as
    scikit-learn's ``TypeError`` and ``InvalidParameterError``), numbers given as strings or
    bytes read as the numbers (any other string is a ``ValueError`` naming the first); with
    ``strings=False`` (``max_error``, ``median_absolute_error``: scikit-learn's
    ``dtype="numeric"``) strings are refused."""
    if is_sparse(y):  # scikit-learn: "must be an array-like" (a sparse matrix is not one here)
        raise InputTypeError(f"{name}: sparse matrices are not supported by the regression metrics; "
                             "pass a dense array (.toarray())")
    arr = as_labels(y, name)
    if strings and arr.dtype.kind in "US":
        try:
            return arr.astype(np.float64)
        except ValueError:
            for i, v in enumerate(arr.ravel().tolist()):
                try:
                    float(v)
                except ValueError:
                    idx = np.unravel_index(i, arr.shape)
                    at = idx[0] if len(idx) == 1 else tuple(int(j) for j in idx)
                    raise ValueError(f"{name}: could not convert string to float: {v!r} "
                                     f"(first offending value {name}[{at}])") from None
            raise
    return arr


def _weights(sample_weight: Any) -> Any:
    """``sample_weight`` None or an array-like of one dimension or more (scikit-learn refuses
    scalars and 0-d arrays: an :class:`InputTypeError`); its values are checked with the
    targets."""
    if sample_weight is None:
        return None
    scalar = (str, bytes, numbers.Number, np.generic, set, frozenset, dict, Iterator)
    zero_d = isinstance(sample_weight, np.ndarray) and sample_weight.ndim == 0
    if zero_d or isinstance(sample_weight, scalar) or is_sparse(sample_weight):
        raise InputTypeError(f"sample_weight: expected an array-like of one weight per sample (not a scalar, "
                             f"set, dict, iterator or sparse matrix), got {repr(sample_weight)[:80]}")
    return sample_weight


def _batch(y_true: Any, y_pred: Any, sample_weight: Any, multioutput: Any = None,
           single: str | None = None, strings: bool = True) -> RegressionBatch:
    """Validate as scikit-learn's ``_check_reg_targets``: array-likes (:func:`_targets`,
    :func:`_weights`), equal lengths and outputs, finite, at least one sample; custom output
    weights only with several outputs, one per output; ``single``: the function's name when it
    refuses multioutput; ``strings``: whether numbers given as strings are read."""
    b = regression_batch(_targets(y_true, "y_true", strings), _targets(y_pred, "y_pred", strings),
                         _weights(sample_weight))
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


def _value(cls: Callable[..., RegressionMetric], y_true: Any, y_pred: Any, sample_weight: Any,
           multioutput: Any, **options: Any) -> Any:
    """The one kernel of the functions on a single accumulator: the batch validated as
    scikit-learn does (:func:`_batch`), then ``cls(multioutput, **options)`` fed it once."""
    b = _batch(y_true, y_pred, sample_weight, multioutput)
    return _run(cls(multioutput, **options), b)


# -- errors (regcore): the moments and loss-sum states ---------------------------------------
@filled
def mean_squared_error(y_true: Any, y_pred: Any, *, sample_weight: Any = None,
                       multioutput: Any = "uniform_average") -> Any:
    """Mean squared error: ``sklearn.metrics.mean_squared_error`` on
    :class:`~streammetrics.MeanSquaredError`.

    Parameters
    ----------
    {regression: y_true_y_pred, sample_weight, multioutput}

    Returns
    -------
    float or numpy.ndarray
        sum_i w_i (y_ij - p_ij)^2 / sum_i w_i for each output j.
    """
    return _value(MeanSquaredError, y_true, y_pred, sample_weight, multioutput)


@filled
def root_mean_squared_error(y_true: Any, y_pred: Any, *, sample_weight: Any = None,
                            multioutput: Any = "uniform_average") -> Any:
    """Root mean squared error: ``sklearn.metrics.root_mean_squared_error`` on
    :class:`~streammetrics.RootMeanSquaredError`.

    Parameters
    ----------
    {regression: y_true_y_pred, sample_weight, multioutput}

    Returns
    -------
    float or numpy.ndarray
        The square root of each output's mean squared error (the roots are combined).
    """
    return _value(RootMeanSquaredError, y_true, y_pred, sample_weight, multioutput)


@filled
def mean_absolute_error(y_true: Any, y_pred: Any, *, sample_weight: Any = None,
                        multioutput: Any = "uniform_average") -> Any:
    """Mean absolute error: ``sklearn.metrics.mean_absolute_error`` on
    :class:`~streammetrics.MeanAbsoluteError`.

    Parameters
    ----------
    {regression: y_true_y_pred, sample_weight, multioutput}

    Returns
    -------
    float or numpy.ndarray
        sum_i w_i |y_ij - p_ij| / sum_i w_i, per output j.
    """
    return _value(MeanAbsoluteError, y_true, y_pred, sample_weight, multioutput)


@filled
def r2_score(y_true: Any, y_pred: Any, *, sample_weight: Any = None,
             multioutput: Any = "uniform_average", force_finite: bool = True) -> Any:
    """Coefficient of determination: ``sklearn.metrics.r2_score`` on
    :class:`~streammetrics.R2Score`.

    Parameters
    ----------
    {regression: y_true_y_pred, sample_weight, multioutput_variance, force_finite}

    Returns
    -------
    float or numpy.ndarray
        1 - SSE_j / SST_j per output j (SST the weighted squared deviations of y_true from its
        mean); nan with an ``UndefinedMetricWarning`` for fewer than two samples.
    """
    if multioutput is None:  # scikit-learn's r2_score: None averages the outputs uniformly
        multioutput = "uniform_average"
    metric = R2Score(multioutput, force_finite=force_finite)
    b = _batch(y_true, y_pred, sample_weight, multioutput)
    if b.n < 2:
        warn("R^2 score is not well-defined with less than two samples.", UndefinedMetricWarning)
        return float("nan")
    return _run(metric, b)


@filled
def explained_variance_score(y_true: Any, y_pred: Any, *, sample_weight: Any = None,
                             multioutput: Any = "uniform_average", force_finite: bool = True) -> Any:
    """Explained variance: ``sklearn.metrics.explained_variance_score`` on
    :class:`~streammetrics.ExplainedVariance`.

    Parameters
    ----------
    {regression: y_true_y_pred, sample_weight, multioutput_variance, force_finite}

    Returns
    -------
    float or numpy.ndarray
        1 - Var(y - p) / Var(y) per output (weighted variances).
    """
    return _value(ExplainedVariance, y_true, y_pred, sample_weight, multioutput, force_finite=force_finite)


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
    b = _batch(y_true, y_pred, None, single="max_error", strings=False)
    return float(_run(MaxError(), b))


@filled
def mean_absolute_percentage_error(y_true: Any, y_pred: Any, *, sample_weight: Any = None,
                                   multioutput: Any = "uniform_average") -> Any:
    """Mean absolute percentage error (a fraction):
    ``sklearn.metrics.mean_absolute_percentage_error`` on
    :class:`~streammetrics.MeanAbsolutePercentageError`.

    Parameters
    ----------
    {regression: y_true_y_pred, sample_weight, multioutput}

    Returns
    -------
    float or numpy.ndarray
        The weighted mean of |y - p| / max(|y|, eps), per output (eps the float64 epsilon).
    """
    return _value(MeanAbsolutePercentageError, y_true, y_pred, sample_weight, multioutput)


@filled
def mean_squared_log_error(y_true: Any, y_pred: Any, *, sample_weight: Any = None,
                           multioutput: Any = "uniform_average") -> Any:
    """Mean squared logarithmic error: ``sklearn.metrics.mean_squared_log_error`` on
    :class:`~streammetrics.MeanSquaredLogError` (values must be > -1).

    Parameters
    ----------
    {regression: y_true_y_pred, sample_weight, multioutput}

    Returns
    -------
    float or numpy.ndarray
        The mean squared error of log1p(y_true) and log1p(y_pred).
    """
    return _value(MeanSquaredLogError, y_true, y_pred, sample_weight, multioutput)


@filled
def root_mean_squared_log_error(y_true: Any, y_pred: Any, *, sample_weight: Any = None,
                                multioutput: Any = "uniform_average") -> Any:
    """Root mean squared logarithmic error: ``sklearn.metrics.root_mean_squared_log_error`` on
    :class:`~streammetrics.RootMeanSquaredLogError` (values must be > -1).

    Parameters
    ----------
    {regression: y_true_y_pred, sample_weight, multioutput}

    Returns
    -------
    float or numpy.ndarray
        sqrt(MSLE_j) for each output j, the roots combined by ``multioutput``.
    """
    return _value(RootMeanSquaredLogError, y_true, y_pred, sample_weight, multioutput)


@filled
def mean_pinball_loss(y_true: Any, y_pred: Any, *, sample_weight: Any = None, alpha: float = 0.5,
                      multioutput: Any = "uniform_average") -> Any:
    """Mean pinball (quantile) loss: ``sklearn.metrics.mean_pinball_loss`` on
    :class:`~streammetrics.PinballLoss`.

    Parameters
    ----------
    {regression: y_true_y_pred, sample_weight, alpha, multioutput}

    Returns
    -------
    float or numpy.ndarray
        The weighted mean of alpha max(y - p, 0) + (1 - alpha) max(p - y, 0), per output.
    """
    metric = PinballLoss(alpha, multioutput=multioutput)
    b = _batch(y_true, y_pred, sample_weight, multioutput)
    return _run(metric, b)


@filled
def mean_tweedie_deviance(y_true: Any, y_pred: Any, *, sample_weight: Any = None,
                          power: float = 0) -> float:
    """Mean Tweedie deviance: ``sklearn.metrics.mean_tweedie_deviance`` on
    :class:`~streammetrics.TweedieDeviance`.

    Parameters
    ----------
    {regression: y_true_y_pred_1d, sample_weight, power}

    Returns
    -------
    float
        The weighted mean of the unit deviances d_power(y, p).
    """
    metric = TweedieDeviance(power)
    b = _batch(y_true, y_pred, sample_weight, single="mean_tweedie_deviance")
    return float(_run(metric, b))


@filled
def mean_poisson_deviance(y_true: Any, y_pred: Any, *, sample_weight: Any = None) -> float:
    """Mean Poisson deviance: ``mean_tweedie_deviance(..., power=1)``
    (``sklearn.metrics.mean_poisson_deviance``).

    Parameters
    ----------
    y_true, y_pred : array-like of shape (n,)
        Targets (>= 0) and predictions (> 0).
    {regression: sample_weight}

    Returns
    -------
    float
        The mean of 2 (y log(y / p) - y + p).
    """
    return mean_tweedie_deviance(y_true, y_pred, sample_weight=sample_weight, power=1)


@filled
def mean_gamma_deviance(y_true: Any, y_pred: Any, *, sample_weight: Any = None) -> float:
    """Mean gamma deviance: ``mean_tweedie_deviance(..., power=2)``
    (``sklearn.metrics.mean_gamma_deviance``).

    Parameters
    ----------
    y_true, y_pred : array-like of shape (n,)
        Targets and predictions, both > 0.
    {regression: sample_weight}

    Returns
    -------
    float
        The mean of 2 (log(p / y) + y / p - 1).
    """
    return mean_tweedie_deviance(y_true, y_pred, sample_weight=sample_weight, power=2)


@filled
def d2_tweedie_score(y_true: Any, y_pred: Any, *, sample_weight: Any = None,
                     power: float = 0) -> float:
    """D² Tweedie score, the fraction of Tweedie deviance explained:
    ``sklearn.metrics.d2_tweedie_score`` on :class:`~streammetrics.D2TweedieScore`.

    D² = 1 - D(y, y_pred) / D(y, ybar), D the mean Tweedie deviance of ``power``, ybar the
    weighted mean of ``y_true``; ``power=0`` is R².

    Parameters
    ----------
    {regression: y_true_y_pred_1d, sample_weight, power}

    Returns
    -------
    float
        The score; nan with an ``UndefinedMetricWarning`` for fewer than two samples.

    Raises
    ------
    ValueError
        Also when ``y_true`` is constant: the denominator is 0 (scikit-learn's division by
        zero, a ``ZeroDivisionError``).
    """
    metric = D2TweedieScore(power)
    b = _batch(y_true, y_pred, sample_weight, single="d2_tweedie_score")
    if b.n < 2:
        warn("D^2 score is not well-defined with less than two samples.", UndefinedMetricWarning)
        return float("nan")
    metric.update(b.y, b.p, sample_weight=b.w)
    rows, _, den = metric._parts()
    if rows >= 2 and float(den[0]) == 0.0:
        raise ValueError(f"y_true: D^2 score is undefined: y_true is constant (every value "
                         f"{float(b.y[0, 0])!r}), its deviance from its mean is 0")
    return float(metric.compute())


# -- whole-set (regwhole): every value kept, sorted ----------------------------------------------
@filled
def median_absolute_error(y_true: Any, y_pred: Any, *, multioutput: Any = "uniform_average",
                          sample_weight: Any = None) -> Any:
    """Median absolute error: ``sklearn.metrics.median_absolute_error`` on
    :class:`~streammetrics.MedianAbsoluteError` (unweighted ``numpy.median`` of the absolute
    errors; weighted, scikit-learn's ``averaged_inverted_cdf`` percentile).

    Parameters
    ----------
    {regression: y_true_y_pred, multioutput, sample_weight}

    Returns
    -------
    float or numpy.ndarray
        The (weighted) median of |y_true - y_pred|, per output.
    """
    metric = MedianAbsoluteError(multioutput)
    b = _batch(y_true, y_pred, sample_weight, multioutput, strings=False)
    return _run(metric, b)


@filled
def d2_pinball_score(y_true: Any, y_pred: Any, *, sample_weight: Any = None, alpha: float = 0.5,
                     multioutput: Any = "uniform_average") -> Any:
    """D² pinball score, the fraction of pinball loss explained:
    ``sklearn.metrics.d2_pinball_score`` on :class:`~streammetrics.D2PinballScore`.

    Parameters
    ----------
    {regression: y_true_y_pred, sample_weight, alpha, multioutput}

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


@filled
def d2_absolute_error_score(y_true: Any, y_pred: Any, *, sample_weight: Any = None,
                            multioutput: Any = "uniform_average") -> Any:
    """D² absolute error score: ``sklearn.metrics.d2_absolute_error_score`` (``d2_pinball_score``
    at ``alpha=0.5``) on :class:`~streammetrics.D2AbsoluteErrorScore`.

    Parameters
    ----------
    {regression: y_true_y_pred, sample_weight, multioutput}

    Returns
    -------
    float or numpy.ndarray
        The score (per output for ``raw_values``); nan for fewer than two rows.
    """
    D2AbsoluteErrorScore(multioutput)  # checks multioutput as the class does
    return d2_pinball_score(y_true, y_pred, sample_weight=sample_weight, alpha=0.5, multioutput=multioutput)
