"""Issue #32 on Dask: ``AUROC(max_fpr=...)`` and sets mixing an exact binary AUROC / AP group with
other ranking groups no longer gather every score. A set with a ``max_fpr`` member goes by the
ranked route (each range task knows the weight above it and sends its part of the partial area:
O(1) numbers); a bounded ``AUROC(max_bytes=...)`` beside the exact group travels as states
(O(bins)). Values: scikit-learn / one process within 1e-12; what the root receives is counted
with the synchronous scheduler, the values checked again on a real LocalCluster."""

from __future__ import annotations

import warnings
from typing import Any

import pytest

pytest.importorskip("dask.dataframe")
pytest.importorskip("sklearn")

import dask  # noqa: E402
import dask.dataframe as dd  # noqa: E402
import engine_cases as cases  # noqa: E402
import pandas as pd  # noqa: E402
import partial_auc_cases as pac  # noqa: E402
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from sklearn.metrics import roc_auc_score  # noqa: E402

import streammetrics as sm  # noqa: E402
import streammetrics._engines.range_counts as RC  # noqa: E402
import streammetrics.dask as sm_dask  # noqa: E402
from streammetrics.dask import evaluate, evaluate_parquet, evaluate_ranked  # noqa: E402

_frames = cases.delayed_partitions


class _Root:
    """Counts what the root of either route receives: the other members' states merged at the
    root (``_root_task``, ``_final_task``), the ranges' outputs, the ranked route's summaries."""

    def __init__(self, mp: pytest.MonkeyPatch) -> None:
        self.states: list[int] = []
        self.ranges: list[int] = []
        root, final, summarised = sm_dask._root_task, sm_dask._final_task, RC.summarised

        def root_task(states: Any, *args: Any) -> Any:
            self.states += [pac.numbers(s) for s in states]
            return root(states, *args)

        def final_task(rest: Any, ranges: Any, split: Any, *warned: Any) -> Any:
            self.states += [pac.numbers(s) for s in rest]
            self.ranges += [pac.numbers(r) for r in ranges]
            return final(rest, ranges, split, *warned)

        def summaries(split: Any, rest: Any, got: Any, totals: Any) -> Any:
            self.ranges += [pac.numbers(s) for s in got]
            return summarised(split, rest, got, totals)

        mp.setattr(sm_dask, "_root_task", root_task)
        mp.setattr(sm_dask, "_final_task", final_task)
        mp.setattr(RC, "summarised", summaries)


@settings(max_examples=25, deadline=None)
@given(n=st.integers(0, 300), seed=st.integers(0, 10**6), decimals=st.integers(0, 2), weighted=st.booleans(),
       m=st.sampled_from([0.1, 0.5, 1.0, 0.3333]), order=st.sampled_from(["only ranked", "ranked first", "rest first"]),
       data=st.data())
def test_max_fpr_sets_equal_one_process_and_sklearn(n: int, seed: int, decimals: int, weighted: bool, m: float,
                                                    order: str, data: Any) -> None:
    """Any partitions (empty ones too), ties, weights, one class: one process's values and
    warnings; the partial AUROC scikit-learn's to 1e-12; no state and no range output at the
    root holds the scores."""
    df = pac.data(n, seed, decimals, weighted)
    metrics = pac.metric_set(order, m)
    want, warned = pac.one_process(metrics, df)
    cuts = data.draw(st.lists(st.integers(0, n), max_size=4))
    with pytest.MonkeyPatch.context() as mp, dask.config.set(scheduler="synchronous"), \
            warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        root = _Root(mp)
        got = evaluate(_frames(df, cuts), metrics, label="y", score="p", weight="w" if weighted else None)
    pac.close(got, want)
    assert sorted(str(w.message) for w in caught) == warned
    if pac.defined(df):
        w = df.w.to_numpy() if weighted else None
        assert abs(got["part"] - roc_auc_score(df.y, df.p, max_fpr=m, sample_weight=w)) <= 1e-12
    # the ranked route (weights, or a max_fpr below 1): O(1) numbers a range (+1 per max_fpr); the
    # integer range path (max_fpr=1 is the full area) with AP: 2 counts per distinct positive score
    ranked = weighted or m < 1
    bound = 12 if ranked else 12 + 2 * df.p[df.y == 1].nunique()
    assert root.ranges and max(root.ranges) <= bound, (root.ranges, bound)
    assert all(s <= pac.REST_NUMBERS for s in root.states)  # F1's counts and the bounded bins, no score


def test_root_receives_no_score_at_scale() -> None:
    """20,000 rows in 4 partitions: the root's inputs do not grow with the rows (the bounded
    AUROC's bins, F1's counts, a few numbers per range)."""
    df = pac.data(20_000, 5, 4, True)
    metrics = pac.metric_set("rest first", 0.2)
    want, _ = pac.one_process(metrics, df)
    with pytest.MonkeyPatch.context() as mp, dask.config.set(scheduler="synchronous"):
        root = _Root(mp)
        got = evaluate(_frames(df, [5_000, 10_000, 15_000]), metrics, label="y", score="p", weight="w")
    pac.close(got, want)
    assert len(root.ranges) == 8 and max(root.ranges) <= 12
    assert len(root.states) == 4 and max(root.states) <= pac.REST_NUMBERS, root.states


@pytest.mark.parametrize("order", ["exact first", "between"])
@pytest.mark.parametrize("weighted", [False, True])
def test_mixed_exact_and_bounded_groups_go_by_ranges(weighted: bool, order: str) -> None:
    """An exact AUROC / AP group beside a bounded AUROC (two ranking states) used to gather the
    whole set; now the exact group goes by ranges (unweighted: the integer range path, bit for
    bit) and the bounded one travels as a state -- also with the exact group between the
    bounded AUROC and F1 in the member order (the score ranges keep one process's error order:
    ``rest_order.checked_first``)."""
    df = pac.data(3_000, 8, 3, weighted)
    exact = {"auroc": sm.AUROC(), "ap": sm.AveragePrecision()}
    bounded = {"bounded": sm.AUROC(max_bytes=2048)}
    metrics = sm.MetricSet({**exact, **bounded, "f1": sm.F1()} if order == "exact first"
                           else {**bounded, **exact, "f1": sm.F1()})
    want, _ = pac.one_process(metrics, df)
    with pytest.MonkeyPatch.context() as mp, dask.config.set(scheduler="synchronous"):
        root = _Root(mp)
        mp.setattr(RC, "range_count", lambda: 3)
        got = evaluate(_frames(df, [1_000, 2_000]), metrics, label="y", score="p",
                       weight="w" if weighted else None)
    if weighted:
        pac.close(got, want)
    else:
        assert got == want  # the integer range path: bit for bit
    assert root.ranges and all(s <= pac.REST_NUMBERS for s in root.states)
    # with AP, the unweighted ranges send their counts at the distinct positive scores (<= 1000 here)
    assert max(root.ranges) <= (12 if weighted else 2 * 1_000 + 12)


@pytest.mark.parametrize("readout", ["max_fpr", "ks"])
@pytest.mark.parametrize("case", ["no positives", "no negatives", "positives weigh zero", "empty"])
def test_undefined_partial_auroc_warns_as_one_process(case: str, readout: str) -> None:
    """A class absent: nan and one process's warnings, for a partial AUROC or a KSStatistic
    (the ranked route's other readout, :mod:`test_dask_ks`)."""
    df = pac.one_class(pac.data(200, 4, 2, True), case)
    first = sm.AUROC(max_fpr=0.3) if readout == "max_fpr" else sm.KSStatistic()
    metrics = sm.MetricSet(part=first, auroc=sm.AUROC(), f1=sm.F1())
    want, warned = pac.one_process(metrics, df)
    with dask.config.set(scheduler="synchronous"), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = evaluate(_frames(df, [50, 50]), metrics, label="y", score="p", weight="w")
    pac.close(got, want)
    assert sorted(str(w.message) for w in caught) == warned


def test_evaluate_ranked_accepts_max_fpr() -> None:
    df = pac.data(2_000, 9, 2, True)
    metrics = {"a": sm.AUROC(max_fpr=0.05), "b": sm.AUROC(max_fpr=0.5), "c": sm.AUROC(max_fpr=1),
               "d": sm.AUROC(), "roc": sm.ROCCurve()}
    with dask.config.set(scheduler="synchronous"):
        got = evaluate_ranked(dd.from_pandas(df, npartitions=3), metrics, label="y", score="p", weight="w",
                              ranges=[0.1, 0.5, 0.5, 0.9])  # a repeated edge: an empty range
    for name, m in (("a", 0.05), ("b", 0.5), ("c", None), ("d", None)):
        assert abs(got[name] - roc_auc_score(df.y, df.p, max_fpr=m, sample_weight=df.w)) <= 1e-12, name
    assert abs(got["roc"].area(0.5) - got["b"]) <= 1e-12


def test_local_cluster_and_parquet(client: Any, tmp_path: Any) -> None:
    """A real 2-process LocalCluster: a frame and Parquet files (an empty one), weighted or not."""
    frames = [pac.data(k, 30 + i, 2, True) for i, k in enumerate([900, 0, 1_400])]
    for i, f in enumerate(frames):
        f.to_parquet(tmp_path / f"part-{i}.parquet", index=False)
    df = pd.concat(frames, ignore_index=True)
    metrics = sm.MetricSet(f1=sm.F1(), part=sm.AUROC(max_fpr=0.2), auroc=sm.AUROC(),
                           bounded=sm.AUROC(max_bytes=2048))
    for weight in ("w", None):
        want, _ = pac.one_process(metrics, df if weight else df.drop(columns="w"))
        pac.close(evaluate_parquet(str(tmp_path), metrics, label="y", score="p", weight=weight), want)
        pac.close(evaluate(dd.from_pandas(df, npartitions=4), metrics, label="y", score="p", weight=weight), want)
    assert abs(evaluate_ranked(str(tmp_path), sm.AUROC(max_fpr=0.2), label="y", score="p", weight="w")
               - roc_auc_score(df.y, df.p, max_fpr=0.2, sample_weight=df.w)) <= 1e-12
    assert cases is not None


@pytest.mark.parametrize(("metrics", "weight"), [
    (sm.MetricSet(auroc=sm.AUROC(), f1=sm.F1()), "w"),  # the weighted route, F1 fed by its runs tasks
    (sm.MetricSet(part=sm.AUROC(max_fpr=0.3)), None),  # the ranked route, unweighted
    (sm.MetricSet(auroc=sm.AUROC()), None),  # the score-range path
    (sm.MetricSet(f1=sm.F1()), "w"),  # the state path
], ids=["weighted set", "partial", "ranges", "states"])
def test_nulls_skip_counts_the_rows_in_one_read_of_each_partition(metrics: Any, weight: str | None) -> None:
    """Issue #32 (review): the weighted / partial route counted ``nulls="skip"`` rows with a task
    of its own that read every partition again; its runs tasks now report the rows they dropped.
    The warning's count is the rows holding a null in a used column, each partition is read
    once (a counting loader), and the values are one process's over the kept rows."""
    import uuid

    from streammetrics._engines.request import NullRowsSkipped

    df = pac.data(400, 11, 2, True)
    df.loc[[3, 150, 399], "p"] = float("nan")
    df.loc[[200, 3], "w"] = float("nan")  # row 3: two nulls, one row
    parts = [df.iloc[i : i + 100] for i in range(0, 400, 100)]
    reads: list[int] = []

    def load(i: int, call: str) -> pd.DataFrame:
        reads.append(i)
        return parts[i]

    # ``call`` makes the expression unique: Dask would reuse an earlier case's (and its loader)
    ddf = dd.from_map(load, range(4), meta=df.iloc[:0], enforce_metadata=False, call=uuid.uuid4().hex)
    used = ["y", "p"] if weight is None else ["y", "p", "w"]
    kept = df[used].dropna()
    want, _ = pac.one_process(metrics, kept)
    with dask.config.set(scheduler="synchronous"), pytest.warns(NullRowsSkipped) as caught:
        got = evaluate(ddf, metrics, label="y", score="p", weight=weight, nulls="skip")
    assert [str(w.message) for w in caught] == [
        f"nulls: skipped {len(df) - len(kept)} row(s) holding a null in {used}"]
    assert sorted(reads) == [0, 1, 2, 3]
    pac.close(got, want)
