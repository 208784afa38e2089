"""streammetrics.ray.evaluate over ``ray.data.read_parquet``: a plain read of local files takes
``evaluate_parquet``'s range path (``_engines/ray_source.py``), with the same values bit for bit;
any other plan (a filter, ``map_batches``, a limit, a union, a rename, ...) keeps the dataset path
and gives the values of the rows Ray yields. Both of Ray Data's Parquet readers."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

ray = pytest.importorskip("ray")
pytest.importorskip("ray.data")

import engine_cases as cases  # noqa: E402

import streammetrics as sm  # noqa: E402
from streammetrics._engines import ray_ranges, ray_source  # noqa: E402
from streammetrics.ray import evaluate, evaluate_parquet  # noqa: E402

local_ray = pytest.fixture(scope="module", autouse=True)(cases.local_ray)


def _set() -> sm.MetricSet:
    return sm.MetricSet(auroc=sm.AUROC(), ap=sm.AveragePrecision(), f1=sm.F1(), cm=sm.ConfusionMatrix())


@pytest.fixture(params=["v2", "v1"])
def reader(request):
    """Ray Data's second Parquet reader (``ListFiles -> ReadFiles``) or its first (``Read``)."""
    ctx = ray.data.DataContext.get_current()
    if request.param == "v1" and not hasattr(ctx, "use_datasource_v2"):
        pytest.skip("this Ray has one Parquet reader")
    before = getattr(ctx, "use_datasource_v2", None)
    if before is not None:
        ctx.use_datasource_v2 = request.param == "v2"
    yield request.param
    if before is not None:
        ctx.use_datasource_v2 = before


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    """3 files (ties: scores on 50 levels; an extra column) and the rows they hold."""
    root = tmp_path_factory.mktemp("preds")
    rng = np.random.default_rng(5)
    frames = []
    for i, n in enumerate((1_500, 700, 2_300)):
        df = pd.DataFrame({"y": rng.integers(0, 2, n), "p": rng.random(n).round(2) / 2 + 0.01,
                           "other": rng.random(n)})
        df.to_parquet(root / f"part-{i}.parquet", index=False)
        frames.append(df)
    return root, pd.concat(frames, ignore_index=True)


def _spy(monkeypatch) -> list[list[str]]:
    """The file lists the range path over files is called with."""
    calls: list[list[str]] = []
    real = ray_ranges.evaluate_files
    monkeypatch.setattr(ray_ranges, "evaluate_files", lambda files, *a: calls.append(list(files)) or real(files, *a))
    return calls


def _same(got, want) -> None:
    assert list(got) == list(want)
    for k in want:
        assert np.array_equal(np.asarray(got[k]), np.asarray(want[k])), k


def _one_process(df: pd.DataFrame):
    return _set().update(df.y.to_numpy(), df.p.to_numpy()).compute()


@pytest.mark.parametrize("shape", ["plain", "select_columns", "columns=", "list of files"])
def test_plain_read_takes_the_file_path(folder, reader, monkeypatch, shape) -> None:
    root, whole = folder
    files = sorted(str(p) for p in root.glob("*.parquet"))
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # columns= on Ray 2.60's reader
        ds = {"plain": lambda: ray.data.read_parquet(str(root)),
              "select_columns": lambda: ray.data.read_parquet(str(root)).select_columns(["p", "y"]),
              "columns=": lambda: ray.data.read_parquet(str(root), columns=["y", "p"]),
              "list of files": lambda: ray.data.read_parquet(files)}[shape]()
    calls = _spy(monkeypatch)
    got = evaluate(ds, _set(), label="y", score="p")
    assert calls == [files]
    _same(got, evaluate_parquet(str(root), _set(), label="y", score="p"))
    _same(got, _one_process(whole))
    one = evaluate(ds, sm.AUROC(), label="y", score="p")  # one metric, and as a Dataset
    assert one == got["auroc"]
    table = evaluate(ds, _set(), label="y", score="p", as_frame=True).to_pandas()
    assert dict(zip(table.metric, table.value, strict=False))["ap"] == got["ap"]


def test_selection_without_the_score_is_refused_as_before(folder, reader, monkeypatch) -> None:
    root, _ = folder
    calls = _spy(monkeypatch)
    with pytest.raises(ValueError, match="p"):
        evaluate(ray.data.read_parquet(str(root)).select_columns(["y", "other"]), _set(), label="y", score="p")
    assert calls == []


@pytest.mark.parametrize("shape", ["filter", "filter_expr", "map_batches", "limit", "union", "rename",
                                   "with_column", "include_paths", "random_shuffle", "materialized"])
def test_any_other_plan_keeps_the_dataset_path(folder, reader, monkeypatch, shape) -> None:
    root, whole = folder
    from ray.data.expressions import col

    def read(**kw):
        return ray.data.read_parquet(str(root), **kw)

    ds = {"filter": lambda: read().filter(lambda r: r["p"] > 0.2),
          "filter_expr": lambda: read().filter(expr=col("p") > 0.2),
          "map_batches": lambda: read().map_batches(lambda b: {**b, "p": b["p"] * 0.5 + (b["y"] == 0) * 0.1},
                                                    batch_format="numpy"),
          "limit": lambda: read().limit(1_000),
          "union": lambda: read().union(read()),
          "rename": lambda: read().rename_columns({"p": "q", "other": "p"}),
          "with_column": lambda: read().with_column("p", col("other")),
          "include_paths": lambda: read(include_paths=True),
          "random_shuffle": lambda: read().random_shuffle(seed=1),
          "materialized": lambda: read().materialize()}[shape]()
    assert ray_source.parquet_source(ds) is None
    rows = ds.to_pandas()  # the rows Ray yields
    assert len(rows) != len(whole) or shape in ("rename", "with_column", "include_paths", "random_shuffle",
                                                "materialized", "map_batches")
    calls = _spy(monkeypatch)
    got = evaluate(ds, _set(), label="y", score="p")
    assert calls == []
    if shape == "limit":  # which 1,000 rows a limit keeps may differ between two reads
        assert np.asarray(got["cm"]).sum() == 1_000
        return
    want = _one_process(rows)
    assert list(got) == list(want)
    for k in want:  # the dataset path: within float rounding of one process
        np.testing.assert_allclose(np.asarray(got[k], dtype=float), np.asarray(want[k], dtype=float),
                                   rtol=1e-12, atol=1e-12)


def test_file_lists_that_differ_keep_the_dataset_path(tmp_path, reader, monkeypatch) -> None:
    """Ray Data reads only ``*.parquet`` (its ``file_extensions``) where ``evaluate_parquet``'s
    listing takes every file of the directory (here ``extra.bin``, Parquet too): the lists
    differ, so the dataset path reads what Ray reads. Below ``_tmp/`` both skip the file."""
    rng = np.random.default_rng(9)
    frames = [pd.DataFrame({"y": rng.integers(0, 2, n), "p": rng.random(n)}) for n in (400, 300, 200)]
    frames[0].to_parquet(tmp_path / "part-0.parquet", index=False)
    (tmp_path / "_tmp").mkdir()
    frames[1].to_parquet(tmp_path / "_tmp" / "part-1.parquet", index=False)
    ds = ray.data.read_parquet(str(tmp_path))
    calls = _spy(monkeypatch)
    got = evaluate(ds, _set(), label="y", score="p")  # the same files: the range path
    assert calls == [[str(tmp_path / "part-0.parquet")]]
    _same(got, _one_process(frames[0]))
    frames[2].to_parquet(tmp_path / "extra.bin", index=False)
    ds = ray.data.read_parquet(str(tmp_path))
    assert ray_source.parquet_source(ds) is None
    rows = ds.to_pandas()
    assert len(rows) == len(frames[0])
    got = evaluate(ds, _set(), label="y", score="p")
    assert calls == [[str(tmp_path / "part-0.parquet")]]  # not called again
    _same(got, _one_process(rows))


def test_a_bad_value_names_the_column_and_the_file(tmp_path, monkeypatch) -> None:
    """Issue #32 (review): on the plain read's route a refused value (a label outside
    ``classes=``, a label 2, a negative weight) names its column, the file and the batch's first
    row before one process's words, as the dataset path names its column and block."""
    rng = np.random.default_rng(12)
    for i, n in enumerate((300, 500)):
        df = pd.DataFrame({"y": rng.integers(0, 2, n), "p": rng.random(n).round(2),
                           "yb": np.array(cases.SPAM, dtype=object)[rng.integers(0, 2, n)], "w": rng.random(n)})
        if i == 1:
            df.loc[45, "y"], df.loc[46, "yb"], df.loc[47, "w"] = 2, "yak", -1.0
        df.to_parquet(tmp_path / f"part-{i}.parquet", index=False)
    bad = str(tmp_path / "part-1.parquet")
    calls = _spy(monkeypatch)
    with pytest.raises(ValueError) as err:
        evaluate(ray.data.read_parquet(str(tmp_path)), _set(), label="y", score="p")
    assert str(err.value) == (f"label: column 'y' of the Parquet file {bad!r} from row 0: y_true: labels must "
                              "be 0 or 1; first invalid value 2 at index 45")
    spam = sm.MetricSet(auroc=sm.AUROC(classes=list(cases.SPAM)), ap=sm.AveragePrecision(classes=list(cases.SPAM)))
    with pytest.raises(ValueError) as err:
        evaluate(ray.data.read_parquet(str(tmp_path)), spam, label="yb", score="p")
    assert str(err.value) == (f"label: column 'yb' of the Parquet file {bad!r} from row 0: y_true: unknown label "
                              "'yak' at index 46 (classes: ['ham', 'spam'])")
    assert len(calls) == 2  # both on the range path over the files
    with pytest.raises(ValueError, match=r"^weight: column 'w' of Ray block \d+: sample_weight: .* first invalid "
                                         r"value -1\.0 at index 3?47$"):  # weighted: the dataset's blocks
        evaluate(ray.data.read_parquet(str(tmp_path)).materialize(), _set(), label="y", score="p", weight="w")
