"""Drift's input checks: a bad batch is a ValueError naming the argument and the first bad
value, and leaves the state exactly as it was; a bad reference or a hostile saved reference
is refused."""

from __future__ import annotations

import numpy as np
import pytest

import streammetrics as sm
from streammetrics.monitoring import Drift


def state_of(d: Drift) -> dict:
    return {k: v for k, v in d.state_dict().items() if k not in ("class", "format_version")}


@pytest.mark.parametrize(("batch", "weights", "match"), [
    ([0.1, np.nan, 0.3], None, r"y_score: scores must be finite; first invalid value nan at index 1"),
    ([0.1, 0.2, np.inf], None, r"y_score: .*inf at index 2"),
    ([[0.1, 0.2]], None, r"y_score: .*expected shape \(n,\)"),
    (["a", "b"], None, "y_score"),
    ([0.1, 0.2], [1.0, -1.0], r"sample_weight: .*-1.0 at index 1"),
    ([0.1, 0.2], [1.0], r"sample_weight: expected shape \(2,\)"),
])
def test_a_rejected_batch_names_the_problem_and_changes_nothing(batch, weights, match):
    d = Drift([0.0, 0.5, 1.0], bins=2).update([0.2, 0.7])
    before, value = state_of(d), d.compute()
    with pytest.raises(ValueError, match=match):
        d.update(batch, sample_weight=weights)
    after = state_of(d)
    assert before.keys() == after.keys()
    for k in before:
        np.testing.assert_array_equal(np.asarray(before[k], dtype=object), np.asarray(after[k], dtype=object))
    assert d.compute() == value


def test_multiclass_rows_must_have_the_reference_width():
    d = Drift(np.eye(3))
    with pytest.raises(ValueError, match=r"y_score: the reference holds 3 scores per row"):
        d.update(np.ones((2, 4)))
    d.update([0.2, 0.5, 0.3])  # one row alone
    assert d._state.sample_count() == 1  # noqa: SLF001


@pytest.mark.parametrize(("reference", "match"), [
    ([], "reference: needs at least one score"),
    ([0.1, np.inf], r"reference: scores must be finite; first invalid value inf at index 1"),
    (np.zeros((3, 1)), r"reference: scores of shape \(n, 1\)"),
    (np.zeros((2, 2, 2)), "reference: expected scores of shape"),
    ({"columns": None}, "reference: 'edges'"),
])
def test_a_bad_reference_is_refused(reference, match):
    with pytest.raises(ValueError, match=match):
        Drift(reference)


@pytest.mark.parametrize(("change", "match"), [
    (lambda c: c.update(lows=[[0.5, 0.1]]), "increasing"),
    (lambda c: c.update(counts=[[1.0, -1.0]]), "counts"),
    (lambda c: c.update(hist=[[0.0, 0.0]]), "hist"),
    (lambda c: c.update(edges=[[0.0, float("nan"), 1.0]]), "finite"),
    (lambda c: c.update(edges=[[1.0, 0.0, 1.0]]), "non-decreasing"),
    (lambda c: c.update(extra=1), "unexpected"),
    (lambda c: c.update(columns=True), "columns"),
])
def test_a_hostile_saved_reference_is_refused(change, match):
    d = Drift([0.1, 0.9], bins=2).update([0.3])
    sd = d.state_dict()
    change(sd["config"]["reference"])
    with pytest.raises(ValueError, match=match):
        sm.Metric.from_state_dict(sd)


def test_merge_refuses_another_reference():
    a, b = Drift([0.1, 0.9]).update([0.3]), Drift([0.2, 0.9]).update([0.3])
    with pytest.raises(ValueError, match="merge: configuration mismatch"):
        a.merge(b)


def test_bins_are_checked():
    with pytest.raises(ValueError, match="bins"):
        Drift([0.1], bins=0)


@pytest.mark.parametrize(("change", "match"), [
    (lambda sd: sd.update(hist=-sd["hist"]), "hist"),
    (lambda sd: sd.update(hist=sd["hist"][:, :1]), "hist"),
    (lambda sd: sd.pop("classes"), "classes"),
    (lambda sd: sd.update(extra=np.zeros(1)), "unexpected"),
    (lambda sd: sd.update(scores_values=np.full_like(sd["scores_values"], np.nan)), "state"),
])
def test_tampered_state_arrays_are_refused(change, match):
    sd = Drift([0.1, 0.5, 0.9], bins=2).update([0.2, 0.6]).state_dict()
    change(sd)
    with pytest.raises(ValueError, match=match):
        sm.Metric.from_state_dict(sd)


def test_forward_returns_the_batch_drift_and_folds_it_in():
    d = Drift([0.1, 0.5, 0.9], bins=2)
    batch = d([0.2, 0.6])
    assert batch == Drift([0.1, 0.5, 0.9], bins=2).update([0.2, 0.6]).compute() == d.compute()


@pytest.mark.parametrize(("change", "match"), [
    (lambda c: c.update(counts=[[1.0, 2.0]]), r"column 0 holds 2.0 scores in 'hist' and 3.0 in 'counts'"),
    (lambda c: c.update(counts=[[0.5, 1.5]]), r"'counts' must be whole counts; first invalid value 0.5"),
    (lambda c: c.update(hist=[[1.5, 0.5]]), r"'hist' must be whole counts; first invalid value 1.5"),
])
def test_a_saved_reference_whose_counts_disagree_is_refused(change, match):
    """The reference is unweighted: its bin counts, row counts and class counts are whole numbers
    that total its rows (a hostile file moving them apart is refused, issue #31)."""
    sd = Drift([0.1, 0.9], bins=2).update([0.3]).state_dict()
    change(sd["config"]["reference"])
    with pytest.raises(ValueError, match=match):
        sm.Metric.from_state_dict(sd)


def test_a_saved_multiclass_reference_whose_class_counts_disagree_is_refused():
    sd = Drift(np.eye(3)).update([0.2, 0.5, 0.3]).state_dict()
    sd["config"]["reference"]["classes"] = [1.0, 1.0, 2.0]
    with pytest.raises(ValueError, match=r"reference: 'classes' counts 4.0 rows, 'hist' 3.0"):
        sm.Metric.from_state_dict(sd)
    sd["config"]["reference"]["classes"] = [1.0, 1.0, 1.0]
    assert sm.Metric.from_state_dict(sd).compute()["class_psi"] == Drift(np.eye(3)).update([0.2, 0.5, 0.3]).compute()["class_psi"]


def test_drift_and_estimated_are_top_level_names():
    """Issue #31: the monitoring family is exported at the top level, both spellings the same."""
    from streammetrics.monitoring import Estimated

    assert sm.Drift is Drift and sm.Estimated is Estimated
    assert {"Drift", "Estimated"} <= set(sm.__all__)


def _moved(sd: dict, key: str, change) -> dict:
    out = dict(sd)
    out[key] = change(np.array(sd[key], dtype=np.float64))
    return out


@pytest.mark.parametrize("max_bytes", [None, 2048])
@pytest.mark.parametrize(("key", "change", "match"), [
    ("hist", lambda h: h[:, ::-1].copy(), r"state: the bin counts of column 0 put weight"),
    ("hist", lambda h: h * 2, r"state: column 0 holds scores of total weight"),
    ("hist", lambda h: h + np.array([[1.0, -1.0, 0.0, 0.0]]) * h[0, 1] / 2, r"state: the bin counts of column 0"),
])
def test_a_file_whose_bin_counts_disagree_with_its_scores_is_refused(max_bytes, key, change, match):
    """Issue #31: the PSI / JS bin counts of a loaded Drift are checked against its stored scores
    (exactly for the exact buffer, between the bins' envelopes for the bounded one)."""
    rng = np.random.default_rng(3)
    d = Drift(rng.random(200), bins=4, max_bytes=max_bytes).update(rng.random(500), sample_weight=rng.random(500) + 0.5)
    sd = d.state_dict()
    assert sm.Metric.from_state_dict(sd).compute() == d.compute()  # the untouched file loads
    with pytest.raises(ValueError, match=match):
        sm.Metric.from_state_dict(_moved(sd, key, change))


@pytest.mark.parametrize("max_bytes", [None, 8192])
def test_a_file_whose_class_counts_disagree_with_its_scores_is_refused(max_bytes):
    rng = np.random.default_rng(4)
    d = Drift(rng.random((100, 3)), bins=3, max_bytes=max_bytes).update(rng.random((300, 3)))
    sd = d.state_dict()
    with pytest.raises(ValueError, match=r"state: class 0 has weight .* in the class counts"):
        sm.Metric.from_state_dict(_moved(sd, "classes", lambda c: c[[1, 0, 2]] if c[0] != c[1] else c + [1, -1, 0]))


def test_valid_states_with_float_weights_decay_and_merges_load():
    """What the check allows: sums in another order, merges, decay of the bounded state."""
    rng = np.random.default_rng(5)
    ref = rng.random((200, 3))
    cases = [(lambda: Drift(ref, bins=5), 3), (lambda: Drift(ref, bins=5, max_bytes=8192), 3),
             (lambda: Drift(ref[:, 0], bins=7), None),
             (lambda: sm.Decayed(Drift(ref[:, 0], max_bytes=2048), half_life=2.0), None)]
    for make, columns in cases:
        parts = [make() for _ in range(3)]
        for i in range(30):
            x = rng.random(40) if columns is None else rng.random((40, columns))
            parts[i % 3].update(x, sample_weight=rng.random(40) * 10.0 ** rng.integers(-5, 5))
        m = parts[0].merge(*parts[1:])
        again = sm.loads(sm.dumps(m))
        assert sm.dumps(again) == sm.dumps(m)


@pytest.mark.parametrize(("reference", "batch"), [
    ([0.1, 0.5, 0.9], [0.2, 0.6]),
    (np.eye(3), [[0.2, 0.5, 0.3], [0.1, 0.1, 0.8]]),
])
@pytest.mark.parametrize("bad", [np.inf, -np.inf])
def test_a_file_whose_exact_scores_are_not_finite_is_refused(reference, batch, bad):
    """A fresh-seed run of the load fuzzer found it: an infinite score in a loaded exact buffer
    made KS / Wasserstein halve the scores forever (RecursionError). Refused at load, naming the
    column and the value; the untouched file loads."""
    sd = Drift(reference, bins=2).update(batch).state_dict()
    assert sm.dumps(sm.Metric.from_state_dict(sd)) == sm.dumps(Drift(reference, bins=2).update(batch))
    values = np.array(sd["scores_values"], dtype=np.float64)
    values[-1 if bad > 0 else 0] = bad  # each class's group stays sorted
    sd["scores_values"] = values
    with pytest.raises(ValueError, match=rf"state: column \d holds a non-finite score; first invalid value {bad!r}"):
        sm.Metric.from_state_dict(sd)


def test_the_distance_kernel_refuses_infinite_scores_instead_of_recursing():
    from streammetrics.monitoring._drift_stats import ks_wasserstein_blocks

    ones = np.ones(2)
    with pytest.raises(ValueError, match="scores must be finite"):
        ks_wasserstein_blocks(np.array([0.0, np.inf]), ones, np.array([0.5, 1.0]), None)
