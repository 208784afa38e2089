"""Every example of the guides (docs/*.md, docs/definitions/*.md) runs as written, on its own, as
the README's do (tests/doc_blocks.py): each ```python block in a fresh namespace, each
``streammetrics ...`` command line from a clone; a block followed by a ```text block prints
exactly that. Intended fragments carry ``<!-- notest: reason -->`` before their fence."""

from __future__ import annotations

import pytest

from tests import doc_blocks

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
