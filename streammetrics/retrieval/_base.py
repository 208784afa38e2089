"""The base of the retrieval family and its constructor checks.

:class:`RetrievalMetric` holds one :class:`~streammetrics._queries.spec.Spec` in a (possibly shared)
:class:`~streammetrics._queries.state.QueryState`; the measures in :mod:`streammetrics.retrieval.metrics`
only choose the spec and read the mean. The checks below declare each constructor option once
(:class:`~streammetrics._core.params.Param`); messages read ``"<name>: <rule>, got <value>"``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from streammetrics._core.metric import Metric, R_co, UndefinedMetricWarning
from streammetrics._core.params import Param, check_param
from streammetrics._core.state import State
from streammetrics._core.warn import warn
from streammetrics._queries.spec import Spec
from streammetrics._queries.state import QueryState

if TYPE_CHECKING:
    from typing import Unpack

    from streammetrics._queries.kernels import QueryOptions

_K = Param("int", "expected a positive integer", low=1)
_K_OR_NONE = Param("int", "expected a positive integer or None", low=1, optional=True)
_LEVEL = Param("number", "expected a number", finite_rule="expected a finite number")
_IGNORE = Param("int", "expected an integer or None", optional=True)
_FRACTION = Param("number", "expected a recall level in [0, 1]", low=0.0, high=1.0)
_TIES = ("first", "average")
#: torchmetrics' ``empty_target_action`` and ``aggregation`` choices.
EMPTY_ACTIONS = ("neg", "pos", "skip", "error")
AGGREGATIONS = ("mean", "median", "min", "max")


def check_k(k: Any, optional: bool = False) -> int | None:
    """A cutoff: an int >= 1 (or None with ``optional``)."""
    return check_param(k, "k", _K_OR_NONE if optional else _K)  # type: ignore[no-any-return]


def check_level(x: Any, name: str) -> float:
    """A grade (``rel_level``, ``rel_max``): a finite number."""
    return float(check_param(x, name, _LEVEL))


def check_fraction(x: Any, name: str) -> float:
    """A recall level: a finite number in [0, 1]."""
    check_param(x, name, _LEVEL)
    return float(check_param(x, name, _FRACTION))


def check_choice(x: Any, name: str, choices: tuple[str, ...]) -> str:
    """One of the strings ``choices``."""
    return str(check_param(x, name, Param("choice", f"expected one of {list(choices)}", choices=choices)))


def check_ties(ties: Any, linear: bool) -> str:
    """``"first"`` or ``"average"`` (only for measures linear in the gains: ``linear``)."""
    ties = check_choice(ties, "ties", _TIES)
    if ties == "average" and not linear:
        raise ValueError(
            "ties: 'average' (tie-averaged gains) is exact only for measures linear in the gains "
            "(P@k, R@k, R-precision, CG, DCG, nDCG); use ties='first'"
        )
    return ties


def plain(x: float) -> float | int:
    """``x`` as an int when it is a whole number (so configurations read as given)."""
    return int(x) if float(x).is_integer() else float(x)


class RetrievalMetric(Metric[R_co]):
    """Base of the retrieval family: one spec in a (possibly shared) :class:`QueryState`.

    ``compute()`` is the mean over queries (nan with ``UndefinedMetricWarning`` before any query);
    ``per_query_values()`` returns every query's value in update order when ``per_query=True``.

    Complexity: ``update`` O(n log L) for n rows (queries of L documents), vectorised over the
    batch; ``compute`` O(1); memory O(1) -- a count and the per-query sums -- unless
    ``per_query=True`` (then 8 bytes per query and value).

    Parameters
    ----------
    spec : Spec
        The measure's identity and options (kind, cutoff, relevance level, ...); a subclass
        builds it from its own constructor arguments.

    Examples
    --------
    >>> import streammetrics as sm
    >>> m = sm.NDCG(10)
    >>> isinstance(m, sm.retrieval.RetrievalMetric)
    True
    >>> round(m.update([2, 0, 1], [0.9, 0.5, 0.1]).compute(), 4)  # one query: (2 + 1/2) / (2 + 1/log2(3))
    0.9502
    """

    family = "retrieval"
    _spec: Spec
    #: The constructor options, in order, that the configuration holds (read from attributes).
    _options: ClassVar[tuple[str, ...]] = ()

    def __init__(self, spec: Spec) -> None:
        super().__init__()
        self._spec = spec
        self._state = QueryState([spec])

    # ``_state`` is a property so that a MetricSet assigning a shared state registers this spec.
    @property  # type: ignore[override]
    def _state(self) -> QueryState:
        return self.__dict__["_qstate"]  # type: ignore[no-any-return]

    @_state.setter
    def _state(self, state: State) -> None:
        assert isinstance(state, QueryState)
        state.add_spec(self._spec, self.__dict__.get("_qstate"))
        self.__dict__["_qstate"] = state

    def update(  # type: ignore[override]
        self, relevance: Any, scores: Any, **options: Unpack[QueryOptions]
    ) -> RetrievalMetric:
        """Fold in one query (or many with ``query_ids``); atomic; returns ``self``.

        Cost O(n log L) for n rows (queries of L documents), no Python loop per document.

        Parameters
        ----------
        relevance : array-like, shape (n,) or (N, ...)
            The grades of the retrieved documents (unjudged = 0). Of two or more dimensions
            (torchmetrics' ``target``), it is flattened in C order, and so are ``scores``,
            ``query_ids`` and ``doc_ids``, which must then have its shape (else a
            ``ValueError`` naming the argument and both shapes).
        scores : array-like, shape of ``relevance``
            The system's scores, one per row (ranked descending).
        **options
            ``doc_ids``, ``judged``, ``n_relevant``, ``query_ids``: see
            :class:`~streammetrics._queries.kernels.QueryOptions`. Each defaults to ``None``.

        Returns
        -------
        RetrievalMetric
            ``self``.
        """
        return self._update_state(relevance, scores, **options)

    def _config(self) -> dict[str, Any]:
        return {name: self._config_value(name) for name in self._options}

    def _config_value(self, name: str) -> Any:
        """The option ``name`` as the configuration holds it (grades as plain numbers)."""
        value = getattr(self, name)
        if name in ("rel_level", "rel_max") and value is not None:
            return plain(value)
        return value

    def _state_arrays(self) -> dict[str, Any]:
        return self._state.arrays([self._spec])

    def _load_arrays(self, arrays: Mapping[str, Any]) -> None:
        self._state.load_spec(self._spec, arrays)

    @property
    def nbytes(self) -> int:
        """Bytes held by this measure's sums (and per-query values)."""
        with self._lock:
            acc = self._state.acc(self._spec)
            return 8 + acc.sums.nbytes + sum(c.nbytes for c in (acc.chunks or []))

    def _mean(self) -> np.ndarray:
        acc = self._state.acc(self._spec)
        if acc.count == 0:
            warn(
                f"{type(self).__name__}: no queries seen; the mean is undefined (nan)",
                UndefinedMetricWarning,
            )
            return np.full(acc.sums.shape, np.nan)
        return acc.sums / acc.count

    def _peer_options(self, empty_target_action: Any, aggregation: Any, per_query: Any,
                      ignore_index: Any = None) -> dict[str, Any]:
        """Check and set torchmetrics' options (``empty_target_action``, ``aggregation``,
        ``ignore_index``) and ``per_query``; returns the spec's ``empty``, ``ignore_index`` and
        ``per_query`` (kept per-query values when the aggregation is not the mean)."""
        self.ignore_index = check_param(ignore_index, "ignore_index", _IGNORE)
        self.empty_target_action = check_choice(empty_target_action, "empty_target_action", EMPTY_ACTIONS)
        self.aggregation = check_choice(aggregation, "aggregation", AGGREGATIONS)
        self.per_query = bool(per_query)
        empty = None if self.empty_target_action == "neg" else self.empty_target_action
        return {"empty": empty, "per_query": self.per_query or self.aggregation != "mean",
                "ignore_index": self.ignore_index}

    def _compute(self) -> Any:
        aggregation = getattr(self, "aggregation", "mean")
        if aggregation == "mean":
            return float(self._mean()[0])
        vals = self._state.acc(self._spec).values()
        assert vals is not None
        if vals.shape[0] == 0:
            warn(f"{type(self).__name__}: no queries counted; the {aggregation} is undefined (nan)",
                 UndefinedMetricWarning)
            return float("nan")
        v = vals[:, 0]
        if aggregation == "median":  # the lower median, as torch.median (torchmetrics)
            return float(np.partition(v, (v.shape[0] - 1) // 2)[(v.shape[0] - 1) // 2])
        return float(v.min() if aggregation == "min" else v.max())

    @property
    def n_queries(self) -> int:
        """Number of queries folded in."""
        with self._lock:
            return self._state.acc(self._spec).count

    def per_query_values(self) -> np.ndarray:
        """Every query's value in update order (needs ``per_query=True``). O(queries)."""
        return self._per_query(self._stored_values())

    def _stored_values(self) -> np.ndarray:
        """A copy of the stored per-query columns, (queries, width); ``ValueError`` unless the
        metric keeps them (``per_query=True``). O(queries)."""
        if not self._spec.per_query:
            raise ValueError(f"{type(self).__name__}: per-query values are kept only with per_query=True")
        with self._lock:
            vals = self._state.acc(self._spec).values()
            assert vals is not None
            return vals.copy()

    def _per_query(self, vals: np.ndarray) -> np.ndarray:
        return vals[:, 0]
