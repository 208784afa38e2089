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
from typing import Any

import numpy as np
import numpy.typing as npt

__all__ = [
    "as_numpy",
    "check_weights",
    "check_binary_labels",
    "check_class_labels",
    "check_scores",
    "drop_ignored",
    "first_bad",
]

_UNSIGNED = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


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
    """View ``x`` as a numpy array without importing any framework.

    numpy arrays pass through untouched (no copy). Objects with ``__array__`` are converted with
    ``np.asarray``; if that fails (a CUDA tensor, bfloat16, a tensor that requires grad -- detached
    first) the DLPack protocol is asked for a host copy, then ``.cpu()`` / ``.get()``;
    half-precision types numpy lacks (bfloat16) are upcast with the tensor's own ``.float()``
    (exact). Object and string arrays are rejected.
    """
    if type(x) is np.ndarray:
        arr = x
    else:
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
            if copied is None:
                reason = f" ({failure})" if failure is not None else ""
                raise ValueError(f"{name}: cannot convert {type(x).__name__} to an array{reason}")
            arr = copied
    if arr.dtype.kind not in "biuf":
        if arr.dtype.kind == "O" and arr.size == 0:
            return np.zeros(arr.shape, dtype=np.float64)
        raise ValueError(
            f"{name}: expected numbers or booleans, got an array of dtype {arr.dtype}"
            + (f" (first value {arr.flat[0]!r})" if arr.size else "")
        )
    return arr


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
    rounded to half precision; non-float scores become float64. (bfloat16 arrives here as float32,
    see :func:`as_numpy`.) One reduction pass (``min`` propagates NaN), plus a locating pass only
    on failure.
    """
    if scores.dtype.kind == "f":
        if scores.size and np.isnan(scores.min()):
            idx = first_bad(np.isnan(scores))
            raise ValueError(f"{name}: scores must not be NaN; first NaN at index {idx}")
        return scores.astype(np.float64) if scores.dtype.itemsize < 4 else scores
    return scores.astype(np.float64)


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
    top = y.view(_UNSIGNED[y.dtype.itemsize]).max() if kind == "i" else y.max()
    if top > 1:
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
        top = y.view(_UNSIGNED[y.dtype.itemsize]).max() if y.dtype.kind == "i" else y.max()
        if top < num_classes:
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
    """Accept float labels that are whole numbers (0.0/1.0 from a float tensor)."""
    bad = ~np.isfinite(y) | (y != np.floor(y))
    if bad.any():
        idx = first_bad(bad)
        raise ValueError(
            f"{name}: labels must be integers; first invalid value {_value_at(y, idx)!r} at index {idx}"
        )
    return y.astype(np.int64)


def check_weights(sample_weight: Any, n: int) -> np.ndarray | None:
    """Validate ``sample_weight``: shape (n,), finite, >= 0. ``None`` stays ``None``."""
    if sample_weight is None:
        return None
    w = as_numpy(sample_weight, "sample_weight")
    if w.ndim == 0:
        raise ValueError(f"sample_weight: expected shape ({n},), got a scalar")
    if w.shape != (n,):
        raise ValueError(f"sample_weight: expected shape ({n},), got {w.shape}")
    w = w.astype(np.float64, copy=False)
    if n:
        bad = ~np.isfinite(w) | (w < 0)
        if bad.any():
            idx = first_bad(bad)
            raise ValueError(
                "sample_weight: weights must be finite and >= 0; "
                f"first invalid value {_value_at(w, idx)!r} at index {idx}"
            )
    return w


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
