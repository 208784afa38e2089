"""Sliding windows over any accumulator: classification, ranking and retrieval.

The definitions: docs/definitions/service.md#windows.

``Window(metric, size=W)`` is ``metric`` over exactly the last W samples that arrived;
``Window(metric, seconds=T)`` is ``metric`` over the samples whose timestamp is strictly greater
than (newest timestamp seen - T). Arrival order is the order of ``update`` calls and, within a
batch, the row order. Timestamps come with ``update(..., timestamp=t)`` -- one number for the
batch or one per row, non-decreasing (a decreasing one is a ``ValueError``) -- or, when omitted,
from the injected ``clock`` (default :func:`time.time`). :meth:`Window.advance` moves "now"
forward without a sample so that an idle service's window empties.

How it works
------------
The window keeps its rows (labels, predictions, weights, timestamps; copies of the validated
inputs) in a FIFO of pieces, and the wrapped metric's own state holding exactly those rows. An
update prepares the batch once (the wrapped state's own validation, so errors and atomicity are
the wrapped metric's) and folds it in; rows that fall out of the window are removed lazily on the
next read:

* states that can subtract (every :class:`~streammetrics._core.state.SummedState`: the confusion
  family, top-k) remove the expired rows with one ``prepare`` of those rows and an element-wise
  subtraction -- exact while weights are integers (float64 sums of integers are exact), so
  ``update`` is O(batch) and a read is O(batch of expired rows + state size);
* with non-integer weights (float subtraction would leave rounding residue where the exact value
  is 0), or for states that cannot subtract, the state is rebuilt from the window's rows on the
  first read after an expiry: O(W) per such read, exact.

* unweighted exact ranking buffers (AUROC, AP, ROC/PR curves) subtract too
  (:meth:`~streammetrics._scores.exact.buffer.SortedScores.subtract`): the Mann-Whitney pair counts
  change by one signed search of the new and the expired scores against the stored runs
  (O(m log W) for m rows), and the expired scores are tombstoned and purged in one pass once
  they reach max(1024, W/32), so an update + AUROC read costs amortised O(m log W) --
  O(log W) per sample, the read O(1) -- and never re-sorts the window; weighted ranking
  windows are rebuilt. Binary buffers (states that declare ``supports_row_slide``) take the
  expired rows as they are stored
  (:meth:`~streammetrics._scores.exact.buffer.SortedScores.slide_rows`: they were validated on
  arrival, so no second ``prepare`` and no scratch state), and a window of at most 65536
  samples fed small batches (at most 20 rows) switches to a per-sample *list mode*: each
  class's scores in one sorted Python list, every new or expired score one C bisect in the
  other class (two on ties) plus one insertion or deletion (a memmove of up to W/2 pointers)
  -- no numpy call per batch beyond the new batch's validation; 32 bytes per score instead of
  8 while it lasts. A larger batch switches back to runs (O(W), amortised).

* bounded ranking metrics (``AUROC(max_bytes=...)``, AP, curves) subtract the expired rows'
  bins (:meth:`~streammetrics._scores.binned.bins.BinnedScores.subtract`, O(bins)): the state stays under
  its budget and ``bounds()`` certifies the exact value on exactly the window's rows. Its bins
  never get finer again after coarsening (subtraction cannot undo it), so the estimate depends
  on the stream's history; loading and merging rebuild the state from the rows (a fresh state
  of the window's rows, possibly finer). Memory: the window's rows plus the budget.

Either way the value always equals the wrapped metric computed from scratch on exactly the
window's rows (scikit-learn on the same rows, for exact metrics; bounded ranking metrics keep
their own certificates) -- bit for bit with unit or integer weights; with real-valued weights
the counts kept by adding and subtracting rows may differ from one fresh sum in the last bits.

Memory: the rows (O(W) for a count window, O(rows in the last T seconds) for a time window) plus
the wrapped state. Rows whose label is the wrapped metric's ``ignore_index`` occupy window slots
(they arrived) but contribute nothing. A batch larger than the window is stored once and
compacted as it expires.

Merge semantics (shards of one stream): ``a.merge(b)`` for time windows interleaves both
windows' rows by timestamp (stable: on equal timestamps ``a``'s rows come first) and keeps the
rows newer than max(newest_a, newest_b) - T; for count windows, there being no global order,
``b``'s rows are taken to arrive after ``a``'s and the last W of the concatenation are kept.
Merging never widens a window (unlike torcheval's windowed AUROC, whose merge doubles it).
O(rows) plus one rebuild of the state.

Retrieval metrics (``NDCG``, ``MAP``, ``MRR``, ...): the window holds *queries*.
``Window(NDCG(10), size=W)`` is the measure's mean over the last W queries that arrived
(arrival order: ``update`` calls, then queries in order of appearance);
``Window(MAP(), seconds=T)`` over the queries whose timestamp is strictly newer than (newest -
T), with one timestamp per query (``timestamp=`` a scalar for the call or one per query, in
order of appearance). ``update`` takes the retrieval arguments (``relevance, scores, *, doc_ids,
judged, n_relevant, query_ids, timestamp``). The window keeps each query's per-query values (8
bytes per query and value column, independent of the query's length), and a read writes their
count and sums into the wrapped state
(:class:`~streammetrics.wrappers._window_queries.QueryWindowState`). Merge semantics as above, per
query. Two windowed retrieval measures do not share a state in a MetricSet (each ranks the
batch itself).

Persistence stores the rows (segments of rows of one dtype/shape: ``seg{i}.y_true``,
``seg{i}.y_pred``, optionally ``seg{i}.weight`` and ``seg{i}.ts``) and ``newest``; loading
validates the rows through the wrapped state's own ``prepare`` and rebuilds the state, so a file
cannot make the state disagree with its rows. The clock is not persisted (a loaded window uses
:func:`time.time`).

Code: the shared wrapper base (nested configuration, clock, update, pass-through) is
``wrappers/_base.py``; the row queue and its persisted form ``_rows``; the states ``_window_state``
(``WindowBase``, shared with the query window, and ``WindowState``) and ``_window_queries``.
"""

from __future__ import annotations

from typing import Any, ClassVar

from streammetrics._core.metric import Metric, R_co
from streammetrics._core.params import Param, check_param
from streammetrics._core.timestamps import Clock, check_timestamps

from ._base import SampleWrapper
from ._window_queries import QueryWindowState
from ._window_state import WindowState

__all__ = ["Window"]

_SIZE = Param("int", "must be an int >= 1", low=1, optional=True)
_SECONDS = Param("real", "must be a number > 0", low=0.0, low_open=True, optional=True,
                 finite_rule="must be finite and > 0", range_rule="must be finite and > 0")


class Window(SampleWrapper[R_co]):
    """``metric`` over a sliding window of the stream: the last ``size`` samples, or the samples
    of the last ``seconds`` (strictly newer than newest - seconds).

    Parameters
    ----------
    metric
        An empty accumulator (``F1()``, ``ConfusionMatrix(num_classes=3)``, ``AUROC()``,
        ``AUROC(max_bytes=...)``, ``NDCG(10)``, ...). The window holds its own twin of it.
    size, seconds
        Exactly one: a count window of ``size`` >= 1 samples (retrieval: queries), or a time
        window of ``seconds`` > 0.
    clock
        Time source for updates without ``timestamp`` (time windows); default :func:`time.time`.

    Notes
    -----
    ``update(y_true, y_pred, *, sample_weight=None, timestamp=None)`` folds in a batch (or one
    sample); ``compute()`` is the wrapped metric's value on exactly the window's samples.
    ``interval()``, ``bounds()`` and ``per_query_values()`` pass through when the wrapped metric
    has them.

    Complexity: ``update`` O(batch); a read O(expired rows + state) for subtractable states with
    integer weights (unweighted exact AUROC: amortised O(log W) per new or expired row, the
    value O(1); small windows fed small batches: a bisect and a list insertion / deletion per
    row), O(W) after an expiry otherwise (see the module docstring). Memory: the rows
    plus the wrapped state.

    Examples
    --------
    >>> from streammetrics import F1, Window
    >>> w = Window(F1(), size=3)
    >>> _ = w.update([1, 0, 1, 1], [1, 1, 0, 1])  # the window holds the last 3 rows
    >>> round(w.compute(), 6)  # F1 of y=[0, 1, 1], pred=[1, 0, 1]
    0.5
    """

    _params: ClassVar[tuple[str, ...]] = ("size", "seconds")

    def __init__(self, metric: Metric[R_co], *, size: int | None = None, seconds: float | None = None,
                 clock: Clock | None = None) -> None:
        super().__init__()
        if (size is None) == (seconds is None):
            raise ValueError("Window: give exactly one of size= (samples) or seconds= (time)")
        size = check_param(size, "size", _SIZE)
        seconds = check_param(seconds, "seconds", _SECONDS)
        self.size, self.seconds = size, seconds
        self._wrap(metric, "Window", (WindowState, QueryWindowState), size, seconds, clock=clock)

    def advance(self, timestamp: float | None = None) -> Window:
        """Time windows: move "now" to ``timestamp`` (default: the clock) without a sample, so
        rows older than ``timestamp - seconds`` leave. Earlier than the newest seen: no-op."""
        if self.seconds is None:
            raise ValueError("advance: only time windows (seconds=...) have a clock")
        t = check_timestamps(self._state.clock() if timestamp is None else timestamp, 1,
                             self._state.clock, None)[0]
        with self._lock:
            self._state.advance(float(t))
        return self

    def per_query_values(self) -> Any:
        """The wrapped retrieval metric's ``per_query_values()`` over the window's queries, in
        arrival order (the wrapped metric needs ``per_query=True``): an array, or for
        :class:`~streammetrics.trec.TrecMeasures` a dict of arrays. AttributeError when the wrapped
        metric has none. O(W · width).

        Returns
        -------
        ndarray or dict of str to ndarray
            One value per query in the window.

        Examples
        --------
        >>> from streammetrics import MRR, Window
        >>> w = Window(MRR(per_query=True), size=2)
        >>> _ = w.update([0, 1, 1, 0, 0, 1], [0.9, 0.5, 0.9, 0.5, 0.9, 0.5], query_ids=[1, 1, 2, 2, 3, 3])
        >>> w.per_query_values().tolist()  # queries 2 and 3
        [1.0, 0.5]
        """
        return self._passthrough("per_query_values")

    def __len__(self) -> int:
        """Number of samples in the window."""
        with self._lock:
            return self._state.n_rows

    def __repr__(self) -> str:
        span = f"size={self.size}" if self.size is not None else f"seconds={self.seconds}"
        return f"Window({self._metric!r}, {span})"
