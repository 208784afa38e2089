"""Issue #32 (review): a value ``update`` refuses is named alike on every route of an engine -- the
state path, the score ranges, the weighted / partial ranges (their twin's own ``update``), the
keyed ranges: the engine argument, its column, the partition (or Parquet file and first row) and
then one process's words with the first offending value and its index in that partition
(``_engines/messages.located``). Before, only a label outside ``classes=`` on the score and keyed
ranges was named so; the weighted routes and every other bad value gave one process's message
alone, its index relative to a partition nobody named."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("dask.dataframe")

import dask  # noqa: E402
import engine_cases as cases  # noqa: E402

import streammetrics as sm  # noqa: E402
import streammetrics.dask as SD  # noqa: E402
from streammetrics._engines.messages import located, located_message  # noqa: E402
from streammetrics.dask import evaluate, evaluate_parquet  # noqa: E402

CUTS = [300, 600]  # row 650 is row 50 of Dask partition 2
SPAM = list(cases.SPAM)
WEIGHT_RULE = "weights must be finite, >= 0, and 0 or in [2**-128, 2**128]"


def _frame() -> pd.DataFrame:
    df = cases.labelled_frame(900, seed=4)
    df["y"] = (df.yb == "spam").astype(np.int64)
    df["g"] = np.arange(900) % 3
    return df


#: (route, metrics, keywords): each route of ``dask.evaluate`` for a binary label column
ROUTES: list[tuple[str, Any, dict[str, Any]]] = [
    ("state path", lambda **k: sm.MetricSet(a=sm.AUROC(**k), roc=sm.ROCCurve(**k)), {}),
    ("score ranges", lambda **k: sm.MetricSet(a=sm.AUROC(**k), f1=sm.F1(**k)), {}),
    ("weighted ranges", lambda **k: sm.MetricSet(a=sm.AUROC(**k), f1=sm.F1(**k)), {"weight": "w"}),
    ("partial ranges", lambda **k: sm.MetricSet(a=sm.AUROC(max_fpr=0.4, **k)), {}),
    ("keyed ranges", lambda **k: sm.MetricSet(a=sm.AUROC(**k), ap=sm.AveragePrecision(**k)), {"by": "g"}),
]


def _no_gather(*args: Any, **kwargs: Any) -> Any:
    raise AssertionError("the state path (a gather) was taken")


def _refused(df: pd.DataFrame, metrics: Any, route: str = "state path", **kwargs: Any) -> str:
    with dask.config.set(scheduler="synchronous"), pytest.MonkeyPatch.context() as mp, \
            pytest.raises(ValueError) as err:
        if route != "state path":
            mp.setattr(SD, "_partition_task", _no_gather)
        kwargs.setdefault("score", "p")
        evaluate(cases.delayed_partitions(df, CUTS), metrics, **kwargs)
    return str(err.value)


@pytest.mark.parametrize(("route", "make", "kwargs"), ROUTES, ids=[r[0] for r in ROUTES])
def test_a_bad_value_names_the_column_and_the_partition_on_every_route(route: str, make: Any,
                                                                       kwargs: dict[str, Any]) -> None:
    df = _frame()
    bad = df.copy()
    bad.loc[650, "y"] = 2
    assert _refused(bad, make(), route, label="y", **kwargs) == (
        "label: column 'y' of Dask partition 2: y_true: labels must be 0 or 1; first invalid value 2 at index 50")
    heavy = df.copy()
    heavy.loc[660, "w"] = -1.0
    assert _refused(heavy, make(), route, label="y", **{**kwargs, "weight": "w"}) == (
        f"weight: column 'w' of Dask partition 2: sample_weight: {WEIGHT_RULE} (bounds that keep every sum "
        "finite; rescaling all weights by one factor changes no metric); first invalid value -1.0 at index 60")
    if route == "keyed ranges":
        return  # string labels with by= stay on the state path (Sliced reads labels as numbers)
    odd = df.copy()
    odd.loc[640, "yb"] = "eggs"
    assert _refused(odd, make(classes=SPAM), route, label="yb", **kwargs) == (
        "label: column 'yb' of Dask partition 2: y_true: unknown label 'eggs' at index 40 "
        "(classes: ['ham', 'spam'])")


def test_multiclass_keyed_ranges_name_the_label_column_and_the_partition() -> None:
    bad = _frame()
    bad["yc"] = np.where(bad.yc == "cat", 0, np.where(bad.yc == "dog", 1, 2))
    bad.loc[350, "yc"] = 7
    metrics = sm.MetricSet(a=sm.AUROC(num_classes=3), ap=sm.AveragePrecision(num_classes=3))
    assert _refused(bad, metrics, "keyed ranges", label="yc", score=["s0", "s1", "s2"]) == ("label: column 'yc' of Dask partition 1: y_true: class labels must be integers "
                              "in [0, 3); first invalid value 7 at index 50")


@pytest.mark.parametrize("weight", [None, "w"])
def test_parquet_names_the_file_and_the_first_row(tmp_path: Path, weight: str | None) -> None:
    df = _frame()
    df.loc[650, "y"] = 2
    for i, (a, b) in enumerate([(0, 300), (300, 900)]):
        df.iloc[a:b].to_parquet(tmp_path / f"part-{i}.parquet", index=False)
    with dask.config.set(scheduler="synchronous"), pytest.raises(ValueError) as err:
        evaluate_parquet(str(tmp_path), sm.MetricSet(a=sm.AUROC(), f1=sm.F1()), label="y", score="p", weight=weight)
    text = str(err.value)
    # every route names the file as "the Parquet file '...'" (the weighted route named the bare path)
    assert re.match(r"^label: column 'y' of the Parquet file '\S*part-1\.parquet'( from row 0)?: ", text), text
    assert text.endswith("y_true: labels must be 0 or 1; first invalid value 2 at index 350"), text


def test_located_leaves_other_errors_alone() -> None:
    fed = {"label": "y", "score": ["s0", "s1"], "weight": None, "by": ["k0", "k1"]}
    assert located_message("y_true: bad", fed, "Spark partition 3") == "label: column 'y' of Spark partition 3: y_true: bad"
    assert located_message("y_score: bad", fed) == "score: columns ['s0', 's1']: y_score: bad"
    assert located_message("slices['k1']: bad", fed) == "by: columns ['k0', 'k1']: slices['k1']: bad"
    for message in ("sample_weight: no weight column", "label: column 'y' of x: y_true: bad", "nulls: x", "oops"):
        assert located_message(message, fed, "x") == message  # nothing fed it, already named, not a value's
    with pytest.raises(ValueError, match=r"^label: column 'y' of a Ray block from row 10: y_true: bad$"), \
            located(fed, "a Ray block", 10):
        raise ValueError("y_true: bad")

    class Refused(ValueError):
        pass

    with pytest.raises(Refused, match=r"^y_true: bad$"), located(fed, "x"):  # a subclass: unchanged
        raise Refused("y_true: bad")
    with pytest.raises(TypeError), located(fed, "x"):
        raise TypeError("y_true: bad")
