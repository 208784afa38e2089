"""ndeval's diversity measures in ``per_query_values`` and ``streammetrics trec-compare``: the
per-query columns equal ``streammetrics trec -q`` (itself equal to pyndeval, test_trec_diversity)
and the paired t-test equals scipy's on them."""

from __future__ import annotations

import io
import json
import random
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from streammetrics.__main__ import main
from streammetrics.trec.diversity_files import evaluate_diversity_files
from streammetrics.trec.perquery import per_query_values

NAMES = ["alpha_nDCG@10", "ERR_IA@5", "P_IA@5", "StRecall@10", "AP_IA", "NRBP", "alpha_DCG(alpha=0.3)@10"]


def _files(tmp: Path, seed: int, runs: int = 3) -> tuple[str, list[str], list[tuple[str, str, str, int]]]:
    rng = random.Random(seed)
    qrels = []
    for q in range(8):
        for d in rng.sample(range(30), 12):
            for s in rng.sample(range(4), rng.randint(1, 3)):
                qrels.append((f"q{q}", str(s), f"d{d}", rng.choice([0, 1, 1, 2])))
    for q in range(8):  # every query has a relevant document (nNRBP is defined everywhere)
        qrels.append((f"q{q}", "0", "d99", 1))
    qp = tmp / "qrels"
    qp.write_text("".join(f"{q} {s} {d} {g}\n" for q, s, d, g in qrels))
    paths = []
    for r in range(runs):
        lines = []
        for q in range(8 if r else 7):  # the first run lacks q7: it scores 0 there
            for d in rng.sample(range(30), 15):
                lines.append(f"q{q} Q0 d{d} 0 {rng.choice([1.0, 2.0, 3.5, rng.random()])} run{r}\n")
        rng.shuffle(lines)
        path = tmp / f"run{r}"
        path.write_text("".join(lines))
        paths.append(str(path))
    return str(qp), paths, qrels


def _command_values(qrels: str, run: str, names: list[str], complete: bool) -> dict[tuple[str, str], float]:
    out = io.StringIO()
    evaluate_diversity_files(qrels, run, names, per_query=True, complete=complete, digits=17, out=out)
    got = {}
    for line in out.getvalue().splitlines():
        name, qid, value = line.split("\t")
        got[name.strip(), qid] = float(value)
    return got


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("complete", [False, True])
def test_per_query_values_equal_the_command(tmp_path: Path, seed: int, complete: bool) -> None:
    qrels, runs, _ = _files(tmp_path, seed)
    pq = per_query_values(qrels, runs, NAMES, complete=complete)
    assert pq.names == tuple(NAMES) and pq.runids == ("run0", "run1", "run2")
    assert pq.qids == tuple(f"q{q}" for q in range(8))  # q7: retrieved by runs 1 and 2
    for r, run in enumerate(runs):
        want = _command_values(qrels, run, NAMES, complete)
        for m, name in enumerate(NAMES):
            for q, qid in enumerate(pq.qids):
                expected = want.get((name, qid), 0.0)  # a query the run lacks scores 0
                assert abs(pq.values[r, m, q] - expected) <= 1e-12, (run, name, qid)
            if complete:
                assert abs(pq.values[r, m].mean() - want[name, "all"]) <= 1e-12


def test_trec_compare_runs_the_tests_on_diversity_columns(tmp_path: Path,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    qrels, runs, _ = _files(tmp_path, 11)
    out = tmp_path / "cmp.json"
    rc = main(["trec-compare", qrels, *runs, "-m", "alpha_nDCG@10", "-m", "ERR_IA@5", "--json", str(out)])
    assert rc == 0, capsys.readouterr().err
    result = json.loads(out.read_text())
    pq = per_query_values(qrels, runs, ["alpha_nDCG@10", "ERR_IA@5"])
    for m, entry in enumerate(result["measures"]):
        for r, row in enumerate(entry["runs"][1:], 1):
            want = stats.ttest_rel(pq.values[r, m], pq.values[0, m])
            assert row["p_t"] == pytest.approx(want.pvalue, rel=1e-9, abs=1e-15)
            assert row["diff"] == pytest.approx(float(np.mean(pq.values[r, m] - pq.values[0, m])), abs=1e-12)


def test_refusals(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    qrels, runs, _ = _files(tmp_path, 3)
    with pytest.raises(ValueError, match="'AP' is not a diversity measure"):
        per_query_values(qrels, runs, ["alpha_nDCG@10", "AP"])
    with pytest.raises(ValueError, match="rel_level: expected an integer"):
        per_query_values(qrels, runs, ["alpha_nDCG@10"], rel_level=1.5)
    # nNRBP is undefined (NaN, as ndeval) on a query without a relevant document: not paired
    empty = tmp_path / "qrels0"
    empty.write_text("q0 0 d1 0\nq0 1 d2 0\nq1 0 d3 1\n")
    with pytest.raises(ValueError, match="measure 'nNRBP' has no value for query 'q0'"):
        per_query_values(str(empty), runs, ["nNRBP"])
    assert main(["trec-compare", str(empty), *runs, "-m", "nNRBP"]) == 1
    err = capsys.readouterr().err
    assert "nNRBP" in err and "Traceback" not in err and len(err.strip().splitlines()) == 1
