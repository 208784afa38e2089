"""Smoke test of benchmarks/bench_functional.py on tiny data: it runs, and every streammetrics
result agrees with scikit-learn's (no timing asserts)."""

from __future__ import annotations

from benchmarks import bench_functional as bf


def test_bench_functional_runs_and_agrees() -> None:
    rows = bf.run(3000, repeat=1)
    assert len(rows) == 2 * len(bf.CASES)
    assert not [row for row in rows if "WARNING" in row[0]]
    assert all(float(row[4].rstrip("x")) > 0 for row in rows)
