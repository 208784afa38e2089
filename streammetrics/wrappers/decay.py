"""Exponential forgetting for any accumulator: classification, ranking, retrieval.

The definitions: docs/definitions/service.md#exponential-decay.

``Decayed(metric, half_life=h)`` weighs the i-th of the n samples seen so far (0-based, in
arrival order: ``update`` calls, then rows) by ``0.5 ** ((n - 1 - i) / h)``: the newest sample
weighs 1, and every row decays individually, even inside one batch.
``Decayed(metric, half_life_seconds=h)`` weighs a sample stamped t_i by
``0.5 ** ((t_newest - t_i) / h)`` (timestamps as for :class:`~streammetrics.Window`:
``update(..., timestamp=...)`` or the injected ``clock``). The value is exactly the undecayed
metric computed with those sample weights (times the sample's own ``sample_weight``) -- e.g.
scikit-learn's ``f1_score(y, pred, sample_weight=decay)``.

How it works
------------
* States that can rescale (every :class:`~streammetrics._core.state.SummedState`: the confusion
  family, top-k) keep the decayed sums themselves. They are stored with *absolute* weights
  ``2 ** ((coord_i - ref) / h)`` (coord = sample index or timestamp), so an update only weighs
  its own rows -- O(batch), no pass over the state -- and the first read after updates rescales
  the sums once by ``2 ** (-(newest - ref) / h)`` (sums of squared weights by its square, so
  Wilson intervals use the right effective size) and moves ``ref`` to the newest sample: O(state).
  The reference also moves before the absolute weights could approach overflow (every ~300
  half-lives), so any stream length is safe; a gap of more than ~1075 half-lives leaves the old
  weights exactly 0, as in the definition. Rounding: a few ulps per rescale, and old
  contributions (with their error) decay with the mass, so the relative error does not grow
  with the stream length (checked against scikit-learn to 1e-11 after 20k samples).
* Bounded ranking metrics (``AUROC(max_bytes=...)``, AP, curves) rescale too
  (:meth:`~streammetrics._scores.binned.bins.BinnedScores.scale`): O(bins) per read, the state stays under its
  budget, and ``bounds()`` certifies the exact decayed value (scikit-learn with the decay
  weights).
* Other states (the exact ranking buffer: AUROC, AP, curves) keep the rows with their age
  coordinate (sample index or timestamp) and rebuild the wrapped state with the decay weights on
  the first read after an update: O(R log R) for the R rows kept. A row whose decay factor has
  underflowed to 0.0 (age > ~1075 half-lives) has weight exactly 0, which scikit-learn treats as
  absent, so it is dropped: R <= ~1100·h rows by samples. Exact.

Retrieval metrics decay per *query*: the q-th of the n queries seen weighs
``0.5 ** ((n - 1 - q) / h)`` (or ``0.5 ** ((t_newest - t_q) / h)`` with one timestamp per
query), and the value is the decay-weighted mean ``sum_q w_q m_q / sum_q w_q`` of the per-query
values m_q (micro-averaged set measures: the ratio of the decay-weighted pooled counts). The
state is O(1): the weighted sums and the total weight
(:class:`~streammetrics.wrappers._decay_queries.DecayedQueriesState`).
``per_query=True`` metrics are refused (their stored values are not decayed).

Rows whose label is the wrapped metric's ``ignore_index`` count as arrivals (they age the other
samples) but contribute nothing.

Merge semantics (shards of one stream): by time, both sides are aligned to the newer of their
newest timestamps (the older side decays by the gap) and added -- exactly the decayed metric of
the union of the shards' samples. By samples there is no global order: each shard's samples
keep the ages they have in their own shard (the states are added).

Concurrent updates: a batch prepared (outside the lock) before another batch was applied is
weighed again when it is applied, so the result is that of some sequential order. In rows mode
a batch racing on timestamps is stamped with the newest timestamp seen.

Code: the shared wrapper base is ``wrappers/_base.py``; the states ``_decay_state`` (``DecayBase``,
shared with the query decay, and ``DecayedState``, whose rows mode keeps a ``_rows`` queue) and
``_decay_queries``.
"""

from __future__ import annotations

from typing import ClassVar

from streammetrics._core.metric import Metric, R_co
from streammetrics._core.params import Param, check_param
from streammetrics._core.timestamps import Clock

from ._base import SampleWrapper
from ._decay_queries import DecayedQueriesState
from ._decay_state import DecayedState

__all__ = ["Decayed"]

_HALF_LIFE = Param("real", "must be a finite number > 0", low=0.0, low_open=True, optional=True)


class Decayed(SampleWrapper[R_co]):
    """``metric`` with exponential forgetting: by samples (``half_life``) or by time
    (``half_life_seconds``). See the module docstring for the exact weights.

    Parameters
    ----------
    metric
        An empty accumulator (classification, ranking, or retrieval -- then per query).
    half_life, half_life_seconds
        Exactly one, > 0: the number of samples -- retrieval: queries -- (or seconds) after
        which a sample weighs 1/2.
    clock
        Time source for updates without ``timestamp`` (time decay); default :func:`time.time`.

    Notes
    -----
    ``update(y_true, y_pred, *, sample_weight=None, timestamp=None)``; ``compute()`` is the
    wrapped metric's value under the decay weights; ``interval()`` / ``bounds()`` pass through.
    Complexity (confusion family): ``update`` O(batch), a read O(state); see the module
    docstring for the ranking metrics.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.metrics import recall_score
    >>> from streammetrics import Decayed, Recall
    >>> y, p = np.array([1, 1, 0, 1]), np.array([0, 1, 1, 1])
    >>> d = Decayed(Recall(), half_life=2).update(y[:2], p[:2]).update(y[2:], p[2:])
    >>> w = 0.5 ** ((3 - np.arange(4)) / 2)
    >>> bool(abs(d.compute() - recall_score(y, p, sample_weight=w)) < 1e-12)
    True
    """

    _params: ClassVar[tuple[str, ...]] = ("half_life", "half_life_seconds")

    def __init__(self, metric: Metric[R_co], *, half_life: float | None = None,
                 half_life_seconds: float | None = None, clock: Clock | None = None) -> None:
        super().__init__()
        if (half_life is None) == (half_life_seconds is None):
            raise ValueError("Decayed: give exactly one of half_life= (samples) or half_life_seconds=")
        half_life = check_param(half_life, "half_life", _HALF_LIFE)
        half_life_seconds = check_param(half_life_seconds, "half_life_seconds", _HALF_LIFE)
        self.half_life, self.half_life_seconds = half_life, half_life_seconds
        self._wrap(metric, "Decayed", (DecayedState, DecayedQueriesState), half_life, half_life_seconds,
                   clock=clock)

    def __repr__(self) -> str:
        h = (f"half_life={self.half_life}" if self.half_life is not None
             else f"half_life_seconds={self.half_life_seconds}")
        return f"Decayed({self._metric!r}, {h})"

    @property
    def n_seen(self) -> int:
        """Samples seen (rows of every update, including ``ignore_index`` rows)."""
        with self._lock:
            return self._state.n_seen

