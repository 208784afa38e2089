"""``DiversityMeasures``: ndeval's diversity measures streamed over query batches, merged across
shards, saved and loaded -- equal per query to pyndeval (1e-12) and in the mean to
``streammetrics trec`` on the same files, for any split of the queries into batches."""

from __future__ import annotations

import io
import math
import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_trec_diversity import _NAMES, _close, _ours_names, _pyndeval, _random_case, _write

import streammetrics as sm
from streammetrics.trec import DiversityMeasures
from streammetrics.trec.diversity_files import evaluate_diversity_files


def _queries(qrels, run):  # type: ignore[no-untyped-def]
    """Each query of both: (qid, docs, scores, rows (subtopic number, docno, judgment)), subtopics
    numbered over the whole qrels in line order, as pyndeval and the command number them."""
    index: dict[str, int] = {}
    rows: dict[str, list[tuple[int, str, int]]] = {}
    for q, s, d, g in qrels:
        rows.setdefault(q, []).append((index.setdefault(s, len(index)), d, g))
    ranked: dict[str, list[tuple[str, float]]] = {}
    for q, d, sc in run:
        ranked.setdefault(q, []).append((d, sc))
    return [(q, [d for d, _ in ranked[q]], [sc for _, sc in ranked[q]], rows[q]) for q in sorted(ranked) if q in rows]


def _feed(m: DiversityMeasures, queries, rng: random.Random) -> DiversityMeasures:  # type: ignore[no-untyped-def]
    at = 0
    while at < len(queries):
        step = rng.randint(1, 3)
        batch = queries[at : at + step]
        at += step
        m.update(None, [s for _, _, ss, _ in batch for s in ss], doc_ids=[d for _, ds, _, _ in batch for d in ds],
                 judged={q: r for q, _, _, r in batch}, query_ids=[q for q, ds, _, _ in batch for _ in ds])  # fmt: skip
    return m


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), shards=st.integers(1, 3))
def test_streamed_merged_and_reloaded_equal_pyndeval_and_the_command(tmp_path_factory, seed: int, shards: int) -> None:  # type: ignore[no-untyped-def]
    rng = random.Random(seed)
    qrels, run = _random_case(rng)
    queries = _queries(qrels, run)
    if not queries:
        return
    alpha, beta, rel = rng.choice([0.5, 0.3]), rng.choice([0.5, 0.8]), rng.choice([1, 2])
    names = _ours_names(_NAMES, rel, alpha, beta)
    ref = _pyndeval(qrels, run, rel, alpha, beta, _NAMES)
    parts = [queries[i::shards] for i in range(shards)]
    accs = [_feed(DiversityMeasures(names, per_query=True), p, rng) for p in parts]
    acc = accs[0]
    for other in accs[1:]:
        acc.merge(other)
    acc = sm.loads(sm.dumps(acc))
    order = [q for p in parts for q, *_ in p]
    per_query = acc.per_query_values()
    for name, o in zip(_NAMES, names, strict=True):
        for i, qid in enumerate(order):
            assert _close(float(per_query[o][i]), ref[qid][name]), (qid, name)
    tmp = tmp_path_factory.mktemp("div")
    qp, rp = _write(tmp, qrels, run)
    means = evaluate_diversity_files(qp, rp, names, out=io.StringIO())
    got = acc.compute()
    for o in names:
        assert _close(got[o], means[o]) or abs(got[o] - means[o]) <= 1e-12, o


def test_mapping_judgments_equal_rows_and_window_keeps_the_last_queries() -> None:
    rows = [("a", "A", 1), ("b", "B", 2), ("b", "D", 1), ("c", "C", 0), ("c", "A", 3)]
    mapping: dict[str, dict[str, int]] = {}
    for s, d, g in rows:
        mapping.setdefault(d, {})[s] = g
    names = ["alpha_nDCG@3", "nNRBP(rel=2)", "AP_IA", "ERR_IA(alpha=0.25)@2"]
    a, b = DiversityMeasures(names), DiversityMeasures(names)
    docs, scores = ["A", "D", "E", "B"], [3.0, 2.0, 2.0, 1.0]
    a.update(None, scores, doc_ids=docs, judged={"q": rows}, query_ids=["q"] * 4)
    b.update(None, scores, doc_ids=docs, judged=mapping)  # one query, no query ids
    assert a.compute() == b.compute()
    w = sm.Window(DiversityMeasures(names), size=1)
    w.update(None, [1.0], doc_ids=["Z"], judged={"z": [("a", "Z", 0)]}, query_ids=["z"])
    w.update(None, scores, doc_ids=docs, judged={"q": rows}, query_ids=["q"] * 4)
    assert w.compute() == a.compute()


@pytest.mark.parametrize(
    ("judged", "docs", "message"),
    [
        ({"q": [("a", "A", 1.5)]}, ["A"], r"judged\['q'\]\[0\]: a judgment must be an integer"),
        ({"q": [("a", "A", True)]}, ["A"], "a judgment must be an integer, got True"),
        ({"q": [("a", "A", float("nan"))]}, ["A"], "a judgment must be an integer"),
        ({"q": [("a", "A")]}, ["A"], r"expected a row \(subtopic, docno, judgment\)"),
        ({"q": [("a", "A", 1), ("a", "A", 0)]}, ["A"], r"judged\['q'\]\[1\]: document 'A' judged twice"),
        ({"q": [(1.5, "A", 1)]}, ["A"], "a subtopic must be a str or an int"),
        ({"q": "rows"}, ["A"], "expected rows"),
        ({"q": {"A": 1}}, ["A"], r"expected a mapping \{subtopic: judgment\}"),
        ({"other": []}, ["A"], "judged"),
        ({"q": [("a", "A", 1)]}, ["A", "A"], "doc_ids: query 'q' retrieves document 'A' twice"),
    ],
)
def test_a_rejected_batch_names_the_row_and_leaves_the_state(judged, docs, message) -> None:  # type: ignore[no-untyped-def]
    m = DiversityMeasures(["alpha_nDCG@2", "NRBP"], per_query=True)
    m.update(None, [1.0], doc_ids=["X"], judged={"x": [("a", "X", 1)]}, query_ids=["x"])
    before = sm.dumps(m)
    with pytest.raises(ValueError, match=message):
        m.update(None, np.arange(len(docs), dtype=float), doc_ids=docs, judged=judged, query_ids=["q"] * len(docs))
    assert sm.dumps(m) == before


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (lambda: DiversityMeasures([]), "measures: expected a measure name or a non-empty list"),
        (lambda: DiversityMeasures("P@5"), "not a diversity measure"),
        (lambda: DiversityMeasures("NRBP", rel_level=1.5), "rel_level"),
        (lambda: DiversityMeasures("NRBP", max_docs=-1), "max_docs: expected a non-negative integer"),
        (lambda: DiversityMeasures("alpha_nDCG"), "needs a cutoff"),
    ],
)
def test_bad_constructor_arguments(build, message) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ValueError, match=message):
        build()


def test_no_query_is_nan_with_a_warning() -> None:
    m = DiversityMeasures(["NRBP", "P_IA@3"])
    with pytest.warns(sm.UndefinedMetricWarning):
        got = m.compute()
    assert all(math.isnan(v) for v in got.values())
