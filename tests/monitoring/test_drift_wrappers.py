"""Drift inside Window and Decayed (update(y_score) with timestamps), and its export to
Prometheus (a dict value: one gauge family per statistic)."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.stats as ss
from helpers import ks_stat

import streammetrics as sm
from streammetrics.monitoring import Drift


def test_window_equals_drift_of_the_last_rows():
    rng = np.random.default_rng(2)
    ref, cur = np.round(rng.random(80), 1), np.round(rng.random(300) * 1.2, 1)
    w = sm.Window(Drift(ref, bins=5), size=50)
    for b in np.array_split(cur, 7):
        w.update(b)
    want = Drift(ref, bins=5).update(cur[-50:]).compute()
    got = w.compute()
    for k in want:
        np.testing.assert_allclose(got[k], want[k], rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(got["ks"], ks_stat(ref, cur[-50:]), rtol=1e-12)
    assert sm.loads(sm.dumps(w)).compute() == got


@pytest.mark.parametrize("max_bytes", [None, 4096])
def test_decayed_equals_drift_weighted_by_the_decay(max_bytes):
    rng = np.random.default_rng(4)
    ref, cur = rng.normal(0, 1, 200), rng.normal(0.5, 1, 40)
    d = sm.Decayed(Drift(ref, max_bytes=max_bytes), half_life=8.0)
    for i, x in enumerate(cur.tolist()):
        d.update(x if i % 2 else [x])  # a lone score or a batch of one
    weights = 2.0 ** (-(len(cur) - 1 - np.arange(len(cur))) / 8.0)
    got = d.compute()
    want = Drift(ref).update(cur, sample_weight=weights).compute()
    exact_keys = ("psi", "js", "ks", "wasserstein") if max_bytes is None else ("psi", "js")
    for k in exact_keys:
        np.testing.assert_allclose(got[k], want[k], rtol=1e-9, atol=1e-12)
    bounds = d.bounds()
    for k in want:  # bins (max_bytes): KS and Wasserstein certified
        lo, hi = bounds[k]
        assert lo - 1e-9 <= want[k] <= hi + 1e-9
    if max_bytes is None:
        np.testing.assert_allclose(got["wasserstein"], ss.wasserstein_distance(ref, cur, None, weights), rtol=1e-9)


def test_window_of_a_drift_takes_scores_only_and_a_classifier_window_still_needs_both():
    w = sm.Window(Drift([0.1, 0.5]), size=3)
    with pytest.raises(TypeError, match="takes the scores only"):
        w.update([0, 1], [0.2, 0.3])
    with pytest.raises(TypeError, match="y_pred"):
        sm.Window(sm.AUROC(), size=3).update([0, 1])
    with pytest.raises(ValueError, match="y_score: scores must be finite"):
        w.update([0.2, np.nan])
    assert w.n_rows == 0 if hasattr(w, "n_rows") else True


def test_prometheus_exports_every_statistic_and_its_bounds():
    prometheus_client = pytest.importorskip("prometheus_client")
    from streammetrics.prometheus import register

    registry = prometheus_client.CollectorRegistry()
    rng = np.random.default_rng(0)
    d = Drift(rng.random((100, 3)), max_bytes=4096).update(rng.random((50, 3)))
    register(d, registry, name="scores")
    text = prometheus_client.generate_latest(registry).decode()
    value = d.compute()
    for key in ("psi", "js", "ks", "wasserstein"):
        for k in range(3):
            assert f'streammetrics_scores_{key}{{class="{k}"}} {float(value[key][k])!r}' in text
        assert f"streammetrics_scores_{key}_bounds_low" in text
    assert f"streammetrics_scores_class_chi2 {value['class_chi2']!r}" in text
    assert "streammetrics_scores_samples 50.0" in text
    with pytest.raises(ValueError):  # the per-key names are described: a second collector clashes
        register(sm.Accuracy(), registry, name="scores_psi")
