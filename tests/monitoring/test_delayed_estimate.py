"""DelayedLabels.estimate(): the estimate over the pending predictions, and with
include_labelled the realised pairs counted with it -- equal to scikit-learn on those rows."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn import metrics as skm

import streammetrics as sm


def rows(p: np.ndarray, y: np.ndarray | None = None, w: np.ndarray | None = None):
    """Oracle rows: each pending row once per class weighted by its probability; labelled rows as
    they are (weight w)."""
    probs = np.stack([1 - p, p], axis=1) if p.ndim == 1 else p
    k = probs.shape[1]
    ww = np.ones(len(p)) if w is None else w
    yy, ss, rw = np.tile(np.arange(k), len(p)), np.repeat(p, k, axis=0), (probs * ww[:, None]).reshape(-1)
    return yy, ss, rw


def test_estimate_of_pending_and_with_the_labelled_part():
    rng = np.random.default_rng(5)
    p = rng.random(40)
    w = rng.uniform(0.5, 2.0, 40)
    y = (rng.random(40) < p).astype(int)
    d = sm.DelayedLabels(sm.MetricSet(auroc=sm.AUROC(), acc=sm.Accuracy()))
    d.predict(list(range(40)), p, sample_weight=w)
    d.label(list(range(15)), y[:15])
    ey, es, ew = rows(p[15:], w=w[15:])
    got = d.estimate()
    assert got["auroc"] == pytest.approx(skm.roc_auc_score(ey, es, sample_weight=ew), rel=1e-12)
    assert got["acc"] == pytest.approx(skm.accuracy_score(ey, es >= 0.5, sample_weight=ew), rel=1e-12)
    # realised pairs (as compute() counts them) plus the estimate of the rest
    ay = np.concatenate([y[:15], ey])
    a_s = np.concatenate([p[:15], es])
    aw = np.concatenate([w[:15], ew])
    both = d.estimate(include_labelled=True)
    assert both["auroc"] == pytest.approx(skm.roc_auc_score(ay, a_s, sample_weight=aw), rel=1e-12)
    assert both["acc"] == pytest.approx(skm.accuracy_score(ay, a_s >= 0.5, sample_weight=aw), rel=1e-12)
    # nothing changed: the realised value and the pending rows are as they were
    assert d.compute()["auroc"] == pytest.approx(skm.roc_auc_score(y[:15], p[:15], sample_weight=w[:15]))
    assert d.stats()["pending"] == 25


def test_multiclass_and_sliced():
    rng = np.random.default_rng(2)
    p = rng.dirichlet([1, 1, 1], 30)
    d = sm.DelayedLabels(sm.AUROC(3))
    d.predict(list(range(30)), p)
    ey, es, ew = rows(p)
    assert d.estimate() == pytest.approx(skm.roc_auc_score(ey, es, sample_weight=ew, multi_class="ovr"), rel=1e-12)
    s = sm.DelayedLabels(sm.Sliced(sm.Accuracy()))
    q = rng.random(20)
    keys = np.array(["a", "b"])[np.arange(20) % 2]
    s.predict(list(range(20)), q, slices=keys)
    got = s.estimate()
    for key in ("a", "b"):
        ky, ks, kw = rows(q[keys == key])
        assert got[key] == pytest.approx(skm.accuracy_score(ky, ks >= 0.5, sample_weight=kw), rel=1e-12)


def test_labels_as_predictions_are_refused():
    d = sm.DelayedLabels(sm.F1())
    d.predict([1, 2], np.array([0, 1]))
    with pytest.raises(ValueError, match="estimate: the pending predictions are labels"):
        d.estimate()


def test_windows_are_refused():
    d = sm.DelayedLabels(sm.Window(sm.AUROC(), size=10))
    d.predict([1], [0.4])
    with pytest.raises(ValueError, match="estimate: not defined around a Window"):
        d.estimate()


def test_nothing_pending_is_undefined_not_an_error():
    d = sm.DelayedLabels(sm.AUROC())
    with pytest.warns(sm.UndefinedMetricWarning):
        assert np.isnan(d.estimate())
