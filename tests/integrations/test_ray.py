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

local_ray = pytest.fixture(scope="module", autouse=True)(cases.local_ray)


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


# --- evaluate_parquet: Ray tasks read the files with pyarrow; exact AUROC / AP by score ranges ---

def _ranked_set(order: str = "ranked first", ignore: int | None = None) -> sm.MetricSet:
    ranked = {"auroc": sm.AUROC(ignore_index=ignore), "ap": sm.AveragePrecision(ignore_index=ignore)}
    rest = {"f1": sm.F1(ignore_index=ignore), "cm": sm.ConfusionMatrix(ignore_index=ignore)}
    if order == "only ranked":
        return sm.MetricSet(ranked)
    return sm.MetricSet({**ranked, **rest} if order == "ranked first" else {**rest, **ranked})


def _write(folder, frames: list[pd.DataFrame], groups: list[list[int]]) -> None:
    """Each frame as one file whose row groups have the given (uneven, possibly 0) sizes."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    for i, (df, sizes) in enumerate(zip(frames, groups, strict=True)):
        table = pa.Table.from_pandas(df, preserve_index=False)
        with pq.ParquetWriter(folder / f"part-{i}.parquet", table.schema) as writer:
            at = 0
            for n in sizes:
                if n:
                    writer.write_table(table.slice(at, n))
                at += n


def _recorded(fn):
    import warnings

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        values = fn()
    return values, sorted(str(w.message) for w in caught)


def _range_calls(monkeypatch, ranges: int | None = None) -> list[int]:
    """Count the driver's calls of the range path (and fix its number of ranges)."""
    from streammetrics._engines import ray_ranges

    calls: list[int] = []
    real = ray_ranges.evaluate_files
    monkeypatch.setattr(ray_ranges, "evaluate_files", lambda *a: calls.append(1) or real(*a))
    if ranges is not None:
        monkeypatch.setattr(ray_ranges, "range_count", lambda: ranges)
    return calls


@pytest.mark.parametrize(("order", "ranges", "ignore"), [("ranked first", None, None), ("rest first", 1, None),
                                                         ("only ranked", 5, None), ("ranked first", 3, -1)])
def test_parquet_ranges_equal_one_process_bit_for_bit(tmp_path, monkeypatch, order, ranges, ignore) -> None:
    """Uneven row groups, an empty file and an empty row group, ties (scores on 100 levels),
    ignored labels and files below ``_tiny/`` and ``.cache/`` (skipped): the values and warnings
    of one MetricSet over the same rows, and sklearn's."""
    from sklearn.metrics import average_precision_score, roc_auc_score

    calls = _range_calls(monkeypatch, ranges)
    rng = np.random.default_rng(41)
    sizes = [[700, 1, 2_000], [0], [5, 0, 3_000], [1_500]]
    frames = [pd.DataFrame({"y": rng.integers(0, 2, sum(s)), "p": rng.random(sum(s)).round(2)}) for s in sizes]
    if ignore is not None:
        frames[2].loc[::7, "y"] = ignore
    _write(tmp_path, frames, sizes)
    for hidden in ("_tiny", ".cache"):  # files below a directory named _... or .... are not rows
        (tmp_path / hidden).mkdir()
        _write(tmp_path / hidden, [frames[0]], [[len(frames[0])]])
    whole = pd.concat(frames, ignore_index=True)
    got = _recorded(lambda: sm.ray.evaluate_parquet(str(tmp_path), _ranked_set(order, ignore), label="y", score="p"))
    want = _recorded(lambda: _ranked_set(order, ignore).update(whole.y.to_numpy(), whole.p.to_numpy()).compute())
    assert calls == [1]
    assert list(got[0]) == list(want[0]) and got[1] == want[1]
    for k in want[0]:
        assert np.array_equal(np.asarray(got[0][k]), np.asarray(want[0][k])), k
    kept = whole[whole.y != ignore] if ignore is not None else whole
    assert abs(got[0]["auroc"] - roc_auc_score(kept.y, kept.p)) <= 1e-12
    assert abs(got[0]["ap"] - average_precision_score(kept.y, kept.p)) <= 1e-12
    if order == "ranked first" and ignore is None:  # one metric, and the values as a Dataset
        one = sm.ray.evaluate_parquet(str(tmp_path), sm.AUROC(), label="y", score="p")
        assert one == want[0]["auroc"]
        table = sm.ray.evaluate_parquet(str(tmp_path), _ranked_set(), label="y", score="p", as_frame=True)
        rows = table.to_pandas()
        assert dict(zip(rows.metric, rows.value, strict=False))["ap"] == want[0]["ap"]
        assert calls == [1, 1, 1]


def test_parquet_one_class_and_no_rows(tmp_path, monkeypatch) -> None:
    calls = _range_calls(monkeypatch)
    df = pd.DataFrame({"y": np.zeros(50, dtype=np.int64), "p": np.linspace(0, 1, 50)})
    _write(tmp_path, [df, df.iloc[:0]], [[20, 30], [0]])
    got = _recorded(lambda: sm.ray.evaluate_parquet(str(tmp_path / "*.parquet"), _ranked_set(), label="y", score="p"))
    want = _recorded(lambda: _ranked_set().update(df.y.to_numpy(), df.p.to_numpy()).compute())
    assert calls == [1] and got[1] == want[1] and any("AUROC" in w for w in want[1])
    for k in want[0]:
        assert np.array_equal(np.asarray(got[0][k]), np.asarray(want[0][k]), equal_nan=True), k
    empty = tmp_path / "empty"
    empty.mkdir()
    _write(empty, [df.iloc[:0]], [[0]])
    got = _recorded(lambda: sm.ray.evaluate_parquet(str(empty), _ranked_set(), label="y", score="p"))
    want = _recorded(lambda: _ranked_set().compute())
    assert got[1] == want[1]
    for k in want[0]:
        assert np.array_equal(np.asarray(got[0][k]), np.asarray(want[0][k]), equal_nan=True), k


@pytest.mark.parametrize("column", ["y", "p"])
def test_parquet_null_names_file_and_row(tmp_path, monkeypatch, column) -> None:
    calls = _range_calls(monkeypatch, 2)
    rng = np.random.default_rng(43)
    frames = [pd.DataFrame({"y": rng.integers(0, 2, n).astype(float), "p": rng.random(n)}) for n in (300, 500)]
    frames[1].loc[412, column] = np.nan  # row group 2 of file 1: row 412 of that file
    _write(tmp_path, frames, [[300], [100, 300, 100]])
    with pytest.raises(ValueError, match=rf"nulls: column '{column}' is null \(or NaN\) at row 412 of "
                                         rf".*part-1\.parquet"):
        sm.ray.evaluate_parquet(str(tmp_path), _ranked_set(), label="y", score="p")
    assert calls == [1]
    if column == "y":  # a bad label: one process's error, led by its column, file and batch
        frames[1].loc[412, "y"] = 2.0
        _write(tmp_path, frames, [[300], [100, 300, 100]])
        with pytest.raises(ValueError) as one:
            _ranked_set().update(frames[1].y.to_numpy(), frames[1].p.to_numpy())
        with pytest.raises(ValueError) as engine:
            sm.ray.evaluate_parquet(str(tmp_path), _ranked_set(), label="y", score="p")
        bad = tmp_path / "part-1.parquet"  # row 412 is row 12 of the batch from row 400 (row group 3)
        assert str(engine.value) == (f"label: column 'y' of the Parquet file {str(bad)!r} from row 400: "
                                     f"{one.value}".replace("index 412", "index 12"))
        frames[1].loc[412, "y"] = np.nan
        _write(tmp_path, frames, [[300], [100, 300, 100]])
    ranged = len(calls)
    with pytest.warns(Warning, match=r"skipped 1 row"):  # nulls="skip": the general path
        got = sm.ray.evaluate_parquet(str(tmp_path), _ranked_set(), label="y", score="p", nulls="skip")
    whole = pd.concat(frames, ignore_index=True).dropna()
    cases.assert_same(got, _ranked_set().update(whole.y.to_numpy(), whole.p.to_numpy()).compute())
    assert len(calls) == ranged


@pytest.mark.parametrize("case", ["weight", "by", "partial_auc", "read_kwargs"])
def test_parquet_other_cases_take_the_general_path(tmp_path, monkeypatch, case) -> None:
    calls = _range_calls(monkeypatch)
    df = cases.classification_frame(600, seed=45)
    df["region"] = np.where(df.index % 3 == 0, "a", "b")
    _write(tmp_path, [df.iloc[:250], df.iloc[250:]], [[100, 150], [350]])
    metrics = _ranked_set()
    kwargs: dict = {"label": "y", "score": "p"}
    if case == "weight":
        kwargs["weight"] = "w"
    elif case == "by":
        kwargs["by"] = "region"
    elif case == "partial_auc":
        metrics = sm.MetricSet(auroc=sm.AUROC(max_fpr=0.5), ap=sm.AveragePrecision())
    else:
        kwargs["read_kwargs"] = {}
    got = sm.ray.evaluate_parquet(str(tmp_path), metrics.copy(), **kwargs)
    kwargs.pop("read_kwargs", None)
    want = evaluate(ray.data.from_pandas(df), metrics.copy(), **kwargs)
    cases.assert_same(got, want)
    assert calls == []


def _bad_files(folder, case: str) -> None:
    """Three Parquet files of bool labels (row groups of 2 rows) whose second, ``part-1``, is
    bad: a null label at its row 2 (row 0 of its second row group), a file truncated to 3 bytes,
    a string score column (the first file's is float) or no score column."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    for i in range(3):
        y: list = [True, False, True, False, True, False]
        p: list = [0.1 * (i + k) for k in range(6)]
        if i == 1 and case == "null":
            y[2] = None
        if i == 1 and case == "string score":
            p = [str(v) for v in p]
        columns = {"y": pa.array(y, pa.bool_()), "p": p}
        if i == 1 and case == "missing score":
            columns["q"] = columns.pop("p")
        pq.write_table(pa.table(columns), folder / f"part-{i}.parquet", row_group_size=2)
    if case == "truncated":
        (folder / "part-1.parquet").write_bytes(b"PAR")


@pytest.mark.parametrize("ranges", [1, 2])  # 2: the driver samples every file first
@pytest.mark.parametrize(("case", "error"), [
    ("null", r"nulls: column 'y' is null \(or NaN\) at row 2 of \S*part-1\.parquet; pass nulls='skip'"),
    ("truncated", r"cannot read the Parquet file '\S*part-1\.parquet': Parquet file size is 3 bytes"),
    ("string score", r"column 'p' of \S*part-1\.parquet has type string"),
    ("missing score", r"column 'p' is missing from \S*part-1\.parquet"),
])
def test_parquet_bad_later_file_is_named(tmp_path, monkeypatch, ranges, case, error) -> None:
    """A null in a bool label column (read as None, not NaN), a truncated file, a file whose
    score column is not numeric as the first file's or missing: a ValueError naming the file (and the
    column, and the row counted in the file), on the driver's sample or in a file task."""
    calls = _range_calls(monkeypatch, ranges)
    _bad_files(tmp_path, case)
    with pytest.raises(ValueError, match=error):
        sm.ray.evaluate_parquet(str(tmp_path), _ranked_set(), label="y", score="p")
    assert calls == [1]


def test_parquet_general_path_reads_the_files_the_range_path_reads(tmp_path, monkeypatch) -> None:
    """A glob, and names under ``_`` / ``.`` directories, mean the same files whichever path the
    metric set takes (Ray Data's own listing refused the glob and read ``_tmp/`` files)."""
    calls = _range_calls(monkeypatch)
    df = cases.classification_frame(400, seed=46)
    _write(tmp_path, [df.iloc[:150], df.iloc[150:]], [[150], [100, 150]])
    (tmp_path / "_tmp").mkdir()
    _write(tmp_path / "_tmp", [df.iloc[:10]], [[10]])  # a writer's leftovers: not rows
    want = sm.MetricSet(auroc=sm.AUROC(), f1=sm.F1(), w=sm.AUROC(max_fpr=0.5))
    one = want.copy()
    one.update(df["y"].to_numpy(), df["p"].to_numpy())
    for path in (str(tmp_path), str(tmp_path / "*.parquet")):
        got = sm.ray.evaluate_parquet(path, want.copy(), label="y", score="p")  # max_fpr: general path
        cases.assert_same(got, one.compute())
    assert calls == []


@pytest.mark.parametrize("entry", ["evaluate_parquet", "evaluate_ranked"])
@pytest.mark.parametrize("first", [True, False])
def test_parquet_unreadable_file_is_named(tmp_path, entry, first) -> None:
    if not first:
        _write(tmp_path, [cases.classification_frame(50, seed=3)], [[50]])  # part-0.parquet, readable
    (tmp_path / ("a.parquet" if first else "z.parquet")).write_bytes(b"PAR1")  # truncated: no footer
    name = "a" if first else "z"
    fn = sm.ray.evaluate_parquet if entry == "evaluate_parquet" else sm.ray.evaluate_ranked
    metrics = _ranked_set() if entry == "evaluate_parquet" else sm.MetricSet(auroc=sm.AUROC())
    with pytest.raises(ValueError, match=rf"cannot read the Parquet file .*{name}\.parquet"):
        fn(str(tmp_path), metrics, label="y", score="p")


def _chosen(monkeypatch) -> list[object]:
    """What the driver's sample chose (edges or the exchange of positives)."""
    from streammetrics._engines import ray_ranges

    chosen: list[object] = []
    real = ray_ranges.sample_edges
    monkeypatch.setattr(ray_ranges, "sample_edges", lambda *a: chosen.append(real(*a)) or chosen[-1])
    return chosen


@pytest.mark.parametrize(("ranges", "share"), [(2, 0.02), (3, 0.0), (2, 0.5)])
def test_parquet_few_positives_exchange_equals_one_process(tmp_path, monkeypatch, ranges, share) -> None:
    """Few positives (or none): the driver's sample chooses the exchange of positives
    (``streammetrics._engines.minority``): more file tasks than ranges (several negative runs per
    range), an empty file, ties; the values and warnings of one process bit for bit, and
    sklearn's. Half positives: the range path, as before."""
    from sklearn.metrics import average_precision_score, roc_auc_score

    from streammetrics._engines import minority

    calls, chosen = _range_calls(monkeypatch, ranges), _chosen(monkeypatch)
    rng = np.random.default_rng(47)
    sizes = [[900, 1_100], [0], [3_000], [40, 2_000], [1_200], [700], [2_500]]
    frames = [pd.DataFrame({"y": (rng.random(sum(s)) < share).astype(np.int64), "p": rng.random(sum(s)).round(3)})
              for s in sizes]
    _write(tmp_path, frames, sizes)
    whole = pd.concat(frames, ignore_index=True)
    for order in ("ranked first", "only ranked"):
        got = _recorded(lambda o=order: sm.ray.evaluate_parquet(str(tmp_path), _ranked_set(o), label="y", score="p"))
        want = _recorded(lambda o=order: _ranked_set(o).update(whole.y.to_numpy(), whole.p.to_numpy()).compute())
        assert list(got[0]) == list(want[0]) and got[1] == want[1]
        for k in want[0]:
            assert np.array_equal(np.asarray(got[0][k]), np.asarray(want[0][k]), equal_nan=True), k
        if whole.y.sum() > 0:
            assert abs(got[0]["auroc"] - roc_auc_score(whole.y, whole.p)) <= 1e-12
            assert abs(got[0]["ap"] - average_precision_score(whole.y, whole.p)) <= 1e-12
    assert calls == [1, 1]
    assert [isinstance(c, minority.Exchange) for c in chosen] == [share < 0.1] * 2


def test_parquet_exchange_names_a_null_file_and_row(tmp_path, monkeypatch) -> None:
    _range_calls(monkeypatch, 2)
    chosen = _chosen(monkeypatch)
    rng = np.random.default_rng(53)
    frames = [pd.DataFrame({"y": (rng.random(n) < 0.01).astype(float), "p": rng.random(n)}) for n in (300, 500)]
    frames[1].loc[412, "p"] = np.nan
    _write(tmp_path, frames, [[300], [100, 300, 100]])
    with pytest.raises(ValueError, match=r"nulls: column 'p' is null \(or NaN\) at row 412 of .*part-1\.parquet"):
        sm.ray.evaluate_parquet(str(tmp_path), _ranked_set(), label="y", score="p")
    from streammetrics._engines import minority

    assert len(chosen) == 1 and isinstance(chosen[0], minority.Exchange)


@pytest.mark.parametrize("positives_first", [True, False])
def test_parquet_files_sorted_by_label_choose_by_their_labels(tmp_path, monkeypatch, positives_first) -> None:
    """Files sorted by label, one class per row group: the middle row group of each file holds no
    positive (or only positives) while the others hold two thirds of the rows. The driver
    decides from every row group's labels: the range path for 62% positives (the exchange would
    hold every positive in each range task), the exchange for 2% -- and one process's values
    bit for bit either way. (Before: decided from the middle row groups, the exchange for 62%.)"""
    from streammetrics._engines import minority

    _range_calls(monkeypatch, 2)
    chosen = _chosen(monkeypatch)
    rng = np.random.default_rng(59)
    frames = []
    for _ in range(3):
        if positives_first:  # 800 of 1300 positive, none in the middle row group
            y = np.concatenate([np.ones(400, bool), np.zeros(500, bool), np.ones(400, bool)])
        else:  # 26 of 1300 positive, all in the middle row group
            y = np.concatenate([np.zeros(637, bool), np.ones(26, bool), np.zeros(637, bool)])
        frames.append(pd.DataFrame({"y": y, "p": rng.random(y.shape[0]).round(2)}))
    sizes = [400, 500, 400] if positives_first else [637, 26, 637]
    _write(tmp_path, frames, [sizes] * 3)
    whole = pd.concat(frames, ignore_index=True)
    got = _recorded(lambda: sm.ray.evaluate_parquet(str(tmp_path), _ranked_set(), label="y", score="p"))
    want = _recorded(lambda: _ranked_set().update(whole.y.to_numpy(), whole.p.to_numpy()).compute())
    assert len(chosen) == 1 and isinstance(chosen[0], minority.Exchange) is not positives_first
    assert got[1] == want[1]
    for k in want[0]:
        assert np.array_equal(np.asarray(got[0][k]), np.asarray(want[0][k])), k


@pytest.mark.parametrize(("ranges", "share"), [(2, 0.02), (3, 0.5)])
def test_parquet_auroc_only_equals_one_process_and_ranges_send_o1(tmp_path, monkeypatch, ranges, share) -> None:
    """An AUROC-only set (with other members) over Parquet, by the exchange of positives (few
    positives) and by score ranges: one process's values bit for bit; the range tasks, asked
    for AUROC alone, send O(1) numbers, not counts at every distinct positive score."""
    from streammetrics._engines import minority, ray_ranges

    calls = _range_calls(monkeypatch, ranges)
    rng = np.random.default_rng(53)
    sizes = [[800, 1_200], [2_000], [0], [1_500]]
    frames = [pd.DataFrame({"y": (rng.random(sum(s)) < share).astype(np.int64), "p": rng.random(sum(s))})
              for s in sizes]
    _write(tmp_path, frames, sizes)
    whole = pd.concat(frames, ignore_index=True)
    make = lambda: sm.MetricSet({"auroc": sm.AUROC(), "f1": sm.F1()})  # noqa: E731
    got = _recorded(lambda: sm.ray.evaluate_parquet(str(tmp_path), make(), label="y", score="p"))
    want = _recorded(lambda: make().update(whole.y.to_numpy(), whole.p.to_numpy()).compute())
    assert calls == [1] and got == want
    # what a range task returns, asked for AUROC alone and for AP too (the same pieces)
    y, p = whole.y.to_numpy(), whole.p.to_numpy()
    piece = (p[y == 0], None, p[y == 1], None)
    auroc_only, with_ap = ray_ranges._range_task(False, piece), ray_ranges._range_task(True, piece)
    assert (auroc_only.pos, auroc_only.neg, auroc_only.u2) == (with_ap.pos, with_ap.neg, with_ap.u2)
    assert auroc_only.tps.size == auroc_only.fps.size == auroc_only.thresholds.size == 0
    assert with_ap.tps.size == np.unique(p[y == 1]).size
    negatives, positives = np.sort(p[y == 0]), np.sort(p[y == 1])
    alone = ray_ranges._exchange_task(True, False, 1, negatives, positives)
    full = ray_ranges._exchange_task(True, True, 1, negatives, positives)
    assert isinstance(alone, minority.ExchangeCounts) and alone.u2 == full.u2
    assert alone.below.size == 0 and full.below.size == np.unique(positives).size
