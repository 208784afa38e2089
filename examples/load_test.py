"""Load test for examples/service.py: sustained requests/s with metrics on vs off.

Starts the service in another process on 127.0.0.1 (a free port), drives it from client threads
over keep-alive HTTP connections -- every request is a ``/predict``, and each prediction's label
is sent later (a few requests later, out of order) as a ``/label`` -- for a bounded number of
requests and seconds, then scrapes ``/metrics.json`` and ``/metrics`` once. Runs the service with
``--no-metrics`` and with metrics, alternating (same seeded request mix in both; the metrics-off
service still parses, scores and replies), then once more with ``--time-metrics`` to measure the
CPU time spent inside the metrics calls where it is spent, and prints a markdown table.

Run: ``python examples/load_test.py --requests 20000 --seconds 20``. Exit status 1 if a run
fails (a non-200 reply or the service dying).
"""

from __future__ import annotations

import argparse
import contextlib
import http.client
import json
import math
import os
import random
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

HERE = Path(__file__).resolve().parent


def start_service(metrics: bool, state: Path | None, time_metrics: bool = False,
                  batch_size: int | None = None) -> tuple[subprocess.Popen[str], int]:
    cmd = [sys.executable, str(HERE / "service.py"), "--port", "0"]
    if not metrics:
        cmd.append("--no-metrics")
    if time_metrics:
        cmd.append("--time-metrics")
    if batch_size is not None:
        cmd += ["--batch-size", str(batch_size)]
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
             state: Path | None, time_metrics: bool = False,
             batch_size: int | None = None) -> tuple[dict[str, float], dict, str]:
    """One service process: warm-up, then the timed run. ``stats`` has requests/s and the
    service's CPU time per request (robust to other load on the machine); with
    ``time_metrics`` also the CPU time spent inside the metrics calls per request."""
    proc, port = start_service(metrics, state, time_metrics, batch_size)
    try:
        drive(port, min(200, requests), seconds, clients, seed + 999)  # warm-up
        before = scrape(port)[0].get("metrics_cost") if time_metrics else None
        cpu0 = cpu_seconds(proc.pid)
        stats = drive(port, requests, seconds, clients, seed)
        cpu1 = cpu_seconds(proc.pid)
        if cpu0 is not None and cpu1 is not None and stats["requests"]:
            stats["cpu_us_per_request"] = (cpu1 - cpu0) / stats["requests"] * 1e6
        values, text = scrape(port)
        if before is not None and stats["requests"]:
            cost = values["metrics_cost"]
            spent = cost["cpu_seconds"] - before["cpu_seconds"]
            timer = (cost["calls"] - before["calls"]) * cost["timer_seconds_per_call"]
            stats["metrics_us_per_request"] = (spent - timer) / stats["requests"] * 1e6
            stats["timer_us_per_request"] = timer / stats["requests"] * 1e6
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    return stats, values, text


@contextlib.contextmanager
def services(configs: list[tuple[str, bool, int | None]], requests: int, seconds: float,
             clients: int, seed: int) -> Iterator[list[tuple[subprocess.Popen[str], int]]]:
    """One running, warmed-up service per configuration; (process, port) each; stopped after."""
    started = [start_service(metrics, None, False, batch) for _, metrics, batch in configs]
    try:
        for _, port in started:
            drive(port, min(200, requests), seconds, clients, seed + 999)  # warm-up
        yield started
    finally:
        for proc, _ in started:
            proc.terminate()
        for proc, _ in started:
            proc.wait(timeout=30)


def run_side_by_side(configs: list[tuple[str, bool, int | None]], requests: int, seconds: float,
                     clients: int, seed: int) -> list[tuple[str, dict[str, float]]]:
    """One service per configuration, all driven at the same time with the same request mix
    (``clients`` threads each): whatever else runs on the machine disturbs them alike, so the
    ratio of their CPU time per request is robust where sequential runs are not."""
    with services(configs, requests, seconds, clients, seed) as started:
        out: list[dict[str, float] | None] = [None] * len(started)
        errors: list[BaseException] = []

        def one(i: int) -> None:
            try:
                out[i] = drive(started[i][1], requests, seconds, clients, seed)
            except BaseException as exc:  # noqa: BLE001 - re-raised below
                errors.append(exc)

        cpu0 = [cpu_seconds(proc.pid) for proc, _ in started]
        threads = [threading.Thread(target=one, args=(i,)) for i in range(len(started))]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        cpu1 = [cpu_seconds(proc.pid) for proc, _ in started]
        if errors:
            raise errors[0]
        rows = []
        for (label, _, _), stats, a, b in zip(configs, out, cpu0, cpu1, strict=True):
            assert stats is not None
            if a is not None and b is not None and stats["requests"]:
                stats["cpu_us_per_request"] = (b - a) / stats["requests"] * 1e6
            rows.append((label, stats))
        return rows


def run_interleaved(configs: list[tuple[str, bool, int | None]], requests: int, seconds: float,
                    clients: int, seed: int,
                    slice_requests: int = 1000) -> list[tuple[str, dict[str, float]]]:
    """One service per configuration, all started, driven in turn in slices of
    ``slice_requests`` (the order reversed every slice): alternating rounds whose halves are
    a second apart rather than a whole run apart, so that a change of the machine's load
    between the off and the on run (the sequential rounds' weakness) disturbs both alike.
    Each service's CPU time is read around its own slices only."""
    with services(configs, requests, seconds, clients, seed) as started:
        done = [0] * len(started)
        cpu = [0.0] * len(started)
        spent = [0.0] * len(started)
        slices = max(1, requests // slice_requests)
        for k in range(slices):
            order = list(range(len(started)))
            if k % 2:
                order.reverse()
            for i in order:
                proc, port = started[i]
                c0 = cpu_seconds(proc.pid)
                st = drive(port, requests // slices, seconds, clients, seed * 1000 + k)
                c1 = cpu_seconds(proc.pid)
                done[i] += int(st["requests"])
                spent[i] += st["seconds"]
                if c0 is not None and c1 is not None:
                    cpu[i] += c1 - c0
        rows = []
        for (label, _, _), n, c, t in zip(configs, done, cpu, spent, strict=True):
            rows.append((label, {"requests": n, "seconds": t, "rps": n / t if t else 0.0,
                                 "cpu_us_per_request": c / n * 1e6 if n else float("nan")}))
        return rows


def summary(rows: list[tuple[int, str, dict[str, float]]]) -> str:
    """Metrics cost from requests/s and from the service's CPU time per request: the best run of
    each (the least disturbed by other processes) and the median of the rounds' on/off ratios
    (each round runs off then on, back to back); plus, from a ``timed`` run, the CPU time spent
    inside the metrics calls."""
    off = {r: st for r, label, st in rows if label == "off"}
    best_off = max(st["rps"] for st in off.values())
    parts = []
    names = [label for _, label, _ in rows if label.startswith("on") and label != "on (timed)"
             and not label.endswith(SIDE) and not label.endswith(INTER)]
    for name in dict.fromkeys(names):
        on = {r: st for r, label, st in rows if label == name}
        best_on = max(st["rps"] for st in on.values())
        paired = sorted(on[r]["rps"] / off[r]["rps"] for r in on if r in off)
        text = (f"metrics {name}: requests/s best off {best_off:.0f}, best on {best_on:.0f} "
                f"(on/off {best_on / best_off:.3f}, throughput cost {100 * (1 - best_on / best_off):.1f}%; "
                f"median of {len(paired)} paired rounds on/off {_median(paired):.3f})")
        cpu_pairs = sorted(on[r]["cpu_us_per_request"] / off[r]["cpu_us_per_request"] for r in on
                           if r in off and "cpu_us_per_request" in on[r] and "cpu_us_per_request" in off[r])
        if cpu_pairs:
            a = min(st["cpu_us_per_request"] for st in on.values())
            b = min(st["cpu_us_per_request"] for st in off.values())
            text += (f"; service CPU per request: best off {b:.0f} µs, best on {a:.0f} µs "
                     f"(metrics cost {100 * (a / b - 1):.1f}%; median of the paired rounds "
                     f"{100 * (_median(cpu_pairs) - 1):.1f}%; target < 10%)")
        parts.append(text)
    side = [label for _, label, _ in rows if label.startswith("on") and label.endswith(SIDE)]
    for name in dict.fromkeys(side):
        side_off = {r: st for r, label, st in rows if label == f"off, vs {name}"}
        ratios = sorted(st["cpu_us_per_request"] / side_off[r]["cpu_us_per_request"]
                        for r, label, st in rows if label == name and r in side_off
                        and "cpu_us_per_request" in st and "cpu_us_per_request" in side_off[r])
        if ratios:
            parts.append(f"metrics {name[:-len(SIDE)]}, side by side with off (same time, same "
                         f"requests): service CPU per request on/off median {_median(ratios):.3f} "
                         f"over {len(ratios)} rounds (metrics cost {100 * (_median(ratios) - 1):.1f}%; "
                         f"rounds {', '.join(f'{100 * (x - 1):.1f}%' for x in ratios)})")
    inter = [label for _, label, _ in rows if label.startswith("on") and label.endswith(INTER)]
    for name in dict.fromkeys(inter):
        i_off = {r: st for r, label, st in rows if label == f"off, vs {name}"}
        ratios = sorted(st["cpu_us_per_request"] / i_off[r]["cpu_us_per_request"]
                        for r, label, st in rows if label == name and r in i_off)
        if ratios:
            parts.append(f"metrics {name[:-len(INTER)]}, alternating in slices of 1000 requests: "
                         f"service CPU per request on/off median {_median(ratios):.3f} over "
                         f"{len(ratios)} rounds (metrics cost {100 * (_median(ratios) - 1):.1f}%; "
                         f"rounds {', '.join(f'{100 * (x - 1):.1f}%' for x in ratios)}; target < 10%)")
    text = ";\n".join(parts)
    timed = [st for _, label, st in rows if label == "on (timed)" and "metrics_us_per_request" in st]
    if timed:
        m = min(st["metrics_us_per_request"] for st in timed)
        cpu = [st["cpu_us_per_request"] for st in timed if "cpu_us_per_request" in st]
        share = f" = {100 * m / (min(cpu) - m):.1f}% of the rest of the service's CPU" if cpu else ""
        timer = min(st.get("timer_us_per_request", 0.0) for st in timed)
        text += (f";\nCPU inside the metrics calls (measured in the service, thread CPU time, less "
                 f"{timer:.1f} µs/request that reading the clock itself costs): "
                 f"{m:.1f} µs per request{share}")
    return text


def _median(xs: list[float]) -> float:
    xs = sorted(xs)
    mid = len(xs) // 2
    return xs[mid] if len(xs) % 2 else (xs[mid - 1] + xs[mid]) / 2


SIDE = " (side by side)"
INTER = " (alternating slices)"


def load_test(requests: int, seconds: float, clients: int, rounds: int, state: Path | None,
              attribute: bool = True, compare_batch_size: int | None = None, side_rounds: int = 0,
              slice_rounds: int = 0) -> tuple[list[tuple[int, str, dict[str, float]]], tuple[dict, str]]:
    """``rounds`` alternating off/on runs (and an on run whose service folds labels in batches
    of ``compare_batch_size``, e.g. 1, if given), then one ``--time-metrics`` run if
    ``attribute``, then ``side_rounds`` rounds running the configurations side by side, then
    ``slice_rounds`` rounds alternating them in slices of 1000 requests."""
    rows: list[tuple[int, str, dict[str, float]]] = []
    last: tuple[dict, str] = ({}, "")
    configs: list[tuple[str, bool, int | None]] = [("off", False, None), ("on", True, None)]
    if compare_batch_size is not None:
        configs.append((f"on, batch_size={compare_batch_size}", True, compare_batch_size))
    for r in range(rounds):
        for label, metrics, batch in configs:
            stats, values, text = run_once(metrics, requests, seconds, clients, r, state,
                                           batch_size=batch)
            rows.append((r, label, stats))
            if label == "on":
                last = (values, text)
    if attribute:
        stats, _, _ = run_once(True, requests, seconds, clients, 0, state, time_metrics=True)
        rows.append((rounds, "on (timed)", stats))
    for r in range(side_rounds):
        for other in configs[1:]:  # each metrics configuration in a pair with metrics off
            for label, stats in run_side_by_side([configs[0], other], requests, seconds, clients, r):
                rows.append((r, (label if label != "off" else f"off, vs {other[0]}") + SIDE, stats))
    for r in range(slice_rounds):
        for other in configs[1:]:
            for label, stats in run_interleaved([configs[0], other], requests, seconds, clients, r):
                rows.append((r, (label if label != "off" else f"off, vs {other[0]}") + INTER, stats))
    return rows, last


def table(rows: list[tuple[int, str, dict[str, float]]]) -> list[list[str]]:
    out = []
    for r, label, st in rows:
        cpu, mine = st.get("cpu_us_per_request"), st.get("metrics_us_per_request")
        out.append([str(r), label, f"{st['requests']:.0f}", f"{st['seconds']:.2f}", f"{st['rps']:.0f}",
                    "n/a" if cpu is None else f"{cpu:.0f}", "" if mine is None else f"{mine:.1f}"])
    return out


HEADERS = ["round", "metrics", "requests", "seconds", "requests/s", "service CPU µs/request",
           "metrics calls CPU µs/request"]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--requests", type=int, default=20_000)
    ap.add_argument("--seconds", type=float, default=20.0)
    ap.add_argument("--clients", type=int, default=4)
    ap.add_argument("--rounds", type=int, default=3, help="off/on pairs, alternating")
    ap.add_argument("--state", type=Path, default=None, help="checkpoint file for the metrics run")
    ap.add_argument("--no-attribute", action="store_true",
                    help="skip the extra run that times the metrics calls inside the service")
    ap.add_argument("--compare-batch-size", type=int, default=None,
                    help="also run the service folding labels in batches of this size (1: one "
                         "metric update per label, as before batching), in every round")
    ap.add_argument("--side-rounds", type=int, default=3,
                    help="rounds running off and on services at the same time (robust CPU ratio)")
    ap.add_argument("--slice-rounds", type=int, default=3,
                    help="rounds alternating off and on services in slices of 1000 requests")
    args = ap.parse_args(argv)
    rows, (values, text) = load_test(args.requests, args.seconds, args.clients, args.rounds,
                                     args.state, not args.no_attribute, args.compare_batch_size,
                                     args.side_rounds, args.slice_rounds)
    print("| " + " | ".join(HEADERS) + " |")
    print("|" + "---|" * len(HEADERS))
    for row in table(rows):
        print("| " + " | ".join(row) + " |")
    print("\n" + summary(rows))
    print(f"\nmetrics after the last run: {json.dumps(values)}")
    print(f"/metrics exposes {sum(1 for ln in text.splitlines() if ln and not ln.startswith('#'))} samples")
    return 0


if __name__ == "__main__":
    sys.exit(main())
