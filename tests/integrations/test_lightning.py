"""streammetrics.lightning on real PyTorch Lightning (CPU): one process and two (gloo DDP)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("torch")
pytest.importorskip("lightning")

from sklearn.metrics import average_precision_score, confusion_matrix, roc_auc_score  # noqa: E402

import streammetrics as sm  # noqa: E402
from streammetrics.lightning import StreamMetricsCallback  # noqa: E402

SCRIPT = Path(__file__).resolve().parents[1] / "_support" / "lightning_script.py"


def _run(tmp_path: Path, devices: int) -> dict:
    out = tmp_path / f"run{devices}.json"
    # the script imports the streammetrics this test imported (a clone run in place, not installed)
    package_root = str(Path(sm.__file__).resolve().parents[1])
    path = [str(SCRIPT.parents[1]), package_root, os.environ.get("PYTHONPATH", "")]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(path)}
    proc = subprocess.run([sys.executable, str(SCRIPT), str(out), str(devices)], capture_output=True,
                          text=True, env=env, timeout=600, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(out.read_text())


@pytest.mark.parametrize("devices", [1, 2])
def test_logged_values_equal_sklearn_on_the_final_model(tmp_path: Path, devices: int) -> None:
    """The last epoch's logged values are those of the final model on every validation sample
    counted once: with 2 ranks, the sampler's padding duplicate is trimmed and the ranks synced."""
    got = _run(tmp_path, devices)
    assert len(got["epochs"]) == 2
    y, s = np.array(got["y"]), np.array(got["scores"])
    last = got["epochs"][-1]
    assert last["val/auroc"] == pytest.approx(roc_auc_score(y, s), abs=1e-6)  # float32 model outputs
    assert last["val/ap"] == pytest.approx(average_precision_score(y, s), abs=1e-6)
    assert "val/cm" not in last
    np.testing.assert_array_equal(np.array(got["cm"]), confusion_matrix(y, s >= 0.5))
    assert np.array(got["cm"]).sum() == len(y)  # every sample once: no padding duplicate
    # regression metrics (issue #30), synced and trimmed the same way
    import scipy.stats as ss
    from sklearn import metrics as skm

    t = y.astype(np.float64)
    want = {"mse": skm.mean_squared_error(t, s), "mae": skm.mean_absolute_error(t, s),
            "r2": skm.r2_score(t, s), "medae": skm.median_absolute_error(t, s),
            "spearman": ss.spearmanr(t, s).statistic, "kendall": ss.kendalltau(t, s).statistic}
    assert set(got["regression"]) == set(want)
    for k, v in want.items():
        # float32 outputs: the final model's scores above are recomputed in one batch, the
        # validation loop's in batches of 16 (rounding differs in the last float32 bits)
        assert got["regression"][k] == pytest.approx(v, rel=1e-6), k
        assert last[f"reg/{k}"] == pytest.approx(v, abs=1e-6), k  # logged as a float32 tensor


def test_constructor_checks() -> None:
    with pytest.raises(ValueError, match="stages"):
        StreamMetricsCallback(sm.AUROC(), stages=["train"])
    with pytest.raises(ValueError, match="metrics"):
        StreamMetricsCallback(42)
    cb = StreamMetricsCallback({"a": sm.AUROC()}, stages=["test"], prefix={"test": "holdout/"})
    assert list(cb.metrics) == ["test"] and cb.prefix["test"] == "holdout/"
