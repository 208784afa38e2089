"""Normal deviate (probit) axes for DET curves, as scikit-learn's ``DetCurveDisplay`` draws them.

The axes keep the rates as their data (a line's data are the result's ``fpr`` / ``fnr``) and
map them through a matplotlib ``"function"`` scale, ``x -> Phi^-1(clip(x, eps, 1 - eps))``, so
that every display coordinate equals scikit-learn's (which draws ``norm.ppf`` of the clipped rates
on linear axes). The inverse normal CDF is scipy's ``ndtri`` when scipy is installed, else
:class:`statistics.NormalDist` element by element (same values, slower).
"""

from __future__ import annotations

from typing import Any

import numpy as np

#: the rates labelled on both axes (scikit-learn's ``DetCurveDisplay`` ticks)
DET_TICKS = (0.001, 0.01, 0.05, 0.20, 0.5, 0.80, 0.95, 0.99, 0.999)
#: the axes show normal deviates in [-DET_LIMIT, DET_LIMIT]
DET_LIMIT = 3.0
#: rates are clipped to [EPS, 1 - EPS] before the transform (0 and 1 map to finite deviates)
EPS = float(np.finfo(np.float64).eps)


def _ufuncs() -> tuple[Any, Any]:
    try:
        from scipy.special import ndtr, ndtri
    except ImportError:  # pragma: no cover - scipy comes with scikit-learn in the tests
        from statistics import NormalDist

        dist = NormalDist()
        return np.vectorize(dist.inv_cdf, otypes=[float]), np.vectorize(dist.cdf, otypes=[float])
    return ndtri, ndtr


def probit(p: Any) -> np.ndarray:
    """``Phi^-1(clip(p, eps, 1 - eps))``: the normal deviate of each rate (nan stays nan). O(n)."""
    ppf, _ = _ufuncs()
    x = np.clip(np.asarray(p, dtype=float), EPS, 1.0 - EPS)
    out: np.ndarray = np.asarray(ppf(x), dtype=float)
    return out


def probit_inverse(z: Any) -> np.ndarray:
    """``Phi(z)``, the standard normal CDF: the rate at each deviate. O(n)."""
    _, cdf = _ufuncs()
    out: np.ndarray = np.asarray(cdf(np.asarray(z, dtype=float)), dtype=float)
    return out


def tick_label(p: float) -> str:
    """A rate as a percent label, scikit-learn's format (``"1%"``, ``"0.1%"``)."""
    return f"{p:.0%}" if (100 * p).is_integer() else f"{p:.1%}"


def set_probit_axes(ax: Any) -> None:
    """Put both axes of ``ax`` on the probit scale, with the percent ticks of :data:`DET_TICKS`
    and the limits +-:data:`DET_LIMIT` deviates (scikit-learn's DET layout). O(1)."""
    from matplotlib.ticker import NullLocator

    labels = [tick_label(p) for p in DET_TICKS]
    lo, hi = (float(v) for v in probit_inverse([-DET_LIMIT, DET_LIMIT]))
    for axis, scale, ticks, lim in ((ax.xaxis, ax.set_xscale, ax.set_xticks, ax.set_xlim),
                                    (ax.yaxis, ax.set_yscale, ax.set_yticks, ax.set_ylim)):
        scale("function", functions=(probit, probit_inverse))
        ticks(list(DET_TICKS), labels)
        axis.set_minor_locator(NullLocator())
        lim(lo, hi)
