"""Read costs of the exact ranking metrics against their targets, every ratio from one run.

Run ``python -m benchmarks.bench_reads [--n 2000000] [--batch 10000] [--rounds 3] [--memory] [--rss]
[--oneshot] [--no-reads]``.

In one process, round after round (so every ratio compares timings taken under the same load),
on seeded binary data (10% positives, N(0, 1) + 0.5 for positives):

* ``np.sort`` of the whole score array: the reference of the stream target;
* AUROC and AP (``AveragePrecision``): stream the scores in batches and read once at the end,
  and the same with a read after every batch; a repeated read with no update in between;
* macro one-vs-rest AUROC with 10 classes (200k rows in batches of 1k) and 1000 classes (1k rows
  in batches of 100), read once or after every batch;
* bounded states (``max_bytes=``) of AUROC and AP, read once or after every batch.

Both kernel paths side by side, interleaved in each round: ``numpy`` (the default without the
``fast`` extra) and ``numba`` (the compiled kernels of :mod:`streammetrics._scores.exact.merge_count`, when
numba is installed); ``--path`` keeps one. Ratios are of CPU seconds (``time.process_time``:
the machine may be shared); the median over the rounds of each ratio is printed with the
target (issue 32), beside the median CPU and wall seconds of the measure. ``--memory`` adds
numpy's traced peak (``tracemalloc``) per score while streaming AUROC + AP in one ``MetricSet``
and reading once, or after every batch; ``--rss`` the same stream's peak resident memory above
the process's own before it (``VmHWM``, Linux), each in a fresh process, measured from a start
where the warm-up's freed heap went back to the system (glibc ``malloc_trim``), so the figure
counts the metric's memory only. ``--oneshot`` first
times one-shot ``streammetrics.functional.roc_auc_score`` / ``average_precision_score`` against
scikit-learn's (with and without weights, on each kernel path: the target is >= 5x without
numba); ``--no-reads`` skips the read timings. The load average is printed before and after.
Each round's row is printed the moment it is measured (``round 2/3 [numpy] ...``), then the
summary of the rounds: a run cut short keeps the rounds it finished.
"""

from __future__ import annotations

import argparse
import ctypes
import ctypes.util
import functools
import gc
import os
import statistics
import subprocess
import sys
import time
import tracemalloc
import warnings
from collections.abc import Callable

import numpy as np

if __package__ in (None, ""):
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import streammetrics as sm  # noqa: E402
from benchmarks._harness import Report  # noqa: E402
from benchmarks.bench_ranking import binary_data  # noqa: E402
from streammetrics._scores.exact.merge_count import compiled_kernels, kernels  # noqa: E402

#: Wall seconds of the last :func:`_cpu` call (printed beside the CPU seconds).
_WALL: list[float] = [0.0]


def _reads(m: sm.AUROC | sm.AveragePrecision, k: int) -> list[object]:
    """``k`` reads of ``m`` with no update between them (the repeated-read case)."""
    return [m.compute() for _ in range(k)]


def _cpu(fn: Callable[[], object]) -> float:
    """CPU seconds of ``fn()``; its wall seconds go to ``_WALL[0]``."""
    c, w = time.process_time(), time.perf_counter()
    fn()
    _WALL[0] = time.perf_counter() - w
    return time.process_time() - c


def stream(make: Callable[[], sm.Metric], y: np.ndarray, s: np.ndarray, batch: int, every: bool) -> float:
    """Feed ``y``, ``s`` in batches of ``batch`` rows; read after every batch or once."""
    m = make()
    for i in range(0, y.shape[0], batch):
        m.update(y[i : i + batch], s[i : i + batch])
        if every:
            m.compute()
    return float(np.mean(m.compute()))


def once_and_every(make: Callable[[], sm.Metric], y: np.ndarray, s: np.ndarray,
                   batch: int) -> tuple[float, float, float, float]:
    """CPU seconds of :func:`stream` reading once, then reading after every batch, and the wall
    seconds of each."""
    once = _cpu(lambda: stream(make, y, s, batch, False))
    w_once = _WALL[0]
    every = _cpu(lambda: stream(make, y, s, batch, True))
    return once, every, w_once, _WALL[0]


def multiclass_data(n: int, k: int, seed: int = 7) -> tuple[np.ndarray, np.ndarray]:
    """``n`` rows of ``k`` classes: softmax of N(0, 1) logits + 1 on the true class (float64)."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, k, n)
    z = rng.standard_normal((n, k))
    z[np.arange(n), y] += 1.0
    z = np.exp(z - z.max(axis=1, keepdims=True))
    return y, z / z.sum(axis=1, keepdims=True)


def peak_bytes_per_score(y: np.ndarray, s: np.ndarray, batch: int, every: bool) -> float:
    """numpy's traced peak while streaming AUROC + AP (one shared state) and reading them (once
    at the end, or after every batch), per score; the input arrays are not counted."""
    tracemalloc.start()
    ms = sm.MetricSet({"auroc": sm.AUROC(), "ap": sm.AveragePrecision()})
    for i in range(0, y.shape[0], batch):
        ms.update(y[i : i + batch], s[i : i + batch])
        if every:
            ms.compute()
    ms.compute()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return peak / y.shape[0]


def _status_bytes(field: str) -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field):
                return int(line.split()[1]) * 1024
    raise OSError(f"{field} not in /proc/self/status")


def _trim_heap() -> bool:
    """Hand the heap's free memory back to the system (glibc's ``malloc_trim(0)``: the free top
    of the heap and the free pages inside it), so that resident memory counts only what is in
    use. False where there is no glibc (the memory the warm-up freed then stays resident, and
    a later allocation that reuses it does not show in the peak above the start)."""
    name = ctypes.util.find_library("c")
    try:
        trim = ctypes.CDLL(name).malloc_trim if name else None
    except (OSError, AttributeError):
        trim = None
    if trim is None:
        return False
    trim.argtypes, trim.restype = [ctypes.c_size_t], ctypes.c_int
    trim(0)
    return True


def rss_child(n: int, batch: int, every: bool, path: str) -> None:
    """In a fresh process: the peak resident memory of streaming AUROC + AP (one shared state)
    above the process's resident memory once the data is made and the kernels warm, per score
    (the heap the warm-up freed is given back to the system and the high-water mark reset
    first); prints one line: the peak and the end per score, and 1 if the heap was trimmed."""
    y, s = binary_data(n)
    with compiled_kernels(path == "numba", min_size=0):  # every kernel the stream uses compiled
        for cls in (sm.AUROC, sm.AveragePrecision):  # (runs of 256k+ take the coarse-index ones)
            stream(cls, y[:600_000], s[:600_000], batch, True)
    gc.collect()
    trimmed = _trim_heap()
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")  # reset VmHWM to the current resident memory
    start = _status_bytes("VmRSS:")
    with compiled_kernels(path == "numba"):
        ms = sm.MetricSet({"auroc": sm.AUROC(), "ap": sm.AveragePrecision()})
        for i in range(0, n, batch):
            ms.update(y[i : i + batch], s[i : i + batch])
            if every:
                ms.compute()
        ms.compute()
    print(f"{(_status_bytes('VmHWM:') - start) / n:.1f} {(_status_bytes('VmRSS:') - start) / n:.1f} {int(trimmed)}")


def oneshot(n: int, rounds: int, paths: list[str]) -> None:
    """One-shot ``streammetrics.functional.roc_auc_score`` / ``average_precision_score`` against
    scikit-learn's at ``n`` samples (bench_functional's binary workload: 30 % positives, scores
    N(0, 1) + 1 for positives rounded to 1e-4), without and with random weights, on each kernel
    path, alternating the calls in each round; prints the median of scikit-learn's CPU seconds
    over ours (the target: >= 5x without numba), beside the median CPU and wall seconds of ours."""
    import sklearn.metrics as skm

    import streammetrics.functional as F

    rng = np.random.default_rng(20261125)
    y = (rng.random(n) < 0.3).astype(np.int64)
    s = np.round(rng.normal(size=n) + y, 4)
    w = rng.random(n)
    for path in paths:  # warm-up (numba's first call loads its kernels)
        with compiled_kernels(path == "numba", min_size=0):
            for name in ("roc_auc_score", "average_precision_score"):
                for weights in (None, w[:50_000]):
                    getattr(F, name)(y[:50_000], s[:50_000], sample_weight=weights)
    print(f"one-shot functional vs scikit-learn, n={n:,}, {rounds} rounds (CPU-time ratios); load "
          f"{' / '.join(f'{x:.1f}' for x in os.getloadavg())}", flush=True)
    for name in ("roc_auc_score", "average_precision_score"):
        for weights in (None, w):
            ratio: dict[str, list[float]] = {p: [] for p in paths}
            cpu: dict[str, list[float]] = {p: [] for p in paths}
            wall: dict[str, list[float]] = {p: [] for p in paths}
            for _ in range(rounds):
                t_ref = _cpu(functools.partial(getattr(skm, name), y, s, sample_weight=weights))
                for path in paths:
                    with compiled_kernels(path == "numba"):
                        t = _cpu(functools.partial(getattr(F, name), y, s, sample_weight=weights))
                    ratio[path].append(t_ref / t)
                    cpu[path].append(t)
                    wall[path].append(_WALL[0])
            for path in paths:
                med = statistics.median(ratio[path])
                print(f"  [{path}] {name}{' +w' if weights is not None else ''}: {med:.2f}x "
                      f"({min(ratio[path]):.2f}-{max(ratio[path]):.2f}; ours {statistics.median(cpu[path]):.3f} s "
                      f"CPU, {statistics.median(wall[path]):.3f} s wall)"
                      + (f"  target >= 5x: {'met' if med >= 5 else 'NOT met'}" if path == "numpy" else ""),
                      flush=True)


def main(argv: list[str] | None = None) -> str:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=2_000_000)
    ap.add_argument("--batch", type=int, default=10_000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--memory", action="store_true")
    ap.add_argument("--rss", action="store_true", help="peak resident memory, fresh processes (Linux)")
    ap.add_argument("--rss-child", choices=["once", "every"], help=argparse.SUPPRESS)
    ap.add_argument("--no-extra", action="store_true", help="binary AUROC / AP only")
    ap.add_argument("--oneshot", action="store_true",
                    help="one-shot functional AUROC / AP against scikit-learn at --n")
    ap.add_argument("--no-reads", action="store_true", help="skip the read timings (with --rss, --oneshot)")
    ap.add_argument("--path", choices=["numpy", "numba", "both"], default="both",
                    help="kernel path(s) to time (numba: the 'fast' extra)")
    args = ap.parse_args(argv)
    if args.rss_child:
        rss_child(args.n, args.batch, args.rss_child == "every", args.path)
        return ""
    rep = Report()  # each line printed (flushed) as it is measured
    paths = ["numpy", "numba"] if args.path == "both" else [args.path]
    if "numba" in paths and kernels() is None:
        rep.emit("numba is not installed: the numpy path only")
        paths = ["numpy"]
    n, b = args.n, args.batch
    y, s = binary_data(n)
    warnings.simplefilter("ignore")  # classes absent from the first batches (nan, then filled)
    mc = {k: multiclass_data(rows, k) for k, rows in ((10, 200_000), (1000, 1_000))}
    mc_batch = {10: 1_000, 1000: 100}  # 200 batches (2M scores) / 10 batches (1M scores)
    budget = 256 * 1024
    rep.emit(f"n={n:,} batch={b:,} rounds={args.rounds}; load average before "
             f"{' / '.join(f'{x:.1f}' for x in os.getloadavg())}; {os.cpu_count()} CPUs")
    ratios: dict[str, list[float]] = {}
    secs: dict[str, list[float]] = {}
    walls: dict[str, list[float]] = {}

    def add(name: str, ratio: float, seconds: float, wall: float | None = None) -> None:
        ratios.setdefault(name, []).append(ratio)
        secs.setdefault(name, []).append(seconds)
        walls.setdefault(name, []).append(_WALL[0] if wall is None else wall)
        # this round's row now (a long run cut short keeps its measured rounds); the summary follows
        w = walls[name][-1]
        shown = (f"{ratio * 1e6:.1f}us, wall {w * 1e6:.1f}us" if "(s per read)" in name
                 else f"{ratio:.2f}x (CPU {seconds:.3f} s, wall {w:.3f} s)")
        rep.emit(f"round {len(ratios[name])}/{args.rounds} {name}: {shown}")

    def one_round(path: str) -> None:
        t_sort = _cpu(lambda: np.sort(s))
        for label, cls in (("AUROC", sm.AUROC), ("AP", sm.AveragePrecision)):
            once, every, w_once, w_every = once_and_every(cls, y, s, b)
            add(f"[{path}] {label} streamed, one read / np.sort", once / t_sort, once, w_once)
            add(f"[{path}] {label} read after every batch / read once", every / once, every, w_every)
            m = cls().update(y, s)
            m.compute()
            rep = _cpu(functools.partial(_reads, m, 1000)) / 1000
            add(f"[{path}] {label} read again, no update (s per read)", rep, rep, _WALL[0] / 1000)
        if args.no_extra:
            return
        for k, (yk, sk) in mc.items():
            once, every, _, _ = once_and_every(functools.partial(sm.AUROC, num_classes=k), yk, sk, mc_batch[k])
            add(f"[{path}] macro AUROC, {k} classes: every batch / once", every / once, every)
        for label, cls in (("AUROC", sm.AUROC), ("AP", sm.AveragePrecision)):
            once, every, _, _ = once_and_every(functools.partial(cls, max_bytes=budget), y, s, b)
            add(f"[{path}] bounded {label} (max_bytes=256K): every batch / once", every / once, every)
    if args.oneshot:
        with rep.section("one-shot functional vs scikit-learn"):
            oneshot(n, args.rounds, paths)
    if args.no_reads:
        args.rounds = 0
    for path in paths:  # warm-up: numba's first call compiles (or loads its on-disk cache)
        with compiled_kernels(path == "numba", min_size=0):
            for cls in (sm.AUROC, sm.AveragePrecision):
                stream(cls, y[:50_000], s[:50_000], b, True)
    for _ in range(args.rounds):
        for path in paths:
            with compiled_kernels(path == "numba"):
                one_round(path)
    targets = {  # issue 32, item 5
        "AUROC read after every batch / read once": 2.0,
        "AP read after every batch / read once": 4.0,
        "AUROC streamed, one read / np.sort": 1.5,
        "AP streamed, one read / np.sort": 1.5,
    }
    if args.rounds:
        rep.emit("", f"{'measure':66s} {'median':>9s} {'range':>17s} {'CPU s':>8s} {'wall s':>8s}  target")
    # one block per measure (both paths together, in the order first measured)
    measures = list(dict.fromkeys(name.split("] ", 1)[-1] for name in ratios))
    for name, vals in sorted(ratios.items(), key=lambda kv: (measures.index(
            kv[0].split("] ", 1)[-1]), kv[0])):
        t = targets.get(name.split("] ", 1)[-1])
        verdict = "" if t is None else f"<= {t}x: {'met' if statistics.median(vals) <= t else 'NOT met'}"
        unit = "" if "(s per read)" in name else "x"
        fmt = (lambda v: f"{v * 1e6:.1f}us") if not unit else (lambda v: f"{v:.2f}x")
        sec = (lambda v: f"{v * 1e6:.1f}us") if not unit else (lambda v: f"{v:.3f}")
        rep.emit(f"{name:66s} {fmt(statistics.median(vals)):>9s} {fmt(min(vals)):>8s}-{fmt(max(vals)):<8s} "
                 f"{sec(statistics.median(secs[name])):>8s} {sec(statistics.median(walls[name])):>8s}  {verdict}")
    if args.memory:
        for path in paths:
            for every in (False, True):
                with rep.section(f"[{path}] traced peak, {'every batch' if every else 'one read'}"):
                    with compiled_kernels(path == "numba"):
                        per = peak_bytes_per_score(y, s, b, every)
                    rep.emit(f"[{path}] peak traced bytes per score, AUROC + AP, "
                             f"{'read every batch' if every else 'one read'}: "
                             f"{per:.1f} (target <= 12: {'met' if per <= 12 else 'NOT met'})")
    if args.rss:
        for path in paths:
            for mode in ("once", "every"):
                out = subprocess.run(
                    [sys.executable, "-m", "benchmarks.bench_reads", "--n", str(n), "--batch", str(b),
                     "--path", path, "--rss-child", mode], capture_output=True, text=True,
                    cwd=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
                if out.returncode:
                    rep.emit(f"[{path}] peak RSS, {mode}: failed ({out.stderr.strip().splitlines()[-1:]})")
                    continue
                peak_s, end_s, trimmed = out.stdout.split()
                peak, end = float(peak_s), float(end_s)
                start = "the start, heap trimmed" if trimmed == "1" else "the start (heap not trimmed: no glibc)"
                rep.emit(f"[{path}] peak RSS above {start}, per score, AUROC + AP, "
                         f"{'read every batch' if mode == 'every' else 'one read'}: {peak:.1f} "
                         f"(at the end {end:.1f}; target <= 12: {'met' if peak <= 12 else 'NOT met'})")
    rep.emit(f"load average after {' / '.join(f'{x:.1f}' for x in os.getloadavg())}")
    return rep.text()


if __name__ == "__main__":
    main()
