"""Averaging over classes, the ``zero_division`` option and the warnings of undefined values.

Shared by every family that averages per-class values or gives a value to an empty
denominator: the confusion family, top-k accuracy, the ranking metrics, the calibration
metrics and the one-shot functions. Keeping them here means a family never imports another
family's module for a helper.

* :func:`average_classes` -- macro or support-weighted mean of per-class values, scikit-learn's
  rules for nan classes and all-zero supports.
* :func:`chance_adjusted` -- a mean recall rescaled so that chance is 0 (adjusted balanced
  accuracy), for the accumulator and the one-shot function alike.
* :func:`check_zero_division`, :func:`zero_value` and :class:`ZeroDivisionOption` -- the
  ``zero_division`` constructor option (``"warn"``, 0.0, 1.0 or nan), its value and its
  JSON-safe configuration.
* :func:`warn_undefined` (a value set by ``zero_division``), :func:`warn_undefined_nan` (a value
  that is nan) and :func:`undefined_without_weight` (nan for an empty or weightless state):
  one :class:`~streammetrics.UndefinedMetricWarning` attributed to the user's line.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .metric import UndefinedMetricWarning
from .params import Param, check_param
from .warn import warn

#: ``zero_division``: "warn", or the value of an undefined ratio (a number equal to 0, 1 or nan).
_ZERO_DIVISION = Param("choice", "must be 'warn', 0.0, 1.0 or nan", choices=("warn", 0.0, 1.0, math.nan))

#: The ``average`` choices of the confusion family (``None``: the per-class array).
AVERAGES = ("micro", "macro", "weighted", None)


def average_classes(values: np.ndarray, weights: np.ndarray | None, skip_nan: bool) -> float:
    """Macro (``weights=None``) or support-weighted mean of per-class values.

    With ``skip_nan`` nan classes are left out (all nan gives nan); all-zero weights fall back
    to the plain mean -- both as scikit-learn averages. An empty ``values`` gives nan.

    Parameters
    ----------
    values : numpy.ndarray
        One value per class, shape (C,).
    weights : numpy.ndarray or None
        One non-negative weight per class (the supports), or ``None`` for the plain mean.
    skip_nan : bool
        Leave nan classes out of the mean.

    Returns
    -------
    float
        The average. O(C).
    """
    if values.size == 0:
        return float("nan")
    if skip_nan:
        keep = ~np.isnan(values)
        if not keep.any():
            return float("nan")
        values = values[keep]
        weights = None if weights is None else weights[keep]
    if weights is None or not np.any(weights):
        return float(np.mean(values))
    return float(np.average(values, weights=weights))


def chance_adjusted(score: float, n_classes: int) -> float:
    """``score`` rescaled so that chance scores 0 and perfect 1: ``(score - 1/C) / (1 - 1/C)``.

    The adjusted balanced accuracy of scikit-learn's ``balanced_accuracy_score(adjusted=True)``,
    where ``score`` is the mean recall over the ``C`` classes present in ``y_true``, in its
    float64 operations and order. With ``C = 1`` chance is 1 and the division is by 0: the value
    is scikit-learn's, nan for a score of 1 and -inf below, with numpy's ``RuntimeWarning`` as
    scikit-learn raises it (:class:`~streammetrics.BalancedAccuracy` does not get here: it
    returns nan with an :class:`~streammetrics.UndefinedMetricWarning` before). O(1).

    Parameters
    ----------
    score : float
        The mean recall over the classes present, in [0, 1].
    n_classes : int
        ``C``, the number of classes present in ``y_true`` (at least 1).

    Returns
    -------
    float
        The adjusted score, at most 1.

    Examples
    --------
    >>> from streammetrics._core.averaging import chance_adjusted
    >>> chance_adjusted(0.75, 2)
    0.5
    >>> chance_adjusted(1 / 3, 3)
    0.0
    """
    chance = np.float64(1.0) / n_classes  # numpy's division: C = 0 (no weight) gives nan, not an error
    return float((np.float64(score) - chance) / (1.0 - chance))


def check_zero_division(zero_division: Any) -> str | float:
    """The ``zero_division`` option checked: ``"warn"``, or 0.0, 1.0 or nan as a float.

    Parameters
    ----------
    zero_division : Any
        The constructor argument.

    Returns
    -------
    str or float
        ``"warn"`` or the float value. ``ValueError`` naming ``zero_division`` otherwise. O(1).
    """
    return check_param(zero_division, "zero_division", _ZERO_DIVISION)  # type: ignore[no-any-return]


def zero_value(zero_division: str | float) -> float:
    """The value an undefined ratio takes under a checked ``zero_division`` (0.0 for "warn")."""
    return 0.0 if zero_division == "warn" else float(zero_division)


def warn_undefined(name: str, what: str, classes: Any = None) -> None:
    """Warn that ``name`` is undefined (``what`` says why) and set by ``zero_division``.

    Parameters
    ----------
    name : str
        The measure, as the message names it.
    what : str
        Why it is undefined, e.g. ``"no predicted samples"``.
    classes : array-like of int, optional
        The classes whose value is undefined (``None``: the value as a whole).
    """
    where = "" if classes is None else f" for classes {[int(c) for c in classes]}"
    warn(
        f"{name} is ill-defined and set to 0.0{where}: {what}. "
        "Use `zero_division` to choose the value and silence this warning.",
        UndefinedMetricWarning,
    )


def warn_undefined_nan(name: str, what: str, classes: Any = None) -> None:
    """Warn that ``name`` is undefined (``what`` says why) and returned as nan -- rather than
    set by ``zero_division`` (:func:`warn_undefined`). The ranking and calibration metrics and
    the Dask ranked engine all warn through it.

    Parameters
    ----------
    name : str
        The metric's name, as the message shows it.
    what : str
        Why it is undefined, e.g. ``"no positives"``.
    classes : array-like of int, optional
        The class indices it is undefined for (``None``: the value as a whole).

    Returns
    -------
    None
        One :class:`~streammetrics.UndefinedMetricWarning`, attributed to the user's line.
    """
    where = "" if classes is None else f" for classes {[int(c) for c in classes]}"
    warn(f"{name} is undefined{where} ({what}); returning nan", UndefinedMetricWarning)


def undefined_without_weight(name: str) -> float:
    """nan with one :class:`~streammetrics.UndefinedMetricWarning` naming ``name``: the state
    holds no samples, or their total weight is 0. O(1)."""
    warn(f"{name} is undefined (nan): no samples with positive weight", UndefinedMetricWarning)
    return math.nan


class ZeroDivisionOption:
    """Mixin for metrics with a ``zero_division`` option: nan is stored as "nan" in the config
    so that configurations compare equal and survive JSON.

    Put it before :class:`~streammetrics.Metric` in the bases (``class M(ZeroDivisionOption,
    Metric)``); it is not a metric itself, so it never enters the registry of loadable classes.
    """

    zero_division: str | float

    def _zero_division_config(self) -> str | float:
        zd = self.zero_division
        return zd if isinstance(zd, str) or not math.isnan(zd) else "nan"

    @classmethod
    def _from_config(cls, config: Any) -> Any:
        config = dict(config)
        if config.get("zero_division") == "nan":
            config["zero_division"] = float("nan")
        return super()._from_config(config)  # type: ignore[misc]
