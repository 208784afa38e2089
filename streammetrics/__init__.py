"""streammetrics: streaming evaluation metrics for classifiers and rankers.

Every metric is an accumulator: ``update`` folds in a batch (or one sample), ``compute`` reads the
current value, ``merge`` combines workers, ``save``/``load`` persist without pickle. The protocol:
"The accumulator contract" in docs/definitions/index.md; the definitions of every metric: the
other pages of docs/definitions/; a tour: README.md.
"""

from streammetrics._core.metric import Metric, UndefinedMetricWarning
from streammetrics._core.persistence import dumps, load, loads, save

# the families: every name of their __all__ (star imports, each family lists its names once)
from streammetrics.classification import *  # noqa: F403
from streammetrics.classification import __all__ as _classification
from streammetrics.plot._output import MetricResults
from streammetrics.ranking import *  # noqa: F403
from streammetrics.ranking import __all__ as _ranking
from streammetrics.retrieval import *  # noqa: F403
from streammetrics.retrieval import __all__ as _retrieval
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
    *_classification,
    *_ranking,
    *_retrieval,
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
]

# regression (issue #30): every name of streammetrics.regression.__all__ at the top level
from . import regression as regression  # noqa: E402
from . import trec as trec  # noqa: E402  -- sm.trec: trec_eval measures as accumulators
from .regression import *  # noqa: E402,F403
from .regression import __all__ as _regression_all  # noqa: E402

__all__ += _regression_all

# monitoring (issue #31): Drift and Estimated (every name of streammetrics.monitoring.__all__)
from . import monitoring as monitoring  # noqa: E402
from .monitoring import *  # noqa: E402,F403
from .monitoring import __all__ as _monitoring_all  # noqa: E402

__all__ += _monitoring_all
