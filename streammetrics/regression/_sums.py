"""Per-row loss sums and the largest absolute error: the states of MAPE, MSLE / RMSLE, the
pinball loss, the Tweedie deviances and the max error.

:class:`LossSums` holds, per output, the weighted sum of one per-row loss (compensated across
batches: ``loss + loss_lo``), the total weight and the number of rows of positive weight; it
merges by addition and rescales (decay). :class:`MaxAbs` holds the largest |y_true - y_pred|
per output over rows of positive weight; it merges by maximum (no rescaling, no subtraction:
``Window`` and ``Decayed`` keep its rows). Both fix the number of outputs with their first batch
of positive weight. O(n k) per batch, O(k) per merge and read.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from streammetrics._core.load_checks import check_sums
from streammetrics._core.state import State

from ._base import (
    RegressionBatch,
    check_domain,
    check_rows,
    check_same_outputs,
    float_arrays,
    regression_batch,
)

_EPS = float(np.finfo(np.float64).eps)
_LO_BOUND = 2.0**-52


def _two_sum(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``s, e`` with ``s = fl(a + b)`` and ``a + b = s + e`` exactly (Knuth)."""
    s = a + b
    bb = s - a
    return s, (a - (s - bb)) + (b - bb)


def _ape(b: RegressionBatch, _: float) -> np.ndarray:
    return np.abs(b.y - b.p) / np.maximum(np.abs(b.y), _EPS)


def _sle(b: RegressionBatch, _: float) -> np.ndarray:
    rule = ("Mean Squared Logarithmic Error cannot be used when targets contain values less "
            "than or equal to -1.")
    check_domain(b.y, b.y <= -1, "y_true", rule)
    check_domain(b.p, b.p <= -1, "y_pred", rule)
    d = np.log1p(b.y) - np.log1p(b.p)
    return d * d


def _pinball(b: RegressionBatch, alpha: float) -> np.ndarray:
    diff = b.y - b.p
    return np.where(diff >= 0, alpha * diff, (alpha - 1.0) * diff)


def tweedie_domain(y: np.ndarray, p: np.ndarray, power: float) -> None:
    """scikit-learn's domain of the Tweedie deviance of ``power`` (its messages), naming the
    argument and the first offending value."""
    msg = f"Mean Tweedie deviance error with power={power} can only be used on "
    if power < 0:
        check_domain(p, p <= 0, "y_pred", msg + "strictly positive y_pred.")
    elif 1 <= power < 2:
        rule = msg + "non-negative y and strictly positive y_pred."
        check_domain(y, y < 0, "y_true", rule)
        check_domain(p, p <= 0, "y_pred", rule)
    elif power >= 2:
        rule = msg + "strictly positive y and y_pred."
        check_domain(y, y <= 0, "y_true", rule)
        check_domain(p, p <= 0, "y_pred", rule)


def tweedie_deviance(y: np.ndarray, p: np.ndarray, power: float) -> np.ndarray:
    """The unit Tweedie deviance d(y, p) of ``power`` per entry (docs/definitions/regression.md,
    "Tweedie deviance"); the domain is checked by :func:`tweedie_domain`."""
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        if power == 0:
            d = y - p
            return d * d
        if power == 1:
            safe = np.where(y > 0, y, 1.0)
            return 2 * (np.where(y > 0, y * np.log(safe / p), 0.0) - y + p)
        if power == 2:
            return 2 * (np.log(p / y) + y / p - 1)
        yp = np.where(y > 0, y, 0.0) if power < 0 else y
        return 2 * (np.power(yp, 2 - power) / ((1 - power) * (2 - power))
                    - y * np.power(p, 1 - power) / (1 - power)
                    + np.power(p, 2 - power) / (2 - power))


def _tweedie(b: RegressionBatch, power: float) -> np.ndarray:
    tweedie_domain(b.y, b.p, power)
    # a deviance is >= 0; its terms round to -1e-15 at y = y_pred (a sum below 0 would not load)
    return np.maximum(tweedie_deviance(b.y, b.p, power), 0.0)


#: Loss kind -> per-row loss of a validated batch (and the kind's parameter).
LOSSES: dict[str, Callable[[RegressionBatch, float], np.ndarray]] = {
    "absolute_percentage": _ape,
    "squared_log": _sle,
    "pinball": _pinball,
    "tweedie": _tweedie,
}


class LazyOutputs(State):
    """Arrays ``rows`` and ``weight`` (shape ()) and per-output arrays (k,), k fixed by the
    first batch of positive weight (or by the configuration)."""

    _per_output: tuple[str, ...] = ()

    def __init__(self, outputs: int | None = None) -> None:
        self.outputs = outputs
        self._zero(outputs or 0)

    def _zero(self, k: int) -> None:
        self._a: dict[str, np.ndarray] = {"rows": np.zeros(()), "weight": np.zeros(())}
        for name in self._per_output:
            self._a[name] = np.zeros(k)

    @property
    def k(self) -> int:
        """The number of outputs held (0: none seen yet)."""
        return int(self._a[self._per_output[0]].shape[0])

    def _batch(self, y_true: Any, y_pred: Any,
               sample_weight: Any) -> tuple[RegressionBatch, float, float] | None:
        held = self.k or self.outputs
        b = regression_batch(y_true, y_pred, sample_weight, outputs=held or None)
        if b.w is None:
            return (b, float(b.n), float(b.n)) if b.n else None
        rows = float(np.count_nonzero(b.w))
        return (b, rows, float(b.w.sum())) if rows else None

    def arrays(self) -> dict[str, Any]:
        return {k: v.copy() for k, v in self._a.items()}

    def _load_common(self, arrays: Mapping[str, Any]) -> dict[str, np.ndarray]:
        names = ("rows", "weight", *self._per_output)
        new = float_arrays(arrays, names)
        check_rows(new, self._per_output, self.outputs, "sums")
        return new

    def load_arrays(self, arrays: Mapping[str, Any]) -> None:
        new = self._load_common(arrays)
        self._check_own(new)
        self._install(new)

    def _check_own(self, new: dict[str, np.ndarray]) -> None:
        """Hook: the rules of the subclass's own arrays (``rows``, ``weight`` and the shapes are
        checked already)."""

    def merge(self, other: State) -> None:
        assert isinstance(other, type(self))
        a = other._a
        if a["rows"] == 0:
            return
        check_same_outputs(self.k, other.k)
        self.apply((float(a["rows"]), float(a["weight"]), *(a[name] for name in self._per_output)))

    def _install(self, new: dict[str, np.ndarray]) -> None:
        if float(new["rows"]) == 0 and self.outputs is None:
            self._zero(0)
        else:
            self._a = new

    def reset(self) -> None:
        self._zero(self.outputs or 0)

    def sample_count(self) -> float | None:
        return float(self._a["weight"])


class LossSums(LazyOutputs):
    """Weighted sums of one per-row loss per output (see the module docstring).

    Parameters
    ----------
    kind : str
        A key of :data:`LOSSES`.
    param : float
        The loss's parameter (pinball ``alpha``, Tweedie ``power``; 0 otherwise).
    outputs : int, optional
        The number of outputs when the configuration fixes it.
    """

    _per_output = ("loss", "loss_lo")

    def __init__(self, kind: str, param: float = 0.0, outputs: int | None = None) -> None:
        self.kind, self.param = kind, float(param)
        self._loss = LOSSES[kind]
        super().__init__(outputs)

    def key(self) -> tuple[Any, ...]:
        return ("regression_loss", self.kind, self.param, self.outputs)

    def prepare(self, y_true: Any, y_pred: Any, sample_weight: Any = None) -> Any:
        got = self._batch(y_true, y_pred, sample_weight)
        if got is None:
            return None
        b, rows, weight = got
        with np.errstate(over="ignore", invalid="ignore"):
            loss = self._loss(b, self.param)
            sums = loss.sum(axis=0) if b.w is None else b.w @ loss
        if not np.isfinite(sums).all():
            raise ValueError(f"y_pred: values too large: the {self.kind.replace('_', ' ')} "
                             f"losses of this batch overflow float64 (largest |y_pred| = "
                             f"{float(np.abs(b.p).max())!r}, |y_true| = {float(np.abs(b.y).max())!r})")
        return rows, weight, sums, np.zeros_like(sums)

    def apply(self, delta: Any) -> None:
        if delta is None:
            return
        rows, weight, sums, sums_lo = delta
        if self._a["rows"] == 0:
            self._zero(sums.shape[0])
        a = self._a
        hi, err = _two_sum(a["loss"], sums)
        a["loss"], a["loss_lo"] = _two_sum(hi, err + (a["loss_lo"] + sums_lo))
        a["rows"] = np.asarray(a["rows"] + rows, dtype=np.float64)  # 0-d arrays, not scalars
        a["weight"] = np.asarray(a["weight"] + weight, dtype=np.float64)

    def totals(self) -> tuple[float, float, np.ndarray]:
        """``(rows, weight, loss sums per output)``."""
        a = self._a
        return float(a["rows"]), float(a["weight"]), a["loss"] + a["loss_lo"]

    def _check_own(self, new: dict[str, np.ndarray]) -> None:
        check_sums(new["loss"], "loss")
        if (np.abs(new["loss_lo"]) > _LO_BOUND * new["loss"]).any():
            raise ValueError("state: array 'loss_lo' must be a rounding residue of 'loss'")

    def scale(self, factor: float) -> None:
        """Multiply every sample weight by ``factor`` (0 empties the state). O(k)."""
        f = float(factor)
        for name in ("weight", "loss", "loss_lo"):
            self._a[name] = np.asarray(self._a[name] * f, dtype=np.float64)
        self._a["loss"], self._a["loss_lo"] = _two_sum(self._a["loss"], self._a["loss_lo"])
        if f == 0.0 or float(self._a["weight"]) == 0.0:
            self.reset()


class MaxAbs(LazyOutputs):
    """The largest |y_true - y_pred| per output over rows of positive weight (weights
    otherwise ignored). Merges by maximum.

    Parameters
    ----------
    outputs : int, optional
        The number of outputs when the configuration fixes it.
    """

    _per_output = ("max",)
    # No rescaling or subtraction: a maximum cannot forget a row (wrappers keep the rows).
    subtract = State.subtract
    scale = State.scale

    def key(self) -> tuple[Any, ...]:
        return ("regression_max_abs", self.outputs)

    def prepare(self, y_true: Any, y_pred: Any, sample_weight: Any = None) -> Any:
        got = self._batch(y_true, y_pred, sample_weight)
        if got is None:
            return None
        b, rows, weight = got
        with np.errstate(over="ignore"):
            r = np.abs(b.y - b.p)
        if b.w is not None:
            r = r[b.w > 0]
        m = r.max(axis=0)
        if not np.isfinite(m).all():
            raise ValueError("y_pred: values too large: y_true - y_pred overflows float64")
        return rows, weight, m

    def apply(self, delta: Any) -> None:
        if delta is None:
            return
        rows, weight, m = delta
        if self._a["rows"] == 0:
            self._zero(m.shape[0])
        a = self._a
        a["max"] = np.maximum(a["max"], m)
        a["rows"] = np.asarray(a["rows"] + rows, dtype=np.float64)  # 0-d arrays, not scalars
        a["weight"] = np.asarray(a["weight"] + weight, dtype=np.float64)

    def totals(self) -> tuple[float, np.ndarray]:
        """``(rows, max |r| per output)``."""
        return float(self._a["rows"]), self._a["max"]

    def _check_own(self, new: dict[str, np.ndarray]) -> None:
        check_sums(new["max"], "max")
