"""Retrieval over a query stream: NDCG@10 + MAP + MRR, streammetrics vs pytrec_eval, ranx and
torchmetrics on the same seeded data.

Workload: Q queries x L retrieved documents (default 100,000 x 100), graded relevance 0..3
(90 % non-relevant, so some queries have no relevant document), distinct scores per query (a
random permutation, so no tool's tie-breaking matters and all four should agree on every value:
each row says whether its three values equal streammetrics', compared in the run).
Every tool runs in its own fresh subprocess (one thread): the time covers what the tool needs from
the arrays on -- building its input structures (dicts for pytrec_eval and ranx, tensors for
torchmetrics) and evaluating -- and is also split into "build" and "evaluate". Data generation is
never timed. Memory: the peak resident set above the process's size after imports, at two query
counts; streammetrics streams the batches (the full data never exists at once), the peers need
all of it. Each row is printed as its tool finishes; a tool that fails says so in its row.

Run: ``python -m benchmarks.bench_retrieval [--queries 100000] [--docs 100] [--mem 10000,40000]``.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from typing import Any

import numpy as np

TOOLS = ("streammetrics", "streammetrics (1 query/update)", "pytrec_eval", "ranx", "torchmetrics")
BATCH = 5000  # queries per batch


def make_batch(b: int, n_queries: int, docs: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Batch ``b`` of the stream: grades (int64, (n, docs) flattened) and distinct scores."""
    rng = np.random.default_rng([seed, b])
    rel = rng.choice(4, p=[0.9, 0.05, 0.03, 0.02], size=n_queries * docs)
    scores = rng.permuted(np.tile(np.arange(docs, dtype=np.float64), (n_queries, 1)), axis=1).ravel()
    return rel, scores


def batches(queries: int, docs: int) -> Any:
    for b, start in enumerate(range(0, queries, BATCH)):
        n = min(BATCH, queries - start)
        rel, scores = make_batch(b, n, docs)
        yield start, n, rel, scores


def _rss_mb(field: str) -> float:
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith(field):
                return int(line.split()[1]) / 1024
    return float("nan")


def _reset_peak() -> None:
    try:  # Linux >= 4.0: writing 5 resets the peak RSS (VmHWM) of the process
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")
    except OSError:
        pass


# -- workers (each in its own subprocess) ------------------------------------------------------


def work_streammetrics(queries: int, docs: int, one_by_one: bool = False) -> dict[str, Any]:
    import streammetrics as sm

    ms = sm.MetricSet(ndcg=sm.NDCG(10), map=sm.MAP(), mrr=sm.MRR())
    ms.update([1, 0], [1.0, 0.0])  # warm-up, then reset
    ms.reset()
    base = _rss_mb("VmRSS")
    _reset_peak()
    spent = 0.0
    for _, n, rel, scores in batches(queries, docs):
        if one_by_one:
            r2, s2 = rel.reshape(n, docs), scores.reshape(n, docs)
            t = time.perf_counter()
            for i in range(n):
                ms.update(r2[i], s2[i])
            spent += time.perf_counter() - t
        else:
            qid = np.repeat(np.arange(n), docs)
            t = time.perf_counter()
            ms.update(rel, scores, query_ids=qid)
            spent += time.perf_counter() - t
    t = time.perf_counter()
    values = ms.compute()
    spent += time.perf_counter() - t
    return {
        "build": 0.0,
        "evaluate": spent,
        "values": values,
        "peak_mb": _rss_mb("VmHWM") - base,
        "state_bytes": ms.nbytes,
    }


def _trec_dicts(queries: int, docs: int) -> tuple[dict[str, Any], dict[str, Any], float]:
    """qrels/run dicts (built from each batch's arrays; only the dict building is timed)."""
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    names = [f"d{j}" for j in range(docs)]
    spent = 0.0
    for start, n, rel, scores in batches(queries, docs):
        t = time.perf_counter()
        r2, s2 = rel.reshape(n, docs).tolist(), scores.reshape(n, docs).tolist()
        for i in range(n):
            q = f"q{start + i}"
            ri = r2[i]
            judged = {names[j]: g for j, g in enumerate(ri) if g > 0}
            judged.setdefault(names[0], ri[0])  # every query judged (no relevant one is fine)
            qrels[q] = judged
            run[q] = dict(zip(names, s2[i], strict=True))
        spent += time.perf_counter() - t
    return qrels, run, spent


def work_pytrec_eval(queries: int, docs: int) -> dict[str, Any]:
    import pytrec_eval

    base = _rss_mb("VmRSS")
    _reset_peak()
    qrels, run, build = _trec_dicts(queries, docs)
    t = time.perf_counter()
    ev = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut_10", "map", "recip_rank"})
    res = ev.evaluate(run)
    values = {
        "ndcg": float(np.mean([v["ndcg_cut_10"] for v in res.values()])),
        "map": float(np.mean([v["map"] for v in res.values()])),
        "mrr": float(np.mean([v["recip_rank"] for v in res.values()])),
    }
    evaluate = time.perf_counter() - t
    return {"build": build, "evaluate": evaluate, "values": values, "peak_mb": _rss_mb("VmHWM") - base}


def work_ranx(queries: int, docs: int) -> dict[str, Any]:
    from ranx import Qrels, Run, evaluate

    evaluate(Qrels({"a": {"x": 1}}), Run({"a": {"x": 1.0, "y": 0.5}}), ["ndcg@10", "map", "mrr"])  # JIT
    base = _rss_mb("VmRSS")
    _reset_peak()
    qd, rd, build = _trec_dicts(queries, docs)
    qd = {q: {d: g for d, g in j.items() if g > 0} for q, j in qd.items()}
    t = time.perf_counter()
    qrels, run = Qrels(qd), Run(rd)
    build += time.perf_counter() - t
    t = time.perf_counter()
    res = evaluate(qrels, run, ["ndcg@10", "map", "mrr"])
    spent = time.perf_counter() - t
    values = {"ndcg": float(res["ndcg@10"]), "map": float(res["map"]), "mrr": float(res["mrr"])}
    return {"build": build, "evaluate": spent, "values": values, "peak_mb": _rss_mb("VmHWM") - base}


def work_torchmetrics(queries: int, docs: int) -> dict[str, Any]:
    import torch
    from torchmetrics.retrieval import RetrievalMAP, RetrievalMRR, RetrievalNormalizedDCG

    torch.set_num_threads(1)
    ndcg, map_, mrr = RetrievalNormalizedDCG(top_k=10), RetrievalMAP(), RetrievalMRR()
    base = _rss_mb("VmRSS")
    _reset_peak()
    build = spent = 0.0
    for start, n, rel, scores in batches(queries, docs):
        t = time.perf_counter()
        preds = torch.from_numpy(scores)
        target = torch.from_numpy(rel)
        idx = torch.arange(start, start + n).repeat_interleave(docs)
        build += time.perf_counter() - t
        t = time.perf_counter()
        ndcg.update(preds, target, indexes=idx)
        map_.update(preds, target > 0, indexes=idx)
        mrr.update(preds, target > 0, indexes=idx)
        spent += time.perf_counter() - t
    t = time.perf_counter()
    values = {"ndcg": float(ndcg.compute()), "map": float(map_.compute()), "mrr": float(mrr.compute())}
    spent += time.perf_counter() - t
    return {"build": build, "evaluate": spent, "values": values, "peak_mb": _rss_mb("VmHWM") - base}


def work_huge(queries: int, docs: int, chunk: int) -> dict[str, Any]:
    """All ``queries`` in memory; one ``update`` (``chunk=0``) or updates of ``chunk`` queries."""
    import streammetrics as sm

    ms = sm.MetricSet(ndcg=sm.NDCG(10), map=sm.MAP(), mrr=sm.MRR())
    ms.update([1, 0], [1.0, 0.0])  # warm-up, then reset
    ms.reset()
    rel, scores = make_batch(0, queries, docs)
    qid = np.repeat(np.arange(queries), docs)
    base = _rss_mb("VmRSS")
    _reset_peak()
    t = time.perf_counter()
    if chunk:
        for a in range(0, queries * docs, chunk * docs):
            b = a + chunk * docs
            ms.update(rel[a:b], scores[a:b], query_ids=qid[a:b])
    else:
        ms.update(rel, scores, query_ids=qid)
    values = ms.compute()
    spent = time.perf_counter() - t
    return {"build": 0.0, "evaluate": spent, "values": values, "peak_mb": _rss_mb("VmHWM") - base}


#: One huge update against the same queries in chunks of 1000 (time and peak memory).
HUGE = {"one update": 0, "1000-query updates": 1000}

WORKERS: dict[str, Callable[[int, int], dict[str, Any]]] = {
    "streammetrics": lambda q, d: work_streammetrics(q, d),
    "streammetrics (1 query/update)": lambda q, d: work_streammetrics(q, d, one_by_one=True),
    "pytrec_eval": work_pytrec_eval,
    "ranx": work_ranx,
    "torchmetrics": work_torchmetrics,
    **{f"huge:{name}": functools.partial(work_huge, chunk=c) for name, c in HUGE.items()},
}


def run_worker(tool: str, queries: int, docs: int, timeout: float) -> dict[str, Any]:
    env = {
        **os.environ,
        "OMP_NUM_THREADS": "1",
        "MKL_NUM_THREADS": "1",
        "OPENBLAS_NUM_THREADS": "1",
        "NUMBA_NUM_THREADS": "1",
    }
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env["PYTHONPATH"] = os.pathsep.join([root, env.get("PYTHONPATH", "")])
    cmd = [
        sys.executable,
        "-m",
        "benchmarks.bench_retrieval",
        "--worker",
        tool,
        "--queries",
        str(queries),
        "--docs",
        str(docs),
    ]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env, cwd=root)
    except subprocess.TimeoutExpired:
        return {"status": f"timeout ({timeout:.0f} s)"}
    if proc.returncode != 0:
        tail = (proc.stderr.strip().splitlines() or ["no output"])[-1][:160]
        return {"status": f"error: {tail}"}
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    out["status"] = "ok"
    return out


def main(argv: list[str] | None = None) -> str:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--queries", type=int, default=100_000)
    p.add_argument("--docs", type=int, default=100)
    p.add_argument("--mem", default="10000,40000", help="query counts of the memory comparison")
    p.add_argument("--tools", default=",".join(TOOLS))
    p.add_argument("--timeout", type=float, default=1800)
    p.add_argument("--huge-rounds", type=int, default=3, help="alternating rounds of one update vs chunks")
    p.add_argument("--worker", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.worker:
        res = WORKERS[args.worker](args.queries, args.docs)
        print(json.dumps(res))
        return ""
    tools = [t for t in args.tools.split(",") if t]
    from benchmarks._harness import Report, differing_values, machine_line

    rep = Report()  # each row printed the moment its tool finishes; a failing part says so
    rep.emit(f"# Retrieval: NDCG@10 + MAP + MRR over {args.queries:,} queries x {args.docs} documents", "",
             machine_line(), "")
    add = rep.rows(["tool", "build (s)", "evaluate (s)", "total (s)", "total / streammetrics", "NDCG@10", "MAP",
                    "MRR", "values vs streammetrics"], "lrrrrrrrl")
    ours: dict[str, Any] = {}
    for t in tools:
        def failed(what: str, t: str = t) -> None:
            add([t, f"failed: {what}", *[""] * 7])

        with rep.section(t, on_error=failed):
            r = run_worker(t, args.queries, args.docs, args.timeout)
            if t == "streammetrics":
                ours = r
            if r.get("status") != "ok":
                add([t, r.get("status"), *[""] * 7])
                continue
            total = r["build"] + r["evaluate"]
            ref = ours.get("build", 0.0) + ours.get("evaluate", 0.0) if ours.get("status") == "ok" else None
            v = r["values"]
            same = "-"
            if ours.get("status") == "ok":
                differ = differing_values({k: v[k] for k in ("ndcg", "map", "mrr")},
                                          {k: ours["values"][k] for k in ("ndcg", "map", "mrr")})
                same = "equal" if not differ else ", ".join(f"{k} {d}" for k, d in differ.items())
            add([t, f"{r['build']:.2f}", f"{r['evaluate']:.2f}", f"{total:.2f}",
                 f"{total / ref:.1f}x" if ref else "", f"{v['ndcg']:.12f}", f"{v['map']:.12f}",
                 f"{v['mrr']:.12f}", same])
    scales = [int(s) for s in args.mem.split(",") if s]
    if scales:
        rep.emit("", "Peak memory above the process baseline (MB), by number of queries:", "")
        add_mem = rep.rows(["tool", *(f"{s:,} queries" for s in scales)], "l" + "r" * len(scales))
        for t in tools:
            def failed_mem(what: str, t: str = t) -> None:
                add_mem([t, f"failed: {what}"])

            with rep.section(f"{t} memory", on_error=failed_mem):
                cells = []
                for s in scales:
                    r = run_worker(t, s, args.docs, args.timeout)
                    cells.append(f"{r['peak_mb']:.0f}" if r.get("status") == "ok" else r.get("status", "?"))
                add_mem([t, *cells])
        if "state_bytes" in ours:
            rep.emit("", f"streammetrics state: {ours['state_bytes']} bytes for the three measures "
                     "(independent of the number of queries).")
    with rep.section("one update against 1000-query updates"):
        rep.emit(*huge_vs_chunked(args.queries, args.docs, args.huge_rounds, args.timeout))
    return rep.text()


def huge_vs_chunked(queries: int, docs: int, rounds: int, timeout: float) -> list[str]:
    """One ``update`` of all queries against 1000-query updates of the same arrays: fresh
    subprocesses in alternating rounds (time and peak memory above the data), median and range."""
    from benchmarks._harness import env_header, machine_line

    runs: dict[str, list[dict[str, Any]]] = {name: [] for name in HUGE}
    for _ in range(rounds):
        for name in HUGE:
            runs[name].append(run_worker(f"huge:{name}", queries, docs, timeout))
    lines = ["", f"One update of {queries:,} queries against 1000-query updates ({rounds} alternating "
             "rounds, each in a fresh process; median, range in brackets):", "", env_header(()), "",
             "| updates | time (s) | peak memory above the data (MB) | time / chunked | memory / chunked |",
             "|---|---:|---:|---:|---:|"]
    stats: dict[str, tuple[list[float], list[float]]] = {}
    for name, rs in runs.items():
        ok = [r for r in rs if r.get("status") == "ok"]
        if not ok:
            lines.append(f"| {name} | {rs[0].get('status')} | | | |")
            continue
        stats[name] = (sorted(r["evaluate"] for r in ok), sorted(r["peak_mb"] for r in ok))
    ref = stats.get("1000-query updates")
    for name, (t, m) in stats.items():
        mt, mm = t[len(t) // 2], m[len(m) // 2]
        ratio = f"{mt / ref[0][len(ref[0]) // 2]:.2f}x | {mm / ref[1][len(ref[1]) // 2]:.2f}x" if ref else " | "
        lines.append(f"| {name} | {mt:.2f} [{t[0]:.2f}-{t[-1]:.2f}] | {mm:.1f} [{m[0]:.1f}-{m[-1]:.1f}] | {ratio} |")
    lines += ["", machine_line()]
    return lines


if __name__ == "__main__":
    main()
