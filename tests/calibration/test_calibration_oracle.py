"""Calibration metrics against scikit-learn, torchmetrics and brute-force references."""

from __future__ import annotations

import warnings

import calibration_oracles as oracle
import numpy as np
import pytest
from sklearn.calibration import calibration_curve
from sklearn.metrics import brier_score_loss, log_loss

import streammetrics as sm


def close(a: float, b: float, tol: float = 1e-12) -> None:
    assert abs(a - b) <= tol * max(1.0, abs(b)), (a, b)


def grid_probs(rng: np.random.Generator, n: int, n_bins: int) -> np.ndarray:
    """Probabilities with many ties, many on bin edges (linspace values), 0 and 1."""
    pool = np.concatenate([np.linspace(0, 1, n_bins + 1), np.linspace(0, 1, 41), rng.random(20)])
    return rng.choice(pool, n)


def multiclass_probs(rng: np.random.Generator, n: int, c: int) -> np.ndarray:
    p = rng.dirichlet(np.ones(c) * 0.7, n)
    p[: n // 4] = np.round(p[: n // 4] * 8) / 8  # ties and exact edges ...
    p[: n // 4] /= p[: n // 4].sum(axis=1, keepdims=True)  # ... still rows of sum 1
    p[: n // 4] = np.nan_to_num(p[: n // 4], nan=1.0 / c)
    return p


def stream(metric: sm.Metric, y, p, w, rng) -> sm.Metric:
    """Feed in random batches."""
    n = len(y)
    cuts = np.sort(rng.integers(0, n + 1, 4))
    for lo, hi in zip(np.r_[0, cuts], np.r_[cuts, n], strict=True):
        metric.update(y[lo:hi], p[lo:hi], sample_weight=None if w is None else w[lo:hi])
    return metric


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("weighted", [False, True])
def test_binary_losses_match_sklearn(seed: int, weighted: bool) -> None:
    rng = np.random.default_rng(seed)
    n = 300
    y = rng.integers(0, 2, n)
    p = grid_probs(rng, n, 10)
    w = rng.integers(0, 4, n).astype(float) if weighted else None
    close(stream(sm.LogLoss(), y, p, w, rng).compute(), log_loss(y, p, sample_weight=w, labels=[0, 1]))
    close(stream(sm.BrierScore(), y, p, w, rng).compute(), brier_score_loss(y, p, sample_weight=w))


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("c", [2, 3, 5])
def test_multiclass_losses_match_sklearn(seed: int, c: int) -> None:
    rng = np.random.default_rng(seed)
    n = 250
    y = rng.integers(0, c, n)
    p = multiclass_probs(rng, n, c)
    w = rng.random(n) * 3
    labels = list(range(c))
    close(stream(sm.LogLoss(c), y, p, w, rng).compute(),
          log_loss(y, p, sample_weight=w, labels=labels))
    close(stream(sm.BrierScore(c), y, p, w, rng).compute(),
          brier_score_loss(y, p, sample_weight=w, labels=labels, scale_by_half=False))


def test_log_loss_clips_with_the_input_dtype_eps() -> None:
    y = np.array([1, 0, 1, 0])
    p64 = np.array([0.0, 1.0, 1e-20, 1 - 1e-17])
    close(sm.LogLoss().update(y, p64).compute(), log_loss(y, p64))
    p32 = p64.astype(np.float32)
    # scikit-learn clips float32 input with float32's eps (its log then runs in float32).
    close(sm.LogLoss().update(y, p32).compute(), log_loss(y, p32), tol=1e-6)
    assert sm.LogLoss().update(y, p32).compute() < sm.LogLoss().update(y, p64).compute()


@pytest.mark.parametrize("c", [None, 4])
def test_from_logits_equals_probabilities(c: int | None) -> None:
    rng = np.random.default_rng(3)
    n = 200
    if c is None:
        y, x = rng.integers(0, 2, n), rng.normal(0, 4, n)
        x[:3] = [-800.0, 800.0, 0.0]
        p = 1 / (1 + np.exp(-np.clip(x, -700, 700)))
    else:
        y, x = rng.integers(0, c, n), rng.normal(0, 3, (n, c))
        e = np.exp(x - x.max(axis=1, keepdims=True))
        p = e / e.sum(axis=1, keepdims=True)
    kinds = [
        (sm.LogLoss, {}),
        (sm.BrierScore, {}),
        (sm.CalibrationError, {"n_bins": 7}),
    ]
    for cls, kw in kinds:
        a = cls(c, from_logits=True, **kw).update(y, x).compute()  # type: ignore[arg-type]
        b = cls(c, **kw).update(y, p).compute()  # type: ignore[arg-type]
        close(a, b, 1e-10)
    ca = sm.CalibrationCurve(5, num_classes=c, from_logits=True).update(y, x).compute()
    cb = sm.CalibrationCurve(5, num_classes=c).update(y, p).compute()
    for ra, rb in zip(ca if c else [ca], cb if c else [cb], strict=True):
        np.testing.assert_allclose(ra.prob_pred, rb.prob_pred, rtol=1e-10)
        np.testing.assert_array_equal(ra.counts, rb.counts)
    close(sm.LogLoss(c, from_logits=True).update(y, x).compute(),
          log_loss(y, p, labels=list(range(c or 2))), 1e-10)


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("n_bins", [1, 5, 10, 15])
def test_calibration_curve_matches_sklearn(seed: int, n_bins: int) -> None:
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, 400)
    p = grid_probs(rng, 400, n_bins)
    got = stream(sm.CalibrationCurve(n_bins), y, p, None, rng).compute()
    true, pred = calibration_curve(y, p, n_bins=n_bins)
    np.testing.assert_allclose(got.prob_true, true, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(got.prob_pred, pred, rtol=1e-12, atol=1e-12)
    binids = np.searchsorted(np.linspace(0, 1, n_bins + 1)[1:-1], p)
    counts = np.bincount(binids, minlength=n_bins)
    np.testing.assert_array_equal(got.counts, counts[counts > 0])


def test_calibration_curve_inner_edge_goes_to_lower_bin() -> None:
    got = sm.CalibrationCurve(2).update([0, 1, 1], [0.5, 0.5, 1.0]).compute()
    true, pred = calibration_curve([0, 1, 1], [0.5, 0.5, 1.0], n_bins=2)
    np.testing.assert_array_equal(got.prob_pred, pred)  # 0.5 in bin 0: [0.5, 1.0]
    np.testing.assert_array_equal(got.prob_true, true)
    assert got.counts.tolist() == [2.0, 1.0]


@pytest.mark.parametrize("seed", range(3))
def test_weighted_and_multiclass_curves_match_brute_force(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n, c = 200, 3
    y = rng.integers(0, 2, n)
    p = grid_probs(rng, n, 5)
    w = rng.integers(0, 3, n).astype(float)
    got = stream(sm.CalibrationCurve(5), y, p, w, rng).compute()
    for a, b in zip((got.prob_true, got.prob_pred, got.counts), oracle.weighted_curve(p, y, w, 5), strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)
    ym = rng.integers(0, c, n)
    pm = multiclass_probs(rng, n, c)
    curves = stream(sm.CalibrationCurve(4, num_classes=c), ym, pm, None, rng).compute()
    assert len(curves) == c
    for k, curve in enumerate(curves):
        true, pred = calibration_curve(ym == k, pm[:, k], n_bins=4)
        np.testing.assert_allclose(curve.prob_true, true, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(curve.prob_pred, pred, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("norm", ["l1", "l2", "max"])
@pytest.mark.parametrize("n_bins", [1, 4, 15])
def test_binary_calibration_error_matches_brute_force(seed: int, norm: str, n_bins: int) -> None:
    rng = np.random.default_rng(seed)
    n = 200
    y = rng.integers(0, 2, n)
    p = grid_probs(rng, n, n_bins)
    w = rng.integers(0, 3, n).astype(float) * 0.5
    got = stream(sm.CalibrationError(n_bins=n_bins, norm=norm), y, p, w, rng).compute()
    close(got, oracle.calibration_error(p, y, w, n_bins, norm))


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("norm", ["l1", "l2", "max"])
def test_multiclass_calibration_error_matches_brute_force(seed: int, norm: str) -> None:
    rng = np.random.default_rng(seed)
    n, c, n_bins = 200, 4, 8
    y = rng.integers(0, c, n)
    p = multiclass_probs(rng, n, c)
    w = rng.random(n)
    conf, correct = oracle.top_label(p, y)
    got = stream(sm.CalibrationError(c, n_bins=n_bins, norm=norm), y, p, w, rng).compute()
    close(got, oracle.calibration_error(conf, correct, w, n_bins, norm))
    per_class = [oracle.calibration_error(p[:, k], y == k, w, n_bins, norm) for k in range(c)]
    got = stream(sm.CalibrationError(c, n_bins=n_bins, norm=norm, classwise=True),
                 y, p, w, rng).compute()
    close(got, float(np.mean(per_class)))


def test_confidence_one_is_in_the_last_bin() -> None:
    m = sm.CalibrationError(n_bins=2).update([1, 0], [1.0, 0.75])
    # one bin [0.5, 1] holding both: |acc 0.5 - conf 0.875| = 0.375
    close(m.compute(), 0.375)


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("c", [None, 3])
def test_brier_decomposition_matches_brute_force(seed: int, c: int | None) -> None:
    rng = np.random.default_rng(seed)
    n, n_bins = 200, 6
    if c is None:
        y = rng.integers(0, 2, n)
        p = grid_probs(rng, n, n_bins)
        columns = [(p, y)]
    else:
        y = rng.integers(0, c, n)
        p = multiclass_probs(rng, n, c)
        columns = [(p[:, k], (y == k).astype(float)) for k in range(c)]
    w = rng.random(n) * 2
    d = stream(sm.BrierScore(c, n_bins=n_bins), y, p, w, rng).decomposition()
    want = np.sum([oracle.brier_decomposition(pk, ok, w, n_bins) for pk, ok in columns], axis=0)
    got = [d.reliability, d.resolution, d.uncertainty, d.within_bin_variance, d.within_bin_covariance]
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-13)
    identity = d.reliability - d.resolution + d.uncertainty + d.within_bin_variance - 2 * d.within_bin_covariance
    close(identity, d.brier, 1e-12)
    if c is None:
        close(d.brier, brier_score_loss(y, p, sample_weight=w))


def test_empty_is_nan_with_a_warning() -> None:
    for m in (sm.LogLoss(), sm.BrierScore(3), sm.CalibrationError()):
        with pytest.warns(sm.UndefinedMetricWarning):
            assert np.isnan(m.compute())
    with pytest.warns(sm.UndefinedMetricWarning):
        assert np.isnan(sm.BrierScore().decomposition().reliability)
    assert sm.CalibrationCurve().compute().counts.size == 0
    m = sm.LogLoss().update([1, 0], [0.3, 0.4], sample_weight=[0.0, 0.0])
    with pytest.warns(sm.UndefinedMetricWarning):
        assert np.isnan(m.compute())


# -- torchmetrics (same bins except at a confidence of exactly 1.0) ----------------------------
def _tm():
    """torchmetrics' functions and torch, or skip (only these tests) if either is missing."""
    torch = pytest.importorskip("torch")
    try:
        from torchmetrics.functional.classification import (
            binary_calibration_error,
            multiclass_calibration_error,
        )
    except ImportError:
        pytest.skip("torchmetrics is not installed")
    return torch, binary_calibration_error, multiclass_calibration_error


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("norm", ["l1", "l2", "max"])
def test_binary_matches_torchmetrics_below_one(seed: int, norm: str) -> None:
    torch, binary, _ = _tm()
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, 500)
    p = rng.integers(0, 64, 500) / 64  # exact in float32, many on the edges k/16, never 1.0
    got = sm.CalibrationError(n_bins=16, norm=norm).update(y, p).compute()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = float(binary(torch.tensor(p), torch.tensor(y), n_bins=16, norm=norm))
    close(got, want, 1e-6)


def test_torchmetrics_differs_at_confidence_one() -> None:
    torch, binary, _ = _tm()
    y, p = np.array([0, 1, 1]), np.array([1.0, 0.6, 0.6])
    ours = sm.CalibrationError(n_bins=2).update(y, p).compute()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = float(binary(torch.tensor(p), torch.tensor(y), n_bins=2))
    # ours: one bin [0.5, 1] holding all three: |2/3 - 2.2/3|; torchmetrics puts 1.0 in a bin
    # of its own: 2/3 * |1 - 0.6| + 1/3 * |0 - 1|
    close(ours, abs(2 / 3 - 2.2 / 3))
    close(theirs, 2 / 3 * 0.4 + 1 / 3, 1e-6)


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("norm", ["l1", "l2", "max"])
def test_multiclass_matches_torchmetrics(seed: int, norm: str) -> None:
    torch, _, multiclass = _tm()
    rng = np.random.default_rng(seed)
    c = 5
    y = rng.integers(0, c, 400)
    p = rng.dirichlet(np.ones(c), 400)  # no ties in the argmax, no confidence 1.0
    got = sm.CalibrationError(c, n_bins=10, norm=norm).update(y, p).compute()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = float(multiclass(torch.tensor(p), torch.tensor(y), num_classes=c, n_bins=10, norm=norm))
    close(got, want, 1e-5)
