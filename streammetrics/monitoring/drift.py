"""Score drift without labels: :class:`Drift` compares the scores a model gives now with the
scores it gave on a reference set (definitions: docs/definitions/monitoring.md, "Drift")."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from streammetrics._core.averaging import warn_undefined_nan
from streammetrics._core.metric import Metric
from streammetrics._core.params import Param, check_param
from streammetrics._scores.binned.bins import BinnedScores

from ._drift_reference import MAX_BINS, MIN_ROWS, ROW_BYTES, reference_from
from ._drift_state import DriftState, drift_state
from ._drift_stats import (
    class_chi2,
    js_distance,
    ks_wasserstein,
    ks_wasserstein_blocks,
    ks_wasserstein_bounds,
    psi,
)

__all__ = ["Drift"]

_BINS = Param("int", f"must be an int in [1, {MAX_BINS}]", low=1, high=MAX_BINS)
_MAX_BYTES = Param("int", "must be an int")
STATS = ("psi", "js", "ks", "wasserstein")
_MAX_FLOAT = float(np.finfo(np.float64).max)


class Drift(Metric):
    """Drift of the current scores from a reference: PSI, Jensen-Shannon distance, KS and
    Wasserstein-1, without labels.

    With the reference's quantile edges ``e = numpy.quantile(reference, linspace(0, 1, bins + 1))``
    (the outer ones open to ±inf; bins half-open ``[e_i, e_{i+1})`` as in ``numpy.histogram``),
    r_b and c_b the reference's and the current (weighted) share of bin b:

    * ``psi`` = Σ_b (c_b − r_b) ln(c_b / r_b), both shares floored at 1e-4;
    * ``js`` = ``scipy.spatial.distance.jensenshannon(r, c, base=2)`` (unfloored shares);
    * ``ks`` = max_x |F_ref(x) − F_cur(x)| (``scipy.stats.ks_2samp(ref, cur).statistic``);
    * ``wasserstein`` = ∫ |F_ref(x) − F_cur(x)| dx (``scipy.stats.wasserstein_distance``),

    F the (weighted) empirical CDFs of the scores. Scores of shape (n, C) give each statistic
    per class (an array of C, class k's column of scores) plus the drift of the predicted-class
    shares (the argmax of a row, the first maximum on ties): ``class_psi`` (as ``psi``, over
    classes) and ``class_chi2`` (Pearson's chi-square of the current class weights against the
    reference shares). Each value is nan (with an ``UndefinedMetricWarning``) until a score
    with a positive weight arrives.

    Parameters
    ----------
    reference : array-like, mapping or Drift
        The reference scores, shape (n,) or (n, C) (finite); or a kept reference: the mapping
        :meth:`fit_reference` returns (the ``reference`` entry of a Drift's configuration), a
        Drift's ``state_dict()``, or a Drift (its reference is reused).
    bins : int
        Number of quantile bins of PSI and JS (default 10).
    max_bytes : int, optional
        Bounded memory: the current scores are held in the bounded bins of the ranking family
        (the whole state within ``max_bytes``) and the reference in at most
        ``max_bytes // (24 · columns)`` rows per column of consecutive sorted scores. PSI and
        JS stay exact (their bins are fixed); KS and Wasserstein are then read with both sides
        at their bins' lower edges, and :meth:`bounds` gives certified intervals holding the
        exact values.

    Notes
    -----
    ``update`` is O(n) plus the score state's update (the exact buffer queues a copy, sorted on
    the next read; bins: O(n), with the PSI / JS bin counts, O(n log bins)); ``compute``, after
    that sort, O(n + m log n) for m reference and n current scores (KS and Wasserstein from one
    binary search of the reference's scores into the current ones and one pass over these;
    the bin counts from one binary search per edge) -- bins: O(bins). Memory: every current score (exact) or
    ``max_bytes``; the reference is kept as its distinct scores with their counts. Weights:
    ``sample_weight`` weighs the current scores in every statistic (scipy's
    ``wasserstein_distance`` takes the same weights; ``ks_2samp`` takes none, and the weighted
    KS is the same formula over weighted CDFs: integer weights equal repetition). The
    reference is unweighted.

    Examples
    --------
    >>> import numpy as np
    >>> from streammetrics import Drift  # or: from streammetrics.monitoring import Drift
    >>> rng = np.random.default_rng(0)
    >>> ref, now = rng.normal(0, 1, 1000), rng.normal(0.5, 1, 1000)
    >>> d = Drift(ref)
    >>> for batch in np.array_split(now, 4):
    ...     d = d.update(batch)
    >>> from scipy.stats import ks_2samp, wasserstein_distance
    >>> out = d.compute()
    >>> bool(abs(out["ks"] - ks_2samp(ref, now).statistic) < 1e-12)
    True
    >>> bool(abs(out["wasserstein"] - wasserstein_distance(ref, now)) < 1e-12)
    True
    """

    family = "drift"

    def __init__(self, reference: Any, *, bins: int = 10, max_bytes: int | None = None) -> None:
        super().__init__()
        self.bins = int(check_param(bins, "bins", _BINS))
        self.max_bytes = None if max_bytes is None else int(check_param(max_bytes, "max_bytes", _MAX_BYTES))
        ref = reference_from(reference, self.bins)
        state = drift_state(ref, self.max_bytes)  # checks max_bytes against the bins' minimum
        if self.max_bytes is not None:
            ref = ref.compressed(max(MIN_ROWS, self.max_bytes // (ROW_BYTES * ref.n_columns)))
            state.reference = ref
        self._reference = ref
        self._reference_config = ref.to_config()
        self._state: DriftState = state

    @staticmethod
    def fit_reference(reference: Any, *, bins: int = 10, max_bytes: int | None = None) -> dict[str, Any]:
        """The reference a Drift keeps, as a JSON-able mapping: build it once, store it, and
        pass it as ``reference`` to later Drifts (it carries its quantile edges, bin counts and
        distinct scores; with ``max_bytes``, at most ``max_bytes // (24 · columns)`` rows per
        column).

        Parameters
        ----------
        reference : array-like
            Reference scores, shape (n,) or (n, C), finite.
        bins : int
            Number of quantile bins (default 10).
        max_bytes : int, optional
            Bound on the memory of the kept reference.

        Returns
        -------
        dict
            The kept reference (``Drift(fit_reference(x), bins=b)`` equals ``Drift(x, bins=b)``).
        """
        return Drift(reference, bins=bins, max_bytes=max_bytes).reference_config()

    def reference_config(self) -> dict[str, Any]:
        """The kept reference as a JSON-able mapping (see :meth:`fit_reference`).

        Returns
        -------
        dict
            A copy of the ``reference`` entry of the configuration.
        """
        return dict(self._reference_config)

    @property
    def value_keys(self) -> tuple[str, ...]:
        """The keys of :meth:`compute` (and :meth:`bounds`): the four statistics, and for
        scores of shape (n, C) ``class_psi`` and ``class_chi2``."""
        return STATS + (() if self._reference.columns is None else ("class_psi", "class_chi2"))

    def _config(self) -> dict[str, Any]:
        out: dict[str, Any] = {"reference": self._reference_config, "bins": self.bins}
        if self.max_bytes is not None:
            out["max_bytes"] = self.max_bytes
        return out

    def __repr__(self) -> str:
        ref = self._reference
        shape = "(n,)" if ref.columns is None else f"(n, {ref.columns})"
        extra = "" if self.max_bytes is None else f", max_bytes={self.max_bytes}"
        return f"Drift(<reference {shape}, {int(ref.hist[0].sum())} scores>, bins={self.bins}{extra})"

    def update(self, y_score: ArrayLike, *, sample_weight: ArrayLike | None = None) -> Drift:  # type: ignore[override]
        """Fold in a batch of current scores (shape (n,) or (n, C) as the reference; one row
        may be given alone). Atomic: a rejected batch changes nothing.

        Parameters
        ----------
        y_score : array-like
            Finite scores.
        sample_weight : array-like, optional
            One finite non-negative weight per row (default: 1 each).

        Returns
        -------
        Drift
            ``self``.
        """
        delta = self._state.prepare(None, y_score, sample_weight)
        with self._lock:
            self._state.apply(delta)
        return self

    # -- reads ------------------------------------------------------------------------------------
    def _current_side(self, column: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(low, high, weight) rows of the current scores of one column, ascending: every
        distinct score (exact), or every non-empty bin with its closed score range (bins)."""
        st = self._state.scores
        if isinstance(st, BinnedScores):
            pos, neg = st.bins(column)
            # every score is finite: a bin's range open to +-inf ends at the largest finite float
            low = np.clip(st.lower_edges(column), -_MAX_FLOAT, _MAX_FLOAT)
            high = np.clip(st.upper_edges(column), -_MAX_FLOAT, _MAX_FLOAT)
            w = pos + neg
            keep = w > 0
            return low[keep], high[keep], w[keep]
        v, w = self._current_exact(column)
        w = np.ones(v.shape[0]) if w is None else w
        return v, v, w

    def _current_exact(self, column: int) -> tuple[np.ndarray, np.ndarray | None]:
        """Every current score of one column, ascending (float64), with its weight (None: 1
        each). The exact buffer only. O(n) (one stable merge for scores of shape (n, C))."""
        pairs = self._state.scores.pair_scores()
        assert pairs is not None  # the exact buffer keeps every score
        pv, pw, nv, nw = pairs.column(column)  # each sorted (weight 0 is never kept)
        sides = [(v, w) for v, w in ((pv, pw), (nv, nw)) if v.shape[0]]
        if len(sides) == 1:  # one score per row: every score is a positive of the one column
            v, w = sides[0]
        elif not sides:
            v, w = np.zeros(0), None
        else:
            v = np.concatenate([sides[0][0], sides[1][0]])
            order = np.argsort(v, kind="stable")
            v = v[order]
            if pw is None and nw is None:
                w = None
            else:
                w = np.concatenate([np.ones(s[0].shape[0]) if s[1] is None else s[1] for s in sides])[order]
        return v.astype(np.float64, copy=False), w

    def _column_stats(self, column: int) -> dict[str, tuple[float, float, float]]:
        ref, st = self._reference, self._state
        hist = st.hist()
        out = {"psi": psi(ref.hist[column], hist[column]), "js": js_distance(ref.hist[column], hist[column])}
        values = {k: (v, v, v) for k, v in out.items()}
        if ref.exact and st.scores.pair_scores() is not None:  # both sides exact
            cv, cw = self._current_exact(column)
            ks, w = ks_wasserstein_blocks(ref.lows[column], ref.counts[column], cv, cw, ref.cdf[column]) \
                if cv.shape[0] else (math.nan, math.nan)
            values["ks"], values["wasserstein"] = (ks, ks, ks), (w, w, w)
            return values
        r_side, c_side = ref.side(column), self._current_side(column)
        ks, w = ks_wasserstein(r_side, c_side)
        if ref.exact and st.scores.column_exact(column):
            values["ks"], values["wasserstein"] = (ks, ks, ks), (w, w, w)
        else:
            (klo, khi), (wlo, whi) = ks_wasserstein_bounds(r_side, c_side)
            values["ks"] = (ks, min(klo, ks), max(khi, ks))
            values["wasserstein"] = (w, min(wlo, w), max(whi, w))
        return values

    def _all(self) -> dict[str, Any]:
        """{statistic: (value, low, high)} (floats, or arrays of C), memoised until the state
        changes. Call under the lock."""
        def read() -> dict[str, Any]:
            ref = self._reference
            per = [self._column_stats(c) for c in range(ref.n_columns)]
            out: dict[str, Any] = {}
            for name in STATS:
                triples = np.array([p[name] for p in per])
                out[name] = tuple(float(x) for x in triples[0]) if ref.columns is None else \
                    tuple(triples[:, i].copy() for i in range(3))
            if ref.columns is not None:
                cur = self._state.classes()
                for name, f in (("class_psi", psi), ("class_chi2", class_chi2)):
                    v = f(ref.classes, cur)
                    out[name] = (v, v, v)
            return out
        return self._cached(("drift",), read)

    def _compute(self) -> dict[str, Any]:
        values = {k: v[0] for k, v in self._all().items()}
        if not self._state.sample_count() > 0:
            warn_undefined_nan("Drift", "no current scores with a positive weight")
        return {k: (v.copy() if isinstance(v, np.ndarray) else v) for k, v in values.items()}

    def bounds(self) -> dict[str, tuple[Any, Any]]:
        """Certified ``(low, high)`` of every statistic: the exact value on the scores seen lies
        in it. ``(value, value)`` for PSI, JS and the class shares (always exact), and for KS and
        Wasserstein while both sides are exact; with ``max_bytes`` the envelopes of
        docs/definitions/monitoring.md ("Bounded memory"). O(bins).

        Returns
        -------
        dict
            ``{statistic: (low, high)}``, the keys of :meth:`compute`.
        """
        with self._lock:
            return {k: (_copy(v[1]), _copy(v[2])) for k, v in self._all().items()}

    @property
    def is_exact(self) -> bool:
        """True when KS and Wasserstein are exact (no bins on either side)."""
        with self._lock:
            return self._reference.exact and bool(self._state.scores.is_exact)


def _copy(v: Any) -> Any:
    return v.copy() if isinstance(v, np.ndarray) else v
