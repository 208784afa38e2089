"""The saved state of one key and event-time window of :func:`streammetrics.spark_streaming.evaluate_stream`.

Both of Spark's state APIs keep, per key and window, *saved parts*: bytes, each with the rows
fed and the rows skipped. :class:`Fold` makes a part of a micro-batch's rows, merges parts, and
computes a window's output rows from its parts; :class:`ValueStep` is the function
``applyInPandasWithState`` runs (one part per window, rewritten at each micro-batch that adds to
it); :mod:`streammetrics._engines.spark_stream_list` the processor ``transformWithStateInPandas``
runs (a list of parts, one appended per micro-batch).

What a part holds depends on the metrics' family:

* classification, ranking and regression metrics: the metrics' own saved form, the bytes
  :func:`streammetrics.save` writes (versioned, checksummed, validated when read back);
* retrieval metrics: the rows themselves (query id, document id, relevance and score columns,
  a ``numpy`` ``.npz`` archive read back without pickle, every array checked), because a query's
  documents may arrive over several micro-batches and a retrieval measure folds in each query
  whole. A window's queries are fed to the measures when its values are computed: each query
  made of all its rows in the window (see :meth:`Fold.accumulator`). A micro-batch's rows are
  checked before they are saved (:meth:`Fold.check_rows`: duplicate documents within the
  micro-batch or against the window's saved rows, values, each touched query fed whole), so a
  window's saved rows always compute.

Parts merge exactly: metric states by the metrics' own ``merge``, retrieval rows by
concatenation; so any grouping of a window's micro-batches into parts gives the same values.
"""

from __future__ import annotations

import contextlib
import io
import re
import warnings
import zipfile
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

import numpy as np

from streammetrics._core.metric import Metric, trusted_states
from streammetrics._engines.plan import (
    Plan,
    column,
    drop_nulls,
    empty_set,
    feed,
    ids,
    merged,
    state_from_bytes,
    state_to_bytes,
)
from streammetrics._engines.request import Run, values_table
from streammetrics._queries.batch import check_batch
from streammetrics.wrappers.metricset import MetricSet

#: The schema of one saved part in Spark's state store.
PART_SCHEMA = "state binary, rows long, skipped long"
START, END = "window_start", "window_end"
#: A window's bounds as epoch microseconds (grouping columns; the output's timestamps come from them).
START_US, END_US = "__streammetrics_window_start_us__", "__streammetrics_window_end_us__"

Part = tuple[bytes, int, int]


def timer_ms(end_us: int) -> int:
    """The event-time timer (ms) closing a window that ends at ``end_us`` (exclusive): the first
    millisecond at or after its end, so every row of the window has event time before it."""
    return -(-int(end_us) // 1000)


class Fold:
    """How the rows of one key and window become saved parts, and parts its output rows.

    Picklable: the run's plan and result shape, and the output layout only.

    Parameters
    ----------
    run : Run
        The checked request (its plan and result shape).
    metrics : MetricSet, Metric or mapping
        The user's ``metrics`` argument (a single metric's rows are named after its class).
    keys : list of str
        The ``by=`` key columns (the first columns of the output).
    """

    def __init__(self, run: Run, metrics: Any, keys: list[str]) -> None:
        self.run = run
        self.plan: Plan = run.plan
        self.single = (type(metrics).__name__ if isinstance(metrics, Metric)
                       and not isinstance(metrics, MetricSet) else None)
        self.keys = keys
        self.rows_kept = run.plan.family == "retrieval"

    # -- parts ---------------------------------------------------------------------------------
    def absorb(self, saved: bytes | None, frames: Iterable[Any], where: str,
               earlier: Sequence[bytes] = ()) -> Part:
        """One part: ``saved`` (a part read back, or None) with the rows of ``frames`` (pandas
        DataFrames) added, as ``(bytes, rows fed, rows skipped)`` -- the counts of the new rows.

        Retrieval rows are checked before anything is kept (:meth:`check_rows`): against the
        window's rows saved in ``saved`` and in ``earlier`` (the window's other saved parts, a
        list state's), so that an accepted micro-batch always leaves a window that computes.

        Complexity: O(new rows), plus O(saved) to read ``saved`` back and write the result; for
        retrieval, plus O(saved + earlier) to read the window's saved rows and the ranking of
        the queries the new rows touch.

        Raises
        ------
        ValueError
            A null in a used column (``nulls="error"``, the row named with ``where``); a retrieval
            row the metrics refuse (see :meth:`check_rows`); ``saved`` malformed. Nothing is
            returned then: the caller saves nothing.
        """
        rows = skipped = 0
        if self.rows_kept:
            held = [] if saved is None else [self.rows_of(saved)]
            new, positions = [], []
            offset = 0
            for frame in frames:
                if len(frame):
                    pos = "__streammetrics_row__"
                    kept, dropped = drop_nulls(frame.assign(**{pos: offset + np.arange(len(frame))}),
                                               self.plan, where)
                    offset += len(frame)
                    rows += len(kept)
                    skipped += dropped
                    new.append(kept[self.plan.columns()])
                    positions.append(kept[pos].to_numpy())
            self.check_rows([*held, *(self.rows_of(bytes(p)) for p in earlier)], new,
                            np.concatenate(positions) if positions else np.zeros(0, np.int64), where)
            return self._rows_bytes(held + new), rows, skipped
        acc = empty_set(self.plan.config, self.plan.kind) if saved is None else state_from_bytes(saved)
        for frame in frames:
            if len(frame):
                dropped = feed(acc, frame, self.plan, where)
                rows += len(frame) - dropped
                skipped += dropped
        return state_to_bytes(acc), rows, skipped

    def check_rows(self, saved: Sequence[Any], new: Sequence[Any], positions: np.ndarray, where: str) -> None:
        """Refuse a micro-batch's retrieval rows ``new`` (DataFrames of the used columns; the
        row ``positions`` in the micro-batch) that the window could not compute with: a document
        id twice in one query of the micro-batch, or already among the window's ``saved`` rows
        (the value state's part, the list state's parts); a relevance or score the retrieval
        metrics refuse, or a query they refuse whole (e.g. ``n_relevant`` exceeded). The queries
        the new rows touch are fed whole -- their saved rows, then the new ones, as the window's
        values will be -- to a scratch copy of the metrics.

        Complexity: O(saved + new rows) hashing, plus the ranking of the touched queries' rows.

        Raises
        ------
        ValueError
            Naming the argument (``doc_id``, or the metrics' own: ``relevance``, ``scores``,
            ...), the problem, the first offending value and ``where`` (the key and window).
        """
        import pandas as pd

        batch = [f for f in new if len(f)]
        if not batch:
            return
        frame = pd.concat(batch, ignore_index=True) if len(batch) > 1 else batch[0].reset_index(drop=True)
        earlier = [f for f in saved if len(f)]
        old = pd.concat(earlier, ignore_index=True) if earlier else frame.iloc[:0]
        query, doc = self.plan.query, self.plan.doc_id
        assert query is not None
        refused = "; the micro-batch is refused, nothing of it saved"
        if doc is not None:  # one hashing pass over the window's (query, document) pairs
            n_old = len(old)
            keys = pd.concat([old[[query, doc]].set_axis(["q", "d"], axis=1),
                              pd.DataFrame({"q": ids(frame, query), "d": ids(frame, doc)})],
                             ignore_index=True)
            dup = keys.duplicated().to_numpy()[n_old:]
            if dup.any():
                i = int(np.argmax(dup))
                qs, ds = keys["q"].to_numpy(), keys["d"].to_numpy()
                q, d = qs[n_old + i], ds[n_old + i]
                j = int(np.argmax((qs[:n_old + i] == q) & (ds[:n_old + i] == d)))
                q, d = (v.item() if isinstance(v, np.generic) else v for v in (q, d))
                head = f"doc_id: duplicate document {d!r} in query {q!r} (column {doc!r}): "
                if j < n_old:
                    raise ValueError(f"{head}row {int(positions[i])} of {where}, already saved for the "
                                     f"window by an earlier micro-batch{refused}")
                raise ValueError(f"{head}rows {int(positions[j - n_old])} and {int(positions[i])} of "
                                 f"{where}{refused}")
        try:  # the values first, on the micro-batch's rows alone (an index is theirs)
            check_batch(column(frame, self.plan.label, "label"), column(frame, self.plan.score, "score"))
        except ValueError as exc:
            found = re.search(r"at index (\d+)", str(exc))
            at = f" (index {found[1]} is row {int(positions[int(found[1])])})" if found else ""
            raise ValueError(f"{exc} -- in {where}{at}{refused}") from None
        touched = old[old[query].isin(ids(frame, query)).to_numpy()] if len(old) else old
        scratch = empty_set(self.plan.config, self.plan.kind)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                feed(scratch, pd.concat([touched, frame], ignore_index=True), self.plan, where)
        except ValueError as exc:
            raise ValueError(f"{exc} -- in {where} (its queries fed whole with the window's saved "
                             f"rows: an index counts those rows sorted by query){refused}") from None

    def combine(self, parts: Sequence[Part]) -> Part:
        """The parts as one (their counts summed). Complexity: O(their total size)."""
        if len(parts) == 1:
            return parts[0]
        rows = sum(int(p[1]) for p in parts)
        skipped = sum(int(p[2]) for p in parts)
        if self.rows_kept:
            return self._rows_bytes([self.rows_of(bytes(p[0])) for p in parts]), rows, skipped
        return state_to_bytes(self.accumulator(parts)), rows, skipped

    def accumulator(self, parts: Sequence[Part], trusted: bool = False) -> Metric:
        """The window's accumulator from its parts: metric states loaded (validated) and merged;
        retrieval rows concatenated in order and fed at once, each query whole (its rows sorted
        together, ties in score broken by ``doc_id=`` when given, else by arrival order).

        Complexity: O(the parts' total size) (a k-way merge of exact score runs; for retrieval,
        the ranking of each query's rows). ``trusted``: the parts were written by this task just
        now (not read from the checkpoint), so metric states skip their re-validation.
        """
        if self.rows_kept:
            import pandas as pd

            acc = empty_set(self.plan.config, self.plan.kind)
            frames = [self.rows_of(bytes(p[0])) for p in parts]
            rows = [f for f in frames if len(f)]
            if rows:
                feed(acc, pd.concat(rows, ignore_index=True), self.plan, "the window's saved rows")
            return acc
        with trusted_states() if trusted else contextlib.nullcontext():
            return merged([state_from_bytes(bytes(p[0])) for p in parts])

    # -- output --------------------------------------------------------------------------------
    def table(self, keys: Sequence[Any], start_us: int, end_us: int, acc: Metric, rows: int,
              skipped: int) -> Any:
        """The window's output rows: one per metric value (an array value one per element)."""
        import pandas as pd

        with warnings.catch_warnings():  # an undefined value (one class in a window) is NaN
            warnings.simplefilter("ignore")
            values = self.run.result(acc)
        table = values_table({self.single: values} if self.single else values, {}, None)
        for i, name in enumerate(self.keys):
            table.insert(i, name, keys[i])
        width = len(self.keys)
        table.insert(width, START, pd.Timestamp(int(start_us), unit="us", tz="UTC"))
        table.insert(width + 1, END, pd.Timestamp(int(end_us), unit="us", tz="UTC"))
        table["rows"] = int(rows)
        table["skipped"] = int(skipped)
        return table

    # -- retrieval rows --------------------------------------------------------------------------
    def _rows_bytes(self, frames: Sequence[Any]) -> bytes:
        """Rows (pandas DataFrames of the used columns) as one ``.npz`` archive, a column each."""
        import pandas as pd

        names = self.plan.columns()
        frame = (pd.concat(frames, ignore_index=True) if len(frames) > 1 else frames[0]) if frames \
            else pd.DataFrame({n: np.zeros(0) for n in names})
        arrays = {}
        for i, name in enumerate(names):
            arr = frame[name].to_numpy()
            if arr.dtype == object:
                is_id = name in (self.plan.query, self.plan.doc_id)
                arr = arr.astype(str) if is_id else arr.astype(np.float64)
            arrays[f"c{i}"] = arr
        out = io.BytesIO()
        np.savez(out, **arrays)  # type: ignore[arg-type]
        return out.getvalue()

    def rows_of(self, payload: bytes) -> Any:
        """Read back :meth:`_rows_bytes` (from the checkpoint: every array checked, no pickle).

        Raises
        ------
        ValueError
            Not such an archive, a column missing or of another length, an array of objects or
            of more than one dimension, a label or score that is not a number.
        """
        import pandas as pd

        names = self.plan.columns()
        where = "saved rows of a window (the streaming checkpoint)"
        try:
            archive = np.load(io.BytesIO(bytes(payload)), allow_pickle=False)
            if not isinstance(archive, np.lib.npyio.NpzFile):
                raise ValueError(f"{where}: expected an .npz archive, got a {type(archive).__name__}")
            with archive:
                got = sorted(archive.files)
                want = sorted(f"c{i}" for i in range(len(names)))
                if got != want:
                    raise ValueError(f"{where}: expected the arrays {want}, got {got}")
                arrays = {name: archive[f"c{i}"] for i, name in enumerate(names)}
        except (OSError, EOFError, zipfile.BadZipFile, KeyError, ValueError) as exc:
            if str(exc).startswith(where):
                raise
            raise ValueError(f"{where}: not a readable archive ({type(exc).__name__}: {exc})") from None
        lengths = {a.shape[0] if a.ndim == 1 else -1 for a in arrays.values()}
        if len(lengths) != 1 or -1 in lengths:
            raise ValueError(f"{where}: the columns are not 1-D arrays of one length "
                             f"(shapes {[a.shape for a in arrays.values()]})")
        for name, arr in arrays.items():
            is_id = name in (self.plan.query, self.plan.doc_id)
            if arr.dtype.kind not in ("biufU" if is_id else "biuf"):
                raise ValueError(f"{where}: column {name!r} has dtype {arr.dtype}, expected "
                                 f"{'numbers or strings' if is_id else 'numbers'}")
        return pd.DataFrame(arrays)


def window_where(keys: Sequence[Any], start_us: int, end_us: int) -> str:
    """The rows of a key and window, as a null row's message names them."""
    start = pd_utc(start_us)
    end = pd_utc(end_us)
    return f"the micro-batch rows of window [{start}, {end})" + (f" of key {tuple(keys)}" if keys else "")


def pd_utc(us: int) -> Any:
    """Epoch microseconds as a UTC ``pandas.Timestamp``."""
    import pandas as pd

    return pd.Timestamp(int(us), unit="us", tz="UTC")


class ValueStep:
    """The function ``applyInPandasWithState`` runs per key, window and micro-batch: one saved
    part per window, read, extended by the micro-batch's rows and written back (O(state + new
    rows)); the window emitted (append mode) and removed when its event-time timeout fires.

    Parameters
    ----------
    fold : Fold
        The window's parts and output rows.
    mode : {"append", "update"}
        The output mode.
    """

    def __init__(self, fold: Fold, mode: str) -> None:
        self.fold = fold
        self.mode = mode

    def __call__(self, key: tuple[Any, ...], frames: Iterator[Any], state: Any) -> Iterator[Any]:
        *values, start_us, end_us = key
        if state.hasTimedOut:  # the watermark passed the window's end: emit (append), drop
            part = state.get
            state.remove()
            if self.mode == "append":
                yield self._emit(values, start_us, end_us, part, trusted=False)
            return
        saved: Part | None = None
        if state.exists:
            payload, rows, skipped = state.get
            saved = (bytes(payload), int(rows), int(skipped))
        new = self.fold.absorb(None if saved is None else saved[0], frames,
                               window_where(values, start_us, end_us))
        part = new if saved is None else (new[0], saved[1] + new[1], saved[2] + new[2])
        if timer_ms(end_us) < state.getCurrentWatermarkMs():
            # Spark drops rows against the previous micro-batch's watermark, so rows of a window
            # the current one has passed can still come: counted, and the window closed now (no
            # later row can join it; its timeout, in the past, could not be set)
            if state.exists:
                state.remove()
            yield self._emit(values, start_us, end_us, part, trusted=True)
            return
        state.update(part)
        state.setTimeoutTimestamp(timer_ms(end_us))
        if self.mode == "update":
            yield self._emit(values, start_us, end_us, part, trusted=True)

    def _emit(self, values: Sequence[Any], start_us: int, end_us: int, part: Part, trusted: bool) -> Any:
        return self.fold.table(values, start_us, end_us, self.fold.accumulator([part], trusted),
                               int(part[1]), int(part[2]))
