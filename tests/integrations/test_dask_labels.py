"""Issue #32 item 2: exact AUROC / AP sets whose labels are not plain numbers -- ``pos_label=``
(binary strings "spam" / "ham", or numbers 3 / 7), ``classes=`` (multiclass string classes),
label columns of strings, pandas categoricals and pyarrow strings -- take Dask's range, weighted
and keyed routes instead of the gather: each partition task maps its labels with the ranked
members' own codec (:mod:`streammetrics._engines.label_codes`). Values: one process's (bit for
bit on the unweighted binary range route, within 1e-12 elsewhere); a refused label names the
column, the value and the partition, and nothing is computed."""

from __future__ import annotations

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
from streammetrics._engines import label_codes, parquet_reads  # noqa: E402
from streammetrics.dask import evaluate, evaluate_parquet  # noqa: E402

KINDS = ("object", "category", "pyarrow")
CUTS = [0, 170, 170, 555, 901]  # an empty partition first and one in the middle


def _no_gather(*_: Any, **__: Any) -> Any:
    raise AssertionError("the state path (gather) ran")


def _run(frame: Any, metrics: Any, ranges: int = 3, **kwargs: Any) -> Any:
    with pytest.MonkeyPatch.context() as mp, dask.config.set(scheduler="synchronous"):
        mp.setattr(RC, "range_count", lambda: ranges)
        mp.setattr(SD, "_partition_task", _no_gather)
        return evaluate(frame, metrics, **kwargs)


def _one(metrics: sm.MetricSet, df: pd.DataFrame, label: str, score: Any, weight: str | None = None,
         by: str | None = None) -> Any:
    y = df[label]
    s = df[score].to_numpy() if isinstance(score, str) else df[list(score)].to_numpy()
    w = None if weight is None else df[weight].to_numpy()
    if by is not None:
        return sm.Sliced(metrics.copy()).update(y.to_numpy(), s, sample_weight=w,
                                                slices=df[by].to_numpy()).compute()
    return metrics.copy().update(y, s, sample_weight=w).compute()


def _bits(got: Any, want: Any) -> None:
    assert got.keys() == want.keys()
    for k in want:
        assert float(got[k]) == float(want[k]) or (np.isnan(got[k]) and np.isnan(want[k])), (k, got, want)


@pytest.mark.parametrize("kind", KINDS)
def test_pos_label_binary_strings_take_the_range_routes(kind: str) -> None:
    df = cases.labelled_frame(kind=kind)
    frame = cases.delayed_partitions(df, CUTS)
    assert str(frame.dtypes["yb"]) != "int64"
    # unweighted: the range route, bit for bit (AUROC, AP; F1 travels as its state)
    _bits(_run(frame, cases.spam_set(), label="yb", score="p"), _one(cases.spam_set(), df, "yb", "p"))
    # weighted, and a partial area: the ranked engine's route, within 1e-12
    for metrics in (cases.spam_set(), cases.spam_set(max_fpr=0.3)):
        got = _run(frame, metrics, label="yb", score="p", weight="w")
        cases.assert_same(got, _one(metrics, df, "yb", "p", "w"))
    # classes= [negative, positive] reads the same labels
    both = sm.MetricSet(a=sm.AUROC(classes=list(cases.SPAM)), ap=sm.AveragePrecision(classes=list(cases.SPAM)))
    _bits(_run(frame, both, ranges=1, label="yb", score="p"), _one(both, df, "yb", "p"))


@pytest.mark.parametrize("kind", KINDS)
def test_classes_multiclass_strings_take_the_keyed_route(kind: str) -> None:
    df = cases.labelled_frame(kind=kind, seed=11)
    frame = cases.delayed_partitions(df, CUTS)
    scores = ["s0", "s1", "s2"]
    for weight in (None, "w"):
        got = _run(frame, cases.animal_set(), label="yc", score=scores, weight=weight)
        cases.assert_same(got, _one(cases.animal_set(), df, "yc", scores, weight))


def test_numeric_pos_label_with_slices_and_nulls_skip() -> None:
    """Labels 3 / 7 with ``pos_label=7`` by slices (``Sliced`` reads numbers), rows with a null
    label or score skipped as the state path skips them."""
    df = cases.labelled_frame(seed=5).astype({"yn": "Int64", "p": "Float64"})
    df.loc[[3, 400, 401], "yn"] = pd.NA
    df.loc[[10, 700], "p"] = pd.NA
    frame = cases.delayed_partitions(df, CUTS)
    metrics = sm.MetricSet(a=sm.AUROC(pos_label=7), ap=sm.AveragePrecision(pos_label=7))
    kept = df.dropna(subset=["yn", "p", "g"]).astype({"yn": "int64", "p": "float64"})
    for weight in (None, "w"):
        got = _run(frame, metrics, label="yn", score="p", weight=weight, by="g", nulls="skip")
        cases.assert_same(got, _one(metrics, kept, "yn", "p", weight, by="g"))
    got = _run(frame, metrics, label="yn", score="p", nulls="skip")
    cases.assert_same(got, _one(metrics, kept, "yn", "p"))


@pytest.mark.parametrize("kind", KINDS)
def test_a_label_outside_classes_is_named_and_nothing_computed(kind: str) -> None:
    df = cases.labelled_frame(kind="object", seed=2)
    df.loc[600, "yc"] = "yak"
    df.loc[650, "yb"] = "eggs"
    if kind != "object":
        dtype = "category" if kind == "category" else "string[pyarrow]"
        df = df.astype({"yb": dtype, "yc": dtype})
    frame = cases.delayed_partitions(df, CUTS)
    with pytest.raises(ValueError, match=r"^label: column 'yc' of Dask partition 4: y_true: unknown "
                                         r"label 'yak' at index 45 \(classes: \['cat', 'dog', 'eel'\]\)"):
        _run(frame, cases.animal_set(), label="yc", score=["s0", "s1", "s2"])
    binary = sm.MetricSet(a=sm.AUROC(classes=list(cases.SPAM)), ap=sm.AveragePrecision(classes=list(cases.SPAM)))
    for weight in (None, "w"):  # the weighted route's twin maps (and refuses) with the members' codec
        with pytest.raises(ValueError, match=r"unknown label 'eggs' at index \d+ \(classes: \['ham', 'spam'\]\)"):
            _run(frame, binary, label="yb", score="p", weight=weight)
    with pytest.raises(ValueError, match=r"^label: column 'yb' of Dask partition 4: y_true: a binary task "
                                         r"\(pos_label='spam'\) takes at most two distinct labels, got 3"):
        _run(frame, cases.spam_set(), label="yb", score="p")


def test_parquet_reads_string_labels_in_the_tasks(tmp_path: Any) -> None:
    df = cases.labelled_frame(seed=8)
    for i, (a, b) in enumerate([(0, 500), (500, 900), (900, len(df))]):
        df.iloc[a:b].to_parquet(tmp_path / f"part-{i}.parquet")
    calls: list[Any] = []
    real = parquet_reads.parquet_batches

    def spy(*args: Any, **kwargs: Any) -> Any:
        calls.append(args[0])
        return real(*args, **kwargs)

    with pytest.MonkeyPatch.context() as mp, dask.config.set(scheduler="synchronous"):
        mp.setattr(parquet_reads, "parquet_batches", spy)
        mp.setattr(SD, "_partition_task", _no_gather)
        got = evaluate_parquet(str(tmp_path / "*.parquet"), cases.spam_set(), label="yb", score="p")
        assert calls  # the tasks' own pyarrow reader
        _bits(got, _one(cases.spam_set(), df, "yb", "p"))
        bad = df.copy()
        bad.loc[950, "yb"] = "eggs"
        bad.iloc[900:].to_parquet(tmp_path / "part-2.parquet")
        metrics = sm.MetricSet(a=sm.AUROC(classes=list(cases.SPAM)))
        with pytest.raises(ValueError, match=r"^label: column 'yb' of the Parquet file '.*part-2.parquet' "
                                             r"from row 0: y_true: unknown label 'eggs' at index 50"):
            evaluate_parquet(str(tmp_path / "*.parquet"), metrics, label="yb", score="p")


def test_label_codes_rules() -> None:
    y = np.array(["ham", "spam", "spam"], dtype=object)
    codec = label_codes.ranked_codec({"a": {"class": "AUROC", "config": sm.AUROC(pos_label="spam")._config()}})
    assert label_codes.coded(y, codec).tolist() == [0, 1, 1]
    assert label_codes.coded(y, None) is y  # no codec: the labels as they are
    assert label_codes.ranked_codec({"a": {"class": "AUROC", "config": sm.AUROC()._config()}}) is None
    assert label_codes.label_column(np.dtype(np.int8), False)
    assert not label_codes.label_column(np.dtype(object), False)  # strings need a codec
    for dtype in (np.dtype(object), pd.CategoricalDtype(["a"]), pd.StringDtype(), "string[pyarrow]"):
        assert label_codes.label_column(pd.Series([], dtype=dtype).dtype, True)
    assert not label_codes.label_column(np.dtype("datetime64[ns]"), True)
    with pytest.raises(ValueError, match=r"^metrics: the members map labels differently"):
        label_codes.label_options([sm.AUROC(pos_label="a")._config(), sm.AUROC(pos_label="b")._config()])


def test_evaluate_ranked_maps_the_labels_too() -> None:
    """The public ``evaluate_ranked`` builds its twin with the members' ``pos_label=`` /
    ``classes=`` (the twin's own codec maps each chunk); curves too."""
    from streammetrics.dask import evaluate_ranked

    df = cases.labelled_frame(seed=9)
    frame = cases.delayed_partitions(df, CUTS)
    metrics = {"a": sm.AUROC(pos_label="spam"), "ap": sm.AveragePrecision(pos_label="spam"),
               "roc": sm.ROCCurve(pos_label="spam")}
    with dask.config.set(scheduler="synchronous"):
        got = evaluate_ranked(frame, metrics, label="yb", score="p", weight="w", ranges=3)
    for name, m in metrics.items():
        want = m.copy().update(df.yb, df.p, sample_weight=df.w).compute()
        if name == "roc":
            for a, b in zip(got[name], want, strict=True):
                np.testing.assert_allclose(a, b, rtol=1e-12)
        else:
            cases.assert_same(got[name], want)
    with pytest.raises(ValueError, match=r"^metrics: the members map labels differently"):
        evaluate_ranked(frame, {"a": sm.AUROC(pos_label="spam"), "b": sm.AUROC(pos_label="ham")},
                        label="yb", score="p")


def test_multilabel_classes_name_the_label_columns() -> None:
    """Multilabel ``classes=`` name the L label columns (numbers, not mapped): the keyed route."""
    df = cases.labelled_frame(seed=12)
    names = ["l0", "l1", "l2"]
    for i, c in enumerate(names):
        df[c] = (df[f"s{i}"] > 0.5).astype(np.int64)
    frame = cases.delayed_partitions(df, CUTS)
    metrics = sm.MetricSet(a=sm.AUROC(classes=names, multilabel=True),
                           ap=sm.AveragePrecision(classes=names, multilabel=True, average="micro"))
    got = _run(frame, metrics, label=names, score=["s0", "s1", "s2"], weight="w")
    want = metrics.copy().update(df[names].to_numpy(), df[["s0", "s1", "s2"]].to_numpy(),
                                 sample_weight=df.w.to_numpy()).compute()
    cases.assert_same(got, want)
