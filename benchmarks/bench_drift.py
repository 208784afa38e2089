"""Benchmark of ``streammetrics.monitoring.Drift`` (issue #31): update throughput, exact and
bounded, against one ``np.sort`` of the same scores, and the per-chunk drift of NannyML and
Evidently on the same chunks, with the values compared where the definitions agree.

Peers run in another interpreter (``--peer-python``, default ``/tmp/peers/bin/python``: a venv
with ``pip install nannyml evidently``; they need pandas < 3 and are kept out of the project's
environment); when it is missing, their rows say so.

``python -m benchmarks.bench_drift --quick`` takes about a minute on an idle 2-core machine.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import warnings
from typing import Any

import numpy as np

from benchmarks import _harness as h

PEER_SCRIPT = r'''
import json, sys, time, warnings
warnings.simplefilter("ignore")
import numpy as np, pandas as pd
data = np.load(sys.argv[1])
ref, chunks = data["reference"], [data[k] for k in sorted(k for k in data.files if k.startswith("chunk"))]
out = {}
try:
    import nannyml as nml
    for method in ("exact", "auto"):
        cur = pd.DataFrame({"p": np.concatenate(chunks)})
        t = time.perf_counter()
        calc = nml.UnivariateDriftCalculator(
            column_names=["p"], continuous_methods=["kolmogorov_smirnov", "wasserstein", "jensen_shannon"],
            chunk_size=len(chunks[0]),
            # NannyML reads the method's own name and calculation_method at the same level
            computation_params={"kolmogorov_smirnov": True, "wasserstein": True, "calculation_method": method})
        calc.fit(pd.DataFrame({"p": ref}))
        r = calc.calculate(cur).filter(period="analysis").to_df()
        secs = time.perf_counter() - t
        out["nannyml " + method] = {"seconds": secs, "version": nml.__version__,
            "ks": r[("p", "kolmogorov_smirnov", "value")].tolist()[:len(chunks)],
            "wasserstein": r[("p", "wasserstein", "value")].tolist()[:len(chunks)],
            "js_own_bins": r[("p", "jensen_shannon", "value")].tolist()[:len(chunks)]}
except Exception as exc:
    out["nannyml"] = {"error": f"{type(exc).__name__}: {exc}"[:200]}
try:
    import evidently
    from evidently import Report
    from evidently.metrics import ValueDrift
    values = {m: [] for m in ("wasserstein", "psi", "jensenshannon", "ks")}
    reference = pd.DataFrame({"p": ref})
    t = time.perf_counter()
    for c in chunks:
        cur = pd.DataFrame({"p": c})
        snap = Report([ValueDrift(column="p", method=m) for m in values]).run(reference_data=reference, current_data=cur)
        for m, metric in zip(values, snap.dict()["metrics"]):
            values[m].append(float(metric["value"]))
    secs = time.perf_counter() - t
    out["evidently"] = {"seconds": secs, "version": evidently.__version__, "ref_std": float(np.std(ref)),
                        "wasserstein_normed": values["wasserstein"], "psi_own_bins": values["psi"],
                        "js_own_bins": values["jensenshannon"], "ks_p_value": values["ks"]}
except Exception as exc:
    out["evidently"] = {"error": f"{type(exc).__name__}: {exc}"[:200]}
print(json.dumps(out))
'''


def make_data(n_ref: int, n_chunks: int, chunk: int, seed: int = 31) -> tuple[np.ndarray, list[np.ndarray]]:
    """A reference of model-like scores (a beta, rounded to 1e-6 so that there are ties) and
    chunks that drift a little more each time."""
    rng = np.random.default_rng(seed)
    ref = np.round(rng.beta(2, 5, n_ref), 6)
    chunks = [np.round(rng.beta(2 + 0.1 * i, 5, chunk), 6) for i in range(n_chunks)]
    return ref, chunks


def throughput(ref: np.ndarray, batches: list[np.ndarray], repeat: int) -> list[list[str]]:
    """Drift update (+ one compute) over every batch: exact and bounded, against np.sort."""
    from streammetrics.monitoring import Drift

    n = sum(b.shape[0] for b in batches)
    kept = Drift.fit_reference(ref)
    kept_bounded = Drift.fit_reference(ref, max_bytes=1 << 16)
    every = np.concatenate(batches)

    def exact_update() -> Any:
        d = Drift(kept)
        for b in batches:
            d.update(b)
        return d

    def bounded_update() -> Any:
        d = Drift(kept_bounded, max_bytes=1 << 16)
        for b in batches:
            d.update(b)
        return d

    def exact_read() -> Any:
        return exact_update().compute()

    def bounded_read() -> Any:
        return bounded_update().compute()

    def one_sort() -> Any:
        return np.sort(every)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        timings = h.measure_interleaved([one_sort, exact_update, exact_read, bounded_update, bounded_read],
                                        repeat=repeat)
    base = timings[0].median
    names = ["np.sort of every score (one call)", "Drift exact: update", "Drift exact: update + compute",
             "Drift(max_bytes=64k): update", "Drift(max_bytes=64k): update + compute"]
    return [[name, f"{t.median:.3f} s", h.fmt_rate(n / t.median), h.fmt_ratio(t.median / base)]
            for name, t in zip(names, timings, strict=True)]


def ours_per_chunk(ref: np.ndarray, chunks: list[np.ndarray]) -> tuple[float, dict[str, list[float]]]:
    from streammetrics.monitoring import Drift

    kept = Drift.fit_reference(ref)
    t = time.perf_counter()
    values: dict[str, list[float]] = {"psi": [], "js": [], "ks": [], "wasserstein": []}
    for c in chunks:
        v = Drift(kept).update(c).compute()
        for k in values:
            values[k].append(float(v[k]))
    return time.perf_counter() - t, values


def peers(ref: np.ndarray, chunks: list[np.ndarray], python: str, timeout: float) -> dict[str, Any]:
    if not os.path.exists(python):
        return {"peers": {"error": f"no peer interpreter at {python} (python -m venv /tmp/peers && "
                                    "/tmp/peers/bin/pip install nannyml evidently 'pandas<3')"}}
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "data.npz")
        arrays: dict[str, Any] = {f"chunk{i:04d}": c for i, c in enumerate(chunks)}
        np.savez(path, reference=ref, **arrays)
        try:
            env = {**os.environ, "NML_DISABLE_USAGE_LOGGING": "1"}  # no usage telemetry from NannyML
            done = subprocess.run([python, "-c", PEER_SCRIPT, path], capture_output=True, text=True,
                                  timeout=timeout, check=False, env=env)
        except subprocess.TimeoutExpired:
            return {"peers": {"error": f"timeout ({timeout:.0f} s)"}}
    if done.returncode != 0 or not done.stdout.strip():
        return {"peers": {"error": (done.stderr.strip().splitlines() or ["failed"])[-1][:200]}}
    return json.loads(done.stdout.strip().splitlines()[-1])


def _diff(a: list[float], b: list[float]) -> str:
    return f"{np.max(np.abs(np.asarray(a) - np.asarray(b))):.1e}"


def comparison(ref: np.ndarray, chunks: list[np.ndarray], python: str, timeout: float) -> list[list[str]]:
    secs, ours = ours_per_chunk(ref, chunks)
    n = sum(c.shape[0] for c in chunks)
    rows = [["streammetrics Drift (one per chunk)", f"{secs:.3f} s", h.fmt_rate(n / secs),
             "psi, js, ks, wasserstein", "-"]]
    got = peers(ref, chunks, python, timeout)
    for name, r in got.items():
        if "error" in r:
            rows.append([name, "-", "-", "not run: " + r["error"], "-"])
            continue
        rate = h.fmt_rate(n / r["seconds"])
        if name.startswith("nannyml"):
            agree = (f"KS {_diff(r['ks'], ours['ks'])}, Wasserstein {_diff(r['wasserstein'], ours['wasserstein'])}"
                     + (" (NannyML estimates both from bins when the reference has 10,000 rows or more)"
                        if name.endswith("auto") else "") + "; JS on its own (Doane) bins: not comparable")
            rows.append([f"{name} {r['version']}", f"{r['seconds']:.3f} s", rate, "ks, wasserstein, js", agree])
        else:
            w = [x * max(r["ref_std"], 0.001) for x in r["wasserstein_normed"]]
            agree = (f"Wasserstein x std(ref) {_diff(w, ours['wasserstein'])}; PSI and JS on Sturges bins "
                     "of reference + current: not comparable; KS: a p-value")
            rows.append([f"evidently {r['version']}", f"{r['seconds']:.3f} s", rate,
                         "wasserstein (normed), psi, js, ks p-value", agree])
    return rows


def main(argv: list[str] | None = None) -> str:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.bench_drift", description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="1M scores in batches of 100k; 5 peer chunks")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--peer-python", default="/tmp/peers/bin/python")
    ap.add_argument("--peer-timeout", type=float, default=900.0)
    ap.add_argument("--no-peers", action="store_true")
    ap.add_argument("--scores", type=int, default=None, help="scores streamed (default 10M; --quick 1M)")
    args = ap.parse_args(argv)
    h.single_thread()
    n, batch = (1_000_000, 100_000) if args.quick else (10_000_000, 100_000)
    if args.scores is not None:
        n, batch = args.scores, max(1, min(batch, args.scores // 2))
    ref, batches = make_data(min(100_000, n), max(1, n // batch), batch)
    rep = h.Report()  # each table printed the moment it is measured; a failing one says so
    rep.emit("# Drift (streammetrics.monitoring)", "", h.env_header(("numpy", "scipy", "streammetrics")), "")
    with rep.section("update throughput"):
        rep.emit(f"## Update throughput: {n:,} scores in batches of {batch:,}, reference {ref.shape[0]:,}", "",
                 h.markdown_table(["implementation", "median", "scores/s", "time / np.sort"],
                                  throughput(ref, batches, args.repeat), "lrrr"),
                 "", h.machine_line(), "")
    if not args.no_peers:
        chunks = batches[: 5 if args.quick else 10]
        with rep.section("drift against peers"):
            rep.emit(f"## Per-chunk drift against peers: {len(chunks)} chunks of {batch:,}", "",
                     h.markdown_table(["implementation", "time", "scores/s", "statistics",
                                       "max |difference| from Drift"],
                                      comparison(ref, chunks, args.peer_python, args.peer_timeout), "lrrll"),
                     "", "Where the definitions agree (KS, Wasserstein) the values are compared on the same "
                     "chunks; PSI and JS depend on each library's binning (streammetrics: the reference's "
                     "deciles; NannyML: Doane's bins of the reference; Evidently: Sturges' bins of both samples).",
                     "")
    return rep.text()


if __name__ == "__main__":
    main(sys.argv[1:])
