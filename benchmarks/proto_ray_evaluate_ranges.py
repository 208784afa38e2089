"""Driver memory and CPU of all processes of ``streammetrics.ray.evaluate`` on 2M rows (issue #32 item 2).

``PYTHONPATH=. python -m benchmarks.proto_ray_evaluate_ranges MODE SOURCE WEIGHT SET [DIR]``:
MODE ``before`` (the state path, forced) or ``after`` (exact binary AUROC / AP by score ranges);
SOURCE ``pandas`` (8 materialized ``from_pandas`` blocks) or ``parquet`` (``read_parquet`` of 4
files written into DIR, default /tmp/rr/pq); WEIGHT ``-`` or ``w``; SET ``set`` (AUROC, AP, F1,
ConfusionMatrix) or ``auroc`` (AUROC, F1). One warm-up run (the driver's RSS peak over its RSS
before it is reported: the first run's growth), then 3 runs: the least CPU of all processes
(driver and Ray's, from /proc), the driver's CPU, wall, and the driver's RSS peak over each
run's start (polled every 5 ms). Ray: ``ray.init(num_cpus=2)``. Not a ``bench_*`` module (run
by hand; each MODE in its own process).
"""

from __future__ import annotations

import logging
import os
import sys
import threading
import time
import warnings
from typing import Any

N = 2_000_000


def rss() -> float:
    """This process's resident memory, MB."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


class Peak:
    """The driver's RSS peak (MB) while the block runs, polled every 5 ms, and its RSS before."""

    def __enter__(self) -> Peak:
        self.base = self.peak = rss()
        self.stop = False
        self.t = threading.Thread(target=self._poll, daemon=True)
        self.t.start()
        return self

    def _poll(self) -> None:
        while not self.stop:
            self.peak = max(self.peak, rss())
            time.sleep(0.005)

    def __exit__(self, *exc: object) -> None:
        self.stop = True
        self.t.join()
        self.peak = max(self.peak, rss())


def main(argv: list[str]) -> str:
    import numpy as np
    import pandas as pd
    import ray

    import streammetrics as sm
    from benchmarks.bench_engines import tree_cpu
    from streammetrics._engines import ray_blocks
    from streammetrics.ray import evaluate

    mode, source, weighted, which = argv[0], argv[1], argv[2] == "w", argv[3]
    folder = argv[4] if len(argv) > 4 else "/tmp/rr/pq"
    if mode == "before":
        ray_blocks.dataset_split = lambda *a: None  # the state path, as before the change
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, logging_level=logging.ERROR,
             configure_logging=False)
    ray.data.DataContext.get_current().enable_progress_bars = False
    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, N)
    df = pd.DataFrame({"y": y, "p": np.clip(0.3 * y + rng.random(N), 0, 1.3), "w": rng.random(N) + 0.5})
    ds = None
    if source == "pandas":
        ds = ray.data.from_pandas([df.iloc[i * N // 8 : (i + 1) * N // 8] for i in range(8)]).materialize()
    elif not os.path.isdir(folder):
        os.makedirs(folder)
        for i in range(4):
            df.iloc[i * N // 4 : (i + 1) * N // 4].to_parquet(f"{folder}/part-{i}.parquet")

    def metrics() -> Any:
        if which == "set":
            return sm.MetricSet(auroc=sm.AUROC(), ap=sm.AveragePrecision(), f1=sm.F1(), cm=sm.ConfusionMatrix())
        return sm.MetricSet(auroc=sm.AUROC(), f1=sm.F1())

    def run() -> Any:
        data = ds if ds is not None else ray.data.read_parquet(folder)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return evaluate(data, metrics(), label="y", score="p", weight="w" if weighted else None)

    with Peak() as first:
        run()  # warm-up
    rows = []
    for _ in range(3):
        c0, t0 = tree_cpu(), time.perf_counter()
        with Peak() as pk:
            out = run()
        wall = time.perf_counter() - t0
        c1 = tree_cpu()
        rows.append((sum(c1.get(p, 0) - c0.get(p, 0) for p in c1), c1[os.getpid()] - c0[os.getpid()], wall,
                     pk.peak - pk.base))
    ray.shutdown()
    cpu, drv, wall, _ = min(rows)
    return (f"{mode} {source} {which} {'weighted' if weighted else '-'}: first run driver RSS +"
            f"{first.peak - first.base:.0f} MB; then CPU all processes {cpu:.2f} s, driver {drv:.2f} s, "
            f"wall {wall:.2f} s, driver RSS +{min(r[3] for r in rows):.0f}-{max(r[3] for r in rows):.0f} MB; "
            f"auroc={out['auroc']!r} ap={out.get('ap')!r} load {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    print(main(sys.argv[1:]), flush=True)
