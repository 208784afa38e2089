"""``to_dict()`` is strict JSON: ``json.dumps(..., allow_nan=False)`` works on every result, a
non-finite value becomes ``None`` (JSON ``null``, as pandas' ``DataFrame.to_json`` writes it),
while the result object and ``to_pandas()`` keep scikit-learn's values (the ROC curve's first
threshold ``inf``, nan rates without positives). Checked against scikit-learn and pandas."""

from __future__ import annotations

import json
import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

pd = pytest.importorskip("pandas")
metrics = pytest.importorskip("sklearn.metrics")

import streammetrics as sm  # noqa: E402
from streammetrics.calibration import CalibrationCurve, GainsCurve  # noqa: E402
from streammetrics.ranking.det import DETCurve  # noqa: E402


def strict(obj):
    return json.loads(json.dumps(obj, allow_nan=False))


def same_or_null(ours, reference) -> None:
    """``ours`` (from JSON) equals ``reference`` where finite and is None elsewhere."""
    ref = np.asarray(reference, dtype=float)
    assert len(ours) == len(ref)
    for got, want in zip(ours, ref, strict=True):
        if math.isfinite(want):
            assert got == pytest.approx(want, abs=1e-12)
        else:
            assert got is None


def test_roc_first_threshold_is_inf_in_the_result_and_null_in_to_dict():
    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, 300)
    s = np.round(rng.random(300), 2)
    r = sm.ROCCurve().update(y, s).compute()
    fpr, tpr, thresholds = metrics.roc_curve(y, s, drop_intermediate=False)
    assert thresholds[0] == np.inf and r.thresholds[0] == np.inf  # scikit-learn's convention, kept
    assert r.to_pandas()["thresholds"].iloc[0] == np.inf
    d = strict(r.to_dict())
    assert d["thresholds"][0] is None
    same_or_null(d["thresholds"], thresholds)
    same_or_null(d["fpr"], fpr)
    # pandas writes null at the same places for the same frame
    frame = json.loads(r.to_pandas().to_json(orient="columns"))
    for col, values in d.items():
        assert [v is None for v in frame[col].values()] == [v is None for v in values]


def test_every_curve_and_a_report_dump_as_strict_json_without_positives():
    y, s = np.zeros(20, dtype=int), np.linspace(0, 1, 20)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        results = [sm.ROCCurve().update(y, s).compute(), sm.PRCurve().update(y, s).compute(),
                   DETCurve().update(y, s).compute(), CalibrationCurve(n_bins=4).update(y, s).compute(),
                   GainsCurve().update(y, s).compute()]
        report = sm.ClassificationReport(2, zero_division=np.nan).update(y, (s > 0.5).astype(int)).compute()
    for r in results:
        d = strict(r.to_dict())
        frame = r.to_pandas()
        for col in d:
            same_or_null(d[col], frame[col].to_numpy(float))
    assert np.isnan(results[0].tpr).all() and all(v is None for v in strict(results[0].to_dict())["tpr"])
    d = strict(report.to_dict())
    assert d["1"]["recall"] is None and math.isnan(report["1"]["recall"])  # no positives: 0 / 0
    assert d["0"]["recall"] == pytest.approx(metrics.recall_score(y, s > 0.5, pos_label=0))


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 1), st.sampled_from([0.0, 0.25, 0.5, 0.75, 1.0])), min_size=1,
                max_size=30))
def test_metricset_to_dict_is_strict_json(rows):
    y = np.array([r[0] for r in rows])
    s = np.array([r[1] for r in rows])
    ms = sm.MetricSet(auroc=sm.AUROC(), ap=sm.AveragePrecision(), f1=sm.F1(zero_division=np.nan),
                      roc=sm.ROCCurve(), cm=sm.ConfusionMatrix())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = ms.update(y, s).compute()
    out = strict(res.to_dict())
    for name in ("auroc", "ap", "f1"):
        value = float(res[name])
        assert out[name] is None if not math.isfinite(value) else out[name] == value
    same_or_null(out["roc"]["thresholds"], res["roc"].thresholds)
    same_or_null(out["roc"]["tpr"], res["roc"].tpr)
    assert out["cm"] == metrics.confusion_matrix(y, s >= 0.5, labels=[0, 1]).tolist()
