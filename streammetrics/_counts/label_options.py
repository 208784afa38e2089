"""The label arguments of the classification constructors: ``classes=``, ``pos_label=``, ``labels=``.

One function, :func:`label_options`, checks them together with ``num_classes`` and
``multilabel`` and returns a :class:`LabelOptions` that the constructor keeps: the resolved
``num_classes``, the :class:`~streammetrics._core.labels.LabelCodec` the metric maps labels with, the
``labels=`` selection and the configuration entries (only the arguments given, so that the
configuration of an accumulator without them is unchanged).

* ``classes``: the labels in class order; ``num_classes`` may then be omitted (two classes without
  ``multilabel`` are a binary task, ``[negative, positive]``; more are multiclass; with
  ``multilabel=True`` they name the L columns). Both given must agree.
* ``pos_label``: binary tasks only; with ``classes`` one of them.
* ``labels``: scikit-learn's meaning only -- the classes (of ``classes``, else indices) that
  per-class values, averages and matrices cover, in that order; multiclass and multilabel only,
  and only for the metrics scikit-learn gives it to.
* ``ignore_index`` with ``classes``: a label outside the classes and outside [0, C) (the state
  sees it unchanged and skips the row).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from streammetrics._core.labels import ClassMapping, LabelCodec
from streammetrics._core.params import nonempty_param

from .tasks import task_of


@dataclass
class LabelOptions:
    """Checked label arguments of one accumulator (see :func:`label_options`)."""

    num_classes: int | None
    task: str
    mapping: ClassMapping | None = None
    pos_label: Any = None
    labels: list[Any] | None = None
    selection: np.ndarray | None = None
    codec: LabelCodec | None = field(default=None, repr=False)

    def config(self) -> dict[str, Any]:
        """Configuration entries of the arguments given (JSON-able)."""
        out: dict[str, Any] = {}
        if self.mapping is not None:
            out["classes"] = self.mapping.config()
        if self.pos_label is not None:
            out["pos_label"] = self.pos_label
        if self.labels is not None:
            out["labels"] = list(self.labels)
        return out



def _is_int(v: Any) -> bool:
    return isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_))


def _plain(v: Any) -> Any:
    return v.item() if isinstance(v, np.generic) else v


def label_options(
    num_classes: Any,
    multilabel: bool = False,
    *,
    classes: Any = None,
    pos_label: Any = None,
    labels: Any = None,
    ignore_index: Any = None,
    hard_predictions: bool = False,
    takes_labels: bool = False,
    owner: str = "this metric",
) -> LabelOptions:
    """Check the label arguments of a classification constructor (see the module docstring);
    ``ValueError`` naming the argument otherwise. O(C + len(labels))."""
    mapping = None if classes is None else ClassMapping(classes, "classes")
    if mapping is not None:
        c = len(mapping)
        if num_classes is None:
            if c < 2 and not multilabel:
                raise ValueError("classes: a classification task needs at least 2 classes, "
                                 f"got {mapping.config()!r}")
            num_classes = c if (multilabel or c > 2) else None
        elif _is_int(num_classes) and num_classes != c:
            raise ValueError(f"classes: {c} labels for num_classes={num_classes!r}; "
                             "give one label per class")
    task = task_of(num_classes, multilabel)
    if pos_label is not None and task != "binary":
        raise ValueError(f"pos_label: only for binary metrics (num_classes=None), this one is {task}; "
                         "name the classes of a multiclass metric with classes=")
    if mapping is not None and ignore_index is not None and isinstance(ignore_index, (int, np.integer)):
        c = len(mapping)
        inside = 0 <= int(ignore_index) < (2 if task == "binary" else c)
        if inside or any(not isinstance(v, str) and v == ignore_index for v in mapping.classes):
            raise ValueError(f"ignore_index: with classes=, must be a label that is not a class and is "
                             f"outside [0, {2 if task == 'binary' else c}) (e.g. -100), got {ignore_index!r}")
    codec = None
    ii = int(ignore_index) if _is_int(ignore_index) else None
    if task != "multilabel" and (mapping is not None or pos_label is not None):
        codec = LabelCodec(task, mapping, pos_label, ii, hard_predictions)  # checks pos_label
    elif task == "multilabel" and not hard_predictions:
        # scores for every label: a sparse y_true batch is read dense, like its (n, L) scores
        codec = LabelCodec(task, None, None, ii, hard_predictions)
    out = LabelOptions(None if num_classes is None else int(num_classes), task, mapping,
                       None if codec is None else codec.pos_label, codec=codec)
    if labels is None:
        return out
    if not takes_labels:
        raise ValueError(f"labels: {owner} takes no labels= (scikit-learn's labels= selects the classes "
                         "that per-class values, averages and matrices cover)")
    if task == "binary":
        raise ValueError("labels: only for multiclass and multilabel metrics (a binary metric reads "
                         "the positive class: use pos_label= or classes=)")
    listed = labels.tolist() if isinstance(labels, np.ndarray) else labels
    chosen = [_plain(v) for v in nonempty_param(listed, "labels", "expected a non-empty sequence of labels")]
    if mapping is not None:
        idx = [mapping.index(v, "labels") for v in chosen]
    else:
        k = int(num_classes)  # type: ignore[arg-type]
        for v in chosen:
            if isinstance(v, bool) or not isinstance(v, int) or not 0 <= v < k:
                raise ValueError(f"labels: without classes=, labels are class indices in [0, {k}); "
                                 f"got {v!r}"[:300])
        idx = list(chosen)
    if len(set(idx)) != len(idx):
        first = next(v for i, v in enumerate(chosen) if idx.index(idx[i]) != i)
        raise ValueError(f"labels: must be distinct, {first!r} repeats"[:300])
    out.labels = chosen
    out.selection = np.array(idx, dtype=np.intp)
    return out
