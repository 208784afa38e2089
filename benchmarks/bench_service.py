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
3. **Load test.** ``examples/load_test.py``: the example HTTP service in another process on
   loopback, client threads sending predictions and delayed labels, requests/s with metrics off
   vs on (best of the rounds; target: metrics cost < 10%).

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
    from benchmarks._harness import env_header, markdown_table, measure_interleaved, single_thread
else:
    from ._harness import env_header, markdown_table, measure_interleaved, single_thread

ROOT = Path(__file__).resolve().parent.parent


# -- 1. windowed AUROC ---------------------------------------------------------------------------
def _data(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    s = np.round(rng.normal(size=n) + 0.7 * y, 3)  # ties
    return y, s


def _impl(name: str, window: int) -> tuple[Callable[[np.ndarray, np.ndarray], None], Callable[[], float]]:
    """(update(y, s), read()) for one implementation."""
    if name.startswith("streammetrics"):
        import streammetrics as sm

        w = sm.Window(sm.AUROC(), size=window)
        if name.endswith("(rebuild)"):
            w._state._can_subtract = False  # the generic fallback, for comparison only

        def update(y: np.ndarray, s: np.ndarray) -> None:
            w.update(y, s)

        return update, w.compute
    if name == "river":
        from river import metrics

        r = metrics.RollingROCAUC(window_size=window)

        def update_r(y: np.ndarray, s: np.ndarray) -> None:
            for yi, si in zip(y.tolist(), s.tolist(), strict=True):
                r.update(bool(yi), si)

        return update_r, r.get
    if name == "torcheval":
        import torch
        from torcheval.metrics import WindowedBinaryAUROC

        t = WindowedBinaryAUROC(max_num_samples=window)

        def update_t(y: np.ndarray, s: np.ndarray) -> None:
            t.update(torch.from_numpy(s), torch.from_numpy(y))

        return update_t, lambda: float(t.compute())
    raise ValueError(name)


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


# -- 3. load test --------------------------------------------------------------------------------
def bench_load(requests: int, seconds: float, rounds: int) -> tuple[list[list[str]], str]:
    sys.path.insert(0, str(ROOT / "examples"))
    import load_test  # type: ignore[import-not-found]

    rows = []
    raw = []
    for r in range(rounds):
        for metrics in (False, True):
            stats, _, _ = load_test.run_once(metrics, requests, seconds, 4, r, None)
            raw.append((r, "on" if metrics else "off", stats))
            cpu = stats.get("cpu_us_per_request")
            rows.append([str(r), "on" if metrics else "off", f"{stats['requests']:.0f}",
                         f"{stats['seconds']:.2f}", f"{stats['rps']:.0f}",
                         "n/a" if cpu is None else f"{cpu:.0f}"])
    return rows, load_test.summary(raw)


def main(argv: list[str] | None = None) -> str:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.bench_service", description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="smaller budgets")
    ap.add_argument("--budget", type=float, default=None, help="seconds per windowed implementation")
    args = ap.parse_args(argv)
    single_thread()
    budget = args.budget or (2.0 if args.quick else 8.0)
    out = [
        "## bench_service: windows, locks, load test",
        "",
        env_header(("numpy", "streammetrics", "torch", "torcheval", "river", "scikit-learn",
                    "prometheus-client")).replace(
            "in its own subprocess with an address-space limit",
            "all in this one process (the load test's service in its own)"),
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
        "### Lock overhead, one sample per update (Python scalars)",
        "",
    ]
    n = 20_000 if args.quick else 100_000
    out.append(markdown_table(["accumulator", "µs/sample with lock", "µs/sample lock no-op",
                               "lock cost ns/sample", "overhead"], bench_lock(n), "lrrrr"))
    out.append("\nBest of 7 interleaved runs each; the lock is an uncontended ``threading.RLock``.")
    requests, seconds = (3000, 8.0) if args.quick else (15_000, 20.0)
    rows, summary = bench_load(requests, seconds, 3 if not args.quick else 2)
    out += [
        "",
        f"### Load test: examples/service.py on loopback ({requests} requests, 4 client threads)",
        "",
        markdown_table(["round", "metrics", "requests", "seconds", "requests/s", "service CPU µs/request"],
                       rows, "llrrrr"),
        "",
        summary[0].upper() + summary[1:] + ".",
        "The service's CPU time per request is the robust measure on a busy machine: other",
        "processes slow the wall clock (requests/s) of both runs unevenly, not the CPU the service",
        "itself spends.",
    ]
    text = "\n".join(out)
    print(text)
    return text


if __name__ == "__main__":
    main()
