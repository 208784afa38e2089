"""The state of :class:`~streammetrics.monitoring.Estimated`: the wrapped metric holding the
expected rows, and the moments of the expected confusion counts.

One :class:`EstimatedState` holds both parts, so that an ``Estimated`` is a plain accumulator
to the service wrappers (issue #31): ``Window(Estimated(m), size=W)`` keeps the last W
*predictions* (rows of ``y_prob``) and ``Decayed(Estimated(m), half_life=h)`` weighs each
prediction by its decay factor. ``prepare(y_placeholder, y_prob, sample_weight)`` expands a
batch into C weighted rows per prediction (:func:`expand_rows`) and prepares the wrapped
metric's states on them; ``apply`` folds them in with the moments. A window rebuilds the state
from its rows after an expiry (the expanded weights ``w·p`` are fractional, so removing rows by
subtraction would leave rounding residue); a decay rescales the sums when every part of the
state can (:class:`ScalableEstimatedState`: confusion counts, bounded ranking bins) and
otherwise rebuilds from the aged rows. The arrays are saved as ``Estimated`` always saved
them: the wrapped metric's under ``metric.``, the moments under ``estimate.``.

Complexity: ``prepare`` O(n·C) (the wrapped metric's prepare of n·C rows); ``apply``, ``merge``,
``scale`` the wrapped states' plus O(C²).
"""

from __future__ import annotations

import copy as _copy
import json
from collections.abc import Hashable, Mapping
from typing import Any

import numpy as np

from streammetrics._core.load_checks import split_entries
from streammetrics._core.metric import RESERVED_KEYS, Metric
from streammetrics._core.state import State, SummedState
from streammetrics._core.validation import as_numpy, check_weights, first_bad
from streammetrics.wrappers._base import SampleWrapper, nested_config
from streammetrics.wrappers.metricset import MetricSet

__all__ = ["SUM_TOL", "EstimatedState", "Moments", "ScalableEstimatedState", "estimated_state", "expand_rows"]

#: The smallest weight the library accepts (``docs/definitions/inputs.md``); smaller products
#: ``w·p`` count as 0.
_MIN_WEIGHT = 2.0 ** -128
#: How far a multiclass row of probabilities may sum from 1.
SUM_TOL = 1e-6
_MSEP = "metric."
_OWN = "estimate."


class Moments(SummedState):
    """``mean[k, c]`` = Σ_{pred=k} w·p_c and ``var[k, c]`` = Σ_{pred=k} w²·p_c·(1 − p_c)."""

    weight_powers = {"mean": 1.0, "var": 2.0}

    def __init__(self, n_classes: int) -> None:
        self._arrays = {"mean": np.zeros((n_classes, n_classes)),
                        "var": np.zeros((n_classes, n_classes))}

    def key(self) -> Hashable:
        return ("estimated_moments", self._arrays["mean"].shape[0])

    def prepare(self, *args: Any, **kwargs: Any) -> Any:
        raise ValueError("Estimated: feed it with its own update(y_prob); to estimate several "
                         "metrics, wrap the set: Estimated(MetricSet(...))")

    def apply(self, delta: Any) -> None:
        mean, var = delta
        self._arrays["mean"] += mean
        self._arrays["var"] += var

    def sample_count(self) -> float | None:
        return float(self._arrays["mean"].sum())

    def _check_loaded(self, arrays: Mapping[str, np.ndarray]) -> None:
        # p(1 − p) <= 1/4 and w² <= (Σ w)² bound each variance by its mean's square / 4 ...
        # per row; summed, V[k, c] <= (Σ_{pred=k} w)² / 4 = (Σ_c M[k, c])² / 4.
        bound = arrays["mean"].sum(axis=1, keepdims=True) ** 2 / 4
        bad = arrays["var"] > bound * (1 + 1e-5) + 1e-300
        if bad.any():
            raise ValueError(f"state: 'var' entry {first_bad(bad)} exceeds the bound its 'mean' row "
                             "allows ((Σ w)² / 4)")


def expand_rows(y_prob: Any, sample_weight: Any, n_classes: int, threshold: float) -> tuple[np.ndarray, ...]:
    """Validated duplicated rows ``(y, scores, weights)`` of a batch of probabilities and the
    moments' increment ``(mean, var)`` (``Estimated``'s docstrings). O(n·C)."""
    C = n_classes
    p = as_numpy(y_prob, "y_prob")
    if p.dtype.kind not in "biuf":
        raise ValueError(f"y_prob: expected probabilities, got dtype {p.dtype}")
    if p.ndim == 0 and C == 2:
        p = p.reshape(1)
    pairs = C == 2 and p.ndim == 2 and p.shape[1] == 2  # binary rows [P(0), P(1)]
    want = "(n,) or (n, 2)" if C == 2 else f"(n, {C})"
    if (C == 2 and p.ndim != 1 and not pairs) or (C > 2 and (p.ndim != 2 or p.shape[1] != C)):
        raise ValueError(f"y_prob: expected shape {want} for this {'binary' if C == 2 else 'multiclass'} "
                         f"metric, got {p.shape}")
    p = p.astype(np.float64)
    n = p.shape[0]
    bad = ~((p >= 0) & (p <= 1))  # NaN too
    if bad.any():
        idx = first_bad(bad)
        raise ValueError(f"y_prob: probabilities must lie in [0, 1]; first invalid value "
                         f"{float(p[idx])!r} at index {idx}")
    if p.ndim == 2 and n:
        off = np.abs(p.sum(axis=1) - 1.0) > SUM_TOL
        if off.any():
            i = int(np.flatnonzero(off)[0])
            raise ValueError(f"y_prob: each row must sum to 1 (within {SUM_TOL}); first invalid "
                             f"row sums to {float(p[i].sum())!r} at index {i}")
    if pairs:
        p = p[:, 1]
    w = check_weights(sample_weight, n)
    cols = [1.0 - p, p] if C == 2 else [np.ascontiguousarray(p[:, c]) for c in range(C)]  # P(class i)
    wcols, dropped = [], np.zeros(n, dtype=bool)
    for col in (cols if w is None else [c * w for c in cols]):
        tiny = col < _MIN_WEIGHT  # below the smallest weight the library takes: counts as 0
        if tiny.any():
            wcols.append(np.where(tiny, 0.0, col))
            dropped |= tiny & (col > 0)
        else:
            wcols.append(col)
    rw = np.column_stack(wcols)
    scores = np.repeat(p, C, axis=0)
    y = np.tile(np.arange(C, dtype=np.int64), n)
    pred = (p >= threshold).astype(np.intp) if C == 2 else np.argmax(p, axis=1)
    w2 = None if w is None else w * w
    # per predicted class k: Σ w·p_c and Σ w²·p_c·(1 − p_c), one bincount per column
    mean = np.stack([np.bincount(pred, weights=c, minlength=C) for c in wcols], axis=1)
    # A row some of whose weighted probabilities count as 0 (``dropped``) keeps only what it
    # adds to ``mean``: its variance terms are a·(t − a), a its kept w·p_c and t their sum, so
    # V[k, c] <= (Σ_c M[k, c])² / 4 holds as a loaded state is checked (w²·p(1 − p) may not).
    if C == 2:  # p(1 − p) is the same for both classes
        v = cols[1] * cols[0] if w2 is None else cols[1] * cols[0] * w2
        if dropped.any():
            v = np.where(dropped, wcols[0] * wcols[1], v)
        var = np.repeat(np.bincount(pred, weights=v, minlength=C)[:, None], 2, axis=1)
    else:
        terms = [c * (1.0 - c) if w2 is None else c * (1.0 - c) * w2 for c in cols]
        if dropped.any():
            total = rw.sum(axis=1)
            terms = [np.where(dropped, c * (total - c), t) for c, t in zip(wcols, terms, strict=True)]
        var = np.stack([np.bincount(pred, weights=t, minlength=C) for t in terms], axis=1)
    return y, scores, rw.reshape(-1), mean, var


def _owners(metric: Metric) -> list[Metric]:
    """The accumulators whose states a batch goes through (one per distinct state of a set)."""
    return metric._owners() if isinstance(metric, MetricSet) else [metric]


class EstimatedState(State):
    """The wrapped metric ``metric`` (an empty twin at first) and the :class:`Moments` of the
    expected confusion counts; ``n_classes`` and ``threshold`` as ``Estimated`` found them."""

    def __init__(self, metric: Metric, n_classes: int, threshold: float) -> None:
        self.metric = metric
        self.n_classes, self.threshold = n_classes, threshold
        self.moments = Moments(n_classes)

    def key(self) -> Hashable:
        return ("estimated", self.n_classes, self.threshold,
                json.dumps(nested_config(self.metric), sort_keys=True, default=str))

    @property
    def windowable(self) -> bool:
        """Whether a ``Window`` or ``Decayed`` may hold this state: its rows must be prepared
        again without keywords, so the wrapped metric is a plain accumulator or a set of them."""
        return isinstance(self.metric, MetricSet) or (
            not isinstance(self.metric, SampleWrapper) and self.metric.family == "classification")

    # -- update ------------------------------------------------------------------------------
    def prepare(self, y_true: Any, y_prob: Any, sample_weight: Any = None, **kwargs: Any) -> Any:
        """Validate a batch of probabilities and prepare its expanded rows. ``y_true`` is None
        (``Estimated.update``) or the wrappers' placeholder labels (one per row, ignored);
        ``kwargs`` (``slices=``, ``timestamp=``, already repeated per class) go to the wrapped
        metric. Never mutates. O(n·C)."""
        y, s, w, mean, var = expand_rows(y_prob, sample_weight, self.n_classes, self.threshold)
        n = y.shape[0] // self.n_classes
        if y_true is not None and np.shape(y_true) not in ((), (n,)):
            raise ValueError(f"y_true: Estimated takes no labels; got shape {np.shape(y_true)} for "
                             f"{n} rows")
        metric = self.metric
        if isinstance(metric, MetricSet) and kwargs:  # keywords only some members take
            accepted = [None if a is None else {k: v for k, v in kwargs.items() if k in a}
                        for a in metric._accepted]
            deltas = [m._prepare(y, s, w, **(kwargs if kw is None else kw))
                      for m, kw in zip(metric._owners(), accepted, strict=True)]
        else:
            deltas = [m._prepare(y, s, w, **kwargs) for m in _owners(metric)]
        return deltas, (mean, var)

    def apply(self, delta: Any) -> None:
        deltas, moments = delta
        for m, d in zip(_owners(self.metric), deltas, strict=True):
            m._state.apply(d)
        self.moments.apply(moments)

    def rows_of(self, y_prob: Any) -> tuple[Any, Any]:
        """(placeholder labels, probabilities) of a batch for the wrappers' row store: one 0 per
        row (a float is one row). Not validated (``prepare`` does)."""
        p = as_numpy(y_prob, "y_prob")
        if p.ndim == 0:
            return 0, y_prob
        return np.zeros(p.shape[0], dtype=np.int8), p

    # -- the protocol ------------------------------------------------------------------------
    def arrays(self) -> dict[str, Any]:
        inner = self.metric.state_dict()
        out: dict[str, Any] = {_MSEP + k: v for k, v in inner.items() if k not in RESERVED_KEYS}
        out.update({_OWN + k: v for k, v in self.moments.arrays().items()})
        return out

    def load_arrays(self, arrays: Mapping[str, Any]) -> None:
        inner, own = split_entries(arrays, (_MSEP, _OWN), "Estimated")
        self.metric._load_arrays(inner)
        self.moments.load_arrays(own)

    def merge(self, other: State) -> None:
        assert isinstance(other, EstimatedState)
        self.metric.merge(other.metric)
        self.moments.merge(other.moments)

    def reset(self) -> None:
        self.metric.reset()
        self.moments.reset()

    def sample_count(self) -> float | None:
        return self.moments.sample_count()

    def copy(self) -> EstimatedState:
        """An independent copy: the wrapped metric copied too (``State.copy`` would share it,
        an accumulator being callable). O(state)."""
        out = _copy.copy(self)
        out.metric = self.metric.copy()
        out.moments = self.moments.copy()  # type: ignore[assignment]
        return out

    @property
    def nbytes(self) -> int:
        return int(self.metric.nbytes + self.moments.nbytes)


class ScalableEstimatedState(EstimatedState):
    """An :class:`EstimatedState` whose every part rescales (decay by rescaling the sums)."""

    def scale(self, factor: float) -> None:
        """Multiply every weight by ``factor`` (exponential decay). O(state)."""
        for m in _owners(self.metric):
            m._state.scale(factor)
        self.moments.scale(factor)


def estimated_state(metric: Metric, n_classes: int, threshold: float) -> EstimatedState:
    """The state of an ``Estimated`` around ``metric``: scalable when every state of a plain
    metric (or set) is."""
    scalable = (isinstance(metric, MetricSet) or not isinstance(metric, SampleWrapper)) and \
        metric.family == "classification" and \
        all(type(m._state).scale is not State.scale for m in _owners(metric))
    cls = ScalableEstimatedState if scalable else EstimatedState
    return cls(metric, n_classes, threshold)
