"""Thread safety (docs/definitions/service.md#threads): concurrent update/compute from many threads equal a
sequential order of the same calls -- for a MetricSet, the service wrappers and DelayedLabels."""

from __future__ import annotations

import threading
import warnings

import numpy as np

from streammetrics import (
    AUROC,
    F1,
    AveragePrecision,
    ConfusionMatrix,
    Decayed,
    DelayedLabels,
    MetricSet,
    Precision,
    Window,
)

THREADS = 8


def hammer(work) -> None:
    """Run ``work(t)`` on THREADS threads started together; re-raise the first failure."""
    barrier = threading.Barrier(THREADS)
    errors: list[BaseException] = []

    def run(t: int) -> None:
        try:
            barrier.wait()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                work(t)
        except BaseException as exc:  # noqa: BLE001
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(t,)) for t in range(THREADS)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    if errors:
        raise errors[0]


def batches_of(t: int, count: int = 60):
    rng = np.random.default_rng(t)
    out = []
    for b in range(count):
        n = int(rng.integers(1, 40)) if b % 4 else 1
        y = rng.integers(0, 2, n)
        s = np.round(rng.random(n), 2)
        w = rng.integers(1, 3, n).astype(float) if b % 3 == 0 else None
        out.append((y, s, w))
    return out


def build():
    return MetricSet(f1=F1(), prec=Precision(), cm=ConfusionMatrix(), auc=AUROC(), ap=AveragePrecision(),
                     dec_t=Decayed(F1(), half_life_seconds=10, clock=lambda: 5.0))


def test_eight_threads_hammering_one_metricset_equal_the_sequential_result():
    shared = build()
    work = {t: batches_of(t) for t in range(THREADS)}

    def run(t: int) -> None:
        for i, (y, s, w) in enumerate(work[t]):
            if len(y) == 1 and i % 8 == 0:
                shared.update(int(y[0]), float(s[0]))  # the per-sample path
            else:
                shared.update(y, s, sample_weight=w)
            if i % 5 == 0:
                shared.compute()  # concurrent reads

    hammer(run)
    sequential = build()
    for t in range(THREADS):
        for i, (y, s, w) in enumerate(work[t]):
            if len(y) == 1 and i % 8 == 0:
                sequential.update(int(y[0]), float(s[0]))
            else:
                sequential.update(y, s, sample_weight=w)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got, want = shared.compute(), sequential.compute()
    for name in ("f1", "prec", "auc", "ap"):
        assert abs(got[name] - want[name]) <= 1e-12 * max(1, abs(want[name])), name
    np.testing.assert_array_equal(got["cm"], want["cm"])
    # time decay with one timestamp for everything: every weight is 1, order-free
    assert abs(got["dec_t"] - want["dec_t"]) <= 1e-12 and abs(got["dec_t"] - want["f1"]) <= 1e-12
    assert shared["cm"]._state.equals(sequential["cm"]._state)


def test_window_under_threads_holds_whole_batches_and_a_consistent_state():
    size = 300
    shared = MetricSet(f1=Window(F1(), size=size), auc=Window(AUROC(), size=size))
    n = 10

    def run(t: int) -> None:
        for b in range(40):
            # every row of batch (t, b) carries the batch's own score: batches stay identifiable
            score = np.full(n, (t * 100 + b) / 1000.0)
            shared.update(np.arange(n) % 2, score)
            if b % 3 == 0:
                shared.compute()

    hammer(run)
    sd = shared.state_dict()
    scores = np.concatenate([v for k, v in sorted(sd.items()) if k.startswith("f1.seg") and k.endswith("y_pred")])
    assert scores.shape == (size,)
    runs = np.flatnonzero(np.diff(scores)) + 1
    lengths = np.diff(np.concatenate([[0], runs, [size]]))
    assert (lengths == n).all()  # every batch landed whole (size is a multiple of n)
    # replaying exactly the window's batches, in the order they landed, gives the same values
    replay = MetricSet(f1=Window(F1(), size=size), auc=Window(AUROC(), size=size))
    for start in range(0, size, n):
        replay.update(np.arange(n) % 2, scores[start:start + n])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert shared.compute() == replay.compute()


def test_delayed_labels_under_threads():
    shared = DelayedLabels(MetricSet(f1=F1(), auc=AUROC()), capacity=100_000)
    rng = np.random.default_rng(5)
    scores = np.round(rng.random(THREADS * 200), 2)
    labels = rng.integers(0, 2, THREADS * 200)

    def run(t: int) -> None:
        ids = np.arange(t * 200, (t + 1) * 200)
        for a in range(0, 200, 20):
            shared.predict(ids[a:a + 20], scores[ids[a:a + 20]])
            if a >= 20:  # label the previous chunk, in reverse order
                chunk = ids[a - 20:a][::-1]
                shared.label(chunk, labels[chunk])
            shared.stats()
        last = ids[180:]
        shared.label(last, labels[last])

    hammer(run)
    st = shared.stats()
    assert st["pending"] == 0 and st["labelled"] == THREADS * 200 and st["unknown"] == 0
    want = MetricSet(f1=F1(), auc=AUROC()).update(labels, scores).compute()
    got = shared.compute()
    assert abs(got["f1"] - want["f1"]) < 1e-12 and abs(got["auc"] - want["auc"]) < 1e-12
