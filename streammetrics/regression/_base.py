"""The regression family's base: :class:`RegressionMetric` and its one input-validation step.

Every regression accumulator takes ``update(y_true, y_pred, *, sample_weight=None)`` with
targets of shape (n,) or (n, k) (k outputs; one sample may be given as two scalars). Whatever
it keeps, it validates a batch with :func:`regression_batch` -- shapes, finite numbers, weights,
the number of outputs fixed by the first batch -- and reads the per-output values back through
:meth:`RegressionMetric._combine` (``multioutput``, scikit-learn's rules). A rejected batch is a
``ValueError`` naming the argument, the rule and the first offending index and value, raised in
``prepare`` (before the state changes).

Definitions: docs/definitions/regression.md.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from streammetrics._core.load_checks import MAX_SAMPLES, check_array_names, check_sums, loading
from streammetrics._core.metric import M, Metric, UndefinedMetricWarning, Value
from streammetrics._core.validation import MAX_WEIGHT, MIN_WEIGHT, as_numpy, check_weights, first_bad
from streammetrics._core.warn import warn

_F64 = np.dtype(np.float64)  # native byte order

#: The string values of ``multioutput``.
MULTIOUTPUT = ("raw_values", "uniform_average", "variance_weighted")


@dataclass(frozen=True)
class RegressionBatch:
    """A validated batch: ``y`` and ``p`` float64 of shape (n, k), ``w`` float64 (n,) or None.

    Attributes
    ----------
    y : numpy.ndarray
        The targets, (n, k) float64, finite.
    p : numpy.ndarray
        The predictions, (n, k) float64, finite.
    w : numpy.ndarray or None
        The sample weights (n,), each 0 or in the library's weight range; None: all 1.
    """

    y: np.ndarray
    p: np.ndarray
    w: np.ndarray | None
    #: the shape ``y_true`` was given in (error messages index it)
    shape: tuple[int, ...] = ()

    @property
    def n(self) -> int:
        """Number of rows."""
        return int(self.y.shape[0])

    @property
    def k(self) -> int:
        """Number of outputs."""
        return int(self.y.shape[1])


def _value_at(arr: np.ndarray, idx: Any) -> Any:
    v = arr[idx]
    return v.item() if hasattr(v, "item") else v


def _where(idx: Any) -> str:
    return f"[{idx}]" if isinstance(idx, int) else f"[{', '.join(str(int(i)) for i in idx)}]"


def _numbers(x: Any, name: str) -> np.ndarray:
    """:func:`as_numpy`, with scikit-learn's words for complex input."""
    try:
        return as_numpy(x, name)
    except ValueError as exc:
        if "complex" in str(exc):
            raise ValueError(f"{name}: Complex data not supported ({exc})") from None
        raise


def _as_targets(x: Any, name: str) -> np.ndarray:
    """``x`` as a float64 array of 1 or 2 dimensions (a scalar: one sample)."""
    arr = _numbers(x, name)
    if arr.dtype.kind == "c":
        raise ValueError(f"{name}: Complex data not supported, got dtype {arr.dtype}")
    if arr.dtype.kind not in "biuf":
        raise ValueError(f"{name}: expected real numbers, got dtype {arr.dtype}")
    if arr.ndim == 0:
        arr = arr.reshape(1)
    if arr.ndim > 2:
        raise ValueError(f"{name}: expected shape (n,) or (n, n_outputs), got {arr.shape}")
    if arr.dtype != np.float64:
        arr = arr.astype(np.float64)
    return arr


def check_finite(arr: np.ndarray, name: str, shape: tuple[int, ...] | None = None) -> None:
    """``ValueError`` naming ``name`` and the first NaN or infinite entry (scikit-learn's
    wording: ``Input y_true contains NaN``), indexed as ``arr`` reshaped to ``shape`` (the
    shape the user gave). One reduction pass, plus a locating pass on failure."""
    if shape is not None and shape != arr.shape and int(np.prod(shape)) == arr.size:
        arr = arr.reshape(shape)
    if arr.size and not math.isfinite(float(np.add.reduce(arr, axis=None))):
        bad = ~np.isfinite(arr)
        if bad.any():
            idx = first_bad(bad)
            v = _value_at(arr, idx)
            what = "NaN" if math.isnan(v) else "infinity or a value too large for dtype('float64')"
            raise ValueError(f"{name}: Input {name} contains {what}; first offending value "
                             f"{name}{_where(idx)} = {v!r}")


def _check_sample_weight(sample_weight: Any, n: int) -> np.ndarray | None:
    if sample_weight is None:
        return None
    w = _numbers(sample_weight, "sample_weight")
    if w.dtype.kind == "c":
        raise ValueError("sample_weight: Complex data not supported")
    if w.ndim > 1:
        raise ValueError(f"sample_weight: Sample weights must be 1D array or scalar, got shape {w.shape}")
    if w.ndim == 1 and w.shape[0] != n:
        raise ValueError(f"sample_weight: Found input variables with inconsistent numbers of "
                         f"samples: [{n}, {n}, {w.shape[0]}] (y_true and y_pred have {n} rows, "
                         f"sample_weight {w.shape[0]})")
    if w.ndim == 0 and n != 1:  # scikit-learn's scalar weight: the same for every row
        w = np.full(n, w.item() if w.dtype.kind in "biuf" else w, dtype=np.float64)
    if w.dtype.kind in "f":
        check_finite(w, "sample_weight")
    return check_weights(w, n)


def regression_batch(y_true: Any, y_pred: Any, sample_weight: Any = None, *,
                     outputs: int | None = None, finite: bool = True) -> RegressionBatch:
    """Validate one batch of a regression metric (the family's one input check).

    Parameters
    ----------
    y_true, y_pred : array-like or float
        Shape (n,) or (n, k), the same; two scalars are one sample. Real numbers, finite.
    sample_weight : array-like or float, optional
        One weight per row (a scalar: the same for every row), each 0 or in the library's
        weight range (docs/definitions/inputs.md).
    outputs : int, optional
        The number of outputs the state already holds: a batch with another k is refused, and
        when k > 1, two 1-D arrays of length k are one row (one sample of k outputs).
    finite : bool, default True
        Check that ``y_true`` and ``y_pred`` are finite (two reductions). A caller whose own
        sums propagate NaN and inf may pass False and call :func:`check_finite` (with
        ``batch.shape``) when a sum is not finite.

    Returns
    -------
    RegressionBatch
        ``y``, ``p`` as (n, k) float64 and ``w`` (n,) float64 or None.

    Raises
    ------
    ValueError
        Naming the argument, the rule and the first offending index and value.
    """
    if (type(y_true) is np.ndarray and type(y_pred) is np.ndarray and sample_weight is None
            and y_true.dtype == _F64 and y_pred.dtype == _F64 and y_true.ndim == 1
            and y_true.shape == y_pred.shape and (outputs is None or outputs == 1)):
        # The common batch, float64 1-D arrays without weights: the checks below pass it as it
        # is (no copy), in fewer steps.
        if finite:
            check_finite(y_true, "y_true")
            check_finite(y_pred, "y_pred")
        return RegressionBatch(y_true.reshape(-1, 1), y_pred.reshape(-1, 1), None, y_true.shape)
    y = _as_targets(y_true, "y_true")
    p = _as_targets(y_pred, "y_pred")
    if outputs is not None and outputs > 1 and y.ndim == 1 and y.shape == p.shape == (outputs,):
        y, p = y[None], p[None]  # one row of k outputs (k is known, so this is no 1-D batch)
        if sample_weight is not None and np.ndim(sample_weight) == 0:
            sample_weight = [sample_weight]
    if y.shape[0] != p.shape[0]:
        lengths = [y.shape[0], p.shape[0]]
        if sample_weight is not None and np.ndim(sample_weight) == 1:
            lengths.append(len(sample_weight))
        raise ValueError(f"y_pred: Found input variables with inconsistent numbers of samples: "
                         f"{lengths} (y_true has {y.shape[0]} rows, y_pred {p.shape[0]})")
    y2 = y.reshape(-1, 1) if y.ndim == 1 else y
    p2 = p.reshape(-1, 1) if p.ndim == 1 else p
    if y2.shape[1] != p2.shape[1]:
        raise ValueError(f"y_pred: y_true and y_pred have different number of output "
                         f"({y2.shape[1]}!={p2.shape[1]})")
    if outputs is not None and y2.shape[1] != outputs:
        raise ValueError(f"y_true: expected {outputs} output(s) (as the earlier batches), got "
                         f"shape {y.shape}")
    w = _check_sample_weight(sample_weight, y2.shape[0])
    if finite:
        check_finite(y, "y_true")  # the given shape: the index names the user's entry
        check_finite(p, "y_pred")
    return RegressionBatch(y2, p2, w, y.shape)


def positive_rows(y_true: Any, y_pred: Any, sample_weight: Any, outputs: int) -> tuple[
        RegressionBatch, np.ndarray, np.ndarray, np.ndarray | None] | None:
    """One validated batch (:func:`regression_batch`, ``outputs`` the number the state holds,
    0 for none yet) and its rows of positive weight ``y``, ``p``, ``w``: what the states that
    keep rows or moments take. ``None`` when no row has positive weight (nothing to add).
    The batch is returned too: ``y is batch.y`` tells the caller it holds the caller's arrays."""
    b = regression_batch(y_true, y_pred, sample_weight, outputs=outputs or None)
    y, p, w = b.y, b.p, b.w
    if w is not None and not (w > 0).all():
        keep = w > 0
        y, p, w = y[keep], p[keep], w[keep]
    if y.shape[0] == 0:
        return None
    return b, y, p, w


def float_arrays(arrays: Any, names: Sequence[str], *, bound: float | None = None) -> dict[str, np.ndarray]:
    """The arrays ``names`` of an untrusted state (no other one), as float64: each present,
    numeric and finite (and, with ``bound``, of absolute value <= ``bound``). A ``ValueError``
    names the first array that is not."""
    check_array_names(arrays, names)
    new: dict[str, np.ndarray] = {}
    for name in names:
        arr = np.asarray(arrays[name])
        if arr.dtype.kind not in "biuf":
            raise ValueError(f"state: array {name!r} has non-numeric dtype {arr.dtype}")
        arr = arr.astype(np.float64)
        if bound is not None and not (np.isfinite(arr).all() and (np.abs(arr) <= bound).all()):
            raise ValueError(f"state: array {name!r} holds values that are not finite numbers "
                             f"within {bound:g}")
        if not np.isfinite(arr).all():
            raise ValueError(f"state: array {name!r} holds non-finite values")
        new[name] = arr
    return new


def check_row_weights(w: np.ndarray) -> None:
    """A loaded state's array ``weights`` (one per row it keeps) holds sample weights."""
    bad = ~((w >= MIN_WEIGHT) & (w <= MAX_WEIGHT))
    if bad.any():
        i = int(np.argmax(bad))
        raise ValueError(f"state: array 'weights' must hold weights in [{MIN_WEIGHT:g}, "
                         f"{MAX_WEIGHT:g}], got {float(w[i])!r} at index {i}")


def check_same_outputs(k: int, other_k: int) -> None:
    """``merge``: a state holding ``k`` outputs (0: none yet) takes only a state of as many."""
    if k and other_k != k:
        raise ValueError(f"merge: the states hold {k} and {other_k} outputs")


def check_shapes(new: dict[str, np.ndarray], per_output: Sequence[str]) -> int:
    """Of loaded summed-state arrays: ``rows`` and ``weight`` are scalar counts, the arrays
    ``per_output`` 1-D and of one length k, which is returned."""
    for name in ("rows", "weight"):
        if new[name].shape != ():
            raise ValueError(f"state: array {name!r} has shape {new[name].shape}, expected ()")
        check_sums(new[name], name)
    k = new[per_output[0]].shape
    for name in per_output:
        if new[name].ndim != 1 or new[name].shape != k:
            raise ValueError(f"state: array {name!r} has shape {new[name].shape}, expected {k} "
                             f"(one entry per output, as {per_output[0]!r})")
    return int(k[0])


def check_rows(new: dict[str, np.ndarray], per_output: Sequence[str], outputs: int | None,
               held: str) -> tuple[float, float]:
    """:func:`check_shapes`, then the rules every summed state's ``rows`` and ``weight`` keep:
    the number of outputs ``outputs`` (when the metric fixes it; some when a row is held),
    ``rows`` a whole number <= 2**53, both zero or both positive (an empty state holding zero
    ``held``), and, loading, ``weight`` 0 or >= the smallest sample weight (the means it divides
    stay finite). Returns ``rows`` and ``weight``."""
    k = check_shapes(new, per_output)
    rows, weight = float(new["rows"]), float(new["weight"])
    if outputs is not None and k not in (0, outputs) or (rows > 0 and k == 0):
        raise ValueError(f"state: the arrays hold {k} output(s), expected {outputs or 'at least 1'}")
    if rows != int(rows) or rows > MAX_SAMPLES:
        raise ValueError(f"state: 'rows' must be a whole number <= 2**53, got {rows!r}")
    if (rows == 0) != (weight == 0):
        raise ValueError(f"state: 'rows' ({rows!r}) and 'weight' ({weight!r}) must both be "
                         "0 or both positive")
    if rows == 0 and any(new[n].any() for n in per_output):
        raise ValueError(f"state: an empty state (rows 0) must hold zero {held}")
    if loading() and 0 < weight < MIN_WEIGHT:
        raise ValueError(f"state: 'weight' {weight!r} is below the smallest sample weight "
                         f"({MIN_WEIGHT!r}): the means it divides would overflow")
    return rows, weight


def check_domain(arr: np.ndarray, bad: np.ndarray, name: str, rule: str) -> None:
    """``ValueError`` ``"{name}: {rule}; first offending value {name}[i] = v"`` if any entry
    of the boolean ``bad`` is set (``bad`` has ``arr``'s shape). A domain check (a log needs
    values > -1, a Tweedie power positive ones) after :func:`regression_batch`."""
    if bad.any():
        idx = first_bad(bad)
        if arr.ndim == 2 and arr.shape[1] == 1 and not isinstance(idx, int):
            idx = int(idx[0])  # one output: the row is the entry
        raise ValueError(f"{name}: {rule}; first offending value "
                         f"{name}{_where(idx)} = {_value_at(arr, idx)!r}")


def check_multioutput(multioutput: Any, allowed: Sequence[str] = MULTIOUTPUT) -> str | list[float]:
    """A ``multioutput`` argument as stored: one of ``allowed`` or a list of finite output
    weights (1-D, summing to nonzero). ``ValueError`` otherwise."""
    if isinstance(multioutput, str):
        if multioutput not in allowed:
            raise ValueError(f"multioutput: Allowed 'multioutput' string values are "
                             f"{tuple(allowed)}. You provided multioutput={multioutput!r}")
        return multioutput
    flat = isinstance(multioutput, np.ndarray) and multioutput.ndim == 1 or (
        isinstance(multioutput, (list, tuple))  # booleans are weights 0 and 1, as in scikit-learn
        and all(isinstance(v, (int, float, np.number, np.bool_)) for v in multioutput))
    if not flat:  # also keeps a hostile configuration (a list nested 10**4 deep) out of numpy
        raise ValueError(f"multioutput: expected one of {tuple(allowed)} or a 1-D array of output "
                         f"weights, got {str(multioutput)[:80]}")
    arr = as_numpy(multioutput, "multioutput")
    if arr.ndim != 1 or arr.shape[0] == 0 or arr.dtype.kind not in "biuf":
        raise ValueError(f"multioutput: expected a 1-D array of output weights, got {arr!r}")
    arr = arr.astype(np.float64)
    check_finite(arr, "multioutput")
    if float(arr.sum()) == 0.0:
        raise ValueError(f"multioutput: the output weights sum to 0: {arr.tolist()}")
    return [float(v) for v in arr]


def combine_outputs(values: np.ndarray, multioutput: str | list[float],
                    denominators: np.ndarray | None = None) -> float | np.ndarray:
    """Per-output ``values`` read out as ``multioutput`` says: ``raw_values`` the array,
    ``uniform_average`` their mean, ``variance_weighted`` their mean weighted by
    ``denominators`` (uniform when those are all 0), a weight list its weighted mean. O(k)."""
    if isinstance(multioutput, str):
        if multioutput == "raw_values":
            return np.asarray(values, dtype=np.float64).copy()
        if multioutput == "variance_weighted" and denominators is not None and np.any(denominators != 0):
            return float(np.average(values, weights=denominators))
        return float(np.mean(values))
    if len(multioutput) != values.shape[0]:
        raise ValueError(f"multioutput: There must be equally many custom weights "
                         f"({len(multioutput)}) as outputs ({values.shape[0]}).")
    return float(np.average(values, weights=np.asarray(multioutput)))


def undefined(name: str, why: str, multioutput: str | list[float], k: int) -> float | np.ndarray:
    """nan (per output for ``raw_values``) with an :class:`UndefinedMetricWarning` saying
    ``why``."""
    warn(f"{name}: {why}; returning nan", UndefinedMetricWarning)
    if multioutput == "raw_values":
        return np.full(max(k, 1), np.nan)
    return float("nan")


class RegressionMetric(Metric[Value]):
    """Base class of the regression accumulators: ``update(y_true, y_pred, *,
    sample_weight=None)`` over targets of shape (n,) or (n, k), and the ``multioutput``
    readout.

    Subclasses call :meth:`_init_outputs` in ``__init__`` (after building ``self._state``),
    return ``{"multioutput": self.multioutput, ...}`` from ``_config`` and read per-output
    values through :meth:`_combine`. The state's ``prepare(y_true, y_pred, sample_weight)``
    validates with :func:`regression_batch`.

    Parameters
    ----------
    multioutput : {"raw_values", "uniform_average", "variance_weighted"} or array-like
        How the per-output values of (n, k) targets are combined (scikit-learn's argument).
    """

    family = "regression"
    #: The ``multioutput`` strings this metric accepts (scikit-learn's per function).
    _multioutputs: tuple[str, ...] = ("raw_values", "uniform_average")

    def _init_outputs(self, multioutput: Any) -> None:
        self.multioutput = check_multioutput(multioutput, self._multioutputs)

    def update(self: M, y_true: ArrayLike, y_pred: ArrayLike, *, sample_weight: ArrayLike | None = None) -> M:
        """Fold in one batch (or one sample). Atomic: a rejected batch changes nothing.

        Parameters
        ----------
        y_true : array-like or float
            Targets, shape (n,) or (n, k) (one sample: a scalar); finite real numbers.
        y_pred : array-like or float
            Predictions, the shape of ``y_true``.
        sample_weight : array-like, optional
            One finite non-negative weight per row (default: 1 each).

        Returns
        -------
        RegressionMetric
            ``self``, so that calls chain.

        Raises
        ------
        ValueError
            A bad batch (naming the argument, the problem and the first offending value); the
            state is left exactly as it was.
        """
        delta = self._state.prepare(y_true, y_pred, sample_weight)
        with self._lock:
            self._state.apply(delta)
        return self

    def _combine(self, values: np.ndarray, denominators: np.ndarray | None = None) -> Any:
        return combine_outputs(values, self.multioutput, denominators)


# An abstract base, not a class a saved file may name.
if Metric._registry.get(RegressionMetric.__name__) is RegressionMetric:
    del Metric._registry[RegressionMetric.__name__]
