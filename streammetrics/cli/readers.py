"""Streaming readers for ``streammetrics evaluate``: CSV (plain or compressed), Parquet, JSON Lines.

Every reader yields ``pyarrow.RecordBatch`` objects of at most about ``batch_size`` rows restricted to
the requested columns, so the memory held is one batch (plus pyarrow's read-ahead buffer),
whatever the file size. Several files, directories (every supported file inside, recursively,
sorted) and glob patterns form one stream, in the order given. pyarrow is imported lazily by the caller
(:mod:`streammetrics.cli.evaluate`), never at import time of the core library.
"""

from __future__ import annotations

import glob
import os
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from .errors import InputError
from .jsondepth import check_depth

__all__ = ["Source", "expand_inputs", "format_of", "open_source", "original_value"]

#: Bytes per CSV / JSON Lines block: pyarrow's streaming readers keep a few dozen blocks read
#: ahead (measured: ~34 blocks), so this sets their memory (~17 MB) against the per-batch cost.
_BLOCK = 1 << 19
_CSV = (".csv", ".tsv", ".txt")
_PARQUET = (".parquet", ".pq", ".parq")
_JSONL = (".jsonl", ".ndjson", ".json")
_COMPRESSED = (".gz", ".bz2", ".zst", ".lz4")


def format_of(path: str) -> str | None:
    """``"csv"``, ``"parquet"`` or ``"jsonl"`` from the file name (a compression suffix is skipped).

    Parameters
    ----------
    path : str
        A file name.

    Returns
    -------
    str or None
        The format, or None for an unknown suffix.
    """
    name = path.lower()
    for suffix in _COMPRESSED:
        if name.endswith(suffix):
            name = name[: -len(suffix)]
            break
    if name.endswith(_CSV):
        return "csv"
    if name.endswith(_PARQUET):
        return "parquet"
    if name.endswith(_JSONL):
        return "jsonl"
    return None


def expand_inputs(items: Sequence[str]) -> list[str]:
    """Files from paths, directories (their supported files, recursively, sorted) and glob patterns.

    Parameters
    ----------
    items : sequence of str
        The ``FILE`` arguments.

    Returns
    -------
    list of str
        The files, in the order given (a directory's or pattern's sorted).

    Raises
    ------
    InputError
        Exit status 2 for a path that does not exist, a pattern that matches nothing, an empty
        directory, standard input (``-``) or a file of an unknown format.
    """
    out: list[str] = []
    for item in items:
        if item == "-":
            raise InputError("-: standard input is not supported (evaluate reads its input more than "
                             "once: the schema, then the stream); save it to a file", 2)
        if not item.strip():
            raise InputError(f"{item!r}: an empty file name", 2)
        item = os.path.expanduser(item)
        if os.path.isdir(item):
            found = _walk(item)
            if not found:
                raise InputError(f"{item}: directory holds no CSV, Parquet or JSON Lines file", 2)
            out.extend(found)
        elif os.path.exists(item):
            out.append(item)
        elif glob.has_magic(item):
            found = sorted(glob.glob(item, recursive=True))
            found = [f for f in found if os.path.isfile(f)]
            if not found:
                raise InputError(f"{item}: no file matches this pattern", 2)
            out.extend(found)
        else:
            raise InputError(f"{item}: no such file or directory", 2)
    for path in out:
        if format_of(path) is None:
            raise InputError(
                f"{path}: unknown format (expected .csv, .parquet or .jsonl, optionally "
                ".gz/.bz2/.zst compressed)",
                2,
            )
    return out


def _walk(top: str) -> list[str]:
    """Supported files under ``top``, recursively (partitioned datasets such as
    ``preds/day=2024-01-01/part-0.parquet``), sorted by path; names starting with ``.`` or ``_``
    (``_SUCCESS``, ``.part-0.crc``, hidden directories) are skipped, as Spark and Hive do."""
    found: list[str] = []
    for root, dirs, files in os.walk(top):
        dirs[:] = [d for d in dirs if not d.startswith((".", "_"))]
        found.extend(os.path.join(root, f) for f in files
                     if not f.startswith((".", "_")) and format_of(f) is not None)
    return sorted(found)


@dataclass
class Source:
    """One opened input: its column names, its row count when known, and a batch iterator.

    Parameters
    ----------
    path : str
        The file.
    columns : list of str
        Every column name of the file.
    num_rows : int or None
        Its row count when known (Parquet footers; an empty file: 0).
    batches : iterator of pyarrow.RecordBatch
        The batches of the requested columns.
    """

    path: str
    columns: list[str]
    num_rows: int | None
    batches: Iterator[Any]


def _delimiter(path: str) -> str:
    """Tab for ``.tsv`` (also compressed), else comma."""
    name = path.lower()
    for suffix in _COMPRESSED:
        name = name.removesuffix(suffix)
    return "\t" if name.endswith(".tsv") else ","


def _comment_lines(path: str) -> int:
    """Number of leading lines starting with ``#`` (skipped before the CSV header)."""
    import pyarrow as pa

    n = 0
    with pa.input_stream(path, compression="detect") as fh:
        head = fh.read(1 << 16)
    for line in head.split(b"\n"):
        if not line.startswith(b"#"):
            break
        n += 1
    return n


def open_source(
    path: str,
    wanted: Sequence[str],
    batch_size: int,
    float_columns: Sequence[str] = (),
    list_columns: Sequence[str] = (),
) -> Source:
    """Open ``path`` for streaming the columns ``wanted`` (after checking they exist).

    ``float_columns`` are read as float64 (CSV: converted while parsing, so a non-numeric value is
    an error); ``list_columns`` (JSON Lines) as lists of float64. pyarrow's JSON reader infers the
    types from the first block, so without the declaration a column holding only whole numbers
    there (0, 1, or ``[1, 0, 0]``) becomes int64 and a later 0.5 fails.

    Parameters
    ----------
    path : str
        A CSV, Parquet or JSON Lines file.
    wanted : sequence of str
        The columns to read.
    batch_size : int
        Rows per batch (at most).
    float_columns : sequence of str, default ()
        Columns read as float64.
    list_columns : sequence of str, default ()
        JSON Lines columns read as lists of float64.

    Returns
    -------
    Source
        The opened input; reading errors while streaming are data errors naming the file.

    Raises
    ------
    InputError
        Exit status 2 for a missing column (listing the available ones), 1 for a file pyarrow
        cannot read.
    """
    import pyarrow as pa

    fmt = format_of(path)
    if fmt != "parquet" and _is_empty(path):
        return Source(path, [], 0, iter(()))  # an empty CSV / JSON Lines file: no rows
    if fmt == "jsonl":
        _check_depth_once(path)
    try:
        if fmt == "parquet":
            import pyarrow.parquet as pq

            # no pre-buffering: pyarrow would otherwise read ahead (and keep) the column chunks
            # of many row groups, so memory would grow with the file
            pf = pq.ParquetFile(path, pre_buffer=False, buffer_size=1 << 20)
            names = list(pf.schema_arrow.names)
            _check_columns(path, names, wanted)
            return Source(path, names, pf.metadata.num_rows,
                          _guarded(path, pf.iter_batches(batch_size=batch_size, columns=list(wanted)),
                                   float_columns))
        if fmt == "csv":
            import pyarrow.csv as pcsv

            delimiter = _delimiter(path)
            read = pcsv.ReadOptions(skip_rows=_comment_lines(path), block_size=_BLOCK)
            parse = pcsv.ParseOptions(delimiter=delimiter)
            header = pcsv.open_csv(pa.input_stream(path, compression="detect"), read_options=read,
                                   parse_options=parse)
            names = list(header.schema.names)
            header.close()
            _check_columns(path, names, wanted)
            convert = pcsv.ConvertOptions(
                include_columns=list(wanted),
                column_types={c: pa.float64() for c in float_columns},
            )
            reader = pcsv.open_csv(pa.input_stream(path, compression="detect"), read_options=read,
                                   parse_options=parse, convert_options=convert)
            return Source(path, names, None, _guarded(path, _rebatch(reader, batch_size), float_columns))
        if fmt == "jsonl":
            import pyarrow.json as pjson

            stream = pa.input_stream(path, compression="detect")
            # numeric columns declared float64: inferred from the first block, a column of whole
            # numbers there (0, 1) would become int64 and a later 0.5 an error
            declared = [(c, pa.float64()) for c in float_columns]
            declared += [(c, pa.list_(pa.float64())) for c in list_columns if c not in float_columns]
            parse = pjson.ParseOptions(explicit_schema=pa.schema(declared),
                                       unexpected_field_behavior="infer")
            reader = pjson.open_json(stream, read_options=pjson.ReadOptions(block_size=_BLOCK),
                                     parse_options=parse)
            names = list(reader.schema.names)
            _check_columns(path, names, wanted)
            batches = _select(reader, wanted, batch_size)
            return Source(path, names, None, _guarded(path, batches, float_columns))
    except InputError:
        raise
    except UnicodeDecodeError as exc:  # pyarrow decodes the column names with Python's codec
        raise InputError(f"{path}: the header is not valid UTF-8 (byte 0x{exc.object[exc.start]:02x} "
                         f"at position {exc.start + 1} of a column name)", 1) from None
    except (pa.ArrowException, OSError) as exc:
        if fmt == "csv" and "conversion error" in str(exc):
            raise _conversion_error(path, float_columns, str(exc)) from None
        if fmt == "csv" and "Expected" in str(exc):
            raise _parse_error(path, str(exc)) from None
        raise InputError(f"{path}: cannot read as {fmt}: {_json_rows(str(exc), 0)}", 1) from None
    raise InputError(f"{path}: unknown format", 2)


_DEPTH_CHECKED: set[tuple[str, int, int]] = set()


def _check_depth_once(path: str) -> None:
    """:func:`check_depth` once per file version (the CLI opens a file more than once)."""
    try:
        st = os.stat(path)
    except OSError:
        return  # the reader reports it
    key = (os.path.abspath(path), st.st_size, st.st_mtime_ns)
    if key not in _DEPTH_CHECKED:
        check_depth(path)
        _DEPTH_CHECKED.add(key)


def _is_empty(path: str) -> bool:
    """True for a file of 0 bytes, or a compressed one (``.gz``, ...) that decompresses to 0
    bytes; False when it cannot be read (the reader then reports why). O(1)."""
    import pyarrow as pa

    if not os.path.isfile(path):
        return False
    if os.path.getsize(path) == 0:
        return True
    try:
        with pa.input_stream(path, compression="detect") as stream:
            return not stream.read(1)
    except (pa.ArrowException, OSError):
        return False


def _json_rows(message: str, offset: int) -> str:
    """pyarrow's JSON errors say ``in row N`` counting from 0 within the failing block; blocks are
    consumed whole and in order, so the file row (from 1) is ``offset + N + 1`` with ``offset``
    the rows read before."""
    return re.sub(r"\bin row (\d+)", lambda m: f"in row {offset + int(m.group(1)) + 1}", message)


def _check_columns(path: str, names: Sequence[str], wanted: Sequence[str]) -> None:
    twice = [c for c in wanted if names.count(c) > 1]
    if twice:
        raise InputError(f"{path}: column {twice[0]!r} appears {names.count(twice[0])} times in the header; "
                         "rename the copies", 1)
    missing = [c for c in wanted if c not in names]
    if missing:
        raise InputError(
            f"{path}: no column {', '.join(repr(m) for m in missing)}; available columns: "
            + ", ".join(names),
            2,
        )


def _guarded(path: str, batches: Iterator[Any], float_columns: Sequence[str]) -> Iterator[Any]:
    """``batches`` with the reader's errors while streaming as data errors naming the file (and the
    row where pyarrow tells it)."""
    import pyarrow as pa

    fmt = format_of(path)
    offset = 0
    try:
        for batch in batches:
            yield batch
            offset += batch.num_rows
    except UnicodeDecodeError as exc:
        raise InputError(f"{path}: not valid UTF-8 (byte 0x{exc.object[exc.start]:02x})", 1) from None
    except (pa.ArrowException, OSError) as exc:
        msg = str(exc)
        if fmt == "csv" and "conversion error" in msg and float_columns:
            raise _conversion_error(path, float_columns, msg) from None
        if fmt == "csv" and "Expected" in msg:
            raise _parse_error(path, msg) from None
        # JSON Lines: pyarrow counts rows within the failing block, which follows the rows
        # already yielded (blocks are consumed whole, in order)
        raise InputError(f"{path}: cannot read as {fmt}: {_json_rows(msg, offset)}", 1) from None


def _rebatch(reader: Any, batch_size: int) -> Iterator[Any]:
    for batch in reader:
        for start in range(0, batch.num_rows, batch_size):
            yield batch.slice(start, batch_size)


def _select(reader: Any, wanted: Sequence[str], batch_size: int) -> Iterator[Any]:
    for batch in reader:
        batch = batch.select(list(wanted))
        for start in range(0, batch.num_rows, batch_size):
            yield batch.slice(start, batch_size)


def _locate_bad_number(path: str, column: str) -> tuple[int, str | bytes] | None:
    """Re-read a CSV column as text to find the first value that is not a number: (row, value),
    the row counted from 1 over the data rows. Used only after a conversion error."""
    import pyarrow as pa
    import pyarrow.csv as pcsv

    read = pcsv.ReadOptions(skip_rows=_comment_lines(path), block_size=_BLOCK)
    # read as bytes: a value that is not UTF-8 is not a number either (and must not fail the search)
    convert = pcsv.ConvertOptions(include_columns=[column], column_types={column: pa.binary()})
    delimiter = _delimiter(path)
    reader = pcsv.open_csv(pa.input_stream(path, compression="detect"), read_options=read,
                           parse_options=pcsv.ParseOptions(delimiter=delimiter), convert_options=convert)
    row = 0
    for batch in reader:
        for value in batch.column(0).to_pylist():
            row += 1
            if value is None or not value.strip():
                return row, ""
            try:
                float(value)
            except ValueError:
                try:
                    return row, value.decode("utf-8")
                except UnicodeDecodeError:
                    return row, value  # shown as bytes
    return None


def _conversion_error(path: str, columns: Sequence[str], message: str) -> InputError:
    """The data error for a CSV value that is not a number, naming the file, row and column."""
    import pyarrow as pa

    for col in columns:
        try:
            found = _locate_bad_number(path, col)
        except (pa.ArrowException, OSError):
            break
        if found:
            row, value = found
            what = "is missing" if value == "" else f"{value!r} is not a number"
            return InputError(f"{path}: row {row}: column {col!r}: {what}", 1)
    return InputError(f"{path}: cannot read: {message}", 1)


_FIELDS = re.compile(r"Expected (\d+) columns, got (\d+)")


def _parse_error(path: str, message: str) -> InputError:
    """The data error for a CSV row with the wrong number of fields: pyarrow's message names the
    counts and the text but not the row, so the file is re-read (only after the error) with the
    ``csv`` module to find it: ``row R (line L): expected N fields, got M``. Rows count from 1 over
    the data rows, lines from 1 over the file (quoted fields may span lines)."""
    import csv
    import io

    import pyarrow as pa

    m = _FIELDS.search(message)
    if m is None:
        return InputError(f"{path}: cannot read: {message}", 1)
    want = int(m.group(1))
    skip = _comment_lines(path)
    with pa.input_stream(path, compression="detect") as raw:
        text = io.TextIOWrapper(raw, encoding="utf-8", errors="replace", newline="")
        for _ in range(skip):
            text.readline()
        reader = csv.reader(text, delimiter=_delimiter(path))
        next(reader, None)  # the header
        for row, fields in enumerate(reader, start=1):
            if len(fields) != want and fields:
                shown = _delimiter(path).join(fields)
                shown = shown if len(shown) <= 80 else shown[:77] + "..."
                return InputError(f"{path}: row {row} (line {reader.line_num + skip}): expected {want} "
                                  f"fields (the header's), got {len(fields)}: {shown}", 1)
    return InputError(f"{path}: cannot read: {message}", 1)


def original_value(path: str, column: str, row: int) -> str | None:
    """The text of ``column`` at data row ``row`` (from 1) as written in a CSV or JSON Lines file --
    for messages about numbers a float cannot hold exactly (``99999999999999999999999``); None for
    other formats or when it cannot be found. Only used on the error path: re-reads the file.

    Parameters
    ----------
    path : str
        The file.
    column : str
        The column.
    row : int
        The data row, from 1.

    Returns
    -------
    str or None
        The value's text, or None.
    """
    import json

    import pyarrow as pa

    fmt = format_of(path)
    try:
        if fmt == "csv":
            import pyarrow.csv as pcsv

            read = pcsv.ReadOptions(skip_rows=_comment_lines(path), block_size=_BLOCK)
            convert = pcsv.ConvertOptions(include_columns=[column], column_types={column: pa.string()})
            reader = pcsv.open_csv(pa.input_stream(path, compression="detect"), read_options=read,
                                   parse_options=pcsv.ParseOptions(delimiter=_delimiter(path)),
                                   convert_options=convert)
            seen = 0
            for batch in reader:
                if seen + batch.num_rows >= row:
                    value = batch.column(0)[row - seen - 1].as_py()
                    return None if value is None else str(value).strip()
                seen += batch.num_rows
        elif fmt == "jsonl":
            seen = 0
            import io

            with pa.input_stream(path, compression="detect") as raw:
                for line in io.BufferedReader(raw):  # type: ignore[arg-type]
                    if line.strip():
                        seen += 1
                        if seen == row:
                            value = json.loads(line, parse_float=str, parse_int=str).get(column)
                            return None if value is None else str(value)
    except (pa.ArrowException, OSError, ValueError, AttributeError, RecursionError):
        return None
    return None
