"""``streammetrics evaluate``: stream prediction files through a MetricSet and report the metrics.

``streammetrics evaluate [FILE ...] [--label COL] --score COL [--score COL ...] [--task TASK]
[--pos-label LABEL] [--classes LIST] [--metrics LIST] [--threshold T] [--from-logits]
[--max-bytes SIZE] [--weight COL] [--json PATH|-] [--plot DIR]``; regression:
``streammetrics evaluate [FILE ...] --target COL --prediction COL [--lower COL --upper COL]
[--alpha A] [--metrics LIST] [--weight COL] [--max-bytes SIZE] [--json PATH|-]`` (repeat
``--target``/``--prediction`` for several outputs; :mod:`streammetrics.cli.regression`).

Files are CSV (plain or gzip/bz2/zstd), Parquet or JSON Lines, read in record batches through
pyarrow: memory is the accumulators' state plus one batch. Several files, directories and globs
form one stream. With no FILE the bundled example (out-of-fold scores on the breast cancer data)
is evaluated. The positive class of text labels is never guessed: ``--pos-label``, a score column
named after a label (``p_cancer``) or ``--classes`` (see :mod:`streammetrics.cli.labels`). Exit
status: 0 success, 1 data error (NaN or non-numeric score, bad label, unreadable file), 2 usage
error (missing file or column, bad option), 130 interrupted; errors are one line on stderr.
Without ``--label``, probabilities give *estimated* metrics, marked as such
(:mod:`streammetrics.cli.estimate`).
pyarrow, rich and matplotlib (the ``cli`` extra) are imported only when the command runs.

Complexity: one pass over the input; per batch the cost of the metrics' ``update`` (O(n) for the
confusion family, O(n log n) amortised for exact ranking metrics); memory O(batch) plus the
state (O(n) scores for exact AUROC/AP, O(max_bytes) with ``--max-bytes``).
"""

from __future__ import annotations

import argparse
import inspect
import re
import sys
import warnings
from collections.abc import Callable, Sequence
from contextlib import ExitStack
from importlib import resources
from typing import Any

from . import calibration as cal
from . import columns, slices
from .commands import command, doc_paragraph, runner
from .errors import InputError, OneLineParser
from .estimate import run_estimated
from .labels import resolve as resolve_labels
from .options import add_arguments, parse_size
from .plan import Plan, is_list_type
from .plots import Histogram, add_batch, check_plot_dir
from .progress import row_progress
from .readers import expand_inputs
from .regression import METRICS as REGRESSION_METRICS
from .regression import is_regression, run_regression
from .regslices import run_regression_sliced
from .report import RANKING, emit, print_table, results

__all__ = ["add_parser", "run", "main", "parse_size", "max_bytes_supported", "METRICS", "Plan"]

_Histogram = Histogram  # the name of 0.1.0's tests

_EXAMPLE = "breast_cancer_scores.csv"
_REGRESSION_EXAMPLE = "diabetes_predictions.csv"
_TASKS = ("binary", "multiclass", "multilabel")

#: metric name -> (factory(num_classes, multilabel, threshold, average), tasks, has per-class values)
_MetricFactory = Callable[[int | None, bool, float, Any], Any]


def _confusion(cls_name: str, averaged: bool = True) -> _MetricFactory:
    def make(num_classes: int | None, multilabel: bool, threshold: float, average: Any) -> Any:
        import streammetrics as sm

        cls = getattr(sm, cls_name)
        kw: dict[str, Any] = {"threshold": threshold}
        if multilabel:
            kw["multilabel"] = True
        if averaged and num_classes is not None:
            kw["average"] = average
        if cls_name != "HammingLoss" and cls_name != "ConfusionMatrix":
            kw["zero_division"] = 0.0
        return cls(num_classes, **kw)

    return make


def _ranking(cls_name: str) -> _MetricFactory:
    def make(num_classes: int | None, multilabel: bool, threshold: float, average: Any, **kw: Any) -> Any:
        import streammetrics as sm

        cls = getattr(sm, cls_name)
        if multilabel:
            kw["multilabel"] = True
        if num_classes is not None:
            kw["average"] = average
        return cls(num_classes, **kw)

    return make


_ALL = _TASKS
_CM = ("binary", "multiclass")
METRICS: dict[str, tuple[_MetricFactory, tuple[str, ...], bool]] = {
    "accuracy": (_confusion("Accuracy", averaged=False), _ALL, False),
    "precision": (_confusion("Precision"), _ALL, True),
    "recall": (_confusion("Recall"), _ALL, True),
    "f1": (_confusion("F1"), _ALL, True),
    "specificity": (_confusion("Specificity"), _ALL, True),
    "npv": (_confusion("NPV"), _ALL, True),
    "fpr": (_confusion("FallOut"), _ALL, True),
    "fnr": (_confusion("MissRate"), _ALL, True),
    "jaccard": (_confusion("Jaccard"), _ALL, True),
    "prevalence": (_confusion("Prevalence"), _ALL, True),
    "balanced_accuracy": (_confusion("BalancedAccuracy", averaged=False), _CM, False),
    "mcc": (_confusion("MatthewsCorrCoef", averaged=False), _CM, False),
    "cohen_kappa": (_confusion("CohenKappa", averaged=False), _CM, False),
    "hamming_loss": (_confusion("HammingLoss", averaged=False), ("multilabel",), False),
    "auroc": (_ranking("AUROC"), _ALL, True),
    "average_precision": (_ranking("AveragePrecision"), _ALL, True),
    **cal.ENTRIES,  # log_loss, brier, ece (probabilities only), ks (binary)
}
DEFAULTS = {
    "binary": ["accuracy", "precision", "recall", "f1", "specificity", "npv", "balanced_accuracy", "mcc",
               "auroc", "average_precision"],
    "multiclass": ["accuracy", "balanced_accuracy", "precision", "recall", "f1", "mcc", "cohen_kappa",
                   "auroc", "average_precision"],
    "multilabel": ["accuracy", "hamming_loss", "precision", "recall", "f1", "auroc", "average_precision"],
}

def _arguments(p: argparse.ArgumentParser) -> None:
    """The arguments of ``evaluate``."""
    add_arguments(p, list(METRICS), (*_TASKS, "regression"), list(REGRESSION_METRICS))


add_parser = command("evaluate", arguments=_arguments, description=doc_paragraph(__doc__, 1),
                     help="evaluate prediction files (CSV, Parquet, JSON Lines) in one streaming pass")


# -- input plumbing ------------------------------------------------------------------------------
def _bundled_example(name: str = _EXAMPLE) -> tuple[ExitStack, str]:
    stack = ExitStack()
    path = stack.enter_context(resources.as_file(resources.files("streammetrics") / "data" / name))
    return stack, str(path)


def _first_batch_setup(plan: Plan, args: argparse.Namespace) -> None:
    """Inspect the first file's schema: list columns, string labels, the number of classes."""
    first = plan.first_batch()
    schema = first.schema
    score_type = schema.field(plan.scores[0]).type
    plan.list_scores = len(plan.scores) == 1 and is_list_type(score_type)
    if plan.list_scores and args.task is None:
        plan.task = "multiclass"
    label_type = schema.field(plan.labels[0]).type
    plan.list_labels = len(plan.labels) == 1 and is_list_type(label_type)
    if plan.list_labels:  # one 0/1 per label in each row's list
        if args.task is None and (plan.list_scores or len(plan.scores) > 1):
            plan.task = "multilabel"
        if plan.task != "multilabel":
            raise InputError(f"--label {plan.labels[0]}: a list column; list labels are for "
                             "--task multilabel (one 0/1 per label)", 2)
    if plan.task == "binary":
        if plan.list_scores or len(plan.scores) > 1:
            raise InputError("--task binary takes one score column", 2)
    else:
        plan.num_classes = plan.list_length(first) if plan.list_scores else len(plan.scores)
        if plan.task == "multiclass" and plan.num_classes < 2:
            raise InputError("multiclass needs scores for at least 2 classes "
                             "(several --score columns or one list column)", 2)
    if plan.task == "multilabel" and len(plan.labels) > 1 and len(plan.labels) != plan.num_classes:
        raise InputError(f"multilabel: {len(plan.labels)} label columns but {plan.num_classes} "
                         "score columns", 2)
    if plan.task == "multilabel" and plan.num_classes == 1:
        raise InputError("--task multilabel needs a label and a score per label (several columns or list "
                         "columns); one label is --task binary", 2)
    if plan.task != "multilabel" and len(plan.labels) > 1:
        raise InputError("several --label columns are for --task multilabel", 2)
    resolve_labels(plan, args, first)


# -- metrics -------------------------------------------------------------------------------------
def max_bytes_supported(plots: bool = True) -> bool:
    """Whether the installed ranking metrics take ``max_bytes=`` (bounded mode): checked by
    constructing them, so forwarded ``**kwargs`` count too.

    Parameters
    ----------
    plots : bool, default True
        Check the curves of ``--plot`` (ROC, PR) as well.

    Returns
    -------
    bool
        True when every one of them takes ``max_bytes``.
    """
    import streammetrics as sm

    classes = [sm.AUROC, sm.AveragePrecision] + ([sm.ROCCurve, sm.PRCurve] if plots else [])
    for cls in classes:
        params = inspect.signature(cls).parameters
        if "max_bytes" in params:
            continue
        if not any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values()):
            return False
        try:
            cls(max_bytes=1 << 20)
        except (TypeError, ValueError):
            return False
    return True


def _build(plan: Plan, names: list[str], args: argparse.Namespace, plots: bool, notes: list[str]) -> Any:
    """The MetricSet of ``names`` (and of the plots); a value the metrics refuse (``--max-bytes``
    too small for the number of classes, say) is a usage error naming the option."""
    try:
        return _members(plan, names, args, plots, notes)
    except ValueError as exc:
        msg = str(exc)
        for param, option in (("max_bytes", "--max-bytes"), ("threshold", "--threshold")):
            if msg.startswith(param):
                raise InputError(option + msg[len(param):], 2) from None
        raise InputError(f"cannot set up the metrics: {msg}", 2) from None


def _members(plan: Plan, names: list[str], args: argparse.Namespace, plots: bool, notes: list[str]) -> Any:
    import streammetrics as sm

    task, k = plan.task, plan.num_classes
    ml = task == "multilabel"
    rank_kw: dict[str, Any] = {} if args.max_bytes is None else {"max_bytes": args.max_bytes}
    members: dict[str, Any] = {}
    for name in names:
        if name in cal.PROBABILISTIC:  # their own set: see streammetrics.cli.calibration
            continue
        make, _, per_class = METRICS[name]
        extra = rank_kw if name in RANKING else {}
        members[name] = make(k, ml, args.threshold, "macro", **extra)
        if per_class and task != "binary":
            members[f"{name}_per_class"] = make(k, ml, args.threshold, None, **extra)
    if plots:
        kw: dict[str, Any] = {"multilabel": True} if ml else {}
        members["_roc"] = sm.ROCCurve(k, **kw, **rank_kw)
        members["_pr"] = sm.PRCurve(k, **kw, **rank_kw)
        if task != "multilabel":
            members["_cm"] = sm.ConfusionMatrix(k, threshold=args.threshold)
        if task == "binary":  # shares the sorted buffer (or the bins) of ROC / AUROC
            members["_gains"] = sm.GainsCurve(**rank_kw)
    main = sm.MetricSet(**{n if not n.startswith("_") else "plot" + n: m for n, m in members.items()}) \
        if members else None
    prob = None if ml else cal.build_probabilistic(k, names, args.from_logits, plots)
    explicit = [n for n in names if n in cal.PROBABILISTIC] if args.metrics else []
    return cal.Members(main, prob, explicit, args.from_logits, notes)


# -- the command ---------------------------------------------------------------------------------
def _run(args: argparse.Namespace) -> int:
    try:
        import pyarrow  # noqa: F401
    except ImportError:
        raise InputError("evaluate needs pyarrow: pip install 'streammetrics[cli]'", 2) from None
    regression = is_regression(args)  # chosen by the options, never by the values (issue #30)
    if regression:
        return _run_regression(args)
    if args.max_bytes is not None and not max_bytes_supported(plots=args.plot is not None):
        raise InputError("--max-bytes: bounded mode is not available yet in this version of "
                         "streammetrics (the ranking metrics do not take max_bytes); run without it", 2)
    unknown = [n for n in args.metrics or [] if n not in METRICS]
    if unknown:
        raise InputError(f"--metrics: unknown {', '.join(unknown)}; available: {', '.join(METRICS)}", 2)
    _check_outputs(args)
    with ExitStack() as stack:
        if args.files:
            if not args.score:
                raise InputError("--label and --score are required with input files (--score alone, "
                                 "probabilities without labels, gives estimated metrics)", 2)
            files = expand_inputs(args.files)
            shown = args.files if len(args.files) <= 3 else [*args.files[:2], f"... ({len(files)} files)"]
            title = f"streammetrics evaluate: {', '.join(shown)}"
            if not args.label:  # probabilities without labels: estimated metrics (cli.estimate)
                args.label = []
                return run_estimated(Plan(args, files), args, title, METRICS, DEFAULTS, _library_error)
        else:
            ex_stack, path = _bundled_example()
            stack.enter_context(ex_stack)
            files = [path]
            args.label = args.label or ["label"]
            args.score = args.score or ["score"]
            title = f"streammetrics evaluate: bundled example ({_EXAMPLE})"
        plan = Plan(args, files)
        _first_batch_setup(plan, args)
        if args.threshold is None:  # sigmoid(0) = 0.5: logits are cut at 0
            args.threshold = 0.0 if args.from_logits else 0.5
        notes: list[str] = []
        names = args.metrics or cal.default_names(DEFAULTS[plan.task], plan.task)
        wrong = [n for n in names if plan.task not in METRICS[n][1]]
        if wrong:
            raise InputError(f"--metrics: {', '.join(wrong)} not defined for the {plan.task} task", 2)
        if getattr(args, "by", None):  # per-slice evaluation: streammetrics.cli.slices
            sliceable = [n for n in names if n not in cal.PROBABILISTIC]
            return slices.run_sliced(plan, sliceable, args, title, METRICS)
        ms = _build(plan, names, args, plots=args.plot is not None, notes=notes)
        if args.plot:
            check_plot_dir(args.plot)  # before the pass over the data, not after
        hist = Histogram(2 if plan.task == "binary" else (plan.num_classes or 1)) if args.plot else None
        with warnings.catch_warnings(record=True) as seen:  # the library's, while reading
            warnings.simplefilter("always")
            rows = _stream(plan, ms, hist, args)
        res = results(plan, ms, [n for n in names if n in ms], rows, args)
        res["warnings"] = _first_of_each([str(w.message) for w in seen]) + res["warnings"]
        res["from_logits"] = bool(args.from_logits)
        res["notes"] = notes
        if "ks" in res["metrics"]:  # where the maximum is attained (select score >= t); null if undefined
            res["ks_threshold"] = cal.ks_threshold(ms["ks"])
        title += f" -- {rows} rows, {plan.task}" + (
            f", threshold {args.threshold}" if plan.task != "multiclass" else "")
        emit(res, args.json, lambda: print_table(res, title))
        if args.plot:
            from .plots import write_plots

            written = write_plots(args.plot, plan, ms, hist, res)
            if args.json != "-":
                print(f"plots: {', '.join(written)}")
    return 0


def _check_outputs(args: argparse.Namespace) -> None:
    """Usage errors, before any work, for ``--json`` / ``--plot`` paths that cannot be written."""
    for option, value in (("--json", args.json), ("--plot", args.plot)):
        if value is not None and not value.strip():
            raise InputError(f"{option}: an empty path", 2)
    if args.json not in (None, "-"):
        _check_json_path(args.json)


def _run_regression(args: argparse.Namespace) -> int:
    """``--target``/``--prediction`` (or ``--task regression``): the regression table of the files,
    or of the bundled regression example without a file (:mod:`streammetrics.cli.regression`)."""
    _check_outputs(args)
    with ExitStack() as stack:
        if args.files:
            files = expand_inputs(args.files)
            shown = args.files if len(args.files) <= 3 else [*args.files[:2], f"... ({len(files)} files)"]
            title = f"streammetrics evaluate: {', '.join(shown)}"
        else:
            ex_stack, path = _bundled_example(_REGRESSION_EXAMPLE)
            stack.enter_context(ex_stack)
            files = [path]
            args.target = args.target or ["target"]
            args.prediction = args.prediction or ["prediction"]
            title = f"streammetrics evaluate: bundled example ({_REGRESSION_EXAMPLE})"
        if getattr(args, "by", None):  # per-slice tables: streammetrics.cli.regslices
            return run_regression_sliced(args, files, title)
        return run_regression(args, files, title)


run = runner("evaluate", _run)


def _first_of_each(messages: list[str]) -> list[str]:
    """The first message of each kind (the text before its first " ("), in order: a warning
    every batch raises (its details differ by batch) is reported once. O(len(messages))."""
    kinds: dict[str, str] = {}
    for m in messages:
        kinds.setdefault(m.split(" (", 1)[0], m)
    return list(kinds.values())


def _check_json_path(path: str) -> None:
    """A usage error, before any work, for a --json path that cannot be a file."""
    import os

    parent = os.path.dirname(os.path.abspath(path))
    if os.path.isdir(path):
        raise InputError(f"--json: cannot write {path}: it is a directory", 2)
    if not os.path.isdir(parent):
        raise InputError(f"--json: cannot write {path}: no directory {parent}", 2)


def _stream(plan: Plan, ms: Any, hist: Histogram | None, args: argparse.Namespace) -> int:
    rows = 0
    with row_progress(plan.files, args.quiet) as advance:
        for src, batch, offset in plan.batches(args.batch_size):
            y = columns.labels(plan, batch, src.path, offset)
            s = columns.scores(plan, batch, src.path, offset)
            w = columns.weights(plan, batch, src.path, offset) if plan.weight else None
            try:
                ms.update(y, s, sample_weight=w, locate=lambda e, p=src.path, o=offset, n=batch.num_rows:
                          str(_library_error(e, p, o, n)))
            except ValueError as exc:
                raise _library_error(exc, src.path, offset, batch.num_rows) from None
            if hist is not None:
                add_batch(plan, hist, y, s, w)
            rows += batch.num_rows
            advance(rows, src.path)
    return rows


_AT_INDEX = re.compile(r"\s*at index (\d+|\((\d+), (\d+)\))")


def _library_error(exc: ValueError, path: str, offset: int, n: int) -> InputError:
    """A ValueError of the library's ``update`` as a data error: its batch index (``at index 5``
    or ``at index (5, 2)``) becomes the 1-based file row (and class column); without an index the
    batch's row range is named."""
    msg = str(exc)
    m = _AT_INDEX.search(msg)
    if m is None:
        return InputError(f"{path}: rows {offset + 1}-{offset + n}: {msg}", 1)
    row = int(m.group(2) if m.group(2) is not None else m.group(1))
    where = f"{path}: row {offset + row + 1}"
    if m.group(3) is not None:
        where += f" (class column {int(m.group(3))})"
    return InputError(f"{where}: {msg[: m.start()] + msg[m.end():]}", 1)


def main(argv: Sequence[str] | None = None) -> int:
    """``streammetrics evaluate ...`` as a function.

    Parameters
    ----------
    argv : sequence of str, optional
        The arguments after ``evaluate`` (default: ``sys.argv[1:]``).

    Returns
    -------
    int
        The exit status (as :func:`run`; 2 for a usage error, 0 for ``--help``).
    """
    parser = OneLineParser(prog="streammetrics")
    sub = parser.add_subparsers(dest="command")
    add_parser(sub)
    try:
        args = parser.parse_args(["evaluate", *(argv if argv is not None else sys.argv[1:])])
    except SystemExit as exc:  # usage errors, --help
        return exc.code if isinstance(exc.code, int) else 2
    return run(args)
