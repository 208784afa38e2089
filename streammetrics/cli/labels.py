"""Which label is which class, for ``streammetrics evaluate`` -- never guessed.

* Numeric (and boolean) labels are class indices: binary 0/1 with 1 positive, multiclass
  ``0..k-1`` (the position in a list score column, or the k-th ``--score`` column); with
  ``--pos-label`` a binary column may hold any two numbers (``-1``/``1``, ``1``/``2``).
* Binary text labels: the positive class is ``--pos-label``, or the label the one score column is
  named after (``p_cancer``, ``cancer_prob`` or ``cancer`` for the label ``cancer``), or the second
  name of ``--classes NEGATIVE,POSITIVE``; otherwise a usage error naming the labels seen.
* Multiclass text labels with several score columns: by the column names (``p_cat`` -> ``cat``),
  or ``--classes`` (class i = the i-th score column). With one list score column the list has no
  names: ``--classes`` (class i = position i of the list) is required.

The mapping used is stored on the plan (``mapping``, ``positive``, ``mapping_from``) and reported
in the table and the JSON.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from .columns import number
from .errors import InputError
from .readers import open_source

if TYPE_CHECKING:
    from .plan import Plan

__all__ = ["resolve"]


def resolve(plan: Plan, args: argparse.Namespace, first: Any) -> None:
    """Set ``plan.classes``, ``plan.mapping``, ``plan.positive``, ``plan.pos_value`` and
    ``plan.mapping_from`` from the label column type of the first batch ``first`` and the options.

    Parameters
    ----------
    plan : Plan
        The run's plan, completed in place.
    args : argparse.Namespace
        The parsed options (``pos_label``, ``classes``).
    first : pyarrow.RecordBatch
        The first batch with rows.

    Returns
    -------
    None

    Raises
    ------
    InputError
        When the classes cannot be known without guessing (exit status 2), or the labels are not
        valid text (exit status 1).
    """
    import pyarrow as pa

    label_type = first.schema.field(plan.labels[0]).type
    is_text = (pa.types.is_string(label_type) or pa.types.is_large_string(label_type)
               or pa.types.is_dictionary(label_type))
    if pa.types.is_binary(label_type) or pa.types.is_large_binary(label_type):
        raise InputError(f"{plan.files[0]}: column {plan.labels[0]!r}: the labels are not valid UTF-8 "
                         "text", 1)
    if args.pos_label is not None and plan.task != "binary":
        raise InputError(f"--pos-label is for the binary task (one score column), not {plan.task}; "
                         "for text labels of several classes give --classes", 2)
    if plan.task == "binary":
        _binary(plan, args, is_text, pa.types.is_boolean(label_type))
        return
    names: list[str] | None = args.classes
    if names is not None and len(names) != plan.num_classes:
        raise InputError(f"--classes: {len(names)} names for {plan.num_classes} classes "
                         f"({_class_source(plan)})", 2)
    if is_text and plan.task == "multilabel":
        raise InputError(f"--label {plan.labels[0]}: multilabel label columns hold 0/1 (or true/false), "
                         "not text", 1)
    if names is not None:
        plan.classes = names
        if is_text:
            plan.mapping = {n: i for i, n in enumerate(names)}
            plan.mapping_from = f"--classes, class i = {_class_source(plan, each=True)}"
    elif is_text:
        if plan.list_scores:
            raise InputError(f"--label {plan.labels[0]}: the labels are text but the score column "
                             f"{plan.scores[0]!r} is a list without class names: give --classes "
                             "NAME0,NAME1,... (the class of each list position, in order)", 2)
        plan.classes = _class_names_from_columns(plan.scores, first.column(plan.labels[0]))
        plan.mapping = {n: i for i, n in enumerate(plan.classes)}
        plan.classes_from_columns = True
        plan.mapping_from = "the --score column names"
    elif plan.task == "multiclass" and not plan.list_scores:
        plan.classes = list(plan.scores)
    elif plan.task == "multilabel":
        plan.classes = (list(plan.labels) if len(plan.labels) > 1
                        else [str(i) for i in range(plan.num_classes or 0)])
    else:
        plan.classes = [str(i) for i in range(plan.num_classes or 0)]


def _class_source(plan: Plan, each: bool = False) -> str:
    if plan.list_scores:
        return f"position i of the list column {plan.scores[0]!r}" if each else \
            f"the length of the lists in {plan.scores[0]!r}"
    return "the i-th --score column" if each else "one per --score column"


def _binary(plan: Plan, args: argparse.Namespace, is_text: bool, is_bool: bool) -> None:
    pos: str | None = args.pos_label
    col = plan.labels[0]
    if args.classes is not None:
        if len(args.classes) != 2:
            raise InputError(f"--classes: {len(args.classes)} names for the binary task "
                             "(give NEGATIVE,POSITIVE)", 2)
        if pos is not None and pos != args.classes[1]:
            raise InputError(f"--pos-label {pos!r} disagrees with --classes {','.join(args.classes)} "
                             "(binary: NEGATIVE,POSITIVE); give one of them", 2)
        plan.classes = list(args.classes)
        if is_text:
            plan.mapping = {n: i for i, n in enumerate(args.classes)}
            plan.positive = args.classes[1]
            plan.mapping_from = "--classes NEGATIVE,POSITIVE"
        else:
            plan.positive = 1
        return
    if not is_text:
        plan.classes = ["0", "1"]
        plan.positive = 1
        if pos is not None:
            plan.pos_value = _numeric_pos_label(pos, col, is_bool)
            plan.positive = number(plan.pos_value)
            plan.classes = ["other", str(plan.positive)]
            plan.mapping_from = "--pos-label"
        return
    seen = sorted(_distinct_labels(plan))
    if len(seen) > 2:
        shown = ", ".join(repr(s) for s in seen[:10]) + (", ..." if len(seen) > 10 else "")
        raise InputError(f"--label {col}: {len(seen)}{'+' if len(seen) > 1000 else ''} distinct labels "
                         f"({shown}) for the binary task (one score column); several classes need a "
                         "score column per class or a list column", 1)
    if pos is not None:
        if pos not in seen and len(seen) == 2:
            raise InputError(f"--pos-label {pos!r} is not one of the labels of column {col!r}: "
                             f"{', '.join(repr(s) for s in seen)}", 2)
        plan.mapping_from = "--pos-label"
    else:
        matches = [s for s in seen if _named_after(plan.scores[0], s)]
        if len(matches) != 1:
            names = "names none of them" if not matches else "names more than one of them"
            raise InputError(f"--label {col}: the labels are text ({', '.join(repr(s) for s in seen)}) "
                             f"and the score column {plan.scores[0]!r} {names}: which is the positive "
                             "class? give --pos-label LABEL (or name the score column after it: "
                             "p_<label>)", 2)
        pos = matches[0]
        plan.mapping_from = f"the score column name {plan.scores[0]!r}"
    negatives = [s for s in seen if s != pos]
    plan.positive = pos
    plan.classes = [negatives[0] if negatives else f"not {pos}", pos]
    plan.mapping = {negatives[0]: 0, pos: 1} if negatives else {pos: 1}


def _numeric_pos_label(pos: str, col: str, is_bool: bool) -> float:
    """``--pos-label`` for a numeric (or boolean) label column, as a float."""
    text = pos.strip().lower()
    if is_bool and text in ("true", "false"):
        return 1.0 if text == "true" else 0.0
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not math.isfinite(value):
        raise InputError(f"--pos-label {pos!r}: the labels of column {col!r} are "
                         f"{'booleans' if is_bool else 'numbers'}: give one of them", 2)
    return value


def _named_after(column: str, label: str) -> bool:
    """Whether a score column is named after a label: the label itself, or the label with a
    prefix or suffix cut at a separator (``p_cancer``, ``prob-cancer``, ``cancer_score``)."""
    if not label or column == label:
        return bool(label)
    n = len(label)
    if column.endswith(label) and not column[-n - 1].isalnum():
        return True
    return column.startswith(label) and not column[n].isalnum()


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
    seen = {v for v in _texts(pc.unique(col), "the first file", "--label") if v is not None}
    stripped = _strip_affixes(scores)
    if stripped is not None and len(seen & set(stripped)) > len(seen & set(scores)):
        return stripped
    return list(scores)


def _distinct_labels(plan: Plan) -> set[str]:
    """A pass over the label column only, collecting the (few) distinct text labels."""
    import pyarrow as pa
    import pyarrow.compute as pc

    seen: set[str] = set()
    name = plan.labels[0]
    for path in plan.files:
        src = open_source(path, [name], 1 << 16)
        for batch in src.batches:
            col = batch.column(0)
            if pa.types.is_dictionary(col.type):
                col = col.cast(pa.string())
            if not (pa.types.is_string(col.type) or pa.types.is_large_string(col.type)):
                raise InputError(f"{path}: column {name!r}: labels are not text (type {col.type}) but the "
                                 "first file's are; the files must agree", 1)
            seen.update(v for v in _texts(pc.unique(col), path, name) if v is not None)
            if len(seen) > 1000:
                return seen
    return seen




def _texts(arr: Any, path: str, column: str) -> list[Any]:
    """A text array as Python strings; invalid UTF-8 (which pyarrow's JSON reader lets through) is a
    data error naming the file and the column."""
    try:
        return list(arr.to_pylist())
    except UnicodeDecodeError as exc:
        raise InputError(f"{path}: column {column!r}: a label is not valid UTF-8 text "
                         f"(byte 0x{exc.object[exc.start]:02x})", 1) from None
