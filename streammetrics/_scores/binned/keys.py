"""Order-preserving 64-bit keys of scores for the bounded ranking state.

Every score is mapped to an order-preserving 64-bit integer *key* after a declared transform
(never guessed from a batch):

* ``scores="raw"`` (default; also ``"logit"``): any orderable float. key = the float64 bits with
  the low 63 bits flipped for negative numbers (so integer order = float order; -0.0 is folded
  into 0.0). Float32 scores are widened to float64 first (exact).
* ``scores="probability"``: scores in [0, 1]. key(p) = bits(p) for p <= 1/2 and
  2·bits(1/2) − bits(1 − p) above (1 − p is exact there, Sterbenz), so resolution is relative
  near both 0 and 1 -- the shape of the logit, without any rounding in the transform.

Both maps are strictly increasing and injective on distinct scores, so at shift 0 every bin is
one distinct score and the state is exact.
"""

from __future__ import annotations

import numpy as np

from .arrays import CHUNK

LOW63 = np.int64(0x7FFFFFFFFFFFFFFF)
HALF_BITS = int(np.float64(0.5).view(np.int64))
NEG_INF_KEY = int(np.float64(-np.inf).view(np.int64)) ^ 0x7FFFFFFFFFFFFFFF
POS_INF_KEY = int(np.float64(np.inf).view(np.int64))


def raw_keys(s: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """Float64 bits with the low 63 bits flipped for negatives (into ``out`` if given)."""
    f = None if out is None else out.view(np.float64)
    b = np.add(s, 0.0, dtype=np.float64, out=f).view(np.int64)  # a copy; + 0.0 folds -0.0 into 0.0
    m = b >> 63
    m &= LOW63
    b ^= m
    return b


def raw_decode(k: np.ndarray) -> np.ndarray:
    k = np.asarray(k, dtype=np.int64)
    below = k < NEG_INF_KEY  # a lower bin edge below -inf's key: everything -> -inf
    b = k ^ ((k >> 63) & LOW63)
    out = b.view(np.float64).copy()
    out[below] = -np.inf
    return out


def prob_keys(p: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """key(p) = bits(p) for p < 1/2, 2·bits(1/2) − bits(1 − p) for p >= 1/2 (equal at 1/2).

    Out-of-range scores (p < 0 or p > 1) get keys outside [0, 2·bits(1/2)], so a range check
    is a min/max of the keys. Branch-free, in place, in cache-sized chunks (no large temporary:
    fresh large arrays cost page faults)."""
    p = np.asarray(p).reshape(-1)
    if p.dtype != np.float32:
        p = p.astype(np.float64, copy=False)
    n = p.shape[0]
    if out is None:
        out = np.empty(n, dtype=np.int64)
    q = out.view(np.float64)
    np.subtract(1.0, p, out=q, dtype=np.float64)  # exact for p in [1/2, 1]
    np.minimum(q, p, out=q)  # p below 1/2, 1 - p above
    q += 0.0  # -0.0 -> 0.0
    t = np.empty(min(n, CHUNK), dtype=np.int64)
    tf = t.view(np.float64)
    for i in range(0, n, CHUNK):
        j = min(i + CHUNK, n)
        b, tt = out[i:j], t[: j - i]
        np.subtract(p[i:j], 0.5, out=tf[: j - i], dtype=np.float64)  # sign bit set iff p < 1/2
        tt >>= 63
        np.invert(tt, out=tt)  # -1 where p >= 1/2, else 0
        b ^= tt
        b -= tt  # -bits where p >= 1/2
        tt &= 2 * HALF_BITS
        b += tt
    return out


def prob_decode(k: np.ndarray) -> np.ndarray:
    """Smallest probability whose key is >= k (for every k in [0, 2·bits(1/2)])."""
    k = np.asarray(k, dtype=np.int64)
    out = np.empty(k.shape[0])
    low = k <= HALF_BITS
    out[low] = k[low].view(np.float64)
    hk = k[~low]
    if hk.shape[0]:
        q = (2 * HALF_BITS - hk).view(np.float64)
        t = 1.0 - q
        up = prob_keys(t) < hk
        t[up] = np.nextafter(t[up], 2.0)
        prev = np.nextafter(t, 0.0)
        down = prob_keys(prev) >= hk
        t[down] = prev[down]
        out[~low] = t
    return out
