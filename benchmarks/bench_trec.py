"""``streammetrics trec`` (trec_eval's official measure set, files on disk to numbers) against
pytrec_eval and ranx on the same TREC files.

Workload: Q queries x L retrieved documents (default 100,000 x 100: a 10M-line run), qrels with
about 30 judged documents per query (grades 0..3, 40 % of them retrieved, the rest judged but
not retrieved), scores distinct integers per query (exact in float32, so no tool's tie-breaking
or score rounding matters and all must agree). Every tool runs in its own fresh subprocess (one
thread) and does the whole job from the two files: read them, rank, evaluate, average.

* streammetrics: ``evaluate_files(qrels, run, ["official"])`` -- trec_eval's official set (map,
  gm_map, Rprec, bpref, recip_rank, iprec_at_recall x 11, P x 9, counts), the run streamed query
  by query; also the shuffled run (its lines in random order: grouped by the external sort).
* pytrec_eval: ``parse_qrel`` / ``parse_run`` (its own readers, into dicts) and
  ``RelevanceEvaluator(qrels, official measures).evaluate(run)``, then the means.
* ranx: ``Qrels.from_file`` / ``Run.from_file`` and ``evaluate`` of the official measures it has
  (map, mrr, r-precision, bpref, precision@5..1000; no gm_map nor iprec_at_recall), its numba
  compilation included (a fresh process pays it; the warm second call is shown too).

Timing: ``--rounds R`` rounds in alternation (streammetrics, pytrec_eval, ranx, ... in each round,
each a fresh subprocess), best of the rounds: wall seconds and the child's CPU seconds (import
included; the robust number on a shared machine). Memory: each child's peak resident set, at two
run sizes: streammetrics stays flat (the qrels as numpy arrays plus one block of run lines), the
peers hold the whole run. Values are cross-checked (map, P_10, bpref, recip_rank, Rprec: every
tool within 1e-9 of streammetrics), a mismatch is printed.

Run: ``python -m benchmarks.bench_trec [--queries 100000] [--docs 100] [--mem-queries 25000]
[--rounds 3] [--tools streammetrics,pytrec_eval,ranx,"streammetrics (shuffled run)"]``.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from typing import Any

import numpy as np

from benchmarks import _harness as h

TOOLS = ("streammetrics", "streammetrics (shuffled run)", "pytrec_eval", "ranx")
PYTREC_OFFICIAL = {"map", "gm_map", "Rprec", "bpref", "recip_rank", "iprec_at_recall", "P", "num_ret",
                   "num_rel", "num_rel_ret"}  # fmt: skip
CUTS = (5, 10, 15, 20, 30, 100, 200, 500, 1000)
CHECK = ("map", "P_10", "bpref", "recip_rank", "Rprec")
_RANX = {"map": "map", "mrr": "recip_rank", "r-precision": "Rprec", "bpref": "bpref",
         **{f"precision@{k}": f"P_{k}" for k in CUTS}}  # fmt: skip


def shuffle_file(src: str, dst: str, seed: int = 1) -> str:
    """Write the lines of ``src`` to ``dst`` in a seeded random order; returns ``dst``."""
    with open(src) as fh:
        lines = fh.readlines()
    rng = np.random.default_rng(seed)
    with open(dst, "w") as fh:
        fh.writelines(lines[k] for k in rng.permutation(len(lines)))
    return dst


def make_files(directory: str, queries: int, docs: int, seed: int = 0) -> tuple[str, str]:
    """Write (and return the paths of) seeded qrels and run files; see the module docstring."""
    qrels_path = os.path.join(directory, f"qrels-{queries}.txt")
    run_path = os.path.join(directory, f"run-{queries}.txt")
    rng = np.random.default_rng(seed)
    block = 10000
    with open(qrels_path, "w") as qf, open(run_path, "w") as rf:
        for start in range(0, queries, block):
            n = min(block, queries - start)
            judged_ret = rng.random((n, docs)) < 0.12  # ~12 judged among the retrieved
            grades = rng.choice(4, p=[0.5, 0.25, 0.15, 0.10], size=(n, docs))
            extra = rng.integers(10, 30, size=n)  # judged, not retrieved
            order = np.argsort(rng.random((n, docs)), axis=1)  # rank -> document
            qlines, rlines = [], []
            for i in range(n):
                q = f"q{start + i}"
                for d in np.flatnonzero(judged_ret[i]).tolist():
                    qlines.append(f"{q} 0 d{d} {int(grades[i, d])}\n")
                for j in range(int(extra[i])):
                    qlines.append(f"{q} 0 x{j} {int(rng.integers(0, 4))}\n")
                for r, d in enumerate(order[i].tolist()):
                    rlines.append(f"{q} Q0 d{d} {r + 1} {docs - r} bench\n")
            qf.writelines(qlines)
            rf.writelines(rlines)
    return qrels_path, run_path


def case(tool: str, qrels: str, run: str) -> dict[str, Any]:
    """One tool from files to the official means (in a fresh subprocess: see ``run_limited``)."""
    t0, c0 = time.perf_counter(), time.process_time()
    warm = None
    if tool.startswith("streammetrics"):
        from streammetrics.trec import evaluate_files

        with open(os.devnull, "w") as sink:
            res = evaluate_files(qrels, run, ["official"], out=sink)
        values = {k: float(v) for k, v in res.items() if isinstance(v, (int, float))}
    elif tool == "pytrec_eval":
        import pytrec_eval

        with open(qrels) as fh:
            qd = pytrec_eval.parse_qrel(fh)
        with open(run) as fh:
            rd = pytrec_eval.parse_run(fh)
        per_q = pytrec_eval.RelevanceEvaluator(qd, PYTREC_OFFICIAL).evaluate(rd)
        names = next(iter(per_q.values())).keys()
        values = {n: float(np.mean([v[n] for v in per_q.values()])) for n in names}
    elif tool == "ranx":
        from ranx import Qrels, Run, evaluate

        qr = Qrels.from_file(qrels, kind="trec")
        rn = Run.from_file(run, kind="trec")
        got = evaluate(qr, rn, list(_RANX))
        values = {_RANX[k]: float(v) for k, v in got.items()}
        t1 = time.perf_counter()
        evaluate(qr, rn, list(_RANX))
        warm = time.perf_counter() - t1
    else:
        raise ValueError(f"tool: unknown {tool!r}")
    cpu = time.process_time() - c0
    return {"seconds": time.perf_counter() - t0, "cpu_seconds": cpu, "warm_evaluate": warm, "values": values}


def main(argv: list[str] | None = None) -> str:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    ap.add_argument("--queries", type=int, default=100_000)
    ap.add_argument("--docs", type=int, default=100)
    ap.add_argument("--mem-queries", type=int, default=25_000, help="the smaller size of the memory test")
    ap.add_argument("--tools", default=",".join(TOOLS))
    ap.add_argument("--mem-limit-mb", type=int, default=None)
    ap.add_argument("--timeout", type=float, default=3600.0)
    ap.add_argument("--rounds", type=int, default=3, help="rounds in alternation at --queries (best kept)")
    args = ap.parse_args(argv)
    tools = [t for t in args.tools.split(",") if t]
    limit = args.mem_limit_mb or h.default_mem_limit_mb()
    results: dict[tuple[str, int], dict[str, Any]] = {}
    machine = h.machine_line()  # the load when the runs start
    rep = h.Report()  # each run printed the moment it finishes, then the table
    with tempfile.TemporaryDirectory(prefix="bench-trec-") as tmp:
        for q in sorted({args.mem_queries, args.queries}):
            qrels, run = make_files(tmp, q, args.docs)
            spill = "streammetrics (shuffled run)" in tools
            shuffled = shuffle_file(run, run + ".shuffled") if spill else run
            rounds = max(args.rounds, 1) if q == args.queries else 1
            for _ in range(rounds):
                for tool in tools:
                    if "shuffled" in tool and (tool, q) in results:
                        continue  # the external sort: one round
                    path = shuffled if "shuffled" in tool else run
                    r = h.run_limited("benchmarks.bench_trec:case",
                                      {"tool": tool, "qrels": qrels, "run": path},
                                      mem_limit_mb=limit, timeout=args.timeout)  # fmt: skip
                    wall, cpu = r.get("seconds", float("nan")), r.get("cpu_seconds", float("nan"))
                    rep.emit(f"- {tool}, {q} queries: {r.get('status')} {wall:.1f} s (CPU {cpu:.1f} s), "
                             f"peak {r.get('peak_rss_mb')} MB")  # each run as it finishes; fmt: skip
                    best = results.get((tool, q))
                    if best is None or "seconds" not in best:
                        results[(tool, q)] = r
                    elif "seconds" in r:
                        for key in ("seconds", "cpu_seconds"):
                            best[key] = min(best[key], r[key])
                        best["peak_rss_mb"] = max(best["peak_rss_mb"], r["peak_rss_mb"])
    ref = results.get(("streammetrics", args.queries), {}).get("values", {})
    notes = []
    for (tool, q), r in results.items():
        for name in CHECK:
            v = r.get("values", {}).get(name)
            want = results.get(("streammetrics", q), {}).get("values", {}).get(name)
            if v is not None and want is not None and abs(v - want) > 1e-9:
                notes.append(f"- WARNING: {tool} {name} = {v!r} at {q} queries, streammetrics {want!r}")
    base = results.get(("streammetrics", args.queries), {}).get("cpu_seconds")
    rows = []
    for tool in tools:
        big, small = results.get((tool, args.queries), {}), results.get((tool, args.mem_queries), {})
        secs, cpu = big.get("seconds"), big.get("cpu_seconds")
        ratio = h.fmt_ratio(cpu / base) if cpu and base else "-"
        warm = big.get("warm_evaluate")
        rows.append([tool, big.get("status", "-"), f"{secs:.1f}" if secs else "-",
                     f"{cpu:.1f}" if cpu else "-", ratio, f"{warm:.1f}" if warm else "-",
                     str(small.get("peak_rss_mb", "-")),
                     str(big.get("peak_rss_mb", "-"))])  # fmt: skip
    lines = [
        f"## bench_trec: trec_eval's official measures, {args.queries:,} queries x {args.docs} documents",
        "",
        f"{machine} Best of {args.rounds} rounds in alternation (the shuffled run: one round).",
        "",
        h.markdown_table(["tool", "status", "wall s (files to means)", "CPU s", "CPU x streammetrics",
                          "warm evaluate s", f"peak RSS MB ({args.mem_queries:,} q)",
                          f"peak RSS MB ({args.queries:,} q)"], rows),  # fmt: skip
        "",
        f"Values checked ({', '.join(CHECK)}): "
        + ("every tool that ran agrees with streammetrics within 1e-9." if not notes and ref else "see warnings."),
        *notes,
    ]
    rep.emit("", *lines, "")
    return rep.text()


if __name__ == "__main__":
    main()
