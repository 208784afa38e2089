"""``streammetrics evaluate``: stream prediction files through a MetricSet and report the metrics.

``streammetrics evaluate [FILE ...] --label COL --score COL [--score COL ...] [--task TASK]
[--metrics LIST] [--threshold T] [--max-bytes SIZE] [--weight COL] [--json PATH|-] [--plot DIR]``

Files are CSV (plain or gzip/bz2/zstd), Parquet or JSON Lines, read in record batches through
pyarrow: memory is the accumulators' state plus one batch. Several files, directories and globs
form one stream. With no FILE the bundled example (out-of-fold scores on the breast cancer data)
is evaluated. Exit status: 0 success, 1 data error (NaN or non-numeric score, bad label, unreadable
file), 2 usage error (missing file or column, bad option). pyarrow, rich and matplotlib (the
``cli`` extra) are imported only when the command runs.

Complexity: one pass over the input; per batch the cost of the metrics' ``update`` (O(n) for the
confusion family, O(n log n) amortised for exact ranking metrics); memory O(batch) plus the
state (O(n) scores for exact AUROC/AP, O(max_bytes) with ``--max-bytes``).
"""

from __future__ import annotations

import argparse
import contextlib
import inspect
import json
import math
import re
import sys
import time
import warnings
from collections.abc import Callable, Iterator, Sequence
from contextlib import ExitStack
from importlib import resources
from typing import Any

import numpy as np

from .readers import (
    InputError,
    Source,
    conversion_error,
    expand_inputs,
    format_of,
    json_rows,
    open_source,
    parse_error,
)

__all__ = ["add_parser", "run", "parse_size", "max_bytes_supported", "METRICS"]

EXAMPLE = "breast_cancer_scores.csv"
TASKS = ("binary", "multiclass", "multilabel")

#: metric name -> (factory(num_classes, multilabel, threshold, average), tasks, has per-class values)
MetricFactory = Callable[[int | None, bool, float, Any], Any]


def _confusion(cls_name: str, averaged: bool = True) -> MetricFactory:
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


def _ranking(cls_name: str) -> MetricFactory:
    def make(num_classes: int | None, multilabel: bool, threshold: float, average: Any, **kw: Any) -> Any:
        import streammetrics as sm

        cls = getattr(sm, cls_name)
        if multilabel:
            kw["multilabel"] = True
        if num_classes is not None:
            kw["average"] = average
        return cls(num_classes, **kw)

    return make


_ALL = TASKS
_CM = ("binary", "multiclass")
METRICS: dict[str, tuple[MetricFactory, tuple[str, ...], bool]] = {
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
}
RANKING = ("auroc", "average_precision")
DEFAULTS = {
    "binary": ["accuracy", "precision", "recall", "f1", "specificity", "npv", "balanced_accuracy", "mcc",
               "auroc", "average_precision"],
    "multiclass": ["accuracy", "balanced_accuracy", "precision", "recall", "f1", "mcc", "cohen_kappa",
                   "auroc", "average_precision"],
    "multilabel": ["accuracy", "hamming_loss", "precision", "recall", "f1", "auroc", "average_precision"],
}

#: the terminal's per-class table shows this many classes (all of them are in --json)
MAX_TABLE_CLASSES = 40

_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kmgt]?)(i?b?)\s*$", re.IGNORECASE)


def parse_size(text: str) -> int:
    """``"64MB"``, ``"1.5G"``, ``"500k"``, ``"1048576"`` -> bytes (powers of 1024)."""
    m = _SIZE.match(text)
    if not m:
        raise argparse.ArgumentTypeError(f"not a size: {text!r} (examples: 1048576, 512k, 64MB, 2G)")
    value = float(m.group(1)) * 1024 ** "_kmgt".index(m.group(2).lower() or "_")
    if value < 1:
        raise argparse.ArgumentTypeError(f"size must be positive, got {text!r}")
    return int(value)


def add_parser(sub: Any) -> argparse.ArgumentParser:
    """Register ``evaluate`` on an ``argparse`` subparsers object."""
    p = sub.add_parser(
        "evaluate",
        help="evaluate prediction files (CSV, Parquet, JSON Lines) in one streaming pass",
        description=__doc__.split("\n\n")[1].replace("``", "") if __doc__ else None,
    )
    p.add_argument("files", nargs="*", metavar="FILE",
                   help="input files, directories or glob patterns (default: the bundled example)")
    p.add_argument("--label", action="append", metavar="COL",
                   help="label column (repeat for multilabel label columns, or name one list column of 0/1)")
    p.add_argument("--score", action="append", metavar="COL",
                   help="score column; repeat for one column per class, or name one list column")
    p.add_argument("--task", choices=TASKS,
                   help="default: binary for one score column, multilabel for a list label column, "
                        "else multiclass")
    p.add_argument("--metrics", metavar="LIST",
                   help="comma-separated metric names (default: the confusion family and AUROC, AP); "
                        f"available: {', '.join(METRICS)}")
    p.add_argument("--threshold", type=float, default=0.5, help="decision threshold (default 0.5)")
    p.add_argument("--max-bytes", type=parse_size, metavar="SIZE",
                   help="bound the memory of AUROC/AP (binned beyond SIZE; results carry bounds)")
    p.add_argument("--weight", metavar="COL", help="sample weight column")
    p.add_argument("--classes", metavar="LIST",
                   help="comma-separated class names, in class order, for string labels")
    p.add_argument("--json", metavar="PATH", help="write the results as JSON to PATH ('-' for stdout)")
    p.add_argument("--plot", metavar="DIR", help="write ROC, PR, confusion-matrix and histogram PNGs to DIR")
    p.add_argument("--batch-size", type=int, default=65536, help="rows per update (default 65536)")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.add_argument("--no-intervals", action="store_true",
                   help="skip the 95%% intervals (DeLong's for AUROC: a linear pass over the sorted "
                        "scores per class, ~0.7 s at 10M rows)")
    return p


# -- input plumbing ------------------------------------------------------------------------------
class _Plan:
    """What to read and how to turn a record batch into (labels, scores, weights)."""

    def __init__(self, args: argparse.Namespace, files: list[str]) -> None:
        self.files = files
        self.labels: list[str] = args.label
        self.scores: list[str] = args.score
        self.weight: str | None = args.weight
        self.task: str = args.task or ("binary" if len(self.scores) == 1 else "multiclass")
        self.num_classes: int | None = None  # set from the first batch for list columns
        self.classes: list[str] | None = None  # display names of the classes / labels
        self.mapping: dict[Any, int] | None = None  # string label -> class index
        self.list_scores = False
        self.list_labels = False
        self.classes_from_columns = False  # text labels mapped by the score column names

    @property
    def columns(self) -> list[str]:
        cols = [*self.labels, *self.scores]
        if self.weight:
            cols.append(self.weight)
        return list(dict.fromkeys(cols))


def _bundled_example() -> tuple[ExitStack, str]:
    stack = ExitStack()
    path = stack.enter_context(resources.as_file(resources.files("streammetrics") / "data" / EXAMPLE))
    return stack, str(path)


def _numpy(arr: Any) -> np.ndarray:
    """A null-free numeric arrow array (or floats, nulls becoming NaN) as numpy, without pyarrow's
    ``to_numpy`` (which imports pandas, ~0.4 s): a view of the values buffer where possible."""
    import pyarrow as pa

    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    t = arr.type
    if pa.types.is_boolean(t):
        arr, t = arr.cast(pa.uint8()), pa.uint8()
    if arr.null_count and pa.types.is_floating(t):
        arr = arr.fill_null(float("nan"))
    if pa.types.is_floating(t):
        kind = "f"
    elif pa.types.is_signed_integer(t):
        kind = "i"
    elif pa.types.is_unsigned_integer(t):
        kind = "u"
    else:
        raise TypeError(f"not a numeric arrow type: {t}")
    dtype = np.dtype(f"{kind}{t.bit_width // 8}")
    return np.frombuffer(arr.buffers()[1], dtype=dtype, count=len(arr), offset=arr.offset * dtype.itemsize)


def _where(path: str, column: str, offset: int, i: int, per_row: int) -> str:
    """``path: row R: column 'c'`` for element ``i`` of a batch starting at file row ``offset``
    (``per_row`` values per row for list columns: the position in the list is named too)."""
    row = f"{path}: row {offset + i // per_row + 1}: column {column!r}"
    return row + (f" (position {i % per_row + 1} of {per_row})" if per_row > 1 else "")


def _to_float(arr: Any, path: str, column: str, offset: int, per_row: int = 1,
              what: str = "score") -> np.ndarray:
    """A numeric arrow array as float64 numpy; None/NaN -> data error naming the file and row
    (``per_row`` values per file row for the flattened values of a list column)."""
    import pyarrow as pa

    if not (pa.types.is_floating(arr.type) or pa.types.is_integer(arr.type) or pa.types.is_boolean(arr.type)):
        for i, v in enumerate(arr.to_pylist()):
            try:
                float(v)
            except (TypeError, ValueError):
                raise InputError(f"{_where(path, column, offset, i, per_row)}: "
                                 f"{what} {v!r} is not a number", 1) from None
        raise InputError(f"{path}: column {column!r} is not numeric (type {arr.type})", 1)
    out = _numpy(arr)
    if out.dtype.kind != "f" or out.dtype.itemsize < 4:  # float32 stays float32: half the state
        out = out.astype(np.float64)
    if out.size and np.isnan(out.min()):
        i = int(np.argmax(np.isnan(out)))
        kind = "missing (empty, NA or NaN)" if arr.null_count and not arr[i].is_valid else "NaN"
        raise InputError(f"{_where(path, column, offset, i, per_row)}: value is {kind}", 1)
    return out


def _list_matrix(arr: Any, path: str, column: str, offset: int, width: int | None,
                 what: str = "score") -> np.ndarray:
    """A list column (one list per row) as an (n, width) float64 matrix; a missing list, a list of
    another length, a missing or non-numeric element -> data error naming the file row."""
    import pyarrow as pa
    import pyarrow.compute as pc

    lengths = _numpy(pc.list_value_length(arr).fill_null(-1))
    if len(lengths) == 0:
        return np.zeros((0, width or 0))
    w = width if width is not None else int(lengths[0])
    bad = np.flatnonzero(lengths != w)
    if bad.size:
        i = int(bad[0])
        if lengths[i] < 0:
            raise InputError(f"{path}: row {offset + i + 1}: column {column!r}: value is missing", 1)
        raise InputError(f"{path}: row {offset + i + 1}: column {column!r} holds {lengths[i]} values, "
                         f"expected {w} (one per class)", 1)
    values = arr.flatten() if not isinstance(arr, pa.ChunkedArray) else pa.concat_arrays(
        [c.flatten() for c in arr.chunks])
    flat = _to_float(values, path, column, offset, per_row=max(w, 1), what=what)
    return flat.reshape(len(lengths), w)


def _labels(plan: _Plan, batch: Any, path: str, offset: int) -> np.ndarray:
    import pyarrow as pa

    if plan.list_labels:
        col = plan.labels[0]
        y = _list_matrix(batch.column(col), path, col, offset, plan.num_classes, what="label")
        bad = (y != 0) & (y != 1)
        if bad.any():
            i = int(np.argmax(bad.ravel()))
            v = y.ravel()[i]
            shown = int(v) if np.isfinite(v) and v == np.round(v) else float(v)
            raise InputError(f"{_where(path, col, offset, i, y.shape[1])}: label {shown!r} is outside "
                             "the multilabel task (labels must be 0 or 1)", 1)
        return y.astype(np.int8)
    if len(plan.labels) > 1:
        return np.column_stack([_labels_1d(plan, batch.column(c), path, c, offset, multilabel=True)
                                for c in plan.labels])
    arr = batch.column(plan.labels[0])
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    return _labels_1d(plan, arr, path, plan.labels[0], offset, multilabel=plan.task == "multilabel")


def _labels_1d(plan: _Plan, arr: Any, path: str, column: str, offset: int, multilabel: bool) -> np.ndarray:
    import pyarrow as pa

    if arr.null_count:
        i = int(np.argmax(_numpy(arr.is_valid()) == 0))
        raise InputError(f"{path}: row {offset + i + 1}: column {column!r}: label is missing", 1)
    if pa.types.is_string(arr.type) or pa.types.is_large_string(arr.type) or pa.types.is_dictionary(arr.type):
        if plan.mapping is None:
            raise InputError(f"{path}: column {column!r}: labels are text; give --classes", 2)
        import pyarrow.compute as pc

        text = arr.cast(pa.string()) if pa.types.is_dictionary(arr.type) else arr
        idx = pc.index_in(text, value_set=pa.array(list(plan.mapping), type=text.type))
        if idx.null_count:  # a label that is not one of the classes
            i = int(np.argmax(_numpy(idx.is_valid()) == 0))
            hint = ""
            if plan.classes_from_columns:
                hint = ("; the classes are named after the --score columns: give --classes with the label "
                        "of each --score column, in order")
            raise InputError(f"{path}: row {offset + i + 1}: column {column!r}: label {text[i].as_py()!r} "
                             f"is not one of the classes {list(plan.mapping)}{hint}", 1)
        return _numpy(idx).astype(np.int64)
    if pa.types.is_boolean(arr.type):
        return _numpy(arr).astype(np.int64)
    if not (pa.types.is_integer(arr.type) or pa.types.is_floating(arr.type)):
        raise InputError(f"{path}: column {column!r}: labels must be integers or strings, "
                         f"got type {arr.type}", 1)
    y = _numpy(arr)
    if y.dtype.kind == "f":
        bad = ~np.isfinite(y) | (y != np.round(y))
        if bad.any():
            i = int(np.argmax(bad))
            raise InputError(f"{path}: row {offset + i + 1}: column {column!r}: label {y[i].item()!r} "
                             "is not an integer", 1)
        y = y.astype(np.int64)
    top = 2 if (plan.task == "binary" or multilabel) else plan.num_classes
    assert top is not None
    bad = (y < 0) | (y >= top)
    if bad.any():
        i = int(np.argmax(bad))
        rule = "0 or 1" if top == 2 and plan.task != "multiclass" else f"in [0, {top})"
        raise InputError(f"{path}: row {offset + i + 1}: column {column!r}: label {y[i].item()!r} is outside "
                         f"the {plan.task} task (labels must be {rule})", 1)
    return y


def _scores(plan: _Plan, batch: Any, path: str, offset: int) -> np.ndarray:
    if plan.list_scores:
        return _list_matrix(batch.column(plan.scores[0]), path, plan.scores[0], offset, plan.num_classes)
    cols = [_to_float(batch.column(c), path, c, offset) for c in plan.scores]
    return cols[0] if len(cols) == 1 else np.column_stack(cols)


def _read(plan: _Plan, batch_size: int) -> Iterator[tuple[Source, Any, int]]:
    """(source, batch, row offset within the file) over every file, in order."""
    import pyarrow as pa

    float_cols = ([] if plan.list_scores else list(plan.scores)) + ([plan.weight] if plan.weight else [])
    list_cols = [plan.scores[0]] if plan.list_scores else []
    list_cols += [plan.labels[0]] if plan.list_labels else []
    for path in plan.files:
        src = open_source(path, plan.columns, batch_size, float_cols, list_cols)
        offset = 0
        try:
            for batch in src.batches:
                yield src, batch, offset
                offset += batch.num_rows
        except pa.ArrowInvalid as exc:
            msg = str(exc)
            if format_of(path) == "csv" and "conversion error" in msg:
                raise conversion_error(path, float_cols, msg) from None
            if format_of(path) == "csv" and "Expected" in msg:
                raise parse_error(path, msg) from None
            # JSON Lines: pyarrow counts rows within the failing block, which follows the rows
            # already yielded (blocks are consumed whole, in order)
            raise InputError(f"{path}: cannot read: {json_rows(msg, offset)}", 1) from None


def _first_batch_setup(plan: _Plan, args: argparse.Namespace) -> None:
    """Inspect the first file's schema: list columns, string labels, the number of classes."""
    import pyarrow as pa

    first = None
    for path in plan.files:  # the first file with a row (a partition may be empty)
        src = open_source(path, plan.columns, 1024)
        first = next((b for b in src.batches if b.num_rows), None)
        if first is not None:
            break
    if first is None:
        raise InputError(f"{plan.files[0] if len(plan.files) == 1 else 'the inputs'}: no rows", 1)
    schema = first.schema
    score_type = schema.field(plan.scores[0]).type
    plan.list_scores = len(plan.scores) == 1 and (
        pa.types.is_list(score_type) or pa.types.is_large_list(score_type)
        or pa.types.is_fixed_size_list(score_type))
    if plan.list_scores and args.task is None:
        plan.task = "multiclass"
    label_type = schema.field(plan.labels[0]).type
    plan.list_labels = len(plan.labels) == 1 and (
        pa.types.is_list(label_type) or pa.types.is_large_list(label_type)
        or pa.types.is_fixed_size_list(label_type))
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
        if plan.list_scores:
            import pyarrow.compute as pc

            n = pc.list_value_length(first.column(plan.scores[0]))
            plan.num_classes = int(n[0].as_py())
        else:
            plan.num_classes = len(plan.scores)
        if plan.task == "multiclass" and plan.num_classes < 2:
            raise InputError("multiclass needs scores for at least 2 classes "
                             "(several --score columns or one list column)", 2)
    if plan.task == "multilabel" and len(plan.labels) > 1 and len(plan.labels) != plan.num_classes:
        raise InputError(f"multilabel: {len(plan.labels)} label columns but {plan.num_classes} "
                         "score columns", 2)
    if plan.task != "multilabel" and len(plan.labels) > 1:
        raise InputError("several --label columns are for --task multilabel", 2)
    is_text = pa.types.is_string(label_type) or pa.types.is_large_string(label_type) or \
        pa.types.is_dictionary(label_type)
    if args.classes:
        names = [c.strip() for c in args.classes.split(",")]
        want = 2 if plan.task == "binary" else plan.num_classes
        if len(names) != want or len(set(names)) != len(names):
            raise InputError(f"--classes: expected {want} distinct names, got {len(names)}", 2)
        plan.classes = names
        if is_text:
            plan.mapping = {n: i for i, n in enumerate(names)}
    elif is_text:
        if plan.task == "multiclass" and not plan.list_scores and len(plan.scores) > 1:
            names = _class_names_from_columns(plan.scores, first.column(plan.labels[0]))
            plan.classes_from_columns = True
        else:
            names = sorted(_distinct_labels(plan))
            want = 2 if plan.task == "binary" else plan.num_classes
            if len(names) > (want or 0):
                raise InputError(f"{plan.labels[0]!r}: {len(names)} distinct labels {names[:10]} for a "
                                 f"{plan.task} task with {want} classes; give --classes", 1)
            if plan.task == "binary" and len(names) < 2:
                raise InputError(f"{plan.labels[0]!r}: only the label {names} is present; give --classes "
                                 "NEGATIVE,POSITIVE", 2)
        plan.classes = names
        plan.mapping = {n: i for i, n in enumerate(names)}
    elif plan.task == "multiclass" and not plan.list_scores:
        plan.classes = list(plan.scores)
    elif plan.task == "multilabel":
        plan.classes = (list(plan.labels) if len(plan.labels) > 1
                        else [str(i) for i in range(plan.num_classes or 0)])
    else:
        plan.classes = ["0", "1"] if plan.task == "binary" else [str(i) for i in range(plan.num_classes or 0)]


def _strip_affixes(names: Sequence[str]) -> list[str] | None:
    """Column names without their common prefix and suffix (``p_cat, p_dog`` -> ``cat, dog``;
    ``cat_prob, dog_prob`` -> ``cat, dog``), cut at a separator; None if nothing is common or the
    results are empty or not distinct."""
    import os.path

    def cut(common: str) -> int:  # keep the common part only up to its last separator
        ends = [i + 1 for i, ch in enumerate(common) if not ch.isalnum()]
        return ends[-1] if ends else 0

    pre = cut(os.path.commonprefix(list(names)))
    suf = cut(os.path.commonprefix([n[::-1] for n in names]))
    out = [n[pre: len(n) - suf] for n in names]
    if (pre == 0 and suf == 0) or not all(out) or len(set(out)) != len(out):
        return None
    return out


def _class_names_from_columns(scores: Sequence[str], first_labels: Any) -> list[str]:
    """Class names for text labels with one score column per class: the column names, or the
    names without their common prefix / suffix (``p_cat`` -> ``cat``) when more of the labels of
    the first batch are those."""
    import pyarrow as pa
    import pyarrow.compute as pc

    col = first_labels.cast(pa.string()) if pa.types.is_dictionary(first_labels.type) else first_labels
    seen = {v for v in pc.unique(col).to_pylist() if v is not None}
    stripped = _strip_affixes(scores)
    if stripped is not None and len(seen & set(stripped)) > len(seen & set(scores)):
        return stripped
    return list(scores)


def _distinct_labels(plan: _Plan) -> set[str]:
    """A pass over the label column only, collecting the (few) distinct text labels."""
    import pyarrow as pa
    import pyarrow.compute as pc

    seen: set[str] = set()
    for path in plan.files:
        src = open_source(path, [plan.labels[0]], 1 << 16)
        for batch in src.batches:
            col = batch.column(0)
            if pa.types.is_dictionary(col.type):
                col = col.cast(pa.string())
            seen.update(v for v in pc.unique(col).to_pylist() if v is not None)
            if len(seen) > 1000:
                return seen
    return seen


# -- metrics -------------------------------------------------------------------------------------
def max_bytes_supported(plots: bool = True) -> bool:
    """Whether the installed ranking metrics take ``max_bytes=`` (bounded mode): checked by
    constructing them, so forwarded ``**kwargs`` count too."""
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


def _build(plan: _Plan, names: list[str], args: argparse.Namespace, plots: bool) -> Any:
    import streammetrics as sm

    task, k = plan.task, plan.num_classes
    ml = task == "multilabel"
    rank_kw: dict[str, Any] = {} if args.max_bytes is None else {"max_bytes": args.max_bytes}
    members: dict[str, Any] = {}
    for name in names:
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
    return sm.MetricSet(**{n if not n.startswith("_") else "plot" + n: m for n, m in members.items()})


class _Histogram:
    """Streaming per-class score histogram with a fixed number of bins whose range grows by
    doubling (pairs of bins merge), so memory is O(bins) whatever the data."""

    def __init__(self, n_series: int, bins: int = 64) -> None:
        self.bins = bins
        self.counts = np.zeros((n_series, bins))
        self.lo: float | None = None
        self.width = 0.0

    def add(self, series: int, values: np.ndarray, weights: np.ndarray | None) -> None:
        values = values[np.isfinite(values)] if weights is None else values
        if values.size == 0:
            return
        vmin, vmax = float(values.min()), float(values.max())
        if self.lo is None:
            if vmin >= 0.0 and vmax <= 1.0:
                self.lo, self.width = 0.0, 1.0 / self.bins
            else:
                self.lo, self.width = vmin, max(vmax - vmin, 1e-12) / self.bins * (1 + 1e-9)
        while vmin < self.lo or vmax > self.lo + self.width * self.bins:
            merged = self.counts.reshape(self.counts.shape[0], self.bins // 2, 2).sum(axis=2)
            self.counts[:] = 0.0
            if vmin < self.lo:  # grow downwards: the old range becomes the upper half
                self.counts[:, self.bins // 2:] = merged
                self.lo -= self.width * self.bins
            else:
                self.counts[:, : self.bins // 2] = merged
            self.width *= 2.0
        idx = np.minimum(((values - self.lo) / self.width).astype(np.int64), self.bins - 1)
        self.counts[series] += np.bincount(idx, weights=weights, minlength=self.bins)

    @property
    def edges(self) -> np.ndarray:
        lo = 0.0 if self.lo is None else self.lo
        return lo + self.width * np.arange(self.bins + 1)


# -- output --------------------------------------------------------------------------------------
def _clean(v: Any) -> Any:
    if isinstance(v, np.ndarray):
        return [_clean(x) for x in v.tolist()]
    if isinstance(v, (list, tuple)):
        return [_clean(x) for x in v]
    if isinstance(v, (float, np.floating)):
        f = float(v)
        return None if math.isnan(f) else f
    if isinstance(v, np.integer):
        return int(v)
    return v


def _results(plan: _Plan, ms: Any, names: list[str], rows: int, args: argparse.Namespace,
             confidence: float = 0.95) -> dict[str, Any]:
    caught: list[str] = []
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        values = {n: ms[n].compute() for n in ms if not n.startswith("plot_")}
        metrics: dict[str, Any] = {}
        per_class: dict[str, Any] = {}
        intervals: dict[str, Any] = {}
        bounds: dict[str, Any] = {}
        pc_intervals: dict[str, Any] = {}
        pc_bounds: dict[str, Any] = {}
        classes = plan.classes or []
        exact = True
        for name in names:
            metrics[name] = _clean(values[name])
            if f"{name}_per_class" in values:
                per_class[name] = dict(zip(classes, _clean(values[f"{name}_per_class"]), strict=False))
                pcm = ms[f"{name}_per_class"]
                if name in RANKING and not getattr(pcm, "is_exact", True) and hasattr(pcm, "bounds"):
                    pc_bounds[name] = _per_class_pairs(classes, *pcm.bounds())
                if not args.no_intervals and hasattr(pcm, "interval"):
                    # Wilson for proportions, DeLong for AUROC (exact state only)
                    with contextlib.suppress(ValueError, TypeError, NotImplementedError):
                        pc_intervals[name] = _per_class_pairs(classes, *pcm.interval(confidence))
            m = ms[name]
            if name in RANKING:
                is_exact = bool(getattr(m, "is_exact", True))
                exact = exact and is_exact
                if not is_exact and hasattr(m, "bounds"):
                    lo, hi = m.bounds()
                    bounds[name] = [_clean(lo), _clean(hi)]
            if not args.no_intervals and hasattr(m, "interval") and (
                plan.task == "binary" or name == "accuracy"
            ):
                try:
                    lo, hi = m.interval(confidence)
                    intervals[name] = [_clean(lo), _clean(hi)]
                except (ValueError, TypeError, NotImplementedError):
                    pass
        caught = list(dict.fromkeys(str(x.message) for x in w))
    return {
        "metrics": metrics,
        "per_class": per_class,
        "intervals": intervals,
        "per_class_intervals": pc_intervals,
        "confidence": confidence,
        "bounds": bounds,
        "per_class_bounds": pc_bounds,
        "rows": rows,
        "exact": exact,
        "task": plan.task,
        "threshold": args.threshold if plan.task != "multiclass" else None,
        "classes": classes,
        "label_mapping": plan.mapping,
        "weighted": plan.weight is not None,
        "max_bytes": args.max_bytes,
        "state_bytes": int(ms.nbytes),
        "files": plan.files,
        "warnings": caught,
    }


def _per_class_pairs(classes: list[str], lo: Any, hi: Any) -> dict[str, list[Any]]:
    """{class: [low, high]} from two per-class arrays (nan -> null)."""
    return {c: [_clean(a), _clean(b)] for c, a, b in zip(classes, np.asarray(lo).tolist(),
                                                          np.asarray(hi).tolist(), strict=False)}


def _print_table(res: dict[str, Any], title: str) -> None:
    def fmt(v: Any) -> str:
        return "undefined" if v is None else f"{v:.4f}"

    headers = ["metric", "value", f"{res['confidence']:.0%} interval"]
    if res["bounds"]:
        headers.append("certified bounds")
    rows = []
    for name, v in res["metrics"].items():
        iv = res["intervals"].get(name)
        row = [name, fmt(v), f"[{fmt(iv[0])}, {fmt(iv[1])}]" if iv else ""]
        if res["bounds"]:
            b = res["bounds"].get(name)
            row.append(f"[{fmt(b[0])}, {fmt(b[1])}]" if b else "")
        rows.append(row)
    per_class = res["per_class"]
    try:
        from rich.console import Console
        from rich.table import Table
    except ImportError:  # rich missing: plain text
        print(title)
        for row in [headers, *rows]:
            print("  ".join(f"{c:<20}" for c in row))
        return
    console = Console()
    console.print(title, highlight=False, soft_wrap=True)
    table = Table()
    for i, h in enumerate(headers):
        table.add_column(h, justify="left" if i == 0 else "right")
    for row in rows:
        table.add_row(*row)
    console.print(table)
    if per_class:
        table, note = _per_class_table(res, fmt)
        console.print(table)
        if note:
            console.print(note, soft_wrap=True, highlight=False, markup=False)
    if res["label_mapping"]:
        console.print("labels: " + ", ".join(f"{k!r} -> {v}" for k, v in res["label_mapping"].items()))
    for msg in res["warnings"]:
        console.print(f"[yellow]warning:[/yellow] {msg}")


def _per_class_table(res: dict[str, Any], fmt: Callable[[Any], str]) -> tuple[Any, str]:
    """The per-class rich table -- one row per class (the first ``MAX_TABLE_CLASSES``), one column
    per metric; below a value its interval (``low–high``) or, for a binned value, its certified
    bounds (``[low–high]``) -- and the note explaining it."""
    from rich.table import Table

    def short(v: Any) -> str:
        return "?" if v is None else f"{v:.3f}"

    per_class, ivs, bds = res["per_class"], res["per_class_intervals"], res["per_class_bounds"]
    notes = []
    if ivs:
        notes.append(f"below a value: its {res['confidence']:.0%} interval (Wilson; DeLong for AUROC)")
    if bds:
        notes.append("[low–high]: certified bounds of a binned value")
    pc = Table(title="per class", title_justify="left")
    pc.add_column("class", no_wrap=True)
    for name in per_class:
        pc.add_column(name, justify="right")
    shown = res["classes"][:MAX_TABLE_CLASSES]
    for c in shown:
        cells = []
        for n in per_class:
            cell = fmt(per_class[n].get(c))
            if n in ivs and ivs[n].get(c) and ivs[n][c][0] is not None:
                lo, hi = ivs[n][c]
                cell += f"\n[dim]{short(lo)}–{short(hi)}[/dim]"
            elif n in bds and bds[n].get(c):
                lo, hi = bds[n][c]
                cell += f"\n[dim]\\[{short(lo)}–{short(hi)}][/dim]"
            cells.append(cell)
        pc.add_row(str(c), *cells)
    if len(res["classes"]) > len(shown):
        pc.add_row(f"… {len(res['classes']) - len(shown)} more", *([""] * len(per_class)))
        notes.append("every class is in --json")
    return pc, "; ".join(notes)


# -- the command ---------------------------------------------------------------------------------
def run(args: argparse.Namespace) -> int:
    """Run ``streammetrics evaluate``; returns the exit status (errors are printed, not raised)."""
    try:
        return _run(args)
    except InputError as exc:
        print(f"streammetrics evaluate: error: {exc}", file=sys.stderr)
        return exc.code
    except KeyboardInterrupt:
        print("streammetrics evaluate: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # e.g. ``| head``: the reader went away
        sys.stderr.close()
        return 0


def _run(args: argparse.Namespace) -> int:
    try:
        import pyarrow  # noqa: F401
    except ImportError:
        raise InputError("evaluate needs pyarrow: pip install 'streammetrics[cli]'", 2) from None
    if args.batch_size < 1:
        raise InputError("--batch-size must be >= 1", 2)
    if args.max_bytes is not None and not max_bytes_supported(plots=args.plot is not None):
        raise InputError("--max-bytes: bounded mode is not available yet in this version of "
                         "streammetrics (the ranking metrics do not take max_bytes); run without it", 2)
    with ExitStack() as stack:
        if args.files:
            if not args.label or not args.score:
                raise InputError("--label and --score are required with input files", 2)
            files = expand_inputs(args.files)
            shown = args.files if len(args.files) <= 3 else [*args.files[:2], f"... ({len(files)} files)"]
            title = f"streammetrics evaluate: {', '.join(shown)}"
        else:
            ex_stack, path = _bundled_example()
            stack.enter_context(ex_stack)
            files = [path]
            args.label = args.label or ["label"]
            args.score = args.score or ["score"]
            title = f"streammetrics evaluate: bundled example ({EXAMPLE})"
        plan = _Plan(args, files)
        _first_batch_setup(plan, args)
        if args.metrics:
            names = [n.strip() for n in args.metrics.split(",") if n.strip()]
            unknown = [n for n in names if n not in METRICS]
            if unknown:
                raise InputError(f"--metrics: unknown {', '.join(unknown)}; "
                                 f"available: {', '.join(METRICS)}", 2)
            wrong = [n for n in names if plan.task not in METRICS[n][1]]
            if wrong:
                raise InputError(f"--metrics: {', '.join(wrong)} not defined for the {plan.task} task", 2)
        else:
            names = DEFAULTS[plan.task]
        ms = _build(plan, names, args, plots=args.plot is not None)
        hist = _Histogram(2 if plan.task == "binary" else (plan.num_classes or 1)) if args.plot else None
        rows = _stream(plan, ms, hist, args)
        res = _results(plan, ms, names, rows, args)
        title += f" -- {rows} rows, {plan.task}" + (
            f", threshold {args.threshold}" if plan.task != "multiclass" else "")
        if args.json == "-":
            json.dump(res, sys.stdout, indent=2)
            sys.stdout.write("\n")
        else:
            _print_table(res, title)
            if args.json:
                try:
                    with open(args.json, "w", encoding="utf-8") as fh:
                        json.dump(res, fh, indent=2)
                        fh.write("\n")
                except OSError as exc:
                    raise InputError(f"--json: cannot write {args.json}: {exc.strerror}", 2) from None
        if args.plot:
            from .plots import write_plots

            written = write_plots(args.plot, plan, ms, hist, res)
            if args.json != "-":
                print(f"plots: {', '.join(written)}")
    return 0


def _known_rows(files: list[str]) -> int | None:
    """Total rows when every file is Parquet (read from the footers), else None."""
    if not all(format_of(f) == "parquet" for f in files):
        return None
    import pyarrow.parquet as pq

    try:
        return sum(pq.ParquetFile(f).metadata.num_rows for f in files)
    except Exception:  # noqa: BLE001 - only for the progress bar; reading reports real errors
        return None


def _stream(plan: _Plan, ms: Any, hist: _Histogram | None, args: argparse.Namespace) -> int:
    rows = 0
    show = not args.quiet and sys.stdout.isatty() and sys.stderr.isatty()
    progress: Any = None
    if show:
        try:
            from rich.console import Console
            from rich.progress import BarColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn
        except ImportError:
            show = False
        else:
            total = _known_rows(plan.files)  # Parquet footers give the row count; else unknown
            progress = Progress(SpinnerColumn(), TextColumn("{task.description}"), BarColumn(),
                                TextColumn("{task.completed:,.0f} rows"),
                                TextColumn("{task.fields[rate]}"), TimeElapsedColumn(),
                                console=Console(stderr=True), transient=True)
            progress.start()
            task_id = progress.add_task("evaluating", total=total, rate="")
    start = time.perf_counter()
    try:
        for src, batch, offset in _read(plan, args.batch_size):
            y = _labels(plan, batch, src.path, offset)
            s = _scores(plan, batch, src.path, offset)
            w = _weights(plan, batch, src.path, offset) if plan.weight else None
            try:
                ms.update(y, s, sample_weight=w)
            except ValueError as exc:
                raise _library_error(exc, src.path, offset, batch.num_rows) from None
            if hist is not None:
                _histogram(plan, hist, y, s, w)
            rows += batch.num_rows
            if progress is not None:
                rate = rows / max(time.perf_counter() - start, 1e-9)
                progress.update(task_id, completed=rows, rate=f"{rate:,.0f} rows/s",
                                description=src.path.rsplit("/", 1)[-1])
    finally:
        if progress is not None:
            progress.stop()
    return rows


def _weights(plan: _Plan, batch: Any, path: str, offset: int) -> np.ndarray:
    """The weight column as float64; NaN, missing, infinite or negative -> data error (file, row)."""
    assert plan.weight is not None
    w = _to_float(batch.column(plan.weight), path, plan.weight, offset, what="weight")
    if w.size and not (np.isfinite(w).all() and w.min() >= 0):
        i = int(np.argmax(~np.isfinite(w) | (w < 0)))
        raise InputError(f"{path}: row {offset + i + 1}: column {plan.weight!r}: weight {w[i].item()!r} "
                         "is not finite and >= 0", 1)
    return w


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


def _histogram(plan: _Plan, hist: _Histogram, y: np.ndarray, s: np.ndarray, w: np.ndarray | None) -> None:
    if plan.task == "binary":
        for c in (0, 1):
            m = y == c
            hist.add(c, s[m], None if w is None else w[m])
    elif plan.task == "multiclass":  # score of the true class, per class
        for c in range(plan.num_classes or 0):
            m = y == c
            hist.add(c, s[m, c], None if w is None else w[m])
    else:  # multilabel: scores of the positives of each label
        for c in range(plan.num_classes or 0):
            m = y[:, c] == 1
            hist.add(c, s[m, c], None if w is None else w[m])


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m streammetrics.cli.evaluate ...`` (same as ``streammetrics evaluate ...``)."""
    parser = argparse.ArgumentParser(prog="streammetrics")
    sub = parser.add_subparsers(dest="command")
    add_parser(sub)
    return run(parser.parse_args(["evaluate", *(argv if argv is not None else sys.argv[1:])]))
