"""Regression metrics that need the whole set: the median absolute error and the D² scores
("Needs the whole set" in docs/definitions/regression.md).

Each keeps, per output, every value it needs sorted (exact: the sorted runs of
:class:`~streammetrics.regression._value_buffer.ValueBuffer`) or, with ``max_bytes=``, adaptive
bins (:class:`~streammetrics.regression._value_bins.ValueBins`) whose ``bounds()`` certify the
exact value.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from streammetrics._core.params import Param, check_param

from ._base import RegressionMetric, undefined
from ._ranks import weighted_percentile
from ._value_bins import ValueBins, percentile_bounds, pinball_min_bounds
from ._value_buffer import ValueBuffer, pinball_sums

__all__ = ["D2AbsoluteErrorScore", "D2PinballScore", "MedianAbsoluteError"]

_MAX_BYTES = Param("int", "must be an int >= 1", low=1, optional=True)
_ALPHA = Param("real", "must be a real number in [0, 1]", low=0.0, high=1.0)
_BIG = float(np.finfo(np.float64).max)


def _state(kind: str, alpha: float | None, max_bytes: int | None) -> ValueBuffer | ValueBins:
    if max_bytes is None:
        return ValueBuffer(kind, alpha)
    return ValueBins(kind, alpha, max_bytes)


def _combine_bounds(low: np.ndarray, high: np.ndarray, multioutput: str | list[float]
                    ) -> tuple[Any, Any]:
    """Bounds of the ``multioutput`` combination of per-output values in [low, high]."""
    if multioutput == "raw_values":
        return low.copy(), high.copy()
    if isinstance(multioutput, str):
        return float(np.mean(low)), float(np.mean(high))
    wts = np.asarray(multioutput, dtype=np.float64)
    if wts.shape[0] != low.shape[0]:
        raise ValueError(f"multioutput: There must be equally many custom weights "
                         f"({wts.shape[0]}) as outputs ({low.shape[0]}).")
    pos = wts >= 0
    a = np.where(pos, low, high)
    b = np.where(pos, high, low)
    return float(np.average(a, weights=wts)), float(np.average(b, weights=wts))


class _WholeSet(RegressionMetric):
    """What the median absolute error and the D² scores share: the state chosen once,
    ``max_bytes``, per-output values with bounds."""

    _name = ""
    _state: ValueBuffer | ValueBins

    def __init__(self, multioutput: Any = "uniform_average", max_bytes: int | None = None,
                 alpha: float | None = None, kind: str = "abs_error") -> None:
        super().__init__()
        self.max_bytes = check_param(max_bytes, "max_bytes", _MAX_BYTES)
        self._state = _state(kind, alpha, self.max_bytes)
        self._init_outputs(multioutput)

    @property
    def is_exact(self) -> bool:
        """True when the value read is exact (no ``max_bytes``, or bins still single values)."""
        with self._lock:
            st = self._state
            return not isinstance(st, ValueBins) or all(st.column_exact(j) for j in range(st.k))

    def _per_output(self) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
        raise NotImplementedError

    def _values(self) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
        return self._cached("values", self._per_output)

    def _compute(self) -> Any:
        got = self._values()
        if got is None:
            return undefined(self._name, self._why_undefined(), self.multioutput, self._state.k)
        return self._combine(got[0].copy())

    def _why_undefined(self) -> str:
        return "no sample of positive weight"

    def bounds(self) -> tuple[Any, Any]:
        """Certified bounds of the exact value: ``(low, high)`` (``(v, v)`` when exact), combined
        over outputs as ``multioutput`` says; (nan, nan) while undefined.

        Returns
        -------
        tuple
            ``(low, high)``: floats, or arrays per output for ``multioutput="raw_values"``.
        """
        with self._lock:
            got = self._values()
            if got is None:
                k = max(self._state.k, 1)
                nan = np.full(k, np.nan) if self.multioutput == "raw_values" else math.nan
                return nan, nan
            return _combine_bounds(got[1], got[2], self.multioutput)


class MedianAbsoluteError(_WholeSet):
    """Median absolute error: the (weighted) median of ``|y_true - y_pred|`` per output.

    Unweighted it is ``numpy.median`` of the absolute errors (the mean of the two middle values
    for an even count); weighted, scikit-learn's ``_weighted_percentile(..., average=True)``
    (its ``averaged_inverted_cdf``): the first error whose cumulative weight reaches half the
    total, averaged with the next one when it reaches it exactly (to within float64 epsilon).
    Equal to ``sklearn.metrics.median_absolute_error``.

    Parameters
    ----------
    multioutput : {"raw_values", "uniform_average"} or array-like, default "uniform_average"
        How the per-output medians of (n, k) targets are combined.
    max_bytes : int, optional
        Bound the state to about this many bytes (adaptive bins per output, at least 16 bins of
        16 bytes each); :meth:`bounds` then certifies the exact median. Default: exact (every
        absolute error kept, sorted).

    Notes
    -----
    ``update`` O(n k log n) (each batch sorted per output, then merged into sorted runs:
    amortised O(log(N / n)) linear merges per value), ``compute`` O(N k) after new data, O(1)
    again (memoised); memory 8 bytes per row and output, 16 once weights differ from 1. With
    ``max_bytes``: ``update`` O((n + b) log(n + b)) per output, ``compute`` O(b), memory 16 b per
    output for b <= capacity bins; ``compute`` returns the mid-point of the certified interval
    (exact while every bin holds one distinct value). Rows of weight 0 are ignored; with no
    row of positive weight the value is nan (with an ``UndefinedMetricWarning``).

    Examples
    --------
    >>> import streammetrics as sm
    >>> m = sm.MedianAbsoluteError()
    >>> _ = m.update([3, -0.5], [2.5, 0.0]).update([2, 7], [2, 8])
    >>> m.compute()
    0.5
    >>> m.bounds()
    (0.5, 0.5)
    """

    _name = "MedianAbsoluteError"

    def __init__(self, multioutput: Any = "uniform_average", max_bytes: int | None = None) -> None:
        super().__init__(multioutput, max_bytes, None, "abs_error")

    def _config(self) -> dict[str, Any]:
        return {"multioutput": self.multioutput, "max_bytes": self.max_bytes}

    def _per_output(self) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
        st = self._state
        if st.k == 0:
            return None
        est, low, high = [], [], []
        for j in range(st.k):
            if isinstance(st, ValueBins):
                lo, hi, w = st.bins(j)
                if st.column_exact(j):
                    v = weighted_percentile(lo, w, 50, True)
                    a = b = v
                else:
                    a, b = percentile_bounds(lo, hi, w, 50, True)
                    v = (a + b) / 2
            else:
                vals, vw = st.column(j)
                v = a = b = weighted_percentile(vals, vw, 50, True)
            est.append(v)
            low.append(a)
            high.append(b)
        return np.array(est), np.array(low), np.array(high)


class D2PinballScore(_WholeSet):
    """D² pinball score: the fraction of pinball loss explained, per output,
    ``1 - sum w L_alpha(y - y_pred) / sum w L_alpha(y - q_alpha(y))``.

    ``L_alpha(d) = alpha d`` for d >= 0, ``(alpha - 1) d`` below (scikit-learn's
    ``mean_pinball_loss``), and ``q_alpha(y)`` the weighted ``alpha``-quantile of ``y_true``
    as scikit-learn's ``_weighted_percentile(y, w, 100 alpha, average=True)``. As scikit-learn
    (``force_finite``): a zero numerator gives 1, a zero denominator with a nonzero numerator 0.
    Equal to ``sklearn.metrics.d2_pinball_score``, except that rows of weight 0 are ignored:
    fewer than two rows of positive weight give nan (scikit-learn counts rows of any weight).

    Parameters
    ----------
    alpha : float, default 0.5
        The quantile level, in [0, 1] (0.5: the D² absolute error score).
    multioutput : {"raw_values", "uniform_average"} or array-like, default "uniform_average"
        How the per-output scores of (n, k) targets are combined.
    max_bytes : int, optional
        Bound the state to about this many bytes: ``y_true`` in adaptive bins per output;
        :meth:`bounds` certifies the exact score (its denominator is the minimum over q of the
        pinball loss of the constant q, bounded by the bins' lower and upper envelopes).

    Notes
    -----
    The numerator is a running sum (O(n k) per batch, O(k) memory); the denominator needs every
    ``y_true``: ``update`` O(n k log n), ``compute`` O(N k) after new data (the quantile and one
    pass of the pinball loss over the sorted targets), memory 8 bytes per row and output (16
    weighted). With ``max_bytes``: ``compute`` O(b log b) per output over b bins, ``compute``
    the mid-point of the certified interval (exact while every bin holds one distinct value).

    Examples
    --------
    >>> import streammetrics as sm
    >>> m = sm.D2PinballScore(alpha=0.9)
    >>> _ = m.update([1, 2], [1, 3]).update(3, 3)
    >>> round(m.compute(), 6)
    0.666667
    """

    _name = "D2PinballScore"

    def __init__(self, alpha: float = 0.5, multioutput: Any = "uniform_average",
                 max_bytes: int | None = None) -> None:
        self.alpha = check_param(alpha, "alpha", _ALPHA)
        super().__init__(multioutput, max_bytes, self.alpha, "y_true")

    def _config(self) -> dict[str, Any]:
        return {"alpha": self.alpha, "multioutput": self.multioutput, "max_bytes": self.max_bytes}

    def _why_undefined(self) -> str:
        return "D^2 score is not well-defined with less than two samples"

    def _per_output(self) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
        st = self._state
        k = st.k
        if k == 0:
            return None
        if st.rows() < 2:
            return None
        num = st.loss()
        est, low, high = [], [], []
        a = float(self.alpha)
        for j in range(k):
            if isinstance(st, ValueBins):
                lo, hi, w = st.bins(j)
                if st.column_exact(j):
                    d_lo = d_hi = _denominator(lo, w, a)
                else:
                    d_lo, d_hi = pinball_min_bounds(lo, hi, w, a)
                    d_lo, d_hi = d_lo * (1 - 1e-12), d_hi * (1 + 1e-12)  # rounding of the sums
            else:
                vals, vw = st.column(j)
                d_lo = d_hi = _denominator(vals, vw, a)
            n_j = float(num[j])
            # D2 = 1 - N / D rises with D (N >= 0)
            v_lo, v_hi = _d2(n_j, d_lo), _d2(n_j, d_hi)
            if d_lo == 0.0 and d_hi > 0.0 and n_j != 0.0:
                v_lo = -math.inf  # the denominator may be any tiny positive number
            # the estimate stays finite (1 - N / D overflows only for absurdly small D)
            est.append(max(v_lo, -_BIG) if v_lo == v_hi else (max(v_lo, -_BIG) + max(v_hi, -_BIG)) / 2)
            low.append(v_lo)
            high.append(v_hi)
        return np.array(est), np.array(low), np.array(high)


def _denominator(v: np.ndarray, w: np.ndarray | None, alpha: float) -> float:
    """``sum w L_alpha(v - q)`` for q the weighted alpha-quantile of ascending ``v``. O(n)."""
    q = weighted_percentile(v, w, alpha * 100, True)
    return float(pinball_sums(v[:, None], np.full((v.shape[0], 1), q), w, alpha)[0])


def _d2(num: float, den: float) -> float:
    if num == 0.0:
        return 1.0
    if den == 0.0:
        return 0.0
    return 1.0 - num / den


class D2AbsoluteErrorScore(D2PinballScore):
    """D² absolute error score: :class:`D2PinballScore` at ``alpha=0.5``, the fraction of
    absolute error explained, ``1 - sum w |y - y_pred| / sum w |y - median(y)|`` per output.
    Equal to ``sklearn.metrics.d2_absolute_error_score`` (rows of weight 0 ignored).

    Parameters
    ----------
    multioutput : {"raw_values", "uniform_average"} or array-like, default "uniform_average"
        How the per-output scores of (n, k) targets are combined.
    max_bytes : int, optional
        Bound the state (see :class:`D2PinballScore`); :meth:`bounds` certifies the exact score.

    Notes
    -----
    Costs as :class:`D2PinballScore`.

    Examples
    --------
    >>> import streammetrics as sm
    >>> sm.D2AbsoluteErrorScore().update([1, 2, 3], [3, 2, 1]).compute()
    -1.0
    """

    _name = "D2AbsoluteErrorScore"

    def __init__(self, multioutput: Any = "uniform_average", max_bytes: int | None = None) -> None:
        super().__init__(0.5, multioutput, max_bytes)

    def _config(self) -> dict[str, Any]:
        return {"multioutput": self.multioutput, "max_bytes": self.max_bytes}
