"""The plan of a ``streammetrics evaluate`` run: what to read and how a record batch becomes
(labels, scores, weights).

:class:`Plan` is set from the options, completed from the first batch (list columns, the number
of classes) and by :func:`streammetrics.cli.labels.resolve` (classes and label mapping), then
read by every part of the command (columns, labels, slices, estimated metrics, report, plots).
It imports only the readers, so that every one of those modules can import it without a cycle.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterator, Sequence
from typing import Any

from .errors import InputError
from .readers import Source, open_source

__all__ = ["Plan", "is_list_type"]


def is_list_type(kind: Any) -> bool:
    """Whether a pyarrow type is a list column (list, large list or fixed-size list).

    Parameters
    ----------
    kind : pyarrow.DataType
        A column's type.

    Returns
    -------
    bool
        True for the three list types.
    """
    import pyarrow as pa

    return bool(pa.types.is_list(kind) or pa.types.is_large_list(kind) or pa.types.is_fixed_size_list(kind))


class Plan:
    """What to read and how to turn a record batch into (labels, scores, weights).

    Set from the options, then completed from the first batch (list columns, number of classes)
    and by :func:`streammetrics.cli.labels.resolve` (classes and label mapping).

    Parameters
    ----------
    args : argparse.Namespace
        The parsed options (``label``, ``score``, ``weight``, ``task``).
    files : list of str
        The input files, in order.

    Attributes
    ----------
    files : list of str
        The input files.
    labels, scores : list of str
        The ``--label`` and ``--score`` columns.
    weight : str or None
        The ``--weight`` column.
    task : {"binary", "multiclass", "multilabel"}
        The task.
    num_classes : int or None
        Number of classes (labels for multilabel); None for binary.
    classes : list of str or None
        Display names of the classes (labels).
    mapping : dict or None
        Text label -> class index.
    positive : object
        Binary: the positive label.
    pos_value, neg_value : float or None
        Binary numeric labels with ``--pos-label``: the positive one and the other one (from the
        first batch that holds it).
    mapping_from : str or None
        How the mapping was chosen (an option, the column names).
    list_scores, list_labels : bool
        Whether the scores / labels are one list column.
    classes_from_columns : bool
        Whether text labels are mapped by the score column names.
    """

    def __init__(self, args: argparse.Namespace, files: list[str]) -> None:
        self.files = files
        self.labels: list[str] = args.label
        self.scores: list[str] = args.score
        self.weight: str | None = args.weight
        self.task: str = args.task or ("binary" if len(self.scores) == 1 else "multiclass")
        self.num_classes: int | None = None  # set from the first batch for list columns
        self.classes: list[str] | None = None  # display names of the classes / labels
        self.mapping: dict[Any, int] | None = None  # string label -> class index
        self.positive: Any = None  # binary: the positive label
        self.pos_value: float | None = None  # binary numeric labels with --pos-label: the positive one
        self.neg_value: Any = None  # ... and the other one, from the first batch that holds it
        self.mapping_from: str | None = None  # how the mapping was chosen (an option, column names)
        self.list_scores = False
        self.list_labels = False
        self.classes_from_columns = False  # text labels mapped by the score column names

    @property
    def columns(self) -> list[str]:
        """The columns to read: labels, scores and weight, each once."""
        cols = [*self.labels, *self.scores]
        if self.weight:
            cols.append(self.weight)
        return list(dict.fromkeys(cols))

    def first_batch(self) -> Any:
        """The first record batch with a row, of the first file that has one.

        Returns
        -------
        pyarrow.RecordBatch
            Up to 1024 rows of :attr:`columns`.

        Raises
        ------
        InputError
            No file has a row (a data error).
        """
        for path in self.files:  # the first file with a row (a partition may be empty)
            src = open_source(path, self.columns, 1024)
            first = next((b for b in src.batches if b.num_rows), None)
            if first is not None:
                return first
        raise InputError(f"{self.files[0] if len(self.files) == 1 else 'the inputs'}: no rows", 1)

    def list_length(self, first: Any) -> int:
        """The number of classes of a list score column: the length of its first list.

        Parameters
        ----------
        first : pyarrow.RecordBatch
            The first batch (:meth:`first_batch`).

        Returns
        -------
        int
            The length of the first non-null list.

        Raises
        ------
        InputError
            Every list of the batch is null (a data error).
        """
        import pyarrow.compute as pc

        lengths = pc.list_value_length(first.column(self.scores[0])).drop_null()
        if len(lengths) == 0:
            raise InputError(f"{self.files[0]}: column {self.scores[0]!r}: no list in the first rows", 1)
        return int(lengths[0].as_py())

    def batches(self, batch_size: int, extra: Sequence[str] = ()) -> Iterator[tuple[Source, Any, int]]:
        """Every batch of every file, in order, with the row offset of the batch in its file.

        Scores and the weight are read as floats (list columns as lists of floats).

        Parameters
        ----------
        batch_size : int
            Rows per batch (at most).
        extra : sequence of str, default ()
            Columns read besides :attr:`columns` (the ``--by`` keys).

        Yields
        ------
        (Source, pyarrow.RecordBatch, int)
            The opened file, a batch, the number of the file's rows before it.
        """
        float_cols = ([] if self.list_scores else list(self.scores)) + ([self.weight] if self.weight else [])
        list_cols = [self.scores[0]] if self.list_scores else []
        list_cols += [self.labels[0]] if self.list_labels else []
        wanted = list(dict.fromkeys([*self.columns, *extra]))
        for path in self.files:
            src = open_source(path, wanted, batch_size, float_cols, list_cols)
            offset = 0
            for batch in src.batches:
                yield src, batch, offset
                offset += batch.num_rows
