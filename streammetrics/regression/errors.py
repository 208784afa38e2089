"""Squared and absolute errors, R² and explained variance: views of one moments state
(:class:`~streammetrics.regression._moments.ErrorMoments`), so that a ``MetricSet`` of them
holds and updates one state.

Definitions (docs/definitions/regression.md), with W = sum w, r = y_true - y_pred per output:
MSE = sum w r^2 / W, RMSE = sqrt(MSE), MAE = sum w |r| / W,
R² = 1 - sum w r^2 / sum w (y - ybar)^2, explained variance = 1 - sum w (r - rbar)^2 /
sum w (y - ybar)^2; per output, combined by ``multioutput`` as scikit-learn does.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from streammetrics._core.docstrings import filled

from ._base import MULTIOUTPUT, RegressionMetric, undefined
from ._moments import ErrorMoments

__all__ = ["ExplainedVariance", "MeanAbsoluteError", "MeanSquaredError", "R2Score",
           "RootMeanSquaredError"]


class _MomentsMetric(RegressionMetric):
    """A view of the shared moments state."""

    _state: ErrorMoments

    def __init__(self, multioutput: Any = "uniform_average") -> None:
        super().__init__()
        self._init_outputs(multioutput)
        fixed = None if isinstance(self.multioutput, str) else len(self.multioutput)
        self._state = ErrorMoments(fixed)

    def _config(self) -> dict[str, Any]:
        return {"multioutput": self.multioutput}

    def _compute(self) -> Any:
        t = self._state.totals()
        if t["rows"] == 0:
            return undefined(type(self).__name__, "no samples", self.multioutput, self._state.k)
        return self._value(t)

    def _value(self, t: dict[str, Any]) -> Any:
        """The combined value from the moments ``t`` (at least one row held)."""
        raise NotImplementedError


class MeanSquaredError(_MomentsMetric):
    """Streaming mean squared error, equal to ``sklearn.metrics.mean_squared_error``.

    MSE_j = sum_i w_i (y_ij - p_ij)^2 / sum_i w_i per output j, combined by ``multioutput``.

    Parameters
    ----------
    multioutput : {"raw_values", "uniform_average"} or array-like of shape (k,)
        For (n, k) targets: the k values (``raw_values``), their mean, or their mean weighted
        by the given output weights.

    Notes
    -----
    ``update`` O(n k) (a few numpy passes), ``compute`` O(k), memory 8 k + 2 floats (shared
    with RMSE, MAE, R² and explained variance in a ``MetricSet``). Exact to rounding: the
    moments are centred per batch and merged with Chan et al.'s update in double-double
    ("Numerical stability" in docs/definitions/regression.md). Undefined (nan with an
    ``UndefinedMetricWarning``) before any sample of positive weight.

    Examples
    --------
    >>> m = MeanSquaredError()
    >>> _ = m.update([3.0, -0.5], [2.5, 0.0]).update([2.0, 7.0], [2.0, 8.0])
    >>> m.compute()
    0.375
    """

    def __init__(self, multioutput: str | ArrayLike = "uniform_average") -> None:
        super().__init__(multioutput)

    def _value(self, t: dict[str, Any]) -> Any:
        return self._combine(t["sse"] / t["weight"])


@filled
class RootMeanSquaredError(_MomentsMetric):
    """Streaming root mean squared error, equal to ``sklearn.metrics.root_mean_squared_error``.

    RMSE_j = sqrt(sum_i w_i (y_ij - p_ij)^2 / sum_i w_i) per output j; ``multioutput``
    combines the per-output roots (as scikit-learn does).

    Parameters
    ----------
    {regression: multioutput_class}

    Notes
    -----
    ``update`` O(n k), ``compute`` O(k), memory 8 k + 2 floats (the shared moments state).

    Examples
    --------
    >>> RootMeanSquaredError().update([3.0, -0.5, 2.0, 7.0], [2.5, 0.0, 2.0, 8.0]).compute()
    0.6123724356957945
    """

    def __init__(self, multioutput: str | ArrayLike = "uniform_average") -> None:
        super().__init__(multioutput)

    def _value(self, t: dict[str, Any]) -> Any:
        return self._combine(np.sqrt(t["sse"] / t["weight"]))


@filled
class MeanAbsoluteError(_MomentsMetric):
    """Streaming mean absolute error, equal to ``sklearn.metrics.mean_absolute_error``.

    MAE_j = sum_i w_i |y_ij - p_ij| / sum_i w_i per output j, combined by ``multioutput``.

    Parameters
    ----------
    {regression: multioutput_class}

    Notes
    -----
    ``update`` O(n k), ``compute`` O(k), memory 8 k + 2 floats (the shared moments state; the
    absolute sums are compensated across batches).

    Examples
    --------
    >>> m = MeanAbsoluteError(multioutput="raw_values")
    >>> m.update([[0.5, 1], [-1, 1], [7, -6]], [[0, 2], [-1, 2], [8, -5]]).compute()
    array([0.5, 1. ])
    """

    def __init__(self, multioutput: str | ArrayLike = "uniform_average") -> None:
        super().__init__(multioutput)

    def _value(self, t: dict[str, Any]) -> Any:
        return self._combine(t["abs_r"] / t["weight"])


def _fraction_explained(numerator: np.ndarray, denominator: np.ndarray,
                        force_finite: bool) -> np.ndarray:
    """1 - numerator / denominator per output, with scikit-learn's ``force_finite`` rules
    (0/0 -> 1, x/0 -> 0 for x > 0)."""
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):  # a subnormal denominator: -inf
        if not force_finite:
            return 1.0 - numerator / denominator
        out = np.ones_like(numerator)
        valid = (numerator != 0) & (denominator != 0)
        out[valid] = 1.0 - numerator[valid] / denominator[valid]
    out[(numerator != 0) & (denominator == 0)] = 0.0
    return out


class R2Score(_MomentsMetric):
    """Streaming coefficient of determination R², equal to ``sklearn.metrics.r2_score``.

    R²_j = 1 - sum_i w_i (y_ij - p_ij)^2 / sum_i w_i (y_ij - ybar_j)^2, ybar_j the weighted
    mean of output j; combined by ``multioutput``.

    Parameters
    ----------
    multioutput : {"raw_values", "uniform_average", "variance_weighted"} or array-like
        How the k per-output values are combined; ``variance_weighted`` weights each by its
        sum of squares around the mean (uniform when all are 0).
    force_finite : bool, default True
        Constant ``y_true`` (denominator 0): 1.0 for perfect predictions, else 0.0, instead of
        nan / -inf (scikit-learn's convention).

    Notes
    -----
    Undefined (nan with an ``UndefinedMetricWarning``) before any sample of positive weight.
    One sample (or several equal targets) has a zero denominator: ``force_finite`` decides
    (``r2_score`` of fewer than two rows is nan, as scikit-learn's; the accumulator keeps
    the law that a weight of k is k copies). ``update`` O(n k),
    ``compute`` O(k), memory 8 k + 2 floats (the shared moments state). Stable for targets with
    a large mean (1e9 + noise keeps its digits: the moments are centred, see
    "Numerical stability" in docs/definitions/regression.md).

    Examples
    --------
    >>> m = R2Score()
    >>> _ = m.update([3.0, -0.5], [2.5, 0.0]).update([2.0, 7.0], [2.0, 8.0])
    >>> round(m.compute(), 6)
    0.948608
    """

    _multioutputs = MULTIOUTPUT

    def __init__(self, multioutput: Any = "uniform_average", *, force_finite: bool = True) -> None:
        super().__init__(multioutput)
        if not isinstance(force_finite, (bool, np.bool_)):
            raise ValueError(f"force_finite: expected True or False, got {force_finite!r}")
        self.force_finite = bool(force_finite)

    def _config(self) -> dict[str, Any]:
        return {"multioutput": self.multioutput, "force_finite": self.force_finite}

    def _numerator(self, t: dict[str, Any]) -> np.ndarray:
        return np.asarray(t["sse"])

    def _value(self, t: dict[str, Any]) -> Any:
        scores = _fraction_explained(self._numerator(t), np.asarray(t["m2_y"]), self.force_finite)
        return self._combine(scores, np.asarray(t["m2_y"]))


class ExplainedVariance(R2Score):
    """Streaming explained variance, equal to ``sklearn.metrics.explained_variance_score``.

    EV_j = 1 - sum_i w_i (r_ij - rbar_j)^2 / sum_i w_i (y_ij - ybar_j)^2, r = y_true - y_pred,
    bars the weighted means; combined by ``multioutput``. It differs from R² by ignoring a
    constant bias of the predictions.

    Parameters
    ----------
    multioutput : {"raw_values", "uniform_average", "variance_weighted"} or array-like
        How the k per-output values are combined.
    force_finite : bool, default True
        Constant ``y_true``: 1.0 if the residuals are constant too, else 0.0 (scikit-learn's
        convention), instead of nan / -inf.

    Notes
    -----
    ``update`` O(n k), ``compute`` O(k), memory 8 k + 2 floats (the shared moments state).
    Undefined (nan with an ``UndefinedMetricWarning``) before any sample of positive weight.

    Examples
    --------
    >>> round(ExplainedVariance().update([3, -0.5, 2, 7], [2.5, 0.0, 2, 8]).compute(), 6)
    0.957173
    """

    def __init__(self, multioutput: str | ArrayLike = "uniform_average", *,
                 force_finite: bool = True) -> None:
        super().__init__(multioutput, force_finite=force_finite)

    def _numerator(self, t: dict[str, Any]) -> np.ndarray:
        return np.asarray(t["m2_r"])
