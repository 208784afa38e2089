"""Issue #32 item 2: a set with more than one exact ranking state group -- one-vs-one AUROC
beside one-vs-rest AUROC / AP, groups differing in ``ignore_index`` (multiclass, multilabel,
binary with or without ``by=``) -- goes by the keyed (key, score) ranges
(:mod:`streammetrics._engines.keyed_ranges`): each group its own columns of a slice's problems,
after the previous group's (:attr:`KeyedSplit.starts`). Values: one process's (``Sliced`` with
``by=``) within 1e-12, unit-weight AUROC bit for bit; the same warnings and errors; the root
receives O(R x K) numbers, never the scores."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest

pytest.importorskip("dask.dataframe")

import dask  # noqa: E402
import engine_cases as cases  # noqa: E402
import pandas as pd  # noqa: E402
from dask.callbacks import Callback  # noqa: E402
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from test_dask_keyed import _close  # noqa: E402

import streammetrics as sm  # noqa: E402
import streammetrics._engines.keyed_ranges as KR  # noqa: E402
import streammetrics._engines.range_counts as RC  # noqa: E402
from streammetrics._engines.plan import make_plan  # noqa: E402
from streammetrics.dask import evaluate, evaluate_parquet  # noqa: E402

C = 3
SCORES = [f"s{c}" for c in range(C)]
LABELS = [f"l{c}" for c in range(C)]
AVERAGES = ("macro", "weighted", "micro", None)


def _data(n: int, seed: int, decimals: int = 1, slices: int = 3) -> pd.DataFrame:
    """Ties (scores rounded), weights with zeros, slices; multiclass ``y``, binary ``yb``,
    multilabel ``l0..l2``."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, C, n)
    s = np.round(rng.random((n, C)) + 0.3 * np.eye(C)[y], decimals)
    ml = (rng.random((n, C)) < 0.2 + 0.5 * (s > 0.7)).astype(np.int64)
    w = np.round(rng.random(n) * 3, 1)
    w[rng.random(n) < 0.1] = 0.0
    return pd.DataFrame({"y": y, **{c: s[:, i] for i, c in enumerate(SCORES)},
                         **{c: ml[:, i] for i, c in enumerate(LABELS)},
                         "w": w, "g": rng.integers(0, slices, n), "yb": (y == 1).astype(np.int64)})


def _ovr_ovo() -> sm.MetricSet:
    """One-vs-rest AUROC / AP (every average), accuracy between the groups, one-vs-one AUROC
    (full and partial): three state groups, the two exact ones keyed, the rest in the middle."""
    members: dict[str, Any] = {}
    for avg in AVERAGES:
        members[f"auroc_{avg}"] = sm.AUROC(C, average=avg)
        members[f"ap_{avg}"] = sm.AveragePrecision(C, average=avg)
    members["acc"] = sm.Accuracy(C)
    members["ovo"] = sm.AUROC(C, multi_class="ovo")
    members["ovo_part"] = sm.AUROC(C, multi_class="ovo", average="weighted", max_fpr=0.4)
    members["part"] = sm.AUROC(C, max_fpr=0.3)
    members["logit"] = sm.AUROC(C, scores="logit")  # the one-vs-rest group's state: bins' option only
    return sm.MetricSet(members)


def _two_ignores() -> sm.MetricSet:
    """Multiclass groups without and with ``ignore_index=1`` (class 1's rows left out of the
    second: its class 1 column undefined), a bounded AUROC beside them (a state)."""
    return sm.MetricSet(a=sm.AUROC(C), p=sm.AveragePrecision(C, average=None),
                        ia=sm.AUROC(C, ignore_index=1, average="weighted"),
                        ip=sm.AveragePrecision(C, ignore_index=1, average="micro"),
                        im=sm.AUROC(C, ignore_index=1, average=None, max_fpr=0.5),
                        bounded=sm.AUROC(C, max_bytes=4096))


def _run(frame: Any, metrics: Any, ranges: int, **kwargs: Any) -> tuple[Any, list[Any]]:
    """``evaluate`` with R ranges, recording the keyed split it took (asserted keyed)."""
    seen: list[Any] = []
    real = KR.split_of
    with pytest.MonkeyPatch.context() as mp, dask.config.set(scheduler="synchronous"), \
            warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        mp.setattr(RC, "range_count", lambda: ranges)
        mp.setattr(KR, "split_of", lambda *a, **k: seen.append(real(*a, **k)) or seen[-1])
        got = evaluate(frame, metrics, **kwargs)
    assert seen and seen[-1] is not None and seen[-1].more, "not the keyed ranges of several groups"
    return got, sorted(str(w.message) for w in caught)


def _one(fn: Any) -> tuple[Any, list[str]]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        want = fn()
    return want, sorted(str(w.message) for w in caught)


def _bitwise(got: Any, want: Any, names: list[str]) -> None:
    rows = [(got, want)] if not hasattr(want, "keys") or names[0] in want else [(got[k], want[k]) for k in want]
    for g, w in rows:
        for n in names:
            assert np.array_equal(np.asarray(g[n], float), np.asarray(w[n], float), equal_nan=True), n


@settings(max_examples=10, deadline=None)
@given(n=st.integers(1, 300), seed=st.integers(0, 10**6), ranges=st.integers(1, 5), weighted=st.booleans(),
       sliced=st.booleans(), data=st.data())
def test_ovo_beside_ovr_equals_one_process(n: int, seed: int, ranges: int, weighted: bool, sliced: bool,
                                           data: Any) -> None:
    """One-vs-one AUROC beside one-vs-rest AUROC / AP (every average, partial areas) and accuracy
    between the groups, any partitioning (empty partitions too), with and without ``by=``:
    one process within 1e-12, the same warnings; unit weights: the full AUROCs bit for bit."""
    df = _data(n, seed, decimals=data.draw(st.sampled_from([1, 2])))
    w = df.w.to_numpy() if weighted else None
    y, s = df.y.to_numpy(), df[SCORES].to_numpy()
    cuts = data.draw(st.lists(st.integers(0, n), max_size=5))
    if sliced:
        want, w1 = _one(lambda: sm.Sliced(_ovr_ovo()).update(y, s, slices=df.g.to_numpy(), sample_weight=w).compute())
    else:
        want, w1 = _one(lambda: _ovr_ovo().update(y, s, sample_weight=w).compute())
    got, w2 = _run(cases.delayed_partitions(df, cuts), _ovr_ovo(), ranges, label="y", score=SCORES,
                   weight="w" if weighted else None, by="g" if sliced else None)
    _close(got, want)
    assert w1 == w2
    if not weighted:
        _bitwise(got, want, [f"auroc_{a}" for a in AVERAGES] + ["ovo"])


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("ranges", [1, 4])
def test_two_ignore_indexes_multiclass_and_by(weighted: bool, ranges: int) -> None:
    """Two multiclass groups differing in ``ignore_index`` (class 1 ignored by the second: its
    column nan with the warning, left out of the averages), a class absent from a slice, an
    empty partition, a bounded AUROC beside them as a state: one process within 1e-12."""
    df = _data(1_500, 7, slices=4)
    df = df[~((df.g == 2) & (df.y == 2))]
    y, s = df.y.to_numpy(), df[SCORES].to_numpy()
    w = df.w.to_numpy() if weighted else None
    weight = "w" if weighted else None
    want, w1 = _one(lambda: _two_ignores().update(y, s, sample_weight=w).compute())
    got, w2 = _run(cases.delayed_partitions(df, [0, 300, 300, 1_000]), _two_ignores(), ranges, label="y",
                   score=SCORES, weight=weight)
    _close(got, want)
    assert w1 == w2 and np.isnan(got["im"][1])
    want, w1 = _one(lambda: sm.Sliced(_two_ignores()).update(y, s, slices=df.g.to_numpy(), sample_weight=w).compute())
    got, w2 = _run(cases.delayed_partitions(df, [500]), _two_ignores(), ranges, label="y", score=SCORES,
                   weight=weight, by="g")
    _close(got, want)
    assert w1 == w2 and np.isnan(got[2]["p"][2])
    if not weighted:
        _bitwise(got, want, ["a", "ia"])


@pytest.mark.parametrize("ranges", [1, 3])
def test_two_ignore_indexes_binary_and_multilabel(ranges: int) -> None:
    """Binary without ``by=`` (two groups: the score ranges took one and gathered the other),
    binary with ``by=``, multilabel (``ignore_index`` drops entries): one process within 1e-12."""
    df = _data(1_200, 11, slices=3)
    yb, s1, w = df.yb.to_numpy(), df.s1.to_numpy(), df.w.to_numpy()

    def binary() -> sm.MetricSet:
        return sm.MetricSet(a=sm.AUROC(), p=sm.AveragePrecision(), f1=sm.F1(),
                            ia=sm.AUROC(ignore_index=0), ip=sm.AveragePrecision(ignore_index=0),
                            part=sm.AUROC(max_fpr=0.2), logit=sm.AveragePrecision(ignore_index=0, scores="logit"))

    acc, _, plan = make_plan(binary(), label="yb", score="s1", weight=None, query=None, doc_id=None,
                             update_kwargs={}, available=list(df.columns))
    assert RC.split_of(acc, plan, dict(df.dtypes.items())) is None  # the keyed ranges take it
    want, w1 = _one(lambda: binary().update(yb, s1).compute())
    got, w2 = _run(cases.delayed_partitions(df, [0, 400]), binary(), ranges, label="yb", score="s1")
    _close(got, want)
    assert w1 == w2 and np.isnan(got["ia"])
    _bitwise(got, want, ["a"])
    want, w1 = _one(lambda: sm.Sliced(binary()).update(yb, s1, slices=df.g.to_numpy(), sample_weight=w).compute())
    got, w2 = _run(cases.delayed_partitions(df, [700]), binary(), ranges, label="yb", score="s1", by="g", weight="w")
    _close(got, want)
    assert w1 == w2
    lab = df[LABELS].to_numpy()

    def multilabel() -> sm.MetricSet:  # the same entries counted twice over: two groups' columns
        return sm.MetricSet(a=sm.AUROC(C, multilabel=True, ignore_index=-1, average="micro"),
                            p=sm.AveragePrecision(C, multilabel=True, ignore_index=-1, average=None),
                            b=sm.AUROC(C, multilabel=True, average="weighted"))
    want, w1 = _one(lambda: multilabel().update(lab, df[SCORES].to_numpy(), sample_weight=w).compute())
    got, w2 = _run(cases.delayed_partitions(df, [600]), multilabel(), ranges, label=LABELS, score=SCORES, weight="w")
    _close(got, want)
    assert w1 == w2


def test_errors_follow_the_sets_group_order() -> None:
    """A label one group refuses: one process's ValueError, from the group that checks first in
    the set's order (the rest's checks between the exact groups'); nothing else raised first."""
    df = _data(200, 3)
    bad = df.assign(y=np.where(np.arange(len(df)) == 50, -1, df.y))
    for metrics in (sm.MetricSet(a=sm.AUROC(C, ignore_index=-1), acc=sm.Accuracy(C), b=sm.AUROC(C)),
                    sm.MetricSet(acc=sm.Accuracy(C, ignore_index=-1), b=sm.AUROC(C), c=sm.AUROC(C, multi_class="ovo")),
                    sm.MetricSet(a=sm.AUROC(C), b=sm.AUROC(C, ignore_index=-1))):
        with pytest.raises(ValueError) as one:
            metrics.copy().update(bad.y.to_numpy(), bad[SCORES].to_numpy())
        with dask.config.set(scheduler="synchronous"), pytest.raises(ValueError) as eng:
            evaluate(cases.delayed_partitions(bad, [100]), metrics, label="y", score=SCORES)
        assert str(one.value) in str(eng.value), (one.value, eng.value)


def test_split_layout_and_routes(tmp_path: Any) -> None:
    """The split's groups, starts and per-column layouts; a keyed group between two of the
    rest's groups takes the keyed ranges (each group knows the rest's members before it);
    evaluate_parquet takes the keyed ranges; ``scores="logit"`` joins the exact group,
    ``"probability"`` is an exact group of its own (its state's checks); the root receives O(R x K) numbers, not the scores."""
    df = _data(3_000, 5, decimals=6, slices=10)
    types = dict(df.dtypes.items())

    def split(template: Any, **cols: Any) -> Any:
        acc, _, plan = make_plan(template, weight=None, query=None, doc_id=None, update_kwargs={},
                                 available=list(df.columns), **cols)
        return KR.split_of(acc, plan, types)

    sp = split(_ovr_ovo(), label="y", score=SCORES)
    assert [len(g.ranked) for g in sp.groups] == [10, 2] and sp.starts == (0, C + 1)
    assert sp.width == C + 1 + C * (C - 1) and sp.max_fprs == (0.3, 0.4)
    assert sp.ap_columns == (True,) * (C + 1) + (False,) * C * (C - 1)
    assert sp.partial_columns == ((0.3,),) * C + ((),) + ((0.4,),) * C * (C - 1)
    between = sm.MetricSet(f=sm.F1(C), a=sm.AUROC(C), acc=sm.Accuracy(C, ignore_index=-1), b=sm.AUROC(C, ignore_index=-1))
    around = split(between, label="y", score=SCORES)  # the rest on both sides of the keyed groups
    assert [g.before for g in around.groups] == [("f",), ("f", "acc")] and around.rest is not None
    prob = split(sm.MetricSet(a=sm.AUROC(C), p=sm.AUROC(C, scores="probability")), label="y", score=SCORES)
    assert [list(g.ranked) for g in prob.groups] == [["a"], ["p"]]  # the probability buffer: its own group
    acc, _, plan = make_plan(sm.MetricSet(a=sm.AUROC(scores="logit"), p=sm.AveragePrecision()), label="yb",
                             score="s1", weight=None, query=None, doc_id=None, update_kwargs={},
                             available=list(df.columns))
    assert RC.split_of(acc, plan, types) is not None  # binary: the score ranges take logit too
    interp = sm.MetricSet(a=sm.AUROC(C), i=sm.AveragePrecision(C, interpolated=True, ignore_index=-1))
    alone = split(interp, label="y", score=SCORES)
    # an interpolated AP of another ignore_index: a keyed group of its own (its envelope columns)
    assert alone is not None and [list(g.ranked) for g in alone.groups] == [["a"], ["i"]]
    assert alone.envelope_columns == ((),) * C + (((True, False),),) * C
    for i, a in enumerate((0, 1_000, 2_000)):
        df.iloc[a : a + 1_000].to_parquet(tmp_path / f"part-{i}.parquet")
    seen: list[Any] = []
    real = KR.split_of
    spy = _RootInputs()
    with pytest.MonkeyPatch.context() as mp, dask.config.set(scheduler="synchronous"), spy:
        mp.setattr(RC, "range_count", lambda: 4)
        mp.setattr(KR, "split_of", lambda *a, **k: seen.append(real(*a, **k)) or seen[-1])
        got = evaluate_parquet(str(tmp_path), _ovr_ovo(), label="y", score=SCORES, by="g")
    assert seen and seen[-1] is not None and seen[-1].more
    problems = 10 * sp.width
    assert 0 < spy.sent["range"] <= 8 * (problems + 4)
    want = sm.Sliced(_ovr_ovo()).update(df.y.to_numpy(), df[SCORES].to_numpy(), slices=df.g.to_numpy()).compute()
    _close(got, want)


class _RootInputs(Callback):  # type: ignore[misc]
    """The numbers the keyed range tasks send on (what the root reads)."""

    def __init__(self) -> None:
        super().__init__()
        self.sent: dict[str, int] = {}

    def _posttask(self, key: Any, result: Any, dsk: Any, state: Any, worker_id: Any) -> None:
        if isinstance(key, tuple) and key[0].startswith("streammetrics-keyed") and key[1] == "range":
            self.sent["range"] = self.sent.get("range", 0) + cases.numbers_in(result)


def test_evaluate_ranked_takes_logit_and_probability_scores() -> None:
    """``scores="logit"`` keeps raw's exact state: ``evaluate_ranked`` gives its value; with
    ``"probability"`` its twin's probability buffer checks the rows as the members' does (a
    score above 1 refused); members that check differently are refused, naming the option."""
    from streammetrics.dask import evaluate_ranked

    df = _data(400, 2)
    df = df.assign(p=df.s1 / df.s1.max())
    df = df.assign(bad=np.where(np.arange(len(df)) == 300, 1.25, df.p))  # in the late partition
    frame = cases.delayed_partitions(df, [150])
    want = sm.AUROC().update(df.yb.to_numpy(), df.s1.to_numpy()).compute()
    with dask.config.set(scheduler="synchronous"):
        got = evaluate_ranked(frame, sm.MetricSet(a=sm.AUROC(scores="logit")), label="yb", score="s1")
        prob = evaluate_ranked(frame, sm.MetricSet(a=sm.AUROC(scores="probability")), label="yb", score="p")
        with pytest.raises(ValueError, match="probabilities must lie in") as eng:
            evaluate_ranked(frame, sm.MetricSet(a=sm.AUROC(scores="probability")), label="yb", score="bad")
        with pytest.raises(ValueError, match="has scores='raw'"):
            evaluate_ranked(frame, sm.MetricSet(a=sm.AUROC(scores="probability"), b=sm.AUROC()), label="yb",
                            score="p")
    with pytest.raises(ValueError) as one:
        sm.AUROC(scores="probability").update(df.yb.to_numpy()[150:], df.bad.to_numpy()[150:])
    assert str(one.value) in str(eng.value)
    assert got["a"] == want and prob["a"] == want
