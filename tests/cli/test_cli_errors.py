"""The command line's error corpus: every bad invocation or bad file is exit status 2 (usage) or 1
(data), exactly one line on stderr naming the problem, and never a traceback.

Most cases run in-process (``main(argv)``, fast); a few through a real ``python -m streammetrics``
process: the crash containment (deep JSON nesting), the broken pipe, ``--version``, and one-line
argparse errors as a user sees them.
"""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")
pytest.importorskip("rich")

from streammetrics.__main__ import main  # noqa: E402


@pytest.fixture(scope="module")
def d(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A directory of good and bad input files."""
    root = tmp_path_factory.mktemp("corpus")

    def text(name: str, content: str) -> None:
        (root / name).write_text(content)

    def raw(name: str, content: bytes) -> None:
        (root / name).write_bytes(content)

    text("ok.csv", "y,p\n1,0.9\n0,0.2\n1,0.6\n0,0.7\n")
    raw("bad_header.csv", b"y,p\xff\xfe\n1,0.5\n0,0.2\n")
    raw("bad_label_utf8.csv", b"y,p\n\xff\xfe,0.5\nb,0.2\n")
    raw("bad_score_utf8.csv", b"y,p\n1,0.5\n1,\xff\n")
    raw("bad_label_utf8.jsonl", b'{"y": "\xff", "p": 0.5}\n{"y": "b", "p": 0.2}\n')
    text("big_label.csv", "y,p\n0,0.2\n99999999999999999999999,0.9\n")
    text("big_label.jsonl", '{"y": 0, "p": 0.2}\n{"y": 99999999999999999999999, "p": 0.9}\n')
    text("cancer.csv", "dx,p_cancer\ncancer,0.9\nhealthy,0.2\ncancer,0.6\nhealthy,0.7\n")
    text("three.csv", "dx,p\na,0.1\nb,0.3\nc,0.5\n")
    text("text.csv", "dx,score\nyes,0.1\nno,0.3\n")
    text("nan.csv", "y,p\n1,0.9\n0,nan\n")
    text("word.csv", "y,p\n1,0.9\n0,abc\n")
    text("fields.csv", "y,p\n1,0.9\n0,0.2,7\n")
    text("dup.csv", "y,p,p\n1,0.5,0.3\n0,0.2,0.1\n")
    text("label2.csv", "y,p\n1,0.9\n2,0.2\n")
    text("float_label.csv", "y,p\n1,0.9\n0.5,0.2\n")
    text("neg_weight.csv", "y,p,w\n1,0.1,-1\n0,0.3,1\n")
    text("empty.csv", "")
    text("header_only.csv", "y,p\n")
    text("numbers.csv", "y,p_a\n1,0.1\n0,0.3\n")
    text("letters.csv", "y,p_a\na,0.1\nb,0.3\n")
    text("minus_one.csv", "y,p\n-1,0.2\n1,0.8\n2,0.5\n")
    raw("corrupt.csv.gz", b"\x1f\x8b\x08\x00garbage-garbage")
    raw("not.parquet", b"this is not parquet at all")
    raw("data.xlsx", b"PK")
    good = pa.table({"y": [1, 0, 1], "p": [0.9, 0.1, 0.5]})
    pq.write_table(good, str(root / "t.parquet"))
    raw("truncated.parquet", (root / "t.parquet").read_bytes()[:100])
    pq.write_table(pa.table({"y": [1, 0], "probs": [None, [0.1, 0.9]]}), str(root / "null_list.parquet"))
    pq.write_table(pa.table({"y": [1, 0], "probs": [[0.1, 0.9], [0.2, 0.3, 0.5]]}), str(root / "ragged.parquet"))
    pq.write_table(pa.table({"y": ["a", "b"], "probs": [[0.1, 0.9], [0.8, 0.2]]}), str(root / "text_list.parquet"))
    pq.write_table(pa.table({"y": [{"a": 1}] * 2, "p": [0.2, 0.3]}), str(root / "struct_label.parquet"))
    pq.write_table(pa.table({"y": [1, 0], "p": ["0.2", "x"]}), str(root / "text_score.parquet"))
    text("deep.jsonl", '{"y": 1, "p": 0.5, "x": ' + "[" * 30000 + "]" * 30000 + "}\n")
    text("deep_obj.jsonl.gz", "")  # replaced below by a gzip file
    raw("deep_obj.jsonl.gz", gzip.compress(('{"y": 1, "p": 0.5}\n' * 10 + '{"y": 1, "x": '
                                            + '{"a": ' * 25000 + "1" + "}" * 25000 + "}\n").encode()))
    text("invalid.jsonl", '{"y": 1, "p": 0.5}\n{"y": 1, "p": \n')
    text("array_row.jsonl", "[1, 2]\n")
    os.makedirs(root / "empty_dir")
    os.makedirs(root / "plots_blocked" / "roc.png")
    return str(root)


OK = ["{d}/ok.csv", "--label", "y", "--score", "p"]

#: (id, argv after ``evaluate`` with ``{d}`` the corpus directory, exit status, text of the message)
CASES = [
    # options
    ("threshold-nan", [*OK, "--threshold", "nan"], 2, "--threshold: must be a finite number"),
    ("threshold-inf", [*OK, "--threshold", "inf"], 2, "--threshold: must be a finite number"),
    ("threshold-word", [*OK, "--threshold", "high"], 2, "--threshold: not a number"),
    ("max-bytes-1", [*OK, "--max-bytes", "1"], 2, "--max-bytes: 1 is too small"),
    ("max-bytes-16Q", [*OK, "--max-bytes", "16Q"], 2, "not a size: '16Q'"),
    ("max-bytes-0", [*OK, "--max-bytes", "0"], 2, "size must be at least 1 byte"),
    ("max-bytes-huge", [*OK, "--max-bytes", "9" * 40 + "T"], 2, "larger than the limit"),
    ("metrics-commas", [*OK, "--metrics", ",,,"], 2, "--metrics: no names in ',,,'"),
    ("metrics-unknown", [*OK, "--metrics", "auroc,bogus"], 2, "unknown bogus"),
    ("metrics-repeated", [*OK, "--metrics", "f1,f1"], 2, "'f1' is repeated"),
    ("metrics-wrong-task", [*OK, "--metrics", "hamming_loss"], 2, "not defined for the binary task"),
    ("batch-size-huge", [*OK, "--batch-size", "99999999999999999999"], 2, "--batch-size: '99999999999999999999' is too large"),
    ("batch-size-0", [*OK, "--batch-size", "0"], 2, "--batch-size: must be at least 1"),
    ("batch-size-float", [*OK, "--batch-size", "1e3"], 2, "--batch-size: not a whole number"),
    ("classes-empty-name", [*OK, "--classes", "a,,b"], 2, "an empty name"),
    ("classes-count", [*OK, "--classes", "a,b,c"], 2, "--classes: 3 names for the binary task"),
    ("task-choice", [*OK, "--task", "ranking"], 2, "invalid choice: 'ranking'"),
    ("task-regression-with-label", [*OK, "--task", "regression"], 2,
     "--label, --score: classification options; --task regression selects regression"),
    ("unknown-option", [*OK, "--bogus"], 2, "unrecognized arguments: --bogus"),
    ("no-score", ["{d}/ok.csv", "--label", "y"], 2, "--label and --score are required"),
    ("plot-proc", [*OK, "--plot", "/proc/streammetrics-plots"], 2, "--plot: cannot create"),
    ("plot-under-file", [*OK, "--plot", "{d}/ok.csv/plots"], 2, "--plot: cannot create"),
    ("plot-target-dir", [*OK, "--plot", "{d}/plots_blocked"], 2, "roc.png: it is a directory"),
    ("json-no-dir", [*OK, "--json", "{d}/nowhere/r.json"], 2, "--json: cannot write"),
    ("json-a-dir", [*OK, "--json", "{d}/empty_dir"], 2, "it is a directory"),
    ("json-empty", [*OK, "--json", ""], 2, "--json: an empty path"),
    ("plot-empty", [*OK, "--plot", " "], 2, "--plot: an empty path"),
    ("file-empty-name", ["", "--label", "y", "--score", "p"], 2, "'': an empty file name"),
    ("multilabel-one-label", [*OK, "--task", "multilabel"], 2, "one label is --task binary"),
    ("missing-file", ["{d}/nope.csv", "--label", "y", "--score", "p"], 2, "nope.csv: no such file"),
    ("missing-column", ["{d}/ok.csv", "--label", "y", "--score", "prob"], 2, "no column 'prob'"),
    ("unknown-format", ["{d}/data.xlsx", "--label", "y", "--score", "p"], 2, "unknown format"),
    ("stdin", ["-", "--label", "y", "--score", "p"], 2, "standard input is not supported"),
    ("empty-dir", ["{d}/empty_dir", "--label", "y", "--score", "p"], 2, "holds no CSV"),
    ("glob-nothing", ["{d}/*.nothing", "--label", "y", "--score", "p"], 2, "no file matches"),
    # the positive class is never guessed
    ("text-labels-no-pos", ["{d}/text.csv", "--label", "dx", "--score", "score"], 2,
     "the labels are text ('no', 'yes') and the score column 'score' names none of them"),
    ("pos-label-unknown", ["{d}/cancer.csv", "--label", "dx", "--score", "p_cancer", "--pos-label", "sick"], 2,
     "--pos-label 'sick' is not one of the labels of column 'dx': 'cancer', 'healthy'"),
    ("pos-label-disagrees", ["{d}/cancer.csv", "--label", "dx", "--score", "p_cancer", "--pos-label", "cancer",
                             "--classes", "cancer,healthy"], 2, "disagrees with --classes"),
    ("pos-label-multiclass", ["{d}/t.parquet", "--label", "y", "--score", "p", "--score", "p",
                              "--pos-label", "1"], 2, "--pos-label is for the binary task"),
    ("pos-label-not-number", [*OK, "--pos-label", "yes"], 2, "the labels of column 'y' are numbers"),
    ("text-list-no-classes", ["{d}/text_list.parquet", "--label", "y", "--score", "probs"], 2,
     "is a list without class names: give --classes"),
    ("text-list-classes-count", ["{d}/text_list.parquet", "--label", "y", "--score", "probs", "--classes",
                                 "a,b,c"], 2, "--classes: 3 names for 2 classes"),
    ("three-text-labels", ["{d}/three.csv", "--label", "dx", "--score", "p"], 1,
     "3 distinct labels ('a', 'b', 'c') for the binary task"),
    ("third-numeric-label", ["{d}/minus_one.csv", "--label", "y", "--score", "p", "--pos-label", "1"], 1,
     "row 3: column 'y': label 2 is a third label"),
    # data errors
    ("header-not-utf8", ["{d}/bad_header.csv", "--label", "y", "--score", "p"], 1, "the header is not valid UTF-8"),
    ("label-not-utf8-csv", ["{d}/bad_label_utf8.csv", "--label", "y", "--score", "p"], 1, "not valid UTF-8"),
    ("label-not-utf8-jsonl", ["{d}/bad_label_utf8.jsonl", "--label", "y", "--score", "p", "--pos-label", "b"], 1,
     "not valid UTF-8"),
    ("score-not-utf8-csv", ["{d}/bad_score_utf8.csv", "--label", "y", "--score", "p"], 1,
     "row 2: column 'p': b'\\xff' is not a number"),
    ("big-label-csv", ["{d}/big_label.csv", "--label", "y", "--score", "p"], 1,
     "row 2: column 'y': label 99999999999999999999999 is outside the binary task"),
    ("big-label-jsonl", ["{d}/big_label.jsonl", "--label", "y", "--score", "p"], 1,
     "label 99999999999999999999999 is outside"),
    ("nan-score", ["{d}/nan.csv", "--label", "y", "--score", "p"], 1, "row 2: column 'p': value is missing"),
    ("word-score", ["{d}/word.csv", "--label", "y", "--score", "p"], 1, "row 2: column 'p': 'abc' is not a number"),
    ("wrong-fields", ["{d}/fields.csv", "--label", "y", "--score", "p"], 1, "expected 2 fields"),
    ("duplicate-column", ["{d}/dup.csv", "--label", "y", "--score", "p"], 1, "column 'p' appears 2 times"),
    ("label-2", ["{d}/label2.csv", "--label", "y", "--score", "p"], 1, "label 2 is outside the binary task"),
    ("label-0.5", ["{d}/float_label.csv", "--label", "y", "--score", "p"], 1, "label 0.5 is not an integer"),
    ("negative-weight", ["{d}/neg_weight.csv", "--label", "y", "--score", "p", "--weight", "w"], 1,
     "weight -1.0 is not finite and >= 0"),
    ("empty-file", ["{d}/empty.csv", "--label", "y", "--score", "p"], 1, "no rows"),
    ("header-only", ["{d}/header_only.csv", "--label", "y", "--score", "p"], 1, "no rows"),
    ("mixed-label-types", ["{d}/letters.csv", "{d}/numbers.csv", "--label", "y", "--score", "p_a"], 1,
     "labels are not text (type int64) but the first file's are"),
    ("mixed-label-types-2", ["{d}/numbers.csv", "{d}/letters.csv", "--label", "y", "--score", "p_a"], 1,
     "labels are text but the first file's are not"),
    ("corrupt-gzip", ["{d}/corrupt.csv.gz", "--label", "y", "--score", "p"], 1, "cannot read as csv"),
    ("not-parquet", ["{d}/not.parquet", "--label", "y", "--score", "p"], 1, "cannot read as parquet"),
    ("truncated-parquet", ["{d}/truncated.parquet", "--label", "y", "--score", "p"], 1, "cannot read as parquet"),
    ("null-first-list", ["{d}/null_list.parquet", "--label", "y", "--score", "probs"], 1,
     "row 1: column 'probs': value is missing"),
    ("ragged-lists", ["{d}/ragged.parquet", "--label", "y", "--score", "probs"], 1, "holds 3 values, expected 2"),
    ("struct-label", ["{d}/struct_label.parquet", "--label", "y", "--score", "p"], 1,
     "labels must be integers or strings"),
    ("text-score", ["{d}/text_score.parquet", "--label", "y", "--score", "p"], 1, "score 'x' is not a number"),
    ("invalid-json", ["{d}/invalid.jsonl", "--label", "y", "--score", "p"], 1, "in row 2"),
    ("json-row-not-object", ["{d}/array_row.jsonl", "--label", "y", "--score", "p"], 1, "cannot read as jsonl"),
    ("deep-json", ["{d}/deep.jsonl", "--label", "y", "--score", "p"], 1, "line 1: a value is nested more than 1000"),
    ("deep-json-gz", ["{d}/deep_obj.jsonl.gz", "--label", "y", "--score", "p"], 1,
     "line 11: a value is nested more than 1000"),
]


def check_one_line(rc: int, out: str, err: str, code: int, text: str) -> None:
    assert "Traceback" not in out + err
    assert rc == code, err
    assert err.endswith("\n") and err.count("\n") == 1, err  # exactly one line
    assert text in err, err


@pytest.mark.parametrize(("argv", "code", "text"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_error_is_one_line_with_its_exit_status(d, capsys, argv, code, text):
    rc = main(["evaluate", *(a.format(d=d) for a in argv)])
    out = capsys.readouterr()
    check_one_line(rc, out.out, out.err, code, text)


TOP = [
    ("unknown-command", ["frobnicate"], 2, "invalid choice: 'frobnicate'"),
    ("demo-threshold-inf", ["demo", "--threshold", "inf"], 2, "--threshold: must be a finite number"),
    ("demo-batch-size-0", ["--batch-size", "0"], 2, "--batch-size: must be at least 1"),
    ("trec-missing-files", ["trec", "/nonexistent/qrels", "/nonexistent/run"], 2, "/nonexistent/"),
    ("trec-digits-huge", ["trec", "/nonexistent/qrels", "/nonexistent/run", "--digits", "99999999999999"], 2,
     "--digits: must be between 0 and 17"),
    ("trec-digits-text", ["trec", "/nonexistent/qrels", "/nonexistent/run", "--digits", "four"], 2,
     "--digits: expected an integer"),
]


@pytest.mark.parametrize(("argv", "code", "text"), [c[1:] for c in TOP], ids=[c[0] for c in TOP])
def test_top_level_errors_are_one_line(capsys, argv, code, text):
    rc = main(argv)
    out = capsys.readouterr()
    check_one_line(rc, out.out, out.err, code, text)


def test_keyboard_interrupt_exits_130_without_traceback(d, capsys, monkeypatch):
    import streammetrics.cli.evaluate as ev

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(ev, "_stream", interrupted)
    rc = main(["evaluate", *(a.format(d=d) for a in OK)])
    check_one_line(rc, *capsys.readouterr(), 130, "interrupted")
    monkeypatch.setattr("streammetrics.cli.demo.run", interrupted)
    check_one_line(main([]), *capsys.readouterr(), 130, "streammetrics: interrupted")


def test_unexpected_exception_is_one_line(d, capsys, monkeypatch):
    """The last resort: an error no check foresaw is still one line and status 1."""
    import streammetrics.cli.evaluate as ev

    def broken(*args, **kwargs):
        raise TypeError("something\nwent wrong")

    monkeypatch.setattr(ev, "_stream", broken)
    rc = main(["evaluate", *(a.format(d=d) for a in OK)])
    check_one_line(rc, *capsys.readouterr(), 1, "unexpected TypeError: something went wrong")


def run_process(*argv: str, **kw) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))}
    return subprocess.run([sys.executable, "-m", "streammetrics", *argv], capture_output=True, text=True,
                          timeout=120, env=env, **kw)


@pytest.mark.parametrize(("argv", "code", "text"), [
    (["evaluate", "{d}/deep.jsonl", "--label", "y", "--score", "p"], 1, "nested more than 1000 levels"),
    (["evaluate", *OK, "--max-bytes", "16Q"], 2, "argument --max-bytes: not a size: '16Q'"),
    (["evaluate", "{d}/bad_header.csv", "--label", "y", "--score", "p"], 1, "the header is not valid UTF-8"),
    (["evaluate", "{d}/text.csv", "--label", "dx", "--score", "score"], 2, "give --pos-label LABEL"),
], ids=["deep-json", "max-bytes-16Q", "header-not-utf8", "text-labels"])
def test_errors_in_a_real_process(d, argv, code, text):
    out = run_process(*(a.format(d=d) for a in argv))
    check_one_line(out.returncode, out.stdout, out.stderr, code, text)


def test_version_and_plain_text_help(capsys):
    import streammetrics

    assert main(["--version"]) == 0
    out = capsys.readouterr()
    assert out.out == f"streammetrics {streammetrics.__version__}\n" == "streammetrics 0.1.0\n" and not out.err
    for argv, wanted in ((["--help"], "--version"), (["evaluate", "--help"], "--pos-label"),
                         (["demo", "--help"], "--batch-size")):
        assert main(argv) == 0
        text = capsys.readouterr().out
        assert wanted in text and "``" not in text and ":class:" not in text
    # the top-level help shows no --batch-size default that differs from evaluate's
    assert main(["--help"]) == 0 and "--batch-size" not in capsys.readouterr().out


def test_broken_pipe_in_a_real_process(d):
    # a reader that goes away (``| head -1``): no traceback, no "Exception ignored", status 0
    rng = np.random.default_rng(0)
    path = os.path.join(d, "k60.parquet")
    pq.write_table(pa.table({"y": rng.integers(0, 60, 600), "p": list(rng.random((600, 60)))}), path)
    for extra in ([], ["--json", "-"]):
        env = {**os.environ, "PYTHONPATH": os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))}
        proc = subprocess.Popen([sys.executable, "-m", "streammetrics", "evaluate", path, "--label", "y",
                                 "--score", "p", *extra], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
        assert proc.stdout is not None and proc.stderr is not None
        first = proc.stdout.readline()
        proc.stdout.close()  # the pipe breaks on the next write
        err = proc.stderr.read().decode()
        assert proc.wait(timeout=120) == 0 and first and err == "", err


# -- fuzz: random option values and random file contents -----------------------------------------------
OPTION_VALUES = st.one_of(st.text(max_size=12), st.sampled_from(
    ["nan", "-inf", "1e309", "0", "-1", "1e3", "99999999999999999999", "16Q", "1.5G", ",", "auroc,,f1", "0x10",
     " 3 ", "1_000", "\x00", "é"]))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(option=st.sampled_from(["--threshold", "--batch-size", "--max-bytes", "--metrics", "--classes",
                               "--pos-label", "--task"]), value=OPTION_VALUES)
def test_fuzz_option_values(d, capsys, option, value):
    rc = main(["evaluate", *(a.format(d=d) for a in OK), f"{option}={value}", "--json", "-"])
    out = capsys.readouterr()
    assert "Traceback" not in out.out + out.err
    assert rc in (0, 1, 2)
    if rc == 0:
        assert json.loads(out.out)["rows"] == 4
    else:
        assert out.err.count("\n") == 1 and out.err.startswith("streammetrics"), out.err


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(content=st.one_of(
    st.binary(max_size=300),
    st.lists(st.sampled_from([b"y,p", b"1,0.5", b"0,0.2", b"a,0.3", b",", b"1,", b"nan,1", b"\xff", b'"x', b"#",
                              b"1,0.5,3", b"99999999999999999999999,0.1", b"-1,inf", b"true,0.5", b""]),
             max_size=12).map(b"\n".join)),
    fmt=st.sampled_from(["csv", "jsonl"]))
def test_fuzz_file_contents(tmp_path_factory, capsys, content, fmt):
    if fmt == "jsonl":  # the same shapes as JSON Lines rows, with random bytes in the values
        content = b"\n".join(b'{"y": ' + line.split(b",")[0] + b', "p": ' + line.split(b",")[-1] + b"}"
                             for line in content.split(b"\n"))
    path = tmp_path_factory.mktemp("fuzz") / f"f.{fmt}"
    path.write_bytes(content)
    rc = main(["evaluate", str(path), "--label", "y", "--score", "p", "--json", "-", "--no-intervals"])
    out = capsys.readouterr()
    assert "Traceback" not in out.out + out.err
    assert rc in (0, 1, 2), out.err
    if rc == 0:
        assert json.loads(out.out)["rows"] >= 1
    else:
        assert out.err.count("\n") == 1, out.err
