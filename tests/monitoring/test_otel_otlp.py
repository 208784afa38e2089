"""streammetrics.otel through the real OTLP/HTTP exporter to a local receiver.

No OpenTelemetry Collector installs from PyPI or Debian, so the receiver is a minimal OTLP/HTTP
endpoint in this process (``http.server`` on loopback) that decodes each request with
``opentelemetry-proto``'s ``ExportMetricsServiceRequest``, as a collector would. The exporter
(``opentelemetry-exporter-otlp-proto-http``) is part of the ``otel`` extra, which CI installs.
"""

from __future__ import annotations

import gzip
import threading
import zlib
from http.server import BaseHTTPRequestHandler, HTTPServer

import numpy as np
import pytest

pytest.importorskip("opentelemetry.sdk")
otlp = pytest.importorskip("opentelemetry.exporter.otlp.proto.http.metric_exporter")
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (  # noqa: E402
    ExportMetricsServiceRequest,
    ExportMetricsServiceResponse,
)
from opentelemetry.sdk.metrics import MeterProvider  # noqa: E402
from opentelemetry.sdk.metrics.export import PeriodicExportingMetricReader  # noqa: E402

import streammetrics as sm  # noqa: E402
from streammetrics import otel  # noqa: E402
from streammetrics.monitoring import Estimated  # noqa: E402


class Receiver(BaseHTTPRequestHandler):
    received: list[ExportMetricsServiceRequest] = []

    def do_POST(self) -> None:  # noqa: N802 (http.server's name)
        body = self.rfile.read(int(self.headers["Content-Length"]))
        encoding = self.headers.get("Content-Encoding")
        if encoding == "gzip":
            body = gzip.decompress(body)
        elif encoding == "deflate":
            body = zlib.decompress(body)
        request = ExportMetricsServiceRequest()
        request.ParseFromString(body)
        Receiver.received.append(request)
        reply = ExportMetricsServiceResponse().SerializeToString()
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", str(len(reply)))
        self.end_headers()
        self.wfile.write(reply)

    def log_message(self, *args: object) -> None:
        pass


def test_values_reach_an_otlp_endpoint():
    server = HTTPServer(("127.0.0.1", 0), Receiver)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        exporter = otlp.OTLPMetricExporter(endpoint=f"http://127.0.0.1:{server.server_port}/v1/metrics")
        reader = PeriodicExportingMetricReader(exporter, export_interval_millis=60_000)
        provider = MeterProvider(metric_readers=[reader])
        est = Estimated(sm.MetricSet(acc=sm.Accuracy(), auroc=sm.AUROC()))
        otel.register(est, provider.get_meter("svc"), prefix="model", attributes={"model": "v3"})
        est.update(np.linspace(0.05, 0.95, 200))
        assert reader.force_flush(timeout_millis=10_000)
        provider.shutdown()
    finally:
        server.shutdown()
    points = {}
    for request in Receiver.received:
        for rm in request.resource_metrics:
            for sc in rm.scope_metrics:
                for m in sc.metrics:
                    for dp in m.gauge.data_points:
                        attrs = {a.key: a.value.string_value for a in dp.attributes}
                        assert attrs == {"model": "v3"}
                        points[m.name] = dp.as_double
    want = est.compute()
    assert points["model.acc"] == pytest.approx(want["acc"], rel=1e-15)
    assert points["model.auroc"] == pytest.approx(want["auroc"], rel=1e-15)
    assert points["model.acc.interval_low"] == pytest.approx(est.interval(member="acc")[0], rel=1e-15)
    assert points["model.acc.samples"] == pytest.approx(200.0)
