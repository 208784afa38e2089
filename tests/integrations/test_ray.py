"""streammetrics.ray against a real local Ray: the single-process result on the same rows, for
any blocking, empty blocks included."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

ray = pytest.importorskip("ray")
pytest.importorskip("ray.data")

import engine_cases as cases  # noqa: E402

import streammetrics as sm  # noqa: E402
from streammetrics.ray import evaluate  # noqa: E402


@pytest.fixture(scope="module", autouse=True)
def local_ray():
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, logging_level="ERROR",
             configure_logging=False)
    ray.data.DataContext.get_current().enable_progress_bars = False
    yield
    ray.shutdown()


def _dataset(df: pd.DataFrame, blocks: int):
    """``blocks`` pandas blocks of uneven size, one of them empty."""
    cuts = np.linspace(0, len(df), blocks + 1).astype(int)
    parts = [df.iloc[a:b] for a, b in zip(cuts[:-1], cuts[1:], strict=True)]
    return ray.data.from_pandas([df.iloc[:0], *parts])


def test_binary_set_equals_single_process() -> None:
    df = cases.classification_frame()
    got = evaluate(_dataset(df, 4), cases.binary_set(), label="y", score="p", weight="w")
    cases.assert_same(got, cases.single_process(cases.binary_set(), df, label="y", score="p", weight="w"))


def test_multiclass_columns_and_shapes() -> None:
    df = cases.classification_frame(500, seed=3)
    scores = ["s0", "s1", "s2"]
    ref = cases.single_process(cases.multiclass_set(), df, label="c", score=scores)
    ds = _dataset(df, 3)
    cases.assert_same(evaluate(ds, cases.multiclass_set(), label="c", score=scores), ref)
    cases.assert_same(evaluate(ds, sm.AUROC(num_classes=3), label="c", score=scores), ref["auroc"])
    accs = evaluate(ds, {"acc": sm.Accuracy(num_classes=3)}, label="c", score=scores, compute=False)
    assert isinstance(accs["acc"], sm.Accuracy)
    cases.assert_same(accs["acc"].compute(), ref["acc"])


def test_no_rows() -> None:
    df = cases.classification_frame(5)
    np.testing.assert_array_equal(
        evaluate(ray.data.from_pandas(df.iloc[:0]), sm.ConfusionMatrix(), label="y", score="p"),
        np.zeros((2, 2)),
    )


def test_retrieval_rows_shuffled_by_query() -> None:
    df = cases.retrieval_frame()
    cols = dict(label="rel", score="s", query="q", doc_id="d")
    got = evaluate(_dataset(df.sample(frac=1.0, random_state=0), 5), cases.retrieval_set(), **cols)
    cases.assert_same(got, cases.single_process(cases.retrieval_set(), df, **cols))


def test_bad_arguments_are_value_errors() -> None:
    ds = ray.data.from_pandas(cases.classification_frame(10))
    with pytest.raises(ValueError, match=r"columns \['nope'\]"):
        evaluate(ds, sm.F1(), label="nope", score="p")
    with pytest.raises(ValueError, match="query"):
        evaluate(ds, sm.MAP(), label="y", score="p")


@pytest.mark.parametrize("by", ["region", ["region", "tier"]])
def test_slices_equal_sliced_in_one_process(by) -> None:
    df = cases.sliced_frame()
    cols = dict(label="y", score="p", weight="w")
    got = evaluate(_dataset(df, 5), cases.binary_set(), by=by, **cols)  # blocks in order: slices differ
    cases.assert_same(got, cases.single_process_sliced(cases.binary_set(), df, by, **cols))
    one = evaluate(_dataset(df.sample(frac=1.0, random_state=2), 3), sm.AUROC(), by=by, **cols)
    cases.assert_same(one, cases.single_process_sliced(sm.AUROC(), df, by, **cols))
    with pytest.raises(ValueError, match="by: slices take classification"):
        evaluate(ray.data.from_pandas(cases.retrieval_frame(20)), sm.MAP(), label="rel", score="s",
                 query="q", by="d")


def test_regression_equals_sklearn() -> None:
    """Issue #30: regression metrics on Ray (uneven blocks, one empty) equal scikit-learn / scipy."""
    df = cases.regression_frame()
    cases.check_regression(evaluate, _dataset(df, 4), df)


@pytest.mark.skipif(not cases.sliced_takes_regression(),
                    reason="needs Sliced of regression metrics (main's wrappers/sliced)")
def test_regression_slices_equal_sliced_in_one_process() -> None:
    cases.check_regression_sliced(
        evaluate, lambda df: _dataset(df.sort_values("region", kind="stable"), 4), cases.regression_frame())


def test_nulls_refused_or_skipped() -> None:
    """Issue #32: a null is a ValueError naming the column and the row's values (a Ray block
    has no stable position); nulls="skip" drops the rows and warns how many."""
    from streammetrics._engines.request import NullRowsSkipped

    df = cases.classification_frame(300, seed=33)
    holes = df.copy()
    holes.loc[[10, 20], "p"] = np.nan
    ds = _dataset(holes, 3)
    with pytest.raises(ValueError, match=r"nulls: column 'p' is null at row \d+ of a Ray block"):
        evaluate(ds, sm.F1(), label="y", score="p")
    with pytest.warns(NullRowsSkipped, match=r"skipped 2 row\(s\)"):
        got = evaluate(ds, cases.binary_set(), label="y", score="p", weight="w", nulls="skip")
    kept = df.drop(index=[10, 20])
    cases.assert_same(got, cases.single_process(cases.binary_set(), kept, label="y", score="p", weight="w"))


def test_as_frame_is_a_dataset_of_the_values() -> None:
    df = cases.classification_frame(300, seed=35)
    values = evaluate(_dataset(df, 2), sm.MetricSet(auroc=sm.AUROC(), f1=sm.F1()), label="y", score="p")
    table = evaluate(_dataset(df, 2), sm.MetricSet(auroc=sm.AUROC(), f1=sm.F1()), label="y", score="p",
                     as_frame=True).to_pandas()
    assert dict(zip(table.metric, table.value, strict=True)) == values
