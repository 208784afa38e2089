"""Runs in any line order are grouped by query in bounded memory (an external sort through
temporary files): a run shuffled line by line prints exactly what the sorted run prints."""

from __future__ import annotations

import io
import os
from pathlib import Path

import numpy as np
import pytest
import retrieval_oracles as O
from hypothesis import given, settings
from hypothesis import strategies as st

from streammetrics.__main__ import main
from streammetrics.trec import evaluate_files
from streammetrics.trec.runfile import SpilledRun, read_run_grouped


def _write(tmp_path, qrels, run, rng=None):
    qp, rp = tmp_path / "qrels", tmp_path / ("shuffled" if rng is not None else "run")
    qp.write_text("".join(f"{q} 0 {d} {g}\n" for q, docs in qrels.items() for d, g in docs.items()))
    lines = [f"{q} Q0 {d} {i + 1} {s!r} run{q}" for q, docs in run.items() for i, (d, s) in enumerate(docs.items())]
    if rng is not None:
        lines = [lines[i] for i in rng.permutation(len(lines))]
        lines.insert(len(lines) // 2, "# a comment line")
    rp.write_text("".join(line + "\n" for line in lines))
    return str(qp), str(rp)


@settings(max_examples=8, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), memory=st.sampled_from([1, 2, 7, 40, 10**6]))
def test_a_run_shuffled_line_by_line_prints_the_same(tmp_path_factory, seed, memory):
    rng = np.random.default_rng(seed)
    qrels, run = O.random_trec(rng, 15, max_docs=10)
    tmp = tmp_path_factory.mktemp("s")
    qp, sorted_run = _write(tmp, qrels, run)
    _, shuffled = _write(tmp, qrels, run, rng)
    outputs = []
    for path in (sorted_run, shuffled):
        sink = io.StringIO()
        evaluate_files(qp, path, ["all_trec", "nDCG@10"], per_query=True, digits=17, out=sink, memory_lines=memory)
        outputs.append(sink.getvalue())
    runid_sorted = [line for line in outputs[0].splitlines() if line.startswith("runid")]
    runid_shuffled = [line for line in outputs[1].splitlines() if line.startswith("runid")]
    body = [[line for line in out.splitlines() if not line.startswith("runid")] for out in outputs]
    assert body[0] == body[1] and len(body[0]) > 20
    assert runid_sorted and runid_shuffled  # the run id of each file's last line (they differ)
    last_shuffled = Path(shuffled).read_text().splitlines()[-1].split()[5]
    assert runid_shuffled[0].split("\t")[2] == last_shuffled


@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), memory=st.integers(1, 60))
def test_spilled_groups_equal_the_in_memory_grouping(tmp_path_factory, seed, memory):
    rng = np.random.default_rng(seed)
    qrels, run = O.random_trec(rng, 8, max_docs=9)
    tmp = tmp_path_factory.mktemp("g")
    _, path = _write(tmp, qrels, run, rng)
    want = read_run_grouped(path)
    spilled = SpilledRun(path, memory_lines=memory, tmpdir=str(tmp))
    got = dict(iter(spilled))
    assert list(got) == sorted(want.queries, key=lambda q: q.encode())
    for q, lines in want.queries.items():
        assert got[q].docs == lines.docs
        np.testing.assert_array_equal(got[q].scores, lines.scores)
        np.testing.assert_array_equal(got[q].lines, lines.lines)
    assert spilled.runid == want.runid
    assert [p for p in os.listdir(tmp) if p.startswith("streammetrics-trec-")] == []  # temporary files removed


def test_memory_lines_option(tmp_path, capsys):
    rng = np.random.default_rng(0)
    qrels, run = O.random_trec(rng, 6, max_docs=8)
    qp, sorted_run = _write(tmp_path, qrels, run)
    _, shuffled = _write(tmp_path, qrels, run, rng)
    outs = []
    for path, memory in ((sorted_run, "1000"), (shuffled, "3")):
        assert main(["trec", qp, path, "-q", "-m", "map", "-m", "P(rel=2)@5", "--memory-lines", memory]) == 0
        outs.append(capsys.readouterr().out)
    assert outs[0] == outs[1] and outs[0].count("\n") > 6
    assert main(["trec", qp, shuffled, "--memory-lines", "0"]) == 2
    assert "expected a positive integer" in capsys.readouterr().err


class _OpenFiles:
    """``open`` that records, at each call on a spill file, how many spill files are open and alive."""

    def __init__(self, root: Path, real) -> None:
        self.root, self.real, self.open, self.most_open, self.most_alive = root, real, set(), 0, 0

    def __call__(self, file, *args, **kwargs):
        fh = self.real(file, *args, **kwargs)
        spill = Path(str(file)).parent
        if isinstance(file, str | os.PathLike) and spill.name.startswith("streammetrics-trec-"):
            self.open = {f for f in self.open if not f.closed} | {fh}
            self.most_open = max(self.most_open, len(self.open))
            self.most_alive = max(self.most_alive, len(os.listdir(spill)))
        return fh


@pytest.mark.parametrize("fan_in", [2, 5, 64, 1000])
def test_memory_lines_1_keeps_few_spill_files(tmp_path, monkeypatch, fan_in):
    import builtins

    import streammetrics.trec.spill as S

    monkeypatch.setattr(S, "MERGE_FAN_IN", fan_in)
    rng = np.random.default_rng(fan_in)
    n = 1500
    qrels = {f"q{i}": {"d0": 1} for i in range(30)}
    run = {q: {f"d{j}": float(rng.integers(0, 5)) for j in range(n // 30)} for q in qrels}
    _, path = _write(tmp_path, qrels, run, rng)
    tracker = _OpenFiles(tmp_path, builtins.open)
    monkeypatch.setattr(builtins, "open", tracker)
    got = dict(iter(SpilledRun(path, memory_lines=1, tmpdir=str(tmp_path))))
    monkeypatch.undo()
    want = read_run_grouped(path)
    assert list(got) == sorted(want.queries, key=lambda q: q.encode())
    for q, lines in want.queries.items():
        assert got[q].docs == lines.docs
        np.testing.assert_array_equal(got[q].lines, lines.lines)
    assert tracker.most_open <= fan_in + 1  # the merged files and the one written
    assert tracker.most_alive <= S.ALIVE_RUNS * fan_in + 1  # before: one file per line (1500)
    assert [p for p in os.listdir(tmp_path) if p.startswith("streammetrics-trec-")] == []


@pytest.mark.parametrize("chunks, fan_in", [(3, 4), (4, 4), (5, 4), (9, 4), (17, 4), (40, 3)])
def test_the_merges_rewrite_the_fewest_lines(tmp_path, monkeypatch, chunks, fan_in):
    """At the end, only as many of the smallest runs as bring the count to ``fan_in`` are merged
    first: a run of up to ``fan_in`` chunks is merged once; every run gives the same rows."""
    import streammetrics.trec.spill as S

    written = []
    real = S._write
    monkeypatch.setattr(S, "_write", lambda path, rows: written.append(real(path, rows)) or written[-1])
    with S.spill_directory(str(tmp_path)) as tmp:
        runs = S.SpillRuns(tmp, fan_in=fan_in)
        want = []
        for c in range(chunks):
            rows = sorted(((f"q{(c * 7 + i) % 5}", f"d{c}-{i}", 1.0, c * 10 + i) for i in range(c % 3 + 1)),
                          key=lambda r: (r[0].encode(), r[3]))  # fmt: skip
            want += rows
            runs.add(rows)
        with runs.merged() as merged:
            got = list(merged)
        spilled = sum(written[:chunks])
    assert got == sorted(want, key=lambda r: (r[0].encode(), r[3]))
    rewritten = sum(written[chunks:])
    if chunks <= fan_in:
        assert rewritten == 0
    elif chunks <= S.ALIVE_RUNS * fan_in and chunks - fan_in + 1 <= fan_in:
        sizes = sorted(c % 3 + 1 for c in range(chunks))  # one pre-merge of the smallest runs
        assert rewritten == sum(sizes[: chunks - fan_in + 1]) < spilled
