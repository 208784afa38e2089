"""The moments kernel of the squared and absolute errors: one mergeable state for MSE, RMSE,
MAE, R² and explained variance ("Numerical stability" in docs/definitions/regression.md).

Per output j it holds, over the rows of positive weight: the row count, the total weight W, the
weighted mean of ``y_true`` and of the residual r = y_true - y_pred (each as an unevaluated sum
``hi + lo`` of two floats), their centred sums of squares M2 = sum w (x - mean)^2, and the sum
of w |r| (also ``hi + lo``). A batch's moments are computed around a pivot (its first row of
positive weight): d = x - pivot, c = mean(d), M2 = sum w (d - c)^2 -- two passes, no
cancellation -- and folded in with Chan, Golub and LeVeque's parallel update::

    W = Wa + Wb,  delta = mean_b - mean_a,  mean = mean_a + delta Wb / W,
    M2 = M2a + M2b + delta^2 Wa Wb / W

with the means carried in double-double, so that 1e9 + small noise streamed in many batches
keeps its digits. Exact zeros stay exact: constant targets give M2 = 0, perfect predictions
give residual moments of 0 (scikit-learn's ``force_finite`` rules read them).

Everything here is O(n k) per batch (a few numpy passes), O(k) per merge and read; memory 8 k +
2 floats.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Mapping
from typing import Any

import numpy as np

from streammetrics._core.load_checks import MAX_SUM, check_sums, loading
from streammetrics._core.state import State

from ._base import (
    RegressionBatch,
    check_finite,
    check_rows,
    check_same_outputs,
    float_arrays,
    regression_batch,
)

#: The arrays of one output each, in the order of a delta tuple after (rows, weight).
_PER_OUTPUT = ("mean_y", "mean_y_lo", "m2_y", "mean_r", "mean_r_lo", "m2_r", "abs_r", "abs_r_lo")
_LO_BOUND = 2.0**-52  # |lo| <= half an ulp of hi <= 2**-52 |hi|


def _two_sum(a: Any, b: Any) -> tuple[Any, Any]:
    """``s, e`` with ``s = fl(a + b)`` and ``a + b = s + e`` exactly (Knuth); arrays or floats."""
    s = a + b
    bb = s - a
    return s, (a - (s - bb)) + (b - bb)


def _renorm(hi: Any, lo: Any) -> tuple[Any, Any]:
    s, e = _two_sum(hi, lo)
    return s, e


_LOCAL = threading.local()
#: Largest batch (rows) whose temporaries come from the per-thread scratch buffers; a fresh
#: 800 kB array costs more in page faults than the passes over it (mmap'ed, then unmapped).
SCRATCH_ROWS = 2**18


def scratch(n: int, which: int) -> np.ndarray | None:
    """A float64 work array of ``n`` entries, reused by this thread (``which``: 0, 1 or 2,
    three may be in use at once; each made on first use); None above :data:`SCRATCH_ROWS`
    (allocate instead). Never part of a delta: the caller copies what it keeps."""
    if n > SCRATCH_ROWS:
        return None
    bufs = getattr(_LOCAL, "bufs", None)
    if bufs is None:
        bufs = _LOCAL.bufs = [None, None, None]
    buf = bufs[which]
    if buf is None or buf.shape[0] < n:
        buf = bufs[which] = np.empty(max(n, 4096))
    return buf[:n]  # type: ignore[no-any-return]


def _pivot(x1: np.ndarray, w: np.ndarray | None, pivot_row: int) -> float:
    """A value of ``x1`` near its mean, cheaply: the median of up to 17 evenly spaced entries
    (of positive weight), or 0 when that median is inside their interquartile range
    (|median| < IQR / 1.5, about 0.9 standard deviations for normal data: the data are centred
    enough that M2 = sum d^2 - W c^2 loses at most about one bit, and need no subtraction pass,
    as residuals of unbiased predictions; :func:`_column_moments` checks). A data value,
    so constant data give d = 0 exactly. Python floats on a handful of entries (a numpy call
    per step would cost more than the pass it saves); a NaN or inf gives some pivot, and the
    sums it reaches are refused."""
    step = max(1, x1.shape[0] // 16)
    xs: list[float] = x1[::step].tolist()
    if w is not None:
        xs = [v for v, q in zip(xs, w[::step].tolist(), strict=True) if q > 0]
        if not xs:
            return float(x1[pivot_row])
    xs.sort()
    k = len(xs)
    med = xs[k // 2]
    return 0.0 if 1.5 * abs(med) < xs[(3 * k) // 4] - xs[k // 4] else med


def _square_sum(d: np.ndarray, w: np.ndarray | None) -> float:
    """sum w d^2 of a 1-D ``d``: a BLAS dot (w d into a scratch array when weighted)."""
    if w is None:
        return float(np.dot(d, d))
    return float(np.dot(np.multiply(w, d, out=scratch(d.shape[0], 2)), d))


def _column_moments(x1: np.ndarray, w: np.ndarray | None, tw: float, pivot_row: int,
                    out: np.ndarray | None) -> tuple[float, float, float]:
    """Mean (``hi``, ``lo``) and centred sum of squares of the 1-D ``x1`` under weights ``w``
    (None: 1 each; total ``tw`` > 0), as floats: d = x1 - pivot (into ``out``, skipped for a
    pivot of 0), c = sum w d / tw, M2 = sum w d^2 - tw c^2 (pairwise sum and BLAS dots: two or
    three passes), and, when that subtraction would lose more than one bit (or is not finite),
    the corrected pass M2 = sum w (d - c)^2. ``x1`` is not modified. O(n)."""
    pivot = _pivot(x1, w, pivot_row)
    d = x1 if pivot == 0.0 else np.subtract(x1, pivot, out=out)
    c = (float(np.add.reduce(d)) if w is None else float(np.dot(w, d))) / tw
    dd = _square_sum(d, w)
    m2 = dd - tw * c * c
    if not tw * c * c <= 0.5 * dd:  # cancellation (or nan): the corrected second pass
        m2 = _square_sum(np.subtract(d, c, out=d if d is not x1 else out), w)
    hi = pivot + c
    bb = hi - pivot
    return hi, (pivot - (hi - bb)) + (c - bb), max(m2, 0.0)


def batch_moments(x: np.ndarray, w: np.ndarray | None, pivot_row: int
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Mean (``hi``, ``lo``) and centred sum of squares of each column of ``x`` (n, k), several
    outputs, under weights ``w`` (None: 1 each; total weight > 0), around row ``pivot_row`` (of
    positive weight): d = x - pivot, c = mean(d), M2 = sum w (d - c)^2. O(n k), three passes
    (one output: :func:`_column_moments`)."""
    pivot_v = x[pivot_row].copy()
    d = x - pivot_v
    if w is None:
        cv = d.sum(axis=0) / d.shape[0]
        e = np.subtract(d, cv, out=d)
        m2v = np.einsum("ij,ij->j", e, e)
    else:
        cv = (w @ d) / float(w.sum())
        e = np.subtract(d, cv, out=d)
        m2v = np.einsum("i,ij,ij->j", w, e, e)
    hi, lo = _two_sum(pivot_v, cv)
    return hi, lo, m2v


def _chan(a: tuple[Any, ...], b: tuple[Any, ...]) -> tuple[Any, ...]:
    """Merge two tuples (rows, weight, *_PER_OUTPUT) of one k (both of positive weight): of
    arrays, or of floats (one output: the same IEEE operations, without a numpy call each)."""
    wa, wb = a[1], b[1]
    w = wa + wb
    f = wb / w
    out: list[Any] = [a[0] + b[0], w]
    for m in (2, 5):  # (mean, lo, m2) of y, then of r
        mh_a, ml_a, m2_a = a[m], a[m + 1], a[m + 2]
        delta = (b[m] - mh_a) + (b[m + 1] - ml_a)
        hi, lo = _two_sum(mh_a, delta * f)
        hi, lo = _renorm(hi, lo + ml_a)
        out += [hi, lo, m2_a + b[m + 2] + delta * delta * (wa * f)]
    hi, lo = _two_sum(a[8], b[8])
    hi, lo = _renorm(hi, lo + (a[9] + b[9]))
    out += [hi, lo]
    return tuple(out)


class ErrorMoments(State):
    """Moments of targets and residuals per output (see the module docstring).

    Parameters
    ----------
    outputs : int, optional
        The number of outputs when fixed by the configuration (output weights); None: fixed by
        the first batch of positive weight (and forgotten by ``reset``).
    """

    def __init__(self, outputs: int | None = None) -> None:
        self.outputs = outputs
        self._one: tuple[float, ...] | None = None
        self._made: tuple[tuple[float, ...], dict[str, np.ndarray]] | None = None
        self._zero(outputs or 0)

    def _zero(self, k: int) -> None:
        self._a = {"rows": np.zeros(()), "weight": np.zeros(()),
                   **{name: np.zeros(k) for name in _PER_OUTPUT}}

    # The held arrays, ``_a``, are what every method but ``apply`` reads and writes (a whole
    # dict at a time, never an entry in place). A batch of one output is merged as floats
    # (:func:`_chan` on Python floats, no numpy call per statistic): ``apply`` keeps the result
    # in ``_one``, and ``_a`` makes the arrays of it when next read (tagged with the tuple they
    # come from, so a read racing an apply sees the one state or the other, never a mix).
    @property
    def _a(self) -> dict[str, np.ndarray]:
        one = self._one
        if one is None:
            return self._arrays
        made = self._made
        if made is not None and made[0] is one:
            return made[1]
        arrays = {"rows": np.array(one[0]), "weight": np.array(one[1]),
                  **{name: np.array([v]) for name, v in zip(_PER_OUTPUT, one[2:], strict=True)}}
        self._made = (one, arrays)
        return arrays

    @_a.setter
    def _a(self, arrays: dict[str, np.ndarray]) -> None:
        self._arrays = arrays
        self._one = None  # after the arrays: a read in between sees the previous state whole

    @property
    def k(self) -> int:
        """The number of outputs held (0: none seen yet)."""
        return 1 if self._one is not None else int(self._a["mean_y"].shape[0])

    def key(self) -> tuple[Any, ...]:
        return ("regression_moments", self.outputs)

    def _tuple(self) -> tuple[np.ndarray, ...]:
        return (self._a["rows"], self._a["weight"], *(self._a[n] for n in _PER_OUTPUT))

    def _set(self, t: tuple[Any, ...]) -> None:
        self._a = {"rows": np.asarray(t[0], dtype=np.float64).reshape(()),
                   "weight": np.asarray(t[1], dtype=np.float64).reshape(()),
                   **{name: np.asarray(arr, dtype=np.float64).copy()
                      for name, arr in zip(_PER_OUTPUT, t[2:], strict=True)}}

    # -- update ------------------------------------------------------------------------------
    def prepare(self, y_true: Any, y_pred: Any, sample_weight: Any = None) -> Any:
        held = self.k or self.outputs
        b = regression_batch(y_true, y_pred, sample_weight, outputs=held or None, finite=False)
        if b.n == 0:
            return None
        w = b.w
        if w is None:
            rows, tw, pivot = float(b.n), float(b.n), 0
        else:
            positive = w > 0
            rows = float(np.count_nonzero(positive))
            if rows == 0:
                return None
            pivot = int(np.argmax(positive))
            tw = float(w.sum())
        with np.errstate(over="ignore", invalid="ignore"):  # overflow is refused below
            delta: tuple[Any, ...]
            if b.k == 1:  # floats: no array per statistic, a scalar merge in apply
                one = _fused_moments(b, w, pivot, tw) if b.n >= FUSED_ROWS else None
                stats: tuple[Any, ...] = one or _one_output(b, w, pivot, tw)
                delta = (rows, tw, *stats, 0.0)
                finite = all(map(math.isfinite, stats))
            else:
                stats = _numpy_moments(b, w, pivot)
                delta = (np.array(rows), np.array(tw), *stats, np.zeros_like(stats[-1]))
                finite = all(np.isfinite(v).all() for v in stats)
        if not finite:  # NaN and inf propagate to the sums
            check_finite(b.y, "y_true", b.shape)
            check_finite(b.p, "y_pred", b.shape)
            bad_y = not (np.isfinite(stats[0]).all() and np.isfinite(stats[2]).all())
            name = "y_true" if bad_y else "y_pred"
            raise ValueError(
                f"{name}: values too large: their deviations or squared deviations overflow "
                f"float64 (largest |{name}| = {float(np.abs(b.y if bad_y else b.p).max())!r}); "
                "rescale the targets")
        return delta

    def apply(self, delta: Any) -> None:
        if delta is None:
            return
        if isinstance(delta[2], float):  # one output: a merge of floats, kept as floats
            held = self._one
            if held is None:
                if self._a["rows"] == 0:
                    self._one = delta
                    return
                held = tuple(v.item() for v in self._tuple())
            self._one = _chan(held, delta)
            return
        if self._a["rows"] == 0:
            self._set(delta)
            return
        self._set(_chan(self._tuple(), delta))

    # -- reads -------------------------------------------------------------------------------
    def totals(self) -> dict[str, Any]:
        """The held statistics (views: do not modify): ``rows``, ``weight`` (floats) and the
        per-output arrays ``sse`` (sum w r^2), ``m2_r`` (sum w (r - mean r)^2), ``m2_y``
        (sum w (y - mean y)^2), ``abs_r`` (sum w |r|)."""
        a = self._a
        mean_r = a["mean_r"] + a["mean_r_lo"]
        return {"rows": float(a["rows"]), "weight": float(a["weight"]),
                "sse": a["m2_r"] + a["weight"] * mean_r * mean_r, "m2_r": a["m2_r"],
                "m2_y": a["m2_y"], "abs_r": a["abs_r"] + a["abs_r_lo"]}

    def sample_count(self) -> float | None:
        return float(self._a["weight"])

    # -- state protocol ----------------------------------------------------------------------
    def arrays(self) -> dict[str, Any]:
        return {k: v.copy() for k, v in self._a.items()}

    def load_arrays(self, arrays: Mapping[str, Any]) -> None:
        names = ("rows", "weight", *_PER_OUTPUT)
        new = float_arrays(arrays, names)
        rows, weight = check_rows(new, _PER_OUTPUT, self.outputs, "moments")
        for name in ("m2_y", "m2_r", "abs_r"):
            check_sums(new[name], name)
        for name in ("mean_y", "mean_r"):
            if (np.abs(new[name]) > MAX_SUM).any():
                raise ValueError(f"state: array {name!r} holds a mean beyond {MAX_SUM:g}")
            lo = new[name + "_lo"]
            if (np.abs(lo) > _LO_BOUND * np.abs(new[name])).any():
                raise ValueError(f"state: array {name + '_lo'!r} must be a rounding residue of "
                                 f"{name!r} (|lo| <= 2**-52 |hi|)")
        if (np.abs(new["abs_r_lo"]) > _LO_BOUND * new["abs_r"]).any():
            raise ValueError("state: array 'abs_r_lo' must be a rounding residue of 'abs_r'")
        if loading():
            mean_r = new["mean_r"]
            with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
                sse = new["m2_r"] + weight * mean_r * mean_r
                ratios = np.concatenate([sse / weight, np.abs(new["abs_r"]) / weight,
                                         (sse / new["m2_y"])[new["m2_y"] > 0]]) if rows else sse
            if not np.isfinite(sse).all() or not np.isfinite(ratios).all():
                raise ValueError("state: the squared residuals these moments imply overflow float64 "
                                 "(or their ratio to 'weight' or 'm2_y' does)")
        if rows == 0 and self.outputs is None:
            self._zero(0)
            return
        self._a = new

    def merge(self, other: State) -> None:
        assert isinstance(other, ErrorMoments)
        if other._a["rows"] == 0:
            return
        check_same_outputs(self.k, other.k)
        self.apply(other._tuple())

    def reset(self) -> None:
        self._zero(self.outputs or 0)

    def scale(self, factor: float) -> None:
        """Multiply every sample weight by ``factor``: W, the M2 and the absolute sums scale,
        the means do not (0 empties the state). O(k)."""
        f = float(factor)
        if f == 0.0:
            self.reset()
            return
        a = dict(self._a)  # a new dict: the held one is never changed in place
        for name in ("weight", "m2_y", "m2_r", "abs_r", "abs_r_lo"):
            a[name] = np.asarray(a[name] * f, dtype=np.float64)
        a["abs_r"], a["abs_r_lo"] = _renorm(a["abs_r"], a["abs_r_lo"])
        self._a = a
        if float(a["weight"]) == 0.0:  # underflow: no weight is left
            self.reset()


def _numpy_moments(b: RegressionBatch, w: np.ndarray | None, pivot: int) -> tuple[np.ndarray, ...]:
    """The moments of targets and residuals and the absolute sums of a batch of several
    outputs, per output: numpy passes."""
    r = b.y - b.p
    my, ly, m2y = batch_moments(b.y, w, pivot)
    mr, lr, m2r = batch_moments(r, w, pivot)
    a = np.abs(r, out=r)
    s_abs = w @ a if w is not None else a.sum(axis=0)
    return my, ly, m2y, mr, lr, m2r, s_abs


def _one_output(b: RegressionBatch, w: np.ndarray | None, pivot: int,
                tw: float) -> tuple[float, ...]:
    """:func:`_numpy_moments` of a batch of one output, as floats: r = y - p into a scratch
    array, the moments of r, |r| in place and its sum, then d = y - pivot into the same array
    and the moments of y -- six to eight passes, all but the first over data in cache, and no
    allocation up to :data:`SCRATCH_ROWS` rows (a second scratch array for r - pivot when the
    residuals are not centred). O(n)."""
    y1 = b.y[:, 0]
    n = y1.shape[0]
    r = np.subtract(y1, b.p[:, 0], out=scratch(n, 0))
    mr, lr, m2r = _column_moments(r, w, tw, pivot, scratch(n, 1))
    a = np.abs(r, out=r)
    s_abs = float(np.add.reduce(a)) if w is None else float(np.dot(w, a))
    my, ly, m2y = _column_moments(y1, w, tw, pivot, a)  # |r| is read: its array takes y - pivot
    return my, ly, m2y, mr, lr, m2r, s_abs


#: Batches of one output at least this long take the compiled single pass when numba is installed.
FUSED_ROWS = 4096
_FUSED: list[Any] = []  # [the module's ``moments``, or None when numba is missing]


def _fused_moments(b: RegressionBatch, w: np.ndarray | None, pivot_row: int,
                   tw: float) -> tuple[float, ...] | None:
    """As :func:`_one_output` in one compiled pass (numba), or None without numba or when a
    pivot is so far from its mean that the one-pass M2 would lose more than one bit."""
    if not _FUSED:
        try:
            from . import _fused  # imports numba
            _FUSED.append(_fused.moments)
        except ImportError:
            _FUSED.append(None)
    kernel = _FUSED[0]
    if kernel is None:
        return None
    y1, p1 = b.y[:, 0], b.p[:, 0]
    py = _pivot(y1, w, pivot_row)
    step = max(1, y1.shape[0] // 16)
    pr = _pivot(y1[::step] - p1[::step], None if w is None else w[::step], 0)
    sy, syy, sr, srr, sa = (float(v) for v in kernel(y1, p1, w, py, pr))
    cy, cr = sy / tw, sr / tw
    m2y, m2r = syy - tw * cy * cy, srr - tw * cr * cr
    if not (tw * cy * cy <= 0.5 * syy and tw * cr * cr <= 0.5 * srr):
        return None  # cancellation (or a non-finite sum: the numpy path locates it)
    hy, ly = _two_sum(py, cy)
    hr, lr = _two_sum(pr, cr)
    return hy, ly, max(m2y, 0.0), hr, lr, max(m2r, 0.0), sa
