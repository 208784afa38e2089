"""Constructor arguments: one check per kind of parameter, shared by every public class, so a
wrong argument is a ``ValueError`` that names it, states the rule and shows the value -- the same
whether the class is built directly or by ``load`` from a file's configuration.

A parameter is declared once as a :class:`Param` -- its kind (int, real number, number, flag,
choice, text), range, choices or pattern, whether ``None`` passes, and the rule as the message
words it -- and checked by :func:`check_param`::

    K = Param("int", "must be an int >= 1", low=1)
    k = check_param(k, "k", K)   # ValueError "k: must be an int >= 1, got 0"

:func:`nonempty_param` takes a non-empty sequence of such values, and :func:`check_accumulator`
the accumulator a wrapper or an integration is given.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from .docstrings import filled
from .metric import Metric

ParamKind = Literal["int", "real", "number", "flag", "choice", "text"]


@dataclass(frozen=True)
class Param:
    """How one constructor argument is checked (see :func:`check_param`).

    Parameters
    ----------
    kind : {"int", "real", "number", "flag", "choice", "text"}
        ``"int"``: a Python or numpy integer, not a bool, returned as ``int``. ``"real"``: a real
        number (int, float or numpy scalar of either; not a bool or string), returned as
        ``float``. ``"number"``: anything ``float()`` takes, returned as ``float``. ``"flag"``:
        ``True`` or ``False`` (a numpy bool too), returned as ``bool``. ``"choice"``: one of
        ``choices`` -- a string equal to a string choice, a bool (numpy too) equal to a bool
        choice, ``None`` for a ``None`` choice, anything but a string that ``float()`` takes equal
        to a float choice (NaN to a NaN choice) -- returned as that choice. ``"text"``: a ``str``
        matching ``pattern`` (whole) and not in ``excluded``.
    rule : str
        The rule as the error message words it: ``"<name>: <rule>, got <value>"``.
    low, high : float, optional
        Inclusive bounds of an int, real or number (``low_open=True``: ``low`` excluded).
    low_open : bool
        Exclude ``low`` itself (e.g. ``> 0``).
    high_open : bool
        Exclude ``high`` itself (e.g. ``< 1``).
    finite : bool
        A real or number must be finite (NaN is never accepted).
    finite_rule : str, optional
        The rule for a real or number of the right kind that is not finite (default: ``rule``).
    range_rule : str, optional
        The rule for a value of the right kind outside the bounds (default: ``rule``).
    choices : tuple
        The allowed values of a choice.
    optional : bool
        ``None`` passes (and is returned).
    pattern : str, optional
        The regular expression a text must match as a whole.
    excluded : tuple of str
        Texts refused even when they match (reserved names).

    Examples
    --------
    >>> from streammetrics._core.params import Param, check_param
    >>> K = Param("int", "must be an int >= 1", low=1)
    >>> check_param(3, "k", K)
    3
    >>> check_param(0, "k", K)
    Traceback (most recent call last):
    ...
    ValueError: k: must be an int >= 1, got 0
    """

    kind: ParamKind
    rule: str
    low: float | None = None
    high: float | None = None
    low_open: bool = False
    high_open: bool = False
    finite: bool = True
    finite_rule: str | None = None
    range_rule: str | None = None
    choices: tuple[Any, ...] = ()
    optional: bool = False
    pattern: str | None = None
    excluded: tuple[str, ...] = ()


#: The types of a real number (a bool excluded separately).
_REALS = (int, float, np.integer, np.floating)

#: ``ignore_index``: a label to leave out, or None.
IGNORE_INDEX = Param("int", "must be an int or None", optional=True)
#: A ``True``/``False`` option.
FLAG = Param("flag", "must be True or False")


def _choice(value: Any, choices: tuple[Any, ...]) -> tuple[bool, Any]:
    """(found, the matching choice): same kind (str, bool or None) and equal."""
    for c in choices:
        if c is None:
            if value is None:
                return True, c
        elif isinstance(c, bool):
            if isinstance(value, (bool, np.bool_)) and bool(value) == c:
                return True, c
        elif isinstance(c, float):
            if not isinstance(value, str) and _float_equal(value, c):
                return True, c
        elif isinstance(value, str) and isinstance(c, str) and value == c:
            return True, c
    return False, None


def _float_equal(value: Any, c: float) -> bool:
    """``float(value) == c`` (NaN equal to NaN); False where ``float()`` refuses ``value``."""
    try:
        x = float(value)
    except (TypeError, ValueError, OverflowError):
        return False
    return x == c or (math.isnan(x) and math.isnan(c))


def _in_range(x: Any, spec: Param) -> bool:
    """``x`` (an int of any size, or a float) within the bounds of ``spec``."""
    if spec.low is not None and not (x > spec.low if spec.low_open else x >= spec.low):
        return False
    return spec.high is None or (x < spec.high if spec.high_open else x <= spec.high)


@filled
def check_param(value: Any, name: str, spec: Param) -> Any:
    """``value`` checked against ``spec`` and returned in its plain Python type.

    Parameters
    ----------
    {params: value, name}
    spec : Param
        Its declaration.

    Returns
    -------
    Any
        ``int``, ``float``, ``bool``, the matching choice, or ``None`` for an optional ``None``.
        Otherwise ``ValueError`` reading ``"<name>: <rule>, got <value>"``. O(1)
        (O(len(choices)) for a choice).
    """
    if value is None and spec.optional:
        return None
    bad = f"{name}: {spec.rule}, got {value!r}"[:300]
    if spec.kind == "choice":
        found, choice = _choice(value, spec.choices)
        if not found:
            raise ValueError(bad)
        return choice
    if spec.kind == "text":
        if not isinstance(value, str) or value in spec.excluded or (
                spec.pattern is not None and re.fullmatch(spec.pattern, value) is None):
            raise ValueError(bad)
        return value
    if spec.kind == "flag":
        if not isinstance(value, (bool, np.bool_)):
            raise ValueError(bad)
        return bool(value)
    if spec.kind == "int":
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
            raise ValueError(bad)
        if not _in_range(value, spec):
            raise ValueError(f"{name}: {spec.range_rule or spec.rule}, got {value!r}"[:300])
        return int(value)
    if spec.kind == "real":
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, _REALS):
            raise ValueError(bad)
        try:
            x = float(value)
        except OverflowError:  # an int beyond float64
            if spec.finite:
                raise ValueError(f"{name}: {spec.finite_rule or spec.rule}, got an int beyond the "
                                 "float64 range") from None
            x = math.inf if value > 0 else -math.inf
        if math.isnan(x) or (spec.finite and math.isinf(x)):
            raise ValueError(f"{name}: {spec.finite_rule or spec.rule}, got {x!r}")
    else:  # "number": whatever float() takes
        try:
            x = float(value)
        except (TypeError, ValueError, OverflowError):
            raise ValueError(bad) from None
        if math.isnan(x) or (spec.finite and math.isinf(x)):
            raise ValueError(f"{name}: {spec.finite_rule or spec.rule}, got {value!r}"[:300])
    if not _in_range(x, spec):
        raise ValueError(f"{name}: {spec.range_rule or spec.rule}, got {value!r}"[:300])
    return x


def real_param(value: Any, name: str, rule: str = "a finite number", *, allow_inf: bool = False) -> float:
    """``value`` as a Python float: a real number (int, float or a numpy scalar of either; not a
    bool, string, complex, sequence or None) that is finite (or +-inf with ``allow_inf``; never
    NaN). Else ``ValueError`` reading ``"<name>: expected <rule>, got <value>"``. Range checks
    stay with the caller, which words them with the same ``rule``. O(1)."""
    return float(check_param(value, name, Param("real", f"expected {rule}", finite=not allow_inf)))


def float_array_param(value: Any, name: str, rule: str) -> np.ndarray:
    """``value`` as a float64 array of real numbers (no strings, bytes, complex, None or
    ragged nesting); ``ValueError`` ``"<name>: expected <rule>, got <value>"`` otherwise. Shape
    and value rules stay with the caller. O(size)."""
    bad = f"{name}: expected {rule}, got {value!r}"[:300]
    if isinstance(value, (str, bytes, bytearray)) or value is None:
        raise ValueError(bad)
    try:
        arr = np.asarray(value)
    except (TypeError, ValueError, OverflowError):
        raise ValueError(bad) from None
    numeric = arr.dtype.kind in "iuf" or (arr.dtype.kind == "O" and all(
        isinstance(x, (int, float, np.integer, np.floating)) and not isinstance(x, (bool, np.bool_))
        for x in arr.reshape(-1).tolist()))
    if not numeric:
        raise ValueError(bad)
    try:
        return arr.astype(np.float64)
    except (TypeError, ValueError, OverflowError):
        raise ValueError(bad) from None


def weight_vector_param(value: Any, name: str, k: int) -> np.ndarray:
    """``value`` as ``k`` finite non-negative float64 weights that sum to 1 (within 1e-9), e.g.
    one weight per class. ``ValueError`` naming ``name`` otherwise: ``"expected <k> class
    weights"`` (not numbers, or another shape), ``"must be finite and >= 0"`` (showing the
    weights) or ``"must sum to 1"`` (showing the sum). O(k)."""
    w = float_array_param(value, name, f"{k} class weights")
    if w.shape != (k,):
        raise ValueError(f"{name}: expected {k} class weights, got shape {w.shape}")
    if not (np.isfinite(w).all() and (w >= 0).all()):
        raise ValueError(f"{name}: must be finite and >= 0, got {w.tolist()}")
    if abs(w.sum() - 1.0) > 1e-9:
        raise ValueError(f"{name}: must sum to 1, got sum {w.sum()!r}")
    return w


@filled
def nonempty_param(value: Any, name: str, rule: str) -> list[Any]:
    """``value`` (a list, tuple or other iterable; not a string or bytes) as a non-empty list.

    The items are the caller's to check (each with :func:`check_param`, say).

    Parameters
    ----------
    {params: value, name}
    rule : str
        The rule as the message words it.

    Returns
    -------
    list
        The items of ``value``. Otherwise ``ValueError`` reading ``"<name>: <rule>, got <value>"``.
        O(len(value)).

    Examples
    --------
    >>> from streammetrics._core.params import nonempty_param
    >>> nonempty_param((0.5, 1.0), "recall", "expected at least one recall level")
    [0.5, 1.0]
    >>> nonempty_param([], "recall", "expected at least one recall level")
    Traceback (most recent call last):
    ...
    ValueError: recall: expected at least one recall level, got []
    """
    bad = f"{name}: {rule}, got {value!r}"[:300]
    if isinstance(value, (str, bytes, bytearray)):
        raise ValueError(bad)
    try:
        items = list(value)
    except TypeError:
        raise ValueError(bad) from None
    if not items:
        raise ValueError(bad)
    return items


def check_accumulator(value: Any, name: str = "metric", *, kind: type[Metric] = Metric,
                      refused: tuple[type[Metric], ...] = (), rule: str | None = None) -> Any:
    """``value`` if it is a streammetrics accumulator: an instance of ``kind`` and of none of
    ``refused`` (a wrapper that cannot wrap its own kind, a set that cannot hold a set).

    Parameters
    ----------
    value : Any
        The argument as given.
    name : str, default="metric"
        The argument's name, which starts the error message.
    kind : type, default=Metric
        The accumulator class required (``Sliced``, say).
    refused : tuple of type, default=()
        Accumulator classes refused.
    rule : str, optional
        The rule as the message words it, when the caller has more to say (a hint); default
        ``"expected a streammetrics accumulator"`` (``a <kind> accumulator`` for another ``kind``),
        followed by ``" (not a <refused> or <refused>)"`` when classes are refused.

    Returns
    -------
    Metric
        ``value``. Otherwise ``ValueError`` reading ``"<name>: <rule>, got <type name>"``. O(1).

    Examples
    --------
    >>> import streammetrics as sm
    >>> from streammetrics._core.params import check_accumulator
    >>> auroc = sm.AUROC()
    >>> check_accumulator(auroc) is auroc
    True
    >>> check_accumulator({"auroc": sm.AUROC()})
    Traceback (most recent call last):
    ...
    ValueError: metric: expected a streammetrics accumulator, got dict
    >>> check_accumulator(sm.MetricSet(auroc=auroc), "auroc", refused=(sm.MetricSet,))
    Traceback (most recent call last):
    ...
    ValueError: auroc: expected a streammetrics accumulator (not a MetricSet), got MetricSet
    """
    if not isinstance(value, kind) or isinstance(value, refused):
        if rule is None:
            rule = f"expected a {'streammetrics' if kind is Metric else kind.__name__} accumulator"
            if refused:
                rule += f" (not a {' or '.join(r.__name__ for r in refused)})"
        raise ValueError(f"{name}: {rule}, got {type(value).__name__}")
    return value
