"""What the wheel and the sdist carry, checked from pyproject.toml and MANIFEST.in without building
(CI builds both from a clean clone, installs the wheel in a fresh venv and runs the command line:
the packaging stage of .ci/run).

- the wheel: every file of the package that is not a Python module (``py.typed``, the bundled
  example data under ``streammetrics/data``) matches the ``package-data`` patterns, and every
  package directory is found by ``packages.find``;
- the sdist: MANIFEST.in covers every tracked file, so the sdist is a complete source tree;
- the metadata: a PEP 639 license expression, and the console script the Quick start runs.
"""

from __future__ import annotations

import fnmatch
import os
import shutil
import subprocess
from pathlib import Path

import pytest

try:
    import tomllib
except ImportError:  # Python 3.10
    tomllib = pytest.importorskip("tomli")

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "streammetrics"


def pyproject() -> dict:
    with open(ROOT / "pyproject.toml", "rb") as fh:
        return tomllib.load(fh)


def package_files() -> list[str]:
    """Every file under streammetrics/ (relative to it), caches aside."""
    out = []
    for dirpath, dirnames, files in os.walk(PACKAGE):
        dirnames[:] = [d for d in dirnames if d != "__pycache__"]
        out += [os.path.relpath(os.path.join(dirpath, f), PACKAGE) for f in files if not f.endswith((".pyc", ".pyo"))]
    return sorted(out)


def tracked_files() -> list[str]:
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    run = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, text=True, check=True)
    return [f for f in run.stdout.split("\0") if f and (ROOT / f).exists()]


def test_package_data_covers_every_non_module_file_of_the_package():
    patterns = pyproject()["tool"]["setuptools"]["package-data"]["streammetrics"]
    data = [f for f in package_files() if not f.endswith(".py")]
    assert "py.typed" in data
    assert {"data/breast_cancer_scores.csv", "data/example.qrels", "data/example.run"} <= set(data)
    missed = [f for f in data if not any(fnmatch.fnmatch(f, p) and "/" not in f[len(p.rsplit("/", 1)[0]) + 1:]
                                         if "/" in p else f == p or (fnmatch.fnmatch(f, p) and "/" not in f)
                                         for p in patterns)]
    assert missed == [], f"not in [tool.setuptools.package-data] of pyproject.toml: {missed}"


def test_every_package_directory_is_found():
    find = pyproject()["tool"]["setuptools"]["packages"]["find"]
    assert find.get("namespaces", True) is True or all(
        (Path(d) / "__init__.py").exists() for d, _, fs in os.walk(PACKAGE) if any(f.endswith(".py") for f in fs))
    for dirpath, dirnames, files in os.walk(PACKAGE):
        dirnames[:] = [d for d in dirnames if d != "__pycache__"]
        name = os.path.relpath(dirpath, ROOT).replace(os.sep, ".")
        assert any(fnmatch.fnmatch(name, p) for p in find["include"]), name
        if any(f.endswith(".py") for f in files):  # a module directory is a regular package
            assert (Path(dirpath) / "__init__.py").exists(), dirpath


def manifest_covers(path: str, rules: list[list[str]]) -> bool:
    """MANIFEST.in's graft / include / global-exclude rules (the ones it uses), applied in order."""
    included = False
    for rule, *args in rules:
        grafted = rule == "graft" and (path + "/").startswith(args[0].rstrip("/") + "/")
        if grafted or (rule == "include" and any(fnmatch.fnmatch(path, a) for a in args)):
            included = True
        elif rule == "global-exclude" and any(
                fnmatch.fnmatch(os.path.basename(path), a) or f"/{a}/" in f"/{path}" for a in args):
            included = False
        elif rule not in ("graft", "include", "global-exclude"):
            raise AssertionError(f"MANIFEST.in: rule {rule!r} is not interpreted by this test")
    return included


def test_manifest_puts_every_tracked_file_in_the_sdist():
    with open(ROOT / "MANIFEST.in", encoding="utf-8") as fh:
        rules = [line.split() for line in fh if line.strip() and not line.startswith("#")]
    missed = [f for f in tracked_files() if not manifest_covers(f, rules)]
    assert missed == [], f"tracked but not in the sdist (MANIFEST.in): {missed}"
    assert not manifest_covers("streammetrics/__pycache__/x.cpython-311.pyc", rules)


def test_metadata_license_and_the_quick_start_command():
    project = pyproject()["project"]
    assert project["license"] == "MIT" and project["license-files"] == ["LICENSE"]
    assert (ROOT / "LICENSE").is_file()
    assert project["scripts"]["streammetrics"] == "streammetrics.__main__:main"
    assert "Typing :: Typed" in project["classifiers"]
    assert not any(c.startswith("License ::") for c in project["classifiers"])  # PEP 639: the expression only
