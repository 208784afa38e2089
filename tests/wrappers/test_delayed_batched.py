"""DelayedLabels with batched folding (``batch_size > 1``): after a flush the metric equals the
one fed pair by pair, every read flushes, the staleness is bounded, bad labels still raise at
``label`` time, and concurrent use from threads equals a sequential order."""

from __future__ import annotations

import sys
import threading

import numpy as np
import pytest
from helpers import quiet
from hypothesis import given, settings
from hypothesis import strategies as st

import streammetrics as sm
from streammetrics import (
    AUROC,
    F1,
    Accuracy,
    AveragePrecision,
    Decayed,
    DelayedLabels,
    MetricSet,
    Precision,
    Window,
)


def close(a, b, rel: float = 1e-12) -> bool:
    """Equal values (dicts of floats / arrays), NaN == NaN, to ``rel`` relative."""
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(close(a[k], b[k], rel) for k in a)
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    return bool(np.allclose(a, b, rtol=rel, atol=1e-300, equal_nan=True))


def service_set(clock) -> MetricSet:
    """The example service's metrics (windows small enough to slide in a short stream)."""
    return MetricSet(
        auroc=AUROC(),
        ap=AveragePrecision(),
        f1_last=Window(F1(), size=37),
        auroc_last=Window(AUROC(), seconds=5.0, clock=clock),
        f1_decayed=Decayed(F1(), half_life=11),
    )


def replay(ops, batch_size: int, weighted: bool):
    """Run a stream of predict/label operations through a DelayedLabels; returns it and its
    clock. ``ops``: ("p", id, score, weight) / ("l", id, label) / ("t", seconds)."""
    now = [0.0]

    def clock() -> float:
        return now[0]

    d = DelayedLabels(service_set(clock), capacity=10_000, clock=clock, batch_size=batch_size,
                      max_delay=3.0, on_unknown="count")
    for op in ops:
        if op[0] == "p":
            if weighted:
                d.predict(op[1], op[2], sample_weight=op[3])
            else:
                d.predict(op[1], op[2])
        elif op[0] == "l":
            d.label(op[1], op[2])
        else:
            now[0] += op[1]
    return d, now


@st.composite
def streams(draw):
    n = draw(st.integers(1, 120))
    rng = np.random.default_rng(draw(st.integers(0, 2**31)))
    ops: list[tuple] = []
    waiting: list[tuple[str | int, int]] = []
    for i in range(n):
        key: str | int = f"r{i}" if i % 3 else i
        score = float(np.round(rng.random(), 1))  # ties
        y = int(rng.random() < score)
        ops.append(("p", key, score, float(rng.integers(1, 4))))
        waiting.append((key, y))
        if rng.random() < 0.3:
            ops.append(("t", float(rng.integers(0, 3))))
        while waiting and rng.random() < 0.6:
            k, lab = waiting.pop(int(rng.integers(len(waiting))))
            ops.append(("l", k, lab))
    ops += [("l", k, lab) for k, lab in waiting[: len(waiting) // 2]]
    return ops


@settings(max_examples=40, deadline=None)
@given(ops=streams(), batch_size=st.integers(2, 40), weighted=st.booleans())
def test_batched_equals_pair_by_pair_after_a_flush(ops, batch_size, weighted):
    one, _ = replay(ops, 1, weighted)
    many, _ = replay(ops, batch_size, weighted)
    assert many.stats()["buffered"] <= batch_size
    got, want = quiet(many.compute), quiet(one.compute)  # compute flushes
    # A time window stamps a buffered row with the fold time (documented staleness, at most
    # max_delay under traffic): exact for everything else whatever the clock does ...
    assert close({k: v for k, v in got.items() if k != "auroc_last"},
                 {k: v for k, v in want.items() if k != "auroc_last"})
    assert many.stats() == one.stats()
    assert many.stats()["buffered"] == 0
    # ... and for the time window too while the clock stands still between label and fold
    still = [op for op in ops if op[0] != "t"]
    many, one = replay(still, batch_size, weighted)[0], replay(still, 1, weighted)[0]
    assert close(quiet(many.compute), quiet(one.compute))
    # the states agree too: a saved batched wrapper (saving folds) loads as the pair-by-pair one
    for d in (many, one):
        d.predict("last", 0.5)
        d.label("last", 1)  # buffered in ``many`` until the save
        d.label("never", 0)  # counted as unknown
    a, b = sm.loads(sm.dumps(many)), sm.loads(sm.dumps(one))
    a.clock = b.clock = lambda: 100.0
    assert close(quiet(a.compute), quiet(b.compute)) and a.stats() == b.stats()


def test_folds_at_batch_size_at_max_delay_and_on_every_read():
    now = [0.0]
    d = DelayedLabels(F1(), capacity=100, clock=lambda: now[0], batch_size=4, max_delay=2.0)
    inner = d._metric  # reaching past the wrapper shows the lag
    d.predict(list(range(10)), [0.9] * 10)
    for i in range(3):
        assert d.label(i, 1) == 1
    assert d.stats()["buffered"] == 3 and d.stats()["labelled"] == 3
    assert quiet(inner.compute) == 0.0  # nothing folded yet
    d.label(3, 1)  # the 4th: a batch
    assert d.stats()["buffered"] == 0 and inner.compute() == 1.0
    d.label(4, 0)
    now[0] = 1.9
    d.predict(20, 0.5)
    assert d.stats()["buffered"] == 1  # not 2 s old yet
    now[0] = 2.0
    d.predict(21, 0.5)  # any call folds pairs that waited max_delay
    assert d.stats()["buffered"] == 0
    assert inner.compute() == pytest.approx(2 * 4 / (2 * 4 + 1))
    reads = (d.compute, lambda: d.metric, d.flush, d.state_dict, lambda: d.nbytes, d.copy)
    d.predict(list(range(100, 100 + len(reads))), [0.9] * len(reads))
    for i, read in enumerate(reads):
        d.label(100 + i, 1)
        assert d.stats()["buffered"] == 1
        read()
        assert d.stats()["buffered"] == 0
    assert d.flush() == 0


def test_bad_labels_raise_at_label_time_and_change_nothing():
    d = DelayedLabels(MetricSet(f1=F1(), w=Window(AUROC(), size=5)), capacity=10, batch_size=8)
    d.predict(["a", "b", "c"], [0.9, 0.2, 0.9])
    d.label("a", 1)
    for bad in (2, -1):
        with pytest.raises(ValueError, match="y_true"):
            d.label("b", bad)
        assert "b" in d._pending and d.stats()["buffered"] == 1 and d.stats()["labelled"] == 1
    d.label("b", 0)
    assert d.compute()["f1"] == 1.0 and d.stats()["rejected"] == 0
    # an ignore_index label is valid: it arrives, counts as labelled and contributes nothing
    e = DelayedLabels(F1(ignore_index=-1), capacity=10, batch_size=8)
    e.predict([1, 2], [0.9, 0.9])
    e.label(1, -1)
    e.label(2, 1)
    assert e.compute() == 1.0 and e.stats()["labelled"] == 2


def test_a_score_outside_the_checked_range_is_checked_again_at_label_time():
    # The dry run's verdict depends on the score too (scores="probability" needs [0, 1]): a
    # label value that passed with 0.5 must not wave 1.5 through into the buffer.
    for rows in (False, True):
        metric = AUROC(max_bytes=4096, scores="probability", num_classes=3 if rows else None)
        d = DelayedLabels(metric, capacity=10, batch_size=8)
        good, bad = ([0.2, 0.3, 0.5], [0.2, -0.5, 1.3]) if rows else (0.5, 1.5)
        d.predict([1, 2, 3], [good, bad, good] if rows else [good, bad, good])
        d.label(1, 1)
        with pytest.raises(ValueError, match="probability"):
            d.label(2, 1)
        assert 2 in d._pending and d.stats()["buffered"] == 1 and d.stats()["labelled"] == 1
        d.label(3, 1 if rows else 0)
        d.flush()
        assert d.stats()["rejected"] == 0 and d.stats()["labelled"] == 2


def test_a_batch_the_metric_refuses_is_folded_pair_by_pair_and_counted():
    # A time window refuses a clock that went backwards; the label value was checked before,
    # so the refusal only shows when the batch is folded.
    t = [5.0]
    d = DelayedLabels(Window(F1(), seconds=10.0, clock=lambda: t[0]), capacity=10, batch_size=8)
    d.predict([1, 2, 3], [0.9, 0.9, 0.9])
    d.label(1, 1)
    d.flush()  # the window's newest time is now 5
    t[0] = 3.0
    d.label(2, 1)
    d.flush()
    st_ = d.stats()
    assert st_["rejected"] == 1 and st_["labelled"] == 2 and st_["buffered"] == 0
    t[0] = 6.0
    d.label(3, 1)
    assert d.compute() == 1.0 and d.metric.state_dict()["config"]["seconds"] == 10.0
    assert sm.loads(sm.dumps(d)).stats()["rejected"] == 1


def test_rows_weights_and_a_change_of_kind_fold_separately():
    d = DelayedLabels(Accuracy(num_classes=3), capacity=50, batch_size=16)
    rows = np.array([[0.7, 0.2, 0.1], [0.1, 0.8, 0.1], [0.2, 0.2, 0.6], [0.5, 0.4, 0.1]])
    d.predict(["a", "b", "c", "d"], rows, sample_weight=[1.0, 2.0, 1.0, 3.0])
    for key, y in (("a", 0), ("b", 1), ("c", 0), ("d", 2)):
        d.label(key, y)
    assert d.stats()["buffered"] == 4 and d.stats()["pending"] == 0
    d.predict(["e"], np.array([[0.1, 0.1, 0.8]], dtype=np.float32))  # another kind: folds first
    assert d.stats()["buffered"] == 0
    d.label("e", 2)
    want = Accuracy(num_classes=3).update(np.array([0, 1, 0, 2]), rows,
                                          sample_weight=[1.0, 2.0, 1.0, 3.0])
    want.update(np.array([2]), np.array([[0.1, 0.1, 0.8]], dtype=np.float32))
    assert d.compute() == pytest.approx(want.compute(), rel=1e-12)
    # Python-float scores then a batch of labels: the buffer is folded first, in order
    w = Window(F1(), size=3)
    b = DelayedLabels(w, capacity=50, batch_size=16)
    b.predict([1, 2, 3, 4], [0.9, 0.1, 0.9, 0.9])
    b.label(1, 0)
    b.label(2, 1)
    b.label([3, 4], [1, 1])
    assert b.compute() == F1().update([1, 1, 1], [0.1, 0.9, 0.9]).compute()


def test_config_persistence_merge_and_validation():
    d = DelayedLabels(F1(), capacity=10, batch_size=32, max_delay=0.5)
    assert "batch_size=32" in repr(d)
    back = sm.loads(sm.dumps(d))
    assert (back.batch_size, back.max_delay) == (32, 0.5)
    sd = DelayedLabels(F1(), capacity=10).state_dict()
    old = {k: v for k, v in sd.items() if k != "stats.rejected"}  # a file from before batching
    old["config"] = {k: v for k, v in sd["config"].items() if k not in ("batch_size", "max_delay")}
    loaded = DelayedLabels.from_state_dict(old)
    assert loaded.batch_size == 1 and loaded.stats()["rejected"] == 0
    a = DelayedLabels(F1(), capacity=10, batch_size=4)
    b = DelayedLabels(F1(), capacity=10)
    a.predict([1, 2], [0.9, 0.9])
    a.label(1, 1)
    b.predict([3], [0.1])
    b.label(3, 1)
    a.merge(b)  # the folding knobs may differ; both buffers are folded first
    assert a.stats()["labelled"] == 2 and a.compute() == F1().update([1, 1], [0.9, 0.1]).compute()
    for kwargs, msg in (({"batch_size": 0}, "batch_size"), ({"batch_size": True}, "batch_size"),
                        ({"max_delay": 0.0}, "max_delay"), ({"max_delay": float("inf")}, "max_delay")):
        with pytest.raises(ValueError, match=msg):
            DelayedLabels(F1(), **kwargs)
    d.predict(1, 0.5)
    d.label(1, 1)
    d.reset()
    assert d.stats()["buffered"] == 0 and quiet(d.compute) == 0.0


def test_threads_predicting_labelling_and_reading_equal_the_sequential_result():
    threads, per = 8, 300
    shared = DelayedLabels(MetricSet(f1=F1(), auc=AUROC(), ap=AveragePrecision(),
                                     w=Window(Precision(), size=threads * per)),
                           capacity=100_000, batch_size=16)
    rng = np.random.default_rng(3)
    scores = np.round(rng.random(threads * per), 2).tolist()
    labels = rng.integers(0, 2, threads * per).tolist()
    barrier = threading.Barrier(threads)
    errors: list[BaseException] = []
    seen_buffered: list[int] = []

    def run(t: int) -> None:
        try:
            barrier.wait()
            ids = range(t * per, (t + 1) * per)
            for i in ids:
                shared.predict(f"id{i}", scores[i])
                if i % 3 == 2:  # label the last three, newest first
                    for j in (i, i - 1, i - 2):
                        shared.label(f"id{j}", labels[j])
                if i % 50 == 0:
                    quiet(shared.compute)
                    seen_buffered.append(shared.stats()["buffered"])
        except BaseException as exc:  # noqa: BLE001
            errors.append(exc)

    workers = [threading.Thread(target=run, args=(t,)) for t in range(threads)]
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)  # switch threads often: inside label, predict and the folds
    try:
        for w in workers:
            w.start()
        for w in workers:
            w.join()
    finally:
        sys.setswitchinterval(interval)
    assert not errors, errors[0]
    assert max(seen_buffered) < 16
    st_ = shared.stats()
    assert st_["pending"] == 0 and st_["labelled"] == threads * per and st_["unknown"] == 0
    want = MetricSet(f1=F1(), auc=AUROC(), ap=AveragePrecision(),
                     w=Window(Precision(), size=threads * per)).update(labels, scores).compute()
    assert close(shared.compute(), want)


def test_label_predictions_keep_their_type_one_by_one_and_batched():
    # hard predictions (ints) are labels, not scores: the dry run and the fold agree
    for batch in (1, 8):
        d = DelayedLabels(F1(), capacity=10, batch_size=batch)
        d.predict(["a", "b", "c"], np.array([1, 0, 1]))
        d.label("a", 1)
        d.label("b", 1)
        d.label("c", 0)
        assert d.compute() == F1().update([1, 1, 0], [1, 0, 1]).compute()
        d.predict(["z"], np.array([3]))
        with pytest.raises(ValueError, match="y_pred"):
            d.label("z", 1)  # 3 is not a binary prediction: refused on arrival
        assert d.stats()["rejected"] == 0 and "z" in d._pending
