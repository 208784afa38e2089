"""A small HTTP inference service that monitors its own quality with streammetrics.

Endpoints (JSON over HTTP/1.1, stdlib ``http.server``):

* ``POST /predict`` ``{"id": "req-17", "features": [0.3, -1.2, ...]}`` -> ``{"id", "score"}``:
  scores with a toy logistic model and stores the prediction as pending (``DelayedLabels``).
* ``POST /label`` ``{"id": "req-17", "label": 1}`` (or ``{"ids": [...], "labels": [...]}``) ->
  ``{"fed": 1, "unknown": []}``: the truth arrives later and feeds the metrics. Ids that are not
  pending (never predicted, already labelled, evicted or expired) are skipped, counted in the
  ``unknown`` counter and listed in the reply's ``"unknown"`` with the reason (never silent);
  the other ids of the request are labelled. A label the metrics reject is a 400, nothing fed.
* ``GET /metrics``: Prometheus text format (needs prometheus-client), ``GET /metrics.json``: the
  values and the DelayedLabels counters as JSON (with ``--time-metrics`` also the CPU time the
  request threads spent inside the metrics calls).

Metrics: AUROC and AP over everything labelled, F1 over the last 2000 labelled samples (a count
window), AUROC over the last 10 minutes (a time window) and an exponentially decayed F1 (half-life
1000 samples). The state is checkpointed every few seconds (``--state``) and restored on start,
so a restart loses at most one period. Labels reach the metrics in batches (``batch_size=256``,
at most ``max_delay=1`` s late under traffic, flushed by a timer when idle and before every read
of ``/metrics`` or ``/metrics.json``), so a read always sees every label received. ``--no-metrics``
serves predictions only (the load test's baseline: same parsing, model and replies).

Run: ``python examples/service.py --port 8000 --state /tmp/service.sm``; the first line printed
is ``listening on <port>``.
"""

from __future__ import annotations

import argparse
import gc
import json
import math
import signal
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import streammetrics as sm

WEIGHTS = [0.8, -0.5, 1.2, 0.3]
BATCH_SIZE = 256  # labelled pairs folded into the metrics per update
MAX_DELAY = 1.0  # seconds a labelled pair may wait for its batch


def score(features: list[float]) -> float:
    z = sum(w * x for w, x in zip(WEIGHTS, features, strict=False))
    return 1.0 / (1.0 + math.exp(-z))


def build_metrics(batch_size: int = BATCH_SIZE) -> sm.DelayedLabels:
    quality = sm.MetricSet(
        auroc=sm.AUROC(),
        ap=sm.AveragePrecision(),
        f1_last_2000=sm.Window(sm.F1(), size=2000),
        auroc_last_10min=sm.Window(sm.AUROC(), seconds=600),
        f1_decayed=sm.Decayed(sm.F1(), half_life=1000),
    )
    # Labels are folded into the metrics in batches of up to 256 (or after 1 s under traffic,
    # on every read and on the flush timer below): one metric update per label would cost the
    # whole MetricSet's per-call overhead for one row (see examples/README.md).
    return sm.DelayedLabels(quality, capacity=200_000, ttl=3600.0, on_unknown="skip",
                            batch_size=batch_size, max_delay=MAX_DELAY)


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # headers and body go out as separate writes
    server: Service

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        pass

    def _send(self, code: int, body: bytes, ctype: str = "application/json") -> None:
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _json(self, code: int, obj: Any) -> None:
        self._send(code, json.dumps(obj).encode())

    def do_POST(self) -> None:
        try:
            length = int(self.headers.get("Content-Length", "0"))
            req = json.loads(self.rfile.read(length) or b"{}")
        except (ValueError, json.JSONDecodeError):
            self._json(400, {"error": "body must be JSON"})
            return
        metrics = self.server.metrics
        cost = self.server.cost
        try:
            t0 = time.thread_time() if cost is not None else 0.0
            if self.path == "/predict":
                s = score(req["features"])
                if cost is not None:
                    t0 = time.thread_time()  # the model's work is not the metrics'
                if metrics is not None:
                    metrics.predict(req["id"], s)
                if cost is not None:
                    cost.add(time.thread_time() - t0)
                self._json(200, {"id": req["id"], "score": s})
            elif self.path == "/label":
                ids, labels = ((req["id"], int(req["label"])) if "ids" not in req
                               else (list(req["ids"]), list(req["labels"])))
                if metrics is None:
                    self._json(200, {"fed": 0, "unknown": []})
                    return
                report = metrics.label_report(ids, labels)
                if cost is not None:
                    cost.add(time.thread_time() - t0)
                reply: dict[str, Any] = {"fed": report.fed, "unknown": list(report.unknown)}
                if report.unknown:
                    reply["reason"] = ("not pending: never predicted, already labelled, "
                                       "evicted or expired (skipped and counted as unknown)")
                self._json(200, reply)
            else:
                self._json(404, {"error": f"no endpoint {self.path}"})
        except (ValueError, TypeError) as exc:  # a bad value (the metrics' message says which)
            self._json(400, {"error": str(exc)})
        except KeyError as exc:
            self._json(400, {"error": f"missing field {exc}"})

    def do_GET(self) -> None:
        metrics = self.server.metrics
        if self.path == "/metrics.json":
            if metrics is None:
                self._json(200, {} if self.server.gc_cost is None else {"gc": self.server.gc_cost.snapshot()})
                return
            values = metrics.compute()
            out = {"values": {k: (None if isinstance(v, float) and math.isnan(v) else v)
                              for k, v in values.items()},
                   "labels": metrics.stats()}
            if self.server.cost is not None:
                out["metrics_cost"] = self.server.cost.snapshot()
            if self.server.gc_cost is not None:
                out["gc"] = self.server.gc_cost.snapshot()
            self._json(200, out)
        elif self.path == "/metrics":
            if self.server.registry is None:
                self._json(501, {"error": "pip install prometheus-client for /metrics"})
                return
            from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

            self._send(200, generate_latest(self.server.registry), CONTENT_TYPE_LATEST)
        else:
            self._json(404, {"error": f"no endpoint {self.path}"})


class Cost:
    """CPU seconds the request threads spent inside the metrics calls (``--time-metrics``):
    the metrics' own share of the service's CPU, measured where it is spent."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.seconds = 0.0
        self.calls = 0
        # What one measurement adds by itself (reading a thread's CPU clock is a system call):
        # the median of back-to-back readings, subtracted by the reader.
        gaps = sorted(-time.thread_time() + time.thread_time() for _ in range(2001))
        self.timer_seconds = gaps[len(gaps) // 2]

    def add(self, dt: float) -> None:
        with self._lock:
            self.seconds += dt
            self.calls += 1

    def snapshot(self) -> dict[str, float]:
        with self._lock:
            return {"cpu_seconds": self.seconds, "calls": self.calls,
                    "timer_seconds_per_call": self.timer_seconds}


class GcCost:
    """CPU seconds spent in Python's cyclic garbage collector, and collections per generation
    (``--time-metrics``; the collector runs in whichever thread allocates)."""

    def __init__(self) -> None:
        self.seconds = 0.0
        self.collections = [0, 0, 0]
        self._t0 = 0.0
        gc.callbacks.append(self._callback)

    def _callback(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            self._t0 = time.thread_time()
        else:
            self.seconds += time.thread_time() - self._t0
            self.collections[info["generation"]] += 1

    def snapshot(self) -> dict[str, Any]:
        return {"cpu_seconds": self.seconds, "collections": list(self.collections),
                "tracked_objects": len(gc.get_objects())}


class Service(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, port: int, metrics_on: bool, state: Path | None, every: float,
                 time_metrics: bool = False, batch_size: int = BATCH_SIZE) -> None:
        super().__init__(("127.0.0.1", port), Handler)
        self.metrics: sm.DelayedLabels | None = None
        self.registry: Any = None
        self.checkpointer: sm.Checkpointer | None = None
        self.cost: Cost | None = Cost() if time_metrics and metrics_on else None
        self.gc_cost: GcCost | None = GcCost() if time_metrics else None
        if not metrics_on:
            return
        fresh = build_metrics(batch_size)
        restored = sm.Checkpointer.restore(state, default=fresh) if state else fresh
        self.metrics = restored if isinstance(restored, sm.DelayedLabels) else fresh
        # The folding knobs are how this process serves, not state: a checkpoint written with
        # another --batch-size (or before batching, i.e. batch_size=1) must not override them.
        self.metrics.batch_size, self.metrics.max_delay = batch_size, MAX_DELAY
        if state:
            self.checkpointer = sm.Checkpointer(self.metrics, state, every_seconds=every)
        try:
            from prometheus_client import CollectorRegistry

            from streammetrics.prometheus import register

            self.registry = CollectorRegistry()
            register(self.metrics, self.registry, prefix="service")
        except ImportError:
            self.registry = None


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--port", type=int, default=8000, help="0 picks a free port")
    ap.add_argument("--state", type=Path, default=None, help="checkpoint file (restored on start)")
    ap.add_argument("--checkpoint-every", type=float, default=5.0)
    ap.add_argument("--no-metrics", action="store_true")
    ap.add_argument("--time-metrics", action="store_true",
                    help="measure the CPU time of the metrics calls (reported in /metrics.json)")
    ap.add_argument("--batch-size", type=int, default=BATCH_SIZE,
                    help="labels folded into the metrics per update (1: one update per label)")
    args = ap.parse_args(argv)
    server = Service(args.port, not args.no_metrics, args.state, args.checkpoint_every,
                     args.time_metrics, args.batch_size)
    print(f"listening on {server.server_address[1]}", flush=True)

    def stop(*_: Any) -> None:
        threading.Thread(target=server.shutdown, daemon=True).start()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    done = threading.Event()
    if server.metrics is not None:
        metrics = server.metrics

        def flush_timer() -> None:  # an idle service still folds its last labels in on time
            while not done.wait(MAX_DELAY):
                t0 = time.thread_time()
                metrics.flush()
                if server.cost is not None:
                    server.cost.add(time.thread_time() - t0)

        threading.Thread(target=flush_timer, name="flush", daemon=True).start()
    try:
        server.serve_forever(poll_interval=0.1)
    finally:
        done.set()
        if server.checkpointer is not None:
            server.checkpointer.close(final=True)
        server.server_close()
    sys.exit(0)


if __name__ == "__main__":
    main()
