"""scikit-learn's target-type rules and label mapping for the one-shot functions.

The functions of :mod:`streammetrics.functional` take labels as users have them (strings,
non-contiguous integers, booleans, dense or sparse indicator matrices) and hand the accumulators
codes ``0..C-1``. This module holds that boundary, following scikit-learn's rules (its
``type_of_target``, ``_check_targets`` and ``unique_labels``) without importing scikit-learn:

* :func:`type_of_target` -- ``"binary"``, ``"multiclass"``, ``"multilabel-indicator"``,
  ``"continuous"``, ``"...-multioutput"`` or ``"unknown"``;
* :func:`check_targets` -- both arguments of a classification metric: one common type (a mix of
  types, continuous or multioutput targets, different lengths, empty input or string mixed with
  number labels are a ``ValueError``), the sorted union of their labels;
* :func:`encode` -- labels to codes in the order of given classes: the one kernel the
  accumulators' ``classes=`` use too (:func:`streammetrics._core.labels.encode`; O(n) for small integer
  ranges, else O(n log C));
* :func:`relay_undefined` -- folds the accumulators' :class:`UndefinedMetricWarning` s of one
  call into one warning worded for the function.
"""

from __future__ import annotations

import contextlib
import numbers
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

from streammetrics._core.labels import is_sparse, small_range, unique
from streammetrics._core.metric import UndefinedMetricWarning
from streammetrics._core.sparse_labels import indicator_rows
from streammetrics._core.validation import InputTypeError, as_numpy
from streammetrics._core.warn import sklearn_compatible


def _short(y: Any) -> str:
    text = repr(y)
    return text if len(text) <= 80 else text[:77] + "..."


def _not_array_like(y: Any, name: str) -> InputTypeError:
    return InputTypeError(f"{name}: expected an array-like (array or non-string sequence), got {_short(y)}")


def as_labels(y: Any, name: str) -> np.ndarray:
    """``y`` as a numpy array that may hold strings (sparse matrices are densified).

    Refused (naming ``name`` and the value): None, scalars, strings and bytes, sets, dicts,
    iterators and 0-d arrays (:class:`InputTypeError`); masked arrays with a masked entry (the
    mask cannot be honoured; scikit-learn ignores it in some functions); complex values
    (``ValueError``, scikit-learn's "Complex data not supported"); datetime64 and timedelta64
    values and structured arrays (:class:`InputTypeError`). Numeric framework tensors go through
    :func:`streammetrics._core.validation.as_numpy`. O(1) for a numpy array, else one conversion."""
    if is_sparse(y):
        return np.asarray(y.toarray())
    if isinstance(y, np.ma.MaskedArray):
        mask = np.ma.getmaskarray(y)
        if mask.any():
            idx = int(np.flatnonzero(mask.ravel())[0])
            raise ValueError(
                f"{name}: masked arrays are not supported (masked entry at flat index {idx}); "
                "pass the unmasked rows, e.g. .compressed() of a mask shared by all arguments"
            )
        y = np.ma.getdata(y)
    if isinstance(y, np.ndarray):
        arr = y
    elif y is None or isinstance(y, (str, bytes, numbers.Number, np.generic, set, frozenset, dict, Iterator)):
        raise _not_array_like(y, name)
    elif (hasattr(y, "__dlpack__") and not hasattr(y, "dtype")) or hasattr(y, "detach"):
        arr = as_numpy(y, name)
    elif hasattr(y, "dtype") and str(getattr(y, "dtype", "")) == "category":  # pandas categorical
        arr = np.asarray(y.astype(object))
    else:
        try:
            arr = np.asarray(y)
        except ValueError as exc:  # ragged nested sequences
            raise ValueError(f"{name}: cannot make an array of {_short(y)} ({exc})") from exc
        except TypeError as exc:
            raise InputTypeError(f"{name}: cannot make an array of {_short(y)} ({exc})") from exc
    if arr.ndim == 0:
        raise InputTypeError(
            f"{name}: expected an array-like with at least 1 dimension, got the 0-d array {_short(arr)}"
        )
    kind = arr.dtype.kind
    if kind == "c":
        first = arr.ravel()[0].item() if arr.size else None
        raise ValueError(f"Complex data not supported in {name} (first value {first!r})")
    if kind in "MmV":
        first = arr.ravel()[0] if arr.size else None
        raise InputTypeError(f"{name}: expected numbers, strings or booleans, got dtype {arr.dtype} "
                             f"(first value {_short(first)})")
    return arr


def as_scores(y: Any, name: str) -> np.ndarray:
    """``y`` as a numpy array of numbers or booleans: :func:`as_labels`' checks, then
    :func:`streammetrics._core.validation.as_numpy` (strings, bytes and objects other than real
    numbers are a ``ValueError`` naming the first). O(n) at most."""
    return as_numpy(as_labels(y, name), name)


def _is_integral_float(a: np.ndarray) -> bool:
    return a.dtype.kind == "f" and bool(np.all(a.astype(np.int64) == a))


def type_of_target(y: Any, input_name: str = "y") -> str:
    """scikit-learn's ``type_of_target`` for dense (or densified sparse) arrays.

    ``"multilabel-indicator"``: 2-D, at least two columns, at most two distinct values, integer
    or integral float; ``"continuous"``: float with a non-integral value (``-multioutput`` if 2-D
    with several columns); ``"multiclass"``: more than two distinct values (or a 2-D target with
    several columns, ``"multiclass-multioutput"``); ``"binary"``: at most two distinct values;
    ``"unknown"``: 3-D and more, an empty 2-D array or an object array of non-strings. O(n log n)
    (O(n) for integers spanning a small range).

    Parameters
    ----------
    y : array-like
        The target (labels, indicator matrix or values).
    input_name : str, default "y"
        How error messages name ``y``.

    Returns
    -------
    str
        One of the kinds above.

    Examples
    --------
    >>> from streammetrics.functional import type_of_target
    >>> type_of_target([0, 1, 1]), type_of_target(["a", "b", "c"]), type_of_target([[1, 0], [0, 1]])
    ('binary', 'multiclass', 'multilabel-indicator')
    """
    if isinstance(y, bytes) or (isinstance(y, np.ndarray) and y.ndim == 0):
        return "unknown"  # scikit-learn's answer for a bytes object or a 0-d array
    return _type_and_labels(as_labels(y, input_name), input_name)[0]


def _type_and_labels(a: np.ndarray, input_name: str) -> tuple[str, np.ndarray | None]:
    """:func:`type_of_target` and, where it computed them, the sorted distinct values."""
    if a.size and (a.dtype.kind == "S" or (a.dtype.kind == "O" and isinstance(a.flat[0], bytes))):
        raise InputTypeError(  # scikit-learn's TypeError (and a ValueError, the library's rule)
            "Support for labels represented as bytes is not supported. Convert the labels to a "
            "string or integer format."
        )
    if a.ndim == 2 and a.shape[1] > 1:
        values = unique(a) if a.dtype.kind != "O" else None
        if (
            values is not None
            and values.shape[0] < 3
            and (a.dtype.kind in "biu" or _is_integral_float(values))
        ):
            return "multilabel-indicator", None
    if a.ndim not in (1, 2):
        return "unknown", None
    if min(a.shape) == 0:
        return ("binary" if a.ndim == 1 else "unknown"), None
    if a.dtype.kind == "O" and not isinstance(a.flat[0], str):
        return "unknown", None
    suffix = "-multioutput" if a.ndim == 2 and a.shape[1] > 1 else ""
    if a.dtype.kind == "f":
        with np.errstate(invalid="ignore"):
            integral = a.astype(np.int64)
        if np.any(a != integral):
            if not np.all(np.isfinite(a)):
                what = "NaN" if np.isnan(a).any() else "infinity or a value too large"
                raise ValueError(f"Input {input_name} contains {what}")
            return "continuous" + suffix, None
    values = unique(a)
    if values.shape[0] > 2 or (a.ndim == 2 and a.shape[1] > 1):
        return "multiclass" + suffix, values
    return "binary", values


def finite_scores(s: np.ndarray, name: str = "y_score") -> np.ndarray:
    """Float scores, all finite: scikit-learn's functions reject NaN and infinite scores (the
    accumulators accept +-inf as scores; the functions follow scikit-learn)."""
    s = s if s.dtype.kind == "f" else s.astype(np.float64)
    if not np.isfinite(s).all():
        bad = int(np.flatnonzero(~np.isfinite(s.ravel()))[0])
        what = "NaN" if np.isnan(s).any() else "infinity or a value too large"
        raise ValueError(f"Input {name} contains {what} (first bad value at flat index {bad})")
    return s


def column_or_1d(y: np.ndarray, name: str) -> np.ndarray:
    """A 1-D view of ``y``: (n,) or a column vector (n, 1); anything else is a ``ValueError``."""
    if y.ndim == 1:
        return y
    if y.ndim == 2 and y.shape[1] == 1:
        return y.ravel()
    raise ValueError(f"{name}: expected a 1-D array, got an array of shape {y.shape}")


def check_consistent_length(*arrays: Any) -> None:
    """``ValueError`` unless every non-None argument has the same number of rows."""
    for a in arrays:
        if a is not None and (np.ndim(a) == 0 or isinstance(a, (str, bytes))):
            raise _not_array_like(a, "input")
    lengths = [a.shape[0] if hasattr(a, "shape") else len(a) for a in arrays if a is not None]
    if len(set(lengths)) > 1:
        raise ValueError(f"Found input variables with inconsistent numbers of samples: {lengths}")


def check_weight(sample_weight: Any, n: int, *, allow_all_zero: bool = False) -> np.ndarray | None:
    """``sample_weight`` as a float64 array of shape (n,), or None. As scikit-learn's
    ``_check_sample_weight``, weights that are all zero are refused unless ``allow_all_zero``
    (the functions whose scikit-learn namesake does not check them: their own arithmetic
    decides)."""
    if sample_weight is None:
        return None
    raw = as_labels(sample_weight, "sample_weight")
    if raw.dtype.kind not in "biuf":  # strings, bytes, objects (None, ints beyond int64, ...)
        first = raw.ravel()[0] if raw.size else None
        raise InputTypeError(
            f"sample_weight: expected numbers, got dtype {raw.dtype} (first value {_short(first)})"
        )
    w = np.asarray(raw, dtype=np.float64)
    if w.ndim != 1:
        raise ValueError(f"Sample weights must be 1D array or scalar, got shape {w.shape}")
    if w.shape[0] != n:
        raise ValueError(  # scikit-learn's wording (targets of n samples, then the weights)
            f"Found input variables with inconsistent numbers of samples: [{n}, {n}, {w.shape[0]}]"
        )
    if not np.isfinite(w).all():
        bad = int(np.flatnonzero(~np.isfinite(w))[0])
        what = "NaN" if np.isnan(w[bad]) else "infinity"
        raise ValueError(f"Input sample_weight contains {what} (first at index {bad}: {w[bad]})")
    if n and not allow_all_zero and not w.any():
        raise ValueError("Sample weights must contain at least one non-zero number.")  # its wording
    return w


def _label_kinds(*arrays: np.ndarray) -> None:
    """scikit-learn's "Mix of label input types (string and number)" check."""
    kinds = set()
    for a in arrays:
        if a.dtype.kind in "US":
            kinds.add(True)
        elif a.dtype.kind == "O":
            kinds.update(isinstance(v, str) for v in set(a.ravel().tolist()))
        elif a.size:
            kinds.add(False)
    if len(kinds) > 1:
        raise ValueError(
            "Mix of label input types (string and number): " + " and ".join(str(unique(a)) for a in arrays)
        )


@dataclass
class Targets:
    """Checked targets of a classification metric (see :func:`check_targets`)."""

    type: str
    y_true: np.ndarray
    y_pred: np.ndarray
    sample_weight: np.ndarray | None
    classes: np.ndarray  # sorted union of the labels (column indices for indicators)


def check_targets(y_true: Any, y_pred: Any, sample_weight: Any = None) -> Targets:
    """scikit-learn's ``_check_targets``: both targets of one task, their labels, the weights.

    binary + multiclass is multiclass; binary whose union has three labels or more is
    multiclass; any other mix, continuous, multioutput or unknown targets, different lengths,
    empty input and labels mixing strings and numbers are a ``ValueError``. Indicator matrices
    come back dense (int8). O(n log n) (the label union).
    """
    if is_sparse(y_true) or is_sparse(y_pred):
        return _sparse_targets(y_true, y_pred, sample_weight)
    yt = as_labels(y_true, "y_true")
    yp = as_labels(y_pred, "y_pred")
    sample_weight = None if sample_weight is None else as_labels(sample_weight, "sample_weight")
    check_consistent_length(yt, yp, sample_weight)
    type_true, labels_true = _type_and_labels(yt, "y_true")
    type_pred, labels_pred = _type_and_labels(yp, "y_pred")
    if yt.shape[0] < 1 or yp.shape[0] < 1:
        raise ValueError(
            "Found empty input array (e.g., `y_true` or `y_pred`) while a minimum of 1 sample is required."
        )
    types = {type_true, type_pred}
    if types == {"binary", "multiclass"}:
        types = {"multiclass"}
    if len(types) > 1:
        raise ValueError(f"Classification metrics can't handle a mix of {type_true} and {type_pred} targets")
    y_type = types.pop()
    if y_type not in ("binary", "multiclass", "multilabel-indicator"):
        raise ValueError(f"{y_type} is not supported")
    w = check_weight(sample_weight, yt.shape[0])
    if y_type == "multilabel-indicator":
        if yt.shape[1] != yp.shape[1]:
            raise ValueError("Multi-label binary indicator input with different numbers of labels")
        return Targets(
            y_type, (yt != 0).astype(np.int8), (yp != 0).astype(np.int8), w, np.arange(yt.shape[1])
        )
    yt, yp = column_or_1d(yt, "y_true"), column_or_1d(yp, "y_pred")
    _label_kinds(yt, yp)
    if labels_true is None or labels_pred is None:  # empty input
        classes = _union(yt, yp)
    elif labels_true.dtype.kind == "O" or labels_pred.dtype.kind == "O":
        classes = unique(np.concatenate([labels_true.astype(object), labels_pred.astype(object)]))
    else:
        classes = np.union1d(labels_true, labels_pred)
    if y_type == "binary" and classes.shape[0] > 2:
        y_type = "multiclass"
    return Targets(y_type, yt, yp, w, classes)


def _sparse_type(y: Any) -> str:
    """scikit-learn's ``type_of_target`` of a sparse matrix, from its stored values only."""
    if y.ndim != 2 or y.shape[1] < 2:
        return "unknown"
    data = y.tocsr().data
    if data.size == 0 or data.dtype == bool or bool(((data == 0) | (data == 1)).all()):
        return "multilabel-indicator"
    values = np.unique(data)
    integral = data.dtype.kind in "biu" or bool(np.all(values == np.round(values)))
    if integral and (values.size == 1 or (values.size == 2 and 0 in values)):
        return "multilabel-indicator"
    return "continuous-multioutput" if not integral else "multiclass-multioutput"


def _sparse_targets(y_true: Any, y_pred: Any, sample_weight: Any) -> Targets:
    """Indicator targets of which one or both are sparse: kept sparse (CSR booleans, no stored
    zeros; O(z) for z stored values), as scikit-learn's ``_check_targets`` keeps them."""
    args = {"y_true": y_true, "y_pred": y_pred}
    types = {name: _sparse_type(a) if is_sparse(a) else type_of_target(a, name) for name, a in args.items()}
    if len(set(types.values())) > 1:
        raise ValueError(
            f"Classification metrics can't handle a mix of {types['y_true']} and {types['y_pred']} targets"
        )
    if types["y_true"] != "multilabel-indicator":
        raise ValueError(f"{types['y_true']} is not supported")
    yt, yp = (indicator_rows(a, name, None, None) for name, a in args.items())
    sample_weight = None if sample_weight is None else as_labels(sample_weight, "sample_weight")
    check_consistent_length(yt, yp, sample_weight)
    if yt.shape[1] != yp.shape[1]:
        raise ValueError("Multi-label binary indicator input with different numbers of labels")
    w = check_weight(sample_weight, yt.shape[0])
    return Targets("multilabel-indicator", yt, yp, w, np.arange(yt.shape[1]))


def _union(*arrays: np.ndarray) -> np.ndarray:
    if all(a.dtype.kind in "biu" for a in arrays):
        small = small_range(*arrays)
        if small is not None:
            lo, present = small
            return (np.flatnonzero(present) + lo).astype(np.result_type(*arrays))
    if any(a.dtype.kind == "O" for a in arrays):
        return unique(np.concatenate([a.astype(object) for a in arrays]))
    return np.unique(np.concatenate([unique(a) for a in arrays]))


def contains(classes: np.ndarray, label: Any) -> bool:
    """Whether ``label`` is one of ``classes`` (scikit-learn's ``label in array`` test)."""
    try:
        return bool(np.any(classes == label))
    except (TypeError, ValueError):
        return False


@contextlib.contextmanager
def relay_undefined(message: str | None, category: type[Warning] = UndefinedMetricWarning) -> Iterator[None]:
    """Fold the :class:`UndefinedMetricWarning` s raised inside into one ``category`` warning
    with ``message`` (none if ``message`` is None); other warnings pass through unchanged."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        yield
    undefined = False
    for w in caught:
        if issubclass(w.category, UndefinedMetricWarning):
            undefined = True
        else:
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    if undefined and message is not None:
        warnings.warn(message, sklearn_compatible(category), stacklevel=4)


def target_type_and_labels(y: np.ndarray, input_name: str = "y") -> tuple[str, np.ndarray]:
    """``(type_of_target(y), unique(y))`` of an array from :func:`as_labels`, reusing the labels
    the type detection computed (one pass over ``y`` instead of two). O(n) for small integer
    ranges, else O(n log n)."""
    y_type, labels = _type_and_labels(y, input_name)
    if labels is None:
        try:
            labels = unique(y)
        except TypeError as exc:  # an object array mixing kinds: None, numbers, strings
            raise ValueError(f"{input_name}: labels of {y_type} format cannot be ordered ({exc})") from exc
    return y_type, labels
