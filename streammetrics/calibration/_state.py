"""The one decomposable state of the calibration family: sums and uniform probability bins.

``ProbabilityBins(num_classes, n_bins, side, from_logits)`` holds float64 weighted sums, all
merging by addition (a :class:`~streammetrics._core.state.SummedState`):

* ``totals`` (3,): sum of w, of w * log loss, of w * Brier term (the last two stay 0 in a
  ``losses=False`` state: CalibrationCurve's, which reads only its bins);
* ``bins`` (K, n_bins, 5), K = 1 for binary (the column P(1)) or C (one-vs-rest, column c;
  K = 0 with ``ovr=False``, for a multiclass top-label CalibrationError alone):
  per bin of the column's probability p with outcome o (binary: the label; multiclass:
  ``y == c``), the sums of w, w p, w o, w p^2 and w p o;
* ``top`` (n_bins, 3), multiclass only (shape (0, 3) for binary): per bin of the top-label
  confidence c = max_k p_k with correctness a = [argmax == y] (first index on ties), the sums
  of w, w c, w a. Filled by the top-label state (``ovr=False``) only: no reader of a
  one-vs-rest state (classwise CalibrationError, BrierScore, CalibrationCurve) uses it, and
  ``ovr`` is in the key, so it stays 0 there (its shape is kept: the saved format).

``ignore_index`` (CalibrationError's, torchmetrics' option): the rows so labelled are checked,
then left out of every sum (:func:`~streammetrics._scores.probability_inputs.prepare_batch`); it
is in the key, so no MetricSet shares a state across different values.

``side="right"`` bins as ``numpy.histogram`` (the last bin closed; CalibrationError and the Brier
decomposition), ``side="left"`` as scikit-learn's ``calibration_curve``. ``n_bins=0`` keeps the
totals only (LogLoss).

Complexity: ``update`` O(n K) (the arithmetic bin index of
:func:`~streammetrics._scores.probability_inputs.uniform_bins`, equal to ``searchsorted`` on the edges,
and three (binary) or five ``bincount`` per batch); memory O(K n_bins), independent of n.
Metrics whose configuration maps to the same key share one state in a
:class:`~streammetrics.MetricSet`.

Window/Decayed: every sum is linear in the sample weight, so :meth:`scale` is exact up to
rounding and ``Decayed`` rescales the O(K n_bins) state. Subtraction is deliberately not offered:
the sums of probabilities are not integers, so removing expired rows by float subtraction would
leave rounding residue that grows with the stream's history; a ``Window`` therefore rebuilds this
state from its rows on the first read after an expiry (O(W), exact).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from streammetrics._core.params import IGNORE_INDEX, Param, check_param
from streammetrics._core.state import State, SummedState
from streammetrics._scores.probability_inputs import (
    BLOCK,
    Batch,
    one_binary,
    prepare_batch,
    uniform_bin,
    uniform_bins,
)

#: Largest K * n_bins a state may declare (each cell holds 5 float64 sums: 160 MiB at most).
MAX_CELLS = 1 << 22
#: The largest per-sample log loss: -log(eps of float64), plus slack for rounding.
_MAX_LOG_LOSS = -float(np.log(np.finfo(np.float64).eps)) + 1e-6
_TOL = 1e-9  # relative slack for the per-bin consistency checks of a loaded state
#: ``n_bins`` by ``allow_zero``.
_N_BINS = {False: Param("int", "must be an int >= 1", low=1),
           True: Param("int", "must be an int >= 0", low=0)}
_SIDE = Param("choice", "must be 'left' or 'right'", choices=("left", "right"))


def check_n_bins(n_bins: Any, k: int, allow_zero: bool = False) -> int:
    """Validate ``n_bins``: an int >= 1 with ``k * n_bins <= MAX_CELLS``."""
    check_param(n_bins, "n_bins", _N_BINS[bool(allow_zero)])
    if k * int(n_bins) > MAX_CELLS:
        raise ValueError(
            f"n_bins: {k} classes x {n_bins} bins exceeds the limit of {MAX_CELLS} cells, got {n_bins!r}"
        )
    return int(n_bins)


class ProbabilityBins(SummedState):
    """Weighted sums and uniform bins of probabilities (see the module docstring)."""

    # Every sum is linear in the weight (the default power 1).
    weight_powers: Mapping[str, Any] = {}
    # Opt out of SummedState.subtract (see the module docstring): windows rebuild exactly.
    subtract = State.subtract  # type: ignore[assignment]

    def __init__(
        self,
        num_classes: int | None,
        n_bins: int,
        side: str,
        from_logits: bool,
        ovr: bool = True,
        losses: bool = True,
        ignore_index: int | None = None,
    ) -> None:
        side = check_param(side, "side", _SIDE)
        self.num_classes = num_classes
        self.k = 1 if num_classes is None else int(num_classes)
        self.n_bins = check_n_bins(n_bins, self.k, allow_zero=True)
        self.side = side
        self.from_logits = bool(from_logits)
        self.ovr = bool(ovr) or num_classes is None
        self.losses = bool(losses)
        self.ignore_index = check_param(ignore_index, "ignore_index", IGNORE_INDEX)
        top = 0 if num_classes is None else self.n_bins
        self._arrays = {
            "totals": np.zeros(3),
            "bins": np.zeros((self.k if self.ovr else 0, self.n_bins, 5)),
            "top": np.zeros((top, 3)),
        }

    def key(self) -> tuple[Any, ...]:
        base = (self.num_classes, self.n_bins, self.side, self.from_logits, self.ovr, self.losses)
        # only where set: the key of a state without it is unchanged
        return base if self.ignore_index is None else (*base, ("ignore_index", self.ignore_index))

    # -- update ----------------------------------------------------------------------------------
    def prepare(self, y_true: Any, y_pred: Any, sample_weight: Any = None) -> Any:
        if self.num_classes is None and not self.from_logits:
            one = one_binary(y_true, y_pred, sample_weight, self.losses)
            if one is not None:
                # checked; a row labelled ignore_index (0 or 1 here) is left out
                return None if one[0] == self.ignore_index else self._increment_one(*one)
        batch = prepare_batch(y_true, y_pred, sample_weight, self.num_classes, self.from_logits,
                              losses=self.losses, ignore_index=self.ignore_index)
        if batch is None:
            return None
        return self._increment(batch)

    def _increment_one(self, y: int, p: float, w: float | None, log_loss: float,
                       brier: float) -> tuple[Any, ...]:
        """The increment of one binary sample (see :func:`one_binary`): the totals and the one
        bin cell it touches, with the values :meth:`_ovr_bins` sums for a batch of that row (w,
        w p, w o, w p^2, w p o; w = 1.0 without a weight). Applied to that cell only: the other
        cells of a batch's increment are 0.0, which leaves a sum unchanged. O(1)."""
        totals = (1.0 if w is None else w, log_loss, brier)
        if self.n_bins == 0:
            return totals, -1, None
        wp = p if w is None else w * p
        ww = 1.0 if w is None else w
        cell = (ww, wp, ww if y else 0.0, wp * p, wp if y else 0.0)
        return totals, uniform_bin(p, self.n_bins, self.side), cell

    def _increment(self, b: Batch) -> dict[str, np.ndarray]:
        total_w = float(b.y.shape[0]) if b.w is None else float(b.w.sum())
        totals = np.array([total_w, b.log_loss or 0.0, b.brier or 0.0])
        out = {"totals": totals}
        if self.n_bins == 0:
            return out
        # blocks of rows: every temporary stays in cache (and is not a fresh n K allocation)
        rows = max(BLOCK // self.k, 256)
        for start in range(0, b.y.shape[0], rows):
            rs = slice(start, start + rows)
            for name, inc in self._block_sums(b.y[rs], b.p[rs], None if b.w is None else b.w[rs]).items():
                if name in out:
                    out[name] += inc
                else:
                    out[name] = inc
        return out

    def _block_sums(self, y: np.ndarray, p: np.ndarray, w: np.ndarray | None) -> dict[str, np.ndarray]:
        """The bin sums of some rows (labels ``y``, probabilities ``p``, weights ``w`` or None)."""
        out: dict[str, np.ndarray] = {}
        nb = self.n_bins
        if self.ovr:
            out["bins"] = self._ovr_bins(y, p, w)
        if not self.ovr:  # the top-label state (multiclass)
            top = p.argmax(axis=1)  # first index on ties
            conf = np.ravel(p).take(np.arange(top.shape[0]) * self.k + top)  # p[rows, top]
            correct = (top == y).astype(np.float64)
            tcell = uniform_bins(conf, nb, self.side)
            out["top"] = np.stack(
                [
                    np.bincount(tcell, weights=w, minlength=nb).astype(np.float64, copy=False),
                    np.bincount(tcell, weights=conf if w is None else w * conf, minlength=nb),
                    np.bincount(tcell, weights=correct if w is None else w * correct, minlength=nb),
                ],
                axis=-1,
            )
        return out

    def _ovr_bins(self, y: np.ndarray, p: np.ndarray, w: np.ndarray | None) -> np.ndarray:
        """(K, n_bins, 5) sums of some rows, one-vs-rest per column. Unit weights (``w`` None)
        count without a weight array. Binary: one index ``2 * bin + y`` splits each bin by
        outcome, so three ``bincount`` give the five sums (the sums with o are the odd cells, the
        others a cell pair's total). Multiclass: o is 1 only in the true class's column, so the
        sums with o use n entries, the others n K; cells are offset per column by broadcasting
        (no n K index or weight copies)."""
        nb = self.n_bins
        n = y.shape[0]
        if self.num_classes is None:
            key = uniform_bins(p, nb, self.side)
            key <<= 1
            key += y
            wp = p if w is None else w * p
            split = np.stack(
                [
                    np.bincount(key, weights=w, minlength=2 * nb).astype(np.float64, copy=False),
                    np.bincount(key, weights=wp, minlength=2 * nb),
                    np.bincount(key, weights=wp * p, minlength=2 * nb),
                ],
                axis=-1,
            ).reshape(nb, 2, 3)
            both = split[:, 0] + split[:, 1]
            bins = np.stack([both[:, 0], both[:, 1], split[:, 1, 0], both[:, 2], split[:, 1, 1]], axis=-1)
            return bins[None]
        p = np.ravel(p)  # row-major: sample i, class c at i * C + c
        cell2 = uniform_bins(p, nb, self.side).reshape(n, self.k)
        cell2 += nb * np.arange(self.k)
        cell = cell2.ravel()
        ww = None if w is None else np.repeat(w, self.k)
        true = np.arange(n) * self.k + y
        cell_o, p_o = cell.take(true), p.take(true)
        size = self.k * nb
        wp = p if ww is None else ww * p
        stacked: np.ndarray = np.stack(
            [
                np.bincount(cell, weights=ww, minlength=size).astype(np.float64, copy=False),
                np.bincount(cell, weights=wp, minlength=size),
                np.bincount(cell_o, weights=w, minlength=size).astype(np.float64, copy=False),
                np.bincount(cell, weights=wp * p, minlength=size),
                np.bincount(cell_o, weights=p_o if w is None else w * p_o, minlength=size),
            ],
            axis=-1,
        ).reshape(self.k, nb, 5)
        return stacked

    def apply(self, delta: Any) -> None:
        if delta is None:
            return
        if type(delta) is tuple:  # one sample (_increment_one)
            (w, ll, br), b, cell = delta
            t = self._arrays["totals"]
            s = t.tolist()  # float64 sums as Python floats: the same additions, fewer numpy calls
            t[:] = (s[0] + w, s[1] + ll, s[2] + br)
            if cell is not None:
                row = self._arrays["bins"][0, b]
                s = row.tolist()
                row[:] = (s[0] + cell[0], s[1] + cell[1], s[2] + cell[2], s[3] + cell[3], s[4] + cell[4])
            return
        for name, inc in delta.items():
            self._arrays[name] += inc

    # -- reads -----------------------------------------------------------------------------------
    def totals(self) -> np.ndarray:
        """(sum w, sum w log loss, sum w Brier); a live view: read under the owner's lock."""
        return self._arrays["totals"]

    def sample_count(self) -> float:
        """Total weight of the samples folded in. O(1)."""
        return float(self._arrays["totals"][0])

    def bins(self) -> np.ndarray:
        return self._arrays["bins"]

    def top(self) -> np.ndarray:
        return self._arrays["top"]

    # -- loading (untrusted) -----------------------------------------------------------------------
    def load_arrays(self, arrays: Mapping[str, Any]) -> None:
        """Shapes, finiteness and signs as every summed state; then the sums must be consistent
        (per bin: w p <= w, w o <= w, w p^2 <= w p, w p o <= min(w p, w o); top: w c, w a <= w;
        totals: log loss <= -log(eps) w, Brier <= 2 w), else ``ValueError``. O(state size)."""
        old = self._arrays
        super().load_arrays(arrays)
        new, self._arrays = self._arrays, old
        b, t, tot = new["bins"], new["top"], new["totals"]

        def above(a: np.ndarray, bound: np.ndarray, what: str) -> None:
            if a.size and (a > bound * (1 + _TOL) + 1e-300).any():
                raise ValueError(f"state: inconsistent sums ({what})")

        above(b[..., 1], b[..., 0], "bins: sum of w p exceeds sum of w")
        above(b[..., 2], b[..., 0], "bins: sum of w o exceeds sum of w")
        above(b[..., 3], b[..., 1], "bins: sum of w p^2 exceeds sum of w p")
        above(b[..., 4], np.minimum(b[..., 1], b[..., 2]), "bins: sum of w p o exceeds its bounds")
        above(t[..., 1:], t[..., :1], "top: confidence or accuracy sums exceed sum of w")
        above(tot[1:2], _MAX_LOG_LOSS * tot[:1], "totals: log loss exceeds -log(eps) per sample")
        above(tot[2:3], 2.0 * tot[:1], "totals: Brier exceeds 2 per sample")
        self._check_bin_ranges(b, t, float(tot[0]))
        self._arrays = new

    def _check_bin_ranges(self, b: np.ndarray, t: np.ndarray, total: float) -> None:
        """What the readers rely on beyond the per-bin ordering of the sums: the mean
        probability of bin j lies in its range [j / n, (j + 1) / n] (so does the mean top-label
        confidence), sum w p^2 >= (sum w p)^2 / sum w (a variance >= 0: the within-bin variance
        of the Brier decomposition), and every column's bins (and the top-label bins) hold the
        samples counted in ``totals`` -- each sample lands in one bin per column (the top-label bins:
        those of a top-label state; 0 in a one-vs-rest one). ``ValueError``
        naming the array, the bin and the rule. O(K n_bins)."""
        n = self.n_bins
        if n == 0:
            return
        lo, hi = np.arange(n) / n, np.arange(1, n + 1) / n

        def bad_cell(ok: np.ndarray, what: str) -> None:
            if ok.size and not ok.all():
                k, j = np.unravel_index(int(np.argmax(~ok.reshape(-1))), ok.shape) if ok.ndim == 2 \
                    else (0, int(np.argmax(~ok)))
                where = f"column {int(k)}, bin {int(j)}" if ok.ndim == 2 else f"bin {int(j)}"
                raise ValueError(f"state: inconsistent sums ({what} at {where})")

        tiny = 1e-300
        # the top-label bins are filled by the top-label state only (``ovr`` states keep 0)
        for arr, name, want in ((b, "bins", total), (t, "top", 0.0 if self.ovr else total)):
            if arr.size == 0:
                continue
            w, wp = arr[..., 0], arr[..., 1]
            bad_cell((wp >= w * lo * (1 - _TOL) - tiny) & (wp <= w * hi * (1 + _TOL) + tiny),
                     f"{name}: the mean probability lies outside its bin")
            sums = arr[..., 0].sum(axis=-1)
            off = np.abs(sums - want) > _TOL * max(want, float(np.max(sums))) + tiny
            if np.any(off):
                raise ValueError(f"state: inconsistent sums ({name}: a column's bins hold weight "
                                 f"{float(np.atleast_1d(sums)[np.argmax(np.atleast_1d(off))])!r}, "
                                 f"totals count {want!r})")
        if b.size:
            w, wp, wp2 = b[..., 0], b[..., 1], b[..., 3]
            bad_cell(wp * wp <= wp2 * w * (1 + _TOL) + tiny,
                     "bins: sum of w p^2 is below (sum of w p)^2 / sum of w")
