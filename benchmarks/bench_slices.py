"""Sliced evaluation: cost vs number of slices, and peers: ``python -m benchmarks.bench_slices``.

Workloads (binary labels, batches of 100k rows, seeded):

1. **slice count vs cost**: ``Sliced(F1())`` (confusion counts: one scatter-add over (slice,
   cell)) and ``Sliced(AUROC())`` (exact buffers: one argsort, each slice its block) with
   1, 10, 100, 1,000 and 10,000 integer slice keys, against the unsliced update of the same
   metric on the same batch (ratio = sliced / unsliced; the issue's target: <= 3x for F1 with
   200 keys);
2. **key types**: 200 keys as small integers, as strings (factorised: hash + one sort), and as
   a Python object array (wall time, and the least thread CPU time, which a loaded machine
   inflates less);
3. **peers** (the whole evaluation of 100k rows with 200 slices, update + compute of every
   slice): Fairlearn's ``MetricFrame(f1_score)`` and a pandas ``groupby`` + scikit-learn loop
   per slice, against ``Sliced(F1())`` (target: >= 10x faster).

Every timing is the median of interleaved runs (all candidates of a row alternate, so machine
load hits them alike); values are checked against scikit-learn. Timings never go into tests.
"""

from __future__ import annotations

import argparse
import functools
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from benchmarks._harness import (
    Report,
    env_header,
    fmt_ratio,
    markdown_table,
    measure_interleaved,
    single_thread,
)

N = 100_000
COUNTS = (1, 10, 100, 1_000, 10_000)


def make(n: int, slices: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    p = np.where(rng.random(n) < 0.8, y, 1 - y)
    score = np.clip(0.35 * y + 0.65 * rng.random(n), 0, 1)
    keys = rng.integers(0, slices, n)
    return y, p, score, keys


def _ms(t: Any) -> str:
    return f"{t.median * 1e3:.3f} ms"


def _one_count(s: int, repeat: int) -> list[str]:
    import streammetrics as sm

    y, p, score, keys = make(N, s)
    f1, sf1 = sm.F1(), sm.Sliced(sm.F1())
    t_f1, t_sf1 = measure_interleaved([lambda: f1.update(y, p),
                                       lambda: sf1.update(y, p, slices=keys)], repeat=repeat)
    auc, sauc = sm.AUROC(), sm.Sliced(sm.AUROC())
    t_auc, t_sauc = measure_interleaved([lambda: auc.reset().update(y, score),
                                         lambda: sauc.reset().update(y, score, slices=keys)],
                                        repeat=max(1, repeat // 3))
    return [f"{s:,}", _ms(t_f1), _ms(t_sf1), fmt_ratio(t_sf1.median / t_f1.median),
            _ms(t_auc), _ms(t_sauc), fmt_ratio(t_sauc.median / t_auc.median),
            f"{sf1.nbytes / 1e3:,.1f} kB"]


def slice_counts(repeat: int, counts: tuple[int, ...]) -> str:
    rows = [_one_count(s, repeat) for s in counts]
    head = ["slices", "F1 update", "Sliced(F1) update", "ratio", "AUROC update",
            "Sliced(AUROC) update", "ratio", "Sliced(F1) nbytes"]
    return markdown_table(head, rows, align="rrrrrrrr")


def key_types(repeat: int) -> str:
    import streammetrics as sm

    y, p, _, keys = make(N, 200)
    names = np.array([f"segment-{i:03d}" for i in range(200)])
    as_str = names[keys]
    as_obj = as_str.astype(object)
    f1 = sm.F1()
    cands: list[tuple[str, Callable[[], Any]]] = [("unsliced F1", lambda: f1.update(y, p))]
    for label, k in (("int keys", keys), ("str keys (<U11)", as_str), ("object keys", as_obj)):
        s = sm.Sliced(sm.F1())
        cands.append((label, functools.partial(s.update, y, p, slices=k)))
    times = measure_interleaved([c for _, c in cands], repeat=repeat)
    cpu = _cpu_times([c for _, c in cands], repeat)
    base, cpu_base = times[0].median, cpu[0]
    rows = [[label, _ms(t), fmt_ratio(t.median / base), f"{c * 1e3:.3f} ms", fmt_ratio(c / cpu_base)]
            for (label, _), t, c in zip(cands, times, cpu, strict=True)]
    return markdown_table(["200 slices, batch 100k", "update", "vs unsliced F1", "CPU time",
                           "CPU vs unsliced"], rows, align="lrrrr")


def _cpu_times(calls: list[Callable[[], Any]], repeat: int) -> list[float]:
    """The least thread CPU time per call of each candidate over ``repeat`` alternating rounds
    (a loaded machine steals wall time, not the CPU time a call needs)."""
    import time

    best = [float("inf")] * len(calls)
    for _ in range(repeat):
        for i, call in enumerate(calls):
            t0 = time.thread_time()
            call()
            best[i] = min(best[i], time.thread_time() - t0)
    return best


def peers(repeat: int) -> tuple[str, list[str]]:
    from sklearn.metrics import f1_score

    import streammetrics as sm

    y, p, _, keys = make(N, 200)
    notes: list[str] = []

    def ours() -> dict[Any, float]:
        return sm.Sliced(sm.F1()).update(y, p, slices=keys).compute()

    cands: list[tuple[str, Callable[[], Any]]] = [("streammetrics Sliced(F1)", ours)]
    try:
        import pandas as pd

        df = pd.DataFrame({"y": y, "p": p, "k": keys})

        def pandas_loop() -> dict[Any, float]:
            return {k: f1_score(g["y"], g["p"]) for k, g in df.groupby("k")}

        cands.append(("pandas groupby + sklearn f1_score", pandas_loop))
    except ImportError:
        notes.append("pandas not installed: its row is missing")
    try:
        from fairlearn.metrics import MetricFrame

        def fairlearn() -> Any:
            return MetricFrame(metrics=f1_score, y_true=y, y_pred=p, sensitive_features=keys).by_group

        cands.append(("Fairlearn MetricFrame(f1_score)", fairlearn))
    except ImportError:
        notes.append("fairlearn not installed: its row is missing")
    expect = {k: f1_score(y[keys == k], p[keys == k]) for k in range(200)}
    got = ours()
    worst = max(abs(got[k] - v) for k, v in expect.items())
    notes.append(f"largest |Sliced(F1) - scikit-learn| over the 200 slices: {worst:.1e}")
    times = measure_interleaved([c for _, c in cands], repeat=max(1, repeat // 3))
    base = times[0].median
    rows = [[label, _ms(t), fmt_ratio(t.median / base)] for (label, _), t in zip(cands, times, strict=True)]
    return markdown_table(["100k rows, 200 slices, update + compute", "time", "vs streammetrics"],
                          rows, align="lrr"), notes


def main(argv: list[str] | None = None) -> str:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.bench_slices", description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="fewer repeats and slice counts")
    ap.add_argument("--repeat", type=int, default=None)
    args = ap.parse_args(argv)
    single_thread()
    repeat = args.repeat or (5 if args.quick else 15)
    counts = (1, 100, 10_000) if args.quick else COUNTS
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rep = Report()  # each table printed the moment it is measured; a failing one says so
        rep.emit("## Sliced evaluation (`benchmarks/bench_slices.py`)", "",
                 env_header(("numpy", "scikit-learn", "pandas", "fairlearn")), "")
        with rep.section("slice count vs cost"):
            rep.emit("### Slice count vs cost (batch 100k, integer keys)", "", slice_counts(repeat, counts), "")
        with rep.section("key types"):
            rep.emit("### Key types (200 slices, batch 100k)", "", key_types(repeat), "")
        with rep.section("against Fairlearn and pandas + scikit-learn"):
            table, notes = peers(repeat)
            rep.emit("### Against Fairlearn and pandas + scikit-learn", "", table, "",
                     *[f"- {n}" for n in notes], "")
    return rep.text()


if __name__ == "__main__":
    main()
