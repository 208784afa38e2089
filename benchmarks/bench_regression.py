"""Regression errors (issue #30): MSE + MAE + R² through one ``MetricSet`` (one shared moments
state) over 1e7 float64 rows in batches of 100k, against the bare numpy running sums over the
same batches (``r = y - p; sse += r @ r; sae += |r|.sum(); sy += y.sum(); syy += y @ y`` -- the
fastest streaming form, with the textbook R² that loses digits for a large mean), torchmetrics
(``MetricCollection`` of its ``MeanSquaredError``, ``MeanAbsoluteError``, ``R2Score`` on CPU
tensors made outside the timed region) and river (``MAE``, ``MSE``, ``R2``, one sample per call,
on a prefix of ``--river-rows`` rows; its rate is per row). streammetrics runs twice: as
installed (with the ``fast`` extra, numba, batches of one output take one compiled pass) and
with the numpy passes a core install runs (the compiled pass switched off).

Every implementation runs in this process, single-threaded, alternating run by run with the
numpy reference (BLAS limited to one thread: ``_harness.single_thread``); the table gives the median wall time, the CPU time
of the same runs, the rate and the ratio of numpy's time to each (>= 1: faster than numpy). The
values are checked against streammetrics (a difference above 1e-9, relative, prints a warning;
torch computes in float64 here). ``python -m benchmarks.bench_regression --rows 1e6`` takes
seconds.
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from benchmarks import _harness as h

SEED = 20261205


def data(rows: int, batch: int) -> list[tuple[np.ndarray, np.ndarray]]:
    rng = np.random.default_rng(SEED)
    out = []
    for a in range(0, rows, batch):
        n = min(batch, rows - a)
        y = 50.0 + rng.normal(size=n) * 10.0
        out.append((y, y + rng.normal(size=n) * 3.0))
    return out


def streammetrics_run(batches: list[tuple[np.ndarray, np.ndarray]]) -> dict[str, float]:
    import streammetrics as sm

    ms = sm.MetricSet(mse=sm.MeanSquaredError(), mae=sm.MeanAbsoluteError(), r2=sm.R2Score())
    for y, p in batches:
        ms.update(y, p)
    return {k: float(v) for k, v in ms.compute().items()}


def streammetrics_numpy_run(batches: list[tuple[np.ndarray, np.ndarray]]) -> dict[str, float]:
    """:func:`streammetrics_run` without the compiled pass: the numpy passes of a core install
    (no numba)."""
    from streammetrics.regression import _moments

    saved = _moments.FUSED_ROWS
    _moments.FUSED_ROWS = sys.maxsize
    try:
        return streammetrics_run(batches)
    finally:
        _moments.FUSED_ROWS = saved


def numpy_run(batches: list[tuple[np.ndarray, np.ndarray]]) -> dict[str, float]:
    n = sse = sae = sy = syy = 0.0
    for y, p in batches:
        r = y - p
        sse += float(r @ r)
        sae += float(np.abs(r, out=r).sum())
        sy += float(y.sum())
        syy += float(y @ y)
        n += y.shape[0]
    return {"mse": sse / n, "mae": sae / n, "r2": 1.0 - sse / (syy - sy * sy / n)}


def numpy_centred_run(batches: list[tuple[np.ndarray, np.ndarray]]) -> dict[str, float]:
    """The bare numpy passes of a stable stream: per batch mean-centred sums, merged with Chan's
    update (what keeps the digits of a large mean, as streammetrics does)."""
    n = sse = sae = mean = m2 = 0.0
    for y, p in batches:
        r = y - p
        sse += float(r @ r)
        sae += float(np.abs(r, out=r).sum())
        nb = float(y.shape[0])
        mb = float(y.mean())
        d = y - mb
        m2b = float(d @ d)
        delta = mb - mean
        tot = n + nb
        m2 += m2b + delta * delta * n * nb / tot
        mean += delta * nb / tot
        n = tot
    return {"mse": sse / n, "mae": sae / n, "r2": 1.0 - sse / m2}


def torchmetrics_peer(batches: list[tuple[np.ndarray, np.ndarray]]) -> Callable[[], dict[str, float]]:
    import torch
    import torchmetrics

    h.single_thread()
    tensors = [(torch.from_numpy(y), torch.from_numpy(p)) for y, p in batches]

    def run() -> dict[str, float]:
        mc = torchmetrics.MetricCollection({"mse": torchmetrics.MeanSquaredError(),
                                            "mae": torchmetrics.MeanAbsoluteError(),
                                            "r2": torchmetrics.R2Score()})
        mc.set_dtype(torch.float64)
        for y, p in tensors:
            mc.update(p, y)
        return {k: float(v) for k, v in mc.compute().items()}

    return run


def river_peer(batches: list[tuple[np.ndarray, np.ndarray]], rows: int) -> Callable[[], dict[str, float]]:
    from river import metrics

    y = np.concatenate([b[0] for b in batches])[:rows].tolist()
    p = np.concatenate([b[1] for b in batches])[:rows].tolist()

    def run() -> dict[str, float]:
        mse, mae, r2 = metrics.MSE(), metrics.MAE(), metrics.R2()
        for yt, yp in zip(y, p, strict=True):
            mse.update(yt, yp)
            mae.update(yt, yp)
            r2.update(yt, yp)
        return {"mse": mse.get(), "mae": mae.get(), "r2": r2.get()}

    return run


def timed(fns: list[Callable[[], Any]], repeat: int) -> list[tuple[float, float, Any]]:
    """(median wall, median CPU, last value) per callable, alternating run by run."""
    for fn in fns:
        fn()  # warm-up
    walls: list[list[float]] = [[] for _ in fns]
    cpus: list[list[float]] = [[] for _ in fns]
    values: list[Any] = [None] * len(fns)
    for _ in range(repeat):
        for i, fn in enumerate(fns):
            c0, t0 = time.process_time(), time.perf_counter()
            values[i] = fn()
            walls[i].append(time.perf_counter() - t0)
            cpus[i].append(time.process_time() - c0)
    return [(float(np.median(w)), float(np.median(c)), v) for w, c, v in zip(walls, cpus, values, strict=True)]


def main(argv: list[str] | None = None) -> str:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows", type=float, default=1e7)
    ap.add_argument("--batch", type=int, default=100_000)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--river-rows", type=float, default=2e5)
    ap.add_argument("--quick", action="store_true", help="1e6 rows, 3 repeats, 5e4 river rows")
    args = ap.parse_args(argv)
    if args.quick:
        args.rows, args.repeat, args.river_rows = 1e6, 3, 5e4
    rows, river_rows = int(args.rows), int(min(args.river_rows, args.rows))
    h.single_thread()
    batches = data(rows, args.batch)
    compiled = "compiled pass (numba)" if importlib.util.find_spec("numba") else "numba not installed"
    peers: list[tuple[str, Callable[[], Any], int]] = [
        (f"streammetrics MetricSet(MSE, MAE, R2), {compiled}", lambda: streammetrics_run(batches), rows),
        ("streammetrics MetricSet(MSE, MAE, R2), numpy passes", lambda: streammetrics_numpy_run(batches), rows)]
    for name, make, n in (("torchmetrics MetricCollection (float64)", lambda: torchmetrics_peer(batches), rows),
                          ("river MSE + MAE + R2 (per sample)", lambda: river_peer(batches, river_rows),
                           river_rows)):
        try:
            peers.append((name, make(), n))
        except ImportError as exc:
            peers.append((f"{name}: not installed ({exc.name})", lambda: None, 0))
    want = streammetrics_run(batches)
    runs = [("numpy running sums (textbook R²: reference)", lambda: numpy_run(batches), rows),
            ("numpy centred per batch + Chan merge", lambda: numpy_centred_run(batches), rows), *peers]
    live = [(name, fn, n) for name, fn, n in runs if n]
    measured = dict(zip([r[0] for r in live], timed([r[1] for r in live], args.repeat), strict=True))
    ref_wall, ref_cpu, _ = measured[runs[0][0]]
    table, notes = [], []
    for name, _, n in runs:
        if not n:
            table.append([name, "-", "-", "-", "-", "-"])
            continue
        wall, cpu, value = measured[name]
        table.append([name, f"{wall * 1e3:.1f} ms", f"{cpu * 1e3:.1f} ms", h.fmt_rate(n / wall),
                      h.fmt_ratio((n / wall) / (rows / ref_wall)), h.fmt_ratio((n / cpu) / (rows / ref_cpu))])
        if n == rows:
            for k, v in value.items():
                if abs(v - want[k]) > 1e-9 * max(1.0, abs(want[k])):
                    notes.append(f"WARNING: {name} {k} = {v!r}, streammetrics {want[k]!r}")
    lines = [
        f"## bench_regression: MSE + MAE + R² over {rows:.0e} float64 rows in batches of {args.batch:,}",
        "",
        h.env_header(),
        "",
        h.markdown_table(["implementation", "wall (median)", "CPU (median)", "rate (wall)", "vs reference (wall)",
                          "vs reference (CPU)"], table, "lrrrrr"),
        "",
        "All implementations alternate run by run in this process; ratios are rates relative to the "
        f"numpy running sums (river's rate on its first {river_rows:,} rows, one sample per call). "
        "Data: y ~ N(50, 10^2), y_pred = y + N(0, 3^2).",
        h.machine_line(),
        *notes,
    ]
    text = "\n".join(lines)
    print(text)
    return text


if __name__ == "__main__":
    main()
