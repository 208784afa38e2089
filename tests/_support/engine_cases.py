"""Shared data and checks for the engine integration tests (Spark, Ray): each engine must give
the single-process result on the same rows, whatever the partitioning."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np
import pandas as pd

import streammetrics as sm


def classification_frame(n: int = 3000, seed: int = 0) -> pd.DataFrame:
    """Binary labels, tied scores (rounded), float weights, three class-score columns."""
    rng = np.random.default_rng(seed)
    probs = rng.dirichlet(np.ones(3), n).round(2)
    return pd.DataFrame({
        "y": rng.integers(0, 2, n),
        "p": rng.random(n).round(2),
        "w": rng.random(n).round(3),
        "c": rng.integers(0, 3, n),
        "s0": probs[:, 0], "s1": probs[:, 1], "s2": probs[:, 2],
    })


def binary_set() -> sm.MetricSet:
    return sm.MetricSet(
        auroc=sm.AUROC(), ap=sm.AveragePrecision(), f1=sm.F1(), cm=sm.ConfusionMatrix(),
        bounded=sm.AUROC(max_bytes=4096),
    )


def multiclass_set() -> sm.MetricSet:
    return sm.MetricSet(auroc=sm.AUROC(num_classes=3), acc=sm.Accuracy(num_classes=3))


def retrieval_frame(n: int = 2000, seed: int = 1) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame({
        "q": rng.integers(0, 40, n).astype(str),
        "d": np.arange(n).astype(str),
        "rel": rng.integers(0, 3, n),
        "s": rng.random(n).round(2),
    })


def retrieval_set() -> sm.MetricSet:
    return sm.MetricSet(ndcg=sm.NDCG(k=10), map=sm.MAP(), p5=sm.PrecisionAtK(k=5))


def single_process(metrics: sm.MetricSet, df: pd.DataFrame, **cols: Any) -> dict[str, Any]:
    """The reference: one accumulator fed every row once (retrieval: rows grouped by query)."""
    acc = metrics.copy()
    if "query" in cols:
        df = df.sort_values(cols["query"], kind="stable")
        acc.update(df[cols["label"]].to_numpy(), df[cols["score"]].to_numpy(),
                   query_ids=df[cols["query"]].to_numpy(), doc_ids=df[cols["doc_id"]].to_numpy())
        return acc.compute()
    score = cols["score"]
    y_score = df[score].to_numpy() if isinstance(score, str) else df[list(score)].to_numpy()
    weight = df[cols["weight"]].to_numpy() if cols.get("weight") else None
    acc.update(df[cols["label"]].to_numpy(), y_score, sample_weight=weight)
    return acc.compute()


def assert_same(got: Any, ref: Any) -> None:
    """Equal values: arrays elementwise, floats to 1e-12 relative (sums of float weights)."""
    if isinstance(ref, dict):
        assert set(got) == set(ref)
        for k in ref:
            assert_same(got[k], ref[k])
        return
    if hasattr(ref, "estimate"):  # a certified interval result
        np.testing.assert_allclose(
            [got.estimate, got.lower, got.upper], [ref.estimate, ref.lower, ref.upper], rtol=1e-12
        )
        return
    np.testing.assert_allclose(np.asarray(got, dtype=float), np.asarray(ref, dtype=float), rtol=1e-12)


#: Seeds of :func:`level_frame` whose weight sums reach an 11-point recall level exactly and
#: where, before the levels were decided in exact sums, one process or the score ranges compared
#: a level either way (a jump of a value by up to 0.05).
LEVEL_SEEDS = (4, 23, 32, 42, 58, 68)


def level_frame(unit: float, seeds: tuple[int, ...] = LEVEL_SEEDS) -> pd.DataFrame:
    """40 rows per seed, the seed as slice ``g``: label ``y``, score ``p`` of 1 decimal (ties),
    weight ``w`` a multiple of ``unit`` (0.1, 0.05, 1/3; zeros too)."""
    frames = []
    for seed in seeds:
        rng = np.random.default_rng(seed)
        n = 40
        frames.append(pd.DataFrame({"y": (rng.random(n) < 0.5).astype(np.int64), "p": np.round(rng.random(n), 1),
                                    "w": rng.integers(0, 7, n) * unit, "g": seed}))
    return pd.concat(frames, ignore_index=True)


def level_metrics() -> sm.MetricSet:
    """11-point, interpolated and step AP (the envelopes' route when weighted)."""
    return sm.MetricSet(e=sm.AveragePrecision(eleven_point=True), i=sm.AveragePrecision(interpolated=True),
                        s=sm.AveragePrecision())


def assert_exact_levels(got: dict[str, Any], df: pd.DataFrame, by: bool = False) -> None:
    """``got`` (of :func:`level_metrics` over ``df``, by ``g`` with ``by``) is one process's
    values within 1e-12, and its 11-point AP the exact definition's (a Fraction oracle)."""
    from ranking_oracles import eleven_point_exact

    one = level_metrics()
    if by:
        want = sm.Sliced(one).update(df.y.to_numpy(), df.p.to_numpy(), slices=df.g.to_numpy(),
                                     sample_weight=df.w.to_numpy()).compute()
        exact = {k: eleven_point_exact(d.y.to_numpy(), d.p.to_numpy(), d.w.to_numpy()) for k, d in df.groupby("g")}
        assert_same({k: v["e"] for k, v in got.items()}, exact)
    else:
        want = one.update(df.y.to_numpy(), df.p.to_numpy(), sample_weight=df.w.to_numpy()).compute()
        assert_same(got["e"], eleven_point_exact(df.y.to_numpy(), df.p.to_numpy(), df.w.to_numpy()))
    assert_same(got, want)


def sliced_frame(n: int = 2400, seed: int = 5) -> pd.DataFrame:
    """:func:`classification_frame` with slice keys, sorted by ``region`` so that partitions
    cut in order see different slices (some only one); ``tier`` an integer key."""
    df = classification_frame(n, seed)
    rng = np.random.default_rng(seed + 1)
    df["region"] = rng.choice(["north", "south", "east", "west"], n, p=[0.5, 0.3, 0.15, 0.05])
    df["tier"] = rng.integers(0, 3, n)
    return df.sort_values("region", kind="stable").reset_index(drop=True)


def single_process_sliced(metrics: sm.Metric, df: pd.DataFrame, by: Any, **cols: Any) -> dict[Any, Any]:
    """The reference of a ``by=`` run: ``Sliced`` around the metrics, fed every row once."""
    acc = sm.Sliced(metrics.copy())
    slices = df[by].to_numpy() if isinstance(by, str) else {c: df[c].to_numpy() for c in by}
    weight = df[cols["weight"]].to_numpy() if cols.get("weight") else None
    acc.update(df[cols["label"]].to_numpy(), df[cols["score"]].to_numpy(), slices=slices,
               sample_weight=weight)
    return acc.compute()


@contextmanager
def local_cluster(workers: int = 2) -> Iterator[Any]:
    """A client of a real LocalCluster of ``workers`` single-threaded worker processes."""
    import dask
    from distributed import Client, LocalCluster

    with dask.config.set({"distributed.worker.daemon": False}), LocalCluster(
        n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None
    ) as cluster, Client(cluster) as c:
        yield c


# -- regression (issue #30): every engine against scikit-learn / scipy on the same rows ----------


def regression_frame(n: int = 900, seed: int = 11) -> pd.DataFrame:
    """Float targets and predictions with many ties (quarters), float weights (some zero), a
    second output (``y2`` / ``p2``) and interval bounds ``lo`` <= ``hi`` around ``p``."""
    rng = np.random.default_rng(seed)
    y = np.round(rng.normal(size=(n, 2)) * 4) / 4
    p = np.round((0.7 * y + rng.normal(size=(n, 2))) * 4) / 4
    half = np.round(rng.random(n) * 2, 2)
    w = np.round(rng.random(n), 3)
    w[rng.random(n) < 0.05] = 0.0
    return pd.DataFrame({"y": y[:, 0], "p": p[:, 0], "y2": y[:, 1], "p2": p[:, 1], "w": w,
                         "lo": p[:, 0] - half, "hi": p[:, 0] + half})


def regression_set() -> sm.MetricSet:
    """The regression members whose states differ: moments, sorted value buffers, pair ranks."""
    return sm.MetricSet(mse=sm.MeanSquaredError(), mae=sm.MeanAbsoluteError(), r2=sm.R2Score(),
                        medae=sm.MedianAbsoluteError(), spearman=sm.SpearmanCorrCoef(),
                        kendall=sm.KendallTau(), pearson=sm.PearsonCorrCoef())


def regression_oracle(df: pd.DataFrame) -> dict[str, float]:
    """:func:`regression_set`'s values, unweighted, from scikit-learn and scipy."""
    import scipy.stats as ss
    from sklearn import metrics as skm

    y, p = df["y"].to_numpy(), df["p"].to_numpy()
    return {"mse": skm.mean_squared_error(y, p), "mae": skm.mean_absolute_error(y, p),
            "r2": skm.r2_score(y, p), "medae": skm.median_absolute_error(y, p),
            "spearman": ss.spearmanr(y, p).statistic, "kendall": ss.kendalltau(y, p).statistic,
            "pearson": ss.pearsonr(y, p).statistic}


def weighted_regression_set() -> sm.MetricSet:
    return sm.MetricSet(mse=sm.MeanSquaredError(), mae=sm.MeanAbsoluteError(), r2=sm.R2Score(),
                        medae=sm.MedianAbsoluteError())


def weighted_regression_oracle(df: pd.DataFrame) -> dict[str, float]:
    """:func:`weighted_regression_set`'s values with the ``w`` column, from scikit-learn."""
    from sklearn import metrics as skm

    y, p, w = df["y"].to_numpy(), df["p"].to_numpy(), df["w"].to_numpy()
    return {"mse": skm.mean_squared_error(y, p, sample_weight=w),
            "mae": skm.mean_absolute_error(y, p, sample_weight=w),
            "r2": skm.r2_score(y, p, sample_weight=w),
            "medae": skm.median_absolute_error(y, p, sample_weight=w)}


def check_regression(evaluate: Any, data: Any, df: pd.DataFrame) -> None:
    """An engine's ``evaluate`` over ``data`` (holding the rows of :func:`regression_frame` ``df``)
    equals scikit-learn / scipy: the exact set unweighted (``target`` / ``prediction`` names),
    weighted, multioutput ``raw_values`` (column lists), ``IntervalCoverage`` over (lo, hi)
    columns, a bounded median's bounds around the exact value, and ``compute=False``'s
    accumulator equal to one process's. 1e-12 relative (sums of float weights in another order)."""
    from sklearn import metrics as skm

    got = evaluate(data, regression_set(), target="y", prediction="p")
    assert_same(got, regression_oracle(df))
    got = evaluate(data, weighted_regression_set(), label="y", score="p", weight="w")
    assert_same(got, weighted_regression_oracle(df))
    raw = evaluate(data, sm.MeanSquaredError(multioutput="raw_values"), target=["y", "y2"],
                   prediction=["p", "p2"], weight="w")
    np.testing.assert_allclose(raw, skm.mean_squared_error(
        df[["y", "y2"]].to_numpy(), df[["p", "p2"]].to_numpy(), sample_weight=df["w"].to_numpy(),
        multioutput="raw_values"), rtol=1e-12)
    y, lo, hi, w = (df[c].to_numpy() for c in ("y", "lo", "hi", "w"))
    coverage = evaluate(data, sm.IntervalCoverage(), target="y", prediction=["lo", "hi"], weight="w")
    np.testing.assert_allclose(coverage, (w * ((lo <= y) & (y <= hi))).sum() / w.sum(), rtol=1e-12)
    # ``lo`` as the prediction: hundreds of distinct errors, more than 1 KiB of bins holds exactly
    bounded = evaluate(data, {"medae": sm.MedianAbsoluteError(max_bytes=1024)}, target="y",
                       prediction="lo", compute=False)["medae"]
    ref = sm.MedianAbsoluteError(max_bytes=1024).update(y, lo)
    assert not bounded.is_exact
    exact = skm.median_absolute_error(y, lo)
    low, high = bounded.bounds()
    assert low <= exact <= high
    np.testing.assert_allclose([low, high], ref.bounds(), rtol=1e-12)


def sliced_takes_regression() -> bool:
    """Whether ``Sliced`` wraps regression metrics (main's Sliced does since the reg-sliced merge)."""
    try:
        sm.Sliced(sm.MeanSquaredError())
    except ValueError:
        return False
    return True


def check_regression_sliced(evaluate: Any, data: Any, df: pd.DataFrame) -> None:
    """``by=`` with regression metrics (target / prediction names, weights): the values per
    slice equal ``Sliced`` in one process and scikit-learn on each slice's rows (1e-12)."""
    from sklearn import metrics as skm

    df = df.assign(region=np.where(df["y"] > 0.5, "high", np.where(df["y"] < -0.5, "low", "mid")))
    ms = weighted_regression_set()
    got = evaluate(data(df), ms, by="region", target="y", prediction="p", weight="w")
    assert_same(got, single_process_sliced(ms, df, "region", label="y", score="p", weight="w"))
    for key, values in got.items():
        rows = df[df["region"] == key]
        assert_same(values, weighted_regression_oracle(rows))
        assert values["mse"] == pytest_approx(skm.mean_squared_error(rows["y"], rows["p"],
                                                                     sample_weight=rows["w"]))


def pytest_approx(value: float) -> Any:
    import pytest

    return pytest.approx(value, rel=1e-12)


def local_ray() -> Iterator[None]:
    """A quiet local Ray of 2 CPUs for one test module (the Ray test modules' fixture: ``local_ray =
    pytest.fixture(scope="module", autouse=True)(cases.local_ray)``), shut down after it."""
    import ray
    import ray.data

    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, logging_level="ERROR",
             configure_logging=False)
    ray.data.DataContext.get_current().enable_progress_bars = False
    yield
    ray.shutdown()


def ray_no_gather(monkeypatch: Any) -> None:
    """Make Ray's state path (the driver's read of the blocks' states) fail the test: a route
    that must not gather every score; undone with ``monkeypatch``."""
    import streammetrics.ray as SR

    def gather(*_: Any, **__: Any) -> Any:
        raise AssertionError("the state path (gather) ran")

    monkeypatch.setattr(SR, "state_from_bytes", gather)


def spy(monkeypatch: Any, module: Any, name: str) -> list[Any]:
    """Record each call of ``module.name`` (a route's entry point, still run) in the list
    returned; undone with ``monkeypatch``."""
    calls: list[Any] = []
    real = getattr(module, name)
    monkeypatch.setattr(module, name, lambda *a, **k: calls.append(name) or real(*a, **k))
    return calls


def numbers_in(obj: object) -> int:
    """The numbers in a task's output: its arrays' elements, each other scalar 1 (None 0: a field
    left empty), lists, tuples and dataclasses counted through (what an engine test says
    reaches the root)."""
    import dataclasses

    if obj is None:
        return 0
    if isinstance(obj, np.ndarray):
        return int(obj.size)
    if isinstance(obj, (list, tuple)):
        return sum(numbers_in(x) for x in obj)
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return sum(numbers_in(getattr(obj, f.name)) for f in dataclasses.fields(obj))
    return 1


def delayed_partitions(df: pd.DataFrame, cuts: list[int]) -> Any:
    """``df`` as a Dask DataFrame whose partitions end at ``cuts`` (any positions, repeated or
    out of order: empty partitions), built from delayed pieces."""
    import dask
    import dask.dataframe as dd

    bounds = [0, *sorted(cuts), len(df)]
    parts = [df.iloc[a:b] for a, b in zip(bounds[:-1], bounds[1:], strict=True)]
    return dd.from_delayed([dask.delayed(p) for p in parts], meta=df.iloc[:0])


#: The binary labels of :func:`labelled_frame` (negative, positive) and its classes.
SPAM = ("ham", "spam")
ANIMALS = ("cat", "dog", "eel")


def labelled_frame(n: int = 1200, seed: int = 3, kind: str = "object") -> pd.DataFrame:
    """Rows whose labels are strings: ``yb`` binary (:data:`SPAM`), ``yc`` multiclass
    (:data:`ANIMALS`), ``yn`` binary numbers 3 / 7 (7 the positive); tied scores ``p`` (binary)
    and ``s0..s2`` (classes, rounded), float weights ``w``, a slice key ``g``. ``kind``: the
    label columns' dtype -- ``"object"``, ``"category"`` or ``"pyarrow"`` (``string[pyarrow]``)."""
    rng = np.random.default_rng(seed)
    c = rng.integers(0, 3, n)
    s = np.round(rng.random((n, 3)) + 0.3 * np.eye(3)[c], 1)
    yb = rng.integers(0, 2, n)
    df = pd.DataFrame({"yb": np.array(SPAM, dtype=object)[yb], "yc": np.array(ANIMALS, dtype=object)[c],
                       "yn": np.where(yb == 1, 7, 3), "p": np.round(rng.random(n) * 0.6 + 0.4 * yb, 2),
                       "s0": s[:, 0], "s1": s[:, 1], "s2": s[:, 2], "w": np.round(rng.random(n) * 3, 1),
                       "g": rng.integers(0, 4, n)})
    if kind != "object":
        dtype = "category" if kind == "category" else "string[pyarrow]"
        df = df.astype({"yb": dtype, "yc": dtype})
    return df


def spam_set(**extra: Any) -> sm.MetricSet:
    """Binary members reading ``pos_label="spam"``: exact AUROC and AP (the ranked group), F1."""
    return sm.MetricSet(auroc=sm.AUROC(pos_label="spam", **extra), ap=sm.AveragePrecision(pos_label="spam"),
                        f1=sm.F1(pos_label="spam"))


def animal_set() -> sm.MetricSet:
    """Multiclass members over ``classes=ANIMALS``: AUROC macro, AP micro, accuracy."""
    cls = list(ANIMALS)
    return sm.MetricSet(auroc=sm.AUROC(classes=cls), ap=sm.AveragePrecision(classes=cls, average="micro"),
                        acc=sm.Accuracy(classes=cls))


def spark_routes(monkeypatch: Any) -> list[Any]:
    """The splits Spark's range routes' ``split_for`` return (a None: that route not taken),
    spied with ``monkeypatch`` (keyed, shuffled ranked and direct Parquet ranges)."""
    from streammetrics._engines import spark_keyed, spark_ranges, spark_ranked

    seen: list[Any] = []
    for module in (spark_keyed, spark_ranked, spark_ranges):
        real = module.split_for
        monkeypatch.setattr(module, "split_for", lambda *a, real=real, **k: seen.append(real(*a, **k)) or seen[-1])
    return seen


def ray_routes(monkeypatch: Any) -> list[Any]:
    """The names of the Ray range routes that ran (block ranges, keyed ranges, the Parquet file
    tasks), spied with ``monkeypatch``."""
    from streammetrics._engines import ray_blocks, ray_keyed, ray_ranges

    ran: list[Any] = []
    for module, name in ((ray_blocks, "evaluate_blocks"), (ray_keyed, "evaluate_dataset"),
                         (ray_ranges, "evaluate_files")):
        real = getattr(module, name)

        def spy(*a: Any, real: Any = real, name: str = name, **k: Any) -> Any:
            out = real(*a, **k)
            if out is not None:
                ran.append(name)
            return out
        monkeypatch.setattr(module, name, spy)
    return ran
