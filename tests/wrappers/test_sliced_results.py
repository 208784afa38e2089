"""``Sliced.compute()``'s result: a plain dict with notebook output and a per-slice curve overlay.

Oracles: the per-slice values and counts come from scikit-learn / numpy on each slice's rows; the
plot's line data must be exactly each slice's curve arrays (the curve results of one ``Sliced``
slice, which the ranking tests check against scikit-learn).
"""

from __future__ import annotations

import json
import pickle

import numpy as np
import pytest
from sklearn.metrics import f1_score, roc_auc_score

import streammetrics as sm

pytestmark = pytest.mark.filterwarnings("ignore::streammetrics.UndefinedMetricWarning")


def data(n: int = 600, seed: int = 0):  # type: ignore[no-untyped-def]
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    s = np.round(np.clip(0.3 * y + 0.7 * rng.random(n), 0, 1), 3)
    c = rng.choice(["fr", "de", "us"], n, p=[0.5, 0.4, 0.1])
    d = rng.integers(0, 2, n)
    return y, s, c, d


def test_result_is_a_plain_mapping_with_counts() -> None:
    y, s, c, _ = data()
    res = sm.Sliced(sm.F1()).update(y, s, slices=c).compute()
    expect = {k: f1_score(y[c == k], s[c == k] >= 0.5) for k in ("fr", "de", "us")}
    assert isinstance(res, dict) and res == pytest.approx(expect, abs=1e-12)
    assert dict(res) == res and json.loads(json.dumps(res)) == pytest.approx(expect, abs=1e-12)
    assert res.counts == {k: int((c == k).sum()) for k in expect}
    twin = pickle.loads(pickle.dumps(res))
    assert twin == res and twin.counts == res.counts
    assert res.to_dict() == dict(res)


def test_html_and_pandas_mark_undefined_slices() -> None:
    pd = pytest.importorskip("pandas")
    y, s, c, d = data()
    counts = {(a, b): int(((c == a) & (d == b)).sum()) for a in ("fr", "de", "us") for b in (0, 1)}
    cut = sorted(counts.values())[2]  # the two smallest slices are undefined
    res = sm.Sliced(sm.F1(), min_count=cut).update(y, s, slices={"country": c, "device": d}).compute()
    frame = res.to_pandas()
    assert list(frame.index.names) == ["country", "device"] and len(frame) == 6
    for key, n in counts.items():
        row = frame.loc[key]
        assert row["rows"] == n and bool(row["undefined"]) == (n < cut)
        m = (c == key[0]) & (d == key[1])
        if n >= cut:
            assert row["value"] == pytest.approx(f1_score(y[m], s[m] >= 0.5), abs=1e-12)
        else:
            assert pd.isna(row["value"]) and res[key].count == n
    html = res._repr_html_()
    assert html.count("<tr>") == 7  # header + one row per slice
    assert html.count(f"undefined (n &lt; {cut})") == 2
    assert res.to_dict()[f"{min(counts, key=counts.get)[0]}, {min(counts, key=counts.get)[1]}"] is None


def test_metricset_gives_a_slice_by_metric_table() -> None:
    pytest.importorskip("pandas")
    y, s, c, _ = data()
    res = sm.Sliced(sm.MetricSet(f1=sm.F1(), auc=sm.AUROC())).update(y, s, slices=c).compute()
    frame = res.to_pandas()
    assert list(frame.columns) == ["rows", "f1", "auc", "undefined"]
    for k in ("fr", "de", "us"):
        m = c == k
        assert frame.loc[k, "auc"] == pytest.approx(roc_auc_score(y[m], s[m]), abs=1e-12)
        assert frame.loc[k, "f1"] == pytest.approx(f1_score(y[m], s[m] >= 0.5), abs=1e-12)
    assert "<th>f1</th><th>auc</th>" in res._repr_html_()
    capped = sm.Sliced(sm.F1(), max_slices=2, overflow="other").update(y, s, slices=(c, c)).compute()
    frame = capped.to_pandas()
    assert len(frame) == 3 and frame.loc[("OTHER", "OTHER"), "rows"] == capped.counts[sm.OTHER]
    assert capped._repr_html_().count("<td>OTHER</td>") == 2
    marg = sm.Sliced(sm.Recall()).update(y, s, slices={"country": c, "device": c}).marginal("country")
    assert list(marg.to_pandas().index.names) == ["country"]


@pytest.mark.parametrize("make, xs, ys, word", [
    (sm.ROCCurve, "fpr", "tpr", "AUC"),
    (sm.PRCurve, "recall", "precision", "AP"),
    (sm.DETCurve, "fpr", "fnr", "AUC"),
])
def test_plot_overlays_one_curve_per_slice(make, xs, ys, word) -> None:  # type: ignore[no-untyped-def]
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    y, s, c, d = data()
    sliced = sm.Sliced(make()).update(y, s, slices={"country": c, "device": d})
    res = sliced.compute()
    disp = res.plot()
    try:
        assert len(disp.lines_) == len(res) == 6
        for line, label, key in zip(disp.lines_, disp.labels_, res, strict=True):
            assert label.startswith(f"country={key[0]}, device={key[1]}, n={res.counts[key]:,} ({word} = ")
            curve = sliced.slice(key).compute()
            if ys != "precision":  # PR is drawn as steps (its data: the step vertices)
                np.testing.assert_array_equal(line.get_xdata(), getattr(curve, xs))
                np.testing.assert_array_equal(line.get_ydata(), getattr(curve, ys))
        assert [t.get_text() for t in disp.ax_.get_legend().get_texts()][:6] == disp.labels_
    finally:
        plt.close("all")


def test_plot_calibration_and_metricset_member() -> None:
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    y, s, c, _ = data()
    res = sm.Sliced(sm.CalibrationCurve(n_bins=5)).update(y, s, slices=c).compute()
    disp = res.plot()
    try:
        assert [lab.split(" (")[0] for lab in disp.labels_[:3]] == [f"{k}, n={res.counts[k]:,}" for k in res]
        both = sm.Sliced(sm.MetricSet(roc=sm.ROCCurve(), pr=sm.PRCurve(), f1=sm.F1()))
        both.update(y, s, slices=c)
        with pytest.raises(ValueError, match="several curves"):
            both.compute().plot()
        assert len(both.compute().plot(member="pr").lines_) == 3
        with pytest.raises(ValueError, match="no slice holds a curve"):
            sm.Sliced(sm.F1()).update(y, s, slices=c).compute().plot()
    finally:
        plt.close("all")


def test_cli_plot_draws_through_the_same_overlay(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    pytest.importorskip("matplotlib")
    pytest.importorskip("pyarrow")
    from streammetrics.__main__ import main
    from streammetrics.wrappers.sliced.results import SlicedResults

    y, s, c, _ = data(800)
    path = tmp_path / "p.csv"
    with open(path, "w") as fh:
        fh.write("label,score,country\n")
        for row in zip(y, s, c, strict=True):
            fh.write(f"{row[0]},{row[1]},{row[2]}\n")
    drawn: list[list[str]] = []
    original = SlicedResults.plot

    def spy(self, ax=None, **kwargs):  # type: ignore[no-untyped-def]
        disp = original(self, ax, **kwargs)
        drawn.append(list(disp.labels_))
        return disp

    monkeypatch.setattr(SlicedResults, "plot", spy)
    rc = main(["evaluate", str(path), "--label", "label", "--score", "score", "--by", "country",
               "--plot", str(tmp_path), "--quiet"])
    assert rc == 0 and len(drawn) == 2  # ROC, then PR
    by_size = sorted(("fr", "de", "us"), key=lambda k: -int((c == k).sum()))
    for labels, word in zip(drawn, ("AUC", "AP"), strict=True):
        assert [lab.split(" (")[0] for lab in labels] == [
            f"country={k}, n={int((c == k).sum()):,}" for k in by_size]
        assert all(f"({word} = " in lab for lab in labels)
