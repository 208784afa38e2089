"""Whole-set regression reads: exact ``SpearmanCorrCoef``, ``KendallTau`` and
``MedianAbsoluteError`` against one ``np.argsort`` of each column and against scipy /
scikit-learn on the same arrays.

Run ``python -m benchmarks.bench_regression_rank [--n N] [--rounds R] [--quick]``.

One seeded stream of N (y_true, y_pred) pairs (continuous, with ties: values rounded to 1e-4) fed
to each metric in batches of 1e6; the time of a metric is the CPU time (``time.process_time``,
best of R) of ``update`` of every batch plus one ``compute()``, as a one-shot evaluation does.
The reference is ``np.argsort`` (numpy's default vectorised sort) of y_true plus that of y_pred:
a rank correlation cannot sort less. Kendall's compiled inversion count is warmed (compiled)
outside the timed region. Every value is checked against its peer (a difference above 1e-9
prints a warning).
"""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any

import numpy as np

if __package__ in (None, ""):  # ``python benchmarks/bench_regression_rank.py``
    sys.path.insert(0, __import__("os").path.dirname(__import__("os").path.dirname(__file__)))

from benchmarks._harness import Report, env_header  # noqa: E402

SEED = 20261205
BATCH = 1_000_000


def _best_cpu(fn: Any, rounds: int) -> tuple[float, Any]:
    best, value = float("inf"), None
    for _ in range(rounds):
        t0 = time.process_time()
        value = fn()
        best = min(best, time.process_time() - t0)
    return best, value


def _streamed(cls: Any, y: np.ndarray, p: np.ndarray) -> Any:
    m = cls()
    for i in range(0, y.shape[0], BATCH):
        m.update(y[i:i + BATCH], p[i:i + BATCH])
    return m.compute()


def main(argv: list[str] | None = None) -> str:
    """Print and return the markdown table of CPU times."""
    import scipy.stats as ss
    from sklearn.metrics import median_absolute_error

    import streammetrics as sm

    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--n", type=int, default=10_000_000)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--quick", action="store_true", help="n = 1e6, 1 round")
    args = ap.parse_args(argv)
    n, rounds = (1_000_000, 1) if args.quick else (args.n, args.rounds)
    rng = np.random.default_rng(SEED)
    y = np.round(rng.normal(size=n), 4)
    p = np.round(0.7 * y + rng.normal(size=n) * 0.7, 4)
    _streamed(sm.KendallTau, y[:5000], p[:5000])  # compile numba's kernel outside the timing

    rep = Report()  # each row printed the moment it is measured
    rep.emit(env_header(), "", f"n = {n} pairs (ties: 4 decimals), batches of {BATCH}, best of {rounds}", "")
    add = rep.rows(["implementation", "value", "CPU s (best)", "x argsort", "check"])
    t_sort, _ = _best_cpu(lambda: (np.argsort(y), np.argsort(p)), rounds)
    add(["np.argsort(y_true) + np.argsort(y_pred)", "-", f"{t_sort:.2f}", "1.00", ""])
    cases = [
        ("SpearmanCorrCoef", sm.SpearmanCorrCoef, lambda: ss.spearmanr(y, p).statistic, "scipy.stats.spearmanr"),
        ("KendallTau", sm.KendallTau, lambda: ss.kendalltau(y, p).statistic, "scipy.stats.kendalltau"),
        ("MedianAbsoluteError", sm.MedianAbsoluteError, lambda: median_absolute_error(y, p),
         "sklearn median_absolute_error"),
    ]
    for name, cls, peer, peer_name in cases:
        t_ours, ours = _best_cpu(lambda cls=cls: _streamed(cls, y, p), rounds)
        t_peer, theirs = _best_cpu(peer, rounds)
        check = "" if abs(ours - theirs) <= 1e-9 * max(1.0, abs(theirs)) else f"WARNING: {ours} vs {theirs}"
        if check:
            print(check, file=sys.stderr)
        add([f"streammetrics {name}", f"{ours:.12g}", f"{t_ours:.2f}", f"{t_ours / t_sort:.2f}", check])
        add([peer_name, f"{theirs:.12g}", f"{t_peer:.2f}", f"{t_peer / t_sort:.2f}", ""])
    rep.emit("")
    return rep.text()


if __name__ == "__main__":
    main()
