"""Smoke test of the benchmark harness: the quickest workload on tiny data (no timing asserts)."""

from __future__ import annotations

import pytest

from benchmarks import _harness as h
from benchmarks import bench_confusion as bc


def test_quickest_workload_runs_and_agrees() -> None:
    # batch 1k over 2k samples, every implementation that needs no third-party import, in-process
    text = bc.main(["--inprocess", "--workloads", "binary labels, batch 1k", "--samples", "2000",
                    "--repeat", "1", "--impls", "bare,streammetrics,streammetrics-nolock"])
    assert "| binary labels, batch 1k" in text
    assert "streammetrics MetricSet, lock no-op" in text
    assert "WARNING" not in text  # every value agrees with the bincount reference to 1e-9
    assert "Cost of the per-accumulator lock" in text and "with the lock vs" in text


def test_case_checks_values_against_reference() -> None:
    res = bc.case("per-sample scalars", "streammetrics", 500, repeat=1)
    assert res["samples"] == 500 and res["max_diff"] <= 1e-12
    y, p = bc.make_data("binary", 500)
    counts = [[((y == i) & (p == j)).sum() for j in (0, 1)] for i in (0, 1)]
    assert res["values"] == bc.values_from_counts(__import__("numpy").array(counts), "binary")


def test_run_limited_reports_results_and_failures() -> None:
    ok = h.run_limited("benchmarks.bench_confusion:case",
                       {"workload": "binary labels, batch 1k", "impl": "bare", "n": 2000, "repeat": 1},
                       mem_limit_mb=0, timeout=60)
    assert ok["status"] == "ok" and ok["samples"] == 2000 and ok["peak_rss_mb"] > 0
    # 20M samples (320 MB of int64 data) cannot fit in 300 MB: reported, not raised
    oom = h.run_limited("benchmarks.bench_confusion:case",
                        {"workload": "binary labels, batch 100k", "impl": "bare", "n": 20_000_000},
                        mem_limit_mb=300, timeout=60)
    assert oom["status"] == "out of memory (limit 300 MB)"


def test_table_and_header_helpers() -> None:
    table = h.markdown_table(["a", "bb"], [["x", 1.5], ["yy", 22]], align="lr")
    lines = table.splitlines()
    assert lines[0] == "| a  |  bb |" and lines[1] == "|----|----:|" and lines[3] == "| yy |  22 |"
    assert "CPUs" in h.env_header(("numpy",))
    assert h.fmt_rate(3.2e8) == "320.0 M/s" and h.fmt_ratio(0.5) == "0.50x" and h.fmt_us(2e-6) == "2.00 µs"
    timings = h.measure_interleaved([lambda: None, lambda: sum(range(100))], repeat=3, warmup=0)
    assert len(timings) == 2 and all(len(t.runs) == 3 for t in timings)


def test_run_all_writes_and_merges_sections(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    import sys
    import types

    from benchmarks import run_all

    calls = {"n": 0}

    def fake(name: str):  # type: ignore[no-untyped-def]
        mod = types.ModuleType(name)

        def main(argv: list[str] | None = None) -> str:
            calls["n"] += 1
            return f"## {name} run {calls['n']}\n\n| a |\n|---|\n"
        mod.main = main  # type: ignore[attr-defined]
        return mod

    names = ["benchmarks.bench_fake_a", "benchmarks.bench_fake_b"]
    for n in names:
        monkeypatch.setitem(sys.modules, n, fake(n))
    monkeypatch.setattr(run_all, "discover", lambda: list(names))
    out = tmp_path / "R.md"
    run_all.main(["--output", str(out)])
    first = out.read_text()
    assert "bench_fake_a run 1" in first and "bench_fake_b run 2" in first
    run_all.main(["--output", str(out), "--only", "bench_fake_b", "--merge"])
    merged = out.read_text()
    assert "bench_fake_a run 1" in merged and "bench_fake_b run 3" in merged
    assert "run 2" not in merged and merged.index("fake_a run") < merged.index("fake_b run")
    header, sections = run_all.split_sections(merged)
    assert header.startswith("# streammetrics benchmark results") and list(sections) == names


def test_bench_reads_one_path_prints_every_measure(capsys: pytest.CaptureFixture[str]) -> None:
    # --path numpy alone (no numba rows): the table still prints, one row per measure
    from benchmarks import bench_reads

    text = bench_reads.main(["--n", "20000", "--batch", "2000", "--rounds", "2", "--no-extra", "--path", "numpy"])
    out = capsys.readouterr().out
    rows = [line for line in out.splitlines() if line.startswith("[numpy]")]
    assert len(rows) == 6 and not any(line.startswith("[numba]") for line in out.splitlines())
    assert any("AUROC read after every batch / read once" in r for r in rows)
    # issue #32: each round's rows are printed as the round completes, before the summary
    lines = out.splitlines()
    summary = next(i for i, line in enumerate(lines) if line.startswith("measure "))
    for r in (1, 2):
        got = [i for i, line in enumerate(lines) if line.startswith(f"round {r}/2 [numpy] ")]
        assert len(got) == 6 and max(got) < summary, out
    assert max(i for i, line in enumerate(lines) if line.startswith("round 1/2")) < min(
        i for i, line in enumerate(lines) if line.startswith("round 2/2"))
    assert text.strip() == out.strip()  # what main returns is what it printed


def test_report_prints_as_it_goes_and_a_failing_section_loses_nothing(
        capsys: pytest.CaptureFixture[str]) -> None:
    rep = h.Report()
    add = rep.rows(["a", "b"], "lr")
    add(["x", 1])
    assert capsys.readouterr().out == "| a | b |\n|---|---:|\n| x | 1 |\n"  # printed at once
    with rep.section("second part"):
        rep.emit("before the error")
        raise RuntimeError("the JVM went away\nsecond line")
    with rep.section("in a table", on_error=lambda what: add(["failed", what])):
        raise SystemExit("Spark needs Java 17+: no java on PATH")
    with rep.section("third part"):
        rep.emit("third ran")
    out = capsys.readouterr().out
    assert "**second part: failed** -- RuntimeError: the JVM went away" in out and "second line" not in out
    assert "| failed | SystemExit: Spark needs Java 17+: no java on PATH |" in out
    assert out.index("before the error") < out.index("**second part") < out.index("third ran")
    assert rep.failures == [("second part", "RuntimeError: the JVM went away"),
                            ("in a table", "SystemExit: Spark needs Java 17+: no java on PATH")]
    assert rep.text().startswith("| a | b |") and rep.text().endswith("third ran")
    add(["a | b", 2])  # a "|" in a cell does not split the row
    assert capsys.readouterr().out == "| a \\| b | 2 |\n"


def test_differing_values_compares_every_metric() -> None:
    import numpy as np

    ref = {"auroc": 0.75, "f1": 0.5, "cm": np.array([[3, 1], [2, 4]]), "nan": float("nan")}
    assert h.differing_values(dict(ref), ref) == {}
    assert h.differing_values({**ref, "f1": np.nextafter(0.5, 1.0)}, ref) == {"f1": "off by 1.1e-16"}
    assert h.differing_values({**ref, "cm": [[3, 1], [2, 5]]}, ref) == {"cm": "off by 1.0e+00"}
    assert h.differing_values({**ref, "cm": [[3, 1, 0]]}, ref) == {"cm": "shape (1, 3) != (2, 2)"}
    less = {k: v for k, v in ref.items() if k != "f1"}
    assert h.differing_values(less, ref) == {"f1": "missing"}


def test_bench_reads_oneshot_prints_a_ratio_per_function_and_weighting(
        capsys: pytest.CaptureFixture[str]) -> None:
    # --oneshot --no-reads: the functional rows only, each with its ratio; no read table
    from benchmarks import bench_reads

    bench_reads.main(["--n", "20000", "--rounds", "1", "--path", "numpy", "--oneshot", "--no-reads"])
    out = capsys.readouterr().out
    rows = [line for line in out.splitlines() if line.strip().startswith("[numpy]")]
    assert len(rows) == 4 and all("x (" in r and "target >= 5x" in r for r in rows)
    assert sum("+w" in r for r in rows) == 2 and "measure" not in out


def test_drift_benchmark_runs_without_peers() -> None:
    from benchmarks import bench_drift

    text = bench_drift.main(["--scores", "20000", "--repeat", "1", "--no-peers"])
    assert "| Drift(max_bytes=64k): update + compute" in text and "np.sort of every score" in text


def test_run_all_writes_each_section_as_its_module_finishes(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Issue #32: a run stopped during module b (killed, timed out) keeps module a's section."""
    import sys
    import types

    from benchmarks import run_all

    out = tmp_path / "R.md"
    seen: dict[str, str] = {}

    def module(name: str, main):  # type: ignore[no-untyped-def]
        mod = types.ModuleType(name)
        mod.main = main  # type: ignore[attr-defined]
        monkeypatch.setitem(sys.modules, name, mod)

    def main_b(argv: list[str] | None = None) -> str:
        seen["file while b runs"] = out.read_text()
        raise RuntimeError("b crashed")

    module("benchmarks.bench_fake_a", lambda argv=None: "## a\n\n| a |\n|---|\n| 1 |\n")
    module("benchmarks.bench_fake_b", main_b)
    monkeypatch.setattr(run_all, "discover", lambda: ["benchmarks.bench_fake_a", "benchmarks.bench_fake_b"])
    run_all.main(["--output", str(out)])
    assert "| 1 |" in seen["file while b runs"] and "_benchmarks.bench_fake_a:" in seen["file while b runs"]
    final = out.read_text()
    assert "| 1 |" in final and "FAILED: RuntimeError: b crashed" in final


def test_bench_kernels_times_both_paths_of_a_dispatch_point() -> None:
    # each cell times the same call on both paths (no timing asserts: the rows and the summary)
    pytest.importorskip("numba")
    from benchmarks import bench_kernels as bk

    text = bk.main(["--sizes", "512,1000", "--rounds", "1", "--target", "0.001", "--kernels", "ranks,ap,sort"])
    assert "| ranks | sparse | 1e+03 |" in text and "| ap | ties | 1e+03 |" in text
    assert "| sort | unit | 512 |" in text and "| sort | ties | 1e+03 |" in text
    assert "failed" not in text and "MIN_SIZES now" in text
