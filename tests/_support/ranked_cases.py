"""Shared cases of the range-partitioned engines (``evaluate_ranked`` on Spark and Ray).

The oracles: scikit-learn's ``roc_auc_score`` / ``average_precision_score`` (1e-12), and the
library's own exact accumulators fed the whole frame in one process (themselves tested against
scikit-learn): the curves' counts are equal bit for bit with unit or integer weights, within
1e-12 with float weights.
"""

from __future__ import annotations

import random
import warnings
from collections.abc import Callable, Iterator
from typing import Any
from unittest import mock

import numpy as np
import pandas as pd
import pytest
from hypothesis import strategies as st

import streammetrics as sm

TOL = 1e-12
CURVES = (("roc", ("fpr", "tpr", "thresholds")), ("roc_drop", ("fpr", "tpr", "thresholds")),
          ("pr", ("precision", "recall", "thresholds")))


def metrics() -> dict[str, Any]:
    """Every metric ``evaluate_ranked`` supports (a fresh set)."""
    return {"auc": sm.AUROC(), "ap": sm.AveragePrecision(), "interp": sm.AveragePrecision(interpolated=True),
            "eleven": sm.AveragePrecision(eleven_point=True), "roc": sm.ROCCurve(),
            "roc_drop": sm.ROCCurve(drop_intermediate=True), "pr": sm.PRCurve()}


def reference(df: pd.DataFrame, weight: str | None) -> dict[str, Any]:
    """The single-process values of :func:`metrics` on the whole frame."""
    w = None if weight is None else df[weight].to_numpy()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return sm.MetricSet(**metrics()).update(df.y.to_numpy(), df.p.to_numpy(), sample_weight=w).compute()


def _close(a: float, b: float) -> bool:
    return (a != a and b != b) or abs(a - b) <= TOL * max(1.0, abs(b))


def assert_same(got: dict[str, Any], df: pd.DataFrame, weight: str | None) -> None:
    """``got`` equals the single process (curves bit for bit unless the weights are fractional)
    and scikit-learn (AUROC, AP to 1e-12, where both classes are present)."""
    ref = reference(df, weight)
    assert _close(got["auc"], ref["auc"]), (got["auc"], ref["auc"])
    for name in ("ap", "interp", "eleven"):  # step; interpolated and 11-point: the ranges' envelopes
        assert _close(got[name], ref[name]), (name, got[name], ref[name])
    w = None if weight is None else df[weight].to_numpy()
    assert_curves(got, ref, exact=w is None or bool(np.all(w == np.round(w))))
    y = df.y.to_numpy()
    if len(np.unique(y)) == 2:
        from sklearn.metrics import average_precision_score, roc_auc_score

        assert _close(got["auc"], float(roc_auc_score(y, df.p.to_numpy(), sample_weight=w)))
        assert _close(got["ap"], float(average_precision_score(y, df.p.to_numpy(), sample_weight=w)))


def assert_curves(got: dict[str, Any], ref: dict[str, Any], exact: bool) -> None:
    """The curves of :data:`CURVES` in ``got`` equal ``ref``'s: bit for bit when ``exact`` (unit
    or integer weights: every count is an exact float sum), else within 1e-12 -- where
    ``drop_intermediate`` may then keep or drop a point whose neighbours make it collinear within
    float rounding (the ranges sum the weights in another order than one process, and the
    collinearity test is exact): each such point lies on the full curve's line through its
    neighbours within 1e-12, and the points both keep are equal."""
    for name, fields in CURVES:
        a_thr, b_thr = np.asarray(got[name].thresholds), np.asarray(ref[name].thresholds)
        if name == "roc_drop" and not exact and a_thr.shape != b_thr.shape:
            _assert_collinear_difference(got[name], ref[name], ref["roc"])
            continue
        for f in fields:
            a, b = np.asarray(getattr(got[name], f)), np.asarray(getattr(ref[name], f))
            assert a.shape == b.shape, (name, f, a.shape, b.shape)
            if exact:
                np.testing.assert_array_equal(a, b, err_msg=f"{name}.{f}")
            else:
                np.testing.assert_allclose(a, b, rtol=TOL, atol=TOL, equal_nan=True, err_msg=f"{name}.{f}")


def _assert_collinear_difference(got: Any, ref: Any, full: Any) -> None:
    """``got`` and ``ref`` (ROC curves with ``drop_intermediate``) keep the same points but those
    collinear within 1e-12 on the ``full`` curve (see :func:`assert_curves`)."""
    a_thr, b_thr, thr = (np.asarray(c.thresholds) for c in (got, ref, full))
    both, ia, ib = np.intersect1d(a_thr, b_thr, return_indices=True)
    for f in ("fpr", "tpr"):
        np.testing.assert_allclose(np.asarray(getattr(got, f))[ia], np.asarray(getattr(ref, f))[ib],
                                   rtol=TOL, atol=TOL, err_msg=f"roc_drop.{f}")
    fpr, tpr = np.asarray(full.fpr), np.asarray(full.tpr)
    for t in np.setxor1d(a_thr, b_thr):
        i = int(np.flatnonzero(thr == t)[0])
        assert 0 < i < thr.shape[0] - 1, ("an end point differs", t)
        for v in (fpr, tpr):
            assert abs(v[i + 1] - 2 * v[i] + v[i - 1]) <= TOL, ("not collinear within 1e-12", t)


def frame(n: int, seed: int, levels: int, weights: str = "float") -> pd.DataFrame:
    """``n`` rows: 0/1 labels, scores on ``levels`` values (1: all equal; ties), weights
    (``"float"``: fractional, ``"int"``: 1 to 3)."""
    rng = np.random.default_rng(seed)
    w = np.round(rng.random(n) * 3 + 0.01, 3) if weights == "float" else rng.integers(1, 4, n).astype(np.float64)
    return pd.DataFrame({"y": rng.integers(0, 2, n).astype(np.int64),
                         "p": rng.integers(0, levels, n) / max(levels - 1, 1), "w": w})


@st.composite
def frames(draw: Any, max_rows: int = 300) -> pd.DataFrame:
    """Random frames of :func:`frame` (every score equal, few, many levels; float or integer
    weights)."""
    return frame(draw(st.integers(0, max_rows)), draw(st.integers(0, 2**32 - 1)),
                 draw(st.sampled_from([1, 3, 20, 1000])), draw(st.sampled_from(["float", "int"])))


def with_nulls(n: int, seed: int) -> tuple[pd.DataFrame, int]:
    """A :func:`frame` of ``n`` rows (float labels) with nulls (NaN) in about 1 row in 7 of
    ``y``, ``p`` or ``w`` -- in the first and the last row too -- and how many rows hold one."""
    df = frame(n, seed, 20).astype({"y": np.float64})
    rng = np.random.default_rng(seed + 1)
    hit = rng.random(n) < 1 / 7
    hit[[0, n - 1]] = True
    col = rng.integers(0, 3, n)
    for j, name in enumerate(("y", "p", "w")):
        df.loc[hit & (col == j), name] = np.nan
    return df, int(hit.sum())


def assert_skipped(run: Callable[..., Any], df: pd.DataFrame, dropped: int) -> None:
    """``run(nulls=...)`` (an engine's ``evaluate_ranked`` of :func:`metrics` over ``df`` with
    label ``y``, score ``p``, weight ``w``) drops the rows holding a null with
    ``nulls="skip"`` -- the values those of the rows left, one warning naming how many were
    dropped -- refuses them by default, naming the option, and refuses an unknown option."""
    from streammetrics._engines.request import NullRowsSkipped

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = run(nulls="skip")
    skipped = [str(w.message) for w in caught if issubclass(w.category, NullRowsSkipped)]
    assert skipped == [f"nulls: skipped {dropped} row(s) holding a null in ['y', 'p', 'w']"], skipped
    assert_same(got, df.dropna(), "w")
    with pytest.raises(ValueError, match="nulls: column '[ypw]' is null .*pass nulls='skip'"):
        run()
    with pytest.raises(ValueError, match="nulls: must be one of"):
        run(nulls="drop")


def parts(df: pd.DataFrame, cuts: list[int]) -> list[pd.DataFrame]:
    """``df`` cut at the sorted ``cuts`` (positions clipped to the frame): empty parts included."""
    at = sorted(min(max(c, 0), len(df)) for c in cuts)
    bounds = [0, *at, len(df)]
    return [df.iloc[a:b] for a, b in zip(bounds[:-1], bounds[1:], strict=True)]


# -- a stand-in for the few DataFrame calls the Spark range jobs make --------------------------------


class Rows:
    """Collected rows (tuples) standing for a DataFrame after a Python task."""

    def __init__(self, rows: list[tuple[Any, ...]], columns: list[str]) -> None:
        self.rows, self.columns = rows, columns

    def collect(self) -> list[tuple[Any, ...]]:
        return self.rows

    def persist(self, level: Any = None) -> Rows:
        return self

    def unpersist(self) -> None:
        pass

    def filter(self, condition: str) -> Rows:  # "kind = 0", "kind != 0": the routed rows' filters
        name, op, value = condition.split()
        keep = (lambda v: v == int(value)) if op == "=" else (lambda v: v != int(value))
        at = self.columns.index(name)
        return Rows([r for r in self.rows if keep(r[at])], self.columns)

    def select(self, *cols: str) -> Rows:
        at = [self.columns.index(c) for c in cols]
        return Rows([tuple(r[i] for i in at) for r in self.rows], list(cols))

    def mapInArrow(self, fn: Callable[[Iterator[Any]], Iterator[Any]], schema: str) -> Rows:  # noqa: N802
        import pyarrow as pa

        table = pa.Table.from_pylist([dict(zip(self.columns, r, strict=True)) for r in self.rows])
        out: list[tuple[Any, ...]] = []
        for batch in fn(iter(table.to_batches(max_chunksize=1))):
            out.extend(tuple(r.values()) for r in batch.to_pylist())
        return Rows(out, [c.split()[0] for c in schema.split(", ")])

    def groupBy(self, key: str) -> Rows:  # noqa: N802 (Spark's name)
        self.key = key
        return self

    def applyInPandas(self, fn: Callable[[pd.DataFrame], pd.DataFrame], schema: str) -> Rows:  # noqa: N802
        frame = pd.DataFrame(self.rows, columns=self.columns)
        groups = [g.sample(frac=1.0, random_state=0) for _, g in frame.groupby(self.key)]
        random.Random(1).shuffle(groups)  # Spark's order: none
        out = [tuple(r) for g in groups for r in fn(g).itertuples(index=False)]
        return Rows(out, [c.split()[0] for c in schema.split(", ")])


class Partitions:
    """A DataFrame as pandas partitions, each fed to a Python task in batches of ``batch`` rows;
    ``task_id`` (module, name): the function giving a task its partition number, patched
    (default: ``spark_ranked``'s)."""

    def __init__(self, parts: list[pd.DataFrame], batch: int = 7, task_id: tuple[Any, str] | None = None) -> None:
        self.parts, self.batch, self.task_id = parts, batch, task_id
        self.columns = list(parts[0].columns)

    def select(self, *cols: str) -> Partitions:
        return Partitions([p[list(cols)] for p in self.parts], self.batch, self.task_id)

    def mapInArrow(self, fn: Callable[[Iterator[Any]], Iterator[Any]], schema: str) -> Rows:  # noqa: N802
        import pyarrow as pa

        from streammetrics._engines import spark_ranked

        module, name = self.task_id or (spark_ranked, "_part")
        rows: list[tuple[Any, ...]] = []
        for i, p in enumerate(self.parts):
            table = pa.Table.from_pandas(p, preserve_index=False)
            with mock.patch.object(module, name, lambda i=i: i):
                for batch in fn(iter(table.to_batches(max_chunksize=self.batch))):
                    rows.extend(tuple(r.values()) for r in batch.to_pylist())
        return Rows(rows, [c.split()[0] for c in schema.split(", ")])
