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


def test_run_cpu_counts_a_process_that_ended_inside_the_run() -> None:
    """A process that works and exits inside the timed run (as Ray Data's footer-reading
    actors do) is counted: its CPU as it reports it, which two snapshots of the tree miss."""
    import subprocess
    import sys

    if not Path("/proc").is_dir():
        pytest.skip("no /proc")
    work = ("import time\nx = 0\nfor i in range(3_000_000): x += i\n"
            "print(time.process_time())\ntime.sleep(3 * 0.1)")
    _, cpu, out = be.run_cpu(lambda: subprocess.run([sys.executable, "-c", work], capture_output=True,
                                                     text=True, check=True))
    assert cpu >= float(out.stdout) - 0.02


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


# `java -version` output of the common builds (it goes to stderr; some print a line first)
_JAVA_OUTPUTS = [
    ('openjdk version "1.8.0_402"\nOpenJDK Runtime Environment (build 1.8.0_402-8u402-ga-2ubuntu1~22.04-b06)\n'
     'OpenJDK 64-Bit Server VM (build 25.402-b06, mixed mode)', 8),
    ('java version "1.8.0_391"\nJava(TM) SE Runtime Environment (build 1.8.0_391-b13)', 8),
    ('openjdk version "1.8.0_402"\nOpenJDK Runtime Environment (Zulu 8.76.0.17-CA-linux64) (build 1.8.0_402-b06)', 8),
    ('openjdk version "11.0.22" 2024-01-16\nOpenJDK Runtime Environment (build 11.0.22+7-post-Debian-1deb11u1)', 11),
    ('openjdk version "11.0.22" 2024-01-16\nOpenJDK Runtime Environment Temurin-11.0.22+7 (build 11.0.22+7)', 11),
    ('openjdk version "17.0.15" 2025-04-15\nOpenJDK Runtime Environment (build 17.0.15+6-Debian-1deb12u1)', 17),
    ('openjdk version "17.0.10" 2024-01-16\nOpenJDK Runtime Environment Temurin-17.0.10+7 (build 17.0.10+7)', 17),
    ('openjdk version "17.0.10" 2024-01-16 LTS\nOpenJDK Runtime Environment Zulu17.48+15-CA (build 17.0.10+7-LTS)', 17),
    ('openjdk version "21" 2023-09-19\nOpenJDK Runtime Environment (build 21+35-2513)', 21),
    ('openjdk version "21.0.2" 2024-01-16 LTS\nOpenJDK Runtime Environment Zulu21.32+17-CA (build 21.0.2+13-LTS)', 21),
    ('Picked up JAVA_TOOL_OPTIONS: -Xmx2g\nopenjdk version "21.0.2" 2024-01-16 LTS', 21),
    ('openjdk version "22-ea" 2024-03-19\nOpenJDK Runtime Environment (build 22-ea+27-2262)', 22),
    ('openjdk 17.0.1 2021-10-19\nOpenJDK Runtime Environment (build 17.0.1+12-39)', 17),  # java --version
]


@pytest.mark.parametrize(("text", "major"), _JAVA_OUTPUTS)
def test_java_major_reads_every_vendor_format(text: str, major: int) -> None:
    assert be.java_major(text) == major


@pytest.mark.parametrize("text", ["", "Error: could not find libjava.so", 'version "abc"'])
def test_java_major_none_without_a_version(text: str) -> None:
    assert be.java_major(text) is None


def _fake_java(home: Path, stderr: str) -> Path:
    """A ``JAVA_HOME`` whose ``bin/java -version`` prints ``stderr`` (what a real one prints)."""
    (home / "bin").mkdir(parents=True)
    java = home / "bin" / "java"
    java.write_text("#!/bin/sh\ncat >&2 <<'EOF'\n" + stderr + "\nEOF\n")
    java.chmod(0o755)
    return home


@pytest.mark.parametrize(("text", "major"), [(_JAVA_OUTPUTS[0][0], 8), (_JAVA_OUTPUTS[4][0], 11),
                                             (_JAVA_OUTPUTS[7][0], 17), (_JAVA_OUTPUTS[9][0], 21)])
def test_java_problem_reads_the_version_of_java_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                    text: str, major: int) -> None:
    """Issue #32: a Java older than PySpark needs is named with its version at once (before,
    only the binary's presence was checked, and PySpark failed later with its gateway error)."""
    home = _fake_java(tmp_path / "jdk", text)
    monkeypatch.setenv("JAVA_HOME", str(home))
    need = be.java_required()
    problem = be.java_problem()
    if major >= need:
        assert problem is None
    else:
        assert problem is not None and problem.startswith(f"Spark needs Java {need}+: JAVA_HOME={home} is Java {major} (")


def test_java_problem_unreadable_version(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("JAVA_HOME", str(_fake_java(tmp_path / "jdk", "Error occurred during initialization of VM")))
    problem = be.java_problem()
    assert problem is not None and "could not read a version" in problem and "initialization of VM" in problem


def test_java_too_old_is_one_row_not_retried(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    """A too old Java fails the Spark engine once, its row naming the version; the run is not
    repeated (JAVA_GATEWAY_EXITED is no longer a lost connection) and the next engine still runs."""
    pytest.importorskip("pyspark")
    if be.java_required() <= 8:
        pytest.skip("this PySpark runs on Java 8")
    monkeypatch.setenv("JAVA_HOME", str(_fake_java(tmp_path / "jdk", _JAVA_OUTPUTS[3][0])))
    (tmp_path / "rows").mkdir()
    from benchmarks.bench_scaleout import write_data

    write_data(tmp_path / "rows", 2000, 2)
    text = be.run_all(tmp_path / "rows", 2000, ["spark", "single"], repeat=1)
    out = capsys.readouterr().out
    assert text in out  # printed, row by row, as each engine finished
    spark_row = next(ln for ln in out.splitlines() if ln.startswith("| streammetrics.spark"))
    assert f"failed: Spark needs Java {be.java_required()}+: JAVA_HOME=" in spark_row and "is Java 11" in spark_row
    assert "run again" not in spark_row
    single_row = next(ln for ln in out.splitlines() if ln.startswith("| one process"))
    assert "failed" not in single_row and "| equal |" in single_row
