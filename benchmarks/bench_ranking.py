"""Exact ranking benchmark: streaming AUROC against one-shot and re-sorting peers.

Run ``python -m benchmarks.bench_ranking [--quick]`` (or ``python benchmarks/bench_ranking.py``).

Every (workload, implementation) pair runs in its own subprocess (:func:`benchmarks._harness.
run_limited`: address-space limit, one thread for torch/BLAS), on seeded data built in chunks
before the timed region (so building it leaves no transient peak). Batches are views of the
whole arrays (torch tensors via ``torch.from_numpy``: no copies). Reported times are medians.

Workloads (full size; ``--quick`` divides the sizes by ten):

* ``stream``: 10M float64 scores (N(0, 1) + 0.5 for positives, 10% positives) in 1000 batches of
  10k, then one AUROC read. The reference is a bare ``np.argsort`` of the whole score array (the
  floor of any exact sort-based method). Peers: scikit-learn ``roc_auc_score`` on the whole
  arrays (one-shot), torchmetrics ``BinaryAUROC(thresholds=None)`` and torcheval ``BinaryAUROC``
  fed the same batches. Peak extra memory is the child's peak RSS minus its RSS after building
  the data, per sample (for streammetrics also numpy's traced peak via ``tracemalloc``).
* ``read every batch``: the same stream with an AUROC read after each of the 1000 batches
  (streammetrics: total vs reading once; peers re-sort everything at every read, so one read at
  the full size is shown and the total is that times the number of reads, labelled as such).
* ``multiclass``: 1M rows, 10 classes (softmax of N(0, 1) logits + 1 on the true class), macro
  one-vs-rest AUROC, in 100 batches of 10k, one read. scikit-learn one-shot ``roc_auc_score(...,
  multi_class="ovr")``, torchmetrics ``MulticlassAUROC``, torcheval ``MulticlassAUROC``.
* ``per-sample``: scalar ``update(y, s)`` calls on an accumulator already holding 1M samples
  (µs per call), and ``update`` + ``compute`` per sample (the river-style loop).

The machine may be shared: wall times include waiting for a CPU, so CPU times (``time.process_time``)
are shown beside them; ratios of CPU times are the steadier ones.

Every child computes the |difference| of its value from scikit-learn's on the same data, printed
in the table's ``|diff| vs sklearn`` column (torch peers work in float32 internally: expect ~1e-6;
nothing is asserted).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from typing import Any

import numpy as np

if __package__ in (None, ""):  # ``python benchmarks/bench_ranking.py``
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from benchmarks._harness import (  # noqa: E402
    Report,
    _peak_rss_mb,
    env_header,
    fmt_ratio,
    fmt_us,
    markdown_table,
    run_limited,
)

SEED = 20261122
NUM_CLASSES = 10
TARGET = __name__ if __name__ != "__main__" else "benchmarks.bench_ranking"


# -- data -------------------------------------------------------------------------------------------
def binary_data(n: int, seed: int = SEED) -> tuple[np.ndarray, np.ndarray]:
    """10% positives; scores N(0, 1) + 0.5 for positives. Built in chunks (no transient peak)."""
    rng = np.random.default_rng(seed)
    y = np.empty(n, dtype=np.int64)
    s = np.empty(n, dtype=np.float64)
    chunk = 1 << 20
    for i in range(0, n, chunk):
        m = min(chunk, n - i)
        y[i : i + m] = rng.random(m) < 0.1
        s[i : i + m] = rng.standard_normal(m) + 0.5 * y[i : i + m]
    return y, s


def multiclass_data(n: int, seed: int = SEED) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    y = rng.integers(0, NUM_CLASSES, n)
    logits = rng.standard_normal((n, NUM_CLASSES))
    logits[np.arange(n), y] += 1.0
    logits -= logits.max(axis=1, keepdims=True)
    p = np.exp(logits)
    p /= p.sum(axis=1, keepdims=True)
    return y, p


def _rss_mb() -> float:
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def _reset_peak() -> bool:
    """Reset the kernel's peak-RSS mark (Linux ``clear_refs`` 5); False if not possible."""
    try:
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")
        return True
    except OSError:
        return False


def _peak_mb() -> float:
    """Peak RSS since the last :func:`_reset_peak` (VmHWM), else since the process started."""
    return _peak_rss_mb()


# -- child workloads (run in subprocesses) ---------------------------------------------------------------
def child_stream(impl: str, n: int, batches: int, repeat: int, read_every: bool = False) -> dict[str, Any]:
    """One implementation on the binary stream; returns time, value, memory."""
    from sklearn.metrics import roc_auc_score  # every import before the memory baseline

    if impl in ("torchmetrics", "torcheval"):
        import torch  # noqa: F401
        import torcheval.metrics  # noqa: F401
        import torchmetrics.classification  # noqa: F401
    y, s = binary_data(n)
    b = n // batches
    value: float = float("nan")
    traced = None
    if impl == "argsort":

        def run() -> float:
            np.argsort(s)
            return float("nan")

    elif impl == "streammetrics":
        import streammetrics as sm

        def run() -> float:
            m = sm.AUROC()
            v: float | np.ndarray = float("nan")
            for i in range(0, n, b):
                m.update(y[i : i + b], s[i : i + b])
                if read_every:
                    v = m.compute()
            return v if read_every else m.compute()  # type: ignore[return-value]  # binary: a float

    elif impl == "sklearn":
        from sklearn.metrics import roc_auc_score

        def run() -> float:
            return float(roc_auc_score(y, s))

    elif impl in ("torchmetrics", "torcheval"):
        import torch

        ty = [torch.from_numpy(y[i : i + b]) for i in range(0, n, b)]
        ts = [torch.from_numpy(s[i : i + b]) for i in range(0, n, b)]
        if impl == "torchmetrics":
            from torchmetrics.classification import BinaryAUROC as Peer

            def make() -> Any:
                return Peer(thresholds=None)

        else:
            from torcheval.metrics import BinaryAUROC as Peer2

            def make() -> Any:
                return Peer2()

        def run() -> float:
            m = make()
            for a, c in zip(ts, ty, strict=True):
                m.update(a, c)
            return float(m.compute())

    else:
        raise ValueError(impl)
    # memory: peak RSS of one run above the RSS after building the data
    rss0 = _rss_mb()
    _reset_peak()
    value = run()
    extra = max(0.0, (_peak_mb() - rss0) * 2**20 / n)
    if impl == "streammetrics" and not read_every:
        import tracemalloc

        tracemalloc.start()
        value = run()
        traced = tracemalloc.get_traced_memory()[1] / n
        tracemalloc.stop()
    t_runs, c_runs = [], []
    for _ in range(repeat):
        t0, c0 = time.perf_counter(), time.process_time()
        value = run()
        t_runs.append(time.perf_counter() - t0)
        c_runs.append(time.process_time() - c0)
    diff = abs(value - roc_auc_score(y, s)) if impl != "argsort" else 0.0
    return {
        "seconds": float(np.median(t_runs)),
        "cpu": float(np.median(c_runs)),
        "value": value,
        "diff": diff,
        "extra_bytes_per_sample": extra,
        "traced_bytes_per_sample": traced,
    }


def child_one_read_cost(impl: str, n: int) -> dict[str, Any]:
    """Seconds of one compute() of a re-sorting peer holding ``n`` samples."""
    import torch

    y, s = binary_data(n)
    if impl == "torchmetrics":
        from torchmetrics.classification import BinaryAUROC

        m: Any = BinaryAUROC(thresholds=None)
    else:
        from torcheval.metrics import BinaryAUROC as B2

        m = B2()
    warm: Any = type(m)() if impl == "torcheval" else type(m)(thresholds=None)
    warm.update(torch.rand(100, dtype=torch.float64), torch.randint(0, 2, (100,)))
    warm.compute()  # one-time initialisation outside the timed read
    b = max(1, n // 1000)
    for i in range(0, n, b):
        m.update(torch.from_numpy(s[i : i + b]), torch.from_numpy(y[i : i + b]))
    t0 = time.perf_counter()
    m.compute()  # the first read after the updates (later reads may be cached)
    return {"seconds": time.perf_counter() - t0}


def child_multiclass(impl: str, n: int, batches: int, repeat: int) -> dict[str, Any]:
    y, p = multiclass_data(n)
    b = n // batches
    if impl == "streammetrics":
        import streammetrics as sm

        def run() -> float:
            m = sm.AUROC(NUM_CLASSES)
            for i in range(0, n, b):
                m.update(y[i : i + b], p[i : i + b])
            return float(m.compute())

    elif impl == "sklearn":
        from sklearn.metrics import roc_auc_score

        def run() -> float:
            return float(roc_auc_score(y, p, multi_class="ovr", average="macro"))

    else:
        import torch

        ty = [torch.from_numpy(y[i : i + b]) for i in range(0, n, b)]
        tp = [torch.from_numpy(p[i : i + b]) for i in range(0, n, b)]
        if impl == "torchmetrics":
            from torchmetrics.classification import MulticlassAUROC

            def make() -> Any:
                return MulticlassAUROC(NUM_CLASSES, average="macro", thresholds=None)

        else:
            from torcheval.metrics import MulticlassAUROC as M2

            def make() -> Any:
                return M2(num_classes=NUM_CLASSES, average="macro")

        def run() -> float:
            m = make()
            for a, c in zip(tp, ty, strict=True):
                m.update(a, c)
            return float(m.compute())

    runs, cpu = [], []
    value = float("nan")
    for _ in range(repeat):
        t0, c0 = time.perf_counter(), time.process_time()
        value = run()
        runs.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
    from sklearn.metrics import roc_auc_score

    return {
        "seconds": float(np.median(runs)),
        "cpu": float(np.median(cpu)),
        "value": value,
        "diff": abs(value - roc_auc_score(y, p, multi_class="ovr", average="macro")),
    }


def child_per_sample(stored: int, calls: int) -> dict[str, Any]:
    import streammetrics as sm

    y, s = binary_data(stored + calls)
    m = sm.AUROC().update(y[:stored], s[:stored])
    m.compute()
    ys, ss = y[stored:].tolist(), s[stored:].tolist()
    update = m.update
    t0, c0 = time.perf_counter(), time.process_time()
    for a, c in zip(ys, ss, strict=True):
        update(a, c)
    t_update = (time.perf_counter() - t0) / calls
    c_update = (time.process_time() - c0) / calls
    m.compute()
    k = min(calls, 20_000)
    t0, c0 = time.perf_counter(), time.process_time()
    for a, c in zip(ys[:k], ss[:k], strict=True):
        update(a, c)
        m.compute()
    t_both = (time.perf_counter() - t0) / k
    c_both = (time.process_time() - c0) / k
    return {
        "update": t_update,
        "update_cpu": c_update,
        "update_compute": t_both,
        "update_compute_cpu": c_both,
    }


# -- driver ------------------------------------------------------------------------------------------------------
def _run(func: str, **kwargs: Any) -> dict[str, Any]:
    return run_limited(f"{TARGET}:{func}", kwargs, timeout=1800)


def main(argv: list[str] | None = None) -> str:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="sizes / 10, fewer repeats")
    ap.add_argument("--repeat", type=int, default=None)
    args = ap.parse_args(argv)
    scale = 10 if args.quick else 1
    n, batches = 10_000_000 // scale, 1000 // scale
    repeat = args.repeat or 3
    mine = ("argsort", "streammetrics")  # peers run once at full size (they take seconds each)
    rep = Report()  # each table printed the moment it is measured
    rep.emit("## Ranking (exact AUROC)", "", env_header(), "")

    # 1. stream + one read; memory
    res = {
        impl: _run("child_stream", impl=impl, n=n, batches=batches, repeat=repeat if impl in mine else 1)
        for impl in ("argsort", "streammetrics", "sklearn", "torchmetrics", "torcheval")
    }
    ref = res["argsort"].get("seconds")
    ref_cpu = res["argsort"].get("cpu")
    rows = []
    labels = {
        "argsort": "bare np.argsort of the whole array (reference)",
        "streammetrics": "streammetrics AUROC (stream, one read)",
        "sklearn": "scikit-learn roc_auc_score (one-shot)",
        "torchmetrics": "torchmetrics BinaryAUROC (stream, one read)",
        "torcheval": "torcheval BinaryAUROC (stream, one read)",
    }
    for impl, r in res.items():
        sec = r.get("seconds")
        extra = r.get("extra_bytes_per_sample")
        traced = r.get("traced_bytes_per_sample")
        mem = "-" if extra is None else f"{extra:.1f}"
        if traced is not None:
            mem += f" (numpy traced {traced:.1f})"
        cpu = r.get("cpu")
        rows.append(
            [
                labels[impl],
                r.get("status", "?") if sec is None else f"{sec:.3f} s",
                "-" if sec is None or not ref else fmt_ratio(sec / ref),
                "-" if cpu is None or not ref_cpu else f"{cpu:.3f} s ({fmt_ratio(cpu / ref_cpu)})",
                mem,
                "-" if r.get("diff") is None else f"{r['diff']:.1e}",
            ]
        )
    rep.emit(*[
        f"### {n:,} float64 scores (10% positives) in {batches} batches of {n // batches:,}, one AUROC read",
        "",
        markdown_table(
            [
                "implementation",
                "time",
                "vs argsort",
                "CPU time (vs argsort)",
                "peak extra bytes/sample",
                "|diff| vs sklearn",
            ],
            rows,
            "lrrrrr",
        ),
        "",
    ])

    # 2. read after every batch
    every = _run("child_stream", impl="streammetrics", n=n, batches=batches, repeat=repeat, read_every=True)
    once = res["streammetrics"].get("seconds")
    once_cpu = res["streammetrics"].get("cpu")
    rows = []
    if every.get("seconds") is not None and once and once_cpu:
        rows.append(
            [
                "streammetrics AUROC, read after every batch",
                f"{every['seconds']:.3f} s",
                fmt_ratio(every["seconds"] / once),
                f"{every['cpu']:.3f} s ({fmt_ratio(every['cpu'] / once_cpu)})",
                f"{every['seconds'] / batches * 1e3:.2f} ms",
            ]
        )
    for impl in ("torchmetrics", "torcheval"):
        one = _run("child_one_read_cost", impl=impl, n=n)
        stream_s = res[impl].get("seconds")
        if one.get("seconds") is not None and stream_s is not None and once:
            # each read re-sorts everything seen so far: on average half the final size
            est = stream_s + batches * one["seconds"] / 2
            rows.append(
                [
                    f"{impl} (estimate: stream + {batches} reads x half the final read cost)",
                    f"~{est:.1f} s",
                    fmt_ratio(est / once),
                    "-",
                    f"{one['seconds'] * 1e3:.1f} ms at the end",
                ]
            )
        else:
            rows.append([impl, one.get("status", "?"), "-", "-", "-"])
    rep.emit(*[
        "### AUROC read after every batch (same stream)",
        "",
        markdown_table(
            ["implementation", "total", "vs streammetrics one read", "CPU time (vs one read)", "per read"],
            rows,
            "lrrrr",
        ),
        "",
    ])

    # 3. multiclass
    mn, mb = 1_000_000 // scale, 100 // scale
    rows = []
    for impl, label in (
        ("streammetrics", "streammetrics AUROC(10)"),
        ("sklearn", "scikit-learn roc_auc_score ovr (one-shot)"),
        ("torchmetrics", "torchmetrics MulticlassAUROC"),
        ("torcheval", "torcheval MulticlassAUROC"),
    ):
        r = _run("child_multiclass", impl=impl, n=mn, batches=mb, repeat=repeat)
        sec = r.get("seconds")
        rows.append(
            [
                label,
                r.get("status", "?") if sec is None else f"{sec:.3f} s",
                "-" if r.get("cpu") is None else f"{r['cpu']:.3f} s",
                "-" if r.get("diff") is None else f"{r['diff']:.1e}",
            ]
        )
    rep.emit(*[
        f"### 10-class macro AUROC, {mn:,} rows in {mb} batches",
        "",
        markdown_table(["implementation", "time", "CPU time", "|diff| vs sklearn"], rows, "lrrr"),
        "",
    ])

    # 4. per-sample
    stored = 1_000_000 // scale
    r = _run("child_per_sample", stored=stored, calls=100_000 // scale)
    rows = [
        ["update(y, s) with scalars", fmt_us(r.get("update")), fmt_us(r.get("update_cpu"))],
        ["update + compute per sample", fmt_us(r.get("update_compute")), fmt_us(r.get("update_compute_cpu"))],
    ]
    rep.emit(*[
        f"### Per-sample path, {stored:,} samples already stored",
        "",
        markdown_table(["operation", "wall time per call", "CPU time per call"], rows, "lrr"),
        "",
    ])
    return rep.text()


if __name__ == "__main__":
    main(sys.argv[1:])
