"""One metric never fails a whole Prometheus scrape (issue 27): prometheus-client answers HTTP 500
for the whole registry when one collector raises, so a failing member or slice is left out,
counted in ``..._collect_errors_total`` and logged once; label values are always UTF-8 text."""

from __future__ import annotations

import logging
import math
import urllib.request
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

prometheus_client = pytest.importorskip("prometheus_client")
from prometheus_client.parser import text_string_to_metric_families  # noqa: E402

import streammetrics as sm  # noqa: E402
from streammetrics.prometheus import MetricsCollector, label_value, register  # noqa: E402
from streammetrics.prometheus_sliced import SlicedCollector, register_sliced  # noqa: E402

HOSTILE = ["\ud800", "ok\udfff", 10**5000]  # a lone surrogate (twice), an int str() refuses


def samples(text: bytes | str) -> dict[tuple[str, tuple], float]:
    text = text.decode() if isinstance(text, bytes) else text
    return {(s.name, tuple(sorted(s.labels.items()))): s.value
            for fam in text_string_to_metric_families(text) for s in fam.samples}


def hostile_sliced() -> sm.Sliced:
    """A Sliced(Recall()) holding the slices ``HOSTILE`` (2 rows each) and ``"a"`` (3 rows). If
    Sliced ever refuses such keys at ``update``, they are planted in its state instead, as a
    state built by an older version could hold them: the collector must survive either way."""
    y = [1, 0] * 3 + [1, 1, 0]
    p = [1, 0] * 3 + [1, 0, 0]
    s = sm.Sliced(sm.Recall())
    try:
        return s.update(y, p, slices=[k for k in HOSTILE for _ in range(2)] + ["a"] * 3)
    except ValueError:
        s.update(y, p, slices=[f"k{i}" for i in range(3) for _ in range(2)] + ["a"] * 3)
        store = s._state.crossed
        for i, key in enumerate(HOSTILE):
            store.index[key] = store.index.pop(f"k{i}")
            store.keys[i] = key
        return s


def test_label_value_is_always_utf8_text() -> None:
    for value, expected in (("\ud800", "\\ud800"), ("é\udfffx", "é\\udfffx"), (7, "7"),
                            ("a\nb", "a\nb"), (10**5000, hex(10**5000))):
        got = label_value(value)
        got.encode("utf-8")
        assert got == expected


def good_and_bad_registry(monkeypatch: pytest.MonkeyPatch) -> tuple[object, sm.F1]:
    """A registry with a good F1, a MetricSet with a member whose compute raises, and a Sliced
    with hostile keys."""

    def broken(self: object) -> float:
        raise RuntimeError("the state is corrupt")

    monkeypatch.setattr(sm.BrierScore, "_compute", broken)
    registry = prometheus_client.CollectorRegistry()
    good = sm.F1().update([1, 0, 1], [1, 0, 0])
    register(good, registry, name="good")
    mixed = sm.MetricSet(brier=sm.BrierScore(), auc=sm.AUROC())
    mixed.update([1, 0, 1], [0.9, 0.2, 0.6])
    register(mixed, registry, prefix="mixed")
    register_sliced(hostile_sliced(), registry, prefix="sl")
    return registry, good


def check_scrape(got: dict[tuple[str, tuple], float]) -> None:
    assert got[("streammetrics_good", ())] == pytest.approx(2 / 3, rel=1e-12)
    assert got[("mixed_auc", ())] == 1.0  # the failing member's sibling is exported
    assert not any(name == "mixed_brier" for name, _ in got)
    assert got[("mixed_brier_collect_errors_total", ())] >= 1
    assert got[("mixed_auc_collect_errors_total", ())] == 0
    rec = {dict(labels)["slice"]: v for (name, labels), v in got.items() if name == "sl_recall"}
    assert rec == {"a": 0.5, "\\ud800": 1.0, "ok\\udfff": 1.0, hex(10**5000): 1.0}
    assert got[("sl_recall_collect_errors_total", ())] == 0


def test_a_failing_member_and_hostile_keys_leave_the_rest_of_the_scrape(monkeypatch, caplog) -> None:
    registry, _ = good_and_bad_registry(monkeypatch)
    with caplog.at_level(logging.WARNING, logger="streammetrics.prometheus"):
        check_scrape(samples(prometheus_client.generate_latest(registry)))
        second = samples(prometheus_client.generate_latest(registry))
    assert second[("mixed_brier_collect_errors_total", ())] == 2  # counted per scrape ...
    logged = [r for r in caplog.records if r.name == "streammetrics.prometheus"]
    assert len(logged) == 1  # ... logged once
    assert "brier" in logged[0].getMessage() and "the state is corrupt" in logged[0].getMessage()
    om = prometheus_client.openmetrics.exposition.generate_latest(registry).decode()
    assert om.endswith("# EOF\n") and "streammetrics_good 0.6666" in om


def test_the_real_http_server_answers_200(monkeypatch) -> None:
    registry, good = good_and_bad_registry(monkeypatch)
    server, thread = prometheus_client.start_http_server(0, addr="127.0.0.1", registry=registry)
    try:
        port = server.server_port
        for accept in ("text/plain", "application/openmetrics-text; version=1.0.0"):
            req = urllib.request.Request(f"http://127.0.0.1:{port}/metrics", headers={"Accept": accept})
            with urllib.request.urlopen(req, timeout=30) as resp:
                assert resp.status == 200
                check_scrape(samples(resp.read().decode().replace("# EOF\n", "")))
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


def test_warnings_as_errors_and_the_process_wide_filters() -> None:
    """Undefined values under ``-W error``: NaN, no collect error. The scrape never touches
    ``warnings.filters`` (``catch_warnings`` on the server's thread swapped the process-wide
    list: other threads lost their warnings meanwhile, and a filter they set could be undone)."""
    ms = sm.MetricSet(prec=sm.Precision(), auc=sm.AUROC(), f1=sm.F1(), ce=sm.CalibrationError())
    ms.update([0, 0], [0.1, 0.2])  # precision and AUROC undefined
    registry = prometheus_client.CollectorRegistry()
    register(ms, registry)
    seen: list[list] = []
    classes = (sm.F1, sm.CalibrationError)  # CalibrationError: also computed by its bounds()
    computes = [cls._compute for cls in classes]

    def spying(compute):  # type: ignore[no-untyped-def]
        def spy(self):  # type: ignore[no-untyped-def]
            seen.append(list(warnings.filters))
            return compute(self)
        return spy

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        outside = list(warnings.filters)
        for cls, compute in zip(classes, computes, strict=True):
            cls._compute = spying(compute)  # type: ignore[method-assign]
        try:
            got = samples(prometheus_client.generate_latest(registry))
        finally:
            for cls, compute in zip(classes, computes, strict=True):
                cls._compute = compute  # type: ignore[method-assign]
        with pytest.raises(sm.UndefinedMetricWarning):  # the filter still holds outside the scrape
            sm.AUROC().update([0, 0], [0.1, 0.2]).compute()
    assert len(seen) == 3 and all(f == outside for f in seen)  # F1, CalibrationError twice
    assert got[("streammetrics_ce_bounds_low", ())] == got[("streammetrics_ce", ())]
    assert got[("streammetrics_prec", ())] == 0.0 and math.isnan(got[("streammetrics_auc", ())])
    assert got[("streammetrics_f1", ())] == 0.0
    assert all(got[(f"streammetrics_{m}_collect_errors_total", ())] == 0 for m in ("prec", "auc", "f1", "ce"))


def test_a_foreign_warning_raised_as_error_skips_only_its_member(monkeypatch) -> None:
    def noisy(self: object) -> float:
        warnings.warn("deprecated internals", DeprecationWarning, stacklevel=1)
        return 0.5

    monkeypatch.setattr(sm.BrierScore, "_compute", noisy)
    ms = sm.MetricSet(brier=sm.BrierScore(), auc=sm.AUROC()).update([1, 0], [0.8, 0.3])
    registry = prometheus_client.CollectorRegistry()
    register(ms, registry)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = samples(prometheus_client.generate_latest(registry))
    assert got[("streammetrics_auc", ())] == 1.0
    assert ("streammetrics_brier", ()) not in got
    assert got[("streammetrics_brier_collect_errors_total", ())] == 1


def test_every_kind_of_member_empty_and_fed_scrapes_without_error() -> None:
    """Curves, per-class arrays, windows, decay, bounded states, calibration, retrieval, a
    DelayedLabels, NaN and infinite values, empty states -- under ``-W error``."""
    def members():  # type: ignore[no-untyped-def]
        return dict(
            f1=sm.F1(num_classes=3), rec=sm.Recall(num_classes=3, average=None), cm=sm.ConfusionMatrix(num_classes=3),
            auc=sm.AUROC(num_classes=3), roc=sm.ROCCurve(num_classes=3), ap=sm.AveragePrecision(num_classes=3),
            bounded=sm.AUROC(num_classes=3, max_bytes=4096), win=sm.Window(sm.F1(num_classes=3), size=5),
            dec=sm.Decayed(sm.Recall(num_classes=3), half_life=3), ll=sm.LogLoss(num_classes=3),
        )

    rng = np.random.default_rng(0)
    s = rng.random((20, 3))
    for fed in (False, True):
        ms = sm.MetricSet(**members())
        d = sm.DelayedLabels(sm.MetricSet(**members()), capacity=10)
        sliced = sm.Sliced(sm.MetricSet(**members()))
        nd = sm.NDCG(3)
        if fed:
            y = np.zeros(20, int)  # one class only: undefined AUROC, infinite log loss terms
            ms.update(y, s / s.sum(axis=1, keepdims=True))
            d.predict(np.arange(20), s / s.sum(axis=1, keepdims=True))
            d.label(np.arange(10), y[:10])
            sliced.update(y, s / s.sum(axis=1, keepdims=True), slices=np.arange(20) % 4)
        registry = prometheus_client.CollectorRegistry()
        cols = [register(ms, registry, prefix="ms", per_class=True), register(d, registry, prefix="d"),
                register(nd, registry, prefix="r")]
        scol = register_sliced(sliced, registry, prefix="sl")
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            got = samples(prometheus_client.generate_latest(registry))
        for col in cols:
            assert not any(col.errors.counts.values()), (fed, col.errors.counts)
        assert not any(scol.errors.counts.values())
        assert ("ms_f1", ()) in got and ("d_f1", ()) in got and ("r_ndcg", ()) in got
        assert not any(name.startswith("ms_roc") and "errors" not in name for name, _ in got)
        assert got[("sl_sliced_slices", ())] == (4.0 if fed else 0.0)


def test_sliced_labels_never_clash() -> None:
    """Key columns named like a reserved or constant label, or like each other once made valid,
    and a name starting with ``__`` get distinct valid label names; keys of two kinds that would
    render as one label are refused by ``Sliced`` itself."""
    s = sm.Sliced(sm.Recall())
    s.update([1, 1], [1, 0], slices={"class": ["x", "y"], "model": ["m", "m"], "a-b": ["p", "p"],
                                     "a_b": ["q", "q"], "__name__": ["n", "n"]})
    registry = prometheus_client.CollectorRegistry()
    register_sliced(s, registry, labels={"model": "v3"})
    got = samples(prometheus_client.generate_latest(registry))
    labels = {labels for name, labels in got if name == "streammetrics_recall"}
    assert labels == {tuple(sorted({"model": "v3", "slice_class": k, "slice_model": "m", "a_b": "p",
                                    "slice_a_b": "q", "slice__name__": "n"}.items())) for k in "xy"}
    # keys of two kinds that would render as one label ("1" and 1) never reach the collector:
    # Sliced refuses the second kind at update (tests/wrappers/test_sliced_keys.py)
    mixed = sm.Sliced(sm.Recall()).update([1, 1, 1], [1, 0, 0], slices=np.array(["1", "1", "2"]))
    with pytest.raises(ValueError, match="one kind per column"):
        mixed.update([1], [1], slices=[1])
    registry = prometheus_client.CollectorRegistry()
    col = register_sliced(mixed, registry)
    got = samples(prometheus_client.generate_latest(registry))
    assert got[("streammetrics_recall", (("slice", "1"),))] == 0.5
    assert got[("streammetrics_recall", (("slice", "2"),))] == 0.0
    assert got[("streammetrics_recall_collect_errors_total", ())] == 0 == col.errors.counts.get("recall", 0)


def test_duplicate_family_names_are_refused_at_registration() -> None:
    """Two families of one name in one exposition make Prometheus reject the whole scrape:
    ``describe`` lists the names, so the registry refuses the second collector."""
    registry = prometheus_client.CollectorRegistry()
    register(sm.F1(), registry, labels={"model": "a"})
    with pytest.raises(ValueError, match="streammetrics_f1"):
        register(sm.F1(), registry, labels={"model": "b"})
    register(sm.F1(), registry, prefix="b")  # a prefix of its own is fine
    register_sliced(sm.Sliced(sm.AUROC()), registry)
    with pytest.raises(ValueError, match="streammetrics_auroc"):
        register(sm.AUROC(), registry)
    with pytest.raises(ValueError, match="p_a_samples"):
        MetricsCollector(sm.MetricSet(a=sm.F1(), a_samples=sm.F1()), prefix="p")
    with pytest.raises(ValueError, match="labels"):
        MetricsCollector(sm.F1(), labels={"model": "\ud800"})
    with pytest.raises(ValueError, match="labels"):
        SlicedCollector(sm.Sliced(sm.F1()), labels={"model": "\udfff"})


def test_a_sliced_scrape_copies_only_the_exported_slices(monkeypatch) -> None:
    """Issue 27: the scrape copied the whole Sliced under its lock (10.7 s at 100k slices). Now
    it copies the ``max_slices`` exported slices' accumulators and nothing else: a whole-state
    copy raises here, and the accumulator copies are counted."""
    rng = np.random.default_rng(0)
    n = 3000
    keys = rng.integers(0, 500, n)
    y, p = rng.integers(0, 2, n), rng.random(n)
    sliced = sm.Sliced(sm.AUROC(), max_slices=1000).update(y, p, slices=keys)
    from streammetrics.wrappers.sliced.state import SlicedState

    def no_whole_copy(self: object) -> None:
        raise AssertionError("the scrape copied the whole Sliced state")

    monkeypatch.setattr(SlicedState, "copy", no_whole_copy)
    copies = []
    copy = sm.AUROC.copy

    def counted(self):  # type: ignore[no-untyped-def]
        copies.append(self)
        return copy(self)

    monkeypatch.setattr(sm.AUROC, "copy", counted)
    registry = prometheus_client.CollectorRegistry()
    col = register_sliced(sliced, registry, max_slices=7)
    got = samples(prometheus_client.generate_latest(registry))
    assert len(copies) == 7 and not any(col.errors.counts.values())
    counts = sliced.counts()  # insertion order: the ties' order
    order = sorted(counts, key=lambda k: -counts[k])
    exported = {dict(labels)["slice"]: v for (name, labels), v in got.items() if name == "streammetrics_auroc"}
    assert set(exported) == {str(k) for k in order[:7]}
    from sklearn.metrics import roc_auc_score

    for k in order[:7]:
        m = keys == k
        assert exported[str(k)] == pytest.approx(roc_auc_score(y[m], p[m]), abs=1e-12)
    assert got[("streammetrics_auroc_slices", ())] == len(counts) > 7
    assert got[("streammetrics_auroc_slices_omitted", ())] == len(counts) - 7


def test_sliced_inside_delayed_labels_and_the_plain_collector_refusing_sliced() -> None:
    """``register(sliced)`` copied the whole Sliced on every scrape and exported no value (its
    value is a dict): refused, pointing at ``register_sliced``, which now takes a DelayedLabels
    around a Sliced (its counters exported)."""
    d = sm.DelayedLabels(sm.Sliced(sm.F1()), capacity=10)
    d.predict([1, 2, 3], [0.9, 0.1, 0.8], slices=["a", "b", "a"])
    d.label([1, 2, 3], [1, 0, 0])
    for metric in (d, d._metric):
        with pytest.raises(ValueError, match="register_sliced"):
            register(metric, prometheus_client.CollectorRegistry())
    registry = prometheus_client.CollectorRegistry()
    col = register_sliced(d, registry)
    got = samples(prometheus_client.generate_latest(registry))
    assert got[("streammetrics_f1", (("slice", "a"),))] == pytest.approx(2 / 3)
    assert got[("streammetrics_f1", (("slice", "b"),))] == 0.0
    assert got[("streammetrics_f1_slice_rows", (("slice", "a"),))] == 2
    assert got[("streammetrics_delayed_labelled", ())] == 3 and got[("streammetrics_delayed_buffered", ())] == 0
    assert not any(col.errors.counts.values())


@settings(max_examples=60, deadline=None)
@given(keys=st.lists(st.integers(0, 12), min_size=0, max_size=60), cap=st.integers(1, 8),
       n=st.integers(0, 16), stacked=st.booleans())
def test_largest_slices_are_the_sorted_counts_head(keys, cap, n, stacked) -> None:  # type: ignore[no-untyped-def]
    """``Sliced._largest(n)`` (what a scrape reads) equals the first ``n`` slices of the counts
    sorted by rows, ties first seen first and ``OTHER`` last, each with its own accumulator."""
    s = sm.Sliced(sm.Recall() if stacked else sm.AUROC(), max_slices=cap, overflow="other")
    rng = np.random.default_rng(len(keys))
    for part in (keys[: len(keys) // 2], keys[len(keys) // 2:]):
        y = rng.integers(0, 2, len(part))
        s.update(y, (rng.random(len(part)) > 0.5).astype(int) if stacked else rng.random(len(part)),
                 slices=np.asarray(part, dtype=np.int64))
    counts = s.counts()
    expected = sorted(counts, key=lambda k: -counts[k])[:n]
    chosen, held, absorbed = s._largest(n)
    assert [k for k, _, _ in chosen] == expected
    assert [r for _, r, _ in chosen] == [counts[k] for k in expected]
    assert held == len(counts) and absorbed == s.n_absorbed
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for key, _, metric in chosen:
            assert metric.state_dict().keys() == s.slice(key).state_dict().keys()
            assert str(metric.compute()) == str(s.slice(key).compute())
