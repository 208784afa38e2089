"""``streammetrics trec-compare``: values against ``streammetrics trec`` and scipy, output formats,
and errors as one line."""

from __future__ import annotations

import io
import itertools
import json

import numpy as np
import pytest
import retrieval_oracles as O

from streammetrics.__main__ import main
from streammetrics.trec import evaluate_files
from streammetrics.trec.irnames import translate
from streammetrics.trec.perquery import per_query_values

scipy_stats = pytest.importorskip("scipy.stats")


def _files(tmp_path, n_queries=8, n_runs=3, seed=7, drop=None, shuffle=False):
    rng = np.random.default_rng(seed)
    qrels, _ = O.random_trec(rng, n_queries, max_docs=12)
    for docs in qrels.values():  # every query has a relevant document: informative differences
        docs[next(iter(docs))] = 2
    qp = tmp_path / "qrels.txt"
    qp.write_text("".join(f"{q} 0 {d} {g}\n" for q, docs in qrels.items() for d, g in docs.items()))
    paths = []
    for r in range(n_runs):
        _, run = O.random_trec(np.random.default_rng(seed + 100 + r), n_queries, max_docs=12)
        if drop is not None and r == 1:
            run.pop(drop)
        lines = [f"{q} Q0 {d} {i + 1} {s!r} sys{r}" for q, docs in run.items() for i, (d, s) in enumerate(docs.items())]
        if shuffle:
            lines = [lines[i] for i in rng.permutation(len(lines))]
        rp = tmp_path / f"run{r}.txt"
        rp.write_text("".join(line + "\n" for line in lines))
        paths.append(str(rp))
    return str(qp), paths


def _per_query(qp, rp, measure):
    args, rename = translate([measure])
    sink = io.StringIO()
    evaluate_files(qp, rp, args, rename=rename, per_query=True, complete=True, digits=17, out=sink)
    rows = [line.split("\t") for line in sink.getvalue().splitlines()]
    per_q = {q: float(v) for n, q, v in rows if q != "all" and n.strip() == measure}
    mean = next(float(v) for n, q, v in rows if q == "all" and n.strip() == measure)
    return per_q, mean


def _brute_force(d):
    observed, tol = abs(d.sum()), 1e-12 * np.abs(d).sum()
    flips = [abs(np.dot(s, d)) >= observed - tol for s in itertools.product((1.0, -1.0), repeat=len(d))]
    return sum(flips) / 2 ** len(d)


def test_json_values_against_trec_scipy_and_brute_force(tmp_path, capsys):
    qp, runs = _files(tmp_path)
    out = tmp_path / "out.json"
    assert main(["trec-compare", qp, *runs, "-m", "AP", "-m", "nDCG@10", "-m", "P.5",
                 "--permutations", "256", "--json", str(out)]) == 0  # fmt: skip
    table = capsys.readouterr().out
    result = json.loads(out.read_text())
    assert result["queries"] == 8 and [m["measure"] for m in result["measures"]] == ["AP", "P_5", "nDCG@10"]
    for m in result["measures"]:
        assert m["measure"] in table
        per_run = [_per_query(qp, rp, m["measure"]) for rp in runs]
        qids = sorted(per_run[0][0])
        base = np.array([per_run[0][0][q] for q in qids])
        p_t, p_perm = [], []
        for row, (per_q, mean) in zip(m["runs"], per_run, strict=True):
            assert row["mean"] == pytest.approx(mean, abs=1e-12)
            assert row["run"] in table
            if row["run"] == runs[0]:
                continue
            x = np.array([per_q[q] for q in qids])
            ref = scipy_stats.ttest_rel(x, base)
            assert row["diff"] == pytest.approx(float((x - base).mean()), abs=1e-12)
            assert row["t"] == pytest.approx(ref.statistic, rel=1e-10, abs=1e-10)
            assert row["p_t"] == pytest.approx(ref.pvalue, rel=1e-10, abs=1e-10)
            assert row["p_perm"] == pytest.approx(_brute_force(x - base), abs=1e-15)  # 256 = 2^8: exact
            assert row["ci"][0] <= row["diff"] <= row["ci"][1]
            p_t.append(row["p_t"])
            p_perm.append(row["p_perm"])
        # Holm over the two comparisons, by hand
        for key, ps in (("p_t_holm", p_t), ("p_perm_holm", p_perm)):
            lo, hi = sorted(range(2), key=lambda i: ps[i])
            want = [0.0, 0.0]
            want[lo] = min(1.0, 2 * ps[lo])
            want[hi] = max(want[lo], min(1.0, ps[hi]))
            assert [row[key] for row in m["runs"][1:]] == pytest.approx(want, abs=1e-15)


def test_latex_and_seeded_reproducibility(tmp_path, capsys):
    qp, runs = _files(tmp_path, n_queries=12)
    tex1, tex2 = tmp_path / "a.tex", tmp_path / "b.tex"
    for tex in (tex1, tex2):
        assert main(["trec-compare", qp, *runs, "-m", "AP", "-m", "RR", "--seed", "3", "--latex", str(tex)]) == 0
    text = tex1.read_text()
    assert text == tex2.read_text()
    assert text.startswith("\\begin{tabular}{lrr}") and "\\bottomrule" in text
    assert "AP & RR" in text and "run1.txt" in text and "\\_" not in text.split("\\midrule")[0]
    assert len([line for line in text.splitlines() if line.endswith("\\\\")]) == 4  # header + 3 runs
    first = capsys.readouterr().out
    assert main(["trec-compare", qp, *runs, "-m", "AP", "-m", "RR", "--seed", "3"]) == 0
    again = capsys.readouterr().out
    assert first == again + again  # the two --latex runs printed the same table: seeded


def test_missing_query_and_unsorted_runs_pair_by_query(tmp_path):
    qp, runs = _files(tmp_path, drop="q3", shuffle=True)
    pq = per_query_values(qp, runs, ["AP", "NumRet"])
    assert pq.names == ("NumRet", "AP") and "q3" in pq.qids
    q3 = pq.qids.index("q3")
    assert pq.values[1, :, q3].tolist() == [0.0, 0.0]  # the run lacking q3 scores it 0
    for r, rp in enumerate(runs):
        per_q, _ = _per_query(qp, rp, "AP")
        assert pq.values[r, 1].tolist() == pytest.approx([per_q.get(q, 0.0) for q in pq.qids], abs=1e-15)


@pytest.mark.parametrize(
    "argv,code,needle",
    [
        (["RUN0"], 2, "at least 2 runs"),
        (["RUN0", "RUN1", "--permutations", "0"], 2, "--permutations"),
        (["RUN0", "RUN1", "--alpha", "1.5"], 2, "--alpha"),
        (["RUN0", "missing.txt"], 1, "missing.txt"),
        (["RUN0", "RUN1", "-m", "nosuch"], 1, "nosuch"),
        (["RUN0", "RUN1", "-m", "RBP(p=2)"], 1, "RBP(p=2)"),
        (["RUN0", "BAD"], 1, "BAD.txt:1"),
    ],
)
def test_errors_are_one_line(tmp_path, capsys, argv, code, needle):
    qp, runs = _files(tmp_path, n_runs=2)
    bad = tmp_path / "BAD.txt"
    bad.write_text("q1 Q0 d1 1 notanumber r\n")
    subst = {"RUN0": runs[0], "RUN1": runs[1], "BAD": str(bad), "missing.txt": str(tmp_path / "missing.txt")}
    assert main(["trec-compare", qp, *[subst.get(a, a) for a in argv]]) == code
    err = capsys.readouterr().err
    assert needle in err and "Traceback" not in err and len(err.strip().splitlines()) == 1, err


def test_too_few_queries_is_a_data_error(tmp_path, capsys):
    qp, runs = _files(tmp_path, n_queries=1, n_runs=2)
    assert main(["trec-compare", qp, *runs]) == 1
    assert "at least 2 judged queries" in capsys.readouterr().err
