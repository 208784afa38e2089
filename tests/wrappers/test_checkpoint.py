"""Checkpointing: a process killed at random moments always leaves its last state loadable."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
import warnings

import numpy as np
import pytest

import streammetrics as sm
from streammetrics import AUROC, F1, Checkpointer, ConfusionMatrix, Decayed, MetricSet, Window
from streammetrics._core.persistence import STALE_SECONDS

WRITER = textwrap.dedent(
    """
    import sys
    import numpy as np
    sys.path.insert(0, {root!r})
    from streammetrics import AUROC, F1, Checkpointer, ConfusionMatrix, Decayed, MetricSet, Window

    def build():
        return MetricSet(f1=F1(num_classes=3), cm=ConfusionMatrix(num_classes=3), auc=AUROC(num_classes=3),
                         win=Window(F1(num_classes=3), size=5000), dec=Decayed(F1(num_classes=3), half_life=1e4))

    def batch(i):
        rng = np.random.default_rng(i)
        return rng.integers(0, 3, 4000), rng.random((4000, 3))

    if __name__ == "__main__":
        metric = build()
        ck = Checkpointer(metric, sys.argv[1])
        for i in range(10 ** 6):
            y, s = batch(i)
            metric.update(y, s)
            ck.checkpoint()
            print(i, flush=True)
    """
)


def _replay(ns, upto):
    metric = ns["build"]()
    for i in range(upto + 1):
        metric.update(*ns["batch"](i))
    return metric


def _same(a, b) -> bool:
    """Equal states; float sums equal to 1e-12 (a decayed state rebased at every checkpoint
    rounds differently from one rebased once)."""
    da, db = a.state_dict(), b.state_dict()

    def eq(x, y) -> bool:
        x, y = np.asarray(x), np.asarray(y)
        if x.dtype.kind == "f" and x.shape == y.shape:
            return bool(np.allclose(x, y, rtol=1e-12, atol=0))
        return np.array_equal(x, y)

    return da.keys() == db.keys() and all(eq(da[k], db[k]) for k in da)


def test_sigkill_at_random_moments_never_loses_a_checkpoint(tmp_path):
    root = os.path.dirname(os.path.dirname(os.path.abspath(sm.__file__)))
    script = tmp_path / "writer.py"
    script.write_text(WRITER.format(root=root))
    ns: dict = {}
    exec(compile(WRITER.format(root=root).replace('if __name__ == "__main__":', "if False:"), "w", "exec"), ns)
    rng = np.random.default_rng(2024)
    replays: dict[int, object] = {}
    for run in range(5):
        path = tmp_path / f"state{run}.sm"
        proc = subprocess.Popen([sys.executable, str(script), str(path)], stdout=subprocess.PIPE, text=True)
        assert proc.stdout is not None
        first = proc.stdout.readline()  # wait for the first completed checkpoint
        assert first.strip() == "0"
        time.sleep(float(rng.uniform(0.0, 0.6)))
        os.kill(proc.pid, signal.SIGKILL)
        rest = proc.stdout.read()
        proc.wait()
        done = [int(x) for x in (first + rest).split()]
        acked = done[-1]
        restored = Checkpointer.restore(path)
        left = list(tmp_path.glob(f".{path.name}.*.tmp"))  # the killed write's, if any: too
        for tmp in left:  # recent to be called stale; once old enough, restore removes them
            os.utime(tmp, (time.time() - 2 * STALE_SECONDS,) * 2)
        Checkpointer.restore(path)
        assert not list(tmp_path.glob(f".{path.name}.*.tmp"))  # stale temp files cleaned
        # the file holds the last acknowledged checkpoint or the one after it (written, not yet
        # acknowledged when the kill came): never less
        for j in (acked, acked + 1):
            if j not in replays:
                replays[j] = _replay(ns, j)
            if _same(restored, replays[j]):
                break
        else:
            pytest.fail(f"run {run}: restored state matches neither checkpoint {acked} nor {acked + 1}")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            assert restored.compute().keys() == {"f1", "cm", "auc", "win", "dec"}


def test_tampered_and_truncated_checkpoints_are_rejected(tmp_path):
    path = tmp_path / "m.sm"
    metric = MetricSet(f1=F1(), w=Window(AUROC(), size=10))
    metric.update([1, 0, 1], [0.9, 0.2, 0.4])
    Checkpointer(metric, path).checkpoint()
    good = path.read_bytes()
    assert _same(Checkpointer.restore(path), metric)
    for pos in (9, 50, len(good) // 2, len(good) - 1):
        bad = bytearray(good)
        bad[pos] ^= 0x01
        path.write_bytes(bytes(bad))
        with pytest.raises(ValueError):
            Checkpointer.restore(path)
    path.write_bytes(good[: len(good) - 5])
    with pytest.raises(ValueError, match="truncated|checksum"):
        Checkpointer.restore(path)
    path.write_bytes(b"")
    with pytest.raises(ValueError, match="empty"):
        Checkpointer.restore(path)
    path.unlink()
    with pytest.raises(FileNotFoundError):
        Checkpointer.restore(path)
    fallback = F1()
    assert Checkpointer.restore(path, default=fallback) is fallback


def test_background_and_call_driven_checkpoints(tmp_path):
    path = tmp_path / "bg.sm"
    metric = ConfusionMatrix()
    with Checkpointer(metric, path, every_seconds=0.02) as ck:
        for _ in range(20):
            metric.update([1, 0], [1, 1])
            time.sleep(0.005)
        deadline = time.monotonic() + 5
        while ck.saves < 2 and time.monotonic() < deadline:
            time.sleep(0.01)
        assert ck.saves >= 2 and ck.last_error is None
    assert np.array_equal(Checkpointer.restore(path).compute(), metric.compute())  # final save on exit
    now = [0.0]
    m2 = Decayed(F1(), half_life=10)
    ck2 = Checkpointer(m2, tmp_path / "cd.sm", every_seconds=30, background=False, clock=lambda: now[0])
    m2.update([1], [1])
    assert ck2.maybe_checkpoint() is False and ck2.saves == 0
    now[0] = 31.0
    assert ck2.maybe_checkpoint() is True and ck2.saves == 1
    assert ck2.maybe_checkpoint() is False
    assert _same(Checkpointer.restore(tmp_path / "cd.sm"), m2)
    ck2.close(final=False)
    with pytest.raises(ValueError, match="every_seconds"):
        Checkpointer(m2, tmp_path / "x.sm", every_seconds=0)
    with pytest.raises(ValueError, match="background"):
        Checkpointer(m2, tmp_path / "x.sm", background=True)
    with pytest.raises(ValueError, match="does not exist"):
        Checkpointer(m2, tmp_path / "nope" / "x.sm")


def test_restore_leaves_a_live_writers_temp_file(tmp_path):
    path = tmp_path / "live.sm"
    f1 = F1().update([0, 1, 1], [0.2, 0.8, 0.3])
    sm.save(f1, path)
    live = tmp_path / f".{path.name}.{os.getpid()}-abc123.tmp"  # a save in progress (this process)
    live.write_bytes(b"partial")
    os.utime(live, (time.time() - 2 * STALE_SECONDS,) * 2)  # even a slow one
    dead = tmp_path / f".{path.name}.999999999-def456.tmp"  # its writer is gone
    dead.write_bytes(b"partial")
    os.utime(dead, (time.time() - 2 * STALE_SECONDS,) * 2)
    assert Checkpointer.restore(path).compute() == f1.compute()
    assert live.exists() and not dead.exists()
