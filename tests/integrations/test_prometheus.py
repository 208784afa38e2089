"""Prometheus export, scraped from a real prometheus_client HTTP endpoint on 127.0.0.1."""

from __future__ import annotations

import math
import urllib.request
import warnings

import numpy as np
import pytest

prometheus_client = pytest.importorskip("prometheus_client")
from prometheus_client.parser import text_string_to_metric_families  # noqa: E402

import streammetrics as sm  # noqa: E402
from streammetrics import (  # noqa: E402
    AUROC,
    F1,
    ConfusionMatrix,
    Decayed,
    DelayedLabels,
    MetricSet,
    Precision,
    Recall,
    Window,
)
from streammetrics.prometheus import MetricsCollector, register  # noqa: E402


def scrape(port: int) -> dict[tuple[str, tuple], float]:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as resp:
        text = resp.read().decode()
    out = {}
    for fam in text_string_to_metric_families(text):
        for s in fam.samples:
            out[(s.name, tuple(sorted(s.labels.items())))] = s.value
    return out


@pytest.fixture
def server():
    registry = prometheus_client.CollectorRegistry()
    srv, thread = prometheus_client.start_http_server(0, addr="127.0.0.1", registry=registry)
    yield registry, srv.server_port
    srv.shutdown()
    srv.server_close()
    thread.join(timeout=5)


def test_metricset_values_intervals_and_counts_over_http(server):
    registry, port = server
    binary = MetricSet(prec=Precision(), auc=AUROC())
    register(binary, registry, prefix="bin")
    rng = np.random.default_rng(0)
    y = rng.integers(0, 3, 200)
    s = rng.random((200, 3))
    s /= s.sum(axis=1, keepdims=True)
    ms2 = MetricSet(
        rec=Recall(num_classes=3, average=None), cm=ConfusionMatrix(num_classes=3),
        auc=AUROC(num_classes=3), win=Window(F1(num_classes=3, average="micro"), size=50),
        dec=Decayed(Recall(num_classes=3, average="micro"), half_life=20),
    )
    register(ms2, registry, prefix="mc", labels={"model": "v3"})
    ms2.update(y, s)
    yb = rng.integers(0, 2, 100)
    sb = rng.random(100)
    binary.update(yb, sb)
    got = scrape(port)
    m = (("model", "v3"),)

    def k(name, **labels):
        return (name, tuple(sorted({"model": "v3", **labels}.items())))

    vals = ms2.compute()
    lo, hi = ms2["rec"].interval()
    for c in range(3):
        assert got[k("mc_rec", **{"class": str(c)})] == pytest.approx(vals["rec"][c], rel=1e-12)
        assert got[k("mc_rec_interval_low", **{"class": str(c)})] == pytest.approx(lo[c], rel=1e-12)
        assert got[k("mc_rec_interval_high", **{"class": str(c)})] == pytest.approx(hi[c], rel=1e-12)
        for a in range(3):
            assert got[k("mc_cm", actual=str(c), predicted=str(a))] == vals["cm"][c, a]
    assert got[("mc_cm_samples", m)] == 200.0
    assert got[("mc_auc", m)] == pytest.approx(vals["auc"], rel=1e-12)
    assert got[("mc_auc_bounds_low", m)] == got[("mc_auc_bounds_high", m)] == got[("mc_auc", m)]
    assert got[("mc_win", m)] == pytest.approx(vals["win"], rel=1e-12)
    assert got[("mc_win_samples", m)] == 50.0
    assert got[("mc_dec_samples", m)] == 200.0
    assert got[("mc_dec", m)] == pytest.approx(vals["dec"], rel=1e-12)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        bvals = binary.compute()
    assert got[("bin_prec", ())] == pytest.approx(bvals["prec"], rel=1e-12)
    lo, hi = binary["prec"].interval()
    assert got[("bin_prec_interval_low", ())] == pytest.approx(lo, rel=1e-12)
    assert got[("bin_auc", ())] == pytest.approx(bvals["auc"], rel=1e-12)
    # values follow the stream: a later scrape reads the new state
    binary.update(np.ones(50, int), np.ones(50))
    again = scrape(port)
    assert again[("bin_prec", ())] == pytest.approx(binary["prec"].compute(), rel=1e-12)
    assert again[("bin_prec", ())] != got[("bin_prec", ())]


def test_delayed_labels_counters_and_undefined_values(server):
    registry, port = server
    d = DelayedLabels(MetricSet(f1=F1(), auc=AUROC()), capacity=2, on_unknown="count")
    register(d, registry, prefix="svc")
    got = scrape(port)
    assert math.isnan(got[("svc_auc", ())])  # undefined (no samples) is NaN, not a crash
    assert got[("svc_delayed_pending", ())] == 0.0
    d.predict([1, 2, 3], [0.9, 0.1, 0.8])
    d.label([2, 3, 99], [0, 1, 1])
    got = scrape(port)
    assert got[("svc_delayed_pending", ())] == 0.0
    assert got[("svc_delayed_evicted", ())] == 1.0
    assert got[("svc_delayed_unknown", ())] == 1.0
    assert got[("svc_delayed_labelled", ())] == 2.0
    assert got[("svc_f1", ())] == pytest.approx(1.0)
    assert got[("svc_auc", ())] == pytest.approx(1.0)


def test_batched_delayed_labels_scrape_folds_the_buffer_first(server):
    registry, port = server
    d = DelayedLabels(MetricSet(f1=F1(), w=Window(F1(), size=100)), capacity=10, batch_size=64)
    register(d, registry, prefix="svc")
    d.predict([1, 2, 3], [0.9, 0.1, 0.8])
    for key, y in ((1, 1), (2, 0), (3, 0)):
        d.label(key, y)
    assert d.stats()["buffered"] == 3
    got = scrape(port)
    assert got[("svc_delayed_buffered", ())] == 0.0 and got[("svc_delayed_labelled", ())] == 3.0
    assert got[("svc_f1", ())] == pytest.approx(2 / 3) and got[("svc_w_samples", ())] == 3.0


def test_single_metric_and_validation():
    registry = prometheus_client.CollectorRegistry()
    f1 = F1().update([1, 0, 1], [1, 0, 0])
    register(f1, registry, name="quality_f1")
    text = prometheus_client.generate_latest(registry).decode()
    assert "streammetrics_quality_f1 0.666666" in text
    with pytest.raises(ValueError, match="prefix"):
        MetricsCollector(f1, prefix="bad-prefix")
    with pytest.raises(ValueError, match="reserved"):
        MetricsCollector(f1, labels={"class": "x"})
    with pytest.raises(ValueError, match="accumulator"):
        MetricsCollector({"f1": f1})  # type: ignore[arg-type]
    curves = MetricSet(roc=sm.ROCCurve(), auc=AUROC())
    curves.update([0, 1, 1], [0.1, 0.9, 0.3])
    text = prometheus_client.generate_latest(registry).decode()
    reg2 = prometheus_client.CollectorRegistry()
    register(curves, reg2)
    text = prometheus_client.generate_latest(reg2).decode()
    assert "streammetrics_auc 1.0" in text  # curves skipped: only their error counter
    assert [line for line in text.splitlines() if line.startswith("streammetrics_roc")] == [
        "streammetrics_roc_collect_errors_total 0.0"]


def test_samples_gauge_of_bounded_and_exact_states() -> None:
    """Every ranking state exports ``_samples``: the exact buffer and the bounded ones
    (``max_bytes=`` bins, ``thresholds=``), as do the calibration sums; each equals the number of
    samples, or their total weight when weights are given. Retrieval states export none."""
    rng = np.random.default_rng(3)
    n = 400
    y, s = rng.integers(0, 2, n), rng.random(n)
    w = rng.random(n) * 2
    for weights, expected in ((None, float(n)), (w, float(w.sum()))):
        ms = MetricSet(
            exact=AUROC(), binned=AUROC(max_bytes=4096), fixed=sm.AveragePrecision(thresholds=[0.25, 0.5, 0.75]),
            roc=sm.ROCCurve(max_bytes=4096), brier=sm.BrierScore(), cm=ConfusionMatrix(),
            win=Window(AUROC(max_bytes=4096), size=10_000),
        )
        for lo in range(0, n, 64):
            part = slice(lo, lo + 64)
            ms.update(y[part], s[part], sample_weight=None if weights is None else weights[part])
        registry = prometheus_client.CollectorRegistry()
        register(ms, registry=registry, prefix="b")
        for name in ("exact", "binned", "fixed", "brier", "cm"):
            got = registry.get_sample_value(f"b_{name}_samples")
            assert got is not None, name
            assert got == pytest.approx(expected, rel=1e-12), (name, got, expected)
        assert registry.get_sample_value("b_win_samples") == float(n)  # a window counts rows
        assert not ms["binned"]._state.is_exact  # the bins did coarsen: a bounded state indeed
    retrieval = prometheus_client.CollectorRegistry()
    register(sm.NDCG(3), registry=retrieval, prefix="r")
    assert retrieval.get_sample_value("r_ndcg_samples") is None


def test_regression_values_per_output_bounds_and_intervals_over_http(server):
    """Issue #30: regression members through a real scrape equal scikit-learn; raw_values are
    samples labelled ``output``; a bounded median exports its certified bounds (per output),
    ``IntervalCoverage`` its Wilson interval; ``output`` is reserved for constant labels."""
    from sklearn import metrics as skm

    registry, port = server
    rng = np.random.default_rng(5)
    y = rng.normal(size=(500, 2))
    p = y + rng.normal(size=(500, 2)).round(3)
    w = rng.random(500)
    ms = MetricSet(mse=sm.MeanSquaredError(multioutput="raw_values"), r2=sm.R2Score(),
                   medae=sm.MedianAbsoluteError(max_bytes=1024, multioutput="raw_values"))
    ms.update(y, p, sample_weight=w)
    coverage = sm.IntervalCoverage().update(y[:, 0], np.stack([p[:, 0] - 1, p[:, 0] + 1], 1))
    register(ms, registry=registry, prefix="reg", labels={"model": "m1"})
    register(coverage, registry=registry, prefix="cov")
    got = scrape(port)
    mse = skm.mean_squared_error(y, p, sample_weight=w, multioutput="raw_values")
    for j in range(2):
        key = ("reg_mse", (("model", "m1"), ("output", str(j))))
        assert got[key] == pytest.approx(mse[j], rel=1e-12)
    assert got[("reg_r2", (("model", "m1"),))] == pytest.approx(skm.r2_score(y, p, sample_weight=w), rel=1e-12)
    assert got[("reg_mse_samples", (("model", "m1"),))] == pytest.approx(w.sum(), rel=1e-12)
    assert not ms["medae"].is_exact
    medae = skm.median_absolute_error(y, p, sample_weight=w, multioutput="raw_values")
    for j in range(2):
        labels = (("model", "m1"), ("output", str(j)))
        low, high = got[("reg_medae_bounds_low", labels)], got[("reg_medae_bounds_high", labels)]
        assert low <= medae[j] <= high and low < high
    inside = np.mean((p[:, 0] - 1 <= y[:, 0]) & (y[:, 0] <= p[:, 0] + 1))
    assert got[("cov_intervalcoverage", ())] == pytest.approx(inside, rel=1e-12)
    assert (got[("cov_intervalcoverage_interval_low", ())], got[("cov_intervalcoverage_interval_high", ())]) \
        == pytest.approx(coverage.interval(0.95), rel=1e-12)
    assert not any(name.endswith("collect_errors_total") and v for (name, _), v in got.items())
    with pytest.raises(ValueError, match="reserved"):
        MetricsCollector(sm.MeanSquaredError(), labels={"output": "x"})


def test_estimated_metricset_values_intervals_and_samples_over_http(server):
    """Issue #31: ``Estimated(MetricSet(...))`` is exported member by member, as a MetricSet
    (and as streammetrics.otel does), here under ``prefix="streammetrics_estimated"``: the estimated values, the intervals ``Estimated.interval(member=)``
    gives (Accuracy, Recall; per class for average=None), the wrapped AUROC's bounds, the
    expected samples; members without an interval (F1) export their value only. Beside it, the
    realised set under the default prefix."""
    from streammetrics.monitoring import Estimated

    registry, port = server
    rng = np.random.default_rng(6)
    prob = rng.random(300)
    members = dict(acc=sm.Accuracy(), recall=Recall(), f1=F1(), auroc=AUROC(max_bytes=2048))
    est = Estimated(MetricSet(members)).update(prob[:200])
    realised = MetricSet({k: type(m)._from_config(m._config()) for k, m in members.items()})
    realised.update(rng.integers(0, 2, 200), prob[:200])
    collector = register(est, registry=registry, prefix="streammetrics_estimated")
    register(realised, registry=registry)
    est.update(prob[200:])  # a scrape reads the current state
    got = scrape(port)
    values = est.compute()
    for m in members:
        assert got[(f"streammetrics_estimated_{m}", ())] == pytest.approx(values[m], rel=1e-12), m
        assert got[(f"streammetrics_estimated_{m}_samples", ())] == pytest.approx(300.0, rel=1e-12)
        assert (f"streammetrics_{m}", ()) in got  # the realised member, same registry
    for m in ("acc", "recall"):
        low, high = est.interval(0.95, member=m)
        assert got[(f"streammetrics_estimated_{m}_interval_low", ())] == pytest.approx(low, rel=1e-12)
        assert got[(f"streammetrics_estimated_{m}_interval_high", ())] == pytest.approx(high, rel=1e-12)
        assert low < values[m] < high
    assert ("streammetrics_estimated_f1_interval_low", ()) not in got  # none defined
    low, high = est.metric["auroc"].bounds()
    assert got[("streammetrics_estimated_auroc_bounds_low", ())] == pytest.approx(low, rel=1e-12)
    assert got[("streammetrics_estimated_auroc_bounds_high", ())] == pytest.approx(high, rel=1e-12)
    assert sorted(collector.members) == sorted(members)
    assert not any(name.endswith("collect_errors_total") and v for (name, _), v in got.items())
    # per class: multiclass probabilities, Recall(average=None)
    multi = Estimated(MetricSet(recall=Recall(num_classes=3, average=None), acc=sm.Accuracy(num_classes=3)))
    multi.update(rng.dirichlet(np.ones(3), 150))
    reg2 = prometheus_client.CollectorRegistry()
    register(multi, registry=reg2, prefix="mc_expected")
    low, high = multi.interval(0.9, member="recall")
    for c in range(3):
        assert reg2.get_sample_value("mc_expected_recall", {"class": str(c)}) == pytest.approx(
            multi.compute()["recall"][c], rel=1e-12)
    reg3 = prometheus_client.CollectorRegistry()
    register(multi, registry=reg3, prefix="mc_expected", confidence=0.9)
    for c in range(3):
        assert reg3.get_sample_value("mc_expected_recall_interval_low", {"class": str(c)}) == pytest.approx(
            low[c], rel=1e-12)
        assert reg3.get_sample_value("mc_expected_recall_interval_high", {"class": str(c)}) == pytest.approx(
            high[c], rel=1e-12)
    # a single estimated metric: its own name, interval and samples
    one = Estimated(sm.Accuracy()).update(prob)
    reg4 = prometheus_client.CollectorRegistry()
    register(one, registry=reg4)
    assert reg4.get_sample_value("streammetrics_estimated") == pytest.approx(one.compute(), rel=1e-12)
    assert reg4.get_sample_value("streammetrics_estimated_interval_low") == pytest.approx(
        one.interval(0.95)[0], rel=1e-12)
