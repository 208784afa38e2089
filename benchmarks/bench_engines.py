"""Per-engine benchmark: one process vs streammetrics.dask vs .spark vs .ray on the same Parquet rows.

Each engine runs in its own Python process (so that peak memory is its own), on the files that
``benchmarks.bench_scaleout`` writes: exact ``AUROC`` + ``AveragePrecision`` + ``F1`` +
``ConfusionMatrix``, 2 workers (Dask: a LocalCluster of 2 single-threaded worker processes;
Spark: ``local[2]``; Ray: ``ray.init(num_cpus=2)``). Warm: one untimed run first, then the best
of ``--repeat`` timed runs. Besides the wall time, the CPU seconds of the whole process tree
(the driver or client -- with Dask's in-process scheduler -- and every live descendant: workers,
the JVM, Ray's daemons), so that a run under load can still be compared. Peak memory per worker
is the largest ``ru_maxrss`` of a worker process (Dask: each worker; Ray: the pool's worker
processes, asked after the runs; one process: the process itself); Spark: the JVM's own peak
(``VmHWM`` of the ``java`` process that ``spark-submit`` starts under the driver: driver and
executor in one JVM in ``local[2]``) and the largest Python worker's. Dask's rows also give the
idle cluster's CPU per second of wall (:func:`idle_rate`, measured after the runs) and what it
makes of the best run's wall time: the part of the CPU column that only the wall time decides. ``dask_malloc`` /
``dask1_malloc``: the same LocalCluster with workers started with ``MALLOC_TRIM_THRESHOLD_`` and
``MALLOC_MMAP_THRESHOLD_`` at 256 MiB instead of distributed's default trim threshold of 64 KiB,
which also pins glibc's mmap threshold at 128 KiB so that every large numpy array is a fresh
mapping, page-faulted on first touch (measured: ~40% of the workers' CPU). Every metric's
value (AUROC, AP, F1 and each confusion-matrix cell) is compared with the first engine's: the
table's "values" column says "equal", or which differ and by how much. Each row is printed the
moment its engine finishes; a failing engine's row says why and the others still run. Spark's
Java is checked first (``java -version``, :func:`java_problem`): missing or older than PySpark
needs gives one line ``Spark needs Java N+: ...``, not retried.

Run (about 2 minutes on a quiet 2-core machine; writes the 10M rows on first use):
``python -m benchmarks.bench_engines --data /tmp/engines-10m``
(``--engines single,dask1,dask,dask1_malloc,dask_malloc,spark,spark_states,spark_arrow,ray,ray_v1,
ray_materialized,ray_files``
to choose; ``spark``: the files read by pyarrow in the Python tasks -- here (exact binary AUROC and
AP beside F1 and the confusion matrix) by score ranges, only counts reaching the driver
(``streammetrics._engines.spark_ranges``); ``spark_states``: the same direct read with the range
path turned off, every task's state (8 bytes a score) merged on the driver; ``spark_arrow``:
Spark's reader and ``mapInArrow``, ``direct_parquet=False``; ``ray``:
``streammetrics.ray.evaluate(ray.data.read_parquet(DIR))`` (a plain read of local files: taken to
``evaluate_parquet``'s path, ``streammetrics._engines.ray_source``); ``ray_dataset``: the same with
that recognition turned off (Ray Data reads the files); ``ray_v1``: the same as ``ray`` with Ray Data's
first Parquet reader (``DataContext.use_datasource_v2 = False``, where Ray has the setting: its
second one starts Parquet footer-reading actors, new processes, at every read);
``ray_materialized``: ``evaluate`` over the dataset materialized before the timing (Ray Data's
read not counted: what ``evaluate`` itself costs over blocks in the object store); ``ray_files``:
``streammetrics.ray.evaluate_parquet(DIR)``, whose Ray tasks read the row groups with pyarrow
themselves, no Ray Data). The time of ``spark`` includes ``spark.read.parquet`` (planning: file
listing, schema), which runs in the JVM on the driver.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import re
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

if __package__ in (None, ""):
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from benchmarks._harness import Report, differing_values  # noqa: E402

ENGINES = ("single", "dask1", "dask", "dask1_malloc", "dask_malloc", "spark", "spark_states", "spark_arrow",
           "ray", "ray_dataset", "ray_v1", "ray_materialized", "ray_files")
#: Worker environment of the ``*_malloc`` Dask runs (see the module docstring).
MALLOC_ENV = {"MALLOC_TRIM_THRESHOLD_": 1 << 28, "MALLOC_MMAP_THRESHOLD_": 1 << 28,
              "OMP_NUM_THREADS": 1, "MKL_NUM_THREADS": 1, "OPENBLAS_NUM_THREADS": 1}


#: Errors of a lost connection to Spark's JVM or Ray's daemons (seen under heavy load): the
#: engine's run is repeated once, and its row says so. Not a JVM that never started
#: (``JAVA_GATEWAY_EXITED``): a missing or too old Java is found first (:func:`java_problem`)
#: and reported once, without a second try.
CONNECTION_LOST = ("ConnectionRefusedError", "Py4JNetworkError", "RaySystemError", "GetTimeoutError")


def _metrics() -> Any:
    import streammetrics as sm

    return sm.MetricSet(auroc=sm.AUROC(), ap=sm.AveragePrecision(), f1=sm.F1(), cm=sm.ConfusionMatrix())


def _maxrss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _children() -> dict[int, list[int]]:
    tree: dict[int, list[int]] = {}
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                stat = Path(f"/proc/{d}/stat").read_text()
            except OSError:
                continue
            ppid = int(stat.rsplit(")", 1)[1].split()[1])
            tree.setdefault(ppid, []).append(int(d))
    return tree


def descendants(pid: int | None = None) -> list[int]:
    """Every live descendant of ``pid`` (default: this process), from /proc (Linux; else [])."""
    if not os.path.isdir("/proc"):
        return []
    tree, out, todo = _children(), [], [os.getpid() if pid is None else pid]
    while todo:
        kids = tree.get(todo.pop(), [])
        out += kids
        todo += kids
    return out


def _proc_cpu(pid: int) -> float:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime + stime


def tree_cpu() -> dict[int, float]:
    """CPU seconds of this process and of each live descendant (a difference of two calls is
    what a run cost, where the processes outlive it)."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    out = {pid: _proc_cpu(pid) for pid in descendants()}
    out[os.getpid()] = own.ru_utime + own.ru_stime
    return out


def idle_rate(seconds: float) -> float:
    """CPU seconds per second of wall that this process tree spends doing nothing for
    ``seconds`` (Dask: the scheduler's and workers' event loops, heartbeats, the workers'
    statistical profiler and monitors): what such a runtime costs a run of the same wall time
    before any work, which grows with the wall time on a loaded machine."""
    before = tree_cpu()
    t = time.perf_counter()
    time.sleep(seconds)
    wall = time.perf_counter() - t
    after = tree_cpu()
    return sum(v - before.get(k, 0.0) for k, v in after.items()) / wall


def vm_hwm_mb(pid: int) -> float:
    """A live process's peak resident memory (``VmHWM``), MB; 0 if unknown."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def _exe(pid: int) -> str:
    try:
        return os.path.basename(os.readlink(f"/proc/{pid}/exe"))
    except OSError:
        return ""


#: ``version "17.0.15"`` / ``version "1.8.0_402"`` / ``version "22-ea"`` in ``java -version``'s
#: output (OpenJDK, Oracle, Temurin, Zulu, Corretto, Semeru, GraalVM all print it), or the
#: ``openjdk 17.0.1 2021-10-19`` form of ``java --version``.
_JAVA_VERSION = re.compile(r'\bversion\s+"(\d+)(?:\.(\d+))?[^"]*"|^(?:openjdk|java)\s+(\d+)(?:\.(\d+))?\b',
                           re.MULTILINE)


def java_major(text: str) -> int | None:
    """The Java major version in the output of ``java -version``, or None if there is none.

    Old releases spell it ``1.<major>`` (``"1.8.0_402"`` is Java 8); from Java 9 on it leads
    (``"11.0.22"``, ``"17"``, ``"22-ea"``). Lines before the version line (``Picked up
    JAVA_TOOL_OPTIONS: ...``) are skipped. O(len(text))."""
    m = _JAVA_VERSION.search(text)
    if m is None:
        return None
    first, second = (m.group(1), m.group(2)) if m.group(1) else (m.group(3), m.group(4))
    major = int(first)
    if major == 1 and second is not None:
        major = int(second)
    return major


def java_required() -> int:
    """The oldest Java the installed PySpark runs on: 17 for Spark 4, 8 for Spark 3."""
    from importlib import metadata

    try:
        spark_major = int(metadata.version("pyspark").split(".")[0])
    except (metadata.PackageNotFoundError, ValueError):
        spark_major = 4
    return 17 if spark_major >= 4 else 8


def java_problem(timeout: float = 60.0) -> str | None:
    """Why Spark cannot start its JVM here, as one line; None when the Java it will use is new
    enough.

    The Java is ``$JAVA_HOME/bin/java`` when ``JAVA_HOME`` is set (as PySpark's launcher does),
    else ``java`` on ``PATH``; its ``java -version`` is run and its major version read
    (:func:`java_major`): missing, unreadable, or older than :func:`java_required` each give a
    line starting ``Spark needs Java N+:`` (else PySpark fails later with ``Java gateway process
    exited before sending its port number``, or a class-version error, after a while)."""
    need = java_required()
    home = os.environ.get("JAVA_HOME")
    if home:
        java = os.path.join(home, "bin", "java")
        if not os.access(java, os.X_OK):
            return f"Spark needs Java {need}+: JAVA_HOME={home} has no bin/java"
        where = f"JAVA_HOME={home}"
    else:
        found = shutil.which("java")
        if found is None:
            return f"Spark needs Java {need}+: no JAVA_HOME and no java on PATH"
        java, where = found, found
    try:
        proc = subprocess.run([java, "-version"], capture_output=True, text=True, timeout=timeout)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"Spark needs Java {need}+: `{java} -version` failed ({type(exc).__name__}: {exc})"
    text = proc.stderr + proc.stdout  # java -version writes to stderr
    major = java_major(text)
    first = next((ln.strip() for ln in text.splitlines() if "version" in ln), text.strip()[:80])
    if major is None:
        return (f"Spark needs Java {need}+: could not read a version from `{java} -version` "
                f"(exit {proc.returncode}: {first[:80]!r})")
    if major < need:
        return f"Spark needs Java {need}+: {where} is Java {major} ({first})"
    return None


#: Seconds between two looks at the process tree during a timed run (:func:`run_cpu`).
POLL_S = 0.1


def run_cpu(fn: Any) -> tuple[float, float, Any]:
    """(wall s, CPU s of the process tree, ``fn()``): the CPU of every process that lived during
    the run, also of those that ended inside it -- Ray Data's Parquet footer-reading actors,
    started and killed by every read, which a difference of two :func:`tree_cpu` calls misses
    (their CPU is reaped by no process of the tree) -- as the last value a look every
    :data:`POLL_S` seconds saw (up to ``POLL_S`` of a short-lived process's CPU can be missed).
    The looking thread's own CPU (~5 ms a look) is not counted."""
    import threading

    before = tree_cpu()
    seen = dict(before)
    done = threading.Event()
    own = [0.0]

    def look() -> None:
        start = time.thread_time()
        while not done.wait(POLL_S):
            for pid, c in tree_cpu().items():
                seen[pid] = max(c, seen.get(pid, 0.0))
        own[0] = time.thread_time() - start

    looker = threading.Thread(target=look, daemon=True)
    looker.start()
    t = time.perf_counter()
    try:
        out = fn()
    finally:
        wall = time.perf_counter() - t
        done.set()
        looker.join()
    for pid, c in tree_cpu().items():
        seen[pid] = max(c, seen.get(pid, 0.0))
    return wall, sum(v - before.get(k, 0.0) for k, v in seen.items()) - own[0], out


def _timed(fn: Any, repeat: int) -> tuple[float, float, dict[str, Any]]:
    """(best wall s, CPU s of the process tree in that run -- :func:`run_cpu` --, values) after
    one untimed run."""
    fn()  # warm-up, untimed
    best, cpu = float("inf"), float("nan")
    out: dict[str, Any] = {}
    for _ in range(repeat):
        wall, used, out = run_cpu(fn)
        if wall < best:
            best, cpu = wall, used
    return best, cpu, out


def run_engine(engine: str, root: Path, repeat: int) -> dict[str, Any]:
    """Time one engine on ``root``'s Parquet files; returns seconds, peak MB per worker, values."""
    if engine == "single":
        from benchmarks.bench_scaleout import run_single

        secs, cpu, values = _timed(lambda: run_single(root)[1], repeat)
        return {"seconds": secs, "cpu": cpu, "peak_mb": _maxrss_mb(), "values": values}
    if engine.startswith("dask"):
        import dask
        from distributed import Client, LocalCluster

        from streammetrics.dask import evaluate_parquet

        workers = 1 if engine.startswith("dask1") else 2
        config: dict[str, Any] = {"distributed.worker.daemon": False}
        if engine.endswith("_malloc"):
            config["distributed.nanny.pre-spawn-environ"] = MALLOC_ENV
        with dask.config.set(config), LocalCluster(
            n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None
        ) as cluster, Client(cluster) as client:
            secs, cpu, values = _timed(
                lambda: evaluate_parquet(str(root), _metrics(), label="y", score="p"), repeat)
            peak = max(client.run(_maxrss_mb).values())
            idle = idle_rate(max(2.0, secs))
        return {"seconds": secs, "cpu": cpu, "peak_mb": peak, "values": values,
                "note": f"idle cluster {idle:.3f} CPU-s/s: {idle * secs:.2f} s of the run's CPU"}
    if engine in ("spark", "spark_states", "spark_arrow"):
        problem = java_problem()
        if problem is not None:  # else PySpark's "Java gateway process exited" after a while
            raise SystemExit(problem)
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
        from pyspark.sql import SparkSession

        from streammetrics._engines import spark_ranges
        from streammetrics.spark import evaluate

        if engine == "spark_states":  # the range path off: the tasks' states merged on the driver
            spark_ranges.split_for = lambda df, run: None  # type: ignore[assignment]
        spark = (SparkSession.builder.master("local[2]").appName("bench_engines")
                 .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
                 .getOrCreate())
        spark.sparkContext.setLogLevel("ERROR")
        try:
            secs, cpu, values = _timed(
                lambda: evaluate(spark.read.parquet(str(root)), _metrics(), label="y", score="p",
                                 direct_parquet=engine != "spark_arrow"), repeat)
            # the JVM (spark-submit's java, under the driver) and the Python workers under it
            kids = descendants()
            jvm = max((vm_hwm_mb(p) for p in kids if _exe(p) == "java"), default=0.0)
            py = max((vm_hwm_mb(p) for p in kids if _exe(p).startswith("python")), default=0.0)
        finally:
            spark.stop()
        return {"seconds": secs, "cpu": cpu, "peak_mb": jvm, "values": values,
                "note": f"the JVM, driver and executor; Python workers {py:.0f}"}
    if engine.startswith("ray"):
        import ray

        from streammetrics.ray import evaluate as ray_evaluate
        from streammetrics.ray import evaluate_parquet

        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, logging_level=logging.ERROR,
                 configure_logging=False)
        ctx = ray.data.DataContext.get_current()
        ctx.enable_progress_bars = False
        if engine == "ray_v1" and hasattr(ctx, "use_datasource_v2"):
            ctx.use_datasource_v2 = False
        if engine == "ray_dataset":  # Ray Data's read: the plain-read recognition off
            from streammetrics._engines import ray_source

            ray_source.parquet_source = lambda ds: None  # type: ignore[assignment]
        try:
            if engine in ("ray", "ray_dataset", "ray_v1"):
                secs, cpu, values = _timed(
                    lambda: ray_evaluate(ray.data.read_parquet(str(root)), _metrics(), label="y", score="p"), repeat)
            elif engine == "ray_materialized":
                ds = ray.data.read_parquet(str(root)).materialize()
                secs, cpu, values = _timed(lambda: ray_evaluate(ds, _metrics(), label="y", score="p"), repeat)
                del ds
            else:
                secs, cpu, values = _timed(
                    lambda: evaluate_parquet(str(root), _metrics(), label="y", score="p"), repeat)
            probe = ray.remote(lambda: (os.getpid(), _maxrss_mb()))
            peaks = dict(ray.get([probe.remote() for _ in range(16)]))
        finally:
            ray.shutdown()
        return {"seconds": secs, "cpu": cpu, "peak_mb": max(peaks.values()), "values": values}
    raise ValueError(f"engine: one of {ENGINES}, got {engine!r}")


def _plain(values: dict[str, Any]) -> dict[str, Any]:
    return {k: (v.tolist() if hasattr(v, "tolist") else v) for k, v in values.items()}


def run_all(root: Path, rows: int, engines: list[str], repeat: int = 2, report: Report | None = None) -> str:
    """Each engine in a fresh process; a markdown table (with the load average at each start),
    each row printed (``report``, else a new :class:`~benchmarks._harness.Report` on stdout) the
    moment its engine finishes. Every metric's value is compared with the first engine's
    (:func:`~benchmarks._harness.differing_values`): a row whose values are not all equal says
    which differ and by how much."""
    rep = report if report is not None else Report()
    start = len(rep.lines)
    add = rep.rows(["engine", "workers", "wall s", "M rows/s", "vs one process", "CPU s, all processes",
                    "CPU x one process", "peak MB per worker", "values vs first engine", "load avg (1 min)"])
    ref: dict[str, Any] | None = None
    names = {"single": ("one process (pyarrow row groups)", 1), "dask1": ("streammetrics.dask", 1),
             "dask": ("streammetrics.dask", 2),
             "dask1_malloc": ("streammetrics.dask, workers' malloc tuned", 1),
             "dask_malloc": ("streammetrics.dask, workers' malloc tuned", 2),
             "spark": ("streammetrics.spark, local[2]", 2),
             "spark_states": ("streammetrics.spark, local[2], range path off (states merged)", 2),
             "spark_arrow": ("streammetrics.spark, local[2], direct_parquet=False (mapInArrow)", 2),
             "ray": ("streammetrics.ray.evaluate(ray.data.read_parquet(DIR))", 2),
             "ray_dataset": ("the same, plain-read recognition off (Ray Data reads)", 2),
             "ray_v1": ("streammetrics.ray, Ray Data's first Parquet reader", 2),
             "ray_materialized": ("streammetrics.ray over a materialized dataset (read not timed)", 2),
             "ray_files": ("streammetrics.ray.evaluate_parquet (pyarrow in Ray tasks)", 2)}
    single_s = single_cpu = None
    for engine in engines:
        load = os.getloadavg()[0]
        here = str(Path(__file__).resolve().parents[1])
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([here, os.environ.get("PYTHONPATH", "")])}
        name, workers = names[engine]
        for attempt in range(2):  # a JVM / daemon connection lost under load: run it once more
            proc = subprocess.run([sys.executable, "-m", "benchmarks.bench_engines", "--data", str(root),
                                   "--one", engine, "--repeat", str(repeat)],
                                  capture_output=True, text=True, cwd=here, env=env)
            lost = (proc.returncode != 0 and any(m in proc.stderr for m in CONNECTION_LOST)
                    and "Spark needs Java" not in proc.stderr)
            if not lost or attempt:
                break
            first = [ln for ln in proc.stderr.splitlines() if any(m in ln for m in CONNECTION_LOST)][-1]
            name += f" (run again after: {first.strip()[:60]})"
        if proc.returncode != 0:
            last = (proc.stderr.strip().splitlines() or ["?"])[-1][:120]
            add([name, workers, f"failed: {last}", "", "", "", "", "", "", f"{load:.1f}"])
            continue
        res = json.loads(proc.stdout.strip().splitlines()[-1])
        if ref is None:
            ref = res["values"]
        differ = differing_values(res["values"], ref)
        same = "equal" if not differ else "DIFFER: " + ", ".join(f"{k} {d}" for k, d in differ.items())
        if engine == "single":
            single_s, single_cpu = res["seconds"], res["cpu"]
        speed = "-" if single_s is None else f"{single_s / res['seconds']:.2f}x"
        cost = "-" if single_cpu is None else f"{res['cpu'] / single_cpu:.2f}x"
        mem = f"{res['peak_mb']:.0f}" + (f" ({res['note']})" if res.get("note") else "")
        add([name, workers, f"{res['seconds']:.2f}", f"{rows / res['seconds'] / 1e6:.2f}", speed,
             f"{res['cpu']:.2f}", cost, mem, same, f"{load:.1f}"])
    return "\n".join(rep.lines[start:])


def write_skewed(root: Path, rows: int, files: int, share: float, seed: int = 7) -> None:
    """bench_scaleout's layout (``files`` files, row groups of 250,000, scores rounded to 6
    decimals) with a ``share`` of positive labels."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    rng = np.random.default_rng(seed)
    per = -(-rows // files)
    for i in range(files):
        n = min(per, rows - i * per)
        y = (rng.random(n) < share).astype(np.int64)
        p = np.round(1 / (1 + np.exp(-(rng.normal(size=n) + 1.2 * (y - 0.5)))), 6)
        pq.write_table(pa.table({"y": y, "p": p}), root / f"part-{i:03d}.parquet", row_group_size=250_000)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, required=True, help="directory of bench_scaleout's Parquet files")
    ap.add_argument("--rows", type=int, default=10_000_000)
    ap.add_argument("--engines", default=",".join(ENGINES))
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--positive-share", type=float, default=None,
                    help="write the data (on first use) with this share of positive labels instead of "
                         "bench_scaleout's half (few positives: the exchange of positives, "
                         "streammetrics._engines.minority)")
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
        if args.positive_share is None:
            write_data(args.data, args.rows, 20)
        else:
            write_skewed(args.data, args.rows, 20, args.positive_share)
    rep = Report()
    rep.emit(f"{args.rows:,} rows, {os.cpu_count()} CPUs; load average at the start "
             f"{' / '.join(f'{x:.1f}' for x in os.getloadavg())}", "")
    run_all(args.data, args.rows, args.engines.split(","), args.repeat, report=rep)


if __name__ == "__main__":
    main()
