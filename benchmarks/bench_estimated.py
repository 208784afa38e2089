"""Estimated performance (CBPE) without labels: ``python -m benchmarks.bench_estimated``.

Seeded binary probabilities (Beta(2, 3), continuous: no ties), fed in batches of 100k.
Implementations, timed **in alternation** (the ratio is the robust number):

* ``Estimated(AUROC())`` -- each row becomes a positive of weight p and a negative of weight
  1 − p in the exact sorted buffer (2n weighted scores), update + read;
* ``AUROC() weighted`` -- the exact weighted AUROC over the *same duplicated rows*, built before
  the timed region (the issue's target: ``Estimated`` within 1.5x of it);
* ``sklearn`` -- ``roc_auc_score`` on the duplicated rows (the value's oracle, timed too);
* ``Estimated(MetricSet)`` -- accuracy, precision, recall, F1, AUROC and AP in one pass.

Values are checked against scikit-learn on the duplicated rows (a difference above 1e-9 prints a
WARNING row).

NannyML's CBPE side by side (``--nannyml-python PATH``: a Python with ``nannyml`` installed, e.g.
a separate venv, since it pins its own numpy and pandas): its module-level estimators
(``estimate_accuracy``, ``estimate_precision``, ``estimate_recall``, ``estimate_f1``,
``estimate_specificity``, ``estimate_roc_auc``, ``estimate_ap``; CBPE's ``estimate`` minus its
calibrator, which these data do not need) run in that interpreter on the same probabilities, saved
to a ``.npy`` file, chunk by chunk (``--chunk``, NannyML's default 5000 rows); the table gives the
largest |difference| per metric over the chunks. Where the definitions agree (the confusion
metrics) they agree to rounding; NannyML rounds the cumulative counts of its ROC and PR walks to 5
decimals (``np.round(tps, 5)``) and steps through tied scores one row at a time, so its AUROC and
AP differ from the exact expected-curve values by about 1e-6 (and by more on tied scores).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import tempfile
import time
from typing import Any

import numpy as np

from benchmarks._harness import Report, env_header, markdown_table, measure_interleaved, single_thread

_NANNYML = r"""
import json, sys
import numpy as np
from nannyml.performance_estimation.confidence_based import metrics as m
p = np.load(sys.argv[1]); chunk = int(sys.argv[2]); t = float(sys.argv[3])
out = []
for a in range(0, len(p), chunk):
    q = p[a:a + chunk]; pred = (q >= t).astype(int)
    out.append({"accuracy": m.estimate_accuracy(pred, q), "precision": m.estimate_precision(pred, q),
                "recall": m.estimate_recall(pred, q), "f1": m.estimate_f1(pred, q),
                "specificity": m.estimate_specificity(pred, q), "auroc": m.estimate_roc_auc(q, q),
                "ap": m.estimate_ap(q, q)})
import nannyml
print(json.dumps({"version": nannyml.__version__, "chunks": out}))
"""


def _data(n: int, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).beta(2.0, 3.0, n)


def _duplicated(p: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    return np.tile([0, 1], len(p)), np.repeat(p, 2), np.stack([1 - p, p], axis=1).reshape(-1)


def _timings(n: int, batch: int, repeat: int) -> tuple[list[list[Any]], list[str]]:
    from sklearn.metrics import roc_auc_score

    import streammetrics as sm
    from streammetrics.monitoring import Estimated

    p = _data(n, 1)
    y, s, w = _duplicated(p)
    cuts = range(0, n, batch)
    values: dict[str, float | np.ndarray] = {}

    def estimated() -> None:
        est = Estimated(sm.AUROC())
        for a in cuts:
            est.update(p[a:a + batch])
        values["Estimated(AUROC())"] = est.compute()

    def weighted() -> None:
        m = sm.AUROC()
        for a in cuts:
            m.update(y[2 * a:2 * (a + batch)], s[2 * a:2 * (a + batch)], sample_weight=w[2 * a:2 * (a + batch)])
        values["AUROC() weighted, duplicated rows"] = m.compute()

    def sklearn() -> None:
        values["sklearn roc_auc_score, duplicated rows"] = float(roc_auc_score(y, s, sample_weight=w))

    def metric_set() -> None:
        est = Estimated(sm.MetricSet(acc=sm.Accuracy(), prec=sm.Precision(), rec=sm.Recall(), f1=sm.F1(),
                                     auroc=sm.AUROC(), ap=sm.AveragePrecision()))
        for a in cuts:
            est.update(p[a:a + batch])
        values["Estimated(MetricSet: 4 confusion, AUROC, AP)"] = est.compute()["auroc"]

    fns = [estimated, weighted, sklearn, metric_set]
    names = ["Estimated(AUROC())", "AUROC() weighted, duplicated rows", "sklearn roc_auc_score, duplicated rows",
             "Estimated(MetricSet: 4 confusion, AUROC, AP)"]
    timings = measure_interleaved(fns, repeat=repeat)
    oracle = values["sklearn roc_auc_score, duplicated rows"]
    base = timings[1].median
    rows, warnings = [], []
    for name, t in zip(names, timings, strict=True):
        diff = abs(values[name] - oracle)
        rows.append([f"{n:,}", name, f"{t.median * 1e3:,.1f}", f"{t.median / base:.2f}x",
                     f"{n / t.median / 1e6:.2f}", f"{diff:.1e}"])
        if diff > 1e-9:
            warnings.append(f"WARNING: {name} differs from scikit-learn by {diff:.2e} at n={n}")
    return rows, warnings


def _nannyml(python: str, n: int, chunk: int) -> tuple[str, list[str]]:
    import streammetrics as sm
    from streammetrics.monitoring import Estimated

    p = _data(n, 2)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "p.npy")
        np.save(path, p)
        proc = subprocess.run([python, "-c", _NANNYML, path, str(chunk), "0.5"], capture_output=True,
                              text=True, timeout=600)
    if proc.returncode != 0:
        return f"NannyML: not run ({proc.stderr.strip().splitlines()[-1:]})", []
    doc = json.loads(proc.stdout)
    worst: dict[str, float] = {}
    for i, theirs in enumerate(doc["chunks"]):
        q = p[i * chunk:(i + 1) * chunk]
        mine = Estimated(sm.MetricSet(accuracy=sm.Accuracy(), precision=sm.Precision(), recall=sm.Recall(),
                                      f1=sm.F1(), specificity=sm.Specificity(), auroc=sm.AUROC(),
                                      ap=sm.AveragePrecision())).update(q).compute()
        for k, v in theirs.items():
            worst[k] = max(worst.get(k, 0.0), abs(float(mine[k]) - float(v)))
    agree = ("accuracy", "precision", "recall", "f1", "specificity")
    rows = [[k, f"{d:.1e}", "agrees (same definition)" if k in agree else
             "NannyML rounds its cumulative counts to 5 decimals"] for k, d in worst.items()]
    table = markdown_table(["metric", "max |streammetrics − NannyML| over chunks", "note"], rows, "lrl")
    head = (f"NannyML {doc['version']} CBPE estimators vs `Estimated`, {len(doc['chunks'])} chunks of "
            f"{chunk:,} rows ({n:,} rows, Beta(2, 3) probabilities, threshold 0.5):\n\n")
    warnings = [f"WARNING: {k} differs from NannyML by {worst[k]:.2e}" for k in agree if worst.get(k, 0) > 1e-9]
    return head + table, warnings


def main(argv: list[str] | None = None) -> str:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="1e5,1e6", help="rows per workload (comma-separated)")
    ap.add_argument("--batch", type=int, default=100_000)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--quick", action="store_true", help="1e5 rows, 3 repeats")
    ap.add_argument("--nannyml-python", default=os.environ.get("NANNYML_PYTHON"),
                    help="a Python with nannyml installed (default: $NANNYML_PYTHON; none: skipped)")
    ap.add_argument("--chunk", type=int, default=5000, help="NannyML's chunk size")
    args = ap.parse_args(argv)
    single_thread()
    start = time.perf_counter()
    sizes = [100_000] if args.quick else [int(float(x)) for x in args.sizes.split(",")]
    repeat = 3 if args.quick else args.repeat
    warnings: list[str] = []
    rep = Report()  # each size's rows printed the moment they are measured; a failing part says so
    rep.emit("## bench_estimated", "", env_header(("numpy", "streammetrics", "scikit-learn")), "")
    add = rep.rows(["rows", "implementation", "median ms", "vs weighted AUROC", "M rows/s", "|Δ| vs sklearn"],
                   "llrrrr")
    for n in sizes:
        def failed(what: str, n: int = n) -> None:
            add([f"{n:,}", f"failed: {what}", "", "", "", ""])

        with rep.section(f"{n:,} rows", on_error=failed):
            r, w = _timings(n, args.batch, repeat)
            for row in r:
                add(row)
            warnings += w
    rep.emit("")
    if args.nannyml_python:
        with rep.section("NannyML"):
            text, w = _nannyml(args.nannyml_python, 100_000 if args.quick else 1_000_000, args.chunk)
            rep.emit(text, "")
            warnings += w
    else:
        rep.emit("NannyML: skipped (give --nannyml-python, a Python with nannyml installed)", "")
    if warnings:
        rep.emit(*warnings)
    rep.emit(f"_benchmarks.bench_estimated: {time.perf_counter() - start:.0f} s_", "")
    return rep.text()


if __name__ == "__main__":
    main()
