"""``streammetrics demo`` (the default command): the bundled example streamed through a MetricSet.

The 569 rows of bundled example predictions are read as a stream, folded into a
:class:`~streammetrics.MetricSet` batch by batch, and the metrics are printed with their
intervals, the best threshold by Youden's J and the classification report. It needs the core
dependencies only (numpy, sortedcontainers): no extra, not even ``cli``.
"""

from __future__ import annotations

import argparse
import csv
from collections.abc import Iterator
from importlib import resources

import numpy as np

from streammetrics.classification.confusion import (
    F1,
    NPV,
    Accuracy,
    BalancedAccuracy,
    MatthewsCorrCoef,
    Precision,
    Recall,
    Specificity,
)
from streammetrics.classification.report import ClassificationReport
from streammetrics.ranking.metrics import AUROC, AveragePrecision, ROCCurve
from streammetrics.wrappers.metricset import MetricSet

from .commands import command
from .options import batch_size, finite_float

__all__ = ["add_parser", "add_root_options", "example_batches", "run"]

_EXAMPLE = "breast_cancer_scores.csv"


def example_batches(batch_size: int = 100) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """The bundled example's (labels, scores) in batches, read as a stream.

    Parameters
    ----------
    batch_size : int, default 100
        Rows per batch (the last batch may be shorter).

    Returns
    -------
    iterator of (ndarray, ndarray)
        Integer labels (0 or 1) and float scores of each batch.

    Examples
    --------
    >>> from streammetrics.cli.demo import example_batches
    >>> [len(labels) for labels, _ in example_batches(200)]
    [200, 200, 169]
    """
    path = resources.files("streammetrics") / "data" / _EXAMPLE
    with path.open("r", encoding="utf-8") as fh:
        rows = csv.DictReader(line for line in fh if not line.startswith("#"))
        labels: list[int] = []
        scores: list[float] = []
        for row in rows:
            labels.append(int(row["label"]))
            scores.append(float(row["score"]))
            if len(labels) == batch_size:
                yield np.array(labels), np.array(scores)
                labels, scores = [], []
        if labels:
            yield np.array(labels), np.array(scores)


def _arguments(demo: argparse.ArgumentParser) -> None:
    """The arguments of ``demo``."""
    demo.add_argument("--batch-size", type=batch_size, default=100, metavar="N",
                      help="rows per update (default 100: the 569 rows stream in 6 batches)")  # fmt: skip
    demo.add_argument("--threshold", type=finite_float, default=0.5, help="decision threshold (default 0.5)")


add_parser = command("demo", arguments=_arguments,
                     help="stream the bundled example through a MetricSet (the default)",
                     description="Stream the bundled example predictions (569 rows) through a MetricSet in "
                     "small batches and print the metrics, the best threshold and the classification report.")


def add_root_options(parser: argparse.ArgumentParser) -> None:
    """The demo's options, accepted before any command (``streammetrics`` alone runs the demo, as
    in 0.1.0) but shown on ``demo`` only (``evaluate`` has its own --batch-size, default 65536).

    Parameters
    ----------
    parser : argparse.ArgumentParser
        The root ``streammetrics`` parser.

    Returns
    -------
    None
    """
    parser.add_argument("--batch-size", type=batch_size, default=100, help=argparse.SUPPRESS)
    parser.add_argument("--threshold", type=finite_float, default=0.5, help=argparse.SUPPRESS)


def run(args: argparse.Namespace) -> int:
    """Run the demo: stream the bundled example and print the metrics and the report.

    Parameters
    ----------
    args : argparse.Namespace
        The parsed options (``batch_size``, ``threshold``).

    Returns
    -------
    int
        The exit status, 0.
    """
    t = args.threshold
    metrics = MetricSet(
        accuracy=Accuracy(threshold=t),
        precision=Precision(threshold=t),
        recall=Recall(threshold=t),
        specificity=Specificity(threshold=t),
        npv=NPV(threshold=t),
        f1=F1(threshold=t),
        balanced_accuracy=BalancedAccuracy(threshold=t),
        mcc=MatthewsCorrCoef(threshold=t),
        auroc=AUROC(),
        average_precision=AveragePrecision(),
        roc=ROCCurve(),
        report=ClassificationReport(threshold=t),
    )
    rows = 0
    for labels, scores in example_batches(args.batch_size):
        metrics.update(labels, scores)
        rows += len(labels)
    values = metrics.compute()
    print(f"streammetrics demo: {rows} rows of bundled example predictions ({_EXAMPLE}),")
    print(f"streamed in batches of {args.batch_size}, threshold {t}\n")
    print(f"{'metric':<20}{'value':>10}   95% interval (Wilson; DeLong for AUROC)")
    for name, value in values.items():
        if name in ("report", "roc"):
            continue
        metric = metrics[name]
        interval = ""
        if hasattr(metric, "interval"):
            low, high = metric.interval()
            interval = f"   [{low:.4f}, {high:.4f}]"
        print(f"{name:<20}{value:>10.4f}{interval}")
    best = values["roc"].best_threshold("youden")
    print(f"\nbest threshold by Youden's J: {best.threshold:.4f} "
          f"(TPR {best.tpr:.4f}, FPR {best.fpr:.4f}, accuracy {best.accuracy:.4f})")  # fmt: skip
    print("\nclassification report\n")
    print(values["report"].table())
    return 0
