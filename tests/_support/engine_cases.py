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
