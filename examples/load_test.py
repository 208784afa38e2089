"""Load test for examples/service.py: sustained requests/s with metrics on vs off.

Starts the service in another process on 127.0.0.1 (a free port), drives it from client threads
over keep-alive HTTP connections -- every request is a ``/predict``, and each prediction's label
is sent later (a few requests later, out of order) as a ``/label`` -- for a bounded number of
requests and seconds, then scrapes ``/metrics.json`` and ``/metrics`` once. Runs the service with
``--no-metrics`` and with metrics, alternating, and prints a markdown table.

Run: ``python examples/load_test.py --requests 20000 --seconds 20``. Exit status 1 if a run
fails (a non-200 reply or the service dying).
"""

from __future__ import annotations

import argparse
import http.client
import json
import math
import os
import random
import subprocess
import sys
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def start_service(metrics: bool, state: Path | None) -> tuple[subprocess.Popen[str], int]:
    cmd = [sys.executable, str(HERE / "service.py"), "--port", "0"]
    if not metrics:
        cmd.append("--no-metrics")
    if state is not None:
        cmd += ["--state", str(state), "--checkpoint-every", "1"]
    env = {**os.environ, "PYTHONPATH": str(HERE.parent) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True, env=env)
    assert proc.stdout is not None
    line = proc.stdout.readline()
    if not line.startswith("listening on "):
        proc.kill()
        raise RuntimeError(f"service did not start: {line!r}")
    return proc, int(line.split()[-1])


def drive(port: int, requests: int, seconds: float, clients: int, seed: int) -> dict[str, float]:
    """Send up to ``requests`` requests (predicts and labels) within ``seconds``."""
    counts = [0] * clients
    failures: list[str] = []
    per_client = requests // clients
    deadline = time.perf_counter() + seconds

    def client(c: int) -> None:
        rng = random.Random(seed * 100 + c)
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        headers = {"Content-Type": "application/json"}
        waiting: list[tuple[str, int]] = []
        n = 0
        i = 0
        try:
            while n < per_client and time.perf_counter() < deadline:
                if waiting and (len(waiting) > 8 or rng.random() < 0.45):
                    rid, y = waiting.pop(rng.randrange(len(waiting)))
                    path, body = "/label", {"id": rid, "label": y}
                else:
                    x = [rng.gauss(0, 1) for _ in range(4)]
                    rid = f"s{seed}-c{c}-{i}"
                    i += 1
                    z = 0.8 * x[0] - 0.5 * x[1] + 1.2 * x[2]
                    y = int(rng.random() < 1 / (1 + math.exp(-z)))
                    waiting.append((rid, y))
                    path, body = "/predict", {"id": rid, "features": x}
                conn.request("POST", path, json.dumps(body).encode(), headers)  # one send with headers
                resp = conn.getresponse()
                data = resp.read()
                if resp.status != 200:
                    failures.append(f"{path} -> {resp.status} {data[:200]!r}")
                    return
                n += 1
        finally:
            counts[c] = n
            conn.close()

    threads = [threading.Thread(target=client, args=(c,)) for c in range(clients)]
    t0 = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    elapsed = time.perf_counter() - t0
    if failures:
        raise RuntimeError(failures[0])
    total = sum(counts)
    return {"requests": total, "seconds": elapsed, "rps": total / elapsed}


def scrape(port: int) -> tuple[dict, str]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    conn.request("GET", "/metrics.json")
    values = json.loads(conn.getresponse().read())
    conn.request("GET", "/metrics")
    resp = conn.getresponse()
    text = resp.read().decode() if resp.status == 200 else ""
    conn.close()
    return values, text


def cpu_seconds(pid: int) -> float | None:
    """User + system CPU seconds of a process (Linux /proc), or None elsewhere."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return None


def run_once(metrics: bool, requests: int, seconds: float, clients: int, seed: int,
             state: Path | None) -> tuple[dict[str, float], dict, str]:
    """One service process: warm-up, then the timed run. ``stats`` has requests/s and the
    service's CPU time per request (robust to other load on the machine)."""
    proc, port = start_service(metrics, state)
    try:
        drive(port, min(200, requests), seconds, clients, seed + 999)  # warm-up
        cpu0 = cpu_seconds(proc.pid)
        stats = drive(port, requests, seconds, clients, seed)
        cpu1 = cpu_seconds(proc.pid)
        if cpu0 is not None and cpu1 is not None and stats["requests"]:
            stats["cpu_us_per_request"] = (cpu1 - cpu0) / stats["requests"] * 1e6
        values, text = scrape(port)
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    return stats, values, text


def summary(rows: list[tuple[int, str, dict[str, float]]]) -> str:
    """Metrics cost from the best requests/s and from the service's CPU time per request."""
    on = [st for _, label, st in rows if label == "on"]
    off = [st for _, label, st in rows if label == "off"]
    best_on, best_off = max(st["rps"] for st in on), max(st["rps"] for st in off)
    text = (f"best requests/s: metrics off {best_off:.0f}, on {best_on:.0f} "
            f"(throughput cost {100 * (1 - best_on / best_off):.1f}%)")
    cpu_on = [st["cpu_us_per_request"] for st in on if "cpu_us_per_request" in st]
    cpu_off = [st["cpu_us_per_request"] for st in off if "cpu_us_per_request" in st]
    if cpu_on and cpu_off:
        a, b = min(cpu_on), min(cpu_off)
        text += (f"; service CPU per request: off {b:.0f} µs, on {a:.0f} µs "
                 f"(metrics cost {100 * (a / b - 1):.1f}% of the service's CPU; target < 10%)")
    return text


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--requests", type=int, default=20_000)
    ap.add_argument("--seconds", type=float, default=20.0)
    ap.add_argument("--clients", type=int, default=4)
    ap.add_argument("--rounds", type=int, default=2, help="off/on pairs, alternating")
    ap.add_argument("--state", type=Path, default=None, help="checkpoint file for the metrics run")
    args = ap.parse_args(argv)
    rows = []
    last: tuple[dict, str] = ({}, "")
    for r in range(args.rounds):
        for metrics in (False, True):
            stats, values, text = run_once(metrics, args.requests, args.seconds, args.clients, r, args.state)
            rows.append((r, "on" if metrics else "off", stats))
            if metrics:
                last = (values, text)
    print("| round | metrics | requests | seconds | requests/s | service CPU µs/request |")
    print("|---|---|---|---|---|---|")
    for r, label, st in rows:
        cpu = st.get("cpu_us_per_request")
        print(f"| {r} | {label} | {st['requests']:.0f} | {st['seconds']:.2f} | {st['rps']:.0f} | "
              f"{'n/a' if cpu is None else f'{cpu:.0f}'} |")
    print("\n" + summary(rows))
    values, text = last
    print(f"\nmetrics after the last run: {json.dumps(values)}")
    print(f"/metrics exposes {sum(1 for ln in text.splitlines() if ln and not ln.startswith('#'))} samples")
    return 0


if __name__ == "__main__":
    sys.exit(main())
