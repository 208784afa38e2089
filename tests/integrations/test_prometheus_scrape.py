"""Prometheus scrapes hold the metric's lock only for a copy of its state, and cap per-class
series (issue 12: a 1000-class confusion matrix took 16 s to scrape and blocked updates 6 s)."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest

prometheus_client = pytest.importorskip("prometheus_client")
from prometheus_client.parser import text_string_to_metric_families  # noqa: E402

import streammetrics as sm  # noqa: E402
from streammetrics.prometheus import MetricsCollector, register  # noqa: E402

ARRAY_LABELS = {"class", "actual", "predicted", "label"}


def parse(text: bytes) -> list:
    return [s for fam in text_string_to_metric_families(text.decode()) for s in fam.samples]


def cell_values(text: bytes, name: str) -> list[float]:
    """The values of one labelled family, read straight from the text format (fast)."""
    head = name + "{"
    return [float(line.rsplit(" ", 1)[1]) for line in text.decode().splitlines() if line.startswith(head)]


def scrape(metric, **kwargs) -> list:
    reg = prometheus_client.CollectorRegistry()
    register(metric, reg, prefix="p", **kwargs)
    return parse(prometheus_client.generate_latest(reg))


def blocked_scrape(metric, mutate) -> tuple[list, list[str]]:
    """Scrape ``metric`` while its rendering is held up (after the snapshot); meanwhile run
    ``mutate`` on another thread. Returns the scrape and the order in which the two ended."""
    reg = prometheus_client.CollectorRegistry()
    col = register(metric, reg, prefix="p", per_class=True)
    rendering, release = threading.Event(), threading.Event()
    emit = col._emit

    def slow_emit(*args, **kwargs):
        rendering.set()
        release.wait(60)
        return emit(*args, **kwargs)

    col._emit = slow_emit  # type: ignore[method-assign]
    order: list[str] = []
    text: list[bytes] = []
    scraper = threading.Thread(target=lambda: (text.append(prometheus_client.generate_latest(reg)),
                                               order.append("scrape")))
    scraper.start()
    assert rendering.wait(60)
    updater = threading.Thread(target=lambda: (mutate(), order.append("update")))
    updater.start()
    updater.join(timeout=20)  # only reached in full if the update waits for the scrape
    done_while_rendering = not updater.is_alive()
    release.set()
    scraper.join(60)
    updater.join(60)
    assert done_while_rendering, "update() waited for the scrape's rendering"
    assert order == ["update", "scrape"]
    return parse(text[0]), order


def test_update_completes_while_a_scrape_renders_and_the_scrape_is_one_snapshot():
    rng = np.random.default_rng(0)
    ms = sm.MetricSet(cm=sm.ConfusionMatrix(num_classes=20), rec=sm.Recall(num_classes=20, average=None))
    ms.update(rng.integers(0, 20, 500), rng.integers(0, 20, 500))
    before = ms.compute()
    samples, _ = blocked_scrape(ms, lambda: ms.update(np.zeros(300, int), np.zeros(300, int)))
    assert ms["cm"].compute().sum() == 800  # the update went in ...
    cells = {(s.labels["actual"], s.labels["predicted"]): s.value for s in samples if s.name == "p_cm"}
    assert len(cells) == 400 and sum(cells.values()) == 500  # ... after the scrape's snapshot
    assert cells[("0", "0")] == before["cm"][0, 0]
    rec = {s.labels["class"]: s.value for s in samples if s.name == "p_rec"}
    assert rec == {str(c): pytest.approx(before["rec"][c], rel=1e-12) for c in range(20)}


def test_delayed_labels_predict_and_label_complete_while_a_scrape_renders():
    d = sm.DelayedLabels(sm.MetricSet(f1=sm.F1(), auc=sm.AUROC()), capacity=100, batch_size=4)
    d.predict(["a", "b", "c"], [0.9, 0.1, 0.7])
    d.label("a", 1)  # buffered: the scrape folds it in under the lock

    def mutate():
        d.predict("d", 0.3)
        d.label(["b", "d"], [0, 1])

    samples, _ = blocked_scrape(d, mutate)
    got = {s.name: s.value for s in samples}
    assert got["p_delayed_labelled"] == 1.0 and got["p_delayed_pending"] == 2.0
    assert d.stats()["labelled"] == 3


def test_big_confusion_matrix_update_finishes_before_the_scrape():
    """No hook in the rendering: a real 300-class matrix (90k series), update right after the
    snapshot; the update must end before the scrape does (it waits at most for the copy)."""
    rng = np.random.default_rng(1)
    C = 300
    cm = sm.ConfusionMatrix(num_classes=C).update(rng.integers(0, C, 20_000), rng.integers(0, C, 20_000))
    reg = prometheus_client.CollectorRegistry()
    col = register(cm, reg, prefix="p", per_class=True)
    copied = threading.Event()
    snapshot = col._snapshot

    def noted_snapshot():
        out = snapshot()
        copied.set()
        return out

    col._snapshot = noted_snapshot  # type: ignore[method-assign]
    ends: dict[str, float] = {}
    text: list[bytes] = []

    def run_scrape():
        text.append(prometheus_client.generate_latest(reg))
        ends["scrape"] = time.perf_counter()

    scraper = threading.Thread(target=run_scrape)
    scraper.start()
    assert copied.wait(60)
    cm.update(rng.integers(0, C, 1000), rng.integers(0, C, 1000))
    ends["update"] = time.perf_counter()
    scraper.join(120)
    assert ends["update"] < ends["scrape"]
    cells = cell_values(text[0], "p_confusionmatrix")
    assert len(cells) == C * C and sum(cells) == 20_000


def family_sizes(metric) -> dict[str, int]:
    """Array series per member with every per-class series exported."""
    out: dict[str, int] = {}
    for s in scrape(metric, per_class=True):
        if ARRAY_LABELS & set(s.labels):
            member = s.name[2:].split("_")[0]
            out[member] = out.get(member, 0) + 1
    return out


@pytest.mark.parametrize("cap", [0, 10, 100, 1000, 5000])
def test_auto_cap_exports_whole_families_within_max_series_and_counts_the_rest(cap):
    rng = np.random.default_rng(2)
    ms = sm.MetricSet(cm=sm.ConfusionMatrix(num_classes=40),
                      big=sm.Precision(num_classes=40, average=None),
                      auc=sm.AUROC(num_classes=40))
    s = rng.random((400, 40))
    ms.update(rng.integers(0, 40, 400), s / s.sum(axis=1, keepdims=True))
    full = family_sizes(ms)
    assert full == {"cm": 1600, "big": 120}
    samples = scrape(ms, max_series=cap)
    arrays = [x for x in samples if ARRAY_LABELS & set(x.labels)]
    assert len(arrays) <= cap and len(samples) <= cap + 12  # scalars: value/bounds/samples/omitted
    omitted = {x.name[2:-len("_omitted_series")]: x.value for x in samples
               if x.name.endswith("_omitted_series")}
    for member, size in full.items():
        exported = sum(1 for x in arrays if x.name[2:].split("_")[0] == member)
        assert exported + omitted.get(member, 0) == size
    names = {x.name for x in arrays}
    for name in names:  # a family is exported whole or not at all
        fam = [x for x in arrays if x.name == name]
        assert len(fam) in (40, 1600)
    # scalars are always there
    assert any(x.name == "p_auc" for x in samples) and any(x.name == "p_cm_samples" for x in samples)


def test_per_class_false_and_true_and_validation():
    cm = sm.ConfusionMatrix(num_classes=200).update([0, 1, 2], [0, 2, 2])
    off = scrape(cm, per_class=False)
    assert {x.name for x in off} == {"p_confusionmatrix_samples", "p_confusionmatrix_omitted_series",
                                     "p_confusionmatrix_collect_errors_total"}
    assert [x.value for x in off if x.name.endswith("omitted_series")] == [40_000.0]
    reg = prometheus_client.CollectorRegistry()
    register(cm, reg, prefix="p", per_class=True, max_series=10)  # the opt-in has no cap
    on = cell_values(prometheus_client.generate_latest(reg), "p_confusionmatrix")
    assert len(on) == 40_000 and sum(on) == 3
    auto = scrape(cm)  # default cap 10,000: the 40,000-cell matrix is left out
    assert not any(x.name == "p_confusionmatrix" for x in auto)
    small = scrape(sm.ConfusionMatrix(num_classes=3).update([0, 1], [1, 1]))
    assert sum(1 for x in small if x.name == "p_confusionmatrix") == 9
    assert not any(x.name.endswith("omitted_series") for x in small)
    for bad in ("yes", None, 1, 0):
        with pytest.raises(ValueError, match="per_class"):
            MetricsCollector(cm, per_class=bad)
    for bad in (-1, 1.5, True, "10"):
        with pytest.raises(ValueError, match="max_series"):
            MetricsCollector(cm, max_series=bad)
