"""streammetrics.mlflow against a real local MLflow file store, and streammetrics.tensorboard
through torch's SummaryWriter read back from the event files."""

from __future__ import annotations

import json

import numpy as np
import pytest

import streammetrics as sm
from streammetrics._engines.callbacks import intervals


def _metrics() -> sm.MetricSet:
    rng = np.random.default_rng(0)
    y, s = rng.integers(0, 2, 300), rng.random(300).round(2)
    ms = sm.MetricSet(auroc=sm.AUROC(), bounded=sm.AUROC(max_bytes=1024), acc=sm.Accuracy(),
                      cm=sm.ConfusionMatrix(), roc=sm.ROCCurve())
    return ms.update(y, s)


@pytest.mark.parametrize("store", ["sqlite", "file"])
def test_mlflow_log_metrics_to_a_file_store(tmp_path, monkeypatch, store) -> None:
    mlflow = pytest.importorskip("mlflow")
    from streammetrics.mlflow import log_metrics

    if store == "file":  # MLflow 3 keeps the ./mlruns file store behind this switch
        monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "true")
        mlflow.set_tracking_uri((tmp_path / "mlruns").as_uri())
    else:  # artifacts under tmp_path too (a SQLite store's default is ./mlruns in the cwd)
        mlflow.set_tracking_uri(f"sqlite:///{tmp_path / 'mlflow.db'}")
        mlflow.create_experiment("streammetrics-tests", artifact_location=(tmp_path / "artifacts").as_uri())
    mlflow.set_experiment("streammetrics-tests")
    ms = _metrics()
    values = ms.compute()
    with mlflow.start_run() as run:
        logged = log_metrics(ms, step=3, prefix="val_")
    got = mlflow.get_run(run.info.run_id).data.metrics
    assert got["val_auroc"] == pytest.approx(values["auroc"], abs=1e-12)
    assert got["val_acc"] == pytest.approx(values["acc"], abs=1e-12)
    lo, hi = ms["bounded"].bounds()
    assert got["val_bounded_lower"] == pytest.approx(lo) and got["val_bounded_upper"] == pytest.approx(hi)
    assert lo <= values["auroc"] <= hi  # the certified interval holds the exact value
    assert set(logged) == set(got)
    history = mlflow.tracking.MlflowClient().get_metric_history(run.info.run_id, "val_auroc")
    assert [m.step for m in history] == [3]
    local = mlflow.artifacts.download_artifacts(run_id=run.info.run_id, artifact_path="streammetrics",
                                                dst_path=str(tmp_path / "art"))
    cm = json.loads((tmp_path / "art" / "streammetrics" / "val_cm_step3.json").read_text())
    np.testing.assert_array_equal(np.array(cm), values["cm"])
    roc = json.loads((tmp_path / "art" / "streammetrics" / "val_roc_step3.json").read_text())
    assert local and len(roc["fpr"]) == len(values["roc"].fpr)
    assert roc["thresholds"][0] is None and values["roc"].thresholds[0] == np.inf  # strict JSON
    np.testing.assert_allclose(roc["fpr"], values["roc"].fpr, atol=1e-15)
    pytest.importorskip("matplotlib")
    # the plots: one PNG per member that draws itself, as .plot() draws it
    import matplotlib.pyplot as plt

    from streammetrics.mlflow import figures

    pngs = sorted(p.name for p in (tmp_path / "art" / "streammetrics").glob("*.png"))
    # (AUROC members draw their ROC curve: AUROC.plot(), the bounded one with its envelope)
    assert pngs == ["val_auroc_step3.png", "val_bounded_step3.png", "val_cm_step3.png", "val_roc_step3.png"]
    for name, figure in figures(ms, values):  # the same drawing, saved as MLflow saves it
        figure.savefig(tmp_path / f"{name}.png")
        assert (tmp_path / f"{name}.png").read_bytes() == (
            tmp_path / "art" / "streammetrics" / f"val_{name}_step3.png").read_bytes()
    plt.close("all")


def test_tensorboard_scalars_read_back(tmp_path) -> None:
    pytest.importorskip("torch")
    pytest.importorskip("tensorboard")
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
    from torch.utils.tensorboard import SummaryWriter

    from streammetrics.tensorboard import log_scalars

    ms = _metrics()
    writer = SummaryWriter(str(tmp_path))
    records = log_scalars(writer, ms, step=7, prefix="val/")
    writer.close()
    events = EventAccumulator(str(tmp_path))
    events.Reload()
    tags = set(events.Tags()["scalars"])
    assert tags == set(records)
    assert {"val/auroc", "val/acc", "val/bounded_lower", "val/bounded_upper"} <= tags
    (event,) = events.Scalars("val/auroc")
    assert event.step == 7 and event.value == pytest.approx(ms.compute()["auroc"], rel=1e-6)  # float32


def test_intervals_pick_certified_bounds_and_confidence_intervals() -> None:
    ms = _metrics()
    got = intervals(ms)
    assert got["bounded"] == ms["bounded"].bounds()
    assert got["acc"] == ms["acc"].interval(0.95)
    assert "cm" not in got and "roc" not in got


def _regression() -> dict[str, sm.Metric]:
    """Regression accumulators (issue #30), fed separately (an interval metric takes (n, 2)
    predictions): scalar values, per-output values, certified bounds, a Wilson interval."""
    y, p = _y_p()
    return {
        "mse": sm.MeanSquaredError(multioutput="raw_values").update(y, p),
        "r2": sm.R2Score().update(y, p),
        "kendall": sm.KendallTau().update(y[:, 0], p[:, 0]),
        "medae": sm.MedianAbsoluteError(max_bytes=1024).update(y[:, 0], p[:, 0]),
        "coverage": sm.IntervalCoverage().update(y[:, 0], np.stack([p[:, 0] - 1, p[:, 0] + 1], 1)),
    }


def test_regression_values_bounds_and_intervals_in_mlflow_and_tensorboard(tmp_path, monkeypatch) -> None:
    mlflow = pytest.importorskip("mlflow")
    pytest.importorskip("torch")
    pytest.importorskip("tensorboard")
    from sklearn.metrics import median_absolute_error
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
    from torch.utils.tensorboard import SummaryWriter

    from streammetrics.mlflow import log_metrics
    from streammetrics.tensorboard import log_scalars

    accs = _regression()
    values = {k: m.compute() for k, m in accs.items()}
    lo, hi = accs["medae"].bounds()
    assert not accs["medae"].is_exact and lo < hi
    assert intervals(sm.MetricSet(accs)) == {"medae": (lo, hi), "coverage": accs["coverage"].interval(0.95)}
    monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "true")
    mlflow.set_tracking_uri((tmp_path / "mlruns").as_uri())
    mlflow.set_experiment("streammetrics-regression")
    with mlflow.start_run() as run:
        logged = log_metrics(accs, step=1, prefix="val_", plots=False)
    got = mlflow.get_run(run.info.run_id).data.metrics
    assert set(got) == set(logged) == {"val_r2", "val_kendall", "val_medae", "val_coverage",
                                       "val_medae_lower", "val_medae_upper", "val_coverage_lower",
                                       "val_coverage_upper"}
    for k in ("r2", "kendall", "medae", "coverage"):
        assert got[f"val_{k}"] == pytest.approx(values[k], rel=1e-12)
    assert got["val_medae_lower"] == lo and got["val_medae_upper"] == hi
    y, p = _y_p()
    assert lo <= median_absolute_error(y[:, 0], p[:, 0]) <= hi  # certified
    mlflow.artifacts.download_artifacts(run_id=run.info.run_id, artifact_path="streammetrics",
                                        dst_path=str(tmp_path / "art"))
    per_output = json.loads((tmp_path / "art" / "streammetrics" / "val_mse_step1.json").read_text())
    np.testing.assert_allclose(per_output, values["mse"], rtol=1e-15)  # raw_values: an artifact
    writer = SummaryWriter(str(tmp_path / "tb"))
    records = log_scalars(writer, accs, step=2, prefix="val/")
    writer.close()
    events = EventAccumulator(str(tmp_path / "tb"))
    events.Reload()
    assert set(events.Tags()["scalars"]) == set(records) == {k.replace("val_", "val/") for k in logged}
    (event,) = events.Scalars("val/r2")
    assert event.step == 2 and event.value == pytest.approx(values["r2"], rel=1e-6)  # float32


def _y_p() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(1)
    y = rng.normal(size=(400, 2))
    return y, y + rng.normal(size=(400, 2)).round(3)
