"""streammetrics.ray over engine inputs the last review listed (issue #32), over a real local Ray:
a dictionary-encoded score column (Parquet, Arrow blocks) read by the edge sampler as the range
tasks read it; a label the Parquet sampler's codec refuses named by the file task at its true row
(after a null before it); object columns of ``Decimal`` s (labels, scores, weights) read as
float64 by the block and keyed ranges as Dask reads them, without gathering; a bad label named
before a bad score; a refused row's block named by its number. The oracle is one process on the
state path's float64 reading (values bit for bit on the unweighted binary route, within 1e-12
elsewhere). Few cases: Ray is slow to start."""

from __future__ import annotations

import decimal
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

ray = pytest.importorskip("ray")
pytest.importorskip("ray.data")

import engine_cases as cases  # noqa: E402
import pyarrow as pa  # noqa: E402
import pyarrow.parquet as pq  # noqa: E402

import streammetrics as sm  # noqa: E402
from streammetrics._engines import ray_blocks, ray_keyed, ray_ranges  # noqa: E402
from streammetrics.ray import evaluate, evaluate_parquet  # noqa: E402

local_ray = pytest.fixture(scope="module", autouse=True)(cases.local_ray)


_no_gather = cases.ray_no_gather


def _set() -> sm.MetricSet:
    return sm.MetricSet(auroc=sm.AUROC(), ap=sm.AveragePrecision(), f1=sm.F1())


def _frame(n: int = 900, seed: int = 5) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    return pd.DataFrame({"y": y, "p": np.round(rng.random(n) * 0.7 + 0.3 * y, 2),
                         "w": np.round(rng.random(n) * 3, 1), "g": rng.integers(0, 3, n)})


def _decimals(a: Any) -> pd.Series:
    return pd.Series([decimal.Decimal(repr(float(v))) for v in a], dtype=object)


def _one(df: pd.DataFrame, weight: str | None = None, by: str | None = None) -> Any:
    w = None if weight is None else df[weight].to_numpy(np.float64)
    y, p = df.y.to_numpy(np.float64), df.p.to_numpy(np.float64)
    if by is not None:
        return sm.Sliced(_set()).update(y, p, sample_weight=w, slices=df[by].to_numpy()).compute()
    return _set().update(y, p, sample_weight=w).compute()


def test_dictionary_scores_are_sampled_as_the_tasks_read_them(monkeypatch: pytest.MonkeyPatch,
                                                              tmp_path: Path) -> None:
    df = _frame()
    want = _one(df)
    col = pa.array(df.p.to_numpy()).dictionary_encode()
    assert ray_ranges.sample_scores(pa.chunked_array([col]), 5).tolist() == df.p.to_numpy()[[0, 224, 449, 674, 899]].tolist()
    # Arrow blocks whose score column is a dictionary of floats: the block ranges, bit for bit
    table = pa.table({"y": df.y.to_numpy(), "p": col})
    ds = ray.data.from_arrow([table.slice(0, 300), table.slice(300)])
    _no_gather(monkeypatch)
    blocks = cases.spy(monkeypatch, ray_blocks, "evaluate_blocks")
    assert evaluate(ds, _set(), label="y", score="p") == want
    assert blocks == ["evaluate_blocks"]
    # Parquet keeps a dictionary only for strings: numeric strings read as numbers by the state
    # path (plan.column), as before; a later file of such strings beside a first one of floats is
    # refused naming the file, by the sampler as by the file tasks
    for i, (a, b) in enumerate([(0, 400), (400, 900)]):
        part = pa.table({"y": df.y.to_numpy()[a:b], "p": pa.array(df.p.astype(str).to_numpy()[a:b]).dictionary_encode()})
        pq.write_table(part, tmp_path / f"part-{i}.parquet", row_group_size=150)
    monkeypatch.undo()
    assert pa.types.is_dictionary(pq.read_schema(tmp_path / "part-1.parquet").field("p").type)
    cases.assert_same(evaluate_parquet(str(tmp_path), _set(), label="y", score="p"), want)
    pq.write_table(pa.table({"y": df.y.to_numpy()[:400], "p": df.p.to_numpy()[:400]}), tmp_path / "part-0.parquet")
    with pytest.raises(ValueError, match=r"column 'p' of \S*part-1\.parquet has type dictionary<values=string"):
        evaluate_parquet(str(tmp_path), _set(), label="y", score="p")


def test_the_parquet_sampler_leaves_a_refused_label_to_the_file_task(tmp_path: Path) -> None:
    df = _frame(600)
    labels = np.array(cases.SPAM, dtype=object)[df.y.to_numpy()]
    labels[[3, 5, 7]] = None
    labels[410] = "eggs"  # row 110 of the file's second row group (rows 300..599)
    pq.write_table(pa.table({"y": labels, "p": df.p.to_numpy()}), tmp_path / "part-0.parquet", row_group_size=300)
    spam = list(cases.SPAM)
    metrics = sm.MetricSet(auroc=sm.AUROC(classes=spam), ap=sm.AveragePrecision(classes=spam))
    # the null at row 3 comes first (the sampler, dropping nulls, named the label at a shifted index)
    with pytest.raises(ValueError, match=r"^nulls: column 'y' is null \(or NaN\) at row 3 of \S*part-0\.parquet"):
        evaluate_parquet(str(tmp_path), metrics, label="y", score="p")
    labels[[3, 5, 7]] = "ham"
    pq.write_table(pa.table({"y": labels, "p": df.p.to_numpy()}), tmp_path / "part-0.parquet", row_group_size=300)
    with pytest.raises(ValueError, match=r"^label: column 'y' of the Parquet file '\S*part-0\.parquet' from row 300: "
                                         r"y_true: unknown label 'eggs' at index 110 \(classes"):  # its row 410
        evaluate_parquet(str(tmp_path), metrics, label="y", score="p")
    with pytest.raises(ValueError, match=r"y_true: unknown label 'eggs' at index 410"):  # one process
        metrics.copy().update(labels, df.p.to_numpy())


def test_decimal_columns_take_the_ranges(monkeypatch: pytest.MonkeyPatch) -> None:
    df = _frame()
    dec = pd.DataFrame({"y": _decimals(df.y), "p": _decimals(df.p), "w": _decimals(df.w), "g": df.g})
    pieces = [dec.iloc[:0], dec.iloc[:350], dec.iloc[350:]]
    _no_gather(monkeypatch)
    blocks = cases.spy(monkeypatch, ray_blocks, "evaluate_blocks")
    keyed = cases.spy(monkeypatch, ray_keyed, "evaluate_keyed")
    for ds in (ray.data.from_pandas(pieces), ray.data.from_arrow([pa.Table.from_pandas(p) for p in pieces])):
        assert evaluate(ds, _set(), label="y", score="p") == _one(df)  # bit for bit
        cases.assert_same(evaluate(ds, _set(), label="y", score="p", weight="w"), _one(df, "w"))
        got, want = evaluate(ds, _set(), label="y", score="p", weight="w", by="g"), _one(df, "w", "g")
        assert got.keys() == want.keys()
        for key in want:
            cases.assert_same(got[key], want[key])
    assert blocks == ["evaluate_blocks"] * 4 and keyed == ["evaluate_keyed"] * 2


def test_bad_values_are_named_by_block_label_first() -> None:
    df = _frame(600)
    dec = pd.DataFrame({"y": _decimals(df.y), "p": _decimals(df.p), "w": _decimals(df.w)})
    dec.loc[450, "p"] = "abc"  # row 150 of Ray block 1
    ds = ray.data.from_pandas([dec.iloc[:300], dec.iloc[300:]])
    for weight in (None, "w"):
        with pytest.raises(ValueError, match=r"^score: column 'p' of Ray block 1: expected numbers, booleans or "
                                             r"Decimals that float64 can hold; first invalid value 'abc' at row 150$"):
            evaluate(ds, _set(), label="y", score="p", weight=weight)
    dec.loc[460, "y"] = decimal.Decimal(2)  # a bad label too, after it: one update names y_true first
    ds = ray.data.from_pandas([dec.iloc[:300], dec.iloc[300:]])
    for weight in (None, "w"):
        with pytest.raises(ValueError, match=r"^label: column 'y' of Ray block 1: y_true: labels must be 0 or 1; "
                                             r"first invalid value 2(\.0)? at index 160$"):
            evaluate(ds, _set(), label="y", score="p", weight=weight)
    bad = df.copy()
    bad.loc[[20, 470], "y"] = 2
    with pytest.raises(ValueError, match=r"^label: column 'y' of Ray block 0: y_true: .* 2 at index 20$"):
        evaluate(ray.data.from_pandas([bad.iloc[:300], bad.iloc[300:]]), _set(), label="y", score="p")
