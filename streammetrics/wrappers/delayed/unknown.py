"""What :class:`~streammetrics.DelayedLabels` does with a label whose id is not pending.

An id is not pending when it was never predicted, was already labelled, or was evicted by
``capacity`` or expired by ``ttl`` (the wrapper keeps no memory of dropped ids, so these cases
are one notion: "unknown"). ``on_unknown`` chooses:

* ``"skip"`` (default): the unknown ids are counted in ``stats()["unknown"]`` and skipped; the
  known ids of the same call are labelled. :meth:`DelayedLabels.label_report` also says which
  ids were skipped.
* ``"raise"``: :class:`UnknownIdError` (a ``ValueError``) naming the first unknown id; atomic --
  nothing of that call is labelled and no counter changes.

``"count"``, the 0.1.0 name of ``"skip"``, is still accepted (and stored as ``"skip"``).
"""

from __future__ import annotations

from typing import Any, NamedTuple

from streammetrics._core.params import Param, check_param

__all__ = ["LabelReport", "ON_UNKNOWN", "UnknownIdError", "check_on_unknown", "unknown_error"]

#: The accepted values of ``on_unknown`` (plus the 0.1.0 alias ``"count"`` of ``"skip"``).
ON_UNKNOWN = ("skip", "raise")
_ALIASES = {"count": "skip"}
_ON_UNKNOWN = Param("choice", "must be 'skip' or 'raise'", choices=(*ON_UNKNOWN, *_ALIASES))


class UnknownIdError(ValueError, KeyError):
    """``label`` got an id that is not pending, with ``on_unknown="raise"``.

    A ``ValueError`` like every other rejected input; also a ``KeyError``, which is what
    streammetrics 0.1.0 raised, so existing ``except KeyError`` handlers keep working. The call
    labelled nothing (atomic).

    Parameters
    ----------
    message : str, default ""
        What went wrong, as ``str(error)`` shows it.
    first : int or str, optional
        The first id of the call that is not pending.
    missing : int, optional
        How many of the call's ids are not pending.
    total : int, optional
        How many ids the call had.

    Attributes
    ----------
    first : int or str or None
        The first id of the call that is not pending (None when not given).
    missing : int or None
        How many of the call's ids are not pending.
    total : int or None
        How many ids the call had.

    Examples
    --------
    >>> import streammetrics as sm
    >>> d = sm.DelayedLabels(sm.Accuracy(), on_unknown="raise")
    >>> d.predict(["a", "b"], [0.9, 0.2])
    >>> try:
    ...     d.label(["a", "zz"], [1, 0])
    ... except KeyError as exc:  # an UnknownIdError
    ...     print(exc.first, exc.missing, exc.total)
    zz 1 2
    """

    def __init__(self, message: str = "", first: int | str | None = None, missing: int | None = None,
                 total: int | None = None) -> None:  # fmt: skip
        super().__init__(message)
        self.first, self.missing, self.total = first, missing, total

    def __str__(self) -> str:  # KeyError would show the message in quotes
        return str(self.args[0]) if self.args else ""


class LabelReport(NamedTuple):
    """What one :meth:`DelayedLabels.label_report` call did.

    Attributes
    ----------
    fed : int
        Labelled pairs fed to the metric (or buffered for it).
    unknown : tuple of int or str
        Ids skipped because they were not pending (``on_unknown="skip"``), in call order.

    Examples
    --------
    >>> import streammetrics as sm
    >>> d = sm.DelayedLabels(sm.Accuracy(), on_unknown="skip")
    >>> d.predict(["a", "b"], [0.9, 0.2])
    >>> d.label_report(["a", "zz"], [1, 0])
    LabelReport(fed=1, unknown=('zz',))
    """

    #: Labelled pairs fed to the metric (or buffered for it).
    fed: int
    #: Ids skipped because they were not pending (``on_unknown="skip"``), in call order.
    unknown: tuple[int | str, ...]


def check_on_unknown(value: Any) -> str:
    """``on_unknown`` validated: ``"skip"`` or ``"raise"`` (``"count"`` means ``"skip"``)."""
    value = check_param(value, "on_unknown", _ON_UNKNOWN)
    return _ALIASES.get(value, value)


def unknown_error(first: int | str, missing: int, total: int) -> UnknownIdError:
    """The error for a ``label`` call whose ids include ``missing`` (of ``total``) unknown ones."""
    return UnknownIdError(
        f"ids: id {first!r} is not pending (never predicted, already labelled, evicted or "
        f"expired); {missing} of {total} ids unknown, nothing labelled (on_unknown='raise')",
        first, missing, total,
    )
