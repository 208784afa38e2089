"""The set's other members beside an exact ranking group on the range routes: which ``update``
keywords they take (:func:`rest_keywords`, :func:`keywords_for`) and the one error-order rule
of every route that checks a batch for an exact group apart from them (:func:`checked_first`:
the group's checks first; on a refusal a fresh set of the members before the group
(:func:`before_set`) is fed the batch, so the error raised is one process's; :class:`FedTables`
feeds Arrow tables to the others after the group's checks).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import replace
from typing import Any

from streammetrics._core.metric import Metric
from streammetrics.wrappers.metricset import MetricSet

from .plan import Plan, empty_set, feed_arrow


def rest_keywords(inner: Any, ranked: Sequence[Sequence[str]],
                  kwargs: Mapping[str, Any]) -> dict[str, Any] | None:
    """The ``update`` keywords (``kwargs``: the engine's ``**update_kwargs``) a range route feeds
    the set's other members with, or None where it must not take the set (the state path keeps
    one process's behaviour). One ``MetricSet.update`` gives each keyword to the state groups
    whose ``prepare`` accepts it and raises TypeError for one no group accepts: the ranges take
    the keywords when no exact group of ``ranked`` (state groups of ``inner``, a MetricSet)
    accepts any and every keyword has a taker among the other groups -- the rest's ``update``
    then routes them as one process does. ``inner`` None (``Sliced``: it gives every keyword to
    every member, the exact ones too): only without keywords. O(groups x keywords)."""
    if not kwargs:
        return {}
    if not isinstance(inner, MetricSet):
        return None
    accepted = inner._accepted  # per state group, in inner.groups' order (None: any keyword)
    exact = {i for i, g in enumerate(inner.groups) if g in ranked}
    if any(a is None or not a.isdisjoint(kwargs) for i, a in enumerate(accepted) if i in exact):
        return None
    others = [a for i, a in enumerate(accepted) if i not in exact]
    if not all(any(a is None or k in a for a in others) for k in kwargs):
        return None
    return dict(kwargs)


class FedTables:
    """Arrow tables passed on unchanged (iterate it), each also fed to ``acc`` (a set's other
    members, fed by ``plan``; a row named by its position in ``where``) once the consumer -- the
    exact group's checks -- asks for the next one: the group's errors first, the order of
    :func:`checked_first`, whose ``feed`` :meth:`offer` is. O(rows)."""

    def __init__(self, tables: Iterable[Any], acc: Metric, plan: Plan, where: str) -> None:
        self.tables, self.acc, self.plan, self.where = tables, acc, plan, where
        self.table: Any = None  #: the table in the consumer's hands
        self.offset = 0  #: its first row's position

    def __iter__(self) -> Iterator[Any]:
        for table in self.tables:
            self.table = table
            yield table
            feed_arrow(self.acc, table, self.plan, self.where, self.offset)
            self.offset += table.num_rows

    def offer(self, acc: Metric, kwargs: Mapping[str, Any]) -> None:
        """Feed the consumer's table to ``acc`` with the ``update`` keywords ``kwargs``."""
        if self.table is not None:
            plan = replace(self.plan, update_kwargs=dict(kwargs))
            feed_arrow(acc, self.table, plan, self.where, self.offset)


def keywords_for(acc: Any, kwargs: Mapping[str, Any]) -> dict[str, Any]:
    """The keywords of ``kwargs`` a MetricSet ``acc`` (a subset of a set's members) takes from
    its ``update`` -- those one of its state groups accepts, as the whole set's ``update``
    routes them -- or all of them for any other accumulator. O(groups x keywords)."""
    if not kwargs or not isinstance(acc, MetricSet):
        return dict(kwargs)
    return {k: v for k, v in kwargs.items() if any(a is None or k in a for a in acc._accepted)}


def before_set(rest: Mapping[str, Any] | None, kind: str, before: Sequence[str]) -> Metric | None:
    """A fresh accumulator of the members ``before`` of ``rest`` (the configuration of a set's
    other members, a MetricSet's or, ``kind`` "Sliced", a Sliced's around one), or None when
    there are none. O(members)."""
    if not before or rest is None:
        return None
    sliced = kind == "Sliced"
    cfg = rest["metric"]["config"] if sliced else rest
    keep = set(before)
    sub = {**cfg, "members": {n: c for n, c in cfg["members"].items() if n in keep},
           "groups": [g for g in cfg["groups"] if g[0] in keep]}
    return empty_set({**rest, "metric": {"class": "MetricSet", "config": sub}} if sliced else sub, kind)


@contextlib.contextmanager
def checked_first(rest: Mapping[str, Any] | None, kind: str, before: Sequence[str], kwargs: Mapping[str, Any],
                  feed: Any) -> Iterator[None]:
    """The one error-order rule of the routes that check a batch for an exact ranking group apart
    from the set's other members (``rest``, of class ``kind``): the group's checks run inside,
    first -- the caller feeds the other members once they pass (their errors then come in
    their own order, after the group's, as in one process). A ValueError the checks raise is
    re-raised after ``feed(acc, keywords)`` gave the batch to a fresh accumulator of the members
    whose groups come ``before`` the group (:func:`before_set`; ``keywords``: those of the
    ``update`` keywords ``kwargs`` they take, :func:`keywords_for`): their error, one
    process's first, is raised instead when they refuse it too. The error path only. O(1)."""
    try:
        yield
    except ValueError:
        acc = before_set(rest, kind, before)
        if acc is not None:
            feed(acc, keywords_for(acc, kwargs))
        raise


def checked_rows(split: Any, y: Any, p: Any, w: Any = None, before: Sequence[str] | None = None,
                 kwargs: Mapping[str, Any] | None = None) -> Any:
    """:func:`checked_first` of one batch of arrays (labels ``y``, scores ``p``, weights ``w``)
    for a split of the range routes (``range_counts.Split``, ``keyed_split.KeyedSplit``: its
    ``rest``, ``rest_kind``, ``before`` and ``kwargs`` unless ``before`` / ``kwargs`` are
    given): the members before the group are offered ``update(y, p, sample_weight=w, ...)``.
    O(1)."""
    return checked_first(split.rest, getattr(split, "rest_kind", "MetricSet"),
                         split.before if before is None else before,
                         split.kwargs if kwargs is None else kwargs,
                         lambda acc, kw: acc.update(y, p, sample_weight=w, **kw))


@contextlib.contextmanager
def rest_fed(tables: Iterable[Any], acc: Metric | None, plan: Plan | None, before: Sequence[str],
             where: str) -> Iterator[Iterable[Any]]:
    """The tables for the exact group's checks (the ``with`` body), each fed to ``acc`` -- the
    set's other members, fed by ``plan`` -- after them (:class:`FedTables`), a refusal in the
    body raised in the set's group order (:func:`checked_first`, the members ``before`` the
    group offered the refused table); ``tables`` unchanged when ``acc`` is None. O(1)."""
    if acc is None or plan is None:
        yield tables
        return
    fed = FedTables(tables, acc, plan, where)
    with checked_first(plan.config, plan.kind, before, plan.update_kwargs, fed.offer):
        yield fed
