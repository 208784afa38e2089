"""The classification family: the confusion metrics (thin views of one confusion-count state),
top-k accuracy, the classification report, the selection rate and the hinge loss. Every name of ``__all__`` is
also importable from ``streammetrics``."""

from .confusion import *  # noqa: F403  -- the confusion family: confusion.__all__
from .confusion import FNR, FPR, PPV, TNR, TPR, Sensitivity
from .hinge import HingeLoss
from .report import ClassificationReport, Report
from .selection import SelectionRate
from .stat_scores import StatScores
from .topk import TopKAccuracy

__all__ = [
    "ConfusionMatrix", "Accuracy", "ErrorRate", "HammingLoss", "Precision", "Recall", "Specificity",
    "FallOut", "MissRate", "NPV", "FDR", "FOR", "Prevalence", "FBeta", "F1", "Jaccard",
    "BalancedAccuracy", "WeightedAccuracy", "MatthewsCorrCoef", "CohenKappa", "TopKAccuracy",
    "ClassificationReport", "Report", "SelectionRate", "TPR", "Sensitivity", "TNR", "FPR", "FNR", "PPV",
    "HingeLoss", "StatScores",
]
