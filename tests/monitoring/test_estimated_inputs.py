"""Estimated: what it refuses (with the state left as it was), what it wraps, and its state files."""

from __future__ import annotations

import numpy as np
import pytest

import streammetrics as sm
from streammetrics.monitoring import Estimated


def fed(metric: sm.Metric) -> Estimated:
    return Estimated(metric).update([0.2, 0.9, 0.6, 0.4])


@pytest.mark.parametrize(("y_prob", "weights", "message"), [
    ([0.2, np.nan], None, r"y_prob: probabilities must lie in \[0, 1\]; first invalid value nan at index 1"),
    ([0.2, 1.5], None, "first invalid value 1.5 at index 1"),
    ([-0.1], None, "first invalid value -0.1 at index 0"),
    ([[0.2, 0.3, 0.5]], None, r"y_prob: expected shape \(n,\) or \(n, 2\) for this binary metric"),
    ([[0.2, 0.7]], None, r"row sums to 0.899+\d* at index 0"),
    (["a"], None, "y_prob"),
    ([0.2, 0.3], [1.0, -1.0], "sample_weight"),
    ([0.2, 0.3], [1.0], "sample_weight"),
])
def test_bad_input_is_refused_and_changes_nothing(y_prob, weights, message):
    est = fed(sm.MetricSet(acc=sm.Accuracy(), auroc=sm.AUROC()))
    before = est.state_dict()
    with pytest.raises(ValueError, match=message):
        est.update(y_prob, sample_weight=weights)
    after = est.state_dict()
    assert before.keys() == after.keys()
    for k in before:
        if isinstance(before[k], np.ndarray):
            np.testing.assert_array_equal(before[k], after[k])


def test_multiclass_rows_must_sum_to_one():
    est = Estimated(sm.AUROC(3))
    with pytest.raises(ValueError, match=r"row sums to 0.899+\d* at index 1"):
        est.update([[0.2, 0.3, 0.5], [0.3, 0.3, 0.3]])
    with pytest.raises(ValueError, match=r"expected shape \(n, 3\)"):
        est.update([0.2, 0.8])
    assert est.nbytes == Estimated(sm.AUROC(3)).nbytes


@pytest.mark.parametrize(("metric", "message"), [
    (sm.AUROC(3, multilabel=True), "binary and multiclass"),
    (sm.AUROC(classes=["no", "yes"]), "without classes="),
    (sm.F1(ignore_index=0), "ignore_index"),
    (sm.Window(sm.F1(), size=9), "size must be a multiple of 2"),
    (sm.Decayed(sm.F1(), half_life=10.0), "decay per duplicated row"),
    (sm.LogLoss(), "measure it on labelled data"),
    (sm.NDCG(), "classification accumulators"),
    (sm.F1().update([1, 0], [1, 1]), "empty accumulator"),
    (sm.MetricSet(a=sm.F1(), b=sm.AUROC(3)), "different tasks"),
])
def test_metrics_it_cannot_estimate_are_refused_at_construction(metric, message):
    with pytest.raises(ValueError, match=message):
        Estimated(metric)


def test_an_estimate_is_not_a_metricset_member():
    s = sm.MetricSet(a=Estimated(sm.F1()))
    with pytest.raises(ValueError, match="Estimated"):
        s.update([0.2, 0.8])


def test_binary_pairs_equal_the_probability_of_class_one():
    p = np.array([0.1, 0.6, 0.8])
    pairs = Estimated(sm.MetricSet(a=sm.AUROC(), f=sm.F1())).update(np.column_stack([1 - p, p]))
    assert pairs.compute() == Estimated(sm.MetricSet(a=sm.AUROC(), f=sm.F1())).update(p).compute()


def test_tiny_products_count_as_zero_weight():
    """w·p below 2⁻¹²⁸ would be a weight the library refuses; it counts as 0."""
    est = Estimated(sm.AUROC()).update([1e-300, 0.5, 1.0], sample_weight=[1.0, 1e-30, 1.0])
    assert 0.0 <= est.compute() <= 1.0
    sm.loads(sm.dumps(est))


@pytest.mark.parametrize("classes", [2, 3])
def test_a_row_whose_products_all_count_as_zero_keeps_a_loadable_state(classes):
    """A weight of 2⁻¹²⁸ times any probability < 1 is below the smallest weight: the row adds
    nothing to the moments' means, and nothing to their variances either (a fresh Hypothesis
    seed found w²·p(1 − p) kept there, which the loaded state's bound then refused)."""
    p = (np.array([0.3, 0.6]) if classes == 2
         else np.array([[0.29846335, 0.47665426, 0.22488239], [0.38421373, 0.27260796, 0.34317831]]))
    for weights in ([float(np.finfo(np.float32).max), 2.0**-128], [1.0, 2.0**-128], [1e-38, 5e-39]):
        est = Estimated(sm.AUROC() if classes == 2 else sm.AUROC(num_classes=3))
        est.update(p, sample_weight=weights)
        back = sm.loads(sm.dumps(est))
        assert np.array_equal(back.state_dict()["estimate.var"], est.state_dict()["estimate.var"])
        mean, var = est.state_dict()["estimate.mean"], est.state_dict()["estimate.var"]
        assert (var <= mean.sum(axis=1, keepdims=True) ** 2 / 4 * (1 + 1e-12)).all()


def test_sliced_and_time_window_inside():
    p = np.array([0.9, 0.2, 0.7, 0.4, 0.6, 0.1])
    keys = np.array(["a", "b", "a", "b", "a", "b"])
    est = Estimated(sm.Sliced(sm.AUROC())).update(p, slices=keys)
    for key in ("a", "b"):
        alone = Estimated(sm.AUROC()).update(p[keys == key]).compute()
        assert est.compute()[key] == pytest.approx(alone, rel=1e-12)
    t = [0.0, 0.0, 1.0, 1.0, 5.0, 5.0]
    win = Estimated(sm.Window(sm.Accuracy(), seconds=2.0)).update(p, timestamp=t)
    assert win.compute() == pytest.approx(Estimated(sm.Accuracy()).update(p[4:]).compute(), rel=1e-12)
    assert sm.loads(sm.dumps(win)).compute() == pytest.approx(win.compute(), rel=1e-12)
    # a count window of 2·W rows holds the last W predictions, across batches and merges
    last = Estimated(sm.Window(sm.AUROC(), size=6)).update(p[:4]).update(p[4:])
    assert last.compute() == pytest.approx(Estimated(sm.AUROC()).update(p[3:]).compute(), rel=1e-12)
    mc = np.array([[0.2, 0.3, 0.5], [0.6, 0.3, 0.1], [0.1, 0.8, 0.1], [0.3, 0.3, 0.4]])
    a = Estimated(sm.Window(sm.Accuracy(3), size=6)).update(mc[:2])
    b = Estimated(sm.Window(sm.Accuracy(3), size=6)).update(mc[2:])
    assert a.merge(b).compute() == pytest.approx(Estimated(sm.Accuracy(3)).update(mc[2:]).compute(), rel=1e-12)


def test_loading_refuses_broken_files():
    est = fed(sm.Accuracy())
    state = est.state_dict()
    bad = dict(state, **{"estimate.var": state["estimate.var"] + 10.0})
    with pytest.raises(ValueError, match="exceeds the bound"):
        sm.Metric.from_state_dict(bad)
    with pytest.raises(ValueError, match="unexpected entry"):
        sm.Metric.from_state_dict(dict(state, extra=np.zeros(1)))
    with pytest.raises(ValueError, match="missing array"):
        sm.Metric.from_state_dict({k: v for k, v in state.items() if k != "estimate.mean"})
    with pytest.raises(ValueError):
        sm.Metric.from_state_dict(dict(state, config={"metric": {"class": "Nope", "config": {}}}))
    with pytest.raises(ValueError):
        sm.Metric.from_state_dict(dict(state, **{"metric.counts": -state["metric.counts"]}))


def test_reset_copy_and_repr():
    est = fed(sm.F1())
    twin = est.copy()
    est.reset()
    assert est.state_dict()["estimate.mean"].sum() == 0
    assert twin.compute() == pytest.approx(fed(sm.F1()).compute())
    assert repr(est).startswith("Estimated(F1(")


def test_a_wrapped_metric_refusing_the_batch_leaves_everything_as_it_was():
    win = Estimated(sm.Window(sm.AUROC(), seconds=10.0)).update([0.2, 0.8], timestamp=5.0)
    before = win.state_dict()
    with pytest.raises(ValueError, match="timestamp"):
        win.update([0.4, 0.6], timestamp=[1.0, 0.0])  # decreasing: the window refuses it
    sliced = Estimated(sm.Sliced(sm.F1())).update([0.2, 0.8], slices=["a", "b"])
    with pytest.raises(ValueError, match="slices"):
        sliced.update([0.4, 0.6], slices=["a"])  # one key for two rows
    for est, state in ((win, before), (sliced, None)):
        after = est.state_dict()
        if state is not None:
            assert after.keys() == state.keys()
            for k in state:
                if isinstance(state[k], np.ndarray):
                    np.testing.assert_array_equal(state[k], after[k])
    assert sliced.state_dict()["estimate.mean"].sum() == pytest.approx(2.0)


def test_loading_checks_the_moments_shapes():
    state = fed(sm.Accuracy()).state_dict()
    with pytest.raises(ValueError, match="shape"):
        sm.Metric.from_state_dict(dict(state, **{"estimate.mean": np.zeros((3, 3))}))
    with pytest.raises(ValueError, match="negative or non-finite"):
        sm.Metric.from_state_dict(dict(state, **{"estimate.var": np.full((2, 2), np.nan)}))
