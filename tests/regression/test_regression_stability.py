"""Long streams with a large mean keep their digits ("Numerical stability" in
docs/definitions/regression.md): y = 1e9 (or 1e12) + small noise, 200 batches, against
scikit-learn on the same data shifted by the offset (exactly: the offset and the values are
within a factor 2 of each other, so the float64 subtraction is exact, and every metric here is
shift-invariant)."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn import metrics as skm

import streammetrics as sm


def stream(offset: float, n: int, batches: int, weighted: bool, seed: int = 0):
    rng = np.random.default_rng(seed)
    noise = rng.normal(size=n) * 3.0
    y = offset + noise
    p = y + rng.normal(size=n)
    w = rng.integers(1, 5, n).astype(float) if weighted else None
    ms = sm.MetricSet(mse=sm.MeanSquaredError(), rmse=sm.RootMeanSquaredError(), mae=sm.MeanAbsoluteError(),
                      r2=sm.R2Score(), ev=sm.ExplainedVariance())
    cuts = np.linspace(0, n, batches + 1).astype(int)
    for a, b in zip(cuts[:-1], cuts[1:], strict=True):
        ms.update(y[a:b], p[a:b], sample_weight=None if w is None else w[a:b])
    ys, ps = y - offset, p - offset  # exact (Sterbenz): the same data, centred
    assert np.array_equal(ys + offset, y) and np.array_equal(ps + offset, p)
    return ms, ys, ps, w


@pytest.mark.parametrize("offset", [1e9, 1e12])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("batches", [200, 20])  # 1,000 rows (numpy passes), 10,000 (compiled, with numba)
def test_large_mean_over_many_batches_keeps_its_digits(offset, weighted, batches):
    ms, ys, ps, w = stream(offset, 200_000, batches, weighted)
    got = ms.compute()
    want = {"mse": skm.mean_squared_error(ys, ps, sample_weight=w),
            "rmse": skm.root_mean_squared_error(ys, ps, sample_weight=w),
            "mae": skm.mean_absolute_error(ys, ps, sample_weight=w),
            "r2": skm.r2_score(ys, ps, sample_weight=w),
            "ev": skm.explained_variance_score(ys, ps, sample_weight=w)}
    for name, value in want.items():
        np.testing.assert_allclose(got[name], value, rtol=1e-9, err_msg=name)


def test_a_naive_running_sum_of_squares_would_not():
    """The data of the test above defeat the textbook formula sum y^2 - (sum y)^2 / n: the
    stability test is not vacuous."""
    _, ys, _, _ = stream(1e9, 200_000, 200, False)
    y = ys + 1e9
    naive = float(np.sum(y * y) - np.sum(y) ** 2 / len(y))
    exact = float(np.sum((ys - ys.mean()) ** 2))
    assert abs(naive - exact) > 1e-3 * exact


@pytest.mark.parametrize("offset", [1e9, 1e12])
def test_merged_workers_keep_their_digits(offset):
    """Partitions merged (Chan's update between states of different means) and a save/load."""
    rng = np.random.default_rng(1)
    n = 60_000
    y = offset + rng.normal(size=n)
    p = y + rng.normal(size=n) * 0.5
    owner = rng.integers(0, 4, n)
    parts = []
    for i in range(4):
        m = sm.R2Score(multioutput="raw_values")
        rows = np.flatnonzero(owner == i)
        for chunk in np.array_split(rows, 25):
            m.update(y[chunk], p[chunk])
        parts.append(m)
    merged = sm.loads(sm.dumps(parts[0].merge(*parts[1:])))
    np.testing.assert_allclose(merged.compute(), skm.r2_score(y - offset, p - offset, multioutput="raw_values"),
                               rtol=1e-9)


def test_constant_targets_stay_exactly_constant_over_batches():
    """Exact zeros stay exact: a constant y_true streamed in batches has denominator 0, so
    force_finite gives scikit-learn's 1.0 / 0.0, not a huge ratio of rounding residues."""
    y = np.full(1000, 0.1)
    m = sm.R2Score(force_finite=False)
    for a in range(0, 1000, 33):
        m.update(y[a:a + 33], y[a:a + 33])
    assert m._state.totals()["m2_y"][0] == 0.0 and m._state.totals()["sse"][0] == 0.0
    assert sm.R2Score().update(y, y).compute() == 1.0
    assert sm.R2Score().update(y[:500], y[:500]).update(y[500:], y[500:] + 1).compute() == 0.0


@pytest.mark.parametrize("weighted", [False, True])
def test_the_compiled_pass_equals_the_numpy_passes(weighted, monkeypatch):
    """Large batches of one output take one compiled pass when numba is installed: the same
    moments to rounding, the same refusals (a NaN found through the sums is located)."""
    pytest.importorskip("numba")
    from streammetrics.regression import _moments

    rng = np.random.default_rng(5)
    y = 1e6 + np.round(rng.normal(size=20_000), 3)
    p = y + rng.normal(size=20_000)
    w = rng.integers(0, 3, 20_000).astype(float) if weighted else None
    fused = sm.MetricSet(mse=sm.MeanSquaredError(), mae=sm.MeanAbsoluteError(), ev=sm.ExplainedVariance())
    fused.update(y, p, sample_weight=w)
    assert _moments._FUSED and _moments._FUSED[0] is not None
    monkeypatch.setattr(_moments, "FUSED_ROWS", 10**9)
    plain = sm.MetricSet(mse=sm.MeanSquaredError(), mae=sm.MeanAbsoluteError(), ev=sm.ExplainedVariance())
    plain.update(y, p, sample_weight=w)
    for k, v in plain.compute().items():
        np.testing.assert_allclose(fused.compute()[k], v, rtol=1e-12, err_msg=k)
    monkeypatch.setattr(_moments, "FUSED_ROWS", 0)
    bad = p.copy()
    bad[12_345] = np.nan
    before = fused.state_dict()
    with pytest.raises(ValueError, match=r"y_pred\[12345\] = nan"):
        fused.update(y, bad, sample_weight=w)
    assert all(np.array_equal(before[k], v) for k, v in fused.state_dict().items() if isinstance(v, np.ndarray))


@pytest.mark.parametrize("bias", [0.0, 0.7, 3.0, 1e6])  # the residuals' mean, in their standard deviations
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("fused", [False, True])
def test_biased_predictions_keep_their_digits(bias, weighted, fused, monkeypatch):
    """Residuals of every offset relative to their spread: centred (no subtraction pass), a
    mean inside and beyond the spread (a data value as pivot, or the corrected pass), and a
    large mean, with a large target mean too; the numpy passes and the compiled one (numba)."""
    from streammetrics.regression import _moments

    if fused:
        pytest.importorskip("numba")
    else:
        monkeypatch.setattr(_moments, "FUSED_ROWS", 10**9)
    rng = np.random.default_rng(7)
    n, offset = 60_000, 1e9
    y = offset + rng.normal(size=n) * 3.0
    p = y - bias - rng.normal(size=n)
    w = rng.integers(0, 4, n).astype(float) if weighted else None
    ms = sm.MetricSet(mse=sm.MeanSquaredError(), mae=sm.MeanAbsoluteError(), r2=sm.R2Score(),
                      ev=sm.ExplainedVariance())
    for a in range(0, n, 5000):
        ms.update(y[a:a + 5000], p[a:a + 5000], sample_weight=None if w is None else w[a:a + 5000])
    ys, ps = y - offset, p - offset
    assert np.array_equal(ys + offset, y) and np.array_equal(ps + offset, p)
    got = ms.compute()
    want = {"mse": skm.mean_squared_error(ys, ps, sample_weight=w),
            "mae": skm.mean_absolute_error(ys, ps, sample_weight=w),
            "r2": skm.r2_score(ys, ps, sample_weight=w),
            "ev": skm.explained_variance_score(ys, ps, sample_weight=w)}
    for name, value in want.items():
        np.testing.assert_allclose(got[name], value, rtol=1e-10, err_msg=name)


def test_one_output_equals_a_column_of_several():
    """A batch of one output takes the float path (moments as floats, a scalar merge); the same
    column among several outputs takes the per-output arrays: equal to rounding, and states of
    both kinds merge."""
    rng = np.random.default_rng(8)
    y = 1e6 + rng.normal(size=(3000, 2)) * 2.0
    p = y + 0.5 + rng.normal(size=(3000, 2))
    w = rng.integers(0, 3, 3000).astype(float)
    one = sm.MetricSet(mse=sm.MeanSquaredError(), mae=sm.MeanAbsoluteError(), r2=sm.R2Score())
    two = sm.MetricSet(mse=sm.MeanSquaredError("raw_values"), mae=sm.MeanAbsoluteError("raw_values"),
                       r2=sm.R2Score(multioutput="raw_values"))
    for a in range(0, 3000, 700):
        one.update(y[a:a + 700, 0], p[a:a + 700, 0], sample_weight=w[a:a + 700])
        two.update(y[a:a + 700], p[a:a + 700], sample_weight=w[a:a + 700])
    for name, value in one.compute().items():
        np.testing.assert_allclose(value, two.compute()[name][0], rtol=1e-12, err_msg=name)
        np.testing.assert_allclose(value, getattr(skm, {"mse": "mean_squared_error", "mae": "mean_absolute_error",
                                                        "r2": "r2_score"}[name])(y[:, 0], p[:, 0], sample_weight=w),
                                   rtol=1e-12, err_msg=name)
    half = sm.R2Score().update(y[:1500, 0], p[:1500, 0])
    rest = sm.loads(sm.dumps(sm.R2Score().update(y[1500:, 0], p[1500:, 0])))  # arrays after a load
    np.testing.assert_allclose(half.merge(rest).compute(), skm.r2_score(y[:, 0], p[:, 0]), rtol=1e-12)
