"""Property tests of the ranking accumulators (hypothesis), over a registry of configurations.

The per-sample scalar path equals the batch path; the values read after each batch equal
scikit-learn on the prefix; small internal capacities give the same results. The protocol laws
(batch split, merge, save/load, weights, prefix, rejected input) run for every public metric in
``tests/test_protocol_laws.py``. A long random sequence of operations checks the buffer's internal invariants
(sorted geometric runs, the Mann-Whitney statistic recounted from scratch) after every step.
"""

from __future__ import annotations

import contextlib
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from ranking_oracles import finite
from sklearn.metrics import average_precision_score, roc_auc_score

import streammetrics as sm
import streammetrics._sorted_buffer as sb
import streammetrics._sorted_runs as runs
from streammetrics._curve_results import PRCurveResult, ROCCurveResult


@contextlib.contextmanager
def small_capacities(on: bool = True):
    """Shrink the buffer's internal capacities so that rare paths run on small data (the coarse
    index of large runs, the SortedList tail turning into a run, scalar folds as batches)."""
    saved = (runs.COARSE_MIN, runs.TAIL_MAX, sb._SCALAR_FOLD_MAX, sb._MAX_QUEUED)
    if on:
        runs.COARSE_MIN, runs.TAIL_MAX, sb._SCALAR_FOLD_MAX, sb._MAX_QUEUED = 70, 5, 3, 4
    try:
        yield
    finally:
        runs.COARSE_MIN, runs.TAIL_MAX, sb._SCALAR_FOLD_MAX, sb._MAX_QUEUED = saved


REGISTRY = {
    "binary_auroc": (lambda: sm.AUROC(), "binary"),
    "binary_partial_auroc": (lambda: sm.AUROC(max_fpr=0.3), "binary"),
    "binary_ap": (lambda: sm.AveragePrecision(), "binary"),
    "binary_ap_11pt": (lambda: sm.AveragePrecision(eleven_point=True), "binary"),
    "binary_roc": (lambda: sm.ROCCurve(), "binary"),
    "binary_pr": (lambda: sm.PRCurve(), "binary"),
    "multiclass_auroc_macro": (lambda: sm.AUROC(3), "multiclass"),
    "multiclass_auroc_ovo": (lambda: sm.AUROC(3, multi_class="ovo", average="weighted"), "multiclass"),
    "multiclass_ap_micro": (lambda: sm.AveragePrecision(3, average="micro"), "multiclass"),
    "multilabel_auroc_none": (lambda: sm.AUROC(3, multilabel=True, average=None), "multilabel"),
    "multilabel_roc": (lambda: sm.ROCCurve(2, multilabel=True), "multilabel2"),
    "metricset": (
        lambda: sm.MetricSet(a=sm.AUROC(), ap=sm.AveragePrecision(), r=sm.ROCCurve(), p=sm.PRCurve()),
        "binary",
    ),
}
NAMES = sorted(REGISTRY)


def make_data(kind: str, rng: np.random.Generator, n: int):
    levels = int(rng.integers(1, 6))
    if kind == "binary":
        s = np.round(rng.random(n) * levels) / levels
        s[rng.random(n) < 0.05] = np.inf
        s[rng.random(n) < 0.05] = -np.inf
        return rng.integers(0, 2, n), s
    if kind == "multiclass":
        return rng.integers(0, 3, n), np.round(rng.random((n, 3)) * levels) / levels
    cols = 3 if kind == "multilabel" else 2
    return rng.integers(0, 2, (n, cols)), np.round(rng.random((n, cols)) * levels) / levels


def flat(v) -> list[np.ndarray]:
    """Any result (float, array, curve, list of curves, dict) as a list of float arrays."""
    if isinstance(v, dict):
        return [a for k in sorted(v) for a in flat(v[k])]
    if isinstance(v, list):
        return [a for x in v for a in flat(x)]
    if isinstance(v, ROCCurveResult):
        return [v.fpr, v.tpr, v.thresholds]
    if isinstance(v, PRCurveResult):
        return [v.precision, v.recall, v.thresholds]
    return [np.asarray(v, dtype=float)]


def value(metric):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return flat(metric.compute())


def assert_same(a, b, exact=False):
    assert len(a) == len(b)
    for x, y in zip(a, b, strict=True):
        if exact:
            np.testing.assert_array_equal(x, y)
        else:
            assert x.shape == y.shape
            np.testing.assert_allclose(x, y, rtol=1e-12, atol=1e-12)


def feed(metric, y, s, w=None, cuts=()):
    bounds = [0, *sorted(cuts), len(y)]
    for a, b in zip(bounds[:-1], bounds[1:], strict=True):
        metric.update(y[a:b], s[a:b], sample_weight=None if w is None else w[a:b])
    return metric


common = settings(max_examples=12, deadline=None)
seeds = st.integers(0, 2**32 - 1)
sizes = st.integers(0, 40)


@common
@given(seed=seeds, n=sizes, data=st.data())
def test_prefix_values_equal_sklearn(seed, n, data):
    """After each batch, AUROC and AP equal scikit-learn on the prefix read so far."""
    rng = np.random.default_rng(seed)
    y, s = make_data("binary", rng, n)
    cuts = sorted(data.draw(st.lists(st.integers(0, n), max_size=5)))
    auroc, ap = sm.AUROC(), sm.AveragePrecision()
    bounds = [0, *cuts, n]
    for a, b in zip(bounds[:-1], bounds[1:], strict=True):
        auroc.update(y[a:b], s[a:b])
        ap.update(y[a:b], s[a:b])
        if 0 < y[:b].sum() < b:
            np.testing.assert_allclose(auroc.compute(), roc_auc_score(y[:b], finite(s[:b])), rtol=1e-12, atol=1e-12)
        if y[:b].sum() > 0:
            np.testing.assert_allclose(
                ap.compute(), average_precision_score(y[:b], finite(s[:b])), rtol=1e-12, atol=1e-12
            )


@pytest.mark.parametrize("name", [n for n in NAMES if REGISTRY[n][1] == "binary"])
@common
@given(seed=seeds, n=sizes)
def test_per_sample_scalars_equal_batch(name, seed, n):
    factory, kind = REGISTRY[name]
    rng = np.random.default_rng(seed)
    y, s = make_data(kind, rng, n)
    w = rng.random(n)
    one_by_one = factory()
    for i, (yi, si, wi) in enumerate(zip(y.tolist(), s.tolist(), w.tolist(), strict=True)):
        one_by_one.update(yi, si, sample_weight=wi if i % 2 else None)
        if i % 7 == 3:
            value(one_by_one)
    ww = np.where(np.arange(n) % 2 == 1, w, 1.0)
    assert_same(value(one_by_one), value(feed(factory(), y, s, ww)))


@settings(max_examples=25, deadline=None)
@given(
    seed=seeds,
    ops=st.lists(
        st.sampled_from(["batch", "batch", "big", "sample", "weighted", "compute", "merge", "reset"]),
        min_size=1,
        max_size=25,
    ),
    by_class=st.booleans(),
    small=st.booleans(),
)
def test_random_operation_sequences_keep_invariants(seed, ops, by_class, small):
    """Against a plain list of every sample seen; the buffer's invariants after every step."""
    with small_capacities(small):
        _operation_sequence(seed, ops, by_class)


def _operation_sequence(seed, ops, by_class):
    rng = np.random.default_rng(seed)
    kind = "multiclass" if by_class else "binary"
    make = (lambda: sm.AUROC(3, multi_class="ovo")) if by_class else (lambda: sm.AUROC())
    metric = make()
    ys, ss, ws = [], [], []
    for op in ops:
        if op in ("batch", "big", "weighted"):
            n = int(rng.integers(0, 200 if op == "big" else 12))
            y, s = make_data(kind, rng, n)
            w = rng.random(n) * 2 if op == "weighted" else None
            metric.update(y, s, sample_weight=w)
            ys.append(y)
            ss.append(s)
            ws.append(np.ones(n) if w is None else w)
        elif op == "sample" and not by_class:
            for _ in range(int(rng.integers(1, 8))):
                y1, s1 = int(rng.integers(0, 2)), float(rng.integers(0, 4) / 4)
                metric.update(y1, s1)
                ys.append(np.array([y1]))
                ss.append(np.array([s1]))
                ws.append(np.ones(1))
        elif op == "merge":
            n = int(rng.integers(0, 30))
            y, s = make_data(kind, rng, n)
            metric.merge(make().update(y, s))
            ys.append(y)
            ss.append(s)
            ws.append(np.ones(n))
        elif op == "reset":
            metric.reset()
            ys, ss, ws = [], [], []
        else:
            value(metric)
        metric._state.check_invariants()
    reference = make()
    if ys:
        reference.update(np.concatenate(ys), np.concatenate(ss), sample_weight=np.concatenate(ws))
    assert_same(value(metric), value(reference))


@settings(max_examples=40, deadline=None)
@given(
    seed=seeds,
    n=st.integers(1, 2000),
    m=st.integers(0, 300),
    levels=st.integers(1, 50),
    dtype=st.sampled_from([np.float64, np.float32]),
)
def test_rank_left_equals_searchsorted(seed, n, m, levels, dtype):
    rng = np.random.default_rng(seed)
    v = np.sort(np.round(rng.normal(size=n) * levels) / levels).astype(dtype)
    v[rng.random(n) < 0.02] = np.inf
    v.sort()
    x = np.concatenate([rng.choice(v, m), rng.normal(size=m) * 3, [v[0], v[-1], np.inf, -np.inf]]).astype(
        dtype
    )
    with small_capacities():
        co = runs.coarse_index(v)
        assert (co is None) == (n < runs.COARSE_MIN)
        np.testing.assert_array_equal(runs.rank_left(v, co, x), np.searchsorted(v, x, "left"))
        np.testing.assert_array_equal(runs.rank_left(v, co, np.sort(x)), np.searchsorted(v, np.sort(x), "left"))


@pytest.mark.parametrize("name", NAMES)
@settings(max_examples=6, deadline=None)
@given(seed=seeds, n=st.integers(0, 400), data=st.data())
def test_small_capacities_give_the_same_results(name, seed, n, data):
    factory, kind = REGISTRY[name]
    rng = np.random.default_rng(seed)
    y, s = make_data(kind, rng, n)
    cuts = data.draw(st.lists(st.integers(0, n), max_size=8))
    expected = value(feed(factory(), y, s))
    with small_capacities():
        split = feed(factory(), y, s, cuts=cuts)
        got = value(split)
        if kind == "binary" and name != "metricset":
            one = factory()
            for yi, si in zip(y.tolist(), s.tolist(), strict=True):
                one.update(yi, si)
                if rng.random() < 0.3:
                    value(one)
            assert_same(value(one), expected, exact=True)
    assert_same(got, expected, exact=True)
