"""CalibrationError(ignore_index=): torchmetrics' option (issue #33). The rows whose label is
ignore_index are left out: equal to the metric fed the other rows (1e-12), to torchmetrics'
Binary/MulticlassCalibrationError(ignore_index=) (float32 rounding), through batches and save/load;
a refused batch changes nothing."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import streammetrics as sm

torch = pytest.importorskip("torch")
tmc = pytest.importorskip("torchmetrics.classification")


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), n=st.integers(1, 120), norm=st.sampled_from(["l1", "l2", "max"]),
       weighted=st.booleans(), ignore=st.sampled_from([-100, 0, 1]))
def test_ignored_rows_are_left_out_exactly(seed, n, norm, weighted, ignore):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    y[rng.random(n) < 0.3] = -100
    p = np.round(rng.random(n), 2)  # ties
    w = rng.random(n) if weighted else None
    keep = y != ignore
    m = sm.CalibrationError(n_bins=7, norm=norm, ignore_index=ignore)
    want = sm.CalibrationError(n_bins=7, norm=norm)
    if ((y[keep] != 0) & (y[keep] != 1)).any():  # -100 kept: a label the binary metric refuses
        with pytest.raises(ValueError, match="y_true"):
            m.update(y, p, sample_weight=w)
        assert sm.dumps(m) == sm.dumps(sm.CalibrationError(n_bins=7, norm=norm, ignore_index=ignore))
        return
    for i in range(0, n, 17):
        m.update(y[i:i + 17], p[i:i + 17], sample_weight=None if w is None else w[i:i + 17])
    want.update(y[keep], p[keep], sample_weight=None if w is None else w[keep])
    back = sm.loads(sm.dumps(m))
    assert back.ignore_index == ignore
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", sm.UndefinedMetricWarning)  # every row left out: nan
        got, expected, loaded = m.compute(), want.compute(), back.compute()
    # equal to the metric fed the kept rows at once, up to the batches' summation order (1e-12)
    assert (np.isnan(got) and np.isnan(expected)) or abs(got - expected) <= 1e-12
    assert (np.isnan(loaded) and np.isnan(got)) or loaded == got


@pytest.mark.parametrize("norm", ["l1", "l2", "max"])
def test_binary_equals_torchmetrics(norm):
    rng = np.random.default_rng(1)
    y = rng.integers(0, 2, 600)
    y[rng.random(600) < 0.25] = -100
    p = rng.random(600)
    peer = tmc.BinaryCalibrationError(n_bins=10, norm=norm, ignore_index=-100)
    want = float(peer(torch.tensor(p), torch.tensor(y)))
    got = sm.CalibrationError(n_bins=10, norm=norm, ignore_index=-100).update(y, p).compute()
    assert got == pytest.approx(want, abs=1e-6)


def test_multiclass_equals_torchmetrics():
    rng = np.random.default_rng(2)
    y = rng.integers(0, 4, 600)
    y[rng.random(600) < 0.25] = -1
    probs = rng.dirichlet(np.ones(4), 600)
    peer = tmc.MulticlassCalibrationError(num_classes=4, n_bins=10, ignore_index=-1)
    want = float(peer(torch.tensor(probs), torch.tensor(y)))
    got = sm.CalibrationError(4, n_bins=10, ignore_index=-1).update(y, probs).compute()
    assert got == pytest.approx(want, abs=1e-6)


def test_ignore_index_is_checked_and_saved():
    with pytest.raises(ValueError, match="ignore_index: must be an int or None, got 1.5"):
        sm.CalibrationError(ignore_index=1.5)
    m = sm.CalibrationError(n_bins=5, ignore_index=-100).update([1, -100, 0], [0.9, 0.5, 0.2])
    assert sm.loads(sm.dumps(m)).ignore_index == -100
    assert "ignore_index" not in sm.CalibrationError()._config()  # files without it stay as they were
