"""``streammetrics evaluate --target/--prediction``: the regression table (issue #30).

Every value of ``--json`` equals scikit-learn / scipy on the same rows to 1e-12 (CSV and Parquet,
weights with zeros and ties, several outputs, small batches); the interval rows equal their
definitions (Wilson's interval: scipy's ``binomtest``); ``--max-bytes`` gives certified bounds
around scikit-learn's median; regression is chosen by the options, never by the values; bad
files and bad command lines are one line on stderr with exit status 1 / 2, never a traceback.
"""

from __future__ import annotations

import json
import warnings

import numpy as np
import pytest

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")
metrics = pytest.importorskip("sklearn.metrics")
stats = pytest.importorskip("scipy.stats")

from streammetrics.__main__ import main  # noqa: E402

TOL = {"rel": 1e-12, "abs": 1e-12}
POINT = ["mse", "rmse", "mae", "medae", "mape", "msle", "rmsle", "r2", "explained_variance", "max_error",
         "pinball", "d2_absolute_error", "d2_pinball", "pearson", "spearman", "kendall", "concordance"]
ONE_OUTPUT = ["tweedie_deviance", "poisson_deviance", "gamma_deviance"]


def write(tmp_path, fmt: str, cols: dict[str, np.ndarray], name: str = "preds") -> str:
    """The columns as a CSV (every float written exactly, by repr) or a Parquet file."""
    if fmt == "parquet":
        path = tmp_path / f"{name}.parquet"
        pq.write_table(pa.table(cols), path, row_group_size=97)
        return str(path)
    path = tmp_path / f"{name}.csv"
    names = list(cols)
    lines = [",".join(names)]
    for i in range(len(cols[names[0]])):
        lines.append(",".join(repr(float(cols[c][i])) for c in names))
    path.write_text("\n".join(lines) + "\n")
    return str(path)


def run_json(capsys, *argv: str) -> dict:
    rc = main(["evaluate", *argv, "--json", "-", "--quiet"])
    out = capsys.readouterr()
    assert rc == 0, out.err
    return json.loads(out.out)


def run_err(capsys, *argv: str) -> tuple[int, str]:
    rc = main(["evaluate", *argv])
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert err.count("\n") == 1, err  # one line
    return rc, err


def data(n: int = 400, k: int = 1, seed: int = 0):
    """Positive targets and predictions with ties (rounded), integer weights with zeros."""
    rng = np.random.default_rng(seed)
    y = np.round(rng.gamma(3.0, 2.0, (n, k)), 1) + 0.1
    p = np.round(y * rng.lognormal(0, 0.3, (n, k)), 1) + 0.05
    w = rng.integers(0, 4, n).astype(float)
    return y, p, w


def weighted_corr(a, b, w):
    ma, mb = np.average(a, weights=w), np.average(b, weights=w)
    cov = np.average((a - ma) * (b - mb), weights=w)
    va, vb = np.average((a - ma) ** 2, weights=w), np.average((b - mb) ** 2, weights=w)
    return cov / np.sqrt(va * vb), cov, va, vb, ma, mb


def oracle(y, p, w, q: float = 0.5, power: float = 1.5) -> dict[str, float]:
    """scikit-learn / scipy on one output (w: integer weights; rank correlations on repeated rows)."""
    keep = w > 0
    r, cov, vy, vp, my, mp = weighted_corr(y, p, w)
    yr, pr = np.repeat(y, w.astype(int)), np.repeat(p, w.astype(int))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return {
            "mse": metrics.mean_squared_error(y, p, sample_weight=w),
            "rmse": metrics.root_mean_squared_error(y, p, sample_weight=w),
            "mae": metrics.mean_absolute_error(y, p, sample_weight=w),
            "medae": metrics.median_absolute_error(y, p, sample_weight=w),
            "mape": metrics.mean_absolute_percentage_error(y, p, sample_weight=w),
            "msle": metrics.mean_squared_log_error(y, p, sample_weight=w),
            "rmsle": metrics.root_mean_squared_log_error(y, p, sample_weight=w),
            "r2": metrics.r2_score(y, p, sample_weight=w),
            "explained_variance": metrics.explained_variance_score(y, p, sample_weight=w),
            "max_error": metrics.max_error(y[keep], p[keep]),
            "pinball": metrics.mean_pinball_loss(y, p, alpha=q, sample_weight=w),
            "d2_absolute_error": metrics.d2_absolute_error_score(y[keep], p[keep], sample_weight=w[keep]),
            "d2_pinball": metrics.d2_pinball_score(y[keep], p[keep], alpha=q, sample_weight=w[keep]),
            "tweedie_deviance": metrics.mean_tweedie_deviance(y, p, power=power, sample_weight=w),
            "poisson_deviance": metrics.mean_poisson_deviance(y, p, sample_weight=w),
            "gamma_deviance": metrics.mean_gamma_deviance(y, p, sample_weight=w),
            "pearson": r,
            "spearman": stats.spearmanr(yr, pr).statistic,
            "kendall": stats.kendalltau(yr, pr).statistic,
            "concordance": 2 * cov / (vy + vp + (my - mp) ** 2),
        }


@pytest.mark.parametrize("fmt", ["csv", "parquet"])
def test_one_output_every_metric_equals_sklearn_and_scipy(tmp_path, capsys, fmt):
    y, p, w = data()
    path = write(tmp_path, fmt, {"y": y[:, 0], "yhat": p[:, 0], "w": w})
    names = POINT + ONE_OUTPUT
    doc = run_json(capsys, path, "--target", "y", "--prediction", "yhat", "--weight", "w",
                   "--metrics", ",".join(names), "--quantile", "0.3", "--power", "1.5", "--batch-size", "53")
    want = oracle(y[:, 0], p[:, 0], w, q=0.3, power=1.5)
    assert list(doc["metrics"]) == names
    for name in names:
        assert doc["metrics"][name] == pytest.approx(want[name], **TOL), name
    assert doc["task"] == "regression" and doc["rows"] == len(w) and doc["weighted"] is True
    assert doc["exact"] is True and doc["bounds"] == {} and doc["per_output"] == {}
    assert doc["outputs"] == ["y"] and doc["targets"] == ["y"] and doc["predictions"] == ["yhat"]
    assert doc["intervals"] == {}  # none of these has an interval the library certifies


def test_default_table_unweighted_equals_sklearn(tmp_path, capsys):
    y, p, _ = data(seed=1)
    path = write(tmp_path, "parquet", {"target": y[:, 0], "pred": p[:, 0]})
    doc = run_json(capsys, path, "--target", "target", "--prediction", "pred")
    assert list(doc["metrics"]) == ["mse", "rmse", "mae", "medae", "mape", "r2", "explained_variance",
                                    "max_error", "pearson", "spearman", "kendall"]
    want = oracle(y[:, 0], p[:, 0], np.ones(len(y)))
    want["pearson"] = stats.pearsonr(y[:, 0], p[:, 0]).statistic
    for name, value in doc["metrics"].items():
        assert value == pytest.approx(want[name], **TOL), name
    # --task regression is the same selection
    again = run_json(capsys, path, "--task", "regression", "--target", "target", "--prediction", "pred")
    assert again["metrics"] == doc["metrics"]


@pytest.mark.parametrize("fmt", ["csv", "parquet"])
def test_several_outputs_per_output_and_average(tmp_path, capsys, fmt):
    y, p, w = data(n=300, k=3, seed=2)
    cols = {f"y{j}": y[:, j] for j in range(3)} | {f"p{j}": p[:, j] for j in range(3)} | {"w": w}
    path = write(tmp_path, fmt, cols)
    argv = [a for j in range(3) for a in ("--target", f"y{j}", "--prediction", f"p{j}")]
    names = [n for n in POINT if n != "max_error"] + ["max_error"]
    doc = run_json(capsys, path, *argv, "--weight", "w", "--metrics", ",".join(names), "--batch-size", "41")
    assert doc["outputs"] == ["y0", "y1", "y2"]
    per = [oracle(y[:, j], p[:, j], w) for j in range(3)]
    for name in names:
        for j in range(3):
            assert doc["per_output"][name][f"y{j}"] == pytest.approx(per[j][name], **TOL), (name, j)
        assert doc["metrics"][name] == pytest.approx(np.mean([per[j][name] for j in range(3)]), **TOL), name
    # the averages are scikit-learn's multioutput="uniform_average"
    assert doc["metrics"]["r2"] == pytest.approx(metrics.r2_score(y, p, sample_weight=w), **TOL)
    assert doc["metrics"]["medae"] == pytest.approx(metrics.median_absolute_error(y, p, sample_weight=w), **TOL)


def test_several_outputs_table_has_a_row_per_output_and_the_average(tmp_path, capsys):
    y, p, _ = data(n=50, k=2, seed=3)
    path = write(tmp_path, "csv", {"a": y[:, 0], "b": y[:, 1], "pa": p[:, 0], "pb": p[:, 1]})
    assert main(["evaluate", path, "--target", "a", "--prediction", "pa", "--target", "b", "--prediction",
                 "pb", "--metrics", "mae,r2", "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "50 rows, regression, 2 outputs" in out
    mae = [line for line in out.splitlines() if " mae " in line]
    assert [line.split("│")[2].strip() for line in mae] == ["a", "b", "average"]
    want = metrics.mean_absolute_error(y, p, multioutput="raw_values")
    assert [float(line.split("│")[3]) for line in mae[:2]] == pytest.approx(want, rel=1e-5)


def wilson(x: int, n: int) -> tuple[float, float]:
    ci = stats.binomtest(x, n).proportion_ci(0.95, method="wilson")
    return ci.low, ci.high


@pytest.mark.parametrize("k", [1, 2])
def test_prediction_intervals(tmp_path, capsys, k):
    y, p, _ = data(n=250, k=k, seed=4)
    rng = np.random.default_rng(5)
    half = np.round(rng.uniform(0.5, 3.0, y.shape), 1)
    lo, hi = p - half, p + half
    lo[:5] = y[:5]  # targets on a bound are covered
    cols = {}
    argv = []
    for j in range(k):
        cols |= {f"y{j}": y[:, j], f"p{j}": p[:, j], f"l{j}": lo[:, j], f"u{j}": hi[:, j]}
        argv += ["--target", f"y{j}", "--prediction", f"p{j}", "--lower", f"l{j}", "--upper", f"u{j}"]
    path = write(tmp_path, "parquet", cols)
    doc = run_json(capsys, path, *argv, "--alpha", "0.2", "--metrics", "mae,interval_coverage,interval_width,"
                   "interval_score")
    for j in range(k):
        yj, lj, uj = y[:, j], lo[:, j], hi[:, j]
        inside = (lj <= yj) & (yj <= uj)
        score = (uj - lj) + (2 / 0.2) * ((lj - yj) * (yj < lj) + (yj - uj) * (yj > uj))
        want = {"interval_coverage": inside.mean(), "interval_width": (uj - lj).mean(),
                "interval_score": score.mean(), "mae": metrics.mean_absolute_error(yj, p[:, j])}
        got = doc["metrics"] if k == 1 else {n: v[f"y{j}"] for n, v in doc["per_output"].items()}
        for name, value in want.items():
            assert got[name] == pytest.approx(value, **TOL), name
        iv = doc["intervals"]["interval_coverage"] if k == 1 else \
            doc["per_output_intervals"]["interval_coverage"][f"y{j}"]
        assert iv == pytest.approx(wilson(int(inside.sum()), len(yj)), rel=1e-9)
    assert doc["lower"] == [f"l{j}" for j in range(k)] and doc["alpha"] == 0.2
    if k > 1:  # an average of proportions has no Wilson interval
        assert doc["intervals"] == {}


def test_interval_defaults_need_alpha_for_the_score(tmp_path, capsys):
    y, p, _ = data(n=30, seed=6)
    path = write(tmp_path, "csv", {"y": y[:, 0], "p": p[:, 0], "lo": p[:, 0] - 1, "hi": p[:, 0] + 1})
    doc = run_json(capsys, path, "--target", "y", "--prediction", "p", "--lower", "lo", "--upper", "hi")
    assert "interval_coverage" in doc["metrics"] and "interval_width" in doc["metrics"]
    assert "interval_score" not in doc["metrics"]
    assert any("--alpha" in note for note in doc["notes"])
    doc = run_json(capsys, path, "--target", "y", "--prediction", "p", "--lower", "lo", "--upper", "hi",
                   "--alpha", "0.1", "--no-intervals")
    assert "interval_score" in doc["metrics"] and doc["intervals"] == {}


def test_max_bytes_bounds_certify_the_median(tmp_path, capsys):
    rng = np.random.default_rng(7)
    y = rng.normal(size=5000)
    p = y + rng.normal(size=5000)
    path = write(tmp_path, "parquet", {"y": y, "p": p})
    doc = run_json(capsys, path, "--target", "y", "--prediction", "p", "--max-bytes", "2k",
                   "--batch-size", "1000")
    assert "spearman" not in doc["metrics"] and any("spearman" in n for n in doc["notes"])
    exact = metrics.median_absolute_error(y, p)
    lo, hi = doc["bounds"]["medae"]
    assert lo <= exact <= hi and lo < hi and doc["exact"] is False
    assert lo <= doc["metrics"]["medae"] <= hi
    assert doc["metrics"]["mse"] == pytest.approx(metrics.mean_squared_error(y, p), **TOL)
    assert doc["state_bytes"] < 20_000  # nothing keeps the 5000 rows
    roomy = run_json(capsys, path, "--target", "y", "--prediction", "p", "--max-bytes", "1M", "--metrics", "medae")
    assert roomy["exact"] is True and roomy["metrics"]["medae"] == pytest.approx(exact, **TOL)


def test_bundled_regression_example_and_default_unchanged(capsys):
    doc = run_json(capsys, "--task", "regression", "--lower", "lower", "--upper", "upper", "--alpha", "0.1")
    assert doc["rows"] == 442 and doc["task"] == "regression"
    assert 0.0 < doc["metrics"]["r2"] < 1.0 and "interval_score" in doc["metrics"]
    default = run_json(capsys)  # `streammetrics evaluate` alone: still the classification example
    assert default["task"] == "binary" and default["rows"] == 569


def test_fractional_labels_are_never_taken_for_regression(tmp_path, capsys):
    y, p, _ = data(n=20, seed=8)
    path = write(tmp_path, "csv", {"y": y[:, 0], "p": p[:, 0]})
    rc, err = run_err(capsys, path, "--label", "y", "--score", "p")
    assert rc == 1
    assert "row 1: column 'y'" in err and "--target/--prediction" in err
    # integral float labels stay classification (today's behaviour)
    path01 = write(tmp_path, "csv", {"y": np.array([0.0, 1.0, 1.0, 0.0]), "p": np.array([0.1, 0.8, 0.4, 0.3])},
                   name="binary")
    doc = run_json(capsys, path01, "--label", "y", "--score", "p")
    assert doc["task"] == "binary"


@pytest.mark.parametrize("argv, words", [
    (["--label", "y", "--target", "y", "--prediction", "p"], "--label"),
    (["--score", "p", "--target", "y", "--prediction", "p"], "--score"),
    (["--task", "regression", "--label", "y", "--score", "p"], "--label, --score"),
    (["--target", "y"], "--prediction is required"),
    (["--prediction", "p"], "--target is required"),
    (["--target", "y", "--prediction", "p", "--prediction", "p"], "one --prediction per --target"),
    (["--target", "y", "--prediction", "p", "--lower", "p"], "--lower and --upper go together"),
    (["--target", "y", "--prediction", "p", "--metrics", "interval_width"], "give --lower"),
    (["--target", "y", "--prediction", "p", "--lower", "p", "--upper", "p", "--metrics", "interval_score"],
     "needs --alpha"),
    (["--label", "y", "--score", "p", "--alpha", "0.1"], "--alpha: regression options"),
    (["--label", "y", "--score", "p", "--task", "binary", "--lower", "p"], "--task binary is classification"),
    (["--target", "y", "--prediction", "p", "--metrics", "auroc"], "unknown auroc"),
    (["--target", "y", "--prediction", "p", "--target", "p", "--prediction", "y", "--metrics", "poisson_deviance"],
     "take one output"),
    (["--target", "y", "--prediction", "p", "--metrics", "kendall", "--max-bytes", "1M"], "no bounded variant"),
    (["--target", "y", "--prediction", "p", "--plot", "plots"], "--plot"),
    (["--target", "y", "--prediction", "p", "--max-bytes", "10", "--metrics", "medae"], "--max-bytes: 10"),
    (["--target", "y", "--prediction", "nope"], "nope"),
    (["--target", "y", "--prediction", "p", "--alpha", "1.5"], "--alpha"),
    (["--target", "y", "--prediction", "p", "--by", "y", "--by", "y"], "--by: a column given twice"),
    (["--target", "y", "--prediction", "p", "--task", "binary"], "--task binary is classification"),
])
def test_usage_errors_exit_2(tmp_path, capsys, argv, words):
    path = write(tmp_path, "csv", {"y": np.arange(5.0), "p": np.arange(5.0) + 0.5})
    rc, err = run_err(capsys, path, *argv)
    assert rc == 2 and words in err, err


@pytest.mark.parametrize("fmt", ["csv", "parquet"])
@pytest.mark.parametrize("column, value, metric, words", [
    ("y", np.nan, "mse", "column 'y': value is "),
    ("p", np.inf, "mse", "column 'p': prediction inf is not finite"),
    ("y", -np.inf, "mae", "column 'y': target -inf is not finite"),
    ("w", np.nan, "mse", "column 'w': value is "),
    ("w", np.inf, "mse", "column 'w': weight inf is not finite"),
    ("w", -1.0, "mse", "column 'w': weight -1.0 is negative"),
    ("p", -2.0, "msle", "column 'p': Mean Squared Logarithmic Error"),
    ("y", -1.0, "poisson_deviance", "column 'y': Mean Tweedie deviance error with power=1.0"),
    ("p", 0.0, "gamma_deviance", "column 'p': Mean Tweedie deviance error with power=2.0"),
    ("hi", 0.0, "interval_width", "column 'lo': lower bound 17.0 is above its upper bound (column 'hi')"),
])
def test_bad_values_name_file_row_and_column(tmp_path, capsys, fmt, column, value, metric, words):
    cols = {"y": np.arange(1.0, 31.0), "p": np.arange(1.0, 31.0) + 0.5, "w": np.ones(30),
            "lo": np.arange(1.0, 31.0) - 1, "hi": np.arange(1.0, 31.0) + 2}
    cols[column] = cols[column].copy()
    cols[column][17] = value
    path = write(tmp_path, fmt, cols)
    rc, err = run_err(capsys, path, "--target", "y", "--prediction", "p", "--weight", "w", "--lower", "lo",
                      "--upper", "hi", "--metrics", metric, "--batch-size", "10")
    assert rc == 1
    assert f"{path}: row 18: {words}" in err, err


def test_non_numeric_and_missing_values_are_data_errors(tmp_path, capsys):
    path = tmp_path / "bad.csv"
    path.write_text("y,p\n1,2\n3,x\n")
    rc, err = run_err(capsys, str(path), "--target", "y", "--prediction", "p")
    assert rc == 1 and "row 2" in err and "'p'" in err
    path.write_text("y,p\n1,2\n,4\n")
    rc, err = run_err(capsys, str(path), "--target", "y", "--prediction", "p")
    assert rc == 1 and "row 2: column 'y'" in err and "missing" in err


def test_json_lines_empty_files_and_a_stream_of_files(tmp_path, capsys):
    y, p, w = data(n=120, seed=9)
    half = len(w) // 2
    first = write(tmp_path, "csv", {"y": y[:half, 0], "p": p[:half, 0], "w": w[:half]}, name="a")
    jsonl = tmp_path / "b.jsonl"  # whole numbers in the first rows: still read as floats
    jsonl.write_text("".join(json.dumps({"y": float(a), "p": float(b), "w": float(c)}) + "\n"
                             for a, b, c in zip(y[half:, 0], p[half:, 0], w[half:], strict=True)))
    empty = tmp_path / "c.csv"
    empty.write_text("y,p,w\n")
    doc = run_json(capsys, first, str(jsonl), str(empty), "--target", "y", "--prediction", "p", "--weight", "w",
                   "--metrics", "mae,r2,kendall")
    want = oracle(y[:, 0], p[:, 0], w)
    assert doc["rows"] == len(w)
    for name in ("mae", "r2", "kendall"):
        assert doc["metrics"][name] == pytest.approx(want[name], **TOL), name
    rc, err = run_err(capsys, str(empty), "--target", "y", "--prediction", "p")
    assert rc == 1 and "no rows" in err


def test_by_gives_per_slice_regression_tables(tmp_path, capsys):
    y, p, w = data(n=300, seed=10)
    rng = np.random.default_rng(11)
    store = rng.integers(0, 3, len(w))
    lo, hi = p[:, 0] - 2.0, p[:, 0] + 2.0
    path = write(tmp_path, "parquet", {"y": y[:, 0], "p": p[:, 0], "w": w, "store": store, "lo": lo, "hi": hi})
    argv = [path, "--target", "y", "--prediction", "p", "--weight", "w", "--by", "store", "--lower", "lo",
            "--upper", "hi", "--metrics", "mae,r2,medae,spearman,interval_coverage", "--batch-size", "64"]
    doc = run_json(capsys, *argv)
    assert doc["task"] == "regression" and doc["by"] == ["store"] and doc["rows"] == len(w)
    assert {e["key"]["store"] for e in doc["slices"]} == {0, 1, 2}
    for entry in doc["slices"]:
        rows = store == entry["key"]["store"]
        want = oracle(y[rows, 0], p[rows, 0], w[rows])
        for name in ("mae", "r2", "medae", "spearman"):
            assert entry["metrics"][name] == pytest.approx(want[name], **TOL), name
        inside = (lo[rows] <= y[rows, 0]) & (y[rows, 0] <= hi[rows])
        assert entry["metrics"]["interval_coverage"] == pytest.approx(np.average(inside, weights=w[rows]), **TOL)
        assert entry["intervals"]["interval_coverage"][0] <= entry["metrics"]["interval_coverage"]
    assert doc["disparity"]["mae"]["overall"] == pytest.approx(
        metrics.mean_absolute_error(y[:, 0], p[:, 0], sample_weight=w), **TOL)


hypothesis = pytest.importorskip("hypothesis")
st = pytest.importorskip("hypothesis.strategies")


@hypothesis.settings(max_examples=25, deadline=None,
                     suppress_health_check=[hypothesis.HealthCheck.function_scoped_fixture])
@hypothesis.given(rows=st.lists(st.tuples(st.integers(0, 6), st.integers(0, 6), st.integers(0, 6),
                                          st.integers(0, 6), st.integers(1, 3)), min_size=1, max_size=25),
                  k=st.integers(1, 2), batch=st.integers(1, 9))
def test_property_any_small_file_equals_sklearn_and_scipy(tmp_path, capsys, rows, k, batch):
    """Small grids of values (ties, constant columns, one row), integer weights, any batch size:
    each output's value equals scikit-learn / scipy, undefined values are null where they are nan."""
    arr = np.array(rows, dtype=float)
    y, p, w = arr[:, :k] / 2, arr[:, 2:2 + k] / 2, arr[:, 4]
    cols = {f"y{j}": y[:, j] for j in range(k)} | {f"p{j}": p[:, j] for j in range(k)} | {"w": w}
    path = write(tmp_path, "csv", cols, name=f"h{len(rows)}_{k}_{batch}")
    argv = [a for j in range(k) for a in ("--target", f"y{j}", "--prediction", f"p{j}")]
    names = ["mse", "mae", "medae", "r2", "explained_variance", "max_error", "pearson", "spearman", "kendall"]
    doc = run_json(capsys, path, *argv, "--weight", "w", "--metrics", ",".join(names), "--batch-size", str(batch))
    for j in range(k):
        got = doc["metrics"] if k == 1 else {n: v[f"y{j}"] for n, v in doc["per_output"].items()}
        yr, pr = np.repeat(y[:, j], w.astype(int)), np.repeat(p[:, j], w.astype(int))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            want = {
                "mse": metrics.mean_squared_error(y[:, j], p[:, j], sample_weight=w),
                "mae": metrics.mean_absolute_error(y[:, j], p[:, j], sample_weight=w),
                "medae": metrics.median_absolute_error(y[:, j], p[:, j], sample_weight=w),
                "explained_variance": metrics.explained_variance_score(y[:, j], p[:, j], sample_weight=w),
                "max_error": metrics.max_error(y[:, j], p[:, j]),
                "pearson": stats.pearsonr(yr, pr).statistic if len(yr) > 1 else np.nan,
                "spearman": stats.spearmanr(yr, pr).statistic if len(yr) > 1 else np.nan,
                "kendall": stats.kendalltau(yr, pr).statistic if len(yr) > 1 else np.nan,
            }
        if len(w) > 1:  # one row: scikit-learn's r2_score is nan, R2Score's 1 or 0 (left to the library)
            want["r2"] = metrics.r2_score(y[:, j], p[:, j], sample_weight=w)
        for name, value in want.items():
            if np.isnan(value):
                assert got[name] is None, (name, got[name])
            else:
                assert got[name] == pytest.approx(value, **TOL), (name, j)


def test_by_with_max_bytes_certifies_each_slice(tmp_path, capsys):
    rng = np.random.default_rng(12)
    n = 3000
    y = rng.normal(size=n)
    p = y + rng.normal(size=n)
    key = rng.integers(0, 2, n)
    path = write(tmp_path, "parquet", {"y": y, "p": p, "k": key})
    doc = run_json(capsys, path, "--target", "y", "--prediction", "p", "--by", "k", "--max-bytes", "600",
                   "--metrics", "mae,medae")
    assert doc["exact"] is False and any("certified bounds" in note for note in doc["notes"])
    for entry in doc["slices"]:
        rows = key == entry["key"]["k"]
        lo, hi = entry["bounds"]["medae"]
        assert lo <= metrics.median_absolute_error(y[rows], p[rows]) <= hi and lo < hi
        assert entry["metrics"]["mae"] == pytest.approx(metrics.mean_absolute_error(y[rows], p[rows]), **TOL)
        assert "mae" not in entry["bounds"]
