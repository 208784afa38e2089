"""streammetrics.otel: observable gauges read through the real SDK's InMemoryMetricReader."""

from __future__ import annotations

import logging
import subprocess
import sys

import numpy as np
import pytest

import streammetrics as sm
from streammetrics.monitoring import Estimated

pytest.importorskip("opentelemetry.sdk")
from opentelemetry.sdk.metrics import MeterProvider  # noqa: E402
from opentelemetry.sdk.metrics.export import InMemoryMetricReader  # noqa: E402

from streammetrics import otel  # noqa: E402


def setup():
    reader = InMemoryMetricReader()
    return reader, MeterProvider(metric_readers=[reader]).get_meter("test")


def points(reader) -> dict[str, dict[frozenset, float]]:
    """{instrument: {attributes: value}} of one collection."""
    out: dict[str, dict[frozenset, float]] = {}
    data = reader.get_metrics_data()
    if data is None:
        return out
    for rm in data.resource_metrics:
        for sc in rm.scope_metrics:
            for m in sc.metrics:
                out[m.name] = {frozenset(p.attributes.items()): p.value for p in m.data.data_points}
    return out


def only(series: dict[frozenset, float]) -> float:
    assert len(series) == 1
    return next(iter(series.values()))


def test_values_intervals_bounds_samples_and_classes():
    reader, meter = setup()
    rng = np.random.default_rng(0)
    y, s = rng.integers(0, 3, 200), rng.dirichlet([1, 1, 1], 200)
    metrics = sm.MetricSet(acc=sm.Accuracy(3), rec=sm.Recall(3, average=None), cm=sm.ConfusionMatrix(3),
                           auroc=sm.AUROC(3, max_bytes=4096), roc=sm.ROCCurve(3))
    otel.register(metrics, meter, prefix="svc", attributes={"model": "v3"})
    metrics.update(y, s)
    got = points(reader)
    model = ("model", "v3")
    assert only(got["svc.acc"]) == pytest.approx(metrics["acc"].compute(), rel=1e-15)
    low, high = metrics["acc"].interval(0.95)
    assert only(got["svc.acc.interval_low"]) == pytest.approx(low, rel=1e-15)
    assert only(got["svc.acc.interval_high"]) == pytest.approx(high, rel=1e-15)
    assert only(got["svc.acc.samples"]) == 200
    recall = metrics["rec"].compute()
    for c in range(3):
        assert got["svc.rec"][frozenset({model, ("class", c)})] == pytest.approx(recall[c], rel=1e-15)
    cm = metrics["cm"].compute()
    assert got["svc.cm"][frozenset({model, ("actual", 2), ("predicted", 1)})] == cm[2, 1]
    b = metrics["auroc"].bounds()
    assert only(got["svc.auroc.bounds_low"]) == pytest.approx(b[0], rel=1e-15)
    assert only(got["svc.auroc.bounds_high"]) == pytest.approx(b[1], rel=1e-15)
    assert "svc.roc" not in got  # a curve is not a number
    assert only(got["svc.acc.collect_errors"]) == 0


def test_a_failing_member_never_fails_the_export(monkeypatch, caplog):
    reader, meter = setup()
    metrics = sm.MetricSet(f1=sm.F1(), auroc=sm.AUROC())
    reg = otel.register(metrics, meter)
    metrics.update([1, 0, 1], [0.8, 0.3, 0.4])
    calls = []

    def broken(self):
        calls.append(1)
        raise RuntimeError("boom")

    monkeypatch.setattr(sm.F1, "_compute", broken)
    with caplog.at_level(logging.WARNING, logger="streammetrics.otel"):
        got = points(reader)
        got2 = points(reader)
    assert "streammetrics.f1" not in got and "streammetrics.f1" not in got2
    assert only(got2["streammetrics.auroc"]) == pytest.approx(1.0)
    assert only(got2["streammetrics.f1.collect_errors"]) == 2
    assert reg.errors == {"f1": 2, "auroc": 0}
    assert sum("boom" in r.getMessage() for r in caplog.records) == 1  # logged once, then counted
    assert len(calls) == 2  # one snapshot (one compute per member) per collection


def test_undefined_values_are_not_observed_and_warn_nothing(recwarn, caplog):
    reader, meter = setup()
    otel.register(sm.MetricSet(p=sm.Precision(zero_division=np.nan), a=sm.AUROC(), f=sm.F1()), meter)
    with caplog.at_level(logging.WARNING):
        got = points(reader)
    assert "streammetrics.p" not in got and "streammetrics.a" not in got  # NaN: no point
    assert only(got["streammetrics.f"]) == 0.0  # zero_division="warn" gives 0.0 ...
    assert not recwarn.list  # ... and its warning is dropped on the collecting thread
    assert not [r for r in caplog.records if "non-finite" in r.getMessage()]  # nothing for the SDK to drop


def test_sliced_and_delayed():
    reader, meter = setup()
    d = sm.DelayedLabels(sm.Sliced(sm.MetricSet(acc=sm.Accuracy(), auroc=sm.AUROC())))
    reg = otel.register(d, meter, max_slices=1)
    d.predict([1, 2, 3, 4, 5], [0.9, 0.2, 0.6, 0.4, 0.7], slices=["us", "us", "us", "fr", "fr"])
    d.label([1, 2, 3, 4], [1, 0, 0, 1])
    got = points(reader)
    assert only(got["streammetrics.sliced.slices"]) == 2
    assert got["streammetrics.sliced.slice_rows"] == {frozenset({("slice", "us")}): 3}
    assert got["streammetrics.acc"] == {frozenset({("slice", "us")}): pytest.approx(2 / 3)}
    assert only(got["streammetrics.delayed.pending"]) == 1
    assert only(got["streammetrics.delayed.labelled"]) == 4
    reg.close()
    assert "streammetrics.acc" not in points(reader)


def test_named_slice_columns():
    reader, meter = setup()
    s = sm.Sliced(sm.Recall())
    otel.register(s, meter)
    s.update([1, 1, 0], [1, 0, 0], slices={"country": ["us", "us", "fr"], "tier": [1, 1, 2]})
    got = points(reader)
    assert got["streammetrics.recall"][frozenset({("slice.country", "us"), ("slice.tier", 1)})] == 0.5


def test_an_estimate_exports_its_interval():
    reader, meter = setup()
    est = Estimated(sm.Accuracy())
    otel.register(est, meter, name="accuracy_estimated")
    est.update(np.linspace(0.05, 0.95, 50))
    got = points(reader)
    assert only(got["streammetrics.accuracy_estimated"]) == pytest.approx(est.compute(), rel=1e-15)
    low, high = est.interval()
    assert only(got["streammetrics.accuracy_estimated.interval_low"]) == pytest.approx(low, rel=1e-15)
    assert only(got["streammetrics.accuracy_estimated.interval_high"]) == pytest.approx(high, rel=1e-15)
    assert only(got["streammetrics.accuracy_estimated.samples"]) == pytest.approx(50.0)


def test_an_estimated_set_exports_each_member():
    reader, meter = setup()
    est = Estimated(sm.MetricSet(acc=sm.Accuracy(), f1=sm.F1(), auroc=sm.AUROC()))
    otel.register(est, meter)
    p = np.linspace(0.05, 0.95, 40)
    est.update(p)
    got = points(reader)
    want = est.compute()
    for name in ("acc", "f1", "auroc"):
        assert only(got[f"streammetrics.{name}"]) == pytest.approx(want[name], rel=1e-15)
        assert only(got[f"streammetrics.{name}.samples"]) == pytest.approx(40.0)
    low, high = est.interval(member="acc")
    assert only(got["streammetrics.acc.interval_low"]) == pytest.approx(low, rel=1e-15)
    assert only(got["streammetrics.acc.interval_high"]) == pytest.approx(high, rel=1e-15)
    assert "streammetrics.f1.interval_low" not in got  # F1 has no interval as an estimate
    with pytest.raises(ValueError, match="not exported yet"):
        otel.register(Estimated(sm.Sliced(sm.F1())), meter)


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"prefix": "1bad"}, "prefix"),
    ({"prefix": "a b"}, "prefix"),
    ({"attributes": {"class": "x"}}, "attributes"),
    ({"attributes": {"slice.k": "x"}}, "attributes"),
    ({"attributes": {"model": object()}}, "attributes"),
    ({"max_slices": -1}, "max_slices"),
])
def test_bad_arguments(kwargs, message):
    _, meter = setup()
    with pytest.raises(ValueError, match=message):
        otel.register(sm.F1(), meter, **kwargs)


def test_import_streammetrics_never_imports_opentelemetry():
    code = ("import sys, streammetrics, streammetrics.monitoring\n"
            "print(any(m.startswith('opentelemetry') for m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_regression_per_output_values_and_bounds_carry_an_output_attribute():
    """Issue #30, as streammetrics.prometheus: per-output regression values (raw_values) and
    their certified bounds are observed per ``output``; ``output`` is a reserved attribute."""
    from sklearn.metrics import mean_squared_error, median_absolute_error

    reader, meter = setup()
    rng = np.random.default_rng(4)
    y = rng.normal(size=(300, 2))
    p = y + rng.normal(size=(300, 2)).round(3)
    metrics = sm.MetricSet(mse=sm.MeanSquaredError(multioutput="raw_values"), r2=sm.R2Score(),
                           medae=sm.MedianAbsoluteError(max_bytes=1024, multioutput="raw_values"))
    otel.register(metrics, meter, prefix="reg")
    metrics.update(y, p)
    got = points(reader)
    mse, medae = (f(y, p, multioutput="raw_values") for f in (mean_squared_error, median_absolute_error))
    assert not metrics["medae"].is_exact
    for j in range(2):
        key = frozenset({("output", j)})
        assert got["reg.mse"][key] == pytest.approx(mse[j], rel=1e-12)
        assert got["reg.medae.bounds_low"][key] <= medae[j] <= got["reg.medae.bounds_high"][key]
    assert only(got["reg.r2"]) == pytest.approx(metrics["r2"].compute(), rel=1e-15)
    with pytest.raises(ValueError, match="output"):
        otel.register(sm.R2Score(), meter, prefix="bad", attributes={"output": "x"})
