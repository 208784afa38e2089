"""Retrieval accumulators: MetricSet sharing, bad input, tie averaging.

The protocol laws (batch split, merge, save/load, prefix, rejected input) run for every
retrieval configuration of the shared registry (``tests/_support/laws.py``; with judged grades and
document ids in ``judged_set``, fed partly one query per update without query ids) in
``tests/test_protocol_laws.py``; a member of a set saves and loads alone there too.
"""

from __future__ import annotations

import numpy as np
import pytest
import retrieval_oracles as O
from hypothesis import given, settings
from hypothesis import strategies as st
from laws import retrieval_metrics

import streammetrics as sm
from streammetrics.retrieval.metrics import (
    CG,
    DCG,
    MAP,
    MRR,
    NDCG,
    PrecisionAtK,
    PrecisionAtRecall,
    RecallAtK,
    RPrecision,
    SetPrecision,
)


def test_metricset_shares_one_state_and_members_stay_independent_in_state_dict():
    ms = sm.MetricSet(ndcg=NDCG(10), ap=MAP(), rr=MRR())
    assert ms.groups == [["ndcg", "ap", "rr"]]
    ms.update([2, 0, 1], [0.3, 0.2, 0.1])
    alone = NDCG(10).update([2, 0, 1], [0.3, 0.2, 0.1])
    assert ms["ndcg"].compute() == alone.compute()
    assert set(ms["ap"].state_dict()) == set(MAP().state_dict())
    copy = ms.copy()
    assert copy.groups == ms.groups and copy.compute() == ms.compute()
    # a metric that already holds data joins a set only by its own state
    used = MAP().update([1, 0], [1, 0])
    ms2 = sm.MetricSet(ap=used, rr=MRR())
    assert len(ms2.groups) == 2
    with pytest.warns(sm.UndefinedMetricWarning, match="MRR: no queries"):
        assert ms2.compute()["ap"] == 1.0


def test_per_query_off_by_default_keeps_constant_memory():
    m = MAP()
    before = m.nbytes
    rng = np.random.default_rng(0)
    for _ in range(50):
        m.update(rng.integers(0, 2, 20), rng.random(20))
    assert m.nbytes == before
    with pytest.raises(ValueError, match="per_query=True"):
        m.per_query_values()
    kept = MAP(per_query=True)
    kept.update([1, 0], [1, 0]).update([0, 1], [1, 0])
    np.testing.assert_allclose(kept.per_query_values(), [1.0, 0.5])


def test_merge_config_mismatch():
    with pytest.raises(ValueError, match="configuration mismatch"):
        MAP(5).merge(MAP(10))


BAD = [
    (dict(relevance=[1, np.nan], scores=[1, 2]), "relevance: grades must be finite"),
    (dict(relevance=[1, 0], scores=[1, np.nan]), "scores: scores must not be NaN; first NaN at index 1"),
    (dict(relevance=[1, 0], scores=[1, 2, 3]), "scores: expected 2 scores"),
    (dict(relevance=[1, 0, 1], scores=[1, 2, 3], query_ids=["a", "b", "a"]), "query 'a' reappears at row 2"),
    (dict(relevance=[1, 0], scores=[1, 2], query_ids=["a"]), "query_ids: expected 2 ids"),
    (dict(relevance=[1, 0], scores=[1, 2], judged=[1, 1, 0], n_relevant=1), "judged/n_relevant: disagree"),
    (dict(relevance=[1, 1], scores=[1, 2], n_relevant=1), "retrieved 2 relevant documents"),
    (dict(relevance=[1, 0], scores=[1, 2], n_relevant=-1), "n_relevant: expected a non-negative integer"),
    (dict(relevance=[1, 0], scores=[1, 1], doc_ids=["x", "x"]), "doc_ids: duplicate document 'x'"),
    (dict(relevance=[[1, 0]], scores=[[1, 1], [0, 0]]), "scores: expected the shape of relevance"),
    (
        dict(relevance=[1, 0], scores=[1, 2], query_ids=["a", "b"], judged={"a": [1], "b": [np.inf]}),
        "judged: grades must be finite",
    ),
]


@pytest.mark.parametrize("kwargs,message", BAD)
def test_bad_input_is_rejected_atomically(kwargs, message):
    ms = sm.MetricSet(retrieval_metrics(per_query=True))
    ms.update([1, 0, 2], [0.3, 0.2, 0.1])
    before = ms.state_dict()
    with pytest.raises(ValueError, match=message.replace("(", r"\(")):
        ms.update(**kwargs)
    after = ms.state_dict()
    assert before.keys() == after.keys()
    for k in before:
        if k != "config":
            np.testing.assert_array_equal(before[k], after[k])


def test_grade_above_rel_max_and_bad_constructor_arguments():
    with pytest.raises(ValueError, match="exceeds rel_max=3"):
        CG(3, normalize=True, rel_max=3).update([4, 0], [1, 0])
    for make, msg in [
        (lambda: PrecisionAtK(0), "k: expected a positive integer"),
        (lambda: MAP(denominator="x"), "denominator: expected one of"),
        (lambda: MAP(ties="average"), "ties: 'average'"),
        (lambda: NDCG(gain="cubic"), "gain: expected one of"),
        (lambda: CG(3, normalize=True), "rel_max: normalize=True needs"),
        (lambda: PrecisionAtRecall(1.5), r"r: expected a recall level in \[0, 1\]"),
        (lambda: SetPrecision(average="weighted"), "average: expected one of"),
    ]:
        with pytest.raises(ValueError, match=msg):
            make()


def test_corrupt_state_is_rejected():
    m = MAP(per_query=True).update([1, 0], [1, 0])
    d = m.state_dict()
    name = next(k for k in d if k.endswith(".values"))
    bad = dict(d, **{name: np.zeros((5, 1))})
    with pytest.raises(ValueError, match="values must have shape"):
        MAP.from_state_dict(bad)
    cnt = next(k for k in d if k.endswith(".count"))
    with pytest.raises(ValueError, match="one non-negative integer"):
        MAP.from_state_dict(dict(d, **{cnt: np.array([-1])}))
    with pytest.raises(ValueError, match="missing array"):
        MAP.from_state_dict({k: v for k, v in d.items() if k != cnt})
    with pytest.raises(ValueError, match="unexpected arrays"):
        MAP.from_state_dict(dict(d, extra=np.zeros(1)))


def test_mixing_families_in_a_metricset_is_rejected():
    with pytest.raises(ValueError, match="different update shapes"):
        sm.MetricSet(ap=MAP(), acc=sm.Accuracy())


def test_integer_doc_ids_tie_break_as_strings():
    # trec_eval compares ids as strings: "9" > "10", so doc 9 ranks first among ties.
    m = MRR()
    m.update([0, 1], [1.0, 1.0], doc_ids=[10, 9])
    assert m.compute() == 1.0


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 3), st.integers(0, 2)), min_size=1, max_size=6),
    st.integers(1, 4),
)
def test_tie_average_equals_the_mean_over_all_orders_of_tied_documents(docs, k):
    from itertools import permutations

    grades = [float(g) for g, _ in docs]
    scores = [float(s) for _, s in docs]
    R = sum(1 for g in grades if g >= 1)
    orders = set()
    for perm in permutations(range(len(docs))):  # every ranking consistent with the scores
        if all(scores[perm[i]] >= scores[perm[i + 1]] for i in range(len(perm) - 1)):
            orders.add(perm)
    rankings = [[grades[i] for i in p] for p in orders]

    def mean(f):
        return float(np.mean([f(r) for r in rankings]))

    want = {
        "p": mean(lambda r: O.precision_at_k(r, k)),
        "r": mean(lambda r: O.recall_at_k(r, k, R)),
        "rp": mean(lambda r: O.r_precision(r, R)),
        "cg": mean(lambda r: O.cg(r, k)),
        "dcg": mean(lambda r: O.dcg(r, k, "exponential")),
        "ndcg": mean(lambda r: O.ndcg(r, None, k)),
    }
    ms = sm.MetricSet(
        p=PrecisionAtK(k, ties="average"),
        r=RecallAtK(k, ties="average"),
        rp=RPrecision(ties="average"),
        cg=CG(k, ties="average"),
        dcg=DCG(k, gain="exponential", ties="average"),
        ndcg=NDCG(k, ties="average"),
    )
    ms.update(grades, scores)
    got = ms.compute()
    for name, value in want.items():
        assert abs(got[name] - value) <= 1e-12 * max(1.0, abs(value)), (name, got[name], value)
