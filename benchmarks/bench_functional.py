"""``streammetrics.functional`` against scikit-learn: the same call, timed in alternation.

Run ``python -m benchmarks.bench_functional`` (1e6 and 1e7 samples; ``--quick``: 1e5;
``--sizes 1e6``; ``--only roc_auc_score,det_curve``; ``--repeat 3``, ``--repeat-large 1``: timed
runs per implementation below / from 5e6 samples).

Workloads (seeded, built before timing): ``binary`` -- labels 0/1 (30 % positives), scores
N(0, 1) + 1 for positives rounded to 1e-4 (ties), hard predictions ``score > 0.5``; ``10-class``
-- labels 0..9, predictions right 60 % of the time, softmax scores of N(0, 1) logits + 1 on the
true class; ``queries`` -- n/10 queries of 10 documents, relevance 0..3 and scores N(0, 1) +
relevance / 2 rounded to 1e-2 (ties); ``curve`` -- n points, x increasing, y in [0, 1). Each
function that takes ``sample_weight`` runs without and with random weights in [0, 1) (``+w``;
one per query for ``queries``).

Every function of ``streammetrics.functional`` with a scikit-learn namesake is timed (every
metric of ``sklearn.metrics`` it provides, and ``calibration_curve`` against
``sklearn.calibration``); ``CASES`` lists them and ``test_functional_bench_smoke.py`` checks that
none is left out. Not timed: ``type_of_target`` (a helper, not a metric) and the fairness
summaries (Fairlearn's names, no scikit-learn namesake; ``benchmarks/bench_slices.py`` times
``Sliced`` against Fairlearn). Both implementations run on the very same arrays, alternating
run by run in this one process (:func:`benchmarks._harness.measure_interleaved`), so that load
from other processes disturbs both alike; the ratio is scikit-learn's median time over
streammetrics'. The results of the timed runs are compared (to 1e-9; a difference prints a
WARNING row). One thread for BLAS. Each size's section states the load average before and after
it, and ends with the targets' status.

Targets (issue #13): ranking functions (AUROC, AP, curves) >= 5x, confusion-family >= 3x.
"""

from __future__ import annotations

import argparse
import functools
import importlib
import inspect
import os
import sys
import time
import warnings
from typing import Any

import numpy as np

if __package__ in (None, ""):  # ``python benchmarks/bench_functional.py``
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from benchmarks._harness import (  # noqa: E402
    Report,
    env_header,
    fmt_ratio,
    measure_interleaved,
    single_thread,
)

SEED = 20261125

def _share_equal(y_true: Any, y_pred: Any, sample_weight: Any = None) -> float:
    """The metric ``metric_at_thresholds`` is timed with: the share of equal pairs."""
    return float(np.average(np.asarray(y_true) == y_pred, weights=sample_weight))


#: (function, workload kind, keyword arguments); the kind picks the arrays (see ``_data``)
CASES: list[tuple[str, str, dict[str, Any]]] = [
    ("accuracy_score", "binary", {}),
    ("f1_score", "binary", {}),
    ("recall_score", "binary", {}),
    ("precision_recall_fscore_support", "binary", {"average": "binary"}),
    ("matthews_corrcoef", "binary", {}),
    ("confusion_matrix", "binary", {}),
    ("roc_auc_score", "binary-score", {}),
    ("average_precision_score", "binary-score", {}),
    ("roc_curve", "binary-score", {}),
    ("precision_recall_curve", "binary-score", {}),
    ("det_curve", "binary-score", {}),
    ("log_loss", "binary-proba", {}),
    ("brier_score_loss", "binary-proba", {}),
    ("calibration_curve", "binary-proba", {"n_bins": 10}),
    ("accuracy_score", "10-class", {}),
    ("balanced_accuracy_score", "10-class", {}),
    ("f1_score", "10-class", {"average": "macro"}),
    ("precision_score", "10-class", {"average": "weighted"}),
    ("fbeta_score", "10-class", {"beta": 2.0, "average": "weighted"}),
    ("jaccard_score", "10-class", {"average": "macro"}),
    ("precision_recall_fscore_support", "10-class", {}),
    ("classification_report", "10-class", {"output_dict": True}),
    ("confusion_matrix", "10-class", {}),
    ("multilabel_confusion_matrix", "10-class", {}),
    ("matthews_corrcoef", "10-class", {}),
    ("cohen_kappa_score", "10-class", {"weights": "quadratic"}),
    ("hamming_loss", "10-class", {}),
    ("zero_one_loss", "10-class", {}),
    ("roc_auc_score", "10-class-score", {"multi_class": "ovr"}),
    ("average_precision_score", "10-class-score", {}),
    ("top_k_accuracy_score", "10-class-score", {"k": 3}),
    ("log_loss", "10-class-score", {}),
    ("brier_score_loss", "10-class-score", {}),
    ("dcg_score", "queries", {"k": 5}),
    ("ndcg_score", "queries", {}),
    ("auc", "curve", {}),
    # more of scikit-learn 1.9's functions (issue #33)
    ("class_likelihood_ratios", "binary", {}),
    ("confusion_matrix_at_thresholds", "binary-score", {}),
    ("metric_at_thresholds", "binary", {"metric_func": _share_equal}),
    ("hinge_loss", "binary-score", {}),
    ("d2_log_loss_score", "binary-proba", {}),
    ("d2_brier_score", "binary-proba", {}),
    ("coverage_error", "multilabel-score", {}),
    ("label_ranking_average_precision_score", "multilabel-score", {}),
    ("label_ranking_loss", "multilabel-score", {}),
    ("median_absolute_error", "regression", {}),
    ("d2_absolute_error_score", "regression", {}),
    ("d2_pinball_score", "regression", {"alpha": 0.9}),
    # regression (issue #30)
    ("mean_squared_error", "regression", {}),
    ("root_mean_squared_error", "regression", {}),
    ("mean_absolute_error", "regression", {}),
    ("r2_score", "regression", {}),
    ("explained_variance_score", "regression", {}),
    ("max_error", "regression", {}),
    ("mean_absolute_percentage_error", "regression", {}),
    ("mean_pinball_loss", "regression", {"alpha": 0.9}),
    ("mean_squared_log_error", "regression-positive", {}),
    ("root_mean_squared_log_error", "regression-positive", {}),
    ("mean_tweedie_deviance", "regression-positive", {"power": 1.5}),
    ("mean_poisson_deviance", "regression-positive", {}),
    ("mean_gamma_deviance", "regression-positive", {}),
    ("d2_tweedie_score", "regression-positive", {"power": 1.5}),
]

#: where the reference implementation lives (default ``sklearn.metrics``)
REFERENCE_MODULE = {"calibration_curve": "sklearn.calibration"}


def reference(name: str) -> Any:
    """scikit-learn's function of that name."""
    return getattr(importlib.import_module(REFERENCE_MODULE.get(name, "sklearn.metrics")), name)


def weighted(name: str) -> bool:
    """Whether the function takes ``sample_weight`` (then it also runs weighted)."""
    return "sample_weight" in inspect.signature(reference(name)).parameters


def _data(n: int) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    rng = np.random.default_rng(SEED)
    y = (rng.random(n) < 0.3).astype(np.int64)
    s = np.round(rng.normal(size=n) + y, 4)
    y10 = rng.integers(0, 10, n)
    p10 = np.where(rng.random(n) < 0.6, y10, rng.integers(0, 10, n))
    z = rng.normal(size=(n, 10))
    z[np.arange(n), y10] += 1.0
    z = np.exp(z)
    s10 = z / z.sum(axis=1, keepdims=True)
    q = max(n // 10, 1)
    rel = rng.integers(0, 4, (q, 10))
    x = np.sort(rng.random(n))
    return {
        "binary": (y, (s > 0.5).astype(np.int64)),
        "binary-score": (y, s),
        "binary-proba": (y, 1.0 / (1.0 + np.exp(-s))),
        "10-class": (y10, p10),
        "10-class-score": (y10, s10),
        "queries": (rel, np.round(rng.normal(size=(q, 10)) + rel / 2, 2)),
        "multilabel-score": ((rel > 1).astype(np.int64), np.round(rng.normal(size=(q, 10)) + rel / 2, 2)),
        "curve": (x, rng.random(n)),
        "weights": (rng.random(n), np.empty(0)),
        "regression": (s, s + rng.normal(size=n)),
        "regression-positive": (np.exp(s), np.exp(s + rng.normal(size=n) * 0.3)),
    }


def _agree(a: Any, b: Any) -> bool:
    if isinstance(a, dict):
        return all(_agree(a[k], b[k]) for k in b)
    if isinstance(a, tuple):
        return all(_agree(x, y) for x, y in zip(a, b, strict=True))
    if a is None or b is None:
        return a is b
    return bool(np.allclose(a, b, rtol=1e-9, atol=1e-9, equal_nan=True))


#: The issue's targets: (label, functions, minimum speed-up over scikit-learn)
TARGETS: list[tuple[str, tuple[str, ...], float]] = [
    ("ranking", ("roc_auc_score", "average_precision_score", "roc_curve", "precision_recall_curve",
                 "det_curve"), 5.0),
    ("confusion family", ("accuracy_score", "balanced_accuracy_score", "f1_score", "precision_score",
                          "recall_score", "fbeta_score", "jaccard_score", "precision_recall_fscore_support",
                          "classification_report",
                          "confusion_matrix", "multilabel_confusion_matrix", "matthews_corrcoef",
                          "cohen_kappa_score", "hamming_loss", "zero_one_loss"), 3.0),
]


class _Kept:
    """A callable that keeps its last result (the timed runs' results are the ones compared)."""

    def __init__(self, fn: Any) -> None:
        self.fn, self.out = fn, None

    def __call__(self) -> None:
        self.out = self.fn()


def run(n: int, repeat: int, only: set[str] | None = None) -> list[list[str]]:
    """Rows (function, workload, scikit-learn time, streammetrics time, ratio) at size n; ``only``
    keeps the named functions."""
    import streammetrics.functional as F

    data = _data(n)
    w = data["weights"][0]
    rows = []
    for name, kind, kw in CASES:
        if only and name not in only:
            continue
        y, p = data[kind]
        for with_weights in (False, True) if weighted(name) else (False,):
            args = {**kw, **({"sample_weight": w[: y.shape[0]]} if with_weights else {})}
            ours = _Kept(functools.partial(getattr(F, name), y, p, **args))
            ref = _Kept(functools.partial(reference(name), y, p, **args))
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                t_ref, t_ours = measure_interleaved([ref, ours], repeat=repeat, warmup=0)
            same = _agree(ours.out, ref.out)
            ours.out = ref.out = None
            label = kind + (" +w" if with_weights else "")
            ratio = t_ref.median / t_ours.median
            rows.append(
                [
                    f"`{name}`" + ("" if same else " WARNING: values differ"),
                    label,
                    f"{t_ref.median * 1e3:.1f}",
                    f"{t_ours.median * 1e3:.1f}",
                    fmt_ratio(ratio),
                ]
            )
            print(f"  n={n:.0e} {name} {label}: {ratio:.2f}x", file=sys.stderr)
    return rows


def target_summary(rows: list[list[str]]) -> list[list[str]]:
    """Per target of the issue: the lowest speed-up measured among its functions, and whether it
    is met."""
    out = []
    for label, names, goal in TARGETS:
        got = [(float(r[4].rstrip("x")), r[0].split("`")[1], r[1]) for r in rows
               if r[0].split("`")[1] in names]
        if not got:
            continue
        low = min(got)
        misses = sorted({f"{f} {k}" for v, f, k in got if v < goal})
        out.append([label, f">= {goal:g}x", f"{low[0]:.2f}x ({low[1]} {low[2]})",
                    "met" if not misses else f"not met: {len(misses)} of {len(got)} rows below"])
    return out


def _load() -> str:
    try:
        return " / ".join(f"{x:.1f}" for x in os.getloadavg()) + " (1/5/15 min)"
    except OSError:
        return "unknown"


def main(argv: list[str] | None = None) -> str:
    ap = argparse.ArgumentParser(
        prog="python -m benchmarks.bench_functional", description=__doc__.split("\n")[0]
    )
    ap.add_argument("--quick", action="store_true", help="1e5 samples instead of the sizes")
    ap.add_argument("--sizes", default="1e6,1e7", help="comma-separated sample counts (default 1e6,1e7)")
    ap.add_argument("--repeat", type=int, default=3, help="timed runs per implementation")
    ap.add_argument("--repeat-large", type=int, default=1,
                    help="timed runs per implementation from 5e6 samples on (default 1)")
    ap.add_argument("--only", default="", help="comma-separated function names (default: all)")
    args = ap.parse_args(argv)
    single_thread()
    sizes = [100_000] if args.quick else [int(float(s)) for s in args.sizes.split(",")]
    only = {s.strip() for s in args.only.split(",") if s.strip()} or None
    t0 = time.perf_counter()
    rep = Report()  # each size's tables printed the moment they are measured
    rep.emit("## bench_functional\n", env_header(), "")
    for n in sizes:
        with rep.section(f"{n:,} samples"):
            repeat = args.repeat if n < 5_000_000 else args.repeat_large
            load = _load()
            rows = run(n, repeat, only)
            rep.emit(f"### {n:,} samples (median ms of {repeat} alternating run(s); load average "
                     f"{load} before, {_load()} after)\n")
            rep.table(["function", "workload", "scikit-learn ms", "streammetrics ms", "speed-up"], rows,
                      align="llrrr")
            rep.emit("")
            rep.table(["target", "goal", "lowest speed-up", "status"], target_summary(rows), align="llll")
            rep.emit("")
    rep.emit(f"_benchmarks.bench_functional: {time.perf_counter() - t0:.0f} s_\n")
    return rep.text()


if __name__ == "__main__":
    main()
