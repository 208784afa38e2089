"""Smoke test of benchmarks/bench_functional.py on tiny data: it runs, and every streammetrics
result agrees with scikit-learn's (no timing asserts)."""

from __future__ import annotations

import importlib

import streammetrics.functional as F
from benchmarks import bench_functional as bf


def test_bench_functional_runs_and_agrees() -> None:
    rows = bf.run(3000, repeat=1)
    assert len(rows) == sum(2 if bf.weighted(name) else 1 for name, _, _ in bf.CASES)
    assert not [row for row in rows if "WARNING" in row[0]]
    assert all(float(row[4].rstrip("x")) > 0 for row in rows)


def test_bench_functional_main_prints_load_and_target_status() -> None:
    text = bf.main(["--sizes", "2000", "--repeat", "1", "--only", "roc_auc_score,accuracy_score"])
    assert "load average" in text and "2,000 samples" in text
    status = bf.target_summary(bf.run(2000, repeat=1, only={"det_curve", "hamming_loss"}))
    assert [row[0] for row in status] == ["ranking", "confusion family"]
    assert all(row[3] == "met" or row[3].startswith("not met") for row in status)


def test_bench_functional_times_every_function_with_a_scikit_learn_namesake() -> None:
    """As its docstring says: every function of streammetrics.functional that scikit-learn has
    (in sklearn.metrics, or where REFERENCE_MODULE says) is in CASES; the others are the fairness
    summaries (Fairlearn's) and type_of_target."""
    timed = {name for name, _, _ in bf.CASES}
    for name in F.__all__:
        module = importlib.import_module(bf.REFERENCE_MODULE.get(name, "sklearn.metrics"))
        if hasattr(module, name):
            assert name in timed, name
        else:
            assert name == "type_of_target" or "parity" in name or "odds" in name \
                or name.startswith("retrieval_"), name  # torchmetrics' retrieval functions
    assert all(hasattr(importlib.import_module(bf.REFERENCE_MODULE.get(n, "sklearn.metrics")), n) for n in timed)
