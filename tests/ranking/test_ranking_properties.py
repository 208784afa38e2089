"""Property tests of the ranking accumulators (hypothesis), over the ranking entries of the shared
registry (``tests/_support/laws.py``).

The values read after each batch equal scikit-learn on the prefix; small internal capacities give
the same results. The protocol laws (batch split, merge, save/load, weights, prefix, per-sample,
rejected input) run for every public metric in ``tests/test_protocol_laws.py``. A long random sequence of operations checks the buffer's internal invariants
(sorted geometric runs, the Mann-Whitney statistic recounted from scratch) after every step.
"""

from __future__ import annotations

import contextlib

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from laws import REGISTRY, assert_same, feed, make_data, result
from ranking_oracles import finite
from sklearn.metrics import average_precision_score, roc_auc_score

import streammetrics as sm
import streammetrics._scores.exact.buffer as sb
import streammetrics._scores.exact.runs as runs


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


# the ranking family's entries of the shared registry
NAMES = ["binary_auroc", "binary_partial_auroc", "binary_ap", "binary_ap_11pt", "binary_roc", "binary_pr",
         "multiclass_auroc_macro", "multiclass_auroc_ovo", "multiclass_ap_micro", "multilabel_auroc_none",
         "multilabel_roc", "ranking_set"]


def scores(kind: str, rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Labels and scores of ``n`` rows of one of the registry's data kinds."""
    d = make_data(kind, rng, n)
    return d.y, d.p


common = settings(max_examples=12, deadline=None)
seeds = st.integers(0, 2**32 - 1)
sizes = st.integers(0, 40)


@common
@given(seed=seeds, n=sizes, data=st.data())
def test_prefix_values_equal_sklearn(seed, n, data):
    """After each batch, AUROC and AP equal scikit-learn on the prefix read so far."""
    rng = np.random.default_rng(seed)
    y, s = scores("ranking_scores", rng, n)
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
    kind = "multiclass_scores" if by_class else "ranking_scores"
    make = (lambda: sm.AUROC(3, multi_class="ovo")) if by_class else (lambda: sm.AUROC())
    metric = make()
    ys, ss, ws = [], [], []
    for op in ops:
        if op in ("batch", "big", "weighted"):
            n = int(rng.integers(0, 200 if op == "big" else 12))
            y, s = scores(kind, rng, n)
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
            y, s = scores(kind, rng, n)
            metric.merge(make().update(y, s))
            ys.append(y)
            ss.append(s)
            ws.append(np.ones(n))
        elif op == "reset":
            metric.reset()
            ys, ss, ws = [], [], []
        else:
            result(metric)
        metric._state.check_invariants()
    reference = make()
    if ys:
        reference.update(np.concatenate(ys), np.concatenate(ss), sample_weight=np.concatenate(ws))
    assert_same(result(metric), result(reference), rtol=1e-12)


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
    case = REGISTRY[name]
    d = make_data(case.kind, np.random.default_rng(seed), n)
    rng = np.random.default_rng(seed + 1)
    cuts = data.draw(st.lists(st.integers(0, n), max_size=8))
    expected = result(feed(case, case.make(), d))
    with small_capacities():
        got = result(feed(case, case.make(), d, cuts=cuts))
        if case.kind == "ranking_scores" and not isinstance(case.make(), sm.MetricSet):
            one = case.make()
            for yi, si in zip(d.y.tolist(), d.p.tolist(), strict=True):
                one.update(yi, si)
                if rng.random() < 0.3:
                    result(one)
            assert_same(result(one), expected, exact=True)
    assert_same(got, expected, exact=True)
