"""Quantile calibration readouts: ``compute()`` of ``CalibrationError`` / ``CalibrationCurve``
with ``strategy="quantile"``, exact (sorted buffer) and bounded (``max_bytes=``).

Run ``python -m benchmarks.bench_quantile_readout [--n N] [--rounds R]``.

One process, one seeded stream of N binary probabilities (unit weights, and a weighted
variant) fed once per metric; the time is the best CPU time (``time.process_time``) of R
``compute()`` calls on the filled state, so that load from other processes inflates it as
little as possible. Only the readout is timed (``update`` is the same for every layout).
"""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any

import numpy as np

if __package__ in (None, ""):  # ``python benchmarks/bench_quantile_readout.py``
    sys.path.insert(0, __import__("os").path.dirname(__import__("os").path.dirname(__file__)))

from benchmarks._harness import env_header, markdown_table  # noqa: E402

SEED = 20261125


def _best_cpu(fn: Any, rounds: int) -> float:
    best = float("inf")
    for _ in range(rounds):
        t0 = time.process_time()
        fn()
        best = min(best, time.process_time() - t0)
    return best


def main(argv: list[str] | None = None) -> str:
    """Print and return the markdown table of readout times."""
    import streammetrics as sm

    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--n", type=int, default=1_000_000)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--quick", action="store_true", help="n = 100k, 3 rounds")
    args = ap.parse_args(argv)
    n, rounds = (100_000, 3) if args.quick else (args.n, args.rounds)
    rng = np.random.default_rng(SEED)
    p = rng.random(n)
    y = (rng.random(n) < p).astype(np.int64)
    w = rng.random(n) * 2.0
    rows = []
    for name, cls in (("CalibrationError", sm.CalibrationError), ("CalibrationCurve", sm.CalibrationCurve)):
        layouts: tuple[tuple[str, dict[str, Any]], ...] = (("exact", {}), ("bounded 1 MiB", {"max_bytes": 1 << 20}))
        for layout, kw in layouts:
            for weighted in (False, True):
                m = cls(strategy="quantile", n_bins=10, **kw)
                m.update(y, p, sample_weight=w if weighted else None)
                m.compute()  # the first read consolidates the buffer
                t = _best_cpu(m.compute, rounds)
                rows.append([name, layout, "yes" if weighted else "no", f"{t * 1e3:.1f}"])
    table = markdown_table(["metric", "state", "weighted", "compute CPU ms (best)"], rows)
    out = f"{env_header()}\n\nn = {n}, best of {rounds}\n\n{table}\n"
    print(out)
    return out


if __name__ == "__main__":
    main()
