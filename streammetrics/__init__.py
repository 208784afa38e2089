"""streammetrics: streaming evaluation metrics for classifiers and rankers.

Every metric is an accumulator: ``update`` folds in a batch (or one sample), ``compute`` reads the
current value, ``merge`` combines workers, ``save``/``load`` persist without pickle. The protocol:
"The accumulator contract" in docs/definitions/index.md; the definitions of every metric: the
other pages of docs/definitions/; a tour: README.md.
"""

from streammetrics._core.metric import Metric, UndefinedMetricWarning
from streammetrics._core.persistence import dumps, load, loads, save
from streammetrics.classification.confusion import (
    F1,
    FDR,
    FNR,
    FOR,
    FPR,
    NPV,
    PPV,
    TNR,
    TPR,
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
    Sensitivity,
    Specificity,
    WeightedAccuracy,
)
from streammetrics.classification.report import ClassificationReport, Report
from streammetrics.classification.selection import SelectionRate
from streammetrics.classification.topk import TopKAccuracy
from streammetrics.plot._output import MetricResults
from streammetrics.ranking.det import DETCurve, DETCurveResult
from streammetrics.ranking.label_ranking import CoverageError, LabelRankingAveragePrecision, LabelRankingLoss
from streammetrics.ranking.metrics import (
    AUROC,
    AveragePrecision,
    OperatingPoint,
    PRCurve,
    PRCurveResult,
    ROCCurve,
    ROCCurveResult,
)
from streammetrics.retrieval.metrics import (
    CG,
    DCG,
    MAP,
    MRR,
    NDCG,
    ElevenPointAP,
    InterpolatedPrecision,
    PrecisionAtK,
    PrecisionAtRecall,
    RecallAtK,
    RPrecision,
    SetPrecision,
    SetRecall,
    SystemEfficiency,
)
from streammetrics.wrappers.checkpoint import Checkpointer
from streammetrics.wrappers.decay import Decayed
from streammetrics.wrappers.delayed.core import DelayedLabels
from streammetrics.wrappers.delayed.unknown import LabelReport, UnknownIdError
from streammetrics.wrappers.metricset import MetricSet
from streammetrics.wrappers.sliced.core import OTHER, Sliced, UndefinedSlice
from streammetrics.wrappers.window import Window

from .calibration import (
    BrierDecomposition,
    BrierScore,
    CalibrationCurve,
    CalibrationCurveResult,
    CalibrationError,
    GainsCurve,
    GainsCurveResult,
    KSStatistic,
    LiftCurve,
    LogLoss,
)

__version__ = "0.1.0"

__all__ = [
    "Metric",
    "CoverageError",
    "LabelRankingAveragePrecision",
    "LabelRankingLoss",
    "Window",
    "Decayed",
    "DelayedLabels",
    "LabelReport",
    "UnknownIdError",
    "Checkpointer",
    "MetricSet",
    "MetricResults",
    "UndefinedMetricWarning",
    "save",
    "load",
    "dumps",
    "loads",
    "ConfusionMatrix",
    "Accuracy",
    "ErrorRate",
    "HammingLoss",
    "Precision",
    "Recall",
    "Specificity",
    "FallOut",
    "MissRate",
    "NPV",
    "FDR",
    "FOR",
    "Prevalence",
    "FBeta",
    "F1",
    "Jaccard",
    "BalancedAccuracy",
    "WeightedAccuracy",
    "MatthewsCorrCoef",
    "CohenKappa",
    "TopKAccuracy",
    "AUROC",
    "AveragePrecision",
    "ROCCurve",
    "PRCurve",
    "DETCurve",
    "ROCCurveResult",
    "DETCurveResult",
    "PRCurveResult",
    "OperatingPoint",
    "ClassificationReport",
    "Report",
    "TPR",
    "Sensitivity",
    "TNR",
    "FPR",
    "FNR",
    "PPV",
    "PrecisionAtK",
    "RecallAtK",
    "RPrecision",
    "PrecisionAtRecall",
    "MAP",
    "MRR",
    "CG",
    "DCG",
    "NDCG",
    "InterpolatedPrecision",
    "ElevenPointAP",
    "SystemEfficiency",
    "SetPrecision",
    "SetRecall",
    # calibration (issue #17)
    "LogLoss",
    "BrierScore",
    "BrierDecomposition",
    "CalibrationError",
    "CalibrationCurve",
    "CalibrationCurveResult",
    "KSStatistic",
    "GainsCurve",
    "LiftCurve",
    "GainsCurveResult",
    # sliced evaluation (issue #18)
    "Sliced",
    "UndefinedSlice",
    "OTHER",
    "SelectionRate",
]

# regression (issue #30): every name of streammetrics.regression.__all__ at the top level
from . import regression as regression  # noqa: E402
from . import trec as trec  # noqa: E402  -- sm.trec: trec_eval measures as accumulators
from .regression import *  # noqa: E402,F403
from .regression import __all__ as _regression_all  # noqa: E402

__all__ += _regression_all
