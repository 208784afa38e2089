"""Real-valued targets in :class:`~streammetrics.DelayedLabels`: regression metrics (issue #30).

Around a regression metric -- one accumulator of the family, a ``MetricSet`` of them, a
``Window`` or ``Decayed`` of one, or a ``Sliced`` whose template is one -- ``predict(ids,
y_score)`` holds real predictions: one float per id, a row of k floats for k outputs, or a
``[lower, upper]`` pair (a row of k pairs) for the interval metrics; ``label(ids, y_true)``
takes real targets. Predictions are kept as float64 (what the family computes in) and checked
when they arrive, by the rules that concern a prediction alone:

* finite: NaN and ±inf are a ``ValueError`` naming ``y_score`` and the first offending value;
* the metric's domain of the predictions -- ``MeanSquaredLogError`` needs ``y_pred > -1``,
  ``TweedieDeviance`` ``y_pred > 0`` (its powers other than 0), an interval's lower bound may
  not exceed its upper bound -- by a dry run of the metric's update (``Metric._prepare``: it
  validates and changes nothing) with the label 1.0 for every row (inside every target domain
  of the family). A refusal that names ``y_pred`` is confirmed by a second dry run with the
  prediction itself as the label (so a value refused only because of *that* label, e.g. an
  overflow of ``(1 - y_pred)²``, waits for its real label), and then reported as ``y_score``.

Anything that depends on the label (a label's own domain, an overflow of the pair) is checked
when the label arrives, atomically, as for the classifiers. A loaded file's pending
predictions go through the same checks (untrusted input).

Complexity: O(k) per ``predict`` of k rows (two dry runs of the metric's ``prepare`` at most);
one Python float outside the range of single predictions that passed already costs one dry run
(see :class:`RealChecks`), inside it a comparison.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from streammetrics._core.metric import Metric
from streammetrics._core.validation import as_numpy
from streammetrics.regression._base import check_finite
from streammetrics.wrappers.metricset import MetricSet

__all__ = ["RealChecks", "check_loaded", "is_regression", "prediction_error", "real_labels",
           "real_predictions"]


def is_regression(metric: Metric) -> bool:
    """Whether ``metric`` takes real targets: a regression accumulator, set or wrapper, or a
    ``Sliced`` whose template is one."""
    if metric.family == "sliced":
        return bool(getattr(getattr(metric, "metric", None), "family", None) == "regression")
    return metric.family == "regression"


def _owners(metric: Metric) -> list[Metric]:
    """The accumulators whose ``_prepare`` a batch goes through (a Sliced's template)."""
    if metric.family == "sliced":
        metric = metric.metric  # type: ignore[attr-defined]
    return metric._owners() if isinstance(metric, MetricSet) else [metric]


def real_predictions(s: np.ndarray, name: str) -> np.ndarray:
    """Predictions as float64 (bools and ints become floats), finite: ``ValueError`` naming
    ``name`` and the first NaN or infinite entry. O(n)."""
    if s.dtype.kind not in "biuf":
        raise ValueError(f"{name}: expected real numbers, got dtype {s.dtype}")
    out = s.astype(np.float64)
    check_finite(out, name)
    return out


def real_labels(y_true: Any, name: str = "y_true") -> np.ndarray:
    """Real targets as a float64 array (a scalar stays 0-d), finite; ``ValueError`` naming the
    first offending entry by its index in the call. O(n)."""
    y = as_numpy(y_true, name)
    if y.dtype.kind not in "biuf":
        raise ValueError(f"{name}: expected real numbers, got dtype {y.dtype}")
    out = y.astype(np.float64)
    check_finite(out, name)
    return out


def _label_layout(owners: list[Metric], row: tuple[int, ...]) -> tuple[int, ...] | None:
    """The row shape of the labels that go with predictions of row shape ``row``: () for one
    value per row, ``row`` for k outputs, ``row[:-1]`` for intervals; None if no layout passes a
    zero-row dry run (the kind check of ``predict`` names the reason)."""
    layouts = [()] + ([row] if row else []) + ([row[:-1]] if len(row) >= 2 else [])
    scores = np.zeros((0, *row))
    for layout in layouts:
        try:
            for owner in owners:
                owner._prepare(np.zeros((0, *layout)), scores, None)
        except ValueError:
            continue
        return layout
    return None


def prediction_error(metric: Metric, s: np.ndarray, w: np.ndarray | None) -> str | None:
    """Why the metric refuses the predictions ``s`` (float64, finite, (n, *row)) whatever their
    labels, naming ``y_score`` and the first offending value; None if it may take them (module
    docstring). Changes nothing. O(n)."""
    if s.shape[0] == 0:
        return None
    owners = _owners(metric)
    layout = _label_layout(owners, s.shape[1:])
    if layout is None:
        return None
    ones = np.ones((s.shape[0], *layout))
    same = s
    while same.ndim > ones.ndim:  # an interval's label: its lower bound
        same = same[..., 0]
    for owner in owners:
        try:
            owner._prepare(ones, s, w)
        except ValueError as exc:
            message = str(exc)
            if not message.startswith("y_pred"):
                continue  # a rule on the pair: the label decides
            try:
                owner._prepare(same, s, w)
            except ValueError:
                return message.replace("y_pred", "y_score")
    return None


def check_loaded(metric: Metric, entries: list[tuple[Any, ...]]) -> None:
    """A loaded file's pending predictions (entries ``(score, weight or None, time, ...)``, at
    least one) must be what ``predict`` keeps for ``metric``: float64, finite, in its domain of
    predictions. ``ValueError`` naming ``pending.scores`` otherwise. O(k)."""
    scores = np.stack([np.asarray(e[0]) for e in entries])
    if scores.dtype != np.float64:
        raise ValueError(f"state: pending.scores of a regression DelayedLabels must be float64, got "
                         f"{scores.dtype}")
    weights = None
    if any(e[1] is not None for e in entries):
        weights = np.array([1.0 if e[1] is None else e[1] for e in entries])
    try:
        real_predictions(scores, "y_score")
        error = prediction_error(metric, scores, weights)
    except ValueError as exc:
        error = str(exc)
    if error is not None:
        raise ValueError(f"state: pending.scores are refused ({error.replace('y_score', 'pending.scores')})")


class RealChecks:
    """The predict-time checks of a regression ``DelayedLabels`` (a mixin: it holds the metric
    in ``_metric``), with the range of single Python-float predictions that passed, so that the
    per-request path costs a comparison (the family's rules on a prediction are ranges:
    ``> -1``, ``> 0``, finite)."""

    _metric: Metric
    _regression: bool

    def _init_real(self, metric: Metric) -> None:
        self._regression = is_regression(metric)
        self._real_lo, self._real_hi = np.inf, -np.inf  # no single prediction passed yet

    def _check_real(self, s: np.ndarray, w: np.ndarray | None, name: str = "y_score") -> np.ndarray:
        """``s`` as checked float64 predictions (``ValueError`` naming ``name``). O(n)."""
        s = real_predictions(s, name)
        error = prediction_error(self._metric, s, w)
        if error is not None:
            raise ValueError(error if name == "y_score" else error.replace("y_score", name))
        return s

    def _check_real_one(self, score: float) -> None:
        """One Python float prediction (not NaN), checked unless inside the range that passed."""
        if self._real_lo <= score <= self._real_hi:
            return
        self._check_real(np.array([score]), None)
        self._real_lo, self._real_hi = min(self._real_lo, score), max(self._real_hi, score)
