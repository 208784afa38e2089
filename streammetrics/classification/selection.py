"""``SelectionRate``: the share of predicted positives, the quantity demographic parity compares.

SelectionRate = PP / n = (TP + FP) / (TP + FP + FN + TN) (weighted: the weight of the rows
predicted positive over the total weight), Fairlearn's ``selection_rate`` with ``pos_label=1``.
A view of the binary confusion counts, so in a MetricSet it shares one state with Precision,
Recall, F1, ...

Complexity: ``update`` O(n) (the confusion kernel), ``compute`` O(1), memory O(1).
"""

from __future__ import annotations

from typing import Any

from streammetrics._core.averaging import check_zero_division, warn_undefined, zero_value
from streammetrics._core.intervals import wilson
from streammetrics._core.metric import Metric
from streammetrics._core.params import real_param
from streammetrics._counts.confusion_counts import ConfusionCounts

__all__ = ["SelectionRate"]


class SelectionRate(Metric[float]):
    """Share of rows predicted positive (binary): (TP + FP) / n.

    Parameters
    ----------
    threshold : float, default 0.5
        Scores are predicted positive iff ``score >= threshold`` (labels 0/1 are taken as is).
    ignore_index : int, optional
        Rows whose ``y_true`` equals it are skipped.
    zero_division : "warn", 0.0, 1.0 or nan, default "warn"
        The value with no rows ("warn": 0.0 and an ``UndefinedMetricWarning``).

    Examples
    --------
    >>> import streammetrics as sm
    >>> sm.SelectionRate().update([0, 1, 1, 0], [1, 1, 0, 0]).compute()
    0.5
    """

    def __init__(self, *, threshold: float = 0.5, ignore_index: int | None = None,
                 zero_division: str | float = "warn") -> None:
        super().__init__()
        self.threshold = real_param(threshold, "threshold")
        self.zero_division = check_zero_division(zero_division)
        self._state: ConfusionCounts = ConfusionCounts("binary", None, self.threshold, ignore_index)
        self.ignore_index = self._state.ignore_index

    def _config(self) -> dict[str, Any]:
        zd = self.zero_division
        return {"threshold": self.threshold, "ignore_index": self.ignore_index,
                "zero_division": zd if zd == zd else "nan"}  # nan is stored as "nan"

    @classmethod
    def _from_config(cls, config: Any) -> Any:
        config = dict(config)
        if config.get("zero_division") == "nan":
            config["zero_division"] = float("nan")
        return super()._from_config(config)

    def _compute(self) -> float:
        m = self._state.matrix()
        n = float(m.sum())
        if n == 0:
            if self.zero_division == "warn":
                warn_undefined("Selection rate", "no samples")
            return zero_value(self.zero_division)
        return float(m[:, 1].sum() / n)

    def interval(self, confidence: float = 0.95) -> tuple[float, float]:
        """Wilson interval of the selection rate (effective sample size with weights); no rows:
        (nan, nan). O(1)."""
        with self._lock:
            m = self._state.matrix()
            m2 = self._state.matrix_w2()
            low, high = wilson(m[:, 1].sum(), m.sum(), m2.sum(), confidence)
        return float(low), float(high)
