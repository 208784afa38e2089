"""Issue #32: column types that gathered every score on Dask take the range routes instead.

Object columns of ``Decimal`` s (labels, scores, weights; Dask makes them string columns unless
``dataframe.convert-string`` is off) are read as float64 exactly as the state path reads them
(:func:`streammetrics._engines.plan.column`), on the binary, weighted and keyed routes; string
labels with ``by=`` are refused by the keyed tasks as ``Sliced`` refuses them (it reads labels as
numbers, whatever ``classes=`` / ``pos_label=`` say), naming the column, partition and value; a
Parquet label column of a pandas categorical (dictionary-encoded) takes ``evaluate_parquet``'s
own reader. Values: one process's (bit for bit on the unweighted binary route and for the keyed
unweighted AUROC, within 1e-12 elsewhere)."""

from __future__ import annotations

import decimal
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("dask.dataframe")

import dask  # noqa: E402
import engine_cases as cases  # noqa: E402
import pandas as pd  # noqa: E402

import streammetrics as sm  # noqa: E402
import streammetrics._engines.range_counts as RC  # noqa: E402
import streammetrics.dask as SD  # noqa: E402
from streammetrics._engines import parquet_reads  # noqa: E402
from streammetrics.dask import evaluate, evaluate_parquet  # noqa: E402

CUTS = [0, 150, 150, 420, 700]  # an empty partition first and one in the middle


def _no_gather(*_: Any, **__: Any) -> Any:
    raise AssertionError("the state path (gather) ran")


def _run(call: Any, data: Any, metrics: Any, convert: bool = True, **kwargs: Any) -> Any:
    with pytest.MonkeyPatch.context() as mp, dask.config.set(
            {"scheduler": "synchronous", "dataframe.convert-string": convert}):
        mp.setattr(RC, "range_count", lambda: 3)
        mp.setattr(SD, "_partition_task", _no_gather)
        return call(data, metrics, **kwargs)


def _decimals(a: np.ndarray) -> pd.Series:
    return pd.Series([decimal.Decimal(repr(float(v))) for v in a], dtype=object)


def _frame(n: int = 900, seed: int = 7) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Decimal labels, tied scores and weights (some 0), an int slice key; and the float twin."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    s = np.round(rng.random(n) * 0.7 + 0.3 * y, 2)
    w = np.round(rng.random(n) * 3, 1)
    g = rng.integers(0, 4, n)
    floats = pd.DataFrame({"y": y.astype(np.float64), "s": s, "w": w, "g": g})
    return pd.DataFrame({"y": _decimals(y), "s": _decimals(s), "w": _decimals(w), "g": g}), floats


def _set() -> sm.MetricSet:
    return sm.MetricSet(auroc=sm.AUROC(), ap=sm.AveragePrecision(), f1=sm.F1())


def _one(df: pd.DataFrame, weight: bool, by: bool) -> Any:
    w = df.w.to_numpy() if weight else None
    if by:
        return sm.Sliced(_set()).update(df.y.to_numpy(), df.s.to_numpy(), sample_weight=w,
                                        slices=df.g.to_numpy()).compute()
    return _set().update(df.y.to_numpy(), df.s.to_numpy(), sample_weight=w).compute()


def _bits(got: Any, want: Any) -> None:
    assert got.keys() == want.keys()
    for k in want:
        assert float(got[k]) == float(want[k]), (k, got, want)


@pytest.mark.parametrize("convert", [False, True])
def test_decimal_columns_take_the_range_routes(convert: bool) -> None:
    dec, floats = _frame()
    frame = cases.delayed_partitions(dec, CUTS)
    with dask.config.set({"dataframe.convert-string": convert}):
        kinds = {str(t) for t in cases.delayed_partitions(dec, CUTS)[["y", "s", "w"]].dtypes}
    assert kinds == ({"string"} if convert else {"object"})
    # unweighted binary: the range route, bit for bit with the state path's float64 reading
    _bits(_run(evaluate, frame, _set(), convert, label="y", score="s"), _one(floats, False, False))
    # weighted: the ranked engine's route; by= slices (weighted or not): the keyed ranges
    cases.assert_same(_run(evaluate, frame, _set(), convert, label="y", score="s", weight="w"),
                      _one(floats, True, False))
    for weight in (None, "w"):
        got = _run(evaluate, frame, _set(), convert, label="y", score="s", weight=weight, by="g")
        want = _one(floats, weight is not None, True)
        assert got.keys() == want.keys()
        for key in want:
            cases.assert_same(got[key], want[key])
            if weight is None:  # exact integer pair counts: one process's AUROC bit for bit
                assert got[key]["auroc"] == want[key]["auroc"]


@pytest.mark.parametrize("convert", [False, True])
def test_a_value_float64_cannot_hold_is_named(convert: bool) -> None:
    dec, _ = _frame(seed=8)
    dec.loc[500, "s"] = "abc"  # partition 4 (rows 420..699), its row 80
    dec.loc[510, "w"] = "heavy"
    frame = cases.delayed_partitions(dec, CUTS)
    for by in (None, "g"):
        with pytest.raises(ValueError, match=r"^score: column 's' of Dask partition 4: expected numbers, "
                                             r"booleans or Decimals that float64 can hold; first invalid "
                                             r"value 'abc' at row 80$"):
            _run(evaluate, frame, _set(), convert, label="y", score="s", by=by)
    with pytest.raises(ValueError, match=r"^score: column 's' .* value 'abc' at row 80$"):  # y, s, w: update's order
        _run(evaluate, frame, _set(), convert, label="y", score="s", weight="w", by="g")
    dec.loc[500, "s"] = decimal.Decimal("0.5")
    with pytest.raises(ValueError, match=r"^weight: column 'w' of Dask partition 4: .* value 'heavy' at row 90$"):
        _run(evaluate, cases.delayed_partitions(dec, CUTS), _set(), convert, label="y", score="s", weight="w",
             by="g")
    # a Decimal NaN is a null, on the state path and here alike: refused naming the row, or skipped
    dec, floats = _frame(seed=9)
    dec.loc[300, "s"] = decimal.Decimal("NaN")
    frame = cases.delayed_partitions(dec, CUTS)
    with pytest.raises(ValueError, match=r"^nulls: column 's' is null at row 150 of Dask partition 3"):
        _run(evaluate, frame, _set(), convert, label="y", score="s")
    with pytest.warns(Warning, match="skipped 1 row"):
        got = _run(evaluate, frame, _set(), convert, label="y", score="s", nulls="skip")
    _bits(got, _one(floats.drop(index=300), False, False))


@pytest.mark.parametrize("convert", [False, True])
def test_a_bad_label_is_named_before_a_bad_score(convert: bool) -> None:
    """One ``update`` checks ``y_true`` before ``y_score``: a partition bad in both names the label
    (the binary range route read the scores first and named the score)."""
    dec, _ = _frame(seed=8)
    dec.loc[500, "s"] = "abc"  # partition 4, its row 80; a label 2 at its row 85
    dec.loc[505, "y"] = decimal.Decimal(2)
    frame = cases.delayed_partitions(dec, CUTS)
    with pytest.raises(ValueError, match=r"^label: column 'y' of Dask partition 4: y_true: labels must be 0 or 1; "
                                         r"first invalid value 2(\.0)? at index 85$"):
        _run(evaluate, frame, _set(), convert, label="y", score="s")
    with pytest.raises(ValueError, match=r"^y_true: labels must be 0 or 1"):  # one process, on the float twin
        _set().update(np.where(np.arange(900) == 505, 2.0, 0.0), np.where(np.arange(900) == 500, np.nan, 0.5))
    dec.loc[505, "y"] = decimal.Decimal(1)  # the score alone: still named, after the labels passed
    with pytest.raises(ValueError, match=r"^score: column 's' of Dask partition 4: .* value 'abc' at row 80$"):
        _run(evaluate, cases.delayed_partitions(dec, CUTS), _set(), convert, label="y", score="s")


@pytest.mark.parametrize("by", [None, "g"])
def test_the_keyed_ranges_name_a_bad_label_before_a_bad_score(by: str | None) -> None:
    """Multiclass (keyed ranges, with or without ``by=``): a partition bad in its labels and its
    scores names ``y_true`` (the keyed tasks read the scores first without ``by=``)."""
    rng = np.random.default_rng(3)
    c, s = rng.integers(0, 3, 900), np.round(rng.random((900, 3)), 2)
    dec = pd.DataFrame({"y": _decimals(c), "s0": _decimals(s[:, 0]), "s1": _decimals(s[:, 1]),
                        "s2": _decimals(s[:, 2]), "g": rng.integers(0, 3, 900)})
    dec.loc[500, "s1"] = "abc"
    dec.loc[505, "y"] = decimal.Decimal(7)
    metrics = sm.MetricSet(a=sm.AUROC(num_classes=3), ap=sm.AveragePrecision(num_classes=3))
    scores = ["s0", "s1", "s2"]
    with pytest.raises(ValueError, match=r"^label: column 'y' of Dask partition 4: y_true: class labels must be "
                                         r"integers in \[0, 3\); first invalid value 7(\.0)? at index 85$"):
        _run(evaluate, cases.delayed_partitions(dec, CUTS), metrics, label="y", score=scores, by=by)
    dec.loc[505, "y"] = decimal.Decimal(1)
    with pytest.raises(ValueError, match=r"^score: columns \['s0', 's1', 's2'\] of Dask partition 4: .* 'abc' at row 80$"):
        _run(evaluate, cases.delayed_partitions(dec, CUTS), metrics, label="y", score=scores, by=by)


@pytest.mark.parametrize("kind", ["object", "category", "pyarrow"])
def test_string_labels_with_by_are_refused_as_sliced_refuses_them(kind: str) -> None:
    df = cases.labelled_frame(kind=kind, n=600)
    with pytest.raises(ValueError, match="y_true: expected numbers"):  # one process refuses them
        sm.Sliced(cases.spam_set()).update(df.yb, df.p.to_numpy(), slices=df.g.to_numpy())
    frame = cases.delayed_partitions(df, CUTS)
    for weight in (None, "w"):  # the keyed tasks refuse them (the first task to run): no gather
        with pytest.raises(ValueError, match=r"^label: column 'yb' of Dask partition [1-5]: expected numbers, "
                                             r"booleans or Decimals that float64 can hold; first invalid "
                                             r"value '(ham|spam)' at row 0$"):
            _run(evaluate, frame, cases.spam_set(), label="yb", score="p", weight=weight, by="g")


def test_parquet_dictionary_columns_take_the_ranges(tmp_path: Path) -> None:
    """A pandas categorical written to Parquet is a dictionary column: the string labels of
    ``pos_label=`` members go by ``evaluate_parquet``'s own reader (the tasks decode them);
    numeric categorical labels and keys with ``by=`` by the keyed ranges."""
    df = cases.labelled_frame(kind="category", n=900, seed=4)
    df["gc"] = pd.Categorical(np.array(["north", "south", "east"], dtype=object)[df.g % 3])
    df["yk"] = pd.Categorical((df.yb == "spam").astype(np.int64))
    for i, (a, b) in enumerate([(0, 0), (0, 400), (400, 900)]):  # an empty file first
        df.iloc[a:b].to_parquet(tmp_path / f"part-{i}.parquet", row_group_size=150)
    import pyarrow.parquet as pq

    assert str(pq.read_schema(tmp_path / "part-1.parquet").field("yb").type).startswith("dictionary")
    read = []

    def spy(*args: Any, **kwargs: Any) -> Any:
        read.append(1)
        return batches(*args, **kwargs)

    batches = parquet_reads.parquet_batches
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(parquet_reads, "parquet_batches", spy)
        got = _run(evaluate_parquet, str(tmp_path), cases.spam_set(), label="yb", score="p")
    assert read
    _bits(got, cases.spam_set().update(df.yb.astype(object), df.p.to_numpy()).compute())
    metrics = sm.MetricSet(auroc=sm.AUROC(), ap=sm.AveragePrecision())
    got = _run(evaluate_parquet, str(tmp_path), metrics, label="yk", score="p", weight="w", by="gc")
    want = sm.Sliced(metrics.copy()).update(df.yk.to_numpy().astype(np.int64), df.p.to_numpy(),
                                            sample_weight=df.w.to_numpy(), slices=df.gc.astype(str).to_numpy()
                                            ).compute()
    assert got.keys() == want.keys()
    for key in want:
        cases.assert_same(got[key], want[key])


def test_parquet_decimal_columns_take_the_ranges(tmp_path: Path) -> None:
    """Parquet ``decimal128`` scores and weights (pandas ``Decimal`` objects once read) go by the
    range routes of ``evaluate_parquet``'s general path, as float64."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    dec, floats = _frame(n=600, seed=12)
    table = pa.table({"y": floats.y.astype(np.int64), "g": floats.g,
                      "s": pa.array(list(dec.s), type=pa.decimal128(6, 2)),
                      "w": pa.array(list(dec.w), type=pa.decimal128(6, 1))})
    pq.write_table(table.slice(0, 250), tmp_path / "a.parquet")
    pq.write_table(table.slice(250), tmp_path / "b.parquet")
    _bits(_run(evaluate_parquet, str(tmp_path), _set(), label="y", score="s"), _one(floats, False, False))
    got = _run(evaluate_parquet, str(tmp_path), _set(), label="y", score="s", weight="w", by="g")
    want = _one(floats, True, True)
    assert got.keys() == want.keys()
    for key in want:
        cases.assert_same(got[key], want[key])
