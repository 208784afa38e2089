"""streammetrics.spark.evaluate's exact binary AUROC / AP on any frame (issue #32 item 2): where the
direct Parquet range path does not apply (a ``createDataFrame`` frame, a filtered or computed
Parquet frame, weights, ``nulls="skip"``, more cores than ranges), the ranked members go by
``evaluate_ranked``'s shuffled score ranges (``_engines/spark_ranked``) and the other members by
their states: scikit-learn within 1e-12, the other members exactly one process's, the same
errors and warnings, and nothing of the size of the data on the driver."""

from __future__ import annotations

import re
import warnings
from types import SimpleNamespace
from typing import Any
from unittest import mock

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("pyspark")
pytest.importorskip("pyarrow")

import streammetrics as sm  # noqa: E402
import streammetrics.spark as sm_spark  # noqa: E402
from streammetrics._engines import ranked_common, spark_ranges, spark_ranked  # noqa: E402
from streammetrics._engines.plan import make_plan  # noqa: E402
from streammetrics._engines.request import Request, make_run  # noqa: E402

RANKED = ("auroc", "ap")


def _set(order: str = "ranked first", ignore: int | None = None) -> sm.MetricSet:
    ranked = {"auroc": sm.AUROC(ignore_index=ignore), "ap": sm.AveragePrecision(ignore_index=ignore)}
    rest = {"f1": sm.F1(ignore_index=ignore), "cm": sm.ConfusionMatrix(ignore_index=ignore)}
    if order == "only ranked":
        return sm.MetricSet(ranked)
    return sm.MetricSet({**ranked, **rest} if order == "ranked first" else {**rest, **ranked})


def _data(n: int, seed: int, weights: bool = False) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    df = pd.DataFrame({"y": y, "p": np.round(0.3 * y + 0.7 * rng.random(n), 2)})  # ties
    if weights:
        df["w"] = np.round(rng.uniform(0.1, 3.0, n), 3)
    return df


def _frame(spark: Any, df: pd.DataFrame, partitions: int = 3) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        if not len(df):  # nothing to infer the types from
            return spark.createDataFrame([], "y long, p double").repartition(partitions)
        return spark.createDataFrame(df).repartition(partitions)


def _run(fn: Any) -> tuple[Any, list[str]]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        values = fn()
    return values, sorted(str(w.message) for w in caught if not issubclass(w.category, FutureWarning))


def _single(metrics: sm.MetricSet, df: pd.DataFrame, weight: str | None = None) -> tuple[dict[str, Any], list[str]]:
    def fn() -> Any:
        acc = metrics.copy()
        if len(df):
            acc.update(df["y"].to_numpy(), df["p"].to_numpy(),
                       sample_weight=None if weight is None else df[weight].to_numpy())
        return acc.compute()

    return _run(fn)


def _close(got: dict[str, Any], want: dict[str, Any], weighted: bool = False) -> None:
    """The ranked members within 1e-12 of one process, the others equal (within float rounding
    of their sums of float weights: ``weighted``)."""
    assert list(got) == list(want)
    for k, v in want.items():
        if k in RANKED or weighted:
            np.testing.assert_allclose(np.asarray(got[k], dtype=float), np.asarray(v, dtype=float), rtol=1e-12,
                                       atol=1e-12, err_msg=k)
        else:
            assert np.array_equal(np.asarray(got[k]), np.asarray(v), equal_nan=True), (k, got[k], v)


def _sklearn(got: dict[str, Any], df: pd.DataFrame, weight: str | None = None) -> None:
    from sklearn.metrics import average_precision_score, roc_auc_score

    w = None if weight is None else df[weight]
    assert got["auroc"] == pytest.approx(roc_auc_score(df.y, df.p, sample_weight=w), rel=1e-12, abs=1e-12)
    assert got["ap"] == pytest.approx(average_precision_score(df.y, df.p, sample_weight=w), rel=1e-12, abs=1e-12)


@pytest.fixture
def paths() -> Any:
    """Spies on the paths (the library's own functions, not Spark's): the ranked jobs, the
    states merged on the driver, the direct range path."""
    with mock.patch.object(spark_ranked, "counted_summaries", wraps=spark_ranked.counted_summaries) as ranked, \
            mock.patch.object(sm_spark, "_driver_merge", wraps=sm_spark._driver_merge) as states, \
            mock.patch.object(spark_ranges, "run_ranges", wraps=spark_ranges.run_ranges) as direct:
        yield SimpleNamespace(ranked=ranked, states=states, direct=direct)


def _merged_members(states: Any) -> list[list[str]]:
    """The members of each state the driver merged (the states' own bytes, read back)."""
    from streammetrics._core.metric import trusted_states
    from streammetrics._engines.plan import state_from_bytes

    out = []
    for call in states.call_args_list:
        with trusted_states():
            out.append(sorted({n for p, _ in call.args[0] if p for n, _ in state_from_bytes(p).items()}))
    return out


@pytest.mark.filterwarnings("ignore::FutureWarning")
@pytest.mark.parametrize("order", ["ranked first", "rest first", "only ranked"])
def test_created_frame_equals_sklearn_and_one_process(spark_session, paths, order: str) -> None:
    df = _data(3000, seed=len(order))
    got, messages = _run(lambda: sm_spark.evaluate(_frame(spark_session, df), _set(order), label="y", score="p"))
    want, want_messages = _single(_set(order), df)
    _close(got, want)
    _sklearn(got, df)
    assert messages == want_messages
    assert paths.ranked.call_count == 1 and paths.direct.call_count == 0
    # the states merged on the driver hold the other members only: no score state
    assert _merged_members(paths.states) == ([] if order == "only ranked" else [["cm", "f1"]])


@pytest.mark.filterwarnings("ignore::FutureWarning")
def test_weighted_ignored_rows_shapes_and_as_frame(spark_session, paths) -> None:
    df = _data(2500, seed=7, weights=True)
    frame = _frame(spark_session, df, 4)
    got = sm_spark.evaluate(frame, _set(), label="y", score="p", weight="w")
    _close(got, _single(_set(), df, "w")[0], weighted=True)
    _sklearn(got, df, "w")
    one = sm_spark.evaluate(frame, sm.AUROC(), label="y", score="p", weight="w")  # a single metric
    assert one == pytest.approx(got["auroc"], rel=1e-12)
    mapping = sm_spark.evaluate(frame, {"a": sm.AveragePrecision(), "acc": sm.Accuracy()}, label="y", score="p")
    single = _single(sm.MetricSet(ap=sm.AveragePrecision(), acc=sm.Accuracy()), df)[0]
    assert mapping["a"] == pytest.approx(single["ap"], rel=1e-12) and mapping["acc"] == single["acc"]
    table = sm_spark.evaluate(frame, _set(), label="y", score="p", weight="w", as_frame=True).toPandas()
    assert dict(zip(table.metric, table.value, strict=True))["auroc"] == pytest.approx(got["auroc"], rel=1e-12)
    ignored = df.assign(y=np.where(np.arange(len(df)) % 7 == 0, -1, df.y))
    got = sm_spark.evaluate(_frame(spark_session, ignored), _set(ignore=-1), label="y", score="p")
    _close(got, _single(_set(ignore=-1), ignored)[0])
    assert paths.ranked.call_count == 5 and paths.direct.call_count == 0


@pytest.mark.filterwarnings("ignore::FutureWarning")
def test_filtered_and_computed_parquet_frames(spark_session, tmp_path, paths) -> None:
    """Not a plain scan (a filter, a computed column): the ranked members by shuffled ranges; a
    plain scan keeps the direct range path, bit for bit as one process."""
    from pyspark.sql import functions as F

    df = _data(4000, seed=11)
    df.to_parquet(tmp_path / "part-0.parquet", row_group_size=700)
    scan = spark_session.read.parquet(str(tmp_path))
    kept = df[df.p >= 0.1]
    got = sm_spark.evaluate(scan.filter("p >= 0.1"), _set(), label="y", score="p")
    _close(got, _single(_set(), kept)[0])
    _sklearn(got, kept)
    computed = scan.withColumn("q", F.col("p") * 2)
    got = sm_spark.evaluate(computed, _set("only ranked"), label="y", score="q")
    _close(got, _single(_set("only ranked"), df.assign(p=df.p * 2))[0])
    assert paths.ranked.call_count == 2 and paths.direct.call_count == 0
    plain = sm_spark.evaluate(scan, _set(), label="y", score="p")
    want = _single(_set(), df)[0]
    assert plain["auroc"] == want["auroc"] and plain["ap"] == want["ap"]  # the direct range path: bit for bit
    assert paths.ranked.call_count == 2 and paths.direct.call_count == 1


@pytest.mark.filterwarnings("ignore::FutureWarning")
def test_nulls_skipped_counted_or_refused_as_the_state_path(spark_session, paths) -> None:
    df = _data(1200, seed=13, weights=True)
    holes = df.assign(p=df.p.where(df.index % 97 != 5), w=df.w.where(df.index % 89 != 3))
    holes.loc[40, "p"] = np.nan  # a NaN (pandas reads it as a null)
    frame = _frame(spark_session, holes, 3)
    dropped = holes.dropna()
    for metrics in (_set(), _set("only ranked")):
        got, messages = _run(lambda m=metrics: sm_spark.evaluate(frame, m, label="y", score="p", weight="w",
                                                                  nulls="skip"))
        _close(got, _single(metrics, dropped, "w")[0], weighted=True)
        assert f"nulls: skipped {len(holes) - len(dropped)} row(s) holding a null in ['y', 'p', 'w']" in messages
    # nulls="error": the message the state path gives (compute=False keeps the state path; one
    # partition: with several, whichever task fails first names its row, on either path)
    frame = _frame(spark_session, holes, 1)
    with pytest.raises(ValueError) as states:
        sm_spark.evaluate(frame, _set(), label="y", score="p", weight="w", compute=False)
    assert str(states.value).startswith("nulls: column 'w' is null at row 3 of Spark partition 0 ")
    with pytest.raises(ValueError, match=re.escape(str(states.value))):
        sm_spark.evaluate(frame, _set(), label="y", score="p", weight="w")
    bad = _frame(spark_session, df.assign(y=np.where(df.index == 610, 2, df.y)), 1)
    for order in ("ranked first", "rest first"):
        with pytest.raises(ValueError) as states:
            sm_spark.evaluate(bad, _set(order), label="y", score="p", compute=False)
        with pytest.raises(ValueError, match=re.escape(str(states.value))):
            sm_spark.evaluate(bad, _set(order), label="y", score="p")
    assert paths.ranked.call_count == 5  # one pass feeds the rest too: it refuses the label there


@pytest.mark.filterwarnings("ignore::FutureWarning")
def test_ties_one_class_and_no_rows(spark_session, paths) -> None:
    tied = pd.DataFrame({"y": [0, 1] * 300, "p": [0.5] * 600})  # every score tied
    got, messages = _run(lambda: sm_spark.evaluate(_frame(spark_session, tied), _set(), label="y", score="p"))
    _close(got, _single(_set(), tied)[0])
    _sklearn(got, tied)
    for one in (_data(500, 3).assign(y=1), _data(500, 3).assign(y=0), _data(0, 3)):
        got, messages = _run(lambda d=one: sm_spark.evaluate(_frame(spark_session, d, 2), _set(), label="y",
                                                             score="p"))
        want, want_messages = _single(_set(), one)
        _close(got, want)
        assert messages == want_messages and messages
    assert paths.ranked.call_count == 4


@pytest.mark.filterwarnings("ignore::FutureWarning")
def test_nothing_of_the_data_size_reaches_the_driver(spark_session, paths) -> None:
    """What the driver receives -- the other members' states, the edges' samples, the ranges'
    totals and summaries -- has the same size for 2,000 and 40,000 rows (one chunk per
    partition): no score crosses to the driver. The state path would merge a score state of
    8 bytes a row there."""
    from streammetrics._engines import ranked as ranked_engine

    sizes = []
    summary, edges = ranked_common.summary_from_bytes, ranked_engine.range_edges
    got_bytes: dict[str, int] = {}

    def summary_read(b: bytes) -> Any:
        got_bytes["summaries"] += len(b)
        return summary(b)

    def edges_placed(samples: Any, n_ranges: int) -> Any:
        got_bytes["samples"] += sum(v.nbytes + c.nbytes for v, c in samples)
        return edges(samples, n_ranges)

    for n in (2000, 40_000):
        got_bytes.update(summaries=0, samples=0)
        df = _data(n, seed=n)
        with mock.patch.object(ranked_common, "summary_from_bytes", summary_read), \
                mock.patch.object(ranked_engine, "range_edges", edges_placed):
            got = sm_spark.evaluate(_frame(spark_session, df, 2), _set(), label="y", score="p")
        _close(got, _single(_set(), df)[0])
        states = sum(len(p) for p, _ in paths.states.call_args_list[-1].args[0])
        sizes.append((states, got_bytes["summaries"], got_bytes["samples"]))
    assert sizes[0] == sizes[1], sizes
    assert sum(sizes[1]) < 40_000  # against 320,000 bytes of scores
    assert _merged_members(paths.states) == [["cm", "f1"], ["cm", "f1"]]


def test_ranked_routing_rules() -> None:
    """Which runs take the shuffled ranges: exact binary AUROC / AP in one state, values asked
    for, no slices (a partial AUROC too: ``max_fpr``; interpolated / 11-point AP); curves, multiclass,
    bounded, ``compute=False``
    and ``by=`` keep the state path (documented); more cores than :data:`spark_ranges.MAX_RANGES` leave
    the direct range path to them."""
    def run(metrics: Any, **kw: Any) -> Any:
        request = Request(label="y", score="p", **kw)
        return make_run(metrics, request, available=["y", "p", "w", "k"])

    assert spark_ranked.split_for(run(_set(), weight="w", nulls="skip")) is not None
    assert spark_ranked.split_for(run(sm.AUROC())) is not None
    assert spark_ranked.split_for(run(sm.AUROC(max_fpr=0.3))) is not None  # partial AUROC: by ranges
    for readout in (sm.AveragePrecision(interpolated=True), sm.AveragePrecision(eleven_point=True)):
        assert spark_ranked.split_for(run(readout, weight="w")) is not None  # the ranges' envelopes
    for metrics, kw in [(_set(), {"compute": False}), (_set(), {"by": "k"}),
                        (sm.MetricSet(roc=sm.ROCCurve(), auroc=sm.AUROC()), {}),
                        (sm.AUROC(num_classes=3), {}), (sm.AUROC(max_bytes=4096), {})]:
        assert spark_ranked.split_for(run(metrics, **kw)) is None, (metrics, kw)
    plan = make_plan(_set(), label="y", score="p", weight=None, query=None, doc_id=None, update_kwargs={},
                     available=["y", "p"])[2]
    for cores, taken in ((2, True), (4, True), (5, False), (64, False)):
        df = SimpleNamespace(sparkSession=SimpleNamespace(sparkContext=SimpleNamespace(defaultParallelism=cores)),
                             schema=SimpleNamespace(fields=[SimpleNamespace(name="y", dataType=_Type("LongType")),
                                                            SimpleNamespace(name="p", dataType=_Type("DoubleType"))]))
        got = spark_ranges.split_for(df, SimpleNamespace(plan=plan, template=_set(),
                                                         request=SimpleNamespace(compute=True)))
        assert (got is not None) == taken, cores
    req = spark_ranked.set_request(spark_ranked.split_for(run(_set(), weight="w")), plan, 16)  # type: ignore[arg-type]
    assert req.n_ranges == 16 * spark_ranked.RANGES_PER_CORE and list(req.template) == ["auroc", "ap"]


def _Type(name: str) -> Any:  # noqa: N802 -- a Spark data type's class name
    return type(name, (), {})()
