"""The accumulator protocol shared by every metric ("The accumulator contract", docs/definitions/index.md).

A :class:`Metric` owns one :class:`~streammetrics._core.state.State` and a lock. Everything generic
lives here -- ``update`` (validate and prepare outside the lock, apply inside it, so a rejected
batch changes nothing), ``merge``, ``reset``, ``copy``, ``state_dict`` / ``from_state_dict``,
``nbytes`` and pickling -- so a concrete metric only says how to build its state from its
configuration and how to read a value from it.

Thread safety: each accumulator has a re-entrant lock. ``update`` holds it only while folding in a
prepared increment; ``compute``, ``merge``, ``reset`` and ``state_dict`` hold it while they read or
write. Concurrent calls therefore give the state of some sequential order of them.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable, Hashable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, ClassVar, Generic, TypeAlias, TypeVar

import numpy as np
from numpy.typing import ArrayLike

from .load_checks import carried_nbytes, check_config_types, check_plain, check_version, load_budget
from .state import State
from .validation import with_hint

#: Version of the ``state_dict`` layout (and of the file format built on it).
FORMAT_VERSION = 1
#: Keys of a state dict that are not state arrays.
RESERVED_KEYS = frozenset({"class", "format_version", "config"})

M = TypeVar("M", bound="Metric[Any]")
T = TypeVar("T")
#: What ``compute()`` returns (``Metric[float]``, ``Metric[ROCCurveResult]``, ...); a family base
#: that returns several kinds is generic in it, its public classes name theirs.
R_co = TypeVar("R_co", covariant=True)
#: What a per-class measure returns: a float (binary, or averaged over classes), or the
#: per-class array (``average=None``).
Value: TypeAlias = float | np.ndarray

#: Set while a state dict is produced for, or rebuilt from, a *trusted* channel (pickling,
#: in-process copies, Dask tasks): states may then add derived statistics to ``arrays()`` and
#: ``load_arrays`` may restore them without recomputing them (see :func:`trusted_states`).
_TRUSTED: ContextVar[bool] = ContextVar("streammetrics_trusted_states", default=False)


@contextmanager
def trusted_states() -> Iterator[None]:
    """Within this block (this thread / task only), ``State.arrays`` may add derived statistics
    (e.g. the sorted buffer's Mann-Whitney counts) and ``State.load_arrays`` may restore them
    as given, skipping the O(n log n) recomputation. Only for data this process produced itself
    or received through pickle (which can run code anyway); never around ``streammetrics.load``
    of a file. Without the extra entries, ``load_arrays`` validates as usual.

    Returns
    -------
    contextmanager
        Yields ``None``; the trust ends with the block.
    """
    token = _TRUSTED.set(True)
    try:
        yield
    finally:
        _TRUSTED.reset(token)


def states_trusted() -> bool:
    """True inside :func:`trusted_states`.

    Returns
    -------
    bool
        Whether this thread / task is inside a :func:`trusted_states` block.
    """
    return _TRUSTED.get()


class UndefinedMetricWarning(UserWarning):
    """A metric was undefined on the data seen (e.g. a zero denominator) and was replaced."""


class Metric(Generic[R_co]):
    """Base class of all streaming accumulators.

    Subclasses set ``self._state`` in ``__init__`` and implement ``_config`` (the constructor
    arguments, JSON-able) and ``_compute``. Classification metrics inherit ``update(y_true,
    y_pred, *, sample_weight=None)``; other families define their own ``update`` signature and
    call :meth:`_update_state`. ``Metric[R]``: ``compute()`` returns an ``R`` (each public class
    names its own: ``Accuracy`` is a ``Metric[float]``).

    Examples
    --------
    >>> import streammetrics as sm
    >>> a = sm.Accuracy().update([0, 1, 1], [0, 1, 0])
    >>> b = sm.Accuracy().update([1, 0], [1, 0])
    >>> a.copy().merge(b).compute()
    0.8
    >>> sm.Accuracy.from_state_dict(a.state_dict()).compute() == a.compute()
    True
    >>> a.reset().nbytes == sm.Accuracy().nbytes
    True
    """

    #: Which ``update`` shape the metric takes; a MetricSet holds one family only.
    family: str = "classification"
    _registry: ClassVar[dict[str, type[Metric]]] = {}

    _state: State

    def __init__(self) -> None:
        self._lock = threading.RLock()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if not cls.__name__.startswith("_"):
            Metric._registry.setdefault(cls.__name__, cls)

    # -- configuration ---------------------------------------------------------------------
    def _config(self) -> dict[str, Any]:
        """Constructor arguments as JSON-able values (re-creates an empty twin)."""
        raise NotImplementedError

    def share_key(self) -> Any:
        """Identity of the state: metrics with equal keys may share one state in a MetricSet.

        Returns
        -------
        tuple
            The state's type name, its configuration key and the key of the label step in
            front of it (:attr:`_codec`; None without one), hashable.
        """
        codec = self._codec
        return (type(self._state).__name__, self._state.key(), None if codec is None else codec.key())

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self._config().items())
        return f"{type(self).__name__}({args})"

    # -- the protocol ----------------------------------------------------------------------
    def update(self: M, y_true: ArrayLike, y_pred: ArrayLike, *, sample_weight: ArrayLike | None = None) -> M:
        """Fold in one batch (or one sample). Atomic: a rejected batch changes nothing.

        Parameters
        ----------
        y_true : array-like
            Actual labels: shape (n,) (one sample: a scalar), (n, L) for multilabel tasks
            (docs/definitions/inputs.md).
        y_pred : array-like
            Predicted labels or scores, row-aligned with ``y_true``.
        sample_weight : array-like, optional
            One finite non-negative weight per row (default: 1 each).

        Returns
        -------
        Metric
            ``self``, so that calls chain.

        Raises
        ------
        ValueError
            A bad batch (naming the argument, the problem and the first offending value); the
            state is left exactly as it was.
        """
        return self._update_state(y_true, y_pred, sample_weight)

    # -- the update path: labels mapped, the batch checked once (may raise), then folded in ----
    @functools.cached_property
    def _codec(self) -> Any:
        """The label-mapping step in front of the state: the
        :class:`~streammetrics._core.labels.LabelCodec` of the label arguments (``classes=``,
        ``pos_label=``; a sparse multilabel ``y_true`` read dense), kept by the constructor in
        ``_labels``; None for a metric without one. Wrappers give their wrapped metric's. Read
        once, then an attribute (the per-sample path is call-bound). O(1)."""
        labels = self.__dict__.get("_labels")
        return None if labels is None else labels.codec

    def _prepare(self, *args: Any, **kwargs: Any) -> Any:
        """One batch (the arguments of ``update``) made into the state's increment: the labels
        mapped to class codes by :attr:`_codec` (when the metric has one), then
        ``State.prepare`` (every input check, once). The one step of the update path that may
        refuse a batch; it changes nothing (``ValueError`` naming the argument, the problem and
        the first offending value). MetricSet, Sliced and DelayedLabels call it for each state
        they feed. O(n) (the state's ``prepare``)."""
        codec = self._codec
        if codec is not None:
            args, kwargs = codec.encode_args(args, kwargs)
        return self._state.prepare(*args, **kwargs)

    def _update_state(self: M, *args: Any, **kwargs: Any) -> M:
        codec = self._codec
        try:  # :meth:`_prepare`, inline (the per-sample path is call-bound); may raise
            if codec is None:
                delta = self._state.prepare(*args, **kwargs)
            else:
                coded, kw = codec.encode_args(args, kwargs)
                delta = self._state.prepare(*coded, **kw)
        except ValueError as exc:
            if len(args) < 2:
                raise
            raise with_hint(exc, args[0], args[1], hasattr(self, "_labels")) from None
        with self._lock:
            self._state.apply(delta)  # never raises
        return self

    def _update_checked(self: M, batch: Any) -> M:
        """Fold in a batch its maker has already converted and checked (a
        :class:`~streammetrics._core.validation.ScoreBatch` from
        :func:`~streammetrics._core.validation.checked_batch`, or a ``LabelBatch``): the state's
        ``prepare_checked`` takes it as it is, with no label mapping and no conversion or check
        of any array again. For :mod:`streammetrics.functional`, whose own checks of the same
        arrays come first; the caller answers for them. Atomic like :meth:`update`. Cost: the
        state's ``prepare_checked`` (O(n); O(n log n) for a weighted score batch).

        Parameters
        ----------
        batch : ScoreBatch or LabelBatch
            The checked batch (labels already class codes).

        Returns
        -------
        Metric
            ``self``.
        """
        delta = self._state.prepare_checked(batch)
        with self._lock:
            self._state.apply(delta)
        return self

    def compute(self) -> R_co:
        """The current value. Never changes the value, the state or the configuration.

        Returns
        -------
        float, numpy.ndarray, dict or result object
            The metric's value: a float, a per-class array (``average=None``), a dict
            (``MetricSet``, ``ClassificationReport``) or a curve result.
        """
        with self._lock:
            return self._compute()

    def _compute(self) -> R_co:
        raise NotImplementedError

    def _cached(self, key: Hashable, compute: Callable[[], T]) -> T:
        """``compute()``, memoised until the state changes (call under the lock).

        The memo is keyed on the state object and its :attr:`~streammetrics._core.state.State.version`
        (bumped by every update, merge, reset, load, subtract and scale), so a second read with
        no change in between is a dictionary lookup. ``compute`` must depend only on the state
        and the configuration, and return an immutable value (it is shared by later reads).
        O(1) on a hit.
        """
        st = self._state
        memo: tuple[State, int, dict[Hashable, Any]] | None = self.__dict__.get("_read_memo")
        if memo is None or memo[0] is not st or memo[1] != st.version:
            memo = (st, st.version, {})
            self._read_memo = memo
        values: dict[Hashable, Any] = memo[2]
        if key not in values:
            values[key] = compute()
        return values[key]  # type: ignore[no-any-return]

    # -- torchmetrics' habit: metric(batch) ------------------------------------------------
    #: How :meth:`forward` folds the batch in: ``merge`` of the twin (True) or a second
    #: ``update`` with the same arguments (False: wrappers, whose samples carry time or order).
    _forward_merges: ClassVar[bool] = True

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        """Fold in one batch (the arguments of :meth:`update`) and return that batch's own value
        (torchmetrics' ``forward``, so ``self.log(name, metric(y, s))`` works per step).

        The batch value is ``compute()`` of an empty twin (same configuration) fed only this
        batch; the twin's state is then merged into this one (wrappers: the batch is also
        passed to ``update``). A rejected batch raises before anything changes. O(batch) on top
        of ``update`` (plus the twin's ``compute``).

        Parameters
        ----------
        *args, **kwargs
            The arguments of :meth:`update`.

        Returns
        -------
        Any
            The value of this batch alone (as :meth:`compute` gives it).
        """
        if self.family == "delayed":
            raise TypeError(
                f"{type(self).__name__} has no per-batch value: its labels arrive after its "
                "predictions; call predict() / label() and read compute()"
            )
        twin = type(self)._from_config(self._config())
        clock = getattr(getattr(self, "_state", None), "clock", None)  # time wrappers keep their clock
        if clock is not None:
            twin._state.clock = clock  # type: ignore[attr-defined]
        twin.update(*args, **kwargs)
        value = twin.compute()
        if self._forward_merges:
            self.merge(twin)
        else:
            self.update(*args, **kwargs)
        return value

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        """``metric(...)`` is :meth:`forward`: fold the batch in, return its own value."""
        return self.forward(*args, **kwargs)

    def _check_mergeable(self, other: Metric) -> None:
        if type(other) is not type(self):
            raise ValueError(
                f"merge: cannot merge {type(other).__name__} into {type(self).__name__}"
            )
        mine, theirs = self._config(), other._config()
        if mine != theirs:
            diff = sorted(k for k in set(mine) | set(theirs) if mine.get(k) != theirs.get(k))
            detail = ", ".join(f"{k}: {mine.get(k)!r} vs {theirs.get(k)!r}" for k in diff)
            raise ValueError(f"merge: configuration mismatch ({detail})")

    def merge(self: M, *others: Metric) -> M:
        """Fold other accumulators of the same configuration into this one; returns ``self``.

        A configuration mismatch is a ``ValueError`` (and nothing is merged). Cost: the size of
        the others' states.

        Parameters
        ----------
        *others : Metric
            Accumulators of the same class and configuration (left unchanged).

        Returns
        -------
        Metric
            ``self``.
        """
        snapshots = self._snapshots(others, lambda other: other._state.copy())
        with self._lock:
            self._state.merge_many(snapshots)  # one k-way merge where the state has one
        return self

    def _snapshots(self, others: tuple[Metric, ...], take: Callable[[Any], T]) -> list[T]:
        """The first step of every ``merge``, all or nothing: each of ``others`` checked
        (:meth:`_check_mergeable`), then ``take(other)`` of each, under its lock (a copy of
        what the merge reads, so no lock is held twice)."""
        for other in others:
            self._check_mergeable(other)
        out = []
        for other in others:
            with other._lock:
                out.append(take(other))
        return out

    def reset(self: M) -> M:
        """Back to the empty state; returns ``self``.

        Returns
        -------
        Metric
            ``self``, empty.
        """
        with self._lock:
            self._state.reset()
        return self

    def copy(self: M) -> M:
        """An independent deep copy (own state, own lock).

        A metric whose whole state is ``self._state`` copies it with ``State.copy`` (O(state
        size), no re-validation); others (a MetricSet, DelayedLabels, retrieval measures) go
        through a trusted state-dict round trip (also O(state size): derived statistics are
        carried over, not recomputed).

        Returns
        -------
        Metric
            A twin with the same configuration and state.
        """
        cls = type(self)
        with self._lock:
            if cls._plain_layout():
                out = cls._from_config(self._config())
                out._state = self._state.copy()
                return out
            with trusted_states():
                state = self.state_dict()
        with trusted_states():
            return cls.from_state_dict(state)

    @classmethod
    def _plain_layout(cls) -> bool:
        """True if the state dict is exactly ``self._state``'s arrays (no subclass layout)."""
        return cls._state_arrays is Metric._state_arrays and cls._load_arrays is Metric._load_arrays

    @property
    def nbytes(self) -> int:
        """Bytes held by the state arrays.

        Returns
        -------
        int
            The total ``nbytes`` of the state's arrays.
        """
        with self._lock:
            return self._state.nbytes

    # -- persistence -----------------------------------------------------------------------
    def state_dict(self) -> dict[str, Any]:
        """The full state: ``class``, ``format_version``, ``config`` and the state arrays.

        Returns
        -------
        dict
            JSON-able ``class``, ``format_version`` and ``config`` entries and numpy arrays
            (docs/definitions/persistence.md); :meth:`from_state_dict` rebuilds the metric.
        """
        with self._lock:
            out: dict[str, Any] = {
                "class": type(self).__name__,
                "format_version": FORMAT_VERSION,
                "config": self._config(),
            }
            out.update(self._state_arrays())
            return out

    def _state_arrays(self) -> dict[str, Any]:
        return self._state.arrays()

    @classmethod
    def _from_config(cls: type[M], config: Mapping[str, Any]) -> M:
        try:
            return cls(**config)
        except TypeError as exc:
            shown = ", ".join(f"{k}={v!r}" for k, v in config.items())
            raise ValueError(
                f"state: bad configuration for {cls.__name__}: {exc} (config: {shown[:300]})"
            ) from None

    def _load_arrays(self, arrays: Mapping[str, Any]) -> None:
        self._state.load_arrays(arrays)

    @classmethod
    def from_state_dict(cls: type[M], state: Mapping[str, Any]) -> M:
        """Rebuild an accumulator from :meth:`state_dict` output (validated: untrusted input).

        Anything malformed -- wrong types, sizes the arrays do not carry, broken invariants -- is
        a ``ValueError`` saying what; memory is bounded by the state the input carries (see
        :mod:`streammetrics._core.load_checks`). Cost: O(state size) (O(n log n) for sorted buffers).

        Parameters
        ----------
        state : Mapping
            A :meth:`state_dict` (of this class or a subclass).

        Returns
        -------
        Metric
            The rebuilt accumulator, of the class the state names.

        Raises
        ------
        ValueError
            A malformed state (saying what is wrong).
        """
        if states_trusted():
            return cls._rebuild_from(state)
        if not isinstance(state, Mapping):
            raise ValueError("state: expected a mapping")
        with load_budget(carried_nbytes(state)):
            try:
                return cls._rebuild_from(state)
            except ValueError:
                raise
            except (LookupError, TypeError, AttributeError, ArithmeticError, RecursionError,
                    MemoryError, AssertionError, UnicodeError) as exc:  # a backstop: say which
                raise ValueError(
                    f"state: malformed {state.get('class')!r} state ({type(exc).__name__}: {exc})"
                ) from None

    @classmethod
    def _rebuild_from(cls: type[M], state: Mapping[str, Any]) -> M:
        if not isinstance(state, Mapping):
            raise ValueError("state: expected a mapping")
        name = state.get("class")
        version = state.get("format_version")
        check_version(version, FORMAT_VERSION, "state: unknown format version")
        target = Metric._registry.get(name) if isinstance(name, str) else None
        if target is None:
            raise ValueError(f"state: unknown metric class {name!r}")
        if not issubclass(target, cls):
            raise ValueError(f"state: holds a {name}, not a {cls.__name__}")
        config = state.get("config")
        if not isinstance(config, Mapping):
            raise ValueError("state: 'config' must be a mapping")
        check_plain(config, f"{name} config")
        check_config_types(config, f"{name} config")
        obj = target._from_config(config)
        arrays = {k: v for k, v in state.items() if k not in RESERVED_KEYS}
        for key in arrays:
            if not isinstance(key, str):
                raise ValueError(f"state: entry names must be strings, got {key!r}")
        obj._load_arrays(arrays)
        return obj  # type: ignore[return-value]

    def __reduce__(self) -> tuple[Any, ...]:
        # Pickling (multiprocessing, Dask) goes through the compact state dict. Pickle is a
        # trusted channel (unpickling can run code anyway), so the dict carries the states'
        # derived statistics and the rebuild skips their O(n log n) re-validation.
        with trusted_states():
            return (_rebuild_trusted, (self.state_dict(),))


def _rebuild(state: Mapping[str, Any]) -> Metric:
    """Rebuild from a (validated) state dict; kept for pickles made by earlier versions."""
    return Metric.from_state_dict(state)


def _rebuild_trusted(state: Mapping[str, Any]) -> Metric:
    """Rebuild from a state dict made by :meth:`Metric.__reduce__` (trusted: see
    :func:`trusted_states`)."""
    with trusted_states():
        return Metric.from_state_dict(state)
