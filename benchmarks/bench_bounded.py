"""Bounded-memory ranking benchmark: certified binned AUROC / AP against binned peers.

Run ``python -m benchmarks.bench_bounded [--quick] [--samples N] [--large]`` (or
``python benchmarks/bench_bounded.py``). In-process, seeded, torch on one thread.

For each score distribution (10M samples by default, 30 % positives, batches of 100k):

* ``calibrated``: sigmoid(N(0, 1) + 1.5·y) probabilities; ``logits``: the raw N(0, 1) + 1.5·y;
  ``crowded``: probabilities 1 − 10^(−3 − U − y/2), all in [0.999, 1); ``peaked``: a perfect
  classifier with negatives in [0.998, 0.999) and positives in [0.999, 1]; ``ties``: the
  calibrated probabilities rounded to 2 decimals.

Implementations fed the same batches: streammetrics ``AUROC``/``AveragePrecision`` sharing one
state (``MetricSet``) at ``max_bytes`` = 128 KiB and 1 MiB (the declared transform:
``scores="probability"`` for probabilities, raw for logits), the exact streammetrics accumulator
(its value is the reference; it equals scikit-learn to 1e-12, see tests/ranking/test_ranking.py),
torchmetrics ``BinaryAUROC``/``BinaryAveragePrecision(thresholds=200, validate_args=False)``, torcheval
``BinaryBinnedAUROC(threshold=200)`` (on the first 1M samples only: it keeps every input until
``compute``, which ran out of 24 GB at 10M), Keras-style uniform bins in numpy (200 thresholds on
[0, 1], bincount + trapezoid, what ``tf.keras.metrics.AUC`` computes), and river ``ROCAUC``
(default 10 thresholds, per-sample, on the first 100k samples only -- labelled -- since it runs at
~100k samples/s). Logits are passed through a sigmoid for the peers that need [0, 1].

Columns: time (bounded streammetrics: best of ``REPEAT`` = 3 runs), samples/s, state bytes, |AUROC − exact|, certified AUROC half-width (only
streammetrics certifies), |AP − exact|, certified AP interval width, and the rate ratio to
streammetrics at 128 KiB. Then, each in a subprocess: one stream of 1e5 … 1e8 samples (default
run; up to ``--samples`` with ``--quick``/``--samples`` unless ``--large``) into 128 KiB and
1 MiB accumulators -- state bytes (checked after every batch), certified half-width and process
RSS at each size -- and 1000 classes × ``--rows`` rows (default 1M; 10k with ``--quick``) at
64 MiB: update time and rate, state size, macro-AUROC with its certified half-width, peak RSS.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time
import warnings
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

if __package__ in (None, ""):  # ``python benchmarks/bench_bounded.py``
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import streammetrics as sm  # noqa: E402
from benchmarks._harness import (  # noqa: E402
    Report,
    env_header,
    fmt_rate,
    fmt_ratio,
    markdown_table,
    run_limited,
    single_thread,
)

BATCH = 100_000
#: Runs of each bounded streammetrics configuration; the best time is reported.
REPEAT = 3
#: torcheval's binned metrics keep every input until compute: run them on a prefix only.
TORCHEVAL_MAX = 1_000_000
DISTRIBUTIONS = ("calibrated", "logits", "crowded", "peaked", "ties")


def batches(dist: str, n: int, seed: int = 0) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """Seeded batches of (labels int8, scores float64) of one distribution, built on the fly."""
    rng = np.random.default_rng(seed)
    for start in range(0, n, BATCH):
        m = min(BATCH, n - start)
        y = (rng.random(m) < 0.3).astype(np.int8)
        if dist in ("calibrated", "logits", "ties"):
            z = rng.normal(size=m) + 1.5 * y
            s = z if dist == "logits" else 1.0 / (1.0 + np.exp(-z))
            if dist == "ties":
                s = np.round(s, 2)
        elif dist == "crowded":
            s = 1.0 - 10.0 ** (-3.0 - rng.random(m) - 0.5 * y)
        else:
            s = np.where(y == 1, 0.999 + 0.001 * rng.random(m), 0.998 + 0.001 * rng.random(m))
        yield y, s


def _prob(dist: str, s: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-s)) if dist == "logits" else s


def run_streammetrics(
    dist: str, data: list[tuple[np.ndarray, np.ndarray]], max_bytes: int | None, repeat: int = 1
) -> dict[str, Any]:
    """Stream ``data`` into AUROC + AP sharing one state, read both; ``repeat`` fresh runs, the
    best time is reported (the machine is shared: a run is ~0.2 s, so one load spike would
    dominate a single one; the results of every run are identical)."""
    scores = "raw" if dist == "logits" else "probability"
    kw: dict[str, Any] = {} if max_bytes is None else {"max_bytes": max_bytes, "scores": scores}
    best = math.inf
    out: dict[str, Any] = {}
    for _ in range(repeat):
        ms = sm.MetricSet(auroc=sm.AUROC(**kw), ap=sm.AveragePrecision(**kw))
        t = time.perf_counter()
        for y, s in data:
            ms.update(y, s)
        au: Any = ms["auroc"]
        ap: Any = ms["ap"]
        out = {"auroc": au.compute(), "ap": ap.compute(), "bytes": ms.nbytes}
        best = min(best, time.perf_counter() - t)
        out["au_bounds"], out["ap_bounds"] = au.bounds(), ap.bounds()
    out["time"] = best
    return out


def run_torchmetrics(dist: str, data: list[tuple[np.ndarray, np.ndarray]]) -> dict[str, Any]:
    import torch
    from torchmetrics.classification import BinaryAUROC, BinaryAveragePrecision

    # as users run it for speed: no per-update argument checks
    au = BinaryAUROC(thresholds=200, validate_args=False)
    ap = BinaryAveragePrecision(thresholds=200, validate_args=False)
    t = time.perf_counter()
    for y, s in data:
        ps, yt = torch.from_numpy(_prob(dist, s)), torch.from_numpy(y.astype(np.int64))
        au.update(ps, yt)
        ap.update(ps, yt)
    out = {"auroc": float(au.compute()), "ap": float(ap.compute())}
    out["time"] = time.perf_counter() - t
    out["bytes"] = sum(int(v.numel() * v.element_size()) for v in (au.confmat, ap.confmat))
    return out


def run_torcheval(dist: str, data: list[tuple[np.ndarray, np.ndarray]]) -> dict[str, Any]:
    import torch
    from torcheval.metrics import BinaryBinnedAUPRC, BinaryBinnedAUROC

    au, ap = BinaryBinnedAUROC(threshold=200), BinaryBinnedAUPRC(threshold=200)
    n = sum(y.shape[0] for y, _ in data)
    n_sub = min(n, TORCHEVAL_MAX)  # it keeps every input until compute (~16 GB at 1e7 here)
    t = time.perf_counter()
    for y, s in data[: n_sub // BATCH]:
        ps, yt = torch.from_numpy(_prob(dist, s)), torch.from_numpy(y.astype(np.int64))
        au.update(ps, yt)
        ap.update(ps, yt)
    a = au.compute()
    out: dict[str, Any] = {"auroc": float(a[0] if isinstance(a, tuple) else a)}
    p = ap.compute()
    out["ap"] = float(p[0] if isinstance(p, tuple) else p)
    out["time"] = time.perf_counter() - t
    out["bytes"] = None
    if n_sub < n:
        out["n"] = n_sub
        exact = sm.AUROC()
        for y, s in data[: n_sub // BATCH]:
            exact.update(y, s)
        out["exact_auroc"] = exact.compute()
    return out


def run_keras_numpy(dist: str, data: list[tuple[np.ndarray, np.ndarray]]) -> dict[str, Any]:
    """Keras ``AUC(num_thresholds=200)``: uniform thresholds on [0, 1], bucket counts, trapezoid
    (Keras' default summation_method="interpolation" for ROC), and its PR curve with the
    step-free "careful interpolation" replaced by the step AP over the same points."""
    thr = np.linspace(0.0, 1.0, 200)
    tp = np.zeros(201)
    fp = np.zeros(201)
    t = time.perf_counter()
    for y, s in data:
        idx = np.searchsorted(thr, _prob(dist, s), "right")
        tp += np.bincount(idx[y == 1], minlength=201)
        fp += np.bincount(idx[y == 0], minlength=201)
    tps, fps = np.cumsum(tp[::-1]), np.cumsum(fp[::-1])  # counts at score >= thr, decreasing
    P, N = tps[-1], fps[-1]
    tpr, fpr = np.concatenate([[0.0], tps / P]), np.concatenate([[0.0], fps / N])
    auroc = float(np.trapezoid(tpr, fpr))
    prec = np.divide(tps, tps + fps, out=np.ones_like(tps), where=(tps + fps) > 0)
    rec = tps / P
    ap = float(np.sum(np.diff(np.concatenate([[0.0], rec])) * prec))
    return {"auroc": auroc, "ap": ap, "time": time.perf_counter() - t, "bytes": int(tp.nbytes + fp.nbytes)}


def run_river(dist: str, data: list[tuple[np.ndarray, np.ndarray]]) -> dict[str, Any]:
    from river.metrics import ROCAUC

    m = ROCAUC()
    n_sub = min(sum(y.shape[0] for y, _ in data), 100_000)
    t = time.perf_counter()
    for y, s in data[: n_sub // BATCH]:
        for yi, pi in zip(y.tolist(), _prob(dist, s).tolist(), strict=True):
            m.update(bool(yi), {True: pi, False: 1.0 - pi})
    out = {"auroc": float(m.get()), "ap": None, "time": time.perf_counter() - t, "bytes": None, "n": n_sub}
    exact = sm.AUROC()
    for y, s in data[: n_sub // BATCH]:
        exact.update(y, s)
    out["exact_auroc"] = exact.compute()
    return out


def _guard(fn: Callable[[], dict[str, Any]]) -> dict[str, Any]:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return fn()
    except Exception as exc:  # a peer that fails is reported, not fatal
        return {"error": f"{type(exc).__name__}: {exc}"}


def _e(x: float | None) -> str:
    return "-" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.1e}"


def distribution_table(dist: str, n: int, peers: bool) -> tuple[str, dict[str, Any]]:
    data = list(batches(dist, n))  # built before any timed region
    res: dict[str, dict[str, Any]] = {}
    res["streammetrics, max_bytes=128 KiB"] = run_streammetrics(dist, data, 128 * 1024, REPEAT)
    res["streammetrics, max_bytes=1 MiB"] = run_streammetrics(dist, data, 1 << 20, REPEAT)
    res["streammetrics exact accumulator"] = run_streammetrics(dist, data, None)
    if peers:
        res["torchmetrics thresholds=200"] = _guard(lambda: run_torchmetrics(dist, data))
        res["torcheval binned (200; first 1M only)"] = _guard(lambda: run_torcheval(dist, data))
        res["Keras-style uniform 200 (numpy)"] = _guard(lambda: run_keras_numpy(dist, data))
        res["river ROCAUC (first 100k only)"] = _guard(lambda: run_river(dist, data))
    ex = res["streammetrics exact accumulator"]
    ref_rate = n / res["streammetrics, max_bytes=128 KiB"]["time"]
    rows = []
    for name, r in res.items():
        if "error" in r:
            rows.append([name, r["error"], "", "", "", "", "", "", ""])
            continue
        nn = r.get("n", n)
        exact_au = r.get("exact_auroc", ex["auroc"])
        au_err = abs(r["auroc"] - exact_au)
        ap_err = None if r["ap"] is None or "n" in r else abs(r["ap"] - ex["ap"])
        hw = apw = None
        if "au_bounds" in r:
            lo, hi = r["au_bounds"]
            hw = (hi - lo) / 2
            lo2, hi2 = r["ap_bounds"]
            apw = hi2 - lo2
            assert lo - 1e-12 <= ex["auroc"] <= hi + 1e-12, (dist, name, "AUROC certificate violated")
            assert lo2 - 1e-12 <= ex["ap"] <= hi2 + 1e-12, (dist, name, "AP certificate violated")
        rate = nn / r["time"]
        rows.append(
            [
                name,
                f"{r['time']:.2f} s",
                fmt_rate(rate),
                "-" if r["bytes"] is None else f"{r['bytes'] / 1024:.0f} KiB",
                _e(au_err),
                "not certified" if hw is None else _e(hw),
                "-" if ap_err is None else _e(ap_err),
                "not certified" if apw is None else _e(apw),
                fmt_ratio(rate / ref_rate),
            ]
        )
    headers = [
        "implementation",
        "time",
        "rate",
        "state",
        "|AUROC err|",
        "AUROC half-width",
        "|AP err|",
        "AP width",
        "rate vs 128 KiB",
    ]
    text = f"\n### {dist} ({n:,} samples, batch {BATCH:,})\n\n" + markdown_table(headers, rows, "lrrrrrrrr")
    return text, res


def _rss_mb(field: str = "VmRSS") -> float:
    """Resident set size now (``VmRSS``) or its peak (``VmHWM``) of this process, from Linux
    /proc (0 elsewhere). Unlike ``ru_maxrss``, VmHWM starts afresh in an exec'ed subprocess
    (``ru_maxrss`` keeps the parent's size at fork)."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1]) / 1024
    except (OSError, ValueError, IndexError):
        pass
    return 0.0


def memory_run(sizes: list[int]) -> dict[str, Any]:
    """One stream of calibrated probabilities (batches built on the fly, never kept) into
    AUROC at 128 KiB and 1 MiB; the state size is checked after every batch; at each of
    ``sizes`` the state bytes, the process RSS and the certified half-width are recorded."""
    budgets = (128 * 1024, 1 << 20)
    ms = [sm.AUROC(max_bytes=b, scores="probability") for b in budgets]
    rows: list[list[Any]] = []
    done = 0
    todo = sorted(sizes)
    t_update = 0.0
    worst = [0, 0]
    for y, s in batches("calibrated", max(sizes), seed=1):
        t = time.perf_counter()
        for m in ms:
            m.update(y, s)
        t_update += time.perf_counter() - t
        done += y.shape[0]
        for i, (m, b) in enumerate(zip(ms, budgets, strict=True)):
            assert m.nbytes <= b, (m.nbytes, b)
            worst[i] = max(worst[i], m.nbytes)
        while todo and done >= todo[0]:
            row: list[Any] = [todo.pop(0)]
            for m in ms:
                lo, hi = m.bounds()
                row += [m.nbytes, (hi - lo) / 2]
            row.append(_rss_mb())
            rows.append(row)
    return {"rows": rows, "worst": worst, "rate": 2 * done / t_update, "hwm": _rss_mb("VmHWM")}


def _run(fn: Callable[..., dict[str, Any]], inline: bool, **kwargs: Any) -> dict[str, Any]:
    """``fn(**kwargs)`` in a fresh subprocess (its own RSS), or here with ``inline``."""
    if inline:
        return {**fn(**kwargs), "status": "ok"}
    return run_limited(f"benchmarks.bench_bounded:{fn.__name__}", kwargs, mem_limit_mb=0, timeout=3600)


def memory_table(sizes: list[int], inline: bool = False) -> str:
    r = _run(memory_run, inline, sizes=sizes)
    title = "\n### Memory over the stream: calibrated probabilities, batch 100k (subprocess)\n\n"
    if r.get("status") != "ok":
        return title + f"{r.get('status')}\n"
    body = [
        [f"{n:,}", f"{b1:,} B", _e(h1), f"{b2:,} B", _e(h2), f"{rss:.0f} MB"]
        for n, b1, h1, b2, h2, rss in r["rows"]
    ]
    return title + markdown_table(
        ["samples", "state, 128 KiB", "AUROC half-width", "state, 1 MiB", "AUROC half-width", "process RSS"],
        body,
        "rrrrrr",
    ) + (
        f"\n\nLargest state after any batch: {r['worst'][0]:,} B (budget {128 * 1024:,}) and "
        f"{r['worst'][1]:,} B (budget {1 << 20:,}); peak RSS {r['hwm']:.0f} MB; "
        f"{fmt_rate(r['rate'])} per accumulator (excluding data generation).\n"
    )


def many_classes_run(rows: int, classes: int = 1000, max_bytes: int = 64 << 20, batch: int = 10_000) -> dict[str, Any]:
    """``classes``-class probabilities (softmax-free: sigmoid of N(0, 1) + 2 on the true class,
    float32) in batches of ``batch`` rows into ``AUROC(classes, max_bytes=...)``; the state size
    is checked after every batch. Run in a subprocess (``run_limited``) for its peak RSS."""
    rng = np.random.default_rng(2)
    m = sm.AUROC(classes, max_bytes=max_bytes, scores="probability", average=None)
    t_update = 0.0
    t0 = time.perf_counter()
    peak = 0
    rss0 = _rss_mb("VmHWM")
    for start in range(0, rows, batch):
        k = min(batch, rows - start)
        y = rng.integers(0, classes, k)
        z = rng.normal(size=(k, classes)).astype(np.float32)
        z[np.arange(k), y] += 2.0
        p = 1.0 / (1.0 + np.exp(-z))
        del z
        t = time.perf_counter()
        m.update(y, p)
        t_update += time.perf_counter() - t
        peak = max(peak, m.nbytes)
        assert m.nbytes <= max_bytes, (m.nbytes, max_bytes)
    total = time.perf_counter() - t0
    t = time.perf_counter()
    lo, hi = m.bounds()
    est = m.compute()
    t_read = time.perf_counter() - t
    hw = (np.asarray(hi) - np.asarray(lo)) / 2
    st: Any = m._state
    return {
        "rows": rows,
        "classes": classes,
        "time_total": total,
        "time_update": t_update,
        "time_read": t_read,
        "peak_state": peak,
        "final_state": m.nbytes,
        "macro_auroc": float(np.mean(est)),
        "macro_half_width": float(np.mean(hw)),
        "max_class_half_width": float(np.max(hw)),
        "shifts": sorted({int(s) for s in st._shift}),
        "rss_before_mb": rss0,
        "hwm": _rss_mb("VmHWM"),
    }


def many_classes_table(rows: int, classes: int = 1000, inline: bool = False) -> str:
    r = _run(many_classes_run, inline, rows=rows, classes=classes)
    title = f"\n### {classes} classes × {rows:,} rows, max_bytes=64 MiB (subprocess)\n\n"
    if r.get("status") != "ok":
        return title + f"{r.get('status')}\n"
    n = rows * classes
    return title + markdown_table(
        [
            "time (update only)",
            "scores/s (update only)",
            "time incl. data generation",
            "state bytes (peak / final)",
            "macro-AUROC",
            "macro half-width",
            "max per-class half-width",
            "peak RSS",
        ],
        [
            [
                f"{r['time_update']:.1f} s",
                fmt_rate(n / r["time_update"]),
                f"{r['time_total']:.1f} s",
                f"{r['peak_state'] / 2**20:.1f} / {r['final_state'] / 2**20:.1f} MiB",
                f"{r['macro_auroc']:.6f}",
                _e(r["macro_half_width"]),
                _e(r["max_class_half_width"]),
                f"{r['hwm']:.0f} MB",
            ]
        ],
        "rrrrrrrr",
    ) + (
        "\n\nPeak RSS includes the Python process (~"
        f"{r['rss_before_mb']:.0f} MB before the first batch) and the generation of one 10k-row "
        f"batch (float32 arrays of {batch_mb(rows, classes):.0f} MB: the normals, their sigmoid "
        "and its temporaries).\n"
    )


def batch_mb(rows: int, classes: int, batch: int = 10_000) -> float:
    return min(rows, batch) * classes * 4 / 2**20


def main(argv: list[str] | None = None) -> str:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="200k samples, 10k-row many-class run")
    ap.add_argument("--samples", type=int, default=None)
    ap.add_argument("--rows", type=int, default=None, help="rows of the 1000-class run")
    ap.add_argument("--large", action="store_true",
                    help="memory table up to 1e8 samples also with --quick / --samples")
    ap.add_argument("--no-peers", action="store_true")
    ap.add_argument("--inline", action="store_true", help="no subprocesses (RSS figures then include the rest)")
    ap.add_argument("--dists", default=",".join(DISTRIBUTIONS))
    args = ap.parse_args(argv)
    single_thread()
    if not args.no_peers:  # importing torch takes seconds: only for the peers that need it
        try:
            import torch

            torch.set_num_threads(1)
        except ImportError:
            pass
    n = args.samples or (200_000 if args.quick else 10_000_000)
    rows = args.rows or (10_000 if args.quick else 1_000_000)
    rep = Report()  # each table printed the moment it is measured; a failing one says so
    rep.emit(
        "## Bounded-memory ranking metrics (bench_bounded)",
        "",
        env_header(),
        "- the distribution tables run every implementation in-process, on batches built before the timed "
        "region; the memory stream and the many-class run each go to a subprocess (their RSS is their own)",
    )
    for dist in args.dists.split(","):
        with rep.section(f"{dist} distribution"):
            rep.emit(distribution_table(dist, n, not args.no_peers)[0])
    full = not (args.quick or args.samples)  # the default run goes to 1e8 samples
    sizes = [10**k for k in range(5, 9) if args.large or full or 10**k <= max(n, 10**5)]
    with rep.section("memory"):
        rep.emit(memory_table(sizes, args.inline))
    with rep.section("many classes"):
        rep.emit(many_classes_table(rows, inline=args.inline))
    rep.emit("")
    return rep.text()


if __name__ == "__main__":
    main()
