"""streammetrics.ray.evaluate with ``by=`` slices and multiclass one-vs-rest exact AUROC / AP by
(key, score) ranges over a real local Ray's blocks (:mod:`streammetrics._engines.ray_keyed`): one
process's values (``Sliced`` with ``by=``) within 1e-12, the keyed path taken, uneven and empty
blocks."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import pytest

ray = pytest.importorskip("ray")
pytest.importorskip("ray.data")

import engine_cases as cases  # noqa: E402

import streammetrics as sm  # noqa: E402
import streammetrics._engines.ray_keyed as RK  # noqa: E402
from streammetrics.ray import evaluate, evaluate_parquet  # noqa: E402

C = 3
SCORES = [f"s{c}" for c in range(C)]


local_ray = pytest.fixture(scope="module", autouse=True)(cases.local_ray)


def test_multiclass_and_slices_by_keyed_ranges(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    rng = np.random.default_rng(5)
    n = 3_000
    y = rng.integers(0, C, n)
    s = np.round(rng.random((n, C)) + 0.3 * np.eye(C)[y], 2)
    df = pd.DataFrame({"y": y, **{f"s{c}": s[:, c] for c in range(C)}, "w": np.round(rng.random(n), 1),
                       "g": rng.choice(["a", "b", "c", "d"], n), "yb": (y == 1).astype(np.int64)})
    parts = [df.iloc[:0], df.iloc[:500], df.iloc[500:2_600], df.iloc[2_600:]]
    ds = ray.data.from_pandas(parts)
    calls: list[Any] = []
    real = RK.evaluate_keyed
    monkeypatch.setattr(RK, "evaluate_keyed", lambda *a: calls.append(a[2]) or real(*a))
    metrics = sm.MetricSet(auroc=sm.AUROC(C), micro=sm.AveragePrecision(C, average="micro"),
                           w=sm.AUROC(C, average="weighted"), acc=sm.Accuracy(C))
    want = metrics.copy().update(y, s, sample_weight=df.w.to_numpy()).compute()
    cases.assert_same(evaluate(ds, metrics, label="y", score=SCORES, weight="w"), want)
    binary = sm.MetricSet(auroc=sm.AUROC(), ap=sm.AveragePrecision(), f1=sm.F1())
    want = sm.Sliced(binary.copy()).update(df.yb.to_numpy(), df.s1.to_numpy(), slices=df.g.to_numpy()).compute()
    cases.assert_same(evaluate(ds, binary, label="yb", score="s1", by="g"), want)
    df.iloc[:1_800].to_parquet(tmp_path / "a.parquet")
    df.iloc[1_800:].to_parquet(tmp_path / "b.parquet")
    cases.assert_same(evaluate_parquet(str(tmp_path), binary, label="yb", score="s1", by="g"), want)
    assert len(calls) == 3  # evaluate_parquet with by=: read by Ray Data, then the keyed ranges


def test_a_refused_null_names_its_block_and_skip_counts_it() -> None:
    """A null in block 6 of 8 (tasks group up to 4 blocks) is refused as a plain ValueError
    naming block 6 of the dataset (review: the number restarted in each group and the error
    came back as Ray's task error); ``nulls="skip"`` drops that row, as one process would."""
    rng = np.random.default_rng(0)
    parts = [pd.DataFrame({"y": rng.integers(0, 2, 10), "s": rng.random(10), "g": rng.integers(0, 2, 10)})
             for _ in range(8)]
    parts[6].loc[parts[6].index[3], "s"] = np.nan
    ds = ray.data.from_pandas(parts)
    with pytest.raises(ValueError, match=r"Ray block 6\b") as err:
        evaluate(ds, sm.AUROC(), label="y", score="s", by="g")
    assert type(err.value) is ValueError
    df = pd.concat(parts, ignore_index=True).dropna()
    want = sm.Sliced(sm.AUROC()).update(df.y.to_numpy(), df.s.to_numpy(), slices=df.g.to_numpy()).compute()
    from streammetrics._engines.request import NullRowsSkipped

    with pytest.warns(NullRowsSkipped, match=r"skipped 1 row\(s\)"):
        got = evaluate(ds, sm.AUROC(), label="y", score="s", by="g", nulls="skip")
    cases.assert_same(got, want)


def test_partial_auroc_and_multilabel_by_keyed_ranges(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    """``AUROC(max_fpr=...)`` with ``by=`` (binary) and multiclass one-vs-rest, one-vs-one AUROC by
    slice x class pair, multilabel AUROC (full and partial) / AP by slice x label: the keyed
    ranges (evaluate and evaluate_parquet),
    one process's values within 1e-12 (ties, weights with zeros, a slice without positives), the
    driver given O(R x K) summaries, not the scores."""
    import streammetrics._engines.keyed_ranges as KR

    rng = np.random.default_rng(9)
    n = 4_000
    y = rng.integers(0, C, n)
    s = np.round(rng.random((n, C)) + 0.3 * np.eye(C)[y], 1)
    labels = (rng.random((n, C)) < 0.2 + 0.5 * (s > 0.6)).astype(np.int64)
    df = pd.DataFrame({"y": y, **{f"s{c}": s[:, c] for c in range(C)}, **{f"l{c}": labels[:, c] for c in range(C)},
                       "w": np.round(rng.random(n) * 2, 1), "g": rng.choice(["a", "b", "c", "d"], n),
                       "yb": (y == 1).astype(np.int64)})
    df.loc[df.g == "d", "yb"] = 0
    ds = ray.data.from_pandas([df.iloc[:0], df.iloc[:700], df.iloc[700:3_100], df.iloc[3_100:]])
    sent: list[int] = []
    real = KR.final_values
    monkeypatch.setattr(KR, "final_values", lambda *a: sent.append(cases.numbers_in(a[1])) or real(*a))
    w = df.w.to_numpy()
    binary = sm.MetricSet(part=sm.AUROC(max_fpr=0.3), auroc=sm.AUROC(), ap=sm.AveragePrecision(), f1=sm.F1())
    want = sm.Sliced(binary.copy()).update(df.yb.to_numpy(), df.s1.to_numpy(), slices=df.g.to_numpy(),
                                           sample_weight=w).compute()
    cases.assert_same(evaluate(ds, binary, label="yb", score="s1", by="g", weight="w"), want)
    multiclass = sm.MetricSet(part=sm.AUROC(C, max_fpr=0.4, average="weighted"),
                              micro=sm.AUROC(C, max_fpr=0.2, average="micro"), acc=sm.Accuracy(C))
    want = multiclass.copy().update(y, s, sample_weight=w).compute()
    cases.assert_same(evaluate(ds, multiclass, label="y", score=SCORES, weight="w"), want)
    ovo = sm.MetricSet(a=sm.AUROC(C, multi_class="ovo"), p=sm.AUROC(C, multi_class="ovo", max_fpr=0.3,
                                                                     average="weighted"))
    want = sm.Sliced(ovo.copy()).update(y, s, slices=df.g.to_numpy(), sample_weight=w).compute()
    cases.assert_same(evaluate(ds, ovo, label="y", score=SCORES, weight="w", by="g"), want)
    names = [f"l{c}" for c in range(C)]
    multilabel = sm.MetricSet(part=sm.AUROC(C, multilabel=True, max_fpr=0.3, average=None),
                              micro=sm.AUROC(C, multilabel=True, average="micro"),
                              ap=sm.AveragePrecision(C, multilabel=True))
    want = sm.Sliced(multilabel.copy()).update(labels, s, slices=df.g.to_numpy(), sample_weight=w).compute()
    cases.assert_same(evaluate(ds, multilabel, label=names, score=SCORES, by="g", weight="w"), want)
    df.iloc[:1_500].to_parquet(tmp_path / "a.parquet")
    df.iloc[1_500:].to_parquet(tmp_path / "b.parquet")
    cases.assert_same(evaluate_parquet(str(tmp_path), multilabel, label=names, score=SCORES, by="g", weight="w"),
                      want)
    assert len(sent) == 5  # every run by the keyed ranges
    assert max(sent) <= 8 * (4 * C * (C - 1) + 2) * 2  # a few numbers per (range, problem): 2 CPUs, 2 ranges


def test_interpolated_and_eleven_point_by_keyed_ranges(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    """Step, interpolated and 11-point AP (every average) beside a partial AUROC, multiclass by
    slices and multilabel, through Ray's keyed tasks (evaluate and evaluate_parquet): one
    process's values within 1e-12, real weights with zeros, an empty block."""
    rng = np.random.default_rng(21)
    n = 2_000
    y = rng.integers(0, C, n)
    s = np.round(rng.random((n, C)) + 0.3 * np.eye(C)[y], 2)
    labels = (rng.random((n, C)) < 0.2 + 0.5 * (s > 0.6)).astype(np.int64)
    w = np.where(rng.random(n) < 0.2, 0.0, rng.random(n))
    df = pd.DataFrame({"y": y, **{f"s{c}": s[:, c] for c in range(C)}, **{f"l{c}": labels[:, c] for c in range(C)},
                       "w": w, "g": rng.choice(["a", "b", "c"], n)})
    ds = ray.data.from_pandas([df.iloc[:0], df.iloc[:600], df.iloc[600:]])
    calls: list[Any] = []
    real = RK.evaluate_keyed
    monkeypatch.setattr(RK, "evaluate_keyed", lambda *a: calls.append(a[2]) or real(*a))

    def readouts(**kw: Any) -> sm.MetricSet:
        members: dict[str, Any] = {"part": sm.AUROC(C, max_fpr=0.3, **kw)}
        for avg in ("macro", "weighted", "micro", None):
            members[f"s_{avg}"] = sm.AveragePrecision(C, average=avg, **kw)
            members[f"i_{avg}"] = sm.AveragePrecision(C, interpolated=True, average=avg, **kw)
            members[f"e_{avg}"] = sm.AveragePrecision(C, eleven_point=True, average=avg, **kw)
        return sm.MetricSet(members)

    multiclass = readouts()
    want = sm.Sliced(multiclass.copy()).update(y, s, slices=df.g.to_numpy(), sample_weight=w).compute()
    cases.assert_same(evaluate(ds, multiclass, label="y", score=SCORES, weight="w", by="g"), want)
    names = [f"l{c}" for c in range(C)]
    multilabel = readouts(multilabel=True)
    want = multilabel.copy().update(labels, s, sample_weight=w).compute()
    cases.assert_same(evaluate(ds, multilabel, label=names, score=SCORES, weight="w"), want)
    df.iloc[:900].to_parquet(tmp_path / "a.parquet")
    df.iloc[900:].to_parquet(tmp_path / "b.parquet")
    cases.assert_same(evaluate_parquet(str(tmp_path), multilabel, label=names, score=SCORES, weight="w"), want)
    assert len(calls) == 3 and all(any(c.envelope_columns) for c in calls)


def test_eleven_point_levels_reached_exactly() -> None:
    """Weights multiples of 1/3 whose sums reach recall levels exactly (the cases where float
    sums compared a level either way): binary and by slices through Ray, one process's values
    and the exact definition's 11-point AP (a Fraction oracle)."""
    metrics = cases.level_metrics()
    df = cases.level_frame(1 / 3, (23,))
    ds = ray.data.from_pandas([df.iloc[:0], df.iloc[:15], df.iloc[15:]])
    cases.assert_exact_levels(evaluate(ds, metrics, label="y", score="p", weight="w"), df)
    df = cases.level_frame(1 / 3)
    ds = ray.data.from_pandas([df.iloc[:100], df.iloc[100:]])
    cases.assert_exact_levels(evaluate(ds, metrics, label="y", score="p", weight="w", by="g"), df, by=True)
