"""Bounded-memory ranking state: adaptive mergeable binned counts
(docs/definitions/ranking.md#bounded-memory).

It implements :class:`~streammetrics._scores.protocol.ScoreState`. Its parts: keys in
:mod:`streammetrics._scores.binned.keys`, batch validation in
:mod:`streammetrics._scores.binned.batches` (on the
shared :mod:`streammetrics._scores.batches`), array kernels in :mod:`streammetrics._scores.binned.arrays`,
``subtract`` / ``scale`` in :mod:`streammetrics._scores.binned.removal`, persistence in
:mod:`streammetrics._scores.binned.persist`; the certificates are in :mod:`streammetrics._scores.thresholds`.

Keys
----
See :mod:`streammetrics._scores.binned.keys`: every score maps to an order-preserving int64 key after a
declared transform; at shift 0 every bin is one distinct score and the state is exact.

Bins
----
Per column (binary: 1; one-vs-rest column per class or label) the state is a sparse map
``key >> shift -> (positive weight, negative weight)`` with at most ``capacity`` entries, stored
as sorted arrays. When a fold would exceed the capacity, the shift is raised to the smallest value
at which the column fits. The shift is therefore the smallest L with at most ``capacity`` distinct
``key >> L`` over the data seen -- a function of the multiset of inputs only -- so the state of a
stream split in any way and merged (align shifts, add, coarsen) is bit-for-bit the single-stream
state for unit or integer weights (float weights: the same bins, sums within rounding).

With ``thresholds=`` (fixed edges e_0 < ... < e_{T-1}) the key is the number of edges <= score,
bins never coarsen, and the state is a plain per-bin count.

Every bin is an interval of scores, so the counts at each bin's lower edge are the exact counts
of "score >= edge": curve points read from binned state are exact points of the true curve at
those thresholds; only the order *inside* a bin is lost, which the certificates of
:func:`~streammetrics._scores.thresholds.auroc_bounds` and :func:`~streammetrics._scores.thresholds.ap_bounds`
account for.

Folding a batch
---------------
A batch's keys (computed in ``prepare``, outside the lock; a multiclass batch in one pass over
all its scores) are shifted to the column's current resolution. When the stored and new keys
span at most about 2·(m + b) key values -- the steady state once the column is binned, also for
logits after cutting out the empty stretch around 0 -- their weights are summed into dense
slots (O(m + span), no sort) in a per-thread workspace that is reused between updates (it grows
with the batches seen, at most 16 MiB per thread in all; larger temporaries are freed after the
batch); otherwise (while the state is exact) the
keys are sorted and run-length encoded (O(m log m + b)). Either way the column is then the union
at that shift, coarsened only if it exceeds the capacity, so the result does not depend on the
path taken.

Removal and decay
-----------------
:meth:`BinnedScores.subtract` removes a sub-multiset of the samples (sliding windows) and
:meth:`BinnedScores.scale` multiplies every weight by a factor in [0, 1] (exponential decay).
Neither refines the bins: afterwards the state depends on its history, not only on the multiset
of remaining samples, but every bin is still an interval of scores, so the certificates hold.

Complexity: a fold of m scores into a column of b bins is O(m + b) on the dense path,
O(m log m + b) while exact; coarsening O(b log 64); reads O(b). Memory: 24 bytes per bin + 16
per column (the scratch workspace, at most 16 MiB per thread that has updated a bounded state,
is not per state and is not counted).
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any

import numpy as np

from streammetrics._core.load_checks import reserve
from streammetrics._core.params import Param, check_param
from streammetrics._core.state import State
from streammetrics._scores.batches import check_layout
from streammetrics._scores.protocol import ScoreState
from streammetrics._scores.thresholds import ThresholdCounts, auroc_certified, counts_from_bins

from .arrays import (
    PENDING_MIN,
    bits_to_fit,
    check_thresholds,
    coarsen,
    insert_sorted,
    insert_sorted_many,
    min_above,
    pair_runs,
    run_length,
    sub_above,
    union_sorted,
    workspace,
)
from .batches import BinBatches
from .keys import HALF_BITS, POS_INF_KEY, prob_decode, prob_keys, raw_decode, raw_keys
from .persist import BinPersistence
from .removal import BinRemoval

SCORE_TRANSFORMS = ("raw", "logit", "probability")
_SCORES = Param("choice", f"must be one of {SCORE_TRANSFORMS}", choices=SCORE_TRANSFORMS)
_MAX_BYTES = Param("int", "must be an int")
#: Bytes per bin (int64 key, float64 positive and negative weight) and per column (offset, shift).
BIN_BYTES = 24
COLUMN_BYTES = 16
#: The smallest number of bins per column a budget may give.
MIN_BINS = 16

#: apply: fold by ``bincount`` over the key span when span <= _DENSE_FACTOR·(new + stored) +
#: _DENSE_MIN (temporary memory 16 bytes per slot), else sort.
_DENSE_FACTOR = 2
_DENSE_MIN = 4096
#: Scores per block of columns keyed at once when folding a multiclass / multilabel batch.
_BLOCK = 1 << 18

class BinnedScores(BinRemoval, BinPersistence, BinBatches, ScoreState):
    """Adaptive (or fixed-edge) binned positive/negative weights per column (module docstring).

    ``max_bytes`` bounds the whole state (all columns); ``thresholds`` fixes the edges instead.
    """

    def __init__(
        self,
        task: str,
        num_classes: int | None = None,
        ignore_index: int | None = None,
        *,
        max_bytes: int | None = None,
        thresholds: Any = None,
        scores: str = "raw",
    ) -> None:
        self.task = task
        self.num_classes, self.ignore_index, self.n_columns = check_layout(task, num_classes, ignore_index)
        reserve(512.0 * self.n_columns, f"num_classes={self.num_classes}")
        scores = check_param(scores, "scores", _SCORES)
        self.scores = "raw" if scores == "logit" else scores
        if max_bytes is None and thresholds is None:
            raise ValueError("max_bytes: a binned state needs max_bytes= or thresholds=")
        self.edges: np.ndarray | None = None
        if thresholds is not None:
            self.edges = check_thresholds(thresholds)
            if self.scores != "raw":
                raise ValueError("scores: fixed thresholds= compare raw scores; leave scores='raw'")
        self.max_bytes: int | None = None
        cap = None
        if max_bytes is not None:
            self.max_bytes = check_param(max_bytes, "max_bytes", _MAX_BYTES)
            cap = (self.max_bytes - COLUMN_BYTES * (self.n_columns + 1)) // (BIN_BYTES * self.n_columns)
            if cap < MIN_BINS:
                need = BIN_BYTES * self.n_columns * MIN_BINS + COLUMN_BYTES * (self.n_columns + 1)
                raise ValueError(
                    f"max_bytes: {self.max_bytes} is too small for {self.n_columns} column(s); "
                    f"need at least {need}"
                )
        if self.edges is not None:
            nb = self.edges.shape[0] + 1
            if cap is not None and nb > cap:
                raise ValueError(
                    f"thresholds: {self.edges.shape[0]} thresholds need {nb} bins per column, "
                    f"max_bytes={self.max_bytes} allows {cap}"
                )
            cap = nb
        assert cap is not None
        self.capacity = int(cap)
        self.reset()

    # -- configuration --------------------------------------------------------------------------
    def key(self) -> Hashable:
        edges = None if self.edges is None else tuple(float(e) for e in self.edges)
        return (
            "binned_scores",
            self.task,
            self.num_classes,
            self.ignore_index,
            self.max_bytes,
            edges,
            self.scores,
        )

    def reset(self) -> None:
        k = self.n_columns
        self._keys: list[np.ndarray] = [np.zeros(0, dtype=np.int64) for _ in range(k)]
        self._pos: list[np.ndarray] = [np.zeros(0) for _ in range(k)]
        self._neg: list[np.ndarray] = [np.zeros(0) for _ in range(k)]
        self._shift = np.zeros(k, dtype=np.int64)
        #: per column, None or pending bins (keys, pos, neg) at the column's shift: sorted,
        #: disjoint from the stored keys, folded in by :meth:`_settle` (see :meth:`_merge_sorted`)
        self._pend: list[tuple[np.ndarray, np.ndarray, np.ndarray] | None] = [None] * k

    # -- keys ---------------------------------------------------------------------------------------
    def to_keys(
        self, s: np.ndarray, name: str = "y_score", check: bool = True, out: np.ndarray | None = None
    ) -> np.ndarray:
        """Order-preserving int64 keys of scores (validates the declared transform's range
        unless ``check=False``; ``out``: an int64 array of the same size to write them to, for
        the adaptive transforms). float32 scores are read as they are (widened exactly)."""
        s = np.asarray(s)
        if s.dtype != np.float32:
            s = s.astype(np.float64, copy=False)
        if self.edges is not None:
            return np.searchsorted(self.edges, s, "right").astype(np.int64)
        if self.scores == "probability":
            bad = (s < 0) | (s > 1) if check else None
            if bad is not None and bad.any():
                i = int(np.argmax(bad))
                raise ValueError(
                    f"{name}: scores='probability' needs scores in [0, 1]; got {float(s[i])!r} at index {i}"
                )
            return prob_keys(s, out)
        return raw_keys(s, out)

    def lower_edges(self, col: int) -> np.ndarray:
        """Per bin of ``col`` (increasing), the smallest score the bin can hold: the counts at
        this threshold (score >= edge) are exact."""
        self._settle()
        k = self._keys[col]
        if self.edges is not None:
            return np.concatenate([[-np.inf], self.edges])[k]
        lo = k << self._shift[col]
        return prob_decode(lo) if self.scores == "probability" else raw_decode(lo)

    def upper_edges(self, col: int) -> np.ndarray:
        """Per bin of ``col`` (increasing), the largest score the bin can hold: with
        :meth:`lower_edges`, the closed range of every score in the bin (the same array where
        the column is exact). +inf for a bin open above. O(b)."""
        self._settle()
        k = self._keys[col]
        if self.edges is not None:  # bin k holds [e_{k-1}, e_k): up to the float below e_k
            top = np.concatenate([self.edges, [np.inf]])[k]
            return np.where(top == np.inf, top, np.nextafter(top, -np.inf))
        shift = int(self._shift[col])
        if shift == 0:
            return self.lower_edges(col)
        top = np.iinfo(np.int64).max
        with np.errstate(over="ignore"):
            after = np.where(k >= (top >> shift), top, (k + 1) << shift)  # first key of the next bin
        if self.scores == "probability":  # the largest probability whose key is below ``after``
            below = np.nextafter(prob_decode(np.minimum(after, 2 * HALF_BITS)), -np.inf)
            return np.where(after > 2 * HALF_BITS, 1.0, below)
        return raw_decode(np.minimum(after - 1, POS_INF_KEY))  # keys past +inf's: NaNs, none a score

    def apply(self, delta: Any) -> None:
        if not delta:
            return
        if type(delta) is tuple:
            if delta[0] == "binary":  # ("binary", keys, labels, weights, min key, max key)
                self._apply_binary(0, *delta[1:])
                return
            _, sc, y, w, kmin, kmax = delta  # ("scores", ...): one-vs-rest per column
            n, c = sc.shape
            step = max(1, _BLOCK // max(n, 1))
            for c0 in range(0, c, step):  # key a block of columns in a reused workspace
                c1 = min(c, c0 + step)
                blk = workspace("block", (c1 - c0) * n, np.float64).reshape(c1 - c0, n)
                np.copyto(blk, sc[:, c0:c1].T)  # float32 widened here (exact), keyed as float64
                kb = self.to_keys(
                    blk.reshape(-1), check=False, out=workspace("block_keys", (c1 - c0) * n, np.int64)
                ).reshape(c1 - c0, n)
                for col in range(c0, c1):  # y: class per row, or a (column, row) label matrix
                    lab = y[col] if y.ndim == 2 else y == col
                    self._apply_binary(col, kb[col - c0], lab, w, int(kmin[col]), int(kmax[col]))
            return
        by_col: dict[int, list[tuple[int, np.ndarray, np.ndarray | None]]] = {}
        for col, grp, keys, w in delta:
            by_col.setdefault(col, []).append((grp, keys, w))
        for col, items in by_col.items():
            self._apply_column(col, items)

    def _dense_plan(
        self, col: int, ks: list[np.ndarray], m: int, lo: int | None = None, hi: int | None = None,
        coarse: bool = True,
    ) -> tuple[int, int, int, int] | None:
        """How to fold keys ``ks`` (at the column's shift; ``lo``/``hi`` their extremes if known)
        by ``bincount``: (lo, span, a, gap) with slot = key − lo, minus ``gap`` for keys above
        ``a`` (the largest empty stretch between stored keys, e.g. around 0 for logits), when
        the slots needed are at most _DENSE_FACTOR·(new + stored) + _DENSE_MIN; None: sort
        instead. O(m)."""
        keys = self._keys[col]
        nb = keys.shape[0]
        if lo is None or hi is None:
            lo = min(int(k.min()) for k in ks)
            hi = max(int(k.max()) for k in ks)
        if nb:
            lo, hi = min(lo, int(keys[0])), max(hi, int(keys[-1]))
        limit = _DENSE_FACTOR * (m + nb) + _DENSE_MIN
        if hi - lo < limit:
            return lo, hi - lo + 1, hi, 0
        if nb < 2 or not coarse:  # at shift 0 raw keys are too far apart to gain from a gap
            return None
        j = int(np.argmax(np.diff(keys.view(np.uint64))))  # exact: int64 gaps can exceed 2**63
        a, above = int(keys[j]), int(keys[j + 1])
        if above - a - 1 < hi - lo + 1 - limit:
            return None  # even an empty stretch would not make it dense enough
        for k in ks:
            above = min_above(k, a, above)
        gap = above - a - 1
        span = hi - lo + 1 - gap
        if gap <= 0 or span > limit:
            return None
        return lo, span, a, gap

    @staticmethod
    def _slots(
        k: np.ndarray, plan: tuple[int, int, int, int], shift: int = 0, own: bool = False
    ) -> np.ndarray:
        """Dense slot of each key ``k >> shift`` of a plan: a new array (``own``: may reuse
        ``k``, which the caller no longer needs). Branch-free, chunked for the gap."""
        lo, _, a, gap = plan
        if shift:
            idx = np.right_shift(k, shift)
        elif own:
            idx = k
        else:
            idx = k.copy()
        idx -= np.int64(lo)
        if gap:
            sub_above(idx, a - lo, gap)
        return idx

    def _store_dense(self, col: int, dp: np.ndarray, dn: np.ndarray, plan: tuple[int, int, int, int],
                     sh: int) -> None:
        """Set column ``col`` from per-slot weights of a plan (stored bins already added),
        coarsened to fit."""
        lo, span, a, gap = plan
        tot = np.add(dp, dn, out=workspace("tot", span, np.float64))
        occ = np.flatnonzero(np.greater(tot, 0.0, out=workspace("occupied", span, np.bool_)))
        p, n = dp[occ], dn[occ]
        uniq = occ
        uniq += np.int64(lo)
        if gap:
            uniq[np.searchsorted(uniq, a, "right"):] += np.int64(gap)
        self._store_fitted(col, uniq, p, n, sh)

    def _stored_slots(self, col: int, plan: tuple[int, int, int, int]) -> np.ndarray:
        """Dense slots of the stored bins of ``col`` (a workspace view)."""
        lo, _, a, gap = plan
        keys = self._keys[col]
        at = np.subtract(keys, np.int64(lo), out=workspace("stored", keys.shape[0], np.int64))
        if gap:
            at[np.searchsorted(keys, a, "right"):] -= np.int64(gap)
        return at

    def _apply_binary(
        self, col: int, keys: np.ndarray, y: np.ndarray, w: np.ndarray | None, kmin: int, kmax: int
    ) -> None:
        """Fold the keys of one column with boolean labels: dense -- the weights of (slot,
        label) pairs summed into a zeroed workspace -- or split by label and sorted
        (:meth:`_apply_column`)."""
        sh = int(self._shift[col])
        m = keys.shape[0]
        k = np.right_shift(keys, sh, out=workspace("slots", m, np.int64)) if sh else keys
        plan = (
            self._dense_plan(col, [k], m, kmin >> sh, kmax >> sh, sh > 0)
            if self._keys[col].shape[0] or sh
            else None
        )
        if plan is None and sh:  # keys >> sh < 2^62: sort (key, label) pairs as one int64
            k <<= 1
            k |= y
            self._merge_sorted(col, *pair_runs(k, w), sh, lazy=True)
            return
        if self._pend[col] is not None:  # the other paths read the stored bins: fold it first
            self._settle_column(col)
            plan = self._dense_plan(col, [k], m, kmin >> sh, kmax >> sh, sh > 0)
        if plan is None:
            items: list[tuple[int, np.ndarray, np.ndarray | None]] = []
            for grp, sel in ((0, ~y), (1, y)):
                if sel.any():
                    items.append((grp, keys[sel], None if w is None else w[sel]))
            self._apply_column(col, items)
            return
        if not sh:  # the workspace gets the slots, never the caller's keys
            k = workspace("slots", m, np.int64)
            np.copyto(k, keys)
        idx = self._slots(k, plan, own=True)
        idx <<= 1
        idx |= y
        span = plan[1]
        c = workspace("dense", 2 * span, np.float64)
        c.fill(0.0)
        np.add.at(c, idx, 1.0 if w is None else w)  # like bincount, into a reused buffer
        c2 = c.reshape(span, 2)
        dn, dp = c2[:, 0], c2[:, 1]
        if self._keys[col].shape[0]:
            at = self._stored_slots(col, plan)
            np.add.at(dp, at, self._pos[col])
            np.add.at(dn, at, self._neg[col])
        self._store_dense(col, dp, dn, plan, sh)

    def _apply_column(self, col: int, items: list[tuple[int, np.ndarray, np.ndarray | None]]) -> None:
        """Fold new keys into one column at its current shift, then coarsen if it overflows.

        Dense path (the steady state: the stored and new keys need at most a few times as many
        slots as they hold, see :meth:`_dense_plan`): one ``bincount`` per group over the slots,
        the stored bins added in, the occupied slots read back -- O(m + slots), no sort.
        Otherwise (e.g. while exact: raw float bits are sparse) each group is sorted and
        run-length encoded and the few distinct keys are folded with the stored bins:
        O(m log m + b). Both give the same bins (integer weights: the same sums exactly)."""
        self._settle_column(col)
        sh = int(self._shift[col])
        keys = self._keys[col]
        nb = keys.shape[0]
        shifted = [(grp, k >> sh if sh else k, w) for grp, k, w in items]
        plan = self._dense_plan(
            col, [k for _, k, _ in shifted], sum(k.shape[0] for _, k, _ in shifted), coarse=sh > 0
        )
        if plan is not None:
            span = plan[1]
            dense = [np.zeros(span), np.zeros(span)]  # negative, positive weight per slot
            for grp, k, w in shifted:
                dense[grp] += np.bincount(self._slots(k, plan, own=sh > 0), weights=w, minlength=span)
            dn, dp = dense
            if nb:
                at = self._stored_slots(col, plan)
                dp[at] += self._pos[col]
                dn[at] += self._neg[col]
            self._store_dense(col, dp, dn, plan, sh)
            return
        # sorted path: run-length encode each group of the batch (O(m log m)), then fold the
        # batch's few distinct keys into the stored sorted keys by a linear merge -- never a
        # sort of the stored bins (O(b) per batch, not O(b log b))
        runs = [(grp, *run_length(k, w)) for grp, k, w in shifted if k.shape[0]]
        if not runs:
            return
        if len(runs) == 1:
            grp, uk, sums = runs[0]
            z = np.zeros(uk.shape[0])
            up, un = (sums, z) if grp == 1 else (z, sums)
        else:
            uk = union_sorted([r[1] for r in runs])
            up, un = np.zeros(uk.shape[0]), np.zeros(uk.shape[0])
            for grp, k, sums in runs:
                (up if grp == 1 else un)[np.searchsorted(uk, k)] += sums  # k unique: no lost updates
        self._merge_sorted(col, uk, up, un, sh)

    def _merge_sorted(
        self, col: int, uk: np.ndarray, up: np.ndarray, un: np.ndarray, sh: int, lazy: bool = False
    ) -> None:
        """Fold distinct increasing keys ``uk`` (at the column's shift ``sh``) with weights
        ``up``/``un`` into column ``col``: keys already binned add in place, the others are
        inserted at their ``searchsorted`` positions (a linear merge of two sorted arrays); the
        column is then coarsened if it exceeds the capacity. The union at shift ``sh`` -- the
        same bins and sums as folding them in any other way. O(b + u log b).

        ``lazy`` (binned batches of the sorted path, where most keys hit stored bins): new keys
        go to a small sorted *pending* set of bins instead (O(p + u log b) per batch, no copy of
        the stored bins); it is folded in (:meth:`_settle_column`, O(b + p)) when it grows past
        1/16 of the stored bins, when the column overflows (then coarsened from the union, as
        always) and before anything reads the state. Stored and pending keys are disjoint and
        each bin's weight is summed in arrival order wherever it lives, so the state and its
        sums do not depend on when the pending set is folded; stored + pending bins never exceed
        the capacity, and ``nbytes`` counts both."""
        keys, pos, neg = self._keys[col], self._pos[col], self._neg[col]
        nb = keys.shape[0]
        if lazy and nb:
            at = np.searchsorted(keys, uk)
            idx = np.minimum(at, nb - 1)
            hit = keys[idx] == uk
            if hit.all():
                pos[idx] += up  # in place (the caller holds the state's lock); idx unique
                neg[idx] += un
                return
            ih = idx[hit]
            pos[ih] += up[hit]
            neg[ih] += un[hit]
            miss = ~hit
            uk, up, un = uk[miss], up[miss], un[miss]
            pend = self._pend[col]
            if pend is not None:
                pk, pp, pn = pend
                pat = np.searchsorted(pk, uk)
                pidx = np.minimum(pat, pk.shape[0] - 1)
                phit = pk[pidx] == uk
                jh = pidx[phit]
                pp[jh] += up[phit]
                pn[jh] += un[phit]
                if not phit.all():
                    pmiss = ~phit
                    pat = pat[pmiss]
                    pend = (insert_sorted(pk, pat, uk[pmiss]), insert_sorted(pp, pat, up[pmiss]),
                            insert_sorted(pn, pat, un[pmiss]))
            else:
                pend = (uk, up, un)
            self._pend[col] = pend
            np_ = pend[0].shape[0]
            if nb + np_ > self.capacity or np_ > max(PENDING_MIN, nb >> 4):
                self._settle_column(col)
                self._store_fitted(col, self._keys[col], self._pos[col], self._neg[col], sh)
            return
        self._settle_column(col)
        keys, pos, neg = self._keys[col], self._pos[col], self._neg[col]
        nb = keys.shape[0]
        if nb:
            at = np.searchsorted(keys, uk)
            idx = np.minimum(at, nb - 1)
            hit = keys[idx] == uk
            if hit.all():  # new arrays: arrays handed out by bins() are never changed
                pos, neg = pos.copy(), neg.copy()
                pos[idx] += up  # idx unique: no lost updates
                neg[idx] += un
                self._pos[col], self._neg[col] = pos, neg
                return
            miss = ~hit
            keys, pos, neg = insert_sorted_many((keys, pos, neg), at[miss], (uk[miss], up[miss], un[miss]))
            at_miss = at[miss]
            if not miss.all():
                ih = idx[hit]
                ih += np.searchsorted(at_miss, ih, "right")  # the stored bins' new places
                pos[ih] += up[hit]
                neg[ih] += un[hit]
        else:
            keys, pos, neg = uk, up, un
        self._store_fitted(col, keys, pos, neg, sh)

    def _store_fitted(
        self, col: int, keys: np.ndarray, pos: np.ndarray, neg: np.ndarray, shift: int
    ) -> None:
        """Store increasing unique ``keys`` (at ``shift``) with their weights as column ``col``,
        coarsened by the fewest bits that bring it within the capacity. O(b log 64)."""
        if keys.shape[0] > self.capacity:
            d = bits_to_fit(keys, self.capacity, 63 - shift)
            shift += d
            keys, pos, neg = coarsen(keys, pos, neg, d)
        self._keys[col], self._pos[col], self._neg[col] = keys, pos, neg
        self._shift[col] = shift

    def _settle_column(self, col: int) -> None:
        """Fold column ``col``'s pending bins into its stored bins (disjoint keys: an insertion,
        no sums). No coarsening: the union fits (checked when the pending set grows). O(b + p)."""
        pend = self._pend[col]
        if pend is None:
            return
        at = np.searchsorted(self._keys[col], pend[0])
        self._keys[col], self._pos[col], self._neg[col] = insert_sorted_many(
            (self._keys[col], self._pos[col], self._neg[col]), at, pend
        )
        self._pend[col] = None

    def _settle(self) -> None:
        """Fold every column's pending bins in (before any read of the bins)."""
        for col in range(self.n_columns):
            if self._pend[col] is not None:
                self._settle_column(col)

    def _fold(self, col: int, keys: np.ndarray, pos: np.ndarray, neg: np.ndarray, shift: int) -> None:
        """Set column ``col`` to the bins of (keys at ``shift``, weights), coarsened to fit."""
        uniq, inv = np.unique(keys, return_inverse=True)
        p = np.bincount(inv, weights=pos, minlength=uniq.shape[0])
        n = np.bincount(inv, weights=neg, minlength=uniq.shape[0])
        self._store_fitted(col, uniq, p, n, shift)

    def merge(self, other: State) -> None:
        assert isinstance(other, BinnedScores)
        self._settle()
        other._settle()
        for col in range(self.n_columns):
            sh = max(int(self._shift[col]), int(other._shift[col]))
            ka = self._keys[col] >> (sh - int(self._shift[col]))
            kb = other._keys[col] >> (sh - int(other._shift[col]))
            self._fold(
                col,
                np.concatenate([ka, kb]),
                np.concatenate([self._pos[col], other._pos[col]]),
                np.concatenate([self._neg[col], other._neg[col]]),
                sh,
            )

    # -- reads ------------------------------------------------------------------------------------------
    def bins(self, col: int) -> tuple[np.ndarray, np.ndarray]:
        """(positive, negative) weights per bin of ``col``, increasing score."""
        self._settle()
        return self._pos[col], self._neg[col]

    def column_exact(self, col: int) -> bool:
        """True when every bin of ``col`` is a single distinct score (shift 0, adaptive keys)."""
        return self.edges is None and int(self._shift[col]) == 0

    @property
    def is_exact(self) -> bool:
        return all(self.column_exact(c) for c in range(self.n_columns))

    def counts(self, column: int, *, positive_thresholds: bool = False) -> ThresholdCounts:
        """Exact counts at every bin's lower edge of ``column`` (decreasing), ``binned`` unless
        the column is exact (``positive_thresholds`` changes nothing: every edge is kept). O(b)."""
        p, n = self.bins(column)
        return counts_from_bins(p, n, self.lower_edges(column), not self.column_exact(column))

    def sorted_values(self, column: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Every non-empty bin of ``column`` at its lower edge, increasing, with the bin's own
        weight and positive weight -- not differences of the cumulative counts, which round
        (two samples of weight 1 read back as 2.0000000000000004, and a quantile edge on a
        cumulative weight of 2 moved to the next value). O(b)."""
        p, n = self.bins(column)
        v = np.asarray(self.lower_edges(column), dtype=np.float64)
        m = p + n
        keep = m > 0
        if keep.all():
            return v, m, np.array(p, dtype=np.float64)
        return v[keep], m[keep], p[keep]

    def pooled(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
        """All columns' bins aligned to the largest shift and added (micro averaging):
        (keys, pos, neg, shift), increasing."""
        self._settle()
        sh = int(self._shift.max()) if self.n_columns else 0
        keys = np.concatenate([self._keys[c] >> (sh - int(self._shift[c])) for c in range(self.n_columns)])
        uniq, inv = np.unique(keys, return_inverse=True)
        p = np.bincount(inv, weights=np.concatenate(self._pos), minlength=uniq.shape[0])
        n = np.bincount(inv, weights=np.concatenate(self._neg), minlength=uniq.shape[0])
        return uniq, p, n, sh

    def _pooled_exact(self, sh: int) -> bool:
        return self.edges is None and sh == 0

    def pooled_counts(self, *, positive_thresholds: bool = False) -> ThresholdCounts:
        """Counts of every column's bins pooled at the coarsest shift (micro averaging). O(b)."""
        uniq, p, n, sh = self.pooled()
        if self.edges is not None:
            thr = np.concatenate([[-np.inf], self.edges])[uniq]
        else:
            lo = uniq << sh
            thr = prob_decode(lo) if self.scores == "probability" else raw_decode(lo)
        return counts_from_bins(p, n, thr, not self._pooled_exact(sh))

    def sample_count(self) -> float:
        """Total weight in column 0's bins, positive and negative (every sample of a binary or
        multiclass task). O(b)."""
        p, n = self.bins(0)
        return float(p.sum()) + float(n.sum())

    def support(self) -> np.ndarray:
        """Positive weight of every column, shape (K,). O(b)."""
        return np.array([float(self.bins(c)[0].sum()) for c in range(self.n_columns)])

    def auroc(self, column: int) -> tuple[float, float, float]:
        """(estimate, low, high) of ``column``'s AUROC:
        :func:`streammetrics._scores.thresholds.auroc_certified` over its bins; (v, v, v) when the
        column is exact. O(b)."""
        p, n = self.bins(column)
        return auroc_certified(p, n, self.column_exact(column))

    def pooled_auroc(self) -> tuple[float, float, float]:
        """(estimate, low, high) of the AUROC of every column pooled (micro), as :meth:`auroc`."""
        _, p, n, sh = self.pooled()
        return auroc_certified(p, n, self._pooled_exact(sh))

    @property
    def nbytes(self) -> int:
        return int(
            sum(
                a.nbytes + b.nbytes + c.nbytes
                for a, b, c in zip(self._keys, self._pos, self._neg, strict=True)
            )
            + sum(3 * p[0].nbytes for p in self._pend if p is not None)
            + COLUMN_BYTES * (self.n_columns + 1)
        )

    def copy(self) -> BinnedScores:
        self._settle()
        out = BinnedScores.__new__(BinnedScores)
        out.__dict__.update(self.__dict__)
        out._keys = [a.copy() for a in self._keys]
        out._pos = [a.copy() for a in self._pos]
        out._neg = [a.copy() for a in self._neg]
        out._shift = self._shift.copy()
        out._pend = [None] * self.n_columns
        return out
