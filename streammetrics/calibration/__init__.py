"""Calibration and probabilistic quality (issue #17): log loss, Brier, binned calibration error
and reliability curves on one O(C n_bins) decomposable state; KS, gains and lift on the
shared exact sorted score buffer."""

from .binned import CalibrationCurve, CalibrationCurveResult, CalibrationError
from .ks_gains import GainsCurve, GainsCurveResult, KSStatistic, LiftCurve
from .losses import BrierDecomposition, BrierScore, LogLoss

__all__ = [
    "BrierDecomposition",
    "BrierScore",
    "CalibrationCurve",
    "CalibrationCurveResult",
    "CalibrationError",
    "GainsCurve",
    "GainsCurveResult",
    "KSStatistic",
    "LiftCurve",
    "LogLoss",
]
