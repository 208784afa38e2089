"""The example service (examples/service.py) end to end on loopback, driven from this process."""

from __future__ import annotations

import http.client
import json
import sys
from pathlib import Path

import pytest

import streammetrics as sm

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
sys.path.insert(0, str(EXAMPLES))
import load_test  # noqa: E402


def call(port: int, method: str, path: str, body: dict | None = None) -> tuple[int, dict]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    conn.request(method, path, None if body is None else json.dumps(body).encode(),
                 {"Content-Type": "application/json"})
    resp = conn.getresponse()
    data = json.loads(resp.read() or b"{}")
    conn.close()
    return resp.status, data


def test_service_predict_label_metrics_and_restart(tmp_path):
    state = tmp_path / "svc.sm"
    proc, port = load_test.start_service(True, state)
    try:
        code, out = call(port, "POST", "/predict", {"id": "a", "features": [1, 0, 1, 0]})
        assert code == 200 and 0 < out["score"] < 1
        call(port, "POST", "/predict", {"id": "b", "features": [-1, 1, -1, 0]})
        assert call(port, "POST", "/label", {"id": "b", "label": 0}) == (200, {"fed": 1, "unknown": []})
        call(port, "POST", "/predict", {"id": "c", "features": [0, 0, 1, 0]})
        # unknown ids are skipped, counted and reported (never silent); known ones are labelled
        code, out = call(port, "POST", "/label", {"ids": ["a", "zzz", "c"], "labels": [1, 1, 0]})
        assert code == 200 and out["fed"] == 2 and out["unknown"] == ["zzz"]
        assert "not pending" in out["reason"]
        code, out = call(port, "POST", "/label", {"id": "a", "label": 1})  # already labelled
        assert code == 200 and out["fed"] == 0 and out["unknown"] == ["a"]
        code, out = call(port, "POST", "/label", {"ids": ["q"]})
        assert code == 400 and "labels" in out["error"]
        code, out = call(port, "GET", "/metrics.json")
        assert out["labels"]["unknown"] == 2 and out["labels"]["labelled"] == 3
        stats = load_test.drive(port, requests=300, seconds=20, clients=2, seed=1)
        assert stats["requests"] == 300
        code, out = call(port, "GET", "/metrics.json")
        assert code == 200 and out["labels"]["labelled"] >= 2
        assert 0.0 <= out["values"]["auroc"] <= 1.0
        values, text = load_test.scrape(port)
        if text:  # prometheus-client installed
            assert "service_auroc " in text and "service_delayed_pending" in text
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    # the final checkpoint on shutdown restores the same metrics
    restored = sm.Checkpointer.restore(state)
    assert isinstance(restored, sm.DelayedLabels)
    assert restored.stats()["labelled"] == values["labels"]["labelled"]
    assert restored.compute()["auroc"] == pytest.approx(values["values"]["auroc"], rel=1e-12)
    proc, port = load_test.start_service(True, state)  # restart: resumes from the checkpoint
    try:
        code, out = call(port, "GET", "/metrics.json")
        assert out["labels"]["labelled"] == values["labels"]["labelled"]
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def test_service_batched_labels_bad_label_and_cost_timing():
    proc, port = load_test.start_service(True, None, time_metrics=True)
    try:
        call(port, "POST", "/predict", {"id": "x", "features": [1, 0, 1, 0]})
        code, out = call(port, "POST", "/label", {"id": "x", "label": 2})
        assert code == 400 and "y_true" in out["error"]  # checked on arrival, though batched
        assert call(port, "POST", "/label", {"id": "x", "label": 1}) == (200, {"fed": 1, "unknown": []})
        code, out = call(port, "GET", "/metrics.json")
        labels = out["labels"]
        assert labels["labelled"] == 1 and labels["buffered"] == 0 and labels["pending"] == 0
        assert out["values"]["f1_last_2000"] == 1.0  # the read folded the buffered label in
        load_test.drive(port, requests=200, seconds=20, clients=2, seed=2)
        code, out = call(port, "GET", "/metrics.json")
        cost = out["metrics_cost"]
        assert cost["calls"] >= 200 and cost["cpu_seconds"] > 0 and cost["timer_seconds_per_call"] > 0
        assert out["labels"]["buffered"] == 0 and out["labels"]["rejected"] == 0
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def test_restart_keeps_this_process_batch_size_not_the_checkpoints(tmp_path):
    import service

    state = tmp_path / "svc.sm"
    old = service.build_metrics(batch_size=1)  # e.g. a checkpoint written before batching
    old.predict("a", 0.5)
    sm.save(old, state)
    server = service.Service(0, True, state, 60.0, batch_size=64)
    try:
        assert server.metrics is not None and server.metrics.batch_size == 64
        assert server.metrics.max_delay == service.MAX_DELAY
        assert len(server.metrics) == 1  # the pending prediction was restored
    finally:
        if server.checkpointer is not None:
            server.checkpointer.close(final=False)
        server.server_close()
