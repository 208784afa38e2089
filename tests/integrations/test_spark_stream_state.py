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
        self.watermark_ms = 0  # the micro-batch's event-time watermark (none passed yet)

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

    def getCurrentWatermarkMs(self) -> int:  # noqa: N802
        return self.watermark_ms


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


def _steps(fold: Fold) -> list[tuple[str, Any, Any]]:
    """Both state APIs' steps on one key and window (the list one when pyspark has it)."""
    out: list[tuple[str, Any, Any]] = [("value", ValueStep(fold, "append"), _State())]
    try:
        from streammetrics._engines.spark_stream_list import ListStep
    except ImportError:  # pyspark < 4.0: no transformWithStateInPandas
        return out
    step, handle = ListStep(fold, "append", max_parts=2), _Handle()
    step.init(handle)  # type: ignore[arg-type]
    return [*out, ("list", step, handle)]


def _feed(api: str, step: Any, store: Any, batch: pd.DataFrame) -> None:
    key = ("a", START_US, END_US)
    if api == "value":
        list(step(key, iter([batch]), store))
    else:
        list(step.handleInputRows(key, iter([batch]), None))


def _saved(api: str, store: Any) -> Any:
    return store.value if api == "value" else (list(store.list.items), store.value.v)


def _close_window(api: str, step: Any, store: Any) -> pd.DataFrame:
    key = ("a", START_US, END_US)
    if api == "value":
        store.hasTimedOut = True
        (table,) = list(step(key, iter([]), store))
        return table
    (table,) = list(step.handleExpiredTimer(key, None, None))
    return table


@pytest.mark.parametrize("bad", ["within", "across", "grade", "n_relevant"])
def test_retrieval_rows_are_refused_at_the_micro_batch_that_brings_them(bad: str) -> None:
    """A duplicate document (within one micro-batch, or across two of one window), a grade the
    metrics refuse, or a query the metrics refuse whole: refused by the micro-batch that brings
    it, with the argument, the value and the window named, and nothing of it saved; the accepted
    micro-batches still give the values of one process."""
    metrics = sm.MetricSet(ndcg=sm.NDCG(3), mrr=sm.MRR(), map=sm.MAP())
    kwargs = {"n_relevant": {f"q{i}": 3 for i in range(6)}} if bad == "n_relevant" else {}
    run = make_run(metrics, Request(label="y", score="p", query="q", doc_id="d", update_kwargs=kwargs),
                   available=["q", "d", "y", "p"])
    fold = Fold(run, metrics, ["k"])
    rows = _retrieval(7, 60)
    rows["y"] = rows["y"].clip(upper=1)
    if bad == "n_relevant":  # at most 3 relevant documents per query, as n_relevant says
        rows["y"] = (rows.groupby("q").cumcount() < 2).astype(int) * rows["y"]
    good = [rows.iloc[:20], rows.iloc[20:40], rows.iloc[40:]]
    wrong = rows.iloc[40:44].copy()
    if bad == "within":
        wrong.loc[wrong.index[3], ["q", "d"]] = wrong.loc[wrong.index[1], ["q", "d"]].to_numpy()
        match = (fr"doc_id: duplicate document '{wrong['d'].iloc[1]}' in query '{wrong['q'].iloc[1]}' "
                 r"\(column 'd'\): rows 1 and 3 of the micro-batch rows of window \[.*\) of key \('a',\)")
    elif bad == "across":
        wrong.loc[wrong.index[2], ["q", "d"]] = rows.loc[rows.index[25], ["q", "d"]].to_numpy()
        match = (fr"doc_id: duplicate document '{rows['d'].iloc[25]}' in query '{rows['q'].iloc[25]}' "
                 r"\(column 'd'\): row 2 of the micro-batch rows of window .* already saved for the window "
                 "by an earlier micro-batch")
    elif bad == "grade":
        wrong["y"] = wrong["y"].astype(float)
        wrong.loc[wrong.index[2], "y"] = np.inf
        match = r"relevance: grades must be finite numbers .* first invalid value np.float64\(inf\) at index 2 -- in the micro-batch rows .* of key \('a',\) \(index 2 is row 2\)"
    else:  # a fourth relevant document of a query already holding 2 (its rows fed whole)
        held = rows.iloc[:40]
        relevant = held[held["y"] == 1].groupby("q").size()
        q = relevant[relevant == 2].index[0]  # new rows alone (2 relevant) would pass
        wrong = pd.DataFrame({"q": [q, q], "d": ["new1", "new2"], "y": [1, 1], "p": [0.5, 0.25]})
        match = fr"relevance: query '{q}' retrieved 4 relevant documents .* -- in the micro-batch rows"
    for api, step, store in _steps(fold):
        _feed(api, step, store, good[0])
        _feed(api, step, store, good[1])
        before = _saved(api, store)
        with pytest.raises(ValueError, match=match) as info:
            _feed(api, step, store, wrong)
        assert "the micro-batch is refused, nothing of it saved" in str(info.value)
        assert _saved(api, store) == before  # nothing saved for the refused micro-batch
        _feed(api, step, store, good[2])
        table = _close_window(api, step, store)
        _close(_values(table), _one_process(metrics, rows, True) if not kwargs else _with(metrics, rows, kwargs))
        assert (table["rows"] == 60).all()


def _with(metrics: Any, rows: pd.DataFrame, kwargs: dict[str, Any]) -> dict[str, float]:
    twin = sm.MetricSet._from_config(metrics._config())
    rows = rows.sort_values("q", kind="stable")
    twin.update(rows["y"].to_numpy(), rows["p"].to_numpy(), query_ids=rows["q"].to_numpy(),
                doc_ids=rows["d"].to_numpy(), **kwargs)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return _flat(twin.compute())


def test_a_query_is_checked_whole_not_by_its_micro_batch_rows() -> None:
    """A query is checked whole, its saved rows with the new ones: rows without a relevant
    document are accepted when the query's saved rows hold one (alone they would be refused), and
    refused when they are the query's first (empty_target_action='error': the window would not
    compute if it closed then)."""
    metrics = sm.MetricSet(mrr=sm.MRR(empty_target_action="error"))
    run = make_run(metrics, Request(label="y", score="p", query="q", doc_id="d"), available=["q", "d", "y", "p"])
    fold = Fold(run, metrics, [])
    first = pd.DataFrame({"q": ["a", "a"], "d": ["x", "y"], "y": [1, 0], "p": [0.2, 0.9]})
    later = pd.DataFrame({"q": ["a"], "d": ["z"], "y": [0], "p": [0.5]})
    saved = fold.absorb(None, [first], "w")[0]
    saved = fold.absorb(saved, [later], "w")[0]
    got = _values(fold.table([], START_US, END_US, fold.accumulator([(saved, 3, 0)]), 3, 0))
    assert got == {"mrr": 1 / 3}
    with pytest.raises(ValueError, match="relevance: .* has no relevant document .* -- in w"):
        fold.absorb(None, [later], "w")


def test_refused_rows_are_named_by_their_row_in_the_micro_batch() -> None:
    """Rows skipped for a null do not shift the row a message names; integer ids compare with
    the saved ones read back from the checkpoint."""
    metrics = sm.NDCG(3)
    run = make_run(metrics, Request(label="y", score="p", query="q", doc_id="d", nulls="skip"),
                   available=["q", "d", "y", "p"])
    fold = Fold(run, metrics, [])
    saved = fold.absorb(None, [pd.DataFrame({"q": [1, 1, 2], "d": [10, 11, 10], "y": [1, 0, 1],
                                             "p": [0.1, 0.2, 0.3]})], "w")[0]
    bad = pd.DataFrame({"q": [3, 3, 3, 3], "d": [1, 2, 3, 4], "y": [1.0, np.nan, 0.0, np.inf], "p": [0.5] * 4})
    with pytest.raises(ValueError, match=r"relevance: .* first invalid value np.float64\(inf\) at index 2 -- in w "
                                         r"\(index 2 is row 3\); the micro-batch is refused"):
        fold.absorb(saved, [bad], "w")
    with pytest.raises(ValueError, match=r"doc_id: duplicate document 11 in query 1 \(column 'd'\): row 2 of w, "
                                         "already saved for the window by an earlier micro-batch"):
        fold.absorb(saved, [pd.DataFrame({"q": [2, 2, 1], "d": [11, 12, 11], "y": [np.nan, 0, 1],
                                          "p": [0.5, 0.4, 0.3]})], "w")
    with pytest.raises(ValueError, match=r"doc_id: duplicate document 7 in query 4 \(column 'd'\): rows 0 and 2 of w; "):
        fold.absorb(saved, [pd.DataFrame({"q": [4, 4], "d": [7, 8], "y": [1, 1], "p": [0.1, np.nan]}),
                            pd.DataFrame({"q": [4], "d": [7], "y": [0], "p": [0.2]})], "w")
    fed = fold.absorb(saved, [pd.DataFrame({"q": [2, 1], "d": [11, 12], "y": [1, 0], "p": [0.5, 0.4]})], "w")
    assert fed[1:] == (2, 0) and len(fold.rows_of(fed[0])) == 5
