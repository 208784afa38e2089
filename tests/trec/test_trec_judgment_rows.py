"""The preference and judgment-group measures as accumulators: ``TrecMeasures(...,
judgments="prefs" | "qrels_prefs" | "qrels_jg")`` fed each query's judgment rows (as the file has
them after the query id) -- streamed in random query batches, merged across shards, saved and
loaded -- prints what trec_eval prints in its own quicktest (``out.test.prefs``,
``out.test.qrels_prefs``, ``out.test.qrels_jg``, to the printed precision) and equals the
unrounded per-query values of ``streammetrics trec -R ...`` to 1e-12.

trec_eval's test files are read from ``shared/data/trec_eval_test`` beside the repository, as
:mod:`test_trec_quicktest` finds them; those tests skip when the folder is absent. The input
checks run on small hand-made data.
"""

from __future__ import annotations

import io
from collections import defaultdict

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_trec_quicktest import DATA

import streammetrics as sm
from streammetrics.trec import TrecMeasures, evaluate_files

TOL = 1e-12
#: (judgments, -m, judgments file, run file, trec_eval's expected output)
CASES = [
    ("prefs", "all_prefs", "prefs.test", "prefs.results.test", "out.test.prefs"),
    ("prefs", "all_prefs", "prefs.comment.test", "prefs.results.test", "out.test.prefs"),
    ("qrels_prefs", "all_prefs", "qrels.test", "results.test", "out.test.qrels_prefs"),
    ("qrels_jg", "qrels_jg", "qrels.123", "results.test", "out.test.qrels_jg"),
]
needs_data = pytest.mark.skipif(DATA is None, reason="trec_eval's test files (shared/data/trec_eval_test) absent")


def _rows(path) -> dict[str, list[tuple[str, ...]]]:
    """Each query's judgment rows: a line's fields after the query id (for ``qrels_prefs`` a
    qrels line's ``iter docno grade`` are ``jg docno rel_level``)."""
    out: dict[str, list[tuple[str, ...]]] = defaultdict(list)
    for line in path.read_text().splitlines():
        parts = line.split()
        if parts and not parts[0].startswith("#"):
            out[parts[0]].append(tuple(parts[1:]))
    return out


def _run(path) -> dict[str, tuple[list[str], list[float]]]:
    out: dict[str, tuple[list[str], list[float]]] = {}
    for line in path.read_text().splitlines():
        parts = line.split()
        if parts and not parts[0].startswith("#"):
            docs, scores = out.setdefault(parts[0], ([], []))
            docs.append(parts[2])
            scores.append(float(parts[4]))
    return out


def _feed(acc, run, rows, queries) -> None:
    docs = [d for q in queries for d in run[q][0]]
    scores = [s for q in queries for s in run[q][1]]
    qids = [q for q in queries for _ in run[q][0]]
    acc.update(None, scores, doc_ids=docs, judged={q: rows[q] for q in queries}, query_ids=qids)


def _expected(path) -> tuple[dict[tuple[str, str], str], list[str]]:
    """trec_eval's printed values by (name, query) and its queries in print order."""
    values, qids = {}, []
    for line in path.read_text().splitlines():
        name, qid, text = (p.strip() for p in line.split("\t"))
        if name != "runid":
            values[name, qid] = text
            if qid != "all" and qid not in qids:
                qids.append(qid)
    return values, qids


def _unrounded(judgments, measure, jpath, rpath) -> dict[tuple[str, str], float]:
    out = io.StringIO()
    evaluate_files(str(jpath), str(rpath), [measure], rel_format=judgments, per_query=True, digits=17,
                   trec_version=10, out=out)  # fmt: skip
    lines = [line.split("\t") for line in out.getvalue().splitlines()]
    return {(n.strip(), q): float(v) for n, q, v in lines if n.strip() != "runid"}


def _printed(value: float, text: str) -> str:
    return f"{value:6.4f}" if "." in text else str(int(value))


@needs_data
@settings(max_examples=4, deadline=None)
@given(case=st.sampled_from(CASES), seed=st.integers(0, 2**32 - 1), shards=st.integers(1, 3))
def test_accumulators_print_trec_evals_quicktest_values(case, seed, shards):
    judgments, measure, jfile, rfile, expected = case
    assert DATA is not None
    rows, run = _rows(DATA / jfile), _run(DATA / rfile)
    want, qids = _expected(DATA / expected)
    exact = _unrounded(judgments, measure, DATA / jfile, DATA / rfile)
    queries = [q for q in run if q in rows]
    assert sorted(queries) == sorted(qids)
    rng = np.random.default_rng(seed)
    order = [queries[i] for i in rng.permutation(len(queries))]
    cuts = np.sort(rng.choice(np.arange(1, len(order)), size=min(4, len(order) - 1), replace=False))
    accs = [TrecMeasures(measure, judgments=judgments, per_query=True, trec_version=10) for _ in range(shards)]
    fed: list[list[str]] = [[] for _ in range(shards)]
    for i, batch in enumerate(np.split(np.array(order), cuts)):
        _feed(accs[i % shards], run, rows, batch.tolist())
        fed[i % shards] += batch.tolist()
    merged = accs[0].merge(*accs[1:])
    seen = [q for f in fed for q in f]  # the merged per-query values: shard after shard
    for acc in (merged, sm.loads(sm.dumps(merged))):
        summary = acc.compute()
        per_q = acc.per_query_values()
        assert set(summary) == {n for n, q in want if q == "all"}
        for name, value in summary.items():
            assert _printed(value, want[name, "all"]) == want[name, "all"], name
            assert abs(value - exact[name, "all"]) <= TOL * max(1.0, abs(value)), name
        for name, values in per_q.items():
            for q, v in zip(seen, values.tolist(), strict=True):
                if (name, q) in want:  # num_q has no per-query line
                    assert _printed(v, want[name, q]) == want[name, q], (name, q)
                    assert abs(v - exact[name, q]) <= TOL, (name, q, v, exact[name, q])


PREFS = {"q": [("u1", "s", "a", 2), ("u1", "s", "b", 1), ("u1", "s", "c", 0), ("u1", "s", "d", 1)]}


def test_rows_of_one_query_without_query_ids():
    one = TrecMeasures("prefs_simp", judgments="prefs")
    one.update(None, [0.5, 0.4, 0.3], doc_ids=["a", "b", "c"], judged=PREFS["q"])
    many = TrecMeasures("prefs_simp", judgments="prefs")
    many.update(None, [0.5, 0.4, 0.3], doc_ids=["a", "b", "c"], judged=PREFS, query_ids=["q"] * 3)
    assert one.compute() == many.compute() == {"prefs_simp": 0.8}  # 4 of the 5 preferences hold


def test_judgment_groups_average_the_groups():
    jg = {"q": [("A", "d1", 1), ("A", "d2", 0), ("B", "d1", 0), ("B", "d2", 1)]}
    m = TrecMeasures("map_avgjg", judgments="qrels_jg")
    m.update(None, [0.9, 0.1], doc_ids=["d1", "d2"], judged=jg, query_ids=["q", "q"])
    assert m.compute() == {"map_avgjg": (1.0 + 0.5) / 2}  # group A: AP 1, group B: AP 1/2


@pytest.mark.parametrize(
    ("judgments", "kwargs", "message"),
    [
        ("prefs", {"relevance": [1, 0]}, "relevance: these measures take every judgment from judged="),
        ("prefs", {"doc_ids": None}, "doc_ids: required"),
        ("prefs", {"judged": None}, "judged: required"),
        ("prefs", {"n_relevant": {"q": 1}}, "n_relevant: not taken"),
        ("prefs", {"judged": {"q": [("u1", "a", 1)]}}, "judged['q']: expected rows (jg, jsg, docno, rel_level)"),
        ("qrels_prefs", {"judged": {"q": [("u1", "s", "a", 1)]}}, "judged['q']: expected rows (jg, docno, rel"),
        ("qrels_jg", {"judged": {"q": [("A", "a", "x")]}}, "judged['q']: expected rows (jg, docno, grade)"),
        ("qrels_jg", {"judged": {"q": [("A", "a", 1), ("A", "a", 0)]}}, "judges document 'a' a second time"),
    ],
)
def test_malformed_input_names_the_argument(judgments, kwargs, message):
    args = {"relevance": None, "scores": [0.5, 0.4], "doc_ids": ["a", "b"], "judged": {"q": []},
            "query_ids": ["q", "q"], **kwargs}  # fmt: skip
    m = TrecMeasures("all_prefs" if "prefs" in judgments else "qrels_jg", judgments=judgments)
    with pytest.raises(ValueError, match=None) as err:
        m.update(args.pop("relevance"), args.pop("scores"), **args)
    assert message in str(err.value)
    assert m.n_queries == 0


def test_options_and_sharing():
    with pytest.raises(ValueError, match="judgments: expected one of"):
        TrecMeasures("all_prefs", judgments="prefs2")
    with pytest.raises(ValueError, match="needs judgments in the 'prefs' format"):
        TrecMeasures("all_prefs")
    with pytest.raises(ValueError, match="needs judgments in the 'qrels' format"):
        TrecMeasures("map", judgments="qrels_jg")
    ms = sm.MetricSet(p=TrecMeasures("prefs_simp", judgments="prefs"), a=TrecMeasures("prefs_pair", judgments="prefs"),
                      m=TrecMeasures("map"))  # fmt: skip
    assert ms["p"]._state is ms["a"]._state and ms["m"]._state is not ms["p"]._state
    m = TrecMeasures("qrels_jg", judgments="qrels_jg")
    assert sm.loads(sm.dumps(m))._config()["judgments"] == "qrels_jg"
