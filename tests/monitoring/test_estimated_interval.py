"""Estimated.interval: coverage of realised values when labels are drawn from the probabilities.

Labels drawn from calibrated probabilities make the realised counts Poisson-binomial; the
interval's formula (normal, from their exact variance; the delta method for recall) should cover
the realised value about 95% of the time. With S simulated label sets the observed coverage has a
standard deviation of sqrt(0.95·0.05/S) (0.005 for S = 2000); the tolerance 0.025 is five of
those plus the normal approximation's own error at n = 300 rows. The seed is fixed: the test is
deterministic.
"""

from __future__ import annotations

import numpy as np
import pytest
from sklearn import metrics as skm

import streammetrics as sm
from streammetrics.monitoring import Estimated

S = 2000
N = 300


def coverage(inside: np.ndarray) -> float:
    return float(np.mean(inside))


@pytest.mark.parametrize("weighted", [False, True])
def test_binary_intervals_cover_realised_values(weighted):
    rng = np.random.default_rng(20261205)
    p = rng.beta(2, 2, N)
    w = rng.uniform(0.5, 2.0, N) if weighted else np.ones(N)
    kw = {"sample_weight": w} if weighted else {}
    pred = p >= 0.5
    y = rng.random((S, N)) < p  # S label sets, each row a Bernoulli(p)
    tp = (w * (y & pred)).sum(axis=1)
    fp = (w * (~y & pred)).sum(axis=1)
    fn = (w * (y & ~pred)).sum(axis=1)
    realised = {
        "Accuracy": (w * (y == pred)).sum(axis=1) / w.sum(),
        "Precision": tp / (tp + fp),
        "Recall": tp / (tp + fn),
    }
    # the realised formulas are scikit-learn's (one draw checked)
    assert realised["Recall"][0] == pytest.approx(skm.recall_score(y[0], pred, sample_weight=w), rel=1e-12)
    for name, values in realised.items():
        est = Estimated(getattr(sm, name)()).update(p, **kw)
        low, high = est.interval(0.95)
        assert low < est.compute() < high
        assert abs(coverage((values >= low) & (values <= high)) - 0.95) < 0.025, name
        # a narrower level covers less
        low80, high80 = est.interval(0.8)
        assert low < low80 < high80 < high
        assert abs(coverage((values >= low80) & (values <= high80)) - 0.80) < 0.04, name


def test_multiclass_intervals_cover_realised_values():
    rng = np.random.default_rng(7)
    C = 3
    p = rng.dirichlet([1.5, 1.0, 0.7], N)
    pred = np.argmax(p, axis=1)
    cum = np.cumsum(p, axis=1)
    y = (rng.random((S, N, 1)) > cum[None]).sum(axis=2)  # one class per row drawn from p
    y = np.minimum(y, C - 1)
    acc = Estimated(sm.Accuracy(C)).update(p)
    low, high = acc.interval()
    realised = (y == pred).mean(axis=1)
    assert abs(coverage((realised >= low) & (realised <= high)) - 0.95) < 0.025
    for name in ("Precision", "Recall"):
        est = Estimated(getattr(sm, name)(C, average=None)).update(p)
        lows, highs = est.interval()
        for c in range(C):
            tp = ((y == c) & (pred == c)).sum(axis=1)
            den = (pred == c).sum() if name == "Precision" else (y == c).sum(axis=1)
            values = tp / den
            assert abs(coverage((values >= lows[c]) & (values <= highs[c])) - 0.95) < 0.03, (name, c)


def test_interval_is_refused_where_it_is_not_defined():
    p = [0.2, 0.7, 0.9]
    for metric in (sm.F1(), sm.AUROC(), sm.Precision(3), sm.MetricSet(a=sm.Accuracy())):
        est = Estimated(metric)
        if isinstance(metric, sm.Precision):
            est.update([[0.2, 0.3, 0.5]])
        else:
            est.update(p)
        with pytest.raises(ValueError, match="interval"):
            est.interval()
