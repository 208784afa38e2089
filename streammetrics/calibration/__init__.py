"""Calibration and probabilistic quality (issue #17): log loss, Brier, binned calibration error
and reliability curves, all on one O(C n_bins) decomposable state."""

from .binned import CalibrationCurve, CalibrationCurveResult, CalibrationError
from .losses import BrierDecomposition, BrierScore, LogLoss

__all__ = [
    "BrierDecomposition",
    "BrierScore",
    "CalibrationCurve",
    "CalibrationCurveResult",
    "CalibrationError",
    "LogLoss",
]
