"""Which sets the keyed ranges take, and their key layout (:mod:`streammetrics._engines.keyed_ranges`).

:func:`split_of` decides from a run's template and plan whether its exact ranking groups go by
(key, score) ranges and returns the :class:`KeyedSplit` every step shares: the ranked members,
the rest, the problems per slice (:attr:`KeyedSplit.width`) and which columns carry an AP, a
partial area or the KS readout (an exact ``KSStatistic`` in the group: the class columns).
:func:`batch_tuples` turns a checked batch into keyed tuples (key, score, positive, weight): a
key is ``slice * width + column``, the column a class, a label, the pooled
micro problem, or an ordered class pair (one-vs-one, :func:`pair_codes`). A set of several
exact groups (one-vs-one beside one-vs-rest, another ``ignore_index``) is one split: each group
its own columns of a slice, after the previous group's (:attr:`KeyedSplit.more`,
:attr:`KeyedSplit.starts`).
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from streammetrics.calibration.ks_gains import KSStatistic
from streammetrics.ranking.metrics import AUROC, AveragePrecision
from streammetrics.wrappers.metricset import MetricSet

from . import label_codes
from . import ranked as ranked_engine
from .plan import Plan, numeric_dtype
from .rest_order import rest_keywords

#: The configuration the ranked members must have (exact AUROC, full or partial area, one-vs-rest
#: or one-vs-one; AP step, interpolated or 11-point -- the ranges' envelopes,
#: :attr:`KeyedSplit.envelope_columns`; binary, multiclass or multilabel).
_REQUIRED: dict[str, Any] = {}
_ALLOWED = {"num_classes", "multilabel", "average", "ignore_index", "max_fpr", "multi_class", "interpolated",
            "eleven_point", "scores", *_REQUIRED}
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
    sliced: bool  #: by= slices
    bare: bool  #: a Sliced around one metric (a slice's value is the metric's, not a dict)
    key_names: tuple[str, ...] | None  #: the key columns' names (several by= columns)
    max_slices: int
    #: the distinct ``max_fpr`` below 1 of the AUROC members, increasing (partial areas)
    max_fprs: tuple[float, ...] = ()
    multilabel: bool = False  #: the C columns are labels (per-label binary problems)
    ovo: bool = False  #: one-vs-one AUROC: a problem per ordered class pair (:func:`pair_codes`)
    #: the set's further exact ranking groups (another ``ignore_index``, one-vs-one beside
    #: one-vs-rest), each the split of its own members alone (``rest`` None), in the set's group
    #: order; the fields above describe the first group (``max_fprs``: the union of all). A
    #: slice's problems are each group's columns after the previous group's (:attr:`starts`)
    more: tuple[KeyedSplit, ...] = ()

    @property
    def groups(self) -> tuple[KeyedSplit, ...]:
        """Each exact ranking group's split alone (no :attr:`more`), in the set's group order. O(groups)."""
        return (dataclasses.replace(self, more=()), *self.more) if self.more else (self,)

    @property
    def starts(self) -> tuple[int, ...]:
        """Per group (:attr:`groups`), its first column among a slice's :attr:`width` problems. O(groups)."""
        out, at = [], 0
        for g in self.groups:
            out.append(at)
            at += g.width
        return tuple(out)
    label: Any = "label"  #: the label column(s) (named in a refused label's message)
    #: the rest's members whose state groups come before this group in the set's order (their
    #: checks come first in one process's ``update``: :func:`.rest_order.checked_first`)
    before: tuple[str, ...] = ()
    #: the engine arguments' columns (:meth:`~.plan.Plan.fed`), named in a refused batch's message
    fed: Mapping[str, Any] | None = None
    #: the ``update`` keywords the rest's members take (:func:`.rest_order.rest_keywords`), fed with its rows
    kwargs: Mapping[str, Any] = dataclasses.field(default_factory=dict)

    @functools.cached_property
    def codec(self) -> Any:
        """The ranked members' label codec (``classes=`` / ``pos_label=``), or None: what
        :func:`label_codes.coded` maps each batch's labels with before they are checked (each
        group of :attr:`groups` its own)."""
        return label_codes.ranked_codec(self.ranked)

    @functools.cached_property
    def checks(self) -> Any:
        """The ranked members' exact state, empty (:func:`label_codes.ranked_checks`): its
        ``check`` validates a batch's coded labels, scores and weights as their ``update`` does
        (``scores="probability"``: the probability buffer's checks too)."""
        return label_codes.ranked_checks(self.ranked)

    @property
    def ap(self) -> bool:
        """Whether a ranked member is ``AveragePrecision`` (else AUROC only)."""
        return any(cfg["class"] == "AveragePrecision" for g in self.groups for cfg in g.ranked.values())

    @property
    def ap_columns(self) -> tuple[bool, ...]:
        """Per column of a slice's problems (:attr:`width`), whether an ``AveragePrecision``
        member reads its AP: the C class columns (binary: the one) unless every AP member
        averages micro, the pooled one if one does. What :func:`range_task` summarises."""
        return self._ap_read(lambda config: True)

    @property
    def envelope_columns(self) -> tuple[tuple[tuple[bool, bool], ...], ...]:
        """Per column of a slice's problems (:attr:`width`), the interpolated / 11-point readouts
        ``(interpolated, eleven_point)`` (:func:`ranked.ap_kind`) of the ``AveragePrecision``
        members that read it (as :attr:`ap_columns`; empty: none): ``range_task`` then adds each
        such key's share of them to its summary
        (:func:`~streammetrics._engines.ap_envelope.range_part`: the precision envelope only
        where an interpolated member reads it, the 11 levels always); with :attr:`more`, each
        group's columns in turn. O(members x width)."""
        if self.more:
            return tuple(e for g in self.groups for e in g.envelope_columns)
        kinds = sorted({ranked_engine.ap_kind(cfg["config"]) for cfg in self.ranked.values()
                        if cfg["class"] == "AveragePrecision"} - {(False, False)})
        reads = [self._ap_read(lambda config, k=k: ranked_engine.ap_kind(config) == k) for k in kinds]
        return tuple(tuple(k for k, cols in zip(kinds, reads, strict=True) if cols[j])
                     for j in range(self.width))

    def _ap_read(self, reads: Any) -> tuple[bool, ...]:
        """Per column, whether an AP member whose configuration satisfies ``reads`` reads it
        (with :attr:`more`, each group's columns in turn)."""
        if self.more:
            return tuple(a for g in self.groups for a in g._ap_read(reads))
        if self.ovo:  # no AP shares a one-vs-one AUROC's state
            return (False,) * self.width
        micro = [cfg["config"].get("average") == "micro" and self.n_classes > 1 and self.micro
                 for cfg in self.ranked.values()
                 if cfg["class"] == "AveragePrecision" and reads(cfg["config"])]
        return (any(not m for m in micro),) * self.n_classes + ((any(micro),) if self.micro else ())

    @property
    def partial_columns(self) -> tuple[tuple[float, ...], ...]:
        """Per column of a slice's problems (:attr:`width`), the ``max_fpr`` values whose part
        of the partial ROC area ``range_task`` computes there: an ``AUROC(max_fpr=m)``
        member reads m in the class / label columns (binary: the one; one-vs-one: every pair),
        or in the pooled one when it averages micro; a ``KSStatistic`` reads the
        :data:`~.ranked.KS` readout in the class columns. Empty tuples when no member has a
        partial area or a KS. O(members + width)."""
        if self.more:
            return tuple(p for g in self.groups for p in g.partial_columns)
        cols: list[set[float]] = [set() for _ in range(self.width)]
        for cfg in self.ranked.values():
            if cfg["class"] == KSStatistic.__name__:  # its readout in the C class columns
                for j in range(self.n_classes):
                    cols[j].add(ranked_engine.KS)
                continue
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
        C (C - 1) ordered class pairs; with :attr:`more`, the sum over the groups."""
        if self.more:
            return sum(g.width for g in self.groups)
        if self.ovo:
            return self.n_classes * (self.n_classes - 1)
        return self.n_classes + int(self.micro)


def split_of(template: Any, plan: Plan, dtypes: Mapping[str, Any], labels: bool = False) -> KeyedSplit | None:
    """The split of ``template`` (a MetricSet, or the ``Sliced`` of a ``by=`` run) when its exact
    ranking groups are keyed -- multiclass / multilabel, ``by=``, or more than one group -- and
    the keyed ranges give their values; else None (one binary group without ``by`` has its own
    range paths, wherever the other members' groups sit: :func:`.rest_order.checked_first`).

    Taken when one or more state groups hold only exact ``AUROC`` (full area, or partial: any
    ``max_fpr``; one-vs-rest, or one-vs-one: a group of its own) / ``AveragePrecision`` (step,
    interpolated or 11-point) / ``KSStatistic`` members (binary, multiclass or multilabel -- one
    ``num_classes`` / ``multilabel`` among all of them, one ``ignore_index`` / ``multi_class`` per
    group --, any ``average``: :func:`_keyed_group`; ``classes=`` / ``pos_label=`` only with
    ``labels``, a route that maps them, :mod:`.label_codes`: each group with its own codec), fed numeric label
    (one per label for multilabel; with ``classes=`` / ``pos_label=`` and no ``by=`` also
    strings, categoricals, objects, which ``Sliced`` refuses), score (one per class or label)
    and weight columns, ``update`` keywords only the rest takes (:func:`.rest_order.rest_keywords`: fed
    with its rows; none with ``by=``); ``scores="probability"`` members too (their
    state's checks, :attr:`KeyedSplit.checks`). Every other group (bounded ``max_bytes`` AUROC,
    F1, ...) travels as states, before, between or after the exact groups (the errors keep the
    set's group order: :attr:`KeyedSplit.before`). O(members)."""
    labels_in = [plan.label] if isinstance(plan.label, str) else list(plan.label)
    scores = [plan.score] if isinstance(plan.score, str) else list(plan.score)
    vector = isinstance(plan.score, str) and dtypes.get(plan.score) == VECTOR
    numeric = [vector or isinstance(c, str) and numeric_dtype(dtypes.get(c)) for c in scores]
    if not all(numeric) or not all(isinstance(c, str) for c in labels_in):
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
    allowed = _ALLOWED | label_codes.LABEL_KEYS if labels else _ALLOWED
    ranked = [g for g in groups if _keyed_group(inner, g, allowed)]
    kwargs = rest_keywords(None if sliced else inner, ranked, plan.update_kwargs)
    if not ranked or kwargs is None:
        return None
    firsts = [_full(inner[g[0]]._config()) for g in ranked]
    if any((f["num_classes"], f["multilabel"]) != (firsts[0]["num_classes"], firsts[0]["multilabel"])
           for f in firsts):
        return None
    # Sliced reads its labels as numbers (strings refused before its members' codecs see them);
    # multilabel classes= name the label columns, which hold numbers; each group its own codec
    mapped = labels and not sliced and not firsts[0]["multilabel"] and all(
        label_codes.maps_labels(inner[n]._config() for n in g) for g in ranked)
    if not all(label_codes.label_column(dtypes.get(c), mapped) for c in labels_in):
        return None
    c, multilabel = firsts[0]["num_classes"], bool(firsts[0]["multilabel"])
    if not vector and ((c is None) != isinstance(plan.score, str) or (c is not None and len(scores) != c)):
        return None
    if multilabel != (not isinstance(plan.label, str)) or (multilabel and len(labels_in) != c):
        return None  # a multilabel target is L label columns, any other one label column
    at = [i for i, g in enumerate(groups) if g not in ranked]  # the rest's groups
    if c is None and not sliced and len(ranked) == 1:
        return None  # one binary group without slices: range_counts / the ranked engine
    order = tuple(n for n, _ in inner.items())
    others = [n for n in order if not any(n in g for g in ranked)]
    rest, rest_kind = None, "MetricSet"
    if others:
        twin = MetricSet({n: type(inner[n])._from_config(inner[n]._config()) for n in others})
        if twin._config()["groups"] != [g for g in groups if g not in ranked]:
            return None
        rest = twin._config()
        if sliced:
            rest = {**template._config(), "metric": {"class": "MetricSet", "config": rest}}
            rest_kind = "Sliced"
    members = inner._config()["members"]
    names = plan.by if sliced and not isinstance(plan.by, str) else None
    parts = []
    for g, first in zip(ranked, firsts, strict=True):
        micro = any(members[n]["config"].get("average") == "micro" for n in g) and c is not None
        parts.append(KeyedSplit(order, {n: members[n] for n in g}, None, rest_kind, c or 1, micro,
                                first["ignore_index"], sliced, bare,
                                None if names is None else tuple(names),
                                int(template.max_slices) if sliced else 1,
                                _readouts(inner, g), multilabel,
                                first.get("multi_class", "ovr") == "ovo", label=plan.label,
                                before=tuple(n for i in at if i < groups.index(g) for n in groups[i]),
                                fed=plan.fed(), kwargs=kwargs))
    every = _readouts(inner, [n for g in ranked for n in g])
    return dataclasses.replace(parts[0], rest=rest, max_fprs=every, more=tuple(parts[1:]))


def _full(cfg: Mapping[str, Any]) -> dict[str, Any]:
    """A member's configuration with the keys a ``KSStatistic`` leaves out at their defaults
    (its state is that of ``ignore_index=None``, not multilabel). O(1)."""
    return {"num_classes": None, "ignore_index": None, "multilabel": False, **cfg}


def _readouts(inner: MetricSet, names: Sequence[str]) -> tuple[float, ...]:
    """The members' readouts from offset curve points (:func:`ranked.readouts`). O(members)."""
    return ranked_engine.readouts((type(inner[n]).__name__, inner[n]._config()) for n in names)


def _keyed_group(inner: MetricSet, group: Sequence[str], allowed: Any = frozenset(_ALLOWED)) -> bool:
    """Whether a state group's members are exact ``AUROC`` / ``AveragePrecision`` /
    ``KSStatistic`` the keyed kernel serves (configuration keys among ``allowed``, ``scores``
    "raw" or "logit": the same exact state; one ``num_classes`` / ``ignore_index`` /
    ``multilabel`` / ``multi_class`` among them). O(members)."""
    if not all(type(inner[n]) in (AUROC, AveragePrecision, KSStatistic) for n in group):
        return False
    cfgs = [_full(inner[n]._config()) for n in group]
    for cfg in cfgs:
        if set(cfg) - allowed or any(cfg.get(k, v) != v for k, v in _REQUIRED.items()):
            return False
        if any(cfg[k] != cfgs[0][k] for k in ("num_classes", "ignore_index", "multilabel")) or \
                cfg.get("multi_class", "ovr") != cfgs[0].get("multi_class", "ovr"):
            return False
    return True


def task_of(split: KeyedSplit) -> str:
    """The ranking task the keyed members validate their batches as. O(members)."""
    if split.multilabel:
        return "multilabel"
    multiclass = any(cfg["config"].get("num_classes") is not None for cfg in split.ranked.values())
    return "multiclass" if multiclass else "binary"


def pair_codes(i: Any, j: Any, c: int) -> Any:
    """The column of the ordered class pair (i, j), i != j, among a slice's C (C - 1) one-vs-one
    problems: ``i (C - 1) + j - (j > i)`` (row-major, the diagonal left out), for two ints or
    two arrays (elementwise). O(n)."""
    return i * (c - 1) + j - (j > i)


def batch_tuples(y: np.ndarray, s: np.ndarray, w: np.ndarray | None, rows: np.ndarray,
                 split: KeyedSplit, stride: int | None = None, start: int = 0) -> list[Tuples]:
    """A checked batch's keyed tuples for one group's ``split`` (``score_batch``'s labels, scores
    and weights; ``rows`` each row's slice code; a slice's problems ``stride`` apart -- default
    the group's :attr:`~KeyedSplit.width` --, the group's columns from ``start`` on: the
    key is ``slice * stride + start + column``), the layouts of the ``keyed_ranges`` module
    docstring: binary one per row; multiclass one-vs-rest C per row (+ C pooled with micro);
    multilabel one per entry (:func:`_label_tuples`); one-vs-one 2 (C - 1) per row
    (:func:`_pair_tuples`). Rows whose label is ``ignore_index`` and rows of weight 0 are left
    out (a zero weight is a removal). O(n x width)."""
    width, c = split.width, split.n_classes
    base = rows * (width if stride is None else stride) + start  # each row's first problem code
    if split.multilabel:  # an (n, L) target: ignore_index drops an entry, not its row
        return _label_tuples(y, s, w, base, split)
    keep = np.ones(y.shape[0], bool) if split.ignore_index is None else y != split.ignore_index
    if w is not None:
        keep &= w != 0
    y, s, base = y[keep], s[keep], base[keep]
    w = None if w is None else w[keep]
    if s.ndim == 1:
        return [(base, s.astype(np.float64), y != 0, w)]
    if split.ovo:
        return _pair_tuples(y, s, w, base, split)
    cols = np.arange(c)
    codes = (base[:, None] + cols).ravel()
    flat = s.astype(np.float64).ravel()
    pos = (y[:, None] == cols).ravel()
    wt = None if w is None else np.repeat(w, c)
    out = [(codes, flat, pos, wt)]
    if split.micro:
        out.append((np.repeat(base + c, c), flat, pos, wt))
    return out


def _pair_tuples(y: np.ndarray, s: np.ndarray, w: np.ndarray | None, base: np.ndarray,
                 split: KeyedSplit) -> list[Tuples]:
    """One-vs-one tuples of checked multiclass rows (ignored and zero-weight rows already out;
    ``base`` each row's first problem code): a row of class y is a positive of each pair
    (y, j), j != y, with its column-y score, and a negative of each pair (i, y), i != y, with
    its column-i score -- AUC(i|j) compares class i's column-i scores with class j's. O(n x C)."""
    n, c = s.shape
    y = y.astype(np.int64)
    other = np.broadcast_to(np.arange(c), (n, c))[np.arange(c)[None, :] != y[:, None]].reshape(n, c - 1)
    yy = np.broadcast_to(y[:, None], other.shape)
    base = np.broadcast_to(base[:, None], other.shape)
    s64 = s.astype(np.float64)
    codes = np.concatenate([(base + pair_codes(yy, other, c)).ravel(),  # class y the positives
                            (base + pair_codes(other, yy, c)).ravel()])  # class y the negatives
    scores = np.concatenate([np.repeat(s64[np.arange(n), y], c - 1),
                             np.take_along_axis(s64, other, 1).ravel()])
    pos = np.repeat(np.array([True, False]), n * (c - 1))
    wt = None if w is None else np.tile(np.repeat(w, c - 1), 2)
    return [(codes, scores, pos, wt)]


def _label_tuples(y: np.ndarray, s: np.ndarray, w: np.ndarray | None, base: np.ndarray,
                  split: KeyedSplit) -> list[Tuples]:
    """A checked multilabel batch's tuples (``base`` each row's first problem code): one per
    (row, label) entry -- key slice x label, positive when the entry is 1 -- plus the pooled
    (micro) problem's copy; entries equal to ``ignore_index`` and rows of weight 0 left out, as
    the exact state leaves them out of every column and of the pooled one. O(n x L)."""
    keep = np.ones(y.shape, bool) if split.ignore_index is None else y != split.ignore_index
    if w is not None:
        keep &= (w != 0)[:, None]
    c = split.n_classes
    codes = (base[:, None] + np.arange(c))[keep]
    flat, pos = s.astype(np.float64)[keep], y[keep] != 0
    wt = None if w is None else np.broadcast_to(w[:, None], y.shape)[keep]
    out = [(codes, flat, pos, wt)]
    if split.micro:
        out.append((np.broadcast_to(base[:, None] + c, y.shape)[keep], flat, pos, wt))
    return out
