"""The moments state of MSE / MAE / R² / explained variance holds a stream of one output as
floats between reads (merged in Python floats, arrays made when read): every read, copy, save,
merge, rescale and reset in the middle of such a stream sees the state it would see with arrays,
and concurrent updates and reads neither lose a batch nor see a half-merged state."""

from __future__ import annotations

import threading

import numpy as np
import pytest
from sklearn import metrics as skm

import streammetrics as sm


def _batches(seed: int = 3, n: int = 40, size: int = 500):
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        y = 100.0 + rng.normal(size=size) * 5.0
        out.append((y, y + 0.3 + rng.normal(size=size)))
    return out


def _set():
    return sm.MetricSet(mse=sm.MeanSquaredError(), mae=sm.MeanAbsoluteError(), r2=sm.R2Score(),
                        ev=sm.ExplainedVariance())


def _oracle(batches):
    y = np.concatenate([b[0] for b in batches])
    p = np.concatenate([b[1] for b in batches])
    return {"mse": skm.mean_squared_error(y, p), "mae": skm.mean_absolute_error(y, p),
            "r2": skm.r2_score(y, p), "ev": skm.explained_variance_score(y, p)}


def _close(got, want, rtol=1e-12):
    for k, v in want.items():
        np.testing.assert_allclose(got[k], v, rtol=rtol, err_msg=k)


def test_reads_copies_and_saves_in_the_middle_of_a_stream():
    batches = _batches()
    ms = _set()
    for i, (y, p) in enumerate(batches):
        ms.update(y, p)
        if i % 7 == 3:  # a read, a copy and a save/load between one-output merges
            _close(ms.compute(), _oracle(batches[:i + 1]))
            twin = ms.copy()
            loaded = sm.loads(sm.dumps(ms))
            for y2, p2 in batches[i + 1:i + 3]:
                twin.update(y2, p2)
                loaded.update(y2, p2)
            _close(twin.compute(), _oracle(batches[:i + 3]))
            _close(loaded.compute(), _oracle(batches[:i + 3]))
    _close(ms.compute(), _oracle(batches))
    state = ms["r2"]._state
    assert state._one is not None  # the stream was merged as floats ...
    arrays = state.arrays()
    assert arrays["mean_y"].shape == (1,) and arrays["rows"].shape == ()  # ... and reads as arrays


def test_merge_rescale_and_reset_between_one_output_merges():
    batches = _batches(seed=4)
    a, b = _set(), _set()
    for y, p in batches[:20]:
        a.update(y, p)
    for y, p in batches[20:30]:
        b.update(y, p)
    a.merge(b)  # arrays merged into a float-held state
    for y, p in batches[30:]:
        a.update(y, p)  # then floats again
    _close(a.compute(), _oracle(batches))
    m = sm.R2Score()
    for y, p in batches[:10]:
        m.update(y, p)
    m._state.scale(0.5)  # halving every weight changes no ratio ...
    np.testing.assert_allclose(m.compute(), _oracle(batches[:10])["r2"], rtol=1e-12)
    assert m._state.sample_count() == pytest.approx(2500.0)  # ... but the weight
    m.reset()
    assert m._state.k == 0 and m._state.sample_count() == 0.0
    for y, p in batches[10:12]:
        m.update(y, p)
    np.testing.assert_allclose(m.compute(), _oracle(batches[10:12])["r2"], rtol=1e-12)


@pytest.mark.filterwarnings("ignore::streammetrics.UndefinedMetricWarning")  # a read before the first batch
def test_concurrent_updates_and_reads():
    batches = _batches(seed=5, n=64, size=300)
    ms = _set()
    seen: list[dict] = []
    errors: list[BaseException] = []
    done = threading.Event()

    def feed(part):
        try:
            for y, p in part:
                ms.update(y, p)
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    def read():
        while not done.is_set():
            seen.append({"state": ms["mse"]._state.arrays(), "values": ms.compute()})

    reader = threading.Thread(target=read)
    reader.start()
    feeders = [threading.Thread(target=feed, args=(batches[i::4],)) for i in range(4)]
    for t in feeders:
        t.start()
    for t in feeders:
        t.join()
    done.set()
    reader.join()
    assert not errors
    _close(ms.compute(), _oracle(batches), rtol=1e-11)  # every batch counted once, in any order
    for s in seen:  # each read saw whole batches: a row count that is a multiple of 300
        rows = float(s["state"]["rows"])
        assert rows % 300 == 0 and float(s["state"]["weight"]) == rows
        if rows:
            assert 0.0 < s["values"]["mse"] < 10.0 and 0.0 < s["values"]["r2"] <= 1.0
