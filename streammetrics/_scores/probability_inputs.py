"""Probability inputs (the calibration family and the probability score state): validation and
conversion (one shared helper).

A batch is checked at the boundary with a few vectorised passes and turned into float64
probabilities plus the per-sample quantities every calibration state needs. Rules:

* binary: ``y_true`` 0/1 of shape (n,), ``y_pred`` = P(class 1) of shape (n,);
* multiclass (C classes): ``y_true`` integers in [0, C) of shape (n,), ``y_pred`` of shape
  (n, C), each row summing to 1 within scikit-learn's tolerance
  ``|sum - 1| <= 1e-8 + sqrt(eps)`` (``eps`` of the input's float type); as in scikit-learn's
  ``log_loss``, rows that do not are used as given, with its ``UserWarning``;
* probabilities must lie in [0, 1] and not be NaN;
* ``from_logits=True``: ``y_pred`` are logits (binary: any non-NaN number, the sigmoid is taken;
  multiclass: finite numbers, the softmax of each row is taken), converted in float64.

A scalar ``y_true`` with a scalar probability (a row of C for multiclass) is one sample; a binary
one given as plain Python numbers takes the per-sample path (:func:`one_binary`,
:func:`uniform_bin`: the same float64 operations as a batch of one, without arrays).
Nothing here mutates a state: callers build their increment from the result.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np

from streammetrics._core.validation import (
    as_column,
    as_numpy,
    check_binary_labels,
    check_class_labels,
    check_weights,
    drop_ignored,
    first_bad,
    is_scalar,
    one_weight,
)
from streammetrics._core.warn import warn


@dataclass(frozen=True)
class Batch:
    """A validated batch: ``y`` int labels (n,) (int8 0/1 binary, intp multiclass), ``p``
    float64 probabilities ((n,) binary, (n, C) multiclass), ``w`` weights or None, and the
    weighted sums over the batch of the per-sample log loss and Brier terms (``sum w * term``;
    None when not asked for)."""

    y: np.ndarray
    p: np.ndarray
    w: np.ndarray | None
    log_loss: float | None
    brier: float | None


#: Values per block of the kernels below (and of the calibration state's bin sums): their
#: temporaries stay in cache instead of being fresh n-sized arrays.
BLOCK = 1 << 16

_EPS = {np.dtype(np.float32): float(np.finfo(np.float32).eps),
        np.dtype(np.float64): float(np.finfo(np.float64).eps)}


def _row_sums(p: np.ndarray) -> np.ndarray:
    """Row sums of an (n, C) array; a matrix-vector product is several times faster than
    ``sum(axis=1)`` on short rows (rounding may differ by an ulp)."""
    return np.asarray(p @ np.ones(p.shape[1], dtype=p.dtype))


def _value(arr: np.ndarray, idx: Any) -> Any:
    v = arr[idx]
    return v.item() if hasattr(v, "item") else v


def _check_probabilities(p: np.ndarray, name: str) -> None:
    """NaN or a value outside [0, 1] is a ValueError naming the first one. Two reductions."""
    if p.size == 0:
        return
    lo, hi = p.min(), p.max()
    if np.isnan(lo) or np.isnan(hi):
        idx = first_bad(np.isnan(p))
        raise ValueError(f"{name}: probabilities must not be NaN; first NaN at index {idx}")
    if lo < 0 or hi > 1:
        idx = first_bad((p < 0) | (p > 1))
        raise ValueError(
            f"{name}: probabilities must lie in [0, 1]; first invalid value "
            f"{_value(p, idx)!r} at index {idx} (pass from_logits=True for logits)"
        )


def _check_logits(x: np.ndarray, name: str, finite: bool) -> None:
    bad = ~np.isfinite(x) if finite else np.isnan(x)
    if x.size and bad.any():
        idx = first_bad(bad)
        rule = "be finite" if finite else "not be NaN"
        raise ValueError(
            f"{name}: logits must {rule}; first invalid value {_value(x, idx)!r} at index {idx}"
        )


def sigmoid(x: np.ndarray) -> np.ndarray:
    """1 / (1 + exp(-x)) in float64, without overflow (the logistic of binary logits). O(n)."""
    x = x.astype(np.float64)
    out = np.empty_like(x)
    pos = x >= 0
    with np.errstate(over="ignore"):
        out[pos] = 1.0 / (1.0 + np.exp(-x[pos]))
        e = np.exp(x[~pos])
        out[~pos] = e / (1.0 + e)
    return out


def _softmax(x: np.ndarray) -> np.ndarray:
    z = x.astype(np.float64)
    z = z - z.max(axis=1, keepdims=True)
    np.exp(z, out=z)
    z /= z.sum(axis=1, keepdims=True)
    return z


def _working_dtype(p: np.ndarray) -> np.dtype[Any]:
    """scikit-learn's: float32 stays float32, every other type becomes float64."""
    return np.dtype(np.float32) if p.dtype == np.float32 else np.dtype(np.float64)


def _check_row_sums(p: np.ndarray, name: str, kept: np.ndarray | None = None) -> None:
    """Rows should sum to 1 within scikit-learn's ``isclose(sum, 1, rtol=sqrt(eps))``; as
    scikit-learn's ``log_loss`` does, rows that do not are used as given with a ``UserWarning``
    that starts with scikit-learn's message (so filters written for it apply) and names the
    first such row. Probabilities rounded to a few decimals are the common case. Only the rows
    ``kept`` (a boolean mask; None: all) are read: an ignored padding row never warns, and the
    index named is the row's in the batch as given. O(n C)."""
    if p.shape[0] == 0:
        return
    sums = _row_sums(p).astype(np.float64)
    tol = 1e-8 + float(np.sqrt(_EPS[p.dtype]))
    bad = np.abs(sums - 1.0) > tol
    if kept is not None:
        bad &= kept
    if bad.any():
        i = int(first_bad(bad))  # type: ignore[arg-type]
        warn(
            f"The y_prob values do not sum to one. Make sure to pass probabilities. ({name}: "
            f"{int(bad.sum())} row(s) of the batch off by more than {tol:.3g}, the first at "
            f"index {i} summing to {float(sums[i])!r}; used as given, as scikit-learn does)",
            UserWarning,
        )


def prepare_batch(
    y_true: Any,
    y_pred: Any,
    sample_weight: Any,
    num_classes: int | None,
    from_logits: bool,
    losses: bool = True,
    ignore_index: int | None = None,
) -> Batch | None:
    """Validate one batch and sum its per-sample terms; ``None`` for an empty batch (or one
    whose every row is labelled ``ignore_index``).

    Log loss follows scikit-learn's ``log_loss``: probabilities are clipped to
    ``[eps, 1 - eps]`` in the input's float type (``eps`` of float32 for float32 input, else of
    float64; binary: P(0) = 1 - p is formed in that type before clipping), then the negative log
    of the true class's clipped probability is taken in float64. Brier: binary ``(p - y)^2``,
    multiclass ``sum_c (p_c - [y = c])^2``. Each is summed weighted (``sum w * term``: pairwise
    as ``numpy.sum`` per block of rows, the blocks' sums added); ``losses=False`` skips both
    (``Batch.log_loss`` and ``brier`` are None) for callers that need only the validated
    arrays. ``ignore_index`` (torchmetrics' option): a label that may occur besides the
    classes; the whole batch is checked as given (errors name its indices), then the rows
    labelled ``ignore_index`` are left out of everything returned. O(n C).
    """
    if is_scalar(y_true) and (is_scalar(y_pred) or num_classes is not None):
        y_true = np.asarray([y_true])
        y_pred = np.asarray(y_pred)[None]
        if sample_weight is not None and is_scalar(sample_weight):
            sample_weight = [sample_weight]
    y = as_numpy(y_true, "y_true")
    p = as_numpy(y_pred, "y_pred")
    if y.ndim == 0 and p.ndim == (0 if num_classes is None else 1):  # one sample as 0-d arrays
        y, p = y.reshape(1), p[None]
        if sample_weight is not None and np.ndim(sample_weight) == 0:
            sample_weight = [sample_weight]
    y = as_column(y)
    if y.ndim != 1:
        raise ValueError(f"y_true: expected a 1-D array of labels, got shape {y.shape}")
    n = y.shape[0]
    w = check_weights(sample_weight, n)
    if num_classes is None:
        p = as_column(p)
        if p.shape != (n,):
            raise ValueError(f"y_pred: expected probabilities of shape ({n},) like y_true, got {p.shape}")
        y = check_binary_labels(y, "y_true", ignore_index)
    else:
        if p.shape != (n, num_classes):
            raise ValueError(
                f"y_pred: expected probabilities of shape ({n}, {num_classes}), got {p.shape}"
            )
        y = check_class_labels(y, "y_true", num_classes, ignore_index)
    if from_logits:
        _check_logits(p, "y_pred", finite=num_classes is not None)
        p = sigmoid(p) if num_classes is None else _softmax(p)
    else:
        _check_probabilities(p, "y_pred")
        p = p.astype(_working_dtype(p), copy=False)
        if num_classes is not None:
            _check_row_sums(p, "y_pred", None if ignore_index is None or n == 0 else y != ignore_index)
    if ignore_index is not None and n:
        y, p, w = drop_ignored(y, p, w, ignore_index)
        n = y.shape[0]
    if n == 0:
        return None
    y = y.astype(np.int8 if num_classes is None else np.intp, copy=False)  # int8: a smaller pass
    p64 = p.astype(np.float64, copy=False)  # read-only below: no copy of float64 input
    if not losses:
        return Batch(y=y, p=p64, w=w, log_loss=None, brier=None)
    log_loss = brier = 0.0
    rows = max(BLOCK // (num_classes or 1), 256)  # blocks of rows: cache-sized temporaries
    for start in range(0, n, rows):
        rs = slice(start, start + rows)
        ll, br = _loss_sums(y[rs], p[rs], p64[rs], None if w is None else w[rs], num_classes)
        log_loss += ll
        brier += br
    return Batch(y=y, p=p64, w=w, log_loss=log_loss, brier=brier)


#: Types of a label (0 or 1) and of a probability that :func:`one_binary` takes as they are.
_ONE_LABEL = (int, bool)
_ONE_PROB = (float, np.float64, int)
_EPS64 = _EPS[np.dtype(np.float64)]


def one_binary(
    y_true: Any, y_pred: Any, sample_weight: Any, losses: bool = True
) -> tuple[int, float, float | None, float, float] | None:
    """One binary sample on the per-sample path: ``(y, p, w, log_loss, brier)``, the terms of
    :func:`prepare_batch` for a batch of that one row, bit for bit (the same float64 operations:
    the true class's probability clipped to ``[eps, 1 - eps]``, its log by ``numpy.log``, each
    term times ``w``; 0.0 with ``losses=False``). ``w`` is None for no weight.

    Only a Python int or bool label 0/1 with a Python or numpy float (or an int 0/1) probability
    in [0, 1] is taken here; anything else gives ``None``, and the caller goes through
    :func:`prepare_batch`, which checks it with the batch's messages. A bad weight is a
    ``ValueError`` with the batch's message. O(1), about a microsecond.

    Parameters
    ----------
    y_true, y_pred, sample_weight : Any
        The arguments of one ``update`` call.
    losses : bool, default True
        Compute the log loss and Brier terms.

    Returns
    -------
    tuple or None
        ``(y, p, w, log_loss, brier)``, or None off the per-sample path.

    Examples
    --------
    >>> from streammetrics._scores.probability_inputs import one_binary
    >>> one_binary(1, 0.5, None) == (1, 0.5, None, 0.6931471805599453, 0.25)
    True
    >>> one_binary(1, [0.5], None) is None  # a batch: prepare_batch's
    True
    """
    if type(y_true) not in _ONE_LABEL or type(y_pred) not in _ONE_PROB:
        return None
    if not (0 <= y_pred <= 1) or (y_true != 0 and y_true != 1):  # NaN fails too
        return None
    y, p = int(y_true), float(y_pred)
    if sample_weight is None:
        w = None
    elif is_scalar(sample_weight):
        w = one_weight(sample_weight)
    else:
        return None
    if not losses:
        return y, p, w, 0.0, 0.0
    q = min(max(p if y else 1.0 - p, _EPS64), 1.0 - _EPS64)  # np.clip's min(max())
    log_q = float(np.log(q))
    d = p - y
    d *= d
    if w is None:
        return y, p, w, -log_q, d
    return y, p, w, -(log_q * w), d * w


def _loss_sums(
    y: np.ndarray, p: np.ndarray, p64: np.ndarray, w: np.ndarray | None, num_classes: int | None
) -> tuple[float, float]:
    """(sum w log loss, sum w Brier) of some rows (see :func:`prepare_batch`). O(n C)."""
    n = y.shape[0]
    if num_classes is None:
        # the true class's probability in the input's type: |p - [y = 0]| is p, or 1 - p (exact:
        # p - 1 and 1 - p round alike up to the sign)
        picked = np.abs(np.subtract(p, y == 0))
        d = p64 - y
        d *= d
    else:
        true = np.arange(n) * num_classes + y  # row-major cells of the true classes (flat takes
        picked = np.ravel(p).take(true)  # are a few times faster than p[rows, y])
        d = p64 * p64
        np.put(d, true, (np.ravel(p64).take(true) - 1.0) ** 2)
        d = _row_sums(d)
    return -_weighted_sum(_log_clipped(picked), w), _weighted_sum(d, w)


def _log_clipped(q: np.ndarray) -> np.ndarray:
    """log(clip(q, eps, 1 - eps)) in float64, eps of q's float type; overwrites q. O(n)."""
    eps = q.dtype.type(_EPS[q.dtype])
    np.clip(q, eps, q.dtype.type(1) - eps, out=q)
    q64 = q.astype(np.float64, copy=False)
    return np.log(q64, out=q64)


def _weighted_sum(x: np.ndarray, w: np.ndarray | None) -> float:
    """sum w x (``numpy.sum``'s pairwise order; the plain sum without weights); overwrites x."""
    return float((x if w is None else np.multiply(x, w, out=x)).sum())


@lru_cache(maxsize=64)
def _bin_tables(n_bins: int, side: str) -> tuple[np.ndarray, np.ndarray]:
    """The edges a candidate bin k is checked against (see :func:`uniform_bins`): a value goes
    down one bin if it is below ``low[k]`` (``"left"``: at or below), up one if it is at or above
    ``high[k]`` (``"left"``: above). Read-only, cached per configuration."""
    edges = np.linspace(0.0, 1.0, n_bins + 1)
    inner, inf = edges[1:-1], np.array([np.inf])
    low = np.concatenate([edges[:-1] if side == "right" else np.concatenate([-inf, inner]), inf])
    high = np.concatenate([inner, inf])
    low.flags.writeable = high.flags.writeable = False
    return low, high


@lru_cache(maxsize=64)
def _bin_lists(n_bins: int, side: str) -> tuple[tuple[float, ...], tuple[float, ...]]:
    """:func:`_bin_tables` as tuples of floats, for :func:`uniform_bin`."""
    low, high = _bin_tables(n_bins, side)
    return tuple(low.tolist()), tuple(high.tolist())


def uniform_bin(c: float, n_bins: int, side: str) -> int:
    """The bin of one value ``c`` (a float in [0, 1]): :func:`uniform_bins` of ``[c]``, by the
    same steps on the same edge tables (candidate ``int(c * n_bins)``, one bin down below its
    low edge, one up at its high edge). For ``c`` in [0, 1] the candidate is at most
    ``n_bins`` (the last entry of the low edges, infinite, sends it down), so no index needs the
    clipping of the array form. O(1).

    Parameters
    ----------
    c : float
        The value, in [0, 1].
    n_bins : int
        The number of uniform bins.
    side : str
        ``"right"`` or ``"left"`` (see :func:`uniform_bins`).

    Returns
    -------
    int
        The bin, in [0, n_bins).

    Examples
    --------
    >>> from streammetrics._scores.probability_inputs import uniform_bin
    >>> uniform_bin(0.5, 10, "right"), uniform_bin(0.5, 10, "left"), uniform_bin(1.0, 10, "right")
    (5, 4, 9)
    """
    low, high = _bin_lists(n_bins, side)
    k = int(c * n_bins)  # >= 0: truncation is floor
    if side == "right":
        if c < low[k]:
            k -= 1
        if c >= high[k]:
            k += 1
    else:
        if c <= low[k]:
            k -= 1
        if c > high[k]:
            k += 1
    return k


def uniform_bins(conf: np.ndarray, n_bins: int, side: str) -> np.ndarray:
    """Bin in [0, n_bins) of each value of ``conf`` (float64 in [0, 1], no NaN) among
    ``n_bins`` uniform bins with edges ``e = numpy.linspace(0, 1, n_bins + 1)``:

    * ``side="right"``: as ``numpy.histogram`` -- ``searchsorted(e, c, side="right") - 1``, the
      last bin closed (``e[b] <= c < e[b + 1]``);
    * ``side="left"``: as scikit-learn's ``calibration_curve`` -- ``searchsorted(e[1:-1], c)``,
      a value on an inner edge goes to the lower bin (``e[b] < c <= e[b + 1]``).

    The candidate ``floor(c * n_bins)`` is off by at most one bin (its rounding and that of the
    edges are far below a bin's width), and is corrected against the very edges ``e``, so the
    result equals the ``searchsorted`` above for every value, edges included. O(n), a few
    passes per block of ``BLOCK`` values (several times faster than the binary search).
    """
    low, high = _bin_tables(int(n_bins), side)
    below = np.less if side == "right" else np.less_equal
    above = np.greater_equal if side == "right" else np.greater
    conf = np.ravel(conf)
    n = conf.shape[0]
    out = np.empty(n, dtype=np.intp)
    size = max(min(BLOCK, n), 1)
    edge, hit = np.empty(size), np.empty(size, dtype=bool)
    for start in range(0, n, size):
        c = conf[start:start + size]
        k, e, m = out[start:start + size], edge[:c.shape[0]], hit[:c.shape[0]]
        np.multiply(c, n_bins, out=e)
        k[...] = e  # >= 0: truncation is floor
        below(c, np.take(low, k, out=e, mode="clip"), out=m)
        k -= m
        above(c, np.take(high, k, out=e, mode="clip"), out=m)
        k += m
    return out
