"""The JSON Lines nesting guard (pyarrow's reader crashes the process on deep nesting): it refuses a
file exactly when a value is nested deeper than ``MAX_DEPTH`` -- brackets inside strings, escaped
quotes and lines split across read chunks do not fool it -- and names the line."""

from __future__ import annotations

import gzip
import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

pytest.importorskip("pyarrow")

from streammetrics.cli import jsondepth  # noqa: E402
from streammetrics.cli.errors import InputError  # noqa: E402


def nested(levels: int, kind: str, leaf: str) -> str:
    """A JSON value of ``levels`` lists or objects around the string ``leaf``, as text (json.dumps
    itself recurses too deeply for the depths tested)."""
    open_, close = ("[", "]") if kind == "list" else ('{"k": ', "}")
    return open_ * levels + json.dumps(leaf) + close * levels


TRICKY = st.text(alphabet='[]{}"\\ab\n', max_size=30)  # json.dumps escapes quotes, backslashes, newlines


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rows=st.lists(st.tuples(st.one_of(st.integers(0, 40), st.integers(995, 1005), st.integers(0, 1100)),
                                       st.sampled_from(["list", "dict"]), TRICKY),
                     min_size=1, max_size=6),
       chunk=st.sampled_from([7, 64, 1000, 1 << 20]), compress=st.booleans())
def test_refuses_exactly_the_too_deep_files(tmp_path_factory, monkeypatch, rows, chunk, compress):
    monkeypatch.setattr(jsondepth, "CHUNK", chunk)  # small chunks split lines and escapes
    lines = [f'{{"y": 1, "s": {json.dumps(text)}, "x": {nested(levels, kind, text)}}}\n'
             for levels, kind, text in rows]
    data = "".join(lines).encode()
    path = tmp_path_factory.mktemp("depth") / ("rows.jsonl.gz" if compress else "rows.jsonl")
    path.write_bytes(gzip.compress(data) if compress else data)
    too_deep = [i for i, (levels, _, _) in enumerate(rows) if 1 + levels > jsondepth.MAX_DEPTH]  # row = 1
    if too_deep:
        with pytest.raises(InputError, match=f"line {too_deep[0] + 1}: a value is nested more than"):
            jsondepth.check_depth(str(path))
    else:
        jsondepth.check_depth(str(path))


def test_brackets_in_strings_and_long_lines(tmp_path, monkeypatch):
    path = tmp_path / "s.jsonl"
    path.write_text(json.dumps({"y": 1, "s": "[" * 5000 + '\\"{' * 3000}) + "\n")
    jsondepth.check_depth(str(path))  # brackets inside a string are not nesting
    # a line is not held in memory beyond MAX_LINE (pyarrow refuses lines longer than its block anyway)
    monkeypatch.setattr(jsondepth, "MAX_LINE", 1 << 20)
    monkeypatch.setattr(jsondepth, "CHUNK", 1 << 16)
    path.write_text('{"y": 1}\n{"y": 1, "s": "' + "a" * (3 << 20) + '"}\n')
    with pytest.raises(InputError, match="line 2 is longer than 1 MiB"):
        jsondepth.check_depth(str(path))
