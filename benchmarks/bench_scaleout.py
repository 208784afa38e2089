"""Scale-out benchmark: Parquet through streammetrics.dask vs one process vs Spark MLlib; sync cost.

Workload (seeded): ``--rows`` (default 10M) binary rows -- label ``y`` (0/1) and a score ``p``
(float64, rounded to 1e-6 so there are ties) -- written to ``--files`` Parquet files. On the same
files:

* ``streammetrics.dask.evaluate_parquet`` on a LocalCluster of 2 worker processes (1 thread each),
  metrics ``AUROC``, ``AveragePrecision``, ``F1``, ``ConfusionMatrix`` (exact ranking: the exact
  binary AUROC and AP by score ranges, :mod:`streammetrics._engines.range_counts` -- each range's
  scores sorted once on a worker, only counts at the distinct positive scores reaching the root);
* single-process streaming: the files read one row group at a time with pyarrow, one
  ``MetricSet.update`` per row group;
* Spark MLlib ``BinaryClassificationMetrics`` (pyspark local[2]) -- ``areaUnderROC`` and
  ``areaUnderPR`` (Spark's PR area is the trapezoidal one, a different definition from AP);
  reported as unavailable if pyspark or a new enough Java is missing. Its DataFrame
  constructor down-samples the ROC and PR curves to about ``numBins`` points (read from the
  object and printed; 1000 in PySpark 4.3, measured: 1,043 ROC points for 19,770 distinct scores
  on 20k rows), so its AUROC is not the exact one: the row shows the measured difference.

The exact ranking evaluation also runs through the previous task graph (the public, validating
``merge_states``: every merge task recounts each received state's Mann-Whitney statistic),
alternated with the current one. An in-process section times ``copy()`` and a pickle round trip
of an exact AUROC holding 10M scores against the previous state-dict round trips.

Then the cost of ``streammetrics.torch.sync`` with ~20 MB states on 2 gloo ranks (127.0.0.1):
a 1118-class confusion matrix (counts and squared-weight sums: 20 MB) (all_reduce path) and an exact AUROC buffer of 2.5M float64 scores per
rank (sizes + padded all_gather + merge), next to the raw collectives on the same bytes.

With ``--engines``, the per-engine table of :mod:`benchmarks.bench_engines` (one process vs
``streammetrics.dask`` / ``.spark`` / ``.ray``, rows/s and peak memory per worker).

Every row shows the largest |difference| of its values from the single process's over every
metric, measured in that run (Spark: its AUROC's). Each row and table is printed (flushed) the
moment it is measured, and a part that fails prints its error and lets the others run.

Run: ``python -m benchmarks.bench_scaleout [--rows N] [--files F] [--workers 2,1] [--skip-spark]
[--skip-copy] [--skip-sync] [--engines]``. Prints markdown.
"""

from __future__ import annotations

import argparse
import os
import shutil
import socket
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

if __package__ in (None, ""):
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from benchmarks._harness import Report, differing_values  # noqa: E402

SEED = 20261122


def _table(headers: list[str], rows: list[list[Any]]) -> str:
    out = ["| " + " | ".join(headers) + " |", "|" + "|".join("---" for _ in headers) + "|"]
    out += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return "\n".join(out)


def _metrics(ranking: bool = True) -> Any:
    import streammetrics as sm

    if not ranking:
        return sm.MetricSet(f1=sm.F1(), cm=sm.ConfusionMatrix(), acc=sm.Accuracy())
    return sm.MetricSet(auroc=sm.AUROC(), ap=sm.AveragePrecision(), f1=sm.F1(), cm=sm.ConfusionMatrix())


def write_data(root: Path, rows: int, files: int) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    rng = np.random.default_rng(SEED)
    per = -(-rows // files)
    done = 0
    for i in range(files):
        n = min(per, rows - done)
        y = rng.integers(0, 2, n).astype(np.int64)
        p = np.round(1 / (1 + np.exp(-(rng.normal(size=n) + 1.2 * (y - 0.5)))), 6)
        pq.write_table(pa.table({"y": y, "p": p}), root / f"part-{i:03d}.parquet",
                       row_group_size=250_000)
        done += n


def run_single(root: Path, ranking: bool = True) -> tuple[float, dict[str, Any], int]:
    import pyarrow.parquet as pq

    t = time.perf_counter()
    ms = _metrics(ranking)
    for f in sorted(root.glob("*.parquet")):
        pf = pq.ParquetFile(f)
        for g in range(pf.num_row_groups):
            tab = pf.read_row_group(g, columns=["y", "p"])
            ms.update(tab.column("y").to_numpy(), tab.column("p").to_numpy())
    values = ms.compute()
    return time.perf_counter() - t, values, ms.nbytes


def _warm() -> None:
    import pyarrow.parquet  # noqa: F401

    import streammetrics  # noqa: F401
    import streammetrics.dask  # noqa: F401


def _evaluate_validated(root: Path, metrics: Any) -> dict[str, Any]:
    """The previous ``evaluate`` graph: the public, validating ``partition_state`` /
    ``merge_states`` / ``merge_and_compute`` as tasks (every merge task re-validates each state
    it receives: the sorted buffer recounts its Mann-Whitney statistic). Same tree, fan-in 8."""
    import dask
    import dask.dataframe as dd

    from streammetrics._engines.plan import Plan as _Plan
    from streammetrics._engines.plan import merge_and_compute, merge_states, partition_state
    from streammetrics._engines.plan import normalise as _normalise

    template, shape = _normalise(metrics)
    plan = _Plan(config=template._config(), family=template.family, label="y", score="p")
    frame = dd.read_parquet(str(root))[plan.columns()]
    part = dask.delayed(partition_state, pure=True)
    plan_node = dask.delayed(plan, pure=True)
    config = dask.delayed(plan.config, pure=True)
    level = [part(p, plan_node) for p in frame.to_delayed()]
    merge = dask.delayed(merge_states, pure=True)
    while len(level) > 8:
        level = [merge(level[i : i + 8], config) for i in range(0, len(level), 8)]
    (result,) = dask.compute(dask.delayed(merge_and_compute, pure=True)(level, config))
    return dict(shape.values(result[0]))


def _cpu() -> float:
    return time.process_time()


def _ranked(root: Path) -> dict[str, Any]:
    """Exact AUROC + AP by score ranges (``evaluate_ranked``), F1 + ConfusionMatrix by ``evaluate``."""
    import dask.dataframe as dd

    import streammetrics as sm
    from streammetrics.dask import evaluate_parquet, evaluate_ranked

    out = dict(evaluate_ranked(dd.read_parquet(str(root)), {"auroc": sm.AUROC(), "ap": sm.AveragePrecision()},
                               label="y", score="p", ranges=8))
    out.update(evaluate_parquet(str(root), {"f1": sm.F1(), "cm": sm.ConfusionMatrix()}, label="y", score="p"))
    return out


def run_dask(root: Path, workers: int = 2,
             single: Any = None) -> tuple[dict[str, float], float, dict[str, dict[str, Any]]]:
    """Times (wall, and CPU seconds summed over the workers and the client), the start-up seconds
    and each path's values (``"confusion"``, ``"ranking"``, ``"validated"``, ``"ranked"``) of the
    confusion-only
    and the full (exact ranking) evaluation on a warm cluster of ``workers`` single-threaded
    processes, of the exact ranking one through the previous (validating) task graph and through
    ``evaluate_ranked``, and -- when ``single`` is given -- of the single-process run, all
    interleaved round by round so that every path sees the same machine load. Best of 3."""
    import dask
    from distributed import Client, LocalCluster

    from streammetrics.dask import evaluate_parquet

    t0 = time.perf_counter()
    with dask.config.set({"distributed.worker.daemon": False}), LocalCluster(
        n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None
    ) as cluster, Client(cluster) as client:
        client.run(_warm)  # imports on the workers, outside the timings
        first = sorted(root.glob("*.parquet"))[0]
        evaluate_parquet(str(first), _metrics(), label="y", score="p")  # untimed warm-up
        startup = time.perf_counter() - t0
        times: dict[str, float] = {}
        values: dict[str, dict[str, Any]] = {}

        def timed(name: str, fn: Any, on_cluster: bool = True) -> Any:
            c0 = sum(client.run(_cpu).values()) if on_cluster else 0.0
            p0, t = time.process_time(), time.perf_counter()
            out = fn()
            wall, cpu = time.perf_counter() - t, time.process_time() - p0
            if on_cluster:
                cpu += sum(client.run(_cpu).values()) - c0
            times[name] = min(times.get(name, float("inf")), wall)
            times[name + " cpu"] = min(times.get(name + " cpu", float("inf")), cpu)
            return out

        for _ in range(3):  # interleaved, so every path sees the same machine load
            if single is not None:
                timed("single confusion", lambda: single(root, ranking=False), on_cluster=False)
                timed("single", lambda: single(root), on_cluster=False)
            values["confusion"] = timed(
                "confusion", lambda: evaluate_parquet(str(root), _metrics(False), label="y", score="p"))
            values["ranking"] = timed(
                "ranking", lambda: evaluate_parquet(str(root), _metrics(), label="y", score="p"))
            values["validated"] = timed("validated", lambda: _evaluate_validated(root, _metrics()))
            values["ranked"] = timed("ranked", lambda: _ranked(root))
    return times, startup, values


def run_copy(n: int = 10_000_000, repeat: int = 3) -> list[list[Any]]:
    """In-process copy and pickle round trip of an exact AUROC holding ``n`` scores: the current
    ``copy()`` / ``pickle`` against the previous state-dict round trips (validated rebuild),
    alternated, best of ``repeat``."""
    import pickle

    import streammetrics as sm
    from streammetrics._core.metric import Metric

    rng = np.random.default_rng(SEED)
    m = sm.AUROC()
    for i in range(0, n, 1_000_000):
        k = min(1_000_000, n - i)
        m.update(rng.integers(0, 2, k), np.round(rng.random(k), 6))
    ref = m.compute()  # fold the queue in, outside the timings

    def pickled_state_dict() -> Any:  # what pickling did before: state dict, validated rebuild
        return Metric.from_state_dict(pickle.loads(pickle.dumps(m.state_dict(), protocol=5)))

    cases = [
        ("copy()", lambda: m.copy(), "previous copy(): from_state_dict(state_dict())",
         lambda: Metric.from_state_dict(m.state_dict())),
        ("pickle round trip (protocol 5)", lambda: pickle.loads(pickle.dumps(m, protocol=5)),
         "previous pickle: state dict, validated rebuild", pickled_state_dict),
    ]
    rows = []
    for name, new, old_name, old in cases:
        best_new = best_old = float("inf")
        for _ in range(repeat):
            t = time.perf_counter()
            a = new()
            best_new = min(best_new, time.perf_counter() - t)
            t = time.perf_counter()
            b = old()
            best_old = min(best_old, time.perf_counter() - t)
            assert a.compute() == b.compute() == ref
            del a, b
        rows.append([name, f"{best_new:.3f}", old_name, f"{best_old:.3f}", f"{best_old / best_new:.1f}x"])
    return rows


def run_spark(root: Path) -> tuple[str, float | None, dict[str, float]]:
    try:
        from pyspark.mllib.common import JavaModelWrapper
        from pyspark.mllib.evaluation import BinaryClassificationMetrics
        from pyspark.sql import SparkSession
    except ImportError:
        return "pyspark not installed", None, {}
    from benchmarks.bench_engines import java_problem

    problem = java_problem()
    if problem is not None:
        return problem, None, {}
    spark = (
        SparkSession.builder.master("local[2]").appName("bench_scaleout")
        .config("spark.driver.memory", "6g").config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "8").getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    try:
        t = time.perf_counter()
        # The MLlib class, fed a DataFrame on the JVM side (pyspark's wrapper would first pull
        # every row through Python to build that DataFrame from an RDD).
        from pyspark.sql import functions as F

        df = spark.read.parquet(str(root)).select(
            F.col("p").cast("double").alias("score"), F.col("y").cast("double").alias("label"))
        jvm = spark.sparkContext._jvm
        assert jvm is not None
        m = BinaryClassificationMetrics.__new__(BinaryClassificationMetrics)
        JavaModelWrapper.__init__(m, jvm.org.apache.spark.mllib.evaluation.BinaryClassificationMetrics(df._jdf))
        # numBins: the DataFrame constructor's down-sampling of the curves (0: none); read, not assumed
        vals = {"auroc": m.areaUnderROC, "aupr_trapezoid": m.areaUnderPR,
                "num_bins": float(m._java_model.numBins())}
        return "ok", time.perf_counter() - t, vals
    finally:
        spark.stop()


# -- torch.distributed sync cost ------------------------------------------------------------
def _sync_worker(rank: int, world: int, init: str, out: str, repeat: int) -> None:
    import torch
    import torch.distributed as dist

    import streammetrics as sm
    from streammetrics.torch import sync

    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method=init, rank=rank, world_size=world)
    rng = np.random.default_rng(SEED + rank)
    k = 1118  # a dense C x C count matrix (and its squared-weight twin) of ~20 MB
    # A state built by updates (every rank's own labels): consistent counts, as sync checks them
    # (random arrays loaded into the state were inconsistent and rightly refused by the merge).
    cm = sm.ConfusionMatrix(num_classes=k).update(rng.integers(0, k, 4_000_000), rng.integers(0, k, 4_000_000))
    n = 2_500_000  # 2.5M float64 scores = 20 MB per rank
    auroc = sm.AUROC().update(rng.integers(0, 2, n), rng.random(n))
    auroc.compute()  # consolidate the buffer outside the timing
    results: dict[str, list[float]] = {}

    def timed(name: str, fn: Any) -> None:
        for _ in range(repeat):
            dist.barrier()
            t = time.perf_counter()
            fn()
            results.setdefault(name, []).append(time.perf_counter() - t)

    raw = torch.from_numpy(np.ones(2 * k * k))
    timed("raw all_reduce 20 MB", lambda: dist.all_reduce(raw))
    timed(f"sync ConfusionMatrix(1118) ({cm.nbytes / 1e6:.0f} MB state)", lambda: sync(cm))
    buf = torch.zeros(n * 8, dtype=torch.uint8)
    bufs = [torch.empty_like(buf) for _ in range(world)]
    timed("raw all_gather 20 MB/rank", lambda: dist.all_gather(bufs, buf))
    timed("sync AUROC 2.5M scores/rank (gather+merge)", lambda: sync(auroc))
    timed("sync AUROC + compute()", lambda: sync(auroc).compute())
    if rank == 0:
        with open(out, "w") as fh:
            for name, ts in results.items():
                fh.write(f"{name}\t{statistics.median(ts)}\t{min(ts)}\n")
    dist.barrier()
    dist.destroy_process_group()


def run_sync(repeat: int = 5) -> list[list[Any]]:
    try:
        import torch.multiprocessing as mp
    except ImportError:
        return [["torch not installed", "", "", ""]]
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "sync.tsv")
        mp.spawn(_sync_worker, args=(2, f"tcp://127.0.0.1:{port}", out, repeat), nprocs=2, join=True)
        rows = []
        for line in Path(out).read_text().splitlines():
            name, med, best = line.split("\t")
            rows.append([name, f"{float(med) * 1e3:.1f}", f"{float(best) * 1e3:.1f}",
                         f"{20 / float(med):.0f}"])
    return rows


_HEADERS = ["metrics", "run", "wall s", "CPU s", "M rows/s", "wall speed vs single", "CPU ratio single/run",
            "AUROC", "values vs single, every metric", "status"]


def main(argv: list[str] | None = None) -> str:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=10_000_000)
    ap.add_argument("--files", type=int, default=20)
    ap.add_argument("--data", type=Path, default=None, help="directory for the Parquet files (temp dir)")
    ap.add_argument("--skip-spark", action="store_true")
    ap.add_argument("--skip-sync", action="store_true")
    ap.add_argument("--skip-copy", action="store_true")
    ap.add_argument("--workers", default="2,1", help="Dask LocalCluster sizes to time, in order")
    ap.add_argument("--engines", action="store_true",
                    help="also the per-engine table (benchmarks.bench_engines: one process, Dask, Spark, Ray)")
    args = ap.parse_args(argv)
    rep = Report()  # every row and table printed the moment it is measured; a failing part says so

    tmp = None
    root = args.data
    if root is None:
        tmp = tempfile.mkdtemp(prefix="bench_scaleout_")
        root = Path(tmp)
    root.mkdir(parents=True, exist_ok=True)
    try:
        t = time.perf_counter()
        if not list(root.glob("*.parquet")):
            write_data(root, args.rows, args.files)
        write_s = time.perf_counter() - t
        rows = args.rows
        rep.emit(
            f"## Scale-out: {rows:,} rows in {args.files} Parquet files (written in {write_s:.1f} s)",
            "",
            f"Python {sys.version.split()[0]}, {os.cpu_count()} CPUs. Confusion metrics: F1, ConfusionMatrix, "
            "Accuracy; exact ranking: AUROC, AveragePrecision, F1, ConfusionMatrix. Dask: LocalCluster of "
            "2 (or 1) worker processes, 1 thread each, warm (cluster start and warm-up not included), "
            "split_every=8. Best of 3 runs, every path interleaved in each round (the single-process runs "
            "with the 2-worker ones). CPU: seconds of CPU summed over the workers and the client (the single "
            "process: its own, pyarrow's threads included) -- the measure that a shared machine disturbs "
            "least. Values: each run's values against the single process's, every metric (AUROC, AP, F1, "
            "each confusion-matrix cell; Spark: AUROC only), compared in this run: \"equal\" or the "
            "metrics that differ and the largest |difference|. Load average "
            f"at the start: {' / '.join(f'{x:.1f}' for x in os.getloadavg())}.",
            "",
        )
        single_v: dict[str, Any] = {}
        single_cv: dict[str, Any] = {}  # the confusion-only set's values
        with rep.section("single process (untimed first run: values, state size)"):
            _, single_v, state_bytes = run_single(root)
            single_cv = run_single(root, ranking=False)[1]
            rep.emit(f"Exact ranking state of the single process: {state_bytes / 1e6:.1f} MB.", "")
        add = rep.rows(_HEADERS, "llrrrrrrrl")
        ref: dict[str, float] = {}  # the single process's wall and CPU seconds, once measured

        def row(metrics: str, run: str, t: dict[str, float], key: str, base: str, values: dict[str, Any]) -> None:
            wall, cpu = t[key], t[key + " cpu"]
            speed = f"{ref[base] / wall:.2f}" if base in ref else "-"
            ratio = f"{ref[base + ' cpu'] / cpu:.2f}" if base + " cpu" in ref else "-"
            auroc = f"{float(values['auroc']):.15f}" if "auroc" in values else "-"
            want = single_v if "auroc" in values else single_cv
            differ = differing_values(values, want)
            diff = "-" if not want else "equal" if not differ else ", ".join(f"{k} {d}" for k, d in differ.items())
            add([metrics, run, f"{wall:.2f}", f"{cpu:.2f}", f"{rows / wall / 1e6:.2f}", speed, ratio, auroc, diff, "ok"])

        for workers in (int(w) for w in args.workers.split(",")):
            label = f"{workers} worker{'s' if workers > 1 else ''}"
            first = not ref and single_v
            def failed(what: str, label: str = label) -> None:
                add(["exact ranking", f"streammetrics.dask, {label}", *["-"] * 7, f"failed: {what}"])

            with rep.section(f"streammetrics.dask, {label}", on_error=failed):
                single = (lambda r, ranking=True: run_single(r, ranking)) if first else None
                times, startup, vals = run_dask(root, workers, single=single)
                if single is not None:
                    ref.update({k: times[k] for k in ("single confusion", "single confusion cpu", "single", "single cpu")})
                    row("confusion", "single process (pyarrow row groups)", times, "single confusion",
                        "single confusion", single_cv)
                    row("exact ranking", "single process (pyarrow row groups)", times, "single", "single", single_v)
                row("confusion", f"streammetrics.dask, {label} (start-up {startup:.1f} s)", times, "confusion",
                    "single confusion", vals["confusion"])
                row("exact ranking", f"streammetrics.dask.evaluate_parquet, {label}", times, "ranking", "single",
                    vals["ranking"])
                row("exact ranking", f"evaluate_ranked (AUROC, AP; 8 ranges) + evaluate (F1, CM), {label}",
                    times, "ranked", "single", vals["ranked"])
                row("exact ranking", f"previous graph (merge tasks re-validate states), {label}", times,
                    "validated", "single", vals["validated"])
        spark_pr: float | None = None
        spark_run = "Spark MLlib BinaryClassificationMetrics, local[2]"
        with rep.section("Spark MLlib", on_error=lambda what: add(
                ["AUROC + PR area", spark_run, *["-"] * 7, f"failed: {what}"])):
            spark_status, spark_s, spark_v = ("skipped", None, {}) if args.skip_spark else run_spark(root)
            if spark_s is None:
                add(["AUROC + PR area", spark_run, *["-"] * 7, spark_status])
            else:
                spark_pr = spark_v["aupr_trapezoid"]
                diff = (f"auroc off by {abs(spark_v['auroc'] - float(single_v['auroc'])):.1e} (AUROC only; "
                        f"numBins={spark_v['num_bins']:.0f})" if single_v else "-")
                speed = f"{ref['single'] / spark_s:.2f}" if "single" in ref else "-"
                add(["AUROC + PR area", spark_run, f"{spark_s:.2f}", "-", f"{rows / spark_s / 1e6:.2f}", speed,
                     "-", f"{spark_v['auroc']:.15f}", diff, spark_status])
        if spark_pr is not None:
            rep.emit("", f"Spark's PR area is the trapezoidal one ({spark_pr:.15f}), a different definition "
                     f"from AveragePrecision's step sum ({float(single_v.get('ap', float('nan'))):.15f}).")
        if not args.skip_copy:
            copy_n = min(rows, 10_000_000)
            with rep.section("copy and pickle"):
                rep.emit("", f"## Copy and pickle of an exact AUROC holding {copy_n:,} scores (in process)", "",
                         "Best of 3, alternated with the previous path; load average at the start: "
                         f"{' / '.join(f'{x:.1f}' for x in os.getloadavg())}.", "")
                rep.emit(_table(["operation", "seconds", "previous path", "seconds", "speed-up"], run_copy(copy_n)))
        if args.engines:
            with rep.section("per engine"):
                from benchmarks.bench_engines import ENGINES, run_all

                rep.emit("", "## Per engine (each in its own process, 2 workers)", "")
                run_all(root, rows, list(ENGINES), report=rep)
        if not args.skip_sync:
            with rep.section("torch.distributed sync"):
                rep.emit("", "## torch.distributed sync, 2 gloo ranks on 127.0.0.1, ~20 MB state per rank", "")
                rep.emit(_table(["operation", "median ms", "best ms", "MB/s (20 MB / median)"], run_sync()))
        return rep.text()
    finally:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
