"""``streammetrics trec QRELS RUN``: trec_eval's options, measures and output (the command line;
the evaluation is :func:`streammetrics.trec.evaluate_files`)."""

from __future__ import annotations

import argparse
import contextlib
import signal
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from streammetrics.trec._measures import LONG_MAX
from streammetrics.trec.diversity import is_diversity
from streammetrics.trec.diversity_files import evaluate_diversity_files
from streammetrics.trec.evaluate import DEFAULT_MEASURES, evaluate_files
from streammetrics.trec.progress import ProgressLine, reporting
from streammetrics.trec.runfile import MEMORY_LINES

from .commands import add_command, exit_status
from .options import converted, positive_int

__all__ = ["add_parser", "run", "main", "Terminated", "sigterm_raises", "long_int", "progress_line"]

_VERSION_HELP = (
    "trec_eval version to reproduce where versions differ (default 9, as pytrec_eval and ir_measures): "
    "9 rounds scores to float32 before ranking and places the iprec_at_recall / 11pt_avg recall "
    "cutoffs at (long)(c*R + 0.9) relevant documents; 10 keeps scores as doubles, uses lround(c*R), "
    "and with -c prints the per-query lines of queries missing from the run (10 reproduces trec_eval "
    "10.0's quicktest outputs line for line; 9 follows trec_eval 9.0.8)"
)


class Terminated(BaseException):
    """SIGTERM arrived (raised by :func:`sigterm_raises`'s handler; not an ``Exception``, so that
    only ``finally`` blocks and context managers -- the temporary files' clean-up -- see it)."""


@contextlib.contextmanager
def progress_line(prog: str, quiet: bool) -> Iterator[None]:
    """Within the block, a progress line on stderr (:class:`~streammetrics.trec.progress.ProgressLine`:
    after 2 s, which file is read and how far) unless ``quiet`` or stderr is not a terminal; the
    line is erased on exit, before any error is printed.

    Parameters
    ----------
    prog : str
        The command's name (the start of the line).
    quiet : bool
        No progress line (``--quiet``).

    Yields
    ------
    None
    """
    show = not quiet and hasattr(sys.stderr, "isatty") and sys.stderr.isatty()
    line = ProgressLine(prog, sys.stderr) if show else None
    try:
        with reporting(line):
            yield
    finally:
        if line is not None:
            line.close()


@contextlib.contextmanager
def sigterm_raises() -> Iterator[None]:
    """Within the block, SIGTERM raises :class:`Terminated` in the main thread, so that an external
    sort's temporary files are removed as on ``KeyboardInterrupt``; a second SIGTERM during the
    clean-up kills at once (the next run removes what is left). The previous handler is restored
    on exit. Outside the main thread, or where signals cannot be set, nothing changes.

    Yields
    ------
    None
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum: int, frame: Any) -> None:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        raise Terminated

    try:
        previous = signal.signal(signal.SIGTERM, handler)
    except (ValueError, OSError):  # pragma: no cover -- no signals here
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def add_parser(sub: Any) -> argparse.ArgumentParser:
    """Register the ``trec`` subcommand on an argparse subparsers object.

    Parameters
    ----------
    sub : argparse subparsers action
        What ``ArgumentParser.add_subparsers`` returned.

    Returns
    -------
    argparse.ArgumentParser
        The ``trec`` parser.
    """
    p = add_command(
        sub,
        "trec",
        epilog=exit_status("143 terminated (SIGTERM)"),
        help="evaluate a TREC run against qrels (trec_eval's measures, options and output format)",
        description=(
            "trec_eval's evaluation: qrels 'qid iter docno grade', run 'qid Q0 docno rank score runid' "
            "(any line order, '#' comment lines and extra trailing fields allowed). Measures: -m official "
            "(default), all_trec, set, or any trec_eval measure with its parameters (P.5,10 ndcg_cut.10 "
            "iprec_at_recall.0.1,0.5 Rprec_mult.0.5 utility.2,-1,0,0 11pt_avg..25,.5 ndcg.1=3,2=9 "
            "success.1,5 relstring.20 ...), or an ir_measures name (AP, AP@10, nDCG, nDCG@10, P@5, "
            "R@100, RR, RR@10, Rprec, Bpref, Judged@10, NumRet, NumRel, NumRelRet, iprec@0.5, infAP, "
            "ERR@10, RBP(p=0.8), Success@5, SetP, SetF(beta=0.5), ...) with ir_measures' parameters "
            "(nDCG(cutoff=10), P(rel=2)@5, AP(rel=2, judged_only=True)), printed under the name given. "
            "ndeval's diversity measures (alpha_nDCG@20, alpha_DCG@20, ERR_IA@20, nERR_IA@20, P_IA@20, "
            "StRecall@20, AP_IA, NRBP, nNRBP) read subtopic qrels 'topic subtopic docno judgment' and "
            "are asked for alone. "
            "Rules: trec_eval 9.0.8's by default (as pytrec_eval and ir_measures: float32 scores, recall "
            "cutoffs (long)(c*R + 0.9)); --trec-version 10 follows trec_eval 10.0 and reproduces its "
            "quicktest line for line."
        ),
    )
    p.add_argument("qrels", help="qrels file: qid iter docno grade")
    p.add_argument("run", help="run file: qid Q0 docno rank score runid")
    p.add_argument(
        "-m",
        dest="measures",
        action="append",
        default=None,
        help="measure or measure set (trec_eval syntax; repeatable), e.g. all_trec, map, P.5,10",
    )
    p.add_argument("-q", dest="per_query", action="store_true", help="also print each query's values")
    p.add_argument(
        "-c",
        dest="complete",
        action="store_true",
        help="average over every qrels query (a query missing from the run scores trec_eval's empty ranking)",
    )
    p.add_argument("-l", dest="rel_level", type=long_int(-LONG_MAX - 1), default=1,
                   help="minimum grade of a relevant document")  # fmt: skip
    p.add_argument("-M", dest="max_docs", type=long_int(0), default=None,
                   help="evaluate only the top M documents")  # fmt: skip
    p.add_argument("-J", dest="judged_only", action="store_true", help="drop unjudged documents first")
    p.add_argument("-N", dest="num_docs", type=long_int(0), default=0,
                   help="documents in the collection (utility)")  # fmt: skip
    p.add_argument("-n", dest="no_summary", action="store_true", help="print no summary ('all') lines")
    p.add_argument(
        "-Z", dest="zscores", default=None, help="print z-scores: file of 'qid measure mean stddev'"
    )
    p.add_argument(
        "-R",
        dest="rel_format",
        default="qrels",
        choices=["qrels", "qrels_jg", "prefs", "qrels_prefs"],
        help="judgment format: qrels; qrels_jg ('qid jg docno grade', judgment groups); prefs "
        "('qid jg jsg docno rel_level', preferences); qrels_prefs (a qrels file read as prefs)",
    )
    p.add_argument("--trec-version", type=int, choices=[9, 10], default=9, help=_VERSION_HELP)
    p.add_argument(
        "--fused-cutoffs",
        action="store_true",
        help="with --trec-version 9: compute c*R + 0.9 with one rounding (fused multiply-add), as "
        "trec_eval 9.x builds for arm64/macOS do (its v9 test outputs); default: two roundings, as "
        "x86-64 builds and pytrec_eval",
    )
    p.add_argument("--digits", type=_digits, default=4, help="decimals printed, 0 to 17 (trec_eval: 4)")
    p.add_argument(
        "--memory-lines",
        type=positive_int,
        default=MEMORY_LINES,
        metavar="N",
        help=f"a run whose queries are not contiguous is grouped by query with an external sort: at most "
        f"2N lines in memory at once, the rest in temporary files (default {MEMORY_LINES})",
    )
    p.add_argument("--quiet", action="store_true",
                   help="no progress line (otherwise shown on stderr, if a terminal, after 2 s)")  # fmt: skip
    return p


def long_int(low: int) -> Callable[[str], int]:
    """The type of an integer option that trec_eval reads as a C ``long``: an integer in
    ``[low, 2**63 - 1]``, refused with a one-line message otherwise.

    Parameters
    ----------
    low : int
        The smallest value accepted.

    Returns
    -------
    callable
        ``argparse``'s ``type`` function.
    """

    def convert(text: str) -> int:
        value = converted(text, int, "expected an integer, got {!r}")
        if not low <= value <= LONG_MAX:
            lowest = "-2**63" if low == -LONG_MAX - 1 else str(low)
            raise argparse.ArgumentTypeError(
                f"must be an integer in [{lowest}, 2**63 - 1] (trec_eval's long), got {value}"
            )
        return value

    return convert


def _digits(text: str) -> int:
    """``--digits``: an integer in [0, 17] (float64 has 17 significant decimals), checked before any
    output is printed."""
    value = converted(text, int, "expected an integer, got {!r}")
    if not 0 <= value <= 17:
        raise argparse.ArgumentTypeError(f"must be between 0 and 17, got {value}")
    return value


def run(args: argparse.Namespace) -> int:
    """Entry point of ``streammetrics trec``: print trec_eval's output.

    Parameters
    ----------
    args : argparse.Namespace
        The options parsed by the ``trec`` parser (:func:`add_parser`).

    Returns
    -------
    int
        The exit status: 0, or 2 after one error line on stderr (an unreadable file, a bad
        measure or option value), or 143 after SIGTERM (temporary files removed).
    """
    try:
        with sigterm_raises(), progress_line("streammetrics trec", getattr(args, "quiet", False)):
            _evaluate(args)
    except Terminated:
        print("streammetrics trec: terminated", file=sys.stderr)
        return 143
    except (OSError, ValueError) as exc:
        print(f"streammetrics trec: error: {exc}", file=sys.stderr)
        return 2
    except MemoryError:
        print("streammetrics trec: error: out of memory (try a smaller --memory-lines)", file=sys.stderr)
        return 1
    return 0


def _evaluate(args: argparse.Namespace) -> None:
    measures = args.measures or DEFAULT_MEASURES
    if any(is_diversity(m) for m in measures):  # subtopic qrels: ndeval's measures alone
        _evaluate_diversity(args, measures)
        return
    evaluate_files(
        args.qrels,
        args.run,
        args.measures or DEFAULT_MEASURES,
        per_query=args.per_query,
        complete=args.complete,
        rel_level=args.rel_level,
        digits=args.digits,
        max_docs=getattr(args, "max_docs", None),
        judged_only=getattr(args, "judged_only", False),
        num_docs=getattr(args, "num_docs", 0),
        summary=not getattr(args, "no_summary", False),
        zscores=getattr(args, "zscores", None),
        trec_version=getattr(args, "trec_version", 9),
        fused_cutoffs=getattr(args, "fused_cutoffs", False),
        rel_format=getattr(args, "rel_format", "qrels"),
        memory_lines=getattr(args, "memory_lines", MEMORY_LINES),
    )


def _evaluate_diversity(args: argparse.Namespace, measures: Sequence[str]) -> None:
    """The diversity measures (:mod:`streammetrics.trec.diversity`) on subtopic qrels; the options
    that have no meaning there are refused."""
    for option, given in (("-Z", getattr(args, "zscores", None) is not None),
                          ("-R", getattr(args, "rel_format", "qrels") != "qrels"),
                          ("-N", getattr(args, "num_docs", 0) != 0)):  # fmt: skip
        if given:
            raise ValueError(f"{option} does not apply to the diversity measures (subtopic qrels)")
    evaluate_diversity_files(
        args.qrels,
        args.run,
        measures,
        per_query=args.per_query,
        complete=args.complete,
        rel_level=args.rel_level,
        digits=args.digits,
        max_docs=getattr(args, "max_docs", None),
        judged_only=getattr(args, "judged_only", False),
        summary=not getattr(args, "no_summary", False),
        memory_lines=getattr(args, "memory_lines", MEMORY_LINES),
    )


def main(argv: Sequence[str] | None = None) -> int:
    """``streammetrics trec ...`` as a function: ``main(["trec", QRELS, RUN, "-q"])``.

    Parameters
    ----------
    argv : sequence of str, optional
        The arguments, starting with ``trec`` (default: ``sys.argv[1:]``).

    Returns
    -------
    int
        The exit status (as :func:`run`).
    """
    parser = argparse.ArgumentParser(prog="streammetrics")
    sub = parser.add_subparsers(dest="command", required=True)
    add_parser(sub)
    return run(parser.parse_args(argv))
