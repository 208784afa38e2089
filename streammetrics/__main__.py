"""streammetrics: streaming evaluation metrics from the command line.

Run as ``streammetrics [COMMAND]`` or ``python -m streammetrics``. Commands:

* ``demo`` (the default): stream the bundled example predictions through a MetricSet in batches
  and print the metrics with their intervals, the best threshold and the classification report.
* ``trec QRELS RUN``: trec_eval's measures and output format over TREC files, in one streaming pass.
* ``trec-compare QRELS RUN1 RUN2 ...``: paired significance tests of runs against the first.
"""

from __future__ import annotations

import argparse
import csv
import sys
from collections.abc import Iterator, Sequence
from importlib import resources

import numpy as np

from .cli.options import batch_size, finite_float

EXAMPLE = "breast_cancer_scores.csv"


def example_batches(batch_size: int = 100) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """The bundled example (label, score) in batches, read as a stream."""
    path = resources.files("streammetrics") / "data" / EXAMPLE
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


def run_demo(args: argparse.Namespace) -> int:
    import streammetrics as sm

    metrics = sm.MetricSet(
        accuracy=sm.Accuracy(threshold=args.threshold),
        precision=sm.Precision(threshold=args.threshold),
        recall=sm.Recall(threshold=args.threshold),
        specificity=sm.Specificity(threshold=args.threshold),
        npv=sm.NPV(threshold=args.threshold),
        f1=sm.F1(threshold=args.threshold),
        balanced_accuracy=sm.BalancedAccuracy(threshold=args.threshold),
        mcc=sm.MatthewsCorrCoef(threshold=args.threshold),
        auroc=sm.AUROC(),
        average_precision=sm.AveragePrecision(),
        roc=sm.ROCCurve(),
        report=sm.ClassificationReport(threshold=args.threshold),
    )
    rows = 0
    for labels, scores in example_batches(args.batch_size):
        metrics.update(labels, scores)
        rows += len(labels)
    values = metrics.compute()
    print(f"streammetrics demo: {rows} rows of bundled example predictions ({EXAMPLE}),")
    print(f"streamed in batches of {args.batch_size}, threshold {args.threshold}\n")
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
          f"(TPR {best.tpr:.4f}, FPR {best.fpr:.4f}, accuracy {best.accuracy:.4f})")
    print("\nclassification report\n")
    print(values["report"].table())
    return 0


def _version() -> str:
    """The installed distribution's version (package metadata), else the package's ``__version__``."""
    try:
        from importlib.metadata import PackageNotFoundError, version

        return version("streammetrics")
    except (ImportError, PackageNotFoundError):  # running from a source tree
        from . import __version__

        return str(__version__)


def _parser() -> argparse.ArgumentParser:
    from .cli.errors import OneLineParser

    parser = OneLineParser(prog="streammetrics", description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--version", action="version", version=f"streammetrics {_version()}")
    sub = parser.add_subparsers(dest="command", metavar="{demo,trec,trec-compare,evaluate}",
                                description="without a command: demo")
    demo = sub.add_parser("demo", help="stream the bundled example through a MetricSet (the default)",
                          description="Stream the bundled example predictions (569 rows) through a "
                                      "MetricSet in small batches and print the metrics, the best "
                                      "threshold and the classification report.")
    demo.add_argument("--batch-size", type=batch_size, default=100, metavar="N",
                      help="rows per update (default 100: the 569 rows stream in 6 batches)")
    demo.add_argument("--threshold", type=finite_float, default=0.5, help="decision threshold (default 0.5)")
    # ``streammetrics`` alone runs the demo; its options stay accepted before any command, as in
    # 0.1.0, but are shown on ``demo`` only (``evaluate`` has its own --batch-size, default 65536)
    parser.add_argument("--batch-size", type=batch_size, default=100, help=argparse.SUPPRESS)
    parser.add_argument("--threshold", type=finite_float, default=0.5, help=argparse.SUPPRESS)
    from .cli.trec import add_parser as add_trec_parser

    add_trec_parser(sub)  # ``streammetrics trec QRELS RUN``: trec_eval's measures and output format
    from .cli.trec_compare import add_parser as add_compare_parser

    add_compare_parser(sub)  # ``streammetrics trec-compare QRELS RUN1 RUN2 ...``: significance tests
    from .cli.evaluate import add_parser as add_evaluate_parser  # pyarrow/rich/matplotlib load lazily

    add_evaluate_parser(sub)  # ``streammetrics evaluate [FILE ...]``: metrics of prediction files
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """``streammetrics [COMMAND] ...``: returns the exit status (0 ok, 1 data error, 2 usage error,
    130 interrupted); errors are one line on stderr, never a traceback."""
    from .cli.errors import guarded

    try:
        args = _parser().parse_args(argv)
    except SystemExit as exc:  # a usage error (one line, status 2), --help or --version (status 0)
        return exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 2)
    if args.command == "trec":
        from .cli.trec import run as run_trec

        return guarded("streammetrics trec", lambda: run_trec(args))
    if args.command == "trec-compare":
        from .cli.trec_compare import run as run_compare

        return guarded("streammetrics trec-compare", lambda: run_compare(args))
    if args.command == "evaluate":
        from .cli.evaluate import run as run_evaluate

        return run_evaluate(args)
    return guarded("streammetrics", lambda: run_demo(args))


if __name__ == "__main__":
    sys.exit(main())
