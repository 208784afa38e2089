"""The exact sorted score buffer for probabilities: one buffer shared by ranking metrics and
quantile calibration.

:class:`ProbabilityScores` is :class:`~streammetrics._scores.exact.buffer.SortedScores` whose
``prepare`` first checks the batch as every calibration metric does
(:func:`streammetrics._scores.probability_inputs.prepare_batch`: probabilities in [0, 1], no NaN,
multiclass rows summing to 1 within scikit-learn's tolerance) and stores the probabilities as
float64. Ranking metrics declared with ``scores="probability"`` (AUROC, AveragePrecision, the
curves, KSStatistic, GainsCurve, LiftCurve) and quantile calibration without ``from_logits``
(``CalibrationError(strategy="quantile")`` binary or ``classwise``, ``CalibrationCurve(
strategy="quantile")``) hold it, so a :class:`~streammetrics.MetricSet` of them keeps one buffer
and validates each batch once. With ``ignore_index`` (torchmetrics' option) the rows so labelled
are checked, then left out. Everything else (merging, windows, persistence) is the sorted
buffer's; loading also refuses a stored value outside [0, 1].

Complexity: ``prepare`` O(n C) (one validation pass) plus the buffer's split.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from typing import Any

import numpy as np

from streammetrics._core.validation import ScoreBatch
from streammetrics._scores.exact.buffer import SortedScores

from .probability_inputs import prepare_batch


class ProbabilityScores(SortedScores):
    """A sorted score buffer of validated probabilities (binary or multiclass, one-vs-rest)."""

    def __init__(self, task: str, num_classes: int | None = None, ignore_index: int | None = None) -> None:
        if task not in ("binary", "multiclass"):
            raise ValueError(f"task: probability scores are binary or multiclass, got {task!r}")
        super().__init__(task, num_classes, ignore_index)

    def key(self) -> Hashable:
        return (*super().key(), "probability")  # type: ignore[misc]

    def prepare(self, y_true: Any, y_score: Any, sample_weight: Any = None) -> Any:
        """The calibration metrics' checks (:meth:`check`), then the buffer's split of the
        checked arrays (not checked again). O(n C)."""
        return self.split(self.check(y_true, y_score, sample_weight))

    def check(self, y_true: Any, y_score: Any, sample_weight: Any = None) -> ScoreBatch:
        """The checks of :meth:`prepare` alone (:func:`prepare_batch`: labels, weights,
        probabilities in [0, 1] and not NaN, multiclass row sums), the checked arrays as a
        :class:`ScoreBatch` (float64 probabilities; rows labelled ``ignore_index`` left out; no
        row when nothing counts). O(n C)."""
        b = prepare_batch(y_true, y_score, sample_weight, self.num_classes, False, losses=False,
                          ignore_index=self.ignore_index)
        if b is None:
            y = np.zeros(0, np.int8 if self.num_classes is None else np.intp)
            p = np.zeros((0,) if self.num_classes is None else (0, self.num_classes))
            return ScoreBatch(y, p, None, y, p)
        return ScoreBatch(b.y, b.p, b.w, b.y, b.p)

    def load_arrays(self, arrays: Mapping[str, Any]) -> None:
        """The sorted buffer's validation, and every value must be a probability in [0, 1]."""
        values = np.asarray(arrays.get("values", np.zeros(0)))
        if values.dtype.kind == "f" and values.size and not ((values >= 0).all() and (values <= 1).all()):
            raise ValueError("state: array 'values' holds a probability outside [0, 1]")
        super().load_arrays(arrays)
