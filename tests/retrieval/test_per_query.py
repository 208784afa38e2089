"""The one per-query kernel (streammetrics/_queries/per_query.py): with ``rounding="trec_eval"`` every
measure equals a left-to-right loop in trec_eval's order of operations and pytrec_eval itself bit
for bit; with ``rounding="numpy"`` it agrees within rounding; ``ties="average"`` is the mean over
every order of the tied documents."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
import pytrec_eval
from hypothesis import given, settings
from hypothesis import strategies as st

from streammetrics._queries.per_query import Ranked, dcg_at, divide, tie_average, tie_groups

CUTS = [1, 3, 5, 10, 50]


def _loop_values(rel: list[bool], R: int, grades: list[float], ideal: list[float]) -> dict[str, list[float]]:
    """trec_eval's per-query definitions as C loops: every sum left to right in rank order."""
    n = len(rel)
    out: dict[str, list[float]] = {}
    hits = 0
    psum = 0.0
    psums = []
    cum = []
    first = 0
    for i, r in enumerate(rel):
        if r:
            hits += 1
            psum += hits / (i + 1)
            first = first or i + 1
        cum.append(hits)
        psums.append(psum)
    at = [cum[min(k, n) - 1] if n else 0 for k in CUTS]
    out["P"] = [h / k for h, k in zip(at, CUTS, strict=True)]
    out["recall"] = [h / R if R else 0.0 for h in at]
    out["ap"] = [psum / R if R else 0.0]
    out["ap_cut"] = [(psums[min(k, n) - 1] if n else 0.0) / R if R else 0.0 for k in CUTS]
    k = min(R, n)
    out["Rprec"] = [cum[k - 1] / R if k else 0.0]
    out["rr"] = [1.0 / first if first else 0.0]

    def dcg(g: list[float], k: int) -> float:
        s = 0.0
        for i, x in enumerate(g[:k]):
            if x != 0:
                s += x / math.log2(i + 2.0)
        return s

    out["dcg"] = [dcg(grades, k) for k in CUTS]
    out["idcg"] = [dcg(ideal, k) for k in CUTS]
    return out


@st.composite
def _queries(draw):  # type: ignore[no-untyped-def]
    q = draw(st.integers(1, 5))
    n = draw(st.integers(0, 60))
    grades = np.array(draw(st.lists(st.sampled_from([0, 0, 0, 1, 2, 3]), min_size=q * n, max_size=q * n)))
    grades = grades.reshape(q, n).astype(np.float64)
    extra = np.array(draw(st.lists(st.integers(0, 20), min_size=q, max_size=q)))
    return grades, extra


@settings(max_examples=150, deadline=None)
@given(_queries())
def test_trec_eval_rounding_equals_the_loops_bit_for_bit(case) -> None:  # type: ignore[no-untyped-def]
    grades, extra = case
    rel = grades >= 1
    R = rel.sum(axis=1).astype(np.float64) + extra
    ideal = -np.sort(-np.concatenate([grades, np.ones((grades.shape[0], 3))], axis=1), axis=1)
    rk = Ranked(rel, "trec_eval")
    got = {
        "P": rk.precision_at(CUTS),
        "recall": rk.recall_at(CUTS, R),
        "ap": rk.average_precision(R)[:, None],
        "ap_cut": divide(rk.precision_sum_at(CUTS), R[:, None]),
        "Rprec": rk.r_precision(R)[:, None],
        "rr": rk.reciprocal_rank()[:, None],
        "dcg": dcg_at(grades, CUTS, "trec_eval"),
        "idcg": dcg_at(ideal, CUTS, "trec_eval"),
    }
    for i in range(grades.shape[0]):
        want = _loop_values(rel[i].tolist(), int(R[i]), grades[i].tolist(), ideal[i].tolist())
        for name, values in want.items():
            assert got[name][i].tolist() == values, (name, i)
    numpy = Ranked(rel)  # numpy's rounding: the same values within rounding
    np.testing.assert_allclose(numpy.average_precision(R), got["ap"][:, 0], rtol=1e-13, atol=0)
    np.testing.assert_allclose(dcg_at(grades, CUTS), got["dcg"], rtol=1e-13, atol=0)
    np.testing.assert_array_equal(numpy.precision_at(CUTS), got["P"])  # counts: exact either way
    np.testing.assert_array_equal(numpy.r_precision(R), got["Rprec"][:, 0])


@pytest.mark.parametrize("seed", range(4))
def test_trec_eval_rounding_equals_pytrec_eval(seed: int) -> None:
    rng = np.random.default_rng(seed)
    qrels, run, ranked = {}, {}, {}
    for q in range(30):
        n = int(rng.integers(1, 120))
        docs = [f"d{i}" for i in range(n + 20)]
        grades = rng.choice([0, 0, 0, 1, 2, 3], size=n + 20)
        qrels[f"q{q}"] = {d: int(g) for d, g in zip(docs, grades, strict=True) if rng.random() < 0.7}
        scores = rng.permutation(n).astype(float)  # distinct: no tie rule matters
        run[f"q{q}"] = {d: float(s) for d, s in zip(docs[:n], scores, strict=True)}
        order = np.argsort(-scores, kind="stable")
        ranked[f"q{q}"] = np.array([qrels[f"q{q}"].get(docs[i], 0) for i in order], dtype=np.float64)
    names = {"map", "P_5", "P_10", "recall_10", "Rprec", "recip_rank", "ndcg_cut_10", "ndcg"}
    want = pytrec_eval.RelevanceEvaluator(qrels, names).evaluate(run)
    for q, g in ranked.items():
        rel = (g >= 1)[None, :]
        R = np.array([float(sum(1 for v in qrels[q].values() if v >= 1))])
        rk = Ranked(rel, "trec_eval")
        ideal = np.array(sorted((v for v in qrels[q].values() if v > 0), reverse=True), dtype=np.float64)[None, :]
        dcg, idcg = dcg_at(g[None, :], [10, None], "trec_eval")[0], dcg_at(ideal, [10, None], "trec_eval")[0]
        got = {
            "map": rk.average_precision(R)[0],
            "P_5": rk.precision_at([5])[0, 0],
            "P_10": rk.precision_at([10])[0, 0],
            "recall_10": rk.recall_at([10], R)[0, 0],
            "Rprec": rk.r_precision(R)[0],
            "recip_rank": rk.reciprocal_rank()[0],
            "ndcg_cut_10": divide(dcg, idcg)[0],
            "ndcg": divide(dcg, idcg)[1],
        }
        for name in names:
            assert float(got[name]) == want[q][name], (q, name, float(got[name]), want[q][name])


def test_tie_average_is_the_mean_over_every_order_of_the_tied_documents() -> None:
    scores = np.array([[5.0, 4.0, 4.0, 4.0, 2.0, 2.0]])
    rel = np.array([[False, True, False, True, True, False]])
    avg = Ranked(tie_average(rel, tie_groups(scores)))
    got = avg.precision_at([1, 2, 3, 5]), avg.r_precision(np.array([3.0]))
    runs = []
    for a in itertools.permutations([1, 2, 3]):
        for b in itertools.permutations([4, 5]):
            order = rel[:, [0, *a, *b]]
            rk = Ranked(order)
            runs.append((rk.precision_at([1, 2, 3, 5]), rk.r_precision(np.array([3.0]))))
    np.testing.assert_allclose(got[0], np.mean([r[0] for r in runs], axis=0), rtol=1e-12)
    np.testing.assert_allclose(got[1], np.mean([r[1] for r in runs], axis=0), rtol=1e-12)


def test_empty_lists_and_empty_denominators_give_zero() -> None:
    for rounding in ("numpy", "trec_eval"):
        rk = Ranked(np.zeros((2, 0), dtype=bool), rounding)  # type: ignore[arg-type]
        R = np.array([0.0, 3.0])
        assert rk.precision_at([1, 5]).tolist() == [[0.0, 0.0]] * 2
        assert rk.average_precision(R).tolist() == rk.r_precision(R).tolist() == [0.0, 0.0]
        assert rk.reciprocal_rank().tolist() == [0.0, 0.0]
        assert dcg_at(np.zeros((2, 0)), [3, None], rounding).tolist() == [[0.0, 0.0]] * 2  # type: ignore[arg-type]
        full = Ranked(np.ones((1, 3), dtype=bool), rounding)  # type: ignore[arg-type]
        assert full.recall_at([2], np.array([0.0])).tolist() == [[0.0]]  # R = 0: 0, not a division error


def test_unknown_rounding_is_a_value_error() -> None:
    with pytest.raises(ValueError, match="rounding: must be one of .* got 'c'"):
        Ranked(np.zeros((1, 1), dtype=bool), "c")  # type: ignore[arg-type]
