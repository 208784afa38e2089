"""Service features benchmark: windowed AUROC vs peers, lock overhead, load test with metrics.

Run ``python -m benchmarks.bench_service [--quick]`` (or ``python benchmarks/bench_service.py``).

1. **Windowed AUROC, read after every batch.** A window of W samples (W = 10k and 1M) is filled,
   then batches of ``m`` samples arrive and the AUROC of the window is read after each one.
   Same seeded data for everyone, tied scores included. Peers:

   * ``streammetrics`` -- ``Window(AUROC(), size=W)``: expired scores are removed in place
     (Mann-Whitney pair counts by inclusion-exclusion, O(m log W); scores deleted from the sorted
     run, an O(W) memmove), so a read is O(1) plus that lazy removal;
   * ``streammetrics (rebuild)`` -- the same window forced onto its generic fallback (rebuild the
     state from the window's rows on a read after an expiry), to show what the subtraction buys;
   * ``river`` -- ``metrics.RollingROCAUC(window_size=W)``, updated per sample (its C++ core),
     read with ``get()`` (O(W) per read);
   * ``torcheval`` -- ``WindowedBinaryAUROC(max_num_samples=W)``, re-sorting the window on every
     ``compute()``.

   Each implementation runs its batches until ``--budget`` seconds are spent (at least 2).
   Reported: median milliseconds per (batch update + read), the per-sample cost, and the
   largest |difference| from scikit-learn on exactly the window's samples at the checked reads.
2. **Lock overhead on the per-sample path.** ``update(y, p)`` with Python scalars, one sample per
   call, with the accumulator's lock vs the lock replaced by ``contextlib.nullcontext()`` in this
   process only (interleaved runs, medians).
3. **The per-request metrics path, in process.** The example service's metrics
   (``DelayedLabels`` over AUROC, AP, a count-window F1, a time-window AUROC and a decayed F1)
   fed as the service feeds them: one ``predict(id, score)`` per prediction and one
   ``label(id, y)`` eight requests later. Labels folded one by one (``batch_size=1``) vs in
   batches of 256 (the service's setting), each with its locks and with every lock replaced by
   ``contextlib.nullcontext()`` (the lock's cost on this path); once as a tight loop and once
   with the request work of an HTTP/JSON service between the calls (header parsing, JSON in and
   out: the caches are as cold as in the service), whose own cost is shown for scale.
4. **Load test.** ``examples/load_test.py``: the example HTTP service in another process on
   loopback, client threads sending predictions and delayed labels, requests/s and the
   service's CPU time per request with metrics off, on (labels folded in batches of 256) and on
   with ``batch_size=1`` (one metric update per label), alternating in every round (best runs
   and the median of the paired rounds; target: metrics cost < 10%); one run that measures the
   CPU time spent inside the metrics calls in the service itself; and rounds running an off
   and an on service side by side at the same time (the ratio least disturbed by other load).

Timings never go into tests; this file prints a markdown report.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

if __package__ in (None, ""):  # ``python benchmarks/bench_service.py``
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from benchmarks._harness import (
        Report,
        _load,
        env_header,
        machine_line,
        markdown_table,
        measure_interleaved,
        single_thread,
        windowed_auroc_peer,
    )
else:
    from ._harness import (
        Report,
        _load,
        env_header,
        machine_line,
        markdown_table,
        measure_interleaved,
        single_thread,
        windowed_auroc_peer,
    )

ROOT = Path(__file__).resolve().parent.parent


# -- 1. windowed AUROC ---------------------------------------------------------------------------
def _data(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    s = np.round(rng.normal(size=n) + 0.7 * y, 3)  # ties
    return y, s


def _impl(name: str, window: int) -> tuple[Callable[[np.ndarray, np.ndarray], None], Callable[[], float | np.ndarray]]:
    """(update(y, s), read()) for one implementation."""
    if name.startswith("streammetrics"):
        import streammetrics as sm

        w = sm.Window(sm.AUROC(), size=window)
        if name.endswith("(rebuild)"):
            w._state._can_subtract = False  # the generic fallback, for comparison only

        def update(y: np.ndarray, s: np.ndarray) -> None:
            w.update(y, s)

        return update, w.compute
    return windowed_auroc_peer(name, window)


def bench_window(window: int, batch: int, budget: float, max_batches: int) -> list[list[str]]:
    from sklearn.metrics import roc_auc_score

    y_all, s_all = _data(window + batch * max_batches, seed=window)
    rows = []
    for name in ("streammetrics", "streammetrics (rebuild)", "river", "torcheval"):
        try:
            update, read = _impl(name, window)
        except ImportError as exc:
            rows.append([name, f"{window:,}", str(batch), "not installed", "", "", str(exc)[:40]])
            continue
        t0 = time.perf_counter()
        update(y_all[:window], s_all[:window])
        read()
        prefill = time.perf_counter() - t0
        per: list[float] = []
        worst = 0.0
        end = window
        spent = 0.0
        while len(per) < max_batches and (spent < budget or len(per) < 2):
            y, s = y_all[end:end + batch], s_all[end:end + batch]
            t0 = time.perf_counter()
            update(y, s)
            value = read()
            dt = time.perf_counter() - t0
            per.append(dt)
            spent += dt
            end += batch
            if len(per) in (1, 2) or len(per) % 10 == 0:  # check against the oracle now and then
                ref = roc_auc_score(y_all[end - window:end], s_all[end - window:end])
                worst = max(worst, abs(float(value) - ref))
        med = float(np.median(per))
        rows.append([name, f"{window:,}", str(batch), f"{med * 1e3:.3f}", f"{med / batch * 1e6:.2f}",
                     f"{prefill:.2f}", f"{worst:.1e} ({len(per)} batches)"])
    return rows


# -- 2. lock overhead ----------------------------------------------------------------------------
def bench_lock(n: int) -> list[list[str]]:
    import streammetrics as sm

    rng = np.random.default_rng(0)
    ys = rng.integers(0, 2, n).tolist()
    ps = rng.integers(0, 2, n).tolist()
    ss = rng.random(n).tolist()
    cases: list[tuple[str, Callable[[], Any], Any]] = [
        ("Accuracy, labels", sm.Accuracy, ps),
        ("MetricSet(P, R, F1, Acc), scores", lambda: sm.MetricSet(
            p=sm.Precision(), r=sm.Recall(), f1=sm.F1(), acc=sm.Accuracy()), ss),
        ("AUROC, scores", sm.AUROC, ss),
        ("Window(F1, size=1000), scores", lambda: sm.Window(sm.F1(), size=1000), ss),
        ("Decayed(F1, half_life=1000), scores", lambda: sm.Decayed(sm.F1(), half_life=1000), ss),
    ]
    rows = []
    for label, make, preds in cases:
        def run(locked: bool, make: Callable[[], Any] = make, preds: Any = preds) -> None:
            m = make()
            if not locked:
                m._lock = contextlib.nullcontext()
                for member in getattr(m, "_members", {}).values():
                    member._lock = m._lock
            for y, p in zip(ys, preds, strict=True):
                m.update(y, p)
            m.compute()

        with_lock, without = measure_interleaved([lambda: run(True), lambda: run(False)], repeat=7)
        a, b = with_lock.best / n, without.best / n  # best of interleaved runs: least disturbed
        rows.append([label, f"{a * 1e6:.2f}", f"{b * 1e6:.2f}", f"{(a - b) * 1e9:.0f}",
                     f"{100 * (a / b - 1):.1f}%"])
    return rows


# -- 3. the per-request metrics path ---------------------------------------------------------------
_HEADERS = (b"Host: 127.0.0.1:8000\r\nAccept-Encoding: identity\r\nContent-Length: 80\r\n"
            b"Content-Type: application/json\r\n\r\n")


def _request_work(i: int) -> None:
    """What the example service does per request besides the metrics (minus the socket I/O):
    parse the headers, decode the JSON body, encode the JSON reply."""
    import io
    import json
    from http.client import parse_headers

    parse_headers(io.BytesIO(_HEADERS))
    req = json.loads(json.dumps({"id": f"c1-{i}", "features": [0.25, -1.5, 0.75, 0.125]}))
    json.dumps({"id": req["id"], "score": 0.5}).encode()


def _no_locks(d: Any) -> None:
    d._lock = contextlib.nullcontext()
    inner = d._metric
    inner._lock = d._lock
    for member in getattr(inner, "_members", {}).values():
        member._lock = d._lock


def bench_delayed(n: int, repeat: int) -> list[list[str]]:
    sys.path.insert(0, str(ROOT / "examples"))
    import service  # type: ignore[import-not-found]

    import streammetrics as sm

    rng = np.random.default_rng(0)
    ids = [f"s0-c1-{i}" for i in range(n)]
    scores = rng.random(n).tolist()
    labels = (rng.random(n) < np.asarray(scores)).astype(int).tolist()
    lag = 8

    def make(batch: int, locked: bool) -> Any:
        d = sm.DelayedLabels(service.build_metrics().metric, capacity=200_000, ttl=3600.0,
                             batch_size=batch, max_delay=service.MAX_DELAY)
        if not locked:
            _no_locks(d)
        return d

    clock = time.perf_counter
    empty = sorted(-clock() + clock() for _ in range(10_001))[5_000]  # one timed region's own cost

    def run(batch: int | None, locked: bool, work: bool) -> tuple[float, float]:
        """(seconds for the whole loop, seconds inside the metrics calls)."""
        d = make(batch, locked) if batch is not None else None
        inside = 0.0
        t0 = clock()
        for i in range(n + lag):
            if i < n:
                if work:
                    _request_work(i)
                if d is not None:
                    t = clock()
                    d.predict(ids[i], scores[i])
                    inside += clock() - t
            if i >= lag:
                if work:
                    _request_work(i)
                if d is not None:
                    t = clock()
                    d.label(ids[i - lag], labels[i - lag])
                    inside += clock() - t
        if d is not None:
            t = clock()
            d.flush()  # folds the last batch: part of the cost (a read would do it too)
            inside += clock() - t
        return clock() - t0, inside - (2 * n + 1) * empty if d is not None else 0.0

    rows = []
    for work in (False, True):
        cases: list[tuple[str, int | None, bool]] = [
            ("one by one (batch_size=1)", 1, True),
            ("one by one, locks no-op", 1, False),
            ("batches of 256", 256, True),
            ("batches of 256, locks no-op", 256, False),
        ]
        if work:
            cases.append(("request work only, no metrics", None, True))
        results: list[list[tuple[float, float]]] = [[] for _ in cases]
        for _ in range(repeat):  # interleaved: every case once per round
            for k, (_, b, locked) in enumerate(cases):
                results[k].append(run(b, locked, work))
        total = [min(r[0] for r in res) / (2 * n) for res in results]  # best: least disturbed
        inside = [min(r[1] for r in res) / (2 * n) for res in results]
        base = total[-1] if work else None
        for k, (label, b, locked) in enumerate(cases):
            lock = inside[k] - inside[k + 1] if b is not None and locked else None
            rows.append([
                "between request work" if work else "tight loop", label, f"{total[k] * 1e6:.2f}",
                "" if b is None else f"{inside[k] * 1e6:.2f}",
                "" if lock is None else f"{lock * 1e9:.0f}",
                f"{100 * inside[k] / base:.1f}%" if base is not None and b is not None else "",
            ])
    return rows


def bench_load(requests: int, seconds: float, rounds: int,
               side_rounds: int) -> tuple[list[list[str]], str, list[str]]:
    sys.path.insert(0, str(ROOT / "examples"))
    import load_test  # type: ignore[import-not-found]

    rows, _ = load_test.load_test(requests, seconds, 4, rounds, None, attribute=True,
                                  compare_batch_size=1, side_rounds=side_rounds,
                                  slice_rounds=side_rounds)
    return load_test.table(rows), load_test.summary(rows), load_test.HEADERS


SECTIONS = ("window", "lock", "delayed", "load")


def main(argv: list[str] | None = None) -> str:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.bench_service", description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="smaller budgets")
    ap.add_argument("--budget", type=float, default=None, help="seconds per windowed implementation")
    ap.add_argument("--sections", default=",".join(SECTIONS),
                    help=f"comma-separated subset of {','.join(SECTIONS)}")
    args = ap.parse_args(argv)
    sections = set(args.sections.split(","))
    if not sections <= set(SECTIONS):
        ap.error(f"--sections: unknown {sorted(sections - set(SECTIONS))}")
    single_thread()
    budget = args.budget or (2.0 if args.quick else 8.0)
    rep = Report()  # each part printed (flushed) the moment it is measured
    rep.emit(*[
        "## bench_service: windows, locks, the per-request metrics path, load test",
        "",
        env_header(("numpy", "streammetrics", "torch", "torcheval", "river", "scikit-learn",
                    "prometheus-client")).replace(
            "runs that report peak memory or may run out of it go to a fresh subprocess with an "
            "address-space limit, the others run in this process",
            "all in this one process (the load test's service in its own)"),
    ])
    if "window" in sections:
        with rep.section("window"):
            rep.emit(*[
                "",
                "### Windowed AUROC, read after every batch",
                "",
                markdown_table(
                    ["implementation", "W", "batch", "ms per batch+read", "µs per sample", "prefill s",
                     "max |Δ| vs sklearn"],
                    [row for w in (10_000, 1_000_000) for m in (1000, 10)
                     for row in bench_window(w, m, budget, 200 if m == 1000 else 400)],
                    "llrrrrl",
                ),
                "",
                machine_line(),
            ])
    if "lock" in sections:
        with rep.section("lock"):
            n = 20_000 if args.quick else 100_000
            rep.emit(*[
                "",
                "### Lock overhead, one sample per update (Python scalars)",
                "",
                markdown_table(["accumulator", "µs/sample with lock", "µs/sample lock no-op",
                                "lock cost ns/sample", "overhead"], bench_lock(n), "lrrrr"),
                "",
                machine_line(),
                "",
                "Best of 7 interleaved runs each; the lock is an uncontended ``threading.RLock``.",
            ])
    if "delayed" in sections:
        with rep.section("delayed"):
            n, repeat = (4_000, 3) if args.quick else (10_000, 5)
            rep.emit(*[
                "",
                f"### The service's metrics path per request, in process ({n:,} predictions + {n:,} labels)",
                "",
                markdown_table(["loop", "labels folded", "µs per request", "in the metrics calls µs/request",
                                "lock cost ns/request", "metrics / request work"],
                               bench_delayed(n, repeat), "llrrrr"),
                "",
                machine_line(),
                "",
                f"Best of {repeat} interleaved runs; a request is a ``predict`` or a ``label`` call (half",
                "each). 'In the metrics calls' is timed around the calls themselves (less the timer's own",
                "cost), the final ``flush`` that folds the last batch included; 'lock cost' is that time",
                "with the locks minus with no-op locks; 'metrics / request work' divides it by the loop",
                "with the request work alone.",
            ])
    if "load" in sections:
        with rep.section("load"):
            requests, seconds, rounds, side = (3000, 8.0, 1, 1) if args.quick else (10_000, 20.0, 3, 3)
            rows, summary, headers = bench_load(requests, seconds, rounds, side)
            rep.emit(*[
                "",
                f"### Load test: examples/service.py on loopback ({requests} requests per run, 4 client threads)",
                "",
                markdown_table(headers, rows, "llrrrrr"),
                "",
                machine_line(),
                "",
                summary[0].upper() + summary[1:] + ".",
                "",
                "'on' is the service as shipped (labels folded in batches of 256); 'on, batch_size=1'",
                "the same service folding every label as its own update (the design before batching).",
                "The service's CPU time per request is more robust than requests/s on a busy machine:",
                "other processes slow the wall clock of sequential runs unevenly, less the CPU the",
                "service itself spends. The most robust are the '(side by side)' rounds: a metrics-off",
                "and a metrics-on service run at the same time, each driven by its own 4 client threads",
                "with the same requests, so the machine's other load disturbs both alike (their",
                "requests/s share the CPUs and are not throughput figures). The '(alternating slices)'",
                "rounds run both services at once but drive them in turn, 1000 requests at a time:",
                "alternation whose halves are a second apart, not a whole run. The '(timed)' run",
                "(``--time-metrics``) reads the request threads' CPU clocks around the metrics calls",
                "inside the service: the direct cost, without effects on the rest (caches, GC).",
            ])
    rep.emit(*["", f"Load average at the end of this section: {_load()}."])
    return rep.text()


if __name__ == "__main__":
    main()
