"""A large retrieval batch is ranked in blocks of whole queries: the values equal those of one
query per update (the path checked against pytrec_eval), and errors name positions in the
whole batch."""

from __future__ import annotations

from unittest import mock

import numpy as np
import pytest
import retrieval_oracles as O
from hypothesis import given, settings
from hypothesis import strategies as st
from laws import assert_same, flat, retrieval_metrics

import streammetrics as sm
from streammetrics._queries import batch as _query_batch


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(1, 30), rows=st.integers(1, 20))
def test_blocked_batch_equals_one_query_per_update(seed, n, rows):
    qrels, run = O.random_trec(np.random.default_rng(seed), n, max_docs=8)
    f = O.flatten(qrels, run)
    batch = _query_batch.check_batch(f["relevance"], f["scores"], query_ids=f["query_ids"])
    with mock.patch.object(_query_batch, "BLOCK_ROWS", rows):
        cuts, bounds = batch.cuts(), batch.bounds
        longest = int(np.diff(bounds).max())
        assert (np.diff(bounds[cuts]) <= rows + longest).all()  # blocks stay bounded
        blocked = sm.MetricSet(retrieval_metrics(per_query=True))
        blocked.update(f["relevance"], f["scores"], doc_ids=f["doc_ids"], query_ids=f["query_ids"],
                       judged=f["judged"])
    singles = retrieval_metrics(per_query=True)
    for q in run:
        inp = O.per_query_inputs(qrels, run, q)
        for m in singles.values():
            m.update(inp["relevance"], inp["scores"], doc_ids=inp["doc_ids"], judged=inp["judged"])
    want, got = {k: m.compute() for k, m in singles.items()}, blocked.compute()
    assert want.keys() == got.keys()
    assert_same(flat(got), flat(want), rtol=1e-12, atol=1e-15)
    for k, m in singles.items():
        np.testing.assert_allclose(blocked[k].per_query_values(), m.per_query_values(), rtol=1e-12)
        assert blocked[k].n_queries == m.n_queries == n


def _stream(n_queries: int, docs: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(n_queries)
    rel = rng.integers(0, 3, n_queries * docs)
    scores = rng.random(n_queries * docs)
    return rel, scores, np.repeat(np.arange(n_queries), docs)


@pytest.mark.parametrize("where", [0, 37, 99])
def test_errors_name_the_row_in_the_whole_batch_and_change_nothing(where):
    rel, scores, qid = _stream(20, 5)
    m = sm.NDCG(3)
    m.update(rel[:5], scores[:5])
    before = sm.dumps(m)
    with mock.patch.object(_query_batch, "BLOCK_ROWS", 8):
        bad = rel.astype(np.float64)
        bad[where] = np.nan
        with pytest.raises(ValueError, match=rf"relevance: .*first invalid value .*nan.* at index {where}$"):
            m.update(bad, scores, query_ids=qid)
        docs = np.tile(np.arange(5), 20)
        docs[where] = docs[where - 1] if where % 5 else docs[where + 1]
        row = where if where % 5 else where + 1
        with pytest.raises(ValueError, match=rf"doc_ids: duplicate document .* at row {row} within"):
            m.update(rel, scores, query_ids=qid, doc_ids=docs)
        again = qid.copy()
        again[95:] = 0  # query 0 comes back in the last block
        with pytest.raises(ValueError, match="query 0 reappears at row 95 after another query"):
            m.update(rel, scores, query_ids=again)
        nrel = {q: 5 for q in range(20)}
        nrel[where // 5] = -1
        with pytest.raises(ValueError, match=rf"n_relevant: .* for query {where // 5}, got -1"):
            m.update(rel, scores, query_ids=qid, n_relevant=nrel)
    assert sm.dumps(m) == before


def test_window_over_a_blocked_batch_equals_the_whole_batch_ranked_at_once():
    rel, scores, qid = _stream(40, 7)
    with mock.patch.object(_query_batch, "BLOCK_ROWS", 10):
        blocked = sm.Window(sm.NDCG(5), size=30).update(rel, scores, query_ids=qid)
    whole = sm.Window(sm.NDCG(5), size=30).update(rel, scores, query_ids=qid)
    single = sm.NDCG(5)
    for q in range(10, 40):
        single.update(rel[q * 7 : q * 7 + 7], scores[q * 7 : q * 7 + 7])
    assert blocked.compute() == pytest.approx(single.compute(), rel=1e-12)
    assert whole.compute() == pytest.approx(single.compute(), rel=1e-12)
