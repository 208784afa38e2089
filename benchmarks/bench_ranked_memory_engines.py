"""Exact AUROC + AP through Spark's and Ray's ``evaluate_ranked`` with every Python worker capped.

Workload (seeded, as ``bench_scaleout``): ``--rows`` binary rows (label ``y``, score ``p`` rounded
to 1e-6, so ties) in ``--files`` Parquet files; the exact state is 8 bytes per score, a share
is that over the ``--workers`` (2) worker slots (Spark ``local[2]``, Ray ``num_cpus=2``).

Each engine runs in its own Python process:

1. **Baseline** (no cap): a tiny ``evaluate_ranked`` (2,000 rows) so that every Python worker
   has imported and run the code once; then each idle worker's size is read from
   ``/proc/<pid>/status`` -- ``VmSize`` for Spark, ``VmData`` for Ray (what its cap counts) --
   and its resident (``VmRSS``) and private resident (``RssAnon``) sizes.
2. **Capped run**: the Python workers get a kernel limit of the largest idle size plus
   ``--headroom`` (1.5) x the share, so that an allocation past it fails (``MemoryError``) and
   the run with it. Spark: a new session with its own knob, ``spark.executor.pyspark.memory``
   (``RLIMIT_AS`` in each Python worker: the address space); ``--partitions`` (2) partitions,
   i.e. one share each. Ray has no per-worker memory limit (its ``memory=`` only schedules):
   in the same session, the driver puts the files' rows in the object store as blocks
   (``--blocks``, default one per file; as a materialized ``read_parquet`` would leave them, so
   that no worker has read anything), then every ``ray::`` process gets ``RLIMIT_DATA``
   (private writable memory: the object store's shared mapping is not counted) through
   ``prlimit`` as soon as it is seen. Workers' Arrow uses the system allocator
   (``ARROW_DEFAULT_MEMORY_POOL=system``, ``--arrow-pool``): mimalloc reserves a 1 GiB arena
   of address space that it never touches, which would hide the cap in the baseline.

While the capped run goes, every worker process (Spark: the forked ``pyspark.daemon``
workers; Ray: ``ray::`` processes) is polled every 100 ms for its peak resident size
(``VmHWM``) and its peak private resident size (``RssAnon``: Ray's object store pages, shared,
are in ``VmHWM`` but not in ``RssAnon``; Ray: only the processes seen running
``evaluate_ranked``'s tasks). Printed per engine (each row as soon as it is done):
the cap, each worker's peaks (its private peak over the idle private size, in shares), the driver's and the JVM's
peaks, the time, and the values against scikit-learn's ``roc_auc_score`` /
``average_precision_score`` on the same rows (computed in the parent process).

Run (about 5 minutes per engine at the default 40M rows on 2 quiet cores):
``python -m benchmarks.bench_ranked_memory_engines [--engines spark,ray,ray_files] [--rows N] [--files F]
[--headroom H] [--ranges R] [--partitions P] [--blocks B] [--chunk-rows C] [--data DIR]``
(``--partitions``: Spark partitions, default 2, one per worker slot; ``--blocks``: Ray blocks,
default one per file, put in the object store by the driver before the run; ``ray_files``:
Ray's ``evaluate_ranked`` given the Parquet files, read by its tasks ``chunk_rows`` rows at a
time, no Ray Data).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from benchmarks.bench_engines import _exe, descendants
from benchmarks.bench_scaleout import write_data

MIB = 1 << 20
_STATUS = ("VmSize", "VmData", "VmRSS", "VmHWM", "RssAnon")


def status(pid: int) -> dict[str, float]:
    """A live process's ``/proc/<pid>/status`` sizes (MiB) of :data:`_STATUS`; {} once gone."""
    out: dict[str, float] = {}
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            key = line.split(":", 1)[0]
            if key in _STATUS:
                out[key] = int(line.split()[1]) / 1024
    except OSError:
        return {}
    return out


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def workers(engine: str) -> list[int]:
    """The live Python worker processes of ``engine`` under this process: Spark's forked
    ``pyspark.daemon`` workers (not the daemon itself, a child of the JVM), Ray's ``ray::``
    processes."""
    out = []
    for pid in descendants():
        cmd = _cmdline(pid)
        if engine == "ray" and cmd.startswith("ray::"):
            out.append(pid)
        elif engine == "spark" and "pyspark.daemon" in cmd:
            ppid = int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1]) \
                if os.path.exists(f"/proc/{pid}/stat") else 0
            if "pyspark.daemon" in _cmdline(ppid):
                out.append(pid)
    return out


class Poller:
    """Each worker's largest ``VmHWM`` and ``RssAnon`` (MiB), polled every ``every`` seconds;
    with ``cap_data`` (MiB), each worker's ``RLIMIT_DATA`` set to it when first seen."""

    def __init__(self, engine: str, cap_data: int | None = None, every: float = 0.1,
                 find: Any = None) -> None:
        self.engine, self.cap, self.every = engine, cap_data, every
        self.find = find or (lambda: workers(engine))  # the processes to watch (and cap)
        self.peak: dict[int, dict[str, float]] = {}
        self.titles: dict[int, set[str]] = {}  # Ray: the tasks each process was seen running
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._done.is_set():
            for pid in self.find():
                s = status(pid)
                if s and pid not in self.peak and self.cap is not None:
                    with contextlib.suppress(OSError):  # gone already
                        resource.prlimit(pid, resource.RLIMIT_DATA, (self.cap * MIB, self.cap * MIB))
                if s:
                    seen = self.peak.setdefault(pid, {"VmHWM": 0.0, "RssAnon": 0.0})
                    seen["VmHWM"] = max(seen["VmHWM"], s.get("VmHWM", 0.0))
                    seen["RssAnon"] = max(seen["RssAnon"], s.get("RssAnon", 0.0))
                    self.titles.setdefault(pid, set()).add(_cmdline(pid).split(" ")[0])
            self._done.wait(self.every)

    def __enter__(self) -> Poller:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._done.set()
        self._thread.join()


def _metrics() -> Any:
    import streammetrics as sm

    return {"auroc": sm.AUROC(), "ap": sm.AveragePrecision()}


def _idle(engine: str) -> dict[int, dict[str, float]]:
    time.sleep(1.0)
    return {pid: status(pid) for pid in workers(engine)}


def _tiny(root: Path) -> Path:
    import pyarrow as pa
    import pyarrow.parquet as pq

    tiny = root / "_tiny"
    tiny.mkdir(exist_ok=True)
    y = [i % 2 for i in range(2000)]
    pq.write_table(pa.table({"y": y, "p": [((i * 7919) % 1000) / 1000 for i in range(2000)]}),
                   tiny / "part.parquet")
    return tiny


# -- Spark ----------------------------------------------------------------------------------------

def _spark(conf: dict[str, str]) -> Any:
    from pyspark.sql import SparkSession

    from benchmarks.bench_engines import java_problem

    problem = java_problem()
    if problem is not None:  # one line now, not PySpark's gateway error later
        raise SystemExit(problem)

    b = SparkSession.builder.master("local[2]").appName("bench_ranked_memory_engines")
    for k, v in {"spark.ui.enabled": "false", "spark.ui.showConsoleProgress": "false", **conf}.items():
        b = b.config(k, v)
    spark = b.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def run_spark(root: Path, args: argparse.Namespace, share_mib: float) -> dict[str, Any]:
    from streammetrics.spark import evaluate_ranked

    tiny = _tiny(root)
    spark = _spark({})
    try:
        evaluate_ranked(spark.read.parquet(str(tiny)), _metrics(), label="y", score="p", ranges=4)
        idle = _idle("spark")
    finally:
        spark.stop()
    base = max(s["VmSize"] for s in idle.values())
    cap = int(base + args.headroom * share_mib)
    total = sum(f.stat().st_size for f in root.glob("*.parquet"))
    conf = {"spark.executor.pyspark.memory": f"{cap}m",
            "spark.sql.files.maxPartitionBytes": str(int(total / args.partitions * 1.02) + 1),
            "spark.sql.files.openCostInBytes": "0", "spark.sql.files.minPartitionNum": "1"}
    spark = _spark(conf)
    try:
        df = spark.read.parquet(*[str(f) for f in sorted(root.glob("*.parquet"))])
        parts = df.rdd.getNumPartitions()
        out = _timed_run("spark", lambda: evaluate_ranked(df, _metrics(), label="y", score="p",
                                                          ranges=args.ranges, chunk_rows=args.chunk_rows))
        jvm = max((status(p).get("VmHWM", 0.0) for p in descendants() if _exe(p) == "java"), default=0.0)
    finally:
        spark.stop()
    return {**out, "idle": idle, "workers": [str(p) for p in idle], "baseline": base,
            "baseline_kind": "VmSize (RLIMIT_AS)", "cap": cap,
            "pieces": f"{parts} partitions", "jvm": jvm}


# -- Ray ------------------------------------------------------------------------------------------

def _ray() -> Any:
    import ray

    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, logging_level=logging.ERROR,
             configure_logging=False, object_store_memory=3 << 30,
             runtime_env={"env_vars": {k: os.environ[k] for k in ("ARROW_DEFAULT_MEMORY_POOL", "PYTHONPATH")}})
    ray.data.DataContext.get_current().enable_progress_bars = False
    return ray


def run_ray(root: Path, args: argparse.Namespace, share_mib: float, files: bool = False) -> dict[str, Any]:
    from streammetrics.ray import evaluate_ranked

    tiny = _tiny(root)
    ray = _ray()
    try:
        evaluate_ranked(ray.data.read_parquet(str(tiny)), _metrics(), label="y", score="p", ranges=4)
        idle = _idle("ray")
        pool = [str(p) for p in idle if _cmdline(p).startswith("ray::IDLE")]
        base = max(s["VmData"] for p, s in idle.items() if _cmdline(p).startswith("ray::IDLE"))
        cap = int(base + args.headroom * share_mib)
        if files:  # ray_files: the tasks read the Parquet files themselves, chunk by chunk
            out = _timed_run("ray", lambda: evaluate_ranked(str(root / "*.parquet"), _metrics(), label="y",
                                                            score="p", ranges=args.ranges,
                                                            chunk_rows=args.chunk_rows), cap_data=cap)
            n = len(list(root.glob("*.parquet")))
            return {**out, "idle": idle, "workers": pool, "baseline": base,
                    "baseline_kind": "VmData (RLIMIT_DATA)", "cap": cap,
                    "pieces": f"{n} Parquet files read by the tasks", "jvm": 0.0}
        # the blocks put in the object store by the driver, one file each (as a materialized
        # read_parquet would leave them), so that no worker has read anything before the run
        import pyarrow as pa
        import pyarrow.parquet as pq

        paths = sorted(root.glob("*.parquet"))
        groups = [paths[i :: args.blocks] for i in range(args.blocks)] if args.blocks else [[f] for f in paths]
        refs = [ray.put(pa.concat_tables([pq.read_table(f, columns=["y", "p"]) for f in g]).combine_chunks())
                for g in groups if g]
        ds = ray.data.from_arrow_refs(refs)
        blocks = len(refs)
        out = _timed_run("ray", lambda: evaluate_ranked(ds, _metrics(), label="y", score="p",
                                                        ranges=args.ranges, chunk_rows=args.chunk_rows),
                         cap_data=cap)
    finally:
        ray.shutdown()
    return {**out, "idle": idle, "workers": pool, "baseline": base, "baseline_kind": "VmData (RLIMIT_DATA)", "cap": cap,
            "pieces": f"{blocks} blocks", "jvm": 0.0}


def _timed_run(engine: str, fn: Any, cap_data: int | None = None) -> dict[str, Any]:
    driver_before = status(os.getpid())["VmRSS"]
    t = time.perf_counter()
    values, error = None, None
    with Poller(engine, cap_data) as poll:
        try:
            values = {k: float(v) for k, v in fn().items()}
        except Exception as exc:  # a capped worker's MemoryError, as the engine reports it
            lines = [ln for ln in str(exc).splitlines() if "Error" in ln] or str(exc).splitlines() or [""]
            error = f"{type(exc).__name__}: {lines[-1].strip()[:200]}"
    return {"seconds": time.perf_counter() - t, "values": values, "error": error,
            "peaks": {str(k): v for k, v in poll.peak.items() if _ours(engine, poll.titles.get(k, set()))},
            "driver_before": driver_before,
            "driver": status(os.getpid())["VmHWM"]}


def _ours(engine: str, titles: set[str]) -> bool:
    """Whether a worker ran evaluate_ranked's tasks (Ray: not its agents, actors, idle pool)."""
    return engine == "spark" or any(t.startswith(("ray::_source_task", "ray::_split_task", "ray::_range_task"))
                                    for t in titles)


def one(engine: str, args: argparse.Namespace) -> dict[str, Any]:
    """One engine's two sessions in this process (see the module docstring)."""
    os.environ["ARROW_DEFAULT_MEMORY_POOL"] = args.arrow_pool  # Spark's workers inherit it
    root = str(Path(__file__).resolve().parent.parent)  # workers import this checkout's package
    os.environ["PYTHONPATH"] = os.pathsep.join([root, *filter(None, [os.environ.get("PYTHONPATH")])])
    share_mib = args.rows * 8 / MIB / args.workers
    if engine == "spark":
        out = run_spark(args.data, args, share_mib)
    else:
        out = run_ray(args.data, args, share_mib, files=engine == "ray_files")
    out["idle"] = {str(k): v for k, v in out["idle"].items()}
    return out


def _sklearn(root: Path) -> dict[str, float]:
    """scikit-learn's values of the rows in ``root`` (kept in ``root/_sklearn.json``)."""
    cache = root / "_sklearn.json"
    if cache.exists():
        return dict(json.loads(cache.read_text()))
    out = _sklearn_values(root)
    cache.write_text(json.dumps(out))
    return out


def _sklearn_values(root: Path) -> dict[str, float]:
    import numpy as np
    import pyarrow.parquet as pq
    from sklearn.metrics import average_precision_score, roc_auc_score

    tabs = [pq.read_table(f, columns=["y", "p"]) for f in sorted(root.glob("*.parquet"))]
    y = np.concatenate([t.column("y").to_numpy() for t in tabs])
    p = np.concatenate([t.column("p").to_numpy() for t in tabs])
    del tabs
    return {"auroc": float(roc_auc_score(y, p)), "ap": float(average_precision_score(y, p))}


def row(engine: str, r: dict[str, Any], args: argparse.Namespace, oracle: dict[str, float]) -> str:
    share = args.rows * 8 / MIB / args.workers
    idle = [s for p, s in r["idle"].items() if p in r["workers"]]
    idle_rss = max((s.get("VmRSS", 0.0) for s in idle), default=0.0)
    idle_anon = max((s.get("RssAnon", 0.0) for s in idle), default=0.0)
    peaks = sorted(r["peaks"].values(), key=lambda p: -p["RssAnon"])
    hwm = " / ".join(f"{p['VmHWM']:.0f}" for p in peaks) or "--"
    anon = " / ".join(f"{p['RssAnon']:.0f}" for p in peaks) or "--"
    over = " / ".join(f"{(p['RssAnon'] - idle_anon) / share:.2f}" for p in peaks) or "--"
    if r["values"] is None:
        verdict = f"failed: {r['error']}"
    else:
        rel = max(abs(r["values"][k] - oracle[k]) / abs(oracle[k]) for k in oracle)
        verdict = f"finished; {'equal' if rel <= 1e-12 else 'DIFFERS'} (max rel. diff {rel:.1e})"
    return (f"| {engine} | {r['pieces']}, R={args.ranges} | {r['cap']} = {r['baseline']:.0f} + "
            f"{args.headroom:g} x {share:.0f} ({r['baseline_kind']}) | {idle_rss:.0f} / {idle_anon:.0f} | {hwm} | {anon} "
            f"| {over} | {r['driver_before']:.0f} -> {r['driver']:.0f} | "
            f"{r['jvm']:.0f} | {r['seconds']:.0f} | {verdict} |")


def main(argv: list[str] | None = None) -> str:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--engines", default="spark,ray")
    ap.add_argument("--rows", type=int, default=40_000_000)
    ap.add_argument("--files", type=int, default=16)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--headroom", type=float, default=1.5)
    ap.add_argument("--ranges", type=int, default=16)
    ap.add_argument("--partitions", type=int, default=2, help="Spark partitions asked for")
    ap.add_argument("--blocks", type=int, default=None, help="Ray blocks (default: one per file)")
    ap.add_argument("--chunk-rows", type=int, default=1 << 18)
    ap.add_argument("--arrow-pool", default="system")
    ap.add_argument("--data", type=Path, default=None)
    ap.add_argument("--quick", action="store_true", help="2M rows in 4 files (run_all --quick)")
    ap.add_argument("--one", choices=("spark", "ray", "ray_files"), default=None, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.quick:
        args.rows, args.files = 2_000_000, 4
    if args.one:  # the child: one engine, a JSON line out
        print("RESULT " + json.dumps(one(args.one, args)), flush=True)
        return ""
    tmp = None
    if args.data is None:
        tmp = tempfile.mkdtemp(prefix="bench_ranked_engines_")
        args.data = Path(tmp)
    args.data.mkdir(parents=True, exist_ok=True)
    try:
        if not list(args.data.glob("*.parquet")):
            write_data(args.data, args.rows, args.files)
        oracle = _sklearn(args.data)
        share = args.rows * 8 / MIB / args.workers
        lines = [f"## evaluate_ranked, exact AUROC + AP of {args.rows:,} scores, Python workers capped",
                 "", f"Exact state {args.rows * 8 / MIB:.0f} MiB, {args.workers} worker slots: a share of "
                 f"{share:.0f} MiB; cap = idle worker baseline + {args.headroom:g} x share; chunk_rows "
                 f"{args.chunk_rows:,}; Arrow pool {args.arrow_pool}; load average "
                 f"{' / '.join(f'{x:.1f}' for x in os.getloadavg())}.", "",
                 "| engine | pieces | cap (MiB) | idle worker RSS / private RSS (MiB) | peak RSS per worker (MiB) "
                 "| peak private RSS per worker (MiB) | (peak private - idle private) / share | driver RSS (MiB) "
                 "| JVM peak (MiB) | s | result vs scikit-learn |",
                 "|---|---|---|---|---|---|---|---|---|---|---|"]
        print("\n".join(lines), flush=True)
        for engine in args.engines.split(","):
            cmd = [sys.executable, "-m", "benchmarks.bench_ranked_memory_engines", "--one", engine,
                   *(argv if argv is not None else sys.argv[1:]), "--data", str(args.data)]
            proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
            got = [ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT ")]
            if got:
                line = row(engine, json.loads(got[-1][7:]), args, oracle)
            else:
                tail = (proc.stderr.strip().splitlines() or ["no output"])[-1][:200]
                line = f"| {engine} | -- | -- | -- | -- | -- | -- | -- | -- | -- | crashed: {tail} |"
            print(line, flush=True)
            lines.append(line)
        return "\n".join(lines)
    finally:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
