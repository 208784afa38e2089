"""Issue #32, more sets by (key, score) ranges in streammetrics.dask.evaluate
(:mod:`streammetrics._engines.keyed_ranges`), no gather of the scores: a partial
``AUROC(max_fpr=...)`` with ``by=`` slices or multiclass one-vs-rest (each range task sends each
key's part of the partial area, the root standardises per key), multilabel AUROC / AP (a
problem per label, or slice x label, plus the pooled micro one) and one-vs-one AUROC (a problem
per ordered class pair). Values: one process's
(``Sliced`` with ``by=``) within 1e-12 and scikit-learn's per slice / label; the root receives
O(R x K) numbers."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

pytest.importorskip("dask.dataframe")
pytest.importorskip("sklearn")

import dask  # noqa: E402
import engine_cases as cases  # noqa: E402
import pandas as pd  # noqa: E402
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from sklearn.metrics import average_precision_score, roc_auc_score, roc_curve  # noqa: E402
from test_dask_keyed import AVERAGES, SCORES, C, _close, _data, _frames, _one, _RootInputs, _run  # noqa: E402

import streammetrics as sm  # noqa: E402
import streammetrics._engines.keyed_ranges as KR  # noqa: E402
import streammetrics._engines.range_counts as RC  # noqa: E402
from streammetrics._engines.plan import make_plan  # noqa: E402
from streammetrics.dask import evaluate, evaluate_parquet  # noqa: E402

LABELS = [f"l{c}" for c in range(C)]


def _labelled(df: pd.DataFrame, seed: int) -> pd.DataFrame:
    """``df`` with multilabel targets l0..l2, each more often 1 where its score is high."""
    rng = np.random.default_rng(seed + 1)
    s = df[SCORES].to_numpy()
    y = (rng.random(s.shape) < 0.2 + 0.5 * (s > 0.6)).astype(np.int64)
    return df.assign(**{c: y[:, i] for i, c in enumerate(LABELS)})


def _binary_partial(m: float) -> sm.MetricSet:
    return sm.MetricSet(part=sm.AUROC(max_fpr=m), low=sm.AUROC(max_fpr=0.1), full=sm.AUROC(max_fpr=1.0),
                        auroc=sm.AUROC(), ap=sm.AveragePrecision(), f1=sm.F1())


def _multi_partial(multilabel: bool, ignore: int | None = None, m: float = 0.3) -> sm.MetricSet:
    members: dict[str, Any] = {"acc": sm.Accuracy(C) if not multilabel else sm.F1(C, multilabel=True)}
    for avg in AVERAGES:
        kw: dict[str, Any] = {"average": avg, "multilabel": multilabel, "ignore_index": ignore}
        members[f"part_{avg}"] = sm.AUROC(C, max_fpr=m, **kw)
        members[f"auroc_{avg}"] = sm.AUROC(C, **kw)
        members[f"ap_{avg}"] = sm.AveragePrecision(C, **kw)
    if ignore is not None:
        del members["acc"]
    return sm.MetricSet(members)


def _curve_point(y: np.ndarray, s: np.ndarray, w: np.ndarray | None) -> float:
    """An FPR strictly inside (0, 1) where the ROC curve of (y, s, w) has a point."""
    fpr, _, _ = roc_curve(y, s, sample_weight=w, drop_intermediate=False)
    inner = np.unique(fpr[(fpr > 0) & (fpr < 1)])
    return float(inner[inner.shape[0] // 2])


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("ranges", [1, 4])
def test_partial_auroc_by_slices_equals_sliced_and_sklearn(weighted: bool, ranges: int) -> None:
    """Binary ``max_fpr`` with ``by=``: tied scores, float weights with zeros, m at a point of
    slice 0's curve (between points elsewhere), a slice of negatives only (nan, the same
    warnings); one process's ``Sliced`` and scikit-learn's ``roc_auc_score(max_fpr=)`` per slice."""
    df = _data(2_400, 17, decimals=1, slices=5)
    df.loc[df.g == 4, "yb"] = 0
    w = df.w.to_numpy() if weighted else None
    assert not weighted or (w == 0).any()
    first = df.g.to_numpy() == 0
    m = _curve_point(df.yb.to_numpy()[first], df.s1.to_numpy()[first], None if w is None else w[first])
    metrics = _binary_partial(m)
    want, w1 = _one(lambda: sm.Sliced(metrics.copy()).update(
        df.yb.to_numpy(), df.s1.to_numpy(), slices=df.g.to_numpy(), sample_weight=w).compute())
    got, w2 = _run(_frames(df, [0, 500, 1_700]), metrics, ranges, label="yb", score="s1", by="g",
                   weight="w" if weighted else None)
    _close(got, want)
    assert w1 == w2 and np.isnan(got[4]["part"])
    for key in range(4):
        d = df[df.g == key]
        sw = d.w.to_numpy() if weighted else None
        for name, fpr in (("part", m), ("low", 0.1)):
            assert abs(got[key][name] - roc_auc_score(d.yb, d.s1, max_fpr=fpr, sample_weight=sw)) <= 1e-12
        assert got[key]["full"] == got[key]["auroc"]


@pytest.mark.parametrize("ranges", [1, 3])
def test_partial_auroc_multiclass_by_slices_with_an_absent_class(ranges: int) -> None:
    """Multiclass one-vs-rest ``max_fpr`` (per class, each average, micro pooled), alone and
    with ``by=`` where one slice lacks class 1: one process within 1e-12, its warnings."""
    df = _data(1_800, 23, decimals=2, slices=4)
    df = df[~((df.g == 2) & (df.y == 1))]
    y, s, w = df.y.to_numpy(), df[SCORES].to_numpy(), df.w.to_numpy()
    metrics = _multi_partial(False)
    want, w1 = _one(lambda: metrics.copy().update(y, s, sample_weight=w).compute())
    got, w2 = _run(_frames(df, [400, 400, 1_000]), metrics, ranges, label="y", score=SCORES, weight="w")
    _close(got, want)
    assert w1 == w2
    want, w1 = _one(lambda: sm.Sliced(metrics.copy()).update(y, s, slices=df.g.to_numpy(), sample_weight=w).compute())
    got, w2 = _run(_frames(df, [700]), metrics, ranges, label="y", score=SCORES, weight="w", by="g")
    _close(got, want)
    assert w1 == w2 and np.isnan(got[2]["part_None"][1])


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("ranges", [1, 4])
def test_multilabel_equals_one_process_and_sklearn(weighted: bool, ranges: int) -> None:
    """Multilabel AUROC (full and partial) and AP, every average: one process within 1e-12
    (unit weights: the full AUROC bit for bit) and scikit-learn's (indicator targets), alone
    and per slice; a label with no positive in one slice (nan, left out of its averages)."""
    df = _labelled(_data(2_000, 29, decimals=1, slices=4), 29)
    df.loc[df.g == 3, "l2"] = 0
    y, s = df[LABELS].to_numpy(), df[SCORES].to_numpy()
    w = df.w.to_numpy() if weighted else None
    weight = "w" if weighted else None
    metrics = _multi_partial(True)
    want, w1 = _one(lambda: metrics.copy().update(y, s, sample_weight=w).compute())
    got, w2 = _run(_frames(df, [0, 600, 1_300]), metrics, ranges, label=LABELS, score=SCORES, weight=weight)
    _close(got, want)
    assert w1 == w2
    if not weighted:
        for avg in AVERAGES:
            assert np.array_equal(got[f"auroc_{avg}"], want[f"auroc_{avg}"], equal_nan=True)
    for avg in ("macro", "weighted", "micro", None):
        np.testing.assert_allclose(got[f"auroc_{avg}"], roc_auc_score(y, s, average=avg, sample_weight=w),
                                   rtol=0, atol=1e-12)
        np.testing.assert_allclose(got[f"part_{avg}"], roc_auc_score(y, s, average=avg, max_fpr=0.3,
                                                                     sample_weight=w), rtol=0, atol=1e-12)
        np.testing.assert_allclose(got[f"ap_{avg}"], average_precision_score(y, s, average=avg, sample_weight=w),
                                   rtol=0, atol=1e-12)
    g = df.g.to_numpy()
    want, w1 = _one(lambda: sm.Sliced(metrics.copy()).update(y, s, slices=g, sample_weight=w).compute())
    got, w2 = _run(_frames(df, [900]), metrics, ranges, label=LABELS, score=SCORES, weight=weight, by="g")
    _close(got, want)
    assert w1 == w2 and np.isnan(got[3]["auroc_None"][2])
    for key in range(3):
        at = g == key
        np.testing.assert_allclose(got[key]["part_None"], roc_auc_score(
            y[at], s[at], average=None, max_fpr=0.3, sample_weight=None if w is None else w[at]), rtol=0, atol=1e-12)


def test_multilabel_ignore_index_drops_entries() -> None:
    """``ignore_index`` in a multilabel target drops that entry (of its label and of the pooled
    problem), not the row: one process's values and warnings."""
    df = _labelled(_data(900, 31, decimals=1), 31)
    rng = np.random.default_rng(3)
    for c in LABELS:
        df.loc[rng.random(len(df)) < 0.1, c] = -1
    y, s, w = df[LABELS].to_numpy(), df[SCORES].to_numpy(), df.w.to_numpy()
    metrics = _multi_partial(True, ignore=-1, m=0.45)
    want, w1 = _one(lambda: metrics.copy().update(y, s, sample_weight=w).compute())
    got, w2 = _run(_frames(df, [300]), metrics, 3, label=LABELS, score=SCORES, weight="w")
    _close(got, want)
    assert w1 == w2


def _ovo_set(m: float = 0.35) -> sm.MetricSet:
    return sm.MetricSet(macro=sm.AUROC(C, multi_class="ovo"), weighted=sm.AUROC(C, multi_class="ovo", average="weighted"),
                        part=sm.AUROC(C, multi_class="ovo", max_fpr=m), acc=sm.Accuracy(C))


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10**6), ranges=st.sampled_from([1, 3, 5]), data=st.data())
def test_one_vs_one_max_fpr_one_is_bit_for_bit(seed: int, ranges: int, data: Any) -> None:
    """``AUROC(multi_class="ovo", max_fpr=1.0)`` unweighted: the keyed ranges' full area and
    one process's, bit for bit (the review of #32 found 1 ulp apart in ~6 of 25 seeds: one
    process read max_fpr=1 as each pair's trapezoid, the ranges as the pair counts)."""
    df = _data(data.draw(st.integers(50, 600)), seed, decimals=1)
    y, s = df.y.to_numpy(), df[SCORES].to_numpy()
    metrics = sm.MetricSet(one=sm.AUROC(C, multi_class="ovo", max_fpr=1.0),
                           wone=sm.AUROC(C, multi_class="ovo", max_fpr=1.0, average="weighted"))
    want, _ = _one(lambda: metrics.copy().update(y, s).compute())
    cuts = data.draw(st.lists(st.integers(0, len(df)), max_size=3))
    got, _ = _run(_frames(df, cuts), metrics, ranges, label="y", score=SCORES)
    assert got == want


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("ranges", [1, 4])
def test_one_vs_one_equals_one_process_and_sklearn(weighted: bool, ranges: int) -> None:
    """Hand & Till's one-vs-one AUROC (macro, weighted, partial) by ordered class pairs: one
    process within 1e-12 (unit weights: bit for bit) alone and per slice, a slice lacking
    class 1 (its pairs left out, one process's warning), ``ignore_index`` rows; scikit-learn's
    ``roc_auc_score(multi_class="ovo")`` on probabilities."""
    df = _data(2_000, 47, decimals=1, slices=4)
    df = df[~((df.g == 2) & (df.y == 1))]
    prob = df[SCORES].to_numpy() / df[SCORES].to_numpy().sum(axis=1, keepdims=True)
    df = df.assign(**{c: prob[:, i] for i, c in enumerate(SCORES)})
    y, s = df.y.to_numpy(), df[SCORES].to_numpy()
    w = df.w.to_numpy() if weighted else None
    weight = "w" if weighted else None
    metrics = _ovo_set()
    want, w1 = _one(lambda: metrics.copy().update(y, s, sample_weight=w).compute())
    got, w2 = _run(_frames(df, [0, 500, 1_100]), metrics, ranges, label="y", score=SCORES, weight=weight)
    _close(got, want)
    assert w1 == w2
    if not weighted:
        assert got["macro"] == want["macro"] and got["weighted"] == want["weighted"]
        for avg in ("macro", "weighted"):
            assert abs(got[avg] - roc_auc_score(y, s, multi_class="ovo", average=avg)) <= 1e-12
    g = df.g.to_numpy()
    want, w1 = _one(lambda: sm.Sliced(metrics.copy()).update(y, s, slices=g, sample_weight=w).compute())
    got, w2 = _run(_frames(df, [900]), metrics, ranges, label="y", score=SCORES, weight=weight, by="g")
    _close(got, want)
    assert w1 == w2 and any("class absent" in m for m in w2)
    ignored = df.assign(y=np.where(np.arange(len(df)) % 9 == 0, -1, df.y))
    metrics = sm.MetricSet(a=sm.AUROC(C, multi_class="ovo", ignore_index=-1),
                           p=sm.AUROC(C, multi_class="ovo", ignore_index=-1, max_fpr=0.2, average="weighted"))
    want, _ = _one(lambda: metrics.copy().update(ignored.y.to_numpy(), s, sample_weight=w).compute())
    got, _ = _run(_frames(ignored, [700]), metrics, ranges, label="y", score=SCORES, weight=weight)
    _close(got, want)


def test_routes_of_partial_and_multilabel_sets(tmp_path: Any) -> None:
    """max_fpr (with by= or multiclass) and multilabel sets are keyed; mixing multilabel and
    multiclass members, a single label column for multilabel, or a multilabel member without
    its label columns is not; evaluate_parquet takes the keyed route too."""
    df = _labelled(_data(60, 1), 1)
    types = {c: df[c].dtype for c in df.columns}

    def split(template: Any, **cols: Any) -> Any:
        acc, _, plan = make_plan(template, weight=None, query=None, doc_id=None, update_kwargs={},
                                 available=list(df.columns), **cols)
        return KR.split_of(acc, plan, types)

    ml = sm.MetricSet(m=sm.AUROC(C, multilabel=True, max_fpr=0.2), a=sm.AveragePrecision(C, multilabel=True))
    assert split(ml, label=LABELS, score=SCORES).multilabel
    assert split(sm.MetricSet(m=sm.AUROC(C, max_fpr=0.5)), label="y", score=SCORES).max_fprs == (0.5,)
    assert split(sm.AUROC(max_fpr=0.5), label="yb", score="s1", by="g") is not None
    assert split(sm.MetricSet(m=sm.AUROC(max_fpr=0.5)), label="yb", score="s1") is None  # evaluate_ranked's
    mixed = sm.MetricSet(m=sm.AUROC(C, multilabel=True), c=sm.AUROC(C))
    assert split(mixed, label=LABELS, score=SCORES) is None
    assert split(sm.MetricSet(m=sm.AUROC(C, multilabel=True)), label="y", score=SCORES) is None
    ovo = split(sm.MetricSet(a=sm.AUROC(C, multi_class="ovo", max_fpr=0.4), f=sm.F1(C)), label="y", score=SCORES)
    assert ovo.ovo and ovo.width == C * (C - 1) and ovo.ap_columns == (False,) * C * (C - 1)
    assert ovo.partial_columns == ((0.4,),) * C * (C - 1)
    both = sm.MetricSet(a=sm.AUROC(C, multi_class="ovo"), b=sm.AUROC(C))  # two exact ranking groups
    assert [list(g.ranked) for g in split(both, label="y", score=SCORES).groups] == [["a"], ["b"]]
    ovr = split(sm.MetricSet(p=sm.AUROC(C, max_fpr=0.3, average="micro"), q=sm.AUROC(C, max_fpr=0.7),
                             a=sm.AUROC(C, average="micro")), label="y", score=SCORES)
    assert ovr.partial_columns == ((0.7,),) * C + ((0.3,),) and ovr.max_fprs == (0.3, 0.7)
    df = _labelled(_data(1_200, 37, decimals=2, slices=3), 37)
    for i, a in enumerate((0, 400, 800)):
        df.iloc[a : a + 400].to_parquet(tmp_path / f"part-{i}.parquet")
    seen: list[Any] = []
    real = KR.split_of
    with pytest.MonkeyPatch.context() as mp, dask.config.set(scheduler="synchronous"):
        mp.setattr(KR, "split_of", lambda *a, **k: seen.append(real(*a, **k)) or seen[-1])
        got = evaluate_parquet(str(tmp_path), ml, label=LABELS, score=SCORES, by="g")
    assert seen and seen[-1] is not None
    want = sm.Sliced(ml.copy()).update(df[LABELS].to_numpy(), df[SCORES].to_numpy(), slices=df.g.to_numpy()).compute()
    _close(got, want)


@pytest.mark.parametrize("ranges", [1, 4])
def test_root_receives_o_of_r_times_k_numbers(ranges: int) -> None:
    """60,000 rows, 40 slices x 3 labels + micro (160 problems), two partial areas: the range
    tasks send a few numbers per (range, problem) present (one more per max_fpr), the offsets
    O(R + K) arrays -- not the scores."""
    slices = 40
    df = _labelled(_data(60_000, 41, decimals=6, slices=slices), 41)
    spy = _RootInputs()
    metrics = sm.MetricSet(a=sm.AUROC(C, multilabel=True, average="micro", max_fpr=0.2),
                           b=sm.AUROC(C, multilabel=True, max_fpr=0.5), p=sm.AveragePrecision(C, multilabel=True))
    with pytest.MonkeyPatch.context() as mp, dask.config.set(scheduler="synchronous"), spy:
        mp.setattr(RC, "range_count", lambda: ranges)
        got = evaluate(_frames(df, [15_000, 40_000]), metrics, label=LABELS, score=SCORES, by="g")
    problems = slices * (C + 1)
    assert spy.sent["range"] <= 8 * (problems + ranges)  # codes, pos, neg, pairs, ap, u2, 2 partial
    assert spy.sent["offsets"] <= 3 * (problems + ranges) + 2 * problems
    assert cases.numbers_in(got) < 10 * problems
    want = sm.Sliced(metrics.copy()).update(df[LABELS].to_numpy(), df[SCORES].to_numpy(),
                                            slices=df.g.to_numpy()).compute()
    _close(got, want)


@settings(max_examples=10, deadline=None)
@given(n=st.integers(0, 300), seed=st.integers(0, 10**6), ranges=st.integers(1, 4), weighted=st.booleans(),
       slices=st.integers(1, 12), m=st.sampled_from([0.05, 0.25, 0.5, 0.9]), data=st.data())
def test_any_partition_equals_sliced(n: int, seed: int, ranges: int, weighted: bool, slices: int,
                                     m: float, data: Any) -> None:
    """Any partitioning and range count: ``Sliced`` in one process, for a binary set with partial
    AUROCs, a multilabel one (partial, full, AP; macro / micro / per label) and a one-vs-one one
    (macro, weighted, partial)."""
    df = _labelled(_data(n, seed, decimals=1, slices=slices), seed)
    w = df.w.to_numpy() if weighted else None
    weight = "w" if weighted else None
    cuts = data.draw(st.lists(st.integers(0, n), max_size=4))
    binary = sm.MetricSet(part=sm.AUROC(max_fpr=m), ap=sm.AveragePrecision())
    want, w1 = _one(lambda: sm.Sliced(binary.copy()).update(
        df.yb.to_numpy(), df.s1.to_numpy(), slices=df.g.to_numpy(), sample_weight=w).compute())
    got, w2 = _run(_frames(df, cuts), binary, ranges, label="yb", score="s1", by="g", weight=weight)
    _close(got, want)
    assert w1 == w2
    multi = sm.MetricSet(p=sm.AUROC(C, multilabel=True, max_fpr=m, average="micro"),
                         a=sm.AUROC(C, multilabel=True, average=None), ap=sm.AveragePrecision(C, multilabel=True))
    want, w1 = _one(lambda: sm.Sliced(multi.copy()).update(
        df[LABELS].to_numpy(), df[SCORES].to_numpy(), slices=df.g.to_numpy(), sample_weight=w).compute())
    got, w2 = _run(_frames(df, cuts), multi, ranges, label=LABELS, score=SCORES, by="g", weight=weight)
    _close(got, want)
    assert w1 == w2
    ovo = _ovo_set(m)
    want, w1 = _one(lambda: sm.Sliced(ovo.copy()).update(
        df.y.to_numpy(), df[SCORES].to_numpy(), slices=df.g.to_numpy(), sample_weight=w).compute())
    got, w2 = _run(_frames(df, cuts), ovo, ranges, label="y", score=SCORES, by="g", weight=weight)
    _close(got, want)
    assert w1 == w2


def test_local_cluster(client: Any) -> None:
    """On two worker processes (2 ranges): multilabel with partial areas, weights and string
    slice keys; binary partial AUROC by slices; within 1e-12 of one process."""
    df = _labelled(_data(3_000, 43, slices=12), 43)
    df["k"] = "slice-" + df.g.astype(str)
    assert RC.range_count() == 2
    metrics = _multi_partial(True)
    want = sm.Sliced(metrics.copy()).update(df[LABELS].to_numpy(), df[SCORES].to_numpy(), slices=df.k.to_numpy(),
                                            sample_weight=df.w.to_numpy()).compute()
    got = evaluate(_frames(df, [800, 800, 2_000]), metrics, label=LABELS, score=SCORES, weight="w", by="k")
    _close(got, want)
    binary = _binary_partial(0.35)
    want = sm.Sliced(binary.copy()).update(df.yb.to_numpy(), df.s0.to_numpy(), slices=df.k.to_numpy()).compute()
    got = evaluate(_frames(df, [1_000]), binary, label="yb", score="s0", by="k")
    _close(got, want)
