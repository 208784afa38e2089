"""``streammetrics evaluate FILE --score COL`` without ``--label``: estimated metrics.

With probabilities and no labels, ``evaluate`` reports what the metrics are *expected* to be if
the probabilities are calibrated: every metric wrapped in
:class:`~streammetrics.monitoring.Estimated` (CBPE: each row counts as every class, weighted by
its probability; docs/definitions/monitoring.md). The table's title and the JSON document
(``"estimated": true``) say so; the intervals are the Poisson-binomial ones of
``Estimated.interval`` (accuracy, and binary / per-class precision and recall).

Binary: one ``--score`` column, P(class 1). Multiclass: one column per class (or one list
column), rows summing to 1 within 1e-6; class i is the i-th column. Refused (usage errors, exit
status 2): ``--task multilabel``, ``--from-logits`` (logits are not probabilities), ``--plot``,
``--by``, ``--pos-label`` / ``--classes``, and the metrics that need labels (log loss, Brier,
ECE, KS). A probability outside [0, 1] is a data error (exit status 1) naming the file and row.

Complexity: one pass over the input; per batch the wrapped metrics' update of C rows per input
row (O(n·C) memory while it runs); state as ``evaluate``'s, over C rows per input row.
"""

from __future__ import annotations

import argparse
import warnings
from collections.abc import Iterator
from typing import Any

from . import columns
from .errors import InputError
from .plan import Plan, is_list_type
from .report import emit, print_table, results

__all__ = ["run_estimated"]

#: The metrics an estimate has: confusion and ranking (not those that read the labels directly).
_LABELS_NEEDED = ("log_loss", "brier", "ece", "ks", "hamming_loss")
_INTERVALS = ("Accuracy", "Precision", "Recall")
NOTE = ("no --label: every value is ESTIMATED from the probabilities (CBPE: each row counts as every "
        "class, weighted by its probability), only as good as their calibration; intervals: the "
        "spread of the labels the probabilities imply")


class _Member:
    """One reported metric of the estimate, as ``report.results`` reads a member."""

    def __init__(self, estimate: Any, name: str) -> None:
        self._est, self._name = estimate, name
        self._m = estimate.metric[name]

    def compute(self) -> Any:
        return self._m.compute()

    @property
    def is_exact(self) -> bool:
        return bool(getattr(self._m, "is_exact", True))

    def bounds(self) -> Any:
        return self._m.bounds()


class _WithInterval(_Member):
    """A member ``Estimated.interval`` covers (accuracy, precision, recall): the others have no
    ``interval`` (a Wilson or DeLong interval of expected counts would be wrong)."""

    def interval(self, confidence: float = 0.95) -> tuple[Any, Any]:
        return self._est.interval(confidence, member=self._name)  # type: ignore[no-any-return]


class _Members:
    """The estimate's members by name (``report.results`` iterates, indexes and sizes them)."""

    def __init__(self, estimate: Any, names: list[str]) -> None:
        self._items = {n: (_WithInterval if type(estimate.metric[n]).__name__ in _INTERVALS else _Member)(
            estimate, n) for n in names}
        self._est = estimate

    @property
    def nbytes(self) -> int:
        return int(self._est.nbytes)

    def __iter__(self) -> Iterator[str]:
        return iter(self._items)

    def __contains__(self, name: object) -> bool:
        return name in self._items

    def __getitem__(self, name: str) -> _Member:
        return self._items[name]


def _refuse(args: argparse.Namespace) -> None:
    refused = (("--task multilabel", args.task == "multilabel"), ("--from-logits", args.from_logits),
               ("--plot", args.plot is not None), ("--by", bool(getattr(args, "by", None))),
               ("--pos-label", args.pos_label is not None), ("--classes", args.classes is not None))
    for option, given in refused:
        if given:
            raise InputError(f"{option}: not available for estimated metrics (no --label: the metrics "
                             "are estimated from calibrated probabilities; give --label to evaluate)", 2)


def _setup(plan: Plan) -> None:
    """The task and the number of classes from the first file's schema."""
    first = plan.first_batch()
    plan.list_scores = len(plan.scores) == 1 and is_list_type(first.schema.field(plan.scores[0]).type)
    if plan.list_scores or len(plan.scores) > 1:
        if plan.task == "binary":
            raise InputError("--task binary takes one score column", 2)
        plan.task = "multiclass"
        if plan.list_scores:
            plan.num_classes = plan.list_length(first)
            plan.classes = [str(i) for i in range(plan.num_classes)]
        else:
            plan.num_classes = len(plan.scores)
            plan.classes = list(plan.scores)
        if plan.num_classes < 2:
            raise InputError("multiclass needs probabilities for at least 2 classes", 2)
    elif plan.task == "multiclass":
        raise InputError("--task multiclass needs one probability column per class (or a list column)", 2)


def run_estimated(plan: Plan, args: argparse.Namespace, title: str, metrics: dict[str, Any],
                  defaults: dict[str, list[str]], library_error: Any) -> int:
    """Stream ``plan``'s probability columns through estimated metrics and report them.

    Parameters
    ----------
    plan : Plan
        The run's plan (score and weight columns, files), without label columns.
    args : argparse.Namespace
        The ``evaluate`` options.
    title : str
        The first line of the table.
    metrics, defaults : dict
        ``evaluate``'s metric table and default names per task.
    library_error : callable
        ``(ValueError, path, offset, rows) -> InputError``: a library error as a data error.

    Returns
    -------
    int
        0 (errors are raised as :class:`~streammetrics.cli.errors.InputError`).
    """
    import streammetrics as sm
    from streammetrics.monitoring import Estimated

    _refuse(args)
    _setup(plan)
    if args.threshold is None:
        args.threshold = 0.5
    names = args.metrics or [n for n in defaults[plan.task] if n not in _LABELS_NEEDED]
    wrong = [n for n in names if n in _LABELS_NEEDED or plan.task not in metrics[n][1]]
    if wrong:
        raise InputError(f"--metrics: {', '.join(wrong)} cannot be estimated without labels for the "
                         f"{plan.task} task", 2)
    k = plan.num_classes
    rank_kw: dict[str, Any] = {} if args.max_bytes is None else {"max_bytes": args.max_bytes}
    members: dict[str, Any] = {}
    try:
        for name in names:
            make, _, per_class = metrics[name]
            extra = rank_kw if name in ("auroc", "average_precision") else {}
            members[name] = make(k, False, args.threshold, "macro", **extra)
            if per_class and plan.task != "binary":
                members[f"{name}_per_class"] = make(k, False, args.threshold, None, **extra)
        est = Estimated(sm.MetricSet(**members))
    except ValueError as exc:
        raise InputError(f"cannot set up the metrics: {exc}", 2) from None
    rows = 0
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        for src, batch, offset in plan.batches(args.batch_size):
            s = columns.scores(plan, batch, src.path, offset)
            w = columns.weights(plan, batch, src.path, offset) if plan.weight else None
            try:
                est.update(s, sample_weight=w)
            except ValueError as exc:
                raise library_error(exc, src.path, offset, batch.num_rows) from None
            rows += batch.num_rows
    res = results(plan, _Members(est, list(members)), names, rows, args)
    res["warnings"] = list(dict.fromkeys(str(w.message) for w in seen)) + res["warnings"]
    res["estimated"] = True
    res["from_logits"] = False
    res["notes"] = [NOTE]
    cut = f", threshold {args.threshold}" if plan.task == "binary" else ""
    title += f" -- {rows} rows, {plan.task}{cut} -- ESTIMATED from probabilities (no labels)"
    emit(res, args.json, lambda: print_table(res, title))
    return 0
