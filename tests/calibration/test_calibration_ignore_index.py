"""CalibrationError(ignore_index=): torchmetrics' option (issue #33). The rows whose label is
ignore_index are checked, then left out -- by the state's own prepare, so every path (update,
Window, Decayed, MetricSet, the per-sample path) leaves them out: equal to the metric fed the other
rows (1e-12), to torchmetrics' Binary/MulticlassCalibrationError(ignore_index=) (its float32
confidences: 1e-6), through batches, merges and save/load; a refused batch changes nothing."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import streammetrics as sm

torch = pytest.importorskip("torch")
tmc = pytest.importorskip("torchmetrics.classification")

NORMS = ["l1", "l2", "max"]
#: Every state a CalibrationError may hold (uniform bins binary / top-label / one-vs-rest, the
#: probability buffer, the raw score buffer of binary logits, the top-label quantile state,
#: bounded bins): (num_classes, options).
LAYOUTS = [
    (None, {}),
    (3, {}),
    (3, {"classwise": True}),
    (None, {"strategy": "quantile"}),
    (None, {"strategy": "quantile", "from_logits": True}),
    (3, {"strategy": "quantile"}),
    (3, {"strategy": "quantile", "classwise": True}),
    (None, {"strategy": "quantile", "max_bytes": 4096}),
]


def _value(m):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", sm.UndefinedMetricWarning)  # every row left out: nan
        return m.compute()


def _same(a, b, tol=1e-12):
    return (np.isnan(a) and np.isnan(b)) or abs(a - b) <= tol


def _data(rng, n, num_classes, ignore, logits=False):
    """Labels with ~30% ``ignore``, tied predictions (eighths: exact in float32 as in float64,
    below 1.0: torchmetrics puts a confidence of exactly 1.0 in a bin of its own, the one
    documented difference of its bins)."""
    if num_classes is None:
        y = rng.integers(0, 2, n)
        p = rng.integers(-16, 17, n) / 4 if logits else rng.integers(0, 8, n) / 8
    else:
        y = rng.integers(0, num_classes, n)
        q = rng.multinomial(8, np.ones(num_classes) / num_classes, n)  # rows sum to 8, ties
        q[q.max(axis=1) == 8] = np.bincount(np.arange(8) % num_classes, minlength=num_classes)
        p = q / 8
    y[rng.random(n) < 0.3] = ignore
    return y, p


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), n=st.integers(1, 90), norm=st.sampled_from(NORMS),
       layout=st.sampled_from(LAYOUTS), weighted=st.booleans(), ignore=st.sampled_from([-100, 0, 1]),
       data=st.data())
def test_split_merge_save_equal_the_metric_fed_the_kept_rows(seed, n, norm, layout, weighted, ignore, data):
    num_classes, opts = layout
    rng = np.random.default_rng(seed)
    y, p = _data(rng, n, num_classes, ignore, opts.get("from_logits", False))
    if num_classes is None:
        y[(y != ignore) & (rng.random(n) < 0.1)] = 1 - ignore if ignore in (0, 1) else 0
    w = rng.integers(0, 4, n) * rng.random(n) if weighted else None
    keep = y != ignore

    def make(**extra):
        return sm.CalibrationError(num_classes, n_bins=5, norm=norm, **opts, **extra)

    want = make().update(y[keep], p[keep], sample_weight=None if w is None else w[keep])
    cuts = sorted(data.draw(st.lists(st.integers(0, n), max_size=4)))
    parts = []
    for a, b in zip([0, *cuts], [*cuts, n], strict=True):
        part = make(ignore_index=ignore)
        part.update(y[a:b], p[a:b], sample_weight=None if w is None else w[a:b])
        parts.append(part)
    merged = make(ignore_index=ignore).merge(*parts)
    streamed = make(ignore_index=ignore)
    for a, b in zip([0, *cuts], [*cuts, n], strict=True):
        streamed.update(y[a:b], p[a:b], sample_weight=None if w is None else w[a:b])
    back = sm.loads(sm.dumps(streamed))
    assert back.ignore_index == ignore
    expected = _value(want)
    for got in (_value(merged), _value(streamed), _value(back)):
        assert _same(got, expected), (got, expected)


@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("ignore", [-100, 0, 1])
def test_binary_equals_torchmetrics(norm, ignore):
    rng = np.random.default_rng(1)
    y, p = _data(rng, 700, None, ignore)
    peer = tmc.BinaryCalibrationError(n_bins=8, norm=norm, ignore_index=ignore)
    want = float(peer(torch.tensor(p), torch.tensor(y)))
    m = sm.CalibrationError(n_bins=8, norm=norm, ignore_index=ignore)
    for i in range(0, 700, 97):
        m.update(y[i:i + 97], p[i:i + 97])
    assert m.compute() == pytest.approx(want, abs=1e-6)


@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("ignore", [-1, 2])
def test_multiclass_top_label_equals_torchmetrics(norm, ignore):
    rng = np.random.default_rng(2)
    y, probs = _data(rng, 700, 4, ignore)  # ties inside rows: argmax takes the first, as torch's max
    peer = tmc.MulticlassCalibrationError(num_classes=4, n_bins=8, norm=norm, ignore_index=ignore)
    want = float(peer(torch.tensor(probs), torch.tensor(y)))
    got = sm.CalibrationError(4, n_bins=8, norm=norm, ignore_index=ignore).update(y, probs).compute()
    assert got == pytest.approx(want, abs=1e-6)


@pytest.mark.parametrize("norm", NORMS)
def test_multiclass_logits_equal_torchmetrics(norm):
    rng = np.random.default_rng(3)
    y = rng.integers(0, 4, 400)
    y[rng.random(400) < 0.3] = -100
    logits = rng.normal(size=(400, 4)) * 3
    peer = tmc.MulticlassCalibrationError(num_classes=4, n_bins=10, norm=norm, ignore_index=-100)
    want = float(peer(torch.tensor(logits), torch.tensor(y)))  # torchmetrics softmaxes them
    got = sm.CalibrationError(4, n_bins=10, norm=norm, from_logits=True, ignore_index=-100).update(y, logits)
    assert got.compute() == pytest.approx(want, abs=1e-6)


@pytest.mark.parametrize("num_classes", [None, 3])
def test_an_all_ignored_batch(num_classes):
    """Every row ignored: nothing is folded in. torchmetrics gives nan for l1 as we do; for l2 and
    max it gives 0 (its empty bins), where ours stays nan with an UndefinedMetricWarning (no
    sample: no value; docs/calibration.md)."""
    y = np.full(4, -100)
    p = np.full(4, 0.5) if num_classes is None else np.full((4, 3), 1 / 3)
    peer_cls = tmc.BinaryCalibrationError if num_classes is None else tmc.MulticlassCalibrationError
    kw = {} if num_classes is None else {"num_classes": num_classes}
    peer = peer_cls(n_bins=5, norm="l1", ignore_index=-100, **kw)
    assert np.isnan(float(peer(torch.tensor(p), torch.tensor(y))))
    for norm in NORMS:
        m = sm.CalibrationError(num_classes, n_bins=5, norm=norm, ignore_index=-100)
        before = sm.dumps(m)
        m.update(y, p)
        assert sm.dumps(m) == before  # an empty increment: the state as it was
        with pytest.warns(sm.UndefinedMetricWarning):
            assert np.isnan(m.compute())
    # and after data, an all-ignored batch changes nothing
    m = sm.CalibrationError(num_classes, n_bins=5, ignore_index=-100).update(
        [0, 1], [0.2, 0.9] if num_classes is None else [[0.2, 0.3, 0.5], [0.1, 0.8, 0.1]])
    then = sm.dumps(m)
    assert sm.dumps(m.update(y, p)) == then


@pytest.mark.parametrize("num_classes, opts", LAYOUTS)
def test_window_decayed_and_metricset_leave_the_rows_out(num_classes, opts):
    """The path the wrappers take (the state's prepare) leaves the rows out too: a window larger
    than the stream, a set, and a decayed stream (equal to the metric fed the decay weights)."""
    rng = np.random.default_rng(4)
    y, p = _data(rng, 60, num_classes, -100, opts.get("from_logits", False))
    keep = y != -100

    def make(**extra):
        return sm.CalibrationError(num_classes, n_bins=4, norm="l2", **opts, **extra)

    want = _value(make().update(y[keep], p[keep]))
    window = sm.Window(make(ignore_index=-100), size=60)
    group = sm.MetricSet(e=make(ignore_index=-100))
    for i in range(0, 60, 13):
        window.update(y[i:i + 13], p[i:i + 13])
        group.update(y[i:i + 13], p[i:i + 13])
    assert _same(_value(window), want, 1e-12)
    assert _same(group.compute()["e"], want, 1e-12)
    # per sample, through the window
    one = sm.Window(make(ignore_index=-100), size=60)
    for yi, pi in zip(y.tolist(), p.tolist(), strict=True):
        one.update(yi, pi)
    assert _same(_value(one), want, 1e-12)
    h = 7.0
    decayed = sm.Decayed(make(ignore_index=-100), half_life=h)
    for i in range(0, 60, 13):
        decayed.update(y[i:i + 13], p[i:i + 13])
    age = 59 - np.arange(60)
    weighted = make().update(y[keep], p[keep], sample_weight=0.5 ** (age[keep] / h))
    assert _same(_value(decayed), _value(weighted), 1e-9)


@pytest.mark.parametrize("num_classes, opts", LAYOUTS)
def test_rejected_batches_change_nothing(num_classes, opts):
    m = sm.CalibrationError(num_classes, n_bins=4, ignore_index=-100, **opts)
    good_p = [0.2, 0.7] if num_classes is None else [[0.2, 0.3, 0.5], [0.6, 0.2, 0.2]]
    m.update([1, -100], good_p)
    before = sm.dumps(m)
    bad_label = [0, 5] if num_classes is None else [0, 7]
    with pytest.raises(ValueError, match=r"y_true: .*\(or ignore_index=-100\).*first invalid value \d+ at index 1"):
        m.update(bad_label, good_p)
    nan_p = [np.nan, 0.5] if num_classes is None else [[np.nan, 0.5, 0.5], [0.2, 0.3, 0.5]]
    with pytest.raises(ValueError, match=r"y_pred: .*NaN.* at index (0|\(0, 0\))"):  # an ignored row is checked too
        m.update([-100, 1], nan_p)
    with pytest.raises(ValueError, match="sample_weight"):
        m.update([-100, 1], good_p, sample_weight=[-1.0, 1.0])
    assert sm.dumps(m) == before


def test_merge_and_load_check_ignore_index():
    a = sm.CalibrationError(n_bins=5, ignore_index=-100).update([1, -100, 0], [0.9, 0.5, 0.2])
    b = sm.CalibrationError(n_bins=5).update([1], [0.4])
    then = sm.dumps(a)
    with pytest.raises(ValueError, match=r"merge: configuration mismatch \(ignore_index: -100 vs None\)"):
        a.merge(b)
    with pytest.raises(ValueError, match=r"ignore_index: -100 vs 0"):
        a.merge(sm.CalibrationError(n_bins=5, ignore_index=0))
    assert sm.dumps(a) == then
    back = sm.loads(sm.dumps(a))
    assert back.ignore_index == -100 and back.compute() == a.compute()
    # a MetricSet never shares a state between different ignore_index
    group = sm.MetricSet(a=sm.CalibrationError(n_bins=5, ignore_index=0), b=sm.CalibrationError(n_bins=5))
    group.update([0, 1, 1], [0.1, 0.6, 0.9])
    assert group.compute()["a"] == sm.CalibrationError(n_bins=5).update([1, 1], [0.6, 0.9]).compute()
    assert group.compute()["b"] == sm.CalibrationError(n_bins=5).update([0, 1, 1], [0.1, 0.6, 0.9]).compute()


def test_ignore_index_is_checked_and_saved():
    with pytest.raises(ValueError, match="ignore_index: must be an int or None, got 1.5"):
        sm.CalibrationError(ignore_index=1.5)
    with pytest.raises(ValueError, match="ignore_index: with classes=, must be a label that is not a class"):
        sm.CalibrationError(classes=["ham", "spam"], ignore_index=1)
    m = sm.CalibrationError(n_bins=5, ignore_index=-100).update([1, -100, 0], [0.9, 0.5, 0.2])
    assert sm.loads(sm.dumps(m)).ignore_index == -100
    assert "ignore_index" not in sm.CalibrationError()._config()  # files without it stay as they were


def test_ignore_index_with_classes():
    m = sm.CalibrationError(n_bins=4, classes=["ham", "spam"], ignore_index=-100)
    m.update(np.array(["spam", -100, "ham"], dtype=object), [0.8, 0.3, 0.1])
    want = sm.CalibrationError(n_bins=4).update([1, 0], [0.8, 0.1]).compute()
    assert m.compute() == want


def test_an_ignored_row_never_warns_about_its_sum():
    """Padding rows of zeros: no scikit-learn 'do not sum to one' warning for them; a kept row
    that does not sum to 1 still warns, naming its index in the batch as given."""
    m = sm.CalibrationError(3, n_bins=4, ignore_index=-100)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        m.update([0, -100], [[0.2, 0.3, 0.5], [0.0, 0.0, 0.0]])
    with pytest.warns(UserWarning, match=r"1 row\(s\) of the batch .* the first at index 2"):
        m.update([-100, 1, 2], [[0.0, 0.0, 0.0], [0.2, 0.3, 0.5], [0.5, 0.5, 0.5]])
