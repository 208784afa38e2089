"""streammetrics.keras on real Keras 3 (torch backend): per-epoch exact values in the logs."""

from __future__ import annotations

import os

os.environ.setdefault("KERAS_BACKEND", "torch")

import numpy as np  # noqa: E402
import pytest  # noqa: E402

keras = pytest.importorskip("keras")
pytest.importorskip("torch")
if keras.backend.backend() != "torch":
    pytest.skip("these tests run Keras on the torch backend", allow_module_level=True)

from sklearn.metrics import average_precision_score, roc_auc_score  # noqa: E402

import streammetrics as sm  # noqa: E402
from streammetrics.keras import StreamMetricsCallback  # noqa: E402


def _data(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, 4)).astype("float32")
    y = (x[:, 0] + 0.5 * rng.normal(size=n) > 0).astype("int64")
    return x, y


def _model() -> keras.Model:
    keras.utils.set_random_seed(0)
    model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(8, activation="relu"),
                              keras.layers.Dense(1, activation="sigmoid")])
    model.compile(optimizer="adam", loss="binary_crossentropy")
    return model


class _Record(keras.callbacks.Callback):
    """Predictions on the validation set at each epoch end, to check the logged values."""

    def __init__(self, x: np.ndarray) -> None:
        super().__init__()
        self.x, self.preds = x, []

    def on_epoch_end(self, epoch, logs=None):
        self.preds.append(np.asarray(keras.ops.convert_to_numpy(self.model(self.x, training=False)))[:, 0])


def test_epoch_logs_hold_exact_values() -> None:
    x, y = _data(300, 0)
    xv, yv = _data(157, 1)
    wv = np.random.default_rng(2).random(157)
    model = _model()
    cb = StreamMetricsCallback(
        sm.MetricSet(auroc=sm.AUROC(), ap=sm.AveragePrecision(), cm=sm.ConfusionMatrix()),
        validation_data=(xv, yv, wv), batch_size=50,
    )
    rec = _Record(xv)
    history = model.fit(x, y, epochs=3, batch_size=64, verbose=0, callbacks=[cb, rec])
    assert len(history.history["val_auroc"]) == 3
    assert "val_cm" not in history.history  # matrices are not scalar logs
    for epoch, pred in enumerate(rec.preds):
        assert history.history["val_auroc"][epoch] == pytest.approx(
            roc_auc_score(yv, pred, sample_weight=wv), abs=1e-12)
        assert history.history["val_ap"][epoch] == pytest.approx(
            average_precision_score(yv, pred, sample_weight=wv), abs=1e-12)
    assert cb.results["cm"].shape == (2, 2)


def test_iterable_of_batches_and_multiclass() -> None:
    rng = np.random.default_rng(3)
    xv = rng.normal(size=(90, 4)).astype("float32")
    yv = rng.integers(0, 3, 90)
    keras.utils.set_random_seed(0)
    model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(3, activation="softmax")])
    model.compile(optimizer="sgd", loss="sparse_categorical_crossentropy")
    batches = [(xv[i : i + 32], yv[i : i + 32]) for i in range(0, 90, 32)]
    cb = StreamMetricsCallback({"auroc": sm.AUROC(num_classes=3), "acc": sm.Accuracy(num_classes=3)},
                               validation_data=batches, prefix="holdout_")
    history = model.fit(xv, yv, epochs=1, verbose=0, callbacks=[cb])
    proba = np.asarray(keras.ops.convert_to_numpy(model(xv, training=False)))
    assert history.history["holdout_auroc"][0] == pytest.approx(
        roc_auc_score(yv, proba, multi_class="ovr"), abs=1e-12)
    assert history.history["holdout_acc"][0] == pytest.approx(np.mean(proba.argmax(1) == yv), abs=1e-12)


def test_bad_arguments() -> None:
    with pytest.raises(ValueError, match="batch_size"):
        StreamMetricsCallback(sm.AUROC(), validation_data=([], []), batch_size=0)
    with pytest.raises(ValueError, match="metrics"):
        StreamMetricsCallback([sm.AUROC()], validation_data=([], []))


def test_regression_epoch_logs_equal_sklearn() -> None:
    """Issue #30: a regression model with (n, 1) float targets and outputs: the logged values
    equal scikit-learn / scipy on the model's predictions at each epoch end."""
    import scipy.stats as ss
    from sklearn.metrics import mean_absolute_error, mean_squared_error, r2_score

    rng = np.random.default_rng(4)
    x = rng.normal(size=(200, 4)).astype("float32")
    y = (x @ np.array([1.0, -2.0, 0.5, 0.0]) + rng.normal(size=200)).astype("float32")[:, None]
    xv, yv = x[:80], y[:80]
    keras.utils.set_random_seed(0)
    model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(1)])
    model.compile(optimizer="sgd", loss="mse")
    cb = StreamMetricsCallback(sm.MetricSet(mse=sm.MeanSquaredError(), mae=sm.MeanAbsoluteError(),
                                            r2=sm.R2Score(), spearman=sm.SpearmanCorrCoef()),
                               validation_data=(xv, yv), batch_size=32)
    rec = _Record(xv)
    history = model.fit(x, y, epochs=2, batch_size=50, verbose=0, callbacks=[cb, rec])
    t = yv[:, 0].astype(np.float64)
    for epoch, pred in enumerate(rec.preds):
        p = pred.astype(np.float64)
        assert history.history["val_mse"][epoch] == pytest.approx(mean_squared_error(t, p), rel=1e-12)
        assert history.history["val_mae"][epoch] == pytest.approx(mean_absolute_error(t, p), rel=1e-12)
        assert history.history["val_r2"][epoch] == pytest.approx(r2_score(t, p), rel=1e-12)
        assert history.history["val_spearman"][epoch] == pytest.approx(ss.spearmanr(t, p).statistic,
                                                                       rel=1e-12)
