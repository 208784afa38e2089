"""What the engine tests of issue #32's partial AUROC (``max_fpr``) and mixed ranking sets share:
the data (ties, weights), the one-process reference with its warnings, the 1e-12 comparison,
the metric sets and a count of the numbers in what a task sends."""

from __future__ import annotations

import dataclasses
import warnings
from typing import Any

import numpy as np
import pandas as pd

import streammetrics as sm


def data(n: int, seed: int, decimals: int, weighted: bool) -> pd.DataFrame:
    """Labels, tied scores (``decimals``) and, weighted, float weights (some zero)."""
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({"y": rng.integers(0, 2, n), "p": np.round(rng.random(n), decimals)})
    if weighted:
        df["w"] = np.where(rng.random(n) < 0.3, rng.integers(0, 3, n) * 0.5, np.round(rng.random(n), 3))
    return df


def one_process(metrics: sm.MetricSet, df: pd.DataFrame) -> tuple[dict[str, Any], list[str]]:
    """The values of ``metrics`` fed ``df`` in one process (weighted where ``df`` has ``w``) and
    the messages of the warnings it raises, sorted."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        acc = metrics.copy()
        if len(df):
            acc.update(df.y.to_numpy(), df.p.to_numpy(), sample_weight=df.w.to_numpy() if "w" in df else None)
        return acc.compute(), sorted(str(w.message) for w in caught)


def close(got: dict[str, Any], want: dict[str, Any]) -> None:
    """The same members in the same order, each within 1e-12 (nan where ``want`` is nan)."""
    assert list(got) == list(want)
    for k in want:
        np.testing.assert_allclose(np.asarray(got[k], dtype=float), np.asarray(want[k], dtype=float),
                                   rtol=1e-12, atol=1e-12, err_msg=k)


def numbers(obj: Any) -> int:
    """The numbers in a task's output or input (arrays' elements, containers' items)."""
    if isinstance(obj, np.ndarray):
        return int(obj.size)
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return sum(numbers(getattr(obj, f.name)) for f in dataclasses.fields(obj))
    if isinstance(obj, dict):
        return sum(numbers(v) for v in obj.values())
    if isinstance(obj, (list, tuple)):
        return sum(numbers(v) for v in obj)
    return 1


#: The most numbers a state of the sets' other members holds (F1's counts, the bounded bins).
REST_NUMBERS = 3 * 256 + 16


def metric_set(order: str, m: float) -> sm.MetricSet:
    """An exact AUROC, a partial one (``max_fpr=m``) and AP, alone (with a second partial AUROC),
    or before / after F1 and a bounded AUROC (another ranking state)."""
    ranked = {"auroc": sm.AUROC(), "part": sm.AUROC(max_fpr=m), "ap": sm.AveragePrecision()}
    rest = {"f1": sm.F1(), "bounded": sm.AUROC(max_bytes=2048)}
    return sm.MetricSet({"only ranked": {**ranked, "low": sm.AUROC(max_fpr=0.25)},
                         "ranked first": {**ranked, **rest}, "rest first": {**rest, **ranked}}[order])


def defined(df: pd.DataFrame) -> bool:
    """Whether both classes have positive weight (scikit-learn's partial AUROC is defined)."""
    w = df.w.to_numpy() if "w" in df else np.ones(len(df))
    return bool(w[df.y.to_numpy() == 1].sum() > 0 and w[df.y.to_numpy() == 0].sum() > 0)


def parquet_parts(root: Any, sizes: list[int], seed: int) -> pd.DataFrame:
    """Weighted :func:`data` frames of ``sizes`` rows (seeds ``seed``, ``seed + 1``, ...) written
    as ``root/part-i.parquet``; returns them concatenated."""
    frames = [data(k, seed + i, 2, True) for i, k in enumerate(sizes)]
    for i, f in enumerate(frames):
        f.to_parquet(root / f"part-{i}.parquet", index=False)
    return pd.concat(frames, ignore_index=True)


def one_class(df: pd.DataFrame, case: str) -> pd.DataFrame:
    """``df`` with a class absent: "no positives", "no negatives", "positives weigh zero" or
    "empty" (no row)."""
    df = df.copy()
    if case == "no positives":
        df["y"] = 0
    elif case == "no negatives":
        df["y"] = 1
    elif case == "positives weigh zero":
        df.loc[df.y == 1, "w"] = 0.0
    else:
        df = df.iloc[:0]
    return df


def recorded(fn: Any) -> tuple[Any, list[str]]:
    """``fn()`` and the messages of the warnings it raised (pyspark's FutureWarnings left out),
    sorted."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        values = fn()
    return values, sorted(str(w.message) for w in caught if not issubclass(w.category, FutureWarning))


def ray_dataset(df: pd.DataFrame, cuts: list[int]) -> Any:
    """``ray.data.from_pandas`` of ``df`` cut at ``cuts`` (uneven blocks, an empty one first)."""
    import ray

    at = sorted({min(max(c, 0), len(df)) for c in cuts})
    bounds = [0, *at, len(df)]
    return ray.data.from_pandas([df.iloc[:0], *[df.iloc[a:b] for a, b in zip(bounds[:-1], bounds[1:], strict=True)]])


def ks_set(order: str = "ranked first") -> sm.MetricSet:
    """The issue's set: exact AUROC, AP and KS (one score state) beside F1 (and a bounded AUROC)."""
    ranked = {"auc": sm.AUROC(), "ap": sm.AveragePrecision(), "ks": sm.KSStatistic()}
    rest = {"f1": sm.F1(), "bounded": sm.AUROC(max_bytes=2048)}
    return sm.MetricSet({**ranked, **rest} if order == "ranked first" else {**rest, **ranked})


def same_curve(got: Any, want: Any, fields: tuple[str, ...]) -> None:
    """Each of ``fields`` of two curve results equal within 1e-12."""
    for f in fields:
        np.testing.assert_allclose(getattr(got, f), getattr(want, f), rtol=1e-12, atol=1e-12, err_msg=f)


#: What ``evaluate_ranked`` takes beyond AUROC / AP / ROC / PR: KS, gains, lift, DET (and an AUROC).
CURVES = {"ks": sm.KSStatistic(), "gains": sm.GainsCurve(), "lift": sm.LiftCurve(),
          "det": sm.DETCurve(), "det_drop": sm.DETCurve(drop_intermediate=True), "auc": sm.AUROC()}


def check_ranked(got: dict[str, Any], df: pd.DataFrame, weighted: bool) -> None:
    """``evaluate_ranked``'s values of :data:`CURVES` against one process's (KS bit for bit
    unweighted, everything else within 1e-12)."""
    one = sm.MetricSet({k: type(m)._from_config(m._config()) for k, m in CURVES.items()})
    want, _ = one_process(one, df if weighted else df.drop(columns="w", errors="ignore"))
    if weighted:
        assert abs(got["ks"] - want["ks"]) <= 1e-12
    else:
        assert got["ks"] == want["ks"]
    for k in ("gains", "lift"):
        same_curve(got[k], want[k], ("thresholds", "fraction", "gain", "lift"))
        assert abs(got[k].max_lift - want[k].max_lift) <= 1e-12
        np.testing.assert_allclose(got[k].at_fraction(0.3), want[k].at_fraction(0.3), rtol=1e-12, atol=1e-12)
    for k in ("det", "det_drop"):
        same_curve(got[k], want[k], ("fpr", "fnr", "thresholds"))
    assert abs(got["auc"] - want["auc"]) <= 1e-12
