"""Issue #32 on Spark: ``scores="probability"`` AUROC / AP groups, an exact group between two
other state groups in the member order, and ``classes=`` / ``pos_label=`` string labels beside a
second exact group take the range routes of :func:`streammetrics.spark.evaluate` (score ranges,
shuffled ranked ranges, keyed ranges), never the state path: one process's values within 1e-12,
and a probability above 1 (or a label outside the classes) in a late partition refused with
one process's message and offending value. A real local Spark (the stand-in frames of the keyed
tests run the same ``keyed_part`` the Dask tests check)."""

from __future__ import annotations

import warnings
from typing import Any

import pytest

pytest.importorskip("pyspark")
pytest.importorskip("pyarrow")

import engine_cases as cases  # noqa: E402
import prob_cases as pc  # noqa: E402

import streammetrics.spark as sm_spark  # noqa: E402


@pytest.mark.filterwarnings("ignore::FutureWarning")
def test_spark_takes_the_ranges(spark_session: Any, monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    df = pc.frame(900, 21)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        frame = spark_session.createDataFrame(df).repartition(3)
    seen = cases.spark_routes(monkeypatch)
    pc.check_runs(sm_spark.evaluate, frame, df, seen)
    df.to_parquet(tmp_path / "f.parquet")  # the direct Parquet ranges (binary), the keyed job
    files = spark_session.read.parquet(str(tmp_path))
    for case in ("binary", "multiclass"):
        make, label, score = pc.CASES[case]
        seen.clear()
        got = sm_spark.evaluate(files, make(), label=label, score=score)
        assert any(s is not None for s in seen), case
        pc.assert_close(got, pc.one_process(case, df))
    for case, how in (("binary", "above"), ("multiclass", "below"), ("between", "label"), ("animals", "unknown")):
        bad = pc.spoiled(df, case, 700, how)
        want = pc.refused(case, bad).split(" at index")[0].split(" at row")[0]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)
            bad_frame = spark_session.createDataFrame(bad).repartition(3)
        make, label, score = pc.CASES[case]
        with pytest.raises(ValueError) as eng:
            sm_spark.evaluate(bad_frame, make(), label=label, score=score)
        assert want in str(eng.value), (want, str(eng.value))


@pytest.mark.parametrize("how", ["label", "seven", "above"])
def test_routing_pass_keeps_the_group_order(how: str) -> None:
    """The shuffled ranges' routing pass (no Spark session: its task over Arrow batches) of a
    binary exact group between F1 and accuracy: the ranked twin checks each chunk first, the
    other members are fed after it; a chunk the twin refuses is offered to F1 (the member
    before the group) first, so the error is one process's (label 7: F1's; -1, 1.25: the
    group's; a NaN score is the engines' null, refused before)."""
    import dataclasses

    import pyarrow as pa

    from streammetrics._engines import range_counts, spark_ranked
    from streammetrics._engines.plan import make_plan

    df = pc.spoiled(pc.frame(120, 4), "binary_between", 30, how)
    acc, _, plan = make_plan(pc.binary_between_set(), label="yb", score="pb", weight=None, query=None,
                             doc_id=None, update_kwargs={}, available=list(df.columns))
    split = range_counts.split_of(acc, plan, dict(df.dtypes.items()), offsets=True, labels=True)
    assert split is not None and split.before == ("f",)
    req = spark_ranked.set_request(split, plan, 2)
    rest = spark_ranked.Rest(dataclasses.replace(plan, config=split.rest), split.before)
    batches = iter([pa.RecordBatch.from_pandas(df[["yb", "pb"]], preserve_index=False)])
    with pytest.raises(ValueError) as eng:
        list(spark_ranked._route_task(req.plan, 0, 1 << 16, rest, batches))
    want = pc.refused("binary_between", df).split(" at index")[0].split(" at row")[0]
    assert want in str(eng.value), (want, str(eng.value))
