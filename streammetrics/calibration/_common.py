"""What the calibration metrics share: the constructor checks and the empty-state rule
(:func:`undefined`: nan and one warning, from :mod:`streammetrics._core.averaging`)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from streammetrics._core.metric import M, Metric, R_co
from streammetrics._core.params import FLAG, IGNORE_INDEX, Param, check_param
from streammetrics._counts.label_options import label_options
from streammetrics._counts.tasks import task_of

from ._state import MAX_CELLS, ProbabilityBins, check_n_bins


class ProbabilityMetric(Metric[R_co]):
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
        losses: bool = True,
        *,
        classes: Any = None,
        pos_label: Any = None,
        ignore_index: Any = None,
    ) -> None:
        # labels as users have them: classes= (score column i is classes[i]), pos_label= (binary);
        # a label ignore_index passes the mapping unchanged, for the state to leave out
        self.ignore_index = check_param(ignore_index, "ignore_index", IGNORE_INDEX)
        self._labels = label_options(num_classes, classes=classes, pos_label=pos_label,
                                     ignore_index=self.ignore_index)
        num_classes = self._labels.num_classes
        task_of(num_classes, False)
        if num_classes is not None and int(num_classes) > MAX_CELLS:  # too many even for 1 bin
            raise ValueError(f"num_classes: at most {MAX_CELLS} classes (the cell limit of the "
                             f"binned state), got {num_classes!r}")
        check_n_bins(n_bins, 1 if num_classes is None else int(num_classes), allow_zero)
        self.from_logits = check_param(from_logits, "from_logits", FLAG)
        self.num_classes = None if num_classes is None else int(num_classes)
        bins = ProbabilityBins(self.num_classes, n_bins, side, self.from_logits, ovr, losses,
                               self.ignore_index)
        self._state = bins

    def update(self: M, y_true: ArrayLike, y_pred: ArrayLike, *, sample_weight: ArrayLike | None = None) -> M:
        """Fold in one batch: labels and probabilities (or logits with ``from_logits=True``).

        Binary: ``y_true`` 0/1 (n,), ``y_pred`` P(1) (n,); multiclass: ``y_true`` in [0, C)
        (n,), ``y_pred`` (n, C) rows summing to 1 (rows that do not are used as given, with
        scikit-learn's warning). Atomic: a rejected batch changes nothing.
        O(n C). Returns ``self``.
        """
        return self._update_state(y_true, y_pred, sample_weight)


def check_choice(value: Any, name: str, allowed: tuple[str, ...]) -> str:
    """``value`` if it is one of the strings ``allowed``; ``ValueError`` naming ``name``."""
    return str(check_param(value, name, Param("choice", f"must be one of {allowed}", choices=allowed)))


def check_strategy(strategy: Any) -> str:
    """``"uniform"`` (fixed bins, O(n_bins) state) or ``"quantile"`` (exact sorted values)."""
    return str(check_choice(strategy, "strategy", ("uniform", "quantile")))


def binned_error(w: np.ndarray, wc: np.ndarray, wa: np.ndarray, norm: str) -> float:
    """The calibration error of per-bin sums (n_bins,) each; nan if the total weight is 0."""
    n = w.sum()
    if n <= 0:
        return math.nan
    full = w > 0
    if norm == "l1":
        return float(np.abs(wa[full] - wc[full]).sum() / n)
    gap = (wa[full] - wc[full]) / w[full]
    if norm == "l2":
        return float(math.sqrt((w[full] * gap * gap).sum() / n))
    return float(np.abs(gap).max())
