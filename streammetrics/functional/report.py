"""``classification_report`` with scikit-learn's signature: per-class precision, recall, F1 and
support plus their averages, as a text table or a dict. Every number comes from the accumulators
behind :func:`~streammetrics.functional.precision_recall_fscore_support` (one update for the
per-class rows and the micro, macro and weighted averages)."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from streammetrics._core.docstrings import filled
from streammetrics._core.labels import encode

from ._targets import as_labels, check_targets
from .classification import precision_recall_fscore_support, prfs

__all__ = ["classification_report"]


@filled
def classification_report(
    y_true: Any,
    y_pred: Any,
    *,
    labels: Any = None,
    target_names: Any = None,
    sample_weight: Any = None,
    digits: int = 2,
    output_dict: bool = False,
    zero_division: Any = "warn",
) -> Any:
    """Precision, recall, F1 and support per class plus the averages, as
    ``sklearn.metrics.classification_report``: a text table, or a dict with ``output_dict=True``
    (the micro row is ``"accuracy"`` for single-label targets covering every label).

    Every number comes from :func:`precision_recall_fscore_support` (the accumulators above);
    :class:`streammetrics.ClassificationReport` is the streaming counterpart with more measures.

    Parameters
    ----------
    {sklearn: y_true_y_pred, labels}
    target_names : list of str, optional
        Row names (default: the labels).
    {sklearn: sample_weight}
    digits : int, default 2
        Digits of the text table.
    output_dict : bool, default False
        Return a dict instead of the text table.
    {sklearn: zero_division}

    Returns
    -------
    str or dict

    Raises
    ------
    {sklearn: raises}
    """
    t = check_targets(y_true, y_pred, sample_weight)
    labels_given = labels is not None
    lab = t.classes if labels is None else as_labels(labels, "labels").ravel()
    single = t.type in ("binary", "multiclass")
    micro_is_accuracy = single and (not labels_given or bool(np.all(encode(t.classes, lab) >= 0)))
    if target_names is not None and len(lab) != len(target_names):
        if labels_given:
            warnings.warn(
                f"labels size, {len(lab)}, does not match size of target_names, {len(target_names)}",
                UserWarning,
                stacklevel=2,
            )
        else:
            raise ValueError(
                f"Number of classes, {len(lab)}, does not match size of target_names, {len(target_names)}. "
                "Try specifying the labels parameter"
            )
    names = [f"{v}" for v in lab.tolist()] if target_names is None else list(target_names)
    headers = ["precision", "recall", "f1-score", "support"]
    # labels=None keeps the fast multiclass path (the sorted union is what scikit-learn uses)
    kw = {"labels": labels, "sample_weight": sample_weight, "zero_division": zero_division}
    warn_for = ("precision", "recall", "f-score")
    values = prfs(
        y_true,
        y_pred,
        beta=1.0,
        pos_label=1,
        averages=(None, "micro", "macro", "weighted"),
        warn_for=warn_for,
        **kw,
    )
    p, r, f1, s = values[None]
    rows = list(zip(names, p, r, f1, s, strict=False))  # scikit-learn truncates
    averages = ("micro", "macro", "weighted") + (() if single else ("samples",))
    report: dict[str, Any] = {}
    text = ""
    if output_dict:
        report = {row[0]: dict(zip(headers, [float(v) for v in row[1:]], strict=True)) for row in rows}
    else:
        width = max(max(len(n) for n in names), len("weighted avg"), digits)
        text = ("{:>{width}s} " + " {:>9}" * len(headers)).format("", *headers, width=width) + "\n\n"
        row_fmt = "{:>{width}s} " + " {:>9.{digits}f}" * 3 + " {:>9}\n"
        for row in rows:
            text += row_fmt.format(*row, width=width, digits=digits)
        text += "\n"
    for average in averages:
        heading = "accuracy" if average == "micro" and micro_is_accuracy else f"{average} avg"
        if average not in values:
            values[average] = precision_recall_fscore_support(y_true, y_pred, average=average, **kw)
        ap, ar, af, _ = values[average]
        avg = [ap, ar, af, np.sum(s)]
        if output_dict:
            report[heading] = dict(zip(headers, [float(v) for v in avg], strict=True))
        elif heading == "accuracy":
            fmt = "{:>{width}s} " + " {:>9.{digits}}" * 2 + " {:>9.{digits}f}" + " {:>9}\n"
            text += fmt.format(heading, "", "", *avg[2:], width=width, digits=digits)
        else:
            text += row_fmt.format(heading, *avg, width=width, digits=digits)
    if output_dict:
        if "accuracy" in report:
            report["accuracy"] = report["accuracy"]["precision"]
        return report
    return text
