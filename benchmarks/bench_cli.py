"""``streammetrics evaluate`` on a big Parquet file vs pandas + scikit-learn doing the same job.

Workload (seeded): ``--rows`` (default 10M) binary rows -- label ``y`` (int8, 30 % positives) and a
score ``p`` (float64 probability, rounded to 1e-6 so there are ties) -- in one Parquet file with
row groups of 1M rows. The job: the default binary report of ``evaluate`` -- accuracy, precision,
recall, F1, specificity, NPV, balanced accuracy, MCC at threshold 0.5, AUROC and AP -- from the
file on disk to the numbers. Implementations, each in its own subprocess (peak RSS from VmHWM,
address-space limit as every benchmark here):

* ``evaluate`` exact: ``streammetrics evaluate FILE --label y --score p --json OUT --quiet``
  (in-process call of the CLI entry point: reading, validation, MetricSet, JSON);
* ``evaluate --no-intervals``: the same without the 95% intervals (DeLong's for AUROC, a linear
  merge of the sorted positive and negative scores, is the one part of the job scikit-learn does
  not do);
* ``evaluate --max-bytes 16M``: bounded AUROC/AP (binned; reported as unavailable if the installed
  ranking metrics do not take ``max_bytes``);
* pandas + scikit-learn: ``pd.read_parquet`` then one ``confusion_matrix`` (the eight confusion
  measures derived from it, the cheapest honest way) plus ``roc_auc_score`` and
  ``average_precision_score``;
* pandas + scikit-learn, one call per metric (what a script usually does: ``accuracy_score``,
  ``precision_score``, ... each re-validating and re-counting).

Regression (issue #30), on a second Parquet file of the same row count (target ``y`` and
prediction ``yhat``, float64 rounded to 1e-3): ``evaluate --target y --prediction yhat --metrics
mse,rmse,mae,medae,r2,explained_variance,max_error,pearson`` against pandas + one scikit-learn
(scipy for Pearson) call per metric. The regression kernels are numba functions: their one-time
load (1-2 s per fresh process) is done on a 100k-row file before the timed region, as imports are.

Values are checked against the exact ``evaluate`` (max abs difference; bounded AUROC/AP differ
within their certified bounds). ``--repeat`` rounds (default 3) run the implementations in turn;
the table gives median seconds and the range, so a burst of load from other processes shows.
Run: ``python -m benchmarks.bench_cli [--rows N] [--quick] [--repeat R]``.
Prints markdown.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from typing import Any

import numpy as np

if __package__ in (None, ""):  # ``python benchmarks/bench_cli.py``
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from benchmarks import _harness as h

SEED = 20261122
NAMES = ["accuracy", "precision", "recall", "f1", "specificity", "npv", "balanced_accuracy", "mcc",
         "auroc", "average_precision"]
IMPLS = {
    "evaluate": "streammetrics evaluate (exact)",
    "evaluate-nointervals": "streammetrics evaluate --no-intervals (exact)",
    "evaluate-bounded": "streammetrics evaluate --max-bytes 16M",
    "sklearn": "pandas + scikit-learn (one confusion_matrix + AUROC + AP)",
    "sklearn-each": "pandas + scikit-learn (one call per metric)",
    "evaluate-regression": "regression: streammetrics evaluate --target --prediction",
    "sklearn-regression": "regression: pandas + scikit-learn (one call per metric)",
}
REG_NAMES = ["mse", "rmse", "mae", "medae", "r2", "explained_variance", "max_error", "pearson"]


def _is_regression(impl: str) -> bool:
    return impl.endswith("-regression")


def make_regression_file(path: str, rows: int) -> None:
    """``rows`` regression rows (target ``y``, prediction ``yhat``) in row groups of 1M."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    rng = np.random.default_rng(SEED + 30)
    writer = None
    for start in range(0, rows, 1_000_000):
        n = min(1_000_000, rows - start)
        y = np.round(100.0 + 10.0 * rng.normal(size=n), 3)
        yhat = np.round(y + rng.standard_t(5, size=n), 3)
        table = pa.table({"y": y, "yhat": yhat})
        if writer is None:
            writer = pq.ParquetWriter(path, table.schema)
        writer.write_table(table, row_group_size=1_000_000)
    assert writer is not None
    writer.close()


def _sklearn_regression(y: np.ndarray, p: np.ndarray) -> dict[str, float]:
    from scipy import stats
    from sklearn import metrics as m

    return {
        "mse": m.mean_squared_error(y, p), "rmse": m.root_mean_squared_error(y, p),
        "mae": m.mean_absolute_error(y, p), "medae": m.median_absolute_error(y, p),
        "r2": m.r2_score(y, p), "explained_variance": m.explained_variance_score(y, p),
        "max_error": m.max_error(y, p), "pearson": stats.pearsonr(y, p).statistic,
    }


def make_file(path: str, rows: int) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    rng = np.random.default_rng(SEED)
    writer = None
    for start in range(0, rows, 1_000_000):
        n = min(1_000_000, rows - start)
        y = (rng.random(n) < 0.3).astype(np.int8)
        p = np.round(1.0 / (1.0 + np.exp(-(1.3 * rng.normal(size=n) + 1.6 * y - 1.0))), 6)
        table = pa.table({"y": y, "p": p})
        if writer is None:
            writer = pq.ParquetWriter(path, table.schema)
        writer.write_table(table, row_group_size=1_000_000)
    assert writer is not None
    writer.close()


def _sklearn_values(y: np.ndarray, p: np.ndarray, each: bool) -> dict[str, float]:
    from sklearn import metrics as m

    pred = (p >= 0.5).astype(np.int8)
    if each:
        return {
            "accuracy": m.accuracy_score(y, pred),
            "precision": m.precision_score(y, pred),
            "recall": m.recall_score(y, pred),
            "f1": m.f1_score(y, pred),
            "specificity": m.recall_score(y, pred, pos_label=0),
            "npv": m.precision_score(y, pred, pos_label=0),
            "balanced_accuracy": m.balanced_accuracy_score(y, pred),
            "mcc": m.matthews_corrcoef(y, pred),
            "auroc": m.roc_auc_score(y, p),
            "average_precision": m.average_precision_score(y, p),
        }
    (tn, fp), (fn, tp) = m.confusion_matrix(y, pred).astype(float)
    prec, rec, spec, npv = tp / (tp + fp), tp / (tp + fn), tn / (tn + fp), tn / (tn + fn)
    mcc = (tp * tn - fp * fn) / np.sqrt((tp + fp) * (tp + fn) * (tn + fp) * (tn + fn))
    return {
        "accuracy": (tp + tn) / (tp + tn + fp + fn),
        "precision": prec, "recall": rec, "f1": 2 * tp / (2 * tp + fp + fn), "specificity": spec,
        "npv": npv, "balanced_accuracy": (rec + spec) / 2, "mcc": mcc,
        "auroc": m.roc_auc_score(y, p),
        "average_precision": m.average_precision_score(y, p),
    }


def case(impl: str, path: str, rows: int) -> dict[str, Any]:
    """Run one implementation once on ``path`` (in a fresh subprocess via run_limited)."""
    # run_limited's child has pinned every thread pool already (and imported torch to do so: the
    # peak RSS of every peer includes that). Imports happen before the timed region for all.
    if impl.startswith("evaluate"):
        import io
        from contextlib import redirect_stdout

        import pyarrow.parquet  # noqa: F401
        import rich.table  # noqa: F401

        from streammetrics.__main__ import main
        from streammetrics.cli.evaluate import max_bytes_supported

        if impl == "evaluate-bounded" and not max_bytes_supported(plots=False):
            return {"status": "unavailable (ranking metrics take no max_bytes yet)"}
        out = path + f".{impl}.json"
        argv = ["evaluate", path, "--label", "y", "--score", "p", "--json", out, "--quiet"]
        if impl == "evaluate-regression":
            argv = ["evaluate", path, "--target", "y", "--prediction", "yhat", "--metrics", ",".join(REG_NAMES),
                    "--json", out, "--quiet"]
            # the regression kernels are numba functions: their one-time load (about 1-2 s per
            # fresh process, from numba's cache) happens here, before the timed region, as imports do
            warm = path + ".warm.parquet"
            make_regression_file(warm, 100_000)  # big batches take the numba path
            with redirect_stdout(io.StringIO()):
                main(["evaluate", warm, *argv[2:-3], "--json", warm + ".json", "--quiet"])
        if impl == "evaluate-bounded":
            argv += ["--max-bytes", "16M"]
        if impl == "evaluate-nointervals":
            argv += ["--no-intervals"]
        start = time.perf_counter()
        with redirect_stdout(io.StringIO()):
            rc = main(argv)
        seconds = time.perf_counter() - start
        with open(out) as fh:
            res = json.load(fh)
        if rc != 0:
            return {"status": f"error: exit {rc}"}
        return {"status": "ok", "seconds": seconds, "values": res["metrics"], "rows": res["rows"],
                "bounds": res["bounds"], "exact": res["exact"], "state_mb": res["state_bytes"] / 2**20}
    import pandas as pd
    import sklearn.metrics  # noqa: F401

    start = time.perf_counter()
    df = pd.read_parquet(path)
    if impl == "sklearn-regression":
        values = _sklearn_regression(df["y"].to_numpy(), df["yhat"].to_numpy())
    else:
        y, p = df["y"].to_numpy(), df["p"].to_numpy()
        values = _sklearn_values(y, p, each=impl == "sklearn-each")
    seconds = time.perf_counter() - start
    return {"status": "ok", "seconds": seconds, "rows": len(df),
            "values": {k: float(v) for k, v in values.items()}}


def _median_run(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """The run with the median time (a failed run makes the result that failure), with every
    run's seconds and the largest peak RSS."""
    bad = [r for r in runs if r.get("status") != "ok"]
    if bad:
        return bad[0]
    ordered = sorted(runs, key=lambda r: r["seconds"])
    out = dict(ordered[(len(ordered) - 1) // 2])
    out["all_seconds"] = [r["seconds"] for r in runs]
    peaks = [r["peak_rss_mb"] for r in runs if isinstance(r.get("peak_rss_mb"), (int, float))]
    if peaks:
        out["peak_rss_mb"] = max(peaks)
    return out


def main(argv: list[str] | None = None) -> str:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rows", type=int, default=10_000_000)
    ap.add_argument("--quick", action="store_true", help="1M rows (run_all --quick)")
    ap.add_argument("--impls", default=",".join(IMPLS), help=f"comma list of {', '.join(IMPLS)}")
    ap.add_argument("--mem-limit-mb", type=int, default=None)
    ap.add_argument("--timeout", type=float, default=900.0)
    ap.add_argument("--repeat", type=int, default=3,
                    help="rounds (each implementation once per round, in turn); median seconds")
    args = ap.parse_args(argv)
    if args.quick:
        args.rows = min(args.rows, 1_000_000)
    if args.repeat < 1:
        ap.error("--repeat must be >= 1")
    impls = [i.strip() for i in args.impls.split(",") if i.strip()]
    rep = h.Report()  # each run printed the moment it finishes, then the table
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "scores.parquet")
        make_file(path, args.rows)
        size_mb = os.path.getsize(path) / 2**20
        reg_path = os.path.join(tmp, "regression.parquet")
        if any(_is_regression(i) for i in impls):
            make_regression_file(reg_path, args.rows)
        runs: dict[str, list[dict[str, Any]]] = {impl: [] for impl in impls}
        rep.emit(f"## bench_cli: `streammetrics evaluate` on a Parquet file ({args.rows:,} rows, "
                 f"{size_mb:.0f} MB): each run as it finishes, then the table", "")
        for i in range(args.repeat):  # rounds: every implementation once per round, interleaved
            for impl in impls:
                r = h.run_limited("benchmarks.bench_cli:case",
                                  {"impl": impl, "path": reg_path if _is_regression(impl) else path,
                                   "rows": args.rows},
                                  mem_limit_mb=args.mem_limit_mb, timeout=args.timeout)
                runs[impl].append(r)
                took = f"{r['seconds']:.2f} s, " if r.get("status") == "ok" and "seconds" in r else ""
                rep.emit(f"- round {i + 1}/{args.repeat} {IMPLS.get(impl, impl)}: {r.get('status')}, {took}"
                         f"peak RSS {r.get('peak_rss_mb', '?')} MB")
        results = {impl: _median_run(rs) for impl, rs in runs.items()}
    def values_of(impl: str) -> Any:
        return results[impl].get("values") if results.get(impl, {}).get("status") == "ok" else None
    headers = ["implementation", "status", "seconds", "range", "rows/s", "vs pandas+sklearn", "peak RSS MB",
               "max abs diff vs evaluate"]
    rows = []
    warnings: list[str] = []
    for impl in impls:
        r = results[impl]
        regression = _is_regression(impl)
        ref = values_of("evaluate-regression" if regression else "evaluate")
        base = results.get("sklearn-regression" if regression else "sklearn", {})
        ok = r.get("status") == "ok"
        secs: float | None = r.get("seconds") if ok else None
        ratio = base["seconds"] / secs if ok and base.get("status") == "ok" else None
        diff = ""
        if ok and ref is not None:
            names = REG_NAMES if regression else NAMES if impl != "evaluate-bounded" else NAMES[:-2]
            d = max(abs((r["values"][k] or 0.0) - (ref[k] or 0.0)) / max(1.0, abs(ref[k] or 0.0)) for k in names)
            diff = f"{d:.1e}"
            if d > 1e-9:
                warnings.append(f"WARNING: {impl} differs from evaluate by {d:.2e}")
            for k, (lo, hi) in (r.get("bounds") or {}).items():
                if not lo - 1e-12 <= ref[k] <= hi + 1e-12:
                    warnings.append(f"WARNING: exact {k} {ref[k]} outside the bounds [{lo}, {hi}]")
                diff += f"; {k} bounds width {hi - lo:.1e}"
        spread = f"{min(r['all_seconds']):.2f}-{max(r['all_seconds']):.2f}" if ok and len(r["all_seconds"]) > 1 else ""
        rows.append([IMPLS.get(impl, impl), r.get("status", "?"),
                     f"{secs:.2f}" if secs else "", spread, h.fmt_rate(args.rows / secs) if secs else "",
                     h.fmt_ratio(ratio), r.get("peak_rss_mb", ""), diff])
    rep.emit(*[
        "",
        h.env_header(("numpy", "pyarrow", "pandas", "scikit-learn", "streammetrics")),
        "",
        f"{args.rows:,} rows (label int8, score float64 rounded to 1e-6), one file of {size_mb:.0f} MB, "
        "row groups of 1M; the default binary report (8 confusion measures at 0.5, AUROC, AP), file "
        f"to numbers, each run in a fresh process, {args.repeat} round(s) with the implementations in "
        "turn: `seconds` is the median, `range` the fastest and slowest run, `vs pandas+sklearn` the "
        "ratio of medians (> 1: faster than the one-confusion-matrix scikit-learn script); peak RSS "
        "is the largest of the runs. The regression rows read a second file of as many rows (float64 "
        f"target and prediction) for {', '.join(REG_NAMES)}; their ratio and difference (relative "
        "beyond 1) are against the scikit-learn regression script.",
        "",
        h.markdown_table(headers, rows, align="llrrrrrl"),
        *([""] + warnings if warnings else []),
        "",
    ])
    return rep.text()


if __name__ == "__main__":
    main()
