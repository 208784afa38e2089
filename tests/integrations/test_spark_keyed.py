"""Issue #32 on Spark: ``by=`` slices and multiclass one-vs-rest exact AUROC / AP in
streammetrics.spark.evaluate by (key, score) ranges (:mod:`streammetrics._engines.spark_keyed`),
no gather of the scores on the driver: one process's values (``Sliced`` for ``by=``, the
MetricSet's compute) and scikit-learn's within 1e-12, with ties, weights (some zero), a class
absent from a slice, several key columns, ``nulls="skip"``; what the driver receives does not
grow with the rows.

The random cases run the module's Spark tasks in this process on the stand-in frame of
``ranked_cases`` (chunks, shipped rows and ranges made small); a real local Spark runs the rest
(few, small jobs)."""

from __future__ import annotations

import dataclasses
import warnings
from typing import Any
from unittest import mock

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

pytest.importorskip("pyspark")
pytest.importorskip("pyarrow")
pytest.importorskip("sklearn")

import engine_cases as cases  # noqa: E402
import ranked_cases  # noqa: E402
from sklearn.metrics import average_precision_score, roc_auc_score  # noqa: E402

import streammetrics as sm  # noqa: E402
import streammetrics.spark as sm_spark  # noqa: E402
from streammetrics._engines import ap_envelope, keyed_envelope, spark_keyed  # noqa: E402
from streammetrics._engines import keyed_ranges as kr  # noqa: E402
from streammetrics._engines.request import NullRowsSkipped, Request, make_run  # noqa: E402

C = 3
SCORES = [f"s{c}" for c in range(C)]
AVERAGES = ("macro", "weighted", "micro", None)


def _data(n: int, seed: int, slices: int = 4, decimals: int = 2) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    y = rng.integers(0, C, n)
    s = np.round(rng.random((n, C)) + 0.3 * np.eye(C)[y], decimals)  # ties
    w = np.round(rng.random(n) * 3, 1)  # about 1 in 30 zero
    df = pd.DataFrame({"y": y, **{f"s{c}": s[:, c] for c in range(C)}, "w": w,
                       "g": rng.integers(0, slices, n), "h": rng.choice(["x", "y"], n)})
    df["yb"] = (df.y == 1).astype(np.int64)
    return df


def _multiclass_set() -> sm.MetricSet:
    members: dict[str, Any] = {"acc": sm.Accuracy(C)}
    for avg in AVERAGES:
        members[f"auroc_{avg}"] = sm.AUROC(C, average=avg)
        members[f"ap_{avg}"] = sm.AveragePrecision(C, average=avg)
    return sm.MetricSet(members)


def _recorded(fn: Any) -> tuple[Any, list[str]]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = fn()
    return out, sorted({str(w.message) for w in caught if issubclass(w.category, sm.UndefinedMetricWarning)})


def _one(metrics: sm.MetricSet, df: pd.DataFrame, by: Any, score: Any, weighted: bool) -> Any:
    """One process: the set (or ``Sliced`` of it with ``by``) fed every row once."""
    w = df.w.to_numpy() if weighted else None
    label = df.y.to_numpy() if not isinstance(score, str) else df.yb.to_numpy()
    s = df[score].to_numpy()
    if by is None:
        return metrics.copy().update(label, s, sample_weight=w).compute()
    slices = df[by].to_numpy() if isinstance(by, str) else {c: df[c].to_numpy() for c in by}
    return sm.Sliced(metrics.copy()).update(label, s, slices=slices, sample_weight=w).compute()


def _local(parts: list[pd.DataFrame], metrics: sm.MetricSet, by: Any, score: Any, weighted: bool,
           ranges: int, batch: int, nulls: str = "error") -> tuple[Any, int]:
    """spark_keyed's jobs on the stand-in frame: (values as ``evaluate`` delivers them, skipped)."""
    label = "y" if not isinstance(score, str) else "yb"
    request = Request(label=label, score=score, weight="w" if weighted else None, by=by, nulls=nulls)
    run = make_run(metrics, request, available=list(parts[0].columns))
    split = kr.split_of(run.template, run.plan, dict(parts[0].dtypes.items()))
    assert split is not None
    frame = ranked_cases.Partitions(parts, batch, task_id=(spark_keyed, "_partition"))
    values, caught, skipped = spark_keyed.keyed_values(frame.select(*run.plan.columns()), run.plan, split,
                                                       ranges)
    return run.shape.deliver(values, caught, sliced=by is not None), skipped


@settings(max_examples=20, deadline=None)
@given(n=st.integers(0, 250), seed=st.integers(0, 10**6), ranges=st.integers(1, 6), weighted=st.booleans(),
       by=st.sampled_from([None, "g", ["g", "h"]]), cuts=st.lists(st.integers(0, 250), max_size=4),
       small=st.booleans())
def test_stand_in_jobs_equal_one_process(n: int, seed: int, ranges: int, weighted: bool, by: Any,
                                         cuts: list[int], small: bool) -> None:
    """Any partitioning (empty partitions), range count, chunking (several chunks per partition,
    several shipped rows per chunk) and keys: one process's values and warnings."""
    df = _data(n, seed, slices=5, decimals=1)
    bounds = [0, *sorted(min(c, n) for c in cuts), n]
    parts = [df.iloc[a:b] for a, b in zip(bounds[:-1], bounds[1:], strict=True)]
    metrics = sm.MetricSet(a=sm.AUROC(C, average="weighted"), p=sm.AveragePrecision(C, average=None),
                           m=sm.AUROC(C, average="micro"), acc=sm.Accuracy(C))
    if by is None and n == 0:
        return  # the frame's types: the state path's empty values (tested on Spark)
    want, w1 = _recorded(lambda: _one(metrics, df, by, SCORES, weighted))
    with mock.patch.object(spark_keyed, "TUPLES_PER_CHUNK", 40 if small else 1 << 20), \
            mock.patch.object(spark_keyed, "_MIN_ROWS", 1), mock.patch.object(spark_keyed, "_CHUNK", 25 if small else 1 << 22):
        (got, skipped), w2 = _recorded(lambda: _local(parts, metrics, by, SCORES, weighted, ranges, 7))
    cases.assert_same(got, want)
    assert w1 == w2 and skipped == 0


@pytest.mark.parametrize("case", ["partial by", "partial multiclass", "ovo", "multilabel"])
@pytest.mark.parametrize("weighted", [False, True])
def test_stand_in_partial_one_vs_one_and_multilabel(case: str, weighted: bool) -> None:
    """The keyed sets the kernel also takes -- ``max_fpr`` with ``by=`` or multiclass, one-vs-one,
    multilabel -- travel through the Spark jobs (the partial areas in the shipped summaries):
    one process's values within 1e-12."""
    df = _data(240, seed=11, slices=3, decimals=1)
    labels = [f"l{c}" for c in range(C)]
    rng = np.random.default_rng(4)
    for c in labels:
        df[c] = rng.integers(0, 2, len(df))
    metrics, label, by = {
        "partial by": (sm.MetricSet(p=sm.AUROC(max_fpr=0.3), f=sm.AUROC()), "yb", "g"),
        "partial multiclass": (sm.MetricSet(p=sm.AUROC(C, max_fpr=0.3, average="weighted")), "y", None),
        "ovo": (sm.MetricSet(p=sm.AUROC(C, multi_class="ovo")), "y", "g"),
        "multilabel": (sm.MetricSet(p=sm.AUROC(C, multilabel=True, max_fpr=0.5),
                                    a=sm.AveragePrecision(C, multilabel=True, average="micro")), labels, None),
    }[case]
    score: Any = "s1" if case == "partial by" else SCORES
    w = df.w.to_numpy() if weighted else None
    y = df[label].to_numpy()
    if by is None:
        want = metrics.copy().update(y, df[score].to_numpy(), sample_weight=w).compute()
    else:
        want = sm.Sliced(metrics.copy()).update(y, df[score].to_numpy(), slices=df[by].to_numpy(),
                                                sample_weight=w).compute()
    request = Request(label=label, score=score, weight="w" if weighted else None, by=by)
    run = make_run(metrics, request, available=list(df.columns))
    split = kr.split_of(run.template, run.plan, dict(df.dtypes.items()))
    assert split is not None
    frame = ranked_cases.Partitions([df.iloc[:90], df.iloc[90:]], 7, task_id=(spark_keyed, "_partition"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        values, caught, _ = spark_keyed.keyed_values(frame.select(*run.plan.columns()), run.plan, split, 4)
        got = run.shape.deliver(values, caught, sliced=by is not None)
    flat_got = got if by is None else {(k, n): v for k, d in got.items() for n, v in d.items()}
    flat_want = want if by is None else {(k, n): v for k, d in want.items() for n, v in d.items()}
    assert flat_got.keys() == flat_want.keys()
    for k, v in flat_want.items():
        assert np.allclose(np.asarray(flat_got[k], dtype=float), np.asarray(v, dtype=float),
                           rtol=1e-12, atol=1e-15, equal_nan=True), (k, flat_got[k], v)


def test_shipped_bytes_round_trip_and_are_checked() -> None:
    rng = np.random.default_rng(0)
    for top, weighted in ((200, False), (70_000, True), (2**40, True)):
        t = (rng.integers(0, top, 50), rng.random(50), rng.random(50) < 0.5, rng.random(50) if weighted else None)
        back = spark_keyed.tuples_from_bytes(spark_keyed.tuples_to_bytes(t))
        for a, b in zip(t, back, strict=True):
            assert (a is None and b is None) or np.array_equal(a, b)
        assert back[0].dtype == np.int64
    data = spark_keyed.tuples_to_bytes(t)
    for bad in (data[:-1], data[:10], data + b"\0"):
        with pytest.raises(ValueError, match="keyed tuples: "):
            spark_keyed.tuples_from_bytes(bad)
    s = kr.KeyedSummaries(np.array([3, 4]), np.ones(2), np.ones(2), np.ones(2), np.ones(2), [2**70, 1])
    assert spark_keyed.summaries_from_bytes(spark_keyed.summaries_to_bytes(s)).u2 == [2**70, 1]
    part = ap_envelope.EnvelopePart(np.array([0.9, 0.5]), np.array([0.25, 0.5]), np.linspace(1, 0, 11))
    s = kr.KeyedSummaries(np.array([3, 4]), np.ones(2), np.ones(2), np.ones(2), np.ones(2), None,
                          np.ones((1, 2)), keyed_envelope.pack([None, part]))
    back = spark_keyed.summaries_from_bytes(spark_keyed.summaries_to_bytes(s))
    assert back.envelope is not None and back.envelope.parts()[0] is None
    got = back.envelope.parts()[1]
    assert got is not None and all(np.array_equal(a, b) for a, b in zip(
        (got.values, got.masses, got.levels), (part.values, part.masses, part.levels), strict=True))
    for bad in (dataclasses.replace(s, pos=np.ones(3)), dataclasses.replace(s, partial=np.ones((1, 3))),
                dataclasses.replace(s, envelope=keyed_envelope.pack([part]))):
        with pytest.raises(ValueError, match="keyed (summaries|envelopes): "):
            spark_keyed.summaries_from_bytes(spark_keyed.summaries_to_bytes(bad))


@pytest.mark.parametrize("unit", [None, 0.1])
@pytest.mark.parametrize("case", ["multiclass", "by", "multilabel"])
def test_stand_in_interpolated_and_eleven_point(case: str, unit: float | None) -> None:
    """Step, interpolated and 11-point AP (every average) beside a partial AUROC through the Spark
    jobs (the envelopes in the shipped summaries, several chunks, an empty partition): one
    process's values and warnings within 1e-12, weights with zeros (real, or multiples of 0.1:
    recall levels reached exactly, the exact sums shipped)."""
    df = _data(300, seed=13, slices=3, decimals=2)
    rng = np.random.default_rng(8)
    w = rng.random(len(df)) if unit is None else rng.integers(1, 8, len(df)) * unit
    df["w"] = np.where(rng.random(len(df)) < 0.2, 0.0, w)
    labels = [f"l{c}" for c in range(C)]
    for c in labels:
        df[c] = rng.integers(0, 2, len(df))
    df = df[~((df.g == 2) & (df.y == 1))]
    num = None if case == "by" else C
    ml = {"multilabel": True} if case == "multilabel" else {}
    members: dict[str, Any] = {"part": sm.AUROC(*([num] if num else []), max_fpr=0.4, **ml)}
    for avg in AVERAGES if num else ("macro",):
        kw: dict[str, Any] = {**ml, **({"average": avg} if num else {})}
        args = [num] if num else []
        members[f"s_{avg}"] = sm.AveragePrecision(*args, **kw)
        members[f"i_{avg}"] = sm.AveragePrecision(*args, interpolated=True, **kw)
        members[f"e_{avg}"] = sm.AveragePrecision(*args, eleven_point=True, **kw)
    metrics = sm.MetricSet(members)
    label, score, by = {"multiclass": ("y", SCORES, "g"), "by": ("yb", "s1", ["g", "h"]),
                        "multilabel": (labels, SCORES, None)}[case]
    slices = None if by is None else {c: df[c].to_numpy() for c in by} if isinstance(by, list) else df[by].to_numpy()
    acc: Any = metrics.copy() if by is None else sm.Sliced(metrics.copy())
    kwargs = {} if by is None else {"slices": slices}
    want, w1 = _recorded(lambda: acc.update(df[label].to_numpy(), df[score].to_numpy(), sample_weight=df.w.to_numpy(),
                                            **kwargs).compute())
    request = Request(label=label, score=score, weight="w", by=by)
    run = make_run(metrics, request, available=list(df.columns))
    split = kr.split_of(run.template, run.plan, dict(df.dtypes.items()))
    assert split is not None and any(split.envelope_columns)
    frame = ranked_cases.Partitions([df.iloc[:0], df.iloc[:120], df.iloc[120:]], 7, task_id=(spark_keyed, "_partition"))
    with mock.patch.object(spark_keyed, "TUPLES_PER_CHUNK", 60), mock.patch.object(spark_keyed, "_MIN_ROWS", 1):
        values, caught, _ = spark_keyed.keyed_values(frame.select(*run.plan.columns()), run.plan, split, 4)
    got, w2 = _recorded(lambda: run.shape.deliver(values, caught, sliced=by is not None))
    cases.assert_same(got, want)
    assert w1 == w2


# -- a real local Spark (the ``spark_session`` fixture of tests/integrations/conftest.py) ------------

def _frame(spark: Any, df: pd.DataFrame, partitions: int = 3) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        return spark.createDataFrame(df).repartition(partitions)


@pytest.fixture
def keyed() -> Any:
    with mock.patch.object(spark_keyed, "keyed_values", wraps=spark_keyed.keyed_values) as spy:
        yield spy


@pytest.mark.filterwarnings("ignore::FutureWarning")
def test_spark_equals_one_process_and_sklearn(spark_session, keyed) -> None:
    """Multiclass (every average, weights with zeros, ties) against the MetricSet and
    scikit-learn; slices x classes by two key columns with a class absent from a slice against
    ``Sliced``; binary ``by=`` unweighted."""
    df = _data(1_500, 3)
    frame = _frame(spark_session, df)
    metrics = _multiclass_set()
    got = sm_spark.evaluate(frame, metrics, label="y", score=SCORES, weight="w")
    cases.assert_same(got, _one(metrics, df, None, SCORES, True))
    onehot, s, w = np.eye(C)[df.y], df[SCORES].to_numpy(), df.w.to_numpy()
    for avg in ("macro", "weighted", "micro"):
        assert abs(got[f"auroc_{avg}"] - roc_auc_score(onehot, s, average=avg, sample_weight=w)) <= 1e-12
        assert abs(got[f"ap_{avg}"] - average_precision_score(onehot, s, average=avg, sample_weight=w)) <= 1e-12
    holed = df[~((df.g == 2) & (df.y == 1))]
    want, w1 = _recorded(lambda: _one(metrics, holed, ["g", "h"], SCORES, True))
    got, w2 = _recorded(lambda: sm_spark.evaluate(_frame(spark_session, holed), metrics, label="y", score=SCORES,
                                                   weight="w", by=["g", "h"]))
    cases.assert_same(got, want)
    assert w1 == w2 and np.isnan(got[(2, "x")]["auroc_None"][1])
    binary = sm.MetricSet(auroc=sm.AUROC(), ap=sm.AveragePrecision(), f1=sm.F1())
    got = sm_spark.evaluate(frame, binary, label="yb", score="s1", by="h")
    cases.assert_same(got, _one(binary, df, "h", "s1", False))
    assert keyed.call_count == 3


@pytest.mark.filterwarnings("ignore::FutureWarning")
def test_spark_nulls_skipped_or_refused(spark_session, keyed) -> None:
    df = _data(600, 4)
    df.loc[df.index[::50], "s1"] = np.nan
    kept = df.dropna()
    metrics = sm.MetricSet(auroc=sm.AUROC(C), ap=sm.AveragePrecision(C, average="micro"))
    frame = _frame(spark_session, df, 2)
    with pytest.warns(NullRowsSkipped, match=f"skipped {len(df) - len(kept)} row"):
        got = sm_spark.evaluate(frame, metrics, label="y", score=SCORES, by="g", nulls="skip")
    cases.assert_same(got, _one(metrics, kept, "g", SCORES, False))
    with pytest.raises(ValueError, match=r"nulls: column 's1' is null at row \d+ of Spark partition \d"):
        sm_spark.evaluate(frame, metrics, label="y", score=SCORES, by="g")
    assert keyed.call_count == 2


@pytest.mark.filterwarnings("ignore::FutureWarning")
def test_the_driver_does_not_receive_the_scores(spark_session, keyed) -> None:
    """What the driver reads -- the heads (samples, keys), the other members' states, the
    totals, the range summaries -- is as large for 40,000 rows as for 2,000 (20 slices x 3
    classes + micro), far below the 40,000 x 3 scores (960,000 bytes) the state path gathers."""
    read = {"n": 0}

    def counted(fn: Any, at: int = 0) -> Any:
        def inner(*args: Any) -> Any:
            data = args[at]
            read["n"] += sum(len(bytes(r[4])) for r in data) if at == 0 and isinstance(data, list) \
                else len(bytes(data))
            return fn(*args)
        return inner

    metrics = sm.MetricSet(auroc=sm.AUROC(C, average="micro"), ap=sm.AveragePrecision(C), acc=sm.Accuracy(C))
    sizes = []
    merge = spark_keyed.merge_bytes
    for n in (2_000, 40_000):
        read["n"] = 0
        df = _data(n, n, slices=20, decimals=6)
        with mock.patch.object(spark_keyed, "_head_from_bytes", counted(spark_keyed._head_from_bytes)), \
                mock.patch.object(spark_keyed, "summaries_from_bytes", counted(spark_keyed.summaries_from_bytes)), \
                mock.patch.object(spark_keyed, "_totals_of", counted(spark_keyed._totals_of)), \
                mock.patch.object(spark_keyed, "merge_bytes", lambda states: read.update(n=read["n"] + sum(
                    len(s) for s in states)) or merge(states)):
            got = sm_spark.evaluate(_frame(spark_session, df, 2), metrics, label="y", score=SCORES, by="g")
        cases.assert_same(got, _one(metrics, df, "g", SCORES, False))
        sizes.append(read["n"])
    assert sizes[1] < 1.25 * sizes[0] + 4_000, sizes
    assert sizes[1] < 960_000 / 4, sizes
    assert keyed.call_count == 2


@pytest.mark.filterwarnings("ignore::FutureWarning")
def test_spark_interpolated_and_eleven_point(spark_session, keyed) -> None:
    """Step, interpolated and 11-point AP (macro, micro, per class) beside a partial AUROC by
    slices x classes, and binary readouts by slices, on a real Spark: the keyed route, one
    process's values within 1e-12 (real weights with zeros)."""
    df = _data(1_200, 17)
    rng = np.random.default_rng(17)
    df["w"] = np.where(rng.random(len(df)) < 0.2, 0.0, rng.random(len(df)))
    members: dict[str, Any] = {"part": sm.AUROC(C, max_fpr=0.3), "acc": sm.Accuracy(C)}
    for avg in ("macro", "micro", None):
        members[f"s_{avg}"] = sm.AveragePrecision(C, average=avg)
        members[f"i_{avg}"] = sm.AveragePrecision(C, interpolated=True, average=avg)
        members[f"e_{avg}"] = sm.AveragePrecision(C, eleven_point=True, average=avg)
    metrics = sm.MetricSet(members)
    frame = _frame(spark_session, df)
    got = sm_spark.evaluate(frame, metrics, label="y", score=SCORES, weight="w", by="g")
    cases.assert_same(got, _one(metrics, df, "g", SCORES, True))
    binary = sm.MetricSet(i=sm.AveragePrecision(interpolated=True), e=sm.AveragePrecision(eleven_point=True),
                          a=sm.AUROC())
    got = sm_spark.evaluate(frame, binary, label="yb", score="s1", by="h", weight="w")
    cases.assert_same(got, _one(binary, df, "h", "s1", True))
    assert keyed.call_count == 2


@pytest.mark.filterwarnings("ignore::FutureWarning")
def test_spark_eleven_point_levels_reached_exactly(spark_session, keyed) -> None:
    """Weights multiples of 0.1 whose sums reach recall levels exactly (the cases where float
    sums compared a level either way): binary and by slices on a real Spark, one process's
    values and the exact definition's 11-point AP (a Fraction oracle)."""
    metrics = cases.level_metrics()
    df = cases.level_frame(0.1, (23,))
    cases.assert_exact_levels(sm_spark.evaluate(_frame(spark_session, df), metrics, label="y", score="p",
                                                weight="w"), df)
    df = cases.level_frame(0.1)
    cases.assert_exact_levels(sm_spark.evaluate(_frame(spark_session, df), metrics, label="y", score="p",
                                                weight="w", by="g"), df, by=True)
    assert keyed.call_count == 1
