"""Issue #32 on Dask: the last exact groups that gathered every score take the ranges --
``scores="probability"`` AUROC / AP (binary by the score ranges or, weighted / partial, the
ranked ranges; multiclass and ``by=`` by the keyed ranges), an exact group between two other
state groups in the member order (binary: the score ranges), ``classes=`` / ``pos_label=`` with string labels beside a
second exact group (each group its own codec). Values: one process's within 1e-12 (unweighted
full AUROC bit for bit); a refused batch (a probability above 1 or below 0, a label, NaN, in a
late partition): one process's error for that partition, the first in the set's group order,
nothing computed; the state path (the gather) is never taken."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

pytest.importorskip("dask.dataframe")

import dask  # noqa: E402
import engine_cases as cases  # noqa: E402
import prob_cases as pc  # noqa: E402
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

import streammetrics.dask as sm_dask  # noqa: E402
from streammetrics._engines import keyed_ranges as KR  # noqa: E402
from streammetrics._engines import range_counts as RC  # noqa: E402
from streammetrics._engines.messages import located_message  # noqa: E402
from streammetrics._engines.plan import make_plan  # noqa: E402


def _gather(*args: Any, **kwargs: Any) -> Any:
    raise AssertionError("the state path gathered every score")


def _evaluate(df: Any, case: str, cuts: list[int], ranges: int = 3, **kwargs: Any) -> Any:
    """``dask.evaluate`` of ``case`` over ``df`` cut at ``cuts``; the state path (the gather)
    refused."""
    make, label, score = pc.CASES[case]

    with pytest.MonkeyPatch.context() as mp, dask.config.set(scheduler="synchronous"):
        mp.setattr(RC, "range_count", lambda: ranges)
        mp.setattr(sm_dask, "_partition_task", _gather)
        return sm_dask.evaluate(cases.delayed_partitions(df, cuts), make(), label=label, score=score, **kwargs)


@settings(max_examples=12, deadline=None)
@given(n=st.integers(0, 300), seed=st.integers(0, 10**6), ranges=st.integers(1, 5), weighted=st.booleans(),
       by=st.sampled_from([None, "g"]), case=st.sampled_from(sorted(pc.CASES)),
       cuts=st.lists(st.integers(0, 300), max_size=4))
def test_groups_equal_one_process(n: int, seed: int, ranges: int, weighted: bool, by: Any, case: str,
                                  cuts: list[int]) -> None:
    """Every case, weighted (zeros) or not, with or without ``by=`` (string labels: numeric
    slices only without), any partitioning (empty partitions): one process within 1e-12; the
    unweighted full AUROC bit for bit."""
    if case in ("spam", "animals"):
        by = None  # Sliced reads its labels as numbers: string labels with by= gather
    df = pc.frame(n, seed)
    cuts = [min(c, n) for c in cuts]
    weight = "w" if weighted else None
    if n == 0:
        return
    got = _evaluate(df, case, cuts, ranges, weight=weight, by=by)
    want = pc.one_process(case, df, by, weighted)
    pc.assert_close(got, want)
    if not weighted:
        pc.assert_bitwise(got, want, ["a"])


@pytest.mark.parametrize(("case", "how"), [("binary", "above"), ("binary", "below"), ("multiclass", "above"),
                                          ("multiclass", "below"), ("between", "above"), ("between", "label"),
                                          ("between", "seven"), ("binary_between", "label"), ("binary_between", "seven"),
                                          ("binary_between", "above"), ("spam", "above"),
                                          ("animals", "unknown"), ("multiclass", "label")])
@pytest.mark.parametrize("weighted", [False, True])
def test_refused_in_a_late_partition(case: str, how: str, weighted: bool) -> None:
    """A bad row in the last partition: one process's error for that partition (argument,
    problem, first offending value and its index), from the group that checks first in the
    set's order; nothing computed."""
    df = pc.spoiled(pc.frame(400, 5), case, 330, how)
    want = pc.refused(case, df.iloc[300:], weighted)
    with pytest.raises(ValueError) as eng:
        _evaluate(df, case, [100, 100, 300], weight="w" if weighted else None)
    assert want in str(eng.value), (want, str(eng.value))


def test_between_group_order() -> None:
    """The refusing group decides: label -1 is refused by the probability AUROC (second in
    the set), not by F1 (first, ignores -1); label 7 by F1; NaN (a task's own batch: the
    engines refuse a null before) by F1 before the AUROC's probability check -- the other
    members before the refusing group check the batch first, on the error path only."""
    df = pc.frame(200, 8)
    for how, start in (("label", "y_true: "), ("seven", "y_true: ")):
        bad = pc.spoiled(df, "between", 20, how)
        want = pc.refused("between", bad)
        assert want.startswith(start)
        with pytest.raises(ValueError) as eng:
            _evaluate(bad, "between", [])
        assert want in str(eng.value)
    acc, _, plan = make_plan(pc.between_set(), label="y", score=pc.SCORES, weight=None, query=None, doc_id=None,
                             update_kwargs={}, available=list(df.columns))
    split = KR.split_of(acc, plan, dict(df.dtypes.items()))
    assert split is not None and [g.before for g in split.groups] == [("f",), ("f", "acc")]
    for how in ("nan", "above", "label", "seven"):
        bad = pc.spoiled(df, "between", 20, how)
        with pytest.raises(ValueError) as eng:
            KR.keyed_part([(bad.y.to_numpy(), bad[pc.SCORES].to_numpy(), None, None)], split, 8)
        # one process's words, led by the engine argument and its column(s) (messages.located)
        assert str(eng.value) == located_message(pc.refused("between", bad), plan.fed()), how


def test_binary_between_takes_the_score_ranges() -> None:
    """A binary exact group between F1 (ignoring -1) and accuracy: the score ranges (not the
    keyed ones), F1 the member before it; a refused batch raises one process's error, the
    refusing group's or, where F1 refuses it too, F1's (label 7) -- F1 offered the batch first
    on the error path only."""
    df = pc.frame(200, 9)
    acc, _, plan = make_plan(pc.binary_between_set(), label="yb", score="pb", weight=None, query=None,
                             doc_id=None, update_kwargs={}, available=list(df.columns))
    dtypes = dict(df.dtypes.items())
    split = RC.split_of(acc, plan, dtypes, labels=True)
    assert KR.split_of(acc, plan, dtypes, labels=True) is None
    assert split is not None and split.before == ("f",) and list(split.ranked) == ["a", "p"]
    for how in ("label", "seven", "above", "nan"):
        bad = pc.spoiled(df, "binary_between", 20, how)
        with pytest.raises(ValueError) as eng:
            RC.partition_parts([(bad.yb.to_numpy(), bad.pb.to_numpy())], split, 8)
        assert str(eng.value) == located_message(pc.refused("binary_between", bad), plan.fed()), how


def test_parquet_takes_the_ranges(tmp_path: Any) -> None:
    """``evaluate_parquet``: the binary probability set by the score ranges, the multiclass one
    by the keyed ranges, string labels beside a second group too; one process's values."""
    df = pc.frame(900, 12)
    for i, a in enumerate((0, 300, 600)):
        df.iloc[a : a + 300].to_parquet(tmp_path / f"part-{i}.parquet")
    for case in ("binary", "multiclass", "spam", "animals", "between"):
        make, label, score = pc.CASES[case]
        with pytest.MonkeyPatch.context() as mp, dask.config.set(scheduler="synchronous"):
            mp.setattr(sm_dask, "_partition_task", _gather)
            got = sm_dask.evaluate_parquet(str(tmp_path), make(), label=label, score=score)
        pc.assert_close(got, pc.one_process(case, df))
    assert np.isfinite(got["a"])
