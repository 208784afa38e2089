"""Sliding windows (docs/definitions/service.md#windows) against scikit-learn on exactly the window's rows."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import close, quiet
from sklearn.metrics import (
    accuracy_score,
    average_precision_score,
    confusion_matrix,
    f1_score,
    precision_score,
    roc_auc_score,
)

import streammetrics as sm
from streammetrics import (
    AUROC,
    F1,
    Accuracy,
    AveragePrecision,
    ConfusionMatrix,
    MetricSet,
    Precision,
    Recall,
    Window,
)

REL = 1e-12


class Stream:
    """Every row ever sent, to slice the oracle's window from."""

    def __init__(self) -> None:
        self.y: list = []
        self.p: list = []
        self.w: list = []
        self.t: list = []

    def add(self, y, p, w=None, t=None) -> None:
        n = len(y)
        self.y += list(y)
        self.p += list(p)
        self.w += list(np.ones(n) if w is None else w)
        if t is not None:
            self.t += list(np.broadcast_to(t, (n,)))

    def last(self, size: int):
        s = slice(max(0, len(self.y) - size), None)
        return np.array(self.y[s]), np.array(self.p[s]), np.array(self.w[s])

    def recent(self, seconds: float):
        t = np.array(self.t)
        keep = t > t.max() - seconds if len(t) else np.zeros(0, bool)
        return np.array(self.y)[keep], np.array(self.p)[keep], np.array(self.w)[keep]


def binary_batches(rng, n_batches=25, max_n=25, weights=None, zeros=True):
    for _ in range(n_batches):
        n = int(rng.integers(0, max_n))
        y = rng.integers(0, 2, n)
        s = np.round(rng.random(n), 1)  # ties
        if zeros:
            s[rng.random(n) < 0.2] = 0.0  # zero scores are real scores
        w = None
        if weights == "int":
            w = rng.integers(0, 4, n).astype(float)
        elif weights == "float":
            w = rng.random(n) * 2
        yield y, s, w


@pytest.mark.parametrize("size", [1, 7, 60])
@pytest.mark.parametrize("weights", [None, "int", "float"])
def test_count_window_binary_equals_sklearn_after_every_batch(size, weights):
    rng = np.random.default_rng(size + (0 if weights is None else len(weights)))
    win = MetricSet(
        f1=Window(F1(), size=size),
        prec=Window(Precision(zero_division=0.0), size=size),
        auroc=Window(AUROC(), size=size),
        ap=Window(AveragePrecision(), size=size),
        cm=Window(ConfusionMatrix(), size=size),
    )
    stream = Stream()
    for y, s, w in binary_batches(rng, weights=weights):
        win.update(y, s, sample_weight=w)
        stream.add(y, s, w)
        got = quiet(win.compute)
        yy, ss, ww = stream.last(size)
        if ww.sum() == 0:
            continue
        pred = ss >= 0.5
        assert close(got["f1"], f1_score(yy, pred, sample_weight=ww, zero_division=0.0))
        assert close(got["prec"], precision_score(yy, pred, sample_weight=ww, zero_division=0.0))
        np.testing.assert_allclose(
            got["cm"], confusion_matrix(yy, pred, sample_weight=ww, labels=[0, 1]), rtol=REL, atol=1e-12
        )
        pos, neg = ww[yy == 1].sum(), ww[yy == 0].sum()
        if pos > 0 and neg > 0:
            assert close(got["auroc"], roc_auc_score(yy, ss, sample_weight=ww))
        else:
            assert np.isnan(got["auroc"])
        if pos > 0:
            assert close(got["ap"], average_precision_score(yy, ss, sample_weight=ww))


def test_count_window_multiclass_and_multilabel():
    rng = np.random.default_rng(3)
    size = 33
    cm = Window(ConfusionMatrix(num_classes=4), size=size)
    acc = Window(Accuracy(num_classes=4), size=size)
    ml = Window(F1(num_classes=3, multilabel=True, average="micro"), size=size)
    auc = Window(AUROC(num_classes=4), size=size)
    ys, ps, ss, yl, pl = [], [], [], [], []
    for _ in range(30):
        n = int(rng.integers(0, 15))
        y = rng.integers(0, 4, n)
        scores = rng.random((n, 4))
        scores /= scores.sum(axis=1, keepdims=True)
        cm.update(y, scores)
        acc.update(y, scores)
        auc.update(y, scores)
        ys += list(y)
        ps += list(scores.argmax(axis=1))
        ss += list(scores)
        lab = rng.integers(0, 2, (n, 3))
        prob = rng.random((n, 3))
        ml.update(lab, prob)
        yl += list(lab)
        pl += list(prob >= 0.5)
        yy, pp = np.array(ys[-size:]), np.array(ps[-size:])
        if len(yy):
            np.testing.assert_array_equal(cm.compute(), confusion_matrix(yy, pp, labels=range(4)))
            assert close(acc.compute(), accuracy_score(yy, pp))
            a, b = np.array(yl[-size:]), np.array(pl[-size:])
            assert close(quiet(ml.compute), f1_score(a, b, average="micro", zero_division=0.0))
            if len(set(yy.tolist())) == 4:
                ref = roc_auc_score(yy, np.array(ss[-size:]), multi_class="ovr", labels=range(4))
                assert close(quiet(auc.compute), ref)


def test_one_sample_path_and_mixed_inputs():
    rng = np.random.default_rng(5)
    win = Window(F1(), size=10)
    auc = Window(AUROC(), size=10)
    stream = Stream()
    for i in range(60):
        if i % 3 == 0:  # a batch of hard labels (int dtype)
            y = rng.integers(0, 2, 3)
            p = rng.integers(0, 2, 3)
            win.update(y, p)
            stream.add(y, p.astype(float))
        else:  # one sample as scalars (float score)
            y, p = int(rng.integers(0, 2)), float(rng.random())
            win.update(y, p)
            auc.update(y, p)
            stream.add([y], [p])
        yy, pp, _ = stream.last(10)
        assert close(quiet(win.compute), f1_score(yy, pp >= 0.5, zero_division=0.0))
    assert len(win) == 10


@pytest.mark.parametrize("weights", [None, "float"])
def test_time_window_equals_sklearn_on_rows_strictly_newer(weights):
    rng = np.random.default_rng(11)
    seconds = 2.5
    win = MetricSet(
        f1=Window(F1(), seconds=seconds),
        auroc=Window(AUROC(), seconds=seconds),
        ap=Window(AveragePrecision(), seconds=seconds),
        cm=Window(ConfusionMatrix(), seconds=seconds),
    )
    stream = Stream()
    t = 0.0
    for k, (y, s, w) in enumerate(binary_batches(rng, weights=weights)):
        # odd batches: one timestamp per row, with exact boundary hits; even: one for the batch
        ts = t + np.sort(rng.integers(0, 4, len(y))) * 0.5 if k % 2 else t
        t = float(np.max(ts)) + float(rng.integers(0, 3)) * 0.5 if np.size(ts) else t
        win.update(y, s, sample_weight=w, timestamp=ts)
        stream.add(y, s, w, ts if len(y) else None)
        if not stream.t:
            continue
        got = quiet(win.compute)
        yy, ss, ww = stream.recent(seconds)
        if ww.sum() == 0:
            continue
        pred = ss >= 0.5
        assert close(got["f1"], f1_score(yy, pred, sample_weight=ww, zero_division=0.0))
        np.testing.assert_allclose(
            got["cm"], confusion_matrix(yy, pred, sample_weight=ww, labels=[0, 1]), rtol=REL, atol=1e-12
        )
        if ww[yy == 1].sum() > 0 and ww[yy == 0].sum() > 0:
            assert close(got["auroc"], roc_auc_score(yy, ss, sample_weight=ww))
        if ww[yy == 1].sum() > 0:
            assert close(got["ap"], average_precision_score(yy, ss, sample_weight=ww))


def test_time_window_clock_and_advance():
    now = [100.0]
    win = Window(Recall(), seconds=10, clock=lambda: now[0])
    win.update([1, 1], [1, 0])
    now[0] = 105.0
    win.update([1], [1])
    assert close(win.compute(), 2 / 3)
    now[0] = 110.0  # the first batch (t=100) is not strictly newer than 110 - 10
    win.update([0], [0])
    assert close(win.compute(), 1.0) and len(win) == 2
    win.advance(114.9)
    assert len(win) == 2
    win.advance(115.0)  # rows at t=105 leave
    assert len(win) == 1
    win.advance(50.0)  # older than the newest: no-op
    assert len(win) == 1
    now[0] = 200.0
    win.advance()
    assert len(win) == 0
    assert quiet(win.compute) == 0.0
    with pytest.raises(ValueError, match="only time windows"):
        Window(F1(), size=3).advance(1.0)


def test_zero_scores_are_scores_not_empty_slots():
    # torcheval's windowed AUROC reads trailing zeros as empty slots; a zero is a real score.
    win = Window(AUROC(), size=4)
    for y, s in [(1, 0.7), (0, 0.6), (1, 0.0), (0, 0.0)]:
        win.update(y, s)
    assert close(win.compute(), roc_auc_score([1, 0, 1, 0], [0.7, 0.6, 0.0, 0.0]))
    win.update(np.array([0, 1]), np.array([0.0, 0.0]))  # the window slides; zeros stay scores
    assert close(win.compute(), roc_auc_score([1, 0, 0, 1], [0.0, 0.0, 0.0, 0.0]))


def test_bad_input_rejected_and_state_unchanged():
    now = [0.0]
    win = Window(F1(), seconds=5, clock=lambda: now[0])
    win.update([1, 0, 1], [0.9, 0.1, 0.8], timestamp=[1.0, 2.0, 3.0])
    before = win.state_dict()
    with pytest.raises(ValueError, match="y_true"):
        win.update([1, 2], [0.3, 0.4], timestamp=4.0)
    with pytest.raises(ValueError, match=r"timestamp: must be non-decreasing; 2\.5"):
        win.update([1], [0.3], timestamp=2.5)
    with pytest.raises(ValueError, match="index 1 follows"):
        win.update([1, 1], [0.3, 0.3], timestamp=[5.0, 4.0])
    with pytest.raises(ValueError, match="finite"):
        win.update([1], [0.3], timestamp=float("nan"))
    with pytest.raises(ValueError, match=r"timestamp: expected a scalar or shape \(2,\)"):
        win.update([1, 1], [0.3, 0.3], timestamp=[5.0])
    with pytest.raises(ValueError, match="sample_weight"):
        win.update([1, 1], [0.3, 0.3], sample_weight=[1.0, -1.0], timestamp=5.0)
    after = win.state_dict()
    assert before.keys() == after.keys()
    for k in before:
        assert np.array_equal(np.asarray(before[k]), np.asarray(after[k]))
    with pytest.raises(ValueError, match="only time windows"):
        Window(F1(), size=3).update([1], [1], timestamp=1.0)


def test_constructor_validation():
    with pytest.raises(ValueError, match="exactly one"):
        Window(F1())
    with pytest.raises(ValueError, match="exactly one"):
        Window(F1(), size=3, seconds=2)
    for bad in (0, -1, 2.5, True):
        with pytest.raises(ValueError, match="size"):
            Window(F1(), size=bad)
    for bad in (0, -1.0, float("inf"), "3"):
        with pytest.raises(ValueError, match="seconds"):
            Window(F1(), seconds=bad)
    with pytest.raises(ValueError, match="empty metric"):
        Window(F1().update([1], [1]), size=3)
    with pytest.raises(ValueError, match="MetricSet"):
        Window(MetricSet(f1=F1()), size=3)
    with pytest.raises(ValueError, match="cannot wrap"):
        Window(Window(F1(), size=2), size=3)
    assert Window(sm.MAP(), size=3).family == "retrieval"  # windows of queries (test_window_retrieval)
    delayed = sm.DelayedLabels(F1(), capacity=4)
    with pytest.raises(ValueError):
        Window(delayed, size=3)


def test_metricset_shares_one_window_state():
    ms = MetricSet(
        f1=Window(F1(), size=5), p=Window(Precision(), size=5), r=Window(Recall(), size=6),
        auc=Window(AUROC(), size=5), ap=Window(AveragePrecision(), size=5),
    )
    assert ms.groups == [["f1", "p"], ["r"], ["auc", "ap"]]
    ms.update([1, 0, 1, 1, 0, 1, 1], [0.9, 0.4, 0.3, 0.8, 0.7, 0.2, 0.6])
    got = ms.compute()
    y, s = np.array([1, 1, 0, 1, 1]), np.array([0.3, 0.8, 0.7, 0.2, 0.6])
    assert close(got["f1"], f1_score(y, s >= 0.5))
    assert close(got["p"], precision_score(y, s >= 0.5))
    assert close(got["auc"], roc_auc_score(y, s))
    loaded = sm.loads(sm.dumps(ms))
    assert loaded.groups == ms.groups
    assert loaded.compute() == got


def _feed(win, batches):
    for y, s, w, t in batches:
        win.update(y, s, sample_weight=w, **({} if t is None else {"timestamp": t}))
    return win


def test_merge_count_windows_keeps_the_window_size():
    rng = np.random.default_rng(8)
    a_rows = list(binary_batches(rng, 6, weights="int"))
    b_rows = list(binary_batches(rng, 6, weights="int"))
    a = _feed(Window(AUROC(), size=20), [(y, s, w, None) for y, s, w in a_rows])
    b = _feed(Window(AUROC(), size=20), [(y, s, w, None) for y, s, w in b_rows])
    f1a = _feed(Window(F1(), size=20), [(y, s, w, None) for y, s, w in a_rows])
    f1b = _feed(Window(F1(), size=20), [(y, s, w, None) for y, s, w in b_rows])
    # b's rows are taken to arrive after a's: the merge is the window of the concatenation
    expect = _feed(Window(AUROC(), size=20), [(y, s, w, None) for y, s, w in a_rows[-6:] + b_rows])
    expect_all = _feed(Window(AUROC(), size=20),
                       [(y, s, w, None) for y, s, w in a_rows + b_rows])
    a.merge(b)
    assert len(a) == min(20, len(expect_all)) and a._state.equals(expect_all._state)
    assert close(quiet(a.compute), quiet(expect_all.compute))
    assert len(expect) <= 20
    f1a.merge(f1b)
    yy = np.concatenate([y for y, _, _ in a_rows + b_rows])[-20:]
    ss = np.concatenate([s for _, s, _ in a_rows + b_rows])[-20:]
    ww = np.concatenate([w for _, _, w in a_rows + b_rows])[-20:]
    assert close(quiet(f1a.compute), f1_score(yy, ss >= 0.5, sample_weight=ww, zero_division=0.0))
    with pytest.raises(ValueError, match="configuration mismatch"):
        a.merge(Window(AUROC(), size=21))


def test_merge_time_windows_interleaves_by_timestamp():
    rng = np.random.default_rng(9)
    shards = [Window(F1(), seconds=3.0), Window(F1(), seconds=3.0)]
    allrows = []
    for k in range(40):
        n = int(rng.integers(1, 6))
        y, s = rng.integers(0, 2, n), rng.random(n)
        t = k * 0.25
        shards[k % 2].update(y, s, timestamp=t)
        allrows += [(t, yi, si) for yi, si in zip(y, s, strict=True)]
    shards[0].merge(shards[1])
    t = np.array([r[0] for r in allrows])
    keep = t > t.max() - 3.0
    yy = np.array([r[1] for r in allrows])[keep]
    ss = np.array([r[2] for r in allrows])[keep]
    assert len(shards[0]) == keep.sum()
    assert close(quiet(shards[0].compute), f1_score(yy, ss >= 0.5, zero_division=0.0))


def test_save_load_round_trip_and_tampering(tmp_path):
    rng = np.random.default_rng(12)
    win = Window(AUROC(), seconds=4.0)
    cw = Window(ConfusionMatrix(num_classes=3), size=25)
    for k, (y, s, w) in enumerate(binary_batches(rng, 20, weights="float")):
        win.update(y, s, sample_weight=w, timestamp=float(k))
        cw.update(rng.integers(0, 3, len(y)), rng.random((len(y), 3)).astype(np.float32))
    for m in (win, cw):
        path = tmp_path / "w.sm"
        sm.save(m, path)
        back = sm.load(path)
        assert type(back) is Window and back._config() == m._config()
        assert back._state.equals(m._state)
        np.testing.assert_array_equal(quiet(back.compute), quiet(m.compute))
        cp = m.copy()
        assert cp._state.equals(m._state)
        # the restored window keeps sliding exactly like the original
        y, s = np.array([1, 0, 1]), np.array([0.2, 0.5, 0.9])
        if m is win:
            back.update(y, s, timestamp=100.0)
            m.update(y, s, timestamp=100.0)
        else:
            back.update(y, np.eye(3)[[0, 1, 2]])
            m.update(y, np.eye(3)[[0, 1, 2]])
        assert back._state.equals(m._state)
    data = bytearray(sm.dumps(win))
    data[-3] ^= 0xFF
    with pytest.raises(ValueError, match="checksum"):
        sm.loads(bytes(data))
    d = cw.state_dict()
    bad = dict(d)
    bad["seg0.y_true"] = np.full_like(d["seg0.y_true"], 7)
    with pytest.raises(ValueError, match="invalid rows"):
        Window.from_state_dict(bad)
    big = {**d, "seg0.y_true": np.zeros(30, np.int64), "seg0.y_pred": np.zeros((30, 3))}
    with pytest.raises(ValueError, match=r"size 25 holds \d+ rows"):
        Window.from_state_dict(big)
    with pytest.raises(ValueError, match="unexpected array"):
        Window.from_state_dict({**d, "junk": np.zeros(2)})
    with pytest.raises(ValueError, match="numbered"):
        Window.from_state_dict({**{k: v for k, v in d.items() if not k.startswith("seg0")},
                                "seg5.y_true": np.zeros(1, np.int64), "seg5.y_pred": np.zeros((1, 3))})
    td = win.state_dict()
    with pytest.raises(ValueError, match="outside the window"):
        Window.from_state_dict({**td, "newest": float(td["newest"]) + 100.0})
    ts = td["seg0.ts"].copy()
    ts[-1] -= 0.5
    with pytest.raises(ValueError, match="non-decreasing"):
        Window.from_state_dict({**td, "seg0.ts": ts})
    with pytest.raises(ValueError, match="count window"):
        Window.from_state_dict({**d, "newest": 3.0})


@pytest.mark.parametrize("make", [
    lambda: AUROC(),
    lambda: AUROC(num_classes=3, multi_class="ovo"),
    lambda: AveragePrecision(num_classes=3, multilabel=True, average=None),
    lambda: sm.ROCCurve(),
])
def test_ranking_windows_subtract_exactly(make):
    """Unweighted ranking windows remove expired scores in place (no rebuild); the state then
    equals a fresh accumulator fed exactly the window's rows."""
    rng = np.random.default_rng(21)
    size = 37
    proto = make()
    win = Window(make(), size=size)
    rows_y, rows_s = [], []
    for b in range(40):
        n = int(rng.integers(0, 12))
        if proto.task == "binary":
            y = rng.integers(0, 2, n)
            s = np.round(rng.random(n), 1).astype(np.float32 if b % 3 == 0 else np.float64)
        elif proto.task == "multiclass":
            y = rng.integers(0, 3, n)
            s = rng.random((n, 3))
            s = np.round(s / s.sum(axis=1, keepdims=True), 2)
        else:
            y = rng.integers(0, 2, (n, 3))
            s = np.round(rng.random((n, 3)), 1)
        if n == 1 and proto.task == "binary":
            win.update(int(y[0]), float(s[0]))
        else:
            win.update(y, s)
        rows_y += list(y)
        rows_s += list(s.astype(np.float64))
        got = quiet(win.compute)
        assert not win._state._dirty  # the subtract path, not a rebuild
        if not rows_y:
            continue
        fresh = make().update(np.array(rows_y[-size:]), np.array(rows_s[-size:]))
        want = quiet(fresh.compute)
        if isinstance(want, (float, np.ndarray)):
            np.testing.assert_allclose(got, want, rtol=1e-12, atol=0)
        else:
            np.testing.assert_array_equal(got.fpr, want.fpr)
            np.testing.assert_array_equal(got.tpr, want.tpr)
            np.testing.assert_array_equal(got.thresholds, want.thresholds)


def test_time_window_one_sample_at_a_time():
    rng = np.random.default_rng(31)
    now = [0.0]
    win = MetricSet(f1=Window(F1(), seconds=3.0, clock=lambda: now[0]),
                    auc=Window(AUROC(), seconds=3.0, clock=lambda: now[0]))
    stream = Stream()
    for i in range(300):
        now[0] += float(rng.choice([0.0, 0.25, 1.0]))
        y, s = int(rng.integers(0, 2)), float(np.round(rng.random(), 1))
        if i % 7 == 0:
            win.update(y, s, timestamp=now[0])
        else:
            win.update(y, s)  # the clock
        stream.add([y], [s], t=now[0])
        if i % 3 == 0:
            got = quiet(win.compute)
            yy, ss, _ = stream.recent(3.0)
            assert len(win["f1"]) == len(yy)
            assert close(got["f1"], f1_score(yy, ss >= 0.5, zero_division=0.0))
            if 0 < yy.sum() < len(yy):
                assert close(got["auc"], roc_auc_score(yy, ss))
    back = sm.loads(sm.dumps(win))
    assert quiet(back.compute) == quiet(win.compute)
