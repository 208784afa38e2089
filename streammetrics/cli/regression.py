"""``streammetrics evaluate --target COL --prediction COL``: the regression table (issue #30).

Regression is selected by the options, never guessed from the values: ``--target``/``--prediction``
(or ``--task regression``) read continuous targets and predictions, ``--label``/``--score`` stay
classification whatever their values hold, and mixing the two families is a usage error. The rows
are streamed once through two ``MetricSet`` s (the point metrics; with ``--lower``/``--upper`` the
prediction-interval metrics), each metric per output (``multioutput="raw_values"``); the report
gives every output's value and, for several outputs, their mean (scikit-learn's
``"uniform_average"``). Intervals are shown only where the library gives one (Wilson's for the
interval coverage); ``--max-bytes`` bins the median absolute error and the D² scores, whose values
then carry certified bounds. The table and the JSON document are :mod:`~streammetrics.cli.regreport`.

Complexity: one pass; per batch O(n k) for the moment and loss metrics, O(n k log n) for the
whole-set ones (medae, d2); ``compute`` O(N log N) per output for Spearman and Kendall. Memory:
one batch plus the states -- O(k) for the moment metrics, 8-16 bytes per row and output for medae
and the d2 scores (O(max_bytes) with ``--max-bytes``) and for Spearman and Kendall (no bounded
variant: they are left out of the default table under ``--max-bytes``).
"""

from __future__ import annotations

import argparse
import re
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

from .columns import finite_floats
from .errors import InputError
from .progress import row_progress
from .readers import open_source
from .regreport import emit_regression, results

__all__ = ["DEFAULTS", "METRICS", "Columns", "Entry", "build", "is_regression", "located", "prepare",
           "run_regression"]


@dataclass(frozen=True)
class _Settings:
    """What a metric's constructor reads from the options."""

    outputs: int
    max_bytes: int | None
    quantile: float
    power: float
    alpha: float | None
    multioutput: str = "raw_values"


@dataclass(frozen=True)
class Entry:
    """A regression row: its constructor, whether it reads the intervals (``--lower``/``--upper``),
    and what it needs.

    Attributes
    ----------
    make : callable
        ``make(settings) -> Metric`` (per output: ``multioutput="raw_values"`` where it applies).
    interval : bool
        Reads (target, [lower, upper]) rather than (target, prediction).
    one_output : bool
        Defined for one output only (the Tweedie deviances, as scikit-learn's).
    keeps_rows : bool
        Keeps every row and has no bounded variant (Spearman, Kendall).
    """

    make: Callable[[_Settings], Any]
    interval: bool = False
    one_output: bool = False
    keeps_rows: bool = False


def _raw(cls_name: str, **fixed: Any) -> Callable[[_Settings], Any]:
    def make(s: _Settings) -> Any:
        import streammetrics as sm

        return getattr(sm, cls_name)(multioutput=s.multioutput, **fixed)

    return make


def _whole(cls_name: str, quantile: bool = False) -> Callable[[_Settings], Any]:
    def make(s: _Settings) -> Any:
        import streammetrics as sm

        kw: dict[str, Any] = {"alpha": s.quantile} if quantile else {}
        return getattr(sm, cls_name)(multioutput=s.multioutput, max_bytes=s.max_bytes, **kw)

    return make


def _tweedie(power: float | None) -> Callable[[_Settings], Any]:
    def make(s: _Settings) -> Any:
        import streammetrics as sm

        return sm.TweedieDeviance(power=s.power if power is None else power)

    return make


def _interval(cls_name: str) -> Callable[[_Settings], Any]:
    def make(s: _Settings) -> Any:
        import streammetrics as sm

        kw: dict[str, Any] = {"alpha": s.alpha} if cls_name == "IntervalScore" else {}
        return getattr(sm, cls_name)(num_outputs=s.outputs, multioutput=s.multioutput, **kw)

    return make


def _pinball(s: _Settings) -> Any:
    import streammetrics as sm

    return sm.PinballLoss(alpha=s.quantile, multioutput=s.multioutput)


#: name (the JSON's and ``--metrics``') -> the row
METRICS: dict[str, Entry] = {
    "mse": Entry(_raw("MeanSquaredError")),
    "rmse": Entry(_raw("RootMeanSquaredError")),
    "mae": Entry(_raw("MeanAbsoluteError")),
    "medae": Entry(_whole("MedianAbsoluteError")),
    "mape": Entry(_raw("MeanAbsolutePercentageError")),
    "msle": Entry(_raw("MeanSquaredLogError")),
    "rmsle": Entry(_raw("RootMeanSquaredLogError")),
    "r2": Entry(_raw("R2Score")),
    "explained_variance": Entry(_raw("ExplainedVariance")),
    "max_error": Entry(_raw("MaxError")),
    "pinball": Entry(_pinball),
    "d2_absolute_error": Entry(_whole("D2AbsoluteErrorScore")),
    "d2_pinball": Entry(_whole("D2PinballScore", quantile=True)),
    "tweedie_deviance": Entry(_tweedie(None), one_output=True),
    "poisson_deviance": Entry(_tweedie(1.0), one_output=True),
    "gamma_deviance": Entry(_tweedie(2.0), one_output=True),
    "pearson": Entry(_raw("PearsonCorrCoef")),
    "spearman": Entry(_raw("SpearmanCorrCoef"), keeps_rows=True),
    "kendall": Entry(_raw("KendallTau"), keeps_rows=True),
    "concordance": Entry(_raw("ConcordanceCorrCoef")),
    "interval_coverage": Entry(_interval("IntervalCoverage"), interval=True),
    "interval_width": Entry(_interval("IntervalWidth"), interval=True),
    "interval_score": Entry(_interval("IntervalScore"), interval=True),
}
#: the default table (with --lower/--upper the interval rows follow)
DEFAULTS = ["mse", "rmse", "mae", "medae", "mape", "r2", "explained_variance", "max_error", "pearson",
            "spearman", "kendall"]
_INTERVAL_DEFAULTS = ["interval_coverage", "interval_width", "interval_score"]
#: the options that only classification reads (dest, option)
_CLASSIFICATION_ONLY = (("label", "--label"), ("score", "--score"), ("pos_label", "--pos-label"),
                        ("classes", "--classes"), ("threshold", "--threshold"), ("plot", "--plot"),
                        ("from_logits", "--from-logits"))
_REGRESSION_ONLY = (("target", "--target"), ("prediction", "--prediction"), ("lower", "--lower"),
                    ("upper", "--upper"), ("alpha", "--alpha"), ("quantile", "--quantile"),
                    ("power", "--power"))


def is_regression(args: argparse.Namespace) -> bool:
    """Whether the options select the regression table, checking they do not mix families.

    Regression: ``--task regression``, or ``--target``/``--prediction`` given. The classification
    options (``--label``, ``--score``, ``--pos-label``, ...) then are usage errors, and so are the
    regression options (``--target``, ``--lower``, ``--alpha``, ...) in a classification run.

    Parameters
    ----------
    args : argparse.Namespace
        The parsed options of ``evaluate``.

    Returns
    -------
    bool
        True for a regression run.

    Raises
    ------
    InputError
        Options of both families (exit status 2).
    """
    given = [opt for dest, opt in _REGRESSION_ONLY if getattr(args, dest, None) not in (None, False)]
    regression = args.task == "regression" or bool(getattr(args, "target", None) or
                                                   getattr(args, "prediction", None))
    if regression:
        if args.task not in (None, "regression"):
            raise InputError(f"--task {args.task} is classification; --target/--prediction select "
                             "regression (--task regression, or no --task)", 2)
        mixed = [opt for dest, opt in _CLASSIFICATION_ONLY if getattr(args, dest, None) not in (None, False)]
        if mixed:
            why = "--task regression" if args.task == "regression" and not args.target \
                else "--target/--prediction"
            raise InputError(f"{', '.join(mixed)}: classification options; {why} selects regression "
                             "(--label/--score are classification, --target/--prediction regression)", 2)
        return True
    if given:
        hint = (f"--task {args.task} is classification; " if args.task else "") + \
            "regression needs --target and --prediction"
        raise InputError(f"{', '.join(given)}: regression options; {hint}", 2)
    return False


def _columns(args: argparse.Namespace) -> tuple[list[str], list[str], list[str], list[str]]:
    """targets, predictions, lowers, uppers: checked against each other (usage errors)."""
    targets: list[str] = args.target or []
    predictions: list[str] = args.prediction or []
    if not targets or not predictions:
        missing = "--target" if not targets else "--prediction"
        raise InputError(f"{missing} is required for regression (one --target and one --prediction "
                         "per output)", 2)
    if len(targets) != len(predictions):
        raise InputError(f"{len(targets)} --target but {len(predictions)} --prediction columns: give "
                         "one --prediction per --target, in the same order", 2)
    lowers: list[str] = args.lower or []
    uppers: list[str] = args.upper or []
    if bool(lowers) != bool(uppers):
        raise InputError("--lower and --upper go together (the bounds of a prediction interval)", 2)
    if lowers and not (len(lowers) == len(uppers) == len(targets)):
        raise InputError(f"{len(targets)} --target but {len(lowers)} --lower and {len(uppers)} --upper "
                         "columns: give one interval (--lower, --upper) per --target", 2)
    return targets, predictions, lowers, uppers


def _names(args: argparse.Namespace, k: int, intervals: bool, notes: list[str]) -> list[str]:
    """The rows to report: ``--metrics`` (checked) or the defaults (with notes for rows left out)."""
    if args.metrics:
        unknown = [n for n in args.metrics if n not in METRICS]
        if unknown:
            raise InputError(f"--metrics: unknown {', '.join(unknown)} for regression; available: "
                             f"{', '.join(METRICS)}", 2)
        names = list(args.metrics)
        need = [n for n in names if METRICS[n].interval]
        if need and not intervals:
            raise InputError(f"--metrics: {', '.join(need)} read prediction intervals: give --lower "
                             "and --upper", 2)
        if "interval_score" in names and args.alpha is None:
            raise InputError("--metrics: interval_score needs --alpha (the intervals' nominal "
                             "miscoverage: 0.1 for 90% intervals)", 2)
        one = [n for n in names if METRICS[n].one_output]
        if one and k > 1:
            raise InputError(f"--metrics: {', '.join(one)} take one output (as scikit-learn's "
                             f"mean_tweedie_deviance); got {k} --target columns", 2)
        rows = [n for n in names if METRICS[n].keeps_rows]
        if rows and args.max_bytes is not None:
            raise InputError(f"--metrics: no bounded variant for {', '.join(rows)} (it keeps every row); "
                             "drop it or --max-bytes", 2)
        return names
    names = list(DEFAULTS)
    if args.max_bytes is not None:
        names = [n for n in names if not METRICS[n].keeps_rows]
        notes.append("spearman, kendall skipped: they keep every row (no bounded variant under "
                     "--max-bytes); name them in --metrics without --max-bytes")
    if intervals:
        names += [n for n in _INTERVAL_DEFAULTS if n != "interval_score" or args.alpha is not None]
        if args.alpha is None:
            notes.append("interval_score skipped: give --alpha (the intervals' nominal miscoverage, "
                         "0.1 for 90% intervals)")
    return names


def build(names: list[str], settings: _Settings) -> tuple[Any, Any]:
    """The point and interval MetricSets of ``names``.

    Parameters
    ----------
    names : list of str
        Rows of :data:`METRICS`.
    settings : _Settings
        What the constructors read (outputs, ``max_bytes``, quantile, power, alpha, multioutput).

    Returns
    -------
    (MetricSet or None, MetricSet or None)
        The point metrics and the interval metrics (None when there are none).

    Raises
    ------
    InputError
        A value a metric refuses: a usage error naming the option.
    """
    import streammetrics as sm

    point: dict[str, Any] = {}
    interval: dict[str, Any] = {}
    for name in names:
        entry = METRICS[name]
        try:
            metric = entry.make(settings)
        except ValueError as exc:
            msg = str(exc)
            for param, option in (("max_bytes", "--max-bytes"), ("power", "--power"),
                                  ("alpha", "--quantile" if not entry.interval else "--alpha")):
                if msg.startswith(param):
                    raise InputError(option + msg[len(param):], 2) from None
            raise InputError(f"cannot set up {name}: {msg}", 2) from None
        (interval if entry.interval else point)[name] = metric
    return (sm.MetricSet(**point) if point else None, sm.MetricSet(**interval) if interval else None)


_OFFENDING = re.compile(
    r";?\s*first offending value (y_true|y_pred|sample_weight)\[(\d+)((?:, \d+)*)\] = (.*)$")


def located(exc: ValueError, path: str, offset: int, n: int, cols: dict[str, list[list[str]]]) -> InputError:
    """A ValueError of a MetricSet's ``update`` as a data error naming the file, row and column.

    The library names the argument and index of the first offending value (``y_pred[5, 1]``);
    a ``max_bytes`` refusal is a usage error naming ``--max-bytes``.

    Parameters
    ----------
    exc : ValueError
        The refusal.
    path : str
        The file.
    offset : int
        The number of the file's rows before the batch.
    n : int
        The batch's rows (named when the message has no index).
    cols : dict
        Each argument's columns (per output; for the interval bounds, per bound):
        :meth:`Columns.where`.

    Returns
    -------
    InputError
        The one-line error (exit status 1, or 2 for ``--max-bytes``).
    """
    msg = str(exc)
    if msg.startswith("max_bytes"):
        return InputError("--max-bytes" + msg[len("max_bytes"):], 2)
    m = _OFFENDING.search(msg)
    if m is None or m.group(1) not in cols:
        return InputError(f"{path}: rows {offset + 1}-{offset + n}: {msg}", 1)
    arg, row = m.group(1), int(m.group(2))
    rest = [int(x) for x in m.group(3).split(",")[1:]]
    table = cols[arg]
    j = rest[0] if rest else 0
    if len(table) == 1:  # one column per output: the index after the row is the output
        col = table[0][j]
    else:  # interval bounds: (row, bound) for one output, (row, output, bound) for several
        j, b = (rest[0], rest[1]) if len(rest) == 2 else (0, rest[0] if rest else 0)
        col = table[b][j]
    if len(table) == 2 and "above its upper bound" in msg:
        return InputError(f"{path}: row {offset + row + 1}: column {col!r}: lower bound {m.group(4)} is "
                          f"above its upper bound (column {table[1][j]!r})", 1)
    core = msg[: m.start()]
    core = re.sub(rf"^{arg}:\s*", "", core).rstrip(". ")
    return InputError(f"{path}: row {offset + row + 1}: column {col!r}: {core} (value {m.group(4)})", 1)


@dataclass
class Columns:
    """The columns of a regression run and how a batch becomes arrays.

    Attributes
    ----------
    targets, predictions, lowers, uppers : list of str
        ``--target``, ``--prediction``, ``--lower``, ``--upper`` (the last two may be empty).
    weight : str or None
        ``--weight``.
    """

    targets: list[str]
    predictions: list[str]
    lowers: list[str]
    uppers: list[str]
    weight: str | None

    @property
    def wanted(self) -> list[str]:
        """Every column read, each once."""
        cols = [*self.targets, *self.predictions, *self.lowers, *self.uppers]
        return list(dict.fromkeys(cols + ([self.weight] if self.weight else [])))

    def where(self, interval: bool) -> dict[str, list[list[str]]]:
        """The columns behind each argument of the point (or interval) metrics' ``update``,
        for :func:`located`."""
        pred = [self.lowers, self.uppers] if interval else [self.predictions]
        return {"y_true": [self.targets], "y_pred": pred, "sample_weight": [[self.weight or ""]]}

    def batches(self, files: list[str], batch_size: int, extra: list[str] | None = None
                ) -> Iterator[tuple[str, int, Any, np.ndarray, np.ndarray, np.ndarray | None,
                                    np.ndarray | None]]:
        """Every batch of every file as arrays, each value checked.

        Parameters
        ----------
        files : list of str
            The inputs, in order.
        batch_size : int
            Rows per batch (at most).
        extra : list of str, optional
            Columns read besides (the ``--by`` keys).

        Yields
        ------
        tuple
            ``(path, offset, batch, y, prediction, bounds or None, weight or None)``: y and the
            predictions (n,) or (n, k), the bounds (n, 2) or (n, k, 2). O(n k) per batch.

        Raises
        ------
        InputError
            A missing, non-finite or non-numeric value, or a negative weight (data errors naming
            the file, row and column).
        """
        kinds = [(c, "target") for c in self.targets] + [(c, "prediction") for c in self.predictions] + \
            [(c, "lower bound") for c in self.lowers] + [(c, "upper bound") for c in self.uppers]
        wanted = list(dict.fromkeys(self.wanted + list(extra or [])))
        for path in files:
            offset = 0
            for batch in open_source(path, wanted, batch_size, self.wanted).batches:
                read = {c: finite_floats(batch, c, path, offset, what) for c, what in kinds}
                w = None
                if self.weight:
                    w = finite_floats(batch, self.weight, path, offset, "weight")
                    if w.size and w.min() < 0:
                        i = int(np.argmax(w < 0))
                        raise InputError(f"{path}: row {offset + i + 1}: column {self.weight!r}: weight "
                                         f"{w[i].item()!r} is negative", 1)
                bounds = _bounds(read, self.lowers, self.uppers) if self.lowers else None
                yield (path, offset, batch, _stack([read[c] for c in self.targets]),
                       _stack([read[c] for c in self.predictions]), bounds, w)
                offset += batch.num_rows


def prepare(args: argparse.Namespace) -> tuple[Columns, list[str], _Settings, list[str]]:
    """The columns, rows and metric settings of a regression run, checked (usage errors).

    Parameters
    ----------
    args : argparse.Namespace
        The parsed options.

    Returns
    -------
    (Columns, list of str, _Settings, list of str)
        The columns, the rows to report, the metrics' settings and the notes so far (rows left
        out, and why).

    Raises
    ------
    InputError
        A usage error (exit status 2).
    """
    targets, predictions, lowers, uppers = _columns(args)
    notes: list[str] = []
    names = _names(args, len(targets), bool(lowers), notes)
    settings = _Settings(len(targets), args.max_bytes, 0.5 if args.quantile is None else args.quantile,
                         0.0 if args.power is None else args.power, args.alpha)
    return Columns(targets, predictions, lowers, uppers, args.weight), names, settings, notes


def run_regression(args: argparse.Namespace, files: list[str], title: str) -> int:
    """Stream ``files`` through the regression metrics and report them.

    Parameters
    ----------
    args : argparse.Namespace
        The parsed options (``target``, ``prediction``, ``lower``, ``upper``, ``weight``,
        ``metrics``, ``max_bytes``, ``alpha``, ``quantile``, ``power``, ``json``,
        ``batch_size``, ``quiet``, ``no_intervals``).
    files : list of str
        The input files, in order.
    title : str
        The table's first line (the run's summary is appended).

    Returns
    -------
    int
        The exit status (0).

    Raises
    ------
    InputError
        A usage error (exit 2) or a data error naming the file, row and column (exit 1).
    """
    cols, names, settings, notes = prepare(args)
    targets, predictions, lowers, uppers = cols.targets, cols.predictions, cols.lowers, cols.uppers
    k = len(targets)
    point, interval = build(names, settings)
    rows = 0
    with warnings.catch_warnings(record=True) as seen, row_progress(files, args.quiet) as advance:
        warnings.simplefilter("always")
        for path, offset, batch, y, pred, bounds, w in cols.batches(files, args.batch_size):
            n = batch.num_rows
            if point is not None:
                _feed(point, y, pred, w, cols.where(False), path, offset, n)
            if interval is not None:
                assert bounds is not None  # interval metrics come with --lower/--upper
                _feed(interval, y, bounds, w, cols.where(True), path, offset, n)
            rows += n
            advance(rows, path)
        if rows == 0:
            raise InputError(f"{files[0] if len(files) == 1 else 'the inputs'}: no rows", 1)
        res = results(point, interval, names, rows, args, targets, predictions, lowers, uppers, notes)
    res["warnings"] = list(dict.fromkeys([str(x.message) for x in seen] + res["warnings"]))
    res["files"] = files
    title += f" -- {rows} rows, regression" + (f", {k} outputs" if k > 1 else "")
    emit_regression(res, args.json, title)
    return 0


def _feed(ms: Any, y: np.ndarray, pred: np.ndarray, w: np.ndarray | None, where: dict[str, list[list[str]]],
          path: str, offset: int, n: int) -> None:
    """One batch into a MetricSet; its refusal as a data error naming the file, row and column."""
    try:
        ms.update(y, pred, sample_weight=w)
    except ValueError as exc:
        raise located(exc, path, offset, n, where) from None


def _stack(arrays: list[np.ndarray]) -> np.ndarray:
    """One column as (n,), several as (n, k)."""
    return arrays[0] if len(arrays) == 1 else np.column_stack(arrays)


def _bounds(read: dict[str, np.ndarray], lowers: list[str], uppers: list[str]) -> np.ndarray:
    """The intervals as the interval metrics take them: (n, 2) for one output, (n, k, 2)."""
    pairs = np.stack([np.column_stack([read[lo], read[hi]]) for lo, hi in zip(lowers, uppers, strict=True)],
                     axis=1)
    return pairs[:, 0, :] if len(lowers) == 1 else pairs
