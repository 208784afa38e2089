"""What the calibration metrics share: the constructor checks and the empty-state rule."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .._base import Metric, UndefinedMetricWarning
from .._confusion_counts import task_of
from .._label_options import label_options
from .._warnings import warn
from ._state import ProbabilityBins, check_n_bins

__all__ = ["ProbabilityMetric", "undefined"]


def undefined(name: str) -> float:
    """nan with one :class:`UndefinedMetricWarning` (no samples, or total weight 0)."""
    warn(f"{name} is undefined (nan): no samples with positive weight", UndefinedMetricWarning)
    return math.nan


class ProbabilityMetric(Metric):
    """Base of the calibration family: owns a :class:`ProbabilityBins` state."""

    _state: ProbabilityBins

    def _init_state(
        self,
        num_classes: Any,
        n_bins: Any,
        side: str,
        from_logits: Any,
        allow_zero: bool = False,
        ovr: bool = True,
        *,
        classes: Any = None,
        pos_label: Any = None,
    ) -> None:
        # labels as users have them: classes= (score column i is classes[i]), pos_label= (binary)
        self._labels = label_options(num_classes, classes=classes, pos_label=pos_label)
        num_classes = self._labels.num_classes
        task_of(num_classes, False)
        check_n_bins(n_bins, 1 if num_classes is None else int(num_classes), allow_zero)
        if not isinstance(from_logits, (bool, np.bool_)):
            raise ValueError(f"from_logits: must be True or False, got {from_logits!r}")
        self.num_classes = None if num_classes is None else int(num_classes)
        self.from_logits = bool(from_logits)
        bins = ProbabilityBins(self.num_classes, n_bins, side, self.from_logits, ovr)
        self._state = self._labels.attach(bins)

    def update(self, y_true: Any, y_pred: Any, *, sample_weight: Any = None) -> Any:
        """Fold in one batch: labels and probabilities (or logits with ``from_logits=True``).

        Binary: ``y_true`` 0/1 (n,), ``y_pred`` P(1) (n,); multiclass: ``y_true`` in [0, C)
        (n,), ``y_pred`` (n, C) rows summing to 1. Atomic: a rejected batch changes nothing.
        O(n C log n_bins). Returns ``self``.
        """
        return self._update_state(y_true, y_pred, sample_weight)


def check_choice(value: Any, name: str, allowed: tuple[Any, ...]) -> Any:
    if not isinstance(value, str) or value not in allowed:
        raise ValueError(f"{name}: must be one of {allowed}, got {value!r}")
    return value


def check_strategy(strategy: Any) -> str:
    """``"uniform"`` (fixed bins, O(n_bins) state) or ``"quantile"`` (exact sorted values)."""
    return str(check_choice(strategy, "strategy", ("uniform", "quantile")))
