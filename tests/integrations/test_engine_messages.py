"""The engines' error messages describe a user's argument briefly, whatever its size (issue #32
item 3: a Dask Series given as a score gave a ~405 KB ValueError listing every value): a long
list by its first items and its length, a Series by its type and name, an array by its shape.
Every message below stays under 500 characters with an argument of 10^5 - 10^6 elements, and
still names the argument and the offending value."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import streammetrics as sm
from streammetrics._engines.callbacks import as_metric_set
from streammetrics._engines.messages import BRIEF, brief, named
from streammetrics._engines.plan import numbers, partition_state
from streammetrics._engines.request import Request, make_run

HUGE = 100_000
SHORT = 500


def _message(fn: Any, *args: Any, match: str, **kwargs: Any) -> str:
    with pytest.raises(ValueError, match=match) as err:
        fn(*args, **kwargs)
    text = str(err.value)
    assert len(text) < SHORT, (len(text), text[:1000])
    return text


def test_brief_keeps_short_arguments_as_their_repr() -> None:
    for value in ("y", ["y", "p"], ("a",), {"k": 1}, 3, 2.5, None, ["c"] * 6):
        assert brief(value) == repr(value)
    assert brief(pd.Series([1.0], name="p")) == "a pandas Series named 'p'"
    assert brief(np.zeros((HUGE, 3))) == "a numpy array of shape (100000, 3) and dtype float64"
    assert brief([str(i) for i in range(HUGE)]) == "['0', '1', '2', '3', '4', '5', ... (100000 in all)]"
    assert brief("x" * HUGE).endswith("... (100000 characters)")
    assert brief(10**5000) == "an int of 16610 bits"
    assert brief(object()) == "an object"
    assert brief(_Misbehaving()).endswith("._Misbehaving")  # never raises: described by its type


class _Misbehaving:
    """Looks like a Series to its class; raises on every attribute (as a Spark ``Column``'s
    ``ndim`` gives a Column whose comparison cannot be a bool)."""

    ndim = dtype = name = None

    def __getattribute__(self, item: str) -> Any:
        if item.startswith("__"):
            return object.__getattribute__(self, item)
        raise RuntimeError(item)


nested = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=400),
    lambda inner: st.lists(inner, max_size=40) | st.tuples(inner, inner)
    | st.dictionaries(st.text(max_size=300), inner, max_size=20),
    max_leaves=400,
)


@settings(max_examples=200, deadline=None)
@given(value=nested)
def test_brief_is_bounded_for_any_nesting(value: Any) -> None:
    assert len(brief(value)) <= 3 * BRIEF


def test_one_column_or_several_are_named_as_such() -> None:
    assert named("p") == "column 'p'"
    assert named(("p0", "p1")) == "columns ['p0', 'p1']"
    scores = np.array([[0.1, 0.9], [0.5, "x"]], dtype=object)  # several score columns, one bad value
    with pytest.raises(ValueError, match=r"^score: columns \['p0', 'p1'\] of Dask partition 2: .*'x' at row 1$"):
        numbers(scores, ["p0", "p1"], "score", "Dask partition 2")
    assert numbers(np.array([0.5]), "p", "score", "Dask partition 2").dtype == np.float64


def test_make_run_messages_are_bounded() -> None:
    names = [f"column_{i}" for i in range(HUGE)]
    text = _message(make_run, sm.F1(), Request(label=names, score="p"), available=["y", "p"],
                    match=r"^columns \['column_0', 'column_1', .* \(100000 in all\)\] are not in the DataFrame "
                          r"\(has \['y', 'p'\]\)$")
    assert "column_99999" not in text
    _message(make_run, sm.F1(), Request(label="y", score="nope"), available=["y", *names],
             match=r"^columns \['nope'\] are not in the DataFrame \(has \['y', 'column_0', .* \(100001 in all\)\]\)$")
    _message(make_run, sm.F1(), Request(label="y", target=np.arange(10 * HUGE), score="p"), available=["y", "p"],
             match=r"^target: expected a column name or a non-empty list of them, got a numpy array of shape")
    _message(make_run, sm.F1(), Request(label="y", score=pd.Series(np.arange(10 * HUGE), name="p")),
             available=["y", "p"], match=r"^score: .* got a pandas Series named 'p'$")
    _message(make_run, sm.MeanSquaredError(), Request(label="y" * HUGE, target="p", score="p"), available=["y"],
             match=r"^target: is another name for label=; give one of them, got label='yyy.*"
                   r"\(100000 characters\) and target='p'$")
    _message(make_run, sm.F1(), Request(label="y", score="p", by=list(range(HUGE))), available=["y", "p"],
             match=r"^by: expected a column name or a non-empty list of them, got \[0, 1, 2, 3, 4, 5, "
                   r"\.\.\. \(100000 in all\)\]$")
    _message(make_run, sm.F1(), Request(label="y", score="p", weight=["w"] * HUGE), available=["y", "p", "w"],
             match=r"^weight: expected a column name, got \['w', 'w'")
    _message(make_run, {"m" * HUGE: object()}, Request(label="y", score="p"), available=["y", "p"],
             match=r"^metrics\['mmm")


def test_partition_messages_are_bounded() -> None:
    """In the partition tasks: a missing column of a wide frame; a null row of a wide frame or
    of a vector score column (its values described, not printed)."""
    wide = pd.DataFrame(np.random.default_rng(0).random((4, 2_000)), columns=[f"s{i}" for i in range(2_000)])
    wide["y"] = [0, 1, 2, 1]
    run = make_run(sm.F1(num_classes=2_000), Request(label="y", score=list(wide.columns[:-1])),
                   available=list(wide.columns))
    _message(partition_state, wide.drop(columns=["s1999"]), run.plan,
             match=r"^columns \['s1999'\] are not in the partition \(has \['s0', .*\(2000 in all\)\]\)$")
    wide.loc[2, "s1500"] = np.nan
    _message(partition_state, wide, run.plan,
             match=r"^nulls: column 's1500' is null at row 2 of the partition \(index 2; row \{'y': 2, 's0': .*"
                   r"'s1500': nan, \.\.\. \(2001 columns\)\}\); pass nulls='skip' .* \(2001 in all\)\]$")
    vectors = pd.DataFrame({"y": [0.0, np.nan], "p": [np.full(HUGE, 0.5), np.full(HUGE, 0.25)]})
    plan = make_run(sm.AUROC(), Request(label="y", score="p"), available=["y", "p"]).plan
    _message(partition_state, vectors, plan,
             match=r"^nulls: column 'y' is null at row 1 .*'p': a numpy array of shape \(100000,\)")


def test_dask_messages_are_bounded() -> None:
    dd = pytest.importorskip("dask.dataframe")
    import dask

    from streammetrics.dask import evaluate, evaluate_ranked

    df = pd.DataFrame({"y": [0, 1] * 50, "p": np.linspace(0, 1, 100)})
    for i in range(HUGE // 100):
        df[f"k{i}"] = 0
    ddf = dd.from_pandas(df, npartitions=2)
    with dask.config.set(scheduler="synchronous"):
        _message(evaluate, ddf, sm.F1(), label="y", score=pd.Series(np.arange(10 * HUGE), name="p"),
                 match=r"^score: expected .* got a pandas Series named 'p'$")
        _message(evaluate, ddf.groupby([f"k{i}" for i in range(HUGE // 100)]), sm.F1(), label="y", score="p",
                 by="k0", match=r"^by: the frame is already grouped by \['k0', .* \(1000 in all\)\]; got by='k0'")
        _message(evaluate, ddf, sm.F1(), label="y", score="p", by=[f"x{i}" for i in range(HUGE)],
                 match=r"^columns \['x0', .* \(100000 in all\)\] are not in the DataFrame \(has \['y', 'p', 'k0'")
        other = dd.from_pandas(pd.Series(np.arange(10 * HUGE, dtype=np.float64), name="p"), npartitions=3)
        _message(evaluate_ranked, ddf, sm.AUROC(), label="y", score=other,  # Series are taken; aligned only
                 match=r"^score: a dask Series named 'p' is not aligned with the frame \(3 partition\(s\)")


def test_ray_and_callback_messages_are_bounded() -> None:
    _message(as_metric_set, [sm.F1()] * HUGE, match=r"^metrics: expected a MetricSet, .* got \[a streammetrics.F1, .*\(100000 in all\)\]$")
    _message(as_metric_set, {"x" * HUGE: 1}, match=r"^metrics: 'xxx.*\(100000 characters\) is not a streammetrics")
    pytest.importorskip("ray")
    from streammetrics.ray import evaluate_ranked

    _message(evaluate_ranked, list(range(HUGE)), sm.AUROC(), label="y", score="p",
             match=r"^ds: no Parquet file found at \[0, 1, 2, 3, 4, 5, \.\.\. \(100000 in all\)\]")


def test_spark_streaming_argument_messages_are_bounded() -> None:
    """The checks of ``evaluate_stream``'s own arguments, before Spark is asked (its frame
    stood in by what they read: the column names)."""
    from types import SimpleNamespace

    from streammetrics import spark_streaming

    frame = SimpleNamespace(columns=["y", "p"])
    _message(spark_streaming._keys, [f"k{i}" for i in range(HUGE)], frame, ["y", "p"], "ts",
             match=r"^by: columns \['k0', .* \(100000 in all\)\] are not in the DataFrame \(has \['y', 'p'\]\)$")
    _message(spark_streaming._keys, np.arange(HUGE), frame, ["y", "p"], "ts",
             match=r"^by: expected a column name or a non-empty list of them, got a numpy array of shape")
    _message(spark_streaming._window_spec, list(range(HUGE)), frame,
             match=r"^window: expected .* got \[0, 1, 2, 3, 4, 5, \.\.\. \(100000 in all\)\]$")
