"""Reading Parquet files for the range routes: the files of a path, their footers and batches.

The range routes (:mod:`.range_counts`' tasks on Dask, :mod:`.ray_ranges`, :mod:`.ray_ranked`)
read Parquet files with pyarrow straight into numpy, without a DataFrame: this module lists the
files of a path as ``dask.dataframe.read_parquet`` does (:func:`parquet_files`), reads their
footers once (:func:`parquet_footers`, refusing a file whose columns differ from the first's,
:func:`check_columns`), and yields their ``(labels, scores, where)`` batches a bounded number
of rows at a time (:func:`parquet_batches`: a null named by file, column and row). pyarrow's
read errors become ValueErrors naming the file (:func:`named_read_errors`).
Complexity: O(files) for the listing and footers, O(rows read) for the batches.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from . import label_codes
from .plan import Plan, arrow_dtypes

#: float64 score column; bounds the read whatever the footer claims.
READ_ROWS = 1 << 20


def parquet_batches(files: Sequence[str], fs: Any, plan: Plan,
                    footers: Sequence[Any] | None = None) -> Iterator[tuple[Any, Any, str]]:
    """The ``(labels, scores, where)`` batches of Parquet files, at most :data:`READ_ROWS` rows at a
    time, read with pyarrow straight into numpy (no DataFrame); ``fs`` an fsspec filesystem;
    ``footers`` the files' metadata where read already (:func:`parquet_footers`). Memory is
    bounded by the batch, not by the row counts a footer claims (a hostile footer cannot make
    the reader allocate for rows the file does not hold); a file pyarrow cannot read is a
    ValueError naming it. O(rows read)."""
    import pyarrow.parquet as pq

    assert isinstance(plan.label, str) and isinstance(plan.score, str)
    local = is_local(fs)
    columns = [plan.label, plan.score]
    for i, name in enumerate(files):
        with contextlib.ExitStack() as stack, named_read_errors(name):
            source = name if local else stack.enter_context(fs.open(name, "rb"))
            reader = pq.ParquetFile(source, metadata=None if footers is None else footers[i])
            # one thread: a worker thread's task decodes its own rows (no pool handoffs); one
            # row group at a time, so a batch never joins the ends of two row groups (a copy)
            batches = (batch for g in range(reader.num_row_groups) for batch in reader.iter_batches(
                batch_size=READ_ROWS, row_groups=[g], columns=columns, use_threads=False))
            offset = 0
            for batch in batches:
                if batch.num_rows:
                    arrays = (batch.column(plan.label).to_numpy(zero_copy_only=False),
                              batch.column(plan.score).to_numpy(zero_copy_only=False))
                    _refuse_nulls(arrays, (plan.label, plan.score), name, offset)
                    yield (*arrays, f"the Parquet file {name!r} from row {offset}")
                offset += batch.num_rows


def parquet_footers(files: Sequence[str], fs: Any, columns: Sequence[str] = (),
                    mapped: str | None = None) -> list[Any]:
    """Each file's footer (``pyarrow.parquet.FileMetaData``): the rows a task will read, known
    before it reads them (given to :func:`parquet_batches`, not read twice). A file pyarrow
    cannot read (not Parquet, truncated) is a ValueError naming it; each of ``columns`` is
    checked in every footer (:func:`check_columns`, ``mapped`` its label column of labels). O(files)."""
    import pyarrow.parquet as pq

    local = is_local(fs)
    out = []
    for name in files:
        with named_read_errors(name):
            if local:
                meta = pq.read_metadata(name)
            else:
                with fs.open(name, "rb") as f:
                    meta = pq.read_metadata(f)
            schema = meta.schema.to_arrow_schema() if columns else None
        if schema is not None:
            check_columns(schema, columns, name, mapped)
        out.append(meta)
    return out


def plan_columns(plan: Plan) -> list[str]:
    """The label and score columns a Parquet task reads (both names on the range path)."""
    return [c for c in (plan.label, plan.score) if isinstance(c, str)]


@contextlib.contextmanager
def named_read_errors(path: str) -> Iterator[None]:
    """pyarrow's errors reading ``path`` (not Parquet, truncated, corrupt) as a ValueError that
    names the file, pyarrow's message after it (as :func:`parquet_batches` words them)."""
    import pyarrow as pa

    try:
        yield
    except (pa.ArrowException, OSError) as exc:
        raise ValueError(f"data: cannot read the Parquet file {path!r}: {exc}") from exc


def check_columns(schema: Any, columns: Sequence[str], path: str, mapped: str | None = None) -> None:
    """Refuse a file (``schema``: its ``pyarrow.Schema``) whose ``columns`` are missing or not
    of a number or boolean type (``mapped``: a label column the ranked members' codec maps, may
    hold strings, :func:`label_codes.mapped_column`): the range path was chosen from the first
    file's types, and a later file's other type would otherwise fail deep in a task without its
    name. O(columns)."""
    for col in columns:
        i = schema.get_field_index(col)
        if i < 0:
            raise ValueError(f"column {col!r} is missing from {path} (or not unique), which the "
                             f"first Parquet file holds; the files' schemas differ")
        if not label_codes.label_column(arrow_dtypes([col], [schema.field(i).type]).get(col), col == mapped):
            raise ValueError(f"column {col!r} of {path} has type {schema.field(i).type}, not a "
                             f"number or boolean type as in the first Parquet file; the files' "
                             f"schemas differ")


def parquet_files(path: Any) -> tuple[Any, list[str]] | None:
    """The Parquet files of ``path`` (a path, directory, glob or list of them) and their fsspec
    filesystem, as ``dask.dataframe.read_parquet`` finds them (below a directory, files and
    directories whose name starts with ``_`` or ``.`` skipped; sorted); None where only a
    dataset reader knows (hive-partitioned directories, mixed filesystems, other objects, no
    file). O(files listed)."""
    import os

    from fsspec.core import has_magic, url_to_fs

    paths = [path] if isinstance(path, str | os.PathLike) else path
    if not isinstance(paths, list | tuple) or not paths:
        return None
    fs: Any = None
    files: list[str] = []
    for p in paths:
        if not isinstance(p, str | os.PathLike):
            return None
        here, root = url_to_fs(os.fspath(p))
        if fs is not None and here is not fs:
            return None
        fs = here
        tree = not has_magic(root) and fs.isdir(root)
        found = sorted(fs.find(root)) if tree else sorted(fs.glob(root)) if has_magic(root) else [root]
        for name in found:
            if tree and "=" in name[len(root):]:  # hive partitioning: columns from directory names
                return None
            # below a directory, every name under it (_tiny/x.parquet, .cache/...); else the file's
            below = name[len(root):].strip("/").split("/") if tree else [name.rsplit("/", 1)[-1]]
            if not any(part.startswith(("_", ".")) for part in below):
                files.append(name)
    return (fs, files) if files else None


def _refuse_nulls(arrays: Sequence[Any], names: Sequence[str], path: str, offset: int) -> None:
    """A null (read as NaN from floats and integers, as None from booleans: an object array) or
    a NaN in a file's column: a ValueError naming the file, column and row (``offset``: the file's
    rows before this batch). O(n) for floats; an object array is scanned only where it holds
    a null or a non-number (an error either way)."""
    for arr, col in zip(arrays, names, strict=True):
        row = None
        if arr.dtype.kind == "f" and np.isnan(arr.min()):  # min is NaN iff one is (no temporary)
            row = int(np.argmax(np.isnan(arr)))
        elif arr.dtype.kind == "O":  # pyarrow's nullable booleans (or strings: refused later)
            row = next((i for i, v in enumerate(arr) if v is None), None)
        if row is not None:
            raise ValueError(f"nulls: column {col!r} is null (or NaN) at row {offset + row} of {path}; "
                             f"pass nulls='skip' to drop the rows holding a null in {list(names)}")


def is_local(fs: Any) -> bool:
    """Whether the fsspec filesystem ``fs`` is the local one (its paths open with ``open``). O(1)."""
    p = getattr(fs, "protocol", ())
    return "file" in ((p,) if isinstance(p, str) else tuple(p))
