"""Persistence of the bounded ranking state: its arrays, and their validation on load.

:class:`BinPersistence` is the part of :class:`~streammetrics._scores.binned.bins.BinnedScores` that writes
the bins as flat arrays (keys, positive and negative weights, per-column offsets and shifts)
and checks an untrusted file before restoring it (shapes, ranges, strictly increasing keys,
capacity): a bad file raises ``ValueError`` naming the array and leaves the state unchanged.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from streammetrics._core.load_checks import check_total
from streammetrics._core.validation import check_offsets

from .fields import BinFields
from .keys import HALF_BITS, NEG_INF_KEY, POS_INF_KEY


class BinPersistence(BinFields):
    """``arrays`` / ``load_arrays`` of the bounded ranking state (see the module docstring)."""

    def arrays(self) -> dict[str, Any]:
        self._settle()
        offsets = np.zeros(self.n_columns + 1, dtype=np.int64)
        np.cumsum([k.shape[0] for k in self._keys], out=offsets[1:])
        return {
            "bin_keys": np.concatenate(self._keys).astype(np.int64),
            "bin_pos": np.concatenate(self._pos).astype(np.float64),
            "bin_neg": np.concatenate(self._neg).astype(np.float64),
            "bin_offsets": offsets,
            "bin_shift": self._shift.copy(),
        }

    def load_arrays(self, arrays: Mapping[str, Any]) -> None:
        names = {"bin_keys", "bin_pos", "bin_neg", "bin_offsets", "bin_shift"}
        extra = set(arrays) - names
        if extra:
            raise ValueError(f"state: unexpected arrays {sorted(extra)}")
        for name in sorted(names):
            if name not in arrays:
                raise ValueError(f"state: missing array {name!r}")
        keys = np.asarray(arrays["bin_keys"])
        pos = np.asarray(arrays["bin_pos"])
        neg = np.asarray(arrays["bin_neg"])
        offsets = np.asarray(arrays["bin_offsets"])
        shift = np.asarray(arrays["bin_shift"])
        k = self.n_columns
        if keys.ndim != 1 or keys.dtype.kind not in "iu" or keys.dtype.itemsize > 8:
            raise ValueError(f"state: array 'bin_keys' must be 1-D integers, got {keys.dtype} {keys.shape}")
        if keys.dtype == np.uint64 and keys.size and int(keys.max()) > 2**63 - 1:
            raise ValueError("state: array 'bin_keys' holds values outside int64")
        keys = keys.astype(np.int64)
        for name, arr in (("bin_pos", pos), ("bin_neg", neg)):
            if arr.shape != keys.shape or arr.dtype.kind not in "biuf":
                raise ValueError(
                    f"state: array {name!r} must be numbers of shape {keys.shape}, "
                    f"got {arr.dtype} {arr.shape}"
                )
        pos, neg = pos.astype(np.float64), neg.astype(np.float64)
        for name, arr in (("bin_pos", pos), ("bin_neg", neg)):
            if arr.size and not (np.isfinite(arr).all() and (arr >= 0).all()):
                raise ValueError(f"state: array {name!r} must be finite and >= 0")
            check_total(arr, name, normal=True)  # (subnormal ratios overflow in the bounds)
        if keys.size and ((pos + neg) <= 0).any():
            raise ValueError(f"state: empty bin at index {int(np.argmax((pos + neg) <= 0))}")
        offsets = check_offsets(offsets, "bin_offsets", k, keys.shape[0], "bin_keys")
        if shift.shape != (k,) or shift.dtype.kind not in "iu":
            raise ValueError(
                f"state: array 'bin_shift' must be {k} integers, got {shift.dtype} {shift.shape}"
            )
        shift = shift.astype(np.int64)
        if (shift < 0).any() or (shift > 63).any() or (self.edges is not None and (shift != 0).any()):
            raise ValueError("state: array 'bin_shift' out of range")
        new_k, new_p, new_n = [], [], []
        for c in range(k):
            lo, hi = int(offsets[c]), int(offsets[c + 1])
            kc = keys[lo:hi]
            if hi - lo > self.capacity:
                raise ValueError(
                    f"state: column {c} has {hi - lo} bins, more than the capacity {self.capacity}"
                )
            if kc.shape[0] > 1 and (kc[1:] <= kc[:-1]).any():  # (np.diff overflows int64)
                raise ValueError(f"state: array 'bin_keys' is not strictly increasing in column {c}")
            if kc.shape[0]:
                if self.edges is not None:
                    if kc[0] < 0 or kc[-1] > self.edges.shape[0]:
                        raise ValueError(f"state: array 'bin_keys' out of range in column {c}")
                else:
                    top = 2 * HALF_BITS if self.scores == "probability" else POS_INF_KEY
                    bottom = 0 if self.scores == "probability" else NEG_INF_KEY
                    s = int(shift[c])
                    if int(kc[0]) < (bottom >> s) or int(kc[-1]) > (top >> s):
                        raise ValueError(f"state: array 'bin_keys' out of range in column {c}")
            new_k.append(kc.copy())
            new_p.append(pos[lo:hi].copy())
            new_n.append(neg[lo:hi].copy())
        self._keys, self._pos, self._neg, self._shift = new_k, new_p, new_n, shift.copy()
        self._pend = [None] * k
