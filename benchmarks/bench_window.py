"""Windowed AUROC with small batches, read after every batch: ``python -m benchmarks.bench_window``.

A window of W samples (W = 10k and 1M) is filled, then batches of m samples (m = 10, 100, 1000)
arrive and the AUROC of the window is read after each one. Implementations, run **in
alternation on the same batches** (so machine load hits them alike; the ratios are the robust
numbers):

* ``streammetrics`` -- ``Window(AUROC(), size=W)``: exact; the expired rows are removed as
  stored (``SortedScores.slide_rows``: no second validation): signed searches against the
  stored runs, tombstones purged once they reach max(1024, W/32) -- amortised O(m log W) per
  batch, O(1) read -- or, for W <= 65536 fed batches of at most 20 rows, the per-sample list
  mode (a C bisect and a list insertion / deletion per new or expired row);
* ``streammetrics bounded`` -- ``Window(AUROC(max_bytes=65536), size=W)``: bins under a 64 KiB
  budget, value with a certified interval (``bounds()``); the window's rows are kept as well;
* ``river`` -- ``metrics.RollingROCAUC(window_size=W)``, one ``update`` per sample (its C++
  core), ``get()`` per read (O(W));
* ``torcheval`` -- ``WindowedBinaryAUROC(max_num_samples=W)``, re-sorting the window on every
  ``compute()``.

Reported: median ms per (batch update + read), its ratio to streammetrics, and the largest
|difference| from scikit-learn on exactly the window's samples at the checked reads (for the
bounded variant: whether scikit-learn's value was inside ``bounds()`` every time). Scores are
rounded to 3 decimals (ties). Timings never go into tests.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from benchmarks._harness import Report, env_header, single_thread, windowed_auroc_peer

Impl = tuple[Callable[[np.ndarray, np.ndarray], None], Callable[[], Any]]
NAMES = ("streammetrics", "streammetrics bounded", "river", "torcheval")


def _data(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    s = np.round(rng.normal(size=n) + 0.7 * y, 3)  # ties
    return y, s


def _impl(name: str, window: int) -> Impl:
    """(update(y, s), read()) for one implementation."""
    if name.startswith("streammetrics"):
        import streammetrics as sm

        metric = sm.AUROC(max_bytes=65536) if name.endswith("bounded") else sm.AUROC()
        w = sm.Window(metric, size=window)

        def update(y: np.ndarray, s: np.ndarray) -> None:
            w.update(y, s)

        return update, (w.bounds if name.endswith("bounded") else w.compute)
    return windowed_auroc_peer(name, window)


def bench(window: int, batch: int, budget: float, max_batches: int) -> list[list[str]]:
    """One (W, m) cell: every implementation on the same batches, in alternation."""
    from sklearn.metrics import roc_auc_score

    y_all, s_all = _data(window + batch * max_batches, seed=window + batch)
    impls: dict[str, Impl] = {}
    notes: dict[str, str] = {}
    for name in NAMES:
        try:
            impls[name] = _impl(name, window)
        except ImportError as exc:
            notes[name] = f"not installed ({str(exc)[:30]})"
    for update, read in impls.values():  # prefill (not timed)
        update(y_all[:window], s_all[:window])
        read()
    times: dict[str, list[float]] = {n: [] for n in impls}
    spent = dict.fromkeys(impls, 0.0)
    worst = dict.fromkeys(impls, 0.0)
    inside = dict.fromkeys(impls, True)
    end = window
    for b in range(max_batches):
        active = [n for n in impls if spent[n] < budget or len(times[n]) < 3]
        if not active:
            break
        y, s = y_all[end:end + batch], s_all[end:end + batch]
        end += batch
        check = b < 2 or b % 10 == 0
        ref = roc_auc_score(y_all[end - window:end], s_all[end - window:end]) if check else None
        for name in active:
            update, read = impls[name]
            t0 = time.perf_counter()
            update(y, s)
            value = read()
            dt = time.perf_counter() - t0
            times[name].append(dt)
            spent[name] += dt
            if ref is not None:
                if isinstance(value, tuple):
                    inside[name] &= value[0] - 1e-12 <= ref <= value[1] + 1e-12
                    value = 0.5 * (value[0] + value[1])
                worst[name] = max(worst[name], abs(float(value) - ref))
    base = float(np.median(times["streammetrics"])) if "streammetrics" in times else None
    rows = []
    for name in NAMES:
        if name not in impls:
            rows.append([name, f"{window:,}", str(batch), notes[name], "", "", ""])
            continue
        med = float(np.median(times[name]))
        ratio = "" if base is None else f"{med / base:.2f}x"
        acc = f"{worst[name]:.1e}" + (("; sklearn inside bounds()" if inside[name] else "; OUTSIDE bounds")
                                        if name.endswith("bounded") else "")
        rows.append([name, f"{window:,}", str(batch), f"{med * 1e3:.3f}", ratio,
                     f"{med / batch * 1e6:.2f}", f"{acc} ({len(times[name])} batches)"])
    return rows


def main(argv: list[str] | None = None) -> str:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.bench_window",
                                 description=(__doc__ or "").split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="smaller budgets")
    ap.add_argument("--budget", type=float, default=None, help="seconds per implementation and cell")
    args = ap.parse_args(argv)
    single_thread()
    budget = args.budget or (1.0 if args.quick else 4.0)
    rep = Report()  # each cell's rows printed the moment they are measured
    rep.emit("## bench_window: windowed AUROC, small batches, read after every batch", "",
             env_header(("numpy", "streammetrics", "torch", "torcheval", "river", "scikit-learn")), "")
    add = rep.rows(["implementation", "W", "batch", "ms per batch+read", "vs streammetrics",
                    "µs per sample", "max |Δ| vs sklearn"], "llrrrrl")
    for w in (10_000, 1_000_000):
        for m in (10, 100, 1000):
            def failed(what: str, w: int = w, m: int = m) -> None:
                add(["failed: " + what, w, m, "", "", "", ""])

            with rep.section(f"W={w}, batch {m}", on_error=failed):
                for row in bench(w, m, budget, 300 if w == 10_000 else 60):
                    add(row)
    rep.emit("", "Implementations alternate on the same batches; median over the timed batches. The",
             "bounded variant reads `bounds()` and the |Δ| column is its midpoint's distance.")
    return rep.text()


if __name__ == "__main__":
    main()
