"""Keras 3: a callback that streams validation predictions into accumulators and logs their values.

Install the extra: ``pip install 'streammetrics[keras]'`` (Keras 3; any backend -- the library's
tests run it on the torch backend, ``KERAS_BACKEND=torch``). Importing this module imports
``keras`` (``import streammetrics`` never does).

Usage::

    import streammetrics as sm
    from streammetrics.keras import StreamMetricsCallback

    cb = StreamMetricsCallback(sm.MetricSet(auroc=sm.AUROC(), ap=sm.AveragePrecision()),
                               validation_data=(x_val, y_val), batch_size=1024)
    history = model.fit(x, y, epochs=5, callbacks=[cb])
    history.history["val_auroc"]        # one exact value per epoch

At the end of every epoch the callback resets the accumulators, predicts the validation data
batch by batch (``model(x, training=False)``; the predictions are never concatenated), folds each
batch in, computes, and writes the scalar values into the epoch's ``logs`` (so ``History``,
``EarlyStopping``, ``ModelCheckpoint(monitor="val_auroc")`` and the CSV/TensorBoard loggers see
them). A model output of shape (n, 1) is squeezed to (n,) (binary scores, one regression
output; regression metrics take (n, 1) targets with it). Regression metrics (``MeanSquaredError``,
``R2Score``, ``SpearmanCorrCoef``, ...) take the outputs as they are: an (n, k) output is k
regression outputs, an (n, 2) one the (lower, upper) of ``IntervalCoverage``.

Complexity: one forward pass over the validation data per epoch, plus the accumulators' updates.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import keras
import numpy as np

from streammetrics._core.params import Param, check_param
from streammetrics._engines.callbacks import as_metric_set, scalar_values, to_numpy

__all__ = ["StreamMetricsCallback"]

#: ``batch_size``: the rows per validation batch.
_BATCH_SIZE = Param("int", "must be a positive integer", low=1)


def _batches(validation_data: Any, batch_size: int) -> Iterable[tuple[Any, ...]]:
    """(x, y[, w]) batches from in-memory arrays, or the items of an iterable of such tuples."""
    if isinstance(validation_data, tuple) and validation_data and hasattr(validation_data[0], "__len__") \
            and not isinstance(validation_data[0], tuple) and len(validation_data) in (2, 3) \
            and all(hasattr(a, "shape") for a in validation_data):
        n = len(validation_data[0])
        for start in range(0, n, batch_size):
            yield tuple(a[start : start + batch_size] for a in validation_data)
        return
    for item in validation_data:
        if not isinstance(item, tuple | list) or len(item) not in (2, 3):
            raise ValueError(
                "validation_data: expected (x, y) or (x, y, sample_weight) batches, "
                f"got {type(item).__name__}"
            )
        yield tuple(item)


class StreamMetricsCallback(keras.callbacks.Callback):
    """Evaluate streammetrics accumulators on validation data at the end of every epoch.

    Parameters
    ----------
    metrics : MetricSet, Metric or mapping of name -> Metric
        The accumulators (reset at the start of each evaluation).
    validation_data : tuple or iterable
        ``(x, y)`` or ``(x, y, sample_weight)`` arrays (split into ``batch_size`` batches), or an
        iterable of such batches (a ``keras.utils.PyDataset``, a ``torch`` DataLoader, a generator
        function's result re-created each epoch is not supported: pass a re-iterable object).
    batch_size : int
        Batch size for in-memory arrays.
    prefix : str
        Prefix of the names written to ``logs`` (default ``"val_"``, Keras' own convention).

    Attributes
    ----------
    results : dict
        The last full ``compute()`` result (arrays and curves included).

    Examples
    --------
    >>> import numpy as np, streammetrics as sm
    >>> from streammetrics.keras import StreamMetricsCallback
    >>> cb = StreamMetricsCallback(sm.AUROC(), validation_data=(np.zeros((4, 2)), np.array([0, 1, 0, 1])))
    >>> cb.prefix
    'val_'
    """

    def __init__(self, metrics: Any, validation_data: Any, *, batch_size: int = 1024,
                 prefix: str = "val_") -> None:
        super().__init__()
        batch_size = check_param(batch_size, "batch_size", _BATCH_SIZE)
        self.metric_set = as_metric_set(metrics)
        self.validation_data = validation_data
        self.batch_size = batch_size
        self.prefix = prefix
        self.results: dict[str, Any] = {}

    def evaluate(self) -> dict[str, Any]:
        """Reset, stream the validation data through the model and the accumulators, compute."""
        ms = self.metric_set.reset()
        for batch in _batches(self.validation_data, self.batch_size):
            x, y = batch[0], batch[1]
            weight = to_numpy(batch[2]) if len(batch) > 2 else None
            pred = np.asarray(keras.ops.convert_to_numpy(self.model(x, training=False)))
            if pred.ndim == 2 and pred.shape[1] == 1:
                pred = pred[:, 0]
            ms.update(to_numpy(y), pred, sample_weight=weight)
        self.results = ms.compute()
        return self.results

    def on_epoch_end(self, epoch: int, logs: dict[str, Any] | None = None) -> None:
        values = self.evaluate()
        if logs is not None:
            logs.update(scalar_values(values, self.prefix))
