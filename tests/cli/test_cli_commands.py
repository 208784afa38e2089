"""Every command registers its parser through one helper (``streammetrics.cli.commands``): each
``--help`` has a plain-text description and the exit statuses, and no module of the CLI calls
``add_parser`` itself."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from streammetrics.__main__ import main
from streammetrics.cli.commands import EXIT_STATUS, doc_paragraph

COMMANDS = ("demo", "trec", "trec-compare", "evaluate", "drift")
PACKAGE = Path(__file__).resolve().parents[2] / "streammetrics"


@pytest.mark.parametrize("command", COMMANDS)
def test_every_command_help_has_the_exit_statuses(command: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main([command, "--help"]) == 0
    out = capsys.readouterr().out
    assert f"streammetrics {command}" in out.splitlines()[0]  # the usage line
    assert " ".join(EXIT_STATUS.split()) in " ".join(out.split())
    assert "``" not in out and ":class:" not in out  # plain text, no reStructuredText markup


def test_the_root_help_lists_every_command(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--help"]) == 0
    out = capsys.readouterr().out
    for command in COMMANDS:
        assert command in out


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
