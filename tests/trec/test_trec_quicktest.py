"""trec_eval's own ``make quicktest``, case by case, through ``streammetrics trec``.

The files are trec_eval's ``test/`` folder (``shared/data/trec_eval_test`` beside the repository;
the tests skip when it is absent -- the files are never copied into the repository). Each case runs
the command in-process and compares every printed line (name, query, value as printed) with
trec_eval's expected output: trec_eval 10.0's files with ``--trec-version 10``, and the ``v9/``
files (trec_eval 9.x's recall cutoffs) with ``--trec-version 9``. A case that is not implemented yet
is ``xfail(strict=True)``, so it turns red when it starts passing.
"""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest

from streammetrics.cli.trec import main

_HERE = Path(__file__).resolve()
_CANDIDATES = [
    _HERE.parents[2] / "shared" / "data" / "trec_eval_test",  # <repo>/../shared (main checkout)
    _HERE.parents[3] / "shared" / "data" / "trec_eval_test",  # a worktree one level deeper
    Path("/work/shared/data/trec_eval_test"),
]
DATA = next((p for p in _CANDIDATES if (p / "QUICKTEST.md").is_file()), None)
pytestmark = pytest.mark.skipif(DATA is None, reason="trec_eval's test files (shared/data/trec_eval_test) absent")


# (arguments before QRELS RUN as in QUICKTEST.md, expected output file, reason if not implemented yet)
CASES = [
    ("qrels.test results.test", "out.test", None),
    ("qrels.test.with-comments results.test", "out.test", None),
    ("qrels.comment.test results.comment.test", "out.comment.test", None),
    ("-m all_trec qrels.test results.test", "out.test.a", None),
    ("-m all_trec -q qrels.test results.test", "out.test.aq", None),
    ("-m all_trec -q -c qrels.test results.trunc", "out.test.aqc", None),
    ("-m all_trec -q -c -M100 qrels.test results.trunc", "out.test.aqcM", None),
    ("-m all_trec -mrelstring.20 -q -l2 qrels.rel_level results.test", "out.test.aql", None),
    ("-m all_prefs -q -R prefs prefs.test prefs.results.test", "out.test.prefs", None),
    ("-m all_prefs -q -R prefs prefs.comment.test prefs.results.test", "out.test.prefs", None),
    ("-m all_prefs -q -R qrels_prefs qrels.test results.test", "out.test.qrels_prefs", None),
    ("-m qrels_jg -q -R qrels_jg qrels.123 results.test", "out.test.qrels_jg", None),
    ("-m qrels_jg -q -R qrels_jg qrels.comments.123 results.test", "out.test.qrels_jg", None),
    (
        "-q -miprec_at_recall..10,.20,.25,.75,.50 -m P.5,7,3 -m recall.20,2000 -m Rprec_mult.5.0,0.2,0.35 "
        "-mutility.2,-1,0,0 -m 11pt_avg..25,.5,.75 -mndcg.1=3,2=9,4=4.5 -mndcg_cut.10,20,23.4 "
        "-msuccess.2,5,20 qrels.test results.test",
        "out.test.meas_params",
        None,
    ),
    ("-q -m all_trec -Z zscores_file qrels.test results.test", "out.test.aqZ", None),
]


def _argv(args: str) -> list[str]:
    assert DATA is not None
    words = shlex.split(args)
    return ["trec", *(str(DATA / w) if (DATA / w).is_file() else w for w in words)]


def _compare(capsys: pytest.CaptureFixture[str], argv: list[str], expected: Path) -> tuple[int, int, list[str]]:
    """Run the command; return (matching lines, expected lines, first differences)."""
    code = main(argv)
    captured = capsys.readouterr()
    assert code == 0, captured.err
    got = captured.out.splitlines()
    want = expected.read_text().splitlines()
    same = sum(g == w for g, w in zip(got, want, strict=False))
    diffs = [f"got {g!r} want {w!r}" for g, w in zip(got, want, strict=False) if g != w][:5]
    if len(got) != len(want):
        diffs.append(f"{len(got)} lines printed, {len(want)} expected")
    return same, len(want), diffs


def _params(version: int) -> list[object]:
    out: list[object] = []
    for args, expected, reason in CASES:
        if version == 9 and (DATA is None or not (DATA / "v9" / expected).is_file()):
            continue  # v9/ holds the cases whose 9.x output differs; the others are version 10's
        marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
        out.append(pytest.param(args, expected, marks=marks, id=f"{expected}:{args.split()[-2]}"))
    return out


@pytest.mark.parametrize("args,expected", _params(10))
def test_quicktest_trec_eval_10(capsys, args, expected):
    assert DATA is not None
    same, total, diffs = _compare(capsys, [*_argv(args), "--trec-version", "10"], DATA / expected)
    assert same == total and not diffs, f"{same}/{total} lines match; " + "; ".join(diffs)


@pytest.mark.parametrize("args,expected", _params(9))
def test_quicktest_trec_eval_9(capsys, args, expected):
    """The v9/ outputs: 9.x's ``(long)(c*R + 0.9)`` rounded once (as a fused multiply-add)."""
    assert DATA is not None
    argv = [*_argv(args), "--trec-version", "9", "--fused-cutoffs"]
    same, total, diffs = _compare(capsys, argv, DATA / "v9" / expected)
    assert same == total and not diffs, f"{same}/{total} lines match; " + "; ".join(diffs)


@pytest.mark.parametrize("args,expected", _params(9))
def test_quicktest_9_without_fma_differs_only_in_recall_cutoffs(capsys, args, expected):
    """Without --fused-cutoffs (x86-64 builds, pytrec_eval), c*R + 0.9 is rounded twice: only
    iprec_at_recall / 11pt_avg lines can differ from the v9/ files (0.3*77 + 0.9 < 24 there)."""
    assert DATA is not None
    code = main([*_argv(args), "--trec-version", "9"])
    got = capsys.readouterr().out.splitlines()
    want = (DATA / "v9" / expected).read_text().splitlines()
    assert code == 0 and len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        if g != w:
            assert g.split("\t")[:2] == w.split("\t")[:2]
            assert g.lstrip("Z").startswith(("iprec_at_recall_", "11pt_avg")), (g, w)
