"""ranx's ``f1`` (F1@k: the harmonic mean of P@k and R@k) in ``streammetrics trec`` and
``TrecMeasures``, against ranx itself (its numba kernels) on random runs (issue #33).

ranx ranks a query's documents by ``np.argsort(-score)`` under numba, a quicksort that keeps the
run's insertion order among tied scores for up to 15 documents a query (an insertion sort) and
scrambles it beyond (``test_ranx_tie_order_is_the_run_order_up_to_15_documents``). So the runs
with heavy ties hold at most 14 documents a query and are given to ranx in trec_eval's order
(score descending, document id descending), the order ours ranks them in; longer runs have
distinct scores."""

from __future__ import annotations

import io

import numpy as np
import pytest
import retrieval_oracles as O
from helpers import trec_files
from hypothesis import given, settings
from hypothesis import strategies as st

from streammetrics.trec import TrecMeasures, evaluate_files, trec_batch

ranx = pytest.importorskip("ranx")
pytestmark = pytest.mark.filterwarnings("ignore:unsafe cast:Warning")  # ranx's own numba kernels

TOL = 1e-12
#: ours -> ranx's name (ranx's rel level: the ``-l`` suffix)
NAMES = {"f1@1": "f1@1", "f1@3": "f1@3", "f1@5": "f1@5", "f1@20": "f1@20", "f1": "f1",
         "f1(rel=2)@5": "f1@5-l2", "f1(rel=2)": "f1-l2", "f1(cutoff=2, rel=0)": "f1@2-l0"}


def trec_order(run: dict[str, dict[str, float]]) -> dict[str, dict[str, float]]:
    """Each query's documents in trec_eval's order: score descending, document id descending."""
    return {q: dict(sorted(sorted(docs.items(), reverse=True), key=lambda kv: -kv[1])) for q, docs in run.items()}


def ranx_values(qrels: dict, run: dict) -> dict[str, dict[str, float]]:
    """ranx's per-query values of every name of ``NAMES`` ({name: {query: value}})."""
    r = ranx.Run(trec_order(run))
    ranx.evaluate(ranx.Qrels(qrels), r, list(NAMES.values()))
    return {ours: dict(r.scores[theirs]) for ours, theirs in NAMES.items()}


def printed(qrels: dict, run: dict, tmp_path) -> dict[tuple[str, str], float]:
    qp, rp = trec_files(tmp_path, qrels, run)
    sink = io.StringIO()
    evaluate_files(qp, rp, list(NAMES), per_query=True, digits=17, out=sink)
    return {(n.rstrip(), q): float(v) for n, q, v in (line.split("\t") for line in sink.getvalue().splitlines())}


def check(qrels: dict, run: dict, tmp_path) -> None:
    want = ranx_values(qrels, run)
    got = printed(qrels, run, tmp_path)
    acc = TrecMeasures(list(NAMES), per_query=True)
    trec_batch(qrels, run).feed(acc)
    values, means = acc.per_query_values(), acc.compute()
    qids = sorted(run, key=str.encode)  # trec_batch's order
    for name in NAMES:
        for i, q in enumerate(qids):
            assert abs(got[(name, q)] - want[name][q]) <= TOL, (name, q)
            assert abs(values[name][i] - want[name][q]) <= TOL, (name, q)
        mean = float(np.mean([want[name][q] for q in qids]))
        assert abs(got[(name, "all")] - mean) <= TOL and abs(means[name] - mean) <= TOL, name


@settings(max_examples=8, deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_f1_equals_ranx_on_runs_with_heavy_ties(tmp_path_factory, seed):
    rng = np.random.default_rng(seed)
    qrels, run = O.random_trec(rng, 25, max_docs=14, grades=(-1, 0, 0, 1, 2, 3))
    check(qrels, run, tmp_path_factory.mktemp("f1"))


def test_f1_equals_ranx_on_long_runs_without_ties(tmp_path):
    rng = np.random.default_rng(3)
    qrels, run = O.random_trec(rng, 30, max_docs=40, grades=(-1, 0, 1, 1, 2))
    run = {q: {d: float(i) for i, d in enumerate(rng.permutation(list(docs)))} for q, docs in run.items()}
    check(qrels, run, tmp_path)


def test_f1_definition_by_hand():
    # ranking a(1) z(-) b(0) c(2): R = 2 (a, c); f1@2: P 1/2, R 1/2 -> 1/2; f1@4: P 2/4, R 1 -> 2/3;
    # f1@10: P 2/10, R 1 -> 1/3; f1 (every retrieved): P 2/4, R 1 -> 2/3; no relevant judged -> 0
    qrels, run = {"q": {"a": 1, "b": 0, "c": 2}, "e": {"x": 0}}, {"q": {"a": 4, "z": 3, "b": 2, "c": 1}, "e": {"x": 1}}
    acc = TrecMeasures(["f1@2", "f1@4", "f1@10", "f1", "f1(rel=2)@1"], per_query=True)
    trec_batch(qrels, run).feed(acc)
    v = acc.per_query_values()
    want = [[0.0, 0.5], [0.0, 2 / 3], [0.0, 1 / 3], [0.0, 2 / 3], [0.0, 0.0]]  # queries e, q
    got = [v[n].tolist() for n in ("f1@2", "f1@4", "f1@10", "f1", "f1(rel=2)@1")]
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-15)


@pytest.mark.parametrize("bad", ["f1@0", "f1(beta=2)", "f1(judged_only=True)", "f1(rel=1.5)"])
def test_bad_f1_names_are_one_line_errors(bad):
    with pytest.raises(ValueError, match="^measure "):
        TrecMeasures([bad])


def test_ranx_tie_order_is_the_run_order_up_to_15_documents():
    """What the tests above rely on, and what docs/trec.md says: among tied scores ranx keeps the
    run's insertion order for up to 15 documents a query, and not beyond."""
    def first(n: int) -> list[float]:
        out = []
        for j in range(n):  # the relevant document at insertion position j; P@1 says who ranks first
            r = ranx.Run({"q": {f"d{i}": 1.0 for i in range(n)}})
            out.append(float(ranx.evaluate(ranx.Qrels({"q": {f"d{j}": 1}}), r, "precision@1")))
        return out

    assert first(15) == [1.0] + [0.0] * 14
    assert first(16) != [1.0] + [0.0] * 15


# -- trec-compare beside ranx's compare(..., make_comparable=True) ---------------------------------

#: ours -> ranx's metric name
COMPARED = {"AP": "map", "P@5": "precision@5", "R@10": "recall@10", "RR": "mrr", "nDCG@10": "ndcg@10",
            "f1@5": "f1@5"}


def comparable_runs(rng: np.random.Generator) -> tuple[dict, list[dict]]:
    """qrels and three runs of distinct scores: queries some run lacks, queries no run retrieves,
    run queries the qrels do not judge, qrels queries without a relevant document."""
    qrels, base = O.random_trec(rng, 16, max_docs=12, grades=(-1, 0, 1, 1, 2))
    runs = []
    for _ in range(3):
        run = {}
        for q, docs in base.items():
            if rng.random() < 0.2:  # this run lacks the query
                continue
            ids = list(docs) + [f"x{j}" for j in range(int(rng.integers(0, 4)))]
            ids = list(rng.permutation(ids))[: int(rng.integers(1, len(ids) + 1))]
            run[q] = {d: float(len(ids) - i) for i, d in enumerate(ids)}  # distinct scores, ranked
        run["unjudged"] = {"d1": 1.0}
        runs.append(run)
    for q in list(qrels)[:3]:  # no run retrieves these
        for run in runs:
            run.pop(q, None)
    return qrels, runs


@pytest.mark.parametrize("seed", range(3))
def test_compare_complete_equals_ranx_make_comparable(tmp_path, seed):
    """``per_query_values(..., complete=True)`` (``trec-compare -c``) pairs the runs on every query
    of the qrels, as ranx's ``compare(..., make_comparable=True)``: the same per-query values,
    means and paired t-test p-values (ranx's ``stat_test="student"``)."""
    from streammetrics.trec import per_query_values
    from streammetrics.trec.compare import compare

    qrels, runs = comparable_runs(np.random.default_rng(seed))
    paths = []
    for i, run in enumerate(runs):
        (tmp_path / f"r{i}").mkdir()
        qp, rp = trec_files(tmp_path / f"r{i}", qrels, run)
        paths.append(rp)
    pq = per_query_values(qp, paths, list(COMPARED), complete=True)
    assert set(pq.qids) == set(qrels)  # every query of the qrels, none of the runs' unjudged ones
    ranx_runs = [ranx.Run(run, name=f"r{i}") for i, run in enumerate(runs)]
    report = ranx.compare(ranx.Qrels(qrels), ranx_runs, list(COMPARED.values()), make_comparable=True,
                          stat_test="student")
    result = compare(pq, permutations=16, bootstrap=0)
    for ours, theirs in COMPARED.items():
        m = pq.names.index(ours)
        for r, run in enumerate(ranx_runs):
            want = np.array([run.scores[theirs][q] for q in pq.qids])
            np.testing.assert_allclose(pq.values[r, m], want, rtol=0, atol=TOL, err_msg=f"{ours} run {r}")
            row = next(e for e in result["measures"] if e["measure"] == ours)["runs"][r]
            assert abs(row["mean"] - report.results[f"r{r}"][theirs]) <= TOL, (ours, r)
            if r:  # the paired t-test against the baseline: ranx's student p-value
                p = report.comparisons[frozenset(["r0", f"r{r}"])][theirs]["p_value"]
                assert abs(row["p_t"] - p) <= 1e-9, (ours, r)


def test_compare_without_complete_leaves_out_queries_no_run_retrieves(tmp_path):
    from streammetrics.trec import per_query_values

    qrels, runs = comparable_runs(np.random.default_rng(5))
    qp, rp = trec_files(tmp_path, qrels, runs[0])
    retrieved = {q for q in runs[0] if q in qrels}
    assert set(per_query_values(qp, [rp], ["AP"]).qids) == retrieved
    assert set(per_query_values(qp, [rp], ["AP"], complete=True).qids) == set(qrels) > retrieved


def test_trec_compare_c_takes_every_query_of_the_qrels(tmp_path, capsys):
    import json

    from streammetrics.__main__ import main

    qrels, runs = comparable_runs(np.random.default_rng(2))
    paths = []
    for i, run in enumerate(runs[:2]):
        (tmp_path / f"r{i}").mkdir()
        qp, rp = trec_files(tmp_path / f"r{i}", qrels, run)
        paths.append(rp)
    counts = []
    for flags in ([], ["-c"]):
        out = tmp_path / f"out{len(flags)}.json"
        assert main(["trec-compare", qp, *paths, "-m", "AP", "--bootstrap", "0", "--json", str(out), *flags]) == 0
        counts.append(json.loads(out.read_text())["queries"])
    capsys.readouterr()
    retrieved = {q for run in runs[:2] for q in run if q in qrels}
    assert counts == [len(retrieved), len(qrels)] and len(qrels) > len(retrieved)


# -- the retrieval class F1AtK -------------------------------------------------------------------


@settings(max_examples=6, deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_f1_at_k_class_equals_trec_measures_and_ranx(seed):
    """``F1AtK(k)`` fed the run's rows (ties by document id, trec_eval's order) equals
    ``TrecMeasures(["f1@k"])`` and ranx's ``f1@k`` per query and in the mean."""
    import streammetrics as sm

    rng = np.random.default_rng(seed)
    qrels, run = O.random_trec(rng, 20, max_docs=14, grades=(-1, 0, 0, 1, 2, 3))
    batch = trec_batch(qrels, run)
    trec = TrecMeasures(["f1@1", "f1@4", "f1@20"], per_query=True)
    batch.feed(trec)
    r = ranx.Run(trec_order(run))
    ranx.evaluate(ranx.Qrels(qrels), r, ["f1@1", "f1@4", "f1@20"])
    qids = sorted(run, key=str.encode)
    for k in (1, 4, 20):
        m = sm.F1AtK(k, per_query=True)
        batch.feed(m)
        want = np.array([r.scores[f"f1@{k}"][q] for q in qids])
        np.testing.assert_allclose(m.per_query_values(), want, rtol=0, atol=TOL)
        np.testing.assert_allclose(m.per_query_values(), trec.per_query_values()[f"f1@{k}"], rtol=0, atol=TOL)
        assert abs(m.compute() - float(np.mean(want))) <= TOL
