"""benchmarks.bench_engines' main path on tiny data: each engine in its own process, a table row
per engine with the same values (skips without Dask)."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("dask.dataframe")
pytest.importorskip("distributed")
pytest.importorskip("pyarrow")

from benchmarks import bench_engines as be  # noqa: E402


def test_main_writes_data_and_tables_each_engine(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    be.main(["--data", str(tmp_path / "rows"), "--rows", "3000", "--engines", "single,dask1_malloc",
             "--repeat", "1"])
    out = capsys.readouterr().out
    assert len(list((tmp_path / "rows").glob("*.parquet"))) == 20
    rows = [line for line in out.splitlines() if line.startswith("| one process") or line.startswith("| streammetrics")]
    assert len(rows) == 2, out
    assert not any("failed" in r or "DIFFER" in r for r in rows), out
    cells = rows[1].split("|")
    assert float(cells[3]) > 0 and float(cells[6]) > 0 and float(cells[7].split()[0]) > 0  # wall, CPU, MB


def test_process_tree_accounting() -> None:
    import subprocess
    import sys

    child = subprocess.Popen([sys.executable, "-c", "import time; x = bytearray(30 << 20); time.sleep(5)"])
    try:
        for _ in range(50):
            if be.vm_hwm_mb(child.pid) >= 30:
                break
            __import__("time").sleep(0.1)
        assert child.pid in be.descendants()
        assert be.vm_hwm_mb(child.pid) >= 30
        assert set(be.tree_cpu()) >= {child.pid}
    finally:
        child.kill()
        child.wait()
