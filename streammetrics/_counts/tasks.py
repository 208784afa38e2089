"""The classification task of a metric and the per-class one-vs-rest counts every confusion view reads.

:func:`task_of` validates the task arguments shared by every classification metric
(``num_classes``, ``multilabel``); :class:`OneVsRest` holds per-class (tp, fp, fn, tn) arrays and
:func:`one_vs_rest_of` derives them from a count matrix (binary (2, 2), multiclass (C, C),
multilabel (L, 2, 2)) in O(C) memory beyond the matrix.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from streammetrics._core.params import Param, check_param

TASKS = ("binary", "multiclass", "multilabel")
#: ``task`` of a confusion state.
TASK = Param("choice", f"must be one of {TASKS}", choices=TASKS)
#: ``num_classes``: an int (>= 2 for classes, >= 1 for labels: :data:`NUM_CLASSES_RANGE`).
NUM_CLASSES = Param("int", "must be an int >= 2")
#: The range of ``num_classes`` by ``multilabel``.
NUM_CLASSES_RANGE = {False: Param("int", "must be >= 2", low=2), True: Param("int", "must be >= 1", low=1)}


def task_of(num_classes: int | None, multilabel: bool) -> str:
    """Validate the task arguments shared by every classification metric."""
    if multilabel:
        if num_classes is None:
            raise ValueError("num_classes: required with multilabel=True (the number of labels)")
        task = "multilabel"
    else:
        task = "binary" if num_classes is None else "multiclass"
    if num_classes is not None:
        check_param(num_classes, "num_classes", NUM_CLASSES)
        check_param(num_classes, "num_classes", NUM_CLASSES_RANGE[bool(multilabel)])
    return task


@dataclass(frozen=True)
class OneVsRest:
    """Per-class one-vs-rest counts (each an array of shape (K,)): class c vs not c."""

    tp: np.ndarray
    fp: np.ndarray
    fn: np.ndarray
    tn: np.ndarray

    @property
    def support(self) -> np.ndarray:  # actual positives P_c
        return self.tp + self.fn

    @property
    def predicted(self) -> np.ndarray:  # predicted positives PP_c
        return self.tp + self.fp

    @property
    def total(self) -> np.ndarray:
        return self.tp + self.fp + self.fn + self.tn


def one_vs_rest_of(task: str, m: np.ndarray) -> OneVsRest:
    """Per-class (tp, fp, fn, tn) of a count matrix of ``task``; binary: the positive class only."""
    if task == "multilabel":
        return OneVsRest(m[:, 1, 1], m[:, 0, 1], m[:, 1, 0], m[:, 0, 0])
    if task == "binary":
        return OneVsRest(m[1:, 1], m[:1, 1], m[1:, 0], m[:1, 0])
    tp = np.diag(m).copy()
    fp = m.sum(axis=0) - tp
    fn = m.sum(axis=1) - tp
    tn = m.sum() - tp - fp - fn
    return OneVsRest(tp, fp, fn, tn)
