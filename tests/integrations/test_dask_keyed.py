"""Issue #32: ``by=`` slices and multiclass one-vs-rest exact AUROC / AP in streammetrics.dask.evaluate
by (key, score) ranges (:mod:`streammetrics._engines.keyed_ranges`), no gather of the scores: the
values equal one process's (``Sliced`` for ``by=``, the metrics' own compute) within 1e-12 (unit
weights: AUROC bit for bit) and scikit-learn's; the root receives O(R x K) numbers (observed with
a dask callback on what the range tasks send it)."""

from __future__ import annotations

import dataclasses
import warnings
from typing import Any

import numpy as np
import pytest

pytest.importorskip("dask.dataframe")
pytest.importorskip("sklearn")

import dask  # noqa: E402
import dask.dataframe as dd  # noqa: E402
import engine_cases as cases  # noqa: E402
import pandas as pd  # noqa: E402
from dask.callbacks import Callback  # noqa: E402
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from sklearn.metrics import average_precision_score, roc_auc_score  # noqa: E402

import streammetrics as sm  # noqa: E402
import streammetrics._engines.keyed_ranges as KR  # noqa: E402
import streammetrics._engines.range_counts as RC  # noqa: E402
from streammetrics._engines.request import NullRowsSkipped  # noqa: E402
from streammetrics.dask import evaluate, evaluate_parquet  # noqa: E402
from streammetrics.wrappers.sliced.results import SlicedResults  # noqa: E402

C = 3
SCORES = [f"s{c}" for c in range(C)]
AVERAGES = ("macro", "weighted", "micro", None)


def _frames(df: pd.DataFrame, cuts: list[int]) -> Any:
    bounds = [0, *sorted(cuts), len(df)]
    parts = [df.iloc[a:b] for a, b in zip(bounds[:-1], bounds[1:], strict=True)]
    return dd.from_delayed([dask.delayed(p) for p in parts], meta=df.iloc[:0])


def _data(n: int, seed: int, decimals: int = 2, slices: int = 4) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    y = rng.integers(0, C, n)
    s = np.round(rng.random((n, C)) + 0.3 * np.eye(C)[y], decimals)
    df = pd.DataFrame({"y": y, **{f"s{c}": s[:, c] for c in range(C)},
                       "w": np.round(rng.random(n) * 3, 1), "g": rng.integers(0, slices, n)})
    df["yb"] = (df.y == 1).astype(np.int64)
    return df


def _multiclass_set() -> sm.MetricSet:
    members: dict[str, Any] = {}
    for avg in AVERAGES:
        members[f"auroc_{avg}"] = sm.AUROC(C, average=avg)
        members[f"ap_{avg}"] = sm.AveragePrecision(C, average=avg)
    return sm.MetricSet(acc=sm.Accuracy(C), **members)


def _close(got: Any, want: Any, exact: tuple[str, ...] = ()) -> None:
    if isinstance(want, dict):
        assert set(got) == set(want)
        for k in want:
            _close(got[k], want[k], exact)
        return
    a, b = np.asarray(got, dtype=np.float64), np.asarray(want, dtype=np.float64)
    assert a.shape == b.shape
    assert np.allclose(a, b, rtol=0, atol=1e-12, equal_nan=True), (got, want)


def _messages(caught: list[Any]) -> list[str]:
    """The distinct undefined-value messages (a confusion member of a ``Sliced`` warns once for
    all its slices when the set holds only confusion metrics -- the rest here -- once per slice
    beside a ranking metric)."""
    return sorted({str(w.message) for w in caught if issubclass(w.category, sm.UndefinedMetricWarning)})


def _run(frame: Any, metrics: Any, ranges: int, **kwargs: Any) -> tuple[Any, list[str]]:
    with pytest.MonkeyPatch.context() as mp, dask.config.set(scheduler="synchronous"), \
            warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        mp.setattr(RC, "range_count", lambda: ranges)
        got = evaluate(frame, metrics, **kwargs)
    return got, _messages(caught)


def _one(fn: Any) -> tuple[Any, list[str]]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        want = fn()
    return want, _messages(caught)


@settings(max_examples=12, deadline=None)
@given(n=st.integers(1, 400), seed=st.integers(0, 10**6), ranges=st.integers(1, 5),
       weighted=st.booleans(), data=st.data())
def test_multiclass_equals_one_process_and_sklearn(n: int, seed: int, ranges: int, weighted: bool,
                                                   data: Any) -> None:
    df = _data(n, seed, decimals=data.draw(st.sampled_from([1, 2, 6])))
    w = df.w.to_numpy() if weighted else None
    y, s = df.y.to_numpy(), df[SCORES].to_numpy()
    want, w1 = _one(lambda: _multiclass_set().update(y, s, sample_weight=w).compute())
    cuts = data.draw(st.lists(st.integers(0, n), max_size=5))
    got, w2 = _run(_frames(df, cuts), _multiclass_set(), ranges, label="y", score=SCORES,
                   weight="w" if weighted else None)
    _close(got, want)
    assert w1 == w2
    if not weighted:  # exact pair counts: one process's AUROC bit for bit
        for avg in AVERAGES:
            assert np.array_equal(got[f"auroc_{avg}"], want[f"auroc_{avg}"], equal_nan=True)
    onehot = np.eye(C)[y]
    ww = np.ones(n) if w is None else w  # sklearn's AUROC is NaN for a class of no weight (not only no row)
    if (onehot * ww[:, None]).sum(axis=0).min() > 0 and ((1 - onehot) * ww[:, None]).sum(axis=0).min() > 0:
        for avg in ("macro", "weighted", "micro"):
            assert abs(got[f"auroc_{avg}"] - roc_auc_score(onehot, s, average=avg, sample_weight=w)) <= 1e-12
            assert abs(got[f"ap_{avg}"] - average_precision_score(onehot, s, average=avg, sample_weight=w)) <= 1e-12
        prob = s / s.sum(axis=1, keepdims=True)
        got_p, _ = _run(_frames(df.assign(**{c: prob[:, i] for i, c in enumerate(SCORES)}), cuts),
                        sm.AUROC(C), ranges, label="y", score=SCORES, weight="w" if weighted else None)
        assert abs(got_p - roc_auc_score(y, prob, multi_class="ovr", sample_weight=w)) <= 1e-12


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("ranges", [1, 4])
def test_many_small_slices_equal_sliced(weighted: bool, ranges: int) -> None:
    """Hundreds of slices (a few rows each), one of them all negatives and one all positives:
    ``{key: values}`` of ``Sliced`` in one process, its undefined-value warnings, its row counts."""
    df = _data(3_000, 7, slices=400)
    df.loc[df.g == 5, "yb"] = 0
    df.loc[df.g == 6, "yb"] = 1
    w = df.w.to_numpy() if weighted else None
    metrics = sm.MetricSet(auroc=sm.AUROC(), f1=sm.F1(), ap=sm.AveragePrecision())
    want, w1 = _one(lambda: sm.Sliced(metrics.copy()).update(
        df.yb.to_numpy(), df.s1.to_numpy(), slices=df.g.to_numpy(), sample_weight=w).compute())
    got, w2 = _run(_frames(df, [0, 700, 700, 2_000]), metrics, ranges, label="yb", score="s1", by="g",
                   weight="w" if weighted else None)
    _close(got, want)
    assert np.isnan(got[5]["auroc"]) and np.isnan(got[5]["ap"]) and np.isnan(got[6]["auroc"])
    assert w1 == w2
    single, _ = _run(_frames(df, [1_500]), sm.AUROC(), ranges, label="yb", score="s1", by="g")
    one, _ = _one(lambda: sm.Sliced(sm.AUROC()).update(df.yb.to_numpy(), df.s1.to_numpy(),
                                                         slices=df.g.to_numpy()).compute())
    assert isinstance(single, SlicedResults) and single.counts == one.counts
    _close(single, one)


@pytest.mark.parametrize("ranges", [1, 3])
def test_multiclass_by_slices_with_an_absent_class(ranges: int) -> None:
    """Slices x classes (and the micro problem): a class absent from one slice (nan for it, left
    out of the average, one warning naming it), string keys and several key columns."""
    df = _data(2_000, 11, slices=6)
    df = df[~((df.g == 2) & (df.y == 1))]
    df["h"] = np.where(df.index % 3 == 0, "x", "y")
    w = df.w.to_numpy()
    metrics = _multiclass_set()
    for by in ("g", ["g", "h"]):
        slices = df.g.to_numpy() if by == "g" else {"g": df.g.to_numpy(), "h": df.h.to_numpy()}
        want, w1 = _one(lambda slices=slices: sm.Sliced(metrics.copy()).update(
            df.y.to_numpy(), df[SCORES].to_numpy(), slices=slices, sample_weight=w).compute())
        got, w2 = _run(_frames(df, [300, 1_200]), metrics, ranges, label="y", score=SCORES, by=by, weight="w")
        _close(got, want)
        assert w1 == w2
    assert np.isnan(got[(2, "x")]["auroc_None"][1])




class _RootInputs(Callback):  # type: ignore[misc]
    """The numbers each keyed task sends on: range summaries, offsets (what the root reads)."""

    def __init__(self) -> None:
        super().__init__()
        self.sent: dict[str, int] = {}

    def _posttask(self, key: Any, result: Any, dsk: Any, state: Any, worker_id: Any) -> None:
        if isinstance(key, tuple) and key[0].startswith("streammetrics-keyed") and key[1] in ("range", "offsets"):
            self.sent[key[1]] = self.sent.get(key[1], 0) + cases.numbers_in(result)


@pytest.mark.parametrize("ranges", [1, 4])
def test_root_receives_o_of_r_times_k_numbers(ranges: int) -> None:
    """100,000 rows, 50 slices x 3 classes + micro (200 problems): the range tasks send the root
    a few numbers per (range, problem) present, the offsets O(R + K) arrays -- not the scores."""
    n, slices = 100_000, 50
    df = _data(n, 3, decimals=6, slices=slices)
    spy = _RootInputs()
    metrics = sm.MetricSet(auroc=sm.AUROC(C, average="micro"), ap=sm.AveragePrecision(C))
    with pytest.MonkeyPatch.context() as mp, dask.config.set(scheduler="synchronous"), spy:
        mp.setattr(RC, "range_count", lambda: ranges)
        got = evaluate(_frames(df, [20_000, 50_000]), metrics, label="y", score=SCORES, by="g")
    problems = slices * (C + 1)
    assert spy.sent["range"] <= 6 * (problems + ranges)  # codes, pos, neg, pairs, ap, u2 per problem
    assert spy.sent["offsets"] <= 3 * (problems + ranges) + 2 * problems
    want = sm.Sliced(metrics.copy()).update(df.y.to_numpy(), df[SCORES].to_numpy(),
                                            slices=df.g.to_numpy()).compute()
    _close(got, want)


def test_routing_keeps_ties_and_keys_together() -> None:
    """Tuples tied in (key, score) share a range; a key's tuples lie in consecutive ranges; the
    pieces of every task hold each tuple once."""
    rng = np.random.default_rng(0)
    codes = rng.integers(0, 5, 2_000)
    scores = np.round(rng.random(2_000), 1)
    edges = KR.KeyedEdges(np.array([1, 1, 3]), np.array([0.5, 0.5, 0.2]), [None], [np.zeros(1, np.int64)],
                          np.zeros(1, np.int64), 5, 5)
    rid = KR.range_ids(codes, scores, edges)
    pairs = codes * 10 + np.round(scores * 10).astype(np.int64)
    for p in np.unique(pairs):
        assert np.unique(rid[pairs == p]).shape[0] == 1
    order = np.lexsort((scores, codes))
    assert (np.diff(rid[order]) >= 0).all()
    assert (rid[(codes == 1) & (scores >= 0.5)] == 2).all() and (rid[codes == 0] == 0).all()


def test_parquet_nulls_skip_and_routes(tmp_path: Any) -> None:
    """evaluate_parquet with by= reads through read_parquet onto the keyed ranges; nulls="skip"
    drops the rows in the tasks (the state path's values and warning); other sets keep their
    routes (binary without by=: the score ranges)."""
    df = _data(1_500, 5)
    for i, a in enumerate((0, 500, 1_000)):
        df.iloc[a : a + 500].to_parquet(tmp_path / f"part-{i}.parquet")
    metrics = sm.MetricSet(auroc=sm.AUROC(), ap=sm.AveragePrecision())
    want = sm.Sliced(metrics.copy()).update(df.yb.to_numpy(), df.s1.to_numpy(), slices=df.g.to_numpy()).compute()
    seen: list[Any] = []
    real = KR.split_of
    with pytest.MonkeyPatch.context() as mp, dask.config.set(scheduler="synchronous"):
        mp.setattr(KR, "split_of", lambda *a, **k: seen.append(real(*a, **k)) or seen[-1])
        got = evaluate_parquet(str(tmp_path), metrics, label="yb", score="s1", by="g")
        evaluate_parquet(str(tmp_path), metrics, label="yb", score="s1")
    _close(got, want)
    assert len(seen) == 1 and seen[0] is not None  # the binary set without by= never asks
    holed = df.astype({"s1": float})
    holed.loc[holed.index[::37], "s1"] = np.nan
    kept = holed.dropna()
    want = sm.Sliced(metrics.copy()).update(kept.yb.to_numpy(), kept.s1.to_numpy(),
                                            slices=kept.g.to_numpy()).compute()
    with dask.config.set(scheduler="synchronous"), pytest.warns(NullRowsSkipped,
                                                                match=f"skipped {len(holed) - len(kept)} row"):
        got = evaluate(_frames(holed, [400]), metrics, label="yb", score="s1", by="g", nulls="skip")
    _close(got, want)


def test_sets_outside_the_keyed_ranges_take_the_state_path() -> None:
    """Bins, classes= and compute=False: no keyed split (max_fpr, multilabel and one-vs-one:
    test_dask_keyed_more.py; interpolated / 11-point AP: test_dask_keyed_envelope.py)."""
    df = _data(50, 1)
    template, plan_of = sm.MetricSet, {"y": np.int64, **{c: np.float64 for c in SCORES}}
    from streammetrics._engines.plan import make_plan

    for m in (sm.AUROC(C, max_bytes=4096), sm.AUROC(C, classes=["a", "b", "c"])):
        acc, _, plan = make_plan(template(m=m), label="y", score=SCORES, weight=None, query=None, doc_id=None,
                                 update_kwargs={}, available=list(df.columns))
        assert KR.split_of(acc, plan, plan_of) is None, m
    acc, _, plan = make_plan(template(m=sm.AUROC(C)), label="y", score=SCORES, weight=None, query=None,
                             doc_id=None, update_kwargs={}, available=list(df.columns))
    assert KR.split_of(acc, plan, plan_of) is not None
    with dask.config.set(scheduler="synchronous"):
        merged = evaluate(_frames(df, [20]), sm.AUROC(C), label="y", score=SCORES, compute=False)
    assert merged.compute() == sm.AUROC(C).update(df.y.to_numpy(), df[SCORES].to_numpy()).compute()


def test_too_many_slices_is_sliceds_error() -> None:
    df = _data(300, 2, slices=300)
    real = KR.split_of
    with pytest.MonkeyPatch.context() as mp, dask.config.set(scheduler="synchronous"):
        mp.setattr(KR, "split_of", lambda *a, **k: dataclasses.replace(real(*a, **k), max_slices=10))
        with pytest.raises(ValueError, match="more than max_slices=10 distinct slice keys"):
            evaluate(_frames(df, [100]), sm.AUROC(), label="yb", score="s1", by="g")


def test_local_cluster(client: Any) -> None:
    """On two worker processes (2 ranges): multiclass with weights and by= slices with string keys,
    within 1e-12 of one process."""
    df = _data(4_000, 13, slices=30)
    df["k"] = "slice-" + df.g.astype(str)
    metrics = _multiclass_set()
    assert RC.range_count() == 2
    want = metrics.copy().update(df.y.to_numpy(), df[SCORES].to_numpy(), sample_weight=df.w.to_numpy()).compute()
    got = evaluate(_frames(df, [1_000, 1_000, 2_500]), metrics, label="y", score=SCORES, weight="w")
    _close(got, want)
    binary = sm.MetricSet(auroc=sm.AUROC(), ap=sm.AveragePrecision(), f1=sm.F1())
    want = sm.Sliced(binary.copy()).update(df.yb.to_numpy(), df.s0.to_numpy(), slices=df.k.to_numpy()).compute()
    got = evaluate(_frames(df, [1_000, 3_000]), binary, label="yb", score="s0", by="k")
    _close(got, want)


@pytest.mark.parametrize("ranges", [1, 3])
def test_ignore_index_auroc_only_and_empty_frames(ranges: int) -> None:
    """``ignore_index`` rows dropped as the state drops them; an AUROC-only set (the exact pair
    counts alone); no rows at all: one process's undefined values and warnings (``{}`` sliced)."""
    df = _data(600, 21)
    df.loc[df.index[::7], "y"] = -1
    y, s = df.y.to_numpy(), df[SCORES].to_numpy()
    metrics = sm.MetricSet(a=sm.AUROC(C, ignore_index=-1), m=sm.AUROC(C, ignore_index=-1, average="micro"),
                           n=sm.AUROC(C, ignore_index=-1, average=None))
    want, w1 = _one(lambda: metrics.copy().update(y, s).compute())
    got, w2 = _run(_frames(df, [0, 100, 100]), metrics, ranges, label="y", score=SCORES)
    for k in want:
        assert np.array_equal(got[k], want[k], equal_nan=True), k
    assert w1 == w2
    empty = df.iloc[:0]
    want, w1 = _one(lambda: _multiclass_set().compute())
    got, w2 = _run(_frames(empty, [0]), _multiclass_set(), ranges, label="y", score=SCORES)
    _close(got, want)
    assert w1 == w2
    got, _ = _run(_frames(empty, [0]), _multiclass_set(), ranges, label="y", score=SCORES, by="g")
    assert got == {}


@settings(max_examples=10, deadline=None)
@given(n=st.integers(0, 300), seed=st.integers(0, 10**6), ranges=st.integers(1, 4), weighted=st.booleans(),
       slices=st.integers(1, 40), data=st.data())
def test_slices_x_classes_any_partition_equal_sliced(n: int, seed: int, ranges: int, weighted: bool,
                                                     slices: int, data: Any) -> None:
    """Any partitioning and range count: ``Sliced`` of the multiclass set in one process."""
    df = _data(n, seed, decimals=1, slices=slices)
    w = df.w.to_numpy() if weighted else None
    metrics = sm.MetricSet(a=sm.AUROC(C, average="weighted"), p=sm.AveragePrecision(C, average=None),
                           m=sm.AUROC(C, average="micro"))
    want, w1 = _one(lambda: sm.Sliced(metrics.copy()).update(
        df.y.to_numpy(), df[SCORES].to_numpy(), slices=df.g.to_numpy(), sample_weight=w).compute())
    cuts = data.draw(st.lists(st.integers(0, n), max_size=4))
    got, w2 = _run(_frames(df, cuts), metrics, ranges, label="y", score=SCORES, by="g",
                   weight="w" if weighted else None)
    _close(got, want)
    assert w1 == w2
