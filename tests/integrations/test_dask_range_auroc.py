"""Issue #32 item 2 on streammetrics.dask.evaluate's range path: an AUROC-only set sends the root
O(R) numbers (observed with a dask callback on what the root task receives), the values still the
single process's bit for bit; ``nulls="skip"`` stays on the range path with the state path's values
and warning; weighted exact AUROC / AP go by the ranked engine (no gather) within 1e-12 of
scikit-learn with ``sample_weight``."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest

pytest.importorskip("dask.dataframe")
pytest.importorskip("sklearn")

import dask  # noqa: E402
import engine_cases as cases  # noqa: E402
import pandas as pd  # noqa: E402
from dask.callbacks import Callback  # noqa: E402
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from sklearn.metrics import average_precision_score, roc_auc_score  # noqa: E402

import streammetrics as sm  # noqa: E402
import streammetrics._engines.minority as MX  # noqa: E402
import streammetrics._engines.range_counts as RC  # noqa: E402
import streammetrics.dask as sm_dask  # noqa: E402
from streammetrics._engines.request import NullRowsSkipped  # noqa: E402
from streammetrics.dask import evaluate  # noqa: E402

_frames = cases.delayed_partitions




class _RootInputs(Callback):  # type: ignore[misc]
    """Records the numbers in the outputs of the range tasks: the root task's ranked inputs."""

    def __init__(self) -> None:
        super().__init__()
        self.ranges: list[int] = []

    def _posttask(self, key: Any, result: Any, dsk: Any, state: Any, worker_id: Any) -> None:
        if isinstance(key, tuple) and len(key) >= 2 and key[1] == "range":
            self.ranges.append(cases.numbers_in(result))


def _same(got: dict[str, Any], want: dict[str, Any]) -> None:
    assert list(got) == list(want)
    for k in want:
        assert np.array_equal(np.asarray(got[k]), np.asarray(want[k]), equal_nan=True), (k, got[k], want[k])


@pytest.mark.parametrize("exchange", [False, True])
@pytest.mark.parametrize("ranges", [1, 3])
def test_auroc_only_root_receives_o_of_r_numbers(ranges: int, exchange: bool) -> None:
    """Continuous scores (every positive score distinct): with AP the ranges send ~2 numbers per
    positive; AUROC only, at most 5 numbers per range whatever the rows -- same values bit for bit."""
    rng = np.random.default_rng(3)
    n = 20_000
    y = (rng.random(n) < (0.02 if exchange else 0.5)).astype(np.int64)
    df = pd.DataFrame({"y": y, "p": rng.random(n)})
    want = sm.MetricSet(auroc=sm.AUROC()).update(df.y.to_numpy(), df.p.to_numpy()).compute()
    seen = {}
    for label in ("auroc", "both"):
        members = {"auroc": sm.AUROC(), **({"ap": sm.AveragePrecision()} if label == "both" else {})}
        spy = _RootInputs()
        with pytest.MonkeyPatch.context() as mp, dask.config.set(scheduler="synchronous"), spy:
            mp.setattr(RC, "range_count", lambda: ranges)
            got = evaluate(_frames(df, [5_000, 5_000, 12_000]), sm.MetricSet(members), label="y", score="p")
        assert len(spy.ranges) == ranges
        seen[label] = sum(spy.ranges)
        if label == "auroc":
            _same(got, want)
    assert seen["auroc"] <= 5 * ranges  # pos, neg, u2 and two empty arrays per range
    assert seen["both"] >= 2 * int(y.sum())  # the per-positive counts AP needs (the check can fail)
    if exchange and ranges > 1:
        assert MX.use_exchange(int(y.sum()), n, ranges)


@settings(max_examples=25, deadline=None)
@given(n=st.integers(0, 300), seed=st.integers(0, 10**6), ranges=st.integers(1, 5),
       share=st.sampled_from([0.02, 0.5]), data=st.data())
def test_auroc_only_equals_one_process(n: int, seed: int, ranges: int, share: float, data: Any) -> None:
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({"y": (rng.random(n) < share).astype(np.int64), "p": np.round(rng.random(n), 2)})
    metrics = sm.MetricSet(auroc=sm.AUROC(), f1=sm.F1())
    with warnings.catch_warnings(record=True) as w1:
        warnings.simplefilter("always")
        want = metrics.copy().update(df.y.to_numpy(), df.p.to_numpy()).compute() if n else None
    cuts = data.draw(st.lists(st.integers(0, n), max_size=5))
    with pytest.MonkeyPatch.context() as mp, dask.config.set(scheduler="synchronous"), \
            warnings.catch_warnings(record=True) as w2:
        warnings.simplefilter("always")
        mp.setattr(RC, "range_count", lambda: ranges)
        got = evaluate(_frames(df, cuts), metrics, label="y", score="p")
    if want is not None:
        _same(got, want)
        assert sorted(str(w.message) for w in w1) == sorted(str(w.message) for w in w2)


class _Spy:
    def __init__(self, mp: pytest.MonkeyPatch) -> None:
        self.splits: list[Any] = []
        real = RC.split_of

        def spy(*args: Any, **kwargs: Any) -> Any:
            out = real(*args, **kwargs)
            self.splits.append(out)
            return out
        mp.setattr(RC, "split_of", spy)


@pytest.mark.parametrize("ranges", [1, 3])
@pytest.mark.parametrize("order", ["ranked first", "rest first"])
def test_nulls_skip_stays_on_the_range_path_with_the_state_paths_values(ranges: int, order: str) -> None:
    """nulls="skip" used to turn the range path off (a gather); now its partition tasks drop the
    rows as the state path does: the same values and the same skipped-rows warning."""
    rng = np.random.default_rng(11)
    n = 3_000
    df = pd.DataFrame({"y": rng.integers(0, 2, n).astype(float), "p": np.round(rng.random(n), 2)})
    df.loc[df.index[::37], "y"] = np.nan
    df.loc[df.index[5::53], "p"] = np.nan
    ranked = {"auroc": sm.AUROC(), "ap": sm.AveragePrecision()}
    rest = {"f1": sm.F1(), "cm": sm.ConfusionMatrix()}
    metrics = sm.MetricSet({**ranked, **rest} if order == "ranked first" else {**rest, **ranked})
    kept = df.dropna()
    want = metrics.copy().update(kept.y.to_numpy(), kept.p.to_numpy()).compute()
    frames = _frames(df, [0, 700, 701, 2_000])
    with pytest.MonkeyPatch.context() as mp, dask.config.set(scheduler="synchronous"):
        mp.setattr(RC, "range_count", lambda: ranges)
        spy = _Spy(mp)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            got = evaluate(frames, metrics, label="y", score="p", nulls="skip")
        assert spy.splits and spy.splits[-1] is not None  # the range path
    with warnings.catch_warnings(record=True) as ws, dask.config.set(scheduler="synchronous"):
        warnings.simplefilter("always")  # the state path (compute=False: a merged state)
        state = evaluate(frames, metrics, label="y", score="p", nulls="skip", compute=False).compute()
    _same(got, want)
    _same(got, state)
    skipped = [str(x.message) for x in w if "skipped" in str(x.message)]
    assert skipped == [str(x.message) for x in ws if "skipped" in str(x.message)]
    assert skipped == [f"nulls: skipped {n - len(kept)} row(s) holding a null in ['y', 'p']"]


class _States(Callback):  # type: ignore[misc]
    """Records the numbers in every state a partition task makes (the state tree's inputs) and in
    every range summary (the ranked route's root inputs)."""

    def __init__(self) -> None:
        super().__init__()
        self.states: list[int] = []
        self.summaries: list[int] = []
        self.names: list[str] = []

    def _posttask(self, key: Any, result: Any, dsk: Any, state: Any, worker_id: Any) -> None:
        name = key[0] if isinstance(key, tuple) else key
        if isinstance(name, str) and name.startswith("_partition_task"):
            self.states.append(sum(np.asarray(v).size for v in result.values()))
        if isinstance(name, str) and name.startswith("_rest_of") and result is not None:  # fed by a runs task
            self.states.append(sum(np.asarray(v).size for v in result.values()))
        if isinstance(name, str):
            self.names.append(name)
        if isinstance(name, str) and name.startswith("_range_task"):
            self.summaries.append(cases.numbers_in(result))


def _close(got: dict[str, Any], want: dict[str, Any]) -> None:
    """Within 1e-12 (weighted: float sums in another order), nan where one process gives nan."""
    assert list(got) == list(want)
    for k in want:
        np.testing.assert_allclose(np.asarray(got[k], dtype=float), np.asarray(want[k], dtype=float),
                                   rtol=1e-12, atol=1e-12, err_msg=k)


def _weighted_data(n: int, seed: int, decimals: int) -> pd.DataFrame:
    """Labels, tied scores and weights: half of them multiples of 0.5 (zeros among them), half
    arbitrary floats."""
    rng = np.random.default_rng(seed)
    w = np.where(rng.random(n) < 0.5, rng.integers(0, 4, n) * 0.5, np.round(rng.random(n), 3))
    return pd.DataFrame({"y": rng.integers(0, 2, n), "p": np.round(rng.random(n), decimals), "w": w})


@settings(max_examples=20, deadline=None)
@given(n=st.integers(1, 300), seed=st.integers(0, 10**6), decimals=st.integers(0, 3),
       order=st.sampled_from(["ranked first", "rest first", "only ranked"]), data=st.data())
def test_weighted_route_matches_sklearn_and_one_process(n: int, seed: int, decimals: int, order: str,
                                                        data: Any) -> None:
    """Weighted exact AUROC / AP (ties, zero weights) by the ranked engine: scikit-learn with
    ``sample_weight`` to 1e-12, the other members the single process's (1e-12: float weights),
    the same undefined-value warnings; no partition state holds the scores."""
    df = _weighted_data(n, seed, decimals)
    ranked = {"auroc": sm.AUROC(), "ap": sm.AveragePrecision()}
    rest = {"f1": sm.F1(), "cm": sm.ConfusionMatrix()}
    members = {"only ranked": ranked, "ranked first": {**ranked, **rest}, "rest first": {**rest, **ranked}}[order]
    metrics = sm.MetricSet(members)
    with warnings.catch_warnings(record=True) as w1:
        warnings.simplefilter("always")
        want = metrics.copy().update(df.y.to_numpy(), df.p.to_numpy(), sample_weight=df.w.to_numpy()).compute()
    cuts = data.draw(st.lists(st.integers(0, n), max_size=5))
    spy = _States()
    with dask.config.set(scheduler="synchronous"), warnings.catch_warnings(record=True) as w2, spy:
        warnings.simplefilter("always")
        got = evaluate(_frames(df, cuts), metrics, label="y", score="p", weight="w")
    _close(got, want)
    assert sorted(str(w.message) for w in w1) == sorted(str(w.message) for w in w2)
    pos, neg = df.w[df.y == 1].sum(), df.w[df.y == 0].sum()
    if pos > 0 and neg > 0:
        assert abs(got["auroc"] - roc_auc_score(df.y, df.p, sample_weight=df.w)) <= 1e-12
        assert abs(got["ap"] - average_precision_score(df.y, df.p, sample_weight=df.w)) <= 1e-12
    assert spy.summaries and max(spy.summaries) <= 8  # a range sends O(1) numbers
    assert all(s <= 16 for s in spy.states)  # F1's and the 2x2 matrix's counts, never the scores


@pytest.mark.parametrize("case", ["positives weigh zero", "no negatives", "empty"])
def test_weighted_route_undefined_values_warn_as_one_process(case: str) -> None:
    df = _weighted_data(200, 4, 2)
    if case == "positives weigh zero":
        df.loc[df.y == 1, "w"] = 0.0
    elif case == "no negatives":
        df["y"] = 1
    else:
        df = df.iloc[:0]
    metrics = sm.MetricSet(auroc=sm.AUROC(), ap=sm.AveragePrecision(), f1=sm.F1())
    with warnings.catch_warnings(record=True) as w1:
        warnings.simplefilter("always")
        acc = metrics.copy()
        if len(df):
            acc.update(df.y.to_numpy(), df.p.to_numpy(), sample_weight=df.w.to_numpy())
        want = acc.compute()
    with dask.config.set(scheduler="synchronous"), warnings.catch_warnings(record=True) as w2:
        warnings.simplefilter("always")
        got = evaluate(_frames(df, [50, 50]), metrics, label="y", score="p", weight="w")
    _close(got, want)
    assert sorted(str(w.message) for w in w1) == sorted(str(w.message) for w in w2)


def test_weighted_parquet_by_the_ranked_route(tmp_path: Any) -> None:
    """evaluate_parquet with weight=: the ranked route (range tasks), scikit-learn to 1e-12."""
    pytest.importorskip("pyarrow")
    frames = [_weighted_data(n, 20 + i, 3) for i, n in enumerate([700, 0, 1_300])]
    for i, f in enumerate(frames):
        f.to_parquet(tmp_path / f"part-{i}.parquet", index=False)
    df = pd.concat(frames, ignore_index=True)
    metrics = sm.MetricSet(auroc=sm.AUROC(), f1=sm.F1(), ap=sm.AveragePrecision())
    want = metrics.copy().update(df.y.to_numpy(), df.p.to_numpy(), sample_weight=df.w.to_numpy()).compute()
    spy = _States()
    with dask.config.set(scheduler="synchronous"), spy:
        got = sm_dask.evaluate_parquet(str(tmp_path), metrics, label="y", score="p", weight="w")
    _close(got, want)
    assert abs(got["auroc"] - roc_auc_score(df.y, df.p, sample_weight=df.w)) <= 1e-12
    assert abs(got["ap"] - average_precision_score(df.y, df.p, sample_weight=df.w)) <= 1e-12
    assert spy.summaries and max(spy.summaries) <= 8
    # one read: the files are read by the runs tasks only, which also feed F1 (small states);
    # before, F1's states came from read_parquet's partitions, a second read of every file
    assert sum(n.startswith("_file_runs_task") for n in spy.names) >= 1, sorted(set(spy.names))
    assert not [n for n in spy.names if "parquet" in n.lower()], sorted(set(spy.names))
    assert spy.states and all(s <= 16 for s in spy.states)


def test_local_cluster_weighted_and_nulls_skip(client: Any) -> None:
    """On two worker processes: the weighted route within 1e-12 of one process and scikit-learn;
    nulls="skip" on the range path (2 ranges) equal to one process over the kept rows, AUROC only."""
    df = _weighted_data(6_000, 9, 3)
    metrics = sm.MetricSet(auroc=sm.AUROC(), ap=sm.AveragePrecision(), cm=sm.ConfusionMatrix())
    want = metrics.copy().update(df.y.to_numpy(), df.p.to_numpy(), sample_weight=df.w.to_numpy()).compute()
    got = evaluate(_frames(df, [1_000, 1_000, 4_500]), metrics, label="y", score="p", weight="w")
    _close(got, want)
    assert abs(got["auroc"] - roc_auc_score(df.y, df.p, sample_weight=df.w)) <= 1e-12
    holed = df.astype({"y": float})
    holed.loc[holed.index[::41], "y"] = np.nan
    kept = holed.dropna()
    one = sm.MetricSet(auroc=sm.AUROC(), f1=sm.F1())
    want = one.copy().update(kept.y.to_numpy(), kept.p.to_numpy()).compute()
    assert RC.range_count() == 2
    with pytest.warns(NullRowsSkipped, match=f"skipped {len(holed) - len(kept)} row"):
        got = evaluate(_frames(holed, [2_000]), one, label="y", score="p", nulls="skip")
    _same(got, want)
