"""Windows and decay over the retrieval family (docs/definitions/retrieval.md,
docs/definitions/service.md#windows): a window of the last W
*queries* (or of the queries of the last T seconds, one timestamp per query) equals the measure
on exactly those queries, checked against pytrec_eval and the slow oracles; decay weighs each
query's value by its decay weight (sum w_q m_q / sum w_q)."""

from __future__ import annotations

import numpy as np
import pytest
import pytrec_eval
import retrieval_oracles as O
from helpers import quiet
from hypothesis import given, settings
from hypothesis import strategies as st

import streammetrics as sm
from streammetrics import MAP, MRR, NDCG, Decayed, MetricSet, PrecisionAtK, SetPrecision, Window

REL = 1e-12


def close(a: float, b: float) -> bool:
    return abs(a - b) <= REL * max(1.0, abs(b))


#: (metric factory, per-query oracle (ranked, R, judged) -> value)
MEASURES = {
    "ndcg5": (lambda: NDCG(5), lambda r, R, j: O.ndcg(r, j, 5)),
    "map": (lambda: MAP(), lambda r, R, j: O.average_precision(r, R)),
    "mrr": (lambda: MRR(), lambda r, R, j: O.reciprocal_rank(r)),
    "p3": (lambda: PrecisionAtK(3), lambda r, R, j: O.precision_at_k(r, 3)),
    "rprec": (lambda: sm.RPrecision(), lambda r, R, j: O.r_precision(r, R)),
    "dcg": (lambda: sm.DCG(gain="exponential"), lambda r, R, j: O.dcg(r, None, "exponential")),
}


def _stream(seed: int, n_queries: int):
    """Random TREC-like queries and a random split into update batches."""
    rng = np.random.default_rng(seed)
    qrels, run = O.random_trec(rng, n_queries)
    qs = list(run)
    cuts = np.sort(rng.choice(np.arange(1, n_queries), size=min(n_queries - 1, n_queries // 3), replace=False))
    batches = np.split(np.arange(n_queries), cuts)
    return qrels, run, qs, batches


def _feed(metric, qrels, run, qs, idx, **extra):
    flat = O.flatten(qrels, {qs[i]: run[qs[i]] for i in idx})
    metric.update(flat["relevance"], flat["scores"], doc_ids=flat["doc_ids"], judged=flat["judged"],
                  query_ids=flat["query_ids"], **extra)


def _oracle(qrels, run, q, fn):
    ranked, R, judged = O.ranked_query(qrels, run, q)
    return fn(ranked, R, judged)


@pytest.mark.parametrize("size", [1, 7, 40])
def test_count_window_equals_oracles_on_the_last_w_queries(size):
    qrels, run, qs, batches = _stream(3, 60)
    wins = MetricSet(**{k: Window(make(), size=size) for k, (make, _) in MEASURES.items()})
    micro = Window(SetPrecision(average="micro"), size=size)
    per = {k: [_oracle(qrels, run, q, fn) for q in qs] for k, (_, fn) in MEASURES.items()}
    seen = 0
    for idx in batches:
        _feed(wins, qrels, run, qs, idx)
        _feed(micro, qrels, run, qs, idx)
        seen += len(idx)
        lo = max(0, seen - size)
        got = wins.compute()
        for k in MEASURES:
            assert close(got[k], float(np.mean(per[k][lo:seen]))), (k, seen)
        window_qs = qs[lo:seen]
        rel_ret = sum(sum(1 for d in run[q] if qrels[q].get(d, 0) >= 1) for q in window_qs)
        assert close(micro.compute(), rel_ret / sum(len(run[q]) for q in window_qs))
        assert len(wins["map"]) == seen - lo


def test_count_window_equals_pytrec_eval_on_the_window():
    qrels, run, qs, batches = _stream(11, 50)
    size = 13
    win = MetricSet(ndcg=Window(NDCG(10), size=size), ap=Window(MAP(), size=size),
                    p5=Window(PrecisionAtK(5), size=size))
    seen = 0
    for idx in batches:
        _feed(win, qrels, run, qs, idx)
        seen += len(idx)
        window_qs = qs[max(0, seen - size):seen]
        ev = pytrec_eval.RelevanceEvaluator({q: qrels[q] for q in window_qs}, {"ndcg_cut_10", "map", "P_5"})
        res = ev.evaluate({q: run[q] for q in window_qs})
        got = win.compute()
        assert close(got["ndcg"], float(np.mean([res[q]["ndcg_cut_10"] for q in window_qs])))
        assert close(got["ap"], float(np.mean([res[q]["map"] for q in window_qs])))
        assert close(got["p5"], float(np.mean([res[q]["P_5"] for q in window_qs])))


def test_time_window_keeps_queries_strictly_newer_than_newest_minus_t():
    qrels, run, qs, batches = _stream(5, 40)
    rng = np.random.default_rng(8)
    ts = np.cumsum(rng.integers(0, 3, len(qs))).astype(float)  # ties and gaps
    win = Window(NDCG(5), seconds=4.0)
    per = [_oracle(qrels, run, q, MEASURES["ndcg5"][1]) for q in qs]
    seen = 0
    for b, idx in enumerate(batches):
        stamp = ts[idx] if b % 2 else float(ts[idx[-1]])  # one per query, or one for the call
        if b % 2 == 0:
            ts[idx] = ts[idx[-1]]
        _feed(win, qrels, run, qs, idx, timestamp=stamp)
        seen += len(idx)
        newest = ts[seen - 1]
        keep = [i for i in range(seen) if ts[i] > newest - 4.0]
        assert close(win.compute(), float(np.mean([per[i] for i in keep])))
    win.advance(ts[seen - 1] + 3.5)
    keep = [i for i in range(seen) if ts[i] > ts[seen - 1] - 0.5]
    assert len(win) == len(keep)
    win.advance(ts[seen - 1] + 100)
    assert len(win) == 0
    assert np.isnan(quiet(win.compute))


@pytest.mark.parametrize("by_time", [False, True])
def test_decayed_retrieval_is_the_decay_weighted_mean_over_queries(by_time):
    qrels, run, qs, batches = _stream(9, 80)
    h = 6.0
    ts = np.cumsum(np.random.default_rng(2).random(len(qs)) * 3)
    kw = {"half_life_seconds": h} if by_time else {"half_life": h}
    ms = MetricSet(**{k: Decayed(make(), **kw) for k, (make, _) in MEASURES.items()})
    micro = Decayed(SetPrecision(average="micro"), **kw)
    per = {k: np.array([_oracle(qrels, run, q, fn) for q in qs]) for k, (_, fn) in MEASURES.items()}
    rel_ret = np.array([sum(1 for d in run[q] if qrels[q].get(d, 0) >= 1) for q in qs], dtype=float)
    n_ret = np.array([len(run[q]) for q in qs], dtype=float)
    seen = 0
    for idx in batches:
        extra = {"timestamp": ts[idx]} if by_time else {}
        _feed(ms, qrels, run, qs, idx, **extra)
        _feed(micro, qrels, run, qs, idx, **extra)
        seen += len(idx)
        age = (ts[seen - 1] - ts[:seen]) if by_time else (seen - 1 - np.arange(seen))
        w = 0.5 ** (age / h)
        got = ms.compute()
        for k in MEASURES:
            assert close(got[k], float(w @ per[k][:seen] / w.sum())), (k, seen)
        assert close(micro.compute(), float(w @ rel_ret[:seen] / (w @ n_ret[:seen])))


def test_decay_survives_long_streams_and_gaps():
    d = Decayed(MRR(), half_life_seconds=1.0)
    d.update([1, 0], [0.9, 0.1], timestamp=0.0)
    d.update([0, 1], [0.9, 0.1], timestamp=5000.0)  # the first query's weight underflows to 0
    assert d.compute() == 0.5
    e = Decayed(MRR(), half_life=0.5)
    for i in range(3000):
        e.update([i % 2, 1 - i % 2], [0.9, 0.1])
    w = 0.5 ** ((2999 - np.arange(3000)) / 0.5)
    vals = np.where(np.arange(3000) % 2 == 1, 1.0, 0.5)
    assert close(e.compute(), float(w @ vals / w.sum()))


def test_save_load_round_trip_and_tampering(tmp_path):
    qrels, run, qs, batches = _stream(4, 30)
    made = [
        Window(NDCG(5, per_query=True), size=9),
        Window(MAP(), seconds=5.0),
        Decayed(SetPrecision(average="micro"), half_life=3),
        Decayed(MRR(), half_life_seconds=2.0),
    ]
    for m in made:
        for b, idx in enumerate(batches):
            timed = getattr(m, "seconds", None) or getattr(m, "half_life_seconds", None)
            _feed(m, qrels, run, qs, idx, **({"timestamp": float(b)} if timed else {}))
        path = tmp_path / f"{type(m).__name__}{made.index(m)}.sm"
        sm.save(m, path)
        back = sm.load(path)
        assert back.compute() == m.compute()
        assert back._state.equals(m._state)
        d = m.state_dict()
        for key in ("values", "sums"):
            if key in d:
                bad = dict(d)
                bad[key] = d[key].copy()
                bad[key].flat[0] = np.nan
                with pytest.raises(ValueError):
                    type(m).from_state_dict(bad)
                bad[key] = d[key][..., :0] if d[key].ndim == 1 else d[key][:, :0]
                with pytest.raises(ValueError):
                    type(m).from_state_dict(bad)
        bad = dict(d)
        bad["junk"] = np.zeros(2)
        with pytest.raises(ValueError):
            type(m).from_state_dict(bad)
    d = made[0].state_dict()
    d["values"] = np.zeros((10, 1))  # more queries than the window holds
    with pytest.raises(ValueError, match="holds"):
        Window.from_state_dict(d)
    d = made[1].state_dict()
    d["ts"] = d["ts"] - 100  # rows outside the window
    with pytest.raises(ValueError, match="outside"):
        Window.from_state_dict(d)
    d = made[2].state_dict()
    d["mass"] = 0.5
    with pytest.raises(ValueError, match="mass"):
        Decayed.from_state_dict(d)
    d["mass"] = d["n_seen"] * 1.001  # every query weighs at most 1
    with pytest.raises(ValueError, match="at most"):
        Decayed.from_state_dict(d)
    # merged shards by queries keep their own ages: their total mass still loads
    twin = Decayed.from_state_dict(made[2].state_dict())
    merged = made[2].copy().merge(twin)
    back = Decayed.from_state_dict(merged.state_dict())
    assert back.compute() == merged.compute()


def test_per_query_values_of_a_window_are_the_windows_queries():
    qrels, run, qs, batches = _stream(6, 25)
    w = Window(NDCG(5, per_query=True), size=6)
    for idx in batches:
        _feed(w, qrels, run, qs, idx)
    w.compute()
    want = [_oracle(qrels, run, q, MEASURES["ndcg5"][1]) for q in qs[-6:]]
    np.testing.assert_allclose(w.metric.per_query_values(), want, rtol=1e-12)


def test_validation_and_atomicity():
    w = Window(MAP(), size=3)
    w.update([1, 0], [0.5, 0.2])
    before = w.state_dict()
    with pytest.raises(ValueError):
        w.update([1, 0], [0.5, np.nan])
    with pytest.raises(ValueError, match="timestamp"):
        w.update([1, 0], [0.5, 0.2], timestamp=1.0)  # count windows take none
    with pytest.raises(TypeError):
        w.update([1, 0], [0.5, 0.2], sample_weight=[1, 1])
    t = Window(MAP(), seconds=2.0)
    with pytest.raises(ValueError, match=r"shape \(2,\)"):
        t.update([1, 0, 1], [0.5, 0.2, 0.1], query_ids=[0, 0, 1], timestamp=[1.0, 2.0, 3.0])
    t.update([1, 0, 1], [0.5, 0.2, 0.1], query_ids=[0, 0, 1], timestamp=[1.0, 2.0])
    with pytest.raises(ValueError, match="non-decreasing"):
        t.update([1], [0.5], timestamp=1.5)
    assert len(t) == 2
    np.testing.assert_equal(w.state_dict(), before)
    with pytest.raises(ValueError, match="per_query"):
        Decayed(MAP(per_query=True), half_life=2)
    d = Decayed(MAP(), half_life=2)
    with pytest.raises(ValueError, match="timestamp"):
        d.update([1], [0.5], timestamp=3.0)
    assert d.n_seen == 0
    with pytest.raises(ValueError, match="empty"):
        Window(MAP().update([1], [0.5]), size=2)
    with pytest.raises(ValueError, match="different update shapes"):
        MetricSet(a=Window(MAP(), size=2), b=Window(sm.F1(), size=2))


def test_empty_retrieved_list_is_a_query_scoring_zero():
    w = Window(MRR(), size=2)
    w.update([1], [0.3])
    w.update([], [])
    assert w.compute() == 0.5 and len(w) == 2


# -- properties ---------------------------------------------------------------------------------
def _queries(seed: int, n: int):
    qrels, run = O.random_trec(np.random.default_rng(seed), n)
    return qrels, run, list(run)


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(1, 25), cuts=st.lists(st.integers(1, 24), max_size=6),
       size=st.integers(1, 10), h=st.floats(0.5, 20))
def test_batch_splits_do_not_matter(seed, n, cuts, size, h):
    qrels, run, qs = _queries(seed, n)
    one = [Window(NDCG(5), size=size), Decayed(MAP(), half_life=h),
           Window(MRR(), seconds=3.0), Decayed(SetPrecision(average="micro"), half_life_seconds=h)]
    split = [type(m)._from_config(m._config()) for m in one]
    ts = np.arange(n, dtype=float) / 2
    bounds = sorted({c for c in cuts if c < n})
    for m in one:
        timed = getattr(m, "seconds", None) or getattr(m, "half_life_seconds", None)
        _feed(m, qrels, run, qs, range(n), **({"timestamp": ts} if timed else {}))
    for m in split:
        timed = getattr(m, "seconds", None) or getattr(m, "half_life_seconds", None)
        for idx in np.split(np.arange(n), bounds):
            _feed(m, qrels, run, qs, idx, **({"timestamp": ts[idx]} if timed else {}))
    for a, b in zip(one, split, strict=True):
        va, vb = quiet(a.compute), quiet(b.compute)
        assert close(va, vb) or (np.isnan(va) and np.isnan(vb))
        back = type(b).from_state_dict(b.state_dict())
        vc = quiet(back.compute)
        assert vc == vb or (np.isnan(vc) and np.isnan(vb))


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(2, 24), at=st.integers(1, 23), size=st.integers(1, 12),
       h=st.floats(0.5, 20))
def test_merge_semantics(seed, n, at, size, h):
    """Count windows: b's queries after a's, the last W kept; time windows and time decay: the
    union of the shards by timestamp; decay by queries: each shard's queries keep their own ages."""
    at = min(at, n - 1)
    qrels, run, qs = _queries(seed, n)
    ts = np.sort(np.random.default_rng(seed).random(n) * 10)
    left, right = np.arange(at), np.arange(at, n)
    # count window: a then b == one stream
    a, b, whole = (Window(NDCG(5), size=size) for _ in range(3))
    _feed(a, qrels, run, qs, left)
    _feed(b, qrels, run, qs, right)
    _feed(whole, qrels, run, qs, range(n))
    assert close(a.merge(b).compute(), whole.compute())
    # time window: shards interleaved by timestamp
    odd, even = np.arange(1, n, 2), np.arange(0, n, 2)
    a, b, whole = (Window(MAP(), seconds=3.0) for _ in range(3))
    _feed(a, qrels, run, qs, even, timestamp=ts[even])
    _feed(b, qrels, run, qs, odd, timestamp=ts[odd])
    _feed(whole, qrels, run, qs, range(n), timestamp=ts)
    assert close(a.merge(b).compute(), whole.compute())
    # time decay: the union
    a, b, whole = (Decayed(MRR(), half_life_seconds=h) for _ in range(3))
    _feed(a, qrels, run, qs, even, timestamp=ts[even])
    _feed(b, qrels, run, qs, odd, timestamp=ts[odd])
    _feed(whole, qrels, run, qs, range(n), timestamp=ts)
    assert close(a.merge(b).compute(), whole.compute())
    # decay by queries: each shard's ages in its shard
    a, b = Decayed(MRR(), half_life=h), Decayed(MRR(), half_life=h)
    _feed(a, qrels, run, qs, left)
    _feed(b, qrels, run, qs, right)
    per = np.array([_oracle(qrels, run, q, lambda r, R, j: O.reciprocal_rank(r)) for q in qs])
    wa = 0.5 ** ((at - 1 - np.arange(at)) / h)
    wb = 0.5 ** ((n - at - 1 - np.arange(n - at)) / h)
    want = (wa @ per[:at] + wb @ per[at:]) / (wa.sum() + wb.sum())
    merged = a.merge(b)
    assert close(merged.compute(), float(want))
    assert merged.n_seen == n
