"""Exact AUROC + AP where a gather cannot fit: workers whose memory limit is below the full state.

Workload (seeded, as ``bench_scaleout``): ``--rows`` binary rows (label ``y``, score ``p`` rounded
to 1e-6, so ties) in ``--files`` Parquet files. The full exact state of those rows -- what the
root of ``streammetrics.dask.evaluate`` (and a single process) holds -- is 8 bytes per score.
``streammetrics.dask.evaluate_ranked`` runs on a LocalCluster of ``--workers`` (4) single-threaded
workers whose ``memory_limit`` is ``--baseline-mb`` (250: Python, numpy, pandas, pyarrow, dask)
plus ``--headroom`` (1.5) times the worker's share of the exact state (state / workers), or
``--limit-mb`` (spilling and pausing off, so a worker that crosses 95% of its limit is killed
and restarted: the restarts are counted, and a task on three killed workers fails the run),
with ``--ranges`` score ranges, the files given as paths (``--input files``: each task reads
its file ``--chunk-rows`` rows at a time), as ``dd.read_parquet`` (``--input frame``: read
the same way) or as ``dd.read_parquet`` with a filter that keeps every row (``--input
computed-frame``: a DataFrame whose partitions Dask computes, each arriving whole), as
``dd.read_csv`` of the same rows written as CSV files (``--input csv``: partitions of
``--blocksize`` bytes of text) or as ``dd.from_pandas`` of every row held by the client
(``--input pandas``: one partition per file, sent to the workers as data). Printed: the state size, the limit, each worker's peak resident memory
(``ru_maxrss``) before and after (minus the baseline, in shares), its resident memory sampled
each second during the run (at 20, 40, ..., 100% of the samples: the runs kept in round one,
then freed range by range in round two), the restarts, the time, and
the values next to the single-process ones (which the script computes, in this process, from the
same files: a process that does hold every score).

A worker holds its share of the scores (its partitions' sorted runs, until every range has taken
its piece) plus one chunk in flight and one range being merged, over its baseline; the root of a
gather would need every score alone.

Run: ``python -m benchmarks.bench_ranked_memory [--rows N] [--files F] [--limit-mb M | --headroom H
--baseline-mb B] [--ranges R] [--workers W] [--input files|frame|computed-frame|csv|pandas]
[--chunk-rows C] [--blocksize 64MB]``.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from benchmarks.bench_scaleout import write_data


def _rss_mb() -> float:
    with open("/proc/self/statm") as f:  # Linux: resident pages
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 1e6


def _peak_mb() -> float:
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def _timeline(trace: list[dict[str, float]], worker: str) -> str:
    """A worker's sampled resident memory at 20, 40, ..., 100% of the samples."""
    seen = [t[worker] for t in trace if worker in t]
    if not seen:
        return "--"
    return " / ".join(f"{seen[min(len(seen) - 1, int(len(seen) * q / 5))]:.0f}" for q in (1, 2, 3, 4, 5))


def _single(root: Path) -> dict[str, Any]:
    import pyarrow.parquet as pq

    import streammetrics as sm

    ms = sm.MetricSet(auroc=sm.AUROC(), ap=sm.AveragePrecision())
    for f in sorted(root.glob("*.parquet")):
        tab = pq.read_table(f, columns=["y", "p"])
        ms.update(tab.column("y").to_numpy(), tab.column("p").to_numpy())
    return dict(ms.compute())


def _data(args: argparse.Namespace, root: Path) -> Any:
    """The input ``evaluate_ranked`` is given (see ``--input``)."""
    import dask.dataframe as dd

    if args.input == "files":
        return str(root)
    if args.input == "frame":
        return dd.read_parquet(str(root))
    if args.input == "computed-frame":
        return dd.read_parquet(str(root), filters=[("p", ">=", -1.0)])
    if args.input == "csv":  # the same rows as CSV files, read in blocks of --blocksize bytes
        import pyarrow.csv as pc
        import pyarrow.parquet as pq

        csv = root / "csv"
        if not csv.is_dir():
            csv.mkdir()
            for f in sorted(root.glob("*.parquet")):
                pc.write_csv(pq.read_table(f, columns=["y", "p"]), csv / f"{f.stem}.csv")
        return dd.read_csv(str(csv / "*.csv"), blocksize=args.blocksize)
    import pandas as pd  # --input pandas: the rows in the client, one partition per file
    import pyarrow.parquet as pq

    files = sorted(root.glob("*.parquet"))
    frame = pd.concat([pq.read_table(f, columns=["y", "p"]).to_pandas() for f in files], ignore_index=True)
    return dd.from_pandas(frame, npartitions=len(files), sort=False)


def main(argv: list[str] | None = None) -> str:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=80_000_000)
    ap.add_argument("--files", type=int, default=80)
    ap.add_argument("--limit-mb", type=int, default=None)
    ap.add_argument("--headroom", type=float, default=1.5)
    ap.add_argument("--baseline-mb", type=int, default=250)
    ap.add_argument("--ranges", type=int, default=64)
    ap.add_argument("--workers", type=int, default=4)
    ap.add_argument("--input", choices=("files", "frame", "computed-frame", "csv", "pandas"), default="files")
    ap.add_argument("--blocksize", default="64MB", help="dd.read_csv's blocksize (--input csv)")
    ap.add_argument("--chunk-rows", type=int, default=1 << 18)
    ap.add_argument("--data", type=Path, default=None)
    args = ap.parse_args(argv)
    share_mb = args.rows * 8 / 1e6 / args.workers
    limit_mb = args.limit_mb or int(args.baseline_mb + args.headroom * share_mb)

    import dask
    from distributed import Client, LocalCluster, get_task_stream

    import streammetrics as sm
    from streammetrics.dask import evaluate_ranked

    tmp = None
    root = args.data
    if root is None:
        tmp = tempfile.mkdtemp(prefix="bench_ranked_")
        root = Path(tmp)
    root.mkdir(parents=True, exist_ok=True)
    try:
        if not list(root.glob("*.parquet")):
            write_data(root, args.rows, args.files)
        state_mb = args.rows * 8 / 1e6
        memory = {"distributed.worker.memory.target": False, "distributed.worker.memory.spill": False,
                  "distributed.worker.memory.pause": False, "distributed.worker.memory.terminate": 0.95,
                  "distributed.worker.daemon": False}
        with dask.config.set(memory), LocalCluster(
            n_workers=args.workers, threads_per_worker=1, processes=True, dashboard_address=None,
            memory_limit=f"{limit_mb}MB",
        ) as cluster, Client(cluster) as client:
            client.run(lambda: __import__("streammetrics.dask"))
            before = client.run(_peak_mb)
            pids = client.run(os.getpid)
            data = _data(args, root)
            t = time.perf_counter()
            trace: list[dict[str, float]] = []  # each worker's resident memory, sampled each second
            done = threading.Event()

            def sample() -> None:
                while not done.wait(1.0):
                    with contextlib.suppress(Exception):  # a worker restarting: skip this sample
                        trace.append(client.run(_rss_mb))

            sampler = threading.Thread(target=sample, daemon=True)
            sampler.start()
            with get_task_stream() as stream:
                values = evaluate_ranked(data, {"auroc": sm.AUROC(), "ap": sm.AveragePrecision()},
                                         label="y", score="p", ranges=args.ranges, chunk_rows=args.chunk_rows)
            seconds = time.perf_counter() - t
            done.set()
            sampler.join()
            read: dict[str, int] = {}  # the files / partitions each worker read (and kept the runs of)
            for task in stream.data:
                if "runs_task" in str(task["key"]) or "_runs_frame" in str(task["key"]):
                    read[task["worker"]] = read.get(task["worker"], 0) + 1
            after = client.run(_peak_mb)
            idle = client.run(_rss_mb)  # nothing held: the baseline once Parquet has been read
            restarted = sum(1 for w, pid in client.run(os.getpid).items() if pids.get(w) != pid)
        single = _single(root)
        lines = [
            f"## Exact AUROC + AP of {args.rows:,} scores on workers limited to {limit_mb} MB",
            "",
            f"Full exact state: {state_mb:.0f} MB (8 bytes per score), a share of {share_mb:.0f} MB "
            f"per worker; worker memory_limit: {limit_mb} MB x {args.workers} workers"
            + ("" if args.limit_mb else f" (baseline {args.baseline_mb} MB + {args.headroom:g} x share)")
            + f" (spill and pause off, terminate at 95%); {args.ranges} ranges; input {args.input}"
            f" (chunk_rows {args.chunk_rows:,}); "
            f"load average {' / '.join(f'{x:.1f}' for x in os.getloadavg())}.",
            "",
            "| worker | peak RSS before (MB) | peak RSS after (MB) | (after - before) / share "
            "| runs tasks run (of an even share; files: one task per worker, equal bytes) "
            "| RSS after the run, nothing held (MB) "
            "| RSS at 20 / 40 / 60 / 80 / 100% of the run's samples (MB) |",
            "|---|---|---|---|---|---|---|",
        ]
        even = max(sum(read.values()), 1) / args.workers
        for i, w in enumerate(sorted(after)):
            lines.append(f"| {i} | {before.get(w, float('nan')):.0f} | {after[w]:.0f} | "
                         f"{(after[w] - before.get(w, float('nan'))) / share_mb:.2f} | "
                         f"{read.get(w, 0)} ({read.get(w, 0) / even:.2f}) | {idle.get(w, float('nan')):.0f} | "
                         f"{_timeline(trace, w)} |")
        lines += [
            "",
            f"Workers restarted (crossed 95% of the limit): {restarted}.",
            f"evaluate_ranked: {seconds:.1f} s ({args.rows / seconds / 1e6:.2f} M rows/s).",
            f"AUROC {values['auroc']:.15f} (single process {single['auroc']:.15f}); "
            f"AP {values['ap']:.15f} (single process {single['ap']:.15f}).",
        ]
        text = "\n".join(lines)
        print(text)
        return text
    finally:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
