"""The module map of ``docs/architecture.md`` is complete and its layers hold.

The map's table names every module file under ``streammetrics/`` exactly once (and no file that
does not exist), each in one layer; the layers, from the bottom, are the ones the page states
(``core ← kernels ← ...``). No module imports a module of a higher layer: every import counts,
inside functions too, except those only for type checkers (the graph of
``tests/test_import_graph.py``).
"""

from __future__ import annotations

import re
from pathlib import Path

from test_import_graph import PACKAGE, ROOT, import_graph, root_imports

MAP = ROOT.parent / "docs" / "architecture.md"


def stated_layers(text: str) -> list[str]:
    """The layers, bottom first, from the page's ``**Layers, from the bottom:** a ← b ← c.`` line."""
    match = re.search(r"\*\*Layers, from the bottom:\*\*\s*(.+?)\.?\s*$", text, re.MULTILINE)
    assert match, f"{MAP.name}: no '**Layers, from the bottom:** ...' line"
    return [name.strip() for name in match.group(1).split("←")]


def module_map(text: str) -> list[tuple[str, str]]:
    """(layer, file path relative to the package) for every module the map's table names, in
    order (a file named twice appears twice)."""
    section = text.split("## Module map", 1)[1].split("\n## ", 1)[0]
    rows = []
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if not line.startswith("|") or len(cells) < 3 or cells[0] in ("layer", "---"):
            continue
        rows += [(cells[0], path) for path in re.findall(r"`([^`]+\.py)`", cells[1])]
    return rows


def stable_modules(text: str) -> tuple[list[str], list[str]]:
    """(library modules, integration modules), dotted, of the page's sentence 'The stable public
    modules are `streammetrics` ..., `functional`, ... and the integrations `dask`, ...; ...'."""
    match = re.search(r"The stable public modules are (.*?) and the integrations (.*?);", text, re.S)
    assert match, f"{MAP.name}: no 'The stable public modules are ... and the integrations ...;' sentence"

    def names(part: str) -> list[str]:
        return [n if n == PACKAGE else f"{PACKAGE}.{n}" for n in re.findall(r"`(\w+)`", part)]
    return names(match.group(1)), names(match.group(2))


def module_name(path: str) -> str:
    """``trec/stream.py`` -> ``streammetrics.trec.stream``; ``cli/__init__.py`` -> ``streammetrics.cli``."""
    parts = [PACKAGE, *Path(path).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def package_files() -> set[str]:
    return {p.relative_to(ROOT).as_posix() for p in ROOT.rglob("*.py")}


def test_the_parsers_read_the_page() -> None:
    text = MAP.read_text()
    assert stated_layers(text) == ["core", "kernels", "families", "wrappers", "integrations"]
    rows = dict((path, layer) for layer, path in module_map(text))
    assert rows["_core/metric.py"] == "core" and rows["wrappers/window.py"] == "wrappers"
    assert module_name("trec/stream.py") == "streammetrics.trec.stream"
    assert module_name("__init__.py") == PACKAGE and module_name("cli/__init__.py") == "streammetrics.cli"
    sample = "## Module map\n\n| layer | module | what |\n|---|---|---|\n| core | `_a.py`, `b/c.py` | `x.py` |\n"
    assert module_map(sample) == [("core", "_a.py"), ("core", "b/c.py")]


def test_the_map_names_every_module_file_once() -> None:
    rows = module_map(MAP.read_text())
    named = [path for _, path in rows]
    twice = sorted({p for p in named if named.count(p) > 1})
    files = package_files()
    missing = sorted(files - set(named))
    absent = sorted(set(named) - files)
    assert not twice, f"{MAP.name} names these modules more than once: {twice}"
    assert not missing, f"{MAP.name} does not name these modules: {missing}"
    assert not absent, f"{MAP.name} names modules that do not exist: {absent}"


def test_every_layer_in_the_map_is_a_stated_layer() -> None:
    text = MAP.read_text()
    unknown = sorted({layer for layer, _ in module_map(text)} - set(stated_layers(text)))
    assert not unknown, f"{MAP.name}: layers not in the stated order: {unknown}"


def test_no_module_imports_from_a_higher_layer() -> None:
    text = MAP.read_text()
    rank = {layer: i for i, layer in enumerate(stated_layers(text))}
    layer_of = {module_name(path): layer for layer, path in module_map(text)}
    graph = import_graph()
    assert set(graph) <= set(layer_of), "modules missing from the map (see the completeness test)"
    upward = sorted(
        f"{m} ({layer_of[m]}) imports {t} ({layer_of[t]})"
        for m, targets in graph.items()
        for t in targets
        if rank[layer_of[t]] > rank[layer_of[m]]
    )
    assert not upward, "imports from a higher layer:\n" + "\n".join(upward)


def test_the_layer_check_sees_an_upward_import() -> None:
    graph = import_graph()
    assert "streammetrics.wrappers.metricset" in graph["streammetrics._engines.ranked"]  # a known import ...
    layer_of = {module_name(path): layer for layer, path in module_map(MAP.read_text())}
    rank = {layer: i for i, layer in enumerate(stated_layers(MAP.read_text()))}
    # ... that would be upward if _ranked were a kernel, as it once was listed
    assert rank["kernels"] < rank[layer_of["streammetrics.wrappers.metricset"]] <= rank[layer_of["streammetrics._engines.ranked"]]


def test_only_integrations_import_the_package_root() -> None:
    """The root gathers the families and wrappers; a module below the integrations that imported
    it would run every family first (and could not be read alone)."""
    layer_of = {module_name(path): layer for layer, path in module_map(MAP.read_text())}
    below = sorted(f"{m} (line {', '.join(map(str, lines))})" for m, lines in root_imports().items()
                   if layer_of.get(m) != "integrations")
    assert not below, "modules below the integrations importing the package root:\n" + "\n".join(below)


def test_no_module_is_over_700_lines() -> None:
    """Small modules with one responsibility: none of the package's modules exceeds 700 lines
    (CONTRIBUTING.md), so a module that grows past it is split before it lands."""
    long = {str(p.relative_to(ROOT)): n for p in sorted(ROOT.rglob("*.py"))
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > 700}
    assert not long, f"modules over 700 lines: {long}"
