"""streammetrics.ray over column types that gathered every score (issue #32), over a real local
Ray: Arrow dictionary columns (pandas categoricals in the blocks, or written to Parquet) as labels
and ``by=`` keys, score vectors as Arrow lists with ``by=`` / ``classes``, string labels with
``by=`` (refused by the keyed tasks as ``Sliced`` refuses them). One process's values (bit for bit
on the unweighted binary routes, within 1e-12 elsewhere). Few cases: Ray is slow to start."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import pytest

ray = pytest.importorskip("ray")
pytest.importorskip("ray.data")

import engine_cases as cases  # noqa: E402
import pyarrow as pa  # noqa: E402

import streammetrics as sm  # noqa: E402
import streammetrics._engines.ray_keyed as RK  # noqa: E402
from streammetrics._engines import ray_blocks, ray_ranges  # noqa: E402
from streammetrics.ray import evaluate, evaluate_parquet  # noqa: E402

local_ray = pytest.fixture(scope="module", autouse=True)(cases.local_ray)


_no_gather = cases.ray_no_gather


def _sliced(metrics: sm.MetricSet, y: Any, s: Any, g: Any, w: Any = None) -> Any:
    return sm.Sliced(metrics.copy()).update(y, s, sample_weight=w, slices=g).compute()


def _same_sliced(got: Any, want: Any) -> None:
    assert got.keys() == want.keys()
    for key in want:
        cases.assert_same(got[key], want[key])


def test_dictionary_columns_take_the_ranges(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    df = cases.labelled_frame(n=1500, seed=6, kind="category")
    df["gc"] = pd.Categorical(np.array(["north", "south", "east"], dtype=object)[df.g % 3])
    df["yk"] = pd.Categorical((df.yb == "spam").astype(np.int64))
    pieces = [df.iloc[:0], df.iloc[:400], df.iloc[400:1100], df.iloc[1100:]]
    # Arrow blocks of dictionary columns (pa.DictionaryArray), and pandas blocks of categoricals
    ds = ray.data.from_arrow([pa.Table.from_pandas(p, preserve_index=False) for p in pieces])
    assert pa.types.is_dictionary(ds.schema().base_schema.field("yb").type)
    _no_gather(monkeypatch)
    blocks = cases.spy(monkeypatch, ray_blocks, "evaluate_blocks")
    keyed = cases.spy(monkeypatch, RK, "evaluate_keyed")
    files = cases.spy(monkeypatch, ray_ranges, "evaluate_files")
    want = cases.spam_set().update(df.yb.astype(object), df.p).compute()
    assert evaluate(ds, cases.spam_set(), label="yb", score="p") == want  # bit for bit
    assert evaluate(ray.data.from_pandas(pieces), cases.spam_set(), label="yb", score="p") == want
    assert blocks == ["evaluate_blocks"] * 2
    metrics = sm.MetricSet(auroc=sm.AUROC(), ap=sm.AveragePrecision(), f1=sm.F1())
    y, g = df.yk.to_numpy().astype(np.int64), df.gc.astype(str).to_numpy()
    for weight in (None, "w"):
        got = evaluate(ds, metrics, label="yk", score="p", weight=weight, by="gc")
        _same_sliced(got, _sliced(metrics, y, df.p.to_numpy(), g, None if weight is None else df.w.to_numpy()))
    scores = ["s0", "s1", "s2"]
    with pytest.raises(ValueError, match="y_true: expected numbers"):  # one process: strings with slices
        _sliced(cases.animal_set(), df.yc.astype(object).to_numpy(), df[scores].to_numpy(), g)
    with pytest.raises(ValueError, match=r"^label: column 'yc' of Ray block [123]: expected numbers, booleans "
                                         r"or Decimals that float64 can hold; first invalid value '\w+' at row 0$"):
        evaluate(ds, cases.animal_set(), label="yc", score=scores, by="gc")  # the keyed tasks refuse them
    assert keyed == ["evaluate_keyed"] * 3
    for i, (a, b) in enumerate([(0, 0), (0, 700), (700, 1500)]):  # an empty file first
        df.iloc[a:b].to_parquet(tmp_path / f"part-{i}.parquet", row_group_size=200)
    assert evaluate_parquet(str(tmp_path), cases.spam_set(), label="yb", score="p") == want
    assert files == ["evaluate_files"]


def test_string_labels_with_by_are_refused_by_the_keyed_tasks(monkeypatch: pytest.MonkeyPatch) -> None:
    """``Sliced`` reads its labels as numbers: string (or categorical string) labels with ``by=``
    are a ValueError naming the column, the block and the value, before any gather."""
    _no_gather(monkeypatch)
    for kind in ("object", "category"):
        df = cases.labelled_frame(n=600, seed=2, kind=kind)
        ds = ray.data.from_pandas([df.iloc[:300], df.iloc[300:]])
        with pytest.raises(ValueError, match=r"^label: column 'yb' of Ray block [01]: expected numbers, "
                                             r"booleans or Decimals that float64 can hold; first invalid "
                                             r"value '(ham|spam)' at row 0$"):
            evaluate(ds, cases.spam_set(), label="yb", score="p", by="g")


def test_vector_score_lists_take_the_keyed_ranges(monkeypatch: pytest.MonkeyPatch) -> None:
    """A score column of lists (Arrow ``list<double>``): binary members with ``by=`` take its
    ``positive_index`` element, multiclass ones the whole vector, by the keyed ranges."""
    rng = np.random.default_rng(12)
    n = 1200
    c = rng.integers(0, 3, n)
    s = np.round(rng.random((n, 3)) + 0.4 * np.eye(3)[c], 1)  # ties
    y, g, w = (c == 2).astype(np.int64), rng.integers(0, 3, n), np.round(rng.random(n) * 2, 1)
    table = pa.table({"y": y, "c": c, "g": g, "w": w, "v": pa.array(list(s), type=pa.list_(pa.float64()))})
    ds = ray.data.from_arrow([table.slice(0, 0), table.slice(0, 500), table.slice(500)])
    _no_gather(monkeypatch)
    keyed = cases.spy(monkeypatch, RK, "evaluate_keyed")
    binary = sm.MetricSet(auroc=sm.AUROC(), ap=sm.AveragePrecision())
    for weight in (None, "w"):
        got = evaluate(ds, binary, label="y", score="v", by="g", positive_index=2, weight=weight)
        _same_sliced(got, _sliced(binary, y, s[:, 2], g, None if weight is None else w))
    multi = sm.MetricSet(auroc=sm.AUROC(num_classes=3), ap=sm.AveragePrecision(num_classes=3, average="micro"))
    got = evaluate(ds, multi, label="c", score="v", weight="w")
    cases.assert_same(got, multi.copy().update(c, s, sample_weight=w).compute())
    assert keyed == ["evaluate_keyed"] * 3
