"""Confusion family benchmark: Precision, Recall, F1 and Accuracy through a ``MetricSet``.

Run ``python -m benchmarks.bench_confusion [--quick]`` (or ``python benchmarks/bench_confusion.py``).

Every (workload, implementation) pair runs in its own subprocess with an address-space limit
(:func:`benchmarks._harness.run_limited`), one thread, seeded data built from the same seed, so
every implementation sees exactly the same arrays. Data is built and converted (torch tensors,
Python lists for river) outside the timed region; a timed run builds fresh accumulators, feeds
every batch and computes the four values. The reported time is the median of the repeats.

Implementations:

* ``bare np.bincount`` -- ``counts += np.bincount(2*y + p, minlength=4)`` per batch (``C*y + p``
  with ``C*C`` bins for multiclass; ``2*y + (s >= 0.5)`` for scores): no validation, nothing but
  the counting, the near-physical-limit reference every ratio is taken against. On the
  per-sample workload the reference is a bare Python loop ``c[2*y + p] += 1``.
* ``streammetrics`` -- ``MetricSet(precision=Precision(), recall=Recall(), f1=F1(),
  accuracy=Accuracy())`` (one shared state, full validation); ``... lock no-op`` is the same with
  the set's lock replaced by ``contextlib.nullcontext()`` *in the benchmark process only*, to
  measure what thread safety costs.
* ``torchmetrics`` -- Binary/Multiclass Precision, Recall, F1Score, Accuracy in a
  ``MetricCollection``, with default argument validation and with ``validate_args=False``.
* ``torcheval`` -- Binary/Multiclass Precision, Recall, F1Score, Accuracy, updated one by one.
* ``river`` -- ``metrics.Precision/Recall/F1/Accuracy`` (``Macro*`` for multiclass) updated per
  sample; limited to the samples it can process in ``--budget`` seconds per run.

Slow peers are limited the same way (a probe run estimates the cost; the sample count is cut to
fit the budget and reported). After timing, each child checks that its final values agree with
streammetrics on exactly the samples it processed (streammetrics itself is checked against values
computed from the bare ``bincount`` counts) and the table reports the largest difference; a
difference above 1e-9 prints a warning line (torch peers return float32, which cannot meet 1e-9).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import time
from collections.abc import Callable
from typing import Any

import numpy as np

if __package__ in (None, ""):  # ``python benchmarks/bench_confusion.py``
    sys.path.insert(0, __import__("os").path.dirname(__import__("os").path.dirname(__file__)))

from benchmarks._harness import (  # noqa: E402
    Report,
    env_header,
    fmt_rate,
    fmt_ratio,
    fmt_us,
    machine_line,
    markdown_table,
    measure_interleaved,
    run_limited,
    single_thread,
)

SEED = 20260101
NAMES = ("precision", "recall", "f1", "accuracy")

#: name -> (kind, batch, samples at full size, samples with --quick)
WORKLOADS: dict[str, tuple[str, int, int, int]] = {
    "binary labels, batch 100k": ("binary", 100_000, 10_000_000, 1_000_000),
    "binary labels, batch 1k": ("binary", 1_000, 10_000_000, 500_000),
    "per-sample scalars": ("per_sample", 1, 100_000, 20_000),
    "multiclass (10) labels, batch 100k": ("multiclass", 100_000, 10_000_000, 1_000_000),
    "binary scores >= 0.5, batch 100k": ("scores", 100_000, 10_000_000, 1_000_000),
}
NUM_CLASSES = 10

IMPLS = (
    "bare",
    "streammetrics",
    "streammetrics-nolock",
    "torchmetrics",
    "torchmetrics-novalidate",
    "torcheval",
    "river",
)
LABELS = {
    "bare": "bare np.bincount loop",
    "streammetrics": "streammetrics MetricSet",
    "streammetrics-nolock": "streammetrics MetricSet, lock no-op",
    "torchmetrics": "torchmetrics MetricCollection",
    "torchmetrics-novalidate": "torchmetrics MetricCollection, validate_args=False",
    "torcheval": "torcheval (4 metrics)",
    "river": "river (4 metrics, per sample)",
}


# -- data ------------------------------------------------------------------------------------
def make_data(kind: str, n: int, seed: int = SEED) -> tuple[np.ndarray, np.ndarray]:
    """Seeded (y_true, y_pred) of ``n`` samples: int64 labels, or float64 scores for ``scores``."""
    rng = np.random.default_rng(seed)
    if kind == "multiclass":
        return rng.integers(0, NUM_CLASSES, n), rng.integers(0, NUM_CLASSES, n)
    y = rng.integers(0, 2, n)
    if kind == "scores":
        # correlated with y so that the metrics are not all ~0.5
        return y, np.clip(rng.normal(0.35 + 0.3 * y, 0.25), 0.0, 1.0)
    return y, (rng.random(n) < np.where(y == 1, 0.8, 0.3)).astype(np.int64)


def values_from_counts(m: np.ndarray, kind: str) -> dict[str, float]:
    """The four values from a confusion matrix (rows actual, columns predicted), in float64.

    Binary: positive class; multiclass: macro precision/recall/F1 (zero division -> 0) and
    micro accuracy -- the definitions every implementation here is configured to use.
    """
    m = m.astype(np.float64)
    if kind != "multiclass":
        tn, fp, fn, tp = m.ravel()
        return {
            "precision": tp / (tp + fp) if tp + fp else 0.0,
            "recall": tp / (tp + fn) if tp + fn else 0.0,
            "f1": 2 * tp / (2 * tp + fp + fn) if tp + fp + fn else 0.0,
            "accuracy": (tp + tn) / m.sum() if m.sum() else 0.0,
        }
    tp = np.diag(m)
    pp, pos = m.sum(axis=0), m.sum(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        prec = np.where(pp > 0, tp / pp, 0.0)
        rec = np.where(pos > 0, tp / pos, 0.0)
        f1 = np.where(pp + pos > 0, 2 * tp / (pp + pos), 0.0)
    return {"precision": float(prec.mean()), "recall": float(rec.mean()), "f1": float(f1.mean()),
            "accuracy": float(tp.sum() / m.sum())}


# -- implementations: each returns run() -> {name: value} over the prebuilt batches -----------
Runner = Callable[[], dict[str, float]]


def _bare(kind: str, ys: list[Any], ps: list[Any]) -> Runner:
    if kind == "per_sample":
        def run_py() -> dict[str, float]:
            c = [0, 0, 0, 0]
            for a, b in zip(ys, ps, strict=True):
                c[a + a + b] += 1
            return values_from_counts(np.array(c).reshape(2, 2), kind)
        return run_py
    k = NUM_CLASSES if kind == "multiclass" else 2

    def run() -> dict[str, float]:
        counts = np.zeros(k * k, dtype=np.int64)
        if kind == "scores":
            for y, s in zip(ys, ps, strict=True):
                counts += np.bincount(2 * y + (s >= 0.5), minlength=4)
        else:
            for y, p in zip(ys, ps, strict=True):
                counts += np.bincount(k * y + p, minlength=k * k)
        return values_from_counts(counts.reshape(k, k), kind)
    return run


def _streammetrics_set(kind: str) -> Any:
    import streammetrics as sm

    c = NUM_CLASSES if kind == "multiclass" else None
    return sm.MetricSet(precision=sm.Precision(c), recall=sm.Recall(c), f1=sm.F1(c),
                        accuracy=sm.Accuracy(c))


def _without_lock(ms: Any) -> Any:
    """Replace the set's (shared) lock by a no-op -- benchmark process only."""
    noop = contextlib.nullcontext()
    ms._lock = noop
    for name in ms:
        ms[name]._lock = noop
    return ms


def _streammetrics(kind: str, ys: list[Any], ps: list[Any], lock: bool = True) -> Runner:
    def run() -> dict[str, float]:
        ms = _streammetrics_set(kind)
        if not lock:
            _without_lock(ms)
        update = ms.update
        for y, p in zip(ys, ps, strict=True):
            update(y, p)
        return {k: float(v) for k, v in ms.compute().items()}
    return run


def _torchmetrics(kind: str, ys: list[Any], ps: list[Any], validate: bool = True) -> Runner:
    import torch
    from torchmetrics import MetricCollection
    from torchmetrics import classification as tc

    ty = [torch.as_tensor(np.atleast_1d(y)) for y in ys]  # from_numpy: no copy
    tp = [torch.as_tensor(np.atleast_1d(p)) for p in ps]

    def make() -> Any:
        v: dict[str, Any] = {"validate_args": validate}
        if kind == "multiclass":
            c = NUM_CLASSES
            return MetricCollection({
                "precision": tc.MulticlassPrecision(c, average="macro", **v),
                "recall": tc.MulticlassRecall(c, average="macro", **v),
                "f1": tc.MulticlassF1Score(c, average="macro", **v),
                "accuracy": tc.MulticlassAccuracy(c, average="micro", **v),
            })
        return MetricCollection({
            "precision": tc.BinaryPrecision(**v), "recall": tc.BinaryRecall(**v),
            "f1": tc.BinaryF1Score(**v), "accuracy": tc.BinaryAccuracy(**v),
        })

    def run() -> dict[str, float]:
        col = make()
        update = col.update
        for y, p in zip(ty, tp, strict=True):
            update(p, y)
        return {k: float(v) for k, v in col.compute().items()}
    return run


def _torcheval(kind: str, ys: list[Any], ps: list[Any]) -> Runner:
    import torch
    from torcheval import metrics as te

    ty = [torch.as_tensor(np.atleast_1d(y)) for y in ys]
    tp = [torch.as_tensor(np.atleast_1d(p)) for p in ps]

    def make() -> dict[str, Any]:
        if kind == "multiclass":
            c = NUM_CLASSES
            return {"precision": te.MulticlassPrecision(num_classes=c, average="macro"),
                    "recall": te.MulticlassRecall(num_classes=c, average="macro"),
                    "f1": te.MulticlassF1Score(num_classes=c, average="macro"),
                    "accuracy": te.MulticlassAccuracy()}
        return {"precision": te.BinaryPrecision(), "recall": te.BinaryRecall(),
                "f1": te.BinaryF1Score(), "accuracy": te.BinaryAccuracy()}

    def run() -> dict[str, float]:
        ms = make()
        mlist = list(ms.values())
        for y, p in zip(ty, tp, strict=True):
            for m in mlist:
                m.update(p, y)
        return {k: float(m.compute()) for k, m in ms.items()}
    return run


def _river(kind: str, ys: list[Any], ps: list[Any]) -> Runner:
    from river import metrics as rm

    # river takes one sample per call: flatten the batches to Python scalars (untimed)
    if kind == "per_sample":
        yl, pl = list(ys), list(ps)
    elif kind == "scores":
        yl = np.concatenate(ys).tolist()
        pl = (np.concatenate(ps) >= 0.5).astype(np.int64).tolist()
    else:
        yl, pl = np.concatenate(ys).tolist(), np.concatenate(ps).tolist()

    def make() -> dict[str, Any]:
        if kind == "multiclass":
            return {"precision": rm.MacroPrecision(), "recall": rm.MacroRecall(),
                    "f1": rm.MacroF1(), "accuracy": rm.Accuracy()}
        return {"precision": rm.Precision(pos_val=1), "recall": rm.Recall(pos_val=1),
                "f1": rm.F1(pos_val=1), "accuracy": rm.Accuracy()}

    def run() -> dict[str, float]:
        ms = make()
        p_, r_, f_, a_ = (ms[k].update for k in NAMES)
        for y, p in zip(yl, pl, strict=True):
            p_(y, p)
            r_(y, p)
            f_(y, p)
            a_(y, p)
        return {k: float(m.get()) for k, m in ms.items()}
    return run


def _runner(impl: str, kind: str, ys: list[Any], ps: list[Any]) -> Runner:
    if impl == "bare":
        return _bare(kind, ys, ps)
    if impl in ("streammetrics", "streammetrics-nolock"):
        return _streammetrics(kind, ys, ps, lock=impl == "streammetrics")
    if impl in ("torchmetrics", "torchmetrics-novalidate"):
        return _torchmetrics(kind, ys, ps, validate=impl == "torchmetrics")
    if impl == "torcheval":
        return _torcheval(kind, ys, ps)
    if impl == "river":
        return _river(kind, ys, ps)
    raise ValueError(f"impl: unknown implementation {impl!r}")


def _batches(kind: str, y: np.ndarray, p: np.ndarray, batch: int, n: int) -> tuple[list[Any], list[Any]]:
    if kind == "per_sample":
        return y[:n].tolist(), p[:n].tolist()
    return ([y[i:i + batch] for i in range(0, n, batch)],
            [p[i:i + batch] for i in range(0, n, batch)])


def _reference(impl: str, kind: str, y: np.ndarray, p: np.ndarray) -> dict[str, float]:
    """streammetrics on the processed samples; for streammetrics itself, the bincount values."""
    if impl.startswith("streammetrics"):
        k = NUM_CLASSES if kind == "multiclass" else 2
        pred = (p >= 0.5).astype(np.int64) if kind == "scores" else p
        return values_from_counts(np.bincount(k * y + pred, minlength=k * k).reshape(k, k), kind)
    ms = _streammetrics_set(kind)
    ms.update(y, p)
    return {k: float(v) for k, v in ms.compute().items()}


def case(workload: str, impl: str, n: int, repeat: int = 5, budget: float = 10.0,
         seed: int = SEED) -> dict[str, Any]:
    """Time one implementation on one workload (run in a subprocess by :func:`main`).

    A probe on a slice of the data estimates the cost per sample; the sample count is cut so one
    run takes at most ``budget`` seconds (whole batches), and the repeats so that all of them
    take at most about ``3 * budget``. The bare loop is timed on the same samples in alternation
    with the implementation (``bare_median``), so the ratio is robust to load from other
    processes; ``streammetrics-nolock`` likewise alternates with the locked set
    (``locked_median``). Returns seconds (median, best), samples, and the check result.
    """
    single_thread()
    kind, batch, _, _ = WORKLOADS[workload]
    batch = min(batch, n)
    y, p = make_data(kind, n, seed)
    try:
        probe_n = min(n, max(batch, 20_000 if kind == "per_sample" else 50 * batch, n // 100))
        probe_n -= probe_n % batch
        run = _runner(impl, kind, *_batches(kind, y, p, batch, probe_n))
    except ImportError as exc:
        return {"status": f"not installed ({exc.name})"}
    run()  # warm-up (imports, first-call costs)
    t0 = time.perf_counter()
    run()
    per_sample = (time.perf_counter() - t0) / probe_n
    used = n
    if per_sample * n > budget:
        used = max(batch, int(budget / per_sample) // batch * batch)
    if impl == "streammetrics-nolock":  # a small difference: more alternations
        repeat = max(repeat, 15)
    reps = max(1, min(repeat, int(3 * budget / max(per_sample * used, 1e-9))))
    ys, ps = _batches(kind, y, p, batch, used)
    run = _runner(impl, kind, ys, ps)
    fns = [run]
    if impl != "bare":
        fns.append(_bare(kind, ys, ps))
    if impl == "streammetrics-nolock":
        fns.append(_streammetrics(kind, ys, ps, lock=True))
    timings = measure_interleaved(fns, repeat=reps, warmup=1 if per_sample * used < 1 else 0)
    got = run()
    ref = _reference(impl, kind, y[:used], p[:used])
    diff = max(abs(got[k] - ref[k]) for k in NAMES)
    out = {"median": timings[0].median, "best": timings[0].best, "repeat": reps, "samples": used,
           "batch": batch, "max_diff": diff, "values": got}
    out["bare_median"] = timings[1].median if impl != "bare" else timings[0].median
    out["bare_best"] = timings[1].best if impl != "bare" else timings[0].best
    if impl != "bare":  # the ratio of every alternated round: its spread under the load of the run
        out["round_ratios"] = [b / a for a, b in zip(timings[0].runs, timings[1].runs, strict=True)]
    out["load"] = list(os.getloadavg()) if hasattr(os, "getloadavg") else None
    if impl == "streammetrics-nolock":
        out["locked_median"] = timings[2].median
        out["locked_best"] = timings[2].best
    return out


# -- driver ----------------------------------------------------------------------------------
def _parse(argv: list[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.bench_confusion", description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="fewer samples (about a minute in all)")
    ap.add_argument("--workloads", default="", help="comma-separated workload names (prefix match)")
    ap.add_argument("--impls", default=",".join(IMPLS), help=f"comma-separated subset of {IMPLS}")
    ap.add_argument("--samples", type=int, default=0, help="override the sample count of every workload")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--budget", type=float, default=10.0, help="max seconds of one timed run of a peer")
    ap.add_argument("--mem-limit-mb", type=int, default=None, help="address-space limit per child")
    ap.add_argument("--inprocess", action="store_true", help="no subprocesses (for tests / profiling)")
    return ap.parse_args(argv)


def _selected(spec: str) -> list[str]:
    if not spec:
        return list(WORKLOADS)
    wanted = [s.strip() for s in spec.split(",") if s.strip()]
    return [w for w in WORKLOADS if any(w.startswith(s) for s in wanted)]


def main(argv: list[str] | None = None) -> str:
    """Run the selected workloads against every implementation; print and return markdown."""
    args = _parse(argv)
    impls = [i.strip() for i in args.impls.split(",") if i.strip()]
    for impl in impls:
        if impl not in IMPLS:
            raise SystemExit(f"--impls: unknown implementation {impl!r}; choose from {IMPLS}")
    results: dict[tuple[str, str], dict[str, Any]] = {}
    rep = Report()  # each row printed the moment its case is measured
    rep.emit(*_header(args.quick))
    add = rep.rows(_HEADERS, "llrrrrrrrl")
    warnings: list[str] = []
    for workload in _selected(args.workloads):
        kind, _, full, quick = WORKLOADS[workload]
        n = args.samples or (quick if args.quick else full)
        for impl in impls:
            kwargs = {"workload": workload, "impl": impl, "n": n, "repeat": args.repeat,
                      "budget": args.budget}
            if args.inprocess:
                res = case(**kwargs)
                res.setdefault("status", "ok")
            else:
                res = run_limited("benchmarks.bench_confusion:case", kwargs,
                                  mem_limit_mb=args.mem_limit_mb)
            results[workload, impl] = res
            row, warning = _row(workload, impl, res)
            add(row)
            if warning is not None:
                warnings.append(warning)
    lock_cost: tuple[float, float] | None = None
    with rep.section("lock cost"):
        lock_cost = _raw_lock_cost()
    rep.emit(*_footer(results, warnings, lock_cost))
    return rep.text()


def _raw_lock_cost() -> tuple[float, float]:
    """Seconds per ``with lock: pass`` for an uncontended ``threading.RLock`` and for
    ``contextlib.nullcontext()`` (best of 7 runs of 200k each), in this process."""
    import threading

    out = []
    for cm in (threading.RLock(), contextlib.nullcontext()):
        def loop(cm: Any = cm) -> None:
            for _ in range(200_000):
                with cm:
                    pass
        base = measure_interleaved([loop, lambda: [None for _ in range(200_000)]], repeat=7)
        out.append(max(0.0, (base[0].best - base[1].best) / 200_000))
    return out[0], out[1]


_HEADERS = ["workload", "implementation", "samples", "throughput", "ratio to bare", "(best runs)",
            "ratio range (rounds)", "load (1 min)", "peak RSS MB", "check"]


def _header(quick: bool) -> list[str]:
    return [
        "## Confusion family: Precision, Recall, F1, Accuracy" + (" (--quick)" if quick else ""),
        "",
        env_header(),
        "",
        "Throughput = samples / median wall time of a run (fresh accumulators, all batches, "
        "compute). Ratio = throughput / throughput of the bare loop on the same samples, timed "
        "in alternation with it in the same process (per-sample: a bare Python loop); '(best runs)' is the "
        "same ratio from the fastest run of each, the least disturbed by other processes. Peak RSS includes the workload's data. "
        "check: largest |difference| of the four final values from streammetrics on the same samples. "
        "Ratio range: the ratio of each alternated round (its spread under the load of that run); "
        "load: the 1-minute load average when the row was measured.",
        "",
    ]


def _row(workload: str, impl: str, res: dict[str, Any]) -> tuple[list[Any], str | None]:
    """One table row of a case's result, and its warning line (a value off by more than 1e-9)."""
    ok = res.get("status") == "ok"
    per_s = ok and WORKLOADS[workload][0] == "per_sample"
    cost = res["median"] / res["samples"] if ok else None
    ratio = res["bare_median"] / res["median"] if ok else None
    ratio_best = res["bare_best"] / res["best"] if ok and "bare_best" in res else None
    check, warning = "-", None
    if ok:
        d = res["max_diff"]
        check = "ok" if d <= 1e-9 else f"Δ={d:.1e}"
        if not d <= 1e-9:
            f32 = d <= 4 * 2.0**-24
            label = "bincount values" if impl.startswith("streammetrics") else "streammetrics"
            warning = (f"WARNING: {LABELS[impl]} on '{workload}' differs from {label} by {d:.2e} "
                       + ("(within float32 rounding: its output is float32)" if f32 else "(MISMATCH)"))
    spread = res.get("round_ratios") if ok else None
    load = res.get("load") if ok else None
    return [
        workload, LABELS[impl], f"{res['samples']:,}" if ok else "-",
        (fmt_us(cost) + " /sample") if per_s else (fmt_rate(1 / cost) if cost else "-"),
        fmt_ratio(ratio), fmt_ratio(ratio_best),
        f"{min(spread):.2f}-{max(spread):.2f}" if spread else "-",
        f"{load[0]:.1f}" if load else "-",
        f"{res.get('peak_rss_mb', '-')}", check if ok else res.get("status", "?"),
    ], warning


def _footer(results: dict[tuple[str, str], dict[str, Any]], warnings: list[str],
            lock_cost: tuple[float, float] | None) -> list[str]:
    parts = ["", machine_line(), ""]
    if warnings:
        parts += [*warnings, ""]
    parts += _targets(results)
    if lock_cost is not None:
        parts += [
            f"- raw cost, measured directly: `with lock: pass` on an uncontended `threading.RLock` "
            f"{fmt_us(lock_cost[0])}, on `contextlib.nullcontext()` {fmt_us(lock_cost[1])}. The no-op "
            "is a Python-level context manager and costs about as much as the C-level lock it "
            "replaces, so the differences above are within noise; the raw figure is the lock's "
            "cost per update.",
            "",
        ]
    return parts


def report(results: dict[tuple[str, str], dict[str, Any]], quick: bool = False,
           lock_cost: tuple[float, float] | None = None) -> str:
    """The markdown section at once: environment, one table, warnings, targets and the lock cost
    (``main`` prints the same parts as they are measured)."""
    rows = [_row(w, i, res) for (w, i), res in results.items()]
    table = markdown_table(_HEADERS, [r for r, _ in rows], align="llrrrrrrrl")
    return "\n".join([*_header(quick), table,
                      *_footer(results, [w for _, w in rows if w is not None], lock_cost)])


def _ratio(results: dict[tuple[str, str], dict[str, Any]], workload: str, impl: str) -> float | None:
    res = results.get((workload, impl), {})
    return res["bare_median"] / res["median"] if res.get("status") == "ok" else None


def _targets(results: dict[tuple[str, str], dict[str, Any]]) -> list[str]:
    lines = ["### Targets", ""]
    checks = [
        ("binary labels, batch 100k", ">= 0.80x bare", 0.8),
        ("binary labels, batch 1k", ">= 0.80x bare on a quiet machine", 0.8),
    ]
    for workload, text, goal in checks:
        r = _ratio(results, workload, "streammetrics")
        if r is None:
            continue
        peers = [f"{LABELS[i]} {fmt_ratio(_ratio(results, workload, i))}"
                 for i in IMPLS[3:] if _ratio(results, workload, i) is not None]
        res = results[workload, "streammetrics"]
        best = res["bare_best"] / res["best"] if "bare_best" in res else None
        lines.append(f"- {workload}: streammetrics {fmt_ratio(r)} (best runs {fmt_ratio(best)}; target "
                     f"{text}: {'met' if r >= goal else 'MISSED'}); peers: {', '.join(peers) or '-'}")
    ps = results.get(("per-sample scalars", "streammetrics"), {})
    if ps.get("status") == "ok":
        us = ps["median"] / ps["samples"] * 1e6
        rv = results.get(("per-sample scalars", "river"), {})
        river = f"; river {rv['median'] / rv['samples'] * 1e6:.2f} µs" if rv.get("status") == "ok" else ""
        best = ps["best"] / ps["samples"] * 1e6
        lines.append(f"- per-sample scalar update, four metrics: {us:.2f} µs (best run {best:.2f} µs; "
                     f"target <= 3 µs: {'met' if us <= 3 else 'MISSED'}){river}")
    lines += ["", "### Cost of the per-accumulator lock", ""]
    lines += [
        "The set with its `threading.RLock` against the same set with the lock replaced by "
        "`contextlib.nullcontext()` (benchmark process only), alternating run by run; per update, "
        "from the median and from the fastest run of each:",
        "",
    ]
    for workload in WORKLOADS:
        b = results.get((workload, "streammetrics-nolock"), {})
        if b.get("status") == "ok" and "locked_best" in b:
            per = b["batch"] / b["samples"]
            lm, nm, lb, nb = (b[k] * per for k in ("locked_median", "median", "locked_best", "best"))
            lines.append(f"- {workload}: median {fmt_us(lm)} with the lock vs {fmt_us(nm)} without "
                         f"({(lm - nm) / lm:+.1%}); best {fmt_us(lb)} vs {fmt_us(nb)} ({(lb - nb) / lb:+.1%})")
    lines.append("")
    return lines


if __name__ == "__main__":
    main(sys.argv[1:])
