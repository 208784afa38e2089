"""``MetricSet``: many metrics fed by one ``update``, sharing state where they can.

Members whose states are interchangeable (same state type and configuration -- e.g. Precision,
Recall and F1 with the same task, threshold and ``ignore_index``) share one state object, so four
confusion metrics cost one counting pass per batch. An update is atomic across the whole set: every
state prepares (validates) its increment first, and only then are all of them applied.

The set owns its members: they share its lock and (where they can) their states with each other.
"""

from __future__ import annotations

import inspect
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import numpy as np

from streammetrics._core.labels import numeric_or_labels
from streammetrics._core.metric import Metric
from streammetrics._core.params import check_accumulator, nonempty_param
from streammetrics._core.state import State
from streammetrics._core.validation import is_scalar, with_hint
from streammetrics.plot._output import MetricResults

__all__ = ["MetricSet"]


def _second_parameter(metric: Metric) -> str:
    cls = type(metric)
    name = _SECOND.get(cls)
    if name is None:  # one signature per class: inspect is slow (Sliced builds many sets)
        params = list(inspect.signature(metric.update).parameters)
        name = _SECOND[cls] = params[1] if len(params) > 1 else "y_pred"
    return name


def _keywords(state: State) -> set[str] | None:
    """Keyword names ``state.prepare`` accepts -- those the state declares in
    ``update_keywords`` if it does -- or None if it takes any ``**kwargs``."""
    declared = getattr(state, "update_keywords", None)
    if declared is not None:
        return set(declared)
    cls = type(state)
    if cls not in _KEYWORDS:  # one signature per class (see _second_parameter)
        params = inspect.signature(state.prepare).parameters.values()
        _KEYWORDS[cls] = None if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params) else \
            frozenset(p.name for p in params if p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD))
    names = _KEYWORDS[cls]
    return None if names is None else set(names)


_SECOND: dict[type, str] = {}
_KEYWORDS: dict[type, frozenset[str] | None] = {}

_SEP = "."
_ndarray = np.ndarray


def _affix(value: Any, name: str) -> str | None:
    """A ``prefix`` / ``postfix``: None, or a string (``ValueError`` naming it otherwise)."""
    if value is None or isinstance(value, str):
        return value or None
    raise ValueError(f"{name}: expected a string or None, got {value!r}")


def _named_members(metrics: Any) -> dict[str, Metric]:
    """The members given positionally: a mapping of name to metric, or a metric or a sequence of
    metrics named by their class (torchmetrics' ``MetricCollection([...])``; two of one class
    are a ``ValueError``: give them names)."""
    if metrics is None:
        return {}
    if isinstance(metrics, Mapping):
        return dict(metrics)
    if isinstance(metrics, Metric):
        metrics = [metrics]
    if isinstance(metrics, (list, tuple)):
        out: dict[str, Metric] = {}
        for i, m in enumerate(metrics):
            check_accumulator(m, f"metrics[{i}]", refused=(MetricSet,))
            name = type(m).__name__
            if name in out:
                raise ValueError(f"metrics: two members of class {name} in the list; name them, "
                                 f"e.g. MetricSet(a={name}(...), b={name}(...))")
            out[name] = m
        return out
    raise ValueError(f"metrics: expected a mapping of names to metrics, a metric or a list of "
                     f"metrics, got {type(metrics).__name__}")


class MetricSet(Metric[MetricResults]):
    """A named collection of accumulators with the whole accumulator protocol.

    ``update`` feeds every member, ``compute()`` returns ``{name: value}``. Members whose states
    are interchangeable (same state type and configuration: Precision, Recall and F1 of one task;
    AUROC, AveragePrecision and the curves of one task; retrieval measures) share one state, so
    the batch is validated and counted once for all of them. The set is itself an accumulator:
    ``merge``, ``copy``, ``reset``, ``state_dict``, ``save`` / ``load`` and ``nbytes`` work on the
    whole set, and an update is atomic across it (every state validates its increment before
    any is applied).

    Parameters
    ----------
    metrics : mapping of str to Metric, Metric or list of Metric, optional
        Members by name (positional only); merged with ``named``. A list (torchmetrics'
        ``MetricCollection([...])`` habit) names each member by its class (``"AUROC"``); two
        members of one class need names.
    prefix, postfix : str, optional
        Added to every member's name in what the set reports (``compute()``, ``keys()``,
        ``items()``, the exporters): ``MetricSet(auroc=AUROC(), prefix="val_")`` reports
        ``val_auroc``. ``set["auroc"]`` and ``set["val_auroc"]`` both give the member. Saved
        with the state; :meth:`clone` copies the set under new ones.
    **named : Metric
        Members by name. Names must be Python identifiers; a member may not be a
        ``MetricSet``. All members must take the same ``update`` shape (one family:
        classification and ranking, or retrieval), else ``ValueError``. The set owns its
        members: they share its lock and, where they can, their states.

    Attributes
    ----------
    groups : list of list of str
        Member names grouped by the state they share.
    family : str
        The ``update`` shape of the members (``"classification"`` or ``"retrieval"``).

    Notes
    -----
    ``update`` costs one pass per distinct state, not per member; ``compute`` is the members'
    reads; memory is the distinct states. Keyword arguments of ``update`` (``timestamp=`` of a
    window, ``query_ids=`` of retrieval measures) go to the members that accept them.

    Examples
    --------
    >>> import streammetrics as sm
    >>> ms = sm.MetricSet(precision=sm.Precision(), recall=sm.Recall(), f1=sm.F1())
    >>> ms.groups  # one confusion-count state for the three
    [['precision', 'recall', 'f1']]
    >>> _ = ms.update([1, 0, 1, 1], [0.9, 0.6, 0.4, 0.8])
    >>> _ = ms.update([0, 1], [0.2, 0.7])
    >>> {name: round(value, 4) for name, value in ms.compute().items()}
    {'precision': 0.75, 'recall': 0.75, 'f1': 0.75}
    >>> sm.loads(sm.dumps(ms)).compute() == ms.compute()
    True
    >>> val = ms.clone(prefix="val_")
    >>> val.keys()
    ['val_precision', 'val_recall', 'val_f1']
    >>> sorted(sm.MetricSet([sm.AUROC(), sm.F1()]).keys())
    ['AUROC', 'F1']
    """

    family = "classification"

    def __init__(
        self,
        metrics: Mapping[str, Metric] | Sequence[Metric] | Metric | None = None,
        /,
        *,
        prefix: str | None = None,
        postfix: str | None = None,
        **named: Metric,
    ) -> None:
        super().__init__()
        self.prefix = _affix(prefix, "prefix")
        self.postfix = _affix(postfix, "postfix")
        members = {**_named_members(metrics), **named}
        nonempty_param(members, "metrics", "expected at least one metric")
        for name, m in members.items():
            if not isinstance(name, str) or not name.isidentifier():
                raise ValueError(f"MetricSet: member names must be identifiers, got {name!r}")
            check_accumulator(m, name, refused=(MetricSet,))
        families = {m.family for m in members.values()}
        if len(families) > 1:
            raise ValueError(
                f"MetricSet: members take different update shapes ({sorted(families)}); "
                "keep one family per set"
            )
        self.family = families.pop()
        self._members = members
        self._groups: list[list[str]] = []
        for name, m in members.items():
            for group in self._groups:
                owner = members[group[0]]
                if owner.share_key() == m.share_key() and owner._state.equals(m._state):
                    m._state = owner._state
                    group.append(name)
                    break
            else:
                self._groups.append([name])
        for m in members.values():
            m._lock = self._lock
        # Name of the second positional argument in conversion errors (ranking says y_score).
        seconds = {_second_parameter(m) for m in members.values()}
        self._arg_names = ("y_true", "y_pred" if "y_pred" in seconds or len(seconds) != 1 else seconds.pop())
        # Keyword arguments each state's ``prepare`` accepts (None: any), so that e.g. the
        # ``timestamp=`` of a Window member is not forced on a plain member of the same set.
        self._accepted = [_keywords(self._members[g[0]]._state) for g in self._groups]
        self._classification = self.family == "classification"
        self._set_owner()

    def _set_owner(self) -> None:
        """``_owner``: the member whose state every member shares (None if several states)."""
        self._owner = self._members[self._groups[0][0]] if len(self._groups) == 1 else None

    # -- mapping-like access ---------------------------------------------------------------
    def _key(self, name: str) -> str:
        """The name ``compute()`` reports for member ``name``: ``prefix + name + postfix``."""
        return f"{self.prefix or ''}{name}{self.postfix or ''}"

    def __getitem__(self, name: str) -> Metric:
        if name in self._members:
            return self._members[name]
        for base in self._members:
            if self._key(base) == name:
                return self._members[base]
        raise KeyError(name)

    def __contains__(self, name: object) -> bool:
        return name in self._members or any(self._key(b) == name for b in self._members)

    def __iter__(self) -> Iterator[str]:
        return iter(self.keys())

    def __len__(self) -> int:
        return len(self._members)

    def keys(self, keep_base: bool = False) -> list[str]:
        """The members' names as ``compute()`` reports them (``prefix + name + postfix``), in
        construction order; ``keep_base=True``: the names they were given.

        Parameters
        ----------
        keep_base : bool, default False
            Give the names without ``prefix`` / ``postfix`` (as torchmetrics' ``keep_base``).

        Returns
        -------
        list of str
        """
        return list(self._members) if keep_base else [self._key(n) for n in self._members]

    def values(self) -> list[Metric]:
        """The member accumulators, in construction order."""
        return list(self._members.values())

    def items(self, keep_base: bool = False) -> list[tuple[str, Metric]]:
        """``(name, metric)`` pairs of the members, in construction order, named as ``compute()``
        reports them (``keep_base=True``: as given).

        Parameters
        ----------
        keep_base : bool, default False
            Give the names without ``prefix`` / ``postfix``.

        Returns
        -------
        list of (str, Metric)
        """
        return list(zip(self.keys(keep_base), self._members.values(), strict=True))

    def clone(self, prefix: str | None = None, postfix: str | None = None) -> MetricSet:
        """An independent copy (own states, own lock), optionally renamed: torchmetrics'
        ``MetricCollection.clone``, e.g. ``val = train.clone(prefix="val_")``.

        Parameters
        ----------
        prefix, postfix : str, optional
            New ones for the copy (each kept from this set when not given).

        Returns
        -------
        MetricSet
            A twin with the same members and state. O(state size).
        """
        out = self.copy()
        if prefix is not None:
            out.prefix = _affix(prefix, "prefix")
        if postfix is not None:
            out.postfix = _affix(postfix, "postfix")
        return out

    @property
    def groups(self) -> list[list[str]]:
        """Member names grouped by the state they share."""
        return [list(g) for g in self._groups]

    def _states(self) -> list[State]:
        return [self._members[g[0]]._state for g in self._groups]

    def _owners(self) -> list[Metric]:
        """One member per distinct state (the first of each sharing group): the ones whose
        ``_prepare`` (label step, then the state's checks) a batch goes through."""
        return [self._members[g[0]] for g in self._groups]

    # -- protocol ----------------------------------------------------------------------------
    def _update_checked(self, batch: Any) -> MetricSet:
        """Feed a batch its maker has already checked (a ``LabelBatch`` or ``ScoreBatch`` of
        :mod:`streammetrics._core.validation`) to every distinct state, atomically: each
        state's ``prepare_checked`` takes it as it is (see ``Metric._update_checked``). For
        :mod:`streammetrics.functional`, whose members have no label step. O(the states'
        ``prepare``)."""
        owners = self._owners()
        deltas = [m._state.prepare_checked(batch) for m in owners]
        with self._lock:
            for m, delta in zip(owners, deltas, strict=True):
                m._state.apply(delta)
        return self

    def update(self, *args: Any, **kwargs: Any) -> MetricSet:  # type: ignore[override]
        """Feed one batch to every member (each distinct state once). Atomic for the set.

        Parameters
        ----------
        *args, **kwargs
            The arguments of the members' ``update``: ``(y_true, y_pred, *, sample_weight=None)``
            for classification and ranking, ``(relevance, scores, *, query_ids=None, ...)`` for
            retrieval; keywords only some members accept (``timestamp=``) go to those.

        Returns
        -------
        MetricSet
            ``self``.
        """
        try:
            if self._classification and len(args) >= 2 and not (
                # Skip the conversion when it would return both arguments unchanged (ints, floats,
                # numeric numpy arrays); inline because the per-sample and 1k-batch paths are
                # call-bound.
                ((t := type(args[0])) is _ndarray and args[0].dtype.kind in "biuf" or t is int or t is float)
                and ((t := type(args[1])) is _ndarray and args[1].dtype.kind in "biuf"
                     or t is int or t is float)
            ):
                # Convert foreign tensors once for all states, not once per state.
                args = tuple(a if is_scalar(a) else numeric_or_labels(a, n)
                             for a, n in zip(args, self._arg_names, strict=False)) + args[2:]
            owner = self._owner
            if owner is not None:  # the common case: every member shares one state
                delta = owner._prepare(*args, **kwargs)
                with self._lock:
                    owner._state.apply(delta)
                return self
            owners = self._owners()
            if kwargs:
                accepted = [None if a is None else {k: v for k, v in kwargs.items() if k in a}
                            for a in self._accepted]
                unused = set(kwargs).difference(*(a for a in self._accepted if a is not None))
                if unused and all(a is not None for a in self._accepted):
                    raise TypeError(f"update() got unexpected keyword arguments {sorted(unused)}")
                deltas = [m._prepare(*args, **(kwargs if kw is None else kw))
                          for m, kw in zip(owners, accepted, strict=True)]
            else:
                deltas = [m._prepare(*args) for m in owners]
            with self._lock:
                for m, delta in zip(owners, deltas, strict=False):
                    m._state.apply(delta)
            return self
        except ValueError as exc:
            if len(args) < 2 or not self._classification:
                raise
            takes_classes = any(hasattr(m, "_labels") for m in self._members.values())
            raise with_hint(exc, args[0], args[1], takes_classes) from None

    def _compute(self) -> MetricResults:
        return MetricResults({self._key(name): m._compute() for name, m in self._members.items()})

    def _config(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "members": {
                name: {"class": type(m).__name__, "config": m._config()}
                for name, m in self._members.items()
            },
            "groups": self.groups,
        }
        out.update({k: v for k, v in (("prefix", self.prefix), ("postfix", self.postfix)) if v})
        return out

    def _check_mergeable(self, other: Metric) -> None:
        if not isinstance(other, MetricSet):
            raise ValueError(f"merge: cannot merge {type(other).__name__} into a MetricSet")
        mine, theirs = self._config(), other._config()
        if mine["members"] != theirs["members"]:
            raise ValueError(
                f"merge: MetricSet members differ ({sorted(mine['members'])} vs "
                f"{sorted(theirs['members'])}, or their configurations)"
            )
        if mine["groups"] != theirs["groups"]:
            raise ValueError("merge: MetricSets share states differently; build both the same way")

    def merge(self, *others: Metric) -> MetricSet:
        """Fold other sets with the same members, configurations and sharing into this one.

        Parameters
        ----------
        *others : MetricSet
            Sets built the same way (e.g. on other workers); anything else is a ``ValueError``
            and nothing is merged.

        Returns
        -------
        MetricSet
            ``self``.
        """
        snapshots = self._snapshots(others, lambda other: [s.copy() for s in other._states()])
        with self._lock:
            for i, state in enumerate(self._states()):  # one k-way merge per state where it has one
                state.merge_many([snap[i] for snap in snapshots])
        return self

    def reset(self) -> MetricSet:
        """Empty every member's state; returns ``self``."""
        with self._lock:
            for state in self._states():
                state.reset()
        return self

    @property
    def nbytes(self) -> int:
        """Bytes held by the distinct states (a shared state counts once)."""
        with self._lock:
            return sum(state.nbytes for state in self._states())

    def _state_arrays(self) -> dict[str, Any]:
        out = {}
        for group in self._groups:
            for key, value in self._members[group[0]]._state.arrays().items():
                out[f"{group[0]}{_SEP}{key}"] = value
        return out

    def _load_arrays(self, arrays: Mapping[str, Any]) -> None:
        per_owner: dict[str, dict[str, Any]] = {g[0]: {} for g in self._groups}
        for key, value in arrays.items():
            owner, _, name = key.partition(_SEP)
            if owner not in per_owner or not name:
                raise ValueError(f"state: unexpected array {key!r} in a MetricSet")
            per_owner[owner][name] = value
        for owner, owned in per_owner.items():
            self._members[owner]._state.load_arrays(owned)

    @classmethod
    def _from_config(cls, config: Mapping[str, Any]) -> MetricSet:
        members_cfg = config.get("members")
        groups = config.get("groups")
        if not isinstance(members_cfg, Mapping) or not isinstance(groups, list):
            raise ValueError("state: a MetricSet config needs 'members' and 'groups'")
        members: dict[str, Metric] = {}
        for name, spec in members_cfg.items():
            if not isinstance(spec, Mapping):
                raise ValueError(f"state: bad member entry {name!r}")
            member_class = spec.get("class")
            target = Metric._registry.get(member_class) if isinstance(member_class, str) else None
            if target is None or target is MetricSet:
                raise ValueError(f"state: unknown metric class {spec.get('class')!r}")
            cfg = spec.get("config")
            if not isinstance(cfg, Mapping):
                raise ValueError(f"state: bad configuration for member {name!r}")
            members[name] = target._from_config(cfg)
        if not all(isinstance(g, list) and g and all(isinstance(n, str) for n in g) for g in groups):
            raise ValueError(f"state: MetricSet groups must be non-empty lists of member names, got "
                             f"{str(groups)[:200]}")
        out = cls(members, prefix=config.get("prefix"), postfix=config.get("postfix"))
        flat = sorted(n for g in groups for n in g)
        if flat != sorted(members):
            raise ValueError("state: MetricSet groups do not match its members")
        if out.groups != groups:
            out._regroup(groups)
        return out

    def _regroup(self, groups: list[list[str]]) -> None:
        """Share states exactly as ``groups`` says (used when loading)."""
        for group in groups:
            owner = self._members[group[0]]
            for name in group[1:]:
                if self._members[name].share_key() != owner.share_key():
                    raise ValueError(f"state: members {group[0]!r} and {name!r} cannot share a state")
        for group in groups:
            owner = self._members[group[0]]
            owner._state = owner._state.copy()
            for name in group[1:]:
                self._members[name]._state = owner._state
        self._groups = [list(g) for g in groups]
        self._set_owner()
