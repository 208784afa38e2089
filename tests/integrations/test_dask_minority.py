"""The exchange of positives (``streammetrics._engines.minority``) in dask's range path == one
process, bit for bit (and scikit-learn to 1e-12): random partitions, ties, few and many
positives (the exchange forced), one class, empty partitions and files, bad input named as
the range path names it, and on a real 2-process LocalCluster reading Parquet."""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("dask.dataframe")
pytest.importorskip("distributed")
pytest.importorskip("pyarrow")

import dask  # noqa: E402
import dask.dataframe as dd  # noqa: E402
import pandas as pd  # noqa: E402
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

import streammetrics as sm  # noqa: E402
import streammetrics._engines.minority as MX  # noqa: E402
import streammetrics._engines.range_counts as RC  # noqa: E402
from streammetrics.dask import evaluate, evaluate_parquet  # noqa: E402


def _set(order: str = "ranked first") -> sm.MetricSet:
    ranked = {"auroc": sm.AUROC(), "ap": sm.AveragePrecision()}
    rest = {"f1": sm.F1(), "cm": sm.ConfusionMatrix()}
    if order == "only ranked":
        return sm.MetricSet(ranked)
    return sm.MetricSet({**ranked, **rest} if order == "ranked first" else {**rest, **ranked})


def _recorded(fn: Any) -> tuple[dict[str, Any], list[str]]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        values = fn()
    return values, sorted(str(w.message) for w in caught)


def _single(metrics: sm.MetricSet, df: pd.DataFrame) -> tuple[dict[str, Any], list[str]]:
    def run() -> dict[str, Any]:
        acc = metrics.copy()
        if len(df):
            acc.update(df["y"].to_numpy(), df["p"].to_numpy())
        return acc.compute()
    return _recorded(run)


def _same(got: dict[str, Any], want: dict[str, Any]) -> None:
    assert list(got) == list(want)
    for k in want:
        assert np.array_equal(np.asarray(got[k]), np.asarray(want[k]), equal_nan=True), (k, got[k], want[k])


def _sklearn(got: dict[str, Any], df: pd.DataFrame) -> None:
    from sklearn.metrics import average_precision_score, roc_auc_score

    y, p = df["y"].to_numpy(), df["p"].to_numpy()
    if 0 < y.sum() < len(y):
        assert abs(got["auroc"] - roc_auc_score(y, p)) <= 1e-12
        assert abs(got["ap"] - average_precision_score(y, p)) <= 1e-12


def _frames(df: pd.DataFrame, cuts: list[int]) -> Any:
    bounds = [0, *sorted(cuts), len(df)]
    parts = [df.iloc[a:b] for a, b in zip(bounds[:-1], bounds[1:], strict=True)]
    return dd.from_delayed([dask.delayed(p) for p in parts], meta=df.iloc[:0])


def _data(n: int, seed: int, share: float, decimals: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    y = (rng.random(n) < share).astype(np.int64)
    return pd.DataFrame({"y": y, "p": np.round(rng.random(n) * 0.7 + 0.3 * y * rng.random(n), decimals)})


class _Spy:
    """Records what the edges task chose (the synchronous scheduler runs it in this process)."""

    def __init__(self, mp: pytest.MonkeyPatch) -> None:
        self.chosen: list[Any] = []
        choose = MX.choose

        def spy(heads: Any, n_ranges: int) -> Any:
            how = choose(heads, n_ranges)
            self.chosen.append(how)
            return how
        mp.setattr(MX, "choose", spy)


def test_the_rule() -> None:
    """The exchange with more than one range and positives at most 1 / (4 R) of the rows."""
    assert MX.use_exchange(0, 0, 2) and MX.use_exchange(25, 200, 2) and not MX.use_exchange(26, 200, 2)
    assert MX.use_exchange(12, 400, 8) and not MX.use_exchange(13, 400, 8)
    assert not MX.use_exchange(0, 100, 1)  # one range: nothing to exchange
    heads = [(None, (np.array([0.1, 0.9]), np.array([5.0, 5.0])), 1, 10)] * 2
    assert MX.choose(heads, 2) == MX.Exchange(2)
    many = [(None, (np.array([0.1, 0.9]), np.array([5.0, 5.0])), 5, 10)] * 2
    assert isinstance(MX.choose(many, 2), np.ndarray)


@settings(max_examples=40, deadline=None)
@given(n=st.integers(0, 600), seed=st.integers(0, 10**6), ranges=st.integers(2, 6),
       share=st.sampled_from([0.0, 0.01, 0.05, 0.1, 0.3, 0.5, 0.9, 1.0]), decimals=st.integers(0, 3),
       forced=st.booleans(), order=st.sampled_from(["ranked first", "rest first", "only ranked"]),
       data=st.data())
def test_any_partitions_give_one_process(n: int, seed: int, ranges: int, share: float, decimals: int,
                                         forced: bool, order: str, data: Any) -> None:
    """Bit for bit with one process (the same warnings where a class is missing), scikit-learn to
    1e-12; ``forced``: the exchange whatever the share of positives (many positives, one class)."""
    df = _data(n, seed, share, decimals)
    cuts = data.draw(st.lists(st.integers(0, n), max_size=7))  # empty partitions too
    with pytest.MonkeyPatch.context() as mp, dask.config.set(scheduler="synchronous"):
        mp.setattr(RC, "range_count", lambda: ranges)
        if forced:
            mp.setattr(MX, "SHARE_DIVISOR", 0)
        spy = _Spy(mp)
        got = _recorded(lambda: evaluate(_frames(df, cuts), _set(order), label="y", score="p"))
    want = _single(_set(order), df)
    _same(got[0], want[0])
    assert got[1] == want[1]
    _sklearn(got[0], df)
    positives = int(df["y"].sum())
    expected = forced or positives * MX.SHARE_DIVISOR * ranges <= n
    assert [isinstance(h, MX.Exchange) for h in spy.chosen] == [expected]


@pytest.mark.parametrize("share", [0.0, 0.02])
def test_exchange_counts_of_runs_with_ties_and_empty_pieces(share: float) -> None:
    """Several sorted negative runs per range (more partition tasks than ranges), empty pieces,
    ties between and across the classes: the combined counts equal one range's."""
    rng = np.random.default_rng(3)
    n = 20_000
    y = (rng.random(n) < share).astype(np.int64)
    p = np.round(rng.random(n), 2)
    t = sm.MetricSet(auroc=sm.AUROC(), ap=sm.AveragePrecision())
    want, _ = _recorded(lambda: t.copy().update(y, p).compute())
    from streammetrics._engines.plan import make_plan

    tpl, _, plan = make_plan(t, label="y", score="p", weight=None, query=None, doc_id=None,
                             update_kwargs={}, available=["y", "p"])
    split = RC.split_of(tpl, plan, {"y": y.dtype, "p": p.dtype})
    assert split is not None
    bounds = [0, 0, 5_000, 5_001, 12_000, n]
    parts = [RC.partition_parts([(y[a:b], p[a:b])] if b > a else [], split, 8)
             for a, b in zip(bounds[:-1], bounds[1:], strict=True)]
    pieces = [MX.exchange_pieces(part, i, 3) for i, part in enumerate(parts)]
    counts = [MX.exchange_counts([pc[r] for pc in pieces], r == 0) for r in range(3)]
    assert all(c.below.dtype == np.int32 for c in counts)
    assert sum(c.neg for c in counts) == int((y == 0).sum())
    got, _ = MX.final_values([], counts, split)
    _same(got, want)
    one = RC.range_counts([RC.partition_parts([(y, p)], split, 8)[1]], False)
    both = MX.combine(counts)
    assert (both.u2, both.pos, both.neg) == (one.u2, one.pos, one.neg)
    assert np.array_equal(both.tps, one.tps) and np.array_equal(both.fps, one.fps)


@pytest.mark.parametrize("column", ["y", "p"])
def test_a_null_is_named_as_on_the_range_path(tmp_path: Path, column: str) -> None:
    """Bad input on the exchange's graph: the same error, naming the file and row, as the range
    path's (and the frame path's partition and row)."""
    df = _data(3_000, 9, 0.02, 3)
    df["y"] = df["y"].astype(float)
    df.loc[1_234, column] = np.nan
    df.iloc[:1_000].to_parquet(tmp_path / "part-0.parquet", index=False)
    df.iloc[1_000:].to_parquet(tmp_path / "part-1.parquet", index=False)
    messages = []
    for divisor in (MX.SHARE_DIVISOR, 10**9):  # the exchange, then the range path
        with pytest.MonkeyPatch.context() as mp, dask.config.set(scheduler="synchronous"):
            mp.setattr(RC, "range_count", lambda: 2)
            mp.setattr(MX, "SHARE_DIVISOR", divisor)
            spy = _Spy(mp)
            with pytest.raises(ValueError, match=rf"column '{column}' is null \(or NaN\) at row 234 of "
                                                 r"\S*part-1\.parquet") as err:
                evaluate_parquet(str(tmp_path), _set(), label="y", score="p")
            messages.append(str(err.value))
            assert not spy.chosen  # refused before the edges task
    assert messages[0] == messages[1]
    bad = _data(3_000, 4, 0.02, 3)
    bad.loc[1_234, "y"] = 2
    with pytest.raises(ValueError) as one:
        _set().update(bad["y"].to_numpy(), bad["p"].to_numpy())
    with pytest.raises(ValueError) as engine, dask.config.set(scheduler="synchronous"), \
            pytest.MonkeyPatch.context() as mp:
        mp.setattr(RC, "range_count", lambda: 2)
        evaluate(_frames(bad, [1_000]), _set(), label="y", score="p")
    # one process's words led by the column and the partition, the index counted in it
    assert str(engine.value) == f"label: column 'y' of Dask partition 1: {one.value}".replace("1234", "234")


@pytest.mark.parametrize("share", [0.0, 0.01, 0.06])
def test_local_cluster_parquet_few_positives(client: Any, tmp_path: Path, share: float) -> None:
    """A real LocalCluster of 2 workers reading Parquet (an empty file, uneven files) with few
    positives (the exchange: 2 ranges, positives <= 1/8 of the rows) or none: one process's values
    and warnings, bit for bit."""
    assert RC.range_count() == 2
    sizes = [30_000, 0, 1, 7_000, 52_000]
    frames = [_data(n, 20 + i, share, 4) for i, n in enumerate(sizes)]
    for i, f in enumerate(frames):
        f.to_parquet(tmp_path / f"part-{i}.parquet", index=False)
    whole = pd.concat(frames, ignore_index=True)
    assert MX.use_exchange(int(whole["y"].sum()), len(whole), 2)
    for order in ("ranked first", "only ranked"):
        got = _recorded(lambda o=order: evaluate_parquet(str(tmp_path), _set(o), label="y", score="p"))
        want = _single(_set(order), whole)
        _same(got[0], want[0])
        assert got[1] == want[1]
        _sklearn(got[0], whole)
    got_frame = _recorded(lambda: evaluate(_frames(whole, [10, 40_000, 40_000, 60_000]), _set(),
                                           label="y", score="p"))
    _same(got_frame[0], _single(_set(), whole)[0])
