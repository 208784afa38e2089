"""Dask Series as columns (issue #32 item 3): ``streammetrics.dask.evaluate`` takes ``label=``,
``score=`` (``target=`` / ``prediction=``) and ``weight=`` as Series derived from the frame, as
Spark takes ``Column`` expressions. They are assigned to the frame lazily: the values equal the
plain columns' (range path, state path, slices, lists of class scores), the client computes
nothing but ``evaluate``'s one graph, and a Series not aligned with the frame is refused briefly.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

pytest.importorskip("dask.dataframe")

import dask  # noqa: E402
import dask.dataframe as dd  # noqa: E402
import pandas as pd  # noqa: E402
from dask.callbacks import Callback  # noqa: E402

import streammetrics as sm  # noqa: E402
from streammetrics.dask import evaluate  # noqa: E402

C = 3


def _frame(seed: int, n: int) -> pd.DataFrame:
    """Labels stored as floats, scores doubled, weights offset: the expressions below undo that
    exactly (so each expression's column equals a plain column bit for bit); rounded scores tie."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    p = np.round(rng.random(n), 2)
    s = rng.random((n, C))
    out = {"y": y, "yf": y.astype(np.float64), "p": p, "p2": p * 2.0, "w": rng.integers(0, 4, n).astype(float),
           "k": rng.integers(0, 3, n), "yc": rng.integers(0, C, n)}
    out.update({f"s{c}": np.round(s[:, c], 2) for c in range(C)})
    return pd.DataFrame(out)


def _sync(fn: Any, *args: Any, **kwargs: Any) -> Any:
    with dask.config.set(scheduler="synchronous"):
        return fn(*args, **kwargs)


@contextlib.contextmanager
def _graphs() -> Iterator[list[int]]:
    """The graphs the local scheduler executes inside the block (their sizes), every compute."""
    seen: list[int] = []
    with Callback(start=lambda dsk: seen.append(len(dsk))):
        yield seen


def _same(a: Any, b: Any) -> None:
    """Equal values: dicts (by key, slices too), arrays and floats, NaN equal to NaN."""
    if isinstance(a, dict):
        assert isinstance(b, dict) and a.keys() == b.keys()
        for k in a:
            _same(a[k], b[k])
    else:
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


def _close(a: Any, b: Any) -> None:
    """Weighted exact AUROC / AP go by the ranked route: one process's values within 1e-12 (the
    others bit for bit)."""
    assert a.keys() == b.keys()
    for k in a:
        np.testing.assert_allclose(np.asarray(a[k]), np.asarray(b[k]), rtol=0, atol=1e-12)


def _binary() -> sm.MetricSet:
    return sm.MetricSet(auroc=sm.AUROC(), ap=sm.AveragePrecision(), f1=sm.F1())


def test_the_audits_call_works_and_equals_the_plain_column() -> None:
    """``evaluate(ddf, AUROC(), label="y", score=ddf.p * 1.0)`` computed every value on the client
    and raised a ~405 KB message; now it is the plain column's value (the range path)."""
    df = _frame(0, 3_000)
    ddf = dd.from_pandas(df, npartitions=5)
    got = _sync(evaluate, ddf, sm.AUROC(), label="y", score=ddf.p * 1.0)
    assert got == _sync(evaluate, ddf, sm.AUROC(), label="y", score="p")
    assert got == sm.AUROC().update(df.y, df.p).compute()


@settings(max_examples=12, deadline=None)
@given(seed=st.integers(0, 2**16), n=st.integers(0, 400), parts=st.integers(1, 6), by=st.booleans())
def test_expressions_equal_the_plain_columns(seed: int, n: int, parts: int, by: bool) -> None:
    """AUROC, AP and F1 (unweighted: the range path; weighted or sliced: the states), each column
    given as an expression, equal the same run on the plain columns and one process."""
    df = _frame(seed, n)
    ddf = dd.from_pandas(df, npartitions=parts)
    label, score, weight = ddf.yf.astype(np.int64), ddf["p2"] * 0.5, ddf.w.where(ddf.w >= 0, 0.0)
    extra = {"by": "k"} if by else {}
    plain = _sync(evaluate, ddf, _binary(), label="y", score="p", **extra)
    _same(_sync(evaluate, ddf, _binary(), label=label, score=score, **extra), plain)
    weighted = _sync(evaluate, ddf, _binary(), label="y", score="p", weight="w", **extra)
    _same(_sync(evaluate, ddf, _binary(), label=label, score=score, weight=weight, **extra), weighted)
    if not by and n:  # the reference in one process
        ref = _binary().update(df.y, df.p, sample_weight=df.w).compute()
        _close(weighted, ref)


def test_lists_aliases_groupby_and_compute_false() -> None:
    df = _frame(3, 2_000)
    ddf = dd.from_pandas(df, npartitions=4)
    scores = [ddf.s0 * 1.0, "s1", ddf["s2"] + 0.0]  # names and expressions mixed
    mc = sm.MetricSet(auroc=sm.AUROC(num_classes=C), f1=sm.F1(num_classes=C))
    _same(_sync(evaluate, ddf, mc, label=ddf.yc + 0, score=scores),
          _sync(evaluate, ddf, mc, label="yc", score=["s0", "s1", "s2"]))
    mse = _sync(evaluate, ddf, sm.MeanSquaredError(), target=ddf.p2 / 2.0, prediction=ddf.s0 * 1.0)
    assert mse == _sync(evaluate, ddf, sm.MeanSquaredError(), target="p", prediction="s0")
    # a grouped frame (by=) with an expression of the frame
    _same(_sync(evaluate, ddf.groupby("k"), sm.F1(), label="y", score=ddf.p2 * 0.5),
          _sync(evaluate, ddf, sm.F1(), label="y", score="p", by="k"))
    acc = _sync(evaluate, ddf, sm.AUROC(), label="y", score=ddf.p * 1.0, compute=False)
    assert acc.compute() == sm.AUROC().update(df.y, df.p).compute()


def test_expression_names_never_collide_with_the_frames_columns() -> None:
    df = _frame(4, 500)
    df["__streammetrics_score_0__"] = 1.0 - df["p"]  # a user column of the name Spark's path uses
    ddf = dd.from_pandas(df, npartitions=3)
    got = _sync(evaluate, ddf, sm.AUROC(), label="y", score=ddf.p * 1.0)
    assert got == sm.AUROC().update(df.y, df.p).compute()
    assert _sync(evaluate, ddf, sm.AUROC(), label="y", score=ddf["__streammetrics_score_0__"] * 1.0) \
        == sm.AUROC().update(df.y, 1.0 - df.p).compute()
    df["score (a Series)"] = 1.0 - df["p"]  # a user column of the name an expression gets
    ddf = dd.from_pandas(df, npartitions=3)
    assert _sync(evaluate, ddf, sm.AUROC(), label="y", score=ddf.p * 1.0) == sm.AUROC().update(df.y, df.p).compute()
    assert _sync(evaluate, ddf, sm.AUROC(), label="y", score=ddf["score (a Series)"] * 1.0) \
        == sm.AUROC().update(df.y, 1.0 - df.p).compute()


@pytest.mark.parametrize(("what", "metrics"), [("score", sm.AUROC()), ("score", sm.F1()), ("label", _binary()),
                                             ("weight", _binary()), ("score[1]", sm.AUROC(num_classes=C))],
                         ids=["range-path", "state-path", "label", "weight", "list-element"])
def test_a_null_of_a_series_names_the_argument_and_the_row(what: str, metrics: Any) -> None:
    """A null row of a Series expression: the message names the argument as the user wrote it
    (the element of a list by its index), never an internal column, and the row; with
    ``nulls="skip"`` the row is dropped as a null of a plain column is."""
    df = _frame(8, 60)
    df["i"] = np.arange(len(df))
    ddf = dd.from_pandas(df, npartitions=3)
    bad = ddf.i == int(ddf.divisions[1]) + 2  # row 2 of partition 1
    kwargs: dict[str, Any] = {"label": "y", "score": "p"}
    if what == "score[1]":
        kwargs.update(label="yc", score=["s0", ddf.s1.mask(bad), "s2"])
    elif what == "label":
        kwargs["label"] = ddf.yf.mask(bad)
    else:
        kwargs[what] = ddf[{"score": "p", "weight": "w"}[what]].mask(bad)
    name = f"{what} (a Series)"
    with pytest.raises(ValueError, match=rf"^nulls: column {re.escape(repr(name))} is null at row 2 of Dask partition 1 "
                                         rf"\(index {int(ddf.divisions[1]) + 2}; row .*{re.escape(repr(name))}: nan"):
        _sync(evaluate, ddf, metrics, **kwargs)


def test_a_series_of_the_frames_divisions_from_another_frame_is_aligned_by_index() -> None:
    df = _frame(5, 600)
    ddf = dd.from_pandas(df, npartitions=4)
    other = dd.from_pandas(df[["p"]].iloc[::-1], npartitions=4)  # same index, known divisions
    assert other.divisions == ddf.divisions
    assert _sync(evaluate, ddf, sm.AUROC(), label="y", score=other.p) == sm.AUROC().update(df.y, df.p).compute()


def test_misaligned_series_are_refused_briefly_naming_the_argument() -> None:
    df = _frame(6, 50_000)
    ddf = dd.from_pandas(df, npartitions=4)
    shuffled = df.sample(frac=1.0, random_state=0)
    frame_unknown = dd.from_pandas(shuffled, npartitions=4, sort=False)  # unknown divisions
    unknown = dd.from_pandas(shuffled[["p", "w"]] * 1.0, npartitions=4, sort=False)  # another frame
    assert not frame_unknown.known_divisions and not unknown.known_divisions
    cases = {
        "score": dd.from_pandas(df, npartitions=3).p,  # other partitions
        "label": ddf.y.repartition(npartitions=2),  # a repartition
        "weight": unknown.w,  # another frame, unknown divisions
    }
    for what, series in cases.items():
        kwargs: dict[str, Any] = {"label": "y", "score": "p", what: series}
        with pytest.raises(ValueError, match=rf"^{what}: a dask Series named '\w' is not aligned with the frame") as err, \
                _graphs() as graphs:
            _sync(evaluate, ddf, sm.F1(), **kwargs)
        assert len(str(err.value)) < 500 and not graphs  # nothing was computed
    with pytest.raises(ValueError, match=r"^score: .* not aligned .*unknown divisions; the frame: 4 partition"):
        _sync(evaluate, frame_unknown, sm.F1(), label="y", score=unknown.p)  # same shape, other frame
    # derived from a frame of unknown divisions: aligned partition by partition
    assert _sync(evaluate, frame_unknown, sm.F1(), label="y", score=frame_unknown.p * 1.0) \
        == sm.F1().update(df.y, df.p).compute()
    with pytest.raises(ValueError, match=r"^score: expected a column name or a non-empty list of them, "
                                         r"got a pandas Series named 'p'$"):
        _sync(evaluate, ddf, sm.F1(), label="y", score=df.p)  # the audit's 405 KB message, had it been pandas


@pytest.mark.parametrize("metrics", [sm.AUROC(), sm.MetricSet(f1=sm.F1(), auroc=sm.AUROC())],
                         ids=["range-path", "states"])
def test_the_client_computes_one_graph_as_with_plain_columns(metrics: Any) -> None:
    """The local scheduler's start callback sees every graph executed: an expression adds no
    compute (it is not computed on the client to check or name it), just as a plain column."""
    df = _frame(7, 4_000)
    ddf = dd.from_pandas(df, npartitions=6)
    counts = []
    for score in ("p", ddf.p2 * 0.5):
        with _graphs() as graphs:
            _sync(evaluate, ddf, metrics, label=ddf.yf.astype(np.int64), score=score, weight=None)
        counts.append(len(graphs))
    assert counts == [1, 1]


def _on_a_worker(part: pd.Series) -> pd.Series:
    """The partition's scores; a ValueError ("No worker found") outside a distributed worker."""
    from distributed import get_worker

    get_worker()
    return part * 1.0


def test_expressions_run_on_the_workers_only() -> None:
    """A Series whose computation fails anywhere but on a worker: ``evaluate`` under a
    ``distributed`` client gives the plain values (range path and states), so the client never
    computed it; the same Series on the client's own scheduler fails."""
    distributed = pytest.importorskip("distributed")
    df = _frame(8, 3_000)
    ddf = dd.from_pandas(df, npartitions=4)
    score = ddf.p.map_partitions(_on_a_worker, meta=ddf.p._meta)
    with pytest.raises(ValueError, match="No worker found"):
        _sync(evaluate, ddf, sm.AUROC(), label="y", score=score)
    with distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=False,
                                  dashboard_address=None) as cluster, distributed.Client(cluster):
        assert evaluate(ddf, sm.AUROC(), label="y", score=score) == sm.AUROC().update(df.y, df.p).compute()
        weighted = evaluate(ddf, _binary(), label="y", score=score, weight=ddf.w * 1.0)
    _close(weighted, _binary().update(df.y, df.p, sample_weight=df.w).compute())


def test_evaluate_ranked_takes_series_as_evaluate_does() -> None:
    """``evaluate_ranked`` takes Dask Series derived from the frame for ``label``, ``score`` and
    ``weight`` (the same helper as ``evaluate``): the values of the plain columns, a null row
    named by the argument, a Series not aligned with the frame refused naming it."""
    from streammetrics.dask import evaluate_ranked

    df = _frame(9, 3_000)
    ddf = dd.from_pandas(df, npartitions=4)
    metrics = {"auroc": sm.AUROC(), "ap": sm.AveragePrecision(), "roc": sm.ROCCurve()}
    got = _sync(evaluate_ranked, ddf, metrics, label=ddf.yf.astype(int), score=ddf.p2 / 2.0, weight=ddf.w + 0.0,
                ranges=3)
    want = _sync(evaluate_ranked, ddf, metrics, label="y", score="p", weight="w", ranges=3)
    assert got["auroc"] == want["auroc"] and got["ap"] == want["ap"]
    np.testing.assert_array_equal(got["roc"].fpr, want["roc"].fpr)
    with pytest.raises(ValueError, match=r"^nulls: column 'score \(a Series\)' is null at row \d+ of Dask partition"):
        _sync(evaluate_ranked, ddf, sm.AUROC(), label="y", score=ddf.p.where(ddf.p < 0.9))
    with pytest.raises(ValueError, match=r"^weight: a dask Series named 'w' is not aligned with the frame"):
        _sync(evaluate_ranked, ddf, sm.AUROC(), label="y", score="p", weight=dd.from_pandas(df, npartitions=3).w)
