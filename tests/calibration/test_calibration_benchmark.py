"""Smoke test of the calibration benchmark on tiny data (values only, no timing asserts)."""

from __future__ import annotations

from benchmarks import bench_calibration as bc


def test_cases_agree_with_streammetrics() -> None:
    for workload in bc.WORKLOADS:
        for impl in ("bare", "streammetrics"):
            res = bc.case(workload, impl, n=3000, repeat=1)
            assert res["samples"] == 3000 and res["max_diff"] <= 1e-12


def test_main_in_process_writes_a_table() -> None:
    text = bc.main(["--inprocess", "--samples", "2000", "--repeat", "1", "--impls", "bare,streammetrics"])
    assert "| binary, batch 100k" in text and "streammetrics" in text
