"""A progress line for long ``streammetrics trec`` / ``trec-compare`` runs (issue #28): on stderr,
only when it is a terminal, after ``DELAY`` seconds, erased at the end; ``--quiet`` turns it off;
stdout is the same either way."""

from __future__ import annotations

import io

import pytest

import streammetrics.trec.progress as P
from streammetrics.__main__ import main


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def _files(tmp_path):
    qrels, run1, run2 = tmp_path / "qrels", tmp_path / "a", tmp_path / "b"
    qrels.write_text("".join(f"q{q} 0 d{d} {d % 2}\n" for q in range(5) for d in range(8)))
    run1.write_text("".join(f"q{q} Q0 d{d} {d} {1 / (d + 1)!r} a\n" for q in range(5) for d in range(8)))
    run2.write_text("".join(f"q{q} Q0 d{d} {d} {1 / (d + 2 - 2 * (d % 2))!r} b\n"
                            for d in range(8) for q in range(5)))  # fmt: skip  (interleaved)
    return str(qrels), str(run1), str(run2)


@pytest.mark.parametrize("command", ["trec", "trec-compare"])
@pytest.mark.parametrize("extra", [[], ["-J"], ["--memory-lines", "3"]])
def test_progress_on_a_terminal_only_and_not_with_quiet(tmp_path, capsys, monkeypatch, command, extra):
    monkeypatch.setattr(P, "DELAY", 0.0)
    qrels, run1, run2 = _files(tmp_path)
    argv = ["trec", qrels, run2, "-m", "map", *extra] if command == "trec" else \
        ["trec-compare", qrels, run1, run2, "-m", "map", "--bootstrap", "100", *[e for e in extra if e == "-J"]]  # fmt: skip
    outs = {}
    for case in ("terminal", "quiet", "pipe"):
        stderr = _Terminal() if case != "pipe" else io.StringIO()
        monkeypatch.setattr("sys.stderr", stderr)
        assert main([*argv, "--quiet"] if case == "quiet" else argv) == 0
        outs[case] = capsys.readouterr().out
        shown = stderr.getvalue()
        if case == "terminal":
            assert f"\rstreammetrics {command}: reading " in shown and "% of " in shown
            assert shown.endswith("\r") and shown.rstrip("\r").endswith(" ")  # erased at the end
        else:
            assert shown == ""
    assert outs["terminal"] == outs["quiet"] == outs["pipe"] and outs["pipe"]


def test_progress_line_waits_throttles_and_erases():
    now = [0.0]
    out = io.StringIO()
    line = P.ProgressLine("prog", out, delay=2.0, interval=0.5, clock=lambda: now[0])
    line.total["f"] = 10**9
    line("f", 1)
    assert out.getvalue() == ""  # before the delay
    now[0] = 2.5
    line("f", 2 * 10**8)
    now[0] = 2.6
    line("f", 3 * 10**8)  # within the interval: not rewritten
    now[0] = 3.1
    line("f", 10**9)
    parts = out.getvalue().split("\r")[1:]
    assert parts == ["prog: reading f: 20% of 1.0 GB, 2 s", "prog: reading f: 100% of 1.0 GB, 3 s"]
    line.close()
    assert out.getvalue().endswith("\r" + " " * len(parts[-1]) + "\r")
    with P.reporting(None):
        P.advanced("f", 5)  # nothing installed: nothing happens
