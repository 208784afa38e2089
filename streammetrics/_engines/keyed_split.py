"""Which sets the keyed ranges take, and their key layout (:mod:`streammetrics._engines.keyed_ranges`).

:func:`split_of` decides from a run's template and plan whether its exact ranking group goes by
(key, score) ranges and returns the :class:`KeyedSplit` every step shares: the ranked members,
the rest, the problems per slice (:attr:`KeyedSplit.width`) and which columns carry an AP or a
partial area. :func:`batch_tuples` turns a checked batch into keyed tuples (key, score,
positive, weight): a key is ``slice * width + column``, the column a class, a label, the pooled
micro problem, or an ordered class pair (one-vs-one, :func:`pair_codes`).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from streammetrics.ranking.metrics import AUROC, AveragePrecision
from streammetrics.wrappers.metricset import MetricSet

from . import label_codes
from . import ranked as ranked_engine
from .plan import Plan, numeric_dtype

#: The configuration the ranked members must have (exact AUROC, full or partial area, one-vs-rest
#: or one-vs-one; step AP; binary, multiclass or multilabel).
_REQUIRED = {"interpolated": False, "eleven_point": False}
_ALLOWED = {"num_classes", "multilabel", "average", "ignore_index", "max_fpr", "multi_class", *_REQUIRED}
#: The dtype a caller gives a score column holding one vector per row (an MLlib vector or an
#: array column): a multiclass / multilabel set's C scores, a binary one's ``positive_index``.
VECTOR = "vector"
#: Tuples: (problem codes int64, scores float64, positive bool, weights float64 or None).
Tuples = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray | None]


@dataclass(frozen=True)
class KeyedSplit:
    """How a run is split: the keyed ranked members, the rest (as states), the key layout."""

    names: tuple[str, ...]  #: every member of the (inner) set, in order
    ranked: dict[str, Any]  #: the ranked members' configurations (class, config)
    rest: dict[str, Any] | None  #: the rest's configuration (a MetricSet's, or a Sliced's with by)
    rest_kind: str  #: "MetricSet" or "Sliced"
    n_classes: int  #: C (1: binary)
    micro: bool  #: a member averages micro: one more pooled problem per slice
    ignore_index: int | None
    ranked_first: bool  #: whether the ranked group comes first (validation order)
    sliced: bool  #: by= slices
    bare: bool  #: a Sliced around one metric (a slice's value is the metric's, not a dict)
    key_names: tuple[str, ...] | None  #: the key columns' names (several by= columns)
    max_slices: int
    #: the distinct ``max_fpr`` below 1 of the AUROC members, increasing (partial areas)
    max_fprs: tuple[float, ...] = ()
    multilabel: bool = False  #: the C columns are labels (per-label binary problems)
    ovo: bool = False  #: one-vs-one AUROC: a problem per ordered class pair (:func:`pair_codes`)
    label: Any = "label"  #: the label column(s) (named in a refused label's message)

    @functools.cached_property
    def codec(self) -> Any:
        """The ranked members' label codec (``classes=`` / ``pos_label=``), or None: what
        :func:`label_codes.coded` maps each batch's labels with before they are checked."""
        return label_codes.ranked_codec(self.ranked)

    @property
    def ap(self) -> bool:
        """Whether a ranked member is ``AveragePrecision`` (else AUROC only)."""
        return any(cfg["class"] == "AveragePrecision" for cfg in self.ranked.values())

    @property
    def ap_columns(self) -> tuple[bool, ...]:
        """Per column of a slice's problems (:attr:`width`), whether an ``AveragePrecision``
        member reads its AP: the C class columns (binary: the one) unless every AP member
        averages micro, the pooled one if one does. What :func:`range_task` summarises."""
        if self.ovo:  # no AP shares a one-vs-one AUROC's state
            return (False,) * self.width
        micro = [cfg["config"].get("average") == "micro" and self.n_classes > 1 and self.micro
                 for cfg in self.ranked.values() if cfg["class"] == "AveragePrecision"]
        return (any(not m for m in micro),) * self.n_classes + ((any(micro),) if self.micro else ())

    @property
    def partial_columns(self) -> tuple[tuple[float, ...], ...]:
        """Per column of a slice's problems (:attr:`width`), the ``max_fpr`` values whose part
        of the partial ROC area ``range_task`` computes there: an ``AUROC(max_fpr=m)``
        member reads m in the class / label columns (binary: the one; one-vs-one: every pair),
        or in the pooled one when it averages micro. Empty tuples when no member has a partial
        area. O(members + width)."""
        cols: list[set[float]] = [set() for _ in range(self.width)]
        for cfg in self.ranked.values():
            m = cfg["config"].get("max_fpr")
            if cfg["class"] != "AUROC" or m is None or m == 1:
                continue
            pooled = cfg["config"].get("average") == "micro" and self.n_classes > 1 and self.micro
            for j in ([self.n_classes] if pooled else range(self.width if self.ovo else self.n_classes)):
                cols[j].add(float(m))
        return tuple(tuple(sorted(c)) for c in cols)

    @property
    def width(self) -> int:
        """Problems per slice: C columns (1 binary), plus the pooled one with micro; one-vs-one
        C (C - 1) ordered class pairs."""
        if self.ovo:
            return self.n_classes * (self.n_classes - 1)
        return self.n_classes + int(self.micro)


def split_of(template: Any, plan: Plan, dtypes: Mapping[str, Any], labels: bool = False) -> KeyedSplit | None:
    """The split of ``template`` (a MetricSet, or the ``Sliced`` of a ``by=`` run) when its exact
    ranking group is keyed -- multiclass one-vs-rest and/or ``by=`` -- and the keyed ranges give
    its values; else None (binary sets without ``by`` have their own range paths).

    Taken when one state group holds only exact ``AUROC`` (full area, or partial: any
    ``max_fpr``; one-vs-rest, or one-vs-one: a group of its own) / step ``AveragePrecision``
    members (binary, multiclass or multilabel -- one ``num_classes`` / ``multilabel`` /
    ``ignore_index`` / ``multi_class`` among them --, any ``average``; ``classes=`` /
    ``pos_label=`` only with ``labels``: a route that maps them, :mod:`.label_codes`), fed
    numeric label (one per label for multilabel; with ``classes=`` / ``pos_label=`` and no
    ``by=`` also strings, categoricals, objects, which ``Sliced`` refuses), score (one per
    class or label) and weight columns, no other ``update`` keywords. O(members)."""
    labels_in = [plan.label] if isinstance(plan.label, str) else list(plan.label)
    scores = [plan.score] if isinstance(plan.score, str) else list(plan.score)
    vector = isinstance(plan.score, str) and dtypes.get(plan.score) == VECTOR
    numeric = [vector or isinstance(c, str) and numeric_dtype(dtypes.get(c)) for c in scores]
    if plan.update_kwargs or not all(numeric) or not all(isinstance(c, str) for c in labels_in):
        return None
    weight = plan.weight
    if weight is not None and not (isinstance(weight, str) and numeric_dtype(dtypes.get(weight))):
        return None
    sliced = plan.kind == "Sliced"
    inner: Any = getattr(template, "metric", None) if sliced else template
    if sliced and (template.overflow != "error" or template.min_count or template.controls is not None):
        return None
    bare = sliced and not isinstance(inner, MetricSet)
    if bare:
        inner = MetricSet(m=type(inner)._from_config(inner._config()))
    if not isinstance(inner, MetricSet):
        return None
    groups = inner.groups
    ranked = [g for g in groups if all(type(inner[n]) in (AUROC, AveragePrecision) for n in g)]
    if len(ranked) != 1:
        return None
    cfgs = {n: inner[n]._config() for n in ranked[0]}
    first = next(iter(cfgs.values()))
    # Sliced reads its labels as numbers (strings refused before its members' codecs see them);
    # multilabel classes= name the label columns, which hold numbers
    mapped = labels and not sliced and not first["multilabel"] and label_codes.maps_labels(cfgs.values())
    if not all(label_codes.label_column(dtypes.get(c), mapped) for c in labels_in):
        return None
    allowed = _ALLOWED | label_codes.LABEL_KEYS if labels else _ALLOWED
    for cfg in cfgs.values():
        if set(cfg) - allowed or any(cfg.get(k, v) != v for k, v in _REQUIRED.items()):
            return None
        if any(cfg[k] != first[k] for k in ("num_classes", "ignore_index", "multilabel")) or \
                cfg.get("multi_class", "ovr") != first.get("multi_class", "ovr"):
            return None
    c, multilabel = first["num_classes"], bool(first["multilabel"])
    if not vector and ((c is None) != isinstance(plan.score, str) or (c is not None and len(scores) != c)):
        return None
    if multilabel != (not isinstance(plan.label, str)) or (multilabel and len(labels_in) != c):
        return None  # a multilabel target is L label columns, any other one label column
    if c is None and not sliced:
        return None  # binary without slices: range_counts / the ranked engine
    order = tuple(n for n, _ in inner.items())
    others = [n for n in order if n not in ranked[0]]
    rest, rest_kind = None, "MetricSet"
    if others:
        twin = MetricSet({n: type(inner[n])._from_config(inner[n]._config()) for n in others})
        if twin._config()["groups"] != [g for g in groups if g is not ranked[0]]:
            return None
        rest = twin._config()
        if sliced:
            rest = {**template._config(), "metric": {"class": "MetricSet", "config": rest}}
            rest_kind = "Sliced"
    members = inner._config()["members"]
    micro = any(members[n]["config"]["average"] == "micro" for n in ranked[0]) and c is not None
    names = plan.by if sliced and not isinstance(plan.by, str) else None
    return KeyedSplit(order, {n: members[n] for n in ranked[0]}, rest, rest_kind, c or 1, micro,
                      first["ignore_index"], groups.index(ranked[0]) == 0, sliced, bare,
                      None if names is None else tuple(names), int(template.max_slices) if sliced else 1,
                      ranked_engine.partial_fprs(cfgs.values()), multilabel,
                      first.get("multi_class", "ovr") == "ovo", plan.label)


def task_of(split: KeyedSplit) -> str:
    """The ranking task the keyed members validate their batches as. O(members)."""
    if split.multilabel:
        return "multilabel"
    multiclass = any(cfg["config"]["num_classes"] is not None for cfg in split.ranked.values())
    return "multiclass" if multiclass else "binary"


def pair_codes(i: Any, j: Any, c: int) -> Any:
    """The column of the ordered class pair (i, j), i != j, among a slice's C (C - 1) one-vs-one
    problems: ``i (C - 1) + j - (j > i)`` (row-major, the diagonal left out), for two ints or
    two arrays (elementwise). O(n)."""
    return i * (c - 1) + j - (j > i)


def batch_tuples(y: np.ndarray, s: np.ndarray, w: np.ndarray | None, rows: np.ndarray,
                 split: KeyedSplit) -> list[Tuples]:
    """A checked batch's keyed tuples (``score_batch``'s labels, scores and weights; ``rows`` each
    row's slice code), the layouts of the ``keyed_ranges`` module docstring: binary one per
    row; multiclass one-vs-rest C per row (+ C pooled with micro); multilabel one per entry
    (:func:`_label_tuples`); one-vs-one 2 (C - 1) per row (:func:`_pair_tuples`). Rows whose
    label is ``ignore_index`` and rows of weight 0 are left out (a zero weight is a removal).
    O(n x width)."""
    width, c = split.width, split.n_classes
    if split.multilabel:  # an (n, L) target: ignore_index drops an entry, not its row
        return _label_tuples(y, s, w, rows, split)
    keep = np.ones(y.shape[0], bool) if split.ignore_index is None else y != split.ignore_index
    if w is not None:
        keep &= w != 0
    y, s, rows = y[keep], s[keep], rows[keep]
    w = None if w is None else w[keep]
    if s.ndim == 1:
        return [(rows * width, s.astype(np.float64), y != 0, w)]
    if split.ovo:
        return _pair_tuples(y, s, w, rows, split)
    cols = np.arange(c)
    codes = (rows[:, None] * width + cols).ravel()
    flat = s.astype(np.float64).ravel()
    pos = (y[:, None] == cols).ravel()
    wt = None if w is None else np.repeat(w, c)
    out = [(codes, flat, pos, wt)]
    if split.micro:
        out.append((np.repeat(rows * width + c, c), flat, pos, wt))
    return out


def _pair_tuples(y: np.ndarray, s: np.ndarray, w: np.ndarray | None, rows: np.ndarray,
                 split: KeyedSplit) -> list[Tuples]:
    """One-vs-one tuples of checked multiclass rows (ignored and zero-weight rows already out):
    a row of class y is a positive of each pair (y, j), j != y, with its column-y score, and a
    negative of each pair (i, y), i != y, with its column-i score -- AUC(i|j) compares class
    i's column-i scores with class j's. O(n x C)."""
    n, c = s.shape
    y = y.astype(np.int64)
    other = np.broadcast_to(np.arange(c), (n, c))[np.arange(c)[None, :] != y[:, None]].reshape(n, c - 1)
    yy = np.broadcast_to(y[:, None], other.shape)
    base = np.broadcast_to((rows * split.width)[:, None], other.shape)
    s64 = s.astype(np.float64)
    codes = np.concatenate([(base + pair_codes(yy, other, c)).ravel(),  # class y the positives
                            (base + pair_codes(other, yy, c)).ravel()])  # class y the negatives
    scores = np.concatenate([np.repeat(s64[np.arange(n), y], c - 1),
                             np.take_along_axis(s64, other, 1).ravel()])
    pos = np.repeat(np.array([True, False]), n * (c - 1))
    wt = None if w is None else np.tile(np.repeat(w, c - 1), 2)
    return [(codes, scores, pos, wt)]


def _label_tuples(y: np.ndarray, s: np.ndarray, w: np.ndarray | None, rows: np.ndarray,
                  split: KeyedSplit) -> list[Tuples]:
    """A checked multilabel batch's tuples: one per (row, label) entry -- key slice x label,
    positive when the entry is 1 -- plus the pooled (micro) problem's copy; entries equal to
    ``ignore_index`` and rows of weight 0 left out, as the exact state leaves them out of every
    column and of the pooled one. O(n x L)."""
    keep = np.ones(y.shape, bool) if split.ignore_index is None else y != split.ignore_index
    if w is not None:
        keep &= (w != 0)[:, None]
    width, c = split.width, split.n_classes
    codes = (rows[:, None] * width + np.arange(c))[keep]
    flat, pos = s.astype(np.float64)[keep], y[keep] != 0
    wt = None if w is None else np.broadcast_to(w[:, None], y.shape)[keep]
    out = [(codes, flat, pos, wt)]
    if split.micro:
        out.append((np.broadcast_to(rows[:, None] * width + c, y.shape)[keep], flat, pos, wt))
    return out
