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
(its value is the reference; it equals scikit-learn to 1e-12, see tests/test_ranking.py),
torchmetrics ``BinaryAUROC``/``BinaryAveragePrecision(thresholds=200)``, torcheval
``BinaryBinnedAUROC(threshold=200)`` (on the first 1M samples only: it keeps every input until
``compute``, which ran out of 24 GB at 10M), Keras-style uniform bins in numpy (200 thresholds on
[0, 1], bincount + trapezoid, what ``tf.keras.metrics.AUC`` computes), and river ``ROCAUC``
(default 10 thresholds, per-sample, on the first 100k samples only -- labelled -- since it runs at
~100k samples/s). Logits are passed through a sigmoid for the peers that need [0, 1].

Columns: time, samples/s, state bytes, |AUROC − exact|, certified AUROC half-width (only
streammetrics certifies), |AP − exact|, certified AP interval width, and the rate ratio to
streammetrics at 128 KiB. Then the state size of the 128 KiB accumulator after 1e5 … 1e7 (1e8
with ``--large``) samples, and 1000 classes × ``--rows`` rows (default 100k) at 64 MiB
(macro-AUROC certified half-width, rate in scores/s).
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
from benchmarks._harness import env_header, fmt_rate, fmt_ratio, markdown_table, single_thread  # noqa: E402

BATCH = 100_000
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
    dist: str, data: list[tuple[np.ndarray, np.ndarray]], max_bytes: int | None
) -> dict[str, Any]:
    scores = "raw" if dist == "logits" else "probability"
    kw: dict[str, Any] = {} if max_bytes is None else {"max_bytes": max_bytes, "scores": scores}
    ms = sm.MetricSet(auroc=sm.AUROC(**kw), ap=sm.AveragePrecision(**kw))
    t = time.perf_counter()
    for y, s in data:
        ms.update(y, s)
    au: Any = ms["auroc"]
    ap: Any = ms["ap"]
    out: dict[str, Any] = {"auroc": au.compute(), "ap": ap.compute(), "bytes": ms.nbytes}
    out["time"] = time.perf_counter() - t
    out["au_bounds"], out["ap_bounds"] = au.bounds(), ap.bounds()
    return out


def run_torchmetrics(dist: str, data: list[tuple[np.ndarray, np.ndarray]]) -> dict[str, Any]:
    import torch
    from torchmetrics.classification import BinaryAUROC, BinaryAveragePrecision

    au, ap = BinaryAUROC(thresholds=200), BinaryAveragePrecision(thresholds=200)
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
    res["streammetrics, max_bytes=128 KiB"] = run_streammetrics(dist, data, 128 * 1024)
    res["streammetrics, max_bytes=1 MiB"] = run_streammetrics(dist, data, 1 << 20)
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


def memory_table(sizes: list[int]) -> str:
    rows = []
    m = sm.AUROC(max_bytes=128 * 1024, scores="probability")
    done = 0
    todo = sorted(sizes)
    for y, s in batches("calibrated", max(sizes), seed=1):
        m.update(y, s)
        done += y.shape[0]
        assert m.nbytes <= 128 * 1024
        while todo and done >= todo[0]:
            lo, hi = m.bounds()
            rows.append([f"{todo.pop(0):,}", f"{m.nbytes:,} B", _e((hi - lo) / 2)])
    return "\n### State size, max_bytes=128 KiB (calibrated)\n\n" + markdown_table(
        ["samples", "state bytes", "AUROC half-width"], rows, "rrr"
    )


def many_classes_table(rows: int, classes: int = 1000) -> str:
    rng = np.random.default_rng(2)
    m = sm.AUROC(classes, max_bytes=64 << 20, scores="probability")
    batch = 10_000
    t = time.perf_counter()
    peak = 0
    for start in range(0, rows, batch):
        k = min(batch, rows - start)
        y = rng.integers(0, classes, k)
        z = rng.normal(size=(k, classes)).astype(np.float32)
        z[np.arange(k), y] += 2.0
        p = 1.0 / (1.0 + np.exp(-z))
        m.update(y, p)
        peak = max(peak, m.nbytes)
    dt = time.perf_counter() - t
    lo, hi = m.bounds()
    return f"\n### {classes} classes × {rows:,} rows, max_bytes=64 MiB\n\n" + markdown_table(
        ["time (incl. data generation)", "scores/s", "state bytes (peak)", "macro-AUROC", "half-width"],
        [
            [
                f"{dt:.1f} s",
                fmt_rate(rows * classes / dt),
                f"{peak / 2**20:.1f} MiB",
                f"{m.compute():.6f}",
                _e((hi - lo) / 2),
            ]
        ],
        "rrrrr",
    )


def main(argv: list[str] | None = None) -> str:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="200k samples, 10k-row many-class run")
    ap.add_argument("--samples", type=int, default=None)
    ap.add_argument("--rows", type=int, default=None, help="rows of the 1000-class run")
    ap.add_argument("--large", action="store_true", help="memory table up to 1e8 samples")
    ap.add_argument("--no-peers", action="store_true")
    ap.add_argument("--dists", default=",".join(DISTRIBUTIONS))
    args = ap.parse_args(argv)
    single_thread()
    try:
        import torch

        torch.set_num_threads(1)
    except ImportError:
        pass
    n = args.samples or (200_000 if args.quick else 10_000_000)
    rows = args.rows or (10_000 if args.quick else 100_000)
    out = [
        "## Bounded-memory ranking metrics (bench_bounded)",
        "",
        env_header(),
        "- this module runs every implementation in-process, on batches built before the timed region",
    ]
    for dist in args.dists.split(","):
        text, _ = distribution_table(dist, n, not args.no_peers)
        print(text, flush=True, file=sys.stderr)  # progress: each table as soon as it is done
        out.append(text)
    sizes = [10**k for k in range(5, 9 if args.large else 8) if 10**k <= max(n, 10**5)]
    out.append(memory_table(sizes))
    out.append(many_classes_table(rows))
    text = "\n".join(out) + "\n"
    print(text)
    return text


if __name__ == "__main__":
    main()
