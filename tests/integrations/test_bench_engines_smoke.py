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
    assert float(cells[3]) > 0 and float(cells[6]) > 0 and float(cells[8].split()[0]) > 0  # wall, CPU, MB
    assert cells[7].strip().endswith("x") and float(cells[7].strip()[:-1]) > 0  # CPU / one process's


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


@pytest.mark.parametrize("env", [{"JAVA_HOME": "/nonexistent"}, {"JAVA_HOME": None, "PATH": "/nonexistent"}])
def test_spark_without_java_is_a_clear_error(tmp_path: Path, env: dict[str, str | None]) -> None:
    """Issue #32: with JAVA_HOME pointing nowhere, or no JAVA_HOME and no java on PATH, the
    Spark run stops at once with one line saying so (not PySpark's "Java gateway process
    exited before sending its port number")."""
    import os
    import subprocess
    import sys

    pytest.importorskip("pyspark")
    here = Path(be.__file__).resolve().parents[1]
    child = {k: v for k, v in os.environ.items() if k not in env}
    child.update({k: v for k, v in env.items() if v is not None})
    child["PYTHONPATH"] = str(here)
    proc = subprocess.run([sys.executable, "-m", "benchmarks.bench_engines", "--data", str(tmp_path),
                           "--one", "spark"], capture_output=True, text=True, cwd=here, env=child, timeout=120)
    assert proc.returncode != 0
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith("Spark needs Java 17+: "), proc.stderr
    assert ("/nonexistent has no bin/java" if "JAVA_HOME" in env and env["JAVA_HOME"] else "no java on PATH") in last
