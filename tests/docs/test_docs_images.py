"""The plots guide and the docs' images: the notebook table embedded in docs/plots.md is exactly
what ``MetricResults._repr_html_()`` produces for the code above it; every image the README and
the docs reference is in docs/images and is drawn by the mkdocs hook (docs/hooks/plot_images.py,
run by ``mkdocs build``) into the built site, never into docs/, the same bytes on every build."""

from __future__ import annotations

import importlib.util
import os
import re

import pytest

pytest.importorskip("matplotlib")

import streammetrics as sm  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MARK = "<!-- the notebook table of the code above"


def read(path: str) -> str:
    with open(os.path.join(ROOT, path), encoding="utf-8") as fh:
        return fh.read()


def test_plots_guide_notebook_table_is_what_the_code_above_it_shows():
    text = read(os.path.join("docs", "plots.md"))
    head, tail = text.split(MARK, 1)
    code = re.findall(r"```python\n(.*?)```", head, flags=re.S)[-1]
    table = tail.split("-->", 1)[1].strip().split("</table>", 1)[0] + "</table>"
    ns: dict = {"sm": sm}
    exec(compile(code, "docs/plots.md", "exec"), ns)  # noqa: S102 - the guide's own example
    assert table.replace("\n", "") == ns["res"]._repr_html_()


def referenced_images() -> set[str]:
    names = set()
    docs = [os.path.join(dp, f) for dp, _, fs in os.walk(os.path.join(ROOT, "docs")) for f in fs if f.endswith(".md")]
    for path in [os.path.join(ROOT, "README.md"), *docs]:
        with open(path, encoding="utf-8") as fh:
            names |= set(re.findall(r"!\[[^\]]*\]\((?:docs/)?images/([^)\s]+)\)", fh.read()))
    return names


def load_hook():
    spec = importlib.util.spec_from_file_location("plot_images_hook", os.path.join(ROOT, "docs", "hooks", "plot_images.py"))
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_referenced_image_is_committed_and_drawn_deterministically_by_the_hook(tmp_path):
    pytest.importorskip("pyarrow")
    names = referenced_images()
    assert {"roc_exact_and_bounded.png", "det.png", "pr_binned.png"} <= names
    for name in names:
        assert os.path.isfile(os.path.join(ROOT, "docs", "images", name)), name
    docs_dir = tmp_path / "docs"
    docs_dir.mkdir()
    load_hook().on_post_build({"config_file_path": os.path.join(ROOT, "mkdocs.yml"),
                               "docs_dir": str(docs_dir), "site_dir": str(tmp_path / "a")})
    assert not os.listdir(docs_dir)  # drawn into the built site: a build never rewrites docs/images
    drawn = set(os.listdir(tmp_path / "a" / "images"))
    assert names <= drawn
    # a second build draws the same bytes (the quick images; pr_binned.png is the CLI's own --plot)
    spec = importlib.util.spec_from_file_location("plot_images_script", os.path.join(ROOT, "examples", "plot_images.py"))
    assert spec is not None and spec.loader is not None
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    again = script.main(str(tmp_path / "b"), cli=False)
    assert again
    for path in again:
        name = os.path.basename(path)
        assert (tmp_path / "a" / "images" / name).read_bytes() == (tmp_path / "b" / name).read_bytes(), name
