"""streammetrics: streaming evaluation metrics from the command line.

Run as ``streammetrics [COMMAND]`` or ``python -m streammetrics``. Commands (each in
:mod:`streammetrics.cli`):

* ``demo`` (the default): stream the bundled example predictions through a MetricSet in batches
  and print the metrics with their intervals, the best threshold and the classification report.
* ``trec QRELS RUN``: trec_eval's measures and output format over TREC files, in one streaming pass.
* ``trec-compare QRELS RUN1 RUN2 ...``: paired significance tests of runs against the first.
* ``evaluate [FILE ...]``: the metrics of prediction files (CSV, Parquet, JSON Lines; ``cli`` extra).
* ``drift REFERENCE CURRENT --score COL``: score drift against a reference file, without labels.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence


def _version() -> str:
    """The installed distribution's version (package metadata), else the package's ``__version__``."""
    try:
        from importlib.metadata import PackageNotFoundError, version

        return version("streammetrics")
    except (ImportError, PackageNotFoundError):  # running from a source tree
        from . import __version__

        return str(__version__)


def _parser() -> argparse.ArgumentParser:
    """The root parser: every command of :mod:`streammetrics.cli` registers its own subparser
    (importing a command imports none of the optional packages; they load when it runs)."""
    from streammetrics.cli.errors import OneLineParser

    from .cli import demo, drift, evaluate, trec, trec_compare

    parser = OneLineParser(prog="streammetrics", description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--version", action="version", version=f"streammetrics {_version()}")
    sub = parser.add_subparsers(dest="command", metavar="{demo,trec,trec-compare,evaluate,drift}",
                                description="without a command: demo")  # fmt: skip
    demo.add_parser(sub)  # ``streammetrics demo``: the bundled example through a MetricSet
    demo.add_root_options(parser)  # ``streammetrics`` alone runs the demo, with its options
    trec.add_parser(sub)  # ``streammetrics trec QRELS RUN``: trec_eval's measures and output format
    trec_compare.add_parser(sub)  # ``streammetrics trec-compare QRELS RUN1 RUN2 ...``: significance tests
    evaluate.add_parser(sub)  # ``streammetrics evaluate [FILE ...]``: metrics of prediction files
    drift.add_parser(sub)  # ``streammetrics drift REFERENCE CURRENT --score COL``: score drift
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """``streammetrics [COMMAND] ...``: returns the exit status (0 ok, 1 data error, 2 usage error,
    130 interrupted); errors are one line on stderr, never a traceback."""
    from streammetrics.cli.errors import guarded

    try:
        args = _parser().parse_args(argv)
    except SystemExit as exc:  # a usage error (one line, status 2), --help or --version (status 0)
        return exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 2)
    if args.command == "trec":
        from streammetrics.cli.trec import run as run_trec

        return guarded("streammetrics trec", lambda: run_trec(args))
    if args.command == "trec-compare":
        from streammetrics.cli.trec_compare import run as run_compare

        return guarded("streammetrics trec-compare", lambda: run_compare(args))
    if args.command == "drift":
        from streammetrics.cli.drift import run as run_drift

        return run_drift(args)
    if args.command == "evaluate":
        from streammetrics.cli.evaluate import run as run_evaluate

        return run_evaluate(args)
    from streammetrics.cli.demo import run as run_demo

    return guarded("streammetrics", lambda: run_demo(args))


if __name__ == "__main__":
    sys.exit(main())
