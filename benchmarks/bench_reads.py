"""Read costs of the exact ranking metrics: AUROC and AP read after every batch vs read once.

Run ``python -m benchmarks.bench_reads [--n 2000000] [--batch 10000]``. In one process, for AUROC
and average precision, alternately: stream the scores in batches and read once at the end; the
same with a read after every batch; and a repeated read with no update in between. Times are
CPU seconds (``time.process_time``: the machine may be shared), with the wall time beside them,
and the reference one ``np.sort`` of the whole score array is timed in the same rounds. The load
average is printed with the results.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import tracemalloc

import numpy as np

if __package__ in (None, ""):
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import streammetrics as sm  # noqa: E402
from benchmarks.bench_ranking import binary_data  # noqa: E402


def _timed(fn) -> tuple[float, float]:  # type: ignore[no-untyped-def]
    c, w = time.process_time(), time.perf_counter()
    fn()
    return time.process_time() - c, time.perf_counter() - w


def stream(cls: type, y: np.ndarray, s: np.ndarray, batch: int, every: bool) -> float:
    m = cls()
    v = 0.0
    for i in range(0, y.shape[0], batch):
        m.update(y[i : i + batch], s[i : i + batch])
        if every:
            v = m.compute()
    return float(m.compute()) if not every else float(v)


def peak_bytes_per_score(y: np.ndarray, s: np.ndarray, batch: int) -> float:
    """numpy's traced peak while streaming AUROC + AP (one shared state) and reading both,
    minus the 8 bytes per score the state keeps... reported as the whole peak per score."""
    tracemalloc.start()
    ms = sm.MetricSet({"auroc": sm.AUROC(), "ap": sm.AveragePrecision()})
    for i in range(0, y.shape[0], batch):
        ms.update(y[i : i + batch], s[i : i + batch])
    ms.compute()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return peak / y.shape[0]


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=2_000_000)
    ap.add_argument("--batch", type=int, default=10_000)
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--memory", action="store_true")
    args = ap.parse_args(argv)
    y, s = binary_data(args.n)
    print(f"n={args.n:,} batch={args.batch:,} load average {os.getloadavg()}")
    for _ in range(args.rounds):
        rows = {}
        rows["np.sort"] = _timed(lambda: np.sort(s))
        for cls in (sm.AUROC, sm.AveragePrecision):
            rows[f"{cls.__name__} stream, one read"] = _timed(lambda c=cls: stream(c, y, s, args.batch, False))
            rows[f"{cls.__name__} read every batch"] = _timed(lambda c=cls: stream(c, y, s, args.batch, True))
            m = cls().update(y, s)
            m.compute()
            rows[f"{cls.__name__} repeated read (x1000)"] = _timed(lambda m=m: [m.compute() for _ in range(1000)])
        for k, (c, w) in rows.items():
            print(f"  {k:40s} CPU {c:8.3f} s  wall {w:8.3f} s")
        for name in ("AUROC", "AveragePrecision"):
            every, once = rows[f"{name} read every batch"][0], rows[f"{name} stream, one read"][0]
            print(f"  {name}: every/once {every / once:5.2f}x   stream/np.sort {once / rows['np.sort'][0]:5.2f}x")
    if args.memory:
        print(f"  peak traced bytes per score (AUROC + AP): {peak_bytes_per_score(y, s, args.batch):.1f}")
    print(f"load average after {os.getloadavg()}")


if __name__ == "__main__":
    main()
