"""streammetrics.ray.evaluate with exact binary AUROC / AP members over any Ray Dataset, by score
ranges (issue #32 item 2), against a real local Ray: the single process bit for bit (unweighted)
and scikit-learn to 1e-12 (weighted) on ``from_pandas`` (uneven and empty blocks),
``from_items`` and ``read_parquet`` datasets, with ties, ignored labels, nulls, one class and no
rows; the errors of the state path; and what reaches the driver: O(ranges) objects for AUROC
alone, O(ranges + distinct positive scores) with AP -- never the scores."""

from __future__ import annotations

import pickle
import warnings
from typing import Any

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

ray = pytest.importorskip("ray")
pytest.importorskip("ray.data")

import engine_cases as cases  # noqa: E402

import streammetrics as sm  # noqa: E402
from streammetrics._engines import ray_blocks, ray_ranges  # noqa: E402
from streammetrics.ray import evaluate  # noqa: E402

TOL = 1e-12


local_ray = pytest.fixture(scope="module", autouse=True)(cases.local_ray)


def _set(order: str = "ranked first", ignore: int | None = None) -> sm.MetricSet:
    ranked = {"auroc": sm.AUROC(ignore_index=ignore), "ap": sm.AveragePrecision(ignore_index=ignore)}
    rest = {"f1": sm.F1(ignore_index=ignore), "cm": sm.ConfusionMatrix(ignore_index=ignore)}
    if order == "only ranked":
        return sm.MetricSet(ranked)
    return sm.MetricSet({**ranked, **rest} if order == "ranked first" else {**rest, **ranked})


def _frame(n: int, seed: int, levels: int = 100) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"y": rng.integers(0, 2, n), "p": rng.integers(0, levels, n) / max(levels - 1, 1),
                         "w": np.round(rng.random(n) * 3 + 0.01, 3)})


def _blocks(df: pd.DataFrame, cuts: list[int]) -> Any:
    """``from_pandas`` of ``df`` cut at ``cuts`` (uneven; an empty block first)."""
    at = sorted({min(max(c, 0), len(df)) for c in cuts})
    bounds = [0, *at, len(df)]
    return ray.data.from_pandas([df.iloc[:0], *[df.iloc[a:b] for a, b in zip(bounds[:-1], bounds[1:], strict=True)]])


def _recorded(fn: Any) -> tuple[Any, list[str]]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        values = fn()
    return values, sorted(str(w.message) for w in caught)


def _one_process(metrics: sm.MetricSet, df: pd.DataFrame, weight: str | None = None) -> Any:
    w = None if weight is None else df[weight].to_numpy()
    return metrics.update(df.y.to_numpy(), df.p.to_numpy(), sample_weight=w).compute()


@pytest.fixture
def calls(monkeypatch) -> list[int]:
    """The driver's calls of the block range path (our function, counted; Ray itself untouched)."""
    seen: list[int] = []
    real = ray_blocks.evaluate_blocks
    monkeypatch.setattr(ray_blocks, "evaluate_blocks", lambda *a: seen.append(1) or real(*a))
    return seen


def _same_bits(got: dict[str, Any], want: dict[str, Any]) -> None:
    assert list(got) == list(want)
    for k in want:
        assert np.array_equal(np.asarray(got[k]), np.asarray(want[k]), equal_nan=True), (k, got[k], want[k])


def _close_to_sklearn(got: dict[str, Any], df: pd.DataFrame, weight: str | None) -> None:
    from sklearn.metrics import average_precision_score, roc_auc_score

    w = None if weight is None else df[weight].to_numpy()
    assert abs(got["auroc"] - roc_auc_score(df.y, df.p, sample_weight=w)) <= TOL
    assert abs(got["ap"] - average_precision_score(df.y, df.p, sample_weight=w)) <= TOL


@settings(max_examples=10, deadline=None)
@given(n=st.integers(2, 400), seed=st.integers(0, 2**32 - 1), levels=st.sampled_from([1, 3, 100, 10**6]),
       cuts=st.lists(st.integers(0, 400), max_size=5), ranges=st.integers(1, 5),
       order=st.sampled_from(["ranked first", "rest first", "only ranked"]))
def test_blocks_equal_one_process_bit_for_bit(n, seed, levels, cuts, ranges, order) -> None:
    """Any blocking (empty blocks), any number of ranges, ties (1 or 3 score levels): the values
    and warnings of one MetricSet bit for bit; AUROC and AP within 1e-12 of scikit-learn."""
    import unittest.mock

    df = _frame(n, seed, levels)
    with unittest.mock.patch.object(ray_ranges, "range_count", lambda: ranges):
        got = _recorded(lambda: evaluate(_blocks(df, cuts), _set(order), label="y", score="p"))
    want = _recorded(lambda: _one_process(_set(order), df))
    _same_bits(got[0], want[0])
    assert got[1] == want[1]
    if df.y.nunique() == 2:
        _close_to_sklearn(got[0], df, None)


@settings(max_examples=8, deadline=None)
@given(n=st.integers(2, 400), seed=st.integers(0, 2**32 - 1), levels=st.sampled_from([1, 3, 100]),
       cuts=st.lists(st.integers(0, 400), max_size=4), ranges=st.integers(1, 5),
       order=st.sampled_from(["ranked first", "rest first", "only ranked"]))
def test_weighted_within_1e12_of_sklearn(n, seed, levels, cuts, ranges, order) -> None:
    """Float weights: AUROC and AP within 1e-12 of scikit-learn and of one process (sums of float
    weights in another order), the other members as the state path gives them."""
    import unittest.mock

    df = _frame(n, seed, levels)
    with unittest.mock.patch.object(ray_ranges, "range_count", lambda: ranges):
        got = evaluate(_blocks(df, cuts), _set(order), label="y", score="p", weight="w")
    want = _one_process(_set(order), df, "w")
    assert list(got) == list(want)
    for k in want:
        np.testing.assert_allclose(np.asarray(got[k], dtype=float), np.asarray(want[k], dtype=float),
                                   rtol=TOL, atol=TOL, err_msg=k)
    if df.y.nunique() == 2:
        _close_to_sklearn(got, df, "w")


@pytest.mark.parametrize("weight", [None, "w"])
def test_from_items_and_read_parquet(tmp_path, calls, weight, monkeypatch) -> None:
    """The other dataset sources: rows as Python dicts (``from_items``) and Parquet files read
    by Ray Data (uneven files, one empty; the recognition of a plain read, which would take
    ``evaluate_parquet``'s path, turned off: tests/integrations/test_ray_source.py)."""
    from streammetrics._engines import ray_source

    monkeypatch.setattr(ray_source, "parquet_source", lambda ds: None)
    df = _frame(3000, 7)
    df.loc[::11, "y"] = -1  # ignored labels
    parts = [df.iloc[:1000], df.iloc[1000:1000], df.iloc[1000:]]
    for i, part in enumerate(parts):
        part.to_parquet(tmp_path / f"part-{i}.parquet")
    kept = df[df.y != -1]
    for ds in (ray.data.from_items(df.to_dict("records")), ray.data.read_parquet(str(tmp_path))):
        got = evaluate(ds, _set("ranked first", -1), label="y", score="p", weight=weight)
        want = _one_process(_set("ranked first", -1), df, weight)
        if weight is None:
            _same_bits(got, want)
        else:
            for k in want:
                np.testing.assert_allclose(np.asarray(got[k], dtype=float), np.asarray(want[k], dtype=float),
                                           rtol=TOL, atol=TOL)
        _close_to_sklearn(got, kept, weight)
    assert calls == [1, 1]


@pytest.mark.parametrize("weight", [None, "w"])
def test_nulls_refused_or_skipped(calls, weight) -> None:
    from streammetrics._engines.request import NullRowsSkipped

    df = _frame(600, 8)
    holes = df.copy()
    holes.loc[[10, 20], "p"] = np.nan
    holes.loc[30, "w"] = np.nan
    ds = _blocks(holes, [250])
    with pytest.raises(ValueError, match=r"nulls: column 'p' is null at row 10 of Ray block 1 "):
        evaluate(ds, _set(), label="y", score="p", weight=weight)
    skipped = 3 if weight else 2
    with pytest.warns(NullRowsSkipped, match=rf"skipped {skipped} row\(s\)"):
        got = evaluate(ds, _set(), label="y", score="p", weight=weight, nulls="skip")
    kept = df.drop(index=[10, 20, 30] if weight else [10, 20])
    want = _one_process(_set(), kept, weight)
    if weight is None:
        _same_bits(got, want)
    _close_to_sklearn(got, kept, weight)
    assert calls == [1, 1]


@pytest.mark.parametrize("weight", [None, "w"])
def test_one_class_ties_and_no_rows(calls, weight) -> None:
    """One class (undefined AUROC, and AP without positives): nan with one process's warnings;
    every score tied; a dataset of no row (empty blocks) gives the empty set's values."""
    df = _frame(500, 9).assign(y=0)
    got = _recorded(lambda: evaluate(_blocks(df, [100, 300]), _set(), label="y", score="p", weight=weight))
    want = _recorded(lambda: _one_process(_set(), df, weight))
    assert got[1] == want[1] and got[0]["auroc"] != got[0]["auroc"] and got[0]["ap"] != got[0]["ap"]
    tied = _frame(500, 10).assign(p=0.5)
    got = evaluate(_blocks(tied, [100]), _set(), label="y", score="p", weight=weight)
    assert abs(got["auroc"] - 0.5) <= TOL
    _close_to_sklearn(got, tied, weight)
    empty = _recorded(lambda: evaluate(_blocks(df.iloc[:0], []), _set(), label="y", score="p", weight=weight))
    none = _recorded(lambda: _set().compute())
    assert empty[1] == none[1]
    for k in none[0]:
        assert np.array_equal(np.asarray(empty[0][k], dtype=float), np.asarray(none[0][k], dtype=float),
                              equal_nan=True), k
    assert len(calls) == 3


@pytest.mark.parametrize("bad", ["label", "float label", "weight"])
def test_errors_are_the_state_paths(calls, bad) -> None:
    """A bad label or weight: the ValueError the state path (``compute=False``) raises."""
    df = _frame(300, 11)
    if bad == "label":
        df.loc[40, "y"] = 2
    elif bad == "float label":
        df["y"] = df.y.astype(float)
        df.loc[40, "y"] = 0.5
    else:
        df.loc[40, "w"] = -1.0
    ds = _blocks(df, [150])
    with pytest.raises(ValueError) as state:
        evaluate(ds, _set(), label="y", score="p", weight="w", compute=False)
    for weight in ("w", None) if bad != "weight" else ("w",):
        with pytest.raises(ValueError) as ranged:
            evaluate(ds, _set(), label="y", score="p", weight=weight)
        # the state path's per-block tasks (map_batches) cannot know their block's number
        assert str(ranged.value) == str(state.value).replace("of a Ray block", "of Ray block 1")
    assert calls


def test_other_cases_keep_the_state_path(calls) -> None:
    """``by=`` slices (the keyed route), curves, ``compute=False``: not this path (``max_fpr``:
    by ranges, ``test_ray_max_fpr.py``); interpolated and 11-point AP: this path, within 1e-12."""
    df = _frame(300, 12).assign(g=lambda d: d.y.to_numpy() % 2, c=lambda d: (d.p * 10).astype(int) % 3)
    ds = _blocks(df, [100])
    evaluate(ds, sm.AUROC(), label="y", score="p", by="g")
    evaluate(ds, sm.MetricSet(auroc=sm.AUROC(), roc=sm.ROCCurve()), label="y", score="p")
    evaluate(ds, sm.AUROC(), label="y", score="p", compute=False)
    assert calls == []
    table = evaluate(ds, _set(), label="y", score="p", as_frame=True).to_pandas()
    assert dict(zip(table.metric, table.value, strict=False))["auroc"] == _one_process(_set(), df)["auroc"]
    assert calls == [1]
    readouts = sm.MetricSet(i=sm.AveragePrecision(interpolated=True), e=sm.AveragePrecision(eleven_point=True))
    got, want = evaluate(ds, readouts, label="y", score="p", weight="w"), _one_process(readouts, df, "w")
    assert got == pytest.approx(want, rel=1e-12) and len(calls) == 2



@pytest.mark.parametrize("nulls", ["error", "skip"])
def test_a_materialized_dataset_is_not_selected(monkeypatch, calls, nulls) -> None:
    """A materialized dataset's blocks exist: no ``select_columns`` (a pass over every block),
    each task keeps its blocks' used columns itself -- another column (text with nulls) changes
    no value and skips no row, on the ranges path, the state path and the keyed path (with
    ``nulls="skip"``, nulls in the score: the pandas route of the tasks). A lazy dataset's
    columns are still selected (Ray Data pushes the selection into its read)."""
    import streammetrics.ray as smr

    df = _frame(2000, 11).assign(note=["a", None] * 1000, g=np.arange(2000) % 3)
    if nulls == "skip":
        df.loc[::97, "p"] = np.nan
    ds = _blocks(df, [500, 1200]).materialize()
    selected: list[Any] = []
    real = ray.data.Dataset.select_columns
    monkeypatch.setattr(ray.data.Dataset, "select_columns", lambda self, *a, **k: selected.append(a) or real(self, *a, **k))
    kept = df.dropna(subset=["p"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the rows skipped for a null (nulls="skip")
        _same_bits(evaluate(ds, _set(), label="y", score="p", nulls=nulls), _one_process(_set(), kept))
        rest = sm.MetricSet(f1=sm.F1(), cm=sm.ConfusionMatrix())
        _same_bits(evaluate(ds, rest, label="y", score="p", nulls=nulls), _one_process(rest, kept))
        by = evaluate(ds, _set("only ranked"), label="y", score="p", by="g", nulls=nulls)
    want = sm.Sliced(_set("only ranked")).update(kept.y.to_numpy(), kept.p.to_numpy(),
                                                 slices=kept.g.to_numpy()).compute()
    cases.assert_same(by, want)
    assert calls == [1] and selected == []
    lazy = ds.map_batches(lambda b: b, batch_format="pyarrow")
    assert smr._selected(lazy, ["y", "p"], True) is not lazy and selected == [(["y", "p"],)]
    only = lazy.select_columns(["p", "y"])
    assert smr._selected(only, ["y", "p"], False) is only  # already those columns


def _fetched(monkeypatch, run: Any) -> list[int]:
    """The pickled size of each object list the driver fetches from the tasks (every ``ray.get``
    of the path goes through :func:`ray_blocks.get`: the edge sample first), while ``run`` runs."""
    sizes: list[int] = []
    real = ray_blocks.get
    monkeypatch.setattr(ray_blocks, "get", lambda refs: sizes.append(len(pickle.dumps(out := real(refs)))) or out)
    run()
    monkeypatch.setattr(ray_blocks, "get", real)
    return sizes


def test_the_driver_fetches_no_score(monkeypatch, calls) -> None:
    """What the driver fetches does not grow with the rows: the edge sample (at most
    SAMPLE_SCORES scores of each of SAMPLE_BLOCKS blocks), then for AUROC alone O(ranges)
    numbers, for AP O(ranges + distinct positive scores), weighted O(ranges), plus the other
    members' small states: for 20,000 and 400,000 rows (32 blocks; scores on 1e6 levels, 50 for
    unweighted AP) everything after the sample stays under 20 KB, where the state path sends 8
    bytes a row (3.2 MB)."""
    sample = 8 * ray_blocks.SAMPLE_BLOCKS * ray_ranges.SAMPLE_SCORES + 4096
    for n in (20_000, 400_000):
        df = _frame(n, 13, levels=10**6)
        ds = _blocks(df, list(range(0, n, n // 32)))
        auroc = _fetched(monkeypatch, lambda ds=ds: evaluate(ds, sm.AUROC(), label="y", score="p"))
        weighted = _fetched(monkeypatch, lambda ds=ds: evaluate(ds, _set(), label="y", score="p", weight="w"))
        coarse = _blocks(_frame(n, 14, levels=50), list(range(0, n, n // 32)))
        ap = _fetched(monkeypatch, lambda ds=coarse: evaluate(ds, _set(), label="y", score="p"))
        for sizes in (auroc, weighted, ap):
            assert sizes[0] < sample and sum(sizes[1:]) < 20_000, (n, sizes)
    assert len(calls) == 6


def test_edges_from_non_empty_blocks_balance_the_ranges(monkeypatch, calls) -> None:
    """A filtered dataset of 40 blocks whose rows are all in blocks 5, 17 and 30: the blocks the
    sample spreads over (0, 13, 26, 39) are empty, so the sample goes on to the blocks not yet
    sampled until half of a sample's blocks hold a score, and the 2 ranges each hold about half
    of the rows (before: the sample held no score, the edge fell at 0 and one range held every
    row); the values one process's bit for bit."""
    import pyarrow as pa
    import pyarrow.compute as pc

    from streammetrics._engines import range_counts

    df = _frame(40_000, 17, levels=10**6).assign(b=np.arange(40_000) // 1_000)
    kept = pa.array([5, 17, 30])
    ds = ray.data.from_pandas([df.iloc[i * 1_000:(i + 1) * 1_000] for i in range(40)]).map_batches(
        lambda t: t.filter(pc.is_in(t["b"], value_set=kept)), batch_format="pyarrow", batch_size=None)
    want = df[df.b.isin([5, 17, 30])]
    seen: list[list[int]] = []
    real = range_counts.final_values
    monkeypatch.setattr(range_counts, "final_values",
                        lambda rest, counts, split, *w: seen.append([c.pos + c.neg for c in counts])
                        or real(rest, counts, split, *w))
    monkeypatch.setattr(ray_ranges, "range_count", lambda: 2)
    _same_bits(evaluate(ds, _set(), label="y", score="p"), _one_process(_set(), want))
    assert len(calls) == 1 and len(seen) == 1 and sum(seen[0]) == 3_000
    assert min(seen[0]) >= 1_200, seen  # each range about half of the rows


def test_weighted_block_task_reads_arrow_straight_to_numpy(monkeypatch) -> None:
    """A weighted block task (run here in the test's process) sorts its chunks from the Arrow
    columns as numpy, without a pandas DataFrame per chunk (``ranked.feed``, the pandas path, is
    never called), and each range's piece holds that range's scores of each class, sorted, and
    their weights."""
    import pyarrow as pa

    from streammetrics._core.metric import trusted_states
    from streammetrics._engines import ranked
    from streammetrics._engines.request import Request, make_run

    df = _frame(5_000, 23)
    table = pa.Table.from_pandas(df, preserve_index=False)
    run = make_run(_set(), Request(label="y", score="p", weight="w", update_kwargs={}), available=list(df.columns))
    types = dict(zip(table.schema.names, table.schema.types, strict=True))
    split = ray_blocks.dataset_split(run.template, run.plan, types)
    assert split is not None
    monkeypatch.setattr(ranked, "feed", lambda *a, **k: pytest.fail("a chunk went through pandas"))
    with trusted_states():
        got = ray_blocks._blocks_task(run.plan, split, np.array([0.5]), 0, table)
    assert len(got) == 3 and got[0][1] == 0
    for r, rows in enumerate([df[df.p < 0.5], df[df.p >= 0.5]]):
        (nv, nw, pv, pw), = got[r + 1]  # one chunk
        for v, w, cls in ((nv, nw, 0), (pv, pw, 1)):
            mine = rows[rows.y == cls]
            assert np.array_equal(v, np.sort(mine.p.to_numpy()))
            assert abs(w.sum() - mine.w.sum()) <= 1e-9
