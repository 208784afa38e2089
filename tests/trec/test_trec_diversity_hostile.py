"""Hostile subtopic qrels and runs for the diversity measures: each a one-line error naming the
file, the line and the value (``streammetrics trec`` exits 2, no traceback); what is valid reads."""

from __future__ import annotations

from pathlib import Path

import pytest

from streammetrics.cli.trec import main
from streammetrics.trec import TrecFormatError
from streammetrics.trec.subtopics import read_subtopic_qrels

_RUN = "1 Q0 A 1 3.0 r\n1 Q0 B 2 2.0 r\n"


@pytest.mark.parametrize(
    ("qrels", "line", "fragment"),
    [
        (b"1 a A 1\n1 a B\n", 2, "expected 4 fields 'topic subtopic docno judgment', got 3"),
        (b"1 a A 1 9\n", 1, "expected 4 fields"),
        (b"1 a A 1\n\n1 b A x\n", 3, "judgment 'x' is not a number"),
        (b"1 a A 1.5\n", 1, "judgment '1.5' is not an integer"),
        (b"1 a A nan\n", 1, "nan"),
        (b"1 a A inf\n", 1, "inf"),
        (b"1 a A 1e30\n", 1, "1e30"),
        (b"1 a A 1\n1 b A 0\n1 a A 2\n", 3, "duplicate judgment of document 'A' for subtopic 'a' of query '1'"),
        (b"1 a A 1\n1 a \xff 1\n", 2, "not UTF-8"),
        (b"1 a A 1\n1 a B\x00 1\n", 2, "NUL"),
    ],
)
def test_bad_qrels_lines_name_file_line_and_value(
    tmp_path: Path, qrels: bytes, line: int, fragment: str, capsys: pytest.CaptureFixture[str]
) -> None:
    qp, rp = tmp_path / "qrels", tmp_path / "run"
    qp.write_bytes(qrels)
    rp.write_text(_RUN)
    with pytest.raises(TrecFormatError) as err:
        read_subtopic_qrels(str(qp))
    assert f"{qp}:{line}:" in str(err.value) and fragment in str(err.value)
    assert main(["trec", str(qp), str(rp), "-m", "alpha_nDCG@5"]) == 2
    out = capsys.readouterr()
    assert out.out == "" and out.err.count("\n") == 1 and f"{qp}:{line}:" in out.err
    assert "Traceback" not in out.err


def test_comments_blank_lines_crlf_and_any_order_read(tmp_path: Path) -> None:
    qp = tmp_path / "qrels"
    qp.write_bytes(b"# diversity\r\n2 b X 0\r\n\r\n1 b A 1\r\n1 a A 3\r\n2 a X -1\r\n")
    q = read_subtopic_qrels(str(qp))
    assert q.subtopics == ["b", "a"]
    assert q.queries == {"2": {"X": {0: 0, 1: -1}}, "1": {"A": {0: 1, 1: 3}}}
    assert read_subtopic_qrels(str(qp), chunk_lines=1).queries == q.queries  # chunk boundaries


@pytest.mark.parametrize(
    ("run", "fragment"),
    [
        ("1 Q0 A 1 3.0 r\n1 Q0 A 2 2.0 r\n", ":2: duplicate document 'A' for query '1'"),
        ("1 Q0 A 1 nan r\n", ":1: score is NaN"),
        ("1 Q0 A 1 x r\n", ":1:"),
        ("1 Q0 A 1\n", ":1:"),
    ],
)
def test_bad_run_lines_are_one_line_errors(
    tmp_path: Path, run: str, fragment: str, capsys: pytest.CaptureFixture[str]
) -> None:
    qp, rp = tmp_path / "qrels", tmp_path / "run"
    qp.write_text("1 a A 1\n")
    rp.write_text(run)
    assert main(["trec", str(qp), str(rp), "-m", "NRBP"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"{rp}{fragment}" in err and "Traceback" not in err


@pytest.mark.parametrize(
    ("extra", "fragment"),
    [
        (["-m", "alpha_nDCG@5", "-m", "P@5"], "measure 'P@5': the diversity measures read subtopic qrels"),
        (["-m", "P@5", "-m", "NRBP"], "measure 'P@5'"),
        (["-m", "alpha_nDCG(alpha=2)@5"], "alpha must be in [0, 1]"),
        (["-m", "ERR_IA"], "needs a cutoff"),
        (["-m", "NRBP", "-R", "qrels_jg"], "-R does not apply"),
        (["-m", "NRBP", "-N", "5"], "-N does not apply"),
    ],
)
def test_bad_options_are_one_line_errors(
    tmp_path: Path, extra: list[str], fragment: str, capsys: pytest.CaptureFixture[str]
) -> None:
    qp, rp = tmp_path / "qrels", tmp_path / "run"
    qp.write_text("1 a A 1\n")
    rp.write_text(_RUN)
    assert main(["trec", str(qp), str(rp), *extra]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and fragment in err and "Traceback" not in err


def test_no_query_in_both_and_empty_qrels(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    qp, rp = tmp_path / "qrels", tmp_path / "run"
    rp.write_text(_RUN)
    for text in ("2 a A 1\n", "# nothing\n", ""):
        qp.write_text(text)
        assert main(["trec", str(qp), str(rp), "-m", "nNRBP"]) == 2
        assert "no query of the run" in capsys.readouterr().err
    qp.write_text("2 a A 1\n")  # -c: the qrels' query, missing from the run, scores 0
    assert main(["trec", str(qp), str(rp), "-c", "-m", "nNRBP"]) == 0
    assert capsys.readouterr().out.split() == ["nNRBP", "all", "0.0000"]


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"rel_level": 1.5}, "rel_level: expected an integer"),
        ({"rel_level": True}, "rel_level: expected an integer"),
        ({"max_docs": -1}, "max_docs: expected a non-negative integer"),
        ({"digits": 18}, "digits: expected an integer from 0 to 17"),
    ],
)
def test_bad_library_options(tmp_path: Path, options: dict[str, object], message: str) -> None:
    from streammetrics.trec.diversity_files import evaluate_diversity_files

    qp, rp = tmp_path / "qrels", tmp_path / "run"
    qp.write_text("1 a A 1\n")
    rp.write_text(_RUN)
    with pytest.raises(ValueError, match=message):
        evaluate_diversity_files(str(qp), str(rp), ["NRBP"], **options)  # type: ignore[arg-type]


@pytest.mark.parametrize("name", ["alpha_nDCG@20", "NRBP", "MAP_IA", "nERR_IA(rel=2)@10"])
def test_trec_measures_and_ordinary_qrels_point_to_the_diversity_path(name: str) -> None:
    """A diversity name where ordinary qrels are read (TrecMeasures, evaluate_files,
    trec-compare) is a one-line error that says where it is computed."""
    from streammetrics.trec import TrecMeasures

    with pytest.raises(ValueError, match="a diversity measure .* sm.trec.DiversityMeasures"):
        TrecMeasures(name)


def test_a_deep_cutoff_costs_memory_of_the_input_not_of_the_cutoff() -> None:
    """alpha-DCG's normaliser is summed once per (cutoffs, alpha) without a list of the cutoff's
    length, and the run's sums stop at its last document: a one-document query at @10**6 keeps
    kilobytes (it built two lists of the cutoff's length before); deeper cutoffs are refused."""
    import tracemalloc

    from streammetrics.trec.diversity import diversity_values

    names = ["alpha_nDCG@1000000", "ERR_IA@999999", "nERR_IA@1000000", "alpha_DCG(alpha=0.3)@1000000"]
    tracemalloc.start()
    try:
        got = diversity_values(["a"], {"a": {"x": 1}}, names)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 1_000_000, peak
    deep = diversity_values(["a", "b"], {"a": {"x": 1}, "b": {"y": 1}}, ["alpha_nDCG@2", "alpha_nDCG@1000000"])
    assert got[0] == 1.0 and got[2] == 1.0 and 0 < got[1] < 1 and got[3] > 0
    assert deep[0] == deep[1] == 1.0  # the ideal ranking retrieved: 1 at any depth
    with pytest.raises(ValueError, match=r"cutoff must be in \[1, 1000000\], got 1000001"):
        diversity_values(["a"], {"a": {"x": 1}}, ["alpha_nDCG@1000001"])
