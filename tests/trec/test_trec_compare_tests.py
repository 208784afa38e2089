"""``streammetrics trec-compare``'s Wilcoxon and sign tests and ``--alternative``: the JSON's
p-values equal scipy's on the per-query values ``streammetrics trec`` prints, and bad options are
one-line errors."""

from __future__ import annotations

import json

import numpy as np
import pytest
from test_trec_compare import _files, _per_query

from streammetrics.__main__ import main

scipy_stats = pytest.importorskip("scipy.stats")


@pytest.mark.parametrize(
    "alternative,zero_method,method,correction",
    [("two-sided", "wilcox", "auto", False), ("greater", "pratt", "asymptotic", True),
     ("less", "zsplit", "exact", False), ("greater", "wilcox", "approx", False)],  # fmt: skip
)
def test_wilcoxon_sign_and_one_sided_against_scipy(tmp_path, capsys, alternative, zero_method, method, correction):
    qp, runs = _files(tmp_path, n_queries=16)
    out = tmp_path / "out.json"
    argv = ["trec-compare", qp, *runs, "-m", "AP", "-m", "P@5", "--permutations", str(2**16), "--json", str(out),
            "--alternative", alternative, "--zero-method", zero_method, "--wilcoxon-method", method]  # fmt: skip
    assert main(argv + (["--correction"] if correction else [])) == 0
    table = capsys.readouterr().out
    assert f"{'two-sided' if alternative == 'two-sided' else 'one-sided'}" in table and "p(wilcoxon)" in table
    result = json.loads(out.read_text())
    assert result["alternative"] == alternative and result["zero_method"] == zero_method
    for m in result["measures"]:
        per_run = [_per_query(qp, rp, m["measure"])[0] for rp in runs]
        qids = sorted(per_run[0])
        base = np.array([per_run[0][q] for q in qids])
        for row, per_q in zip(m["runs"][1:], per_run[1:], strict=True):
            d = np.array([per_q[q] for q in qids]) - base
            ref_t = scipy_stats.ttest_rel(d + base, base, alternative=alternative)
            assert row["p_t"] == pytest.approx(ref_t.pvalue, rel=1e-10, abs=1e-12)
            if np.any(d != 0):
                ref_w = scipy_stats.wilcoxon(d, zero_method=zero_method, correction=correction,
                                             alternative=alternative, method=method)  # fmt: skip
                assert abs(row["p_wilcoxon"] - ref_w.pvalue) <= 1e-12
                ref_s = scipy_stats.binomtest(int(np.sum(d > 0)), int(np.sum(d != 0)), 0.5, alternative=alternative)
                assert abs(row["p_sign"] - ref_s.pvalue) <= 1e-12
            if alternative == "greater":
                assert row["ci"][1] is None and row["ci"][0] <= row["diff"]
            elif alternative == "less":
                assert row["ci"][0] is None and row["diff"] <= row["ci"][1]
        assert all(0 <= r["p_wilcoxon_holm"] <= 1 and r["p_sign_holm"] >= r["p_sign"] for r in m["runs"][1:])


@pytest.mark.parametrize(
    "option,value", [("--alternative", "bigger"), ("--zero-method", "drop"), ("--wilcoxon-method", "fast")]
)
def test_bad_test_options_are_one_line(tmp_path, capsys, option, value):
    qp, runs = _files(tmp_path, n_queries=4, n_runs=2)
    status = main(["trec-compare", qp, *runs, option, value])
    err = capsys.readouterr().err.strip().splitlines()
    assert status == 2 and len(err) == 1 and value in err[0] and option in err[0], err


def test_tukey_column_equals_scipy_tukey_hsd(tmp_path, capsys):
    qp, runs = _files(tmp_path, n_queries=10, n_runs=4)
    out = tmp_path / "out.json"
    assert main(["trec-compare", qp, *runs, "-m", "AP", "-m", "RR", "--json", str(out)]) == 0
    assert "p(Tukey)" in capsys.readouterr().out
    for m in json.loads(out.read_text())["measures"]:
        per_run = [_per_query(qp, rp, m["measure"])[0] for rp in runs]
        qids = sorted(per_run[0])
        ref = scipy_stats.tukey_hsd(*[np.array([pr[q] for q in qids]) for pr in per_run]).pvalue
        assert np.max(np.abs(np.array(m["tukey"]) - ref)) <= 1e-12
        assert [r["p_tukey"] for r in m["runs"][1:]] == pytest.approx(ref[1:, 0].tolist(), abs=1e-12)
