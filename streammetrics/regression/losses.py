"""Per-row regression losses: MAPE, MSLE / RMSLE, the pinball loss, the Tweedie deviances and
the max error (states: :mod:`streammetrics.regression._sums`).

Definitions (docs/definitions/regression.md), per output, W = sum w over rows of positive
weight: MAPE = sum w |y - p| / max(|y|, eps) / W; MSLE = sum w (log(1 + y) - log(1 + p))^2 / W;
pinball_alpha = sum w (alpha max(y - p, 0) + (1 - alpha) max(p - y, 0)) / W; Tweedie deviance
= sum w d_power(y, p) / W; D² Tweedie = 1 - sum w d_power(y, p) / sum w d_power(y, ybar); max
error = max |y - p| over the rows of positive weight.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from streammetrics._core.docstrings import filled
from streammetrics._core.metric import UndefinedMetricWarning
from streammetrics._core.params import real_param
from streammetrics._core.warn import warn

from ._base import RegressionMetric, undefined
from ._sums import LossSums, MaxAbs
from ._tweedie_d2 import TweedieD2Sums

__all__ = ["D2TweedieScore", "MaxError", "MeanAbsolutePercentageError", "MeanSquaredLogError",
           "PinballLoss", "RootMeanSquaredLogError", "TweedieDeviance"]


class _LossMetric(RegressionMetric):
    """A weighted mean of one per-row loss per output."""

    _state: LossSums
    _kind = ""

    def __init__(self, multioutput: Any = "uniform_average") -> None:
        super().__init__()
        self._init_outputs(multioutput)
        self._state = LossSums(self._kind, self._param(), self._fixed_outputs())

    def _fixed_outputs(self) -> int | None:
        return None if isinstance(self.multioutput, str) else len(self.multioutput)

    def _param(self) -> float:
        return 0.0

    def _config(self) -> dict[str, Any]:
        return {"multioutput": self.multioutput}

    def _compute(self) -> Any:
        rows, weight, loss = self._state.totals()
        if rows == 0:
            return undefined(type(self).__name__, "no samples", self.multioutput, self._state.k)
        return self._combine(self._of_means(loss / weight))

    def _of_means(self, means: np.ndarray) -> np.ndarray:
        """The value of each output from its mean loss (the mean itself but for roots)."""
        return means


@filled
class MeanAbsolutePercentageError(_LossMetric):
    """Streaming mean absolute percentage error, equal to
    ``sklearn.metrics.mean_absolute_percentage_error``.

    MAPE_j = sum_i w_i |y_ij - p_ij| / max(|y_ij|, eps) / sum_i w_i, eps the float64 machine
    epsilon (so a zero target gives a large, finite term); a fraction, not a percentage.

    Parameters
    ----------
    {regression: multioutput_class}

    Notes
    -----
    ``update`` O(n k), ``compute`` O(k), memory 2 k + 2 floats (compensated sums).

    Examples
    --------
    >>> round(MeanAbsolutePercentageError().update([3, -0.5, 2, 7], [2.5, 0.0, 2, 8]).compute(), 6)
    0.327381
    """

    _kind = "absolute_percentage"

    def __init__(self, multioutput: str | ArrayLike = "uniform_average") -> None:
        super().__init__(multioutput)


@filled
class MeanSquaredLogError(_LossMetric):
    """Streaming mean squared logarithmic error, equal to
    ``sklearn.metrics.mean_squared_log_error``.

    MSLE_j = sum_i w_i (log(1 + y_ij) - log(1 + p_ij))^2 / sum_i w_i. Targets and predictions
    must be > -1 (a ``ValueError`` naming the first one that is not).

    Parameters
    ----------
    {regression: multioutput_class}

    Notes
    -----
    ``update`` O(n k), ``compute`` O(k), memory 2 k + 2 floats (shared with
    ``RootMeanSquaredLogError`` in a ``MetricSet``).

    Examples
    --------
    >>> round(MeanSquaredLogError().update([3, 5, 2.5, 7], [2.5, 5, 4, 8]).compute(), 6)
    0.03973
    """

    _kind = "squared_log"

    def __init__(self, multioutput: str | ArrayLike = "uniform_average") -> None:
        super().__init__(multioutput)


class RootMeanSquaredLogError(MeanSquaredLogError):
    """Streaming root mean squared logarithmic error, equal to
    ``sklearn.metrics.root_mean_squared_log_error``: sqrt(MSLE_j) per output, combined by
    ``multioutput``.

    Parameters
    ----------
    multioutput : {"raw_values", "uniform_average"} or array-like of shape (k,)
        How the k per-output roots are combined.

    Notes
    -----
    ``update`` O(n k), ``compute`` O(k), memory 2 k + 2 floats (the MSLE state).

    Examples
    --------
    >>> round(RootMeanSquaredLogError().update([3, 5, 2.5, 7], [2.5, 5, 4, 8]).compute(), 6)
    0.199324
    """

    def __init__(self, multioutput: str | ArrayLike = "uniform_average") -> None:
        super().__init__(multioutput)

    def _of_means(self, means: np.ndarray) -> np.ndarray:
        return np.sqrt(means)


@filled
class PinballLoss(_LossMetric):
    """Streaming mean pinball (quantile) loss, equal to ``sklearn.metrics.mean_pinball_loss``.

    L_j = sum_i w_i (alpha max(y_ij - p_ij, 0) + (1 - alpha) max(p_ij - y_ij, 0)) / sum_i w_i;
    ``alpha = 0.5`` is half the mean absolute error.

    Parameters
    ----------
    alpha : float, default 0.5
        The quantile level the predictions target, in [0, 1].
    {regression: multioutput_class}

    Notes
    -----
    ``update`` O(n k), ``compute`` O(k), memory 2 k + 2 floats.

    Examples
    --------
    >>> PinballLoss(alpha=0.1).update([1, 2, 3], [2, 2, 3]).compute()
    0.3
    """

    def __init__(self, alpha: float = 0.5, *, multioutput: Any = "uniform_average") -> None:
        a = real_param(alpha, "alpha", "a number in [0, 1]")
        if not 0.0 <= a <= 1.0:
            raise ValueError(f"alpha: expected a number in [0, 1], got {alpha!r}")
        self.alpha = a
        super().__init__(multioutput)

    _kind = "pinball"

    def _param(self) -> float:
        return self.alpha

    def _config(self) -> dict[str, Any]:
        return {"alpha": self.alpha, "multioutput": self.multioutput}


@filled
class TweedieDeviance(_LossMetric):
    """Streaming mean Tweedie deviance, equal to ``sklearn.metrics.mean_tweedie_deviance``.

    D_j = sum_i w_i d(y_ij, p_ij) / sum_i w_i per output j, with the unit deviance of ``power``:
    p = 0 normal (y - p)^2; p = 1 Poisson 2 (y log(y / p) - y + p); p = 2 gamma
    2 (log(p / y) + y / p - 1); otherwise
    2 (max(y, 0)^(2-p) / ((1-p)(2-p)) - y p^(1-p) / (1-p) + p^(2-p) / (2-p)).
    Domains (scikit-learn's): power < 0 needs y_pred > 0; 1 <= power < 2 needs y_true >= 0 and
    y_pred > 0; power >= 2 needs both > 0; 0 < power < 1 is refused.

    Parameters
    ----------
    power : float, default 0
        The Tweedie power: <= 0, or >= 1.
    {regression: multioutput_class}

    Notes
    -----
    Several outputs are an extension: scikit-learn's ``mean_tweedie_deviance`` refuses (n, k)
    targets (``streammetrics.functional.mean_tweedie_deviance`` too); here each output's mean
    deviance is scikit-learn's of that column, combined by ``multioutput`` as the other errors.
    ``update`` O(n k), ``compute`` O(k), memory 2 k + 2 floats.

    Examples
    --------
    >>> round(TweedieDeviance(power=1).update([2, 0, 1, 4], [0.5, 0.5, 2.0, 2.0]).compute(), 6)
    1.426015
    >>> TweedieDeviance(multioutput="raw_values").update([[1, 2], [3, 4]], [[1, 3], [3, 2]]).compute()
    array([0. , 2.5])
    """

    def __init__(self, power: float = 0.0, *, multioutput: Any = "uniform_average") -> None:
        self.power = _tweedie_power(power)
        super().__init__(multioutput)

    _kind = "tweedie"

    def _param(self) -> float:
        return self.power

    def _config(self) -> dict[str, Any]:
        return {"power": self.power, "multioutput": self.multioutput}


def _tweedie_power(power: Any) -> float:
    pw = real_param(power, "power", "a number <= 0 or >= 1")
    if 0.0 < pw < 1.0:
        raise ValueError(f"power: expected a number <= 0 or >= 1 (no Tweedie distribution "
                         f"has 0 < power < 1), got {power!r}")
    return pw


@filled
class D2TweedieScore(RegressionMetric):
    """Streaming D² Tweedie score, the fraction of Tweedie deviance explained, equal to
    ``sklearn.metrics.d2_tweedie_score``.

    D²_j = 1 - sum_i w_i d(y_ij, p_ij) / sum_i w_i d(y_ij, ybar_j) per output j, d the unit
    deviance of ``power`` (:class:`TweedieDeviance`) and ybar_j the weighted mean of y_true's
    column j over the whole stream; ``power=0`` is R² (without ``force_finite``). The
    denominator needs that mean before it is known: each batch sums its deviances around its
    own mean, and a merge moves both sums to the merged mean by the Bregman identity
    sum_i w_i d(y_i, c') = sum_i w_i d(y_i, c) + W (d(m, c') - d(m, c)) (Chan's variance merge
    for power 0), so the value is exact at any split, merge or reload. Domains as
    :class:`TweedieDeviance`.

    Parameters
    ----------
    power : float, default 0
        The Tweedie power: <= 0, or >= 1.
    {regression: multioutput_class}

    Notes
    -----
    nan with an ``UndefinedMetricWarning`` before two rows of positive weight, and for an
    output whose y_true is constant (its deviance from its mean is 0; scikit-learn's function
    divides by zero). Several outputs are an extension (scikit-learn takes one). ``update``
    O(n k), ``compute`` O(k), memory 6 k + 2 floats (the smallest and largest y_true too).

    Examples
    --------
    >>> round(D2TweedieScore(power=1).update([0.5, 1, 2.5, 7], [1, 1, 5, 3.5]).compute(), 6)
    0.487915
    """

    _state: TweedieD2Sums

    def __init__(self, power: float = 0.0, *, multioutput: Any = "uniform_average") -> None:
        super().__init__()
        self.power = _tweedie_power(power)
        self._init_outputs(multioutput)
        self._state = TweedieD2Sums(self.power, None if isinstance(self.multioutput, str)
                                    else len(self.multioutput))

    def _config(self) -> dict[str, Any]:
        return {"power": self.power, "multioutput": self.multioutput}

    def _parts(self) -> tuple[float, np.ndarray, np.ndarray]:
        """``(rows, numerator, denominator)`` per output (sums, not means)."""
        rows, _, num, den = self._state.totals()
        return rows, num, den

    def _compute(self) -> Any:
        rows, num, den = self._parts()
        if rows < 2:
            return undefined(type(self).__name__, "fewer than two samples", self.multioutput,
                             self._state.k)
        constant = den == 0
        if constant.any():
            warn(f"{type(self).__name__}: y_true is constant (its deviance from its mean is 0): "
                 "D^2 is undefined, nan", UndefinedMetricWarning)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            return self._combine(np.where(constant, np.nan, 1.0 - num / den))


class MaxError(RegressionMetric):
    """Streaming max error, equal to ``sklearn.metrics.max_error``: max_i |y_ij - p_ij| per
    output j over the rows of positive weight, combined by ``multioutput``.

    Weights (scikit-learn's and torchmetrics' max error take none) say whether a row is a
    sample: a row of weight 0 does not count, however large its error; the size of a positive
    weight does not matter (a maximum has no weighted form); a negative weight is a
    ``ValueError`` naming it, the state unchanged. In ``Decayed`` every row seen counts (decay
    weights stay positive).

    Parameters
    ----------
    multioutput : {"raw_values", "uniform_average"} or array-like of shape (k,)
        How the k per-output maxima are combined (scikit-learn's ``max_error`` takes one output).

    Notes
    -----
    ``update`` O(n k), ``compute`` O(k), memory k + 2 floats. Merges by maximum; in a ``Window``
    or ``Decayed`` the wrapper keeps the rows (a maximum cannot forget one).

    Examples
    --------
    >>> MaxError().update([3, 2, 7, 1], [4, 2, 7, 1]).compute()
    1.0
    """

    _state: MaxAbs

    def __init__(self, multioutput: Any = "uniform_average") -> None:
        super().__init__()
        self._init_outputs(multioutput)
        self._state = MaxAbs(None if isinstance(self.multioutput, str) else len(self.multioutput))

    def _config(self) -> dict[str, Any]:
        return {"multioutput": self.multioutput}

    def _compute(self) -> Any:
        rows, m = self._state.totals()
        if rows == 0:
            return undefined(type(self).__name__, "no samples", self.multioutput, self._state.k)
        return self._combine(m)
