"""Per-engine benchmark: one process vs streammetrics.dask vs .spark vs .ray on the same Parquet rows.

Each engine runs in its own Python process (so that peak memory is its own), on the files that
``benchmarks.bench_scaleout`` writes: exact ``AUROC`` + ``AveragePrecision`` + ``F1`` +
``ConfusionMatrix``, 2 workers (Dask: a LocalCluster of 2 single-threaded worker processes;
Spark: ``local[2]``; Ray: ``ray.init(num_cpus=2)``). Warm: one untimed run first, then the best
of ``--repeat`` timed runs. Peak memory per worker is the largest ``ru_maxrss`` of a worker
process (Dask: each worker; Ray: the pool's worker processes, asked after the runs; Spark: the
largest child of the driver, which is the JVM (the Python workers are smaller); one process: the
process itself). The values must equal the single-process ones (AUROC exactly).

Run: ``python -m benchmarks.bench_engines --data DIR [--engines single,dask,spark,ray]``.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ENGINES = ("single", "dask1", "dask", "spark", "ray")


def _metrics() -> Any:
    import streammetrics as sm

    return sm.MetricSet(auroc=sm.AUROC(), ap=sm.AveragePrecision(), f1=sm.F1(), cm=sm.ConfusionMatrix())


def _maxrss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _timed(fn: Any, repeat: int) -> tuple[float, dict[str, Any]]:
    fn()  # warm-up, untimed
    best, out = float("inf"), {}
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t)
    return best, out


def run_engine(engine: str, root: Path, repeat: int) -> dict[str, Any]:
    """Time one engine on ``root``'s Parquet files; returns seconds, peak MB per worker, values."""
    if engine == "single":
        from benchmarks.bench_scaleout import run_single

        secs, values = _timed(lambda: run_single(root)[1], repeat)
        return {"seconds": secs, "peak_mb": _maxrss_mb(), "values": values}
    if engine.startswith("dask"):
        import dask
        from distributed import Client, LocalCluster

        from streammetrics.dask import evaluate_parquet

        workers = 1 if engine == "dask1" else 2
        with dask.config.set({"distributed.worker.daemon": False}), LocalCluster(
            n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None
        ) as cluster, Client(cluster) as client:
            secs, values = _timed(lambda: evaluate_parquet(str(root), _metrics(), label="y", score="p"), repeat)
            peak = max(client.run(_maxrss_mb).values())
        return {"seconds": secs, "peak_mb": peak, "values": values}
    if engine == "spark":
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
        from pyspark.sql import SparkSession

        from streammetrics.spark import evaluate

        spark = (SparkSession.builder.master("local[2]").appName("bench_engines")
                 .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
                 .getOrCreate())
        spark.sparkContext.setLogLevel("ERROR")
        try:
            secs, values = _timed(
                lambda: evaluate(spark.read.parquet(str(root)), _metrics(), label="y", score="p"), repeat)
        finally:
            spark.stop()
        time.sleep(1)
        peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
        return {"seconds": secs, "peak_mb": peak, "values": values, "note": "JVM (largest child)"}
    if engine == "ray":
        import ray

        from streammetrics.ray import evaluate

        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, logging_level="ERROR",
                 configure_logging=False)
        ray.data.DataContext.get_current().enable_progress_bars = False
        try:
            secs, values = _timed(
                lambda: evaluate(ray.data.read_parquet(str(root)), _metrics(), label="y", score="p"), repeat)
            probe = ray.remote(lambda: (os.getpid(), _maxrss_mb()))
            peaks = dict(ray.get([probe.remote() for _ in range(16)]))
        finally:
            ray.shutdown()
        return {"seconds": secs, "peak_mb": max(peaks.values()), "values": values}
    raise ValueError(f"engine: one of {ENGINES}, got {engine!r}")


def _plain(values: dict[str, Any]) -> dict[str, Any]:
    return {k: (v.tolist() if hasattr(v, "tolist") else v) for k, v in values.items()}


def run_all(root: Path, rows: int, engines: list[str], repeat: int = 2) -> str:
    """Each engine in a fresh process; a markdown table (with the load average at each start)."""
    table = ["| engine | workers | wall s | M rows/s | vs one process | peak MB per worker | load avg (1 min) |",
             "|---|---|---|---|---|---|---|"]
    ref: dict[str, Any] | None = None
    names = {"single": ("one process (pyarrow row groups)", 1), "dask1": ("streammetrics.dask", 1),
             "dask": ("streammetrics.dask", 2), "spark": ("streammetrics.spark, local[2]", 2),
             "ray": ("streammetrics.ray", 2)}
    single_s = None
    for engine in engines:
        load = os.getloadavg()[0]
        proc = subprocess.run([sys.executable, "-m", "benchmarks.bench_engines", "--data", str(root),
                               "--one", engine, "--repeat", str(repeat)], capture_output=True, text=True)
        name, workers = names[engine]
        if proc.returncode != 0:
            table.append(f"| {name} | {workers} | failed: {proc.stderr.strip().splitlines()[-1][:80]} | | | | {load:.1f} |")
            continue
        res = json.loads(proc.stdout.strip().splitlines()[-1])
        if ref is None:
            ref = res["values"]
        assert res["values"]["auroc"] == ref["auroc"] and abs(res["values"]["ap"] - ref["ap"]) <= 1e-12
        if engine == "single":
            single_s = res["seconds"]
        speed = "-" if single_s is None else f"{single_s / res['seconds']:.2f}x"
        mem = f"{res['peak_mb']:.0f}" + (f" ({res['note']})" if res.get("note") else "")
        table.append(f"| {name} | {workers} | {res['seconds']:.2f} | {rows / res['seconds'] / 1e6:.2f} | "
                     f"{speed} | {mem} | {load:.1f} |")
        print(table[-1], file=sys.stderr, flush=True)  # as it comes: a long run may be cut short
    return "\n".join(table)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, required=True, help="directory of bench_scaleout's Parquet files")
    ap.add_argument("--rows", type=int, default=10_000_000)
    ap.add_argument("--engines", default=",".join(ENGINES))
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--one", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.one:
        res = run_engine(args.one, args.data, args.repeat)
        res["values"] = _plain(res["values"])
        print(json.dumps(res))
        return
    if not list(args.data.glob("*.parquet")):
        from benchmarks.bench_scaleout import write_data

        args.data.mkdir(parents=True, exist_ok=True)
        write_data(args.data, args.rows, 20)
    print(f"{args.rows:,} rows, {os.cpu_count()} CPUs; load average at the start "
          f"{' / '.join(f'{x:.1f}' for x in os.getloadavg())}\n")
    print(run_all(args.data, args.rows, args.engines.split(","), args.repeat))


if __name__ == "__main__":
    main()
