"""``streammetrics drift``: the table and JSON equal Drift (and scipy) on the files' scores;
errors are one line with the documented exit status, never a traceback."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pytest
import scipy.stats as ss

from streammetrics.__main__ import main
from streammetrics.monitoring import Drift

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")


@pytest.fixture()
def files(tmp_path):
    rng = np.random.default_rng(7)
    ref = {"p": np.round(rng.random(400), 2), "seg": rng.choice(["a", "b"], 400),
           "q0": rng.random(400), "q1": rng.random(400)}
    cur = {"p": np.round(rng.random(250) ** 1.3, 2), "seg": rng.choice(["a", "b", "c"], 250),
           "q0": rng.random(250), "q1": rng.random(250) ** 2, "w": rng.integers(0, 3, 250).astype(float)}
    rp, cp = tmp_path / "ref.parquet", tmp_path / "cur.csv"
    pq.write_table(pa.table(ref), rp)
    lines = ["p,seg,q0,q1,w"] + [",".join([repr(float(cur["p"][i])), str(cur["seg"][i]),
                                           *(repr(float(cur[c][i])) for c in ("q0", "q1", "w"))])
                                 for i in range(250)]
    cp.write_text("\n".join(lines) + "\n")
    return str(rp), str(cp), ref, cur


def run_json(capsys, *argv):
    assert main(["drift", *argv, "--json", "-", "--batch-size", "64"]) == 0
    return json.loads(capsys.readouterr().out)


def test_json_equals_drift_and_scipy_overall_and_per_segment(files, capsys):
    rp, cp, ref, cur = files
    doc = run_json(capsys, rp, cp, "--score", "p", "--by", "seg", "--weight", "w", "--bins", "7")
    want = Drift(ref["p"], bins=7).update(cur["p"], sample_weight=cur["w"]).compute()
    for k in want:
        assert doc["segments"]["all"][k] == pytest.approx(want[k], rel=1e-12, abs=1e-12)
    for seg in ("a", "b"):
        rows = cur["seg"] == seg
        got = doc["segments"][seg]
        assert got["reference"] == "segment"
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            repeated = np.repeat(cur["p"][rows], cur["w"][rows].astype(int))
            ks = ss.ks_2samp(ref["p"][ref["seg"] == seg], repeated).statistic
        assert got["ks"] == pytest.approx(ks, rel=1e-12, abs=1e-12)
    assert doc["segments"]["c"]["reference"] == "all"  # the reference has no segment c
    want_c = Drift(ref["p"], bins=7).update(cur["p"][cur["seg"] == "c"],
                                            sample_weight=cur["w"][cur["seg"] == "c"]).compute()
    assert doc["segments"]["c"]["wasserstein"] == pytest.approx(want_c["wasserstein"], rel=1e-12)


def test_several_score_columns_are_per_class_drift_with_class_shares(files, capsys):
    rp, cp, ref, cur = files
    doc = run_json(capsys, rp, cp, "--score", "q0,q1")
    want = Drift(np.stack([ref["q0"], ref["q1"]], 1)).update(np.stack([cur["q0"], cur["q1"]], 1)).compute()
    np.testing.assert_allclose(doc["segments"]["all"]["ks"], want["ks"], rtol=1e-12)
    assert doc["segments"]["all"]["class_chi2"] == pytest.approx(want["class_chi2"], rel=1e-12)


def test_bounded_mode_reports_certified_intervals_holding_the_exact_values(files, capsys):
    rp, cp, ref, cur = files
    doc = run_json(capsys, rp, cp, "--score", "q1", "--max-bytes", "1k")
    exact = Drift(ref["q1"]).update(cur["q1"]).compute()
    for k in ("ks", "wasserstein"):
        lo, hi = doc["segments"]["all"]["bounds"][k]
        assert lo - 1e-12 <= exact[k] <= hi + 1e-12


def test_the_table_is_printed(files, capsys):
    rp, cp, *_ = files
    assert main(["drift", rp, cp, "--score", "p", "--digits", "3"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0].split() == ["segment", "n", "psi", "js", "ks", "wasserstein"]
    assert out.splitlines()[1].startswith("all")


@pytest.mark.parametrize(("argv", "code", "message"), [
    (["--score", "zz"], 2, "no column 'zz'"),
    (["--score", "p,p"], 2, "--score: expected one column or distinct"),
    (["--score", "p", "--max-bytes", "100"], 2, "max_bytes: 100 is too small"),
    (["--score", "p", "--bins", "0"], 2, "--bins"),
    ([], 2, "--score"),
])
def test_errors_are_one_line_with_the_exit_status(files, capsys, argv, code, message):
    rp, cp, *_ = files
    assert main(["drift", rp, cp, *argv]) == code
    err = capsys.readouterr().err.strip()
    assert message in err and "Traceback" not in err and len(err.splitlines()) == 1


def test_a_missing_score_in_the_current_file_is_a_data_error(tmp_path, files, capsys):
    rp, *_ = files
    bad = tmp_path / "bad.csv"
    bad.write_text("p\n0.1\n\n0.3\nnan\n")
    assert main(["drift", rp, str(bad), "--score", "p"]) == 1
    err = capsys.readouterr().err.strip()
    assert "bad.csv" in err and len(err.splitlines()) == 1


def test_bounded_segments_are_bounded_too(files, tmp_path, capsys):
    rp, _, ref, _ = files
    rng = np.random.default_rng(8)
    scores, groups = rng.random(6000), rng.choice(["x", "y"], 6000)  # "g": not a column of the reference
    cp = tmp_path / "big.csv"
    cp.write_text("q1,g\n" + "".join(f"{s!r},{g}\n" for s, g in zip(scores.tolist(), groups, strict=True)))
    doc = run_json(capsys, rp, str(cp), "--score", "q1", "--by", "g", "--max-bytes", "1k")
    for name in ("x", "y"):
        entry = doc["segments"][name]
        assert entry["reference"] == "all" and entry["nbytes"] <= 1024
        want = Drift(ref["q1"], max_bytes=1024).update(scores[groups == name])
        assert entry["ks"] == want.compute()["ks"]
        lo, hi = entry["bounds"]["ks"]
        exact = Drift(ref["q1"]).update(scores[groups == name]).compute()["ks"]
        assert lo - 1e-12 <= exact <= hi + 1e-12
