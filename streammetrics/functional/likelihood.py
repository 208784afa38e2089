"""scikit-learn's ``class_likelihood_ratios`` on the confusion counts of
:func:`streammetrics.functional.confusion_matrix` (one ``ConfusionMatrix`` update).

LR+ = sensitivity / (1 - specificity) = (tp / (tp + fn)) / (fp / (fp + tn)) and
LR- = (1 - sensitivity) / specificity = (fn / (tp + fn)) / (tn / (fp + tn)), computed as
scikit-learn does (tp (tn + fp) / (fp (tp + fn)) and fn (tn + fp) / (tn (tp + fn))), with its
warnings and ``replace_undefined_by`` for the undefined cases.
"""

from __future__ import annotations

import math
import numbers
import warnings
from typing import Any

from streammetrics._core.metric import UndefinedMetricWarning
from streammetrics._core.warn import sklearn_compatible

from ._matrix import confusion_matrix
from ._targets import check_targets

__all__ = ["class_likelihood_ratios"]

_TAIL = ("Use the `replace_undefined_by` param to control this behavior. To suppress this warning "
         "or turn it into an error, see Python's `warnings` module and `warnings.catch_warnings()`.")


def _replacements(replace_undefined_by: Any) -> tuple[float, float]:
    """(LR+, LR-) to report where each is undefined: nan, nan by default; ``1.0`` means
    ``{"LR+": 1.0, "LR-": 1.0}``; a dict needs LR+ in [1, inf] or nan and LR- in [0, 1] or nan."""
    if isinstance(replace_undefined_by, float) and math.isnan(replace_undefined_by):
        return math.nan, math.nan
    if replace_undefined_by == 1.0:
        return 1.0, 1.0
    msg = ("The dictionary passed as `replace_undefined_by` needs to be in the form "
           "`{'LR+': `value_1`, 'LR-': `value_2`}` where the value for `LR+` ranges from `1.0` to "
           "`np.inf` or is `np.nan` and the value for `LR-` ranges from `0.0` to `1.0` or is "
           f"`np.nan`; got `{replace_undefined_by}`.")
    if not isinstance(replace_undefined_by, dict) or not {"LR+", "LR-"} <= set(replace_undefined_by):
        raise ValueError(msg)
    pos, neg = replace_undefined_by["LR+"], replace_undefined_by["LR-"]
    for value, low, high in ((pos, 1.0, math.inf), (neg, 0.0, 1.0)):
        if not isinstance(value, numbers.Real) or isinstance(value, bool):
            raise ValueError(msg)
        if not math.isnan(float(value)) and not low <= float(value) <= high:
            raise ValueError(msg)
    return float(pos), float(neg)


def class_likelihood_ratios(
    y_true: Any,
    y_pred: Any,
    *,
    labels: Any = None,
    sample_weight: Any = None,
    replace_undefined_by: Any = math.nan,
) -> tuple[float, float]:
    """Positive and negative likelihood ratios of a binary classification, as
    ``sklearn.metrics.class_likelihood_ratios``.

    LR+ = TPR / FPR and LR- = FNR / TNR of the confusion counts (module docstring). No positive
    sample in ``y_true`` makes both nan; FP = 0 makes LR+ undefined and TN = 0 LR-, each with
    scikit-learn's warning and replaced by ``replace_undefined_by``.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        True binary labels.
    y_pred : array-like of shape (n_samples,)
        Predicted binary labels.
    labels : array-like, optional
        The two classes, negative first (default: the sorted labels found).
    sample_weight : array-like of shape (n_samples,), optional
        Sample weights.
    replace_undefined_by : np.nan, 1.0 or dict, default np.nan
        What an undefined ratio becomes: nan; 1.0 for both; or ``{"LR+": a, "LR-": b}`` with a in
        [1, inf] or nan and b in [0, 1] or nan.

    Returns
    -------
    tuple of float
        (LR+, LR-). O(n).

    Examples
    --------
    >>> class_likelihood_ratios([0, 1, 0, 1, 0], [1, 1, 0, 0, 0])
    (1.5, 0.75)
    """
    targets = check_targets(y_true, y_pred, sample_weight)
    if targets.type != "binary":
        raise ValueError("class_likelihood_ratios only supports binary classification problems, got "
                         f"targets of type: {targets.type}")
    lr_pos_undefined, lr_neg_undefined = _replacements(replace_undefined_by)
    cm = confusion_matrix(y_true, y_pred, sample_weight=sample_weight, labels=labels)
    tn, fp, fn, tp = (float(x) for x in cm.ravel())
    support_pos, support_neg = tp + fn, tn + fp
    category = sklearn_compatible(UndefinedMetricWarning)
    lr_pos = lr_neg = math.nan
    if support_pos == 0:
        warnings.warn("No samples of the positive class are present in `y_true`. "
                      "`positive_likelihood_ratio` and `negative_likelihood_ratio` are both set to "
                      f"`np.nan`. {_TAIL}", category, stacklevel=2)
    if fp == 0:
        start = ("No samples were predicted for the positive class and `positive_likelihood_ratio` is "
                 if tp == 0 else "`positive_likelihood_ratio` is ill-defined and ")
        # scikit-learn's message ends here (the rest of its text is a separate string statement)
        warnings.warn(start + "set to `np.nan`. Use the `replace_undefined_by` param to ", category,
                      stacklevel=2)
        lr_pos = lr_pos_undefined
    else:
        lr_pos = (tp * support_neg) / (fp * support_pos) if support_pos else math.nan
    if tn == 0:
        warnings.warn(f"`negative_likelihood_ratio` is ill-defined and set to `np.nan`. {_TAIL}",
                      category, stacklevel=2)
        lr_neg = lr_neg_undefined
    else:
        lr_neg = (fn * support_neg) / (tn * support_pos) if support_pos else math.nan
    return float(lr_pos), float(lr_neg)
