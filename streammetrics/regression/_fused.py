"""One compiled pass over ``y_true`` and ``y_pred`` for the moments state (the optional ``fast``
extra: numba). Imported by :mod:`streammetrics.regression._moments` on the first large batch of
one output, never by ``import streammetrics``; without numba the numpy passes run instead.

:func:`moments` returns, around the pivots ``py`` (targets) and ``pr`` (residuals), the weighted
sums of d_y, d_y², d_r, d_r² and |r| (r = y - p) in one pass, the compiler free to reassociate
them into vector lanes (reassociation only: NaN and inf still propagate, so the caller's
finiteness test on the sums holds). The sums equal the numpy passes' to rounding, not bit for bit.
"""

from __future__ import annotations

from typing import Any

import numba
import numpy as np


@numba.njit(cache=True, nogil=True, boundscheck=False, fastmath={"reassoc", "contract"})
def _unweighted(y: Any, p: Any, py: float, pr: float) -> Any:  # pragma: no cover - compiled
    s0 = s1 = s2 = s3 = s4 = 0.0
    for i in range(y.shape[0]):
        dy = y[i] - py
        r = y[i] - p[i]
        dr = r - pr
        s0 += dy
        s1 += dy * dy
        s2 += dr
        s3 += dr * dr
        s4 += abs(r)
    return np.array([s0, s1, s2, s3, s4])


@numba.njit(cache=True, nogil=True, boundscheck=False, fastmath={"reassoc", "contract"})
def _weighted(y: Any, p: Any, w: Any, py: float, pr: float) -> Any:  # pragma: no cover - compiled
    s0 = s1 = s2 = s3 = s4 = 0.0
    for i in range(y.shape[0]):
        wi = w[i]
        dy = y[i] - py
        r = y[i] - p[i]
        dr = r - pr
        s0 += wi * dy
        s1 += wi * dy * dy
        s2 += wi * dr
        s3 += wi * dr * dr
        s4 += wi * abs(r)
    return np.array([s0, s1, s2, s3, s4])


def moments(y: np.ndarray, p: np.ndarray, w: np.ndarray | None, py: float, pr: float) -> np.ndarray:
    """``[Σ w d_y, Σ w d_y², Σ w d_r, Σ w d_r², Σ w |r|]`` (1-D float64 inputs). O(n), one pass."""
    if w is None:
        return _unweighted(y, p, py, pr)  # type: ignore[no-any-return]
    return _weighted(y, p, w, py, pr)  # type: ignore[no-any-return]
