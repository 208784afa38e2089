"""``streammetrics evaluate``: the log loss, Brier, ECE and KS rows equal scikit-learn, scipy and
the library on CSV and Parquet (binary, multiclass, weighted, logits); scores that are not
probabilities drop the default rows with a note or fail a named request (one line, exit 1);
``--plot`` writes the reliability diagram and the gains and lift charts as PNGs."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")
pcsv = pytest.importorskip("pyarrow.csv")
pytest.importorskip("rich")
metrics = pytest.importorskip("sklearn.metrics")
stats = pytest.importorskip("scipy.stats")

import streammetrics as sm  # noqa: E402
from streammetrics.__main__ import main  # noqa: E402
from streammetrics.plot import bin_counts  # noqa: E402

PNG = b"\x89PNG\r\n\x1a\n"
CAL = ("log_loss", "brier", "ece")


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    rc = main(["evaluate", *argv])
    out = capsys.readouterr()
    assert "Traceback" not in out.err
    return rc, out.out, out.err


def run_json(capsys: pytest.CaptureFixture[str], *argv: str) -> dict:
    rc, out, err = run(capsys, *argv, "--json", "-")
    assert rc == 0, err
    return json.loads(out)


def binary(n: int = 1500, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    z = rng.normal(size=n) + 1.2 * y  # logits
    p = 1.0 / (1.0 + np.exp(-z))
    p[:5] = [0.0, 1.0, 0.5, 0.2, 0.8]  # edges of the bins and the clipping of log loss
    w = rng.integers(1, 4, n).astype(float)
    return y, p, z, w


def multiclass(n: int = 1200, k: int = 4, seed: int = 1) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    y = rng.integers(0, k, n)
    z = rng.normal(size=(n, k))
    z[np.arange(n), y] += 1.3
    p = np.exp(z - z.max(axis=1, keepdims=True))
    p /= p.sum(axis=1, keepdims=True)
    return y, p, z


def write(tmp_path, name: str, table) -> str:
    path = str(tmp_path / name)
    if name.endswith(".csv"):
        pcsv.write_csv(table, path)
    else:
        pq.write_table(table, path)
    return path


@pytest.mark.parametrize("fmt", ["csv", "parquet"])
def test_binary_rows_equal_sklearn_scipy_and_library(tmp_path, capsys, fmt):
    y, p, z, w = binary()
    path = write(tmp_path, f"d.{fmt}", pa.table({"y": y, "p": p, "z": z, "w": w}))
    res = run_json(capsys, path, "--label", "y", "--score", "p", "--batch-size", "97")
    m = res["metrics"]
    assert m["log_loss"] == pytest.approx(metrics.log_loss(y, p), rel=1e-12)
    assert m["brier"] == pytest.approx(metrics.brier_score_loss(y, p), rel=1e-12)
    assert m["ece"] == pytest.approx(sm.CalibrationError(n_bins=15).update(y, p).compute(), rel=1e-12)
    ks = stats.ks_2samp(p[y == 1], p[y == 0])
    assert m["ks"] == pytest.approx(ks.statistic, rel=1e-12)
    assert res["ks_threshold"] == sm.KSStatistic().update(y, p).threshold()
    assert res["notes"] == [] and res["from_logits"] is False
    # weighted
    res = run_json(capsys, path, "--label", "y", "--score", "p", "--weight", "w", "--batch-size", "200")
    m = res["metrics"]
    assert m["log_loss"] == pytest.approx(metrics.log_loss(y, p, sample_weight=w), rel=1e-12)
    assert m["brier"] == pytest.approx(metrics.brier_score_loss(y, p, sample_weight=w), rel=1e-12)
    assert m["ece"] == pytest.approx(sm.CalibrationError().update(y, p, sample_weight=w).compute(), rel=1e-12)
    assert m["ks"] == pytest.approx(sm.KSStatistic().update(y, p, sample_weight=w).compute(), rel=1e-12)


def test_binary_from_logits(tmp_path, capsys):
    y, p, z, _ = binary()
    path = write(tmp_path, "d.parquet", pa.table({"y": y, "z": z}))
    res = run_json(capsys, path, "--label", "y", "--score", "z", "--from-logits")
    sig = 1.0 / (1.0 + np.exp(-z))
    assert res["from_logits"] is True and res["threshold"] == 0.0 and res["notes"] == []
    assert res["metrics"]["log_loss"] == pytest.approx(metrics.log_loss(y, sig), rel=1e-9)
    assert res["metrics"]["brier"] == pytest.approx(metrics.brier_score_loss(y, sig), rel=1e-9)
    assert res["metrics"]["accuracy"] == pytest.approx(metrics.accuracy_score(y, (z >= 0).astype(int)))
    # KS is invariant under the (monotone) sigmoid
    assert res["metrics"]["ks"] == pytest.approx(stats.ks_2samp(z[y == 1], z[y == 0]).statistic, rel=1e-12)
    # an explicit --threshold still wins
    res = run_json(capsys, path, "--label", "y", "--score", "z", "--from-logits", "--threshold", "0.3")
    assert res["threshold"] == 0.3


@pytest.mark.parametrize("layout", ["list", "columns"])
def test_multiclass_rows_equal_sklearn_and_library(tmp_path, capsys, layout):
    y, p, _ = multiclass()
    k = p.shape[1]
    if layout == "list":
        path = write(tmp_path, "m.parquet", pa.table({"y": y, "p": list(p)}))
        score = ["--score", "p"]
    else:
        path = write(tmp_path, "m.csv", pa.table({"y": y, **{f"p{c}": p[:, c] for c in range(k)}}))
        score = [a for c in range(k) for a in ("--score", f"p{c}")]
    res = run_json(capsys, path, "--label", "y", *score, "--batch-size", "101")
    m = res["metrics"]
    assert "ks" not in m
    assert m["log_loss"] == pytest.approx(metrics.log_loss(y, p, labels=range(k)), rel=1e-12)
    assert m["brier"] == pytest.approx(
        metrics.brier_score_loss(y, p, labels=range(k), scale_by_half=False), rel=1e-12)
    assert m["ece"] == pytest.approx(sm.CalibrationError(k).update(y, p).compute(), rel=1e-12)


def test_multiclass_logits(tmp_path, capsys):
    y, p, z = multiclass()
    path = write(tmp_path, "m.parquet", pa.table({"y": y, "z": list(z)}))
    res = run_json(capsys, path, "--label", "y", "--score", "z", "--from-logits")
    assert res["metrics"]["log_loss"] == pytest.approx(metrics.log_loss(y, p), rel=1e-9)
    assert res["metrics"]["ece"] == pytest.approx(sm.CalibrationError(4).update(y, p).compute(), rel=1e-9)


def test_raw_scores_drop_default_rows_with_a_note(tmp_path, capsys):
    y, p, z, _ = binary()
    path = write(tmp_path, "d.csv", pa.table({"y": y, "z": z}))
    res = run_json(capsys, path, "--label", "y", "--score", "z", "--batch-size", "100")
    assert not set(CAL) & set(res["metrics"])
    assert "auroc" in res["metrics"] and "ks" in res["metrics"]  # ranking rows take any score
    first = int(np.flatnonzero((z < 0) | (z > 1))[0])
    assert len(res["notes"]) == 1
    note = res["notes"][0]
    assert "log_loss, brier, ece skipped" in note and f"row {first + 1}" in note and "--from-logits" in note
    assert "\n" not in note
    rc, out, err = run(capsys, path, "--label", "y", "--score", "z")
    assert rc == 0 and "note: log_loss, brier, ece skipped" in out and "log_loss " not in out


def test_raw_scores_fail_a_named_request(tmp_path, capsys):
    y, _, z, _ = binary()
    path = write(tmp_path, "d.csv", pa.table({"y": y, "z": z}))
    rc, out, err = run(capsys, path, "--label", "y", "--score", "z", "--metrics", "accuracy,log_loss")
    first = int(np.flatnonzero((z < 0) | (z > 1))[0])
    assert rc == 1 and out == ""
    assert err.count("\n") == 1 and f"row {first + 1}" in err and "--from-logits" in err


def test_rows_not_summing_to_one_are_used_as_sklearn_uses_them(tmp_path, capsys):
    """Rounded probabilities (and rows further off) are accepted, as scikit-learn's log_loss
    accepts them, with its warning in the report; no advice to pass --from-logits."""
    metrics = pytest.importorskip("sklearn.metrics")
    y, p, _ = multiclass()
    p = np.round(p, 6)
    p[7] *= 1.01
    path = write(tmp_path, "m.parquet", pa.table({"y": y, "p": list(p)}))
    res = run_json(capsys, path, "--label", "y", "--score", "p", "--metrics", "log_loss,brier")
    assert res["metrics"]["log_loss"] == pytest.approx(metrics.log_loss(y, p, labels=range(p.shape[1])), abs=1e-12)
    assert any(w.startswith("The y_prob values do not sum to one") and "index 7" in w for w in res["warnings"])
    assert not res["notes"] and not any("logits" in w for w in res["warnings"])
    rc, out, err = run(capsys, path, "--label", "y", "--score", "p")
    assert rc == 0 and err == "" and "log_loss" in out and "do not sum to one" in out


@pytest.mark.parametrize(("argv", "code", "text"), [
    (["--metrics", "ece,wrong"], 2, "--metrics: unknown wrong"),
    (["--from-logits=yes"], 2, "--from-logits"),
])
def test_usage_errors_are_one_line(tmp_path, capsys, argv, code, text):
    y, p, _, _ = binary(200)
    path = write(tmp_path, "d.csv", pa.table({"y": y, "p": p}))
    rc, _, err = run(capsys, path, "--label", "y", "--score", "p", *argv)
    assert rc == code and err.count("\n") == 1 and text in err, err


def test_ks_not_for_multiclass_and_kept_under_max_bytes(tmp_path, capsys):
    y, p, _ = multiclass(300)
    path = write(tmp_path, "m.parquet", pa.table({"y": y, "p": list(p)}))
    rc, _, err = run(capsys, path, "--label", "y", "--score", "p", "--metrics", "ks")
    assert rc == 2 and "ks not defined for the multiclass task" in err
    y, p, _, _ = binary(300)
    path = write(tmp_path, "d.parquet", pa.table({"y": y, "p": p}))
    exact = run_json(capsys, path, "--label", "y", "--score", "p")
    # bins still exact (each one distinct score): KS, its threshold and AUROC's DeLong interval
    # are those of the exact state
    still = run_json(capsys, path, "--label", "y", "--score", "p", "--max-bytes", "64k")
    assert still["exact"] and not still["notes"]
    for key in ("ks", "auroc", "log_loss"):
        assert still["metrics"][key] == exact["metrics"][key]
    assert still["ks_threshold"] == exact["ks_threshold"]
    np.testing.assert_allclose(still["intervals"]["auroc"], exact["intervals"]["auroc"], rtol=0, atol=1e-12)
    # bins holding several scores: KS with certified bounds holding the exact value, no interval
    binned = run_json(capsys, path, "--label", "y", "--score", "p", "--max-bytes", "600")
    assert not binned["exact"] and "auroc" not in binned["intervals"]
    for key in ("ks", "auroc"):
        lo, hi = binned["bounds"][key]
        assert lo <= exact["metrics"][key] <= hi
    # a weight column: the bins' counts are not the samples, so no DeLong interval from them
    w = np.random.default_rng(0).random(300)
    path = write(tmp_path, "w.parquet", pa.table({"y": y, "p": p, "w": w}))
    weighted = run_json(capsys, path, "--label", "y", "--score", "p", "--weight", "w", "--max-bytes", "64k")
    assert "auroc" not in weighted["intervals"] and "ks" in weighted["metrics"]


def test_bundled_example_table_has_the_rows(capsys):
    rc, out, err = run(capsys)
    assert rc == 0 and err == ""
    names = [line.split("│")[1].strip() for line in out.splitlines() if line.startswith("│")]
    assert names[-4:] == ["log_loss", "brier", "ece", "ks"] and "note:" not in out


def _pngs(directory) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in directory.iterdir()}


def test_plots_binary_multiclass_and_raw(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    y, p, z, _ = binary(400)
    path = write(tmp_path, "d.parquet", pa.table({"y": y, "p": p, "z": z}))
    out = tmp_path / "bin"
    rc, _, err = run(capsys, path, "--label", "y", "--score", "p", "--plot", str(out), "--quiet")
    assert rc == 0, err
    files = _pngs(out)
    for name in ("reliability.png", "gains.png", "lift.png"):
        assert files[name].startswith(PNG) and len(files[name]) > 5000, name
    y, pm, _ = multiclass(400)
    path_m = write(tmp_path, "m.parquet", pa.table({"y": y, "p": list(pm)}))
    out = tmp_path / "mc"
    assert run(capsys, path_m, "--label", "y", "--score", "p", "--plot", str(out))[0] == 0
    files = _pngs(out)
    assert files["reliability.png"].startswith(PNG) and "gains.png" not in files
    out = tmp_path / "raw"  # logits without --from-logits: no reliability diagram, noted
    rc, text, _ = run(capsys, path, "--label", "y", "--score", "z", "--plot", str(out))
    assert rc == 0 and "reliability diagram" in text
    files = _pngs(out)
    assert "reliability.png" not in files and files["gains.png"].startswith(PNG)


@settings(max_examples=60, deadline=None)
@given(values=st.lists(st.floats(0.0, 1.0), min_size=1, max_size=60),
       n_bins=st.integers(1, 20), seed=st.integers(0, 2**16))
def test_bin_counts_rebuild_every_bin_of_the_curve(values, n_bins, seed):
    """The histogram beneath the reliability diagram: the non-empty bins of CalibrationCurve,
    put back at their positions, are scikit-learn's uniform bins (a value on an inner edge in
    the lower bin)."""
    p = np.array(values)
    y = np.random.default_rng(seed).integers(0, 2, p.size)
    curve = sm.CalibrationCurve(n_bins).update(y, p).compute()
    edges = np.linspace(0.0, 1.0, n_bins + 1)
    expected = np.bincount(np.searchsorted(edges[1:-1], p), minlength=n_bins)
    np.testing.assert_array_equal(bin_counts(curve.prob_pred, curve.counts, n_bins), expected)


def test_multilabel_has_no_calibration_rows(tmp_path, capsys):
    rng = np.random.default_rng(3)
    y = rng.integers(0, 2, (200, 3))
    z = rng.normal(size=(200, 3)) + y
    path = write(tmp_path, "ml.parquet", pa.table({"y": list(y), "z": list(z)}))
    rc, _, err = run(capsys, path, "--label", "y", "--score", "z", "--metrics", "log_loss")
    assert rc == 2 and err.count("\n") == 1 and "log_loss not defined for the multilabel task" in err
    res = run_json(capsys, path, "--label", "y", "--score", "z", "--from-logits")
    assert res["threshold"] == 0.0 and not set(CAL) & set(res["metrics"]) and res["notes"] == []
    expected = sm.Accuracy(3, threshold=0.0, multilabel=True).update(y, z).compute()
    assert res["metrics"]["accuracy"] == pytest.approx(expected)
