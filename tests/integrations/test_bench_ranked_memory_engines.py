"""benchmarks.bench_ranked_memory_engines: its cap is a real limit (a watched process that
allocates past it gets a MemoryError; one under it finishes) and its peaks are what the process
reached."""

from __future__ import annotations

import subprocess
import sys
import time

import pytest

from benchmarks import bench_ranked_memory_engines as bench

CHILD = """
import sys, time
time.sleep(1.0)  # watched and capped meanwhile
try:
    block = bytearray(int(sys.argv[1]) << 20)
    block[:: 4096] = b"x" * len(block[:: 4096])  # touched: resident
    print("allocated", flush=True)
except MemoryError:
    print("MemoryError", flush=True)
time.sleep(0.5)
"""


@pytest.mark.parametrize(("mib", "expected"), [(40, "allocated"), (400, "MemoryError")])
def test_the_cap_is_a_kernel_limit_and_peaks_are_seen(mib: int, expected: str) -> None:
    child = subprocess.Popen([sys.executable, "-c", CHILD, str(mib)], stdout=subprocess.PIPE, text=True)
    try:
        for _ in range(100):  # the interpreter started: its idle data size is the baseline
            if bench.status(child.pid).get("VmData"):
                break
            time.sleep(0.01)
        cap = int(bench.status(child.pid)["VmData"]) + 100
        with bench.Poller("test", cap_data=cap, every=0.02, find=lambda: [child.pid]) as poll:
            out, _ = child.communicate(timeout=60)
    finally:
        child.kill()
    assert out.split() == [expected]
    peak = poll.peak[child.pid]
    if expected == "allocated":
        assert peak["RssAnon"] >= mib and peak["VmHWM"] >= peak["RssAnon"]
    else:
        assert peak["RssAnon"] < cap
