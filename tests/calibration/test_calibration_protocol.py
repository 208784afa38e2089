"""Calibration reads its score states only through the score-state protocol: no module of
``streammetrics.calibration`` asks which state it holds (``isinstance`` against a concrete
score state), as the ranking metrics do not."""

from __future__ import annotations

import ast
from pathlib import Path

import streammetrics.calibration as calibration

CONCRETE_STATES = {"SortedScores", "BinnedScores", "ProbabilityScores"}


def _isinstance_targets(tree: ast.AST) -> list[tuple[int, str]]:
    """(line, class name) of every concrete score state named in an ``isinstance`` test."""
    hits = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                and node.func.id == "isinstance" and len(node.args) == 2):
            continue
        for sub in ast.walk(node.args[1]):
            name = sub.id if isinstance(sub, ast.Name) else sub.attr if isinstance(sub, ast.Attribute) else None
            if name in CONCRETE_STATES:
                hits.append((node.lineno, name))
    return hits


def test_no_dispatch_on_the_concrete_score_state() -> None:
    root = Path(calibration.__file__).parent
    files = sorted(root.glob("*.py"))
    assert files
    found = {f"{path.name}:{line}": name for path in files
             for line, name in _isinstance_targets(ast.parse(path.read_text(), str(path)))}
    assert found == {}


def test_the_check_sees_a_dispatch() -> None:
    tree = ast.parse("if isinstance(st, (QuantileProbabilities, m.SortedScores)):\n    pass\n")
    assert _isinstance_targets(tree) == [(1, "SortedScores")]
