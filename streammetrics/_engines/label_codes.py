"""The labels of an engine's range routes mapped as the ranked members' own ``update`` maps them.

An exact ``AUROC`` / ``AveragePrecision`` built with ``pos_label=`` (binary labels such as
``"spam"`` / ``"ham"``) or ``classes=`` (the labels in class order) maps each batch's labels to
the codes its state counts -- 0 / 1 for a binary task (1 the positive label), ``0..C-1`` for a
multiclass one, ``ignore_index`` passing through -- in front of the state
(:attr:`~streammetrics._core.metric.Metric._codec`, a
:class:`~streammetrics._core.labels.LabelCodec`). The range routes (``range_counts``,
``keyed_ranges`` and the engines' tasks over them) check and split the ranked members' rows
themselves (:func:`~streammetrics._core.validation.score_batch`), so they map the labels first
with the same codec: :func:`ranked_codec` builds it from the members' configuration,
:func:`coded` applies it to a batch (an unknown label, or more than two labels with
``pos_label=`` alone, the codec's ``ValueError``, with the label column and the rows named in
front), and :func:`label_column` says which label columns a route then reads. The set's other
members are fed the labels as they are (their own codecs map them).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from streammetrics._core.metric import Metric

from .messages import brief, located_message
from .plan import numeric_dtype

#: The configuration keys of the label arguments the routes map (:func:`coded`).
LABEL_KEYS = frozenset({"classes", "pos_label"})


def ranked_codec(ranked: Mapping[str, Any]) -> Any:
    """The label codec of the ranked members (``{name: {"class": ..., "config": ...}}``, one
    state group: their codecs agree, ``Metric.share_key``), or None when they map no labels
    (no ``classes=`` / ``pos_label=``; a multilabel target is read as it is). O(C) (one
    metric built from its configuration)."""
    first = next(iter(ranked.values()))
    if not LABEL_KEYS & set(first["config"]):
        return None
    codec = _first(ranked)._codec
    return None if codec is None or codec.task == "multilabel" else codec


def ranked_checks(ranked: Mapping[str, Any]) -> Any:
    """The ranked members' exact score state (one state group, empty): its ``check`` is their
    ``update``'s checks of a batch whose labels :func:`coded` mapped (``score_batch``; with
    ``scores="probability"`` the probability buffer's: values in [0, 1], multiclass row sums),
    what a range route applies to each batch before it splits the rows itself. O(C)."""
    return _first(ranked)._state


def _first(ranked: Mapping[str, Any]) -> Metric:
    """The first ranked member, built from its configuration. O(C)."""
    first = next(iter(ranked.values()))
    return Metric._registry[first["class"]]._from_config(first["config"])


def coded(y: Any, codec: Any, column: Any = "label", where: str = "") -> Any:
    """The labels ``y`` (one batch of a label column) as the codes the ranked members' state
    counts (:func:`ranked_codec`); ``y`` unchanged without a codec. A label the codec refuses
    (not one of ``classes=``; a third distinct label in a batch with ``pos_label=`` alone) is
    a ``ValueError`` naming the column, ``where`` (the partition or file, the first row) and
    then the codec's own words: the problem and the first offending value with its index in
    the batch.

    Complexity: the codec's (O(n) for integers spanning a small range and categoricals, else
    O(n log C)).

    Parameters
    ----------
    y : array-like
        One batch of labels (strings, numbers, objects, a pandas categorical).
    codec : LabelCodec or None
        :func:`ranked_codec`'s.
    column : str
        The label column's name, for the message.
    where : str
        Where the batch comes from (e.g. ``"Dask partition 3"``), for the message.

    Returns
    -------
    numpy.ndarray or the input
        Integer codes (``ignore_index`` kept), or ``y`` itself without a codec.
    """
    if codec is None:
        return y
    try:
        return np.asarray(codec.true_codes(y))
    except ValueError as exc:
        raise ValueError(located_message(str(exc), {"label": column}, where)) from None


def label_column(dtype: Any, codec_given: bool) -> bool:
    """Whether a route reads a label column of ``dtype``: numbers (:func:`~.plan.numeric_dtype`)
    always; with a codec (``codec_given``: the ranked members have ``classes=`` or
    ``pos_label=``) also strings, objects and pandas categoricals (numpy ``U`` / ``S`` / ``O``,
    ``category``, pandas ``string`` / ``str``, pyarrow strings), which the codec maps. O(1)."""
    if numeric_dtype(dtype):
        return True
    if not codec_given or dtype is None:
        return False
    try:  # a numpy dtype or scalar type (pyarrow's ``to_pandas_dtype``: ``np.object_``)
        kind = np.dtype(dtype).kind
    except TypeError:  # pandas extension dtypes carry their numpy kind
        kind = getattr(dtype, "kind", None)
    return kind in ("U", "S", "O")  # categoricals, pandas strings: "O"; pyarrow strings: "U"


def label_options(configs: Any) -> dict[str, Any]:
    """The ``classes=`` / ``pos_label=`` entries the member configurations (``metric._config()``
    dicts) share -- what a twin that validates their rows is built with
    (:func:`~.ranked.runs_config`: its own codec maps the labels); ``{}`` without them. Members
    that map labels differently cannot share one twin: ``ValueError`` naming the argument.
    O(members x C)."""
    found = [{k: cfg[k] for k in sorted(LABEL_KEYS & set(cfg))} for cfg in configs]
    if any(f != found[0] for f in found[1:]):
        other = next(f for f in found[1:] if f != found[0])
        raise ValueError(f"metrics: the members map labels differently ({brief(found[0])} and "
                         f"{brief(other)}); give them the same classes= / pos_label=")
    return found[0] if found else {}


def mapped_column(split: Any) -> str | None:
    """The label column of a binary range split (``range_counts.Split``) whose ranked members
    map labels (a Parquet file may then hold it as strings), else None. O(members)."""
    return split.label if maps_labels(cfg["config"] for cfg in split.ranked.values()) else None


def maps_labels(configs: Any) -> bool:
    """Whether any of the member configurations (``metric._config()`` dicts) has ``classes=`` or
    ``pos_label=``. O(members)."""
    return any(LABEL_KEYS & set(cfg) for cfg in configs)


def read_as_numbers(dtype: Any) -> bool:
    """Whether a task reading a column of ``dtype`` through pandas
    (:func:`~streammetrics._engines.plan.column`, which tries float64 as the state path does:
    ``Decimal`` s, numeric strings; a categorical's values) must find numbers there: objects,
    strings (numpy ``U`` / ``S`` / ``O``, pandas ``string`` / ``str``, pyarrow strings) and
    categoricals. O(1)."""
    if dtype is None:
        return False
    if getattr(dtype, "categories", None) is not None:  # a pandas categorical
        return True
    if getattr(dtype, "name", None) in ("string", "str"):
        return True
    try:
        kind = np.dtype(dtype).kind
    except TypeError:  # pandas extension dtypes carry their numpy kind
        kind = getattr(dtype, "kind", None)
    return kind in ("U", "S", "O")


def read_numbers(plan: Any, dtypes: Mapping[str, Any]) -> dict[str, Any]:
    """``dtypes`` (a frame's column dtypes) as the range routes' ``split_of`` read them: an
    object, string or categorical label, score or weight column (:func:`read_as_numbers`: a
    pandas column of ``Decimal`` s, which Dask makes a string column; Arrow ``decimal128`` or
    strings in a Ray block) as float64 -- the tasks read it as the state path does
    (:func:`~streammetrics._engines.plan.column`: ``Decimal`` s, numeric strings as float64)
    and refuse what float64 cannot hold naming the column, partition / block and value
    (:func:`~streammetrics._engines.plan.numbers`; labels: the members' codec maps them, or,
    with ``by=``, ``Sliced``'s rule: numbers). O(columns)."""
    used = {c for spec in (plan.label, plan.score, plan.weight) if spec is not None
            for c in ([spec] if isinstance(spec, str) else spec)}
    return {c: np.dtype(np.float64) if c in used and read_as_numbers(d) else d for c, d in dtypes.items()}


def sliced_labels(plan: Any, dtypes: Mapping[str, Any], *more: Mapping[str, Any]) -> dict[str, Any]:
    """``dtypes`` with a ``by=`` run's label columns of strings, objects or categoricals
    (:func:`read_as_numbers` of their dtype in ``dtypes`` or in any of ``more``, e.g. the
    engine's own types) as float64: ``Sliced`` reads its labels as numbers whatever
    ``classes=`` / ``pos_label=`` say, and so do the keyed tasks
    (:func:`~streammetrics._engines.keyed_ranges.frame_batches`: the state path's float64
    reading, a value float64 cannot hold refused naming the column, the partition and the
    value) -- the keyed ranges take such a run rather than gathering its scores to refuse them.
    ``dtypes`` unchanged without ``by=``. O(label columns)."""
    out = dict(dtypes)
    if plan.by is not None:
        for c in [plan.label] if isinstance(plan.label, str) else list(plan.label):
            if any(read_as_numbers(d.get(c)) for d in (dtypes, *more)):
                out[c] = np.dtype(np.float64)
    return out
