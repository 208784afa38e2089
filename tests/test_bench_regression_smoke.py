"""Smoke test of benchmarks/bench_regression.py on tiny data (no timing asserts): both
streammetrics rows (as installed, and the numpy passes of a core install) agree with the numpy
reference, and the BLAS pool numpy started at import is limited to one thread."""

from __future__ import annotations

import pytest

from benchmarks import _harness as h
from benchmarks import bench_regression as br


def test_both_streammetrics_paths_agree_with_numpy() -> None:
    batches = br.data(30_000, 7_000)
    want = br.numpy_centred_run(batches)
    for got in (br.streammetrics_run(batches), br.streammetrics_numpy_run(batches)):
        for k, v in want.items():
            assert got[k] == pytest.approx(v, rel=1e-9), k
    from streammetrics.regression import _moments

    assert _moments.FUSED_ROWS == 4096  # restored after the numpy-passes run


def test_single_thread_limits_the_pool_numpy_started() -> None:
    threadpoolctl = pytest.importorskip("threadpoolctl")
    before = threadpoolctl.threadpool_info()
    try:
        h.single_thread()
        blas = [p for p in threadpoolctl.threadpool_info() if p["user_api"] == "blas"]
        assert blas and all(p["num_threads"] == 1 for p in blas)
    finally:
        for p in before:
            if p["user_api"] == "blas":
                threadpoolctl.threadpool_limits(p["num_threads"], user_api="blas")
