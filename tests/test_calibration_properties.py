"""Property tests of the calibration family (hypothesis): any split into batches, any partition
merged back, a save/load round trip, a copy and a pickle give the one-shot result; unit weights
= no weights, integer weights = repetition, zero weight = removal; the per-sample path equals the
batch path."""

from __future__ import annotations

import pickle
import warnings

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import streammetrics as sm

C = 3
REGISTRY = {
    "logloss": (lambda: sm.LogLoss(), None),
    "logloss_mc": (lambda: sm.LogLoss(C), C),
    "brier": (lambda: sm.BrierScore(n_bins=4), None),
    "brier_mc": (lambda: sm.BrierScore(C, n_bins=4), C),
    "ece": (lambda: sm.CalibrationError(n_bins=5), None),
    "mce_mc": (lambda: sm.CalibrationError(C, n_bins=5, norm="max"), C),
    "rmsce_classwise": (lambda: sm.CalibrationError(C, n_bins=5, norm="l2", classwise=True), C),
    "curve": (lambda: sm.CalibrationCurve(4), None),
    "curve_mc": (lambda: sm.CalibrationCurve(4, num_classes=C), C),
    "logits_ece": (lambda: sm.CalibrationError(C, n_bins=5, from_logits=True), "logits"),
    "set": (lambda: sm.MetricSet(b=sm.BrierScore(n_bins=5), e=sm.CalibrationError(n_bins=5),
                                 l=sm.LogLoss()), None),
}
NAMES = sorted(REGISTRY)


def make_data(kind, rng: np.random.Generator, n: int):
    if kind is None:
        return rng.integers(0, 2, n), rng.integers(0, 9, n) / 8  # ties, edges, 0 and 1
    if kind == "logits":
        return rng.integers(0, C, n), rng.integers(-3, 4, (n, C)).astype(float)
    p = rng.integers(0, 5, (n, C)).astype(float) + np.eye(C)[rng.integers(0, C, n)]
    return rng.integers(0, C, n), p / p.sum(axis=1, keepdims=True)


def flat(value) -> np.ndarray:
    """Any metric value as one float array (curves: their arrays concatenated)."""
    if isinstance(value, dict):
        return np.concatenate([flat(value[k]) for k in sorted(value)])
    if isinstance(value, list):
        return np.concatenate([flat(v) for v in value]) if value else np.zeros(0)
    if isinstance(value, sm.CalibrationCurveResult):
        return np.concatenate([value.prob_true, value.prob_pred, value.counts])
    return np.atleast_1d(np.asarray(value, dtype=float))


def result(metric) -> np.ndarray:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = flat(metric.compute())
        if isinstance(metric, sm.BrierScore):
            d = metric.decomposition()
            out = np.concatenate([out, [d.reliability, d.resolution, d.uncertainty]])
        return out


def same(a, b, tol: float = 1e-12) -> None:
    a, b = result(a) if not isinstance(a, np.ndarray) else a, result(b) if not isinstance(b, np.ndarray) else b
    assert a.shape == b.shape
    np.testing.assert_allclose(a, b, rtol=tol, atol=tol)


@settings(max_examples=40, deadline=None)
@given(name=st.sampled_from(NAMES), seed=st.integers(0, 2**32 - 1), n=st.integers(0, 60),
       n_parts=st.integers(1, 5), weighted=st.booleans())
def test_batches_merge_and_persistence_give_the_one_shot_value(name, seed, n, n_parts, weighted):
    factory, kind = REGISTRY[name]
    rng = np.random.default_rng(seed)
    y, p = make_data(kind, rng, n)
    w = rng.integers(0, 4, n) * 0.5 if weighted else None
    one_shot = factory().update(y, p, sample_weight=w)
    cuts = np.sort(rng.integers(0, n + 1, n_parts - 1))
    parts = [factory() for _ in range(n_parts)]
    streamed = factory()
    for part, lo, hi in zip(parts, np.r_[0, cuts], np.r_[cuts, n], strict=True):
        ws = None if w is None else w[lo:hi]
        part.update(y[lo:hi], p[lo:hi], sample_weight=ws)
        streamed.update(y[lo:hi], p[lo:hi], sample_weight=ws)
    same(streamed, one_shot)
    merged = factory().merge(*parts)
    same(merged, one_shot)
    loaded = sm.loads(sm.dumps(merged))
    same(loaded, one_shot)
    assert loaded.state_dict().keys() == merged.state_dict().keys()
    same(pickle.loads(pickle.dumps(merged)), one_shot)
    copied = merged.copy()
    same(copied, one_shot)
    copied.update(y[:1], p[:1])  # the copy is independent
    same(merged, one_shot)


@settings(max_examples=30, deadline=None)
@given(name=st.sampled_from(NAMES), seed=st.integers(0, 2**32 - 1), n=st.integers(1, 40))
def test_weight_invariances(name, seed, n):
    factory, kind = REGISTRY[name]
    rng = np.random.default_rng(seed)
    y, p = make_data(kind, rng, n)
    same(factory().update(y, p, sample_weight=np.ones(n)), factory().update(y, p))
    reps = rng.integers(0, 3, n)
    repeated = factory().update(np.repeat(y, reps, axis=0), np.repeat(p, reps, axis=0))
    same(factory().update(y, p, sample_weight=reps.astype(float)), repeated)


@settings(max_examples=20, deadline=None)
@given(name=st.sampled_from(NAMES), seed=st.integers(0, 2**32 - 1), n=st.integers(1, 12))
def test_per_sample_path_equals_batch(name, seed, n):
    factory, kind = REGISTRY[name]
    rng = np.random.default_rng(seed)
    y, p = make_data(kind, rng, n)
    one = factory()
    for i in range(n):
        one.update(int(y[i]), p[i] if p.ndim == 2 else float(p[i]))
    same(one, factory().update(y, p))
