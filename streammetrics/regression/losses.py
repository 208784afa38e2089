"""Per-row regression losses: MAPE, MSLE / RMSLE, the pinball loss, the Tweedie deviances and
the max error (states: :mod:`streammetrics.regression._sums`).

Definitions (docs/definitions/regression.md), per output, W = sum w over rows of positive
weight: MAPE = sum w |y - p| / max(|y|, eps) / W; MSLE = sum w (log(1 + y) - log(1 + p))^2 / W;
pinball_alpha = sum w (alpha max(y - p, 0) + (1 - alpha) max(p - y, 0)) / W; Tweedie deviance
= sum w d_power(y, p) / W; max error = max |y - p|.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from streammetrics._core.docstrings import filled
from streammetrics._core.params import real_param

from ._base import RegressionMetric, undefined
from ._sums import LossSums, MaxAbs

__all__ = ["MaxError", "MeanAbsolutePercentageError", "MeanSquaredLogError", "PinballLoss",
           "RootMeanSquaredLogError", "TweedieDeviance"]


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


class TweedieDeviance(_LossMetric):
    """Streaming mean Tweedie deviance, equal to ``sklearn.metrics.mean_tweedie_deviance``.

    D = sum_i w_i d(y_i, p_i) / sum_i w_i with the unit deviance of ``power``: p = 0 normal
    (y - p)^2; p = 1 Poisson 2 (y log(y / p) - y + p); p = 2 gamma 2 (log(p / y) + y / p - 1);
    otherwise 2 (max(y, 0)^(2-p) / ((1-p)(2-p)) - y p^(1-p) / (1-p) + p^(2-p) / (2-p)).
    Domains (scikit-learn's): power < 0 needs y_pred > 0; 1 <= power < 2 needs y_true >= 0 and
    y_pred > 0; power >= 2 needs both > 0; 0 < power < 1 is refused.

    Parameters
    ----------
    power : float, default 0
        The Tweedie power: <= 0, or >= 1.

    Notes
    -----
    One output only (scikit-learn's ``mean_tweedie_deviance`` refuses multioutput).
    ``update`` O(n), ``compute`` O(1), memory 4 floats.

    Examples
    --------
    >>> round(TweedieDeviance(power=1).update([2, 0, 1, 4], [0.5, 0.5, 2.0, 2.0]).compute(), 6)
    1.426015
    """

    def __init__(self, power: float = 0.0) -> None:
        pw = real_param(power, "power", "a number <= 0 or >= 1")
        if 0.0 < pw < 1.0:
            raise ValueError(f"power: expected a number <= 0 or >= 1 (no Tweedie distribution "
                             f"has 0 < power < 1), got {power!r}")
        self.power = pw
        super().__init__("uniform_average")

    _kind = "tweedie"

    def _param(self) -> float:
        return self.power

    def _config(self) -> dict[str, Any]:
        return {"power": self.power}


class MaxError(RegressionMetric):
    """Streaming max error, equal to ``sklearn.metrics.max_error``: max_i |y_ij - p_ij| per
    output j over the rows of positive weight (the weights' values do not matter: a zero weight
    removes a row), combined by ``multioutput``.

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
