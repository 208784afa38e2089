"""The options of ``streammetrics evaluate`` and their value types.

Each type function turns one option value into a checked value or raises
``argparse.ArgumentTypeError``, which the parser reports as one usage line (exit status 2): sizes
(``--max-bytes``), positive row counts (``--batch-size``), finite thresholds, comma-separated
name lists (``--metrics``, ``--classes``).
"""

from __future__ import annotations

import argparse
import math
import re
from collections.abc import Callable
from decimal import Decimal, InvalidOperation
from typing import TypeVar

__all__ = ["add_arguments", "parse_size", "batch_size", "converted", "finite_float", "positive_int",
           "open_unit"]

_T = TypeVar("_T")

#: the largest --batch-size: pyarrow's slices and numpy's arrays are indexed by int64, and a batch
#: is held in memory, so more than 2**31 rows per batch is a typing mistake, not a plan
_MAX_BATCH = 2**31 - 1
#: the largest --max-bytes (1 PiB): the ranking metrics' budget is held as int64 byte counts
_MAX_BYTES = 2**50

_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kmgtp]?)(i?b?)\s*$", re.IGNORECASE)


def parse_size(text: str) -> int:
    """``"64MB"``, ``"1.5G"``, ``"500k"``, ``"1048576"`` -> bytes (powers of 1024), at least 1 and at
    most 1 PiB.

    Parameters
    ----------
    text : str
        The option value: a number with an optional unit k, M, G, T or P (and an optional ``iB``
        or ``B``).

    Returns
    -------
    int
        The size in bytes.

    Raises
    ------
    argparse.ArgumentTypeError
        Not a size, or a size outside [1 byte, 1 PiB].
    """
    m = _SIZE.match(text)
    if not m:
        raise argparse.ArgumentTypeError(f"not a size: {text!r} (examples: 1048576, 512k, 64MB, 2G)")
    try:
        value = Decimal(m.group(1)) * 1024 ** "_kmgtp".index(m.group(2).lower() or "_")
    except InvalidOperation:  # pragma: no cover - the pattern admits only decimal numbers
        raise argparse.ArgumentTypeError(f"not a size: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"size must be at least 1 byte, got {text!r}")
    if value > _MAX_BYTES:
        raise argparse.ArgumentTypeError(f"size {text!r} is larger than the limit of 1 PiB")
    return int(value)


def converted(text: str, convert: Callable[[str], _T], refusal: str) -> _T:
    """An option value converted, or the usage error ``refusal`` naming the text.

    Parameters
    ----------
    text : str
        The option value.
    convert : callable
        Turns the text into the value; a ``ValueError`` means the text is not one.
    refusal : str
        The message when ``convert`` refuses the text: a ``str.format`` template whose one field
        (``{!r}``) is the text.

    Returns
    -------
    object
        ``convert(text)``.

    Raises
    ------
    argparse.ArgumentTypeError
        ``convert`` raised ``ValueError``.

    Examples
    --------
    >>> from streammetrics.cli.options import converted
    >>> converted("12", int, "expected an integer, got {!r}")
    12
    >>> converted("x", int, "expected an integer, got {!r}")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: expected an integer, got 'x'
    """
    try:
        return convert(text)
    except ValueError:
        raise argparse.ArgumentTypeError(refusal.format(text)) from None


def batch_size(text: str) -> int:
    """A row count per batch: an integer in ``[1, 2**31 - 1]``.

    Parameters
    ----------
    text : str
        The option value (``_`` separators allowed).

    Returns
    -------
    int
        The row count.

    Raises
    ------
    argparse.ArgumentTypeError
        Not a whole number, or outside the range.
    """
    value = converted(text, lambda t: int(t.strip().replace("_", "")), "not a whole number: {!r}")
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {text!r}")
    if value > _MAX_BATCH:
        raise argparse.ArgumentTypeError(f"{text!r} is too large (at most {_MAX_BATCH} rows per batch)")
    return value


def positive_int(text: str) -> int:
    """An integer >= 1 (the counts of ``trec`` and ``trec-compare``: ``--memory-lines``,
    ``--permutations``).

    Parameters
    ----------
    text : str
        The option value.

    Returns
    -------
    int
        The count.

    Raises
    ------
    argparse.ArgumentTypeError
        Not an integer, or below 1.
    """
    value = converted(text, int, "expected a positive integer, got {!r}")
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {value}")
    return value


def finite_float(text: str) -> float:
    """A finite number (``nan`` and ``inf`` are refused).

    Parameters
    ----------
    text : str
        The option value.

    Returns
    -------
    float
        The number.

    Raises
    ------
    argparse.ArgumentTypeError
        Not a number, or not finite.
    """
    value = converted(text, float, "not a number: {!r}")
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"must be a finite number, got {text!r}")
    return value


def open_unit(text: str) -> float:
    """A number strictly between 0 and 1 (``--alpha``, the miscoverage of prediction intervals).

    Parameters
    ----------
    text : str
        The option value.

    Returns
    -------
    float
        The number.

    Raises
    ------
    argparse.ArgumentTypeError
        Not a number, or outside (0, 1).
    """
    value = finite_float(text)
    if not 0.0 < value < 1.0:
        raise argparse.ArgumentTypeError(f"must be a number in (0, 1), got {text!r}")
    return value


def _unit(text: str) -> float:
    """A number in [0, 1] (``--quantile``)."""
    value = finite_float(text)
    if not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError(f"must be a number in [0, 1], got {text!r}")
    return value


def _name_list(text: str) -> list[str]:
    """``"a,b, c"`` -> ``["a", "b", "c"]``; an empty list, an empty name or a repeated name is refused."""
    names = [n.strip() for n in text.split(",")]
    if not any(names):
        raise argparse.ArgumentTypeError(f"no names in {text!r} (expected a comma-separated list)")
    if not all(names):
        raise argparse.ArgumentTypeError(f"an empty name in {text!r} (position {names.index('') + 1})")
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        raise argparse.ArgumentTypeError(f"{repeated[0]!r} is repeated in {text!r}")
    return names


def add_arguments(p: argparse.ArgumentParser, metric_names: list[str], tasks: tuple[str, ...],
                  regression_names: list[str] | None = None) -> None:
    """The arguments of ``evaluate`` on its parser ``p``.

    Parameters
    ----------
    p : argparse.ArgumentParser
        The ``evaluate`` parser.
    metric_names : list of str
        The metric names ``--metrics`` accepts (listed in its help).
    tasks : tuple of str
        The choices of ``--task``.
    regression_names : list of str, optional
        The regression metric names ``--metrics`` accepts with ``--target``/``--prediction``
        (listed in its help).

    Returns
    -------
    None
    """
    p.add_argument("files", nargs="*", metavar="FILE",
                   help="input files, directories or glob patterns (default: the bundled example; with "
                        "--target/--prediction or --task regression, the bundled regression example)")
    p.add_argument("--label", action="append", metavar="COL",
                   help="classification: label column (repeat for multilabel label columns, or name one "
                        "list column of 0/1)")
    p.add_argument("--score", action="append", metavar="COL",
                   help="classification: score column; repeat for one column per class, or name one list "
                        "column")
    p.add_argument("--task", choices=tasks,
                   help="default: regression with --target/--prediction; else binary for one score "
                        "column, multilabel for a list label column, else multiclass")
    p.add_argument("--metrics", type=_name_list, metavar="LIST",
                   help="comma-separated metric names (default: the confusion family, AUROC, AP and, "
                        "for probabilities, log_loss, brier, ece; binary also ks); "
                        f"available: {', '.join(metric_names)}"
                        + (f"; regression (default: mse, rmse, mae, medae, mape, r2, explained_variance, "
                           f"max_error, pearson, spearman, kendall and, with --lower/--upper, the interval "
                           f"rows): {', '.join(regression_names)}" if regression_names else ""))
    p.add_argument("--pos-label", metavar="LABEL",
                   help="binary task: the label of the positive class (text labels must say which one "
                        "is positive: this, or a score column named after it, e.g. p_cancer)")
    p.add_argument("--classes", type=_name_list, metavar="LIST",
                   help="comma-separated class names in class order: class i is position i of a list "
                        "score column (required for text labels with a list column), or the i-th "
                        "--score column; binary: NEGATIVE,POSITIVE")
    p.add_argument("--threshold", type=finite_float, default=None,
                   help="decision threshold (default 0.5; 0 with --from-logits)")
    p.add_argument("--max-bytes", type=parse_size, metavar="SIZE",
                   help="bound the memory of AUROC/AP (regression: of medae and the d2 scores; binned "
                        "beyond SIZE; results carry certified bounds)")
    p.add_argument("--weight", metavar="COL", help="sample weight column")
    p.add_argument("--json", metavar="PATH", help="write the results as JSON to PATH ('-' for stdout)")
    p.add_argument("--plot", metavar="DIR",
                   help="write ROC, PR, confusion-matrix, histogram and reliability PNGs "
                        "(binary: also gains and lift) to DIR")
    p.add_argument("--batch-size", type=batch_size, default=65536, metavar="N",
                   help="rows per update (default 65536)")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.add_argument("--no-intervals", action="store_true",
                   help="skip the 95%% intervals (DeLong's for AUROC: a linear pass over the sorted "
                        "scores per class, ~0.7 s at 10M rows)")
    p.add_argument("--from-logits", action="store_true",  # cli.calibration
                   help="the scores are logits: log loss, Brier and ECE take the sigmoid (binary) or "
                        "row softmax (multiclass) first, and the default --threshold becomes 0")
    p.add_argument("--by", action="append", metavar="COL",  # cli.slices
                   help="evaluate per slice of this column (repeat for combinations; prints each "
                        "slice's metrics with intervals and the disparity between slices)")

    if regression_names is None:
        return
    g = p.add_argument_group("regression (--target/--prediction; never guessed from the values)")
    g.add_argument("--target", action="append", metavar="COL",
                   help="target column: selects the regression table (repeat, with --prediction, for "
                        "several outputs)")
    g.add_argument("--prediction", action="append", metavar="COL",
                   help="prediction column, one per --target, in the same order")
    g.add_argument("--lower", action="append", metavar="COL",
                   help="lower bound of a prediction interval, one per --target (with --upper): adds "
                        "interval_coverage (with its Wilson interval), interval_width and, with --alpha, "
                        "interval_score")
    g.add_argument("--upper", action="append", metavar="COL",
                   help="upper bound of a prediction interval, one per --target")
    g.add_argument("--alpha", type=open_unit, metavar="A",
                   help="nominal miscoverage of the --lower/--upper intervals, for interval_score "
                        "(0.1 for 90%% intervals)")
    g.add_argument("--quantile", type=_unit, default=None, metavar="Q",
                   help="quantile level of pinball and d2_pinball (default 0.5)")
    g.add_argument("--power", type=finite_float, default=None, metavar="P",
                   help="Tweedie power of tweedie_deviance (default 0; <= 0 or >= 1)")
