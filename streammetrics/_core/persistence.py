"""Saving and loading accumulators: a versioned, checksummed, pickle-free file format.

Layout (all integers little-endian)::

    8 bytes   magic  b"SMSTATE\\x00"
    32 bytes  SHA-256 of everything after it
    8 bytes   header length H
    H bytes   header: UTF-8 JSON {"file_version", "class", "format_version", "config",
              "scalars", "arrays": [{"name", "dtype", "shape", "offset", "nbytes"}, ...]}
    ...       the arrays' raw bytes, C order, at the offsets the header gives

Loading never unpickles anything: the header is JSON, arrays are rebuilt with ``np.frombuffer``
from an allow-list of plain numeric dtypes, and the state is then validated by the metric class
like any untrusted input. A checksum is not authentication (anyone can edit a file and recompute
it), so a file is treated as hostile: anything malformed -- wrong types or nesting in the header,
sizes the arrays do not carry, counts or weights that no stream produces -- raises ``ValueError``
saying what, and loading takes time and memory bounded by the file's size (a configuration that
implies more state than ``AMPLIFICATION`` x the file's bytes + ``ALLOWANCE`` is refused before
anything is allocated: see :mod:`streammetrics._core.load_checks`). ``load``/``loads`` also refuse
inputs over ``max_bytes`` (default 1 GiB; None = no limit) before reading them.

Versions: this library writes and reads file version 1 (the format of streammetrics 0.1.0);
a file of a later version is refused with a message saying to upgrade.

Saving writes a temporary file ``.<name>.<pid>-<random>.tmp`` in the target directory, fsyncs it
and renames it over the target, so a crash mid-save leaves the previous file intact; the next
``save`` to that target removes the temporary files of killed writers
(:func:`remove_stale_temps`).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import tempfile
import time
from collections.abc import Mapping
from glob import escape as glob_escape
from pathlib import Path
from typing import Any

import numpy as np

from .load_checks import MAX_DEPTH, check_version, json_depth, load_budget
from .metric import RESERVED_KEYS, Metric
from .params import Param, check_accumulator, check_param

MAGIC = b"SMSTATE\x00"
FILE_VERSION = 1
_DIGEST = 32
_PREFIX = len(MAGIC) + _DIGEST + 8
_HEADER_KEYS = frozenset({"file_version", "class", "format_version", "config", "scalars", "arrays"})
_DTYPES = {
    np.dtype(t).str: np.dtype(t)
    for t in ("<f8", "<f4", "<f2", "<i8", "<i4", "<i2", "|i1", "<u8", "<u4", "<u2", "|u1", "|b1")
}


def _encode(state: Mapping[str, Any]) -> tuple[bytes, list[memoryview]]:
    """The header (JSON bytes) and each array's raw little-endian C-order bytes, as views of
    the arrays (no copy of an array that already is C-contiguous and little-endian: the state's
    arrays are its own copies, and :func:`dumps` joins the views into the file's bytes). O(state
    size)."""
    arrays: list[dict[str, Any]] = []
    chunks: list[memoryview] = []
    scalars: dict[str, Any] = {}
    offset = 0
    for key, value in state.items():
        if key in ("class", "format_version", "config"):
            continue
        if isinstance(value, np.ndarray):
            arr = np.asarray(value, order="C")  # keeps 0-d shapes (ascontiguousarray makes them 1-d)
            dt = arr.dtype.newbyteorder("<") if arr.dtype.byteorder == ">" else arr.dtype
            if dt.str not in _DTYPES:
                raise ValueError(f"save: array {key!r} has unsupported dtype {arr.dtype}")
            data = arr.astype(dt, copy=False).reshape(-1).view(np.uint8).data
            arrays.append(
                {"name": key, "dtype": dt.str, "shape": list(arr.shape), "offset": offset,
                 "nbytes": len(data)}
            )
            chunks.append(data)
            offset += len(data)
        elif value is None or isinstance(value, (bool, int, float, str)):
            scalars[key] = value
        elif isinstance(value, (np.integer, np.floating, np.bool_)):
            scalars[key] = value.item()
        else:
            raise ValueError(f"save: state entry {key!r} of type {type(value).__name__} is not storable")
    header = {
        "file_version": FILE_VERSION,
        "class": state["class"],
        "format_version": state["format_version"],
        "config": state["config"],
        "scalars": scalars,
        "arrays": arrays,
    }
    return json.dumps(header, separators=(",", ":")).encode("utf-8"), chunks


def dumps(metric: Metric) -> bytes:
    """The file-format bytes of ``metric`` (see the module docstring). O(state size).

    Parameters
    ----------
    metric : Metric or MetricSet
        Any accumulator.

    Returns
    -------
    bytes
        What :func:`save` writes and :func:`loads` reads back.

    Examples
    --------
    >>> import streammetrics as sm
    >>> m = sm.Accuracy().update([0, 1, 1], [0, 1, 0])
    >>> sm.loads(sm.dumps(m)).compute() == m.compute()
    True
    """
    header, chunks = _encode(metric.state_dict())
    body: list[bytes | memoryview] = [len(header).to_bytes(8, "little"), header, *chunks]
    digest = hashlib.sha256()
    for part in body:
        digest.update(part)
    return b"".join([MAGIC, digest.digest(), *body])


def save(metric: Metric, path: str | os.PathLike[str]) -> None:
    """Write ``metric`` (any accumulator or MetricSet) to ``path`` atomically.

    The bytes go to a temporary file beside ``path`` (``.<name>.<pid>-<random>.tmp``), are
    flushed to disk, and the temporary file is renamed over ``path``: readers see the old file or
    the new one, never a partial one. A process killed between the two leaves its temporary
    file behind; every ``save`` to the same ``path`` first removes such leftovers (see
    :func:`remove_stale_temps`). O(state size).

    Parameters
    ----------
    metric : Metric or MetricSet
        Any accumulator.
    path : str or os.PathLike
        The file to write (replaced if it exists).

    Returns
    -------
    None

    Examples
    --------
    >>> import os, tempfile
    >>> import streammetrics as sm
    >>> path = os.path.join(tempfile.mkdtemp(), "acc.sm")
    >>> sm.save(sm.Accuracy().update([0, 1, 1], [0, 1, 0]), path)
    >>> round(sm.load(path).compute(), 4)
    0.6667
    """
    check_accumulator(metric)
    target = Path(path)
    data = dumps(metric)
    remove_stale_temps(target)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.{os.getpid()}-", suffix=".tmp",
                               dir=target.parent or ".")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    try:  # make the rename itself durable
        dir_fd = os.open(target.parent or ".", os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)
    except OSError:
        pass


#: Largest JSON header accepted (bytes): parsed JSON takes many times its size in memory, and a
#: valid header only holds the configuration (say a grid of a million thresholds: ~20 MB).
MAX_HEADER = 64 * 2**20
#: Default size limit of :func:`load` / :func:`loads` (bytes): 1 GiB.
DEFAULT_MAX_BYTES = 2**30


_MAX_BYTES = Param("int", "must be an int >= 1 or None", low=1, optional=True)


#: A leftover temporary file is removed once its writer is gone and it is this old (seconds) ...
STALE_SECONDS = 60.0
#: ... or, whoever wrote it (a pid of another host, a name without a pid), this old.
ABANDONED_SECONDS = 24 * 3600.0


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError, ValueError, OSError):
        return True  # exists (owned by someone else), or cannot tell: keep its file
    return True


def remove_stale_temps(path: str | os.PathLike[str], *, now: float | None = None) -> list[Path]:
    """Remove the temporary files that killed saves to ``path`` left behind; returns them.

    A file ``.<name>.<pid>-<random>.tmp`` beside ``path`` is stale when its writer's process
    no longer exists and it was last modified more than ``STALE_SECONDS`` ago, or in any case
    after ``ABANDONED_SECONDS`` (a writer on another host, or a name from streammetrics 0.1.0,
    ``.<name>.<random>.tmp``). A save in progress is never touched. O(files in the directory).
    """
    target = Path(path)
    parent = target.parent if str(target.parent) else Path(".")
    now = time.time() if now is None else now
    removed = []
    for tmp in parent.glob(f".{glob_escape(target.name)}.*.tmp"):
        middle = tmp.name[len(target.name) + 2 : -len(".tmp")]
        pid_text, dash, _ = middle.partition("-")
        try:
            age = now - tmp.stat().st_mtime
        except OSError:
            continue
        writer_gone = bool(dash) and pid_text.isdigit() and not _pid_alive(int(pid_text))
        if (writer_gone and age > STALE_SECONDS) or age > ABANDONED_SECONDS:
            with contextlib.suppress(OSError):
                tmp.unlink()
                removed.append(tmp)
    return removed


def loads(data: bytes, source: str = "data", *, max_bytes: int | None = DEFAULT_MAX_BYTES) -> Metric:
    """Rebuild an accumulator from :func:`dumps` bytes, validating everything.

    The bytes are hostile input: anything malformed (even with a recomputed checksum) is a
    ``ValueError`` saying what; the memory used is bounded by the size of ``data`` (a state
    never allocates more than a small multiple of the bytes it carries, see
    :mod:`streammetrics._core.load_checks`). ``max_bytes`` (default 1 GiB, None = no limit) refuses
    larger inputs before anything is parsed. O(len(data)) (O(n log n) for sorted buffers).

    Parameters
    ----------
    data : bytes
        What :func:`dumps` wrote.
    source : str, default "data"
        How error messages name the input.
    max_bytes : int or None, default 1 GiB
        Larger inputs are refused before parsing; None: no limit.

    Returns
    -------
    Metric or MetricSet
        The accumulator, as it was dumped.

    Raises
    ------
    ValueError
        Malformed, truncated, foreign, oversized or unknown-version bytes.

    Examples
    --------
    >>> import streammetrics as sm
    >>> data = sm.dumps(sm.MAP().update([1, 0], [0.9, 0.1]))
    >>> sm.loads(data).compute()
    1.0
    """
    limit = check_param(max_bytes, "max_bytes", _MAX_BYTES)
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise ValueError(f"load: {source} must be bytes, got {type(data).__name__}")
    if limit is not None and len(data) > limit:
        raise ValueError(
            f"load: {source} is {len(data)} bytes, more than max_bytes={limit} "
            "(pass a larger max_bytes, or None, to load it)"
        )
    if len(data) == 0:
        raise ValueError(f"load: {source} is empty, not a streammetrics state file")
    head = bytes(data[: len(MAGIC)])
    if not MAGIC.startswith(head):
        raise ValueError(f"load: {source} is not a streammetrics state file (bad magic bytes)")
    if len(data) < _PREFIX:
        raise ValueError(f"load: {source} is truncated ({len(data)} bytes)")
    digest = data[len(MAGIC) : len(MAGIC) + _DIGEST]
    body = memoryview(data)[len(MAGIC) + _DIGEST :]
    header_len = int.from_bytes(body[:8], "little")
    if 8 + header_len > len(body):
        raise ValueError(f"load: {source} is truncated (header needs {header_len} bytes)")
    if header_len > MAX_HEADER:
        raise ValueError(f"load: {source} has a corrupted header ({header_len} bytes, at most "
                         f"{MAX_HEADER}: a header describes arrays, it does not hold them)")
    if hashlib.sha256(body).digest() != digest:
        raise ValueError(f"load: {source} failed its checksum (corrupted or truncated)")
    raw = bytes(body[8 : 8 + header_len])
    depth = json_depth(raw)
    if depth > MAX_DEPTH:
        raise ValueError(
            f"load: {source} has a corrupted header (JSON nested {depth} deep, at most {MAX_DEPTH})"
        )
    try:
        header = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:  # incl. JSONDecodeError
        raise ValueError(f"load: {source} has a corrupted header ({exc})") from None
    if not isinstance(header, dict):
        raise ValueError(f"load: {source} has a corrupted header (not an object)")
    version = header.get("file_version")
    check_version(version, FILE_VERSION, f"load: {source} has unknown file format version")
    unknown = set(header) - _HEADER_KEYS
    if unknown:
        raise ValueError(f"load: {source} has a corrupted header (unknown keys {sorted(unknown)})")
    payload = body[8 + header_len :]
    state: dict[str, Any] = {
        "class": header.get("class"),
        "format_version": header.get("format_version"),
        "config": header.get("config"),
    }
    scalars = header.get("scalars", {})
    arrays = header.get("arrays", [])
    if not isinstance(scalars, dict) or not isinstance(arrays, list):
        raise ValueError(f"load: {source} has a corrupted header (scalars must be an object, "
                         "arrays a list)")
    for key, value in scalars.items():
        if not (value is None or isinstance(value, (bool, int, float, str))):
            raise ValueError(f"load: {source} has a non-scalar entry {key!r}")
        if key in RESERVED_KEYS:
            raise ValueError(f"load: {source} has a scalar named {key!r} (a reserved name)")
        state[key] = value
    regions = []
    for spec in arrays:
        name = _array_name(spec, source)
        if name in state:
            raise ValueError(f"load: {source} has two entries named {name!r}")
        state[name] = _read_array(spec, payload, source)
        regions.append((spec["offset"], spec["offset"] + spec["nbytes"], name))
    # arrays may not share bytes: a few bytes described by many entries would load as many copies
    regions.sort()
    for (_, end, first), (start, _, second) in zip(regions, regions[1:], strict=False):
        if start < end:
            raise ValueError(f"load: {source}: arrays {first!r} and {second!r} overlap (corrupted)")
    with load_budget(len(data)):
        return Metric.from_state_dict(state)


def _array_name(spec: Any, source: str) -> str:
    if not isinstance(spec, dict):
        raise ValueError(
            f"load: {source} has a corrupted array entry (an object with a name, got "
            f"{type(spec).__name__})"
        )
    name = spec.get("name")
    if not isinstance(name, str):
        raise ValueError(f"load: {source} has a corrupted array entry (name {name!r} is not a string)")
    if name in RESERVED_KEYS:
        raise ValueError(f"load: {source} has an array named {name!r} (a reserved name)")
    unknown = set(spec) - {"name", "dtype", "shape", "offset", "nbytes"}
    if unknown:
        raise ValueError(f"load: {source}: array {name!r} has unknown fields {sorted(unknown)}")
    return name


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _read_array(spec: dict[str, Any], payload: memoryview, source: str) -> np.ndarray:
    name = spec["name"]
    dt = spec.get("dtype")
    dtype = _DTYPES.get(dt) if isinstance(dt, str) else None
    shape = spec.get("shape")
    offset, nbytes = spec.get("offset"), spec.get("nbytes")
    if dtype is None:
        raise ValueError(f"load: {source}: array {name!r} has a disallowed dtype {dt!r}")
    if not (
        isinstance(shape, list)
        and len(shape) <= 32
        and all(_is_int(d) and d >= 0 for d in shape)
        and isinstance(offset, int) and not isinstance(offset, bool)
        and isinstance(nbytes, int) and not isinstance(nbytes, bool)
        and offset >= 0
    ):
        raise ValueError(f"load: {source}: array {name!r} has a corrupted description")
    count = 1
    for d in shape:  # Python ints: no int64 overflow on hostile shapes
        count *= d
    if count * dtype.itemsize != nbytes or offset + nbytes > len(payload):
        raise ValueError(f"load: {source}: array {name!r} does not fit the file (corrupted)")
    return np.frombuffer(payload[offset : offset + nbytes], dtype=dtype).reshape(shape).copy()


def load(path: str | os.PathLike[str], *, max_bytes: int | None = DEFAULT_MAX_BYTES) -> Metric:
    """Load an accumulator or MetricSet written by :func:`save`. O(file size).

    The file is hostile input (see :func:`loads`). ``max_bytes`` (default 1 GiB; None = no
    limit) refuses a larger file before reading it. Raises ``ValueError`` for an empty,
    truncated, corrupted, foreign, oversized, malformed or unknown-version file.

    Parameters
    ----------
    path : str or os.PathLike
        A file written by :func:`save`.
    max_bytes : int or None, default 1 GiB
        A larger file is refused before it is read; None: no limit.

    Returns
    -------
    Metric or MetricSet
        The accumulator, as it was saved (see :func:`save` for an example).

    Raises
    ------
    ValueError
        An empty, truncated, corrupted, foreign, oversized, malformed or unknown-version file.
    """
    limit = check_param(max_bytes, "max_bytes", _MAX_BYTES)
    target = Path(path)
    with open(target, "rb") as fh:
        size = os.fstat(fh.fileno()).st_size
        if limit is not None and size > limit:
            raise ValueError(
                f"load: file {str(target)!r} is {size} bytes, more than max_bytes={limit} "
                "(pass a larger max_bytes, or None, to load it)"
            )
        data = fh.read() if limit is None else fh.read(limit + 1)
    return loads(data, source=f"file {str(target)!r}", max_bytes=limit)
