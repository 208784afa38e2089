"""Regression metrics (issue #30): streaming errors over continuous targets of shape (n,) or
(n, k), with scikit-learn's ``multioutput`` readout (definitions: docs/definitions/regression.md).

Every class takes ``update(y_true, y_pred, *, sample_weight=None)``, validated by one step
(``regression_batch`` in ``streammetrics/regression/_base.py``). MSE, RMSE, MAE, R² and
explained variance are views of one moments state (one pass and one state in a ``MetricSet``).
Every name here is also exported at the top level (``streammetrics.MeanSquaredError``).
"""

from .errors import ExplainedVariance, MeanAbsoluteError, MeanSquaredError, R2Score, RootMeanSquaredError
from .losses import (
    D2TweedieScore,
    MaxError,
    MeanAbsolutePercentageError,
    MeanSquaredLogError,
    PinballLoss,
    RootMeanSquaredLogError,
    TweedieDeviance,
)

__all__ = [
    # errors (the moments state)
    "MeanSquaredError",
    "RootMeanSquaredError",
    "MeanAbsoluteError",
    "R2Score",
    "ExplainedVariance",
    # per-row losses
    "MeanAbsolutePercentageError",
    "MeanSquaredLogError",
    "RootMeanSquaredLogError",
    "PinballLoss",
    "TweedieDeviance",
    "D2TweedieScore",
    "MaxError",
]

# -- whole-set metrics (regwhole) --
from .correlation import ConcordanceCorrCoef, KendallTau, PearsonCorrCoef, SpearmanCorrCoef  # noqa: E402
from .intervals import IntervalCoverage, IntervalScore, IntervalWidth  # noqa: E402
from .quantiles import D2AbsoluteErrorScore, D2PinballScore, MedianAbsoluteError  # noqa: E402

__all__ += ["D2AbsoluteErrorScore", "D2PinballScore", "MedianAbsoluteError", "ConcordanceCorrCoef",
            "KendallTau", "PearsonCorrCoef", "SpearmanCorrCoef", "IntervalCoverage", "IntervalScore",
            "IntervalWidth"]
