"""A line far longer than a read chunk costs time and memory proportional to its length (issue #27):
:func:`streammetrics.trec.binread.byte_chunks` copies each byte a bounded number of times, not once
per chunk read after it, and ``streammetrics trec`` reads such files to the same output."""

from __future__ import annotations

import io

import pytest

import streammetrics.trec.binread as B
from streammetrics.trec import evaluate_files


class _Counted(bytes):
    """Bytes that tally the bytes every ``+`` involving them produces (what a concatenation copies)."""

    copied = 0

    def __add__(self, other):  # type: ignore[override]
        _Counted.copied += len(self) + len(other)
        return _Counted(bytes(self) + bytes(other))

    def __radd__(self, other):
        _Counted.copied += len(self) + len(other)
        return _Counted(bytes(other) + bytes(self))


class _Reader(io.BytesIO):
    def read(self, n=-1):  # type: ignore[override]
        return _Counted(super().read(n))


@pytest.mark.parametrize("line_chunks", [1, 2, 300])
def test_a_long_line_is_copied_a_bounded_number_of_times(tmp_path, monkeypatch, line_chunks):
    chunk = 64
    data = b"q1 0 d1 1\n" + b"q1 0 " + b"x" * (chunk * line_chunks) + b" 0\nq2 0 d3 2\nq2 0 d4"
    path = tmp_path / "qrels"
    path.write_bytes(data)
    monkeypatch.setattr(B, "open", lambda p, mode: _Reader(data), raising=False)
    _Counted.copied = 0
    chunks = list(B.byte_chunks(str(path), chunk_bytes=chunk))
    assert b"".join(chunks) == data
    assert all(c.endswith(b"\n") for c in chunks[:-1]) and not chunks[-1].endswith(b"\n")
    # the pieces of a line are joined once: at most the file's size copied by concatenation
    # (the quadratic reader copied about line_chunks**2 / 2 chunks)
    assert _Counted.copied <= 2 * len(data)


@pytest.mark.parametrize("where", ["qrels", "run", "shuffled run"])
def test_a_line_longer_than_many_chunks_reads_as_a_short_one(tmp_path, where):
    long_id = "d" + "x" * (1 << 20)  # 16 chunks of the run reader, 64 of CHUNK_BYTES / 4
    ids = {"qrels": long_id, "run": long_id, "shuffled run": long_id}[where]
    outs = []
    for doc in (ids, "dshort"):
        qp, rp = tmp_path / "q", tmp_path / "r"
        qp.write_text(f"q1 0 d1 1\nq1 0 {doc} 1\nq2 0 d3 2\n")
        lines = ["q1 Q0 d1 1 2.5 sys", f"q1 Q0 {doc} 2 1.5 sys", "q2 Q0 d3 1 0.5 sys"]
        if where == "shuffled run":
            lines = [lines[1], lines[2], lines[0]]
        rp.write_text("\n".join(lines) + "\n")
        for judged_only in (False, True):  # the block reader and the per-query one
            sink = io.StringIO()
            evaluate_files(str(qp), str(rp), ["map", "P.2"], per_query=True, judged_only=judged_only, out=sink,
                           memory_lines=1)  # fmt: skip
            outs.append(sink.getvalue())
    assert outs[:2] == outs[2:] and "map" in outs[0]
