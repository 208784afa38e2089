"""Columns of a record batch as numpy arrays for ``streammetrics evaluate``: scores and weights as
floats, labels as class indices (text labels through the plan's mapping, numeric labels through
``--pos-label``); every bad value is a data error naming the file, the row and the column.

Complexity: a few vectorised passes per batch; a Python loop only on the error path.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from streammetrics._core.docstrings import filled

from .errors import InputError
from .readers import original_value

if TYPE_CHECKING:
    from .plan import Plan

__all__ = ["finite_floats", "labels", "number", "scores", "weights"]

#: floats at or beyond 2**53 are not exact integers: such labels are shown as floats (or as the
#: text of the file), never as a rounded or wrapped integer
_EXACT = 2.0**53


def number(v: Any) -> int | float:
    """A label value for a message: an int when it is an exact integer, else the float.

    Parameters
    ----------
    v : number
        A label value.

    Returns
    -------
    int or float
        ``int(v)`` when ``v`` is an integer below 2**53 in magnitude, else ``float(v)``.
    """
    f = float(v)
    return int(f) if np.isfinite(f) and f == np.round(f) and abs(f) < _EXACT else f


def _text_of(scalar: Any) -> Any:
    """A text scalar's value for a message: the str, or the bytes when they are not UTF-8."""
    import pyarrow as pa

    try:
        return scalar.as_py()
    except UnicodeDecodeError:
        return scalar.cast(pa.binary()).as_py()


def _utf8(v: Any) -> bool:
    try:
        v.decode("utf-8")
    except UnicodeDecodeError:
        return False
    except AttributeError:
        return True
    return True


def _to_numpy(arr: Any) -> np.ndarray:
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
    out = _to_numpy(arr)
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

    lengths = _to_numpy(pc.list_value_length(arr).fill_null(-1))
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


@filled
def labels(plan: Plan, batch: Any, path: str, offset: int) -> np.ndarray:
    """The label column(s) of a batch as class indices (multilabel: an (n, labels) 0/1 matrix).

    Parameters
    ----------
    plan : Plan
        The run's plan (label columns, task, text-label mapping, ``--pos-label``).
    {cli: batch, path, offset}

    Returns
    -------
    ndarray
        int64 class indices of shape (n,), or an int8 / int64 (n, labels) matrix for multilabel.

    Raises
    ------
    InputError
        A missing, non-numeric or out-of-task label, naming the file, row and column.
    """
    import pyarrow as pa

    if plan.list_labels:
        col = plan.labels[0]
        y = _list_matrix(batch.column(col), path, col, offset, plan.num_classes, what="label")
        bad = (y != 0) & (y != 1)
        if bad.any():
            i = int(np.argmax(bad.ravel()))
            v = y.ravel()[i]
            raise InputError(f"{_where(path, col, offset, i, y.shape[1])}: label {number(v)!r} is outside "
                             "the multilabel task (labels must be 0 or 1)", 1)
        return y.astype(np.int8)
    if len(plan.labels) > 1:
        return np.column_stack([_labels_1d(plan, batch.column(c), path, c, offset, multilabel=True)
                                for c in plan.labels])
    arr = batch.column(plan.labels[0])
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    return _labels_1d(plan, arr, path, plan.labels[0], offset, multilabel=plan.task == "multilabel")


def _labels_1d(plan: Plan, arr: Any, path: str, column: str, offset: int, multilabel: bool) -> np.ndarray:
    import pyarrow as pa

    if arr.null_count:
        i = int(np.argmax(_to_numpy(arr.is_valid()) == 0))
        raise InputError(f"{path}: row {offset + i + 1}: column {column!r}: label is missing", 1)
    if pa.types.is_string(arr.type) or pa.types.is_large_string(arr.type) or pa.types.is_dictionary(arr.type):
        if plan.mapping is None:
            raise InputError(f"{path}: column {column!r}: labels are text but the first file's are not; "
                             "the files must agree", 1)
        import pyarrow.compute as pc

        text = arr.cast(pa.string()) if pa.types.is_dictionary(arr.type) else arr
        idx = pc.index_in(text, value_set=pa.array(list(plan.mapping), type=text.type))
        if idx.null_count:  # a label that is not one of the classes
            i = int(np.argmax(_to_numpy(idx.is_valid()) == 0))
            hint = ""
            if plan.classes_from_columns:
                hint = ("; the classes are named after the --score columns: give --classes with the label "
                        "of each --score column, in order")
            raise InputError(f"{path}: row {offset + i + 1}: column {column!r}: label {_text_of(text[i])!r} "
                             f"is not one of the classes {list(plan.mapping)}{hint}", 1)
        # index_in gives the position in the value set; the mapping's values are the classes
        return np.fromiter(plan.mapping.values(), np.int64, len(plan.mapping))[_to_numpy(idx)]
    if pa.types.is_binary(arr.type) or pa.types.is_large_binary(arr.type):  # CSV text that is not UTF-8
        i, raw = next(((i, v) for i, v in enumerate(arr.to_pylist()) if not _utf8(v)), (0, None))
        raise InputError(f"{path}: row {offset + i + 1}: column {column!r}: label {raw!r} is not valid "
                         "UTF-8 text", 1)
    if plan.mapping is not None:
        raise InputError(f"{path}: column {column!r}: labels are not text (type {arr.type}) but the "
                         "first file's are; the files must agree", 1)
    if not (pa.types.is_integer(arr.type) or pa.types.is_floating(arr.type) or pa.types.is_boolean(arr.type)):
        raise InputError(f"{path}: column {column!r}: labels must be integers or strings, "
                         f"got type {arr.type}", 1)
    y = _to_numpy(arr)
    if y.dtype.kind == "f":
        bad = ~np.isfinite(y) if plan.pos_value is not None else ~np.isfinite(y) | (y != np.round(y))
        if bad.any():
            i = int(np.argmax(bad))
            what = "a finite number" if plan.pos_value is not None else "an integer"
            # a fractional label is a regression target: said, never guessed (issue #30)
            hint = ("; for regression give --target/--prediction instead of --label/--score"
                    if plan.pos_value is None and np.isfinite(y[i]) else "")
            raise InputError(f"{path}: row {offset + i + 1}: column {column!r}: label "
                             f"{_shown(y[i], path, column, offset + i + 1)} is not {what}{hint}", 1)
    if plan.pos_value is not None:
        return _by_pos_label(plan, y, path, column, offset)
    top = 2 if (plan.task == "binary" or multilabel) else plan.num_classes
    assert top is not None
    bad = (y < 0) | (y >= top)
    if bad.any():
        i = int(np.argmax(bad))
        rule = "0 or 1" if top == 2 and plan.task != "multiclass" else f"in [0, {top})"
        hint = "; for other labels give --pos-label" if plan.task == "binary" else ""
        raise InputError(f"{path}: row {offset + i + 1}: column {column!r}: label "
                         f"{_shown(y[i], path, column, offset + i + 1)} is outside the {plan.task} task "
                         f"(labels must be {rule}){hint}", 1)
    return y.astype(np.int64)


def _shown(v: Any, path: str, column: str, row: int) -> str:
    """A numeric label for a message: as written in the file when the float may not hold it
    exactly (``99999999999999999999999`` rather than ``1e+23`` or a wrapped int64)."""
    x = v.item() if isinstance(v, np.generic) else v
    if isinstance(x, float) and not (abs(x) < _EXACT):
        text = original_value(path, column, row)
        if text is not None:
            return text
    return repr(number(x) if isinstance(x, float) else x)


def _by_pos_label(plan: Plan, y: np.ndarray, path: str, column: str, offset: int) -> np.ndarray:
    """Numeric labels with ``--pos-label``: 1 where the label equals it, 0 for the one other label
    (the first seen); a third label or a NaN is a data error."""
    pos = plan.pos_value
    is_pos = y == pos
    other = ~is_pos
    if other.any():
        if plan.neg_value is None:
            plan.neg_value = number(y[int(np.argmax(other))])
        bad = other & (y != plan.neg_value)
        if bad.any():
            i = int(np.argmax(bad))
            raise InputError(f"{path}: row {offset + i + 1}: column {column!r}: label "
                             f"{_shown(y[i], path, column, offset + i + 1)} is a third label in the binary "
                             f"task (positive {number(pos)!r} from --pos-label, negative "
                             f"{plan.neg_value!r})", 1)
    return is_pos.astype(np.int64)


@filled
def scores(plan: Plan, batch: Any, path: str, offset: int) -> np.ndarray:
    """The score column(s) of a batch as floats.

    Parameters
    ----------
    plan : Plan
        The run's plan (score columns, number of classes).
    {cli: batch, path, offset}

    Returns
    -------
    ndarray
        Shape (n,) for one score column, else (n, classes); float64 (float32 columns stay float32).

    Raises
    ------
    InputError
        A missing, NaN or non-numeric score, or a list of the wrong length, naming the file and row.
    """
    if plan.list_scores:
        return _list_matrix(batch.column(plan.scores[0]), path, plan.scores[0], offset, plan.num_classes)
    cols = [_to_float(batch.column(c), path, c, offset) for c in plan.scores]
    return cols[0] if len(cols) == 1 else np.column_stack(cols)


@filled
def weights(plan: Plan, batch: Any, path: str, offset: int) -> np.ndarray:
    """The weight column as float64; NaN, missing, infinite or negative -> data error (file, row).

    Parameters
    ----------
    plan : Plan
        The run's plan (``plan.weight`` is the column; not None).
    {cli: batch, path, offset}

    Returns
    -------
    ndarray
        The weights, shape (n,).

    Raises
    ------
    InputError
        A weight that is missing, not finite or negative, naming the file and row.
    """
    assert plan.weight is not None
    w = _to_float(batch.column(plan.weight), path, plan.weight, offset, what="weight")
    if w.size and not (np.isfinite(w).all() and w.min() >= 0):
        i = int(np.argmax(~np.isfinite(w) | (w < 0)))
        raise InputError(f"{path}: row {offset + i + 1}: column {plan.weight!r}: weight {w[i].item()!r} "
                         "is not finite and >= 0", 1)
    return w




def finite_floats(batch: Any, column: str, path: str, offset: int, what: str) -> np.ndarray:
    """A numeric column of a batch as floats (float32 stays float32), every value finite: the
    regression columns (targets, predictions, interval bounds, weights).

    Parameters
    ----------
    batch : pyarrow.RecordBatch
        The batch.
    column : str
        The column's name.
    path : str
        The file it was read from (for messages).
    offset : int
        The number of the file's rows before the batch (for messages).
    what : str
        What the values are, for messages (``"target"``, ``"prediction"``, ...).

    Returns
    -------
    ndarray
        Shape (n,). O(n).

    Raises
    ------
    InputError
        A missing, NaN, infinite or non-numeric value: a data error naming the file, the first
        offending row and the column.
    """
    import pyarrow as pa

    arr = batch.column(column)
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    out = _to_float(arr, path, column, offset, what=what)
    if out.size and not np.isfinite(out).all():  # NaN was refused above: an infinity
        i = int(np.argmax(~np.isfinite(out)))
        raise InputError(f"{_where(path, column, offset, i, 1)}: {what} {out[i].item()!r} is not finite", 1)
    return out
