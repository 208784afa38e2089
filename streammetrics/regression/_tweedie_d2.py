"""The state of :class:`~streammetrics.D2TweedieScore`: per output, the weighted sum of the
Tweedie deviances of the predictions (the numerator, compensated as in
:class:`~streammetrics.regression._sums.LossSums`) and, for the denominator, the weighted mean
of ``y_true`` with the weighted sum of the deviances of ``y_true`` from a centre.

The denominator sum_i w_i d(y_i, ybar) needs the mean ybar of the whole stream, which no batch
knows. The unit Tweedie deviance is a Bregman divergence, d(y, mu) = A(y) + B(y, mu) with B
linear in y, so for any two centres c, c' and rows of weighted mean m and total weight W,

    sum_i w_i d(y_i, c') = sum_i w_i d(y_i, c) + W (d(m, c') - d(m, c)),

the generalisation of the parallel-axis rule Chan's variance merge uses (power 0 is exactly
that). Each batch sums its deviances around its own mean; a merge moves both parts to the
merged mean (two non-negative terms added, no cancellation). The centre is the mean where the
deviance is a number there (any mean for power 0 and whole powers < 0, a positive one
otherwise) and 1 elsewhere (a mean <= 0: a fractional power < 0, or only zeros with
1 <= power < 2); the read then moves the sum to the mean by scikit-learn's formula of B,
which gives its nan there.

The smallest and largest y_true are kept too: a constant y_true's denominator is exactly 0
(not a rounding residue that would differ by split).

O(n k) per batch, O(k) per merge and read; memory 6 k + 2 floats.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from streammetrics._core.load_checks import check_sums, loading
from streammetrics._core.state import State

from ._base import check_same_outputs
from ._sums import LazyOutputs, tweedie_deviance, tweedie_domain

_LO_BOUND = 2.0**-52
#: The largest |sum| a loaded state may hold (check_sums' bound; the deviance sum may be a
#: rounding residue below 0).
_BOUND = 1e150
#: How far (relative to max(|y_min|, |y_max|)) a loaded 'mean' may lie outside [y_min, y_max].
_MEAN_SLACK = 1e-6


def _two_sum(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``s, e`` with ``s = fl(a + b)`` and ``a + b = s + e`` exactly (Knuth)."""
    s = a + b
    bb = s - a
    return s, (a - (s - bb)) + (b - bb)


def centre(mean: np.ndarray, power: float) -> np.ndarray:
    """Where the deviance sums are centred: ``mean`` where scikit-learn's d(., mean) is a
    number (any mean for power 0 and for whole powers < 0, whose powers of a negative mean
    are; a positive one otherwise), else 1."""
    if power == 0 or (power < 0 and float(power).is_integer()):
        return mean
    return np.where(mean > 0, mean, 1.0)


def _shift(mean: np.ndarray, old: np.ndarray, new: np.ndarray, power: float) -> np.ndarray:
    """d(mean, new) - d(mean, old): what moving a sum of deviances from centre ``old`` to
    ``new`` adds per unit of weight (0 where ``old == new``). The terms in y alone cancel, so
    d(mean, old) is subtracted also where ``old`` is the mean: it is 0 only where
    max(mean, 0) = mean (a power < 0 takes max(y, 0) in those terms)."""
    with np.errstate(over="ignore", invalid="ignore"):
        moved = tweedie_deviance(mean, new, power) - tweedie_deviance(mean, old, power)
    return np.where(old == new, 0.0, moved)


def _linear_part(y: np.ndarray, mu: np.ndarray, power: float) -> np.ndarray:
    """B(y, mu) of scikit-learn's unit deviance (the terms in mu), with its nan where mu is
    outside the domain."""
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        if power == 0:
            return mu * mu - 2 * y * mu
        if power == 1:  # xlogy: y log(y / mu) is 0 at y = 0, whatever mu
            return 2 * (mu - np.where(y == 0, 0.0, y * np.log(mu)))
        if power == 2:
            return 2 * (np.log(mu) + y / mu)
        return 2 * (np.power(mu, 2 - power) / (2 - power) - y * np.power(mu, 1 - power) / (1 - power))


class TweedieD2Sums(LazyOutputs):
    """Sums of Tweedie deviances of the predictions and of ``y_true`` from its mean (see the
    module docstring): arrays ``rows`` and ``weight`` (shape ()) and, per output (k,), ``loss``
    + ``loss_lo`` (the compensated numerator), ``mean`` (y_true's weighted mean) and ``dev``
    (the deviances of y_true from the centre of that mean), ``y_min`` and ``y_max`` (whether
    y_true is constant); k fixed by the first batch of
    positive weight (or by the configuration).

    Parameters
    ----------
    power : float
        The Tweedie power (checked by the metric).
    outputs : int, optional
        The number of outputs when the configuration fixes it.
    """

    _per_output = ("loss", "loss_lo", "mean", "dev", "y_min", "y_max")
    # No subtraction: windows rebuild the state from their rows.
    subtract = State.subtract

    def __init__(self, power: float, outputs: int | None = None) -> None:
        self.power = float(power)
        super().__init__(outputs)

    def key(self) -> tuple[Any, ...]:
        return ("regression_d2_tweedie", self.power, self.outputs)

    def prepare(self, y_true: Any, y_pred: Any, sample_weight: Any = None) -> Any:
        got = self._batch(y_true, y_pred, sample_weight)
        if got is None:
            return None
        b, rows, weight = got
        tweedie_domain(b.y, b.p, self.power)
        y, w = b.y, b.w
        with np.errstate(over="ignore", invalid="ignore"):
            loss = np.maximum(tweedie_deviance(b.y, b.p, self.power), 0.0)  # >= 0 (rounding)
            sums = loss.sum(axis=0) if w is None else w @ loss
            if w is not None and not (w > 0).all():
                keep = w > 0
                y, w = y[keep], w[keep]
            mean = y.mean(axis=0) if w is None else (w @ y) / weight
            c = centre(mean, self.power)
            dev = tweedie_deviance(y, np.broadcast_to(c, y.shape), self.power)
            dev = dev.sum(axis=0) if w is None else w @ dev
        if not (np.isfinite(sums).all() and np.isfinite(dev).all() and np.isfinite(mean).all()):
            raise ValueError(f"y_pred: values too large: the Tweedie deviances of this batch "
                             f"overflow float64 (largest |y_pred| = {float(np.abs(b.p).max())!r}, "
                             f"|y_true| = {float(np.abs(b.y).max())!r})")
        return rows, weight, sums, mean, dev, y.min(axis=0), y.max(axis=0)

    def apply(self, delta: Any) -> None:
        if delta is None:
            return
        rows, weight, sums, mean, dev, y_min, y_max = delta
        a = self._a
        if a["rows"] == 0:
            self._zero(sums.shape[0])
            a = self._a
            a["mean"], a["dev"] = mean.astype(np.float64, copy=True), dev.astype(np.float64, copy=True)
            a["y_min"], a["y_max"] = y_min.astype(np.float64, copy=True), y_max.astype(np.float64, copy=True)
        else:
            wa = float(a["weight"])
            total = wa + weight
            with np.errstate(over="ignore", invalid="ignore"):
                m = a["mean"] + (mean - a["mean"]) * (weight / total)
                c = centre(m, self.power)
                moved = (a["dev"] + wa * _shift(a["mean"], centre(a["mean"], self.power), c, self.power)
                         + dev + weight * _shift(mean, centre(mean, self.power), c, self.power))
            a["mean"], a["dev"] = m, moved
            a["y_min"], a["y_max"] = np.minimum(a["y_min"], y_min), np.maximum(a["y_max"], y_max)
        hi, err = _two_sum(a["loss"], sums)
        a["loss"], a["loss_lo"] = _two_sum(hi, err + a["loss_lo"])
        a["rows"] = np.asarray(a["rows"] + rows, dtype=np.float64)
        a["weight"] = np.asarray(a["weight"] + weight, dtype=np.float64)

    def merge(self, other: State) -> None:
        assert isinstance(other, type(self))
        a = other._a
        if a["rows"] == 0:
            return
        check_same_outputs(self.k, other.k)
        lo = a["loss_lo"]
        self.apply((float(a["rows"]), float(a["weight"]), a["loss"] + lo, a["mean"], a["dev"],
                    a["y_min"], a["y_max"]))

    def totals(self) -> tuple[float, float, np.ndarray, np.ndarray]:
        """``(rows, weight, sum of the predictions' deviances, sum of y_true's deviances from
        its mean)`` per output; the latter exactly 0 where y_true is constant."""
        return self._totals(self._a)

    def _totals(self, a: Mapping[str, np.ndarray]) -> tuple[float, float, np.ndarray, np.ndarray]:
        weight, mean = float(a["weight"]), a["mean"]
        c = centre(mean, self.power)
        dev = a["dev"]
        if (c != mean).any():
            with np.errstate(over="ignore", invalid="ignore"):
                pw = self.power
                dev = dev + weight * (_linear_part(mean, mean, pw) - _linear_part(mean, c, pw))
        dev = np.where(a["y_min"] == a["y_max"], 0.0, dev)  # constant y_true: exactly 0
        return float(a["rows"]), weight, a["loss"] + a["loss_lo"], dev

    def _check_own(self, new: dict[str, np.ndarray]) -> None:
        check_sums(new["loss"], "loss")
        if (np.abs(new["loss_lo"]) > _LO_BOUND * new["loss"]).any():
            raise ValueError("state: array 'loss_lo' must be a rounding residue of 'loss'")
        if (np.abs(new["dev"]) > _BOUND).any() or (np.abs(new["mean"]) > _BOUND).any():
            raise ValueError(f"state: arrays 'dev' and 'mean' must hold values within {_BOUND:g}")
        if not float(new["rows"]):
            return
        if loading():  # the ratio a read takes is a number or nan, never infinite
            _, _, num, den = self._totals(new)
            with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
                ratio = np.where(den == 0, 0.0, num / np.where(den == 0, 1.0, den))
            if np.isinf(ratio).any():
                raise ValueError("state: the ratio of the arrays' deviance sums ('loss' over the "
                                 "deviance of y_true from 'mean') overflows float64")
        if (new["y_min"] > new["y_max"]).any():
            raise ValueError("state: array 'y_min' must not exceed 'y_max'")
        if self.power >= 1:  # y_true >= 0 (> 0 from power 2 on)
            bad = new["y_min"] <= 0 if self.power >= 2 else new["y_min"] < 0
            if bad.any():
                raise ValueError(f"state: array 'y_min' holds {float(new['y_min'][bad][0])!r}, "
                                 f"outside the domain of y_true for power {self.power}")
        # A weighted mean lies between the smallest and the largest y_true (up to the rounding
        # of its running updates, far below _MEAN_SLACK of their magnitude).
        slack = _MEAN_SLACK * np.maximum(np.abs(new["y_min"]), np.abs(new["y_max"]))
        outside = (new["mean"] < new["y_min"] - slack) | (new["mean"] > new["y_max"] + slack)
        if self.power >= 1:  # and in y_true's domain: >= 0 (> 0 from power 2 on)
            outside |= new["mean"] <= 0 if self.power >= 2 else new["mean"] < 0
        if outside.any():
            raise ValueError(f"state: array 'mean' holds {float(new['mean'][outside][0])!r}, outside "
                             "[y_min, y_max] (or the domain of y_true for this power)")

    def scale(self, factor: float) -> None:
        """Multiply every sample weight by ``factor`` (0 empties the state). O(k)."""
        f = float(factor)
        for name in ("weight", "loss", "loss_lo", "dev"):
            self._a[name] = np.asarray(self._a[name] * f, dtype=np.float64)
        self._a["loss"], self._a["loss_lo"] = _two_sum(self._a["loss"], self._a["loss_lo"])
        if f == 0.0 or float(self._a["weight"]) == 0.0:
            self.reset()
