"""benchmarks.bench_scaleout on tiny data: each row printed as it is measured, a failing part
(here Spark) printed as a failed row while the parts after it still run (issue #32, item 6)."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("dask.dataframe")
pytest.importorskip("distributed")
pytest.importorskip("pyarrow")

from benchmarks import bench_scaleout as bs  # noqa: E402


def test_spark_crash_keeps_the_dask_rows_and_the_later_sections(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    seen: dict[str, str] = {}

    def crashing_spark(root: Path) -> None:
        seen["printed before Spark"] = capsys.readouterr().out  # what is already on stdout
        raise RuntimeError("[JAVA_GATEWAY_EXITED] Java gateway process exited")

    monkeypatch.setattr(bs, "run_spark", crashing_spark)
    text = bs.main(["--rows", "3000", "--files", "2", "--workers", "1", "--skip-sync",
                    "--data", str(tmp_path / "rows")])
    before = seen["printed before Spark"]
    after = capsys.readouterr().out
    dask_rows = [ln for ln in before.splitlines() if "| streammetrics.dask" in ln or "1 worker |" in ln]
    assert len(dask_rows) == 4, before  # the 1-worker Dask rows were printed before Spark ran
    assert all(ln.endswith("| equal | ok |") or "off by" in ln for ln in dask_rows), before
    assert "| single process (pyarrow row groups) |" in before
    spark = next(ln for ln in after.splitlines() if "Spark MLlib" in ln)
    assert "failed: RuntimeError: [JAVA_GATEWAY_EXITED] Java gateway process exited" in spark
    assert "## Copy and pickle" in after  # the next section still ran
    assert text == (before + after).strip("\n")  # main returns exactly what it printed


def test_values_differences_are_measured_per_metric(tmp_path: Path) -> None:
    """The single-process run's values against themselves: equal; a changed F1 is named."""
    bs.write_data(tmp_path, 2000, 2)
    _, values, _ = bs.run_single(tmp_path)
    from benchmarks._harness import differing_values

    assert differing_values(dict(values), values) == {}
    assert set(differing_values({**values, "f1": values["f1"] + 0.25}, values)) == {"f1"}
