"""Every column's exact one-vs-rest AUROC in one vectorised pass over the pair counts.

A state that keeps every score offers its pair-level view
(:meth:`~streammetrics._scores.protocol.ScoreState.pair_scores`, a
:class:`~streammetrics._scores.protocol.PairScores`; the exact score buffer,
:class:`~streammetrics._scores.exact.buffer.SortedScores`), which keeps, per column
c and group g, ``u2[c, g]`` = twice the Mann-Whitney U of the column's positives against group
g, and each group's total weight. Column c's AUROC is ``sum_g u2[c, g] / (2 P_c N_c)``
(``SortedScores.auroc``). Read column by column, a multiclass read costs a Python call and a
rebuild of the (K, G) totals per column -- O(K^2) for K columns, seconds at K = 1000. Here the
totals are read once and every column is divided at once: O(K G) numpy work per read.

Exactness: unweighted, ``SortedScores.auroc`` divides Python ints (one correctly rounded
division). Whenever the numerator and the denominator are below 2**53 they are exact float64
values and the IEEE division is the same correctly rounded quotient, so the vectorised result
is bit-identical; a larger column (about 67 million samples and more) is divided as Python
ints, as there. Weighted, the float64 operations are the same ones in the same order.
"""

from __future__ import annotations

import math

import numpy as np

from .protocol import ScoreState

_EXACT_INT = 2.0**53  # every integer below is a float64 exactly


def auroc_columns(state: ScoreState) -> np.ndarray | None:
    """The exact AUROC of every column of a multi-column exact score buffer.

    Parameters
    ----------
    state : ScoreState
        The metric's score state (call under its owner's lock).

    Returns
    -------
    numpy.ndarray or None
        (K,) float64, nan where a column has no positives or no negatives: exactly
        ``[state.auroc(c)[0] for c in range(K)]``. None when ``state`` offers no pair-level
        view (:meth:`~streammetrics._scores.protocol.ScoreState.pair_scores` is None: bins), is
        binary, or its counter holds Python ints: then read the columns one by one.

    Notes
    -----
    O(K G) after the buffer has folded its queue in (``u2`` is live: O(1) per batch).
    """
    pairs = state.pair_scores()
    if pairs is None or pairs.task == "binary":
        return None
    u2 = pairs.u2()
    if u2.dtype.kind not in "if":  # Python-int counters (past int64's safe range)
        return None
    tot = pairs.totals()
    k = tot.shape[0]
    rows = np.arange(k)
    pos = pairs.pos_group(0) if not pairs.by_class else rows
    p = tot[rows, pos]
    n = tot.sum(axis=1) - p  # the row sums of ``auroc``'s ``tot[column].sum()``, same order
    defined = (p > 0) & (n > 0)
    out = np.full(k, math.nan)
    u = u2.sum(axis=1)
    if pairs.is_weighted:
        with np.errstate(invalid="ignore", divide="ignore"):
            out[defined] = u[defined] / (2.0 * p[defined] * n[defined])
        return out
    den = 2.0 * p * n
    fits = defined & (den < _EXACT_INT) & (u < _EXACT_INT)
    out[fits] = u[fits].astype(np.float64) / den[fits]
    for c in np.flatnonzero(defined & ~fits):  # beyond 2**53: Python ints, as ``auroc``
        out[c] = int(u[c]) / (2 * int(p[c]) * int(n[c]))
    return out
