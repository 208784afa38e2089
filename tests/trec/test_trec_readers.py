"""The TREC readers of ``streammetrics trec``: any line order, comments, extra fields, chunking."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from streammetrics.trec.readers import TrecFormatError, read_qrels_grades
from streammetrics.trec.runfile import read_run_grouped


def _noise(rng: np.random.Generator, lines: list[str]) -> list[str]:
    """Interleave blank and comment lines (a line's own text stays as is)."""
    out = []
    for line in lines:
        r = rng.random()
        if r < 0.1:
            out.append("")
        elif r < 0.2:
            out.append("# a comment " + line)
        elif r < 0.25:
            out.append("   #indented comment")
        out.append(line)
    return out


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), chunk=st.integers(1, 9))
def test_run_grouped_equals_a_naive_grouping(tmp_path_factory, seed, chunk):
    rng = np.random.default_rng(seed)
    rows = []
    for q in range(int(rng.integers(1, 6))):
        for d in rng.permutation(12)[: int(rng.integers(1, 8))]:
            extra = " junk fields" * int(rng.integers(0, 3))
            rows.append((f"q{q}", f"d{d}#x", float(rng.integers(0, 4)) / 2, f"run{q}", extra))
    order = rng.permutation(len(rows))
    lines = [f"{q} Q0 {d} 0 {s} {r}{e}" for q, d, s, r, e in (rows[i] for i in order)]
    lines = _noise(rng, lines)
    path = tmp_path_factory.mktemp("r") / "run.txt"
    path.write_text("\n".join(lines) + ("\n" if rng.random() < 0.5 else ""))
    got = read_run_grouped(str(path), chunk_lines=chunk)
    want: dict[str, tuple[list[str], list[float], list[int]]] = {}
    last = ""
    for lineno, line in enumerate(lines, start=1):
        parts = line.split()
        if not parts or parts[0].startswith("#"):
            continue
        w = want.setdefault(parts[0], ([], [], []))
        w[0].append(parts[2])
        w[1].append(float(parts[4]))
        w[2].append(lineno)
        last = parts[5]
    assert list(got.queries) == list(want) and got.runid == last
    for q, (docs, scores, linenos) in want.items():
        g = got.queries[q]
        assert g.docs == docs and g.scores.tolist() == scores and g.lines.tolist() == linenos


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), chunk=st.integers(1, 9))
def test_qrels_any_order_with_comments_equals_a_naive_read(tmp_path_factory, seed, chunk):
    rng = np.random.default_rng(seed)
    judged = {
        (f"q{q}", f"d{d}"): float(rng.integers(-1, 4)) + 0.5 * (rng.random() < 0.2)
        for q in range(4)
        for d in rng.permutation(10)[: int(rng.integers(1, 6))]
    }
    keys = list(judged)
    lines = [f"{q} 0 {d} {judged[(q, d)]}" for q, d in (keys[i] for i in rng.permutation(len(keys)))]
    path = tmp_path_factory.mktemp("q") / "qrels.txt"
    path.write_text("\n".join(_noise(rng, lines)) + "\n")
    got = read_qrels_grades(str(path), chunk_lines=chunk)
    assert {(q, d): g for q, docs in got.items() for d, g in docs.items()} == judged
    ints = read_qrels_grades(str(path), integer=True, chunk_lines=chunk)
    assert {(q, d): g for q, docs in ints.items() for d, g in docs.items()} == {
        k: int(v) for k, v in judged.items()
    }
    # the same document judged again in a later, separate block of its query is found, with its line
    q, d = keys[0]
    path.write_text("\n".join([*lines, "zz 0 other 1", f"{q} 0 {d} 1"]) + "\n")
    with pytest.raises(
        TrecFormatError, match=f"qrels.txt:{len(lines) + 2}: duplicate judgment of document '{d}'"
    ):
        read_qrels_grades(str(path), chunk_lines=chunk)


@pytest.mark.parametrize(
    "text,message",
    [
        ("1 0 a x\n", "qrels.txt:1: grade 'x' is not a number"),
        ("1 0 a 1\n1 0 b inf\n", "qrels.txt:2: grade 'inf' is not finite"),
        ("1 0 a 1\n#c\n1 0 b\n", "qrels.txt:3: expected 4 fields"),
    ],
)
def test_qrels_errors_name_the_line(tmp_path, text, message):
    path = tmp_path / "qrels.txt"
    path.write_text(text)
    with pytest.raises(TrecFormatError, match=message):
        read_qrels_grades(str(path))


@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_contiguous_runs_stream_and_any_order_gives_the_same_output(tmp_path_factory, seed):
    """A run with contiguous queries is evaluated query by query (RunStream); shuffled, it is
    grouped in memory: trec_eval's output is the same either way."""
    import io

    import retrieval_oracles as O

    from streammetrics.trec import evaluate_files
    from streammetrics.trec.runfile import NotGrouped, RunStream

    rng = np.random.default_rng(seed)
    qrels, run = O.random_trec(rng, 6)
    base = tmp_path_factory.mktemp("s")
    (base / "qrels").write_text(
        "".join(f"{q} 0 {d} {g}\n" for q, docs in qrels.items() for d, g in docs.items())
    )
    lines = [f"{q} Q0 {d} 1 {s} r" for q, docs in run.items() for d, s in docs.items()]
    (base / "sorted").write_text("\n".join(lines) + "\n")
    shuffled = [lines[i] for i in rng.permutation(len(lines))]
    (base / "shuffled").write_text("\n".join(shuffled) + "\n")
    assert [q for q, _ in RunStream(str(base / "sorted"), chunk_lines=3)] == list(run)
    outputs = []
    for name in ("sorted", "shuffled"):
        sink = io.StringIO()
        evaluate_files(
            str(base / "qrels"), str(base / name), ["all_trec"], per_query=True, complete=True, out=sink
        )
        outputs.append(sink.getvalue())
    assert outputs[0] == outputs[1]
    firsts = [line.split()[0] for line in shuffled]
    if any(q in firsts[: i - 1] and firsts[i - 1] != q for i, q in enumerate(firsts) if i):
        with pytest.raises(NotGrouped, match="reappears"):
            list(RunStream(str(base / "shuffled"), chunk_lines=3))
