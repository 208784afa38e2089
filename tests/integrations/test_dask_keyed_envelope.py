"""Issue #32: interpolated and 11-point ``AveragePrecision`` beside ``by=`` slices, multiclass
one-vs-rest and multilabel in streammetrics.dask.evaluate by (key, score) ranges, no gather of the
scores: each range task's per-key summary carries that key's precision envelope and per-level
maxima (:mod:`streammetrics._engines.keyed_envelope`, :mod:`streammetrics._engines.ap_envelope`),
the root walks them up per key and each member averages by its own rule. Values: one process's
(``Sliced`` with ``by=``) within 1e-12, its warnings; step, interpolated and 11-point AP in one
set, beside partial and full AUROC and a confusion member."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

pytest.importorskip("dask.dataframe")

import dask  # noqa: E402
import engine_cases as cases  # noqa: E402
import pandas as pd  # noqa: E402
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from test_dask_keyed import AVERAGES, SCORES, C, _close, _data, _one, _RootInputs, _run  # noqa: E402
from test_dask_keyed_more import LABELS, _labelled  # noqa: E402

import streammetrics as sm  # noqa: E402
import streammetrics._engines.keyed_ranges as KR  # noqa: E402
import streammetrics._engines.range_counts as RC  # noqa: E402
from streammetrics._engines import ap_envelope, keyed_envelope  # noqa: E402
from streammetrics._engines.plan import make_plan  # noqa: E402
from streammetrics.dask import evaluate, evaluate_parquet  # noqa: E402

_frames = cases.delayed_partitions


def _readouts(num_classes: int | None = None, averages: Any = AVERAGES, **kw: Any) -> sm.MetricSet:
    """Step, interpolated and 11-point AP per average, a partial and a full AUROC, a confusion
    member (binary: ``num_classes`` None, one of each)."""
    members: dict[str, Any] = {}
    args: tuple[Any, ...] = () if num_classes is None else (num_classes,)
    for avg in averages if num_classes is not None else ("macro",):
        extra = dict(kw, average=avg) if num_classes is not None else dict(kw)
        members[f"step_{avg}"] = sm.AveragePrecision(*args, **extra)
        members[f"interp_{avg}"] = sm.AveragePrecision(*args, interpolated=True, **extra)
        members[f"eleven_{avg}"] = sm.AveragePrecision(*args, eleven_point=True, **extra)
    members["part"] = sm.AUROC(*args, max_fpr=0.3, **kw)
    members["auroc"] = sm.AUROC(*args, **kw)
    if "ignore_index" not in kw:
        members["f1"] = sm.F1(*args, **({"multilabel": True} if kw.get("multilabel") else {}))
    return sm.MetricSet(members)


def _zeroed(df: pd.DataFrame, seed: int, unit: float | None = None) -> pd.DataFrame:
    """``df`` with real weights (``unit``: multiples of it, whose sums reach the 11-point AP's
    recall levels exactly, decided in exact sums on both sides), about a fifth of them 0
    (positives too)."""
    rng = np.random.default_rng(seed)
    w = rng.random(len(df)) * 3 if unit is None else rng.integers(1, 8, len(df)) * unit
    return df.assign(w=np.where(rng.random(len(df)) < 0.2, 0.0, w))


@pytest.mark.parametrize(("weighted", "unit"), [(False, None), (True, None), (True, 0.1), (True, 1 / 3)])
@pytest.mark.parametrize("ranges", [1, 4])
def test_multiclass_readouts_equal_one_process(weighted: bool, unit: float | None, ranges: int) -> None:
    """Multiclass one-vs-rest step / interpolated / 11-point AP, every average (micro pooled,
    None per class), beside partial and full AUROC: tied scores, weights with zeros (real, or
    multiples of 0.1 or 1/3: recall levels reached exactly), empty partitions; alone and by
    slices where one slice lacks class 1 (nan for it, left out of the averages, one process's
    warnings)."""
    df = _zeroed(_data(2_400, 61, decimals=2, slices=4), 61, unit)
    df = df[~((df.g == 2) & (df.y == 1))]
    y, s = df.y.to_numpy(), df[SCORES].to_numpy()
    w = df.w.to_numpy() if weighted else None
    weight = "w" if weighted else None
    metrics = _readouts(C)
    want, w1 = _one(lambda: metrics.copy().update(y, s, sample_weight=w).compute())
    got, w2 = _run(_frames(df, [0, 500, 500, 1_700]), metrics, ranges, label="y", score=SCORES, weight=weight)
    _close(got, want)
    assert w1 == w2
    assert len({got["step_macro"], got["interp_macro"], got["eleven_macro"]}) == 3  # three readouts
    g = df.g.to_numpy()
    want, w1 = _one(lambda: sm.Sliced(metrics.copy()).update(y, s, slices=g, sample_weight=w).compute())
    got, w2 = _run(_frames(df, [0, 900]), metrics, ranges, label="y", score=SCORES, weight=weight, by="g")
    _close(got, want)
    assert w1 == w2 and np.isnan(got[2]["interp_None"][1]) and np.isnan(got[2]["eleven_None"][1])


@pytest.mark.parametrize("ranges", [1, 3])
def test_binary_readouts_by_slices(ranges: int) -> None:
    """Binary readouts by slices: a slice of negatives only (nan, one process's warnings), a
    slice whose rows all weigh 0, a slice of positives only, string keys; ``Sliced``'s values."""
    df = _zeroed(_data(1_800, 67, decimals=2, slices=6), 67)
    df.loc[df.g == 3, "yb"] = 0
    df.loc[df.g == 4, "w"] = 0.0
    df.loc[df.g == 5, "yb"] = 1
    df["k"] = "slice-" + df.g.astype(str)
    metrics = _readouts()
    for weighted in (False, True):
        w = df.w.to_numpy() if weighted else None
        want, w1 = _one(lambda w=w: sm.Sliced(metrics.copy()).update(
            df.yb.to_numpy(), df.s1.to_numpy(), slices=df.k.to_numpy(), sample_weight=w).compute())
        got, w2 = _run(_frames(df, [0, 600, 1_200]), metrics, ranges, label="yb", score="s1", by="k",
                       weight="w" if weighted else None)
        _close(got, want)
        assert w1 == w2 and np.isnan(got["slice-3"]["interp_macro"])
    assert np.isnan(got["slice-4"]["eleven_macro"]) and abs(got["slice-5"]["interp_macro"] - 1.0) <= 1e-12


def test_multilabel_readouts_and_ignore_index() -> None:
    """Multilabel readouts per label and pooled, alone and by slices with a label lacking
    positives in one slice; ``ignore_index`` entries dropped from their label and the pooled
    problem: one process's values and warnings."""
    df = _zeroed(_labelled(_data(1_500, 71, decimals=1, slices=3), 71), 71)
    df.loc[df.g == 1, "l2"] = 0
    y, s, w, g = df[LABELS].to_numpy(), df[SCORES].to_numpy(), df.w.to_numpy(), df.g.to_numpy()
    metrics = _readouts(C, multilabel=True)
    want, w1 = _one(lambda: sm.Sliced(metrics.copy()).update(y, s, slices=g, sample_weight=w).compute())
    got, w2 = _run(_frames(df, [400, 1_000]), metrics, 3, label=LABELS, score=SCORES, weight="w", by="g")
    _close(got, want)
    assert w1 == w2 and np.isnan(got[1]["interp_None"][2])
    rng = np.random.default_rng(5)
    for c in LABELS:
        df.loc[rng.random(len(df)) < 0.1, c] = -1
    ignored = _readouts(C, multilabel=True, ignore_index=-1)
    want, w1 = _one(lambda: ignored.copy().update(df[LABELS].to_numpy(), s, sample_weight=w).compute())
    got, w2 = _run(_frames(df, [700]), ignored, 4, label=LABELS, score=SCORES, weight="w")
    _close(got, want)
    assert w1 == w2


def test_routes_envelope_columns_and_parquet(tmp_path: Any) -> None:
    """The readouts take the keyed split; ``envelope_columns`` names per column the
    interpolated / 11-point readouts that read it (class columns, the pooled one for micro),
    none with step AP only; ``evaluate_parquet`` takes the keyed route."""
    df = _data(60, 1)
    types = {c: df[c].dtype for c in df.columns}

    def split(template: Any, **cols: Any) -> Any:
        acc, _, plan = make_plan(template, weight=None, query=None, doc_id=None, update_kwargs={},
                                 available=list(df.columns), **cols)
        return KR.split_of(acc, plan, types)

    macro = split(sm.MetricSet(i=sm.AveragePrecision(C, interpolated=True), a=sm.AveragePrecision(C, average="micro")),
                  label="y", score=SCORES)
    interp, eleven = (True, False), (False, True)
    assert macro.envelope_columns == ((interp,),) * C + ((),) and macro.ap_columns == (True,) * (C + 1)
    micro = split(sm.MetricSet(e=sm.AveragePrecision(C, eleven_point=True, average="micro"),
                               i=sm.AveragePrecision(C, interpolated=True, eleven_point=True)), label="y", score=SCORES)
    assert micro.envelope_columns == ((eleven,),) * C + ((eleven,),)  # 11-point wins over interpolated
    both = split(sm.MetricSet(e=sm.AveragePrecision(C, eleven_point=True, average="micro"),
                              i=sm.AveragePrecision(C, interpolated=True, average="micro")), label="y", score=SCORES)
    assert both.envelope_columns == ((),) * C + ((eleven, interp),)
    step = split(sm.MetricSet(a=sm.AveragePrecision(C), u=sm.AUROC(C)), label="y", score=SCORES)
    assert not any(step.envelope_columns)
    assert split(sm.AveragePrecision(interpolated=True), label="yb", score="s1", by="g").envelope_columns == ((interp,),)
    assert split(sm.MetricSet(a=sm.AveragePrecision(interpolated=True)), label="yb", score="s1") is None  # binary
    df = _data(1_200, 73, decimals=2, slices=3)
    for i, a in enumerate((0, 400, 800)):
        df.iloc[a : a + 400].to_parquet(tmp_path / f"part-{i}.parquet")
    metrics = _readouts(C, averages=("weighted", None))
    seen: list[Any] = []
    real = KR.split_of
    with pytest.MonkeyPatch.context() as mp, dask.config.set(scheduler="synchronous"):
        mp.setattr(KR, "split_of", lambda *a, **k: seen.append(real(*a, **k)) or seen[-1])
        got = evaluate_parquet(str(tmp_path), metrics, label="y", score=SCORES, by="g", weight="w")
    assert seen and seen[-1] is not None
    want = sm.Sliced(metrics.copy()).update(df.y.to_numpy(), df[SCORES].to_numpy(), slices=df.g.to_numpy(),
                                            sample_weight=df.w.to_numpy()).compute()
    _close(got, want)


@pytest.mark.parametrize("ranges", [1, 4])
def test_root_receives_the_envelopes_not_the_scores(ranges: int) -> None:
    """60,000 rows, 30 slices x 3 classes + micro: the range tasks send per (range, problem) a
    few numbers plus the envelope (at most 2 numbers per distinct positive score, 11 levels) --
    with scores of 2 decimals (at most 101 distinct) far below the 180,000 scores."""
    slices = 30
    df = _data(60_000, 79, decimals=2, slices=slices)
    spy = _RootInputs()
    metrics = sm.MetricSet(i=sm.AveragePrecision(C, interpolated=True, average="micro"),
                           e=sm.AveragePrecision(C, eleven_point=True), a=sm.AUROC(C))
    with pytest.MonkeyPatch.context() as mp, dask.config.set(scheduler="synchronous"), spy:
        mp.setattr(RC, "range_count", lambda: ranges)
        got = evaluate(_frames(df, [15_000, 40_000]), metrics, label="y", score=SCORES, by="g")
    problems = slices * (C + 1)
    assert spy.sent["range"] <= (7 + 11 + 2 * 2 * 131) * (problems + ranges)
    assert spy.sent["range"] < 60_000 * C / 4
    want = sm.Sliced(metrics.copy()).update(df.y.to_numpy(), df[SCORES].to_numpy(),
                                            slices=df.g.to_numpy()).compute()
    _close(got, want)
    eleven = sm.MetricSet(e=sm.AveragePrecision(C, eleven_point=True), m=sm.AveragePrecision(C, eleven_point=True,
                                                                                           average="micro"))
    spy = _RootInputs()
    with pytest.MonkeyPatch.context() as mp, dask.config.set(scheduler="synchronous"), spy:
        mp.setattr(RC, "range_count", lambda: ranges)
        got = evaluate(_frames(df, [15_000, 40_000]), eleven, label="y", score=SCORES, by="g")
    assert spy.sent["range"] <= (7 + 12) * (problems + ranges)  # 11-point alone: its levels, no envelope
    want = sm.Sliced(eleven.copy()).update(df.y.to_numpy(), df[SCORES].to_numpy(), slices=df.g.to_numpy()).compute()
    _close(got, want)


@settings(max_examples=20, deadline=None)
@given(n=st.integers(0, 300), seed=st.integers(0, 10**6), ranges=st.integers(1, 5), weighted=st.booleans(),
       slices=st.integers(1, 8), task=st.sampled_from(["binary", "multiclass", "multilabel"]),
       decimals=st.integers(1, 3), unit=st.sampled_from([None, 0.1, 0.05, 1 / 3]), data=st.data())
def test_any_partition_equals_sliced(n: int, seed: int, ranges: int, weighted: bool, slices: int, task: str,
                                     decimals: int, unit: float | None, data: Any) -> None:
    """Any partitioning (empty partitions), range count, weights (zeros; real or multiples of
    0.1, 0.05, 1/3, whose sums reach the 11-point recall levels exactly) and ties: the readouts
    of ``Sliced`` in one process, binary, multiclass or multilabel."""
    df = _zeroed(_labelled(_data(n, seed, decimals=decimals, slices=slices), seed), seed, unit)
    w = df.w.to_numpy() if weighted else None
    cuts = data.draw(st.lists(st.integers(0, n), max_size=4))
    label: Any = {"binary": "yb", "multiclass": "y", "multilabel": LABELS}[task]
    score: Any = "s1" if task == "binary" else SCORES
    metrics = _readouts(None if task == "binary" else C, averages=("macro", "micro", None),
                        **({"multilabel": True} if task == "multilabel" else {}))
    want, w1 = _one(lambda: sm.Sliced(metrics.copy()).update(
        df[label].to_numpy(), df[score].to_numpy(), slices=df.g.to_numpy(), sample_weight=w).compute())
    got, w2 = _run(_frames(df, cuts), metrics, ranges, label=label, score=score, by="g",
                   weight="w" if weighted else None)
    _close(got, want)
    assert w1 == w2


@settings(max_examples=50, deadline=None)
@given(sizes=st.lists(st.integers(-1, 4), max_size=6), seed=st.integers(0, 10**6))
def test_envelope_arrays_round_trip_and_are_checked(sizes: list[int], seed: int) -> None:
    """A range's parts (some keys without one) through :func:`keyed_envelope.to_arrays` /
    ``from_arrays``: the same parts; arrays that do not fit are a ValueError."""
    rng = np.random.default_rng(seed)
    parts = [None if k < 0 else ap_envelope.EnvelopePart(np.sort(rng.random(k))[::-1], rng.random(k),
                                                        rng.random(ap_envelope.LEVELS.shape[0]), rng.random(k % 3))
             for k in sizes]
    arrays = keyed_envelope.to_arrays(keyed_envelope.pack(parts))
    back = keyed_envelope.from_arrays(arrays, len(parts))
    assert back is not None
    for a, b in zip(parts, back.parts(), strict=True):
        assert (a is None) == (b is None)
        if a is not None and b is not None:
            for x, y in ((a.values, b.values), (a.masses, b.masses), (a.levels, b.levels), (a.exact, b.exact)):
                assert np.array_equal(x, y)
    assert keyed_envelope.from_arrays({}, len(parts)) is None
    bad = [{**arrays, "env_sizes": np.append(arrays["env_sizes"], 1)},
           {**arrays, "env_values": np.append(arrays["env_values"], 0.5)},
           {**arrays, "env_levels": arrays["env_levels"][:, :5]},
           {k: v for k, v in arrays.items() if k != "env_masses"},
           {**arrays, "env_exact": np.append(arrays["env_exact"], 0.5)}]
    for arr in bad:
        with pytest.raises(ValueError, match="keyed envelopes: "):
            keyed_envelope.from_arrays(arr, len(parts))


def test_local_cluster(client: Any) -> None:
    """On two worker processes (2 ranges): multiclass readouts with weights by string slices,
    within 1e-12 of one process."""
    df = _zeroed(_data(3_000, 83, slices=10), 83)
    df["k"] = "slice-" + df.g.astype(str)
    assert RC.range_count() == 2
    metrics = _readouts(C, averages=("macro", "micro"))
    want = sm.Sliced(metrics.copy()).update(df.y.to_numpy(), df[SCORES].to_numpy(), slices=df.k.to_numpy(),
                                            sample_weight=df.w.to_numpy()).compute()
    got = evaluate(_frames(df, [800, 800, 2_000]), metrics, label="y", score=SCORES, weight="w", by="k")
    _close(got, want)
