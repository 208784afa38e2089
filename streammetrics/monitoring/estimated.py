"""Performance estimated from calibrated probabilities, before (or without) labels.

The definitions: docs/definitions/monitoring.md, "Estimated performance".

``Estimated(metric)`` takes ``update(y_prob)``: calibrated probabilities and no labels. Each row
is fed to the wrapped ``metric`` as C weighted rows -- binary: a positive of weight ``w·p`` and a
negative of weight ``w·(1 − p)``; multiclass: class i with weight ``w·p_i`` -- all with the row's
own scores as the prediction. The wrapped metric therefore holds the *expected* confusion counts
(every count is a sum of weights) and the *expected* ROC / PR curves, and its value is the metric
of those: NannyML's confidence-based performance estimation (CBPE), computed by the library's own
kernels. The estimate is as good as the calibration and no better.

The duplicated rows are built once per batch (O(n·C) memory while the update runs) and go
through the wrapped metric's own validation and update, so the value equals the wrapped metric
(hence scikit-learn) on the duplicated, weighted rows, and merge, copy, save / load, a
``MetricSet`` of several metrics (one shared state per kernel), a time ``Window`` and ``Sliced``
work as the wrapped metric does.

Next to the wrapped metric it keeps, per predicted class k and class c, the expected weight
``M[k, c] = Σ_{pred=k} w·p_c`` and its Poisson-binomial variance ``V[k, c] = Σ_{pred=k}
w²·p_c·(1 − p_c)`` (the prediction is the wrapped confusion metric's: ``p >= threshold`` or the
argmax), from which :meth:`Estimated.interval` gives a normal interval of what the realised
value will be once labels drawn from the probabilities arrive (accuracy, precision, recall).
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from streammetrics._core.intervals import z_value
from streammetrics._core.load_checks import split_entries
from streammetrics._core.metric import RESERVED_KEYS, Metric
from streammetrics._core.params import check_accumulator
from streammetrics._core.state import State, SummedState
from streammetrics._core.validation import as_numpy, check_weights, first_bad, is_scalar
from streammetrics.wrappers._base import SampleWrapper, metric_from_nested, nested_config
from streammetrics.wrappers.metricset import MetricSet
from streammetrics.wrappers.sliced.core import Sliced
from streammetrics.wrappers.window import Window

__all__ = ["Estimated"]

#: The smallest weight the library accepts (``docs/definitions/inputs.md``); smaller products
#: ``w·p`` count as 0.
_MIN_WEIGHT = 2.0 ** -128
#: How far a multiclass row of probabilities may sum from 1.
SUM_TOL = 1e-6
_MSEP = "metric."
_OWN = "estimate."


class _Moments(SummedState):
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


def _members(metric: Metric) -> list[Metric]:
    """The plain accumulators inside ``metric`` (a MetricSet's members, a wrapper's metric)."""
    if isinstance(metric, MetricSet):
        return [m for _, m in metric.items()]
    if isinstance(metric, (Sliced, Window)):
        return _members(metric.metric)
    return [metric]


def _labels_renamed(config: Any) -> bool:
    """True if a (nested) configuration sets ``classes=`` or ``pos_label=``."""
    if isinstance(config, Mapping):
        return any((k in ("classes", "pos_label") and v is not None) or _labels_renamed(v)
                   for k, v in config.items())
    if isinstance(config, (list, tuple)):
        return any(_labels_renamed(v) for v in config)
    return False


def _check_estimable(metric: Metric) -> tuple[int, float]:
    """``metric``'s number of classes (binary: 2) and its threshold; ``ValueError`` saying why
    it cannot be estimated."""
    check_accumulator(metric, refused=(Estimated,))
    if isinstance(metric, SampleWrapper) and not isinstance(metric, Window):
        raise ValueError(f"metric: Estimated duplicates each row into one row per class, so a "
                         f"{type(metric).__name__} would decay per duplicated row; wrap a Window")
    if metric.family not in ("classification", "sliced"):
        raise ValueError(f"metric: Estimated takes classification accumulators (confusion and "
                         f"ranking metrics, a MetricSet, Sliced), got {type(metric).__name__} of "
                         f"family {metric.family!r}")
    if _labels_renamed(metric._config()):
        raise ValueError("metric: Estimated feeds class indices 0..C-1 in the column order of "
                         "y_prob; construct the wrapped metric without classes= / pos_label=")
    tasks: set[tuple[str, int]] = set()
    thresholds: set[float] = set()
    for m in _members(metric):
        module = type(m).__module__
        if module.startswith("streammetrics.calibration") and not module.endswith("ks_gains"):
            raise ValueError(f"metric: {type(m).__name__} compares the probabilities with the labels; "
                             "estimated from the same probabilities it is perfect calibration by "
                             "construction: measure it on labelled data")
        task = getattr(m, "task", None) or getattr(m._state, "task", None)
        if task is None and isinstance(getattr(m, "num_classes", None), int) and not getattr(
                m, "multilabel", False):
            task = "multiclass"  # top-k accuracy: C classes, no task attribute
        if task not in ("binary", "multiclass"):
            raise ValueError(f"metric: Estimated supports binary and multiclass metrics, got "
                             f"{type(m).__name__} with task {task!r}")
        if getattr(m, "ignore_index", None) is not None:
            raise ValueError(f"metric: {type(m).__name__} has ignore_index set; every class "
                             "index is a weighted row of the estimate")
        tasks.add((task, int(getattr(m, "num_classes", 2) or 2) if task == "multiclass" else 2))
        cut = getattr(m, "threshold", None)
        if isinstance(cut, (int, float)) and not isinstance(cut, bool):  # a confusion metric's
            thresholds.add(float(cut))
    if len(tasks) != 1:
        raise ValueError(f"metric: the members take different tasks {sorted(tasks, key=str)}")
    n_classes = tasks.pop()[1]
    if isinstance(metric, Window) and metric.size is not None and metric.size % n_classes:
        raise ValueError(f"metric: a count window around Estimated holds {n_classes} rows per "
                         f"prediction (one per class): size must be a multiple of {n_classes} "
                         f"(size={n_classes}·W for the last W predictions), got {metric.size}")
    return n_classes, (thresholds.pop() if len(thresholds) == 1 else 0.5)


def _expand(value: Any, k: int, n: int, name: str) -> Any:
    """A row-aligned keyword value (a slice key column, per-row timestamps) repeated ``k``
    times per row; scalars, tuples and dicts of columns as ``Sliced`` and ``Window`` take them."""
    if value is None or is_scalar(value) or isinstance(value, str):
        return value
    if isinstance(value, tuple):
        return tuple(_expand(v, k, n, name) for v in value)
    if isinstance(value, Mapping):
        return {key: _expand(v, k, n, name) for key, v in value.items()}
    arr = np.asarray(value)
    if arr.ndim == 0:
        return value
    if arr.shape[0] != n:
        raise ValueError(f"{name}: expected {n} rows (one per row of y_prob), got shape {arr.shape}")
    return np.repeat(arr, k, axis=0)


class Estimated(Metric):
    """``metric`` estimated from calibrated probabilities, without labels (CBPE).

    Each row of ``y_prob`` becomes C weighted rows of the wrapped metric, one per class ``i``
    with weight ``w·p_i`` (binary: a positive of weight ``w·p`` and a negative of weight
    ``w·(1 − p)``) and the row's scores as the prediction, so ``compute()`` is the metric of the
    expected confusion counts (threshold ``p >= threshold``, multiclass argmax) and of the
    expected ROC / PR curves (AUROC, AP) -- exactly, by the wrapped metric's own kernels. A
    product ``w·p_i`` below 2⁻¹²⁸ (the smallest weight the library takes) counts as 0.

    Parameters
    ----------
    metric : Metric
        An empty binary or multiclass classification accumulator (a confusion or ranking
        metric), a ``MetricSet`` of them, a ``Sliced`` one or a ``Window`` (a count window
        counts the C rows of each prediction: ``size=C·W`` holds the last W predictions). The
        estimate holds its own twin of it. Without ``classes=``,
        ``pos_label=`` and ``ignore_index``: class i is column i of ``y_prob``.

    Notes
    -----
    ``update(y_prob, *, sample_weight=None, **kw)``: ``y_prob`` of shape (n,) (binary: P(class
    1)) or (n, C) (binary: C = 2; rows summing to 1 within 1e-6), probabilities in [0, 1]; a
    float is one binary row. Keywords (``slices=`` of ``Sliced``, ``timestamp=`` of a time window) pass
    through, row-aligned ones repeated per class. ``interval(confidence)``: see the method.

    The estimate is only as good as the calibration: check it on the labelled part with
    ``CalibrationError`` (docs/monitoring.md).

    Complexity: ``update`` O(n·C) rows through the wrapped metric's update (O(n·C) memory
    while it runs; AUROC: 2n scores in the exact buffer), ``compute`` the wrapped metric's.
    Memory: the wrapped metric's state over n·C rows plus two C × C arrays.

    Examples
    --------
    >>> from streammetrics import AUROC, Accuracy, MetricSet
    >>> from streammetrics.monitoring import Estimated
    >>> est = Estimated(MetricSet(acc=Accuracy(), auroc=AUROC()))
    >>> _ = est.update([0.9, 0.8, 0.3]).update([0.1])
    >>> {k: round(v, 4) for k, v in est.compute().items()}
    {'acc': 0.825, 'auroc': 0.8634}
    """

    family = "estimated"

    def __init__(self, metric: Metric) -> None:
        super().__init__()
        self.n_classes, self.threshold = _check_estimable(metric)
        twin = type(metric)._from_config(metric._config())
        with metric._lock:
            mine, theirs = metric._state_arrays(), twin._state_arrays()
        if mine.keys() != theirs.keys() or not all(
                np.array_equal(np.asarray(mine[k]), np.asarray(theirs[k])) for k in mine):
            raise ValueError("metric: wrap an empty accumulator (this one already holds samples)")
        self._metric = twin
        self._state: _Moments = _Moments(self.n_classes)

    @property
    def metric(self) -> Metric:
        """The wrapped accumulator, holding the expected rows."""
        return self._metric

    def _config(self) -> dict[str, Any]:
        return {"metric": nested_config(self._metric)}

    @classmethod
    def _from_config(cls, config: Mapping[str, Any]) -> Estimated:
        if set(config) != {"metric"}:
            raise ValueError(f"state: bad configuration for Estimated: {sorted(config)}")
        return cls(metric_from_nested(config["metric"], "Estimated"))

    def __repr__(self) -> str:
        return f"Estimated({self._metric!r})"

    # -- update ----------------------------------------------------------------------------
    def _rows(self, y_prob: Any, sample_weight: Any) -> tuple[np.ndarray, ...]:
        """Validated duplicated rows ``(y, scores, weights)`` and the moments' increment."""
        C = self.n_classes
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
        wcols = []
        for col in (cols if w is None else [c * w for c in cols]):
            tiny = col < _MIN_WEIGHT  # below the smallest weight the library takes: counts as 0
            wcols.append(np.where(tiny, 0.0, col) if tiny.any() else col)
        rw = np.column_stack(wcols)
        scores = np.repeat(p, C, axis=0)
        y = np.tile(np.arange(C, dtype=np.int64), n)
        pred = (p >= self.threshold).astype(np.intp) if C == 2 else np.argmax(p, axis=1)
        w2 = None if w is None else w * w
        # per predicted class k: Σ w·p_c and Σ w²·p_c·(1 − p_c), one bincount per column
        mean = np.stack([np.bincount(pred, weights=c, minlength=C) for c in wcols], axis=1)
        if C == 2:  # p(1 − p) is the same for both classes
            v = cols[1] * cols[0] if w2 is None else cols[1] * cols[0] * w2
            var = np.repeat(np.bincount(pred, weights=v, minlength=C)[:, None], 2, axis=1)
        else:
            var = np.stack([np.bincount(pred, weights=c * (1.0 - c) if w2 is None else c * (1.0 - c) * w2,
                                        minlength=C) for c in cols], axis=1)
        return y, scores, rw.reshape(-1), mean, var

    def update(self, y_prob: ArrayLike, *, sample_weight: ArrayLike | None = None,  # type: ignore[override]
               **kwargs: Any) -> Estimated:
        """Fold in a batch of probabilities (no labels). Atomic: a rejected batch changes nothing.

        Parameters
        ----------
        y_prob : array-like
            Shape (n,) (binary: the probability of class 1; a float is one row) or (n, C)
            (binary: C = 2), each in [0, 1], rows of C summing to 1 (within 1e-6).
        sample_weight : array-like, optional
            One weight per row (default 1): the row's C weighted rows carry ``w·p_i``.
        **kwargs
            Passed to the wrapped metric's update (``slices=``, ``timestamp=``); row-aligned
            arrays are repeated once per class.

        Returns
        -------
        Estimated
            ``self``.
        """
        y, s, w, mean, var = self._rows(y_prob, sample_weight)
        n = y.shape[0] // self.n_classes
        kw = {k: _expand(v, self.n_classes, n, k) for k, v in kwargs.items()}
        with self._lock:
            self._metric.update(y, s, sample_weight=w, **kw)  # atomic: raises before any change
            self._state.apply((mean, var))
        return self

    def _prepare_pairs(self, y_prob: Any, sample_weight: Any = None,
                       **kwargs: Any) -> list[tuple[State, Any]]:
        """One batch of :meth:`update` made into ``[(state, increment)]`` -- the wrapped
        metric's states (their duplicated rows) and the moments -- changing nothing, for a
        caller that applies them only once every accumulator of the batch was prepared
        (``Sliced(Estimated(metric))``, one Estimated per slice). O(n·C)."""
        y, s, w, mean, var = self._rows(y_prob, sample_weight)
        n = y.shape[0] // self.n_classes
        kw = {k: _expand(v, self.n_classes, n, k) for k, v in kwargs.items()}
        m = self._metric
        owners = m._owners() if isinstance(m, MetricSet) else [m]
        pairs: list[tuple[State, Any]] = [(o._state, o._prepare(y, s, w, **kw)) for o in owners]
        return [*pairs, (self._state, (mean, var))]

    # -- reads -----------------------------------------------------------------------------
    def _compute(self) -> Any:
        return self._metric.compute()

    def interval(self, confidence: float = 0.95, *, member: str | None = None) -> tuple[Any, Any]:
        """A normal interval of the value the labels will give, if they follow the probabilities.

        The realised counts are Poisson-binomial: with the wrapped metric's predictions fixed,
        row j contributes ``w_j`` to cell (pred_j, c) with probability ``p_jc``, independently.
        Let M[k, c] and V[k, c] be their means and variances summed per cell (module docstring).

        * ``Accuracy``: correct weight X = Σ_k (cell k, k), mean Σ_k M[k, k], variance
          Σ_k V[k, k]; the total weight W is fixed, so the value's variance is Var X / W².
        * ``Precision`` (binary, or ``average=None`` per class c): TP_c / PP_c with the
          predicted weight PP_c fixed: variance V[c, c] / PP_c².
        * ``Recall`` (binary, or ``average=None``): TP_c / (TP_c + FN_c) with TP_c and FN_c
          independent (disjoint rows): the delta method, variance
          (b²·V[c, c] + a²·Σ_{k≠c} V[k, c]) / (a + b)⁴ with a = M[c, c], b = Σ_{k≠c} M[k, c].

        The interval is value ± z·sd, clipped to [0, 1]. It describes the labels' randomness
        only: a miscalibrated model's labels fall outside it more often. Other metrics (F1,
        AUROC, averaged values) and wrapped ``Sliced`` / windows: ``ValueError``.

        Parameters
        ----------
        confidence : float, default=0.95
            The two-sided coverage, in (0, 1).
        member : str, optional
            Around a ``MetricSet``: the member (whose threshold must be the set's).

        Returns
        -------
        tuple
            ``(low, high)``: floats, or per-class arrays for ``average=None``.
        """
        z = z_value(confidence)
        m = self._metric
        if isinstance(m, MetricSet):
            if member is None or member not in m:
                raise ValueError(f"interval: name a member of the wrapped MetricSet (member=...), got "
                                 f"{member!r}")
            m = m[member]
        elif member is not None:
            raise ValueError(f"interval: member= is for a wrapped MetricSet, not {type(m).__name__}")
        name = type(m).__name__
        if name not in ("Accuracy", "Precision", "Recall") or isinstance(m, (Sliced, Window)):
            raise ValueError(f"interval: defined for an estimated Accuracy, Precision or Recall, "
                             f"not {name}")
        average = getattr(m, "average", None)
        if name != "Accuracy" and self.n_classes > 2 and average is not None:
            raise ValueError(f"interval: {name} with average={average!r} has none; use average=None")
        if self.n_classes == 2 and float(getattr(m, "threshold", 0.5)) != self.threshold:
            raise ValueError("interval: the members of the wrapped MetricSet have different thresholds")
        with self._lock:
            arrays = self._state.arrays()
            value = np.asarray(m.compute(), dtype=np.float64)
        M, V = arrays["mean"], arrays["var"]
        with np.errstate(divide="ignore", invalid="ignore"):
            if name == "Accuracy":
                sd = np.sqrt(np.trace(V)) / M.sum()
            elif name == "Precision":
                sd = np.sqrt(np.diag(V)) / M.sum(axis=1)
            else:
                a = np.diag(M)
                b = M.sum(axis=0) - a
                vb = V.sum(axis=0) - np.diag(V)
                sd = np.sqrt(b * b * np.diag(V) + a * a * vb) / (a + b) ** 2
            if name != "Accuracy" and self.n_classes == 2:
                sd = sd[1]
            low = np.clip(value - z * sd, 0.0, 1.0)
            high = np.clip(value + z * sd, 0.0, 1.0)
        if low.ndim == 0:
            return float(low), float(high)
        return low, high

    # -- accumulator protocol --------------------------------------------------------------
    def merge(self, *others: Metric) -> Estimated:
        snaps = self._snapshots(others, lambda other: (other._metric.copy(), other._state.copy()))
        with self._lock:
            self._metric.merge(*[s[0] for s in snaps])  # all or nothing
            for _, st in snaps:
                self._state.merge(st)
        return self

    def reset(self) -> Estimated:
        with self._lock:
            self._metric.reset()
            self._state.reset()
        return self

    @property
    def nbytes(self) -> int:
        with self._lock:
            return self._metric.nbytes + self._state.nbytes

    def share_key(self) -> Any:
        return ("estimated", id(self))

    def _state_arrays(self) -> dict[str, Any]:
        inner = self._metric.state_dict()
        out: dict[str, Any] = {_MSEP + k: v for k, v in inner.items() if k not in RESERVED_KEYS}
        out.update({_OWN + k: v for k, v in self._state.arrays().items()})
        return out

    def _load_arrays(self, arrays: Mapping[str, Any]) -> None:
        inner, own = split_entries(arrays, (_MSEP, _OWN), "Estimated")
        self._metric._load_arrays(inner)
        self._state.load_arrays(own)
