"""Calibration benchmark: streaming expected calibration error (ECE, 15 uniform bins, l1).

Run ``python -m benchmarks.bench_calibration [--quick]``.

Each (workload, implementation) pair runs in its own subprocess (:func:`run_limited`: one
thread, an address-space limit, peak RSS reported) on the same seeded data. A timed run builds a
fresh accumulator, feeds every batch and computes the value; the time is the median of the
repeats. Implementations:

* ``bare numpy`` -- per batch ``np.bincount`` of the bin index with weights 1, conf and
  correct into three 15-bin sums (no validation): the near-physical-limit reference;
* ``streammetrics`` -- ``CalibrationError(n_bins=15)`` (full validation: probabilities in
  [0, 1], rows summing to 1, labels); O(n_bins) state;
* ``torchmetrics`` -- ``BinaryCalibrationError`` / ``MulticlassCalibrationError`` (it keeps
  every confidence and accuracy until ``compute``: memory grows with the stream).

Each child checks its value against streammetrics on the same data; torchmetrics works in
float32 (differences ~1e-7 are expected).
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

import numpy as np

if __package__ in (None, ""):  # ``python benchmarks/bench_calibration.py``
    sys.path.insert(0, __import__("os").path.dirname(__import__("os").path.dirname(__file__)))

from benchmarks._harness import (  # noqa: E402
    Report,
    env_header,
    fmt_rate,
    measure,
    run_limited,
)

SEED = 20261125
N_BINS = 15
#: name -> (num_classes or None, batch, samples, samples with --quick)
WORKLOADS: dict[str, tuple[int | None, int, int, int]] = {
    "binary, batch 100k": (None, 100_000, 10_000_000, 1_000_000),
    "multiclass (10), batch 10k": (10, 10_000, 2_000_000, 200_000),
}
IMPLS = ("bare", "streammetrics", "torchmetrics")


def make_data(num_classes: int | None, n: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(SEED)
    if num_classes is None:
        p = rng.random(n)
        return (rng.random(n) < p).astype(np.int64), p
    logits = rng.normal(0, 2, (n, num_classes))
    p = np.exp(logits - logits.max(axis=1, keepdims=True))
    p /= p.sum(axis=1, keepdims=True)
    return rng.integers(0, num_classes, n), p


def _bare(num_classes: int | None, batches: list[tuple[np.ndarray, np.ndarray]]) -> float:
    edges = np.linspace(0, 1, N_BINS + 1)
    sums = np.zeros((3, N_BINS))
    for y, p in batches:
        if num_classes is None:
            conf, correct = p, y
        else:
            conf, correct = p.max(axis=1), p.argmax(axis=1) == y
        b = np.minimum(np.searchsorted(edges, conf, side="right") - 1, N_BINS - 1)
        sums[0] += np.bincount(b, minlength=N_BINS)
        sums[1] += np.bincount(b, weights=conf, minlength=N_BINS)
        sums[2] += np.bincount(b, weights=correct, minlength=N_BINS)
    return float(np.abs(sums[2] - sums[1]).sum() / sums[0].sum())


def case(workload: str, impl: str, n: int | None = None, repeat: int = 3) -> dict[str, Any]:
    """One timed (workload, implementation) pair; JSON-able result."""
    import streammetrics as sm

    num_classes, batch, full, _ = WORKLOADS[workload]
    n = full if n is None else n
    y, p = make_data(num_classes, n)
    batches = [(y[i:i + batch], p[i:i + batch]) for i in range(0, n, batch)]
    reference = sm.CalibrationError(num_classes)
    for yb, pb in batches:
        reference.update(yb, pb)
    want = reference.compute()
    if impl == "bare":
        def run() -> float:
            return _bare(num_classes, batches)
    elif impl == "streammetrics":
        def run() -> float:
            m = sm.CalibrationError(num_classes, n_bins=N_BINS)
            for yb, pb in batches:
                m.update(yb, pb)
            return float(m.compute())
    else:
        import torch
        from torchmetrics.classification import BinaryCalibrationError, MulticlassCalibrationError

        tb = [(torch.from_numpy(yb), torch.from_numpy(pb)) for yb, pb in batches]

        def run() -> float:
            m = (BinaryCalibrationError(n_bins=N_BINS) if num_classes is None
                 else MulticlassCalibrationError(num_classes, n_bins=N_BINS))
            for yb, pb in tb:
                m.update(pb, yb)
            return float(m.compute())
    timing = measure(run, repeat=repeat, warmup=0)
    value = run()
    return {"seconds": timing.median, "samples": n, "max_diff": abs(value - want)}


def main(argv: list[str] | None = None) -> str:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.bench_calibration")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--samples", type=int, default=None, help="override the sample count")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--impls", default=",".join(IMPLS))
    ap.add_argument("--inprocess", action="store_true", help="no subprocess (tests)")
    args = ap.parse_args(argv)
    rep = Report()  # each row printed the moment it is measured
    rep.emit("## Calibration error (ECE, 15 bins)", "", env_header(), "")
    add = rep.rows(["workload", "implementation", "time", "rate", "peak RSS", "|diff|"], "llrrrr")
    for workload, (_, _, full, quick) in WORKLOADS.items():
        n = args.samples or (quick if args.quick else full)
        for impl in args.impls.split(","):
            kw = {"workload": workload, "impl": impl, "n": n, "repeat": args.repeat}
            res = (case(**kw) if args.inprocess  # type: ignore[arg-type]
                   else run_limited("benchmarks.bench_calibration:case", kw))
            if res.get("status", "ok") != "ok":
                add([workload, impl, res["status"], "", "", ""])
                continue
            add([workload, impl, f"{res['seconds']:.3f} s", fmt_rate(res["samples"] / res["seconds"]),
                 f"{res.get('peak_rss_mb', float('nan')):.0f} MB", f"{res['max_diff']:.1e}"])
    rep.emit("")
    return rep.text()


if __name__ == "__main__":
    main()
