"""``streammetrics evaluate``: results equal the library and scikit-learn on CSV, gzip CSV, Parquet
and JSON Lines; multiclass via columns and list columns; errors with exit codes, no traceback;
plots are PNGs; bounded peak RSS on a file of millions of rows."""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
import time
import warnings

import numpy as np
import pytest
from helpers import run_json

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")
pytest.importorskip("rich")
metrics = pytest.importorskip("sklearn.metrics")

import streammetrics as sm  # noqa: E402
from streammetrics.__main__ import main  # noqa: E402
from streammetrics.cli.evaluate import _Histogram, max_bytes_supported, parse_size  # noqa: E402

PNG = b"\x89PNG\r\n\x1a\n"


def run_err(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    rc = main(["evaluate", *argv])
    out = capsys.readouterr()
    assert "Traceback" not in out.err
    return rc, out.err


def binary_data(n: int = 3000, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    s = np.round(rng.random(n) * 0.6 + 0.4 * y, 2)  # ties
    w = rng.integers(1, 4, n).astype(float)
    return y, s, w


def write_all(tmp_path, y, s, w) -> dict[str, str]:
    table = pa.table({"y": y, "p": s, "w": w, "other": np.zeros(len(y))})
    paths = {}
    import pyarrow.csv as pcsv

    paths["csv"] = str(tmp_path / "d.csv")
    pcsv.write_csv(table, paths["csv"])
    paths["gz"] = str(tmp_path / "d.csv.gz")
    with open(paths["csv"], "rb") as src, gzip.open(paths["gz"], "wb") as dst:
        dst.write(src.read())
    paths["parquet"] = str(tmp_path / "d.parquet")
    pq.write_table(table, paths["parquet"], row_group_size=700)
    paths["jsonl"] = str(tmp_path / "d.jsonl")
    with open(paths["jsonl"], "w") as fh:
        for a, b, c in zip(y.tolist(), s.tolist(), w.tolist(), strict=True):
            fh.write(json.dumps({"y": a, "p": b, "w": c, "other": 0.0}) + "\n")
    return paths


def sklearn_binary(y, s, w=None, t=0.5) -> dict[str, float]:
    pred = (s >= t).astype(int)
    return {
        "accuracy": metrics.accuracy_score(y, pred, sample_weight=w),
        "precision": metrics.precision_score(y, pred, sample_weight=w),
        "recall": metrics.recall_score(y, pred, sample_weight=w),
        "f1": metrics.f1_score(y, pred, sample_weight=w),
        "specificity": metrics.recall_score(y, pred, pos_label=0, sample_weight=w),
        "npv": metrics.precision_score(y, pred, pos_label=0, sample_weight=w),
        "balanced_accuracy": metrics.balanced_accuracy_score(y, pred, sample_weight=w),
        "mcc": metrics.matthews_corrcoef(y, pred, sample_weight=w),
        "auroc": metrics.roc_auc_score(y, s, sample_weight=w),
        "average_precision": metrics.average_precision_score(y, s, sample_weight=w),
    }


@pytest.mark.parametrize("fmt", ["csv", "gz", "parquet", "jsonl"])
def test_binary_formats_equal_sklearn_and_library(tmp_path, capsys, fmt):
    y, s, w = binary_data()
    paths = write_all(tmp_path, y, s, w)
    res = run_json(capsys, paths[fmt], "--label", "y", "--score", "p", "--batch-size", "512",
                   "--threshold", "0.55")
    assert res["rows"] == len(y) and res["exact"] is True and res["task"] == "binary"
    expected = sklearn_binary(y, s, t=0.55)
    # the default rows: these plus the calibration rows (tests/cli/test_cli_calibration.py)
    assert set(res["metrics"]) == set(expected) | {"log_loss", "brier", "ece", "ks"}
    for name, v in expected.items():
        assert res["metrics"][name] == pytest.approx(v, rel=1e-12, abs=1e-15), name
    lib = sm.AUROC().update(y, s)
    assert res["metrics"]["auroc"] == lib.compute()
    lo, hi = lib.interval()
    assert res["intervals"]["auroc"] == [lo, hi]
    lo, hi = sm.Precision(threshold=0.55).update(y, s).interval()
    assert res["intervals"]["precision"] == [lo, hi]
    res = run_json(capsys, paths[fmt], "--label", "y", "--score", "p", "--no-intervals")
    assert res["intervals"] == {} and res["metrics"]["auroc"] == lib.compute()
    # weighted
    res = run_json(capsys, paths[fmt], "--label", "y", "--score", "p", "--weight", "w", "--batch-size", "999")
    assert res["weighted"] is True
    for name, v in sklearn_binary(y, s, w).items():
        assert res["metrics"][name] == pytest.approx(v, rel=1e-12, abs=1e-15), name


def test_float32_scores_are_exact(tmp_path, capsys):
    rng = np.random.default_rng(8)
    y = rng.integers(0, 2, 5000)
    s = rng.random(5000).astype(np.float32)
    s[:100] = np.float32(0.5)  # ties at the threshold
    pq.write_table(pa.table({"y": y, "p": s}), str(tmp_path / "f32.parquet"))
    res = run_json(capsys, str(tmp_path / "f32.parquet"), "--label", "y", "--score", "p")
    for name, v in sklearn_binary(y, s.astype(np.float64)).items():
        assert res["metrics"][name] == pytest.approx(v, rel=1e-12, abs=1e-15), name


def test_several_files_directory_and_glob_form_one_stream(tmp_path, capsys):
    y, s, _ = binary_data(2000, seed=3)
    d = tmp_path / "parts"
    d.mkdir()
    for i, (a, b) in enumerate([(0, 500), (500, 1400), (1400, 2000)]):
        pq.write_table(pa.table({"y": y[a:b], "p": s[a:b]}), str(d / f"part{i}.parquet"))
    expected = metrics.roc_auc_score(y, s)
    for argv in ([str(d)], [str(d / "part*.parquet")],
                 [str(d / "part0.parquet"), str(d / "part1.parquet"), str(d / "part2.parquet")]):
        res = run_json(capsys, *argv, "--label", "y", "--score", "p", "--metrics", "auroc,accuracy")
        assert res["rows"] == 2000
        assert list(res["metrics"]) == ["auroc", "accuracy"]
        assert res["metrics"]["auroc"] == pytest.approx(expected, rel=1e-12)


def multiclass_data(n: int = 2500, k: int = 4, seed: int = 1) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    y = rng.integers(0, k, n)
    logits = rng.normal(size=(n, k)) + 1.5 * np.eye(k)[y]
    p = np.exp(logits)
    p /= p.sum(axis=1, keepdims=True)
    return y, np.round(p, 3)


def check_multiclass(res, y, p, classes):
    pred = p.argmax(axis=1)
    m = res["metrics"]
    assert res["task"] == "multiclass" and res["classes"] == classes
    assert m["accuracy"] == pytest.approx(metrics.accuracy_score(y, pred), rel=1e-12)
    assert m["f1"] == pytest.approx(metrics.f1_score(y, pred, average="macro"), rel=1e-12)
    assert m["mcc"] == pytest.approx(metrics.matthews_corrcoef(y, pred), rel=1e-12)
    assert m["cohen_kappa"] == pytest.approx(metrics.cohen_kappa_score(y, pred), rel=1e-12)
    k = p.shape[1]
    yb = np.eye(k)[y]
    auc = [metrics.roc_auc_score(yb[:, c], p[:, c]) for c in range(k)]  # one-vs-rest (rounded p)
    assert m["auroc"] == pytest.approx(np.mean(auc), rel=1e-12)
    ap = [metrics.average_precision_score(yb[:, c], p[:, c]) for c in range(k)]
    assert m["average_precision"] == pytest.approx(np.mean(ap), rel=1e-12)
    recall = metrics.recall_score(y, pred, average=None)
    assert [res["per_class"]["recall"][c] for c in classes] == pytest.approx(recall, rel=1e-12)
    assert [res["per_class"]["average_precision"][c] for c in classes] == pytest.approx(ap, rel=1e-12)


def test_multiclass_from_columns_and_from_a_list_column(tmp_path, capsys):
    y, p = multiclass_data()
    cols = {f"p{c}": p[:, c] for c in range(4)}
    pq.write_table(pa.table({"y": y, **cols}), str(tmp_path / "cols.parquet"))
    score_args = [a for c in range(4) for a in ("--score", f"p{c}")]
    res = run_json(capsys, str(tmp_path / "cols.parquet"), "--label", "y", *score_args, "--batch-size", "300")
    check_multiclass(res, y, p, ["p0", "p1", "p2", "p3"])
    # one list column, in Parquet and in JSON Lines
    pq.write_table(pa.table({"y": y, "probs": list(p)}), str(tmp_path / "list.parquet"))
    res = run_json(capsys, str(tmp_path / "list.parquet"), "--label", "y", "--score", "probs")
    check_multiclass(res, y, p, ["0", "1", "2", "3"])
    with open(tmp_path / "list.jsonl", "w") as fh:
        for a, b in zip(y.tolist(), p.tolist(), strict=True):
            fh.write(json.dumps({"y": a, "probs": b}) + "\n")
    res = run_json(capsys, str(tmp_path / "list.jsonl"), "--label", "y", "--score", "probs")
    check_multiclass(res, y, p, ["0", "1", "2", "3"])


def test_string_labels_are_mapped_and_reported(tmp_path, capsys):
    y, p = multiclass_data(1200, 3, seed=5)
    names = np.array(["cat", "dog", "eel"])
    # labels name the score columns
    pq.write_table(pa.table({"animal": names[y], "cat": p[:, 0], "dog": p[:, 1], "eel": p[:, 2]}),
                   str(tmp_path / "a.parquet"))
    res = run_json(capsys, str(tmp_path / "a.parquet"), "--label", "animal",
                   "--score", "cat", "--score", "dog", "--score", "eel")
    assert res["label_mapping"] == {"cat": 0, "dog": 1, "eel": 2}
    check_multiclass(res, y, p, ["cat", "dog", "eel"])
    # binary text labels: never guessed -- an error without --pos-label, or given with --classes
    yb, s, _ = binary_data(800, seed=2)
    text = np.array(["benign", "malignant"])[yb]
    pq.write_table(pa.table({"dx": text, "p": s}), str(tmp_path / "b.parquet"))
    rc, err = run_err(capsys, str(tmp_path / "b.parquet"), "--label", "dx", "--score", "p")
    assert rc == 2 and "'benign', 'malignant'" in err and "--pos-label" in err
    res = run_json(capsys, str(tmp_path / "b.parquet"), "--label", "dx", "--score", "p", "--pos-label", "malignant")
    assert res["label_mapping"] == {"benign": 0, "malignant": 1} and res["positive_label"] == "malignant"
    assert res["metrics"]["auroc"] == pytest.approx(metrics.roc_auc_score(yb, s), rel=1e-12)
    res = run_json(capsys, str(tmp_path / "b.parquet"), "--label", "dx", "--score", "p",
                   "--classes", "malignant,benign")
    assert res["metrics"]["auroc"] == pytest.approx(metrics.roc_auc_score(1 - yb, s), rel=1e-12)
    first = int(np.argmax(yb == 1))
    rc = main(["evaluate", str(tmp_path / "b.parquet"), "--label", "dx", "--score", "p", "--classes", "benign,other"])
    err = capsys.readouterr().err
    assert rc == 1 and f"row {first + 1}: column 'dx': label 'malignant' is not one of the classes" in err


def test_multilabel_from_label_and_score_columns(tmp_path, capsys):
    rng = np.random.default_rng(7)
    y = rng.integers(0, 2, (900, 3))
    s = np.round(rng.random((900, 3)) * 0.7 + 0.3 * y, 2)
    table = {**{f"y{i}": y[:, i] for i in range(3)}, **{f"s{i}": s[:, i] for i in range(3)}}
    pq.write_table(pa.table(table), str(tmp_path / "m.parquet"))
    args = [a for i in range(3) for a in ("--label", f"y{i}")] + [a for i in range(3) for a in ("--score", f"s{i}")]
    res = run_json(capsys, str(tmp_path / "m.parquet"), *args, "--task", "multilabel")
    m = res["metrics"]
    pred = (s >= 0.5).astype(int)
    assert m["hamming_loss"] == pytest.approx(metrics.hamming_loss(y, pred), rel=1e-12)
    assert m["f1"] == pytest.approx(metrics.f1_score(y, pred, average="macro"), rel=1e-12)
    assert m["auroc"] == pytest.approx(metrics.roc_auc_score(y, s), rel=1e-12)
    assert res["classes"] == ["y0", "y1", "y2"]


def test_bundled_example_runs(capsys):
    assert main(["evaluate"]) == 0
    out = capsys.readouterr().out
    assert "569 rows" in out and "auroc" in out and "0.9945" in out
    res = run_json(capsys)
    from streammetrics.cli.demo import example_batches

    y = np.concatenate([b[0] for b in example_batches()])
    s = np.concatenate([b[1] for b in example_batches()])
    assert res["rows"] == 569
    for name, v in sklearn_binary(y, s).items():
        assert res["metrics"][name] == pytest.approx(v, rel=1e-12), name


def test_entry_point_runs_as_a_process(tmp_path):
    out = subprocess.run([sys.executable, "-m", "streammetrics", "evaluate", "--json", str(tmp_path / "r.json")],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert json.loads((tmp_path / "r.json").read_text())["rows"] == 569
    bad = subprocess.run([sys.executable, "-m", "streammetrics", "evaluate", str(tmp_path / "nope.csv"),
                          "--label", "y", "--score", "p"], capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and "Traceback" not in bad.stderr and "no such file" in bad.stderr


def test_plots_are_pngs(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    assert main(["evaluate", "--plot", str(tmp_path / "plots")]) == 0
    names = sorted(os.listdir(tmp_path / "plots"))
    assert names == ["confusion_matrix.png", "gains.png", "lift.png", "pr.png", "reliability.png", "roc.png",
                     "score_histogram.png"]  # calibration plots: tests/cli/test_cli_calibration.py
    for n in names:
        data = (tmp_path / "plots" / n).read_bytes()
        assert data[:8] == PNG and len(data) > 5000
    y, p = multiclass_data(600, 3)
    pq.write_table(pa.table({"y": y, "probs": list(p)}), str(tmp_path / "mc.parquet"))
    assert main(["evaluate", str(tmp_path / "mc.parquet"), "--label", "y", "--score", "probs",
                 "--plot", str(tmp_path / "mc")]) == 0
    # these rows are rounded (sums of 0.999): used as given, as scikit-learn does (its warning)
    assert sorted(os.listdir(tmp_path / "mc")) == ["confusion_matrix.png", "pr.png", "reliability.png", "roc.png",
                                                   "score_histogram.png"]
    for n in ("roc.png", "pr.png", "gains.png", "lift.png"):
        assert (tmp_path / "plots" / n).read_bytes()[:8] == PNG
    if max_bytes_supported(plots=True):  # binned state: the uncertainty boxes are drawn
        assert main(["evaluate", "--max-bytes", "1k", "--plot", str(tmp_path / "binned"), "--quiet"]) == 0
        for n in ("roc.png", "pr.png", "gains.png", "lift.png"):
            assert (tmp_path / "binned" / n).read_bytes()[:8] == PNG


def test_errors_have_messages_and_exit_codes(tmp_path, capsys):
    y, s, w = binary_data(300)
    paths = write_all(tmp_path, y, s, w)
    rc, err = run_err(capsys, str(tmp_path / "missing.csv"), "--label", "y", "--score", "p")
    assert rc == 2 and "missing.csv: no such file" in err
    rc, err = run_err(capsys, paths["parquet"], "--label", "y", "--score", "prob")
    assert rc == 2 and "no column 'prob'" in err and "available columns: y, p, w, other" in err
    rc, err = run_err(capsys, paths["csv"], "--label", "y")
    assert rc == 2 and "--label and --score are required" in err
    rc, err = run_err(capsys, paths["csv"], "--label", "y", "--score", "p", "--metrics", "auroc,bogus")
    assert rc == 2 and "unknown bogus" in err
    # non-numeric and NaN scores, with file and row
    lines = ["y,p"] + [f"{a},{b}" for a, b in zip(y[:50], s[:50], strict=True)]
    lines[31] = "1,abc"
    (tmp_path / "text.csv").write_text("\n".join(lines) + "\n")
    rc, err = run_err(capsys, str(tmp_path / "text.csv"), "--label", "y", "--score", "p")
    assert rc == 1 and "text.csv: row 31: column 'p': 'abc' is not a number" in err
    lines[31] = "1,nan"
    (tmp_path / "nan.csv").write_text("\n".join(lines) + "\n")
    rc, err = run_err(capsys, str(tmp_path / "nan.csv"), "--label", "y", "--score", "p", "--batch-size", "7")
    assert rc == 1 and "nan.csv: row 31: column 'p': value is missing (empty, NA or NaN)" in err
    s_nan = s.copy()
    s_nan[122] = np.nan
    pq.write_table(pa.table({"y": y, "p": s_nan}), str(tmp_path / "nan.parquet"))
    rc, err = run_err(capsys, str(tmp_path / "nan.parquet"), "--label", "y", "--score", "p", "--batch-size", "50")
    assert rc == 1 and "nan.parquet: row 123: column 'p': value is NaN" in err
    lines[31] = "1,"
    (tmp_path / "empty.csv").write_text("\n".join(lines) + "\n")
    rc, err = run_err(capsys, str(tmp_path / "empty.csv"), "--label", "y", "--score", "p")
    assert rc == 1 and "row 31: column 'p': value is missing" in err
    # labels outside the task
    lines[31] = "2,0.3"
    (tmp_path / "lab.csv").write_text("\n".join(lines) + "\n")
    rc, err = run_err(capsys, str(tmp_path / "lab.csv"), "--label", "y", "--score", "p", "--batch-size", "10")
    assert rc == 1 and "row 31: column 'y': label 2 is outside the binary task (labels must be 0 or 1)" in err
    yy, pp = multiclass_data(100, 3)
    yy[57] = 3
    pq.write_table(pa.table({"y": yy, "probs": list(pp)}), str(tmp_path / "mc.parquet"))
    rc, err = run_err(capsys, str(tmp_path / "mc.parquet"), "--label", "y", "--score", "probs")
    assert rc == 1 and "row 58: column 'y': label 3 is outside the multiclass task" in err
    # unreadable and unknown formats
    (tmp_path / "bad.parquet").write_bytes(b"this is not parquet at all")
    rc, err = run_err(capsys, str(tmp_path / "bad.parquet"), "--label", "y", "--score", "p")
    assert rc == 1 and "bad.parquet: cannot read as parquet" in err
    (tmp_path / "data.xlsx").write_bytes(b"PK")
    rc, err = run_err(capsys, str(tmp_path / "data.xlsx"), "--label", "y", "--score", "p")
    assert rc == 2 and "unknown format" in err
    # argparse usage errors exit 2 too
    assert main(["evaluate", "--max-bytes", "lots"]) == 2
    assert "not a size" in capsys.readouterr().err


def test_max_bytes_bounded_or_clear_usage_error(tmp_path, capsys):
    supported = max_bytes_supported(plots=False)
    y, s, _ = binary_data(20000, seed=9)
    pq.write_table(pa.table({"y": y, "p": s + np.random.default_rng(0).random(len(s)) * 1e-3}),
                   str(tmp_path / "b.parquet"))
    argv = [str(tmp_path / "b.parquet"), "--label", "y", "--score", "p", "--max-bytes", "64k"]
    if not supported:
        rc, err = run_err(capsys, *argv)
        assert rc == 2 and "bounded mode is not available yet" in err
        return
    res = run_json(capsys, *argv)
    exact = metrics.roc_auc_score(y, s)
    if not res["exact"]:
        lo, hi = res["bounds"]["auroc"]
        assert lo - 1e-3 <= exact <= hi + 1e-3
    assert res["max_bytes"] == 65536


def test_parse_size_and_histogram():
    assert parse_size("1048576") == 1048576
    assert parse_size("512k") == 512 * 1024
    assert parse_size("64MB") == 64 << 20
    assert parse_size("1.5G") == int(1.5 * (1 << 30))
    h = _Histogram(1, bins=8)
    h.add(0, np.array([0.1, 0.6, 0.9]), None)
    h.add(0, np.array([3.5, -2.0]), None)
    assert h.counts.sum() == 5
    assert h.edges[0] <= -2.0 and h.edges[-1] >= 3.5
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        counts, _ = np.histogram([0.1, 0.6, 0.9, 3.5, -2.0], bins=h.edges)
    assert counts.tolist() == h.counts[0].tolist()


RSS_SCRIPT = """
import os, sys
from streammetrics.__main__ import main
rc = main(["evaluate", sys.argv[1], "--label", "y", "--score", "p", "--metrics", sys.argv[2],
           "--batch-size", "65536", "--json", os.devnull, "--quiet"] + sys.argv[4:])
with open("/proc/self/status") as fh:
    hwm = next(line for line in fh if line.startswith("VmHWM:"))
with open(sys.argv[3], "w") as out:
    out.write(hwm.split()[1])
sys.exit(rc)
"""


def peak_rss_mb(path: str, metric_names: str, *extra: str) -> float:
    """Peak resident set of a child process running ``evaluate``, in MB.

    Read from the child's own ``VmHWM``: ``getrusage``/``wait4``'s ``ru_maxrss`` is kept across
    ``execve`` on Linux, so it would report the (larger) pytest parent's footprint at fork."""
    out = path + ".hwm"
    proc = subprocess.run([sys.executable, "-c", RSS_SCRIPT, path, metric_names, out, *extra],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    with open(out) as fh:
        return int(fh.read()) / 1024.0  # kB


@pytest.mark.skipif(sys.platform != "linux", reason="ru_maxrss units differ")
def test_millions_of_rows_run_in_bounded_memory(tmp_path):
    rng = np.random.default_rng(0)
    n = 3_000_000
    for name, rows in (("small", 30_000), ("big", n)):
        y = rng.integers(0, 2, rows).astype(np.int8)
        s = rng.random(rows)
        pq.write_table(pa.table({"y": y, "p": s}), str(tmp_path / f"{name}.parquet"), row_group_size=65536)
    confusion = "accuracy,precision,recall,f1,mcc"
    small = peak_rss_mb(str(tmp_path / "small.parquet"), confusion)
    big = peak_rss_mb(str(tmp_path / "big.parquet"), confusion)
    # the data is 27 MB raw (~50 MB as numpy float64 + int64 labels); the stream holds one batch
    # (measured: +4 MB over the 30k-row run; the exact AUROC/AP state would add ~120 MB)
    assert big - small < 15, (small, big)
    # CSV: pyarrow's streaming reader keeps a fixed read-ahead (~17 MB of blocks, plus what its
    # allocator retains, which varies by +-8 MB from run to run with the threads' timing) that a
    # small file never fills, so compare 500k rows with 3M rows: the file grows by 55 MB of text
    # (27 MB as arrow columns; reading it whole would add ~90 MB), the peak must not follow
    # (measured: -6..+30 MB under load; the bound stays at half of what reading it whole adds)
    import pyarrow.csv as pcsv

    table = pq.read_table(str(tmp_path / "big.parquet"))
    pcsv.write_csv(table, str(tmp_path / "big.csv"))
    pcsv.write_csv(table.slice(0, 500_000), str(tmp_path / "medium.csv"))
    medium_csv = peak_rss_mb(str(tmp_path / "medium.csv"), confusion)
    big_csv = peak_rss_mb(str(tmp_path / "big.csv"), confusion)
    assert big_csv - medium_csv < 45, (medium_csv, big_csv)
    if max_bytes_supported(plots=False):
        # measured +13..+17 MB; the exact AUROC/AP state would add ~120 MB
        bounded = peak_rss_mb(str(tmp_path / "big.parquet"), "auroc,average_precision", "--max-bytes", "1M")
        assert bounded - small < 35, (small, bounded)


def test_core_and_other_commands_work_without_the_cli_extra():
    code = """
import sys, io, contextlib
for name in ("pyarrow", "rich", "matplotlib"):
    sys.modules[name] = None  # as if not installed: importing them raises ImportError
from streammetrics.__main__ import main
with contextlib.redirect_stdout(io.StringIO()) as out:
    assert main([]) == 0  # the demo
assert "classification report" in out.getvalue()
rc = main(["evaluate"])
sys.exit(10 + rc)
"""
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 12, proc.stderr
    assert "evaluate needs pyarrow: pip install 'streammetrics[cli]'" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_list_columns_in_a_fresh_process(tmp_path):
    # a fresh interpreter: nothing imported beforehand by other tests (pyarrow.compute, ...)
    rng = np.random.default_rng(4)
    y = rng.integers(0, 2, (400, 3))
    s = np.round(rng.random((400, 3)) * 0.7 + 0.3 * y, 2)
    pq.write_table(pa.table({"y": list(y), "s": list(s)}), str(tmp_path / "ml.parquet"))
    out = tmp_path / "ml.json"
    proc = subprocess.run([sys.executable, "-m", "streammetrics", "evaluate", str(tmp_path / "ml.parquet"),
                           "--label", "y", "--score", "s", "--task", "multilabel", "--json", str(out)],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    res = json.loads(out.read_text())
    assert res["metrics"]["auroc"] == pytest.approx(metrics.roc_auc_score(y, s), rel=1e-12)
    pred = (s >= 0.5).astype(int)
    assert res["metrics"]["f1"] == pytest.approx(metrics.f1_score(y, pred, average="macro"), rel=1e-12)
    y[7, 2] = 2
    pq.write_table(pa.table({"y": list(y), "s": list(s)}), str(tmp_path / "bad.parquet"))
    proc = subprocess.run([sys.executable, "-m", "streammetrics", "evaluate", str(tmp_path / "bad.parquet"),
                           "--label", "y", "--score", "s", "--task", "multilabel"],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert ("bad.parquet: row 8: column 'y' (position 3 of 3): label 2 is outside the multilabel task "
            "(labels must be 0 or 1)") in proc.stderr


def test_benchmark_peers_agree_on_a_small_file(tmp_path):
    pytest.importorskip("pandas")
    from benchmarks import bench_cli

    path = str(tmp_path / "b.parquet")
    bench_cli.make_file(path, 30_000)
    ours = bench_cli.case("evaluate", path, 30_000)
    for impl in ("sklearn", "sklearn-each"):
        theirs = bench_cli.case(impl, path, 30_000)
        assert theirs["rows"] == ours["rows"] == 30_000
        for name in bench_cli.NAMES:
            assert theirs["values"][name] == pytest.approx(ours["values"][name], rel=1e-12, abs=1e-15), (impl, name)


def test_jsonl_scores_that_look_like_integers_in_the_first_block(tmp_path, capsys):
    # pyarrow infers JSON types from the first block: 0/1 scores there would become int64 and a
    # later 0.5 a conversion error; evaluate declares score columns float64
    n = 60_000
    y = np.arange(n) % 2
    s = np.where(np.arange(n) < 40_000, y, 0.5).astype(float)
    with open(tmp_path / "d.jsonl", "w") as fh:
        for a, b in zip(y.tolist(), s.tolist(), strict=True):
            fh.write(json.dumps({"y": a, "p": int(b) if b in (0.0, 1.0) else b}) + "\n")
    res = run_json(capsys, str(tmp_path / "d.jsonl"), "--label", "y", "--score", "p")
    assert res["rows"] == n
    assert res["metrics"]["auroc"] == pytest.approx(metrics.roc_auc_score(y, s), rel=1e-12)


def test_list_column_errors_name_the_file_row(tmp_path, capsys):
    rng = np.random.default_rng(12)
    n = 700
    y = rng.integers(0, 2, (n, 3))
    s = np.round(rng.random((n, 3)), 2)
    y[555, 1] = 3
    pq.write_table(pa.table({"y": list(y), "s": list(s)}), str(tmp_path / "ml.parquet"))
    # a bad label in a later batch (batch size 100): the file row, not the batch index
    rc, err = run_err(capsys, str(tmp_path / "ml.parquet"), "--label", "y", "--score", "s", "--batch-size", "100")
    assert rc == 1
    assert "ml.parquet: row 556: column 'y' (position 2 of 3): label 3 is outside the multilabel task" in err
    # list labels need the multilabel task (inferred when the scores are a list too)
    y[555, 1] = 1
    pq.write_table(pa.table({"y": list(y), "s": list(s)}), str(tmp_path / "ok.parquet"))
    res = run_json(capsys, str(tmp_path / "ok.parquet"), "--label", "y", "--score", "s", "--metrics", "auroc")
    assert res["task"] == "multilabel"
    assert res["metrics"]["auroc"] == pytest.approx(metrics.roc_auc_score(y, s), rel=1e-12)
    rc, err = run_err(capsys, str(tmp_path / "ok.parquet"), "--label", "y", "--score", "s", "--task", "multiclass")
    assert rc == 2 and "list labels are for --task multilabel" in err
    # a NaN score inside a list, a missing list, a list of another length: file row and position
    s_nan = s.copy()
    s_nan[432, 2] = np.nan
    pq.write_table(pa.table({"y": list(y), "s": list(s_nan)}), str(tmp_path / "nan.parquet"))
    rc, err = run_err(capsys, str(tmp_path / "nan.parquet"), "--label", "y", "--score", "s", "--batch-size", "64")
    assert rc == 1 and "nan.parquet: row 433: column 's' (position 3 of 3): value is NaN" in err
    lists = [list(r) for r in s]
    lists[300] = None
    pq.write_table(pa.table({"y": list(y), "s": lists}), str(tmp_path / "null.parquet"))
    rc, err = run_err(capsys, str(tmp_path / "null.parquet"), "--label", "y", "--score", "s", "--batch-size", "64")
    assert rc == 1 and "null.parquet: row 301: column 's': value is missing" in err
    lists[300] = [0.1, 0.2]
    pq.write_table(pa.table({"y": list(y), "s": lists}), str(tmp_path / "short.parquet"))
    rc, err = run_err(capsys, str(tmp_path / "short.parquet"), "--label", "y", "--score", "s")
    assert rc == 1 and "short.parquet: row 301: column 's' holds 2 values, expected 3" in err


def test_weight_errors_and_library_errors_name_the_file_row(tmp_path, capsys):
    from streammetrics.cli.evaluate import _library_error

    y, s, w = binary_data(500, seed=4)
    w[321] = -1.0
    pq.write_table(pa.table({"y": y, "p": s, "w": w}), str(tmp_path / "w.parquet"))
    rc, err = run_err(capsys, str(tmp_path / "w.parquet"), "--label", "y", "--score", "p", "--weight", "w",
                      "--batch-size", "100")
    assert rc == 1 and "w.parquet: row 322: column 'w': weight -1.0 is not finite and >= 0" in err
    # any other ValueError of the library's update: its batch index becomes the file row
    e = _library_error(ValueError("y_true: labels must be 0 or 1; first invalid value 7 at index (4, 2)"),
                       "f.parquet", 1000, 64)
    assert str(e) == "f.parquet: row 1005 (class column 2): y_true: labels must be 0 or 1; first invalid value 7"
    assert e.code == 1
    e = _library_error(ValueError("sample_weight: bad; first invalid value 3 at index 9"), "f.csv", 10, 64)
    assert str(e) == "f.csv: row 20: sample_weight: bad; first invalid value 3"
    e = _library_error(ValueError("y_score: expected shape (64, 3)"), "f.csv", 10, 64)
    assert str(e) == "f.csv: rows 11-74: y_score: expected shape (64, 3)"


def test_jsonl_list_column_with_decimals_after_the_first_block(tmp_path, capsys):
    # pyarrow infers [1, 0, 0] in the first block (512 KB here) as list<int64>; the first
    # decimals come ~20k rows (~0.6 MB) later: the reader declares list columns list<float64>
    n = 60_000
    rng = np.random.default_rng(6)
    y = rng.integers(0, 3, n)
    p = np.eye(3)[y]
    later = np.arange(n) >= 20_000
    q = rng.random((n, 3))
    p[later] = np.round(q[later] / q[later].sum(axis=1, keepdims=True), 4)
    with open(tmp_path / "mc.jsonl", "w") as fh:
        for i in range(n):
            row = [int(v) for v in p[i]] if not later[i] else p[i].tolist()
            fh.write(json.dumps({"y": int(y[i]), "p": row}) + "\n")
    assert os.path.getsize(tmp_path / "mc.jsonl") > 2 * (1 << 19)
    head = b"".join((tmp_path / "mc.jsonl").read_bytes().splitlines()[:20_000])
    assert b"." not in head  # whole numbers only before the decimals start
    res = run_json(capsys, str(tmp_path / "mc.jsonl"), "--label", "y", "--score", "p", "--metrics", "auroc,accuracy")
    assert res["rows"] == n
    auc = [metrics.roc_auc_score(y == c, p[:, c]) for c in range(3)]
    assert res["metrics"]["auroc"] == pytest.approx(np.mean(auc), rel=1e-12)
    assert res["metrics"]["accuracy"] == pytest.approx(metrics.accuracy_score(y, p.argmax(axis=1)), rel=1e-12)
    # a text value inside a list in a later block: pyarrow's in-block row becomes the file row
    lines = (tmp_path / "mc.jsonl").read_text().splitlines()
    lines[45_000] = json.dumps({"y": 1, "p": [0.1, "x", 0.2]})
    (tmp_path / "bad.jsonl").write_text("\n".join(lines) + "\n")
    rc, err = run_err(capsys, str(tmp_path / "bad.jsonl"), "--label", "y", "--score", "p")
    assert rc == 1 and "bad.jsonl: cannot read" in err and "in row 45001" in err


def test_per_class_intervals_and_bounds(tmp_path, capsys):
    y, p = multiclass_data(3000, 3, seed=9)
    pq.write_table(pa.table({"y": y, "probs": list(p)}), str(tmp_path / "mc.parquet"))
    res = run_json(capsys, str(tmp_path / "mc.parquet"), "--label", "y", "--score", "probs", "--batch-size", "700",
                   "--metrics", "accuracy,precision,recall,specificity,f1,auroc,average_precision")
    classes = ["0", "1", "2"]
    assert set(res["per_class_intervals"]) == {"precision", "recall", "specificity", "auroc"}
    for name, cls in (("precision", sm.Precision), ("recall", sm.Recall), ("specificity", sm.Specificity)):
        lo, hi = cls(3, average=None).update(y, p).interval()
        assert res["per_class_intervals"][name] == {c: [a, b] for c, a, b in zip(classes, lo, hi, strict=True)}
    lo, hi = sm.AUROC(3, average=None).update(y, p).interval()
    assert res["per_class_intervals"]["auroc"] == {c: [a, b] for c, a, b in zip(classes, lo, hi, strict=True)}
    for c in classes:  # each interval holds its value
        for name in ("recall", "auroc"):
            a, b = res["per_class_intervals"][name][c]
            assert a <= res["per_class"][name][c] <= b
    assert res["intervals"] == {"accuracy": list(sm.Accuracy(3).update(y, p).interval())}
    assert res["per_class_bounds"] == {} and res["bounds"] == {}
    # the table shows the per-class intervals under the values
    assert main(["evaluate", str(tmp_path / "mc.parquet"), "--label", "y", "--score", "probs", "--quiet"]) == 0
    out = capsys.readouterr().out
    a, b = res["per_class_intervals"]["recall"]["1"]
    assert f"{a:.3f}–{b:.3f}" in out and "95% interval (Wilson; DeLong for AUROC)" in out
    res = run_json(capsys, str(tmp_path / "mc.parquet"), "--label", "y", "--score", "probs", "--no-intervals")
    assert res["per_class_intervals"] == {} and res["intervals"] == {}
    if not max_bytes_supported(plots=False):
        return
    res = run_json(capsys, str(tmp_path / "mc.parquet"), "--label", "y", "--score", "probs", "--max-bytes", "2k",
                   "--metrics", "recall,auroc,average_precision")
    assert res["exact"] is False
    assert "auroc" not in res["per_class_intervals"] and "recall" in res["per_class_intervals"]
    yb = np.eye(3)[y]
    for name, fn in (("auroc", metrics.roc_auc_score), ("average_precision", metrics.average_precision_score)):
        for k, c in enumerate(classes):
            lo, hi = res["per_class_bounds"][name][c]
            assert lo - 1e-12 <= fn(yb[:, k], p[:, k]) <= hi + 1e-12


def test_multilabel_per_class_intervals(tmp_path, capsys):
    rng = np.random.default_rng(10)
    y = rng.integers(0, 2, (800, 3))
    s = np.round(rng.random((800, 3)) * 0.7 + 0.3 * y, 2)
    pq.write_table(pa.table({"y": list(y), "s": list(s)}), str(tmp_path / "ml.parquet"))
    res = run_json(capsys, str(tmp_path / "ml.parquet"), "--label", "y", "--score", "s", "--metrics", "recall,auroc")
    lo, hi = sm.Recall(3, multilabel=True, average=None).update(y, s).interval()
    assert res["per_class_intervals"]["recall"] == {str(c): [lo[c], hi[c]] for c in range(3)}
    lo, hi = sm.AUROC(3, multilabel=True, average=None).update(y, s).interval()
    assert res["per_class_intervals"]["auroc"] == {str(c): [lo[c], hi[c]] for c in range(3)}


def test_partitioned_directory_is_read_recursively(tmp_path, capsys):
    y, s, _ = binary_data(1500, seed=13)
    root = tmp_path / "preds"
    for i, (a, b) in enumerate([(0, 400), (400, 1000), (1000, 1500)]):
        part = root / f"day=2024-01-0{i + 1}"
        part.mkdir(parents=True)
        pq.write_table(pa.table({"y": y[a:b], "p": s[a:b]}), str(part / "part-0.snappy.parquet"))
        (part / ".part-0.snappy.parquet.crc").write_bytes(b"crc")
    (root / "_SUCCESS").write_bytes(b"")
    (root / "_temporary").mkdir()
    pq.write_table(pa.table({"y": y[:5], "p": s[:5]}), str(root / "_temporary" / "junk.parquet"))
    res = run_json(capsys, str(root), "--label", "y", "--score", "p", "--metrics", "auroc")
    assert res["rows"] == 1500 and len(res["files"]) == 3
    assert res["metrics"]["auroc"] == pytest.approx(metrics.roc_auc_score(y, s), rel=1e-12)
    empty = tmp_path / "empty"
    empty.mkdir()
    rc, err = run_err(capsys, str(empty), "--label", "y", "--score", "p")
    assert rc == 2 and "directory holds no CSV, Parquet or JSON Lines file" in err


def run_on_terminals(argv: list[str], stdout_tty: bool, stderr_tty: bool) -> tuple[int, str, str]:
    """Run a child with its stdout / stderr on real pseudo-terminals (or pipes); (rc, out, err)."""
    import fcntl
    import select
    import struct
    import termios

    slaves: dict[str, int] = {}
    masters: dict[str, int] = {}
    for name, tty in (("out", stdout_tty), ("err", stderr_tty)):
        if tty:
            masters[name], slaves[name] = os.openpty()
            fcntl.ioctl(slaves[name], termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "COLUMNS", "LINES", "TERM")}
    env["TERM"] = "xterm-256color"
    proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, env=env,
                            stdout=slaves.get("out", subprocess.PIPE), stderr=slaves.get("err", subprocess.PIPE))
    for fd in slaves.values():
        os.close(fd)
    names = {fd: n for n, fd in masters.items()}
    for n, pipe in (("out", proc.stdout), ("err", proc.stderr)):
        if pipe is not None:
            names[pipe.fileno()] = n
    chunks: dict[str, list[bytes]] = {"out": [], "err": []}
    deadline = time.monotonic() + 60
    while names and time.monotonic() < deadline:
        ready, _, _ = select.select(list(names), [], [], 5)
        for fd in ready:
            try:
                data = os.read(fd, 1 << 16)
            except OSError:  # EIO: the terminal's other end closed
                data = b""
            if data:
                chunks[names[fd]].append(data)
            else:
                del names[fd]
    proc.wait(timeout=30)
    for fd in masters.values():
        os.close(fd)
    for pipe in (proc.stdout, proc.stderr):
        if pipe is not None:
            pipe.close()
    out, err = (b"".join(chunks[n]).decode("utf-8", "replace") for n in ("out", "err"))
    return proc.returncode, out, err


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="pseudo-terminals")
def test_progress_bar_on_a_terminal_only(tmp_path):
    rng = np.random.default_rng(14)
    pq.write_table(pa.table({"y": rng.integers(0, 2, 20_000), "p": rng.random(20_000)}),
                   str(tmp_path / "pb.parquet"))
    argv = [sys.executable, "-m", "streammetrics", "evaluate", str(tmp_path / "pb.parquet"), "--label", "y",
            "--score", "p", "--metrics", "accuracy,auroc", "--batch-size", "1000"]
    rc, out, err = run_on_terminals(argv, stdout_tty=True, stderr_tty=True)
    assert rc == 0, err
    assert "rows/s" in err and "20,000 rows" in err  # the bar, with the rate, on stderr
    assert "rows/s" not in out and "auroc" in out  # the table on stdout
    rc, out, err = run_on_terminals(argv, stdout_tty=False, stderr_tty=True)  # stdout redirected
    assert rc == 0 and "rows/s" not in err and "auroc" in out
    rc, out, err = run_on_terminals([*argv, "--quiet"], stdout_tty=True, stderr_tty=True)
    assert rc == 0 and "rows/s" not in err and "auroc" in out


def test_empty_files_in_a_stream(tmp_path, capsys):
    (tmp_path / "a_header_only.csv").write_text("y,p\n")
    (tmp_path / "b.tsv.gz").write_bytes(gzip.compress(b"y\tp\n1\t0.9\n0\t0.2\n1\t0.6\n0\t0.7\n"))
    (tmp_path / "c_empty.jsonl").write_bytes(b"")
    (tmp_path / "d_empty.csv.gz").write_bytes(gzip.compress(b""))  # compressed, still empty
    (tmp_path / "e_empty.jsonl.gz").write_bytes(gzip.compress(b""))
    res = run_json(capsys, str(tmp_path), "--label", "y", "--score", "p", "--metrics", "auroc,accuracy")
    assert res["rows"] == 4 and len(res["files"]) == 5
    assert res["metrics"]["auroc"] == 0.75 and res["metrics"]["accuracy"] == 0.75
    rc, err = run_err(capsys, str(tmp_path / "a_header_only.csv"), str(tmp_path / "c_empty.jsonl"),
                      "--label", "y", "--score", "p")
    assert rc == 1 and "no rows" in err


def test_text_labels_named_by_prefixed_score_columns(tmp_path, capsys):
    y, p = multiclass_data(600, 3, seed=15)
    names = np.array(["cat", "dog", "eel"])
    pq.write_table(pa.table({"animal": names[y], "p_cat": p[:, 0], "p_dog": p[:, 1], "p_eel": p[:, 2]}),
                   str(tmp_path / "a.parquet"))
    argv = [str(tmp_path / "a.parquet"), "--label", "animal", "--score", "p_cat", "--score", "p_dog",
            "--score", "p_eel"]
    res = run_json(capsys, *argv, "--metrics", "accuracy,f1")
    assert res["label_mapping"] == {"cat": 0, "dog": 1, "eel": 2} and res["classes"] == ["cat", "dog", "eel"]
    assert res["metrics"]["accuracy"] == pytest.approx(metrics.accuracy_score(y, p.argmax(axis=1)), rel=1e-12)
    text = names[y].astype(object)
    text[444] = "fox"
    pq.write_table(pa.table({"animal": text.astype(str), "p_cat": p[:, 0], "p_dog": p[:, 1], "p_eel": p[:, 2]}),
                   str(tmp_path / "b.parquet"))
    rc, err = run_err(capsys, str(tmp_path / "b.parquet"), *argv[1:])
    assert rc == 1 and "row 445: column 'animal': label 'fox' is not one of the classes" in err
    assert "give --classes with the label of each --score column" in err


def test_stdin_and_many_classes(tmp_path, capsys):
    rc, err = run_err(capsys, "-", "--label", "y", "--score", "p")
    assert rc == 2 and "standard input is not supported" in err
    rng = np.random.default_rng(16)
    y = rng.integers(0, 50, 5000)
    p = rng.random((5000, 50))
    p[np.arange(5000), y] += 0.5
    pq.write_table(pa.table({"y": y, "p": list(p)}), str(tmp_path / "k50.parquet"))
    assert main(["evaluate", str(tmp_path / "k50.parquet"), "--label", "y", "--score", "p", "--quiet",
                 "--metrics", "recall"]) == 0
    out = capsys.readouterr().out
    assert "… 10 more" in out and "every class is in --json" in out
    res = run_json(capsys, str(tmp_path / "k50.parquet"), "--label", "y", "--score", "p", "--metrics", "recall")
    assert len(res["per_class"]["recall"]) == 50 and len(res["per_class_intervals"]["recall"]) == 50


def test_csv_row_with_the_wrong_number_of_fields(tmp_path, capsys):
    lines = ["# a comment line", "y,p"] + [f"{i % 2},{(i % 100) / 100}" for i in range(200_000)]
    for name, bad in (("early.csv", 6), ("late.csv", 150_002)):  # the first block / a later block
        rows = list(lines)
        rows[bad] = "1,0.5,7"
        (tmp_path / name).write_text("\n".join(rows) + "\n")
        rc, err = run_err(capsys, str(tmp_path / name), "--label", "y", "--score", "p")
        assert rc == 1, err
        assert f"{name}: row {bad - 1} (line {bad + 1}): expected 2 fields (the header's), got 3: 1,0.5,7" in err


def test_no_intervals_drops_the_interval_column(capsys):
    pytest.importorskip("rich")
    assert main(["evaluate", "--quiet"]) == 0
    assert "95% interval" in capsys.readouterr().out
    assert main(["evaluate", "--quiet", "--no-intervals"]) == 0
    out = capsys.readouterr().out
    assert "interval" not in out and "auroc" in out and "[" not in out
