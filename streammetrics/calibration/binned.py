"""Binned calibration: expected calibration error and reliability (calibration) curves.

``CalibrationError`` -- with weights w, per uniform bin b (``numpy.histogram`` on [0, 1]: edges
``linspace(0, 1, n_bins + 1)``, bin = ``searchsorted(edges, c, side="right") - 1``, a confidence
of exactly 1.0 in the last bin) of the confidences c with outcomes a: n_b = sum w,
conf_b = sum w c / n_b, acc_b = sum w a / n_b, n = sum_b n_b:

* ``norm="l1"``: sum_b (n_b / n) |acc_b - conf_b| (the expected calibration error, ECE);
* ``norm="l2"``: sqrt(sum_b (n_b / n) (acc_b - conf_b)^2);
* ``norm="max"``: max over non-empty bins of |acc_b - conf_b| (the maximum calibration error).

Binary: c = P(1), a = the label. Multiclass: c = max_k p_k, a = [argmax == y] (first index on
ties); ``classwise=True``: the mean over classes of the one-vs-rest error (c = p_k,
a = [y == k]).

``strategy="quantile"`` (both): edges at the quantiles of the confidences seen, ``numpy.percentile``
at ``linspace(0, 1, n_bins + 1)`` as scikit-learn's ``calibration_curve`` places them (weighted:
the same linear rule on cumulative weights, = repetition for integer weights), held exactly in a
sorted buffer of every confidence (:mod:`._quantile`; O(n) memory, O(n log n) per ``compute``):
the probability buffer of AUROC / AP / KS / gains declared with ``scores="probability"``
(binary, one-vs-rest), or, for binary ``from_logits=True``, their raw score buffer holding the
logits as given (the sigmoid is monotone: it is taken when reading, so a MetricSet of
``AUROC()`` and ``CalibrationError(strategy="quantile", from_logits=True)`` keeps one buffer).
Top-label multiclass confidences (max_k p_k with [argmax == y]) and multiclass logits (whose
softmax needs the whole row) are data no ranking buffer holds: they keep a buffer of their own,
shared by every calibration metric of the same kind. With ``max_bytes=`` the confidences go to
bounded bins instead, and every value comes with a certified interval
(:mod:`._quantile_bounds`, :mod:`._curve_bounds`).

``CalibrationCurve`` is scikit-learn's ``calibration_curve``, whose bins put a
value lying exactly on an inner edge in the *lower* bin (``searchsorted(edges[1:-1], p)``), the
opposite of the bins above; weights make the counts weighted sums.

Both keep O(C n_bins) sums (exact: float64 sums, the one-shot value to rounding), merge by
addition, and share one state with ``BrierScore`` in a MetricSet when ``num_classes``,
``n_bins`` and ``from_logits`` agree (binary, or multiclass with ``classwise=True``: a top-label
multiclass error keeps only its top-label bins; ``CalibrationCurve`` never: its bins differ).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, TypeVar

import numpy as np
from numpy.typing import ArrayLike

from streammetrics._core.averaging import undefined_without_weight as undefined
from streammetrics._core.docstrings import filled
from streammetrics._core.params import FLAG, check_param
from streammetrics._core.warn import silenced
from streammetrics._scores.binned.bins import BinnedScores
from streammetrics._scores.exact.buffer import SortedScores
from streammetrics._scores.probability_inputs import sigmoid
from streammetrics._scores.probability_scores import ProbabilityScores
from streammetrics._scores.thresholds import ThresholdCounts
from streammetrics.plot._output import CurveOutput

from ._common import ProbabilityMetric, binned_error, check_choice, check_strategy
from ._curve_bounds import bounded_curve
from ._quantile import QuantileProbabilities, check_ovr_classes
from ._quantile_bounds import quantile_error_certified

_P = TypeVar("_P", bound="ProbabilityMetric[Any]")

__all__ = ["CalibrationError", "CalibrationCurve", "CalibrationCurveResult"]

NORMS = ("l1", "l2", "max")
#: One column of a quantile state: its ascending (values, weights, outcome-1 weights) and its
#: bounded counts (None for an exact column).
_Column = tuple[tuple[np.ndarray, np.ndarray, np.ndarray], "ThresholdCounts | None"]


@filled
class CalibrationError(ProbabilityMetric[float]):
    """Streaming binned calibration error (ECE / RMSCE / MCE); see the module docstring.

    Parameters
    ----------
    num_classes : int or None
        None: binary; C: multiclass (top-label, or one-vs-rest with ``classwise``).
    n_bins : int
        Number of uniform bins on [0, 1].
    norm : {"l1", "l2", "max"}
        ``"l1"``: expected calibration error (ECE); ``"l2"``: root-mean-square error;
        ``"max"``: maximum calibration error over non-empty bins.
    strategy : {"uniform", "quantile"}
        ``"quantile"``: edges at the quantiles of the confidences seen (as scikit-learn's
        ``calibration_curve`` places them), bins as above on those edges; exact, from a sorted
        buffer of every confidence (O(n) memory, O(n log n) per ``compute``).
    classwise : bool
        Multiclass only: the mean over classes of the one-vs-rest error.
    max_bytes : int or None
        ``strategy="quantile"`` only (every norm): keep bounded bins of the probabilities
        instead of every one (at most ``max_bytes``); ``compute()`` is then an estimate (exact
        while every bin is one distinct value, see ``is_exact``) and ``bounds()`` a certified
        interval holding the exact error.
    from_logits : bool
        ``y_pred`` are logits (sigmoid / softmax taken first, in float64).
    ignore_index : int or None
        Rows whose (numeric) ``y_true`` equals it are left out (torchmetrics' option of the
        same name, e.g. -100 for padding); it may lie outside the classes. The state leaves
        them out, so every path does (``update``, ``Window``, ``Decayed``, ``MetricSet``);
        they are still checked (a NaN probability in one is refused). Part of the
        configuration: saved, and a merge with another ``ignore_index`` is refused.
    {labels: classes_pos_label}

    Notes
    -----
    ``update`` O(n C); ``compute`` O(C n_bins); memory 5 C n_bins + 3 n_bins + 3
    floats, independent of n (torchmetrics' CalibrationError keeps every prediction). nan (with
    an UndefinedMetricWarning) while the total weight is 0.

    Examples
    --------
    >>> m = CalibrationError(n_bins=2)
    >>> _ = m.update([0, 1], [0.2, 0.7]).update([1], [0.9])
    >>> round(m.compute(), 6)
    0.2
    """

    def __init__(
        self,
        num_classes: int | None = None,
        *,
        n_bins: int = 15,
        norm: str = "l1",
        strategy: str = "uniform",
        classwise: bool = False,
        from_logits: bool = False,
        classes: Any = None,
        pos_label: Any = None,
        max_bytes: int | None = None,
        ignore_index: int | None = None,
    ) -> None:
        super().__init__()
        # Top-label multiclass error needs no one-vs-rest bins (they cost n C per update).
        self._init_state(num_classes, n_bins, "right", from_logits, ovr=bool(classwise), classes=classes,
                         pos_label=pos_label, ignore_index=ignore_index)
        num_classes = self.num_classes
        self.n_bins = int(n_bins)
        self.norm = check_choice(norm, "norm", NORMS)
        self.strategy = check_strategy(strategy)
        self.classwise = check_param(classwise, "classwise", FLAG)
        if self.classwise and num_classes is None:
            raise ValueError("classwise: only for multiclass (give num_classes=C), got True")
        if max_bytes is not None and self.strategy != "quantile":
            raise ValueError(f"max_bytes: only for strategy='quantile' (uniform bins are already "
                             f"O(n_bins)), got {max_bytes!r}")
        if self.strategy == "quantile":  # the bins validate max_bytes (ValueError naming it)
            mode = "binary" if num_classes is None else ("ovr" if classwise else "top")
            state, self._logit_scores = _quantile_state(mode, self.num_classes, self.from_logits, max_bytes,
                                                        self.ignore_index)
            self._state = state  # type: ignore[assignment]  # quantile bins replace the fixed bins
        self.max_bytes = None if max_bytes is None else int(max_bytes)

    def _config(self) -> dict[str, Any]:
        return {"num_classes": self.num_classes, "n_bins": self.n_bins, "norm": self.norm,
                "strategy": self.strategy, "classwise": self.classwise,
                "from_logits": self.from_logits, **self._labels.config(),
                **({} if self.max_bytes is None else {"max_bytes": self.max_bytes}),
                **({} if self.ignore_index is None else {"ignore_index": self.ignore_index})}

    @property
    def is_exact(self) -> bool:
        """True when the value is exact (always but for ``max_bytes`` bins holding several
        distinct probabilities)."""
        return _is_exact(self)

    def bounds(self) -> tuple[float, float]:
        """Certified (low, high) holding the exact error of the samples seen: (value, value)
        unless ``max_bytes`` bins hold several distinct probabilities (then see
        :func:`streammetrics.calibration._quantile_bounds.quantile_error_certified`). nan while
        empty; no warning. O(bins) bounded."""
        with self._lock:
            if self.strategy == "quantile":
                _, lo, hi = self._certified(_quantile_columns(self))
                return lo, hi
            with silenced():  # this thread only (a scrape's): the process-wide filters stay
                v = self._compute()
            return v, v

    def _certified(self, cols: list[_Column]) -> tuple[float, float, float]:
        stats = np.array([quantile_error_certified(v, c, self.n_bins, self.norm) for v, c in cols])
        return float(stats[:, 0].mean()), float(stats[:, 1].mean()), float(stats[:, 2].mean())

    def _compute(self) -> float:
        if self.strategy == "quantile":
            cols = _quantile_columns(self)
            if cols[0][0][1].sum() <= 0:  # no weight in column 0 (every sample is in each)
                return undefined("CalibrationError")
            return self._certified(cols)[0]
        st = self._state
        if st.totals()[0] <= 0:
            return undefined("CalibrationError")
        if self.num_classes is None:
            b = st.bins()[0]
            return binned_error(b[:, 0], b[:, 1], b[:, 2], self.norm)
        if self.classwise:
            bins = st.bins()
            per_class = [binned_error(b[:, 0], b[:, 1], b[:, 2], self.norm) for b in bins]
            return float(np.mean(per_class))
        t = st.top()
        return binned_error(t[:, 0], t[:, 1], t[:, 2], self.norm)

    def update(self: _P, y_true: ArrayLike, y_pred: ArrayLike, *,
               sample_weight: ArrayLike | None = None) -> _P:
        """Fold in one batch (see :meth:`ProbabilityMetric.update`); rows whose ``y_true`` is
        ``ignore_index`` are checked, then left out. Returns ``self``."""
        return _update_naming_y_pred(self, y_true, y_pred, sample_weight)

    def curves(self) -> CalibrationCurveResult | list[CalibrationCurveResult]:
        """The reliability curve of the bins this error is computed from: binary and top-label
        one curve (top-label: mean confidence vs accuracy per bin), ``classwise`` one per class;
        the ECE (``norm="l1"``) is :func:`~streammetrics.plot.reliability_ece` of these curves.
        O(C n_bins) uniform; the quantile strategy as :class:`CalibrationCurve`.

        Returns
        -------
        CalibrationCurveResult or list of CalibrationCurveResult
        """
        with self._lock:
            if self.strategy == "quantile":
                found = [CalibrationCurveResult(**bounded_curve(v, c, self.n_bins))
                         for v, c in _quantile_columns(self)]
            elif self.num_classes is None or self.classwise:
                found = [_curve(b) for b in self._state.bins()]
            else:
                found = [_curve(self._state.top())]
        return found[0] if len(found) == 1 else found

    def plot(self, ax: Any = None, **kwargs: Any) -> Any:
        """Reliability diagram of :meth:`curves` (the bins this error is computed from), with the
        per-bin counts; see :func:`streammetrics.plot.plot_calibration` (matplotlib needed: the
        ``plot`` extra).

        Parameters
        ----------
        ax : matplotlib Axes, optional
            Where to draw (a new figure when not given).
        **kwargs
            Passed to :func:`streammetrics.plot.plot_calibration`.

        Returns
        -------
        Display
            The axes and the artists drawn.
        """
        from streammetrics.plot import plot_calibration

        if self.strategy == "uniform":
            kwargs.setdefault("n_bins", self.n_bins)
        return plot_calibration(self.curves(), ax, **kwargs)


@dataclass(frozen=True)
class CalibrationCurveResult(CurveOutput):
    """One reliability curve over the non-empty bins, in bin order: scikit-learn's
    ``calibration_curve`` output plus the counts.

    Attributes
    ----------
    prob_true : numpy.ndarray
        Observed frequency of the positive class in each non-empty bin.
    prob_pred : numpy.ndarray
        Mean predicted probability in each non-empty bin.
    counts : numpy.ndarray
        (Weighted) number of samples in each non-empty bin.
    exact : bool
        False for a curve read from bounded bins (``CalibrationCurve(max_bytes=...)``) holding
        several distinct probabilities: the three arrays are then an estimate, one row per
        quantile bin that may hold samples.
    prob_true_low, prob_true_high, prob_pred_low, prob_pred_high, counts_low, counts_high : numpy.ndarray
        Certified per-row bounds holding the exact curve's values of each non-empty bin (equal
        to the values when ``exact``).
    bin_index : numpy.ndarray
        Index in [0, n_bins) of each row's bin (the empty bins have no row).

    Examples
    --------
    >>> r = CalibrationCurve(n_bins=4).update([0, 0, 1, 1], [0.1, 0.3, 0.6, 0.9]).compute()
    >>> r.prob_true.tolist(), r.prob_pred.tolist(), r.counts.tolist()
    ([0.0, 0.0, 1.0, 1.0], [0.1, 0.3, 0.6, 0.9], [1.0, 1.0, 1.0, 1.0])
    """

    prob_true: np.ndarray
    prob_pred: np.ndarray
    counts: np.ndarray
    exact: bool = True
    prob_true_low: np.ndarray | None = None
    prob_true_high: np.ndarray | None = None
    prob_pred_low: np.ndarray | None = None
    prob_pred_high: np.ndarray | None = None
    counts_low: np.ndarray | None = None
    counts_high: np.ndarray | None = None
    bin_index: np.ndarray | None = None

    _output_columns = ("prob_true", "prob_pred", "counts")

    def __post_init__(self) -> None:
        # an exact curve is its own bounds
        for name in ("prob_true", "prob_pred", "counts"):
            for end in ("low", "high"):
                if getattr(self, f"{name}_{end}") is None:
                    object.__setattr__(self, f"{name}_{end}", np.asarray(getattr(self, name)).copy())
        if self.bin_index is None:
            object.__setattr__(self, "bin_index", np.arange(np.shape(self.prob_true)[0]))

    def _summary(self) -> list[tuple[str, Any]]:
        from streammetrics.plot import reliability_ece  # matplotlib-free: only the ECE over these bins

        return [("ECE", reliability_ece(self))]


@filled
class CalibrationCurve(ProbabilityMetric[CalibrationCurveResult | list[CalibrationCurveResult]]):
    """Streaming reliability curve, equal to ``sklearn.calibration.calibration_curve``.

    ``compute()`` returns a :class:`CalibrationCurveResult` (binary) or a list of them, one per
    class (multiclass, one-vs-rest: probability p_k against [y == k]).

    Parameters
    ----------
    n_bins : int
        Number of uniform bins on [0, 1] (a value on an inner edge goes to the lower bin).
    strategy : {"uniform", "quantile"}
        ``"quantile"``: scikit-learn's quantile strategy (edges ``numpy.percentile`` of the
        probabilities seen), exact from a sorted buffer of every probability (O(n) memory,
        O(n log n) per ``compute``).
    num_classes : int or None
        None: binary (``y_pred`` = P(class 1)); C: multiclass, one curve per class.
    from_logits : bool
        ``y_pred`` are logits (sigmoid / softmax taken first, in float64).
    max_bytes : int or None
        ``strategy="quantile"`` only: keep bounded bins of the probabilities instead of every
        one (at most ``max_bytes``); the result is then an estimate with certified per-bin
        bounds (``exact=False`` while a bin holds several distinct probabilities, see
        :class:`CalibrationCurveResult` and :mod:`._curve_bounds`).
    {labels: classes_pos_label}

    Notes
    -----
    ``update`` O(n C); ``compute`` O(C n_bins); memory 5 C n_bins + 3 floats.

    Examples
    --------
    >>> m = CalibrationCurve(n_bins=2)
    >>> _ = m.update([0, 1], [0.2, 0.7]).update([1], [0.9])
    >>> r = m.compute()
    >>> r.prob_true.tolist(), r.prob_pred.tolist(), r.counts.tolist()
    ([0.0, 1.0], [0.2, 0.8], [1.0, 2.0])
    """

    def __init__(
        self,
        n_bins: int = 5,
        strategy: str = "uniform",
        num_classes: int | None = None,
        *,
        from_logits: bool = False,
        classes: Any = None,
        pos_label: Any = None,
        max_bytes: int | None = None,
    ) -> None:
        super().__init__()
        # the curve reads only its bins: its state skips the log loss and Brier sums (``losses``
        # is in the state's key, so no metric reading them ever shares it)
        self._init_state(num_classes, n_bins, "left", from_logits, losses=False, classes=classes,
                         pos_label=pos_label)
        num_classes = self.num_classes
        self.n_bins = int(n_bins)
        self.strategy = check_strategy(strategy)
        if max_bytes is not None and self.strategy != "quantile":
            raise ValueError(f"max_bytes: only for strategy='quantile' (uniform bins are already "
                             f"O(n_bins)), got {max_bytes!r}")
        if self.strategy == "quantile":  # the bins validate max_bytes (ValueError naming it)
            mode = "binary" if num_classes is None else "ovr"
            state, self._logit_scores = _quantile_state(mode, self.num_classes, self.from_logits, max_bytes)
            self._state = state  # type: ignore[assignment]  # quantile bins replace the fixed bins
        self.max_bytes = None if max_bytes is None else int(max_bytes)

    def _config(self) -> dict[str, Any]:
        return {"n_bins": self.n_bins, "strategy": self.strategy,
                "num_classes": self.num_classes, "from_logits": self.from_logits, **self._labels.config(),
                **({} if self.max_bytes is None else {"max_bytes": self.max_bytes})}

    def update(self: _P, y_true: ArrayLike, y_pred: ArrayLike, *,
               sample_weight: ArrayLike | None = None) -> _P:
        """Fold in one batch (see :meth:`ProbabilityMetric.update`). Returns ``self``."""
        return _update_naming_y_pred(self, y_true, y_pred, sample_weight)

    @property
    def is_exact(self) -> bool:
        """True when the curve is exact (always but for ``max_bytes`` bins holding several
        distinct probabilities)."""
        return _is_exact(self)

    def plot(self, ax: Any = None, **kwargs: Any) -> Any:
        """Reliability diagram of the current curve(s), one per class for multiclass, with the
        per-bin counts (see :func:`streammetrics.plot.plot_calibration`)."""
        from streammetrics.plot import plot_calibration

        if self.strategy == "uniform":
            kwargs.setdefault("n_bins", self.n_bins)
        return plot_calibration(self.compute(), ax, **kwargs)

    def _compute(self) -> CalibrationCurveResult | list[CalibrationCurveResult]:
        if self.strategy == "quantile":
            cols = _quantile_columns(self)
            curves = [CalibrationCurveResult(**bounded_curve(v, c, self.n_bins)) for v, c in cols]
        else:
            curves = [_curve(b) for b in self._state.bins()]
        return curves[0] if self.num_classes is None else curves


def _quantile_state(
    mode: str, num_classes: int | None, from_logits: bool, max_bytes: int | None,
    ignore_index: int | None = None,
) -> tuple[QuantileProbabilities | SortedScores | BinnedScores, bool]:
    """The buffer shared with ranking metrics where it holds the same data: the probability
    buffer (binary / one-vs-rest probabilities), the raw score buffer (binary logits) or, with
    ``max_bytes``, the bounded probability bins of ``AUROC(scores="probability",
    max_bytes=...)`` (binary probabilities: the bins check the same rules); else a quantile state
    of its own (top-label, multiclass logits, other bounded bins: one-vs-rest rows must sum to 1,
    which the bins do not check). With it, True when the state holds logits (their sigmoid is
    read). Each leaves out the rows labelled ``ignore_index``."""
    check_ovr_classes(mode, num_classes)
    if mode == "binary" and max_bytes is not None and not from_logits:
        return BinnedScores("binary", None, ignore_index, max_bytes=max_bytes, scores="probability"), False
    if mode != "top" and max_bytes is None:
        if not from_logits:
            task = "binary" if num_classes is None else "multiclass"
            return ProbabilityScores(task, num_classes, ignore_index), False
        if mode == "binary":
            return SortedScores("binary", None, ignore_index), True
    return QuantileProbabilities(mode, num_classes, from_logits, max_bytes, ignore_index), False


def _is_exact(metric: Any) -> bool:
    """False only for bounded quantile bins holding several distinct probabilities."""
    with metric._lock:
        return metric.strategy != "quantile" or bool(metric._state.is_exact)


def _quantile_columns(metric: Any) -> list[_Column]:
    """Per one-vs-rest column of a quantile metric's state (the score-state protocol): its
    ascending (values, weights, outcome-1 weights) and, unless the column is exact, its
    bounded counts for the certificate; with the sigmoid of the values where the state holds
    logits (monotone: the order and the counts are unchanged). O(n) exact, O(bins) bounded,
    per column."""
    st = metric._state
    cols: list[_Column] = []
    for k in range(st.n_columns):
        v, w, p = st.sorted_values(k)
        c = None if st.column_exact(k) else st.counts(k)
        if metric._logit_scores:
            v = sigmoid(v)
            c = None if c is None else replace(c, thresholds=sigmoid(c.thresholds))
        cols.append(((v, w, p), c))
    return cols


def _update_naming_y_pred(metric: _P, y_true: Any, y_pred: Any, sample_weight: Any) -> _P:
    """``metric.update``, whose ranking state (the raw score buffer of binary logits, the
    bounded bins of binary probabilities) names its argument ``y_pred`` in errors as every
    calibration metric does (the state's own name is ``y_score``)."""
    try:
        return ProbabilityMetric.update(metric, y_true, y_pred, sample_weight=sample_weight)
    except ValueError as err:
        text = str(err)
        if text.startswith("y_score:"):
            raise ValueError("y_pred:" + text[len("y_score:"):]) from None
        raise


def _curve(b: np.ndarray) -> CalibrationCurveResult:
    w = b[:, 0]
    full = w != 0
    return CalibrationCurveResult(
        prob_true=b[full, 2] / w[full], prob_pred=b[full, 1] / w[full], counts=w[full].copy(),
        bin_index=np.flatnonzero(full),
    )
