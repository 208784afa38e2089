"""Running co-moments of targets and predictions: the state of Pearson's r and Lin's
concordance correlation ("Correlations" in docs/definitions/regression.md).

Per output j, over the rows of positive weight: the total weight W (and the row count), the
weighted means of y and of y_pred, their centred sums of squares ``Syy = sum w (y - ybar)^2``,
``Spp`` and the centred cross sum ``Syp = sum w (y - ybar)(p - pbar)``. The means are kept
relative to a pivot (the first row of positive weight: ``pivot_y``, ``pivot_p``), so targets of
1e9 + noise keep the digits of the noise; a batch's moments are computed in two passes around
its own means (no cancellation), and folded in with Chan, Golub and LeVeque's parallel update::

    W = Wa + Wb,  dy = ybar_b - ybar_a,  dp = pbar_b - pbar_a,
    Syp = Syp_a + Syp_b + dy dp Wa Wb / W     (and Syy, Spp alike)

O(n k) per batch, O(k) per merge and read; memory 6 k + 2 floats.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from typing import Any

import numpy as np

from streammetrics._core.load_checks import MAX_SAMPLES, MAX_SUM, check_sums
from streammetrics._core.state import State

from ._base import check_same_outputs, check_shapes, float_arrays, positive_rows

_PER_OUTPUT = ("pivot_y", "pivot_p", "mean_y", "mean_p", "syy", "spp", "syp")


def _batch(y: np.ndarray, p: np.ndarray, w: np.ndarray | None) -> tuple[np.ndarray, ...]:
    if w is None:
        my, mp = y.mean(axis=0), p.mean(axis=0)
        dy, dp = y - my, p - mp
        return (my, mp, np.einsum("ij,ij->j", dy, dy), np.einsum("ij,ij->j", dp, dp),
                np.einsum("ij,ij->j", dy, dp))
    tw = float(w.sum())
    my, mp = (w @ y) / tw, (w @ p) / tw
    dy, dp = y - my, p - mp
    wdy = dy * w[:, None]
    return my, mp, np.einsum("ij,ij->j", wdy, dy), np.einsum("ij,ij->j", dp * w[:, None], dp), \
        np.einsum("ij,ij->j", wdy, dp)


class CoMoments(State):
    """Weights, means and centred (co-)moments of y and y_pred per output (module docstring)."""

    def __init__(self) -> None:
        self.reset()

    def key(self) -> Hashable:
        return ("regression_comoments",)

    def reset(self) -> None:
        self._rows = 0.0
        self._w = 0.0
        self._a = {name: np.zeros(0) for name in _PER_OUTPUT}

    @property
    def k(self) -> int:
        return int(self._a["mean_y"].shape[0])

    def prepare(self, y_true: Any, y_pred: Any, sample_weight: Any = None) -> Any:
        if (rows := positive_rows(y_true, y_pred, sample_weight, self.k)) is None:
            return None
        _, y, p, w = rows
        held = self._a["pivot_y"], self._a["pivot_p"]
        py, pp = (held[0].copy(), held[1].copy()) if self._rows else (y[0].copy(), p[0].copy())
        moments = (py, pp, *_batch(y - py, p - pp, w))  # means relative to the pivots
        if not all(np.isfinite(m).all() for m in moments):
            raise ValueError(f"y_true: values too large: their squared deviations overflow float64 "
                             f"(largest |y_true| = {float(np.abs(y).max())!r}, |y_pred| = "
                             f"{float(np.abs(p).max())!r}); rescale the targets")
        return float(y.shape[0]), float(y.shape[0] if w is None else w.sum()), moments

    def apply(self, delta: Any) -> None:
        if delta is None:
            return
        rows, wb, mb = delta
        if self._rows == 0:
            self._rows, self._w = rows, wb
            self._a = {name: np.array(v, dtype=np.float64) for name, v in zip(_PER_OUTPUT, mb, strict=True)}
            return
        a = self._a
        wa = self._w
        w = wa + wb
        f = wb / w
        # the batch's means relative to this state's pivots (a merged state may have its own)
        dy = (mb[0] - a["pivot_y"]) + mb[2] - a["mean_y"]
        dp = (mb[1] - a["pivot_p"]) + mb[3] - a["mean_p"]
        g = wa * f
        self._a = {
            "pivot_y": a["pivot_y"],
            "pivot_p": a["pivot_p"],
            "mean_y": a["mean_y"] + dy * f,
            "mean_p": a["mean_p"] + dp * f,
            "syy": a["syy"] + mb[4] + dy * dy * g,
            "spp": a["spp"] + mb[5] + dp * dp * g,
            "syp": a["syp"] + mb[6] + dy * dp * g,
        }
        self._rows += rows
        self._w = w

    def totals(self) -> dict[str, Any]:
        """``rows``, ``weight`` (floats) and the per-output arrays (copies); ``mean_y`` and
        ``mean_p`` relative to ``pivot_y`` and ``pivot_p``."""
        out: dict[str, Any] = {k: v.copy() for k, v in self._a.items()}
        out["rows"], out["weight"] = self._rows, self._w
        return out

    def sample_count(self) -> float | None:
        return self._w

    def arrays(self) -> dict[str, Any]:
        out: dict[str, Any] = {k: v.copy() for k, v in self._a.items()}
        out["rows"] = np.asarray(self._rows)
        out["weight"] = np.asarray(self._w)
        return out

    def load_arrays(self, arrays: Mapping[str, Any]) -> None:
        names = (*_PER_OUTPUT, "rows", "weight")
        new = float_arrays(arrays, names, bound=MAX_SUM)
        k = check_shapes(new, _PER_OUTPUT)
        rows, weight = float(new["rows"]), float(new["weight"])
        if rows != int(rows) or rows > MAX_SAMPLES:
            raise ValueError(f"state: 'rows' must be a whole number <= 2**53, got {rows!r}")
        if (rows == 0) != (weight == 0) or (rows == 0) != (k == 0):
            raise ValueError("state: 'rows', 'weight' and the outputs must be all zero or all positive")
        check_sums(new["syy"], "syy")
        check_sums(new["spp"], "spp")
        if (np.abs(new["syp"]) > np.sqrt(new["syy"] * new["spp"]) * (1 + 1e-9) + 1e-300).any():
            raise ValueError("state: 'syp' exceeds sqrt(syy * spp) (Cauchy-Schwarz)")
        self._rows, self._w = rows, weight
        self._a = {name: new[name] for name in _PER_OUTPUT}

    def merge(self, other: State) -> None:
        assert isinstance(other, CoMoments)
        if other._rows == 0:
            return
        check_same_outputs(self.k, other.k)
        self.apply((other._rows, other._w, tuple(other._a[n].copy() for n in _PER_OUTPUT)))

    def scale(self, factor: float) -> None:
        """Multiply every weight by ``factor`` (exponential decay): W and the centred sums scale,
        the means do not; 0 (or an underflow) empties the state. O(k)."""
        f = float(factor)
        self._w *= f
        if self._w == 0.0:
            self.reset()
            return
        for name in ("syy", "spp", "syp"):
            self._a[name] = self._a[name] * f
