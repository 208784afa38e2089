"""State blocks: the arrays an accumulator holds, declared once with their merge rule.

A :class:`State` is the unit that metrics own, that a :class:`~streammetrics.MetricSet` shares
between members that need the same data, and that persistence serialises. Subclasses implement
``prepare`` (validate a batch and build its increment without touching the state -- may raise)
and ``apply`` (fold a prepared increment in -- never raises). That split is what makes every
update atomic, including a MetricSet update that feeds several states.

:class:`SummedState` is the generic block whose arrays all merge by addition (confusion counts,
running sums); reset, merge, copy and load need no per-metric code.
"""

from __future__ import annotations

import copy as _copy
import functools
from collections.abc import Callable, Hashable, Mapping, Sequence
from typing import Any

import numpy as np

from .load_checks import check_sums, loading

#: The methods that change what a state holds: each bumps :attr:`State.version` (see
#: :meth:`State.__init_subclass__`), which is what read caches are keyed on.
MUTATORS = ("apply", "merge", "reset", "load_arrays", "subtract", "scale", "slide_rows",
            "remove_groups", "_load_trusted", "merge_many")


def _bumping(method: Callable[..., Any]) -> Callable[..., Any]:
    """``method`` that also bumps the state's version when it returns or raises."""

    @functools.wraps(method)
    def wrapper(self: State, *args: Any, **kwargs: Any) -> Any:
        try:
            return method(self, *args, **kwargs)
        finally:
            self.version += 1

    wrapper.bumps_version = True  # type: ignore[attr-defined]
    return wrapper


class State:
    """Base class of a state block. See the module docstring.

    Every state carries a :attr:`version`, an integer that changes whenever what it holds may
    have changed (each method named in ``MUTATORS`` bumps it, in every subclass, whichever
    class of its hierarchy defines the method). Two reads at the same version see the same
    data, so a value computed at one version may be reused (``Metric._cached``).
    """

    #: Bumped by every mutating call (see the class docstring); copied by :meth:`copy`.
    version: int = 0

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        for name in MUTATORS:
            method = getattr(cls, name, None)
            # State's own placeholders stay as they are: wrappers test ``type(s).scale is not
            # State.scale`` to learn whether a state implements an optional capability
            if (callable(method) and method is not State.__dict__.get(name)
                    and not getattr(method, "bumps_version", False)):
                setattr(cls, name, _bumping(method))

    #: JSON-able description of everything that must match for two states to merge or share.
    def key(self) -> Hashable:
        raise NotImplementedError

    def prepare(self, *args: Any, **kwargs: Any) -> Any:
        """Validate inputs and build the increment; must not mutate ``self``."""
        raise NotImplementedError

    def prepare_checked(self, batch: Any) -> Any:
        """The increment of a batch its maker has already converted and checked (a
        ``ScoreBatch`` or ``LabelBatch`` of :mod:`streammetrics._core.validation`), taken as it
        is; must not mutate ``self``. Optional: the states :mod:`streammetrics.functional` feeds
        (score states, confusion counts) implement it."""
        raise NotImplementedError(f"{type(self).__name__} takes no checked batch")

    def apply(self, delta: Any) -> None:
        """Fold an increment built by :meth:`prepare` into the state; must not raise."""
        raise NotImplementedError

    def arrays(self) -> dict[str, Any]:
        """The state as named numpy arrays (and plain scalars); copies, never views."""
        raise NotImplementedError

    def load_arrays(self, arrays: Mapping[str, Any]) -> None:
        """Replace the state with ``arrays`` after validating them (untrusted input)."""
        raise NotImplementedError

    def merge(self, other: State) -> None:
        raise NotImplementedError

    def merge_many(self, others: Sequence[State]) -> None:
        """Fold several states in, as ``merge`` of each in turn (the default). A state whose
        merge ranks the incoming data against what it holds (the exact score buffer) overrides
        this with one k-way merge of everything, which is what engines' merge trees call."""
        for other in others:
            self.merge(other)

    def reset(self) -> None:
        raise NotImplementedError

    def copy(self) -> State:
        # Callables held as attributes (an injected clock) are configuration: shared, not copied.
        shared = {id(v): v for v in getattr(self, "__dict__", {}).values() if callable(v)}
        return _copy.deepcopy(self, shared)

    # -- optional capabilities (used by the service wrappers: Window, Decayed) -----------------
    #: True if the state has ``slide_rows(y, s)``: remove rows its ``prepare`` accepted once (a
    #: window's expired rows, unweighted) as they are stored, without validating them again.
    supports_row_slide: bool = False

    def subtract(self, other: State) -> None:
        """Remove data that was folded in earlier: ``other`` holds exactly some samples that
        this state absorbed (same key). Optional; states that cannot remove samples raise
        ``NotImplementedError`` and windows rebuild them from their rows instead."""
        raise NotImplementedError(f"{type(self).__name__} cannot subtract samples")

    def scale(self, factor: float) -> None:
        """Multiply the weight of every sample folded in so far by ``factor`` (0 <= factor <= 1).
        Optional; used for exponential decay. ``NotImplementedError`` when unsupported."""
        raise NotImplementedError(f"{type(self).__name__} cannot rescale its samples")

    def sample_count(self) -> float | None:
        """The (weighted) number of samples behind the state's values, or None when the state
        does not count them (the default). A state with several one-vs-rest columns counts its
        first column's samples (every sample of a binary or multiclass task). Exporters read it
        (the ``_samples`` gauge of :mod:`streammetrics.prometheus`); call under the owner's
        lock. O(classes) or O(bins)."""
        return None

    @property
    def nbytes(self) -> int:
        return int(sum(np.asarray(a).nbytes for a in self.arrays().values()))

    def equals(self, other: State) -> bool:
        """True if both states hold exactly the same data."""
        if self.key() != other.key():
            return False
        a, b = self.arrays(), other.arrays()
        return a.keys() == b.keys() and all(
            np.array_equal(np.asarray(a[k]), np.asarray(b[k])) for k in a
        )


class SummedState(State):
    """Named float64 arrays of fixed shape that merge by element-wise addition.

    Subclasses set ``self._arrays`` in ``__init__`` (zeros of the right shapes) and implement
    ``key``, ``prepare`` and ``apply``. Loaded arrays must have exactly the declared shapes and
    hold finite, non-negative values.
    """

    _arrays: dict[str, np.ndarray]

    #: For :meth:`scale`: the power of the sample weight each array sums, by array name (a
    #: number, or one number per element of the last axis). Unlisted arrays: 2 if the name ends
    #: in ``_w2`` (sums of squared weights), else 1.
    weight_powers: Mapping[str, Any] = {}

    def _flush(self) -> None:
        """Hook for lazily buffered increments; called before any read."""

    def arrays(self) -> dict[str, Any]:
        self._flush()
        return {k: v.copy() for k, v in self._arrays.items()}

    def load_arrays(self, arrays: Mapping[str, Any]) -> None:
        self._flush()
        new: dict[str, np.ndarray] = {}
        for name, current in self._arrays.items():
            if name not in arrays:
                raise ValueError(f"state: missing array {name!r}")
            arr = np.asarray(arrays[name])
            if arr.shape != current.shape:
                raise ValueError(
                    f"state: array {name!r} has shape {arr.shape}, expected {current.shape}"
                )
            if arr.dtype.kind not in "biuf":
                raise ValueError(f"state: array {name!r} has non-numeric dtype {arr.dtype}")
            arr = arr.astype(np.float64)
            if arr.size and not (np.isfinite(arr).all() and (arr >= 0).all()):
                raise ValueError(f"state: array {name!r} holds negative or non-finite counts")
            new[name] = arr
        extra = set(arrays) - set(self._arrays)
        if extra:
            raise ValueError(f"state: unexpected arrays {sorted(extra)}")
        if loading():
            for name, arr in new.items():
                check_sums(arr, name)
            self._check_loaded(new)
        self._arrays = new
        self._after_load()

    def _check_loaded(self, arrays: Mapping[str, np.ndarray]) -> None:
        """Hook: the semantic invariants of untrusted arrays (shapes, finiteness, signs and the
        ``MAX_SUM`` bound are checked already); raise ``ValueError`` saying which is broken.
        Called only while loading untrusted state (not when ``subtract``/``scale`` reuse
        :meth:`load_arrays`, where rounding may blur the relations)."""

    def _after_load(self) -> None:
        """Hook for derived caches after a load or merge."""

    def merge(self, other: State) -> None:
        assert isinstance(other, SummedState)
        self._flush()
        theirs = other.arrays()
        for name, arr in self._arrays.items():
            arr += theirs[name]
        self._after_load()

    def reset(self) -> None:
        self._flush()
        for arr in self._arrays.values():
            arr[...] = 0
        self._after_load()

    def subtract(self, other: State) -> None:
        """Element-wise ``self -= other`` (exact for integer weights); goes through
        :meth:`load_arrays` so subclasses' derived fields stay consistent. O(state size)."""
        assert isinstance(other, SummedState)
        mine, theirs = self.arrays(), other.arrays()
        for name, arr in mine.items():
            np.subtract(arr, theirs[name], out=arr)
            np.maximum(arr, 0.0, out=arr)
        self.load_arrays(mine)

    def scale(self, factor: float) -> None:
        """Multiply every sample weight by ``factor``: arrays summing w**p scale by factor**p
        (see :attr:`weight_powers`). O(state size)."""
        mine = self.arrays()
        for name, arr in mine.items():
            power = self.weight_powers.get(name, 2.0 if name.endswith("_w2") else 1.0)
            arr *= np.power(float(factor), np.asarray(power, dtype=np.float64))
        self.load_arrays(mine)
