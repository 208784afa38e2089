"""Multiclass confusion metrics with 10^4 to 10^5 classes: time and peak memory against scikit-learn.

Workload (seeded): ``--samples`` rows (default 1e6) of ``C`` classes (``--classes``, default 1e4,
3e4 and 1e5): actual classes uniform over C, the prediction right half of the time and uniform
otherwise. Functions: ``accuracy_score``, ``f1_score(average="macro")``,
``balanced_accuracy_score``, ``precision_recall_fscore_support`` (per class),
``matthews_corrcoef`` and ``cohen_kappa_score`` of :mod:`streammetrics.functional` beside their
``sklearn.metrics`` namesakes, and the accumulator ``F1(num_classes=C, average="macro")`` (one
``update`` of the whole batch and a ``compute``) beside ``f1_score``. ``--before PATH`` adds the
same calls on another checkout of the package (e.g. the version before the sparse confusion
state: ``git worktree add /tmp/before <commit>``).

Each (function, classes, implementation) runs once in its own subprocess with an address-space
limit (``--mem-limit-mb``, default 75 % of the memory available): the time of the call, and its
peak memory = the process's peak resident set during the call (``VmHWM``, reset just before it)
minus the resident set before it (the inputs and imports excluded). A call that fails says how
(out of memory, the error) instead of a number. Values are checked against scikit-learn's
(relative difference above 1e-12 prints a warning). Ratios: time and memory over scikit-learn's.

Run: ``python -m benchmarks.bench_many_classes [--classes 10000 30000 100000] [--samples N]
[--before PATH] [--only f1_score,...] [--quick]``.
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from typing import Any

import numpy as np

from benchmarks._harness import env_header, machine_line, markdown_table, run_limited

FUNCTIONS = ("accuracy_score", "f1_score", "balanced_accuracy_score", "precision_recall_fscore_support",
             "matthews_corrcoef", "cohen_kappa_score", "F1.update")


def make_data(n: int, k: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """``n`` actual classes uniform over ``k`` and predictions right half of the time."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, k, n)
    p = np.where(rng.random(n) < 0.5, y, rng.integers(0, k, n))
    return y, p


def _call(name: str, impl: str, y: np.ndarray, p: np.ndarray, k: int) -> Any:
    if impl == "scikit-learn":
        import sklearn.metrics as m
    else:
        import streammetrics.functional as m  # type: ignore[no-redef]
    if name == "F1.update":
        if impl == "scikit-learn":
            return m.f1_score(y, p, average="macro")
        import streammetrics as sm

        return sm.F1(num_classes=k, average="macro").update(y, p).compute()
    if name == "f1_score":
        return m.f1_score(y, p, average="macro")
    if name == "precision_recall_fscore_support":
        return m.precision_recall_fscore_support(y, p)[2]  # the per-class F-scores
    return getattr(m, name)(y, p)


def _rss_mb(field: str) -> float:
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024
    return float("nan")  # pragma: no cover


def case(name: str, impl: str, k: int, n: int, before: str | None = None) -> dict[str, Any]:
    """One call in this process: seconds, extra peak memory (MB) and the value (a list)."""
    if impl == "before":
        assert before
        sys.path.insert(0, before)
    import sklearn.metrics  # noqa: F401 - imports outside the measured region

    import streammetrics.functional  # noqa: F401

    y, p = make_data(n, k)
    try:
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")  # reset the peak resident set (VmHWM)
    except OSError:  # pragma: no cover - not Linux
        pass
    base = _rss_mb("VmRSS")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t0 = time.perf_counter()
        value = _call(name, impl, y, p, k)
        seconds = time.perf_counter() - t0
    import streammetrics

    return {"seconds": seconds, "extra_mb": _rss_mb("VmHWM") - base,
            "value": np.ravel(np.asarray(value, dtype=np.float64)).tolist(), "module": streammetrics.__file__}


def _cell(res: dict[str, Any], ref: dict[str, Any] | None) -> tuple[str, str, str, str]:
    if res.get("status") != "ok":
        return (res.get("status", "?")[:70], "", "", "")
    t, mem = f"{res['seconds']:.2f} s", f"{max(res['extra_mb'], 0.0):.0f} MB"
    if ref is None or ref.get("status") != "ok":
        return (t, mem, "", "")
    return (t, mem, f"{res['seconds'] / ref['seconds']:.2f}x",
            f"{max(res['extra_mb'], 1.0) / max(ref['extra_mb'], 1.0):.2f}x")


def main(argv: list[str] | None = None) -> str:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--classes", type=int, nargs="*", default=[10_000, 30_000, 100_000])
    ap.add_argument("--samples", type=int, default=1_000_000)
    ap.add_argument("--before", default=None, help="path of another checkout to compare with")
    ap.add_argument("--only", default="", help="comma-separated function names")
    ap.add_argument("--mem-limit-mb", type=int, default=None)
    ap.add_argument("--timeout", type=float, default=900.0)
    ap.add_argument("--quick", action="store_true", help="1e5 samples of 1e4 classes")
    args = ap.parse_args(argv)
    if args.quick:
        args.classes, args.samples = [10_000], 100_000
    names = [f for f in FUNCTIONS if not args.only or f in args.only.split(",")]
    impls = ["scikit-learn", "streammetrics"] + (["before"] if args.before else [])
    rows, warnings_out = [], []
    for k in args.classes:
        for name in names:
            results = {impl: run_limited("benchmarks.bench_many_classes:case",
                                         {"name": name, "impl": impl, "k": k, "n": args.samples,
                                          "before": args.before},
                                         mem_limit_mb=args.mem_limit_mb, timeout=args.timeout)
                       for impl in impls}
            ref = results["scikit-learn"]
            row = [name, f"{k:,}"]
            for impl in impls[1:]:
                res = results[impl]
                row += list(_cell(res, ref))
                if res.get("status") == "ok" and ref.get("status") == "ok":
                    a, b = np.array(res["value"]), np.array(ref["value"])
                    diff = float(np.max(np.abs(a - b) / np.maximum(np.abs(b), 1e-300))) if a.shape == b.shape \
                        else float("inf")
                    if diff > 1e-12:
                        warnings_out.append(f"WARNING: {impl} {name} C={k}: relative difference {diff:.3g}")
            row += list(_cell(ref, None)[:2])
            rows.append(row)
            print(" | ".join(row), flush=True)
    headers = ["function", "classes"]
    for impl in impls[1:]:
        headers += [f"{impl} time", f"{impl} memory", "time ratio", "memory ratio"]
    headers += ["scikit-learn time", "scikit-learn memory"]
    text = "\n".join([
        f"## bench_many_classes: {args.samples:,} samples, C classes",
        "",
        env_header(("numpy", "scikit-learn", "streammetrics")),
        "",
        markdown_table(headers, rows, "ll" + "r" * (len(headers) - 2)),
        "",
        "Memory: the call's peak resident memory above the process's before it (inputs excluded); "
        "ratios over scikit-learn's (memory below 1 MB counts as 1 MB).",
        machine_line(),
        *warnings_out,
        "",
    ])
    print(text)
    return text


if __name__ == "__main__":
    main()
