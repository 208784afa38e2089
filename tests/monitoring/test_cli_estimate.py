"""``streammetrics evaluate FILE --score P`` without --label: estimated metrics, marked as such,
equal to Estimated on the same rows; what it refuses."""

from __future__ import annotations

import json

import numpy as np
import pytest

import streammetrics as sm
from streammetrics.cli.evaluate import main
from streammetrics.monitoring import Estimated

pytest.importorskip("pyarrow")


def run_json(capsys, argv):
    assert main([*argv, "--json", "-"]) == 0
    return json.loads(capsys.readouterr().out)


def test_binary_estimates_equal_the_library(tmp_path, capsys):
    rng = np.random.default_rng(4)
    p, w = rng.random(500), rng.uniform(0.5, 2, 500)
    path = tmp_path / "scores.csv"
    path.write_text("p,w\n" + "".join(f"{float(a)!r},{float(b)!r}\n" for a, b in zip(p, w, strict=True)))
    doc = run_json(capsys, [str(path), "--score", "p", "--weight", "w", "--metrics", "accuracy,recall,f1,auroc",
                            "--threshold", "0.4"])
    assert doc["estimated"] is True
    est = Estimated(sm.MetricSet(accuracy=sm.Accuracy(threshold=0.4), recall=sm.Recall(threshold=0.4),
                                 f1=sm.F1(threshold=0.4), auroc=sm.AUROC())).update(p, sample_weight=w)
    want = est.compute()
    for name in ("accuracy", "recall", "f1", "auroc"):
        assert doc["metrics"][name] == pytest.approx(want[name], rel=1e-12)
    assert doc["intervals"]["accuracy"] == pytest.approx(list(est.interval(member="accuracy")), rel=1e-12)
    assert doc["intervals"]["recall"] == pytest.approx(list(est.interval(member="recall")), rel=1e-12)
    assert "f1" not in doc["intervals"] and "auroc" not in doc["intervals"]
    assert doc["rows"] == 500 and "ESTIMATED" in doc["notes"][0]
    assert doc["state_bytes"] == est.nbytes  # the state after the pass, not the empty one


def test_multiclass_columns_and_the_table(tmp_path, capsys):
    rng = np.random.default_rng(5)
    p = rng.dirichlet([1, 2, 3], 100)
    path = tmp_path / "mc.csv"
    path.write_text("a,b,c\n" + "".join(",".join(repr(float(v)) for v in row) + "\n" for row in p))
    doc = run_json(capsys, [str(path), "--score", "a", "--score", "b", "--score", "c"])
    want = Estimated(sm.AUROC(3)).update(p).compute()
    assert doc["metrics"]["auroc"] == pytest.approx(want, rel=1e-12)
    assert doc["task"] == "multiclass" and doc["classes"] == ["a", "b", "c"]
    assert main([str(path), "--score", "a", "--score", "b", "--score", "c"]) == 0
    out = capsys.readouterr().out
    assert "ESTIMATED from probabilities (no labels)" in out


@pytest.mark.parametrize(("extra", "message"), [
    (["--metrics", "log_loss"], "cannot be estimated"),
    (["--from-logits"], "--from-logits: not available for estimated metrics"),
    (["--task", "multilabel"], "--task multilabel: not available"),
    (["--pos-label", "1"], "--pos-label: not available"),
])
def test_usage_errors(tmp_path, capsys, extra, message):
    path = tmp_path / "s.csv"
    path.write_text("p\n0.2\n0.9\n")
    assert main([str(path), "--score", "p", *extra]) == 2
    assert message in capsys.readouterr().err


def test_bad_probabilities_are_data_errors(tmp_path, capsys):
    path = tmp_path / "s.csv"
    path.write_text("a,b\n0.2,0.8\n0.5,0.6\n")
    assert main([str(path), "--score", "a", "--score", "b"]) == 1
    err = capsys.readouterr().err
    assert "row 2" in err and "sum to 1" in err and "Traceback" not in err
