"""Prediction intervals: coverage (with its Wilson interval), mean width and the interval
(Winkler) score ("Prediction intervals" in docs/definitions/regression.md).

``y_pred`` holds one interval per target: shape (n, 2) for targets (n,) -- the columns are the
lower and the upper bound -- or (n, k, 2) for (n, k) targets (``num_outputs=k``); one sample may
be given as a scalar target and a pair. A lower bound above its upper bound is refused.

The three metrics read one state of weighted sums per output (a ``MetricSet`` of them holds it
once): the weight W and its square sum, the weight of the covered targets, the sum of the widths
and the sums of the distances by which targets fall below / above their interval. ``update``
O(n k), ``compute`` and ``merge`` O(k), memory O(k); windows and decay work (the sums subtract
and scale).
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from streammetrics._core.docstrings import filled
from streammetrics._core.intervals import wilson
from streammetrics._core.load_checks import check_weight_pair, reserve
from streammetrics._core.metric import UndefinedMetricWarning
from streammetrics._core.params import Param, check_param
from streammetrics._core.state import SummedState
from streammetrics._core.validation import as_numpy
from streammetrics._core.warn import warn

from ._base import RegressionMetric, check_domain, check_finite, regression_batch, undefined

__all__ = ["IntervalCoverage", "IntervalScore", "IntervalWidth"]

_OUTPUTS = Param("int", "must be an int >= 1", low=1)
#: alpha's lower end is the smallest normal float: below it 2 / alpha is infinite and every
#: score with a miss reads inf (a subnormal alpha, 1e-320, came through a mutated file).
_ALPHA = Param("real", "must be a real number in (0, 1) no smaller than 2.2250738585072014e-308 "
               "(the smallest normal float)", low=float(np.finfo(float).tiny), high=1.0,
               high_open=True)
#: The sums per output, in the order of the state's "sums" rows.
_ROWS = ("weight", "weight_w2", "covered", "width", "below", "above")


class IntervalSums(SummedState):
    """Per output, ``sum w``, ``sum w^2``, ``sum w [l <= y <= u]``, ``sum w (u - l)``,
    ``sum w (l - y)[y < l]`` and ``sum w (y - u)[y > u]`` (array ``sums``, shape (6, k))."""

    weight_powers = {"sums": np.array([[1.0], [2.0], [1.0], [1.0], [1.0], [1.0]])}

    def __init__(self, outputs: int) -> None:
        reserve(8.0 * len(_ROWS) * outputs, f"num_outputs={outputs}")  # a file's config is untrusted
        self.outputs = outputs
        self._arrays = {"sums": np.zeros((len(_ROWS), outputs))}

    def key(self) -> Hashable:
        return ("interval_sums", self.outputs)

    def prepare(self, y_true: Any, y_pred: Any, sample_weight: Any = None) -> Any:
        k = self.outputs
        y = as_numpy(y_true, "y_true")
        q = as_numpy(y_pred, "y_pred")
        if q.dtype.kind not in "biuf":
            raise ValueError(f"y_pred: expected real numbers, got dtype {q.dtype}")
        if y.ndim == 0 and q.shape == (2,) and k == 1:  # one sample: a target and its interval
            y, q = y.reshape(1), q.reshape(1, 2)
        if q.ndim == 1 and q.shape[0] == 0:  # an empty batch given as []
            q = q.reshape((0, 2) if k == 1 else (0, k, 2))
        want = "(n, 2)" if k == 1 else f"(n, {k}, 2)"
        if q.ndim != (2 if k == 1 else 3) or q.shape[-1] != 2 or (k > 1 and q.shape[1] != k):
            raise ValueError(f"y_pred: expected intervals of shape {want} (lower and upper bound "
                             f"per target), got shape {q.shape}")
        q = q.astype(np.float64, copy=False)
        check_finite(q, "y_pred")
        b = regression_batch(y, q[..., 0], sample_weight, outputs=k)
        lower = b.p
        upper = q[..., 1].reshape(lower.shape)
        bad = np.zeros(q.shape, dtype=bool)
        bad[..., 0] = (upper < lower).reshape(q.shape[:-1])
        check_domain(q, bad, "y_pred", "a lower bound is above its upper bound (y_pred[..., 0] must "
                     "be <= y_pred[..., 1])")
        yy, w = b.y, b.w
        below = np.maximum(lower - yy, 0.0)
        above = np.maximum(yy - upper, 0.0)
        covered = ((below == 0) & (above == 0)).astype(np.float64)
        width = upper - lower
        if w is None:
            n = float(yy.shape[0])
            rows = [np.full(k, n), np.full(k, n), covered.sum(axis=0), width.sum(axis=0),
                    below.sum(axis=0), above.sum(axis=0)]
        else:
            rows = [np.full(k, float(w.sum())), np.full(k, float(np.dot(w, w))), w @ covered, w @ width,
                    w @ below, w @ above]
        delta = np.stack(rows)
        if not np.isfinite(delta).all():
            raise ValueError(f"y_pred: interval widths or distances overflow float64 (largest |y_pred| = "
                             f"{float(np.abs(q).max())!r}); rescale the targets")
        return delta

    def apply(self, delta: Any) -> None:
        self._arrays["sums"] += delta

    def _check_loaded(self, arrays: Mapping[str, np.ndarray]) -> None:
        s = arrays["sums"]
        check_weight_pair(s[0], s[1], "sums")
        if (s[2] > s[0] * (1 + 1e-9)).any():
            raise ValueError("state: array 'sums' has a covered weight above the total weight")
        if ((s[0] == 0) & (s[2:].sum(axis=0) > 0)).any():
            raise ValueError("state: array 'sums' holds sums of an output of no weight")

    def totals(self) -> dict[str, np.ndarray]:
        s = self._arrays["sums"]
        return {name: s[i].copy() for i, name in enumerate(_ROWS)}

    def sample_count(self) -> float | None:
        return float(self._arrays["sums"][0, 0])


class _IntervalMetric(RegressionMetric):
    """Shared constructor (``num_outputs``, ``multioutput``) and the per-output read."""

    _name = ""
    _state: IntervalSums

    def __init__(self, num_outputs: int = 1, multioutput: Any = "uniform_average") -> None:
        super().__init__()
        self.num_outputs = check_param(num_outputs, "num_outputs", _OUTPUTS)
        self._state = IntervalSums(self.num_outputs)
        self._init_outputs(multioutput)

    def _config(self) -> dict[str, Any]:
        return {"num_outputs": self.num_outputs, "multioutput": self.multioutput}

    def _values(self, t: dict[str, np.ndarray]) -> np.ndarray:
        raise NotImplementedError

    def _compute(self) -> Any:
        t = self._state.totals()
        if not (t["weight"] > 0).all():
            return undefined(self._name, "no sample of positive weight", self.multioutput, self.num_outputs)
        return self._combine(self._values(t))


@filled
class IntervalCoverage(_IntervalMetric):
    """Empirical coverage of prediction intervals: the (weighted) share of targets inside their
    interval, ``sum w [l <= y <= u] / sum w`` per output, with its Wilson interval
    (:meth:`interval`).

    Parameters
    ----------
    num_outputs : int, default 1
        Number of targets per row: ``y_true`` (n,) and ``y_pred`` (n, 2) for 1, else
        (n, k) and (n, k, 2).
    {regression: multioutput_class}

    Notes
    -----
    ``update`` O(n k), ``compute`` and ``merge`` O(k), memory O(k) (shared with
    :class:`IntervalWidth` and :class:`IntervalScore` in a ``MetricSet``). Bounds are closed:
    a target on a bound is covered. nan (with an ``UndefinedMetricWarning``) before any sample
    of positive weight.

    Examples
    --------
    >>> import streammetrics as sm
    >>> m = sm.IntervalCoverage().update([1.0, 2.0, 3.0], [[0, 2], [2.5, 3], [2, 3]])
    >>> round(m.compute(), 6)
    0.666667
    >>> low, high = m.interval(0.95)
    """

    _name = "IntervalCoverage"

    def __init__(self, num_outputs: int = 1, multioutput: str | ArrayLike = "uniform_average") -> None:
        super().__init__(num_outputs, multioutput)

    def _values(self, t: dict[str, np.ndarray]) -> np.ndarray:
        return np.clip(t["covered"] / t["weight"], 0.0, 1.0)

    def interval(self, confidence: float = 0.95) -> tuple[Any, Any]:
        """Wilson score interval of the coverage (weights: Kish's effective sample size), per
        output; ``(nan, nan)`` before any sample of positive weight.

        Parameters
        ----------
        confidence : float, default 0.95
            Two-sided confidence level, in (0, 1).

        Returns
        -------
        tuple
            ``(low, high)``: floats for one output, arrays per output for several (their
            average has no Wilson interval: ``multioutput`` is not applied).
        """
        with self._lock:
            t = self._state.totals()
        if not (t["weight"] > 0).all():
            warn(f"{self._name}: no sample of positive weight; returning nan", UndefinedMetricWarning)
        low, high = wilson(t["covered"], t["weight"], t["weight_w2"], confidence)
        if self.num_outputs == 1:
            return float(low[0]), float(high[0])
        return low, high


@filled
class IntervalWidth(_IntervalMetric):
    """Mean width of prediction intervals, ``sum w (u - l) / sum w`` per output.

    Parameters
    ----------
    {regression: num_outputs, multioutput_class}

    Notes
    -----
    ``update`` O(n k), ``compute`` and ``merge`` O(k), memory O(k).

    Examples
    --------
    >>> import streammetrics as sm
    >>> sm.IntervalWidth().update([1.0, 2.0], [[0, 2], [2.5, 3]]).compute()
    1.25
    """

    _name = "IntervalWidth"

    def __init__(self, num_outputs: int = 1, multioutput: str | ArrayLike = "uniform_average") -> None:
        super().__init__(num_outputs, multioutput)

    def _values(self, t: dict[str, np.ndarray]) -> np.ndarray:
        return np.asarray(t["width"] / t["weight"])


@filled
class IntervalScore(_IntervalMetric):
    """Mean interval score (Gneiting & Raftery 2007; Winkler 1972) of central (1 - alpha)
    prediction intervals, per output:
    ``S = (u - l) + (2 / alpha)(l - y)[y < l] + (2 / alpha)(y - u)[y > u]``, averaged with the
    sample weights. Lower is better; it is proper for the alpha/2 and 1 - alpha/2 quantiles.

    Parameters
    ----------
    alpha : float
        The nominal miscoverage, in (0, 1) (0.1 for 90% intervals); at least the smallest
        normal float, so that 2 / alpha is finite.
    {regression: num_outputs, multioutput_class}

    Notes
    -----
    The state keeps the weighted sums of the widths and of the distances of ``y`` below ``l``
    and above ``u``: ``update`` O(n k), ``compute`` and ``merge`` O(k), memory O(k).

    Examples
    --------
    >>> import streammetrics as sm
    >>> sm.IntervalScore(alpha=0.5).update([1.0, 4.0], [[0, 2], [2.5, 3]]).compute()
    3.25
    """

    _name = "IntervalScore"

    def __init__(self, alpha: float, num_outputs: int = 1, multioutput: Any = "uniform_average") -> None:
        self.alpha = check_param(alpha, "alpha", _ALPHA)
        super().__init__(num_outputs, multioutput)

    def _config(self) -> dict[str, Any]:
        return {"alpha": self.alpha, **super()._config()}

    def _values(self, t: dict[str, np.ndarray]) -> np.ndarray:
        # the means first, then 2 * misses / alpha: a tiny alpha multiplies a mean, not a sum
        weight = t["weight"]
        return np.asarray(t["width"] / weight + 2.0 * ((t["below"] + t["above"]) / weight) / self.alpha)
