"""Hugging Face ``transformers``: a ``compute_metrics`` factory, streaming batch by batch.

Install the extra: ``pip install 'streammetrics[hf]'``. This module imports nothing from
``transformers`` itself (it only reads the ``EvalPrediction`` it is given), so it also works with
other trainers that call ``compute_metrics(eval_pred)``.

Usage::

    import streammetrics as sm
    from streammetrics.hf import compute_metrics

    metrics = sm.MetricSet(auroc=sm.AUROC(), f1=sm.F1())
    trainer = Trainer(model=model, args=TrainingArguments(..., batch_eval_metrics=True),
                      eval_dataset=ds, compute_metrics=compute_metrics(metrics))
    trainer.evaluate()          # {"eval_auroc": ..., "eval_f1": ..., ...}

Two modes, chosen by how the Trainer calls the function:

* ``batch_eval_metrics=True`` (recommended): the Trainer calls
  ``compute_metrics(eval_pred, compute_result=...)`` after every evaluation batch with that batch's
  logits and labels; the batch is folded into the accumulators and, on the last batch
  (``compute_result=True``), the values are computed and the accumulators reset. The logits of the
  whole evaluation set are never concatenated: memory is the accumulators' state.
* otherwise, one call with every prediction (the Trainer has concatenated them): fed at once.

Logits become scores by ``scores=``: ``"auto"`` applies a sigmoid to one logit per row, and a
softmax to several; with two columns and binary metrics (no ``num_classes``), the score is the
probability of class 1. Rows whose label is ``ignore_label`` (the Trainer's padding, -100) are
dropped.

Regression metrics (a set of the regression family: ``MeanSquaredError``, ``R2Score``,
``SpearmanCorrCoef``, ``IntervalCoverage``, ...; a model with ``problem_type="regression"``):
``"auto"`` takes the model outputs as they are (identity; an (n, 1) output becomes (n,), an
(n, 2) output stays the (lower, upper) of an interval metric) and no row is dropped -- a
target of -100.0 is a value, not padding -- unless ``ignore_label`` is given explicitly.

Complexity: the accumulators' ``update`` per call, plus the softmax (O(n C)).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from streammetrics._engines.callbacks import as_metric_set, scalar_values, to_numpy

__all__ = ["compute_metrics", "logits_to_scores"]

_SCORES = ("auto", "softmax", "sigmoid", "identity")
#: The Trainer's label padding, dropped by default for classification sets.
_PADDING = -100


def _binary(ms: Any) -> bool:
    return all(getattr(m, "num_classes", None) is None for _, m in ms.items())


def logits_to_scores(logits: Any, scores: str = "auto", *, binary: bool = False) -> np.ndarray:
    """Model outputs as the scores the accumulators take.

    Parameters
    ----------
    logits : array-like, (n,), (n, 1) or (n, C)
        Raw model outputs (a tuple's first element is used, as the Trainer's ``predictions``).
    scores : {"auto", "softmax", "sigmoid", "identity"}
        ``"auto"``: sigmoid for one column, softmax for several.
    binary : bool
        With two columns, return the probability of class 1 (for binary metrics).

    Returns
    -------
    numpy.ndarray of float64: (n,) for one column or ``binary``, else (n, C).
    """
    if scores not in _SCORES:
        raise ValueError(f"scores: expected one of {list(_SCORES)}, got {scores!r}")
    if isinstance(logits, tuple | list):
        logits = logits[0]
    z = np.asarray(to_numpy(logits), dtype=np.float64)
    if z.ndim == 2 and z.shape[1] == 1:
        z = z[:, 0]
    if scores == "identity":
        out = z
    elif z.ndim == 1 or scores == "sigmoid":
        out = 0.5 * (1.0 + np.tanh(0.5 * z))  # the logistic function, without overflow
    else:
        shifted = z - z.max(axis=1, keepdims=True)
        e = np.exp(shifted)
        out = e / e.sum(axis=1, keepdims=True)
    if binary and out.ndim == 2 and out.shape[1] == 2:
        out = out[:, 1]
    return out


def compute_metrics(
    metrics: Any, *, scores: str = "auto", ignore_label: float | str | None = "auto", prefix: str = ""
) -> Callable[..., dict[str, float]]:
    """A ``compute_metrics`` function for ``transformers.Trainer`` backed by accumulators.

    Parameters
    ----------
    metrics : MetricSet, Metric or mapping of name -> Metric
        The accumulators (owned by the returned function: reset after every evaluation).
    scores : {"auto", "softmax", "sigmoid", "identity"}
        How logits become scores (see :func:`logits_to_scores`); ``"auto"`` is ``"identity"``
        for a regression set.
    ignore_label : int, float, None or "auto"
        Label value of rows to drop (the Trainer pads labels with -100). ``"auto"`` (default):
        -100 for classification sets, None (keep every row) for a regression set.
    prefix : str
        Prefix of the returned names (the Trainer adds its own ``eval_``).

    Returns
    -------
    callable
        ``fn(eval_pred, compute_result=None) -> {name: float}`` (an empty dict on intermediate
        batches in ``batch_eval_metrics`` mode). ``fn.metrics`` is the MetricSet and
        ``fn.results`` the last full ``compute()`` result.

    Examples
    --------
    >>> import numpy as np, streammetrics as sm
    >>> from types import SimpleNamespace
    >>> fn = compute_metrics(sm.MetricSet(acc=sm.Accuracy()))
    >>> fn(SimpleNamespace(predictions=np.array([[2.0, -1.0], [0.0, 3.0]]), label_ids=np.array([0, 1])))
    {'acc': 1.0}
    """
    ms = as_metric_set(metrics)
    if scores not in _SCORES:
        raise ValueError(f"scores: expected one of {list(_SCORES)}, got {scores!r}")
    regression = ms.family == "regression"
    if scores == "auto" and regression:
        scores = "identity"
    if isinstance(ignore_label, str):
        if ignore_label != "auto":
            raise ValueError(f"ignore_label: expected a number, None or 'auto', got {ignore_label!r}")
        ignore_label = None if regression else _PADDING
    binary = not regression and _binary(ms)  # (n, 2) regression outputs: (lower, upper)

    def fold(eval_pred: Any) -> None:
        labels = np.asarray(to_numpy(eval_pred.label_ids))
        if isinstance(eval_pred.label_ids, tuple | list):
            labels = np.asarray(to_numpy(eval_pred.label_ids[0]))
        y_score = logits_to_scores(eval_pred.predictions, scores, binary=binary)
        if ignore_label is not None and labels.ndim == 1:
            keep = labels != ignore_label
            if not keep.all():
                labels, y_score = labels[keep], y_score[keep]
        if len(labels):
            ms.update(labels, y_score)

    def fn(eval_pred: Any, compute_result: bool | None = None) -> dict[str, float]:
        if compute_result is None:  # one call with every prediction
            ms.reset()
            fold(eval_pred)
        else:
            fold(eval_pred)
            if not compute_result:
                return {}
        values = ms.compute()
        fn.results = values  # type: ignore[attr-defined]
        ms.reset()
        return scalar_values(values, prefix)

    fn.metrics = ms  # type: ignore[attr-defined]
    fn.results = {}  # type: ignore[attr-defined]
    return fn
