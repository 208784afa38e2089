"""The saved parts of streammetrics.spark_streaming, without a Spark session: any split of a
window's rows into micro-batch parts, merged in any grouping (as the transformWithStateInPandas
list and its compaction do), gives the values of one metric fed every row at once -- metric
states and retrieval rows alike; the list processor keeps its list bounded; saved rows read
back from a checkpoint are checked."""

from __future__ import annotations

import io
import warnings
from typing import Any

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import streammetrics as sm
from streammetrics._engines.request import Request, make_run
from streammetrics._engines.spark_stream_state import Fold, Part, ValueStep, timer_ms

START_US, END_US = 1_767_225_600_000_000, 1_767_226_200_000_000


def _binary(seed: int, n: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"y": rng.integers(0, 2, n), "p": rng.integers(0, 5, n) / 4.0,
                         "w": rng.integers(1, 4, n).astype(float)})


def _retrieval(seed: int, n: int) -> pd.DataFrame:
    """``n`` documents of 6 queries, in random order (a query's documents scattered), tied scores."""
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"q": rng.choice([f"q{i}" for i in range(6)], n), "d": [f"d{i}" for i in range(n)],
                         "y": rng.integers(0, 3, n), "p": rng.integers(0, 4, n) / 4.0})


def _binary_fold() -> tuple[Fold, Any]:
    metrics = sm.MetricSet(auroc=sm.AUROC(), ap=sm.AveragePrecision(), cm=sm.ConfusionMatrix())
    run = make_run(metrics, Request(label="y", score="p", weight="w"), available=["y", "p", "w"])
    return Fold(run, metrics, []), metrics


def _retrieval_fold() -> tuple[Fold, Any]:
    metrics = sm.MetricSet(ndcg=sm.NDCG(3), mrr=sm.MRR(), recall=sm.RecallAtK(2), map=sm.MAP())
    run = make_run(metrics, Request(label="y", score="p", query="q", doc_id="d"), available=["q", "d", "y", "p"])
    return Fold(run, metrics, []), metrics


def _one_process(metrics: Any, rows: pd.DataFrame, retrieval: bool) -> dict[str, float]:
    twin = sm.MetricSet._from_config(metrics._config())
    if retrieval:
        rows = rows.sort_values("q", kind="stable")
        twin.update(rows["y"].to_numpy(), rows["p"].to_numpy(), query_ids=rows["q"].to_numpy(),
                    doc_ids=rows["d"].to_numpy())
    else:
        twin.update(rows["y"].to_numpy(), rows["p"].to_numpy(), sample_weight=rows["w"].to_numpy())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return _flat(twin.compute())


def _flat(values: dict[str, Any]) -> dict[str, float]:
    out = {}
    for name, v in values.items():
        arr = np.asarray(v, dtype=float)
        out.update({name: float(arr)} if arr.ndim == 0 else
                   {f"{name}[{', '.join(map(str, i))}]": float(x) for i, x in np.ndenumerate(arr)})
    return out


def _values(table: pd.DataFrame) -> dict[str, float]:
    return dict(zip(table["metric"], table["value"], strict=True))


def _close(got: dict[str, float], want: dict[str, float]) -> None:
    assert got.keys() == want.keys()
    for name, value in want.items():
        assert (np.isnan(value) and np.isnan(got[name])) or abs(got[name] - value) <= 1e-12, (name, got[name], value)


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(1, 80), cuts=st.lists(st.integers(0, 80), max_size=5),
       retrieval=st.booleans(), group=st.integers(1, 4))
def test_parts_in_any_grouping_equal_one_process(seed: int, n: int, cuts: list[int], retrieval: bool,
                                                 group: int) -> None:
    fold, metrics = _retrieval_fold() if retrieval else _binary_fold()
    rows = _retrieval(seed, n) if retrieval else _binary(seed, n)
    bounds = sorted({0, n, *(c for c in cuts if c < n)})
    batches = [rows.iloc[a:b] for a, b in zip(bounds, bounds[1:], strict=False)]
    parts: list[Part] = [fold.absorb(None, [b], "test") for b in batches]
    assert sum(p[1] for p in parts) == n and all(p[2] == 0 for p in parts)
    # compaction: consecutive runs of `group` parts merged into one, then the whole list merged
    runs = [fold.combine(parts[i:i + group]) for i in range(0, len(parts), group)]
    acc = fold.accumulator(runs)
    table = fold.table([], START_US, END_US, acc, sum(p[1] for p in runs), 0)
    _close(_values(table), _one_process(metrics, rows, retrieval))
    assert (table["rows"] == n).all()
    assert (table["window_start"] == pd.Timestamp(START_US, unit="us", tz="UTC")).all()
    # the applyInPandasWithState way: one part extended micro-batch by micro-batch
    saved: bytes | None = None
    for b in batches:
        saved = fold.absorb(saved, [b], "test")[0]
    assert saved is not None
    _close(_values(fold.table([], START_US, END_US, fold.accumulator([(saved, n, 0)]), n, 0)),
           _one_process(metrics, rows, retrieval))


def test_retrieval_rows_skip_nulls_and_name_a_null_row() -> None:
    metrics = sm.NDCG(3)
    rows = _retrieval(1, 20)
    rows.loc[3, "p"] = np.nan
    skip = Fold(make_run(metrics, Request(label="y", score="p", query="q", doc_id="d", nulls="skip"),
                         available=list(rows.columns)), metrics, [])
    payload, fed, skipped = skip.absorb(None, [rows], "the rows of window w")
    assert (fed, skipped) == (19, 1)
    got = _values(skip.table([], START_US, END_US, skip.accumulator([(payload, fed, skipped)]), fed, skipped))
    assert abs(got["NDCG"] - _one_process(sm.MetricSet(m=sm.NDCG(3)), rows.drop(index=3), True)["m"]) <= 1e-12
    fail = Fold(make_run(metrics, Request(label="y", score="p", query="q", doc_id="d"),
                         available=list(rows.columns)), metrics, [])
    with pytest.raises(ValueError, match=r"nulls: column 'p' is null at row 3 of the rows of window w"):
        fail.absorb(None, [rows], "the rows of window w")


def test_saved_rows_from_a_checkpoint_are_checked() -> None:
    fold, _ = _retrieval_fold()
    good = fold.absorb(None, [_retrieval(2, 10)], "test")[0]
    assert len(fold.rows_of(good)) == 10

    def npz(**arrays: Any) -> bytes:
        out = io.BytesIO()
        np.savez(out, **arrays)
        return out.getvalue()

    where = r"saved rows of a window \(the streaming checkpoint\)"
    for payload, match in [
        (b"not an archive", "not a readable archive"),
        (good[: len(good) // 2], "not a readable archive"),
        (npz(c0=np.zeros(2)), r"expected the arrays \['c0', 'c1', 'c2', 'c3'\], got \['c0'\]"),
        (npz(c0=np.zeros(2), c1=np.zeros(2), c2=np.array(["a", "b"]), c3=np.zeros(3)), "the columns are not 1-D arrays of one length"),
        (npz(c0=np.array(["1", "2"]), c1=np.zeros(2), c2=np.array(["a", "b"]), c3=np.array(["x", "y"])),
         r"column 'y' has dtype <U1, expected numbers"),
        (npz(c0=np.zeros(2), c1=np.zeros(2), c2=np.array([{}, {}], dtype=object), c3=np.zeros(2)),
         "not a readable archive"),  # an object array: never unpickled
    ]:
        with pytest.raises(ValueError, match=f"{where}: {match}"):
            fold.rows_of(payload)
    out = io.BytesIO()
    np.save(out, np.zeros(3))
    with pytest.raises(ValueError, match=f"{where}: expected an .npz archive, got a ndarray"):
        fold.rows_of(out.getvalue())


def test_timer_closes_the_window_at_its_end() -> None:
    assert timer_ms(END_US) == END_US // 1000
    assert timer_ms(END_US + 1) == END_US // 1000 + 1  # a window ending inside a millisecond


class _State:
    """An in-memory ``GroupState`` of ``applyInPandasWithState``."""

    def __init__(self) -> None:
        self.value: Any = None
        self.hasTimedOut = False
        self.timeout: int | None = None

    @property
    def exists(self) -> bool:
        return self.value is not None

    @property
    def get(self) -> Any:
        return self.value

    def update(self, value: Any) -> None:
        self.value = value

    def remove(self) -> None:
        self.value = None

    def setTimeoutTimestamp(self, ms: int) -> None:  # noqa: N802
        self.timeout = ms


class _Handle:
    """An in-memory ``StatefulProcessorHandle``: one list, one value, the timers."""

    def __init__(self) -> None:
        self.timers: set[int] = set()
        self.lengths: list[int] = []
        handle = self

        class _List:
            items: list[Any] = []

            def get(self) -> Any:
                return iter(list(self.items))

            def appendValue(self, v: Any) -> None:  # noqa: N802
                self.items = [*self.items, v]
                handle.lengths.append(len(self.items))

            def put(self, vs: list[Any]) -> None:
                self.items = list(vs)
                handle.lengths.append(len(self.items))

            def clear(self) -> None:
                self.items = []

        class _Value:
            v: Any = None

            def get(self) -> Any:
                return self.v

            def update(self, v: Any) -> None:
                self.v = v

            def clear(self) -> None:
                self.v = None

        self.list, self.value = _List(), _Value()

    def getListState(self, name: str, schema: str) -> Any:  # noqa: N802
        return self.list

    def getValueState(self, name: str, schema: str) -> Any:  # noqa: N802
        return self.value

    def registerTimer(self, ms: int) -> None:  # noqa: N802
        self.timers.add(ms)


@pytest.mark.parametrize("retrieval", [False, True])
@pytest.mark.parametrize("mode", ["append", "update"])
def test_list_processor_bounds_its_list_and_emits_one_process_values(mode: str, retrieval: bool) -> None:
    pytest.importorskip("pyspark.sql.streaming.stateful_processor")
    from streammetrics._engines.spark_stream_list import ListStep

    fold, metrics = _retrieval_fold() if retrieval else _binary_fold()
    step = ListStep(fold, mode, max_parts=3)
    handle = _Handle()
    step.init(handle)  # type: ignore[arg-type]
    rows = _retrieval(5, 100) if retrieval else _binary(5, 100)
    key = ("a", START_US, END_US)
    fold.keys = ["k"]
    batches = [rows.iloc[i:i + 10] for i in range(0, 100, 10)]
    emitted = []
    for i, b in enumerate(batches):
        out = list(step.handleInputRows(key, iter([b]), None))
        if mode == "update":
            (table,) = out
            _close(_values(table), _one_process(metrics, rows.iloc[:10 * (i + 1)], retrieval))
            assert (table["rows"] == 10 * (i + 1)).all() and (table["k"] == "a").all()
        else:
            assert out == []
        emitted += out
    assert handle.timers == {END_US // 1000}
    assert max(handle.lengths) == 3 and handle.lengths[:4] == [1, 2, 3, 1]  # the 4th part compacted
    closed = list(step.handleExpiredTimer(key, None, None))
    assert handle.list.items == [] and handle.value.v is None
    if mode == "append":
        (table,) = closed
        _close(_values(table), _one_process(metrics, rows, retrieval))
        assert (table["rows"] == 100).all()
    else:
        assert closed == []
    # applyInPandasWithState's step on the same batches: the same values
    value_step, state = ValueStep(fold, mode), _State()
    for b in batches:
        list(value_step(key, iter([b]), state))
    assert state.timeout == END_US // 1000
    state.hasTimedOut = True
    final = list(value_step(key, iter([]), state))
    if mode == "append":
        _close(_values(final[0]), _one_process(metrics, rows, retrieval))
    assert state.value is None
