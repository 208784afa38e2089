"""The documentation site renders the API reference as a reader sees it.

- ``docs/hooks/check_site.py`` (the check CI runs on the built site) finds raw Sphinx roles,
  backticks and ``>>>`` left in prose, links and anchors into private modules, and cut signatures;
- ``docs/hooks/griffe_roles.py`` turns the roles of the docstrings into cross-references: public
  targets (by their public name) link, private and outside targets are plain code;
- ``mkdocs build --strict`` builds the site cleanly, the check finds nothing in it, the build
  writes nothing into the clone, and the pages show what the checks do not (links, annotations).
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
HOOKS = ROOT / "docs" / "hooks"


def load(name: str) -> Any:
    spec = importlib.util.spec_from_file_location(f"docs_hooks_{name}", HOOKS / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


check_site = load("check_site")

PAGE = """<html><nav>:func:`nav is not checked`</nav><article>
<p>{prose}</p>
<div class="doc-signature highlight"><pre><code>{signature}</code></pre></div>
</article></html>"""


def page(prose: str = "A sentence.", signature: str = "AUROC(num_classes: int | None = None, *, k=1)") -> str:
    return PAGE.format(prose=prose, signature=signature)


def test_check_page_passes_a_clean_page():
    assert check_site.check_page(page()) == []
    assert check_site.check_page(page(signature="threshold: float = 0.5")) == []
    assert check_site.check_page(page(prose='<a href="../confusion/#streammetrics.Accuracy">x</a>')) == []


@pytest.mark.parametrize(("prose", "signature", "problem"), [
    ("see :func:<code>streammetrics._scores.thresholds.ap_bounds</code>", None, "raw role"),
    ("see :class:`Accuracy`", None, "raw role"),
    ("a ``literal`` left", None, "backtick in prose"),
    ("&gt;&gt;&gt; sm.AUROC()", None, "doctest prompt in prose"),
    ('<a href="#streammetrics._scores.thresholds.ap_bounds">ap_bounds</a>', None, "private href"),
    ('<a href="../x/#streammetrics.calibration._common.f">f</a>', None, "private href"),
    ('<h2 id="streammetrics._core.metric.Metric">Metric</h2>', None, "private id"),
    ('<autoref identifier="streammetrics.AUROC" optional>AUROC</autoref>', None, "unprocessed"),
    ("A sentence.", "AUROC(num_classes: int | None = None, *, multila", "incomplete signature"),
    ("A sentence.", "AUROC(num_classes=None, ...", "incomplete signature"),
    ("A sentence.", "accuracy_score(\n    y_true: Any, y_pred: Any, *, normalize: bool = True, sample_weight: Any = None\n)",
     "signature line over 80"),
    ("A drop-in (reference: scikit-learn 1.9)::", None, "reStructuredText literal marker"),
])
def test_check_page_finds_each_problem(prose, signature, problem):
    text = page(prose, signature) if signature else page(prose)
    found = check_site.check_page(text)
    assert found and all(f.startswith(problem) for f in found[:1]), found


def test_check_site_finds_broken_links_of_the_content(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "index.html").write_text('<article><h2 id="x">X</h2></article>', encoding="utf-8")
    links = ['<a href="a/">a</a>', '<a href="a/#x">x</a>', '<a href="#here">h</a>', '<a href="https://x.org/y">y</a>']
    (tmp_path / "index.html").write_text(page(" ".join(links)).replace("<article>", '<article id="here">'),
                                         encoding="utf-8")
    assert check_site.check_site(str(tmp_path)) == {}
    (tmp_path / "index.html").write_text(page('<a href="a/#y">y</a> <a href="b/">b</a> <a href="#z">z</a>'),
                                         encoding="utf-8")
    assert check_site.check_site(str(tmp_path)) == {"index.html": [
        "broken anchor: a/#y", "broken link: b/", "broken anchor: #z"]}


@pytest.fixture(scope="module")
def resolver():
    griffe = pytest.importorskip("griffe")  # installed with the docs extra (mkdocstrings)
    pytest.importorskip("markdown")  # griffe_roles titles guide links with its slugify
    roles = load("griffe_roles")
    snippets = load("griffe_snippets")
    extension = roles.RolesToCrossRefs()
    pkg = griffe.load("streammetrics", search_paths=[str(ROOT)], docstring_parser="numpy",
                      extensions=griffe.load_extensions(snippets.FillSnippets, extension))
    return roles, roles._Resolver(pkg), pkg, extension


def test_every_role_of_the_package_is_rewritten(resolver):
    roles, _, pkg, extension = resolver
    assert len(extension.stats["public"]) > 300 and len(extension.stats["private"]) > 100
    stack = [pkg]
    while stack:
        obj = stack.pop()
        if obj.docstring is not None:
            assert not roles.ROLE.search(obj.docstring.value), obj.path
        stack.extend(m for m in obj.members.values() if not m.is_alias)


@pytest.mark.parametrize(("where", "text", "expected"), [
    # a public target links (by the path that defines it; autorefs knows the rendered page)
    ("streammetrics.AUROC", ":class:`~streammetrics.Accuracy`",
     '<autoref identifier="streammetrics.classification.confusion.Accuracy" optional><code>Accuracy</code></autoref>'),
    # a private path re-exported publicly is shown by its public name
    ("streammetrics.AUROC", ":class:`streammetrics._core.metric.Metric`",
     '<autoref identifier="streammetrics._core.metric.Metric" optional><code>streammetrics.Metric</code></autoref>'),
    # a relative name resolves in the scope of the docstring (the class, then its module)
    ("streammetrics.trec", ":func:`evaluate_files`",
     '<autoref identifier="streammetrics.trec.evaluate.evaluate_files" optional><code>evaluate_files()</code></autoref>'),
    ("streammetrics.AUROC", ":meth:`compute`",
     '<autoref identifier="streammetrics._core.metric.Metric.compute" optional><code>compute()</code>'),
    # a private target, or one outside the package, is plain code
    ("streammetrics.AUROC", ":func:`~streammetrics._scores.thresholds.ap_bounds`", "<code>ap_bounds()</code>"),
    ("streammetrics.AUROC", ":mod:`streammetrics._core.load_checks`", "<code>streammetrics._core.load_checks</code>"),
    ("streammetrics.Window", ":func:`time.time`", "<code>time.time()</code>"),
    # an explicit title, and a role wrapped across lines
    ("streammetrics.AUROC", ":meth:`the computation <streammetrics.AUROC.compute>`", "the computation"),
    ("streammetrics.AUROC", ":func:`streammetrics._scores.thresholds.\n    ap_bounds`", "<code>streammetrics._scores.thresholds.ap_bounds()</code>"),
])
def test_rewrite(resolver, where, text, expected):
    roles, res, pkg, _ = resolver
    out = roles.rewrite(f"Before {text} after.", pkg[where.removeprefix("streammetrics.")], res)
    assert out.startswith("Before ") and out.endswith(" after.")
    assert expected in out, out
    assert "`" not in out


def mkdocs_missing() -> str | None:
    for module in ("mkdocs", "mkdocstrings", "mkdocstrings_handlers.python", "material", "matplotlib"):
        if importlib.util.find_spec(module.split(".")[0]) is None:
            return module
    return None


def git_status() -> str | None:
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        return None
    run = subprocess.run(["git", "status", "--porcelain", "--untracked-files=all"], cwd=ROOT,
                         capture_output=True, text=True)
    return run.stdout if run.returncode == 0 else None


@pytest.mark.skipif(mkdocs_missing() is not None, reason="the docs extra (mkdocs) is not installed")
def test_site_builds_strict_and_renders_the_api_reference(tmp_path):
    before = git_status()
    site = tmp_path / "site"
    run = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)],
                         cwd=ROOT, capture_output=True, text=True, env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})
    assert run.returncode == 0, run.stderr[-3000:]
    assert check_site.check_site(str(site)) == {}
    if before is not None:
        assert git_status() == before  # the build rewrote nothing in the clone (docs/images included)
    assert (site / "images" / "det.png").is_file()  # drawn by the hook into the site
    ranking = (site / "api" / "ranking" / "index.html").read_text(encoding="utf-8")
    # a role of the docstrings became a link to the page that documents its target
    assert 'href="../confusion/#streammetrics.Accuracy"' in ranking
    # bases by their public names: AUROC is a Metric, its private base RankingMetric is not shown
    assert "RankingMetric" not in ranking and 'Bases: <code><a class="autorefs autorefs-internal"' in ranking
    # the full signature: annotations and defaults
    assert "num_classes</span><span class=\"p\">:</span>" in ranking.replace("\n", "")


@pytest.mark.parametrize(("text", "expected"), [
    ("see docs/definitions/ranking.md#bounded-memory.",
     'see <a href="../../definitions/ranking/#bounded-memory">Bounded memory</a>.'),
    ("(docs/definitions/inputs.md)", '(<a href="../../definitions/inputs/">Inputs</a>)'),
    ("docs/definitions/index.md#task-arguments", '<a href="../../definitions/#task-arguments">Task arguments</a>'),
    # a heading or a page that does not exist, and a path in a code span, stay as written
    ("docs/definitions/ranking.md#no-such-heading", "docs/definitions/ranking.md#no-such-heading"),
    ("docs/no-such-page.md", "docs/no-such-page.md"),
    ("``docs/definitions/inputs.md``", "``docs/definitions/inputs.md``"),
])
def test_guide_paths_in_docstrings_become_links(resolver, text, expected):
    roles = resolver[0]
    assert roles.link_doc_paths(text) == expected


def test_bases_are_shown_by_their_public_names(resolver):
    roles, res, pkg, _ = resolver
    # AUROC's base RankingMetric is private: its public ancestor Metric is shown instead
    assert roles.public_bases(pkg["AUROC"].final_target, res) == [("Metric", "streammetrics._core.metric.Metric")]
    # a base outside the package is kept as written
    assert [name for name, _ in roles.public_bases(pkg["UnknownIdError"].final_target, res)] == ["ValueError", "KeyError"]
    # the extension stored them where the class template reads them
    assert pkg["AUROC"].extra["streammetrics"]["bases"] == [("Metric", "streammetrics._core.metric.Metric")]


def test_literal_block_marker_reads_as_a_colon(resolver):
    roles = resolver[0]
    text = "A drop-in (reference: 1.9)::\n\n    from x import y\n\nA ratio a::b stays."
    assert roles.literal_blocks(text) == "A drop-in (reference: 1.9):\n\n    from x import y\n\nA ratio a::b stays."
