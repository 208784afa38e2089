"""Input conversion and vectorised validation shared by every accumulator.

Everything here runs once per ``update`` call, at the boundary: a batch is converted to numpy
(lists, numpy arrays, and any object exposing ``__array__`` or ``__dlpack__`` -- torch, jax, cupy
tensors -- without importing those frameworks), then checked with a few vectorised passes. On
failure a :class:`ValueError` names the argument, the rule and the first offending index and
value. Nothing here mutates an accumulator, which is what makes updates atomic: callers validate
and prepare the whole increment first and only then apply it.
"""

from __future__ import annotations

import numbers
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

import numpy as np
import numpy.typing as npt

_UNSIGNED = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}
_INT64_MIN, _INT64_END = -(2**63), 2**63  # int64 holds [_INT64_MIN, _INT64_END)

#: Bounds of a nonzero sample weight. Every state sums weights and squared weights, and compute
#: takes products of up to four such sums (MCC's denominator; AUROC's positive x negative
#: weight; Wilson's (sum w)^2 / sum w^2). With w in [2**-128, 2**128] and fewer than 2**64
#: samples, a sum is at most 2**192 and its fourth power 2**768 (finite), and a nonzero squared
#: weight is at least 2**-256 (no underflow to 0). ``Decayed`` multiplies weights by up to
#: 2**300 between reads (its rebasing bound) inside :func:`derived_weights`: squared sums stay
#: below 2**(2*428+64) = 2**920. Every metric is invariant to a common factor on all weights,
#: so weights outside the bounds can be rescaled.
MAX_WEIGHT = 2.0**128
MIN_WEIGHT = 2.0**-128
#: The most a state built by updates can hold as a sum of weights (fewer than 2**64 of them);
#: for the checks of loaded states.
MAX_TOTAL_WEIGHT = MAX_WEIGHT * 2.0**64
_WEIGHT_RULE = ("weights must be finite, >= 0, and 0 or in [2**-128, 2**128] (bounds that keep every "
                "sum finite; rescaling all weights by one factor changes no metric)")
_weight_bounds: ContextVar[tuple[float, float]] = ContextVar(
    "streammetrics_weight_bounds", default=(MIN_WEIGHT, MAX_WEIGHT)
)


@contextmanager
def derived_weights() -> Iterator[None]:
    """Inside this block :func:`check_weights` only requires finite weights >= 0: for wrappers
    that pass a state weights derived from already validated ones (decay factors times sample
    weights), which may leave the bounds on purpose."""
    token = _weight_bounds.set((0.0, np.finfo(np.float64).max))
    try:
        yield
    finally:
        _weight_bounds.reset(token)


class InputTypeError(ValueError, TypeError):
    """An argument that is not an array-like, or holds values of a type that is not taken (None,
    a scalar, a string, a set, a generator, a 0-d array, dates, labels mixing strings and
    numbers).

    A :class:`ValueError` (the library's rule for bad input) that is also a :class:`TypeError`,
    as scikit-learn's own ``InvalidParameterError`` is: scikit-learn raises one or the other for
    these inputs, so an ``except`` written for either catches it.
    """


def _host_copy(x: Any) -> np.ndarray | None:
    """Try the framework-neutral ways of getting a host copy of a foreign tensor."""
    try:  # DLPack 1.0: ask the producer for a CPU copy (works for CUDA tensors too).
        return np.from_dlpack(x, device="cpu", copy=True)
    except Exception:  # noqa: BLE001 - any failure just means "try the next way"
        pass
    for method in ("cpu", "get"):  # torch/jax ``.cpu()``, cupy ``.get()``
        fn = getattr(x, method, None)
        if callable(fn):
            try:
                y = fn()
                if y is not x:
                    return np.asarray(y)
            except Exception:  # noqa: BLE001
                pass
    return None


def as_numpy(x: Any, name: str) -> np.ndarray:
    """View ``x`` as a numpy array of numbers or booleans in native byte order, without
    importing any framework.

    numpy arrays in native byte order pass through untouched (no copy); other byte orders are
    converted (the values are kept). Objects with ``__array__`` are converted with
    ``np.asarray``; if that fails (a CUDA tensor, bfloat16, a tensor that requires grad --
    detached first) the DLPack protocol is asked for a host copy, then ``.cpu()`` / ``.get()``;
    half-precision types numpy lacks (bfloat16) are upcast with the tensor's own ``.float()``
    (exact). A list holding Python ints beyond int64 (numpy makes it an object array) becomes
    float64 when every entry is a real number that float64 can hold. Rejected (``ValueError``
    naming ``name`` and the first offending value): strings, bytes, complex, dates, ``None`` and
    other objects; generators and iterators (materialise them with ``list``); masked arrays
    with a masked entry (the mask cannot be honoured consistently across ``y_true``, scores and
    weights: pass ``.compressed()`` of a shared mask, or ``.filled(...)``). O(n) only when a
    conversion is needed.
    """
    if type(x) is np.ndarray:
        arr = x
    else:
        if isinstance(x, np.ma.MaskedArray):
            mask = np.ma.getmaskarray(x)
            if mask.any():
                idx = first_bad(mask) if mask.ndim else 0
                raise ValueError(
                    f"{name}: masked arrays are not supported (masked entry at index {idx}); "
                    "pass the unmasked rows, e.g. .compressed() of a mask shared by all arguments"
                )
            x = x.data
        elif isinstance(x, Iterator):
            raise ValueError(
                f"{name}: expected an array, a list or a number, got an iterator "
                f"({type(x).__name__}); materialise it first, e.g. list(...)"
            )
        try:
            arr = np.asarray(x)
            failure: Exception | None = None
        except Exception as exc:  # noqa: BLE001 - e.g. a CUDA tensor or bfloat16
            arr, failure = np.empty(0), exc
        if failure is not None or (arr.dtype.kind == "O" and arr.ndim == 0):
            copied = None
            if hasattr(x, "__dlpack__") or hasattr(x, "__array__"):
                if callable(getattr(x, "detach", None)):  # a torch tensor that requires grad
                    x = x.detach()
                copied = _host_copy(x)
                if copied is None and callable(getattr(x, "float", None)):
                    copied = _host_copy(x.float())  # bfloat16 and other types numpy lacks
            if copied is not None:
                arr = copied
            elif failure is not None or not isinstance(x, numbers.Real):
                reason = f" ({failure})" if failure is not None else ""
                raise ValueError(f"{name}: cannot convert {type(x).__name__} to an array{reason}")
    if arr.dtype.kind not in "biuf":
        if arr.dtype.kind == "O":
            return _from_objects(arr, name)
        where = ""
        if arr.size:
            first = arr.flat[0].item() if hasattr(arr.flat[0], "item") else arr.flat[0]
            where = (f"; got {first!r}" if arr.ndim == 0
                     else f"; first value {first!r} at index {first_bad(np.ones(arr.shape, bool))}")
        raise ValueError(f"{name}: expected numbers or booleans, got an array of dtype {arr.dtype}{where}")
    if not arr.dtype.isnative:
        arr = arr.astype(arr.dtype.newbyteorder("="))
    return arr


def _from_objects(arr: np.ndarray, name: str) -> np.ndarray:
    """An object array (numpy's choice for lists holding ints beyond int64 or ``None``): float64
    (or int64, bool) when every entry is a real number float64 can hold, else ``ValueError``
    naming the first entry that is not. O(n) in Python (object arrays are slow anyway)."""
    if arr.size == 0:
        return np.zeros(arr.shape, dtype=np.float64)
    flat = arr.ravel()
    for i, v in enumerate(flat):
        bad = not isinstance(v, (numbers.Real, np.bool_)) or isinstance(v, np.ndarray)
        if not bad and isinstance(v, numbers.Integral) and not isinstance(v, (bool, np.bool_)):
            bad = abs(int(v)) >= 2**1024  # float64 cannot hold it
        if bad:
            idx = i if arr.ndim == 1 else tuple(int(j) for j in np.unravel_index(i, arr.shape))
            where = f"got {v!r}" if arr.ndim == 0 else f"first invalid value {v!r} at index {idx}"
            raise ValueError(f"{name}: expected numbers or booleans that float64 can hold; {where}")
    out = np.array(flat.tolist())  # ints within int64 and bools keep their kind
    if out.dtype.kind not in "biuf":  # an int beyond int64 among them
        out = np.array([float(v) for v in flat], dtype=np.float64)
    return out.reshape(arr.shape)


def as_column(arr: np.ndarray) -> np.ndarray:
    """An (n, 1) array as its (n,) column (a view), anything else unchanged: scikit-learn takes a
    column vector of labels or binary scores as the 1-D array (``column_or_1d``). O(1)."""
    return arr.reshape(arr.shape[0]) if arr.ndim == 2 and arr.shape[1] == 1 else arr


def with_hint(exc: ValueError, y_true: Any, y_pred: Any, takes_classes: bool) -> ValueError:
    """``exc`` (a refused batch) with what to do about it where the inputs show it: text labels
    without ``classes=`` / ``pos_label=``, or the arguments in torchmetrics' order (scores
    first). Unchanged otherwise. Called only on the error path: O(n) then, nothing before."""
    msg = str(exc)
    hint = ""
    if takes_classes and (msg.startswith(("y_true: expected numbers", "y_pred: expected numbers"))
                          and _is_text(y_true if msg.startswith("y_true") else y_pred)):
        hint = ("text labels need their classes: pass classes=[...] in class order (binary: "
                "pos_label=<the positive label>) to the metric")
    elif msg.startswith(("y_true: labels must be integers", "y_true: class labels must be",
                         "y_true: labels must be 0 or 1", "y_true: expected a 1-D array")) \
            and _swapped(y_true, y_pred):
        hint = ("y_true holds scores and y_pred labels: the arguments look swapped; streammetrics "
                "takes update(y_true, y_pred) (scikit-learn's order), torchmetrics' update(preds, "
                "target) the other way round")
    return ValueError(f"{msg} ({hint})") if hint else exc


def _is_text(x: Any) -> bool:
    try:
        arr = np.asarray(x)
    except Exception:  # noqa: BLE001 - only a hint
        return False
    if arr.dtype.kind in "USa":
        return True
    return arr.dtype.kind == "O" and arr.size > 0 and isinstance(arr.flat[0], (str, bytes))


def _swapped(y_true: Any, y_pred: Any) -> bool:
    """True when ``y_true`` holds non-integral numbers and ``y_pred`` whole ones (labels)."""
    try:
        y, p = np.asarray(y_true), np.asarray(y_pred)
        if y.dtype.kind != "f" or p.dtype.kind not in "biuf" or y.size == 0 or p.size == 0:
            return False
        return bool(np.any(y != np.round(y)) and np.all(p == np.round(p)))
    except Exception:  # noqa: BLE001 - only a hint
        return False


def first_bad(mask: npt.NDArray[np.bool_]) -> tuple[int, ...] | int:
    """Index of the first True in ``mask`` (an int for 1-D, a tuple otherwise)."""
    flat = int(np.argmax(mask.ravel()))
    if mask.ndim == 1:
        return flat
    return tuple(int(i) for i in np.unravel_index(flat, mask.shape))


def _value_at(arr: np.ndarray, idx: tuple[int, ...] | int) -> Any:
    v = arr[idx]
    return v.item() if hasattr(v, "item") else v


def check_scores(scores: np.ndarray, name: str) -> np.ndarray:
    """Reject NaN scores (±inf are valid); returns the array as float.

    float32/float64 pass through; float16 (numpy's, torch's ``half``) is upcast to float64
    (exact), so ``score >= threshold`` is decided on the true value rather than on the threshold
    rounded to half precision; non-float scores become float64, as do extended-precision floats
    (a finite value beyond the float64 range is rejected rather than turned into ±inf). (bfloat16
    arrives here as float32, see :func:`as_numpy`.) One reduction pass (``min`` propagates NaN),
    plus a locating pass only on failure.
    """
    if scores.dtype.kind == "f":
        if scores.size and np.isnan(scores.min()):
            idx = first_bad(np.isnan(scores))
            raise ValueError(f"{name}: scores must not be NaN; first NaN at index {idx}")
        if scores.dtype.itemsize > 8:  # long double
            out = scores.astype(np.float64)
            bad = np.isinf(out) & np.isfinite(scores)
            if bad.any():
                idx = first_bad(bad)
                raise ValueError(
                    f"{name}: scores must fit in float64; first invalid value "
                    f"{_value_at(scores, idx)!r} at index {idx}"
                )
            return out
        return scores.astype(np.float64) if scores.dtype.itemsize < 4 else scores
    return scores.astype(np.float64)


def _unsigned_max(y: np.ndarray) -> Any:
    """Largest value of an integer array read as unsigned (a negative value wraps to a huge
    one, so one ``max`` catches both sides). Any byte order."""
    if not y.dtype.isnative:
        y = y.astype(y.dtype.newbyteorder("="))
    return y.view(_UNSIGNED[y.dtype.itemsize]).max() if y.dtype.kind == "i" else y.max()


def check_binary_labels(y: np.ndarray, name: str, ignore_index: int | None = None) -> np.ndarray:
    """Check that ``y`` holds only 0/1 (bool, integer, or integral floats), and ``ignore_index``.

    Returns an integer or boolean array with the same shape. Cost: one reduction over an unsigned
    view (negative values wrap to huge ones, so one ``max`` catches both sides).
    """
    kind = y.dtype.kind
    if kind == "b" or y.size == 0:
        return y
    if kind == "f":
        y = _integral_floats(y, name)
    if ignore_index is not None:
        bad = ~((y == 0) | (y == 1) | (y == ignore_index))
        if bad.any():
            idx = first_bad(bad)
            raise ValueError(
                f"{name}: labels must be 0 or 1 (or ignore_index={ignore_index}); "
                f"first invalid value {_value_at(y, idx)!r} at index {idx}"
            )
        return y
    if _unsigned_max(y) > 1:
        bad = (y != 0) & (y != 1)
        idx = first_bad(bad)
        raise ValueError(
            f"{name}: labels must be 0 or 1; first invalid value {_value_at(y, idx)!r} at index {idx}"
        )
    return y


def check_class_labels(
    y: np.ndarray, name: str, num_classes: int, ignore_index: int | None = None
) -> np.ndarray:
    """Check that ``y`` holds integers in [0, num_classes) (or ``ignore_index``)."""
    kind = y.dtype.kind
    if y.size == 0:
        return y.astype(np.int64)
    if kind == "b":
        return y.view(np.uint8)
    if kind == "f":
        y = _integral_floats(y, name)
    if ignore_index is not None:
        bad = ((y < 0) | (y >= num_classes)) & (y != ignore_index)
    else:
        if _unsigned_max(y) < num_classes:
            return y
        bad = (y < 0) | (y >= num_classes)
    if bad.any():
        idx = first_bad(bad)
        extra = f" (or ignore_index={ignore_index})" if ignore_index is not None else ""
        raise ValueError(
            f"{name}: class labels must be integers in [0, {num_classes}){extra}; "
            f"first invalid value {_value_at(y, idx)!r} at index {idx}"
        )
    return y


def _integral_floats(y: np.ndarray, name: str) -> np.ndarray:
    """Accept float labels that are whole numbers in the int64 range (0.0/1.0 from a float
    tensor); returns int64."""
    bad = ~np.isfinite(y) | (y != np.floor(y)) | (y < _INT64_MIN) | (y >= _INT64_END)
    if bad.any():
        idx = first_bad(bad)
        raise ValueError(
            f"{name}: labels must be integers in the int64 range; first invalid value "
            f"{_value_at(y, idx)!r} at index {idx}"
        )
    return y.astype(np.int64)


def check_weights(sample_weight: Any, n: int) -> np.ndarray | None:
    """Validate ``sample_weight``: shape (n,) (a scalar when n == 1), each weight 0 or in
    [:data:`MIN_WEIGHT`, :data:`MAX_WEIGHT`] (see there: the bounds keep every sum, square and
    product a state computes finite and nonzero). ``None`` stays ``None``. Returns float64.
    Two reductions, plus a locating pass only on failure."""
    if sample_weight is None:
        return None
    w = as_numpy(sample_weight, "sample_weight")
    if w.ndim == 0:
        if n != 1:
            raise ValueError(f"sample_weight: expected shape ({n},), got a scalar")
        w = w.reshape(1)
    if w.shape != (n,):
        raise ValueError(f"sample_weight: expected shape ({n},), got {w.shape}")
    return weight_bounds(w.astype(np.float64, copy=False))


def weight_bounds(w: np.ndarray) -> np.ndarray:
    """``w`` (float64 weights, shape (n,)) if each is 0 or in [:data:`MIN_WEIGHT`,
    :data:`MAX_WEIGHT`] (only finite and >= 0 inside :func:`derived_weights`), else the
    ``ValueError`` of :func:`check_weights` naming the first offending weight. The bounds part
    of :func:`check_weights`, for callers whose own checks already made ``w`` a float64 array of
    the right shape. Two reductions, plus a locating pass only on failure."""
    if w.shape[0]:
        lo, hi = _weight_bounds.get()
        bottom, top = w.min(), w.max()
        if not (top <= hi and bottom >= 0.0) or (
            bottom < lo and bool(((w > 0.0) & (w < lo)).any())
        ):
            bad = ~((w == 0.0) | ((w >= lo) & (w <= hi)))
            idx = first_bad(bad)
            rule = _WEIGHT_RULE if lo > 0.0 else "weights must be finite and >= 0"
            raise ValueError(
                f"sample_weight: {rule}; first invalid value {_value_at(w, idx)!r} at index {idx}"
            )
    return w


def kept_predictions(s: np.ndarray, name: str) -> np.ndarray:
    """Predictions in a dtype a buffer keeps: scores (NaN rejected) as float16/32/64, hard
    predictions as bool or int64 (an unsigned value beyond int64 is a ``ValueError``, never
    wrapped to a negative one). O(n)."""
    if s.dtype.kind == "f":
        s = check_scores(s, name)
    if s.dtype in (np.float64, np.float32, np.float16, np.int64, np.bool_):
        return s
    if s.dtype.kind == "u" and s.size and s.max() >= _INT64_END:
        idx = first_bad(s >= _INT64_END)
        raise ValueError(f"{name}: integer predictions must fit in int64; first invalid value "
                         f"{_value_at(s, idx)!r} at index {idx}")
    return s.astype(np.float64 if s.dtype.kind == "f" else np.int64)


def one_row(x: Any, name: str) -> np.ndarray:
    """One sample's value as an array of one row (for the array validators)."""
    arr = as_numpy(x, name)
    return arr.reshape(1) if arr.ndim == 0 else arr


def one_value(x: Any, name: str) -> Any:
    """One sample's value as the kind a batch would make of it: Python bools, floats and ints
    within int64 and numpy real scalars unchanged; anything else through :func:`as_numpy` (a
    Python int beyond int64 becomes a float64 scalar, as in a list; strings, ``None``, complex
    numbers are a ``ValueError``). Lets the per-sample paths tell scores from labels as a
    batch does. O(1)."""
    t = type(x)
    if t is float or t is bool or (t is int and _INT64_MIN <= x < _INT64_END):
        return x
    if isinstance(x, (np.floating, np.integer, np.bool_)) and x.dtype.isnative:
        return x
    arr = one_row(x, name)
    if arr.shape != (1,):
        raise ValueError(f"{name}: expected one value, got shape {arr.shape}")
    return arr[0]


def one_weight(sample_weight: Any) -> float:
    """One sample's weight as a float, by the rules and with the messages of
    :func:`check_weights` (which a value off the fast path goes through). O(1)."""
    t = type(sample_weight)
    if t is float or t is int:
        lo, hi = _weight_bounds.get()
        if sample_weight == 0 or lo <= sample_weight <= hi:
            return float(sample_weight)
    w = check_weights(one_row(sample_weight, "sample_weight"), 1)
    assert w is not None
    return float(w[0])


def one_label(y: Any, name: str, num_classes: int | None, ignore_index: int | None = None) -> int | None:
    """One sample's label as an int (``None`` if it is ``ignore_index``), by the rules and with
    the messages of :func:`check_binary_labels` (``num_classes=None``) or
    :func:`check_class_labels`, which a value off the fast path goes through. O(1)."""
    t = type(y)
    if (t is int or t is bool) and y != ignore_index and 0 <= y < (num_classes or 2):
        return int(y)
    arr = one_row(y, name)
    if arr.shape != (1,):
        raise ValueError(f"{name}: expected one label, got shape {arr.shape}")
    arr = (check_binary_labels(arr, name, ignore_index) if num_classes is None
           else check_class_labels(arr, name, num_classes, ignore_index))
    v = int(arr[0])
    return None if v == ignore_index else v


def one_score(p: Any, name: str) -> float:
    """One sample's score as a float, by the rules and with the messages of
    :func:`check_scores`, which a value off the fast path goes through. O(1)."""
    t = type(p)
    if (t is float and p == p) or (t is int and _INT64_MIN <= p < _INT64_END):
        return float(p)
    arr = one_row(p, name)
    if arr.shape != (1,):
        raise ValueError(f"{name}: expected one score, got shape {arr.shape}")
    return float(check_scores(arr, name)[0])


def check_multilabel_batch(
    y: np.ndarray, p: np.ndarray, sample_weight: Any, num_labels: int, pred_name: str
) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """Shapes of a multilabel batch: (n, L) labels and (n, L) predictions or scores; two 1-D rows
    are one sample. Returns (y, p, validated weights)."""
    if y.ndim == 1 and p.ndim == 1:  # one sample as a row
        y, p = y.reshape(1, -1), p.reshape(1, -1)
        if sample_weight is not None and is_scalar(sample_weight):
            sample_weight = [sample_weight]
    if y.ndim != 2 or y.shape[1] != num_labels:
        raise ValueError(f"y_true: expected shape (n, {num_labels}), got {y.shape}")
    if p.shape != y.shape:
        raise ValueError(f"{pred_name}: expected shape {y.shape} like y_true, got {p.shape}")
    return y, p, check_weights(sample_weight, y.shape[0])


def is_scalar(x: Any) -> bool:
    """True for Python/numpy scalars (the per-sample path)."""
    t = type(x)
    if t is int or t is float:  # exact-type shortcuts: the ABC check below costs ~0.3 µs
        return True
    if t is np.ndarray:
        return False
    return isinstance(x, (numbers.Number, np.bool_)) and not isinstance(x, np.ndarray)


class ScoreBatch:
    """One batch of (label, score, weight) rows, checked and in canonical form: what
    :meth:`ScoreBatches.check` makes of ``update``'s arguments, and what the score states split.

    Attributes
    ----------
    y : numpy.ndarray
        The labels, checked: shape (n,) (binary: bool or 0/1 integers; multiclass: class
        indices) or (n, L) (multilabel 0/1); ``ignore_index`` may occur.
    s : numpy.ndarray
        The scores, NaN-free, float32 or float64: shape (n,) (binary) or (n, C) / (n, L).
    w : numpy.ndarray or None
        float64 weights of shape (n,), each 0 or within the bounds of
        :func:`check_weights`; None when none was given.
    y_in, s_in : numpy.ndarray
        The arguments as given, converted to numpy but not reshaped: the rows a message about
        the scores' range points into (``scores="probability"``).
    """

    __slots__ = ("y", "s", "w", "y_in", "s_in")

    def __init__(self, y: np.ndarray, s: np.ndarray, w: np.ndarray | None, y_in: np.ndarray,
                 s_in: np.ndarray) -> None:
        self.y, self.s, self.w, self.y_in, self.s_in = y, s, w, y_in, s_in


def checked_batch(y: np.ndarray, s: np.ndarray, w: np.ndarray | None) -> ScoreBatch:
    """A :class:`ScoreBatch` of arrays whose caller has already checked the labels, the scores
    and the shapes (:mod:`streammetrics.functional`: ``y`` 0/1 or bool, class indices in range
    or a 0/1 matrix; ``s`` finite floats, row-aligned with ``y``; ``w`` finite float64 of shape
    (n,) or None). Only what those checks do not cover is done here, so no array is converted
    or checked twice: the weights' bounds (:func:`weight_bounds`, the messages of
    ``update``) and half-precision scores upcast to float64 (as ``update`` does).
    Hand the result to ``Metric._update_checked``.
    O(n) for the weights (two reductions), O(1) otherwise (O(n) for float16 scores).
    """
    if s.dtype.itemsize < 4 or s.dtype.kind != "f":
        s = s.astype(np.float64)
    return ScoreBatch(y, s, None if w is None else weight_bounds(w), y, s)


class LabelBatch:
    """One batch of (label, predicted label, weight) rows that its maker has already checked: what
    :mod:`streammetrics.functional` hands the confusion-count states (:func:`checked_labels`).

    Attributes
    ----------
    y, p : numpy.ndarray or scipy.sparse matrix
        The true and the predicted labels: bool or 0/1 integers (binary, shape (n,); multilabel,
        shape (n, L)) or class indices in range (multiclass, shape (n,)).
    w : numpy.ndarray or None
        float64 weights of shape (n,), each 0 or within the bounds of :func:`check_weights`.
    """

    __slots__ = ("y", "p", "w")

    def __init__(self, y: Any, p: Any, w: np.ndarray | None) -> None:
        self.y, self.p, self.w = y, p, w


def checked_labels(y: Any, p: Any, w: np.ndarray | None) -> LabelBatch:
    """A :class:`LabelBatch` of arrays whose caller has already checked the labels and the shapes
    (:mod:`streammetrics.functional`: scikit-learn's target checks, then labels mapped to class
    indices or 0/1 columns) and made ``w`` finite weights of shape (n,) or None. Only the
    weights' bounds are checked here (:func:`weight_bounds`, the messages of ``update``), so
    no array is converted or checked twice. Hand it to ``Metric._update_checked``. O(n) for the
    weights (two reductions), O(1) otherwise.
    """
    return LabelBatch(y, p, None if w is None else weight_bounds(np.asarray(w, dtype=np.float64)))


def score_batch(y_true: Any, y_score: Any, sample_weight: Any, task: str, n_columns: int,
                ignore_index: int | None) -> ScoreBatch:
    """A batch of (label, score, weight) rows for a score state, checked once: every input rule
    of the ranking metrics, in this order -- both arguments converted (:func:`as_numpy`), one
    sample's 0-d label made a row, the shapes (labels 1-D, or (n, L) for ``task="multilabel"``;
    scores row-aligned with them: (n,) binary, (n, ``n_columns``) otherwise), the weights
    (:func:`check_weights`), the labels (:func:`check_binary_labels` or
    :func:`check_class_labels`), the scores (:func:`check_scores`). A ``ValueError`` names the
    argument, the rule and the first offending value. Never mutates. O(n) (O(n·C) for score
    matrices)."""
    y_in = as_numpy(y_true, "y_true")
    s_in = as_numpy(y_score, "y_score")
    if task == "multilabel":
        y, s, w = check_multilabel_batch(y_in, s_in, sample_weight, n_columns, "y_score")
        return ScoreBatch(check_binary_labels(y, "y_true", ignore_index),
                          check_scores(s, "y_score"), w, y_in, s_in)
    y, s = y_in, s_in
    if y.ndim == 0:  # one sample: a label with a score (binary) or a row of scores
        y = y.reshape(1)
        s = s.reshape(1, -1) if task == "multiclass" else s.reshape(1)
        if sample_weight is not None and is_scalar(sample_weight):
            sample_weight = [sample_weight]
    y = as_column(y)
    if y.ndim != 1:
        raise ValueError(f"y_true: expected a 1-D array of labels, got shape {y.shape}")
    n = y.shape[0]
    if task == "binary":
        s = as_column(s)
        if s.shape != (n,):
            raise ValueError(f"y_score: expected shape ({n},) like y_true, got {s.shape}")
    elif s.shape != (n, n_columns):
        raise ValueError(f"y_score: expected scores of shape ({n}, {n_columns}), got {s.shape}")
    w = check_weights(sample_weight, n)
    if task == "binary":
        y = check_binary_labels(y, "y_true", ignore_index)
    else:
        y = check_class_labels(y, "y_true", n_columns, ignore_index)
    return ScoreBatch(y, check_scores(s, "y_score"), w, y_in, s_in)


def drop_ignored(
    y: np.ndarray, s: np.ndarray, w: np.ndarray | None, ignore_index: int | None
) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """The rows of labels ``y``, predictions/scores ``s`` and weights ``w`` (or None) whose label
    is not ``ignore_index``; the inputs themselves when ``ignore_index`` is None or no row has
    it (no copy). O(n)."""
    if ignore_index is None:
        return y, s, w
    keep = y != ignore_index
    if keep.all():
        return y, s, w
    return y[keep], s[keep], None if w is None else w[keep]


def check_offsets(arr: Any, name: str, n_groups: int, total: int, of: str) -> np.ndarray:
    """Validate a loaded offsets array (untrusted): ``n_groups + 1`` integers rising from 0 to
    ``total`` (the length of the array ``of`` that they cut into groups). Returns int64. O(n)."""
    offsets = np.asarray(arr)
    if offsets.shape != (n_groups + 1,) or offsets.dtype.kind not in "iu":
        raise ValueError(
            f"state: array {name!r} must be {n_groups + 1} integers, got {offsets.dtype} {offsets.shape}"
        )
    offsets = offsets.astype(np.int64)
    if offsets[0] != 0 or offsets[-1] != total or (np.diff(offsets) < 0).any():
        raise ValueError(f"state: array {name!r} must rise from 0 to len({of})")
    return offsets
