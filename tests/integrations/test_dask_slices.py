"""``by=`` slices through streammetrics.dask: the ``Sliced`` result of one process, on a real
LocalCluster, with partitions that see different slices and empty partitions and files."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("dask.dataframe")
pytest.importorskip("distributed")
pytest.importorskip("pyarrow")

import dask  # noqa: E402
import dask.dataframe as dd  # noqa: E402
import engine_cases as cases  # noqa: E402

import streammetrics as sm  # noqa: E402
from streammetrics.dask import evaluate, evaluate_parquet  # noqa: E402

COLS = dict(label="y", score="p", weight="w")


@pytest.mark.parametrize("by", ["region", ["region", "tier"]])
def test_parquet_slices_on_cluster_equal_sliced(client: Any, tmp_path: Path, by: Any) -> None:
    df = cases.sliced_frame()
    cuts = [0, 300, 300, 1100, 1500, 2400]  # in region order: files see different slices, one empty
    for i, (a, b) in enumerate(zip(cuts[:-1], cuts[1:], strict=True)):
        df.iloc[a:b].to_parquet(tmp_path / f"part-{i}.parquet", index=False)
    got = evaluate_parquet(str(tmp_path / "*.parquet"), cases.binary_set(), by=by, **COLS)
    cases.assert_same(got, cases.single_process_sliced(cases.binary_set(), df, by, **COLS))
    merged = evaluate_parquet(str(tmp_path), sm.AUROC(), by=by, compute=False, split_every=2, **COLS)
    assert isinstance(merged, sm.Sliced)
    cases.assert_same(merged.compute(), cases.single_process_sliced(sm.AUROC(), df, by, **COLS))


def test_slices_any_partitioning_and_shapes(client: Any) -> None:
    df = cases.sliced_frame(900, seed=8)
    shuffled = df.sample(frac=1.0, random_state=1)
    ddf = dd.from_pandas(shuffled, npartitions=4)
    ref = cases.single_process_sliced(sm.MetricSet(f1=sm.F1(), auroc=sm.AUROC()), df, "tier", **COLS)
    got = evaluate(ddf, {"F-one": sm.F1(), "area": sm.AUROC()}, by="tier", **COLS)
    assert set(got) == set(ref)
    for key in ref:
        cases.assert_same(got[key], {"F-one": ref[key]["f1"], "area": ref[key]["auroc"]})
    empty = evaluate(dd.from_pandas(df.iloc[:0], npartitions=1), sm.F1(), by="tier", **COLS)
    assert empty == {}
    with pytest.raises(ValueError, match=r"columns \['nope'\]"):
        evaluate(ddf, sm.F1(), by=["nope"], **COLS)


def test_slice_keys_of_pandas_string_columns() -> None:
    """Arrow-backed string columns (Dask's default) give the same keys as numpy strings."""
    df = cases.sliced_frame(300, seed=9)
    ddf = dd.from_pandas(df.astype({"region": "string"}), npartitions=3)
    with dask.config.set(scheduler="synchronous"):
        got = evaluate(ddf, sm.Recall(), by="region", label="y", score="p")
    ref = sm.Sliced(sm.Recall()).update(df.y.to_numpy(), df.p.to_numpy(), slices=df.region.to_numpy())
    assert got == ref.compute()
