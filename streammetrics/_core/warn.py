"""Warnings attributed to the user's line, however deep inside the library they are raised.

A fixed ``stacklevel`` cannot be right: the same ``UndefinedMetricWarning`` is reached from
``metric.compute()``, through a ``MetricSet``, a ``Window``, ``Decayed``, ``DelayedLabels``,
a report or a Dask evaluation, each a different number of frames deep. :func:`warn` walks the
stack instead and attributes the warning to the first frame outside the ``streammetrics``
package -- the caller's line -- as ``warnings.warn(..., skip_file_prefixes=...)`` does on
Python 3.12+.

:func:`sklearn_compatible` makes the undefined-metric warnings catchable by code written for
scikit-learn (a filter or ``pytest.warns`` on ``sklearn.exceptions.UndefinedMetricWarning``)
without importing scikit-learn.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import sys
import threading
import warnings
from collections.abc import Iterable, Iterator
from typing import Any

from .metric import UndefinedMetricWarning

_LOCAL = threading.local()

# the package root (this file is streammetrics/_core/warn.py)
_PACKAGE_DIR = os.path.normcase(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))) + os.sep


@functools.lru_cache(maxsize=256)
def _inside(filename: str) -> bool:
    """True if ``filename`` (a code object's file) belongs to this package."""
    return os.path.normcase(os.path.abspath(filename)).startswith(_PACKAGE_DIR)


_COMPATIBLE: dict[tuple[type[Warning], type[Warning]], type[Warning]] = {}


def sklearn_compatible(category: type[Warning]) -> type[Warning]:
    """``category``, or, if it is a :class:`~streammetrics.UndefinedMetricWarning` and
    scikit-learn's ``sklearn.exceptions`` is already imported, a class deriving from both
    ``category`` and scikit-learn's ``UndefinedMetricWarning``.

    A filter (``warnings.filterwarnings("ignore", category=...)``), ``pytest.warns`` or an
    ``except`` written for scikit-learn's class then catches the warnings of the drop-in
    functions, and one written for streammetrics' class still does. scikit-learn is never
    imported here: code that refers to its class has imported it already. The class is made once
    per pair and cached. O(1).
    """
    if not issubclass(category, UndefinedMetricWarning):
        return category
    module = sys.modules.get("sklearn.exceptions")
    theirs = getattr(module, "UndefinedMetricWarning", None) if module is not None else None
    if not isinstance(theirs, type) or not issubclass(theirs, Warning) or issubclass(category, theirs):
        return category
    both = _COMPATIBLE.get((category, theirs))
    if both is None:
        both = type(category.__name__, (category, theirs), {
            "__module__": category.__module__,
            "__qualname__": category.__qualname__,
            "__doc__": category.__doc__,
        })
        _COMPATIBLE[(category, theirs)] = both
    return both


def warn(message: str, category: type[Warning]) -> None:
    """``warnings.warn(message, category)`` pointing at the first caller outside the package
    (the outermost library frame if there is none, e.g. on a thread the library started), with
    the category made catchable as scikit-learn's (:func:`sklearn_compatible`). O(stack depth).
    Nothing inside :func:`silenced` on this thread; inside :func:`recorded`, kept instead."""
    if getattr(_LOCAL, "silent", False):
        return
    kept = getattr(_LOCAL, "recorded", None)
    if kept is not None:  # inside recorded(): kept for the caller, raised nowhere here
        if (message, category) not in kept and len(kept) < MAX_RECORDED:
            kept.append((message, category))
        return
    frame = sys._getframe(1)
    level = 2  # stacklevel 2 = the frame that called this function
    while frame.f_back is not None and _inside(frame.f_code.co_filename):
        frame = frame.f_back
        level += 1
    warnings.warn(message, sklearn_compatible(category), stacklevel=level)


@contextlib.contextmanager
def silenced() -> Iterator[None]:
    """Drop the package's own warnings (:func:`warn`) raised on this thread inside the block.

    For a Prometheus scrape on the server's thread: an undefined value is exported as NaN, and
    neither printed nor raised even where the process turns warnings into errors.
    ``warnings.catch_warnings`` is no substitute there: it swaps the process-wide filter list,
    so it silences the other threads too and, when it ends, restores the list as it was when it
    began -- undoing the filters another thread set meanwhile. O(1).
    """
    before = getattr(_LOCAL, "silent", False)
    _LOCAL.silent = True
    try:
        yield
    finally:
        _LOCAL.silent = before


#: Recorded warnings: each ``(message, category)`` (:func:`recorded`).
Recorded = list[tuple[str, type[Warning]]]
#: At most this many distinct warnings :func:`recorded` keeps (an engine task's; the rest dropped).
MAX_RECORDED = 16


@contextlib.contextmanager
def recorded() -> Iterator[list[tuple[str, type[Warning]]]]:
    """Keep the package's own warnings (:func:`warn`) raised on this thread inside the block,
    instead of raising them: the yielded list gets each distinct ``(message, category)`` once,
    in the order first raised, at most :data:`MAX_RECORDED`.

    For an engine's task, on a worker the caller never sees: the task sends the list with its
    small result and the caller re-raises each once (:func:`reissued`). Thread-local, as
    :func:`silenced` (``warnings.catch_warnings`` would swap the process-wide state under the
    other tasks of a threaded worker); on a scheduler that runs the task in the caller's own
    process the warnings are kept too, so the caller sees them once, not twice. O(1) per warning.
    """
    before = getattr(_LOCAL, "recorded", None)
    kept: list[tuple[str, type[Warning]]] = []
    _LOCAL.recorded = kept
    try:
        yield kept
    finally:
        _LOCAL.recorded = before


def reissued(*records: Iterable[tuple[str, type[Warning]]]) -> list[tuple[str, type[Warning]]]:
    """The warnings of several tasks' :func:`recorded` lists, in order, each distinct
    ``(message, category)`` once and at most :data:`MAX_RECORDED`: what the caller raises
    (``Shape.deliver``: :func:`warn`, at the caller's line). O(records)."""
    out: list[tuple[str, type[Warning]]] = []
    for kept in records:
        for w in kept:
            if w not in out and len(out) < MAX_RECORDED:
                out.append(w)
    return out


def recorded_to_bytes(records: Iterable[tuple[str, type[Warning]]]) -> bytes:
    """Recorded warnings as JSON bytes (for an engine whose tasks return bytes: Spark): each
    message and its category's ``module:qualname``. O(records)."""
    return json.dumps([[m, f"{c.__module__}:{c.__qualname__}"] for m, c in records]).encode()


def recorded_from_bytes(data: bytes) -> Recorded:
    """:func:`recorded_to_bytes`'s warnings back; a category that is not a ``Warning`` class of
    an imported module (``sys.modules``: nothing is imported) read as ``UserWarning``. O(records)."""
    out: Recorded = []
    for message, name in json.loads(data.decode()) if data else []:
        module, _, qualname = str(name).partition(":")
        found: Any = sys.modules.get(module)
        for part in qualname.split("."):
            found = getattr(found, part, None)
        category = found if isinstance(found, type) and issubclass(found, Warning) else UserWarning
        out.append((str(message), category))
    return out
