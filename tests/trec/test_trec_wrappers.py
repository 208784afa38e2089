"""``sm.Window`` and ``sm.Decayed`` over trec accumulators, across every numeric measure of
``all_trec`` plus the ir_measures names, in several batches, through save/load and merge.

A window over the last N queries equals a fresh accumulator fed those N queries; a decayed
accumulator equals the decay-weighted combination of the per-query values computed by hand
(the weighted mean; for ``gm_map`` / ``gm_bpref`` the exponential of the weighted mean log; the
``num_*`` counts as the weighted mean per query, as documented in :mod:`streammetrics.trec.stream`).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import retrieval_oracles as O
from hypothesis import given, settings
from hypothesis import strategies as st

import streammetrics as sm
from streammetrics.trec import TrecMeasure, TrecMeasures, trec_batch

TOL = 1e-12
MEASURES = ["all_trec", "11pt_avg", "iprec_at_recall..1,.35", "nDCG@10", "RBP(p=0.8)", "ERR@5",
            "Judged@10", "RR@3", "AP@5", "infAP", "P(rel=2)@5"]  # fmt: skip
OPTIONS = [
    {},
    {"trec_version": 10, "judged_only": True, "max_docs": 6},
    {"rel_level": 2, "fused_cutoffs": True, "num_docs": 40},
]


def _data(seed: int, n: int):
    rng = np.random.default_rng(seed)
    qrels, run = O.random_trec(rng, n, max_docs=10)
    qs = sorted(run, key=lambda q: q.encode())  # trec_batch's order within a batch
    order = [qs[i] for i in rng.permutation(len(qs))]  # queries arrive in a random order
    cuts = np.sort(rng.choice(np.arange(1, n), size=min(4, n - 1), replace=False))
    batches = [sorted(chunk.tolist(), key=lambda q: q.encode()) for chunk in np.split(np.array(order), cuts)]
    return qrels, run, batches


def _feed(metric, qrels, run, queries, version):
    trec_batch(qrels, {q: run[q] for q in queries}, trec_version=version).feed(metric)


def _close(got: dict, want: dict) -> None:
    assert set(got) == set(want)
    for name, w in want.items():
        if math.isnan(w):  # trec_eval's 0/0 (a query -J leaves without documents): NaN in both
            assert math.isnan(got[name]), (name, got[name], w)
            continue
        assert abs(got[name] - w) <= TOL * max(1.0, abs(w)), (name, got[name], w)


@settings(max_examples=6, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), size=st.integers(1, 12), which=st.integers(0, len(OPTIONS) - 1))
def test_window_over_the_last_queries_equals_a_fresh_accumulator(seed, size, which):
    opts = OPTIONS[which]
    version = opts.get("trec_version", 9)
    qrels, run, batches = _data(seed, 18)
    w = sm.Window(TrecMeasures(MEASURES, per_query=True, **opts), size=size)
    seen: list[str] = []
    for i, batch in enumerate(batches):
        _feed(w, qrels, run, batch, version)
        seen += batch
        if i == 1:  # saved and loaded mid-stream, then fed on
            w = sm.loads(sm.dumps(w))
        fresh = TrecMeasures(MEASURES, per_query=True, **opts)
        for q in seen[-size:]:  # one query per update: the window's order, not re-sorted
            _feed(fresh, qrels, run, [q], version)
        _close(w.compute(), fresh.compute())
        got_q, want_q = w.per_query_values(), fresh.per_query_values()
        for name in want_q:  # (equal_nan: trec_eval's 0/0 where -J leaves a query no document)
            np.testing.assert_allclose(got_q[name], want_q[name], rtol=0, atol=TOL, equal_nan=True)


def test_window_by_time_keeps_the_queries_newer_than_the_span():
    qrels, run, batches = _data(21, 16)
    w = sm.Window(TrecMeasures(MEASURES), seconds=5.0)
    order = [q for b in batches for q in b]
    stamps = {q: float(t) for t, q in enumerate(order)}  # one query a second
    for batch in batches:
        b = trec_batch(qrels, {q: run[q] for q in batch})
        w.update(b.relevance, b.scores, doc_ids=b.doc_ids, judged=b.judged, query_ids=b.query_ids,
                 timestamp=[stamps[q] for q in batch])  # fmt: skip
        newest = stamps[batch[-1]]
        fresh = TrecMeasures(MEASURES)
        _feed(fresh, qrels, run, [q for q in order if newest - 5.0 < stamps[q] <= newest], 9)
        _close(w.compute(), fresh.compute())


def _by_hand(per_q: dict[str, np.ndarray], acc: TrecMeasures, weights: np.ndarray) -> dict[str, float]:
    """The decay-weighted value of each column from per-query values (update order)."""
    out = {}
    for name, avg in zip(acc.spec.columns, acc.spec.averages, strict=True):
        v = per_q[name]
        if avg == "gm":  # per_query_values gives exp(log value): the geometric mean's terms
            out[name] = math.exp(float((weights * np.log(v)).sum() / weights.sum()))
        else:
            out[name] = float((weights * v).sum() / weights.sum())
    return out


@pytest.mark.parametrize("half_life", [0.7, 3.0, 50.0])
@pytest.mark.parametrize("which", range(len(OPTIONS)))
def test_decayed_equals_the_hand_weighted_per_query_values(half_life, which):
    opts = OPTIONS[which]
    version = opts.get("trec_version", 9)
    qrels, run, batches = _data(31 + which, 20)
    d = sm.Decayed(TrecMeasures(MEASURES, **opts), half_life=half_life)
    ref = TrecMeasures(MEASURES, per_query=True, **opts)
    for i, batch in enumerate(batches):
        _feed(d, qrels, run, batch, version)
        _feed(ref, qrels, run, batch, version)
        if i == 1:
            d = sm.loads(sm.dumps(d))
        per_q = ref.per_query_values()
        n = len(per_q[ref.names[0]])
        w = 0.5 ** ((n - 1 - np.arange(n)) / half_life)  # the newest query weighs 1
        _close(d.compute(), _by_hand(per_q, ref, w))
    assert ref.compute()["num_q"] == 20 and d.compute()["num_q"] == pytest.approx(1.0, abs=TOL)


def test_decayed_merge_keeps_each_shards_query_ages():
    qrels, run, batches = _data(41, 20)
    shards = [batches[0] + batches[1], batches[2] + batches[3] + batches[4]]
    half_life = 2.5
    ds, refs = [], []
    for shard in shards:
        d = sm.Decayed(TrecMeasures(MEASURES), half_life=half_life)
        ref = TrecMeasures(MEASURES, per_query=True)
        for q in shard:
            _feed(d, qrels, run, [q], 9)
            _feed(ref, qrels, run, [q], 9)
        ds.append(d)
        refs.append(ref)
    merged = ds[0].merge(ds[1])
    per_q = {n: np.concatenate([r.per_query_values()[n] for r in refs]) for n in refs[0].names}
    w = np.concatenate([0.5 ** ((len(s) - 1 - np.arange(len(s))) / half_life) for s in shards])
    _close(merged.compute(), _by_hand(per_q, refs[0], w))


def test_decayed_by_time_weighs_each_query_by_its_age():
    qrels, run, batches = _data(51, 15)
    d = sm.Decayed(TrecMeasures(MEASURES), half_life_seconds=4.0)
    ref = TrecMeasures(MEASURES, per_query=True)
    order = [q for b in batches for q in b]
    rng = np.random.default_rng(5)
    stamps = dict(zip(order, np.cumsum(rng.uniform(0.1, 3.0, size=len(order))).tolist(), strict=True))
    for batch in batches:
        b = trec_batch(qrels, {q: run[q] for q in batch})
        d.update(b.relevance, b.scores, doc_ids=b.doc_ids, judged=b.judged, query_ids=b.query_ids,
                 timestamp=[stamps[q] for q in batch])  # fmt: skip
        _feed(ref, qrels, run, batch, 9)
    t = np.array([stamps[q] for q in order])
    w = 0.5 ** ((t[-1] - t) / 4.0)
    _close(d.compute(), _by_hand(ref.per_query_values(), ref, w))


# -- the preference and judgment-group measures (judgment rows in judged=) -------------------------
ROWS_CASES = [("prefs", "all_prefs"), ("qrels_prefs", "all_prefs"), ("qrels_jg", "qrels_jg")]


def _rows_data(seed: int, n: int, judgments: str):
    """Random queries with each query's judgment rows as ``judgments`` takes them: qrels_jg and
    qrels_prefs rows from two or three judges (groups) grading a random subset of the judged
    documents; prefs rows in one or two sub-groups of a judge, levels agreeing across them (so
    that the preferences are consistent)."""
    rng = np.random.default_rng(seed)
    qrels, run = O.random_trec(rng, n, max_docs=8)
    rows: dict[str, list[tuple]] = {}
    for q, docs in qrels.items():
        rows[q] = []
        for jg in ["A", "B", "C"][: int(rng.integers(2, 4))]:
            for d, g in docs.items():
                if rng.random() < 0.7:
                    if judgments == "prefs":
                        rows[q].extend((jg, jsg, d, float(g)) for jsg in ["s1", "s2"][: int(rng.integers(1, 3))])
                    else:
                        rows[q].append((jg, d, int(rng.integers(-1, 3)) if judgments == "qrels_jg" else g))
    return rows, run, list(run)


def _feed_rows(metric, rows, run, queries, **kw):
    metric.update(None, [s for q in queries for s in run[q].values()],
                  doc_ids=[d for q in queries for d in run[q]], judged={q: rows[q] for q in queries},
                  query_ids=[q for q in queries for _ in run[q]], **kw)  # fmt: skip


@pytest.mark.parametrize(("judgments", "measure"), ROWS_CASES)
@pytest.mark.parametrize("size", [1, 4])
def test_window_over_judgment_rows_equals_a_fresh_accumulator(judgments, measure, size):
    rows, run, order = _rows_data(61 + size, 14, judgments)
    opts = {"judgments": judgments, "per_query": True, "max_docs": 6}
    w = sm.Window(TrecMeasures(measure, **opts), size=size)
    for i in range(0, len(order), 3):
        _feed_rows(w, rows, run, order[i : i + 3])
        if i == 3:
            w = sm.loads(sm.dumps(w))
        fresh = TrecMeasures(measure, **opts)
        _feed_rows(fresh, rows, run, order[: i + 3][-size:])
        _close(w.compute(), fresh.compute())
        for name, want in fresh.per_query_values().items():
            np.testing.assert_allclose(w.per_query_values()[name], want, rtol=0, atol=TOL)


@pytest.mark.parametrize(("judgments", "measure"), ROWS_CASES)
def test_decayed_over_judgment_rows_equals_the_hand_weighted_values(judgments, measure):
    rows, run, order = _rows_data(71, 16, judgments)
    half_life = 2.0
    d = sm.Decayed(TrecMeasures(measure, judgments=judgments), half_life=half_life)
    by_time = sm.Decayed(TrecMeasures(measure, judgments=judgments), half_life_seconds=3.0)
    ref = TrecMeasures(measure, judgments=judgments, per_query=True)
    stamps = {q: 0.5 * i * i for i, q in enumerate(order)}
    for i in range(0, len(order), 4):
        batch = order[i : i + 4]
        _feed_rows(d, rows, run, batch)
        _feed_rows(by_time, rows, run, batch, timestamp=[stamps[q] for q in batch])
        _feed_rows(ref, rows, run, batch)
        if i == 4:
            d = sm.loads(sm.dumps(d))
        per_q = ref.per_query_values()
        n = len(per_q[ref.names[0]])
        _close(d.compute(), _by_hand(per_q, ref, 0.5 ** ((n - 1 - np.arange(n)) / half_life)))
        t = np.array([stamps[q] for q in order[:n]])
        _close(by_time.compute(), _by_hand(per_q, ref, 0.5 ** ((t[-1] - t) / 3.0)))


def test_window_per_query_values_passes_through():
    """``Window.per_query_values()`` is the wrapped metric's over the window's queries, in arrival
    order, read without a ``compute()`` first (a TrecMeasures: a dict; a TrecMeasure or NDCG: an
    array); a wrapped metric without per-query values raises AttributeError."""
    qrels, run, batches = _data(81, 12)
    order = [q for b in batches for q in b]
    for make in (lambda: TrecMeasures(["map", "P.5"], per_query=True), lambda: TrecMeasure("ndcg", per_query=True)):
        w = sm.Window(make(), size=4)
        for batch in batches:
            _feed(w, qrels, run, batch, 9)
        fresh = make()
        for q in order[-4:]:
            _feed(fresh, qrels, run, [q], 9)
        got, want = w.per_query_values(), fresh.per_query_values()
        if isinstance(want, dict):
            assert got.keys() == want.keys() and all(np.array_equal(got[k], want[k]) for k in want)
        else:
            assert got.shape == (4,) and np.array_equal(got, want)
    nd = sm.Window(sm.NDCG(3, per_query=True), size=2)
    nd.update([1, 0, 0, 1, 2, 0], [0.9, 0.1, 0.9, 0.1, 0.5, 0.4], query_ids=[1, 1, 2, 2, 3, 3])
    np.testing.assert_allclose(nd.per_query_values(), [1 / np.log2(3), 1.0], rtol=0, atol=TOL)
    with pytest.raises(AttributeError, match="F1 has no per_query_values"):
        sm.Window(sm.F1(), size=3).per_query_values()
    with pytest.raises(ValueError, match="per_query=True"):
        sm.Window(TrecMeasure("map"), size=3).per_query_values()
