"""Exponential decay (docs/definitions/service.md#exponential-decay):
equals the undecayed metric with the decay weights."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import close, quiet
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics import (
    accuracy_score,
    average_precision_score,
    confusion_matrix,
    f1_score,
    precision_score,
    recall_score,
    roc_auc_score,
)

import streammetrics as sm
from streammetrics import (
    AUROC,
    F1,
    Accuracy,
    AveragePrecision,
    ConfusionMatrix,
    Decayed,
    MetricSet,
    Precision,
    Recall,
    TopKAccuracy,
    Window,
)
from streammetrics._core.intervals import wilson


@pytest.mark.parametrize("h", [0.7, 5.0, 200.0])
@pytest.mark.parametrize("weighted", [False, True])
def test_decay_by_samples_equals_sklearn_with_weights(h, weighted):
    rng = np.random.default_rng(int(h * 10) + weighted)
    ms = MetricSet(
        f1=Decayed(F1(), half_life=h),
        prec=Decayed(Precision(zero_division=0.0), half_life=h),
        cm=Decayed(ConfusionMatrix(), half_life=h),
        auroc=Decayed(AUROC(), half_life=h),
        ap=Decayed(AveragePrecision(), half_life=h),
    )
    ys, ss, ws = [], [], []
    for k in range(30):
        if k % 5 == 4:  # one sample as scalars
            y, s = int(rng.integers(0, 2)), float(np.round(rng.random(), 1))
            w = float(rng.random() * 2) if weighted else None
            ms.update(y, s, sample_weight=w)
            ys.append(y)
            ss.append(s)
            ws.append(1.0 if w is None else w)
        else:
            n = int(rng.integers(0, 20))
            y = rng.integers(0, 2, n)
            s = np.round(rng.random(n), 1)
            s[rng.random(n) < 0.2] = 0.0
            w = rng.random(n) * 2 if weighted else None
            ms.update(y, s, sample_weight=w)
            ys += list(y)
            ss += list(s)
            ws += list(np.ones(n) if w is None else w)
        if not ys:
            continue
        n_all = len(ys)
        dec = 0.5 ** ((n_all - 1 - np.arange(n_all)) / h) * np.array(ws)
        yy, sc = np.array(ys), np.array(ss)
        got = quiet(ms.compute)
        pred = sc >= 0.5
        assert close(got["f1"], f1_score(yy, pred, sample_weight=dec, zero_division=0.0))
        assert close(got["prec"], precision_score(yy, pred, sample_weight=dec, zero_division=0.0))
        np.testing.assert_allclose(got["cm"], confusion_matrix(yy, pred, sample_weight=dec), rtol=1e-11, atol=0)
        if dec[yy == 1].sum() > 0 and dec[yy == 0].sum() > 0:
            assert close(got["auroc"], roc_auc_score(yy, sc, sample_weight=dec))
        if dec[yy == 1].sum() > 0:
            assert close(got["ap"], average_precision_score(yy, sc, sample_weight=dec))


def test_decay_by_time_equals_sklearn_with_weights():
    rng = np.random.default_rng(4)
    h = 3.0
    now = [0.0]
    clock = lambda: now[0]  # noqa: E731
    ms = MetricSet(
        acc=Decayed(Accuracy(num_classes=3), half_life_seconds=h, clock=clock),
        cm=Decayed(ConfusionMatrix(num_classes=3), half_life_seconds=h, clock=clock),
        auroc=Decayed(AUROC(num_classes=3), half_life_seconds=h, clock=clock),
    )
    ys, ps, ts = [], [], []
    t = 0.0
    for k in range(30):
        n = int(rng.integers(1, 12))
        y = rng.integers(0, 3, n)
        p = rng.random((n, 3))
        p /= p.sum(axis=1, keepdims=True)
        if k % 3 == 0:
            stamp = t + np.sort(rng.random(n)) * 2
            ms.update(y, p, timestamp=stamp)
        elif k % 3 == 1:
            stamp = np.full(n, t)
            ms.update(y, p, timestamp=t)
        else:  # the injected clock
            now[0] = t
            stamp = np.full(n, t)
            ms.update(y, p)
        t = float(stamp.max()) + float(rng.random())
        ys += list(y)
        ps += list(p)
        ts += list(stamp)
        yy, pp, tt = np.array(ys), np.array(ps), np.array(ts)
        dec = 0.5 ** ((tt.max() - tt) / h)
        got = quiet(ms.compute)
        assert close(got["acc"], accuracy_score(yy, pp.argmax(axis=1), sample_weight=dec))
        np.testing.assert_allclose(
            got["cm"], confusion_matrix(yy, pp.argmax(axis=1), sample_weight=dec, labels=range(3)),
            rtol=1e-11, atol=0,
        )
        if len(set(ys)) == 3:
            ref = roc_auc_score(yy, pp, sample_weight=dec, multi_class="ovr", labels=range(3))
            assert close(got["auroc"], ref)


def test_every_row_decays_individually_inside_a_batch():
    d = Decayed(ConfusionMatrix(), half_life=1.0)
    d.update([1, 1, 1, 1], [1, 1, 1, 1])
    assert close(d.compute()[1, 1], 1 + 0.5 + 0.25 + 0.125)
    d.update(0, 0)
    m = d.compute()
    assert close(m[1, 1], (1 + 0.5 + 0.25 + 0.125) / 2) and m[0, 0] == 1.0
    assert d.n_seen == 5


def test_wilson_interval_uses_decayed_effective_size():
    rng = np.random.default_rng(2)
    h = 4.0
    d = Decayed(Recall(), half_life=h)
    topk = Decayed(TopKAccuracy(num_classes=4, k=2), half_life=h)
    ml = Decayed(Accuracy(num_classes=3, multilabel=True), half_life=h)
    y = rng.integers(0, 2, 50)
    p = rng.integers(0, 2, 50)
    for a in range(0, 50, 7):
        d.update(y[a:a + 7], p[a:a + 7])
    dec = 0.5 ** ((49 - np.arange(50)) / h)
    tp = dec[(y == 1) & (p == 1)].sum()
    pos = dec[y == 1].sum()
    pos2 = (dec[y == 1] ** 2).sum()
    lo, hi = wilson(np.array([tp]), np.array([pos]), np.array([pos2]), 0.95)
    got = d.interval()
    assert close(got[0], lo[0]) and close(got[1], hi[0])
    # the undecayed metric with the same weights gives the same interval
    ref = Recall().update(y, p, sample_weight=dec)
    assert np.allclose(ref.interval(), got, rtol=1e-12)
    yc = rng.integers(0, 4, 30)
    sc = rng.random((30, 4))
    topk.update(yc, sc)
    ref_t = TopKAccuracy(num_classes=4, k=2).update(yc, sc, sample_weight=0.5 ** ((29 - np.arange(30)) / h))
    assert np.allclose(topk.interval(), ref_t.interval(), rtol=1e-12)
    yl = rng.integers(0, 2, (20, 3))
    pl = rng.integers(0, 2, (20, 3))
    ml.update(yl, pl)
    ref_m = Accuracy(num_classes=3, multilabel=True).update(yl, pl, sample_weight=0.5 ** ((19 - np.arange(20)) / h))
    assert close(ml.compute(), ref_m.compute())
    assert np.allclose(ml.interval(), ref_m.interval(), rtol=1e-12)


def test_long_stream_stays_accurate():
    rng = np.random.default_rng(7)
    h = 50.0
    d = Decayed(F1(), half_life=h)
    y = rng.integers(0, 2, 20000)
    p = rng.integers(0, 2, 20000)
    for a in range(0, 20000, 10):
        d.update(y[a:a + 10], p[a:a + 10])
    dec = 0.5 ** ((19999 - np.arange(20000)) / h)
    assert close(d.compute(), f1_score(y, p, sample_weight=dec), rel=1e-11)


def test_merge_semantics():
    rng = np.random.default_rng(3)
    h = 2.0
    a, b = Decayed(F1(), half_life_seconds=h), Decayed(F1(), half_life_seconds=h)
    ra, rb = Decayed(AUROC(), half_life_seconds=h), Decayed(AUROC(), half_life_seconds=h)
    rows = []
    for k in range(20):
        y, s = rng.integers(0, 2, 5), rng.random(5)
        (a if k % 2 else b).update(y, s, timestamp=float(k))
        (ra if k % 2 else rb).update(y, s, timestamp=float(k))
        rows += [(float(k), yi, si) for yi, si in zip(y, s, strict=True)]
    a.merge(b)
    ra.merge(rb)
    t = np.array([r[0] for r in rows])
    yy = np.array([r[1] for r in rows])
    ss = np.array([r[2] for r in rows])
    dec = 0.5 ** ((t.max() - t) / h)
    assert close(a.compute(), f1_score(yy, ss >= 0.5, sample_weight=dec))
    assert close(ra.compute(), roc_auc_score(yy, ss, sample_weight=dec))
    # by samples: each shard's samples keep their in-shard ages
    sa, sb = Decayed(Recall(), half_life=3.0), Decayed(Recall(), half_life=3.0)
    qa, qb = Decayed(AUROC(), half_life=3.0), Decayed(AUROC(), half_life=3.0)
    ya, pa = rng.integers(0, 2, 12), rng.random(12)
    yb, pb = rng.integers(0, 2, 7), rng.random(7)
    sa.update(ya, pa)
    sb.update(yb, pb)
    qa.update(ya, pa)
    qb.update(yb, pb)
    sa.merge(sb)
    qa.merge(qb)
    wa, wb = 0.5 ** ((11 - np.arange(12)) / 3.0), 0.5 ** ((6 - np.arange(7)) / 3.0)
    yy, pp, ww = np.concatenate([ya, yb]), np.concatenate([pa, pb]), np.concatenate([wa, wb])
    assert close(sa.compute(), recall_score(yy, pp >= 0.5, sample_weight=ww))
    assert close(qa.compute(), roc_auc_score(yy, pp, sample_weight=ww))
    assert sa.n_seen == 19
    # later samples age both shards' samples alike
    qa.update([1, 0], [0.3, 0.6])
    ww2 = np.concatenate([ww * 0.5 ** (2 / 3.0), [0.5 ** (1 / 3.0), 1.0]])
    assert close(qa.compute(), roc_auc_score(np.r_[yy, 1, 0], np.r_[pp, 0.3, 0.6], sample_weight=ww2))
    with pytest.raises(ValueError, match="configuration mismatch"):
        sa.merge(Decayed(Recall(), half_life=4.0))


def test_validation_and_atomicity():
    with pytest.raises(ValueError, match="exactly one"):
        Decayed(F1())
    with pytest.raises(ValueError, match="half_life"):
        Decayed(F1(), half_life=0)
    with pytest.raises(ValueError, match="half_life_seconds"):
        Decayed(F1(), half_life_seconds=float("nan"))
    with pytest.raises(ValueError, match="cannot wrap"):
        Decayed(Window(F1(), size=3), half_life=2)
    with pytest.raises(ValueError, match="cannot wrap"):
        Window(Decayed(F1(), half_life=2), size=3)
    d = Decayed(F1(), half_life_seconds=5.0)
    d.update([1, 0], [1, 0], timestamp=10.0)
    before = d.state_dict()
    with pytest.raises(ValueError, match="timestamp"):
        d.update([1], [1], timestamp=9.0)
    with pytest.raises(ValueError, match="y_true"):
        d.update([3], [1], timestamp=11.0)
    with pytest.raises(ValueError, match="sample_weight"):
        d.update([1, 1], [1, 1], sample_weight=[1.0, -2.0], timestamp=11.0)
    with pytest.raises(ValueError, match="sample_weight"):
        d.update([1, 1], [1, 1], sample_weight=2.0, timestamp=11.0)
    after = d.state_dict()
    assert all(np.array_equal(np.asarray(before[k]), np.asarray(after[k])) for k in before)
    with pytest.raises(ValueError, match="only time decay"):
        Decayed(F1(), half_life=3).update([1], [1], timestamp=1.0)


@pytest.mark.parametrize("make", [
    lambda: Decayed(F1(), half_life=3.0),
    lambda: Decayed(ConfusionMatrix(num_classes=3), half_life_seconds=2.0),
    lambda: Decayed(AUROC(), half_life=3.0),
    lambda: Decayed(AveragePrecision(), half_life_seconds=2.0),
])
def test_save_load_round_trip_and_tampering(make, tmp_path):
    rng = np.random.default_rng(0)
    m = make()
    cm = isinstance(m.metric, ConfusionMatrix)
    timed = m.half_life_seconds is not None
    for k in range(8):
        y = rng.integers(0, 3 if cm else 2, 6)
        p = rng.integers(0, 3, 6) if cm else rng.random(6)
        m.update(y, p, **({"timestamp": float(k)} if timed else {}))
    path = tmp_path / "d.sm"
    sm.save(m, path)
    back = sm.load(path)
    assert back._state.equals(m._state)
    np.testing.assert_array_equal(quiet(back.compute), quiet(m.compute))
    y = np.array([1, 0])
    p = np.array([1, 0]) if cm else np.array([0.4, 0.6])
    kw = {"timestamp": 20.0} if timed else {}
    back.update(y, p, **kw)
    m.update(y, p, **kw)
    np.testing.assert_array_equal(quiet(back.compute), quiet(m.compute))
    d = m.state_dict()
    with pytest.raises(ValueError, match="n_seen"):
        type(m).from_state_dict({**d, "n_seen": -1})
    with pytest.raises(ValueError, match="unexpected array|unexpected arrays"):
        type(m).from_state_dict({**d, "junk": np.zeros(1)})
    if cm:
        with pytest.raises(ValueError, match="negative"):
            type(m).from_state_dict({**d, "inner.counts": -d["inner.counts"] - 1})


@settings(max_examples=25, deadline=None)
@given(
    data=st.lists(st.tuples(st.integers(0, 1), st.integers(0, 4)), min_size=1, max_size=40),
    cuts=st.lists(st.integers(0, 40), max_size=6),
    h=st.sampled_from([0.5, 3.0, 30.0]),
)
def test_batch_split_invariance(data, cuts, h):
    y = np.array([d[0] for d in data])
    s = np.array([d[1] for d in data]) / 4.0
    bounds = sorted({0, len(y), *[c for c in cuts if c <= len(y)]})
    one = Decayed(AUROC(), half_life=h).update(y, s)
    cm_one = Decayed(ConfusionMatrix(), half_life=h).update(y, s)
    split = Decayed(AUROC(), half_life=h)
    cm_split = Decayed(ConfusionMatrix(), half_life=h)
    for a, b in zip(bounds[:-1], bounds[1:], strict=True):
        split.update(y[a:b], s[a:b])
        cm_split.update(y[a:b], s[a:b])
    np.testing.assert_array_equal(quiet(split.compute), quiet(one.compute))
    np.testing.assert_allclose(cm_split.compute(), cm_one.compute(), rtol=1e-13)


def test_racing_updates_and_long_gaps_are_reweighed_exactly():
    # two batches prepared before either is applied (as two threads would): the second is
    # re-weighed at apply time, so the result equals the sequential one
    y1, p1 = np.array([1, 0, 1]), np.array([1, 1, 0])
    y2, p2 = np.array([0, 1]), np.array([0, 1])
    raced = Decayed(ConfusionMatrix(), half_life=2.0)
    d1 = raced._state.prepare(y1, p1)
    d2 = raced._state.prepare(y2, p2)
    raced._state.apply(d1)
    raced._state.apply(d2)
    seq = Decayed(ConfusionMatrix(), half_life=2.0).update(y1, p1).update(y2, p2)
    np.testing.assert_allclose(raced.compute(), seq.compute(), rtol=1e-15)
    w = 0.5 ** ((4 - np.arange(5)) / 2.0)
    np.testing.assert_allclose(seq.compute(), confusion_matrix(np.r_[y1, y2], np.r_[p1, p2], sample_weight=w),
                               rtol=1e-12)
    # a gap of thousands of half-lives: the old samples' weights underflow to exactly 0
    t = Decayed(ConfusionMatrix(), half_life_seconds=1.0)
    t.update([1, 1], [1, 0], timestamp=0.0)
    t.update([0], [0], timestamp=5000.0)
    assert np.array_equal(t.compute(), [[1.0, 0.0], [0.0, 0.0]])
    t.update([1], [1], timestamp=5001.0)
    assert np.allclose(t.compute(), [[0.5, 0.0], [0.0, 1.0]], rtol=1e-15)


def test_interval_stays_finite_after_squared_weights_underflow() -> None:
    # One positive, then 600 half-lives of negatives: the positive's squared decayed weight
    # underflows to 0 while its weight does not. The interval falls back to n_eff = 1 (the most
    # conservative effective size) instead of nan, and the state still saves and loads.
    d = sm.Decayed(sm.Recall(), half_life=1)
    d.update(1, 0.9)
    for _ in range(600):
        d.update(0, 0.1)
    low, high = d.interval(0.95)
    expected = sm.Recall().update([1], [0.9]).interval(0.95)  # n_eff = 1 exactly
    assert np.isfinite(low) and np.isfinite(high)
    np.testing.assert_allclose((low, high), expected, rtol=1e-12)
    again = sm.loads(sm.dumps(d))
    assert again.compute() == d.compute() == 1.0


def test_decayed_binned_state_saves_and_loads_after_long_decay() -> None:
    # Scaling flushes weights that would become subnormal (load refuses subnormal bin weights).
    rng = np.random.default_rng(0)
    d = sm.Decayed(sm.AUROC(max_bytes=4096, scores="probability"), half_life=1)
    for _ in range(40):
        d.update(rng.integers(0, 2, 50), rng.random(50), sample_weight=np.full(50, 2.0**127))
        again = sm.loads(sm.dumps(d))
        assert again.compute() == d.compute()
