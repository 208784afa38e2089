"""Hostile TREC files and option values (issue #27): every reader of ``streammetrics trec`` and
``trec-compare`` -- qrels (block and text readers), qrels_jg, prefs, runs (in blocks, per query,
through the external sort), ``-Z`` files -- reports invalid UTF-8, NUL bytes, grades out of range,
missing columns and non-numbers as one line naming the file and the line, never a traceback or an
"unexpected" error; CRLF files read as LF files; every numeric option refuses huge, negative,
float and NaN values in one line naming the option."""

from __future__ import annotations

import io
import re

import pytest

from streammetrics.__main__ import main

QRELS = ["q1 0 d1 1", "q1 0 d2 0", "q1 0 d3 2", "q2 0 d4 1", "q2 0 d5 0"]
RUN = ["q1 Q0 d1 1 2.5 sys", "q1 Q0 d2 2 1.5 sys", "q2 Q0 d4 1 0.5 sys", "q2 Q0 d9 2 0.2 sys",
       "q1 Q0 d7 3 0.1 sys"]  # fmt: skip  (q1 reappears: read through the external sort)
RUN_GROUPED = [RUN[0], RUN[1], RUN[4], RUN[2], RUN[3]]
JG = ["q1 u1 d1 1", "q1 u1 d2 0", "q1 u2 d3 2", "q2 u1 d4 1", "q2 u1 d5 0"]
PREFS = ["q1 u1 a d1 2", "q1 u1 a d2 1", "q1 u1 a d3 0", "q2 u1 a d4 1", "q2 u1 a d5 0"]
ZSCORES = ["q1 map 0.3 0.1", "q2 map 0.2 0.1", "q1 P_5 0.3 0.1", "q2 P_5 0.2 0.1", "q1 ndcg 0.1 0.2"]

# (name, the line's bytes given the well-formed line, the message's words); None: no error
BAD = [
    ("utf8", lambda line: line[:1] + b"\xe9" + line[1:], "not UTF-8"),
    ("utf8 cut", lambda line: line[:1] + b"\xe2\x82" + line[1:], "not UTF-8"),
    ("nul", lambda line: line[:1] + b"\x00" + line[1:], "NUL byte"),
    ("missing column", lambda line: line.rsplit(b" ", 1)[0], "fields"),
]


def _lines(kind):
    return {"qrels": QRELS, "run": RUN, "run grouped": RUN_GROUPED, "jg": JG, "prefs": PREFS, "z": ZSCORES}[kind]


def _command(kind, paths, extra=()):
    q, r = paths["qrels"], paths["run"]
    if kind == "jg":
        return ["trec", paths["jg"], r, "-R", "qrels_jg", "-m", "map_avgjg", *extra]
    if kind == "prefs":
        return ["trec", paths["prefs"], r, "-R", "prefs", "-m", "prefs_num_prefs_poss", *extra]
    if kind == "z":
        return ["trec", q, r, "-Z", paths["z"], "-m", "map", *extra]
    return ["trec", q, paths["run grouped"] if kind == "run grouped" else r, "-m", "map", *extra]


def _files(tmp_path, bad_kind=None, line=None, make=None, newline=b"\n"):
    paths = {}
    for kind in ("qrels", "run", "run grouped", "jg", "prefs", "z"):
        rows = [s.encode() for s in _lines(kind)]
        if kind == bad_kind:
            rows[line - 1] = make(rows[line - 1])
        path = tmp_path / kind.replace(" ", "_")
        path.write_bytes(newline.join(rows) + newline)
        paths[kind] = str(path)
    return paths


def _run(argv, capsys):
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("kind", ["qrels", "run", "run grouped", "jg", "prefs", "z"])
@pytest.mark.parametrize("line", [1, 4])
@pytest.mark.parametrize("bad", BAD, ids=[b[0] for b in BAD])
@pytest.mark.parametrize("extra", [(), ("-J",), ("-q", "--memory-lines", "1")], ids=["blocks", "J", "spill"])
def test_a_bad_line_is_named(tmp_path, capsys, kind, line, bad, extra):
    name, make, words = bad
    paths = _files(tmp_path, kind, line, make)
    code, _, err = _run(_command(kind, paths, extra), capsys)
    assert code != 0, err
    assert err.count("\n") == 1 and "unexpected" not in err and "Traceback" not in err, err
    assert f"{paths[kind]}:{line}: " in err and words in err, err


@pytest.mark.parametrize("kind", ["qrels", "run", "run grouped", "jg", "prefs", "z"])
@pytest.mark.parametrize("extra", [(), ("-J",), ("-q", "--memory-lines", "1")], ids=["blocks", "J", "spill"])
def test_crlf_reads_as_lf(tmp_path, capsys, kind, extra):
    outs = []
    for newline in (b"\n", b"\r\n"):
        paths = _files(tmp_path, newline=newline)
        code, out, err = _run(_command(kind, paths, extra), capsys)
        assert code == 0, err
        outs.append(out)
    assert outs[0] == outs[1] and outs[0]


NUMBERS = [
    ("qrels", "grade", "99999999999999999999", "out of range"),
    ("qrels", "grade", "-1e19", "out of range"),
    ("qrels", "grade", "inf", "not finite"),
    ("qrels", "grade", "nan", "not finite"),
    ("qrels", "grade", "high", "not a number"),
    ("jg", "grade", "99999999999999999999", "out of range"),
    ("jg", "grade", "nan", "not a finite number"),
    ("run", "score", "nan", "NaN"),
    ("run", "score", "high", "not a number"),
    ("run grouped", "score", "nan", "NaN"),
    ("z", "mean", "x", "must be finite numbers"),
    ("z", "mean", "nan", "must be finite numbers"),
    ("z", "mean", "1e400", "must be finite numbers"),
]


@pytest.mark.parametrize("kind, what, value, words", NUMBERS)
@pytest.mark.parametrize("line", [1, 4])
@pytest.mark.parametrize("extra", [(), ("-J",), ("-q", "--memory-lines", "1")], ids=["blocks", "J", "spill"])
def test_a_bad_number_is_named(tmp_path, capsys, kind, what, value, words, line, extra):
    column = {"grade": 3, "score": 4, "mean": 2}[what]

    def make(row: bytes) -> bytes:
        fields = row.split(b" ")
        fields[column] = value.encode()
        return b" ".join(fields)

    paths = _files(tmp_path, kind, line, make)
    code, _, err = _run(_command(kind, paths, extra), capsys)
    assert code != 0 and err.count("\n") == 1 and "unexpected" not in err, err
    assert f"{paths[kind]}:{line}: " in err and words in err, err


@pytest.mark.parametrize("command", ["trec", "trec-compare"])
def test_huge_grades_in_trec_compare_and_trec(tmp_path, capsys, command):
    paths = _files(tmp_path, "qrels", 2, lambda row: row.replace(b" 0", b" 99999999999999999999"))
    argv = ["trec", paths["qrels"], paths["run"]] if command == "trec" else \
        ["trec-compare", paths["qrels"], paths["run"], paths["run grouped"]]  # fmt: skip
    code, _, err = _run(argv, capsys)
    assert code != 0 and f"{paths['qrels']}:2: grade '99999999999999999999' is out of range" in err, err


@pytest.mark.parametrize("kind", ["qrels", "run", "jg", "prefs", "z"])
@pytest.mark.parametrize("content", [b"", b"# only a comment\n\n"], ids=["empty", "comments"])
def test_an_empty_file_is_one_line(tmp_path, capsys, kind, content):
    paths = _files(tmp_path)
    with open(paths[kind], "wb") as fh:
        fh.write(content)
    code, _, err = _run(_command(kind, paths), capsys)
    if kind == "z":  # no z-scores: every value is trec_eval's missing value
        assert code == 0, err
        return
    assert code != 0 and err.count("\n") == 1 and "unexpected" not in err and "Traceback" not in err, err


TREC_OPTIONS = [("-l", "long"), ("-M", "count"), ("-N", "count"), ("--digits", "digits"),
                ("--memory-lines", "memory"), ("--trec-version", "version")]  # fmt: skip
COMPARE_OPTIONS = [("-l", "long"), ("-M", "count"), ("--digits", "digits"), ("--bootstrap", "count"),
                   ("--permutations", "positive"), ("--seed", "count"), ("--alpha", "alpha"),
                   ("--trec-version", "version")]  # fmt: skip
VALUES = ["99999999999999999999", "-99999999999999999999", "-1", "0", "1.5", "nan", "inf", "1e12", "x"]


def _accepted(kind: str, value: str) -> bool:
    """What an option takes: trec_eval's ``long`` (-l), counts >= 0, positive ints, digits 0-17, ..."""
    if kind == "alpha":
        return False  # none of VALUES is in (0, 1)
    try:
        v = int(value)
    except ValueError:
        return False
    return {"long": -(2**63) <= v < 2**63, "count": 0 <= v < 2**63, "positive": 1 <= v < 2**63,
            "memory": v >= 1, "digits": 0 <= v <= 17, "version": v in (9, 10)}[kind]  # fmt: skip


@pytest.mark.parametrize("option, kind", TREC_OPTIONS)
@pytest.mark.parametrize("value", VALUES)
def test_trec_numeric_options(tmp_path, capsys, option, kind, value):
    paths = _files(tmp_path)
    code, _, err = _run(["trec", paths["qrels"], paths["run"], "-m", "map", "-m", "utility.1,-1,0,0",
                         f"{option}={value}"], capsys)  # fmt: skip
    if _accepted(kind, value):  # --memory-lines: any positive count (more lines than the run: no sort)
        assert code == 0, err
    else:
        assert code == 2 and err.count("\n") == 1 and f"argument {option}" in err, err


@pytest.mark.parametrize("option, kind", COMPARE_OPTIONS)
@pytest.mark.parametrize("value", VALUES)
def test_trec_compare_numeric_options(tmp_path, capsys, option, kind, value):
    paths = _files(tmp_path)
    argv = ["trec-compare", paths["qrels"], paths["run"], paths["run grouped"], "-m", "map", f"{option}={value}"]
    limits = {"--bootstrap": 10**8, "--permutations": 10**9}
    accepted = _accepted(kind, value) and int(value) <= limits.get(option, 2**63) and option != "--seed" or (
        option == "--seed" and value.lstrip("-").isdigit() and int(value) >= 0)
    if option in limits and accepted and int(value) > 10**5:
        return  # accepted; too long a test
    code, _, err = _run(argv, capsys)
    if accepted:
        assert code == 0, err
    else:
        assert code == 2 and err.count("\n") == 1 and f"argument {option}" in err, err
        assert "--batch-size" not in err and "--max-bytes" not in err


@pytest.mark.parametrize("measure, words", [
    ("P.99999999999999999999", "at most 2**63 - 1"), ("P.5,99999999999999999999", "at most 2**63 - 1"),
    ("P@99999999999999999999", "at most 2**63 - 1"), ("nDCG@99999999999999999999", "at most 2**63 - 1"),
    ("map_cut.99999999999999999999", "at most 2**63 - 1"), ("success.-1", "positive"),
    ("iprec_at_recall.1e400", "finite"), ("utility.1e400,1,0,0", "finite"), ("ndcg.1=1e999", "finite"),
    ("11pt_avg..25,1e400", "finite"), ("RBP(p=1e400)", "(0, 1)"), ("SetF(beta=-1)", ">= 0"),
    ("SetF(beta=1e400)", "finite"), ("set_F.-1", ">= 0"),  # F = (b+1)PR/(bP+R): bP+R can be 0
])  # fmt: skip
@pytest.mark.parametrize("extra", [(), ("-J",)], ids=["blocks", "J"])
def test_huge_measure_parameters(tmp_path, capsys, measure, words, extra):
    paths = _files(tmp_path)
    code, _, err = _run(["trec", paths["qrels"], paths["run"], "-m", measure, "-m", "bpref", *extra], capsys)
    assert code == 2 and err.count("\n") == 1 and words in err and "unexpected" not in err, err
    code, _, err = _run(["trec-compare", paths["qrels"], paths["run"], paths["run grouped"], "-m", measure], capsys)
    assert code != 0 and err.count("\n") == 1 and words in err and "unexpected" not in err, err


def test_trec_compare_json_writes_nan_as_null(tmp_path, capsys):
    import json

    paths = _files(tmp_path)
    empty_after_j = tmp_path / "unjudged"
    empty_after_j.write_text("q1 Q0 zz 1 1 a\nq2 Q0 d4 1 1 a\n")  # -J leaves q1 without documents
    out = tmp_path / "out.json"
    code, table, err = _run(["trec-compare", paths["qrels"], str(empty_after_j), paths["run"], "-J",
                             "-m", "iprec_at_recall.0", "--json", str(out)], capsys)  # fmt: skip
    assert code == 0, err
    runs = json.loads(out.read_text())["measures"][0]["runs"]
    assert runs[0]["mean"] is None and "nan" in table  # the table prints it, the JSON says null


@pytest.mark.parametrize("kwargs, words", [
    ({"max_docs": -1}, "max_docs: must be an int in [0, 2**63 - 1] or None, got -1"),
    ({"max_docs": 2**70}, "max_docs: must be an int"), ({"max_docs": 1.5}, "max_docs: must be an int"),
    ({"num_docs": -1}, "num_docs: must be an int in [0, 2**63 - 1], got -1"),
    ({"rel_level": float("nan")}, "rel_level: must be a finite real number, got nan"),
    ({"digits": -1}, "digits: must be an int in [0, 17], got -1"), ({"digits": 18}, "digits: must be an int"),
])  # fmt: skip
def test_the_library_checks_its_options(tmp_path, kwargs, words):
    """``evaluate_files`` / ``per_query_values`` name a bad option (max_docs=-1 silently dropped the
    last document, a float max_docs was a TypeError, digits=-1 a format error)."""
    from streammetrics.trec import evaluate_files, per_query_values

    paths = _files(tmp_path)
    with pytest.raises(ValueError) as info:
        evaluate_files(paths["qrels"], paths["run"], ["map"], out=io.StringIO(), **kwargs)
    assert words in str(info.value)
    if "num_docs" not in kwargs and "digits" not in kwargs:
        with pytest.raises(ValueError, match=re.escape(words)):
            per_query_values(paths["qrels"], [paths["run"]], ["map"], **kwargs)
