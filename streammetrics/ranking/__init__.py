"""The ranking family: AUROC, average precision, the ROC, PR and DET curves over one score state
(exact or bounded), and the multilabel ranking measures. Every name of ``__all__`` is also
importable from ``streammetrics``; the base ``CurveMetric`` and ``det_points`` are importable
from here."""

from .det import DETCurve, DETCurveResult
from .det import det_points as det_points
from .label_ranking import CoverageError, LabelRankingAveragePrecision, LabelRankingLoss
from .metrics import *  # noqa: F403  -- AUROC, AveragePrecision, the curves and their results
from .metrics import CurveMetric as CurveMetric

__all__ = [
    "AUROC", "AveragePrecision", "ROCCurve", "PRCurve", "ROCCurveResult", "PRCurveResult",
    "OperatingPoint", "DETCurve", "DETCurveResult", "CoverageError", "LabelRankingAveragePrecision",
    "LabelRankingLoss",
]
