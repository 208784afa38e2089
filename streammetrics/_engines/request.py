"""The arguments every engine's ``evaluate`` shares, declared once, and the run they make.

Dask (:func:`streammetrics.dask.evaluate`, :func:`~streammetrics.dask.evaluate_parquet`), Spark
and Ray take the same arguments besides their data and their own options: the columns, the
retrieval options, ``compute``, ``by`` and ``**update_kwargs``. :class:`Request` declares them
(names, types, defaults); each public ``evaluate`` spells them in its own signature, for its
users and type checkers, and :func:`engine_evaluate` checks that signature against
:class:`Request` when the function is defined. :func:`make_run` checks a request against the
metrics and the frame once for every engine, and :class:`Run` gives back the results.
"""

from __future__ import annotations

import dataclasses
import inspect
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from streammetrics._core.docstrings import fill
from streammetrics._core.metric import Metric, trusted_states
from streammetrics._core.params import FLAG, Param, check_param
from streammetrics.wrappers.metricset import MetricSet

from .messages import brief
from .plan import NULLS, Columns, Plan, Shape, finish, make_plan, state_from_bytes

_F = TypeVar("_F", bound=Callable[..., Any])
_POSITIVE_INDEX = Param("int", "must be an integer >= 0", low=0)
_NULLS = Param("choice", f"must be one of {NULLS}", choices=NULLS)


@dataclass(frozen=True)
class Request:
    """The arguments every engine's ``evaluate`` takes besides its data, its metrics and its own
    options (``split_every``, ``depth``): declared once, here.

    Each public ``evaluate`` spells them in its own signature (for its users and for type
    checkers), checked against these fields when it is defined (:func:`engine_evaluate`), and
    passes them on as one object (:meth:`of`); their descriptions are the ``engine`` entries of
    :mod:`streammetrics._core.docstrings`.

    Parameters
    ----------
    label, score : str or list of str, optional
        The label and score column(s) (one of ``label`` / ``target`` and one of ``score`` /
        ``prediction`` is required).
    target, prediction : str or list of str, optional
        Aliases of ``label`` and ``score`` (the regression family's names: ``y_true`` is the
        target, ``y_pred`` the prediction).
    weight, query, doc_id : str, optional
        The ``sample_weight``, query id and document id columns.
    query_partitioned : bool
        Every query's rows are already in one partition (no shuffle).
    compute : bool
        Return the values (True) or the merged accumulators.
    by : str or list of str, optional
        Slice key column(s).
    update_kwargs : mapping
        Passed to every ``update``.
    positive_index : int
        A score column holding vectors (MLlib ``VectorUDT``, arrays): the element binary metrics
        take as the positive-class score (multiclass metrics take the whole vector).
    nulls : {"error", "skip"}
        Rows with a null in a used column: refused (a ValueError naming the column and the row)
        or skipped (their number reported by a warning).
    as_frame : bool
        Return the values as a table (:func:`values_table`), one row per metric (per slice and
        metric with ``by``), in the engine's DataFrame.
    """

    label: Columns | None = None
    score: Columns | None = None
    target: Columns | None = None
    prediction: Columns | None = None
    weight: str | None = None
    query: str | None = None
    doc_id: str | None = None
    query_partitioned: bool = False
    compute: bool = True
    by: Columns | None = None
    positive_index: int = 1
    nulls: str = "error"
    as_frame: bool = False
    update_kwargs: Mapping[str, Any] = field(default_factory=dict)

    @classmethod
    def of(cls, arguments: Mapping[str, Any]) -> Request:
        """The request among an ``evaluate``'s arguments (its ``locals()`` on entry, which hold
        every field: :func:`engine_evaluate` checked its signature).

        Parameters
        ----------
        arguments : mapping
            Argument name -> value; names that are not fields are ignored.

        Returns
        -------
        Request
        """
        return cls(**{f.name: arguments[f.name] for f in dataclasses.fields(cls)})


#: Wider annotations an engine's ``evaluate`` may spell instead of a field's own, for what only
#: it accepts: column expressions as the columns it reads -- Spark ``Column`` expressions
#: (:func:`streammetrics.spark.evaluate`), Dask Series derived from the frame
#: (:func:`streammetrics.dask.evaluate`); the aliases are defined there.
WIDER = {what: (f"Spark{kind} | None", f"Dask{kind} | None")
         for what, kind in (("label", "Columns"), ("score", "Columns"), ("target", "Columns"),
                            ("prediction", "Columns"), ("weight", "Column"))}


def engine_evaluate(fn: _F) -> _F:
    """Decorator of a public ``evaluate``: check at definition that its signature spells every
    field of :class:`Request` as that declares it, and fill its docstring's shared entries.

    Every field but ``update_kwargs`` must be a keyword-only parameter of the same name,
    annotation (or one of its :data:`WIDER` ones) and default; ``update_kwargs`` the ``**update_kwargs``
    catch-all.

    Parameters
    ----------
    fn : function
        The engine's ``evaluate``.

    Returns
    -------
    function
        ``fn`` itself (its signature unchanged), its ``__doc__`` filled.

    Raises
    ------
    TypeError
        The signature differs from :class:`Request` (a programming error, raised at import).
    """
    params = inspect.signature(fn).parameters
    for f in dataclasses.fields(Request):
        p = params.get(f.name)
        if f.name == "update_kwargs":
            ok = p is not None and p.kind is p.VAR_KEYWORD
        else:
            default = inspect.Parameter.empty if f.default is dataclasses.MISSING else f.default
            ok = (p is not None and p.kind is p.KEYWORD_ONLY and p.default == default
                  and str(p.annotation) in (str(f.type), *WIDER.get(f.name, ())))
        if not ok:
            raise TypeError(f"{fn.__module__}.{fn.__qualname__}: parameter {f.name!r} differs from "
                            f"Request.{f.name} ({f.type}), got {p}")
    if fn.__doc__:
        fn.__doc__ = fill(fn.__doc__)
    return fn


class NullRowsSkipped(UserWarning):
    """``evaluate(..., nulls="skip")`` dropped rows holding a null; the message says how many."""


def warn_skipped(skipped: int, columns: Sequence[str]) -> None:
    """Warn (:class:`NullRowsSkipped`) that ``nulls="skip"`` dropped ``skipped`` rows holding a
    null in ``columns``; none dropped: no warning. O(1)."""
    if skipped:
        from streammetrics._core.warn import warn

        warn(f"nulls: skipped {skipped} row(s) holding a null in {brief(list(columns))}", NullRowsSkipped)


def check_nulls(nulls: Any) -> str:
    """``nulls`` checked: ``"error"`` or ``"skip"`` (a ValueError naming it otherwise). O(1)."""
    return str(check_param(nulls, "nulls", _NULLS))


@dataclass(frozen=True)
class Run:
    """A checked request: the empty accumulator, the shape of the results and the plan.

    Parameters
    ----------
    template : Metric
        The empty accumulator (a ``MetricSet`` twin of the metrics, or a ``Sliced`` one).
    shape : Shape
        How to give results back in the shape of ``metrics``.
    plan : Plan
        What each partition task needs.
    request : Request
        The arguments it was made from.
    """

    template: Metric
    shape: Shape
    plan: Plan
    request: Request

    @property
    def shuffle_on(self) -> str | None:
        """The query column when the rows must be shuffled by query first (retrieval metrics
        without ``query_partitioned``), else None."""
        if self.plan.family == "retrieval" and not self.request.query_partitioned:
            return self.plan.query
        return None

    def report_skipped(self, skipped: int) -> None:
        """Warn how many rows ``nulls="skip"`` dropped (none: no warning).

        Parameters
        ----------
        skipped : int
            The rows dropped over every partition.
        """
        warn_skipped(skipped, self.plan.columns())

    def result(self, acc: Metric | None) -> Any:
        """What ``evaluate`` returns from the merged accumulator (None: no partition at all, the
        empty accumulator), on the client (see :func:`finish`).

        Parameters
        ----------
        acc : Metric or None
            The merged accumulator.

        Returns
        -------
        dict, value, Metric or MetricSet
            The values, or the accumulators of the shape of ``metrics``.
        """
        return finish(self.template if acc is None else acc, self.shape, self.plan, self.request.compute)

    def result_of_bytes(self, payload: bytes | None) -> Any:
        """:meth:`result` of a merged state shipped as bytes by this library's own tasks
        (trusted); empty or None: no rows.

        Parameters
        ----------
        payload : bytes or None
            :func:`state_to_bytes` of the merged state.

        Returns
        -------
        dict, value, Metric or MetricSet
            As :meth:`result`.
        """
        if not payload:
            return self.result(None)
        with trusted_states():
            return self.result(state_from_bytes(payload))


def make_run(metrics: Any, request: Request, available: Sequence[str]) -> Run:
    """Check a request against the metrics and the frame's columns (:func:`make_plan`).

    Parameters
    ----------
    metrics : MetricSet, Metric or mapping of name -> Metric
        The templates (their configuration only).
    request : Request
        The engine-neutral arguments of ``evaluate``.
    available : sequence of str
        The columns the engine's frame has.

    Returns
    -------
    Run
        The run's accumulator, result shape and plan.

    Raises
    ------
    ValueError
        As :func:`make_plan`; neither or both of ``label`` / ``target`` (``score`` /
        ``prediction``); a column given as anything but its name or a list of names.
    """
    r = request
    if check_param(r.as_frame, "as_frame", FLAG) and not r.compute:
        raise ValueError("as_frame: a table holds computed values; got as_frame=True with compute=False")
    for what in ("label", "score", "target", "prediction", "by", "weight", "query", "doc_id"):
        _check_names(getattr(r, what), what, many=what in ("label", "score", "target", "prediction", "by"))
    label = _column_alias(r.label, r.target, "label", "target")
    score = _column_alias(r.score, r.prediction, "score", "prediction")
    template, shape, plan = make_plan(
        metrics, label=label, score=score, weight=r.weight, query=r.query, doc_id=r.doc_id,
        update_kwargs=r.update_kwargs, available=available, by=r.by,
        positive_index=check_param(r.positive_index, "positive_index", _POSITIVE_INDEX),
        nulls=check_nulls(r.nulls),
    )
    return Run(template, shape, plan, request)


def _check_names(spec: Any, what: str, many: bool) -> None:
    """``spec`` is None, a column name or (``many``) a non-empty list or tuple of them; anything
    else (a Series, an engine's expression the engine did not take) is refused, described briefly
    -- never iterated (a Dask Series would be computed on the client)."""
    if spec is None or isinstance(spec, str):
        return
    if many and isinstance(spec, (list, tuple)) and spec and all(isinstance(c, str) for c in spec):
        return
    raise ValueError(f"{what}: expected a column name{' or a non-empty list of them' if many else ''}, "
                     f"got {brief(spec)}")


def _column_alias(name: Columns | None, alias: Columns | None, what: str, alias_name: str) -> Columns:
    """The column(s) named by ``what=`` or by its alias ``alias_name=`` (exactly one of them)."""
    if name is not None and alias is not None:
        raise ValueError(f"{alias_name}: is another name for {what}=; give one of them, got "
                         f"{what}={brief(name)} and {alias_name}={brief(alias)}")
    if name is None and alias is None:
        raise ValueError(f"{what}: name the {what} column(s) ({what}=..., or {alias_name}=... for "
                         "regression metrics)")
    return name if name is not None else alias  # type: ignore[return-value]


def values_table(values: Any, metrics: Any, by: Columns | None) -> Any:
    """The values ``evaluate`` computed as a pandas DataFrame, ready to write back: one row per
    metric, columns ``metric`` and ``value`` (float), preceded with ``by`` by one column per
    slice key (one row per slice and metric). A metric's array value (a confusion matrix,
    per-class scores) gives one row per element, named ``name[i, j]``.

    Complexity: O(slices x values).

    Parameters
    ----------
    values : dict, value, or dict of slice key -> those
        What ``evaluate`` returns with ``compute=True``.
    metrics : MetricSet, Metric or mapping
        The ``metrics`` argument (a single metric's row is named after its class).
    by : str or list of str, optional
        The slice key column(s).

    Returns
    -------
    pandas.DataFrame
    """
    import numpy as np
    import pandas as pd

    keys = [] if by is None else [by] if isinstance(by, str) else list(by)
    single = isinstance(metrics, Metric) and not isinstance(metrics, MetricSet)

    def named(vals: Any) -> list[tuple[str, float]]:
        items = {type(metrics).__name__: vals} if single else vals
        out: list[tuple[str, float]] = []
        for name, v in items.items():
            arr = np.asarray(v, dtype=np.float64)
            if arr.ndim == 0:
                out.append((str(name), float(arr)))
            else:
                out.extend((f"{name}[{', '.join(map(str, i))}]", float(x)) for i, x in np.ndenumerate(arr))
        return out

    slices = [((), values)] if not keys else [
        (key if isinstance(key, tuple) else (key,), vals) for key, vals in values.items()]
    rows = [(*key, name, value) for key, vals in slices for name, value in named(vals)]
    return pd.DataFrame(rows, columns=[*keys, "metric", "value"])
