"""Correlations between targets and predictions: Pearson's r and Lin's concordance correlation
from running co-moments; Spearman's rho and Kendall's tau-b from every row ("Correlations" and
"Rank correlations" in docs/definitions/regression.md).

Each is computed per output (the columns of (n, k) targets, as torchmetrics' ``num_outputs``
does) and combined by ``multioutput`` (default: the mean over outputs; ``"raw_values"``: one
value per output).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from streammetrics._core.docstrings import filled
from streammetrics._core.metric import UndefinedMetricWarning
from streammetrics._core.warn import warn

from ._base import RegressionMetric, undefined
from ._comoments import CoMoments
from ._pairs import PairRows
from ._ranks import kendall_terms, lex_carry, lex_order, mid_ranks

__all__ = ["ConcordanceCorrCoef", "KendallTau", "PearsonCorrCoef", "SpearmanCorrCoef"]


class _Correlation(RegressionMetric):
    """Per-output values, nan (with a warning) where one is undefined."""

    _state: Any

    def __init__(self, multioutput: Any, state: Any) -> None:
        super().__init__()
        self._state = state
        self._init_outputs(multioutput)

    @property
    def _name(self) -> str:
        return type(self).__name__

    def _config(self) -> dict[str, Any]:
        return {"multioutput": self.multioutput}

    def _per_output(self) -> np.ndarray:
        raise NotImplementedError

    def _compute(self) -> Any:
        k = self._state.k
        if k == 0:
            return undefined(self._name, "no sample of positive weight", self.multioutput, 0)
        values = self._cached("values", self._per_output)
        if np.isnan(values).any():
            warn(f"{self._name}: undefined for output(s) {np.flatnonzero(np.isnan(values)).tolist()} "
                 "(fewer than two rows, or a constant column); nan there", UndefinedMetricWarning)
        return self._combine(values.copy())


@filled
class PearsonCorrCoef(_Correlation):
    """Pearson's correlation coefficient of ``y_true`` and ``y_pred``, per output:
    ``r = Syp / sqrt(Syy Spp)`` with the weighted centred (co-)moments
    ``Syp = sum w (y - ybar)(p - pbar)`` (``scipy.stats.pearsonr`` unweighted).

    Parameters
    ----------
    {regression: multioutput_class}

    Notes
    -----
    Running co-moments (Chan's parallel update; two passes per batch): ``update`` O(n k),
    ``compute`` and ``merge`` O(k), memory O(k). nan (with an ``UndefinedMetricWarning``) for an
    output with fewer than two rows of positive weight or a constant column (scipy warns and
    returns nan too). Integer weights equal repeated rows.

    Examples
    --------
    >>> import streammetrics as sm
    >>> m = sm.PearsonCorrCoef().update([1, 2], [1.5, 2.5]).update([3, 4], [2.5, 4.5])
    >>> round(m.compute(), 6)
    0.923381
    """

    def __init__(self, multioutput: Any = "uniform_average") -> None:
        super().__init__(multioutput, CoMoments())

    def _per_output(self) -> np.ndarray:
        t = self._state.totals()
        with np.errstate(divide="ignore", invalid="ignore"):
            r = t["syp"] / (np.sqrt(t["syy"]) * np.sqrt(t["spp"]))
        r = np.where((t["syy"] > 0) & (t["spp"] > 0) & (t["rows"] >= 2), np.clip(r, -1.0, 1.0), np.nan)
        return np.asarray(r, dtype=np.float64)


@filled
class ConcordanceCorrCoef(_Correlation):
    """Lin's concordance correlation coefficient, per output:
    ``rho_c = 2 s_yp / (s_y^2 + s_p^2 + (ybar - pbar)^2)`` with the (weighted) population
    moments ``s_yp = Syp / W``, ``s_y^2 = Syy / W``, ``s_p^2 = Spp / W`` (Lin, 1989).

    Parameters
    ----------
    {regression: multioutput_class}

    Notes
    -----
    Lin's definition divides by n (torchmetrics' ``ConcordanceCorrCoef`` uses n - 1 variances
    with the population covariance of Pearson's r, which differs for small n). Running
    co-moments: ``update`` O(n k), ``compute`` and ``merge`` O(k), memory O(k). nan (with an
    ``UndefinedMetricWarning``) for an output with no row of positive weight or a zero
    denominator (both columns constant and equal).

    Examples
    --------
    >>> import streammetrics as sm
    >>> round(sm.ConcordanceCorrCoef().update([1, 2, 3, 4], [1.5, 2.5, 2.5, 4.5]).compute(), 6)
    0.9
    """

    def __init__(self, multioutput: Any = "uniform_average") -> None:
        super().__init__(multioutput, CoMoments())

    def _per_output(self) -> np.ndarray:
        t = self._state.totals()
        w = t["weight"]
        gap = (t["pivot_y"] - t["pivot_p"]) + (t["mean_y"] - t["mean_p"])
        den = t["syy"] + t["spp"] + w * gap * gap
        with np.errstate(divide="ignore", invalid="ignore"):
            c = np.where(den > 0, 2 * t["syp"] / den, np.nan)
        return np.asarray(np.clip(c, -1.0, 1.0), dtype=np.float64)


def _weighted_pearson(a: np.ndarray, b: np.ndarray, w: np.ndarray | None, center: float | None) -> float:
    """Pearson's r of ``a`` and ``b`` (weights ``w``), around ``center`` for both when given
    (the exact mean of unweighted average ranks, (n + 1) / 2)."""
    if w is None:
        ca = cb = center if center is not None else None
        da = a - (ca if ca is not None else a.mean())
        db = b - (cb if cb is not None else b.mean())
        sab, saa, sbb = float(np.dot(da, db)), float(np.dot(da, da)), float(np.dot(db, db))
    else:
        tw = float(w.sum())
        da = a - float(np.dot(w, a)) / tw
        db = b - float(np.dot(w, b)) / tw
        wa = w * da
        sab, saa, sbb = float(np.dot(wa, db)), float(np.dot(wa, da)), float(np.dot(w * db, db))
    if saa <= 0 or sbb <= 0:
        return math.nan
    return min(1.0, max(-1.0, sab / (math.sqrt(saa) * math.sqrt(sbb))))


@filled
class SpearmanCorrCoef(_Correlation):
    """Spearman's rank correlation, per output: Pearson's r of the average ranks of ``y_true``
    and of ``y_pred`` (ties share the mean of their ranks: ``scipy.stats.spearmanr``).

    Weighted, a row of weight w counts as w rows: its value's rank is ``W_< + W_= / 2`` (the
    weight below it plus half the weight tied with it) and r is the weighted Pearson
    correlation of those ranks -- so integer weights equal repeated rows, and weights of 1 the
    unweighted value.

    Parameters
    ----------
    {regression: multioutput_class}

    Notes
    -----
    Exact; keeps every row (16 bytes per row and output, 8 more per row once a weight differs
    from 1): ``update`` O(n k) (a copy), ``compute`` O(N log N) per output after new data (two
    stable sorts of N values; memoised until the next update), ``merge`` O(N). No bounded
    variant: ranks need every value, and binned pairs give no certificate here. nan (with an
    ``UndefinedMetricWarning``) for an output with fewer than two rows or a constant column.

    Examples
    --------
    >>> import streammetrics as sm
    >>> m = sm.SpearmanCorrCoef().update([1, 2, 3], [1, 3, 2]).update([4, 5], [4, 5])
    >>> round(m.compute(), 6)
    0.9
    """

    def __init__(self, multioutput: Any = "uniform_average") -> None:
        super().__init__(multioutput, PairRows())

    def _per_output(self) -> np.ndarray:
        y, p, w = self._state.rows()
        n = y.shape[0]
        out = np.full(y.shape[1], np.nan)
        if n < 2:
            return out
        for j in range(y.shape[1]):
            x, z = np.ascontiguousarray(y[:, j]), np.ascontiguousarray(p[:, j])
            if x.min() == x.max() or z.min() == z.max():
                continue  # a constant column: nan (its weighted ranks may miss their mean by rounding)
            # ranks read in the (x, z) order: any arrival order gives the same sums
            if w is None:
                _, xs, rz = lex_carry(x, z, lambda zs: mid_ranks(zs, None))
                out[j] = _weighted_pearson(mid_ranks(xs, None), rz, None, (n + 1) / 2)
                continue
            order, order_z = lex_order(x, z)
            ws = w[order]
            rz_all = np.empty(n)
            rz_all[order_z] = mid_ranks(z[order_z], w[order_z])
            out[j] = _weighted_pearson(mid_ranks(x[order], ws), rz_all[order], ws, None)
        return out


@filled
class KendallTau(_Correlation):
    """Kendall's tau-b, per output: ``(C - D) / sqrt((n0 - n1)(n0 - n2))``, C and D the
    concordant and discordant pairs, n0 - n1 (n0 - n2) the pairs not tied in y_true (y_pred)
    (``scipy.stats.kendalltau``, its default variant ``"b"``).

    Weighted (scipy has no weights), a pair of rows counts with weight ``w_i w_j``: C, D and the
    untied pairs are sums of pair weights, ``n0 - n1 = (W^2 - sum_g W_g^2) / 2`` over the groups
    of tied y_true. Integer weights then equal repeated rows (the pairs among a row's copies are
    tied in both), and the value does not change when every weight is scaled.

    Parameters
    ----------
    {regression: multioutput_class}

    Notes
    -----
    Exact, never O(N^2): ``compute`` sorts the rows by (y_true, y_pred) and counts the
    discordant pairs as the inversions of the y_pred ranks in that order, by a bottom-up merge
    sort (compiled with numba, the ``fast`` extra, from 4096 rows; else numpy, one pass per bit
    of the ranks): O(N log N) per output after new data, memoised until the next update.
    Unweighted, every count is an exact integer. Keeps every row (as
    :class:`SpearmanCorrCoef`); ``update`` O(n k), ``merge`` O(N). No bounded variant. nan (with
    an ``UndefinedMetricWarning``) for an output with fewer than two rows or a constant column.

    Examples
    --------
    >>> import streammetrics as sm
    >>> m = sm.KendallTau().update([1, 2, 3], [1, 3, 2]).update([4, 5], [4, 5])
    >>> round(m.compute(), 6)
    0.8
    """

    def __init__(self, multioutput: Any = "uniform_average") -> None:
        super().__init__(multioutput, PairRows())

    def _per_output(self) -> np.ndarray:
        y, p, w = self._state.rows()
        out = np.full(y.shape[1], np.nan)
        if y.shape[0] < 2:
            return out
        for j in range(y.shape[1]):
            cd, dx, dz = kendall_terms(np.ascontiguousarray(y[:, j]), np.ascontiguousarray(p[:, j]), w)
            if dx > 0 and dz > 0:
                tau = float(cd) / math.sqrt(float(dx)) / math.sqrt(float(dz))
                out[j] = min(1.0, max(-1.0, tau))
        return out
