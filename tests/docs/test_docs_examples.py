"""Every example of the guides (docs/*.md, docs/definitions/*.md) runs as written, on its own, as
the README's do (tests/_support/doc_blocks.py): each ```python block in a fresh namespace, each
``streammetrics ...`` command line from a clone; a block followed by a ```text block prints
exactly that. Intended fragments carry ``<!-- notest: reason -->`` before their fence."""

from __future__ import annotations

import doc_blocks
import pytest

PAGES = sorted(str(p.relative_to(doc_blocks.ROOT)) for p in [*(doc_blocks.ROOT / "docs").glob("*.md"),
                                                            *(doc_blocks.ROOT / "docs" / "definitions").glob("*.md")])
BLOCKS = [b for page in PAGES for b in doc_blocks.blocks(page)]
NOTEST_MAX = 6  # intended fragments stay few; each names its reason


def test_the_guides_have_examples_and_few_exceptions():
    assert len(BLOCKS) >= 30
    fragments = [(b.id, b.notest) for b in BLOCKS if b.notest]
    assert len(fragments) <= NOTEST_MAX, fragments


@pytest.mark.parametrize("block", BLOCKS, ids=[b.id for b in BLOCKS])
def test_guide_example_runs_as_written(block, tmp_path):
    if block.notest:
        pytest.skip(f"{block.id}: an intended fragment ({block.notest})")
    reason = doc_blocks.skip_reason(block)
    if reason:
        pytest.skip(reason)
    out = doc_blocks.run(block, doc_blocks.workdir(tmp_path))
    if block.expected is not None:
        assert doc_blocks.same_output(out, block.expected), f"{block.id} printed:\n{out}"


def test_the_runner_finds_blocks_outputs_fragments_and_fails_a_broken_example(tmp_path):
    page = tmp_path / "page.md"
    page.write_text(
        "```python\nprint(6 * 7)\n```\n\n```text\n42\n```\n\n"
        "<!-- notest: needs a GPU -->\n```python\nimport nothing_here\n```\n\n"
        "```bash\npip install x\ncd sub\nstreammetrics trec a b \\\n    -m map  # comment\n```\n\n"
        "```python\nprint(undefined_name)\n```\n"
    )
    found = doc_blocks.blocks(str(page))
    assert [(b.kind, b.expected, b.notest) for b in found] == [
        ("python", "42\n", None), ("python", None, "needs a GPU"), ("command", None, None), ("python", None, None)]
    assert found[2].code == "streammetrics trec a b      -m map  # comment" and found[2].cwd == "sub"
    assert doc_blocks.same_output(doc_blocks.run(found[0], tmp_path), found[0].expected)
    with pytest.raises(NameError):
        doc_blocks.run(found[3], tmp_path)
    assert doc_blocks.skip_reason(doc_blocks.Block("p", 1, "python", "import no_such_package_xyz")) is not None
