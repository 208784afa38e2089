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
