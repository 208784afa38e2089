"""``streammetrics trec-compare QRELS RUN1 RUN2 [...]``: paired significance tests of runs.

The command line of :func:`streammetrics.trec.compare.compare`: for each measure (trec_eval or
ir_measures names; default ``AP nDCG@10 P@10 RR``) each run's mean and, against the first run,
the mean paired difference, the paired t-test, the randomization test, Wilcoxon's signed-rank test,
the sign test (each two-sided or one-sided: ``--alternative``), the bootstrap interval and
Holm-adjusted p-values. Output: a plain-text table on stdout, ``--json FILE`` (NaN as null) and
``--latex FILE`` (booktabs; a dagger marks a Holm-adjusted randomization p below ``--alpha``).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from typing import Any

from streammetrics.trec._measures import LONG_MAX
from streammetrics.trec.compare import DEFAULT, compare
from streammetrics.trec.perquery import per_query_values
from streammetrics.trec.rank_tests import ZERO_METHODS
from streammetrics.trec.significance import ALTERNATIVES

from .commands import command, doc_paragraph, exit_status
from .errors import InputError
from .options import converted, positive_int
from .trec import Terminated, long_int, progress_line, sigterm_raises

__all__ = ["add_parser", "run"]


def _f(v: float | None, digits: int, sign: bool = False) -> str:
    if v is None:
        return "inf"
    if math.isinf(v):
        return "+inf" if v > 0 else "-inf"
    return f"{v:+.{digits}f}" if sign else f"{v:.{digits}f}"


def _format_table(result: dict[str, Any], digits: int = 4) -> str:
    """The plain-text table of :func:`compare`'s result."""
    level = round(100 * (1 - result["alpha"]))
    rules = result.get("trec_version", 9)
    alt = result.get("alternative", "two-sided")
    op = ">" if alt == "greater" else "<"
    sided = "two-sided" if alt == "two-sided" else f"one-sided ({alt}: run {op} baseline)"
    wil = (f"wilcoxon: {result.get('wilcoxon_method', 'auto')}, "
           f"zero_method {result.get('zero_method', 'wilcox')}"
           f"{', continuity correction' if result.get('correction') else ''}; ")  # fmt: skip
    head = (f"{result['queries']} queries, baseline {result['baseline']}; trec_eval {rules} rules "
            f"(--trec-version {rules}); paired {sided} tests; {wil}"
            f"Holm-adjusted over the compared runs; Tukey HSD: one-way over all runs, two-sided; "
            f"randomization: {result['permutations']} sign flips "
            f"(exact when >= 2^queries); bootstrap: {result['bootstrap']} resamples; "
            f"seed {result['seed']}")  # fmt: skip
    out = [head]
    width = max(len("run"), *(len(r["run"]) for m in result["measures"] for r in m["runs"]))
    cols = ("mean", "diff", "t", "p(t)", "p(t) Holm", "p(perm)", "p(perm) Holm", "p(wilcoxon)",
            "p(wilc) Holm", "p(sign)", "p(sign) Holm", "p(Tukey)")  # fmt: skip
    for m in result["measures"]:
        header = f"{'run':<{width}}" + "".join(f"{c:>13}" for c in cols) + f"   {level}% CI of diff"
        out += ["", m["measure"], header]
        for r in m["runs"]:
            if "diff" not in r:
                out.append(f"{r['run']:<{width}}{_f(r['mean'], digits):>13}")
                continue
            cells = [_f(r["mean"], digits), _f(r["diff"], digits, True), _f(r["t"], 3, True),
                     _f(r["p_t"], digits), _f(r["p_t_holm"], digits), _f(r["p_perm"], digits),
                     _f(r["p_perm_holm"], digits), _f(r["p_wilcoxon"], digits),
                     _f(r["p_wilcoxon_holm"], digits), _f(r["p_sign"], digits),
                     _f(r["p_sign_holm"], digits), _f(r["p_tukey"], digits)]  # fmt: skip
            ci = f"[{_f(r['ci'][0], digits, True)}, {_f(r['ci'][1], digits, True)}]" if r["ci"] else "-"
            out.append(f"{r['run']:<{width}}" + "".join(f"{c:>13}" for c in cells) + f"   {ci}")
    return "\n".join(out) + "\n"


_TEX = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_",
        "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\^{}"}  # fmt: skip


def _tex(text: str) -> str:
    return "".join(_TEX.get(c, c) for c in text)


def _format_latex(result: dict[str, Any], digits: int = 4) -> str:
    """A booktabs table: one row per run, one column per measure (the mean); a dagger marks a
    Holm-adjusted randomization-test p-value below ``alpha`` against the first run."""
    names = [m["measure"] for m in result["measures"]]
    lines = [r"\begin{tabular}{l" + "r" * len(names) + "}", r"\toprule",
             "Run & " + " & ".join(_tex(n) for n in names) + r" \\", r"\midrule"]  # fmt: skip
    for i, first in enumerate(result["measures"][0]["runs"]):
        cells = []
        for m in result["measures"]:
            r = m["runs"][i]
            mark = r"$^{\dagger}$" if i and r["p_perm_holm"] < result["alpha"] else ""
            cells.append(f"{r['mean']:.{digits}f}{mark}")
        lines.append(_tex(first["run"]) + " & " + " & ".join(cells) + r" \\")
    lines += [r"\bottomrule", r"\end{tabular}",
              f"% dagger: Holm-adjusted paired randomization test p < {result['alpha']} against "
              f"{_tex(result['baseline'])} ({result['queries']} queries)"]  # fmt: skip
    return "\n".join(lines) + "\n"


#: The most bootstrap resamples (the interval keeps one mean, 8 bytes, per resample).
MAX_BOOTSTRAP = 10**8
#: The most sign flips of the randomization test.
MAX_PERMUTATIONS = 10**9


def _json_safe(value: Any) -> Any:
    """``value`` with every NaN or infinite float as None (JSON has neither; a mean is NaN when a
    measure is 0/0 for a query, as ``iprec_at_recall`` of a query that -J leaves empty)."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _json_safe(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_json_safe(v) for v in value]
    return value


def _count(text: str) -> int:
    value = 0 if text.strip() == "0" else positive_int(text)
    if value > MAX_BOOTSTRAP:
        raise argparse.ArgumentTypeError(f"at most {MAX_BOOTSTRAP} resamples (8 bytes each), got {value}")
    return value


def _permutations(text: str) -> int:
    value = positive_int(text)
    if value > MAX_PERMUTATIONS:
        raise argparse.ArgumentTypeError(f"at most {MAX_PERMUTATIONS} sign flips, got {value}")
    return value


def _seed(text: str) -> int:
    value = converted(text, int, "expected a non-negative integer, got {!r}")
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected a non-negative integer, got {value}")
    return value


def _alpha(text: str) -> float:
    value = converted(text, float, "expected a number in (0, 1), got {!r}")
    if not 0.0 < value < 1.0:
        raise argparse.ArgumentTypeError(f"expected a number in (0, 1), got {value}")
    return value


def _arguments(p: argparse.ArgumentParser) -> None:
    """The arguments of ``trec-compare``."""
    p.add_argument("qrels", help="qrels file: qid iter docno grade")
    p.add_argument("runs", nargs="+", metavar="RUN", help="run files; the first is the baseline")
    p.add_argument("-m", dest="measures", action="append", default=None,
                   help="measure (repeatable; trec_eval or ir_measures names, e.g. AP nDCG@10 P.5 "
                   "RBP(p=0.8); default AP nDCG@10 P@10 RR)")  # fmt: skip
    p.add_argument("--permutations", type=_permutations, default=10000, metavar="N",
                   help="sign flips of the randomization test (default 10000; exact when >= 2^queries)")
    p.add_argument("--bootstrap", type=_count, default=10000, metavar="N",
                   help="bootstrap resamples of the interval of the mean difference (default 10000; 0: none)")
    p.add_argument("--seed", type=_seed, default=0, help="random seed, a non-negative integer (default 0)")
    p.add_argument("--alternative", choices=ALTERNATIVES, default="two-sided",
                   help="every test's alternative for run - baseline, as scipy's (default two-sided; "
                   "greater: the run is better; one-sided, the interval is a bound)")  # fmt: skip
    p.add_argument("--zero-method", choices=ZERO_METHODS, default="wilcox",
                   help="Wilcoxon: zero differences dropped (wilcox, default), ranked then dropped (pratt) "
                   "or split between the signs (zsplit), as scipy.stats.wilcoxon's zero_method")  # fmt: skip
    p.add_argument("--wilcoxon-method", choices=("auto", "exact", "asymptotic", "approx"), default="auto",
                   help="Wilcoxon p-value: exact distribution, normal approximation (asymptotic, alias "
                   "approx) or scipy's choice (auto, default)")  # fmt: skip
    p.add_argument("--correction", action="store_true",
                   help="Wilcoxon: continuity correction of the normal approximation")
    p.add_argument("--alpha", type=_alpha, default=0.05, help="1 - interval level; LaTeX dagger level (0.05)")
    p.add_argument("-l", dest="rel_level", type=long_int(-LONG_MAX - 1), default=1,
                   help="minimum grade of a relevant document")
    p.add_argument("-M", dest="max_docs", type=long_int(0), default=None,
                   help="evaluate only the top M documents")
    p.add_argument("-J", dest="judged_only", action="store_true", help="drop unjudged documents first")
    p.add_argument("-c", dest="complete", action="store_true",
                   help="every query of the qrels, also those no run retrieves (an empty ranking in "
                   "every run; trec_eval -c, ranx make_comparable=True); default: those some run retrieves")
    p.add_argument("--trec-version", type=int, choices=[9, 10], default=9,
                   help="trec_eval rules: 9 (default, trec_eval 9.0.8's, as pytrec_eval and ir_measures) or "
                   "10 (trec_eval 10.0's); see streammetrics trec --help")  # fmt: skip
    p.add_argument("--digits", type=int, choices=range(0, 18), default=4, metavar="0..17",
                   help="decimals printed (default 4)")
    p.add_argument("--json", metavar="FILE", default=None, help="also write the results as JSON")
    p.add_argument("--latex", metavar="FILE", default=None, help="also write a LaTeX (booktabs) table")
    p.add_argument("--quiet", action="store_true",
                   help="no progress line (otherwise shown on stderr, if a terminal, after 2 s)")


add_parser = command("trec-compare", arguments=_arguments, description=doc_paragraph(__doc__, 0),
                     epilog=exit_status("143 terminated (SIGTERM)"),
                     help="compare TREC runs against the first: means, paired t, randomization, Wilcoxon "
                     "and sign tests, bootstrap intervals, Holm correction")


def run(args: argparse.Namespace) -> int:
    """Entry point of ``streammetrics trec-compare``: print the comparison table (and write the
    ``--json`` / ``--latex`` files).

    Parameters
    ----------
    args : argparse.Namespace
        The options parsed by the ``trec-compare`` parser (:func:`add_parser`).

    Returns
    -------
    int
        The exit status, 0 (143 after SIGTERM, temporary files removed).

    Raises
    ------
    InputError
        Exit status 2 for fewer than 2 runs, 1 for an unreadable file or a bad measure.
    """
    if len(args.runs) < 2:
        got = len(args.runs)
        raise InputError(f"trec-compare needs at least 2 runs (a baseline and one to compare), got {got}", 2)
    try:
        with sigterm_raises(), progress_line("streammetrics trec-compare", getattr(args, "quiet", False)):
            result = _compare(args)
    except Terminated:
        print("streammetrics trec-compare: terminated", file=sys.stderr)
        return 143
    sys.stdout.write(_format_table(result, args.digits))
    return 0


def _compare(args: argparse.Namespace) -> dict[str, Any]:
    try:
        pq = per_query_values(args.qrels, args.runs, args.measures or DEFAULT, rel_level=args.rel_level,
                              max_docs=args.max_docs, judged_only=args.judged_only,
                              trec_version=args.trec_version,
                              complete=getattr(args, "complete", False))  # fmt: skip
        result = compare(pq, permutations=args.permutations, bootstrap=args.bootstrap, alpha=args.alpha,
                         seed=args.seed, alternative=getattr(args, "alternative", "two-sided"),
                         zero_method=getattr(args, "zero_method", "wilcox"),
                         wilcoxon_method=getattr(args, "wilcoxon_method", "auto"),
                         correction=getattr(args, "correction", False))  # fmt: skip
        result["trec_version"] = args.trec_version  # the rules used (in the table's first line and the JSON)
        as_json = _json_safe(result)
        for path, text in ((args.json, lambda: json.dumps(as_json, indent=2, allow_nan=False) + "\n"),
                           (args.latex, lambda: _format_latex(result, args.digits))):  # fmt: skip
            if path is not None:
                with open(path, "w", encoding="utf-8") as fh:
                    fh.write(text())
    except (OSError, ValueError) as exc:
        raise InputError(str(exc), 1) from None
    except MemoryError:
        raise InputError("out of memory (try a smaller --bootstrap or --permutations)", 1) from None
    return result
