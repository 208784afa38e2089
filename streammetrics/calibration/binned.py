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
sorted buffer of every confidence (:mod:`._quantile`; O(n) memory, O(n log n) per ``compute``).

``CalibrationCurve`` is scikit-learn's ``calibration_curve``, whose bins put a
value lying exactly on an inner edge in the *lower* bin (``searchsorted(edges[1:-1], p)``), the
opposite of the bins above; weights make the counts weighted sums.

Both keep O(C n_bins) sums (exact: float64 sums, the one-shot value to rounding), merge by
addition, and share one state with ``BrierScore`` in a MetricSet when ``num_classes``,
``n_bins`` and ``from_logits`` agree (binary, or multiclass with ``classwise=True``: a top-label
multiclass error keeps only its top-label bins; ``CalibrationCurve`` never: its bins differ).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._params import FLAG, check_param
from .._result_output import CurveOutput
from ._common import ProbabilityMetric, check_choice, check_strategy, undefined
from ._quantile import QuantileProbabilities

__all__ = ["CalibrationError", "CalibrationCurve", "CalibrationCurveResult"]

NORMS = ("l1", "l2", "max")


def binned_error(w: np.ndarray, wc: np.ndarray, wa: np.ndarray, norm: str) -> float:
    """The calibration error of per-bin sums (n_bins,) each; nan if the total weight is 0."""
    n = w.sum()
    if n <= 0:
        return math.nan
    full = w > 0
    if norm == "l1":
        return float(np.abs(wa[full] - wc[full]).sum() / n)
    gap = (wa[full] - wc[full]) / w[full]
    if norm == "l2":
        return float(math.sqrt((w[full] * gap * gap).sum() / n))
    return float(np.abs(gap).max())


class CalibrationError(ProbabilityMetric):
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
    from_logits : bool
        ``y_pred`` are logits (sigmoid / softmax taken first, in float64).

    Notes
    -----
    ``update`` O(n C log n_bins); ``compute`` O(C n_bins); memory 5 C n_bins + 3 n_bins + 3
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
    ) -> None:
        super().__init__()
        # Top-label multiclass error needs no one-vs-rest bins (they cost n C per update).
        self._init_state(num_classes, n_bins, "right", from_logits, ovr=bool(classwise), classes=classes,
                         pos_label=pos_label)
        num_classes = self.num_classes
        self.n_bins = int(n_bins)
        self.norm = check_choice(norm, "norm", NORMS)
        self.strategy = check_strategy(strategy)
        self.classwise = check_param(classwise, "classwise", FLAG)
        if self.classwise and num_classes is None:
            raise ValueError("classwise: only for multiclass (give num_classes=C), got True")
        if self.strategy == "quantile":
            mode = "binary" if num_classes is None else ("ovr" if classwise else "top")
            self._state = self._labels.attach(QuantileProbabilities(mode, self.num_classes, self.from_logits))

    def _config(self) -> dict[str, Any]:
        return {"num_classes": self.num_classes, "n_bins": self.n_bins, "norm": self.norm,
                "strategy": self.strategy, "classwise": self.classwise,
                "from_logits": self.from_logits, **self._labels.config()}

    def _compute(self) -> float:
        if isinstance(self._state, QuantileProbabilities):
            return self._compute_quantile(self._state)
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

    def _compute_quantile(self, st: QuantileProbabilities) -> float:
        if st.inner.totals().sum() <= 0:
            return undefined("CalibrationError")
        columns = range(self.num_classes) if st.mode == "ovr" else range(1)  # type: ignore[arg-type]
        errors = []
        for k in columns:
            b = st.bin_sums(k, self.n_bins, "right")
            errors.append(binned_error(b[:, 0], b[:, 1], b[:, 2], self.norm))
        return float(np.mean(errors))


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

    Examples
    --------
    >>> r = CalibrationCurve(n_bins=4).update([0, 0, 1, 1], [0.1, 0.3, 0.6, 0.9]).compute()
    >>> r.prob_true.tolist(), r.prob_pred.tolist(), r.counts.tolist()
    ([0.0, 0.0, 1.0, 1.0], [0.1, 0.3, 0.6, 0.9], [1.0, 1.0, 1.0, 1.0])
    """

    prob_true: np.ndarray
    prob_pred: np.ndarray
    counts: np.ndarray

    _output_columns = ("prob_true", "prob_pred", "counts")

    def _summary(self) -> list[tuple[str, Any]]:
        from ..plot import reliability_ece  # matplotlib-free: only the ECE over these bins

        return [("ECE", reliability_ece(self))]


class CalibrationCurve(ProbabilityMetric):
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

    Notes
    -----
    ``update`` O(n C log n_bins); ``compute`` O(C n_bins); memory 5 C n_bins + 3 floats.

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
    ) -> None:
        super().__init__()
        self._init_state(num_classes, n_bins, "left", from_logits, classes=classes, pos_label=pos_label)
        num_classes = self.num_classes
        self.n_bins = int(n_bins)
        self.strategy = check_strategy(strategy)
        if self.strategy == "quantile":
            mode = "binary" if num_classes is None else "ovr"
            self._state = self._labels.attach(QuantileProbabilities(mode, self.num_classes, self.from_logits))

    def _config(self) -> dict[str, Any]:
        return {"n_bins": self.n_bins, "strategy": self.strategy,
                "num_classes": self.num_classes, "from_logits": self.from_logits, **self._labels.config()}

    def plot(self, ax: Any = None, **kwargs: Any) -> Any:
        """Reliability diagram of the current curve(s), one per class for multiclass, with the
        per-bin counts (see :func:`streammetrics.plot.plot_calibration`)."""
        from ..plot import plot_calibration

        if self.strategy == "uniform":
            kwargs.setdefault("n_bins", self.n_bins)
        return plot_calibration(self.compute(), ax, **kwargs)

    def _compute(self) -> CalibrationCurveResult | list[CalibrationCurveResult]:
        st: Any = self._state
        if isinstance(st, QuantileProbabilities):
            k = 1 if self.num_classes is None else self.num_classes
            curves = [_curve(st.bin_sums(c, self.n_bins, "left")) for c in range(k)]
        else:
            curves = [_curve(b) for b in st.bins()]
        return curves[0] if self.num_classes is None else curves


def _curve(b: np.ndarray) -> CalibrationCurveResult:
    w = b[:, 0]
    full = w != 0
    return CalibrationCurveResult(
        prob_true=b[full, 2] / w[full], prob_pred=b[full, 1] / w[full], counts=w[full].copy()
    )
