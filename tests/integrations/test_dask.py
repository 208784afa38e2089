"""streammetrics.dask on a real 2-process LocalCluster over Parquet files == one process.

The data: a few hundred thousand rows in several Parquet files plus an empty one. Integer-valued
weights keep every weighted count exact, so states must match bit for bit whatever the partition
count, order or the merge tree.
"""

from __future__ import annotations

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
from distributed import Client, LocalCluster  # noqa: E402

import streammetrics as sm  # noqa: E402
from streammetrics.dask import evaluate, evaluate_parquet  # noqa: E402

N_ROWS = 240_000
N_FILES = 4
C = 4


def _frame(seed: int, n: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    logits = rng.normal(size=(n, C))
    scores = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
    out = {
        "y": rng.integers(0, 2, n).astype(np.int64),
        # rounded scores: many ties, as in real (quantised) model outputs
        "p": np.round(rng.random(n), 3),
        "w": rng.integers(0, 4, n).astype(np.float64),
        "yc": rng.integers(0, C, n).astype(np.int64),
    }
    for c in range(C):
        out[f"s{c}"] = np.round(scores[:, c], 4)
    out["q"] = rng.integers(0, 2_000, n).astype(np.int64)
    out["doc"] = [f"d{seed}-{i}" for i in rng.permutation(n)]
    out["rel"] = rng.integers(0, 3, n).astype(np.int64)
    return pd.DataFrame(out)


@pytest.fixture(scope="module")
def data(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, pd.DataFrame]:
    root = tmp_path_factory.mktemp("parquet")
    frames = []
    per = N_ROWS // N_FILES
    for i in range(N_FILES):
        df = _frame(100 + i, per)
        df.to_parquet(root / f"part-{i}.parquet", row_group_size=per // 3, index=False)
        frames.append(df)
    # an empty file with the same schema
    frames[0].iloc[:0].to_parquet(root / "part-9-empty.parquet", index=False)
    whole = pd.concat(frames, ignore_index=True)
    return root, whole


@pytest.fixture(scope="module")
def client() -> Any:
    with dask.config.set({"distributed.worker.daemon": False}), LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
    ) as cluster, Client(cluster.scheduler_address) as c:  # "tcp://127.0.0.1:...", as for a remote cluster
        assert cluster.scheduler_address.startswith("tcp://")
        yield c


def _binary_set() -> sm.MetricSet:
    return sm.MetricSet(
        cm=sm.ConfusionMatrix(),
        precision=sm.Precision(),
        recall=sm.Recall(),
        f1=sm.F1(),
        mcc=sm.MatthewsCorrCoef(),
        acc_t=sm.Accuracy(threshold=0.3),
    )


def _assert_same_state(a: sm.Metric, b: sm.Metric) -> None:
    da, db = a.state_dict(), b.state_dict()
    assert da.keys() == db.keys()
    assert da["config"] == db["config"]
    for k in da:
        if k not in ("class", "format_version", "config"):
            np.testing.assert_array_equal(np.asarray(da[k]), np.asarray(db[k]), err_msg=k)


def _assert_values_equal(a: dict[str, Any], b: dict[str, Any]) -> None:
    assert a.keys() == b.keys()
    for k in a:
        np.testing.assert_array_equal(np.asarray(a[k]), np.asarray(b[k]), err_msg=k)


def test_parquet_on_cluster_equals_single_process(client: Any, data: tuple[Path, pd.DataFrame]) -> None:
    root, whole = data
    ms = _binary_set()
    one = _binary_set().update(whole["y"].to_numpy(), whole["p"].to_numpy(),
                               sample_weight=whole["w"].to_numpy())
    # state built on the workers, merged in a tree there, equal bit for bit
    merged = evaluate_parquet(str(root / "*.parquet"), ms, label="y", score="p", weight="w",
                              split_every=2, compute=False)
    assert isinstance(merged, sm.MetricSet)
    _assert_same_state(merged, one)
    values = evaluate_parquet(root, ms, label="y", score="p", weight="w")
    _assert_values_equal(values, one.compute())
    # the templates are not modified
    assert ms["cm"].compute().sum() == 0


def test_repartitioning_and_partition_order(client: Any, data: tuple[Path, pd.DataFrame]) -> None:
    root, whole = data
    one = _binary_set().update(whole["y"].to_numpy(), whole["p"].to_numpy(),
                               sample_weight=whole["w"].to_numpy())
    ddf = dd.read_parquet(str(root / "*.parquet"), columns=["y", "p", "w"])
    parts = ddf.to_delayed()
    empty = dask.delayed(lambda df: df.iloc[:0])
    variants = [
        ddf.repartition(npartitions=11),
        ddf.repartition(npartitions=1),
        dd.from_delayed(list(reversed(parts)), meta=ddf._meta),
        dd.from_delayed([empty(parts[0])] + [x for p in parts for x in (p, empty(p))], meta=ddf._meta),
    ]
    for variant in variants:
        got = evaluate(variant, _binary_set(), label="y", score="p", weight="w", split_every=3,
                       compute=False)
        _assert_same_state(got, one)


def test_multiclass_scores_dict_of_metrics(client: Any, data: tuple[Path, pd.DataFrame]) -> None:
    root, whole = data
    scores = [f"s{c}" for c in range(C)]
    metrics = {
        "confusion matrix": sm.ConfusionMatrix(num_classes=C),
        "macro f1": sm.F1(num_classes=C),
        "weighted recall": sm.Recall(num_classes=C, average="weighted"),
        "kappa": sm.CohenKappa(num_classes=C),
        "top2": sm.TopKAccuracy(num_classes=C, k=2),
    }
    got = evaluate_parquet(root, metrics, label="yc", score=scores)
    y, s = whole["yc"].to_numpy(), whole[scores].to_numpy()
    for name, m in metrics.items():
        ref = m.copy().update(y, s).compute()
        np.testing.assert_array_equal(np.asarray(got[name]), np.asarray(ref), err_msg=name)
    accs = evaluate_parquet(root, metrics, label="yc", score=scores, compute=False)
    for name, m in metrics.items():
        _assert_same_state(accs[name], m.copy().update(y, s))
    # a single metric gives its value / accumulator
    single = evaluate_parquet(root, sm.Accuracy(num_classes=C), label="yc", score=scores)
    assert single == sm.Accuracy(num_classes=C).update(y, s).compute()


def test_errors_surface_as_value_errors(client: Any, data: tuple[Path, pd.DataFrame]) -> None:
    root, _ = data
    with pytest.raises(ValueError, match="nope"):
        evaluate_parquet(root, sm.F1(), label="nope", score="p")
    # labels outside {0, 1} are rejected on the worker with the usual message
    with pytest.raises(ValueError, match="y_true"):
        evaluate_parquet(root, sm.F1(), label="yc", score="p")
    with pytest.raises(ValueError, match="split_every"):
        evaluate_parquet(root, sm.F1(), label="y", score="p", split_every=1)
    with pytest.raises(ValueError, match="query"):
        evaluate_parquet(root, sm.F1(), label="y", score="p", query="q")
    # values are computed on a worker; its warnings are re-raised here
    with pytest.warns(sm.UndefinedMetricWarning):
        assert evaluate_parquet(root, sm.Precision(threshold=2.0), label="y", score="p") == 0.0


def _ranking_set() -> sm.MetricSet:
    return sm.MetricSet(auroc=sm.AUROC(), ap=sm.AveragePrecision(), roc=sm.ROCCurve(), pr=sm.PRCurve(),
                        pauc=sm.AUROC(max_fpr=0.2), f1=sm.F1())


def test_exact_ranking_on_cluster(client: Any, data: tuple[Path, pd.DataFrame]) -> None:
    root, whole = data
    y, p, w = whole["y"].to_numpy(), whole["p"].to_numpy(), whole["w"].to_numpy()
    ref = _ranking_set().update(y, p, sample_weight=w)
    ddf = dd.read_parquet(root).repartition(npartitions=9)
    got = evaluate(ddf, _ranking_set(), label="y", score="p", weight="w", split_every=4, compute=False)
    _assert_same_state(got, ref)
    a, b = got.compute(), ref.compute()
    assert a["auroc"] == b["auroc"] and a["ap"] == b["ap"] and a["pauc"] == b["pauc"]
    for field in ("fpr", "tpr", "thresholds"):
        np.testing.assert_array_equal(getattr(a["roc"], field), getattr(b["roc"], field))
    # multiclass one-vs-rest from one score column per class
    scores = [f"s{c}" for c in range(C)]
    mc = {"auroc": sm.AUROC(num_classes=C), "ap": sm.AveragePrecision(num_classes=C, average=None)}
    got_mc = evaluate_parquet(root, mc, label="yc", score=scores)
    yc, s = whole["yc"].to_numpy(), whole[scores].to_numpy()
    assert got_mc["auroc"] == sm.AUROC(num_classes=C).update(yc, s).compute()  # exact pair counts
    # by (class, score) ranges (no gather): AP's per-range parts are float sums, within 1e-12
    np.testing.assert_allclose(got_mc["ap"], mc["ap"].copy().update(yc, s).compute(), rtol=0, atol=1e-12)


def test_bounded_ranking_on_cluster(client: Any, data: tuple[Path, pd.DataFrame]) -> None:
    root, whole = data
    y, p, w = whole["y"].to_numpy(), whole["p"].to_numpy(), whole["w"].to_numpy()

    def bounded() -> sm.MetricSet:  # 4 KiB: far fewer bins than the ~1000 distinct scores
        return sm.MetricSet(auroc=sm.AUROC(max_bytes=4096), ap=sm.AveragePrecision(max_bytes=4096),
                            roc=sm.ROCCurve(max_bytes=4096))

    ref = bounded().update(y, p, sample_weight=w)
    assert not ref["auroc"].is_exact
    ddf = dd.read_parquet(root).repartition(npartitions=7)
    got = evaluate(ddf, bounded(), label="y", score="p", weight="w", split_every=3, compute=False)
    _assert_same_state(got, ref)  # integer weights: the binned state is bit for bit the same
    assert got["auroc"].bounds() == ref["auroc"].bounds()
    low, high = got["auroc"].bounds()
    exact = sm.AUROC().update(y, p, sample_weight=w).compute()
    assert low <= exact <= high and high - low > 0


def test_retrieval_on_cluster(client: Any, data: tuple[Path, pd.DataFrame]) -> None:
    root, whole = data

    def metrics() -> sm.MetricSet:
        return sm.MetricSet(ndcg10=sm.NDCG(k=10), map=sm.MAP(), p10=sm.PrecisionAtK(10), mrr=sm.MRR(),
                            rprec=sm.RPrecision())

    # rows of one query are scattered over files and partitions: evaluate shuffles them together
    got = evaluate_parquet(root, metrics(), label="rel", score="p", query="q", doc_id="doc")
    srt = whole.sort_values("q", kind="stable")
    ref = metrics().update(srt["rel"].to_numpy(), srt["p"].to_numpy(), query_ids=srt["q"].to_numpy(),
                           doc_ids=srt["doc"].to_numpy().astype(str))
    want = ref.compute()
    assert got.keys() == want.keys()
    for k in want:  # means over ~2000 queries, summed in another order
        np.testing.assert_allclose(got[k], want[k], rtol=1e-12, atol=0, err_msg=k)
    assert evaluate_parquet(root, metrics(), label="rel", score="p", query="q", doc_id="doc",
                            compute=False)["map"].n_queries == whole["q"].nunique()
    with pytest.raises(ValueError, match="query"):
        evaluate_parquet(root, metrics(), label="rel", score="p")


def test_regression_on_cluster_equals_sklearn(client: Any, tmp_path: Path) -> None:
    """Issue #30: regression metrics (moments, exact sorted buffers, pair ranks, bounded bins,
    intervals) on the workers equal scikit-learn / scipy, from uneven partitions with an empty
    one and from Parquet files with an empty file (the general path: states merged in a tree)."""
    import engine_cases as cases

    df = cases.regression_frame()
    parts = [df.iloc[:0], df.iloc[:50], df.iloc[50:600], df.iloc[600:]]
    ddf = dd.from_delayed([dask.delayed(p) for p in parts], meta=df.iloc[:0])
    cases.check_regression(lambda d, m, **kw: evaluate(d, m, split_every=2, **kw), ddf, df)
    for i, p in enumerate(parts):
        p.to_parquet(tmp_path / f"part-{i}.parquet", index=False)
    cases.check_regression(evaluate_parquet, str(tmp_path / "*.parquet"), df)


@pytest.mark.skipif(not __import__("engine_cases").sliced_takes_regression(),
                    reason="needs Sliced of regression metrics (main's wrappers/sliced)")
def test_regression_slices_on_cluster(client: Any) -> None:
    """Issue #30: ``by=`` with regression metrics on the workers equals Sliced in one process and
    scikit-learn per slice (partitions in order of the key: they see different slices)."""
    import engine_cases as cases

    def frame(df: pd.DataFrame) -> Any:
        return dd.from_pandas(df.sort_values("region", kind="stable"), npartitions=5)

    cases.check_regression_sliced(evaluate, frame, cases.regression_frame())


def _vector_frame(n: int, seed: int) -> pd.DataFrame:
    """Binary and 3-class labels, the scores as one list per row (an Arrow list column, as
    Parquet's list<double> reads)."""
    import pyarrow as pa

    def lists(rows: np.ndarray) -> pd.Series:
        return pd.Series(pa.array(list(rows)), dtype=pd.ArrowDtype(pa.list_(pa.float64())))

    rng = np.random.default_rng(seed)
    p = rng.random(n).round(2)
    probs = rng.dirichlet(np.ones(3), n).round(2) + 0.01
    probs /= probs.sum(axis=1, keepdims=True)
    return pd.DataFrame({"y": rng.integers(0, 2, n), "c": rng.integers(0, 3, n),
                         "w": rng.random(n).round(3), "p": p,
                         "prob": lists(np.column_stack([1 - p, p])), "cls": lists(probs)})


def test_vector_score_column_equals_sklearn() -> None:
    """Issue #32: a column of score vectors -- binary metrics take element positive_index,
    multiclass metrics the whole vector."""
    from sklearn.metrics import roc_auc_score

    df = _vector_frame(600, seed=31)
    ddf = dd.from_pandas(df, npartitions=3)
    with dask.config.set(scheduler="synchronous"):
        got = evaluate(ddf, sm.AUROC(), label="y", score="prob", weight="w")
        neg = evaluate(ddf, sm.AUROC(), label="y", score="prob", positive_index=0)
        multi = evaluate(ddf, sm.AUROC(num_classes=3), label="c", score="cls", weight="w")
        with pytest.raises(ValueError, match="positive_index: must be an integer >= 0.*-1"):
            evaluate(ddf, sm.AUROC(), label="y", score="prob", positive_index=-1)
    assert got == pytest.approx(roc_auc_score(df.y, df.p, sample_weight=df.w), abs=1e-12)
    assert neg == pytest.approx(roc_auc_score(df.y, 1 - df.p), abs=1e-12)
    ref = roc_auc_score(df.c, np.stack(df.cls.to_numpy()), multi_class="ovr", sample_weight=df.w)
    assert multi == pytest.approx(ref, abs=1e-12)


def test_nulls_refused_naming_the_row_or_skipped(tmp_path: Path) -> None:
    """Issue #32: nulls="error" (default) names the column, the row (partition and index label,
    or the Parquet file and its row) and its values; nulls="skip" drops the rows and warns how
    many, on every path (states, score ranges, Parquet)."""
    from streammetrics._engines.request import NullRowsSkipped

    rng = np.random.default_rng(32)
    n = 300
    df = pd.DataFrame({"y": rng.integers(0, 2, n), "p": rng.random(n).round(2),
                       "w": rng.random(n).round(3), "k": rng.choice(["a", "b"], n)})
    holes = df.copy()
    holes.loc[[150, 160], "p"] = np.nan
    holes.loc[[200], "w"] = np.nan
    holes.to_parquet(tmp_path / "h.parquet", row_group_size=64, index=False)
    ddf = dd.from_pandas(holes, npartitions=3)
    kept = df.drop(index=[150, 160, 200])
    ref = sm.MetricSet(auroc=sm.AUROC(), f1=sm.F1()).update(
        kept.y.to_numpy(), kept.p.to_numpy(), sample_weight=kept.w.to_numpy()).compute()
    with dask.config.set(scheduler="synchronous"):
        with pytest.raises(ValueError, match=r"nulls: column 'p' is null at row 50 of Dask partition 1 "
                                             r"\(index 150; row \{'y': \d, 'p': nan\}"):
            evaluate(ddf, sm.F1(), label="y", score="p")
        with pytest.raises(ValueError, match=r"column 'w' is null at row 0 of Dask partition 2 "
                                             r"\(index 200; row \{'y': \d, 'p': [\d.]+, 'w': nan\}"):
            evaluate(ddf[ddf.p.notnull()], sm.F1(), label="y", score="p", weight="w")
        with pytest.raises(ValueError, match=r"column 'p' is null at row 50 of Dask partition 1 \(index 150"):
            evaluate(ddf, sm.AUROC(), label="y", score="p")  # the score-range path
        with pytest.raises(ValueError, match=r"column 'p' is null \(or NaN\) at row 150 of .*h\.parquet"):
            evaluate_parquet(str(tmp_path / "h.parquet"), sm.AUROC(), label="y", score="p")
        with pytest.warns(NullRowsSkipped, match=r"skipped 3 row\(s\)"):
            got = evaluate(ddf, sm.MetricSet(auroc=sm.AUROC(), f1=sm.F1()), label="y", score="p",
                           weight="w", nulls="skip")
        with pytest.warns(NullRowsSkipped, match=r"skipped 2 row\(s\)"):
            auroc = evaluate_parquet(str(tmp_path / "h.parquet"), sm.AUROC(), label="y", score="p",
                                     nulls="skip")
    assert got["auroc"] == pytest.approx(ref["auroc"], abs=1e-12)
    assert got["f1"] == pytest.approx(ref["f1"], abs=1e-12)
    from sklearn.metrics import roc_auc_score

    unweighted = df.drop(index=[150, 160])
    assert auroc == pytest.approx(roc_auc_score(unweighted.y, unweighted.p), abs=1e-12)


def test_as_frame_is_a_dask_dataframe_of_the_values(tmp_path: Path) -> None:
    """Issue #32: as_frame=True gives a Dask DataFrame of (slice keys,) metric, value rows."""
    df = _vector_frame(400, seed=34).drop(columns=["prob", "cls"])
    df["k"] = np.where(df.c == 0, "a", "b")
    df.to_parquet(tmp_path / "v.parquet", index=False)
    ddf = dd.from_pandas(df, npartitions=3)
    ms = sm.MetricSet(auroc=sm.AUROC(), cm=sm.ConfusionMatrix())
    with dask.config.set(scheduler="synchronous"):
        values = evaluate(ddf, ms, label="y", score="p")
        table = evaluate(ddf, ms, label="y", score="p", as_frame=True)
        ranged = evaluate_parquet(str(tmp_path / "v.parquet"), sm.AUROC(), label="y", score="p",
                                  as_frame=True)  # the score-range path
        sliced = evaluate(ddf, sm.F1(), label="y", score="p", by="k", as_frame=True)
        ref = evaluate(ddf, sm.F1(), label="y", score="p", by="k")
        assert isinstance(table, dd.DataFrame)
        table, ranged, sliced = table.compute(), ranged.compute(), sliced.compute()
    assert dict(zip(table.metric, table.value, strict=True)) == {
        "auroc": values["auroc"], **{f"cm[{i}, {j}]": values["cm"][i, j] for i in range(2) for j in range(2)}}
    assert list(ranged.metric) == ["AUROC"] and ranged.value.iloc[0] == pytest.approx(values["auroc"], abs=1e-12)
    assert list(sliced.columns) == ["k", "metric", "value"]
    assert dict(zip(sliced.k, sliced.value, strict=True)) == ref


def test_groupby_object_means_by() -> None:
    """Issue #32: ddf.groupby("k") in place of the frame means by="k"."""
    df = _vector_frame(400, seed=36).drop(columns=["prob", "cls"])
    df["k"] = np.where(df.c == 0, "a", "b")
    ddf = dd.from_pandas(df, npartitions=3)
    with dask.config.set(scheduler="synchronous"):
        cases = {"k": ddf.groupby("k"), ("k", "c"): ddf.groupby(["k", "c"])}
        for by, grouped in cases.items():
            keys = by if isinstance(by, str) else list(by)
            got = evaluate(grouped, sm.MetricSet(auroc=sm.AUROC(), f1=sm.F1()), label="y", score="p",
                           weight="w")
            ref = evaluate(ddf, sm.MetricSet(auroc=sm.AUROC(), f1=sm.F1()), label="y", score="p",
                           weight="w", by=keys)
            assert got == ref
        with pytest.raises(ValueError, match=r"by: the frame is already grouped by \['k'\]"):
            evaluate(ddf.groupby("k"), sm.F1(), label="y", score="p", by="c")
        with pytest.raises(ValueError, match="ddf: a grouped frame must be grouped by column names"):
            evaluate(ddf.groupby(ddf.c > 0), sm.F1(), label="y", score="p")
