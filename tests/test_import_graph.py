"""The import graph of ``streammetrics`` has no cycle.

Every module is parsed with :mod:`ast`; every import counts (module level or inside a function),
except those under ``if TYPE_CHECKING:`` -- which a second check counts too: a cycle made only by
imports for type checkers is no import error, but it is still two modules that need each other.
Relative imports are resolved; ``from . import x`` with
``x`` a module imports ``x``; importing ``a.b.c`` also runs the packages ``a`` and ``a.b``.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = "streammetrics"
ROOT = Path(__file__).resolve().parent.parent / PACKAGE


def _modules() -> dict[str, Path]:
    """Every module of the package by dotted name (a package by its own name)."""
    found = {}
    for path in sorted(ROOT.rglob("*.py")):
        parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def _is_type_checking(test: ast.expr) -> bool:
    """``TYPE_CHECKING`` or ``typing.TYPE_CHECKING``."""
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _import_nodes(tree: ast.AST, type_checking: bool = False) -> list[ast.Import | ast.ImportFrom]:
    """Every import statement, skipping the bodies of ``if TYPE_CHECKING:`` unless ``type_checking``."""
    out: list[ast.Import | ast.ImportFrom] = []
    stack: list[ast.AST] = [tree]
    while stack:
        node = stack.pop()
        if not type_checking and isinstance(node, ast.If) and _is_type_checking(node.test):
            stack.extend(node.orelse)
            continue
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            out.append(node)
        stack.extend(ast.iter_child_nodes(node))
    return out


def _with_parents(name: str, modules: dict[str, Path]) -> set[str]:
    """``name`` and the packages above it that belong to the package."""
    parts = name.split(".")
    return {".".join(parts[:i]) for i in range(1, len(parts) + 1)} & modules.keys()


def import_graph(type_checking: bool = False) -> dict[str, set[str]]:
    """Module -> the package modules it imports (itself and its own parent packages left out);
    with ``type_checking``, the imports under ``if TYPE_CHECKING:`` too."""
    modules = _modules()
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        is_pkg = path.name == "__init__.py"
        here = name if is_pkg else name.rpartition(".")[0]
        targets: set[str] = set()
        for node in _import_nodes(ast.parse(path.read_text(), str(path)), type_checking):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    targets |= _with_parents(alias.name, modules)
                continue
            if node.level:
                base = here.split(".")
                base = base[: len(base) - (node.level - 1)]
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = node.module or ""
            targets |= _with_parents(source, modules)
            for alias in node.names:
                sub = f"{source}.{alias.name}"
                if sub in modules:
                    targets |= _with_parents(sub, modules)
        own = _with_parents(name, modules)  # a module runs its parents first: not a cycle
        graph[name] = {t for t in targets if t not in own}
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One cycle (its modules, the first repeated at the end), or None. O(V + E)."""
    colour: dict[str, int] = {}
    for start in sorted(graph):
        if colour.get(start):
            continue
        path = [start]
        iters = [iter(sorted(graph[start]))]
        colour[start] = 1
        while iters:
            nxt = next(iters[-1], None)
            if nxt is None:
                colour[path.pop()] = 2
                iters.pop()
            elif colour.get(nxt) == 1:
                return path[path.index(nxt):] + [nxt]
            elif not colour.get(nxt):
                colour[nxt] = 1
                path.append(nxt)
                iters.append(iter(sorted(graph.get(nxt, ()))))
    return None


def test_graph_sees_the_package() -> None:
    graph = import_graph()
    assert "streammetrics.wrappers.window" in graph
    assert "streammetrics._core.metric" in graph["streammetrics.wrappers.window"]
    assert "streammetrics.wrappers.window" in graph[PACKAGE]


def test_cycle_finder_finds_a_known_cycle() -> None:
    cycle = find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}})
    assert cycle is not None and cycle[0] == cycle[-1] and set(cycle) == {"a", "b", "c"}
    assert find_cycle({"a": {"b"}, "b": set()}) is None


def test_no_import_cycle() -> None:
    cycle = find_cycle(import_graph())
    assert cycle is None, "import cycle: " + " -> ".join(cycle or [])


def test_type_checking_imports_are_seen_on_request() -> None:
    tree = ast.parse("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .a import B\n")
    assert [n.module for n in _import_nodes(tree) if isinstance(n, ast.ImportFrom)] == ["typing"]
    assert sorted(n.module or "" for n in _import_nodes(tree, type_checking=True)
                  if isinstance(n, ast.ImportFrom)) == ["a", "typing"]
    # cli.columns annotates with cli.plan.Plan only for type checkers
    assert "streammetrics.cli.plan" not in import_graph()["streammetrics.cli.columns"]
    assert "streammetrics.cli.plan" in import_graph(type_checking=True)["streammetrics.cli.columns"]


def test_no_import_cycle_counting_type_checking_imports() -> None:
    cycle = find_cycle(import_graph(type_checking=True))
    assert cycle is None, "import cycle (imports for type checkers included): " + " -> ".join(cycle or [])


def root_imports() -> dict[str, list[int]]:
    """Module -> the lines where it imports the package root itself (``import streammetrics``,
    ``from streammetrics import Name`` or ``from .. import Name`` reaching the root, for a name
    that is not a submodule), imports inside functions included, those for type checkers not.

    The import graph cannot show these: the root is a parent of every module, and a module's
    parents are left out of its imports."""
    modules = _modules()
    found: dict[str, list[int]] = {}
    for name, path in modules.items():
        if name == PACKAGE:
            continue
        here = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in _import_nodes(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                hit = any(alias.name == PACKAGE for alias in node.names)
            else:
                if node.level:
                    base = here.split(".")
                    source = ".".join(base[: len(base) - (node.level - 1)] + ([node.module] if node.module else []))
                else:
                    source = node.module or ""
                hit = source == PACKAGE and any(f"{PACKAGE}.{a.name}" not in modules for a in node.names)
            if hit:
                found.setdefault(name, []).append(node.lineno)
    return found


def test_root_imports_are_found() -> None:
    found = root_imports()
    assert "streammetrics.cli.evaluate" in found  # ``import streammetrics as sm`` inside functions
    assert PACKAGE not in found and "streammetrics.wrappers.window" not in found


def private_name_imports() -> list[str]:
    """``module: from source import _name`` for every private name (not a module) that a module
    takes from another module of the package (imports for type checkers included)."""
    modules = _modules()
    found = []
    for name, path in modules.items():
        here = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if not isinstance(node, ast.ImportFrom):
                continue
            if node.level:
                base = here.split(".")
                source = ".".join(base[: len(base) - (node.level - 1)] + ([node.module] if node.module else []))
            else:
                source = node.module or ""
            if source not in modules:
                continue
            found += [f"{name}: from {source} import {a.name}" for a in node.names
                      if a.name.startswith("_") and not a.name.startswith("__")
                      and f"{source}.{a.name}" not in modules]
    return found


def test_private_name_finder_sees_a_module_and_a_name() -> None:
    tree = ast.parse("from . import _kernels\nfrom ._x import _y\n")
    nodes = [n for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)]
    assert [a.name for n in nodes for a in n.names] == ["_kernels", "_y"]
    assert "streammetrics._core.metric" in _modules()  # a private module: importable by name


def test_no_private_name_imported_across_modules() -> None:
    offenders = private_name_imports()
    assert not offenders, "private names imported across modules:\n" + "\n".join(offenders)
