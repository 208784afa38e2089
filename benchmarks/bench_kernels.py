"""Each compiled kernel (the ``fast`` extra: numba) against its numpy twin, on the same data, by size.

Run ``python -m benchmarks.bench_kernels [--sizes 1e3,1e4,...] [--rounds 5] [--kernels ranks,ap]
[--target 0.03] [--quick]`` (``--quick``: sizes 1e3 to 1e6 by decades, 3 rounds; the full run
takes ~6 minutes on 2 shared cores).

For every dispatch point of :data:`streammetrics._scores.exact.merge_count.MIN_SIZES` (the
call sites that choose between a compiled kernel and numpy), the same call is timed on the same
data on both paths, only that dispatch point switched (:func:`compiled_kernels` with
``sizes={kernel: 0}`` and every other kernel kept on numpy), numba loaded and warm beforehand:

* ``rank_left`` (``runs.rank_left``), ``ranks`` (``runs._left_right``), ``count2``
  (``runs.count2``, unweighted): ``m`` sorted needles in a sorted run of ``n`` scores (with its
  coarse index from ``runs.COARSE_MIN``), in three cases: *sparse* (``m = n / 1000``, at least
  8: a batch's positives in a large negative run), *dense* (``m = n / 10``), *ties* (dense, the
  scores rounded to 1/64: many needles equal to stored scores);
* ``merge_back``: a run of ``m`` merged into one of ``n`` already grown in place (the numpy twin:
  the copy in then a stable sort, ``runs.merge_into_last``), sparse / dense / ties;
* ``add`` (``PositiveCounts.add``): a batch of ``m`` new samples (10 % positives) into the average
  precision read cache of ``n`` (a fresh copy per call), sparse / dense / ties;
* ``ap`` (``PositiveCounts.average_precision``): the read of a cache of ``n`` samples, plain / ties;
* ``inversions`` (``regression._ranks.inversions``, Kendall's tau): ``n`` int64 ranks, plain (all
  distinct) / ties (``n / 4`` distinct), up to 1e6;
* ``sort`` (``runs.sort_batch``: a batch's float64 scores sorted in place, the compiled radix
  sort against numpy's ``ndarray.sort``): ``n`` normal scores, *plain* / *ties* (1/64 steps;
  -0.0 made 0.0: a batch holding -0.0 is numpy's on both paths) / *unit* (uniform in [0, 1):
  probabilities), a fresh copy per call, up to ``runs._RADIX_MAX`` (larger batches are numpy's
  on both paths); ``--kernels sort --sizes 128,256,512,...`` times the sizes around its threshold.

Each cell is ``--rounds`` rounds; a round times each path in turn (the order alternating) for
as many calls as take about ``--target`` seconds (at least one), untimed preparation (copies)
outside the clock. Printed per cell: the median over the rounds of the ratio numpy / compiled
CPU time (``time.process_time``: > 1 means the compiled path is faster), its range, and the
median CPU and wall microseconds per call of each path (the machine is shared: wall above CPU
is time spent waiting). The load average is printed before and after. The thresholds in
``MIN_SIZES`` are the smallest size from which every case's median ratio stays above 1.
"""

from __future__ import annotations

import argparse
import copy
import os
import statistics
import sys
import time
from collections.abc import Callable

import numpy as np

if __package__ in (None, ""):
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from benchmarks._harness import Report, machine_line  # noqa: E402
from streammetrics._scores.exact import runs  # noqa: E402
from streammetrics._scores.exact.merge_count import MIN_SIZES, compiled_kernels, kernels  # noqa: E402
from streammetrics._scores.positive_counts import PositiveCounts  # noqa: E402
from streammetrics.regression import _ranks  # noqa: E402

_NEVER = 1 << 62
#: (prepare, run): ``prepare()`` builds one call's arguments (untimed), ``run(args)`` is timed.
Case = tuple[Callable[[], object], Callable[[object], object]]


def _scores(rng: np.random.Generator, n: int, ties: bool) -> np.ndarray:
    s = rng.standard_normal(n)
    return np.round(s * 64) / 64 if ties else s


def _needles(n: int, case: str) -> int:
    return max(8, n // 1000) if case == "sparse" else max(1, n // 10)


def case_search(kernel: str, n: int, case: str, rng: np.random.Generator) -> Case:
    """A ranking call of ``kernel`` (``rank_left``, ``ranks`` or ``count2``)."""
    ties = case == "ties"
    v = np.sort(_scores(rng, n, ties))
    x = np.sort(_scores(rng, _needles(n, case), ties))
    co = runs.coarse_index(v)
    fns: dict[str, Callable[[object], object]] = {
        "rank_left": lambda _: runs.rank_left(v, co, x),
        "ranks": lambda _: runs._left_right(v, co, x),
        "count2": lambda _: runs.count2(v, None, x, None, co),
    }
    return (lambda: None), fns[kernel]


def case_merge(n: int, case: str, rng: np.random.Generator) -> Case:
    """``runs.merge_into_last`` of a run of m into one of n (a fresh list holding a fresh copy)."""
    ties = case == "ties"
    a = np.sort(_scores(rng, n, ties))
    b = np.sort(_scores(rng, _needles(n, case), ties))

    def prepare() -> object:
        return [a.copy()]  # the list holds the only reference: grown in place

    return prepare, lambda lst: runs.merge_into_last(lst, b)  # type: ignore[arg-type]


def case_add(n: int, case: str, rng: np.random.Generator) -> Case:
    """``PositiveCounts.add`` of a batch of m into the cache of n samples (a copy per call)."""
    ties = case == "ties"
    m = _needles(n, case)
    y = rng.random(n + m) < 0.1
    s = _scores(rng, n + m, ties)
    pos, neg = np.sort(s[:n][y[:n]]), np.sort(s[:n][~y[:n]])
    new_pos, new_neg = np.sort(s[n:][y[n:]]), np.sort(s[n:][~y[n:]])
    group = runs.Group()
    group.push(neg, None, neg.shape[0])
    group.push(new_neg, None, new_neg.shape[0])
    base = PositiveCounts.from_sorted(pos, neg)

    return (lambda: copy.deepcopy(base)), lambda pc: pc.add(new_pos, new_neg, group)  # type: ignore[attr-defined]


def case_ap(n: int, case: str, rng: np.random.Generator) -> Case:
    """``PositiveCounts.average_precision`` of a cache of n samples (no pending thresholds)."""
    y = rng.random(n) < 0.1
    s = _scores(rng, n, case == "ties")
    pc = PositiveCounts.from_sorted(np.sort(s[y]), np.sort(s[~y]))
    return (lambda: None), lambda _: pc.average_precision()


def case_inversions(n: int, case: str, rng: np.random.Generator) -> Case:
    """Kendall's inversion count of n int64 ranks (all distinct, or n / 4 distinct)."""
    r = rng.permutation(n).astype(np.int64) if case == "plain" else rng.integers(0, max(1, n // 4), n)
    return (lambda: None), lambda _: _ranks.inversions(r, None)


def case_sort(n: int, case: str, rng: np.random.Generator) -> Case:
    """``runs.sort_batch`` of n float64 scores (a fresh unsorted copy per call, sorted in place)."""
    v = rng.random(n) if case == "unit" else _scores(rng, n, case == "ties") + 0.0  # no -0.0 (numpy's)
    return v.copy, runs.sort_batch  # type: ignore[return-value]


CASES: dict[str, tuple[tuple[str, ...], Callable[[int, str, np.random.Generator], Case]]] = {
    "rank_left": (("sparse", "dense", "ties"), lambda n, c, g: case_search("rank_left", n, c, g)),
    "ranks": (("sparse", "dense", "ties"), lambda n, c, g: case_search("ranks", n, c, g)),
    "count2": (("sparse", "dense", "ties"), lambda n, c, g: case_search("count2", n, c, g)),
    "merge_back": (("sparse", "dense", "ties"), case_merge),
    "add": (("sparse", "dense", "ties"), case_add),
    "ap": (("plain", "ties"), case_ap),
    "inversions": (("plain", "ties"), case_inversions),
    "sort": (("plain", "ties", "unit"), case_sort),
}
#: The largest size timed per kernel (the numpy inversion count of 1e7 takes seconds a call;
#: beyond ``runs._RADIX_MAX`` scores both paths of ``sort_batch`` are numpy's).
MAX_N = {"inversions": 1_000_000, "sort": runs._RADIX_MAX}


def _size(n: int) -> str:
    """``n`` as ``1e+03`` where that is exact, else its digits (``512``)."""
    text = f"{n:.0e}"
    return text if float(text) == n else str(n)


def _time(prepare: Callable[[], object], run: Callable[[object], object], calls: int) -> tuple[float, float]:
    """CPU and wall seconds of ``calls`` calls of ``run(prepare())`` (only ``run`` timed)."""
    cpu = wall = 0.0
    for _ in range(calls):
        args = prepare()
        c, w = time.process_time(), time.perf_counter()
        run(args)
        cpu += time.process_time() - c
        wall += time.perf_counter() - w
    return cpu, wall


def cell(kernel: str, n: int, case: str, rounds: int, target: float) -> dict[str, float]:
    """Time one (kernel, size, case) cell on both paths: the median ratio and per-call times."""
    prepare, run = CASES[kernel][1](n, case, np.random.default_rng(n))
    paths = {"numpy": {"sizes": {kernel: None}}, "numba": {"sizes": {kernel: 0}}}
    for p in paths.values():  # warm both (and the cache's first copy)
        with compiled_kernels(True, min_size=_NEVER, **p):  # type: ignore[arg-type]
            _time(prepare, run, 1)
    with compiled_kernels(True, min_size=_NEVER, sizes={kernel: 0}):
        c, _ = _time(prepare, run, 1)
    calls = max(1, min(10_000, int(target / max(c, 1e-6))))
    cpu: dict[str, list[float]] = {"numpy": [], "numba": []}
    wall: dict[str, list[float]] = {"numpy": [], "numba": []}
    for r in range(rounds):
        for name in (("numpy", "numba") if r % 2 == 0 else ("numba", "numpy")):
            with compiled_kernels(True, min_size=_NEVER, **paths[name]):  # type: ignore[arg-type]
                c, w = _time(prepare, run, calls)
            cpu[name].append(c / calls)
            wall[name].append(w / calls)
    ratios = [a / max(b, 1e-9) for a, b in zip(cpu["numpy"], cpu["numba"], strict=True)]
    return {"ratio": statistics.median(ratios), "lo": min(ratios), "hi": max(ratios),
            "np_cpu": statistics.median(cpu["numpy"]), "nb_cpu": statistics.median(cpu["numba"]),
            "np_wall": statistics.median(wall["numpy"]), "nb_wall": statistics.median(wall["numba"])}


def _load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def main(argv: list[str] | None = None) -> str:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", default="1e3,3e3,1e4,3e4,1e5,3e5,1e6,3e6,1e7")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--target", type=float, default=0.03)
    ap.add_argument("--kernels", default=",".join(CASES))
    ap.add_argument("--quick", action="store_true", help="sizes 1e3 to 1e6 by decades, 3 rounds")
    args = ap.parse_args(argv)
    if args.quick:
        args.sizes, args.rounds = "1e3,1e4,1e5,1e6", 3
    report = Report()
    if kernels() is None:
        report.emit("numba is not installed (the `fast` extra): nothing to compare.")
        return "\n".join(report.lines)
    sizes = [int(float(x)) for x in args.sizes.split(",")]
    report.emit(machine_line(), f"load before: {_load()} ({time.strftime('%Y-%m-%d %H:%M:%S', time.gmtime())} UTC)",
                "", "ratio = numpy CPU / compiled CPU per call (> 1: compiled faster), median "
                f"of {args.rounds} rounds [range]; us per call: CPU (wall)", "")
    add = report.rows(["kernel", "case", "n", "ratio", "range", "numpy us", "compiled us", "threshold now"],
                      "lllrlrrr")
    summary: dict[str, int | None] = {}
    for kernel in args.kernels.split(","):
        cases, _ = CASES[kernel]
        wins: dict[int, bool] = {}
        for n in sizes:
            if n > MAX_N.get(kernel, 1 << 62):
                continue
            for case in cases:
                with report.section(f"{kernel} {case} {n}"):
                    r = cell(kernel, n, case, args.rounds, args.target)
                    wins[n] = wins.get(n, True) and r["ratio"] > 1.0
                    add([kernel, case, _size(n), f"{r['ratio']:.2f}", f"{r['lo']:.2f}-{r['hi']:.2f}",
                         f"{1e6 * r['np_cpu']:.1f} ({1e6 * r['np_wall']:.1f})",
                         f"{1e6 * r['nb_cpu']:.1f} ({1e6 * r['nb_wall']:.1f})", MIN_SIZES[kernel]])
        # the smallest size from which every larger size wins in every case
        first: int | None = None
        for n in sorted(wins, reverse=True):
            if not wins[n]:
                break
            first = n
        summary[kernel] = first
    report.emit("", "smallest timed size from which the compiled path wins every case at every "
                "larger timed size (None: numpy wins somewhere at the largest):", "")
    report.table(["kernel", "measured", "MIN_SIZES now"],
                 [[k, v, MIN_SIZES[k]] for k, v in summary.items()])
    report.emit("", f"load after: {_load()} ({time.strftime('%H:%M:%S', time.gmtime())} UTC)")
    return "\n".join(report.lines)


if __name__ == "__main__":
    main()
