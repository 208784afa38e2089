"""Every public definition has a complete numpydoc docstring, as ``help()`` shows it.

- a public function of ``streammetrics`` and its public modules (``MODULES``; those of the
  extras where installed): ``Parameters`` (unless it takes none) and ``Returns``;
- a public class: ``Parameters`` (a result or record class: ``Attributes``) unless its
  constructor takes no argument, and ``Examples``; an exception or warning class: a docstring;
- every argument of the signature is described (shared descriptions included: no placeholder
  line of ``streammetrics._core.docstrings`` is left unfilled);
- every ``Examples`` section holds at least one doctest line (``>>>``).

The command-line modules (``streammetrics.cli`` and its submodules, ``CLI_MODULES``) follow the
same rules except one: their classes need no ``Examples`` section. They are the internals of the
commands (parsers, readers, report writers), documented for whoever works on the CLI; their
behaviour is shown and tested through the commands (``tests/test_cli*.py``), not by doctests.
Where a CLI docstring has an ``Examples`` section, it still needs a doctest line.

A module's public definitions are its ``__all__``; a module without one (some ``trec``
submodules) exposes every class and function it defines whose name has no leading underscore.
"""

from __future__ import annotations

import importlib
import inspect
import os
import pkgutil
import re
from typing import Any

import pytest

import streammetrics.calibration
import streammetrics.cli
import streammetrics.functional
import streammetrics.trec
from streammetrics._core.docstrings import EXAMPLES, SNIPPETS, fill


def _submodules(package: Any) -> tuple[str, ...]:
    """Every public submodule of ``package`` (a name without a leading underscore)."""
    return tuple(sorted(f"{package.__name__}.{info.name}" for info in pkgutil.iter_modules(package.__path__)
                        if not info.name.startswith("_")))


MODULES = ("streammetrics", "streammetrics.functional", "streammetrics.trec", "streammetrics.plot",
           "streammetrics.calibration", "streammetrics.regression", "streammetrics.monitoring",
           "streammetrics.classification.confusion", "streammetrics.ranking.metrics",
           "streammetrics.retrieval.metrics", "streammetrics.wrappers.sliced.core", "streammetrics.wrappers.checkpoint",
           *_submodules(streammetrics.trec), *_submodules(streammetrics.functional),
           *_submodules(streammetrics.calibration))
#: The command-line modules: the same rules, except that a class needs no Examples section.
CLI_MODULES = ("streammetrics.cli", *_submodules(streammetrics.cli))
#: Public modules of the extras: checked where their third-party package is installed.
OPTIONAL_MODULES = ("streammetrics.dask", "streammetrics.torch", "streammetrics.prometheus",
                    "streammetrics.prometheus_sliced", "streammetrics.mlflow", "streammetrics.tensorboard",
                    "streammetrics.hf", "streammetrics.spark", "streammetrics.ray", "streammetrics.lightning",
                    "streammetrics.keras")
# Keras 3 picks its backend at import; the library's tests run it on torch (as tests/integrations/test_keras.py).
os.environ.setdefault("KERAS_BACKEND", "torch")
_SECTION = re.compile(r"(?m)^[ \t]*([A-Z][A-Za-z ]*)\n[ \t]*-{3,}[ \t]*$")
_PLACEHOLDER = re.compile(r"(?m)^[ \t]*\{[a-z]+:[\w ,]+\}[ \t]*$")


def _exported(module: Any) -> list[tuple[str, Any]]:
    """A module's ``__all__``, or else the classes and functions it defines without a leading ``_``."""
    if hasattr(module, "__all__"):
        return [(attr, getattr(module, attr)) for attr in module.__all__]
    return [(attr, obj) for attr, obj in vars(module).items()
            if not attr.startswith("_") and getattr(obj, "__module__", None) == module.__name__]


def _public(modules: tuple[str, ...], skip: tuple[tuple[str, Any], ...] = ()) -> list[tuple[str, Any]]:
    """The public classes and functions of ``modules`` (each once), leaving out those of ``skip``."""
    seen: dict[int, tuple[str, Any]] = {id(obj): (name, obj) for name, obj in skip}
    skipped = set(seen)
    for name in modules:
        try:
            module = importlib.import_module(name)
        except ImportError:
            if name not in OPTIONAL_MODULES:
                raise
            continue
        for attr, obj in _exported(module):
            if inspect.isclass(obj) or inspect.isfunction(obj):
                seen.setdefault(id(obj), (f"{name}.{attr}", obj))
    return sorted((item for key, item in seen.items() if key not in skipped), key=lambda item: item[0])


PUBLIC = _public(MODULES + OPTIONAL_MODULES)
#: The CLI's public definitions that are not the library's (re-exports are checked as the library's).
CLI_PUBLIC = _public(CLI_MODULES, skip=tuple(PUBLIC))
#: (name, object, whether a class needs an Examples section)
CHECKED = [(name, obj, True) for name, obj in PUBLIC] + [(name, obj, False) for name, obj in CLI_PUBLIC]


def _sections(doc: str) -> set[str]:
    return set(_SECTION.findall(doc))


def _parameters(obj: Any) -> list[str]:
    try:
        signature = inspect.signature(obj)
    except (TypeError, ValueError):  # a class without a Python-level signature
        return []
    return [p for p in signature.parameters if p not in ("self", "cls")]


def _described(doc: str, section: str) -> str:
    """The text of one section (up to the next section header)."""
    parts = _SECTION.split(doc)
    for i in range(1, len(parts) - 1, 2):
        if parts[i].strip() == section:
            return parts[i + 1]
    return ""


def test_cli_modules_are_checked() -> None:
    names = {name for name, _, _ in CHECKED}
    assert "streammetrics.cli.evaluate" in CLI_MODULES and "streammetrics.cli.trec_compare" in CLI_MODULES
    for expected in ("streammetrics.cli.evaluate.run", "streammetrics.cli.evaluate.Plan",
                     "streammetrics.cli.errors.guarded", "streammetrics.cli.readers.open_source"):
        assert expected in names


@pytest.mark.parametrize("module_name", CLI_MODULES)
def test_cli_definitions_are_private_or_exported(module_name: str) -> None:
    """A CLI module's class or function without a leading ``_`` is in its ``__all__`` (so the
    checks above see it): a helper used only in its own module has a leading ``_``."""
    module = importlib.import_module(module_name)
    defined = [attr for attr, obj in vars(module).items()
               if (inspect.isclass(obj) or inspect.isfunction(obj)) and not attr.startswith("_")
               and obj.__module__ == module_name]
    missing = sorted(set(defined) - set(getattr(module, "__all__", defined)))
    assert not missing, f"{module_name}: public but not in __all__: {missing}"


@pytest.mark.parametrize(("name", "obj", "examples"), CHECKED, ids=[name for name, _, _ in CHECKED])
def test_numpydoc_sections(name: str, obj: Any, examples: bool) -> None:
    doc = inspect.getdoc(obj) or ""
    assert doc.strip(), f"{name}: no docstring"
    assert not _PLACEHOLDER.search(doc), f"{name}: a shared-description placeholder was not filled"
    sections = _sections(doc)
    params = _parameters(obj)
    if inspect.isclass(obj) and issubclass(obj, (Exception, Warning)):
        return
    if inspect.isclass(obj):
        if params:
            assert sections & {"Parameters", "Attributes"}, f"{name}: no Parameters (or Attributes) section"
        if examples:
            assert "Examples" in sections, f"{name}: no Examples section"
        if "Examples" in sections:
            assert ">>>" in _described(doc, "Examples"), f"{name}: an Examples section without a >>> line"
        return
    if "Examples" in sections:
        assert ">>>" in _described(doc, "Examples"), f"{name}: an Examples section without a >>> line"
    if params:
        assert "Parameters" in sections, f"{name}: no Parameters section"
    assert "Returns" in sections or "Yields" in sections, f"{name}: no Returns section"


@pytest.mark.parametrize(("name", "obj"), [(n, o) for n, o, _ in CHECKED], ids=[n for n, _, _ in CHECKED])
def test_every_argument_is_described(name: str, obj: Any) -> None:
    doc = inspect.getdoc(obj) or ""
    text = _described(doc, "Parameters") or _described(doc, "Attributes")
    if not text:
        return  # test_numpydoc_sections says whether the section is due
    entries = set()
    for line in text.splitlines():
        match = re.match(r"^(\*{0,2}[A-Za-z_][\w, *]*?)\s*(?::|$)", line)
        if match and not line.startswith(" "):
            entries.update(n.strip().lstrip("*") for n in match.group(1).split(","))
    missing = [p for p in _parameters(obj) if p not in entries]
    assert not missing, f"{name}: arguments without a description: {missing}"


def test_fill_expands_every_snippet_and_refuses_unknown_names() -> None:
    for family, entries in SNIPPETS.items():
        text = "Parameters\n----------\n    {" + family + ": " + ", ".join(entries) + "}\n"
        out = fill(text)
        for header, description in entries.values():
            assert "    " + header + "\n" in out
            assert " ".join(out.split()).count(" ".join(description.split())) >= 1
    with pytest.raises(KeyError, match="no entry 'nope'"):
        fill("    {sklearn: sample_weight, nope}")
    with pytest.raises(KeyError, match="unknown family"):
        fill("    {nofamily: x}")
    untouched = ">>> {'a': 1}\n{'a': 1}\nset {x}\n"
    assert fill(untouched) == untouched


def test_fill_expands_example_data_as_doctest_lines() -> None:
    for name, lines in EXAMPLES.items():
        out = fill("Examples\n--------\n    {example: " + name + "}\n    >>> 1\n    1")
        expected = "\n".join("    " + line for line in lines.split("\n"))
        assert out == "Examples\n--------\n" + expected + "\n    >>> 1\n    1"
        assert all(line.startswith(">>> ") for line in lines.split("\n"))
    with pytest.raises(KeyError, match="no example data 'nope'"):
        fill("    {example: nope}")


def _docstrings_with_members() -> list[tuple[str, str]]:
    """The docstrings of the modules of ``MODULES``, their public definitions and those
    definitions' public methods and properties."""
    out: list[tuple[str, str]] = []
    for name in MODULES + OPTIONAL_MODULES + CLI_MODULES:
        try:
            module = importlib.import_module(name)
        except ImportError:
            if name not in OPTIONAL_MODULES:
                raise
            continue
        out.append((name, inspect.cleandoc(module.__doc__ or "")))
        for attr, obj in _exported(module):
            out.append((f"{name}.{attr}", inspect.getdoc(obj) or ""))
            if not inspect.isclass(obj):
                continue
            for member, value in vars(obj).items():
                func = value.fget if isinstance(value, property) else getattr(value, "__func__", value)
                doc = getattr(func, "__doc__", None)
                if (not member.startswith("_") or member == "__init__") and isinstance(doc, str):
                    out.append((f"{name}.{attr}.{member}", inspect.cleandoc(doc)))
    return out


def test_every_examples_section_holds_a_doctest() -> None:
    empty = [name for name, doc in _docstrings_with_members()
             if "Examples" in _sections(doc) and ">>>" not in _described(doc, "Examples")]
    assert not empty, f"Examples sections without a >>> line: {empty}"


def test_examples_check_sees_an_empty_section() -> None:
    doc = "Summary.\n\nExamples\n--------\nSee the guide.\n"
    assert "Examples" in _sections(doc) and ">>>" not in _described(doc, "Examples")
    assert ">>>" in _described(doc + "\n>>> 1\n1\n", "Examples")
