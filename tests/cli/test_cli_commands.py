"""Every command registers its parser through one helper (``streammetrics.cli.commands``): each
``--help`` has a plain-text description and the exit statuses, and no module of the CLI calls
``add_parser`` itself."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from streammetrics.__main__ import main
from streammetrics.cli import demo, drift, evaluate, trec_compare
from streammetrics.cli.commands import EXIT_STATUS, command, doc_paragraph, exit_status, runner
from streammetrics.cli.errors import InputError

COMMANDS = ("demo", "trec", "trec-compare", "evaluate", "drift")
TERMINATED = ("trec", "trec-compare")  # they exit 143 after SIGTERM (temporary files removed)
PACKAGE = Path(__file__).resolve().parents[2] / "streammetrics"


@pytest.mark.parametrize("name", COMMANDS)
def test_every_command_help_has_the_exit_statuses(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main([name, "--help"]) == 0
    out = capsys.readouterr().out
    assert f"streammetrics {name}" in out.splitlines()[0]  # the usage line
    flat = " ".join(out.split())
    assert "exit status: 0 success, 1 data error, 2 usage error, 130 interrupted" in flat
    assert ("143 terminated (SIGTERM)" in flat) == (name in TERMINATED)
    assert "``" not in out and ":class:" not in out  # plain text, no reStructuredText markup


def test_the_root_help_lists_every_command(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--help"]) == 0
    out = capsys.readouterr().out
    for name in COMMANDS:
        assert name in out


def _add_parser_calls(path: Path) -> list[int]:
    """Lines of ``<anything>.add_parser(...)`` calls in a file."""
    tree = ast.parse(path.read_text(), str(path))
    return [node.lineno for node in ast.walk(tree)
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
            and node.func.attr == "add_parser"
            and not (isinstance(node.func.value, ast.Name) and node.func.value.id in {
                "demo", "trec", "trec_compare", "evaluate", "drift"})]  # the modules' own add_parser


def test_only_the_helper_calls_add_parser() -> None:
    files = [*sorted((PACKAGE / "cli").glob("*.py")), PACKAGE / "__main__.py"]
    calls = {p.relative_to(PACKAGE).as_posix(): _add_parser_calls(p) for p in files}
    assert calls["cli/commands.py"], "the helper itself calls sub.add_parser"
    others = {name: lines for name, lines in calls.items() if lines and name != "cli/commands.py"}
    assert not others, f"register commands with cli.commands.add_command, not add_parser: {others}"


def test_the_finder_sees_a_direct_call(tmp_path: Path) -> None:
    f = tmp_path / "x.py"
    f.write_text("p = sub.add_parser('x', help='y')\ndemo.add_parser(sub)\n")
    assert _add_parser_calls(f) == [1]


def test_doc_paragraph() -> None:
    doc = "Summary with ``code``.\n\nSecond :class:`x.Y` paragraph.\n"
    assert doc_paragraph(doc, 0) == "Summary with code."
    assert doc_paragraph(doc, 1) == "Second x.Y paragraph.\n"
    assert doc_paragraph(None, 1) is None  # python -OO strips docstrings


def test_exit_status() -> None:
    assert exit_status() == EXIT_STATUS
    assert exit_status("143 terminated").endswith("130 interrupted, 143 terminated (errors are one line on stderr)")


@pytest.mark.parametrize("module", [demo, drift, evaluate, trec_compare], ids=lambda m: m.__name__)
def test_a_command_add_parser_is_documented(module: object) -> None:
    add_parser = module.add_parser  # type: ignore[attr-defined]
    doc = add_parser.__doc__ or ""
    assert "Parameters" in doc and "Returns" in doc and "subparsers" in doc


def test_command_registers_and_adds_arguments() -> None:
    import argparse

    def arguments(p: argparse.ArgumentParser) -> None:
        p.add_argument("--n", type=int, default=3)

    add_parser = command("x", help="the ``x`` command", description="Does :func:`x`.", arguments=arguments)
    root = argparse.ArgumentParser(prog="prog")
    sub = root.add_subparsers(dest="command")
    parser = add_parser(sub)
    assert parser.description == "Does x." and parser.epilog == EXIT_STATUS
    assert root.parse_args(["x", "--n", "5"]).n == 5
    assert "``x``" in (add_parser.__doc__ or "")


def test_runner_reports_errors_as_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    import argparse

    def body(args: argparse.Namespace) -> int:
        if args.fail:
            raise InputError("x.csv: row 3: bad\nvalue", 1)
        return 0

    run = runner("x", body)
    assert run(argparse.Namespace(fail=False)) == 0
    assert run(argparse.Namespace(fail=True)) == 1
    err = capsys.readouterr().err
    assert err.startswith("streammetrics x: ") and "x.csv: row 3: bad" in err and "Traceback" not in err
    assert "``x``" in (run.__doc__ or "") and "Returns" in (run.__doc__ or "")
    assert drift.run.__doc__ and "``drift``" in drift.run.__doc__
