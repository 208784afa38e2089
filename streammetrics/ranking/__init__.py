"""The ranking family: AUROC, average precision, the ROC, PR and DET curves over one score state
(exact or bounded), and the multilabel ranking measures. Every name is also importable from
``streammetrics``."""

from .det import DETCurve, DETCurveResult, det_points
from .label_ranking import CoverageError, LabelRankingAveragePrecision, LabelRankingLoss
from .metrics import (
    AUROC,
    AveragePrecision,
    CurveMetric,
    OperatingPoint,
    PRCurve,
    PRCurveResult,
    ROCCurve,
    ROCCurveResult,
)

__all__ = [
    "AUROC", "AveragePrecision", "ROCCurve", "PRCurve", "ROCCurveResult", "PRCurveResult",
    "OperatingPoint", "CurveMetric", "DETCurve", "DETCurveResult", "det_points", "CoverageError",
    "LabelRankingAveragePrecision", "LabelRankingLoss",
]
