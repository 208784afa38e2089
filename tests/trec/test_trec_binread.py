"""The binary-chunk readers of ``streammetrics trec`` (:mod:`streammetrics.trec.binread`,
:class:`~streammetrics.trec.compactqrels.CompactQrels`, :class:`~streammetrics.trec.runfile.RunBlocks`)
read what the text readers read: the same queries, documents, scores, line numbers, grades and
errors, whatever the chunk size, with comments, blank lines, CRLF and lone CR line ends, extra
fields, non-ASCII ids, lines longer than a chunk, ties and duplicates; and ``streammetrics trec``
prints the same on them as pytrec_eval / the per-query path."""

from __future__ import annotations

import io

import numpy as np
import pytest
import pytrec_eval
import retrieval_oracles as O
from hypothesis import given, settings
from hypothesis import strategies as st

import streammetrics.trec.compactqrels as CQ
import streammetrics.trec.evaluate as E
from streammetrics.trec import evaluate_files
from streammetrics.trec.compactqrels import CompactQrels, read_compact_qrels
from streammetrics.trec.readers import TrecFormatError, read_qrels_grades
from streammetrics.trec.runfile import NotGrouped, RunBlocks, read_run_grouped


def _write(path, lines: list[str], rng: np.random.Generator, newline: str = "\n") -> str:
    """Lines with blank and comment lines mixed in, ``newline`` line ends, maybe no final one."""
    out = []
    for line in lines:
        r = rng.random()
        if r < 0.05:
            out.append("")
        elif r < 0.1:
            out.append("  # comment " + line)
        out.append(line)
    text = newline.join(out) + (newline if rng.random() < 0.8 else "")
    path.write_bytes(text.encode("utf-8"))
    return str(path)


def _run_lines(rng: np.random.Generator, contiguous: bool, extra: bool) -> list[str]:
    lines = []
    for q in range(int(rng.integers(1, 7))):
        qid = ["q", "é", "x" * 300][q % 3] + str(q)  # ASCII, non-ASCII, longer than a small chunk
        for d in rng.permutation(15)[: int(rng.integers(1, 9))].tolist():
            score = ["1", "0.5", "-2.25", "1e-3", "7."][int(rng.integers(0, 5))]  # ties too
            tail = " extra field" if extra and rng.random() < 0.3 else ""
            lines.append(f"{qid}\tQ0 d{d}{'ü' * (d % 2)} {d} {score}  run{q}{tail}")
    return lines if contiguous else [lines[i] for i in rng.permutation(len(lines))]


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), chunk=st.sampled_from([1, 7, 64, 1 << 16]),
       newline=st.sampled_from(["\n", "\r\n", "\r"]), contiguous=st.booleans(), extra=st.booleans())  # fmt: skip
def test_run_blocks_read_what_the_text_reader_reads(tmp_path_factory, seed, chunk, newline, contiguous, extra):
    rng = np.random.default_rng(seed)
    path = _write(tmp_path_factory.mktemp("r") / "run", _run_lines(rng, contiguous, extra), rng, newline)
    want = read_run_grouped(path)
    blocks = RunBlocks(path, chunk_bytes=chunk, block_rows=int(rng.integers(1, 20)))
    try:
        got = [(b, i) for b in blocks for i in range(len(b.qids))]
    except NotGrouped:
        assert not contiguous  # a query reappears: the caller groups the run by an external sort
        return
    assert [b.qids[i] for b, i in got] == list(want.queries) and blocks.runid == want.runid
    for b, i in got:
        q = want.queries[b.qids[i]]
        a, z = int(b.bounds[i]), int(b.bounds[i + 1])
        assert [d.decode("utf-8") for d in b.docs[a:z]] == q.docs
        assert b.scores[a:z].tolist() == q.scores.tolist() and b.lines[a:z].tolist() == q.lines.tolist()


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), chunk=st.sampled_from([1, 9, 1 << 16]),
       newline=st.sampled_from(["\n", "\r\n"]))  # fmt: skip
def test_compact_qrels_equal_the_text_reader(tmp_path_factory, seed, chunk, newline):
    rng = np.random.default_rng(seed)
    judged = {(f"q{q}{'é' * (q % 2)}", f"d{d}"): str(int(rng.integers(-1, 4))) + ["", ".7", ".0"][d % 3]
              for q in range(5) for d in rng.permutation(12)[: int(rng.integers(1, 8))].tolist()}  # fmt: skip
    keys = list(judged)
    lines = [f"{q} 0 {d} {judged[(q, d)]}" for q, d in (keys[i] for i in rng.permutation(len(keys)))]
    path = _write(tmp_path_factory.mktemp("q") / "qrels", lines, rng, newline)
    want = {q: [g] for q, g in read_qrels_grades(path, integer=True).items()}
    got = read_compact_qrels(path, chunk_bytes=chunk)
    assert dict(got) == want and set(got) == set(want)
    assert got.counts(2).tolist() == [[sum(v >= 2 for v in want[q][0].values()),
                                       sum(0 <= v < 2 for v in want[q][0].values())] for q in got]  # fmt: skip
    # a document judged again later (after other lines) is the error of the text reader, same line
    q, d = keys[0]
    path2 = _write(tmp_path_factory.mktemp("q") / "qrels", [*lines, "zz 0 other 1", f"{q} 0 {d} 1"], rng)
    with pytest.raises(TrecFormatError) as expected:
        read_qrels_grades(path2)
    with pytest.raises(TrecFormatError, match="duplicate judgment") as found:
        read_compact_qrels(path2, chunk_bytes=chunk)
    assert str(found.value) == str(expected.value)


@pytest.mark.parametrize("text", ["1 0 a x\n", "1 0 a 1\n1 0 b inf\n", "1 0 a 1\n#c\n1 0 b\n",
                                  "1 0 a 1\n2 0 a 1\n1 0 a 3\n", "1 0 a 1 extra\n"])  # fmt: skip
def test_compact_qrels_errors_are_the_text_readers(tmp_path, text):
    path = tmp_path / "qrels.txt"
    path.write_text(text)
    with pytest.raises(TrecFormatError) as expected:
        read_qrels_grades(str(path))
    with pytest.raises(TrecFormatError) as found:
        read_compact_qrels(str(path))
    assert str(found.value) == str(expected.value)


def test_lookup_confirms_every_match_on_the_docno(monkeypatch):
    """With lookup keys of 1 bit, nearly every key collides: grades still come from the docno."""
    monkeypatch.setattr(CQ, "_LOW", 1)
    judged = {"q": {"a": 3}, "r": {"b": 1, "c": 2}}
    qrels = CompactQrels.from_dict(judged)
    rows = [("q", "a"), ("q", "zz"), ("q", "b"), (None, "a"), ("r", "c"), ("r", "a")]
    docs = [d.encode() for _, d in rows]
    query = np.array([-1 if q is None else qrels.index[q] for q, _ in rows])
    got = qrels.lookup(query, docs, np.fromiter(map(hash, docs), dtype=np.int64)).tolist()
    assert got == [CQ.MISSING if q is None else judged[q].get(d, CQ.MISSING) for q, d in rows]
    assert CQ.MISSING not in got[:1] and got.count(CQ.MISSING) == 4


@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), low=st.sampled_from([0, 1, 3, (1 << 40) - 1]),
       newline=st.sampled_from(["\n", "\r\n"]))  # fmt: skip
def test_trec_output_equals_pytrec_eval_and_the_per_query_path(tmp_path_factory, seed, low, newline):
    """Colliding lookup keys (``low``: the hash bits kept), CRLF files, comments: the block path
    prints what the per-query path prints, and its means are pytrec_eval's."""
    rng = np.random.default_rng(seed)
    qrels, run = O.random_trec(rng, 20, max_docs=12, tie_levels=int(rng.choice([3, 10**6])))
    base = tmp_path_factory.mktemp("e")
    qp = _write(base / "qrels", [f"{q} 0 {d} {g}" for q, ds in qrels.items() for d, g in ds.items()], rng,
                newline)  # fmt: skip
    rp = _write(base / "run", [f"{q} Q0 {d} 1 {s!r} r" for q, ds in run.items() for d, s in ds.items()], rng,
                newline)  # fmt: skip
    outputs = []
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(CQ, "_LOW", low)
        for fast in (True, False):
            if not fast:
                mp.setattr(E, "fast_path", lambda *a: False)
            sink = io.StringIO()
            got = evaluate_files(qp, rp, ["official"], per_query=True, digits=17, out=sink)
            outputs.append(sink.getvalue())
    assert outputs[0] == outputs[1]
    measures = {"map", "P", "recip_rank", "bpref", "Rprec", "iprec_at_recall"}
    per_q = pytrec_eval.RelevanceEvaluator(qrels, measures).evaluate(run)
    for name in ("map", "P_5", "recip_rank", "bpref", "Rprec", "iprec_at_recall_0.50"):
        assert got[name] == pytest.approx(np.mean([v[name] for v in per_q.values()]), abs=1e-12)
