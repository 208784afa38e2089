"""The shared calibration kernels against their plain definitions: the arithmetic uniform bins
equal ``searchsorted`` on the same edges for every value (edges, their neighbours, 0 and 1), the
batch sums equal the per-sample terms summed, and the binned sums equal masked sums."""

from __future__ import annotations

import numpy as np
import pytest

import streammetrics as sm
from streammetrics._scores.probability_inputs import (
    BLOCK,
    one_binary,
    prepare_batch,
    uniform_bin,
    uniform_bins,
)
from streammetrics.calibration._state import ProbabilityBins

N_BINS = [*range(1, 64), 97, 100, 1000, 1024, 4095, 12345, 10**5, 1 << 22]


def searchsorted_bins(conf, n_bins, side):
    """The definition: numpy.histogram's bins (right) or scikit-learn's calibration_curve's."""
    edges = np.linspace(0.0, 1.0, n_bins + 1)
    if side == "right":
        return np.minimum(np.searchsorted(edges, conf, side="right") - 1, n_bins - 1)
    return np.searchsorted(edges[1:-1], conf, side="left")


def adversarial(n_bins):
    """Every edge, its two float neighbours, the exact fractions i / n_bins, 0, 1 and the
    smallest subnormal (clipped to [0, 1])."""
    e = np.linspace(0.0, 1.0, n_bins + 1)
    c = np.concatenate([e, np.nextafter(e, 2.0), np.nextafter(e, -1.0), np.arange(n_bins + 1) / n_bins,
                        [0.0, 1.0, 5e-324, np.nextafter(1.0, 0.0)]])
    return np.clip(c, 0.0, 1.0)


@pytest.mark.parametrize("side", ["left", "right"])
@pytest.mark.parametrize("n_bins", N_BINS)
def test_uniform_bins_equal_searchsorted_on_edges(n_bins, side):
    c = adversarial(n_bins)
    got = uniform_bins(c, n_bins, side)
    np.testing.assert_array_equal(got, searchsorted_bins(c, n_bins, side))
    assert got.min() >= 0 and got.max() <= n_bins - 1
    assert uniform_bins(np.zeros(0), n_bins, side).shape == (0,)


@pytest.mark.parametrize("side", ["left", "right"])
def test_uniform_bins_equal_searchsorted_on_random_and_rounded_values(side):
    rng = np.random.default_rng(7)
    # several blocks of the kernel, the last one partial
    c = np.concatenate([rng.random(100000), np.round(rng.random(60000), 2), np.round(rng.random(2001), 1)])
    assert c.shape[0] > 2 * BLOCK and c.shape[0] % BLOCK
    for n_bins in (3, 5, 7, 10, 15, 20, 100):
        np.testing.assert_array_equal(uniform_bins(c, n_bins, side), searchsorted_bins(c, n_bins, side))


@pytest.mark.parametrize("side", ["left", "right"])
@pytest.mark.parametrize("n_bins", [*range(1, 40), 97, 100, 1000, 4095, 10**5, 1 << 22])
def test_uniform_bin_of_one_value_equals_the_array_form(n_bins, side):
    c = np.concatenate([adversarial(n_bins)[:3000], np.random.default_rng(n_bins).random(500)])
    got = np.array([uniform_bin(v, n_bins, side) for v in c.tolist()])
    np.testing.assert_array_equal(got, searchsorted_bins(c, n_bins, side))


PER_SAMPLE = {
    "brier": lambda: sm.BrierScore(),
    "brier7": lambda: sm.BrierScore(n_bins=7),
    "logloss": lambda: sm.LogLoss(),
    "ece": lambda: sm.CalibrationError(n_bins=10),
    "mce_left": lambda: sm.CalibrationError(n_bins=13, norm="max"),
    "curve": lambda: sm.CalibrationCurve(n_bins=7),
}


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("name", sorted(PER_SAMPLE))
def test_per_sample_updates_equal_batches_of_one_bit_for_bit(name, weighted):
    """update(y, p) of Python numbers (the per-sample path, no arrays) leaves exactly the state a
    batch of that one row leaves: edges, 0, 1, values clipped by eps, zero weights."""
    rng = np.random.default_rng(11)
    e = np.linspace(0.0, 1.0, 11)
    p = np.concatenate([rng.random(400), e, np.nextafter(e[1:], -1.0), [0.0, 1.0, 1e-17, 1 - 1e-17, 2.0**-60]])
    y = rng.integers(0, 2, p.size)
    w = rng.random(p.size) * 3
    w[::7] = 0.0
    one, batch = PER_SAMPLE[name](), PER_SAMPLE[name]()
    for i in range(p.size):
        yi, pi = (int(y[i]), float(p[i])) if i % 3 else (bool(y[i]), np.float64(p[i]))
        if weighted:
            one.update(yi, pi, sample_weight=float(w[i]))
            batch.update([yi], [pi], sample_weight=[float(w[i])])
        else:
            one.update(yi, pi)
            batch.update([yi], [pi])
    a, b = one.state_dict(), batch.state_dict()
    assert a.keys() == b.keys()
    for k in a:
        if k != "config":
            assert np.asarray(a[k]).tobytes() == np.asarray(b[k]).tobytes(), k
    assert one._state.totals()[0] > 0


def test_per_sample_path_refuses_as_the_batch_does():
    """Off the per-sample path (not a Python number, not 0/1, outside [0, 1]) the batch checks
    answer, with their messages; a bad weight is refused with the batch's message."""
    assert one_binary(2, 0.5, None) is None and one_binary(1, 1.5, None) is None
    assert one_binary(1, float("nan"), None) is None and one_binary(1, 0.5, [1.0]) is None
    assert one_binary(np.int64(1), 0.5, None) is None
    m = sm.BrierScore()
    for y, p, w, message in [(2, 0.5, None, "y_true: labels must be 0 or 1"),
                             (1, 1.5, None, "y_pred: probabilities must lie in \\[0, 1\\]"),
                             (1, float("nan"), None, "y_pred: probabilities must not be NaN"),
                             (1, 0.5, -1.0, "sample_weight: ")]:
        with pytest.raises(ValueError, match=message):
            m.update(y, p, sample_weight=w)
        with pytest.raises(ValueError, match=message):
            sm.BrierScore().update([y], [p], sample_weight=None if w is None else [w])
    assert m._state.totals()[0] == 0.0


def reference_terms(y, p, num_classes):
    """Per-sample log loss and Brier terms as scikit-learn defines them (clip in the input's
    type, log in float64)."""
    eps = np.finfo(p.dtype).eps
    one = p.dtype.type(1)
    if num_classes is None:
        q = np.where(y == 1, np.clip(p, eps, one - eps), np.clip(one - p, eps, one - eps))
        brier = (p.astype(np.float64) - y) ** 2
    else:
        q = np.clip(p[np.arange(len(y)), y], eps, one - eps)
        t = np.eye(num_classes)[y]
        brier = ((p.astype(np.float64) - t) ** 2).sum(axis=1)
    return -np.log(q.astype(np.float64)), brier


@pytest.mark.parametrize("n", [3000, 2 * BLOCK + 7])  # one block of rows, several
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("num_classes", [None, 4])
@pytest.mark.parametrize("weighted", [False, True])
def test_batch_sums_equal_summed_terms(dtype, num_classes, weighted, n):
    rng = np.random.default_rng(11)
    if num_classes is None:
        y = rng.integers(0, 2, n)
        p = rng.random(n)
        p[:40] = [0.0, 1.0] * 20  # clipped on both sides
    else:
        y = rng.integers(0, num_classes, n)
        p = rng.dirichlet(np.ones(num_classes), n)
        p[0] = np.eye(num_classes)[y[0]]
        p[1] = np.eye(num_classes)[(y[1] + 1) % num_classes]
    p = p.astype(dtype)
    w = rng.random(n) if weighted else None
    b = prepare_batch(y, p, w, num_classes, False)
    loss, brier = reference_terms(y, p, num_classes)
    ww = np.ones(n) if w is None else w
    assert b.log_loss == pytest.approx((ww * loss).sum(), rel=1e-12)
    assert b.brier == pytest.approx((ww * brier).sum(), rel=1e-12)
    skipped = prepare_batch(y, p, w, num_classes, False, losses=False)
    assert skipped.log_loss is None and skipped.brier is None
    np.testing.assert_array_equal(skipped.p, b.p)


@pytest.mark.parametrize("n", [5000, 2 * BLOCK + 13])  # one block of rows, several
@pytest.mark.parametrize("side", ["left", "right"])
@pytest.mark.parametrize("weighted", [False, True])
def test_binary_bins_equal_masked_sums(side, weighted, n):
    rng = np.random.default_rng(5)
    nb = 7
    y = rng.integers(0, 2, n)
    p = np.concatenate([np.round(rng.random(n - nb - 1), 2), np.linspace(0.0, 1.0, nb + 1)])
    w = rng.random(n) if weighted else None
    state = ProbabilityBins(None, nb, side, False)
    state.apply(state.prepare(y, p, w))
    ww = np.ones(n) if w is None else w
    cell = searchsorted_bins(p, nb, side)
    want = np.zeros((nb, 5))
    for b in range(nb):
        m, o = cell == b, (cell == b) & (y == 1)
        want[b] = [ww[m].sum(), (ww * p)[m].sum(), ww[o].sum(), (ww * p * p)[m].sum(), (ww * p)[o].sum()]
    np.testing.assert_allclose(state.bins()[0], want, rtol=1e-12, atol=0)


@pytest.mark.parametrize("n_bins", [3, 5, 10, 15])
def test_curve_on_edges_equals_sklearn(n_bins):
    """Values on, just below and just above every edge land where scikit-learn puts them."""
    from sklearn.calibration import calibration_curve

    p = np.repeat(adversarial(n_bins), 3)
    y = np.random.default_rng(n_bins).integers(0, 2, p.shape[0])
    want_true, want_pred = calibration_curve(y, p, n_bins=n_bins)
    got = sm.CalibrationCurve(n_bins).update(y, p).compute()
    np.testing.assert_array_equal(got.prob_true, want_true)
    np.testing.assert_allclose(got.prob_pred, want_pred, rtol=1e-12, atol=0)


def test_curve_state_skips_the_loss_sums_and_shares_only_with_curves():
    y, p = [0, 1, 1, 0], [0.1, 0.8, 0.6, 0.3]
    curve = sm.CalibrationCurve(4).update(y, p)
    tot = curve._state.totals()
    assert tot[0] == 4.0 and tot[1] == 0.0 and tot[2] == 0.0
    assert curve.share_key() != sm.BrierScore(n_bins=4).share_key()
    ms = sm.MetricSet({"a": sm.CalibrationCurve(4), "b": sm.CalibrationCurve(4), "loss": sm.LogLoss()})
    assert ms.groups == [["a", "b"], ["loss"]]
    ms.update(y, p)
    np.testing.assert_array_equal(ms.compute()["a"].prob_pred, curve.compute().prob_pred)


def test_curve_state_with_loss_sums_still_loads():
    """A file saved while the curve kept the loss sums (earlier versions) loads: the sums are
    consistent and unread, and the loaded curve keeps streaming."""
    y, p = np.array([0, 1, 1, 0]), np.array([0.1, 0.8, 0.6, 0.3])
    old = sm.CalibrationCurve(4).update(y, p)
    loss, brier = reference_terms(y, p, None)
    old._state.totals()[1:] = [loss.sum(), brier.sum()]  # what the earlier state held
    loaded = sm.loads(sm.dumps(old)).update(y, p)
    want = sm.CalibrationCurve(4).update(np.tile(y, 2), np.tile(p, 2)).compute()
    got = loaded.compute()
    np.testing.assert_array_equal(got.prob_true, want.prob_true)
    np.testing.assert_allclose(got.prob_pred, want.prob_pred, rtol=1e-12)


def test_top_label_bins_only_in_the_top_label_state():
    """One-vs-rest states (classwise ECE, Brier, curves) leave the top-label sums at 0; the
    top-label ECE keeps a state of its own and its value."""
    rng = np.random.default_rng(2)
    y, p = rng.integers(0, 3, 500), rng.dirichlet(np.ones(3), 500)
    ms = sm.MetricSet({"top": sm.CalibrationError(3, n_bins=5), "cw": sm.CalibrationError(3, n_bins=5, classwise=True),
                       "brier": sm.BrierScore(3, n_bins=5)})
    assert ms.groups == [["top"], ["cw", "brier"]]
    ms.update(y, p)
    cw = dict(ms.items())["cw"]
    assert not cw._state.top().any() and cw._state.bins().any()
    alone = sm.CalibrationError(3, n_bins=5).update(y, p)
    assert ms.compute()["top"] == alone.compute()
    conf, correct = p.max(axis=1), p.argmax(axis=1) == y
    cell = searchsorted_bins(conf, 5, "right")
    want = sum(abs(correct[cell == b].sum() - conf[cell == b].sum()) for b in range(5)) / 500
    assert alone.compute() == pytest.approx(want, rel=1e-12)


@pytest.mark.parametrize("n", [700, 3 * (BLOCK // 3) + 11])  # one block of rows, several
def test_multiclass_bins_equal_masked_sums(n):
    rng = np.random.default_rng(9)
    c, nb = 3, 6
    y, p, w = rng.integers(0, c, n), rng.dirichlet(np.ones(c), n), rng.random(n)
    p[:nb + 1, 0] = np.linspace(0.0, 1.0, nb + 1)  # values on the edges
    p[:nb + 1, 1:] = (1.0 - p[:nb + 1, :1]) / 2
    ovr, top = ProbabilityBins(c, nb, "right", False), ProbabilityBins(c, nb, "right", False, ovr=False)
    for state in (ovr, top):
        state.apply(state.prepare(y, p, w))
    want = np.zeros((c, nb, 5))
    for k in range(c):
        cell, o = searchsorted_bins(p[:, k], nb, "right"), y == k
        for b in range(nb):
            m = cell == b
            want[k, b] = [w[m].sum(), (w * p[:, k])[m].sum(), w[m & o].sum(), (w * p[:, k] ** 2)[m].sum(),
                          (w * p[:, k])[m & o].sum()]
    np.testing.assert_allclose(ovr.bins(), want, rtol=1e-12, atol=1e-300)
    conf, correct = p.max(axis=1), p.argmax(axis=1) == y
    cell = searchsorted_bins(conf, nb, "right")
    want_top = np.array([[w[cell == b].sum(), (w * conf)[cell == b].sum(), w[(cell == b) & correct].sum()]
                         for b in range(nb)])
    np.testing.assert_allclose(top.top(), want_top, rtol=1e-12, atol=1e-300)
