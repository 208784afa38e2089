"""The classification family: the confusion metrics (thin views of one confusion-count state),
top-k accuracy, the classification report and the selection rate. Every name is also importable
from ``streammetrics``."""

from .confusion import (
    F1,
    FDR,
    FOR,
    NPV,
    Accuracy,
    BalancedAccuracy,
    CohenKappa,
    ConfusionMatrix,
    ErrorRate,
    FallOut,
    FBeta,
    HammingLoss,
    Jaccard,
    MatthewsCorrCoef,
    MissRate,
    Precision,
    Prevalence,
    Recall,
    Specificity,
    WeightedAccuracy,
)
from .report import ClassificationReport, Report
from .selection import SelectionRate
from .topk import TopKAccuracy

__all__ = [
    "ConfusionMatrix", "Accuracy", "ErrorRate", "HammingLoss", "Precision", "Recall", "Specificity",
    "FallOut", "MissRate", "NPV", "FDR", "FOR", "Prevalence", "FBeta", "F1", "Jaccard",
    "BalancedAccuracy", "WeightedAccuracy", "MatthewsCorrCoef", "CohenKappa", "TopKAccuracy",
    "ClassificationReport", "Report", "SelectionRate",
]
