"""The external sort of ``streammetrics trec`` leaves no temporary files behind (issue #27): SIGTERM
mid-sort removes its spill directory (exit status 143); after SIGKILL, which nothing can catch, the
next sort in the same temporary directory removes the dead process's directory (once it is
``STALE_SECONDS`` old), and never a live one's."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

import streammetrics.trec.spill as S
from streammetrics.trec.runfile import SpilledRun

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")


def _files(tmp_path: Path, lines: int = 30000) -> tuple[str, str]:
    rng = np.random.default_rng(0)
    qp, rp = tmp_path / "qrels", tmp_path / "run"
    qp.write_text("".join(f"q{q} 0 d{d} 1\n" for q in range(50) for d in range(0, 600, 9)))
    rows = [f"q{q} Q0 d{d} {d + 1} {float(s)!r} sys\n" for q, d, s in
            zip(rng.integers(0, 50, lines), rng.integers(0, 10**6, lines), rng.random(lines), strict=True)]  # fmt: skip
    rp.write_text("".join(rows))
    return str(qp), str(rp)


def _spills(tmp: Path) -> list[Path]:
    return sorted(p for p in tmp.iterdir() if p.name.startswith(S.PREFIX))


def _start_sort(tmp_path: Path) -> tuple[subprocess.Popen, Path]:
    """``streammetrics trec`` sorting a shuffled run one line at a time, once it has spilled."""
    qp, rp = _files(tmp_path)
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    env = {**os.environ, "TMPDIR": str(tmp), "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, "-m", "streammetrics", "trec", qp, rp, "-m", "map", "--memory-lines", "1"],
                            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)  # fmt: skip
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None:
        found = _spills(tmp)
        if found and len(os.listdir(found[0])) >= 20:
            return proc, found[0]
        time.sleep(0.02)
    proc.kill()
    pytest.fail(f"the sort did not spill (status {proc.poll()}): {proc.stderr.read() if proc.stderr else ''}")


def test_sigterm_mid_sort_removes_the_spill_directory(tmp_path):
    proc, spill = _start_sort(tmp_path)
    assert spill.name.startswith(f"{S.PREFIX}{proc.pid}-")
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 143, err
    assert err.strip() == "streammetrics trec: terminated"
    assert not spill.exists() and _spills(spill.parent) == []


def test_after_sigkill_the_next_sort_removes_the_dead_process_directory(tmp_path):
    proc, spill = _start_sort(tmp_path)
    proc.kill()
    proc.wait(timeout=60)
    assert spill.exists()  # nothing can clean up after SIGKILL
    tmp = spill.parent
    live = tmp / f"{S.PREFIX}{os.getpid()}-live0001"  # a sort in progress (this process): kept
    live.mkdir()
    old = time.time() - S.STALE_SECONDS - 5
    for d in (spill, live):
        os.utime(d, (old, old))
    fresh_dead = tmp / f"{S.PREFIX}{proc.pid}-fresh001"  # dead, but younger than STALE_SECONDS: kept
    fresh_dead.mkdir()
    list(SpilledRun(str(tmp_path / "run"), memory_lines=10000, tmpdir=str(tmp)))  # a later sort that spills
    assert not spill.exists()
    assert live.exists() and fresh_dead.exists()
    assert _spills(tmp) == sorted([live, fresh_dead])


def test_remove_stale_spills_by_age_and_pid(tmp_path):
    now = time.time()
    dead_pid = 2**22 + 12345  # above Linux's pid_max default (2**22): no such process
    names = {"dead": f"{S.PREFIX}{dead_pid}-abcd1234", "mine": f"{S.PREFIX}{os.getpid()}-abcd1234",
             "old_style": f"{S.PREFIX}abcd1234", "other": "streammetrics-trecX-1-abc"}  # fmt: skip
    for name in names.values():
        (tmp_path / name).mkdir()
        (tmp_path / name / "1.tsv").write_text("q\td\t1.0\t1\n")
    assert S.remove_stale_spills(str(tmp_path), now=now + 1) == []  # all fresh
    removed = S.remove_stale_spills(str(tmp_path), now=now + S.STALE_SECONDS + 10)
    assert removed == [str(tmp_path / names["dead"])]
    removed = S.remove_stale_spills(str(tmp_path), now=now + S.ABANDONED_SECONDS + 10)
    assert sorted(removed) == sorted(str(tmp_path / names[k]) for k in ("mine", "old_style"))
    assert sorted(os.listdir(tmp_path)) == [names["other"]]
