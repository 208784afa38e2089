"""Property tests over a registry of confusion-family configurations (hypothesis).

For every registered metric: any split into batches, any partition merged back, and a save/load
round trip give the one-shot result; unit weights = no weights; integer weights = repetition;
zero weight = removal; the value after each batch equals the one-shot value on the prefix; the
per-sample (scalar) path equals the batch path.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import streammetrics as sm

# name -> (factory, data generator(rng, n) -> (y, p))
REGISTRY = {
    "binary_f1_scores": (lambda: sm.F1(zero_division=0.0), "binary_scores"),
    "binary_precision_labels": (lambda: sm.Precision(zero_division=1.0), "binary_labels"),
    "binary_mcc": (lambda: sm.MatthewsCorrCoef(), "binary_scores"),
    "binary_kappa": (lambda: sm.CohenKappa(zero_division=0.0), "binary_labels"),
    "binary_npv": (lambda: sm.NPV(zero_division=np.nan), "binary_scores"),
    "binary_weighted_accuracy": (lambda: sm.WeightedAccuracy(weights=[0.2, 0.8], zero_division=0.0),
                                 "binary_scores"),
    "multiclass_recall_macro": (lambda: sm.Recall(4, zero_division=0.0), "multiclass_scores"),
    "multiclass_fbeta_weighted": (lambda: sm.FBeta(4, beta=2.0, average="weighted", zero_division=0.0),
                                  "multiclass_labels"),
    "multiclass_jaccard_none": (lambda: sm.Jaccard(4, average=None, zero_division=0.0),
                                "multiclass_labels"),
    "multiclass_accuracy": (lambda: sm.Accuracy(4, zero_division=0.0), "multiclass_scores"),
    "multiclass_balanced": (lambda: sm.BalancedAccuracy(4, zero_division=0.0), "multiclass_labels"),
    "multiclass_confusion": (lambda: sm.ConfusionMatrix(4), "multiclass_labels"),
    "multiclass_topk": (lambda: sm.TopKAccuracy(4, k=2, zero_division=0.0), "multiclass_scores"),
    "multilabel_specificity_micro": (
        lambda: sm.Specificity(3, multilabel=True, average="micro", zero_division=0.0), "multilabel_scores"),
    "multilabel_subset_accuracy": (lambda: sm.Accuracy(3, multilabel=True, zero_division=0.0),
                                   "multilabel_labels"),
    "multilabel_hamming": (lambda: sm.HammingLoss(3, multilabel=True, zero_division=0.0),
                           "multilabel_scores"),
    "report": (lambda: sm.ClassificationReport(4, zero_division=0.0), "multiclass_labels"),
    "metricset": (lambda: sm.MetricSet(p=sm.Precision(zero_division=0.0), r=sm.Recall(zero_division=0.0),
                                       f=sm.F1(zero_division=0.0), a=sm.Accuracy(zero_division=0.0)),
                  "binary_scores"),
}


def make_data(kind: str, rng: np.random.Generator, n: int):
    if kind == "binary_scores":
        return rng.integers(0, 2, n), np.round(rng.random(n) * 4) / 4
    if kind == "binary_labels":
        return rng.integers(0, 2, n), rng.integers(0, 2, n)
    if kind == "multiclass_scores":
        return rng.integers(0, 4, n), np.round(rng.random((n, 4)) * 3) / 3
    if kind == "multiclass_labels":
        return rng.integers(0, 4, n), rng.integers(0, 4, n)
    if kind == "multilabel_scores":
        return rng.integers(0, 2, (n, 3)), np.round(rng.random((n, 3)) * 4) / 4
    if kind == "multilabel_labels":
        return rng.integers(0, 2, (n, 3)), rng.integers(0, 2, (n, 3))
    raise AssertionError(kind)


def value(metric):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return metric.compute()


def assert_same(a, b, exact=False):
    if isinstance(a, dict):
        assert a.keys() == b.keys()
        for k in a:
            assert_same(a[k], b[k], exact)
        return
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if exact:
        np.testing.assert_array_equal(a, b)
    else:
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)


def assert_same_state(m1, m2, exact=False):
    s1, s2 = m1.state_dict(), m2.state_dict()
    assert s1.keys() == s2.keys()
    assert s1["config"] == s2["config"]
    for k in s1:
        if k not in ("class", "format_version", "config"):
            assert_same(s1[k], s2[k], exact)


def feed(metric, y, p, w=None, cuts=()):
    bounds = [0, *sorted(cuts), len(y)]
    for a, b in zip(bounds[:-1], bounds[1:], strict=True):
        metric.update(y[a:b], p[a:b], sample_weight=None if w is None else w[a:b])
    return metric


NAMES = sorted(REGISTRY)
common = settings(max_examples=15, deadline=None)
seeds = st.integers(0, 2**32 - 1)
sizes = st.integers(0, 40)


@pytest.mark.parametrize("name", NAMES)
@common
@given(seed=seeds, n=sizes, data=st.data())
def test_any_batch_split_equals_one_shot(name, seed, n, data):
    factory, kind = REGISTRY[name]
    rng = np.random.default_rng(seed)
    y, p = make_data(kind, rng, n)
    w = rng.random(n) * 3
    cuts = data.draw(st.lists(st.integers(0, n), max_size=5))
    one = feed(factory(), y, p, w)
    split = feed(factory(), y, p, w, cuts)
    assert_same_state(one, split)
    assert_same(value(one), value(split))


@pytest.mark.parametrize("name", NAMES)
@common
@given(seed=seeds, n=sizes, parts=st.integers(1, 4))
def test_any_partition_merged_equals_one_shot(name, seed, n, parts):
    factory, kind = REGISTRY[name]
    rng = np.random.default_rng(seed)
    y, p = make_data(kind, rng, n)
    owner = rng.integers(0, parts, n)
    workers = [feed(factory(), y[owner == i], p[owner == i]) for i in range(parts)]
    merged = workers[0].merge(*workers[1:])
    one = feed(factory(), y, p)
    assert_same_state(one, merged, exact=True)  # unit weights: integer counts, exact
    assert_same(value(one), value(merged))


@pytest.mark.parametrize("name", NAMES)
@common
@given(seed=seeds, n=sizes)
def test_save_load_round_trip(name, seed, n, tmp_path_factory):
    factory, kind = REGISTRY[name]
    rng = np.random.default_rng(seed)
    y, p = make_data(kind, rng, n)
    m = feed(factory(), y, p, rng.random(n))
    path = tmp_path_factory.mktemp("state") / "m.sm"
    sm.save(m, path)
    loaded = sm.load(path)
    assert type(loaded) is type(m)
    assert_same_state(m, loaded, exact=True)
    assert_same(value(m), value(loaded), exact=True)
    again = feed(loaded.copy(), y, p)  # keeps working after loading
    assert_same_state(again, feed(m, y, p), exact=True)


@pytest.mark.parametrize("name", NAMES)
@common
@given(seed=seeds, n=sizes)
def test_weight_invariances(name, seed, n):
    factory, kind = REGISTRY[name]
    rng = np.random.default_rng(seed)
    y, p = make_data(kind, rng, n)
    # unit weights = no weights
    assert_same(value(feed(factory(), y, p, np.ones(n))), value(feed(factory(), y, p)))
    # integer weights = repetition
    reps = rng.integers(0, 4, n)
    repeated = feed(factory(), np.repeat(y, reps, axis=0), np.repeat(p, reps, axis=0))
    assert_same(value(feed(factory(), y, p, reps.astype(float))), value(repeated))
    # zero weight = removal
    keep = rng.random(n) < 0.6
    removed = feed(factory(), y[keep], p[keep])
    assert_same(value(feed(factory(), y, p, keep.astype(float))), value(removed))


@pytest.mark.parametrize("name", NAMES)
@common
@given(seed=seeds, n=sizes, data=st.data())
def test_prefix_equality(name, seed, n, data):
    factory, kind = REGISTRY[name]
    rng = np.random.default_rng(seed)
    y, p = make_data(kind, rng, n)
    cuts = sorted(data.draw(st.lists(st.integers(0, n), max_size=4)))
    streaming = factory()
    bounds = [0, *cuts, n]
    for a, b in zip(bounds[:-1], bounds[1:], strict=True):
        streaming.update(y[a:b], p[a:b])
        assert_same(value(streaming), value(feed(factory(), y[:b], p[:b])))


@pytest.mark.parametrize("name", [n for n in NAMES if REGISTRY[n][1] in ("binary_scores", "binary_labels",
                                                                          "multiclass_labels")])
@common
@given(seed=seeds, n=sizes)
def test_per_sample_scalars_equal_batch(name, seed, n):
    factory, kind = REGISTRY[name]
    rng = np.random.default_rng(seed)
    y, p = make_data(kind, rng, n)
    w = rng.random(n)
    one_by_one = factory()
    for yi, pi, wi in zip(y.tolist(), p.tolist(), w.tolist(), strict=True):
        one_by_one.update(yi, pi, sample_weight=wi)
    assert_same_state(one_by_one, feed(factory(), y, p, w))
    assert_same(value(one_by_one), value(feed(factory(), y, p, w)))
