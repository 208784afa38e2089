"""Which local Parquet files a Ray Dataset plainly reads: :func:`streammetrics.ray.evaluate`'s way to
:func:`streammetrics.ray.evaluate_parquet`'s range path.

:func:`parquet_source` looks at a dataset's logical plan (Ray's internal plan objects, before
its optimizer runs) and returns the files and the column selection where the plan is exactly
one Parquet read of local files, optionally under plain column selections
(``select_columns`` or ``read_parquet(columns=...)``); every other case, or anything it does
not recognise, returns None and the caller keeps the dataset path. Recognised shapes:

* Ray Data's second data source API (Ray 2.60's default): ``[Project of plain columns]* ->
  ReadFiles -> ListFiles`` with no block transform, pushed predicate, limit, partition filter,
  partition columns, file shuffle, synthesized columns (``include_paths``), format options or
  resource arguments; the files are listed by the plan's own file indexer on the driver
  (``FileIndexer.list_file_infos`` with the plan's extension and partition pruners: paths and
  sizes only, no footer read, no actor);
* its first API (``DataContext.use_datasource_v2 = False``, and older releases of the same
  shape): ``[Project]* -> Read`` over a ``ParquetDatasource`` with no predicate (``filter=``),
  block transform, user schema, partition columns, shuffle or synthesized columns; the files
  are its ``_pq_paths``, which must equal ``Dataset.input_files()``, and the paths given its
  ``_source_paths_ref``.

Every dataclass and datasource is checked to carry exactly the fields this module knows (a Ray
release that adds one -- a new pushdown -- falls back), and the files Ray would read must be
exactly those :func:`parquet_reads.parquet_files` lists for the same paths (equal as sets), so
that the range path never reads another file list than Ray's. The values are those of the
files' rows, whatever Ray's blocking: the range path gives the single-process values bit for
bit.

Complexity: O(plan operators + files listed); no file is opened but the first (its schema).
"""

from __future__ import annotations

import dataclasses
from typing import Any

from . import parquet_reads

#: The fields of the plan objects this module knows (Ray 2.60); other fields: not recognised.
READ_FILES_FIELDS = frozenset({
    "_input_dependencies", "_name", "block_udf", "can_modify_num_rows", "compute", "datasource_name",
    "input_dependencies", "min_rows_per_bundled_input", "num_outputs", "parallelism", "per_block_limit",
    "ray_remote_args", "ray_remote_args_fn", "scanner", "schema"})
LIST_FILES_FIELDS = frozenset({
    "_input_dependencies", "_name", "file_extensions", "file_indexer", "file_partitioner", "filesystem",
    "limit", "partition_filter", "partition_pruner", "paths", "predicate", "projected_columns",
    "shuffle_config_factory", "source_paths"})
SCANNER_FIELDS = frozenset({
    "batch_size", "columns", "filesystem", "ignore_prefixes", "limit", "parquet_format_kwargs",
    "partition_predicate", "partitioning", "predicate", "schema", "shuffle", "synthesized_columns",
    "target_block_size"})
READ_FIELDS = frozenset({
    "_input_dependencies", "_name", "can_modify_num_rows", "compute", "datasource",
    "datasource_or_legacy_reader", "detected_parallelism", "min_rows_per_bundled_input", "num_outputs",
    "parallelism", "per_block_limit", "ray_remote_args", "ray_remote_args_fn"})
PROJECT_FIELDS = frozenset({
    "_common_sub_exprs", "_input_dependencies", "_name", "batch_format", "batch_size",
    "can_modify_num_rows", "compute", "exprs", "input_dependencies", "min_rows_per_bundled_input",
    "per_block_limit", "ray_remote_args", "ray_remote_args_fn", "zero_copy_batch"})
DATASOURCE_FIELDS = frozenset({
    "_block_udf", "_encoding_ratio", "_file_metadata_shuffler", "_file_schema", "_filesystem",
    "_include_paths", "_include_row_hash", "_local_scheduling", "_partition_columns",
    "_partition_columns_selected", "_partition_schema", "_partitioning", "_pq_fragments", "_pq_paths",
    "_predicate_expr", "_projection_map", "_read_schema", "_scanner_kwargs", "_shuffle",
    "_source_paths_ref", "_supports_distributed_reads"})
#: ``ParquetDatasource._scanner_kwargs`` keys that change no value (``filter`` would).
SCAN_OPTIONS = frozenset({"batch_size", "batch_readahead", "fragment_readahead", "fragment_scan_options"})


@dataclasses.dataclass(frozen=True)
class Source:
    """A dataset recognised as a plain Parquet read: the files (local paths, sorted) and the
    columns selected above the read (None: every column)."""

    files: list[str]
    columns: tuple[str, ...] | None


def _fields(obj: Any) -> frozenset[str]:
    """The dataclass fields of ``obj`` (none for another object). O(fields)."""
    if not dataclasses.is_dataclass(obj):
        return frozenset()
    return frozenset(f.name for f in dataclasses.fields(obj))


#: (the files Ray reads, the paths it was given, the columns selected) of a recognised read.
Found = tuple[list[str], list[str], tuple[str, ...] | None]


def _select(columns: tuple[str, ...] | None, names: Any) -> tuple[str, ...] | None:
    """``columns`` narrowed to ``names`` (None: no narrowing), in ``names``' order."""
    names = tuple(names)
    return names if columns is None else tuple(n for n in names if n in columns)


def _projections(op: Any) -> tuple[Any, tuple[str, ...] | None] | None:
    """(the operator under the plain column selections on top of ``op``, the columns they keep),
    or None where one of them renames, computes, limits or is not recognised."""
    from ray.data._internal.logical.operators.map_operator import Project
    from ray.data.expressions import ColumnExpr

    kept: tuple[str, ...] | None = None
    while type(op) is Project:
        if (_fields(op) != PROJECT_FIELDS or op.per_block_limit is not None or op._common_sub_exprs
                or op.ray_remote_args or len(op.input_dependencies) != 1
                or not all(type(e) is ColumnExpr for e in op.exprs)):
            return None
        names = [str(e.name) for e in op.exprs]
        if kept is None:
            kept = tuple(names)
        elif not set(kept) <= set(names):
            return None
        op = op.input_dependencies[0]
    return op, kept


def _local(fs: Any) -> bool:
    import pyarrow.fs

    return type(fs) is pyarrow.fs.LocalFileSystem


def _read_files(op: Any, kept: tuple[str, ...] | None) -> Found | None:
    """The second API's ``ReadFiles -> ListFiles``: (Ray's files, the paths given, the columns)."""
    import pyarrow as pa
    from ray.data._internal.datasource_v2.common.listing_utils import _build_pruners
    from ray.data._internal.datasource_v2.formats.parquet.parquet_scanner import ParquetScanner
    from ray.data._internal.logical.operators.read_operator import ListFiles

    scan = op.scanner
    if (_fields(op) != READ_FILES_FIELDS or op.block_udf is not None or op.per_block_limit is not None
            or set(op.ray_remote_args) - {"scheduling_strategy"} or len(op.input_dependencies) != 1
            or type(scan) is not ParquetScanner or _fields(scan) != SCANNER_FIELDS):
        return None
    if (scan.predicate is not None or scan.limit is not None or scan.partition_predicate is not None
            or scan.synthesized_columns or scan.parquet_format_kwargs or scan.shuffle is not None
            or scan.ignore_prefixes is not None or scan.partition_columns or not _local(scan.filesystem)):
        return None
    listing = op.input_dependencies[0]
    fs: Any = listing.filesystem
    if (type(listing) is not ListFiles or _fields(listing) != LIST_FILES_FIELDS
            or listing.input_dependencies or listing.predicate is not None or listing.limit is not None
            or listing.projected_columns is not None or listing.partition_filter is not None
            or listing.partition_pruner is not None or listing.shuffle_config_factory() is not None
            or not _local(fs)):
        return None
    paths = list(listing.paths)
    pruners = _build_pruners(listing.file_extensions, listing.partition_filter, listing.partition_pruner)
    infos = listing.file_indexer.list_file_infos(pa.array(paths, pa.string()), filesystem=fs,
                                                 pruners=pruners, preserve_order=True)
    files = [str(info.path) for info in infos]
    if files:  # a user ``schema=`` casts the files' columns at the scan: not the files' values
        import pyarrow.parquet as pq

        with fs.open_input_file(files[0]) as f:
            own = pq.read_schema(f).remove_metadata()
        if not (own.equals(op.schema.remove_metadata()) and own.equals(scan.schema.remove_metadata())):
            return None
    columns = kept if scan.columns is None else _select(kept, scan.columns)
    return files, paths, columns


def _read_v1(ds: Any, op: Any, kept: tuple[str, ...] | None) -> Found | None:
    """The first API's ``Read`` over a ``ParquetDatasource``: (its files, the paths it was given,
    the columns)."""
    from ray.data._internal.datasource.parquet_datasource import ParquetDatasource

    source = op.datasource
    if (_fields(op) != READ_FIELDS or op.input_dependencies or op.per_block_limit is not None
            or set(op.ray_remote_args) - {"scheduling_strategy"} or type(source) is not ParquetDatasource
            or op.datasource_or_legacy_reader is not source or frozenset(vars(source)) != DATASOURCE_FIELDS):
        return None
    if (source._predicate_expr is not None or source._block_udf is not None or source._read_schema is not None
            or source._include_paths or source._include_row_hash or source._shuffle is not None
            or source._file_metadata_shuffler is not None or source._partition_columns
            or len(source._partition_schema) or set(source._scanner_kwargs) - SCAN_OPTIONS
            or not _local(source._filesystem) or len(source._pq_fragments) != len(source._pq_paths)):
        return None
    projection = source._projection_map
    if projection is not None and any(k != v for k, v in projection.items()):
        return None
    files = [str(p) for p in source._pq_paths]
    if sorted(files) != sorted(str(p) for p in ds.input_files()):
        return None
    import ray

    ref = source._source_paths_ref  # the paths read_parquet was given
    given: Any = ray.get(ref) if isinstance(ref, ray.ObjectRef) else ref
    paths = [given] if isinstance(given, str) else list(given)
    if not all(isinstance(p, str) for p in paths):
        return None
    columns = kept if projection is None else _select(kept, projection)
    return files, paths, columns


def parquet_source(ds: Any) -> Source | None:
    """``ds`` as a plain Parquet read of local files (see the module docstring), or None: any
    other plan, anything not recognised, or a file list that differs from
    :func:`parquet_reads.parquet_files`' listing of the same paths. Never raises. O(operators +
    files listed)."""
    try:
        from ray.data._internal.logical.operators.read_operator import Read, ReadFiles

        plan = getattr(ds, "_logical_plan", None)
        under = _projections(getattr(plan, "dag", None))
        if under is None:
            return None
        op, kept = under
        found = (_read_files(op, kept) if type(op) is ReadFiles
                 else _read_v1(ds, op, kept) if type(op) is Read else None)
        if found is None:
            return None
        files, paths, columns = found
        listed = parquet_reads.parquet_files(paths)
        if (not files or listed is None or not parquet_reads.is_local(listed[0])
                or sorted(listed[1]) != sorted(files) or len(set(files)) != len(files)):
            return None
        return Source(sorted(files), columns)
    except Exception:  # a Ray release whose plan objects differ: not recognised
        return None
