"""Crafted state files (issue 27): each loads into a state that some later call relies on being
valid, so load refuses it (naming the field) -- or, where valid updates can create the same
state, the later call handles it. One test per finding, beside the generic fuzzer
(``test_load_fuzz.py``)."""

from __future__ import annotations

import json
import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from load_corpus import _multiclass, build, saved, split

import streammetrics as sm


def edited(data: bytes, name: str, values) -> bytes:
    """``data`` with array ``name`` replaced by ``values`` (any shape / dtype), re-checksummed."""
    header, payload = split(data)
    arr = np.ascontiguousarray(values)
    for spec in header["arrays"]:
        if spec["name"] == name:
            spec.update(dtype=arr.dtype.str, shape=list(arr.shape), offset=len(payload),
                        nbytes=arr.nbytes)
            return build(header, payload + arr.tobytes())
    raise KeyError(f"{name} not in {[a['name'] for a in header['arrays']]}")


def array(data: bytes, name: str) -> np.ndarray:
    header, payload = split(data)
    spec = next(a for a in header["arrays"] if a["name"] == name)
    flat = np.frombuffer(payload[spec["offset"]:spec["offset"] + spec["nbytes"]], spec["dtype"])
    return flat.reshape(spec["shape"]).copy()


# -- 1. DelayedLabels: pending scores of a shape the wrapped metric refuses ---------------------
@pytest.mark.parametrize("name, rows", [
    ("DelayedLabels", np.full((3, 2), 0.5)),             # binary Recall: rows of 2 scores
    ("DelayedLabels-multiclass", np.full((3, 2), 0.5)),  # 3 classes: rows of 2
    ("DelayedLabels-multiclass", np.full(3, 0.5)),       # 3 classes (top-k): one score per id
    ("DelayedLabels-multiclass", np.full((3, 3, 1), 0.5)),
])
def test_delayed_pending_scores_of_a_wrong_shape_are_refused_at_load(name, rows):
    data = saved(name)
    k = array(data, "pending.ids_int").shape[0]
    with pytest.raises(ValueError, match=r"pending\.scores .*row shape"):
        sm.loads(edited(data, "pending.scores", rows[:k]))


def test_delayed_pending_scores_of_the_right_shape_still_load_and_label():
    data = saved("DelayedLabels-multiclass")
    again = sm.loads(edited(data, "pending.scores", array(data, "pending.scores")[:, ::-1].copy()))
    assert again.label([3, 4], [0, 1]) == 2


@pytest.mark.parametrize("metric, good, bad", [
    (lambda: sm.Recall(), [0.5], [[0.1, 0.2, 0.3]]),
    (lambda: sm.Accuracy(3), [[0.2, 0.3, 0.5]], [[0.2, 0.8]]),
    (lambda: sm.TopKAccuracy(3, k=2), [[0.2, 0.3, 0.5]], [0.4]),
    (lambda: sm.MetricSet(a=sm.AUROC(3), p=sm.Precision(3)), [[0.2, 0.3, 0.5]],
     [[[0.2], [0.3], [0.5]]]),
])
def test_predict_refuses_what_load_refuses_and_changes_nothing(metric, good, bad):
    """A kind of prediction the metric refuses is refused by ``predict`` (not by a ``label``
    much later), so every state ``predict`` creates loads."""
    d = sm.DelayedLabels(metric(), capacity=10)
    d.predict(["old"], good)
    before = sm.dumps(d)
    with pytest.raises(ValueError, match=r"y_score: .* refuses predictions of dtype"):
        d.predict(["new"], bad)
    assert sm.dumps(d) == before
    assert sm.loads(before).label(["old"], [1]) == 1


def test_predict_one_float_for_a_multiclass_metric_is_refused():
    d = sm.DelayedLabels(sm.TopKAccuracy(3, k=2))
    with pytest.raises(ValueError, match="refuses predictions"):
        d.predict("a", 0.4)
    assert len(d) == 0


def test_delayed_around_sliced_checks_the_kind_with_the_key_columns():
    d = sm.DelayedLabels(sm.Sliced(sm.Accuracy(3)))
    with pytest.raises(ValueError, match="refuses predictions"):
        d.predict(["a"], [[0.5, 0.5]], slices={"g": ["x"]})
    d.predict(["a", "b"], [[0.2, 0.3, 0.5], [0.6, 0.2, 0.2]], slices={"g": ["x", "y"]})
    again = sm.loads(sm.dumps(d))
    assert again.label(["a", "b"], [2, 0]) == 2
    assert again.compute() == {"x": 1.0, "y": 1.0}


@pytest.mark.parametrize("key", ["xy", 5])
def test_delayed_around_sliced_with_one_named_key_column(key):
    """``slices={"g": [...]}`` (one named column): the label fed slice ``"x"`` for the key
    ``"xy"`` (its first character), a TypeError for an int key, and the saved state did not
    load ("distinct names")."""
    d = sm.DelayedLabels(sm.Sliced(sm.Accuracy()))
    d.predict(["a", "b"], [1, 0], slices={"g": [key, key]})
    again = sm.loads(sm.dumps(d))
    assert d.label(["a"], [1]) == 1
    assert d.compute() == {key: 1.0}
    assert again.label(["a", "b"], [1, 1]) == 2
    assert again.compute() == {key: 0.5}


# -- 2. subnormal weights: DeLong's interval computes (a Decayed state reaches them) -----------
def test_subnormal_weight_in_a_sliced_metricset_file_gives_an_interval():
    data = saved("Sliced-MetricSet")
    header, _ = split(data)
    layout = json.loads(bytes(array(data, "slices.layout")).decode())
    group = f"slices.g{[name for name, _ in layout['arrays']].index('a.weights')}.data"  # grouped per entry
    w = array(data, group)
    w[0] = 1e-320  # the first slot's first weight
    metric = sm.loads(edited(data, group, w))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", sm.UndefinedMetricWarning)
        intervals = metric.interval()
    for per_slice in intervals.values():
        low, high = per_slice["a"] if isinstance(per_slice["a"], tuple) else (math.nan, math.nan)
        assert math.isnan(low) or 0.0 <= low <= high <= 1.0


def brute_delong_interval(pos, pw, neg, nw, z=1.959963984540054):
    """DeLong's interval from the pair matrix, with Kish effective sizes (O(m n))."""
    pos, pw, neg, nw = map(np.asarray, (pos, pw, neg, nw))
    psi = (pos[:, None] > neg[None, :]) + 0.5 * (pos[:, None] == neg[None, :])
    v10 = psi @ nw / nw.sum()
    v01 = 1.0 - pw @ psi / pw.sum()
    auc = float(pw @ v10 / pw.sum())

    def var(v, w):
        n_eff = w.sum() ** 2 / (w * w).sum()
        mean = w @ v / w.sum()
        return float(w @ (v - mean) ** 2 / w.sum() * n_eff / (n_eff - 1)), n_eff

    (s10, m_eff), (s01, n_eff) = var(v10, pw), var(v01, nw)
    half = z * math.sqrt(s10 / m_eff + s01 / n_eff)
    return auc, max(0.0, auc - half), min(1.0, auc + half)


def test_decayed_auroc_interval_with_underflowing_squared_weights():
    """Two positives decayed by about 2**-540: their squared weights underflow to 0, and the
    effective size (sum w)**2 / sum w**2 was 0 / 0 (ZeroDivisionError from ``interval``).
    Scaling one class's weights by a common factor changes neither the AUROC nor DeLong's
    variance, so the oracle is the pair matrix on weights scaled by 2**600 (exact)."""
    d = sm.Decayed(sm.AUROC(), half_life=1)
    pos = [0.9, 0.3]
    neg = [0.1 + 0.5 * ((7 * i) % 11) / 11 for i in range(540)]
    for s in pos:
        d.update([1], [s])
    for s in neg:
        d.update([0], [s])
    n = len(neg)
    pw = [0.5 ** (n + 1) * 2.0**600, 0.5**n * 2.0**600]  # weight 0.5**age, scaled
    nw = [0.5 ** (n - 1 - i) for i in range(n)]  # the newest weighs 1
    auc, want_low, want_high = brute_delong_interval(pos, pw, neg, nw)
    low, high = d.interval()
    assert abs(d.compute() - auc) < 1e-9
    assert abs(low - want_low) < 1e-9 and abs(high - want_high) < 1e-9


# -- 3. TopKAccuracy: more hits than samples, also wrapped --------------------------------------
@pytest.mark.parametrize("name, entry", [("TopKAccuracy", "hits"), ("MetricSet", "k.hits"),
                                          ("DelayedLabels-multiclass", "metric.k.hits")])
def test_topk_hits_above_the_total_are_refused_wherever_the_state_sits(name, entry):
    data = saved(name)
    hits = array(data, entry)
    hits[0] = hits[1] * 2 + 1
    with pytest.raises(ValueError, match="exceeds its total"):
        sm.loads(edited(data, entry, hits))


# -- 5. calibration bins: what the readers rely on --------------------------------------------
CALIBRATION = {
    "error": lambda c, lg: sm.CalibrationError(c, n_bins=7, from_logits=lg),
    "classwise": lambda c, lg: sm.CalibrationError(c or 3, n_bins=5, classwise=True, from_logits=lg),
    "curve": lambda c, lg: sm.CalibrationCurve(4, num_classes=c, from_logits=lg),
    "brier": lambda c, lg: sm.BrierScore(c, n_bins=6, from_logits=lg),
    "set": lambda c, lg: sm.MetricSet(e=sm.CalibrationError(c, n_bins=3, from_logits=lg),
                                      b=sm.BrierScore(c, n_bins=3, from_logits=lg)),
    "decayed": lambda c, lg: sm.Decayed(sm.BrierScore(c, n_bins=4, from_logits=lg), half_life=0.5),
}


def _calibration_batch(rng, n, c, logits):
    if c is None:
        z = rng.normal(0, 3, n) if logits else np.round(rng.random(n), int(rng.integers(1, 4)))
        return rng.integers(0, 2, n), z
    z = rng.normal(0, 3, (n, c))
    if logits:
        return rng.integers(0, c, n), z
    e = np.exp(z - z.max(axis=1, keepdims=True))
    return rng.integers(0, c, n), e / e.sum(axis=1, keepdims=True)


@pytest.mark.parametrize("kind", sorted(CALIBRATION))
@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), steps=st.integers(1, 40), multiclass=st.booleans(),
       logits=st.booleans(), weights=st.sampled_from([None, (1e-3, 1e3), (1e-30, 1e-25), (1e20, 1e30)]))
def test_calibration_states_of_valid_streams_load(kind, seed, steps, multiclass, logits, weights):
    """The load checks of the calibration bins (mean probability inside its bin, sum w p^2 >=
    (sum w p)^2 / sum w, the bins holding the totals' weight) accept every state that
    updates, merges and decay create."""
    rng = np.random.default_rng(seed)
    c = 3 if multiclass or kind == "classwise" else None
    metrics = [CALIBRATION[kind](c, logits), CALIBRATION[kind](c, logits)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", sm.UndefinedMetricWarning)
        for i in range(steps):
            n = int(rng.integers(1, 6))
            y, p = _calibration_batch(rng, n, c, logits)
            w = None if weights is None else rng.uniform(*weights, n)
            metrics[i % 2].update(y, p, sample_weight=w)
        metric = metrics[0].merge(metrics[1])
        data = sm.dumps(metric)
        again = sm.loads(data)
        assert sm.dumps(again) == data


def _bins_edit(data, edit):
    header, payload = split(data)
    name = next(a["name"] for a in header["arrays"] if a["name"].endswith("bins"))
    b = array(data, name)
    edit(b)
    return edited(data, name, b)


def test_calibration_bin_mean_outside_its_bin_is_refused():
    data = saved("CalibrationError")  # 5 bins: bin 0 holds p in [0, 0.2]

    def edit(b):
        j = int(np.flatnonzero(b[0, :, 0] > 0)[0])
        b[0, j, 1] = b[0, j, 0] * min(1.0, (j + 1.5) / 5)  # mean p beyond the bin's upper edge
        b[0, j, 3] = b[0, j, 1]
    with pytest.raises(ValueError, match="mean probability lies outside its bin at column 0, bin"):
        sm.loads(_bins_edit(data, edit))


def test_calibration_negative_within_bin_variance_is_refused():
    """sum w p^2 < (sum w p)^2 / sum w: the Brier decomposition's within-bin variance was
    negative."""
    data = saved("BrierScore")

    def edit(b):
        j = int(np.flatnonzero(b[0, :, 0] > 0)[0])
        b[0, j, 3] = 0.5 * b[0, j, 1] ** 2 / b[0, j, 0]
    with pytest.raises(ValueError, match=r"w p\^2 is below"):
        sm.loads(_bins_edit(data, edit))


def test_calibration_bins_must_hold_the_totals_weight():
    data = saved("BrierScore")
    tot = array(data, "totals")
    tot[0] *= 3
    tot[2] *= 3
    with pytest.raises(ValueError, match="a column's bins hold weight"):
        sm.loads(edited(data, "totals", tot))


@pytest.mark.parametrize("weight", [1e-320, 1e-50, 1e300, -1.0, math.inf])
def test_delayed_pending_weight_predict_would_refuse_is_refused_at_load(weight):
    """A pending weight outside [2**-128, 2**128] (predict's rule) loaded, then label() raised
    the sample_weight error much later."""
    data = saved("DelayedLabels")
    w = array(data, "pending.weights")
    w[0] = weight
    with pytest.raises(ValueError, match=r"pending\.weights\[0\]"):
        sm.loads(edited(data, "pending.weights", w))


def test_delayed_pending_weights_predict_takes_load_and_label():
    d = sm.DelayedLabels(sm.Recall(), clock=lambda: 5.0)
    d.predict(["a", "b", "c"], [0.2, 0.7, 0.9], sample_weight=[2.0**-128, 2.0**128, 0.0])
    again = sm.loads(sm.dumps(d))
    again.clock = d.clock
    assert again.label(["a", "b", "c"], [1, 1, 1]) == 3
    assert d.label(["a", "b", "c"], [1, 1, 1]) == 3
    assert again.compute() == d.compute()


@pytest.mark.parametrize("dtype", ["<u8", "<i4", "|u1", "|i1"])
def test_delayed_pending_scores_of_a_dtype_predict_never_keeps_are_refused(dtype):
    """predict keeps float16/32/64, int64 or bool; a uint64 score of 2**64 - 1 loaded and made
    label() fail."""
    data = saved("DelayedLabels")
    scores = np.full(array(data, "pending.scores").shape, np.iinfo(np.uint64).max).astype(dtype)
    with pytest.raises(ValueError, match=r"pending\.scores has dtype"):
        sm.loads(edited(data, "pending.scores", scores))


def test_delayed_around_sliced_checks_the_kind_against_the_template():
    """Sliced checks no row of an empty batch, so the dry run also asks its template: rows of 2
    scores for a binary MetricSet are refused by predict, and by load."""
    d = sm.DelayedLabels(sm.Sliced(sm.MetricSet(r=sm.Recall(), a=sm.AUROC())))
    with pytest.raises(ValueError, match="refuses predictions"):
        d.predict(["z"], [[0.1, 0.9]], slices=["x"])
    d.predict(["z", "y"], [0.9, 0.2], slices=["x", "x"])
    data = sm.dumps(d)
    assert sm.loads(data).label(["z", "y"], [1, 0]) == 2
    with pytest.raises(ValueError, match=r"pending\.scores .*row shape \(2,\)"):
        sm.loads(edited(data, "pending.scores", np.full((2, 2), 0.5)))


# -- 6. found by the fuzz-seed runs -------------------------------------------------------------
@pytest.mark.parametrize("beta", [1e308, 1e200, 1e154, 2.0**200, 2.0**201, 1e50])
def test_fbeta_with_a_huge_beta_is_recall(beta):
    """Seed 3756543183 (test_load_fuzz, FBeta, config beta = 1e308): beta**2 raised
    OverflowError in compute (also for FBeta(beta=1e200) built directly; 1e154 gave 0.0 with an
    overflow warning). F-beta tends to recall as beta grows; counts up to the loadable maximum
    do not overflow either."""
    y, p = np.array([0, 1, 1, 2, 2, 0]), np.array([0, 1, 0, 2, 1, 1])
    w = np.array([1e30, 2e30, 1e30, 3e30, 1e30, 2e30])
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        for weights in (None, w):
            got = sm.FBeta(3, beta=beta, average=None).update(y, p, sample_weight=weights).compute()
            want = sm.Recall(3, average=None).update(y, p, sample_weight=weights).compute()
            np.testing.assert_allclose(got, want, rtol=1e-12)
        header, payload = split(saved("FBeta"))
        header["config"]["beta"] = beta
        again = sm.loads(build(header, payload))  # the corpus FBeta(3, average=None)
        recall = _multiclass(sm.Recall(3, average=None))  # the same samples
        np.testing.assert_allclose(again.compute(), recall.compute(), rtol=1e-12)
    # no true samples: 0 (tp = 0 over predicted samples), not the zero_division value
    assert sm.FBeta(beta=beta, zero_division=1.0).update([0, 0], [1, 0]).compute() == 0.0


def test_sliced_row_counts_near_int64_end_are_refused():
    """A slice row count near 2**63 loaded, and a merge wrapped it negative (the merged state
    did not load): counts are at most 2**53, what updates can reach."""
    data = saved("Sliced-F1")
    rows = array(data, "by0.rows")
    rows[1] = 2**63 - 1
    with pytest.raises(ValueError, match=r"by0.rows must be 4 integers in \[0, 2\*\*53\]"):
        sm.loads(edited(data, "by0.rows", rows))
    rows[1] = 2**52  # large but accepted: merged with itself it still saves and loads
    m = sm.loads(edited(data, "by0.rows", rows))
    twin = sm.loads(edited(data, "by0.rows", rows))
    assert sm.loads(sm.dumps(m.merge(twin))).counts()
