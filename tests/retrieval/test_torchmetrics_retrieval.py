"""The retrieval measures against torchmetrics' retrieval set (``RetrievalPrecision``, ...,
``RetrievalHitRate``, ``RetrievalFallOut``) with its options ``empty_target_action`` and
``aggregation``, on random queries with empty ones (no relevant / no non-relevant document).

torchmetrics computes in float32 (its inputs are cast to float32, its per-query values and their
aggregate are float32 tensors): values agree to ``F32`` (a few float32 ulps of values in [0, 1]).
Its rank order of tied scores is unspecified (``torch.topk`` / ``argsort``), so the binary
measures are compared on scores whose ties join documents of the same relevance (every order of
them gives the same value); nDCG, which torchmetrics tie-averages, is compared with
``ties="average"`` on arbitrary ties. Scores are positive: torchmetrics counts a document scored
<= 0 as non-relevant in P@k, R@k, AP and RR (ours ranks it as any other).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import streammetrics as sm

torch = pytest.importorskip("torch")
tm = pytest.importorskip("torchmetrics.retrieval")

F32 = 1e-6  # float32 rounding of ratios and of their float32 mean over < 100 queries
ACTIONS = ("neg", "pos", "skip", "error")
AGGREGATIONS = ("mean", "median", "min", "max")

#: name -> (ours(k, **options), theirs(k, **options), graded data with arbitrary ties?)
PAIRS: dict[str, tuple[Callable[..., Any], Callable[..., Any], bool]] = {
    "precision": (lambda k, **o: sm.PrecisionAtK(k, **o), lambda k, **o: tm.RetrievalPrecision(top_k=k, **o), False),
    "recall": (lambda k, **o: sm.RecallAtK(k, **o), lambda k, **o: tm.RetrievalRecall(top_k=k, **o), False),
    "r_precision": (lambda k, **o: sm.RPrecision(**o), lambda k, **o: tm.RetrievalRPrecision(**o), False),
    "map": (lambda k, **o: sm.MAP(**o), lambda k, **o: tm.RetrievalMAP(**o), False),
    "mrr": (lambda k, **o: sm.MRR(k, **o), lambda k, **o: tm.RetrievalMRR(top_k=k, **o), False),
    "hit_rate": (lambda k, **o: sm.HitRateAtK(k, **o), lambda k, **o: tm.RetrievalHitRate(top_k=k, **o), False),
    "fall_out": (lambda k, **o: sm.FallOutAtK(k, **o), lambda k, **o: tm.RetrievalFallOut(top_k=k, **o), False),
    "auroc": (lambda k, **o: sm.AUROCAtK(k, **o), lambda k, **o: tm.RetrievalAUROC(top_k=k, **o), False),
    "ndcg": (lambda k, **o: sm.NDCG(k, ties="average", **o),
             lambda k, **o: tm.RetrievalNormalizedDCG(top_k=k, **o), True),
}


def queries(seed: int, graded: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(relevance, scores, query ids) of 5-30 queries of 1-9 documents, query rows contiguous;
    some queries hold no relevant and some no non-relevant document."""
    rng = np.random.default_rng(seed)
    n_q = int(rng.integers(5, 31))
    lengths = rng.integers(1, 10, size=n_q)
    qids = np.repeat(np.arange(n_q), lengths)
    p = rng.choice([0.0, 0.3, 1.0], size=n_q, p=[0.2, 0.6, 0.2])[qids]  # empty / mixed / full
    if graded:
        rel = np.where(rng.random(qids.size) < p, rng.integers(1, 4, size=qids.size), 0)
        scores = rng.integers(1, 5, size=qids.size) / 8.0  # arbitrary ties, exact in float32
    else:
        rel = (rng.random(qids.size) < p).astype(np.int64)
        scores = (2 * rng.integers(0, 4, size=qids.size) + rel + 1) / 16.0  # ties share relevance
    return rel, scores, qids


def theirs_value(metric: Any, rel: np.ndarray, scores: np.ndarray, qids: np.ndarray) -> float:
    metric.update(torch.tensor(scores, dtype=torch.float64), torch.tensor(rel), torch.tensor(qids))
    return float(metric.compute())


def ours_value(metric: Any, rel: np.ndarray, scores: np.ndarray, qids: np.ndarray) -> float:
    cut = np.flatnonzero(np.diff(qids)) + 1  # stream the queries in three batches
    parts = np.split(np.arange(qids.size), [cut[len(cut) // 3], cut[2 * len(cut) // 3]]) if len(cut) > 2 \
        else [np.arange(qids.size)]
    for idx in parts:
        metric.update(rel[idx], scores[idx], query_ids=qids[idx])
    return float(metric.compute())


@pytest.mark.parametrize("name", sorted(PAIRS))
@pytest.mark.parametrize("action", ACTIONS)
@pytest.mark.parametrize("aggregation", AGGREGATIONS)
def test_equals_torchmetrics(name: str, action: str, aggregation: str) -> None:
    ours, theirs, graded = PAIRS[name]
    for seed in range(6):
        rel, scores, qids = queries(seed, graded)
        k = 1 + seed % 4
        opts = {"empty_target_action": action, "aggregation": aggregation}
        mine, peer = ours(k, **opts), theirs(k, **opts)
        empty = sm.FallOutAtK(1, per_query=True) if name == "fall_out" else sm.HitRateAtK(per_query=True)
        empty.update(rel, scores, query_ids=qids)
        n_empty = int(((empty.per_query_values() == 0) if name != "fall_out" else
                       np.bincount(qids, weights=1 - rel.clip(0, 1)) == 0).sum())
        if action == "error" and n_empty:
            with pytest.raises(ValueError):
                theirs_value(peer, rel, scores, qids)
            with pytest.raises(ValueError, match="empty_target_action='error'"):
                ours_value(mine, rel, scores, qids)
            continue
        if action == "skip" and n_empty == np.unique(qids).size:
            continue  # every query skipped: torchmetrics gives 0.0, ours nan (test below)
        expected = theirs_value(peer, rel, scores, qids)
        assert ours_value(mine, rel, scores, qids) == pytest.approx(expected, abs=F32), (seed, k)


def test_every_query_skipped_is_nan_with_a_warning_where_torchmetrics_gives_zero() -> None:
    m = sm.HitRateAtK(empty_target_action="skip", aggregation="median")
    m.update([0, 0, 0], [0.3, 0.2, 0.1], query_ids=[1, 1, 2])
    assert m.n_queries == 0
    with pytest.warns(sm.UndefinedMetricWarning):
        assert np.isnan(m.compute())
    peer = tm.RetrievalHitRate(empty_target_action="skip")
    assert theirs_value(peer, np.array([0, 0, 0]), np.array([0.3, 0.2, 0.1]), np.array([1, 1, 2])) == 0.0


def test_median_is_the_lower_median_as_torch() -> None:
    m = sm.MRR(aggregation="median")
    m.update([1, 0, 0, 1, 0, 0, 1, 0, 0, 0, 1], [4, 3, 4, 3, 4, 3, 2, 1, 4, 3, 2], query_ids=[0, 0, 1, 1, 2, 2, 2,
                                                                                             3, 3, 3, 3])
    # per query: 1, 1/2, 1/3, 1/3 -> torch.median of four values is the 2nd smallest
    assert m.compute() == pytest.approx(1 / 3, abs=1e-15)
    assert float(torch.tensor([1.0, 0.5, 1 / 3, 1 / 3], dtype=torch.float64).median()) == pytest.approx(1 / 3)


@pytest.mark.parametrize("aggregation", AGGREGATIONS)
def test_aggregation_of_the_per_query_values(aggregation: str) -> None:
    rel, scores, qids = queries(11, False)
    m = sm.MAP(aggregation=aggregation, per_query=True)
    m.update(rel, scores, query_ids=qids)
    v = np.sort(m.per_query_values())
    expected = {"mean": v.mean(), "median": v[(v.size - 1) // 2], "min": v[0], "max": v[-1]}[aggregation]
    assert m.compute() == pytest.approx(expected, abs=1e-12)


def test_actions_on_an_empty_query() -> None:
    rel, scores, qids = [0, 0, 1, 0], [0.9, 0.8, 0.4, 0.1], ["a", "a", "b", "b"]
    assert sm.PrecisionAtK(1).update(rel, scores, query_ids=qids).compute() == 0.5
    assert sm.PrecisionAtK(1, empty_target_action="pos").update(rel, scores, query_ids=qids).compute() == 1.0
    skip = sm.PrecisionAtK(1, empty_target_action="skip", per_query=True).update(rel, scores, query_ids=qids)
    assert (skip.compute(), skip.n_queries, skip.per_query_values().tolist()) == (1.0, 1, [1.0])
    err = sm.PrecisionAtK(1, empty_target_action="error")
    err.update([1], [0.5])
    before = err._state_arrays()
    with pytest.raises(ValueError, match="query 'a' has no relevant document"):
        err.update(rel, scores, query_ids=qids)
    after = err._state_arrays()
    assert err.n_queries == 1 and after.keys() == before.keys()
    for key in before:
        np.testing.assert_array_equal(after[key], before[key], err_msg=key)
    # R from n_relevant: a query with relevant documents that retrieved none is not empty
    assert sm.MRR(empty_target_action="error").update([0, 0], [0.2, 0.1], n_relevant=2).compute() == 0.0


@pytest.mark.parametrize("bad", [("empty_target_action", "zero"), ("aggregation", "mode"), ("aggregation", None)])
def test_bad_options_name_the_argument(bad: tuple[str, Any]) -> None:
    name, value = bad
    with pytest.raises(ValueError, match=f"^{name}: "):
        sm.HitRateAtK(3, **{name: value})


def test_skip_is_refused_by_query_wrappers() -> None:
    w = sm.Window(sm.MAP(empty_target_action="skip"), size=3)
    with pytest.raises(ValueError, match="empty_target_action"):
        w.update([0, 1], [0.3, 0.2])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pos = sm.Window(sm.MAP(empty_target_action="pos"), size=3).update([0, 0], [0.3, 0.2])
        assert pos.compute() == 1.0


@pytest.mark.parametrize("k", [1, 3, 12])
def test_ap_at_k_found_and_adaptive_precision_equal_torchmetrics(k: int) -> None:
    for seed in range(6):
        rel, scores, qids = queries(seed, False)
        for ours, theirs in [(sm.MAP(k, denominator="found"), tm.RetrievalMAP(top_k=k)),
                             (sm.PrecisionAtK(k, adaptive_k=True), tm.RetrievalPrecision(top_k=k, adaptive_k=True))]:
            expected = theirs_value(theirs, rel, scores, qids)
            assert ours_value(ours, rel, scores, qids) == pytest.approx(expected, abs=F32), (seed, type(ours))


def test_ap_denominators_side_by_side() -> None:
    # ranks 1..4: relevant, no, relevant, no; R = 3 (one relevant document not retrieved); k = 2
    rel, scores = [1, 0, 1, 0], [0.4, 0.3, 0.2, 0.1]
    found = 1.0  # precision 1 at rank 1 over the 1 relevant document in the top 2
    for denominator, value in [("found", found), ("min_k_r", 1 / 2), ("R", 1 / 3)]:
        m = sm.MAP(2, denominator=denominator).update(rel, scores, n_relevant=3)
        assert m.compute() == pytest.approx(value, abs=1e-15), denominator
    # without a cutoff "found" divides by the relevant retrieved documents, "R" by R
    assert sm.MAP(denominator="found").update(rel, scores, n_relevant=3).compute() == pytest.approx((1 + 2 / 3) / 2)
    assert sm.MAP().update(rel, scores, n_relevant=3).compute() == pytest.approx((1 + 2 / 3) / 3)


def test_adaptive_k_divides_short_lists_by_their_length() -> None:
    rel, scores, qids = [1, 0, 1], [0.3, 0.2, 0.1], ["a", "a", "b"]
    assert sm.PrecisionAtK(3, adaptive_k=True).update(rel, scores, query_ids=qids).compute() == pytest.approx(
        (1 / 2 + 1) / 2)
    assert sm.PrecisionAtK(3).update(rel, scores, query_ids=qids).compute() == pytest.approx((1 / 3 + 1 / 3) / 2)
    assert sm.PrecisionAtK(3, adaptive_k=True).update([], []).compute() == 0.0  # an empty list scores 0


@pytest.mark.parametrize("seed", range(5))
def test_auroc_per_query_equals_scikit_learn_on_arbitrary_ties(seed: int) -> None:
    from sklearn.metrics import roc_auc_score

    rel, scores, qids = queries(seed, True)
    rel = (rel > 0).astype(int)
    for k in (None, 3):
        m = sm.AUROCAtK(k, per_query=True).update(rel, scores, query_ids=qids)
        expected = []
        for q in np.unique(qids):
            r, s = rel[qids == q], scores[qids == q]
            top = np.argsort(-s, kind="stable")[:k]  # ties at the cutoff: input order, as ours
            r, s = r[top], s[top]
            expected.append(roc_auc_score(r, s) if 0 < r.sum() < r.size else 0.0)
        np.testing.assert_allclose(m.per_query_values(), expected, rtol=0, atol=1e-12)


def test_a_metric_set_shares_one_ranking_and_equals_each_member_alone() -> None:
    rel, scores, qids = queries(5, False)
    members = {"ap": lambda: sm.MAP(aggregation="median", empty_target_action="skip"),
               "ap_pq": lambda: sm.MAP(per_query=True), "hit": lambda: sm.HitRateAtK(2, empty_target_action="pos"),
               "auc": lambda: sm.AUROCAtK(aggregation="max"), "fo": lambda: sm.FallOutAtK(3)}
    ms = sm.MetricSet({name: make() for name, make in members.items()})
    ms.update(rel, scores, query_ids=qids)
    alone = {name: make().update(rel, scores, query_ids=qids).compute() for name, make in members.items()}
    assert ms.compute() == pytest.approx(alone, abs=1e-15)
    assert ms["ap"]._state is ms["hit"]._state


@pytest.mark.parametrize("name", sorted(PAIRS))
def test_ignore_index_equals_torchmetrics(name: str) -> None:
    ours, theirs, graded = PAIRS[name]
    for seed in range(4):
        rel, scores, qids = queries(seed, graded)
        rng = np.random.default_rng(seed)
        rel = np.where(rng.random(rel.size) < 0.2, -100, rel)  # padding rows, some queries all padding
        rel[qids == qids[-1]] = -100
        k = 1 + seed % 3
        opts = {"ignore_index": -100, "empty_target_action": "skip"}
        expected = theirs_value(theirs(k, **opts), rel, scores, qids)
        mine = ours(k, **opts)
        assert ours_value(mine, rel, scores, qids) == pytest.approx(expected, abs=F32), seed
        assert mine.n_queries <= np.unique(qids[rel != -100]).size


def test_ignore_index_drops_rows_everywhere_a_batch_is_read() -> None:
    rel, scores, qids = [1, -1, 0, 1, -1, -1], [0.9, 0.8, 0.7, 0.6, 0.5, 0.4], [1, 1, 1, 1, 2, 2]
    clean = sm.MAP().update([1, 0, 1], [0.9, 0.7, 0.6]).compute()
    assert sm.MAP(ignore_index=-1).update(rel, scores, query_ids=qids).compute() == clean
    window = sm.Window(sm.MAP(ignore_index=-1), size=5).update(rel, scores, query_ids=qids)
    assert window.compute() == clean
    ms = sm.MetricSet(a=sm.MAP(ignore_index=-1), b=sm.MRR(ignore_index=-1), c=sm.MAP())
    assert ms["a"]._state is ms["b"]._state and ms["a"]._state is not ms["c"]._state
    ms.update(rel, scores, query_ids=qids)
    assert ms.compute()["a"] == clean and ms.compute()["c"] == sm.MAP().update(rel, scores, query_ids=qids).compute()
    # a query whose rows are all ignored disappears; its n_relevant must then come by query id
    with pytest.raises(ValueError, match="^n_relevant: query 2 has only rows"):
        sm.MAP(ignore_index=-1).update(rel, scores, query_ids=qids, n_relevant=[2, 1])
    assert sm.MAP(ignore_index=-1).update(rel, scores, query_ids=qids, n_relevant={1: 2}).compute() == clean
    with pytest.raises(ValueError, match="^ignore_index: "):
        sm.MAP(ignore_index=0.5)


@pytest.mark.parametrize("name", sorted(PAIRS))
@pytest.mark.parametrize("shape", [(-1, 6), (-1, 2, 3)])
def test_multidimensional_inputs_are_flattened_as_torchmetrics(name: str, shape: tuple[int, ...]) -> None:
    ours, theirs, graded = PAIRS[name]
    for seed in range(4):
        rel, scores, qids = queries(seed, graded)
        n = rel.size - rel.size % 6
        rel, scores, qids = (a[:n].reshape(shape) for a in (rel, scores, qids))
        k = 1 + seed % 3
        peer = theirs(k)  # the defaults on both sides (RetrievalFallOut's and FallOutAtK's: "pos")
        peer.update(torch.tensor(scores, dtype=torch.float64), torch.tensor(rel), torch.tensor(qids))
        mine = ours(k).update(rel, scores, query_ids=qids)
        assert mine.compute() == pytest.approx(float(peer.compute()), abs=F32), seed
        flat = ours(k).update(rel.ravel(), scores.ravel(), query_ids=qids.ravel())
        assert mine.compute() == flat.compute() and mine.n_queries == flat.n_queries
        as_tensors = ours(k).update(torch.tensor(rel), torch.tensor(scores), query_ids=torch.tensor(qids))
        as_lists = ours(k).update(rel.tolist(), scores.tolist(), query_ids=qids.tolist())
        assert as_tensors.compute() == as_lists.compute() == flat.compute()


def test_multidimensional_inputs_flatten_in_c_order() -> None:
    rel = np.array([[1, 0], [0, 1]])
    scores = np.array([[0.9, 0.8], [0.7, 0.6]])
    # C order: ids a, a, b, b (Fortran order a, b, a, b: not contiguous); query a ranks 1, 0 (AP 1),
    # query b ranks 0, 1 (AP 1/2)
    qids = np.array([["a", "a"], ["b", "b"]])
    m = sm.MAP(per_query=True).update(rel, scores, query_ids=qids)
    assert m.per_query_values().tolist() == [1.0, 0.5]
    with pytest.raises(ValueError, match="contiguous"):  # the same arrays in Fortran order
        sm.MAP().update(rel.ravel(order="F"), scores.ravel(order="F"), query_ids=qids.ravel(order="F"))
    assert sm.MAP().update(rel, scores).compute() == pytest.approx((1 + 2 / 4) / 2, abs=1e-15)


@pytest.mark.parametrize("bad", [
    ("scores", {"scores": np.zeros((3, 2))}, r"\(2, 3\).*got shape \(3, 2\)"),
    ("scores", {"scores": np.zeros(6)}, r"\(2, 3\).*got shape \(6,\)"),
    ("query_ids", {"query_ids": np.zeros((2, 2, 3), dtype=int)}, r"\(2, 3\).*got shape \(2, 2, 3\)"),
    ("query_ids", {"query_ids": [0, 0, 0, 1, 1, 1]}, r"\(2, 3\).*got shape \(6,\)"),
    ("doc_ids", {"doc_ids": np.arange(6).reshape(3, 2)}, r"\(2, 3\).*got shape \(3, 2\)"),
])
def test_multidimensional_shape_mismatch_names_the_argument_and_keeps_the_state(bad: tuple[str, Any, str]) -> None:
    name, change, pattern = bad
    args = {"relevance": np.array([[1, 0, 1], [0, 1, 0]]), "scores": np.full((2, 3), 0.5) + np.arange(3),
            "query_ids": np.array([[0, 0, 0], [1, 1, 1]])}
    args.update(change)
    for m in (sm.MAP(per_query=True), sm.MetricSet(a=sm.MAP(), b=sm.AUROCAtK())):
        m.update([1, 0], [0.4, 0.3])
        before = m.compute()
        with pytest.raises(ValueError, match=f"^{name}: expected the shape of relevance {pattern}"):
            m.update(**args)
        assert m.compute() == before
    # scores multidimensional and relevance flat: the message names relevance's shape first
    with pytest.raises(ValueError, match=r"^scores: expected the shape of relevance \(6,\) .*, got shape \(2, 3\)"):
        sm.MAP().update(np.zeros(6), np.zeros((2, 3)))


@pytest.mark.parametrize("seed", range(6))
def test_auroc_max_fpr_per_query_equals_scikit_learn_on_arbitrary_ties(seed: int) -> None:
    from sklearn.metrics import roc_auc_score

    rel, scores, qids = queries(seed, True)
    rel = (rel > 0).astype(int)
    rng = np.random.default_rng(seed)
    for k, max_fpr in [(None, float(rng.uniform(0.05, 0.95))), (4, 0.5), (None, 0.25), (None, 1.0), (6, 1 / 3)]:
        m = sm.AUROCAtK(k, per_query=True, max_fpr=max_fpr).update(rel, scores, query_ids=qids)
        expected = []
        for q in np.unique(qids):
            r, s = rel[qids == q], scores[qids == q]
            top = np.argsort(-s, kind="stable")[:k]  # ties at the cutoff: input order, as ours
            r, s = r[top], s[top]
            expected.append(roc_auc_score(r, s, max_fpr=max_fpr) if 0 < r.sum() < r.size else 0.0)
        np.testing.assert_allclose(m.per_query_values(), expected, rtol=0, atol=1e-12, err_msg=f"{k} {max_fpr}")


@pytest.mark.parametrize("max_fpr", [0.1, 0.5, 0.8, 1.0])
def test_auroc_max_fpr_equals_torchmetrics(max_fpr: float) -> None:
    for seed in range(6):
        rel, scores, qids = queries(seed, False)
        k = None if seed % 2 else 2 + seed
        peer = tm.RetrievalAUROC(top_k=k, max_fpr=max_fpr, aggregation="mean")
        expected = theirs_value(peer, rel, scores, qids)
        mine = sm.AUROCAtK(k, max_fpr=max_fpr)
        assert ours_value(mine, rel, scores, qids) == pytest.approx(expected, abs=F32), (seed, k)


def test_auroc_max_fpr_is_saved_and_checked() -> None:
    m = sm.AUROCAtK(3, max_fpr=0.25).update([1, 0, 0, 1], [0.9, 0.8, 0.7, 0.6])
    assert m._config()["max_fpr"] == 0.25
    loaded = sm.loads(sm.dumps(m))
    assert loaded.max_fpr == 0.25 and loaded.compute() == m.compute()
    assert sm.AUROCAtK(max_fpr=1).update([1, 0, 1], [3, 2, 1]).compute() == 0.5  # 1: the whole curve
    for bad in (0, -0.1, 1.5, float("nan"), "abc", [0.5]):
        with pytest.raises(ValueError, match="^max_fpr: "):
            sm.AUROCAtK(max_fpr=bad)


def _stream(metric: Any, rel: np.ndarray, scores: np.ndarray, qids: np.ndarray) -> Any:
    """Update in three batches of whole queries, save and load in between; the computed value."""
    cut = np.flatnonzero(np.diff(qids)) + 1
    parts = np.split(np.arange(qids.size), [cut[len(cut) // 3], cut[2 * len(cut) // 3]]) if len(cut) > 2 \
        else [np.arange(qids.size)]
    for idx in parts:
        metric = sm.loads(sm.dumps(metric.update(rel[idx], scores[idx], query_ids=qids[idx])))
    return metric.compute()


@pytest.mark.parametrize("action", ACTIONS)
@pytest.mark.parametrize("aggregation", AGGREGATIONS)
@pytest.mark.parametrize("adaptive", [False, True])
def test_precision_recall_curve_and_recall_at_fixed_precision_equal_torchmetrics(
        action: str, aggregation: str, adaptive: bool) -> None:
    """``PrecisionRecallAtK`` = ``RetrievalPrecisionRecallCurve(max_k=)`` and
    ``RecallAtFixedPrecision`` = ``RetrievalRecallAtFixedPrecision`` (cutoffs shorter and longer
    than the lists, every action and aggregation), streamed in batches through save/load."""
    for seed in range(5):
        rel, scores, qids = queries(seed, False)
        max_k = (2, 5, 12)[seed % 3]
        opts = {"empty_target_action": action, "aggregation": aggregation}
        n_empty = int((np.bincount(qids, weights=rel) == 0).sum())
        mine = sm.PrecisionRecallAtK(max_k, adaptive_k=adaptive, **opts)
        peer = tm.RetrievalPrecisionRecallCurve(max_k=max_k, adaptive_k=adaptive, **opts)
        if action == "error" and n_empty:
            with pytest.raises(ValueError, match="empty_target_action='error'"):
                _stream(mine, rel, scores, qids)
            continue
        if action == "skip" and n_empty == np.unique(qids).size:
            continue
        peer.update(torch.tensor(scores, dtype=torch.float64), torch.tensor(rel), torch.tensor(qids))
        want = [t.numpy() for t in peer.compute()]
        got = _stream(mine, rel, scores, qids)
        np.testing.assert_allclose(got[0], want[0], atol=F32)
        np.testing.assert_allclose(got[1], want[1], atol=F32)
        assert got[2].tolist() == want[2].tolist()
        for min_precision in (0.0, 0.26, 0.55, 0.93):
            fixed = tm.RetrievalRecallAtFixedPrecision(min_precision, max_k=max_k, adaptive_k=adaptive,
                                                       empty_target_action=action)  # fmt: skip
            fixed.update(torch.tensor(scores, dtype=torch.float64), torch.tensor(rel), torch.tensor(qids))
            recall, k = (float(x) for x in fixed.compute())
            ours = _stream(sm.RecallAtFixedPrecision(min_precision, max_k, adaptive_k=adaptive,
                                                     empty_target_action=action), rel, scores, qids)  # fmt: skip
            assert ours[0] == pytest.approx(recall, abs=F32) and ours[1] == int(k), (seed, min_precision)


def test_precision_recall_curve_options_and_per_query_values() -> None:
    m = sm.PrecisionRecallAtK(3, per_query=True).update([1, 0, 1, 0], [0.9, 0.8, 0.7, 0.6], query_ids=[1, 1, 2, 2])
    precision, recall = m.per_query_values()
    assert precision.tolist() == [[1.0, 0.5, 1 / 3], [1.0, 0.5, 1 / 3]] and recall.tolist() == [[1.0] * 3] * 2
    for bad, match in ((lambda: sm.PrecisionRecallAtK(0), "max_k: expected an integer from 1 to 65536"),
                       (lambda: sm.PrecisionRecallAtK(2**16 + 1), "max_k"),
                       (lambda: sm.PrecisionRecallAtK(None), "max_k"),
                       (lambda: sm.RecallAtFixedPrecision(1.5, 3), "min_precision")):
        with pytest.raises(ValueError, match=match):
            bad()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", sm.UndefinedMetricWarning)
        empty = sm.RecallAtFixedPrecision(0.5, 4).compute()
    assert np.isnan(empty[0]) and empty[1] == 4
