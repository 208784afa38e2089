"""Saving (``dumps``) and loading (``loads``) an exact AUROC state: CPU, wall and peak memory.

Workload (seeded): ``--n`` binary rows (score rounded to 1e-6, so ties; optional weights) fed to
one ``streammetrics.AUROC``; then ``dumps`` (what a Spark / Ray / Dask task does to ship its state
to the driver, inside ``trusted_states()`` as the engines do, and outside it as ``save`` does)
and ``loads`` of those bytes. Printed per step: wall and CPU seconds (``time.process_time``: the
whole process) and the peak of memory allocated during the step over what was allocated before it
(``tracemalloc``, which numpy reports its buffers to), in MB and as a multiple of the state's
score bytes (8 bytes a score), plus the time SHA-256 alone takes over the same bytes (the
checksum ``dumps`` writes and ``loads`` verifies).

Run: ``python -m benchmarks.bench_save_exact [--n 10000000] [--weighted] [--repeat 3] [--quick]``.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import hashlib
import time
import tracemalloc
from collections.abc import Callable
from typing import Any

import numpy as np

import streammetrics as sm
from streammetrics._core.metric import trusted_states

from ._harness import machine_line, markdown_table


def _state(n: int, weighted: bool) -> sm.AUROC:
    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, n)
    p = np.round(rng.random(n), 6)
    w = rng.random(n) + 0.5 if weighted else None
    return sm.AUROC().update(y, p, sample_weight=w)


def _step(fn: Callable[[], Any], repeat: int) -> tuple[float, float, float, Any]:
    """Best wall, best CPU (seconds) over ``repeat`` runs, peak extra MB of one traced run."""
    walls, cpus = [], []
    out = None
    for _ in range(repeat):
        w0, c0 = time.perf_counter(), time.process_time()
        out = fn()
        cpus.append(time.process_time() - c0)
        walls.append(time.perf_counter() - w0)
        del out
    tracemalloc.start()
    base = tracemalloc.get_traced_memory()[0]
    out = fn()
    peak = (tracemalloc.get_traced_memory()[1] - base) / 1e6
    tracemalloc.stop()
    return min(walls), min(cpus), peak, out


def main(argv: list[str] | None = None) -> str:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=10_000_000)
    ap.add_argument("--weighted", action="store_true")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--quick", action="store_true", help="1e6 scores, one run")
    args = ap.parse_args(argv)
    if args.quick:
        args.n, args.repeat = min(args.n, 1_000_000), 1
    acc = _state(args.n, args.weighted)
    state_mb = 8 * args.n / 1e6
    rows = []
    data = b""
    for label, ctx in (("trusted (engines)", trusted_states), ("untrusted (save)", contextlib.nullcontext)):
        with ctx():
            wall, cpu, peak, data = _step(lambda: sm.dumps(acc), args.repeat)
            rows.append([f"dumps, {label}", f"{wall:.3f}", f"{cpu:.3f}", f"{peak:.0f}",
                         f"{peak / state_mb:.1f}x"])
            wall, cpu, peak, back = _step(functools.partial(sm.loads, data, max_bytes=None), args.repeat)
            rows.append([f"loads, {label}", f"{wall:.3f}", f"{cpu:.3f}", f"{peak:.0f}",
                         f"{peak / state_mb:.1f}x"])
            assert back.compute() == acc.compute()
    w0, c0 = time.perf_counter(), time.process_time()
    hashlib.sha256(data).digest()
    rows.append(["sha256 of the bytes alone", f"{time.perf_counter() - w0:.3f}",
                 f"{time.process_time() - c0:.3f}", "0", "-"])
    text = "\n".join([
        f"## bench_save_exact: AUROC state of {args.n} scores"
        f"{' (weighted)' if args.weighted else ''}, {len(data) / 1e6:.0f} MB of bytes",
        "",
        machine_line(),
        "",
        markdown_table(["step", "wall s", "CPU s", "peak extra MB", "x score bytes"],
                       rows, align="lrrrr"),
    ])
    print(text)
    return text


if __name__ == "__main__":
    main()
