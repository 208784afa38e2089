"""ir_measures names in ``streammetrics trec``: each equals its trec_eval measure; ERR (gdeval's) and RBP
against brute-force references of their definitions."""

from __future__ import annotations

import io

import numpy as np
import pytest
import retrieval_oracles as O
from hypothesis import given, settings
from hypothesis import strategies as st

from streammetrics.cli.trec import main
from streammetrics.trec import evaluate_files
from streammetrics.trec.irnames import translate
from streammetrics.trec.perquery import per_query_values

PAIRS = [
    ("AP", "map", "map"), ("AP@10", "map_cut.10", "map_cut_10"), ("nDCG", "ndcg", "ndcg"),
    ("nDCG@5", "ndcg_cut.5", "ndcg_cut_5"), ("P@5", "P.5", "P_5"), ("R@10", "recall.10", "recall_10"),
    ("RR", "recip_rank", "recip_rank"), ("Rprec", "Rprec", "Rprec"), ("Bpref", "bpref", "bpref"),
    ("NumRet", "num_ret", "num_ret"), ("NumRel", "num_rel", "num_rel"),
    ("NumRelRet", "num_rel_ret", "num_rel_ret"), ("iprec@0.3", "iprec_at_recall.0.3", "iprec_at_recall_0.30"),
    ("infAP", "infAP", "infAP"),
]  # fmt: skip


def _write(tmp_path, qrels, run, name="run.txt"):
    qp, rp = tmp_path / "qrels.txt", tmp_path / name
    qp.write_text("".join(f"{q} 0 {d} {g}\n" for q, docs in qrels.items() for d, g in docs.items()))
    lines = [f"{q} Q0 {d} {i + 1} {s!r} r" for q, docs in run.items() for i, (d, s) in enumerate(docs.items())]
    rp.write_text("".join(line + "\n" for line in lines))
    return str(qp), str(rp)


def _lines(fn) -> dict[tuple[str, str], str]:
    sink = io.StringIO()
    fn(sink)
    out = {}
    for line in sink.getvalue().splitlines():
        name, qid, value = line.split("\t")
        out[(name.rstrip(), qid)] = value
    return out


@settings(max_examples=8, deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_each_ir_name_equals_its_trec_eval_measure(tmp_path_factory, seed):
    rng = np.random.default_rng(seed)
    qp, rp = _write(tmp_path_factory.mktemp("q"), *O.random_trec(rng, 10, max_docs=14))
    ir_args, rename = translate([p[0] for p in PAIRS])
    ours = _lines(lambda s: evaluate_files(qp, rp, ir_args, rename=rename, per_query=True, digits=17, out=s))
    ref = _lines(lambda s: evaluate_files(qp, rp, [p[1] for p in PAIRS], per_query=True, digits=17, out=s))
    qids = {q for _, q in ref}
    assert "all" in qids and len(qids) > 1
    for ir, _, value_name in PAIRS:
        for q in qids:
            assert ours[(ir, q)] == ref[(value_name, q)], (ir, q)


def test_rr_at_k_is_recip_rank_of_the_cut_run(tmp_path):
    rng = np.random.default_rng(3)
    qp, rp = _write(tmp_path, *O.random_trec(rng, 20, max_docs=14))
    for k in (1, 3, 10):
        a, r = translate([f"RR@{k}"])
        ours = _lines(lambda s, a=a, r=r: evaluate_files(qp, rp, a, rename=r, per_query=True, digits=17, out=s))
        ref = _lines(lambda s, k=k: evaluate_files(qp, rp, ["recip_rank"], max_docs=k, per_query=True, digits=17, out=s))
        assert {q: v for (_, q), v in ours.items()} == {q: v for (_, q), v in ref.items()}


def _ranking(run_docs: dict[str, float]) -> list[str]:
    # trec_eval's order: float32 score descending, then document id descending
    return sorted(run_docs, key=lambda d: (np.float32(run_docs[d]), d), reverse=True)


def _err(grades: list[int], k: int) -> float:
    """gdeval's ERR@k (ir_measures' ERR): gains (2^g - 1) / 2^4, negative grades gain 0."""
    total, still = 0.0, 1.0
    for r, g in enumerate(grades[:k], start=1):
        stop = (2 ** max(g, 0) - 1) / 2**4
        total += still * stop / r
        still *= 1 - stop
    return total


def _rbp(rels: list[bool], p: float) -> float:
    return (1 - p) * sum(p**i for i, rel in enumerate(rels) if rel)


def _judged(docs: list[str], judged: dict[str, int], k: int) -> float:
    top = docs[:k]
    return sum(d in judged for d in top) / len(top) if top else 0.0


@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), p=st.sampled_from([0.5, 0.8, 0.95]))
def test_err_rbp_judged_against_definitions(tmp_path_factory, seed, p):
    rng = np.random.default_rng(seed)
    qrels, run = O.random_trec(rng, 10, max_docs=14)
    qp, rp = _write(tmp_path_factory.mktemp("q"), qrels, run)
    names = ["ERR@3", "ERR@20", f"RBP(p={p})", "Judged@5"]
    pq = per_query_values(qp, [rp], names)
    for qi, q in enumerate(pq.qids):
        docs = _ranking(run[q])
        grades = [qrels[q].get(d, 0) for d in docs]
        want = {
            "ERR@3": _err(grades, 3),
            "ERR@20": _err(grades, 20),
            f"RBP(p={p})": _rbp([g >= 1 for g in grades], p),
            "Judged@5": _judged(docs, qrels[q], 5),
        }
        got = dict(zip(pq.names, pq.values[0, :, qi].tolist(), strict=True))
        assert got == pytest.approx(want, rel=1e-12, abs=1e-15), q


def test_rbp_default_p_and_cli_names(tmp_path, capsys):
    qp, rp = _write(tmp_path, {"q1": {"a": 1, "b": 0, "c": 2}}, {"q1": {"a": 3.0, "b": 2.0, "c": 1.0}})
    assert main(["trec", qp, rp, "-m", "RBP", "-m", "P@2", "-m", "AP", "-m", "P.1", "-q"]) == 0
    rows = _lines(lambda s: s.write(capsys.readouterr().out))
    assert float(rows[("RBP", "all")]) == pytest.approx(0.2 * (1 + 0.8**2), abs=1e-4)
    assert rows[("P@2", "q1")] == "0.5000" and rows[("P_1", "q1")] == "1.0000"
    assert float(rows[("AP", "all")]) == pytest.approx((1 + 2 / 3) / 2, abs=1e-4)


@pytest.mark.parametrize("bad", ["RBP(p=1.5)", "P@0", "iprec@1.5"])
def test_bad_ir_names_are_one_line_errors(tmp_path, capsys, bad):
    qp, rp = _write(tmp_path, {"q1": {"a": 1}}, {"q1": {"a": 1.0}})
    assert main(["trec", qp, rp, "-m", bad]) == 2
    err = capsys.readouterr().err
    assert bad in err and len(err.strip().splitlines()) == 1
