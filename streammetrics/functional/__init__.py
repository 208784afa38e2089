"""``streammetrics.functional``: scikit-learn's metric functions on streammetrics' kernels.

A drop-in for ``sklearn.metrics`` (same names, signatures, defaults, return types and dtypes;
reference: scikit-learn 1.9)::

    from streammetrics.functional import roc_auc_score, f1_score   # was: from sklearn.metrics

Labels are taken as users have them (strings, non-contiguous integers, booleans, indicator
matrices, dense or sparse) and checked with scikit-learn's target-type rules (binary /
multiclass / multilabel-indicator; a mix, continuous or multioutput targets are a
``ValueError``). Each function maps the labels to codes 0..C-1, builds the matching accumulator
(:class:`~streammetrics.ConfusionMatrix`, :class:`~streammetrics.Precision`,
:class:`~streammetrics.AUROC`, :class:`~streammetrics.ROCCurve`, :class:`~streammetrics.NDCG`,
...), calls ``update`` once and returns ``compute()``: no metric is implemented twice, so the
one-shot value equals the streaming one. Undefined values warn with
:class:`streammetrics.UndefinedMetricWarning` where scikit-learn warns (catchable as
scikit-learn's own class once ``sklearn.exceptions`` is imported). Input that is not an
array-like or holds values of the wrong type raises ``InputTypeError`` (a ``ValueError`` that is
also a ``TypeError``, as scikit-learn's ``InvalidParameterError`` is).

Differences from scikit-learn (docs/functional.md, "Differences from scikit-learn"): negative,
non-numeric, complex, non-finite or 2-D ``sample_weight`` is a ``ValueError`` (the accumulators'
rule); masked arrays with a masked entry, complex values and dates are refused;
``ndcg_score``/``dcg_score`` with ``ignore_ties=True`` equal scikit-learn's
only for rows without tied scores (its tie order is that of an unstable sort).

torchmetrics' functional retrieval set (``retrieval_precision``, ..., ``retrieval_auroc``,
``retrieval_precision_recall_curve``) takes one query's ``(preds, target)`` with torchmetrics'
argument names (:mod:`streammetrics.functional.retrieval`; docs/functional.md, "torchmetrics'
retrieval functions").
"""

from ._matrix import (
    accuracy_score,
    balanced_accuracy_score,
    cohen_kappa_score,
    confusion_matrix,
    hamming_loss,
    matthews_corrcoef,
    multilabel_confusion_matrix,
    zero_one_loss,
)
from ._targets import type_of_target
from .calibration import brier_score_loss, calibration_curve, log_loss
from .classification import (
    f1_score,
    fbeta_score,
    jaccard_score,
    precision_recall_fscore_support,
    precision_score,
    recall_score,
)
from .curves import (
    auc,
    confusion_matrix_at_thresholds,
    det_curve,
    metric_at_thresholds,
    precision_recall_curve,
    roc_curve,
)
from .fairness import (
    demographic_parity_difference,
    demographic_parity_ratio,
    equalized_odds_difference,
    equalized_odds_ratio,
)
from .label_ranking import coverage_error, label_ranking_average_precision_score, label_ranking_loss
from .likelihood import class_likelihood_ratios
from .losses import d2_brier_score, d2_log_loss_score, hinge_loss
from .ranking import average_precision_score, dcg_score, ndcg_score, roc_auc_score, top_k_accuracy_score
from .regression import (
    d2_absolute_error_score,
    d2_pinball_score,
    d2_tweedie_score,
    explained_variance_score,
    max_error,
    mean_absolute_error,
    mean_absolute_percentage_error,
    mean_gamma_deviance,
    mean_pinball_loss,
    mean_poisson_deviance,
    mean_squared_error,
    mean_squared_log_error,
    mean_tweedie_deviance,
    median_absolute_error,
    r2_score,
    root_mean_squared_error,
    root_mean_squared_log_error,
)
from .report import classification_report
from .retrieval import (
    retrieval_auroc,
    retrieval_average_precision,
    retrieval_fall_out,
    retrieval_hit_rate,
    retrieval_normalized_dcg,
    retrieval_precision,
    retrieval_precision_recall_curve,
    retrieval_r_precision,
    retrieval_recall,
    retrieval_reciprocal_rank,
)

__all__ = [
    "accuracy_score",
    "auc",
    "average_precision_score",
    "balanced_accuracy_score",
    "brier_score_loss",
    "calibration_curve",
    "classification_report",
    "cohen_kappa_score",
    "class_likelihood_ratios",
    "confusion_matrix",
    "confusion_matrix_at_thresholds",
    "coverage_error",
    "d2_brier_score",
    "d2_log_loss_score",
    "dcg_score",
    "det_curve",
    "f1_score",
    "fbeta_score",
    "hamming_loss",
    "hinge_loss",
    "jaccard_score",
    "label_ranking_average_precision_score",
    "label_ranking_loss",
    "log_loss",
    "matthews_corrcoef",
    "metric_at_thresholds",
    "multilabel_confusion_matrix",
    "ndcg_score",
    "precision_recall_curve",
    "precision_recall_fscore_support",
    "precision_score",
    "recall_score",
    "roc_auc_score",
    "roc_curve",
    "top_k_accuracy_score",
    "type_of_target",
    "zero_one_loss",
    # fairness (issue #18)
    "demographic_parity_difference",
    "demographic_parity_ratio",
    "equalized_odds_difference",
    "equalized_odds_ratio",
    # regression (issue #30): errors
    "d2_tweedie_score",
    "explained_variance_score",
    "max_error",
    "mean_absolute_error",
    "mean_absolute_percentage_error",
    "mean_gamma_deviance",
    "mean_pinball_loss",
    "mean_poisson_deviance",
    "mean_squared_error",
    "mean_squared_log_error",
    "mean_tweedie_deviance",
    "r2_score",
    "root_mean_squared_error",
    "root_mean_squared_log_error",
    # regression (issue #30): whole-set metrics
    "d2_absolute_error_score",
    "d2_pinball_score",
    "median_absolute_error",
    # torchmetrics' functional retrieval set (issue #33): one query's (preds, target)
    "retrieval_auroc",
    "retrieval_average_precision",
    "retrieval_fall_out",
    "retrieval_hit_rate",
    "retrieval_normalized_dcg",
    "retrieval_precision",
    "retrieval_precision_recall_curve",
    "retrieval_r_precision",
    "retrieval_recall",
    "retrieval_reciprocal_rank",
]
