"""Prototype (not library code): structures for an exact AUROC / AP read after every batch.

Run ``python -m benchmarks.proto_reads [--n 10000000] [--batch 10000] [--rounds 2] [--check]``
(issue 32 item 5; ``benchmarks.bench_reads`` gives the targets). In one process, rounds
interleaved, CPU seconds (``time.process_time``), on ``bench_ranking.binary_data``:

* ``lib once`` / ``lib every``: the library's AUROC / AP streamed and read once / after every
  batch, on the compiled path: the reference of every contender;
* idea (1) ``buckets``: fixed bucket edges (quantiles of the first batch), per-bucket per-class
  counts with their prefix sums rebuilt after every batch (O(B) per batch), every score kept
  unsorted in its bucket (a pool of growable per-bucket slots), a new score's exact pair count
  = the other class's count below its bucket + one linear scan of the other class in its
  bucket; no merge at all (``--check``: the pair count equals the library's after every batch);
* idea (2) fold ratios: the library's AUROC / AP read after every batch with other
  ``RATIO_FOLD`` / ``RATIO_BUSY`` (fewer runs to rank in against more merging);
* idea (3) the bound of ranking every run at once (fractional cascading): the ranking cost per
  needle in the largest run of each class against the other runs (cascading can only save the
  latter), and a finer two-level index (every 8th value, then one cache line);
* idea (4) the AP read floor: one pass over D distinct positive thresholds, with int64 and
  int32 counts: the terms written then ``np.sum`` (the library before this branch), a chunked
  variant (prefix sums into a small buffer, then a vectorised division loop), and the
  library's ``ap_sum`` (numpy's pairwise summation replicated, no array of terms); same bits.

Measured at 1e7 (batches of 10k, 2-core machine shared with other jobs; load 6-10), numba path:
AUROC once 0.24 s, every 1.6-1.9 s (ranking 0.93 s: 9k negatives per batch in the ~1M-score
positive run at ~60-70 ns each, 1k positives in the 8M / 1M / 54k negative runs at ~130 / 80 /
45 ns; merging 0.40 s: 17 moves per score at ~1.5-2 ns); buckets 2.8-4 s (scattered inserts and
bucket scans miss the cache: ~120 ns per insert, ~95 ns per score for the scans); fold ratios
(4..32, 8..32) 1.60-1.88 s, none below 6.5x once; cascading bound: the largest runs alone cost
0.75 s (3x once); coarse-8 index 55 vs 58 ns per needle. AP read: 3.9 ns (int64) / 2.3 ns
(int32) per threshold in isolation, ~2.8 ns in the stream (the arrays cold): 1.4 s for the 1000
reads alone = 5.5x once. Neither 2x (AUROC) nor 4x (AP) is reachable by these structures here.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numba
import numpy as np

import streammetrics as sm
from benchmarks.bench_ranking import binary_data
from streammetrics._scores.exact import buffer as exact_buffer
from streammetrics._scores.exact import numba_kernels as nk
from streammetrics._scores.exact import numba_search as nsearch
from streammetrics._scores.exact.merge_count import compiled_kernels
from streammetrics._scores.exact.runs import coarse_index

_jit = numba.njit(cache=True, nogil=True, boundscheck=False)


# ---------------------------------------------------------------- idea (1): bucketed counts
@_jit
def _bucket_of(edges, x, out):  # pragma: no cover - compiled
    """searchsorted(edges, x, 'right') for ascending x: each search gallops from the previous
    answer (the library's ``numba_search.upper_bound``; from 0 after a smaller x)."""
    b = 0
    n = edges.shape[0]
    for k in range(x.shape[0]):
        if k and x[k] < x[k - 1]:
            b = 0
        b = nsearch.upper_bound(edges, x[k], b, n)
        out[k] = b


@_jit
def _scan2(pool, start, m, x):  # pragma: no cover - compiled
    """2 #(pool[start:start+m] < x) + #(== x)."""
    c = 0
    for i in range(start, start + m):
        v = pool[i]
        c += (v < x) + (v <= x)
    return c


@_jit
def _fold(edges, x, bx, other_pool, other_start, other_len, other_cum, sign_pos):  # pragma: no cover
    """Doubled pairs of needles x (buckets bx) against the other class's stored scores:
    positives count 2#(neg < x) + #(neg == x); negatives count the same against positives
    (the caller turns it into pairs of stored positives above)."""
    s = 0
    for k in range(x.shape[0]):
        b = bx[k]
        s += 2 * other_cum[b] + _scan2(other_pool, other_start[b], other_len[b], x[k])
    return s


@_jit
def _insert(pool, start, length, cap, end, x, bx):  # pragma: no cover - compiled
    """Append each x to its bucket's slot; a full slot moves to the pool's end with twice the
    room. Returns the new end, or -1 when the pool is full (the caller compacts and retries)."""
    for k in range(x.shape[0]):
        b = bx[k]
        if length[b] == cap[b]:
            nc = max(8, 2 * cap[b])
            if end + nc > pool.shape[0]:
                return -(k + 1)
            s0 = start[b]
            for i in range(length[b]):
                pool[end + i] = pool[s0 + i]
            start[b] = end
            cap[b] = nc
            end += nc
        pool[start[b] + length[b]] = x[k]
        length[b] += 1
    return end


@_jit
def _compact(pool, start, length, cap, new_pool, slack):  # pragma: no cover - compiled
    """Copy every bucket into ``new_pool`` in bucket order with room ``len * slack + 8``."""
    end = 0
    for b in range(start.shape[0]):
        nc = int(length[b] * slack) + 8
        s0 = start[b]
        for i in range(length[b]):
            new_pool[end + i] = pool[s0 + i]
        start[b] = end
        cap[b] = nc
        end += nc
    return end


class BucketClass:
    """One class's scores in buckets (unsorted inside a bucket)."""

    def __init__(self, nb: int, expect: int) -> None:
        self.pool = np.empty(max(1 << 16, expect), dtype=np.float64)
        self.start = np.zeros(nb, dtype=np.int64)
        self.len = np.zeros(nb, dtype=np.int64)
        self.cap = np.zeros(nb, dtype=np.int64)
        self.end = 0
        self.cum = np.zeros(nb + 1, dtype=np.int64)  # stored below bucket b

    def insert(self, x: np.ndarray, bx: np.ndarray) -> None:
        while True:
            r = _insert(self.pool, self.start, self.len, self.cap, self.end, x, bx)
            if r >= 0:
                self.end = r
                break
            done = -r - 1
            x, bx = x[done:], bx[done:]
            total = int(self.len.sum()) + x.shape[0]
            new = np.empty(int(total * 1.25) + 8 * self.len.shape[0] + x.shape[0] * 2, dtype=np.float64)
            self.end = _compact(self.pool, self.start, self.len, self.cap, new, 1.125)
            self.pool = new
        np.cumsum(self.len, out=self.cum[1:])


class Buckets:
    def __init__(self, nbuckets: int, first: np.ndarray, expect: int) -> None:
        q = np.quantile(first, np.linspace(0, 1, nbuckets + 1)[1:-1])
        self.edges = np.unique(q)  # distinct edges: ties of the sample give fewer buckets
        nb = self.edges.shape[0] + 1
        self.cls = [BucketClass(nb, int(expect * 0.9 * 1.15)), BucketClass(nb, int(expect * 0.1 * 1.15))]
        self.u2 = 0
        self.n = [0, 0]

    def update(self, pos: np.ndarray, neg: np.ndarray) -> int:
        """pos, neg sorted. Returns u2 (exact int)."""
        neg_c, pos_c = self.cls
        bp = np.empty(pos.shape[0], dtype=np.int64)
        bn = np.empty(neg.shape[0], dtype=np.int64)
        _bucket_of(self.edges, pos, bp)
        _bucket_of(self.edges, neg, bn)
        d = _fold(self.edges, pos, bp, neg_c.pool, neg_c.start, neg_c.len, neg_c.cum, True)
        # a new negative y: pairs with stored positives above = 2P - (2#(pos < y) + #(pos == y))
        d += 2 * self.n[1] * neg.shape[0] - _fold(self.edges, neg, bn, pos_c.pool, pos_c.start,
                                                  pos_c.len, pos_c.cum, False)
        # pairs inside the batch
        d += int(np.searchsorted(neg, pos, "left").sum() + np.searchsorted(neg, pos, "right").sum())
        self.u2 += int(d)
        neg_c.insert(neg, bn)
        pos_c.insert(pos, bp)
        self.n[0] += neg.shape[0]
        self.n[1] += pos.shape[0]
        return self.u2


def run_buckets(y: np.ndarray, s: np.ndarray, batch: int, nbuckets: int,
                check: list[int] | None = None) -> float:
    bk: Buckets | None = None
    out = 0.0
    for i in range(0, y.shape[0], batch):
        yb, sb = y[i:i + batch], s[i:i + batch]
        pos = np.sort(sb[yb == 1])
        neg = np.sort(sb[yb == 0])
        if bk is None:
            bk = Buckets(nbuckets, sb, y.shape[0])
        u2 = bk.update(pos, neg)
        out = u2 / (2 * bk.n[0] * bk.n[1])
        if check is not None:
            check.append(u2)
    return out


def lib_stream(y: np.ndarray, s: np.ndarray, batch: int, every: bool,
               check: list[int] | None = None, cls: type = sm.AUROC) -> float:
    m = cls()
    for i in range(0, y.shape[0], batch):
        m.update(y[i:i + batch], s[i:i + batch])
        if every:
            m.compute()
            if check is not None:
                check.append(m._state.binary_stat()[0])
    return float(m.compute())


# ---------------------------------------------------------------- idea (3): ranking bounds
@_jit
def _two_level_count2(v, c8, c512, x):  # pragma: no cover - compiled
    """sum of left + right ranks of ascending x in v through every 512th value, then every 8th
    (level-wise for all needles), then one cache line of v."""
    n, m, n8 = v.shape[0], x.shape[0], c8.shape[0]
    pos = np.empty(m, np.int64)
    j = 0
    for k in range(m):
        t = x[k]
        if k and t < x[k - 1]:
            j = 0
        j = nsearch._lower(c512, t, j, c512.shape[0])
        pos[k] = j * 64
    step = 32
    while step >= 1:
        for k in range(m):
            i = min(pos[k] + step - 1, n8 - 1)
            if c8[i] < x[k]:
                pos[k] += step
        step //= 2
    s = 0
    for k in range(m):
        t = x[k]
        p = min(pos[k], n8)
        if p < n8 and c8[p] < t:
            p += 1
        base = p * 8
        c = 0
        for i in range(base, min(base + 8, n)):
            c += v[i] < t
        lo = base + c
        r = lo
        if lo < n and v[lo] == t:
            r = nsearch.upper_bound(v, t, lo, n)
        s += lo + r
    return s


def rank_costs(reps: int = 100) -> dict[str, float]:
    """ns per needle of the library's ranking kernel in runs of the 1e7 stream's final sizes,
    and of the two-level index in the largest ones."""
    rng = np.random.default_rng(5)
    out: dict[str, float] = {}
    for nrun, nneed, mu_run, mu_need in ((972_000, 9_000, 0.5, 0.0), (27_700, 9_000, 0.5, 0.0),
                                         (7_965_000, 1_000, 0.0, 0.5), (981_000, 1_000, 0.0, 0.5),
                                         (54_000, 1_000, 0.0, 0.5)):
        v = np.sort(rng.standard_normal(nrun) + mu_run)
        xs = [np.sort(rng.standard_normal(nneed) + mu_need) for _ in range(reps)]
        co = coarse_index(v)
        co = np.empty(0) if co is None or 32 * nneed >= nrun else co
        nk.count2_units(v, co, xs[0])
        t = time.process_time()
        ref = [nk.count2_units(v, co, x) for x in xs]
        out[f"rank {nneed} needles in a run of {nrun}"] = (time.process_time() - t) / (reps * nneed) * 1e9
        if nrun > 900_000:
            c8 = v[7::8].copy()
            c512 = c8[63::64].copy()
            _two_level_count2(v, c8, c512, xs[0])
            t = time.process_time()
            got = [_two_level_count2(v, c8, c512, x) for x in xs]
            out[f"  two-level index, run of {nrun}"] = (time.process_time() - t) / (reps * nneed) * 1e9
            assert got == ref
    return out


# ---------------------------------------------------------------- idea (4): the AP read floor
_C = 256


@_jit
def ap_terms_ref(pw, nb, sa, sc, sh, total_pos, step):  # pragma: no cover - compiled
    """The library's read before ``numba_kernels.ap_sum``: every term written to ``step``
    (then ``np.sum``)."""
    p, s = pw.shape[0], sa.shape[0]
    j = 0
    tp = 0
    fp = 0
    o = 0
    prev = 0.0
    for i in range(p):
        while j < s and sa[j] <= i:
            tp += sc[j]
            step[o], prev = nk._ap_term(tp, sh[j], total_pos, prev, o)
            o += 1
            j += 1
        tp += pw[i]
        fp += nb[i]
        step[o], prev = nk._ap_term(tp, fp, total_pos, prev, o)
        o += 1
    while j < s:
        tp += sc[j]
        step[o], prev = nk._ap_term(tp, sh[j], total_pos, prev, o)
        o += 1
        j += 1
    return o


@_jit
def ap_terms_chunked(pw, nb, sa, sc, sh, total_pos, step):  # pragma: no cover - compiled
    """``numba_kernels.ap_terms`` (same bits): the running counts of a chunk of thresholds into
    small buffers, then the two divisions of the chunk in a loop that vectorises."""
    p, s = pw.shape[0], sa.shape[0]
    tpf = np.empty(_C, np.float64)
    den = np.empty(_C, np.float64)
    rec = np.empty(_C + 1, np.float64)
    j = 0
    tp = 0
    fp = 0
    o = 0
    i = 0
    prev = 0.0
    while o < p + s:
        c = 0
        while c < _C and (i < p or j < s):
            if j < s and (i >= p or sa[j] <= i):
                tp += sc[j]
                tpf[c] = tp
                den[c] = sh[j] + tp
                j += 1
            else:
                tp += pw[i]
                fp += nb[i]
                tpf[c] = tp
                den[c] = fp + tp
                i += 1
            c += 1
        rec[0] = prev
        for q in range(c):
            rec[q + 1] = tpf[q] / total_pos
        for q in range(c):
            step[o + q] = (rec[q + 1] - rec[q]) * (tpf[q] / den[q])
        if o == 0:
            step[0] = rec[1] * (tpf[0] / den[0])
        prev = rec[c]
        o += c
    return o


def ap_read_costs(d: int = 1_000_000, reps: int = 20) -> dict[str, float]:
    """ns per threshold of one AP read over d kept thresholds (no pending ones): the terms
    written then ``np.sum`` (the library before), chunked divisions then ``np.sum``, and
    the library's ``ap_sum`` (no array of terms), with int64 and int32 counts."""
    rng = np.random.default_rng(3)
    pw = rng.integers(1, 3, d)
    nb = rng.integers(0, 20, d)
    none = np.zeros(0, np.int64)
    total = float(pw.sum())
    out: dict[str, float] = {}
    sums = set()
    for dt in (np.int64, np.int32):
        a, b = pw.astype(dt), nb.astype(dt)
        step = np.empty(d)
        for name, f in (("terms + np.sum", ap_terms_ref), ("chunked + np.sum", ap_terms_chunked),
                        ("ap_sum", None)):
            def read(f=f, a=a, b=b, step=step) -> float:  # type: ignore[no-untyped-def]
                if f is None:
                    return float(nk.ap_sum(a, b, none, none, none, total))
                f(a, b, none, none, none, total, step)
                return float(np.sum(step))
            read()
            t = time.process_time()
            for _ in range(reps):
                sums.add(read())
            out[f"AP read, {name}, {np.dtype(dt).name} counts"] = (time.process_time() - t) / (reps * d) * 1e9
    assert len(sums) == 1  # every variant: the same value, bit for bit
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=10_000_000)
    ap.add_argument("--batch", type=int, default=10_000)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--buckets", type=str, default="4096,65536")
    ap.add_argument("--ratios", type=str, default="8:16,4:16,16:16,8:32,16:32,32:32")
    ap.add_argument("--check", action="store_true", help="bucket pair counts equal the library's")
    args = ap.parse_args()
    y, s = binary_data(args.n)
    b = args.batch
    nbs = [int(x) for x in args.buckets.split(",") if x]
    ratios = [tuple(int(v) for v in r.split(":")) for r in args.ratios.split(",") if r]
    with compiled_kernels(True, min_size=0):
        for cls in (sm.AUROC, sm.AveragePrecision):
            lib_stream(y[:50_000], s[:50_000], b, True, cls=cls)
    run_buckets(y[:50_000], s[:50_000], b, 1024)
    if args.check:
        with compiled_kernels(True):
            ref: list[int] = []
            lib_stream(y, s, b, True, ref)
        for nbk in nbs:
            got: list[int] = []
            run_buckets(y, s, b, nbk, got)
            print(f"buckets={nbk}: pair count equal to the library's after every batch: {got == ref}")
    res: dict[str, list[float]] = {}

    def timed(name: str, fn) -> None:  # type: ignore[no-untyped-def]
        t = time.process_time()
        fn()
        res.setdefault(name, []).append(time.process_time() - t)

    fold = (exact_buffer.RATIO_FOLD, exact_buffer.RATIO_BUSY)
    for _ in range(args.rounds):
        timed("np.sort", lambda: np.sort(s))
        with compiled_kernels(True):
            for cls in (sm.AUROC, sm.AveragePrecision):
                nm = cls.__name__
                timed(f"lib {nm} once", lambda c=cls: lib_stream(y, s, b, False, cls=c))
                timed(f"lib {nm} every", lambda c=cls: lib_stream(y, s, b, True, cls=c))
            for nbk in nbs:
                timed(f"(1) buckets {nbk}: AUROC every", lambda k=nbk: run_buckets(y, s, b, k))
            for r in ratios:
                exact_buffer.RATIO_FOLD, exact_buffer.RATIO_BUSY = r
                try:
                    for cls in (sm.AUROC, sm.AveragePrecision):
                        timed(f"(2) ratios {r[0]}/{r[1]}: {cls.__name__} every",
                              lambda c=cls: lib_stream(y, s, b, True, cls=c))
                finally:
                    exact_buffer.RATIO_FOLD, exact_buffer.RATIO_BUSY = fold
    once = statistics.median(res["lib AUROC once"])
    once_ap = statistics.median(res["lib AveragePrecision once"])
    for k, v in res.items():
        ref_once = once_ap if "AveragePrecision" in k else once
        print(f"{k:44s} {statistics.median(v):7.3f} s CPU  {statistics.median(v) / args.n * 1e9:6.1f} ns/score"
              f"  {statistics.median(v) / ref_once:5.2f}x once", flush=True)
    for k, ns in {**rank_costs(), **ap_read_costs()}.items():
        print(f"(3)/(4) {k:52s} {ns:6.1f} ns", flush=True)


if __name__ == "__main__":
    main()
