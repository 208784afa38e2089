"""The names and paths the documentation gives stay true.

- every ``::: streammetrics.X.Y`` directive of ``docs/api/*.md`` resolves to a module or to an
  attribute of one;
- every ``from streammetrics... import ...`` / ``import streammetrics...`` statement in
  README.md, CONTRIBUTING.md, ``docs/**/*.md`` and ``examples/`` imports, with every name it
  takes (the statements are parsed out of the text; nothing else of the blocks runs). Statements
  of a heavy integration (Dask, Spark, torch, ...) run in one fresh interpreter, as the examples
  do (``tests/_support/doc_blocks.py``);
- the stable public modules that ``docs/architecture.md`` lists are the ones CONTRIBUTING.md and
  the public-API pages list (``tests/test_smoke.py`` imports them without optional packages);
- every path named in backticks (or on a command line of a shell block, or as a link) in
  CONTRIBUTING.md and ``docs/architecture.md`` exists, from the repository root or from
  ``streammetrics/`` (a glob matches a file; a bare file name exists somewhere in the tree);
- the "Folders" list of ``docs/architecture.md`` gives each folder the layers its modules have
  in the module map, and names every folder that holds modules.
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import doc_blocks
import pytest

ROOT = doc_blocks.ROOT
PACKAGE = ROOT / "streammetrics"
ARCHITECTURE = ROOT / "docs" / "architecture.md"

# -- the statements and directives the docs hold -------------------------------------------------

IMPORT = re.compile(
    r"^[ \t]*(?:>>>[ \t]+)?(?P<stmt>from[ \t]+streammetrics\b[\w.]*[ \t]+import[ \t]+(?:\([^)]*\)|[^\n#`;]*)"
    r"|import[ \t]+streammetrics\b[^\n#`;]*)", re.M)
DIRECTIVE = re.compile(r"^:::[ \t]+(streammetrics[\w.]*)[ \t]*$", re.M)


def import_statements(text: str) -> list[tuple[int, str]]:
    """(line, statement) for every import of the package at the start of a line (after an
    optional ``>>>``), a parenthesised name list spanning lines included."""
    return [(text.count("\n", 0, m.start()) + 1, " ".join(m["stmt"].split())) for m in IMPORT.finditer(text)]


def targets(stmt: str) -> list[tuple[str, list[str]]]:
    """(module, names taken from it) for a statement; ``*`` takes no name to check."""
    out: list[tuple[str, list[str]]] = []
    for node in ast.parse(stmt).body:
        if isinstance(node, ast.ImportFrom):
            assert node.module is not None and not node.level
            out.append((node.module, [a.name for a in node.names if a.name != "*"]))
        elif isinstance(node, ast.Import):
            out += [(a.name, []) for a in node.names]
    return out


def directive_targets(path: str) -> list[tuple[str, list[str]]]:
    """``streammetrics.a.B`` -> the longest importable module prefix and the attributes after it.
    Resolved at check time (:func:`problems`): here only split into module candidates."""
    return [(path, ["<directive>"])]


def sources() -> list[Path]:
    docs = sorted((ROOT / "docs").rglob("*.md"))
    examples = sorted(p for p in (ROOT / "examples").rglob("*") if p.suffix in (".py", ".md"))
    return [ROOT / "README.md", ROOT / "CONTRIBUTING.md", *docs, *examples]


def collected() -> list[tuple[str, str, list[tuple[str, list[str]]]]]:
    """(where, what, targets) for every import statement and API directive of the docs."""
    found = []
    for path in sources():
        text = path.read_text(encoding="utf-8")
        rel = path.relative_to(ROOT).as_posix()
        for line, stmt in import_statements(text):
            found.append((f"{rel}:{line}", stmt, targets(stmt)))
        if path.parent.name == "api":
            for m in DIRECTIVE.finditer(text):
                line = text.count("\n", 0, m.start()) + 1
                found.append((f"{rel}:{line}", f"::: {m[1]}", directive_targets(m[1])))
    return found


# -- checking them ---------------------------------------------------------------------------------

def resolve(dotted: str) -> object:
    """The module or attribute ``dotted`` names: the longest importable prefix, then attributes."""
    parts = dotted.split(".")
    for n in range(len(parts), 0, -1):
        name = ".".join(parts[:n])
        try:
            obj: object = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name is not None and (exc.name == name or name.startswith(exc.name + ".")):
                continue  # no such module: try a shorter prefix
            raise
        for attr in parts[n:]:
            obj = getattr(obj, attr)
        return obj
    raise ModuleNotFoundError(dotted)


def problems(items: list[tuple[str, str, list[tuple[str, list[str]]]]]) -> list[str]:
    """What does not import, one line each (empty: everything does)."""
    bad = []
    for where, what, tgts in items:
        for module, names in tgts:
            try:
                if names == ["<directive>"]:
                    resolve(module)
                    continue
                mod = importlib.import_module(module)
                for name in names:
                    if not hasattr(mod, name) and not (hasattr(mod, "__path__")
                                                       and importlib.util.find_spec(f"{module}.{name}")):
                        raise ImportError(f"cannot import name {name!r} from {module!r}")
            except Exception as exc:  # noqa: BLE001 - every failure is reported with its place
                bad.append(f"{where}: `{what}`: {type(exc).__name__}: {exc}")
    return bad


def is_heavy(tgts: list[tuple[str, list[str]]]) -> bool:
    """Imports an integration that starts clusters or loads a framework (doc_blocks' rule)."""
    for module, _ in tgts:
        parts = module.split(".")
        if len(parts) > 1 and parts[1] in doc_blocks.EXTRAS and parts[1] not in ("plot", "prometheus"):
            return True
    return False


def missing_extra(tgts: list[tuple[str, list[str]]]) -> str | None:
    for module, _ in tgts:
        parts = module.split(".")
        for pkg in doc_blocks.EXTRAS.get(parts[1] if len(parts) > 1 else "", ()):
            if importlib.util.find_spec(pkg) is None:
                return pkg
    return None


ITEMS = collected()


def test_the_docs_hold_imports_and_directives():
    assert len([i for i in ITEMS if i[1].startswith(":::")]) >= 30
    assert len([i for i in ITEMS if not i[1].startswith(":::")]) >= 50
    pages = {where.rsplit(":", 1)[0] for where, _, _ in ITEMS}
    assert {"README.md", "CONTRIBUTING.md", "docs/api/regression.md", "examples/plot_images.py"} <= pages


def test_the_parsers_read_statements_and_find_a_broken_one():
    text = ("x\n>>> from streammetrics.ranking import AUROC, ROCCurve  # a doctest\n"
            "    from streammetrics._core.metric import (\n        Metric,\n        NoSuchState,\n    )\n"
            "import streammetrics as sm\n`from streammetrics import x` in prose is not a statement\n")
    stmts = import_statements(text)
    assert [line for line, _ in stmts] == [2, 3, 7]
    assert targets(stmts[1][1]) == [("streammetrics._core.metric", ["Metric", "NoSuchState"])]
    assert targets(stmts[2][1]) == [("streammetrics", [])]
    assert problems([("p:1", "ok", targets(stmts[0][1]))]) == []
    found = problems([("p:2", "bad", targets(stmts[1][1])),
                      ("p:3", "gone", [("streammetrics._sorted_buffer", [])]),
                      ("p:4", "::: streammetrics.NoSuchName", directive_targets("streammetrics.NoSuchName")),
                      ("p:5", "::: streammetrics.ranking.AUROC", directive_targets("streammetrics.ranking.AUROC"))])
    assert [f.split(":")[0] + ":" + f.split(":")[1] for f in found] == ["p:2", "p:3", "p:4"], found
    assert "'NoSuchState'" in found[0]


def test_every_light_import_and_directive_resolves():
    light = [i for i in ITEMS if not is_heavy(i[2]) and missing_extra(i[2]) is None]
    assert len(light) >= 50
    bad = problems(light)
    assert not bad, "names the docs import that do not import:\n" + "\n".join(bad)


def test_every_integration_import_and_directive_resolves_in_a_fresh_interpreter():
    heavy = [i for i in ITEMS if is_heavy(i[2])]
    assert heavy, "no integration imported by the docs: the split is wrong"
    runnable = [i for i in heavy if missing_extra(i[2]) is None]
    if not runnable:
        pytest.skip("no integration extra installed")
    env = {**os.environ, "KERAS_BACKEND": os.environ.get("KERAS_BACKEND", "torch"),
           "PYTHONPATH": os.pathsep.join([str(ROOT), str(Path(__file__).parent), str(ROOT / "tests" / "_support")])}
    code = ("import json, sys\nimport test_public_names as t\n"
            "items = [(w, s, [(m, n) for m, n in tg]) for w, s, tg in json.loads(sys.stdin.read())]\n"
            "print(json.dumps(t.problems(items)))\n")
    run = subprocess.run([sys.executable, "-c", code], input=json.dumps(runnable), capture_output=True,
                         text=True, cwd=ROOT, env=env, timeout=600, check=False)
    assert run.returncode == 0, run.stderr[-3000:]
    bad = json.loads(run.stdout.strip().splitlines()[-1])
    assert not bad, "names the docs import that do not import:\n" + "\n".join(bad)


# -- the stable public modules -------------------------------------------------------------------

def stable_modules() -> tuple[list[str], list[str]]:
    from test_architecture_map import stable_modules as parse

    return parse(ARCHITECTURE.read_text(encoding="utf-8"))


def test_the_stable_modules_are_public_and_importable():
    library, integrations = stable_modules()
    assert {"streammetrics", "streammetrics.functional", "streammetrics.calibration", "streammetrics.regression",
            "streammetrics.monitoring", "streammetrics.trec", "streammetrics.plot", "streammetrics.ranking",
            "streammetrics.retrieval", "streammetrics.classification"} <= set(library)
    assert {"streammetrics.dask", "streammetrics.torch", "streammetrics.prometheus"} <= set(integrations)
    for name in library + integrations:
        assert importlib.util.find_spec(name) is not None, name
        assert not any(part.startswith("_") for part in name.split(".")), name


@pytest.mark.parametrize("page", ["CONTRIBUTING.md", "docs/api/index.md", "docs/definitions/index.md"])
def test_every_page_that_states_the_public_api_lists_the_same_modules(page):
    library, integrations = stable_modules()
    text = (ROOT / page).read_text(encoding="utf-8")
    missing = [n for n in library + integrations if n != "streammetrics"
               and not re.search(rf"`(?:streammetrics)?\.{n.split('.', 1)[1]}`", text)]
    assert not missing, f"{page} does not list these stable modules of docs/architecture.md: {missing}"


# -- paths the pages name --------------------------------------------------------------------------

PATHLIKE = re.compile(r"^[\w.*-]+(?:/[\w.*-]*)+$|^[\w*-]+\.(?:py|md|yml|toml|csv|json|txt)$")
COMMAND_PATH = re.compile(r"(?<![\w/.])(?:tests|streammetrics|docs|benchmarks|examples)/[\w./*-]+")


def named_paths(text: str) -> list[tuple[int, str]]:
    """(line, path) for every backticked path-like span, markdown link target and path on a line
    of a shell block (``tests/...``, ``docs/...``, ...); spans with a placeholder (``<area>``) or a
    URL are left out."""
    found = []
    fences = list(doc_blocks.FENCE.finditer(text))
    prose = text
    for f in reversed(fences):  # code spans inside blocks are not prose
        prose = prose[:f.start()] + "\n" * text.count("\n", f.start(), f.end()) + prose[f.end():]
    for m in re.finditer(r"`([^`\n]+)`", prose):
        span = m[1].strip()
        if PATHLIKE.match(span) and "<" not in span and "://" not in span:
            found.append((prose.count("\n", 0, m.start()) + 1, span))
    for m in re.finditer(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", prose):
        if "://" not in m[1] and not m[1].startswith("mailto:"):
            found.append((prose.count("\n", 0, m.start()) + 1, m[1]))
    for f in fences:
        if (f["info"].strip().split() or [""])[0] in ("bash", "sh", "shell", ""):
            start = text.count("\n", 0, f.start()) + 1
            for i, line in enumerate(f["body"].splitlines(), start + 1):
                found += [(i, p.rstrip(".")) for p in COMMAND_PATH.findall(line.split("#", 1)[0])]
    return found


def exists(path: str, base: Path) -> bool:
    roots = [ROOT, PACKAGE, base]
    clean = path.rstrip("/")
    if "/" not in clean:  # a bare file name: somewhere in the tree
        return any(p for p in ROOT.rglob(clean) if ".git" not in p.parts)
    if any(c in clean for c in "*?["):
        return any(any(r.glob(clean)) for r in roots)
    return any((r / clean).exists() for r in roots)


@pytest.mark.parametrize("page", ["CONTRIBUTING.md", "docs/architecture.md"])
def test_every_path_the_page_names_exists(page):
    path = ROOT / page
    paths = named_paths(path.read_text(encoding="utf-8"))
    assert len(paths) >= 20
    absent = [f"{page}:{line}: {p}" for line, p in paths if not exists(p, path.parent)]
    assert not absent, "paths that do not exist:\n" + "\n".join(absent)


def test_the_path_finder_sees_spans_links_and_commands_and_a_missing_path():
    text = ("See `streammetrics/_core/state.py`, `_core/metric.py`, `tests/<area>/`, `x = 1`,\n"
            "[the map](docs/architecture.md#module-map) and `_sorted_buffer.py`.\n\n"
            "```bash\npython -m pytest tests/core/test_params.py -x  # tests/not/this.py\n```\n")
    paths = named_paths(text)
    assert paths == [(1, "streammetrics/_core/state.py"), (1, "_core/metric.py"), (2, "_sorted_buffer.py"),
                     (2, "docs/architecture.md"), (5, "tests/core/test_params.py")]
    assert [p for _, p in paths if not exists(p, ROOT)] == ["_sorted_buffer.py"]


# -- the architecture page's folders ---------------------------------------------------------------

def folder_layers(text: str) -> dict[str, set[str]]:
    """Folder -> the layers its line of the "Folders" section gives in brackets."""
    section = text.split("\n## Folders", 1)[1].split("\n## ", 1)[0]
    return {m[1]: {w.strip() for w in m[2].split(",")}
            for m in re.finditer(r"^- `([\w]+/)` \(([^)]*)\)", section, re.M)}


def test_the_folders_section_agrees_with_the_module_map():
    from test_architecture_map import module_map

    text = ARCHITECTURE.read_text(encoding="utf-8")
    stated = folder_layers(text)
    actual: dict[str, set[str]] = {}
    for layer, path in module_map(text):
        if "/" in path:
            actual.setdefault(path.split("/", 1)[0] + "/", set()).add(layer)
    assert stated == actual, (
        "the Folders section of docs/architecture.md and its module map disagree; "
        f"folder -> layers in the map: {dict(sorted((k, sorted(v)) for k, v in actual.items()))}")


def test_the_contributing_walkthrough_quotes_the_regression_family_as_it_is():
    """The code CONTRIBUTING.md shows for ``PinballLoss`` is the family's code, line for line
    (comments aside), so the walkthrough cannot drift from the files it names."""
    text = (ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8")
    block = next(m["body"] for m in doc_blocks.FENCE.finditer(text) if "class PinballLoss" in m["body"])
    source = "\n".join((PACKAGE / "regression" / name).read_text(encoding="utf-8")
                       for name in ("_sums.py", "losses.py"))
    lines = {line.strip() for line in source.splitlines()}
    quoted = [line.split("  #", 1)[0].strip() for line in block.splitlines()]
    absent = [line for line in quoted if line and line not in lines and not line.startswith("class PinballLoss")]
    assert not absent, f"CONTRIBUTING.md quotes lines the regression family does not hold: {absent}"
    assert "class PinballLoss(_LossMetric):" in lines
