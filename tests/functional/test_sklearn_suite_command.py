"""The command that runs scikit-learn's metric tests against streammetrics.functional is written
in three places: ``.ci/run`` (what CI runs), the docstring of ``tests/_support/sklearn_suite_plugin.py``
and ``docs/functional.md``. The two documented copies must be the command CI runs."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
START = "PYTHONPATH=.:tests/_support python -m pytest -p sklearn_suite_plugin"


def command_in(text: str) -> str:
    """The command starting with START in ``text``, its continuation lines joined, whitespace
    collapsed."""
    lines = text.splitlines()
    first = next(i for i, line in enumerate(lines) if line.strip().startswith(START))
    parts = []
    for line in lines[first:]:
        parts.append(line.strip().removesuffix("\\"))
        if not line.rstrip().endswith("\\"):
            break
    return re.sub(r"\s+", " ", " ".join(parts)).strip()


def test_documented_sklearn_suite_commands_are_the_one_ci_runs() -> None:
    ci = command_in((ROOT / ".ci" / "run").read_text())
    assert "-k" in ci and "--pyargs" in ci  # the whole command, not its first line only
    plugin = ast.get_docstring(ast.parse((ROOT / "tests" / "_support" / "sklearn_suite_plugin.py").read_text()))
    assert plugin is not None
    assert command_in(plugin) == ci
    assert command_in((ROOT / "docs" / "functional.md").read_text()) == ci


def test_ci_sklearn_suite_runs_a_bounded_scikit_learn() -> None:
    """The suite CI runs is the installed scikit-learn's: the test extra bounds its version above
    (admitting the installed one), and CI installs scikit-learn only through that extra."""
    import sklearn
    from packaging.requirements import Requirement

    tomllib = pytest.importorskip("tomllib")  # Python 3.11+

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    pins = [
        Requirement(r)
        for r in project["optional-dependencies"]["test"]
        if Requirement(r).name == "scikit-learn"
    ]
    assert len(pins) == 1
    spec = pins[0].specifier
    assert any(s.operator == "<" for s in spec), f"scikit-learn is not bounded above: {spec}"
    assert spec.contains(sklearn.__version__), (sklearn.__version__, str(spec))
    assert not spec.contains("99.0")
    ci = (ROOT / ".ci" / "run").read_text()
    installs = [line for line in ci.splitlines() if "pip install" in line]
    assert any("'.[test," in line for line in installs)
    assert not any("scikit-learn" in line or "sklearn" in line for line in installs)
