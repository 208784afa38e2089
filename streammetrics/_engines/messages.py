"""How an engine's messages describe a user's argument and where a refused value came from.

:func:`brief` describes any argument in a few words (a long list by its first items, a Series by
its type and name, an array by its shape), and :func:`located` leads a batch's refusal -- one
process's own words, ``"y_true: labels must be 0 or 1; first invalid value 2 at index 45"`` --
with the engine argument, its column(s) and the partition, block or file the rows came from:
``"label: column 'y' of Dask partition 4: y_true: ..."``. Every engine route words its errors
through these two, so a frame refused on one route reads the same on every other.
"""

from __future__ import annotations

import contextlib
import itertools
from collections.abc import Iterator, Mapping
from typing import Any

import numpy as np

#: About the longest description :func:`brief` gives of one argument in an error message.
BRIEF = 100
#: The items of a long list (or mapping) a description shows.
ITEMS = 6


def brief(value: Any, limit: int = BRIEF) -> str:
    """A short description of a user's argument for an error message, whatever its size: its repr
    when short (a column name, a number, a short list of names); a long string cut; a long list
    or mapping its first items and its length; a column (a pandas or Dask Series) its type and
    name; a Spark ``Column`` its expression, cut; an array its shape; anything else its type.
    Never raises (an object that misbehaves when asked is described by its type).

    Complexity: O(limit): at most a few items of ``value`` are looked at.

    Parameters
    ----------
    value : object
        The argument (or part of it).
    limit : int
        About the longest description, in characters.

    Returns
    -------
    str
    """
    if isinstance(value, str):
        return repr(value) if len(value) <= limit else f"{value[: limit // 2]!r}... ({len(value)} characters)"
    if isinstance(value, (list, tuple, Mapping)):
        n = len(value)
        sub = max(limit // 3, 12)
        if isinstance(value, Mapping):
            shown = [f"{brief(k, sub)}: {brief(v, sub)}" for k, v in itertools.islice(value.items(), ITEMS)]
        else:
            shown = [brief(x, sub) for x in itertools.islice(value, ITEMS)]
        if n > len(shown):
            shown.append(f"... ({n} in all)")
        text = ", ".join(shown) + ("," if isinstance(value, tuple) and n == 1 else "")
        if len(text) > 2 * limit:  # long items: as many as fit
            text = f"{text[: text.rfind(', ', 0, 2 * limit) + 2]}... ({n} in all)"
        ends = "{}" if isinstance(value, Mapping) else "()" if isinstance(value, tuple) else "[]"
        return f"{ends[0]}{text}{ends[1]}"
    kind = type(value).__name__
    where = type(value).__module__.split(".")[0]
    try:
        return _brief_object(value, limit, kind, where)
    except Exception:  # an object whose attributes or comparisons misbehave: its type only
        return f"{_an(where)} {where}.{kind}"


def _brief_object(value: Any, limit: int, kind: str, where: str) -> str:
    """:func:`brief` of anything but a string, a list, a tuple or a mapping."""
    if value is None or isinstance(value, (bool, float, np.bool_, np.floating)):
        return repr(value)
    if isinstance(value, (int, np.integer)):
        bits = int(value).bit_length()
        return repr(int(value)) if bits <= 64 else f"an int of {bits} bits"
    if isinstance(value, np.ndarray):
        return f"a numpy array of shape {value.shape} and dtype {value.dtype}"
    if where == "pyspark" and kind == "Column":  # its expression, e.g. Column<'(p * 1.0)'>
        text = str(value)
        return text if len(text) <= limit else f"{text[:limit]}..."
    # a Series-like column (pandas, Dask, ...): asked of its class, not of an object's __getattr__
    cls = type(value)
    if all(hasattr(cls, a) for a in ("ndim", "dtype", "name")) and value.ndim == 1:
        return f"{_an(where)} {where} {kind} named {brief(value.name, max(limit // 2, 12))}"
    return f"{_an(where)} {where}.{kind}" if where != "builtins" else f"{_an(kind)} {kind}"


def _an(word: str) -> str:
    return "an" if word[:1].lower() in "aeiou" else "a"


#: The ``update`` arguments a refused batch's message starts with, and the engine argument
#: (a key of :meth:`Plan.fed`) whose column(s) fed each.
FED_BY = {"y_true": "label", "y_score": "score", "y_pred": "score", "sample_weight": "weight",
          "slices": "by", "query_ids": "query", "doc_ids": "doc_id"}


def located_message(message: str, fed: Mapping[str, Any], where: str = "") -> str:
    """A refused batch's message (``"y_true: labels must be 0 or 1; first invalid value 2 at
    index 45"``) led by the engine argument and the column(s) that fed the ``update`` argument
    it starts with (:data:`FED_BY`; ``fed`` as :meth:`Plan.fed`) and by ``where`` the rows
    come from: ``"label: column 'y' of Dask partition 4: y_true: ..."``. Unchanged when it
    starts with no such argument (already located, or not about the rows). O(len(message))."""
    arg = FED_BY.get(message.split(":", 1)[0].split("[", 1)[0])
    spec = None if arg is None else fed.get(arg)
    if spec is None:
        return message
    return f"{arg}: {named(spec)}{f' of {where}' if where else ''}: {message}"


def named(spec: Any) -> str:
    """``"column 'p'"`` for one column name, ``"columns ['p0', 'p1']"`` for several (:func:`brief`
    of them). O(1)."""
    return f"column {brief(spec)}" if isinstance(spec, str) else f"columns {brief(list(spec))}"


@contextlib.contextmanager
def located(fed: Mapping[str, Any], where: str = "", offset: int = 0) -> Iterator[None]:
    """A ``ValueError`` refusing one batch of rows re-raised with the column and ``where`` named
    (:func:`located_message`; ``offset``, the batch's first row in ``where``, named when not 0)."""
    try:
        yield
    except ValueError as exc:
        at = f"{where or 'the partition'} from row {offset}" if offset else where
        message = located_message(str(exc), fed, at)
        if type(exc) is not ValueError or message == str(exc):
            raise
        raise ValueError(message) from None
