"""The table of odd inputs that ``tests/functional/test_functional_odd_inputs.py`` feeds to every function
of ``streammetrics.functional`` and to its reference (scikit-learn's namesake; Fairlearn's for
the fairness functions), and the rule that compares the two outcomes.

Each case replaces ONE argument of a valid call (``y_true``, the predictions or scores,
``sample_weight``, ``sensitive_features``) by an odd value -- None, a scalar, an empty or 0-d
array, a ragged nested list, a string, bytes, mixed str/int, datetime64, timedelta64, complex,
an object array holding None, a masked array, booleans, integers beyond int64, NaN and inf,
the wrong number of dimensions, the wrong length; for the weights also strings, complex,
negative, NaN and 2-D weights -- and keeps the others valid.

The rule (:func:`compare`):

* the reference raises an exception scikit-learn raises *on purpose* (raised from its own code,
  or a ``ValueError``): streammetrics raises an exception of the same type (for scikit-learn's
  ``InvalidParameterError``, which is both, a ``ValueError`` or a ``TypeError``);
* the reference raises *by accident* (anything else raised from inside numpy, scipy or Python:
  ``IndexError``, ``KeyError``, numpy's ``DTypePromotionError``, ``ZeroDivisionError`` ...):
  streammetrics raises a ``ValueError``, or the same type as the reference;
* the reference returns: streammetrics returns the same value (1e-12, NaN equal to NaN), or
  raises a ``ValueError`` where :data:`DOCUMENTED` lists a documented difference.
"""

from __future__ import annotations

import datetime
import os
import traceback
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

import streammetrics.functional as F

N = 4
_Y = np.array([0, 1, 1, 0])
_P = np.array([0, 1, 0, 0])
_S = np.array([0.1, 0.8, 0.4, 0.3])
_W = np.array([1.0, 2.0, 1.0, 1.0])
_Y3 = np.array([0, 1, 2, 1])
_S3 = np.array([[0.6, 0.3, 0.1], [0.2, 0.5, 0.3], [0.1, 0.2, 0.7], [0.3, 0.3, 0.4]])
_REL = np.array([[3, 1, 0, 2], [0, 2, 1, 1], [1, 0, 0, 3], [2, 2, 1, 0]])
_GROUPS = np.array(["a", "a", "b", "b"])
_ML = np.array([[1, 0, 1], [0, 1, 0], [1, 1, 0], [0, 0, 1]])


def _agreement(y_true: Any, y_pred: Any, sample_weight: Any = None) -> float:
    """The metric handed to ``metric_at_thresholds``: the (weighted) share of equal pairs."""
    return float(np.average(np.asarray(y_true) == y_pred, weights=sample_weight))


# name -> (valid positional arguments, extra keyword arguments, the names of the replaceable
# positional arguments, whether it takes sample_weight)
LABELS = ("y_true", "y_pred")
SCORES = ("y_true", "y_score")
BASE: dict[str, tuple[tuple[Any, ...], dict[str, Any], tuple[str, ...]]] = {
    "accuracy_score": ((_Y, _P), {}, LABELS),
    "balanced_accuracy_score": ((_Y, _P), {}, LABELS),
    "cohen_kappa_score": ((_Y, _P), {}, ("y1", "y2")),
    "confusion_matrix": ((_Y, _P), {}, LABELS),
    "hamming_loss": ((_Y, _P), {}, LABELS),
    "matthews_corrcoef": ((_Y, _P), {}, LABELS),
    "multilabel_confusion_matrix": ((_Y, _P), {}, LABELS),
    "zero_one_loss": ((_Y, _P), {}, LABELS),
    "f1_score": ((_Y, _P), {}, LABELS),
    "fbeta_score": ((_Y, _P), {"beta": 0.5}, LABELS),
    "jaccard_score": ((_Y, _P), {}, LABELS),
    "precision_score": ((_Y, _P), {}, LABELS),
    "recall_score": ((_Y, _P), {}, LABELS),
    "precision_recall_fscore_support": ((_Y, _P), {}, LABELS),
    "classification_report": ((_Y, _P), {}, LABELS),
    "average_precision_score": ((_Y, _S), {}, SCORES),
    "roc_auc_score": ((_Y, _S), {}, SCORES),
    "roc_curve": ((_Y, _S), {}, SCORES),
    "precision_recall_curve": ((_Y, _S), {}, SCORES),
    "det_curve": ((_Y, _S), {}, SCORES),
    "brier_score_loss": ((_Y, _S), {}, ("y_true", "y_proba")),
    "log_loss": ((_Y, _S), {}, ("y_true", "y_proba")),
    "calibration_curve": ((_Y, _S), {"n_bins": 2}, ("y_true", "y_prob")),
    "top_k_accuracy_score": ((_Y3, _S3), {}, SCORES),
    "dcg_score": ((_REL, _S3.repeat(2, axis=1)[:, :4]), {}, SCORES),
    "ndcg_score": ((_REL, _S3.repeat(2, axis=1)[:, :4]), {}, SCORES),
    "class_likelihood_ratios": ((_Y, _P), {}, LABELS),
    "confusion_matrix_at_thresholds": ((_Y, _S), {}, SCORES),
    "metric_at_thresholds": ((_Y, _S), {"metric_func": _agreement}, SCORES),
    "d2_log_loss_score": ((_Y, _S), {}, ("y_true", "y_proba")),
    "d2_brier_score": ((_Y, _S), {}, ("y_true", "y_proba")),
    "hinge_loss": ((_Y, _S), {}, ("y_true", "pred_decision")),
    "coverage_error": ((_ML, _S3), {}, SCORES),
    "label_ranking_average_precision_score": ((_ML, _S3), {}, SCORES),
    "label_ranking_loss": ((_ML, _S3), {}, SCORES),
    "auc": ((np.array([0.0, 0.5, 1.0, 1.0]), np.array([0.0, 0.5, 0.7, 1.0])), {}, ("x", "y")),
    "type_of_target": ((_Y,), {}, ("y",)),
    "demographic_parity_difference": ((_Y, _P), {"sensitive_features": _GROUPS}, LABELS),
    "demographic_parity_ratio": ((_Y, _P), {"sensitive_features": _GROUPS}, LABELS),
    "equalized_odds_difference": ((_Y, _P), {"sensitive_features": _GROUPS}, LABELS),
    "equalized_odds_ratio": ((_Y, _P), {"sensitive_features": _GROUPS}, LABELS),
}

# The regression functions (scikit-learn's regression module): continuous targets, once with
# one output and, for those taking several, once with two ("name[2d]": the same function, its
# targets (4, 2), with ``multioutput`` replaced too).
_YR = np.array([0.5, 1.0, 2.5, 7.0])
_PR = np.array([1.0, 1.0, 5.0, 3.5])
_YR2 = np.column_stack([_YR, [1.0, 2.0, 0.5, 3.0]])
_PR2 = np.column_stack([_PR, [1.5, 2.0, 1.0, 2.0]])
_REGRESSION_KWARGS: dict[str, dict[str, Any]] = {
    "mean_squared_error": {}, "root_mean_squared_error": {}, "mean_absolute_error": {},
    "r2_score": {}, "explained_variance_score": {}, "max_error": {},
    "mean_absolute_percentage_error": {}, "mean_squared_log_error": {},
    "root_mean_squared_log_error": {}, "mean_pinball_loss": {"alpha": 0.3},
    "mean_tweedie_deviance": {"power": 1.5}, "mean_poisson_deviance": {}, "mean_gamma_deviance": {},
    "d2_tweedie_score": {"power": 1}, "median_absolute_error": {}, "d2_pinball_score": {"alpha": 0.7},
    "d2_absolute_error_score": {},
}
#: the regression functions taking (n, k) targets and ``multioutput``
MULTIOUTPUT = set(_REGRESSION_KWARGS) - {"max_error", "mean_tweedie_deviance", "mean_poisson_deviance",
                                         "mean_gamma_deviance", "d2_tweedie_score"}
for _name, _kw in _REGRESSION_KWARGS.items():
    BASE[_name] = ((_YR, _PR), _kw, LABELS)
    if _name in MULTIOUTPUT:
        BASE[f"{_name}[2d]"] = ((_YR2, _PR2), _kw, LABELS)

FAIRNESS = {n for n in BASE if n.startswith(("demographic", "equalized"))}
NO_WEIGHT = {"auc", "calibration_curve", "type_of_target", "max_error"}


def function_name(name: str) -> str:
    """The function a table entry calls (``"r2_score[2d]"``: ``r2_score``)."""
    return name.split("[")[0]


def _multioutput_values() -> dict[str, Callable[[], Any]]:
    """Odd ``multioutput`` values for two outputs."""
    return {
        "mo-bogus": lambda: "bogus",
        "mo-variance-weighted": lambda: "variance_weighted",
        "mo-raw": lambda: "raw_values",
        "mo-None": lambda: None,
        "mo-list": lambda: [0.3, 0.7],
        "mo-tuple": lambda: (0.3, 0.7),
        "mo-array": lambda: np.array([1.0, 2.0]),
        "mo-three": lambda: [1, 2, 3],
        "mo-2d": lambda: [[0.3, 0.7]],
        "mo-negative": lambda: [-1, 2],
        "mo-zero": lambda: [0, 0],
        "mo-nan": lambda: [np.nan, 1.0],
        "mo-str": lambda: ["a", "b"],
        "mo-bool": lambda: [True, False],
        "mo-int": lambda: 3,
        "mo-empty": lambda: [],
    }


def _masked(a: np.ndarray) -> np.ma.MaskedArray:
    mask = np.zeros(a.shape, bool)
    mask.flat[1] = True
    return np.ma.array(a, mask=mask)


def _odd_values(valid: np.ndarray) -> dict[str, Callable[[], Any]]:
    """Odd replacements for an argument whose valid value is ``valid`` (built lazily)."""
    if valid.dtype.kind not in "biuf":  # string groups: their codes stand in for numbers
        valid = np.unique(valid, return_inverse=True)[1].reshape(valid.shape)
    n = valid.shape[0]
    flat = valid.ravel()
    return {
        "None": lambda: None,
        "int-scalar": lambda: 1,
        "float-scalar": lambda: 0.5,
        "str-scalar": lambda: "abcd",
        "bytes-scalar": lambda: b"abcd",
        "empty-list": lambda: [],
        "0-d": lambda: np.array(1),
        "ragged": lambda: [[1], [1, 0], [0], [1]][:n] + [[0]] * max(0, n - 4),
        "str": lambda: np.array(["a", "b", "b", "a"] * n)[:n].reshape(-1) if valid.ndim == 1 else valid.astype(str),
        "bytes": lambda: valid.astype(bytes),
        "mixed-str-int": lambda: np.array(["a", 1] * valid.size, dtype=object)[: valid.size].reshape(valid.shape),
        "datetime64": lambda: np.array(flat.astype("int64"), dtype="datetime64[D]").reshape(valid.shape),
        "timedelta64": lambda: np.array(flat.astype("int64"), dtype="timedelta64[s]").reshape(valid.shape),
        "py-datetime": lambda: [datetime.date(2020, 1, 1 + int(i)) for i in flat][:n] if valid.ndim == 1 else None,
        "complex-real": lambda: valid.astype(complex),
        "complex": lambda: valid.astype(complex) + 1j,
        "object-None": lambda: np.array([None] + list(flat[1:]), dtype=object).reshape(valid.shape),
        "object-numbers": lambda: valid.astype(object),
        "masked": lambda: _masked(valid),
        "bool": lambda: valid.astype(bool),
        "huge-int": lambda: np.array([2**70] + list(flat[1:].astype(int)), dtype=object).reshape(valid.shape),
        "int64-min": lambda: np.where(np.arange(valid.size) == 0, np.iinfo(np.int64).min, flat.astype(np.int64)).reshape(valid.shape),
        "uint64-max": lambda: np.where(np.arange(valid.size) == 0, np.iinfo(np.uint64).max, flat.astype(np.uint64)).reshape(valid.shape),
        "nan": lambda: np.where(np.arange(valid.size) == 0, np.nan, flat.astype(float)).reshape(valid.shape),
        "inf": lambda: np.where(np.arange(valid.size) == 0, np.inf, flat.astype(float)).reshape(valid.shape),
        "-inf": lambda: np.where(np.arange(valid.size) == 0, -np.inf, flat.astype(float)).reshape(valid.shape),
        "column": lambda: valid.reshape(n, -1) if valid.ndim == 1 else valid[..., None],
        "3-d": lambda: valid.reshape(n, 1, -1),
        "shorter": lambda: valid[:-1],
        "longer": lambda: np.concatenate([valid, valid[:1]]),
        "float16": lambda: valid.astype(np.float16),
        "list-of-lists-str": lambda: [[str(v)] for v in flat[:n]],
        "negative": lambda: -valid - 1,
        "generator": lambda: (v for v in valid.tolist()),
        "set": lambda: set(flat.tolist()),
        "dict": lambda: {i: v for i, v in enumerate(flat.tolist())},
    }


def _weight_values() -> dict[str, Callable[[], Any]]:
    return {
        "w-str": lambda: np.array(["1", "2", "1", "1"]),
        "w-str-list": lambda: ["1", "2", "1", "1"],
        "w-complex": lambda: _W.astype(complex),
        "w-complex-imag": lambda: _W.astype(complex) + 1j,
        "w-negative": lambda: -_W,
        "w-nan": lambda: np.where(np.arange(N) == 0, np.nan, _W),
        "w-inf": lambda: np.where(np.arange(N) == 0, np.inf, _W),
        "w-2d": lambda: _W.reshape(-1, 1),
        "w-2d-row": lambda: _W.reshape(1, -1),
        "w-shorter": lambda: _W[:-1],
        "w-scalar": lambda: 2.0,
        "w-0d": lambda: np.array(2.0),
        "w-empty": lambda: [],
        "w-masked": lambda: _masked(_W),
        "w-object-None": lambda: np.array([None, 2.0, 1.0, 1.0], dtype=object),
        "w-bool": lambda: np.array([True, True, False, True]),
        "w-datetime64": lambda: np.array([1, 2, 1, 1], dtype="datetime64[D]"),
        "w-timedelta64": lambda: np.array([1, 2, 1, 1], dtype="timedelta64[s]"),
        "w-huge-int": lambda: np.array([2**70, 1, 1, 1], dtype=object),
        "w-bytes": lambda: b"1211",
        "w-mixed": lambda: np.array([1, "2", 1, 1], dtype=object),
    }


def cases() -> list[tuple[str, str, str]]:
    """Every (function name, replaced argument, odd value name)."""
    out = []
    for name, (args, _kwargs, names) in BASE.items():
        for pos, arg in enumerate(names):
            for odd in _odd_values(np.asarray(args[pos])):
                out.append((name, arg, odd))
        if function_name(name) not in NO_WEIGHT:
            out.extend((name, "sample_weight", w) for w in _weight_values())
        if name.endswith("[2d]"):
            out.extend((name, "multioutput", m) for m in _multioutput_values())
        if name in FAIRNESS:
            out.extend((name, "sensitive_features", o) for o in _odd_values(_GROUPS))
    return out


def call_args(name: str, arg: str, odd: str) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """The arguments of case (name, arg, odd), freshly built (odd values may be consumed)."""
    args, kwargs, names = BASE[name]
    args, kwargs = list(args), dict(kwargs)
    if function_name(name) not in NO_WEIGHT:
        kwargs["sample_weight"] = None
    if arg == "sample_weight":
        kwargs["sample_weight"] = _weight_values()[odd]()
    elif arg == "multioutput":
        kwargs["multioutput"] = _multioutput_values()[odd]()
    elif arg == "sensitive_features":
        kwargs["sensitive_features"] = _odd_values(_GROUPS)[odd]()
    else:
        pos = names.index(arg)
        args[pos] = _odd_values(np.asarray(args[pos]))[odd]()
    return tuple(args), kwargs


def reference(name: str) -> Callable[..., Any]:
    """scikit-learn's (Fairlearn's for the fairness functions) function of that name."""
    if name in FAIRNESS:
        import fairlearn.metrics

        return getattr(fairlearn.metrics, name)  # type: ignore[no-any-return]
    if name == "type_of_target":
        import sklearn.utils.multiclass

        return sklearn.utils.multiclass.type_of_target
    if name == "calibration_curve":
        import sklearn.calibration

        return sklearn.calibration.calibration_curve
    import sklearn.metrics

    return getattr(sklearn.metrics, function_name(name))  # type: ignore[no-any-return]


# (name or "*", replaced argument or "*", odd value) -> why streammetrics refuses with a
# ValueError what the reference accepts (docs/functional.md, "Differences from scikit-learn").
DOCUMENTED: dict[tuple[str, str, str], str] = {
    ("*", "sample_weight", "w-negative"): "negative sample weights are refused",
    ("*", "*", "masked"): "masked arrays with a masked entry are refused (scikit-learn ignores the mask)",
    ("*", "sample_weight", "w-masked"): "masked arrays with a masked entry are refused",
    ("*", "*", "datetime64"): "dates and durations are refused as labels, scores and weights",
    ("*", "*", "timedelta64"): "dates and durations are refused as labels, scores and weights",
    ("*", "*", "py-datetime"): "dates and durations are refused as labels, scores and weights",
    ("*", "sample_weight", "w-datetime64"): "dates and durations are refused as weights",
    ("*", "sample_weight", "w-timedelta64"): "dates and durations are refused as weights",
    ("*", "sample_weight", "w-str"): "sample_weight must hold numbers (not strings or objects)",
    ("*", "sample_weight", "w-str-list"): "sample_weight must hold numbers (not strings or objects)",
    ("*", "sample_weight", "w-mixed"): "sample_weight must hold numbers (not strings or objects)",
    ("*", "sample_weight", "w-bytes"): "sample_weight must hold numbers (not strings or objects)",
    ("*", "sample_weight", "w-object-None"): "sample_weight must hold numbers (not strings or objects)",
    ("*", "sample_weight", "w-huge-int"): "sample_weight must hold numbers (not strings or objects)",
    ("*", "sample_weight", "w-complex"): "complex sample weights are refused",
    ("*", "sample_weight", "w-complex-imag"): "complex sample weights are refused",
    ("*", "sample_weight", "w-nan"): "sample weights must be finite",
    ("*", "sample_weight", "w-inf"): "sample weights must be finite",
    ("*", "sample_weight", "w-2d"): "sample_weight must be 1-D",
    ("*", "*", "complex-real"): "complex values are refused (Fairlearn accepts them)",
    ("*", "*", "complex"): "complex values are refused (Fairlearn accepts them)",
    ("*", "*", "3-d"): "arrays of more than 2 dimensions are refused (Fairlearn flattens them)",
    ("fairness", "y_pred", "*"): "y_pred must be 0/1 (or -1/1) labels: Fairlearn's selection rate "
                                 "counts values equal to 1 and silently reads anything else as 0",
    ("fairness", "sensitive_features", "*"): "sensitive features must be strings, integers, booleans or floats",
    ("*", "y_proba", "bytes"): "scores given as strings or bytes are refused",
    ("*", "y_proba", "list-of-lists-str"): "scores given as strings or bytes are refused",
    ("calibration_curve", "y_prob", "nan"): "NaN probabilities are refused",
    ("auc", "y", "bool"): "booleans are refused as curve coordinates (scikit-learn's trapezoid adds "
                          "them with logical or)",
    ("root_mean_squared_error", "multioutput", "mo-nan"): "output weights must be finite (scikit-learn's "
                                                          "root_mean_squared_error averages with NaN: nan)",
}

# Cases where streammetrics' outcome differs from the reference's because the reference is wrong
# (documented in docs/functional.md, "Differences from scikit-learn"): any outcome is accepted,
# and the test checks streammetrics' value against the stated correct one where there is one.
DIFFERENT: dict[tuple[str, str, str], str] = {
    ("*", "y_pred", "uint64-max"): "scikit-learn mixes uint64 labels beyond int64 with int64 ones "
                                   "through float64 and miscounts them",
    ("*", "y2", "uint64-max"): "as above",
    ("*", "y_true", "uint64-max"): "as above",
    ("dcg_score", "y_score", "uint64-max"): "scikit-learn negates integer scores: 2**64 - 1 wraps to 1",
    ("ndcg_score", "y_score", "uint64-max"): "scikit-learn negates integer scores: 2**64 - 1 wraps to 1",
    ("dcg_score", "y_score", "int64-min"): "scikit-learn negates integer scores: -(-2**63) wraps to -2**63",
    ("ndcg_score", "y_score", "int64-min"): "scikit-learn negates integer scores: -(-2**63) wraps to -2**63",
    ("dcg_score", "y_score", "bool"): "boolean scores are read as 0/1 (scikit-learn cannot negate them)",
    ("ndcg_score", "y_score", "bool"): "boolean scores are read as 0/1 (scikit-learn cannot negate them)",
    ("calibration_curve", "y_prob", "object-numbers"): "an object array of numbers is read as the numbers "
                                                       "(scikit-learn fails to cast it)",
    ("*", "y_score", "huge-int"): "Python ints beyond int64 are read as float64, as everywhere in "
                                  "streammetrics (scikit-learn raises OverflowError)",
    ("auc", "y", "huge-int"): "as above",
    ("log_loss", "y_proba", "float16"): "computed in float64 (scikit-learn computes in float16)",
    ("brier_score_loss", "y_proba", "float16"): "computed in float64 (scikit-learn computes in float16)",
    ("d2_log_loss_score", "y_proba", "float16"): "computed in float64 (scikit-learn computes in float16)",
    ("d2_brier_score", "y_proba", "float16"): "computed in float64 (scikit-learn computes in float16)",
    ("d2_log_loss_score", "y_true", "list-of-lists-str"): "a list of one-element lists is read as a column "
                                                          "(scikit-learn fails to hash the lists)",
    ("log_loss", "y_true", "list-of-lists-str"): "a list of one-element lists is read as a column "
                                                 "(scikit-learn fails to hash the lists)",
    ("label_ranking_average_precision_score", "y_score", "bool"): "boolean scores are read as 0/1 "
                                                                   "(scikit-learn cannot negate them)",
    ("label_ranking_average_precision_score", "y_score", "int64-min"): "scikit-learn negates integer "
                                                                        "scores: -(-2**63) wraps",
    ("label_ranking_average_precision_score", "y_score", "uint64-max"): "scikit-learn negates integer "
                                                                         "scores: 2**64 - 1 wraps to 1",
    ("label_ranking_average_precision_score", "y_true", "float16"): "scikit-learn's sparse conversion "
                                                                     "refuses float16 0/1 labels",
    ("label_ranking_loss", "y_true", "float16"): "scikit-learn's sparse conversion refuses float16 0/1 labels",
    ("confusion_matrix_at_thresholds", "y_score", "uint64-max"): "scores are read as float64, as "
                                                                 "everywhere in streammetrics (2**64 - 1 "
                                                                 "is not a float64; scikit-learn keeps uint64)",
    ("auc", "x", "uint64-max"): "scikit-learn's integer differences wrap around (x is not monotonic)",
    ("auc", "x", "int64-min"): "scikit-learn's integer differences overflow (x is increasing)",
}


# Mismatches left as they are (the test marks them xfail, strict): classification_report's text.
KNOWN: dict[tuple[str, str, str], str] = {
    ("classification_report", "y_true", "bool"): "scikit-learn names the classes of a bool/int union "
                                                 "False/True; streammetrics 0/1",
    ("classification_report", "y_true", "negative"): "scikit-learn prints the support as floats when "
                                                     "no label is shared",
    ("classification_report", "y_pred", "negative"): "as above",
    ("classification_report", "y_pred", "float16"): "scikit-learn prints float16 labels' support as floats",
}


def _lookup(table: dict[tuple[str, str, str], str], name: str, arg: str, odd: str) -> str | None:
    names = (name, function_name(name), "fairness" if name in FAIRNESS else name, "*")
    for n in names:
        for a in (arg, "*"):
            for o in (odd, "*"):
                if (n, a, o) in table:
                    return table[(n, a, o)]
    return None


def documented(name: str, arg: str, odd: str) -> str | None:
    """Why streammetrics refuses case (name, arg, odd), if that is a documented difference."""
    return _lookup(DOCUMENTED, name, arg, odd)


def different(name: str, arg: str, odd: str) -> str | None:
    """Why the reference's outcome of case (name, arg, odd) is wrong, if it is."""
    return _lookup(DIFFERENT, name, arg, odd)


def _on_purpose(exc: BaseException) -> bool:
    """Whether the reference raised ``exc`` on purpose: a ``raise`` statement of its own code
    (scikit-learn, Fairlearn), or a ValueError wherever it comes from. A TypeError that numpy or
    Python raise on a line of scikit-learn (``set(y)`` of unhashable values, a ufunc without a
    loop for the dtype) is an accident."""
    if isinstance(exc, ValueError):
        return True
    tb = traceback.extract_tb(exc.__traceback__)
    if not tb:
        return True
    last = tb[-1]
    own = any(f"{os.sep}{pkg}{os.sep}" in last.filename for pkg in ("sklearn", "fairlearn"))
    return own and (last.line or "").lstrip().startswith("raise")


def run(fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Any, BaseException | None]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return fn(*args, **kwargs), None
        except Exception as exc:  # noqa: BLE001 - the outcome compared is the exception itself
            return None, exc


def _same_value(ours: Any, ref: Any) -> bool:
    if isinstance(ref, (tuple, list)) and not isinstance(ref, np.ndarray):
        return (
            isinstance(ours, (tuple, list))
            and len(ours) == len(ref)
            and all(_same_value(a, b) for a, b in zip(ours, ref, strict=True))
        )
    if isinstance(ref, dict):
        return isinstance(ours, dict) and list(ours) == list(ref) and all(_same_value(ours[k], ref[k]) for k in ref)
    if isinstance(ref, str) or ref is None:
        return bool(ours == ref)
    try:
        a, b = np.asarray(ours), np.asarray(ref)
        if a.shape != b.shape:
            return False
        if a.dtype.kind in "fciub" and b.dtype.kind in "fciub":
            return bool(np.allclose(a, b, rtol=1e-12, atol=1e-12, equal_nan=True))
        return bool(np.array_equal(a, b))
    except Exception:  # noqa: BLE001
        return False


def compare(name: str, arg: str, odd: str) -> str | None:
    """None if streammetrics answers case (name, arg, odd) as the rule requires, else why not."""
    ref, ref_exc = run(reference(name), *call_args(name, arg, odd))
    ours, our_exc = run(getattr(F, function_name(name)), *call_args(name, arg, odd))
    if different(name, arg, odd) and (our_exc is None or isinstance(our_exc, ValueError)):
        return None
    if ref_exc is not None:
        want: tuple[type[BaseException], ...]
        from sklearn.utils._param_validation import InvalidParameterError

        if isinstance(ref_exc, InvalidParameterError):
            want = (ValueError, TypeError)
        elif _on_purpose(ref_exc):
            want = (type(ref_exc),)
        else:
            want = (ValueError, type(ref_exc))
        if our_exc is None:
            return f"reference raised {ref_exc!r}; streammetrics returned {ours!r}"
        if not isinstance(our_exc, want):
            return f"reference raised {ref_exc!r}; streammetrics raised {our_exc!r}"
        return None
    if our_exc is not None:
        if isinstance(our_exc, ValueError) and documented(name, arg, odd):
            return None
        return f"reference returned {ref!r}; streammetrics raised {our_exc!r}"
    if not _same_value(ours, ref):
        return f"reference returned {ref!r}; streammetrics returned {ours!r}"
    return None
