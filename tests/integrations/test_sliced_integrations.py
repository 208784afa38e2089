"""Sliced accumulators at the edges: the CLI's ``evaluate --by``, Prometheus, pickling, torch."""

from __future__ import annotations

import json
import pickle

import numpy as np
import pytest
from sklearn.metrics import f1_score, roc_auc_score

import streammetrics as sm

pytestmark = pytest.mark.filterwarnings("ignore::streammetrics.UndefinedMetricWarning")


def write_csv(path, n: int = 3000, seed: int = 0):  # type: ignore[no-untyped-def]
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    s = np.round(np.clip(0.3 * y + 0.7 * rng.random(n), 0, 1), 4)
    c = rng.choice(["fr", "de", "us"], n)
    d = rng.integers(0, 2, n)
    with open(path, "w") as fh:
        fh.write("label,score,country,device\n")
        for row in zip(y, s, c, d, strict=True):
            fh.write(f"{row[0]},{row[1]},{row[2]},{row[3]}\n")
    return y, s, c, d


def test_cli_by_two_columns_equals_sklearn(tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    pytest.importorskip("pyarrow")
    from streammetrics.__main__ import main

    path = tmp_path / "p.csv"
    y, s, c, d = write_csv(path)
    rc = main(["evaluate", str(path), "--label", "label", "--score", "score", "--by", "country",
               "--by", "device", "--metrics", "f1,auroc", "--batch-size", "700", "--json", "-"])
    out = capsys.readouterr()
    assert rc == 0, out.err
    res = json.loads(out.out)
    assert res["by"] == ["country", "device"] and res["rows"] == len(y)
    assert len(res["slices"]) == 6
    f1s = []
    for entry in res["slices"]:
        m = (c == entry["key"]["country"]) & (d == entry["key"]["device"])
        assert entry["rows"] == int(m.sum())
        expect = f1_score(y[m], s[m] >= 0.5)
        f1s.append(expect)
        assert abs(entry["metrics"]["f1"] - expect) < 1e-12
        assert abs(entry["metrics"]["auroc"] - roc_auc_score(y[m], s[m])) < 1e-12
        low, high = entry["intervals"]["auroc"]
        assert low <= entry["metrics"]["auroc"] <= high
    assert abs(res["disparity"]["f1"]["difference"] - (max(f1s) - min(f1s))) < 1e-12
    assert abs(res["disparity"]["f1"]["overall"] - f1_score(y, s >= 0.5)) < 1e-12
    assert {e["key"] for e in res["marginals"]["country"]} == {"fr", "de", "us"}


def test_cli_by_plots_and_errors(tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    pytest.importorskip("matplotlib")
    from streammetrics.__main__ import main

    path = tmp_path / "p.csv"
    write_csv(path, n=800)
    plots = tmp_path / "plots"
    plots.mkdir()
    rc = main(["evaluate", str(path), "--label", "label", "--score", "score", "--by", "country",
               "--plot", str(plots), "--quiet"])
    out = capsys.readouterr()
    assert rc == 0, out.err
    assert "disparity" in out.out
    for name in ("roc_by_slice.png", "pr_by_slice.png"):
        assert (plots / name).read_bytes().startswith(b"\x89PNG")
    rc = main(["evaluate", str(path), "--label", "label", "--score", "score", "--by", "nope"])
    err = capsys.readouterr().err
    assert rc == 2 and "nope" in err and "Traceback" not in err


def test_prometheus_slice_labels_and_cap() -> None:
    pytest.importorskip("prometheus_client")
    from prometheus_client import CollectorRegistry, generate_latest

    from streammetrics.prometheus_sliced import register_sliced

    rng = np.random.default_rng(0)
    y, s = rng.integers(0, 2, 400), rng.random(400)
    keys = rng.choice(["a", "b", "c", "d"], 400, p=[0.4, 0.3, 0.2, 0.1])
    sliced = sm.Sliced(sm.F1()).update(y, s, slices=keys)
    reg = CollectorRegistry()
    register_sliced(sliced, reg, max_slices=2)
    text = generate_latest(reg).decode()
    for key in ("a", "b"):
        m = keys == key
        value = float(text.split(f'streammetrics_f1{{slice="{key}"}} ')[1].split()[0])
        assert abs(value - f1_score(y[m], s[m] >= 0.5)) < 1e-12
    assert 'slice="c"' not in text and 'slice="d"' not in text
    assert "streammetrics_f1_slices_omitted 2.0" in text
    assert text.count("# HELP streammetrics_f1 ") == 1  # one family, one series per slice


def test_pickle_copy_and_torch_sync_without_process_group() -> None:
    rng = np.random.default_rng(1)
    y, s, k = rng.integers(0, 2, 300), rng.random(300), rng.integers(0, 5, 300)
    sliced = sm.Sliced(sm.MetricSet(f1=sm.F1(), auc=sm.AUROC())).update(y, s, slices=k)
    for twin in (pickle.loads(pickle.dumps(sliced)), sliced.copy()):
        assert str(twin.compute()) == str(sliced.compute())
        assert twin.nbytes == sliced.nbytes
    torch_mod = pytest.importorskip("streammetrics.torch")
    assert str(torch_mod.sync(sliced).compute()) == str(sliced.compute())


def test_forward_returns_the_batch_value() -> None:
    s = sm.Sliced(sm.Accuracy())
    first = s([1, 0, 1], [1, 1, 1], slices=["a", "a", "b"])
    assert first == {"a": 0.5, "b": 1.0}
    s([1], [0], slices=["b"])
    assert s.compute() == {"a": 0.5, "b": 0.5}


def test_cli_by_table_fits_100_columns_and_shows_every_slice(tmp_path, capsys):
    """Into a file or pipe the per-slice table is at most 100 columns wide: a column per slice
    (as many as fit, more tables below), each value with its interval on the line below."""
    pytest.importorskip("rich")
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    from streammetrics.__main__ import main

    rng = np.random.default_rng(4)
    n = 3000
    seg = rng.choice(["north", "south", "east", "west-coast-region", "centre", "islands"], n)
    y = rng.integers(0, 2, n)
    p = np.clip(0.3 * y + rng.random(n) * 0.7, 0, 1)
    path = tmp_path / "seg.parquet"
    pq.write_table(pa.table({"y": y, "p": p, "segment": seg}), str(path))
    assert main(["evaluate", str(path), "--label", "y", "--score", "p", "--by", "segment", "--quiet"]) == 0
    out = capsys.readouterr().out
    assert max(len(line) for line in out.splitlines()[1:]) <= 100
    for name in ("north", "south", "east", "west-coast-region", "centre", "islands"):
        assert name in out
    sliced = sm.Sliced(sm.Recall()).update(y, p, slices=seg)
    lo, hi = sliced.interval()["north"]
    assert f"{sliced.compute()['north']:.4f}" in out and f"{lo:.4f}–{hi:.4f}" in out
    assert main(["evaluate", str(path), "--label", "y", "--score", "p", "--by", "segment", "--quiet",
                 "--no-intervals"]) == 0
    out = capsys.readouterr().out
    assert "–" not in out and "intervals" not in out
