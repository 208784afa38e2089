"""Issue #32 item 2: more sets stay on ``streammetrics.dask.evaluate``'s score-range path (no gather
of every score): interpolated and 11-point ``AveragePrecision`` (unweighted: the root holds the
counts at every distinct positive score, so every AP readout is the single process's, bit for
bit; weighted or beside a partial AUROC: the ranges' precision envelopes, within 1e-12) and label / score / weight columns of pandas extension dtypes (``Int64``, ``Float64``,
``boolean``, ``int64[pyarrow]``, ``double[pyarrow]``), whose NA ``nulls=`` skips or refuses."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest

pytest.importorskip("dask.dataframe")
pytest.importorskip("sklearn")

import dask  # noqa: E402
import dask.dataframe as dd  # noqa: E402
import engine_cases as cases  # noqa: E402
import pandas as pd  # noqa: E402
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from sklearn.metrics import average_precision_score, roc_auc_score  # noqa: E402

import streammetrics as sm  # noqa: E402
import streammetrics._engines.range_counts as RC  # noqa: E402
from streammetrics._engines.plan import numeric_dtype  # noqa: E402
from streammetrics.dask import evaluate, evaluate_parquet  # noqa: E402

_frames = cases.delayed_partitions


def _readouts() -> sm.MetricSet:
    return sm.MetricSet(auroc=sm.AUROC(), ap=sm.AveragePrecision(),
                        interpolated=sm.AveragePrecision(interpolated=True),
                        eleven=sm.AveragePrecision(eleven_point=True), f1=sm.F1())


class _Splits:
    """Records what ``range_counts.split_of`` decided (None: not the range path)."""

    def __init__(self, mp: pytest.MonkeyPatch) -> None:
        self.seen: list[Any] = []
        real = RC.split_of

        def spy(*args: Any, **kwargs: Any) -> Any:
            out = real(*args, **kwargs)
            self.seen.append(out)
            return out
        mp.setattr(RC, "split_of", spy)

    @property
    def ranged(self) -> bool:
        return self.seen[:1] != [None] and bool(self.seen)


def _same(got: dict[str, Any], want: dict[str, Any]) -> None:
    assert list(got) == list(want)
    for k in want:
        assert np.array_equal(np.asarray(got[k]), np.asarray(want[k]), equal_nan=True), (k, got[k], want[k])


@settings(max_examples=30, deadline=None)
@given(n=st.integers(0, 300), seed=st.integers(0, 10**6), ranges=st.integers(1, 5),
       share=st.sampled_from([0.02, 0.3, 0.9]), decimals=st.sampled_from([1, 2, 6]), data=st.data())
def test_interpolated_and_eleven_point_ap_by_ranges_bit_for_bit(
        n: int, seed: int, ranges: int, share: float, decimals: int, data: Any) -> None:
    """Every AP readout beside AUROC and F1, any partitioning, ties and the exchange (few
    positives): the one-process values and warnings, bit for bit, on the range path."""
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({"y": (rng.random(n) < share).astype(np.int64),
                       "p": np.round(rng.random(n), decimals)})
    metrics = _readouts()
    with warnings.catch_warnings(record=True) as w1:
        warnings.simplefilter("always")
        want = metrics.copy().update(df.y.to_numpy(), df.p.to_numpy()).compute() if n else None
    cuts = data.draw(st.lists(st.integers(0, n), max_size=5))
    with pytest.MonkeyPatch.context() as mp, dask.config.set(scheduler="synchronous"), \
            warnings.catch_warnings(record=True) as w2:
        warnings.simplefilter("always")
        mp.setattr(RC, "range_count", lambda: ranges)
        splits = _Splits(mp)
        got = evaluate(_frames(df, cuts), metrics, label="y", score="p")
    if want is not None:
        assert splits.ranged
        _same(got, want)
        assert sorted(str(w.message) for w in w1) == sorted(str(w.message) for w in w2)


def test_interpolated_ap_against_the_definition() -> None:
    """The range path's interpolated / 11-point AP against a direct evaluation of the
    definition (precision envelope over the PR points; the mean at recall 0, 0.1, ..., 1), and
    the step AP against scikit-learn."""
    rng = np.random.default_rng(7)
    n = 4_000
    y = (rng.random(n) < 0.3).astype(np.int64)
    p = np.round(rng.random(n), 2)
    with pytest.MonkeyPatch.context() as mp, dask.config.set(scheduler="synchronous"):
        mp.setattr(RC, "range_count", lambda: 4)
        got = evaluate(_frames(pd.DataFrame({"y": y, "p": p}), [1_000, 2_500]), _readouts(),
                       label="y", score="p")
    thr = np.unique(p)[::-1]
    tps = np.array([np.sum((p >= t) & (y == 1)) for t in thr], dtype=float)
    fps = np.array([np.sum((p >= t) & (y == 0)) for t in thr], dtype=float)
    prec, rec = tps / (tps + fps), tps / y.sum()
    env = np.array([prec[i:].max() for i in range(thr.shape[0])])
    want_interp = float(np.sum(np.diff(np.concatenate([[0.0], rec])) * env))
    want_eleven = float(np.mean([env[rec >= r / 10 - 1e-15].max() if (rec >= r / 10 - 1e-15).any() else 0.0
                                 for r in range(11)]))
    assert got["interpolated"] == pytest.approx(want_interp, rel=1e-12)
    assert got["eleven"] == pytest.approx(want_eleven, rel=1e-12)
    assert got["ap"] == pytest.approx(average_precision_score(y, p), rel=1e-12)
    assert got["auroc"] == pytest.approx(roc_auc_score(y, p), rel=1e-12)


@settings(max_examples=25, deadline=None)
@given(n=st.integers(1, 300), seed=st.integers(0, 10**6), ranges=st.integers(1, 5),
       weights=st.sampled_from(["real", "zeros", "none", "tenths", "thirds"]), max_fpr=st.sampled_from([None, 0.3]),
       data=st.data())
def test_weighted_and_partial_sets_carry_the_envelopes(n: int, seed: int, ranges: int, weights: str,
                                                       max_fpr: float | None, data: Any) -> None:
    """Weighted, or beside a partial AUROC (the ranked kernel's route: each range told the weight
    above it), the interpolated and 11-point AP come from the ranges' precision envelopes
    (``_engines/ap_envelope``): within 1e-12 of one process, no gather."""
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({"y": (rng.random(n) < 0.4).astype(np.int64), "p": np.round(rng.random(n), 2)})
    if weights != "none":  # tenths / thirds: sums reaching the 11-point recall levels exactly
        df["w"] = {"zeros": np.where(rng.random(n) < 0.2, 0.0, rng.random(n)), "real": rng.random(n),
                   "tenths": rng.integers(0, 8, n) * 0.1, "thirds": rng.integers(0, 5, n) / 3}[weights]
    members: dict[str, Any] = {"interp": sm.AveragePrecision(interpolated=True),
                               "eleven": sm.AveragePrecision(eleven_point=True), "ap": sm.AveragePrecision(),
                               "auroc": sm.AUROC(max_fpr=max_fpr), "f1": sm.F1()}
    metrics = sm.MetricSet(members)
    w = df.w.to_numpy() if weights != "none" else None
    with warnings.catch_warnings(record=True):
        warnings.simplefilter("always")
        want = metrics.copy().update(df.y.to_numpy(), df.p.to_numpy(), sample_weight=w).compute()
    cuts = data.draw(st.lists(st.integers(0, n), max_size=4))
    with pytest.MonkeyPatch.context() as mp, dask.config.set(scheduler="synchronous"), \
            warnings.catch_warnings(record=True):
        warnings.simplefilter("always")
        mp.setattr(RC, "range_count", lambda: ranges)
        splits = _Splits(mp)
        got = evaluate(_frames(df, cuts), metrics, label="y", score="p",
                       weight="w" if weights != "none" else None)
    if weights != "none" or max_fpr is not None:
        assert any(s is not None and s.envelope for s in splits.seen)
    assert list(got) == list(want)
    for k, v in want.items():
        assert got[k] == pytest.approx(v, rel=1e-12, abs=1e-14, nan_ok=True), k


@pytest.mark.parametrize("unit", [1.0, 0.1, 0.05])
def test_evaluate_ranked_takes_interpolated_and_eleven_point_ap(unit: float) -> None:
    """``evaluate_ranked`` (weighted, several ranges): the readouts within 1e-12 of one process
    (weights multiples of 0.1 / 0.05 too: recall levels reached exactly, decided exactly)."""
    from streammetrics.dask import evaluate_ranked

    rng = np.random.default_rng(3)
    n = 2_000
    df = pd.DataFrame({"y": (rng.random(n) < 0.3).astype(np.int64), "p": np.round(rng.random(n), 2),
                       "w": rng.integers(0, 4, n) * unit})
    metrics = sm.MetricSet(interp=sm.AveragePrecision(interpolated=True),
                           eleven=sm.AveragePrecision(eleven_point=True), ap=sm.AveragePrecision())
    want = metrics.copy().update(df.y.to_numpy(), df.p.to_numpy(), sample_weight=df.w.to_numpy()).compute()
    with dask.config.set(scheduler="synchronous"):
        got = evaluate_ranked(_frames(df, [500, 1_200]), metrics, label="y", score="p", weight="w", ranges=6)
    for k, v in want.items():
        assert got[k] == pytest.approx(v, rel=1e-12), k


@pytest.mark.parametrize("unit", [0.1, 0.05, 1 / 3])
def test_eleven_point_levels_reached_exactly(unit: float) -> None:
    """Weights multiples of 0.1 / 0.05 / 1/3 whose sums reach recall levels exactly (the cases
    where float sums compared a level either way): the score ranges, the keyed ranges (``by=``)
    and ``evaluate_ranked`` give one process's values and the exact definition's 11-point AP."""
    from streammetrics.dask import evaluate_ranked

    metrics = cases.level_metrics()
    with pytest.MonkeyPatch.context() as mp, dask.config.set(scheduler="synchronous"):
        mp.setattr(RC, "range_count", lambda: 3)
        splits = _Splits(mp)
        for seed in cases.LEVEL_SEEDS:
            df = cases.level_frame(unit, (seed,))
            frames = _frames(df, [13, 27])
            cases.assert_exact_levels(evaluate(frames, metrics, label="y", score="p", weight="w"), df)
            cases.assert_exact_levels(evaluate_ranked(frames, metrics, label="y", score="p", weight="w", ranges=4),
                                      df)
        df = cases.level_frame(unit)
        cases.assert_exact_levels(evaluate(_frames(df, [50, 130]), metrics, label="y", score="p", weight="w",
                                           by="g"), df, by=True)
    assert any(s is not None and s.envelope for s in splits.seen)


def test_range_summary_bytes_carry_the_envelope() -> None:
    """Spark's shipped summaries: the envelope, the curve and the partial areas round trip."""
    from streammetrics._engines import ranked, ranked_common

    rng = np.random.default_rng(2)
    runs = (np.sort(rng.random(50)), None, np.sort(rng.random(30)), rng.random(30))
    for curves, fprs, envelope in ((False, (), True), (True, (0.2, 0.5), True), (True, (0.3,), False)):
        s = ranked.range_summary(runs, (4.0, 9.0, 12.0), (40.0, 80.0), curves, fprs, envelope=envelope)
        back = ranked_common.summary_from_bytes(ranked_common.summary_to_bytes(s))
        assert back.partial == s.partial and back.pairs == s.pairs and back.ap_part == s.ap_part
        assert (back.envelope is None) == (not envelope) and (back.curve is None) == (not curves)
        if envelope:
            assert s.envelope is not None and back.envelope is not None
            for a, b in ((s.envelope.values, back.envelope.values), (s.envelope.masses, back.envelope.masses),
                         (s.envelope.levels, back.envelope.levels), (s.envelope.exact, back.envelope.exact)):
                assert np.array_equal(a, b)
    with pytest.raises(ValueError, match="range summary"):
        ranked_common.summary_from_bytes(ranked_common.summary_to_bytes(s)[:30])


def test_interpolated_ap_from_parquet_files(tmp_path: Any) -> None:
    """``evaluate_parquet`` (the tasks read the files with pyarrow): the same readouts."""
    rng = np.random.default_rng(5)
    n = 3_000
    df = pd.DataFrame({"y": (rng.random(n) < 0.2).astype(np.int64), "p": np.round(rng.random(n), 3)})
    for i, part in enumerate(np.array_split(np.arange(n), 3)):
        df.iloc[part].to_parquet(tmp_path / f"part-{i}.parquet")
    metrics = _readouts()
    want = metrics.copy().update(df.y.to_numpy(), df.p.to_numpy()).compute()
    with pytest.MonkeyPatch.context() as mp, dask.config.set(scheduler="synchronous"):
        mp.setattr(RC, "range_count", lambda: 3)
        splits = _Splits(mp)
        got = evaluate_parquet(str(tmp_path), metrics, label="y", score="p")
    assert splits.ranged
    _same(got, want)


_LABELS = ["Int64", "UInt8", "boolean", "int64[pyarrow]", "bool[pyarrow]"]
_SCORES = ["Float64", "double[pyarrow]", "float32"]


@pytest.mark.parametrize("label_dtype", _LABELS)
@pytest.mark.parametrize("score_dtype", _SCORES)
def test_extension_dtypes_take_the_range_path(label_dtype: str, score_dtype: str) -> None:
    """Nullable label and score columns: the range path, NA rows skipped as the state path
    skips them (the same values, bit for bit, and the same count of skipped rows)."""
    rng = np.random.default_rng(len(label_dtype) * 31 + len(score_dtype))
    n = 400
    y = rng.random(n) < 0.4
    p = np.round(rng.random(n), 2)
    lab = pd.array(y if "bool" in label_dtype else y.astype(np.int64), dtype=label_dtype)
    sc = pd.array(p, dtype=score_dtype)
    na = score_dtype != "float32"
    if na:
        lab[[3, 50]] = pd.NA
        sc[[7, 50, 399]] = pd.NA
    df = pd.DataFrame({"y": lab, "p": sc})
    keep = ~(df.y.isna() | df.p.isna()).to_numpy()
    metrics = sm.MetricSet(auroc=sm.AUROC(), ap=sm.AveragePrecision(), f1=sm.F1())
    want = metrics.copy().update(y[keep].astype(np.int64), p[keep].astype(df.p.dtype.numpy_dtype
                                                                           if hasattr(df.p.dtype, "numpy_dtype")
                                                                           else np.float32)).compute()
    with pytest.MonkeyPatch.context() as mp, dask.config.set(scheduler="synchronous"), \
            warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        mp.setattr(RC, "range_count", lambda: 3)
        splits = _Splits(mp)
        got = evaluate(_frames(df, [100, 250]), metrics, label="y", score="p", nulls="skip")
    assert splits.ranged
    _same(got, want)
    skipped = [str(w.message) for w in caught if "skipped" in str(w.message) or "dropped" in str(w.message)]
    assert bool(skipped) == na
    if na:
        assert "4" in skipped[0]  # rows 3, 7, 50 and 399


def test_extension_dtype_null_is_named_as_on_the_state_path() -> None:
    """``nulls="error"`` (the default): the first NA row named by column, partition and row."""
    df = pd.DataFrame({"y": pd.array([1, 0, 1, 0, 1, 0], dtype="Int64"),
                       "p": pd.array([0.1, 0.2, None, 0.4, 0.5, 0.6], dtype="Float64")})
    with dask.config.set(scheduler="synchronous"), pytest.raises(ValueError) as ranged:
        evaluate(_frames(df, [1]), sm.MetricSet(auroc=sm.AUROC()), label="y", score="p")
    with dask.config.set(scheduler="synchronous"), pytest.raises(ValueError) as state:
        evaluate(_frames(df, [1]), sm.MetricSet(auroc=sm.AUROC(), hist=sm.AUROC(max_bytes=4096)),
                 label="y", score="p", by=None, compute=False)
    assert "column 'p' is null at row 1 of Dask partition 1" in str(ranged.value)
    assert str(ranged.value) == str(state.value)


@pytest.mark.parametrize("dtype", ["string", "category", "object", "datetime64[ns]", None])
def test_numeric_dtype_refuses_what_the_range_path_cannot_read(dtype: Any) -> None:
    assert not numeric_dtype(None if dtype is None else pd.api.types.pandas_dtype(dtype))


def test_extension_dtypes_take_the_keyed_route_with_by() -> None:
    """``by=`` slices over nullable columns: the (key, score) ranges, NA rows skipped, each
    slice's values those of one process over its rows."""
    import streammetrics._engines.keyed_ranges as KR

    rng = np.random.default_rng(1)
    n = 600
    y, p, g = rng.random(n) < 0.4, np.round(rng.random(n), 2), rng.integers(0, 4, n)
    df = pd.DataFrame({"y": pd.array(y.astype(np.int64), dtype="Int64"), "p": pd.array(p, dtype="Float64"),
                       "g": g})
    df.loc[[5, 77], "p"] = pd.NA
    metrics = sm.MetricSet(auroc=sm.AUROC(), ap=sm.AveragePrecision())
    seen: list[Any] = []
    real = KR.split_of
    with pytest.MonkeyPatch.context() as mp, dask.config.set(scheduler="synchronous"), \
            warnings.catch_warnings():
        warnings.simplefilter("ignore")
        mp.setattr(KR, "split_of", lambda *a, **k: seen.append(real(*a, **k)) or seen[-1])
        got = evaluate(dd.from_pandas(df, npartitions=3), metrics, label="y", score="p", by="g", nulls="skip")
    assert seen and seen[0] is not None
    keep = df.p.notna().to_numpy()
    for k in range(4):
        rows = keep & (g == k)
        want = metrics.copy().update(y[rows].astype(np.int64), p[rows]).compute()
        assert got[k]["auroc"] == want["auroc"]
        assert got[k]["ap"] == pytest.approx(want["ap"], rel=1e-12)
