"""Per-micro-batch cost of ``spark_streaming.evaluate_stream``'s two state APIs on one growing
exact-AUROC window.

One key and one event-time window (a day, never closed during the run) receive ``--batches``
micro-batches of ``--rows`` rows each (one Parquet file per micro-batch, ``maxFilesPerTrigger=1``),
so the window's exact state grows by ``--rows`` scores per micro-batch. Both APIs run on the
RocksDB state store (``transformWithStateInPandas`` needs it; ``applyInPandasWithState`` is given
it too so that only the operator differs), append mode, a ``noop`` sink, ``local[2]``, 2 shuffle
partitions. Per micro-batch, from ``query.recentProgress``: the trigger's wall time
(``durationMs.triggerExecution``), the stateful operator's time (``allUpdatesTimeMs``) and the
bytes RocksDB wrote for it (``customMetrics.rocksdbTotalBytesWritten``: the state rewritten, or
only the new part). ``applyInPandasWithState`` rewrites the window's whole state (O(state));
``transformWithStateInPandas`` appends the micro-batch's part (O(new rows)) and merges the list
every ``--max-parts`` micro-batches.

Run (a few minutes on a quiet 2-core machine):
``python -m benchmarks.bench_stream_state --batches 12 --rows 25000``
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from typing import Any

APIS = ("applyInPandasWithState", "transformWithStateInPandas")


def _run(spark: Any, api: str, source: str, home: str, max_parts: int) -> list[dict[str, float]]:
    import streammetrics as sm
    from streammetrics.spark_streaming import evaluate_stream

    stream = (spark.readStream.schema("ts timestamp, y long, p double")
              .option("maxFilesPerTrigger", 1).parquet(source))
    frame = evaluate_stream(stream, sm.AUROC(), label="y", score="p", window=("ts", "1 day"),
                            watermark="1 hour", state_api=api, max_parts=max_parts)
    query = (frame.writeStream.outputMode("append").format("noop")
             .option("checkpointLocation", os.path.join(home, f"chk-{api}")).start())
    try:
        query.processAllAvailable()
        progress = [p for p in query.recentProgress if p["numInputRows"]]
    finally:
        query.stop()
    out = []
    for p in progress:
        op = p["stateOperators"][0]
        out.append({"batch": p["batchId"], "trigger_ms": p["durationMs"]["triggerExecution"],
                    "state_ms": op.get("allUpdatesTimeMs", 0),
                    "written": op.get("customMetrics", {}).get("rocksdbTotalBytesWritten", float("nan"))})
    return out


def main(argv: list[str] | None = None) -> str:
    """Run both APIs on the same files; print and return a markdown table."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--batches", type=int, default=12)
    ap.add_argument("--rows", type=int, default=25_000)
    ap.add_argument("--max-parts", type=int, default=32)
    ap.add_argument("--quick", action="store_true", help="4 micro-batches of 5,000 rows")
    args = ap.parse_args(argv)
    if args.quick:
        args.batches, args.rows = 4, 5_000

    import numpy as np
    import pandas as pd
    from pyspark.sql import SparkSession

    from benchmarks.bench_engines import java_problem
    from streammetrics.spark_streaming import ROCKSDB_PROVIDER

    problem = java_problem()
    if problem is not None:  # one line now, not PySpark's gateway error later
        raise SystemExit(problem)
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    spark = (SparkSession.builder.master("local[2]").config("spark.ui.enabled", "false")
             .config("spark.ui.showConsoleProgress", "false")
             .config("spark.sql.shuffle.partitions", "2")
             .config("spark.sql.streaming.stateStore.providerClass", ROCKSDB_PROVIDER).getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    home = tempfile.mkdtemp(prefix="bench-stream-")
    source = os.path.join(home, "in")
    os.mkdir(source)
    rng = np.random.default_rng(0)
    start = pd.Timestamp("2026-01-01", tz="UTC")
    for i in range(args.batches):  # event times move forward a minute per file: the window stays open
        ts = start + pd.to_timedelta(i + rng.random(args.rows) / 2, unit="min")
        y = rng.integers(0, 2, args.rows)
        pd.DataFrame({"ts": ts.astype("datetime64[us, UTC]"), "y": y, "p": rng.random(args.rows) + 0.3 * y}) \
            .to_parquet(os.path.join(source, f"part{i:04d}.parquet"))
    results = {}
    try:
        for api in APIS:
            t0 = time.perf_counter()
            results[api] = _run(spark, api, source, home, args.max_parts)
            print(f"{api}: {time.perf_counter() - t0:.1f} s", file=sys.stderr)
    finally:
        spark.stop()
        shutil.rmtree(home, ignore_errors=True)
    lines = ["## bench_stream_state: evaluate_stream's state APIs per micro-batch", "",
             f"One exact-AUROC window, {args.batches} micro-batches of {args.rows} rows (state after "
             f"batch i: {args.rows} x (i + 1) scores); RocksDB state store; max_parts={args.max_parts}.", "",
             "| micro-batch | scores in state | " + " | ".join(
                 f"{api}: trigger ms / state op ms / RocksDB bytes written" for api in APIS) + " |",
             "|---|---|" + "---|" * len(APIS)]
    for i in range(min(len(r) for r in results.values())):
        cells = [f"{r[i]['trigger_ms']:.0f} / {r[i]['state_ms']:.0f} / {r[i]['written']:,.0f}"
                 for r in results.values()]
        lines.append(f"| {i} | {args.rows * (i + 1):,} | " + " | ".join(cells) + " |")
    text = "\n".join(lines)
    print(text)
    return text


if __name__ == "__main__":
    main()
