"""Every example of README.md runs as written, on its own (tests/_support/doc_blocks.py says how): each
```python block in a fresh namespace, each ``streammetrics ...`` command line as ``python -m
streammetrics ...`` from a clone, exit code 0; a block followed by a ```text block prints exactly
that. The Quick-start block holds exactly the two commands ``.ci/run`` runs in fresh venvs."""

from __future__ import annotations

import re

import doc_blocks
import pytest

BLOCKS = doc_blocks.blocks("README.md")


def test_readme_is_a_front_page():
    text = (doc_blocks.ROOT / "README.md").read_text(encoding="utf-8")
    assert len(text.encode("utf-8")) <= 20_000
    quick = text.split("## Quick start", 1)[1]
    fence = re.search(r"```bash\n(.*?)```", quick, flags=re.S)
    assert fence is not None and quick.index("```bash") < quick.find("\n## ")
    commands = fence.group(1).strip().splitlines()
    assert len(commands) == 2 and all(c.startswith("pip install ") for c in commands)
    assert sum(b.kind == "python" for b in BLOCKS) >= 4 and sum(b.kind == "command" for b in BLOCKS) >= 3
    assert "example.qrels" in text and "example.run" in text
    assert not [b.id for b in BLOCKS if b.notest], "every README example runs"


@pytest.mark.parametrize("block", BLOCKS, ids=[b.id for b in BLOCKS])
def test_readme_example_runs_as_written(block, tmp_path):
    reason = doc_blocks.skip_reason(block)
    if reason:
        pytest.skip(reason)
    out = doc_blocks.run(block, doc_blocks.workdir(tmp_path))
    if block.expected is not None:
        assert doc_blocks.same_output(out, block.expected), f"{block.id} printed:\n{out}"
