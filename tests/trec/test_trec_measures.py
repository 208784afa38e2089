"""``streammetrics trec``'s measures and input handling against pytrec_eval and trec_eval's rules."""

from __future__ import annotations

import math

import numpy as np
import pytest
import pytrec_eval
import retrieval_oracles as O
from hypothesis import given, settings
from hypothesis import strategies as st

from streammetrics.cli.trec import main
from streammetrics.trec import TrecMeasure, evaluate_files, trec_batch
from streammetrics.trec._kernels import recall_cutoffs

# every measure pytrec_eval (trec_eval 9.0.x) computes, except runid / relstring / num_q
PYTREC = sorted(set(pytrec_eval.supported_measures) - {"runid", "relstring", "num_q"})
GEOMETRIC = {"gm_map", "gm_bpref"}  # pytrec_eval gives log values per query; trec_eval the summary only
COUNTS = {"num_ret", "num_rel", "num_rel_ret", "num_nonrel_judged_ret"}


def _write(tmp_path, qrels, run, shuffle=None):
    qp, rp = tmp_path / "qrels.txt", tmp_path / "run.txt"
    qp.write_text("".join(f"{q} 0 {d} {g}\n" for q, docs in qrels.items() for d, g in docs.items()))
    lines = [f"{q} Q0 {d} {i + 1} {s!r} run_x" for q, docs in run.items() for i, (d, s) in enumerate(docs.items())]
    if shuffle is not None:
        lines = [lines[i] for i in shuffle.permutation(len(lines))]
    rp.write_text("".join(line + "\n" for line in lines))
    return str(qp), str(rp)


def _rows(text: str) -> dict[tuple[str, str], str]:
    rows = {}
    for line in text.splitlines():
        name, qid, value = line.split("\t")
        rows[(name.rstrip(), qid)] = value
    return rows


@settings(max_examples=12, deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_every_measure_matches_pytrec_eval(tmp_path_factory, seed):
    rng = np.random.default_rng(seed)
    qrels, run = O.random_trec(rng, 12, max_docs=15)
    for docs in qrels.values():  # pytrec_eval crashes (heap corruption) on a query judged only negatively
        if max(docs.values()) < 0:
            docs[next(iter(docs))] = 0
    run["unjudged_query"] = {"dx": 1.0}  # not in the qrels: skipped
    qp, rp = _write(tmp_path_factory.mktemp("q"), qrels, run, shuffle=rng)  # any line order
    out = _capture(lambda sink: evaluate_files(qp, rp, ["all_trec"], per_query=True, digits=17, out=sink))
    rows, summary = _rows(out[0]), out[1]
    want = pytrec_eval.RelevanceEvaluator(qrels, set(PYTREC)).evaluate({q: run[q] for q in qrels})
    for q, vals in want.items():
        for name, v in vals.items():
            if name in GEOMETRIC or name == "runid":
                continue
            assert abs(float(rows[(name, q)]) - v) <= 1e-12, (name, q, rows[(name, q)], v)
    for name in want[next(iter(want))]:
        per_q = [want[q][name] for q in want]
        if name in GEOMETRIC:
            expected = math.exp(float(np.mean(per_q)))
        elif name in COUNTS:
            expected = sum(per_q)
        else:
            expected = float(np.mean(per_q))
        assert abs(float(summary[name]) - expected) <= 1e-12, name


def _capture(fn):
    import io

    sink = io.StringIO()
    result = fn(sink)
    return sink.getvalue(), result


@pytest.mark.parametrize(
    "c,R,v9,v9_fused,v10",
    [(0.3, 77, 23, 24, 23), (0.7, 3, 2, 3, 2), (0.1, 474, 48, 48, 47), (0.5, 77, 39, 39, 39), (0.25, 2, 1, 1, 1)],
)
def test_recall_cutoff_rules(c, R, v9, v9_fused, v10):
    assert recall_cutoffs([c], R, 9) == [v9]
    assert recall_cutoffs([c], R, 9, fused=True) == [v9_fused]
    assert recall_cutoffs([c], R, 10) == [v10]


def test_ties_break_by_docno_descending_and_float32_in_9(tmp_path, capsys):
    qp, rp = tmp_path / "q", tmp_path / "r"
    qp.write_text("1 0 a 1\n1 0 b 0\n1 0 c 0\n")
    # a and b tie; 'b' > 'a' so b ranks first: a relevant at rank 2
    rp.write_text("1 Q0 a 1 0.5 r\n1 Q0 b 2 0.5 r\n1 Q0 c 3 0.9 r\n")
    assert main(["trec", str(qp), str(rp), "-m", "recip_rank", "-q"]) == 0
    assert _rows(capsys.readouterr().out)[("recip_rank", "1")] == "0.3333"
    # 0.5 and 0.5 + 1e-9 are equal as float32 (9.x ties them: b first), distinct as doubles (10.0)
    rp.write_text("1 Q0 a 1 0.500000001 r\n1 Q0 b 2 0.5 r\n1 Q0 c 3 0.9 r\n")
    for version, want in (("9", "0.3333"), ("10", "0.5000")):
        assert main(["trec", str(qp), str(rp), "-m", "recip_rank", "--trec-version", version]) == 0
        assert _rows(capsys.readouterr().out)[("recip_rank", "all")] == want


def test_comments_extra_fields_and_any_order_read_as_trec_eval(tmp_path, capsys):
    qp, rp = tmp_path / "q", tmp_path / "r"
    qp.write_text("# judged by hand\n2 0 x 1\n1 0 a 1\n#1 0 b 1\n1 0 c 2\n")
    rp.write_text(
        "# header\n1 Q0 a 1 0.2 run_a extra fields\n2 Q0 x 1 0.9 run_a\n  # indented comment\n\n"
        "1 Q0 c 2 0.8 run_a\n2 Q0 y 2 0.1 run_b\n"
    )
    assert main(["trec", str(qp), str(rp), "-q", "-m", "num_ret", "-m", "num_rel", "-m", "map", "-m", "runid"]) == 0
    rows = _rows(capsys.readouterr().out)
    assert rows[("num_ret", "1")] == "2" and rows[("num_rel", "1")] == "2" and rows[("map", "1")] == "1.0000"
    assert rows[("num_ret", "2")] == "2" and rows[("runid", "all")] == "run_b"  # the last line's run id
    lines = capsys.readouterr().out  # nothing left
    assert lines == ""


def test_duplicates_and_malformed_lines_name_the_line(tmp_path, capsys):
    qp, rp = tmp_path / "q", tmp_path / "r"
    qp.write_text("1 0 a 1\n")
    rp.write_text("1 Q0 a 1 1 r\n2 Q0 a 1 1 r\n1 Q0 a 2 0.5 r\n")
    assert main(["trec", str(qp), str(rp)]) == 2
    assert "r:3: duplicate document 'a' for query '1'" in capsys.readouterr().err
    # -M keeps the top documents only: a duplicate below the cut is not an error (as in trec_eval)
    assert main(["trec", str(qp), str(rp), "-M", "1", "-m", "num_ret"]) == 0
    assert _rows(capsys.readouterr().out)[("num_ret", "all")] == "1"
    rp.write_text("1 Q0 a 1 r\n")
    assert main(["trec", str(qp), str(rp)]) == 2
    assert "r:1: expected 6 fields" in capsys.readouterr().err
    rp.write_text("9 Q0 a 1 1 r\n")
    assert main(["trec", str(qp), str(rp)]) == 2
    assert "no query of the run" in capsys.readouterr().err


@pytest.mark.parametrize(
    "arg,message",
    [
        ("P.0,5", "cutoffs must be positive"),
        ("P.5,5", "duplicate cutoffs"),
        ("ndcg.1", "malformed pair"),
        ("map.", "empty parameter"),
        ("all_prefs", "needs judgments in the 'prefs' format"),
        ("qrels_jg", "needs judgments in the 'qrels_jg' format"),
        ("nonsense", "is not supported"),
    ],
)
def test_bad_measure_arguments(tmp_path, capsys, arg, message):
    qp, rp = tmp_path / "q", tmp_path / "r"
    qp.write_text("1 0 a 1\n")
    rp.write_text("1 Q0 a 1 1 r\n")
    assert main(["trec", str(qp), str(rp), "-m", arg]) == 2
    assert message in capsys.readouterr().err


def test_judged_only_summary_off_and_gain_pairs(tmp_path, capsys):
    qp, rp = tmp_path / "q", tmp_path / "r"
    qp.write_text("1 0 a 1\n1 0 b 0\n1 0 c 2\n")
    rp.write_text("1 Q0 x 1 0.9 r\n1 Q0 a 2 0.8 r\n1 Q0 c 3 0.7 r\n")
    assert main(["trec", str(qp), str(rp), "-q", "-n", "-J", "-m", "P.1", "-m", "num_ret"]) == 0
    out = capsys.readouterr().out
    assert "\tall\t" not in out  # -n: no summary
    rows = _rows(out)
    assert rows[("P_1", "1")] == "1.0000" and rows[("num_ret", "1")] == "2"  # x (unjudged) dropped
    # gains: grade 1 -> 3, grade 2 -> 1: the ideal ranking puts a first
    assert main(["trec", str(qp), str(rp), "-m", "ndcg.1=3,2=1", "-m", "ndcg"]) == 0
    rows = _rows(capsys.readouterr().out)  # as in trec_eval, the first -m with parameters wins
    dcg = 3 / math.log2(3) + 1 / math.log2(4)
    assert list(rows) == [("ndcg_1=3,2=1", "all")]
    assert rows[("ndcg_1=3,2=1", "all")] == f"{dcg / (3 + 1 / math.log2(3)):.4f}"
    assert main(["trec", str(qp), str(rp), "-m", "ndcg"]) == 0
    rows = _rows(capsys.readouterr().out)
    assert rows[("ndcg", "all")] == f"{(1 / math.log2(3) + 2 / math.log2(4)) / (2 + 1 / math.log2(3)):.4f}"


def _random_parameters(rng: np.random.Generator) -> list[str]:
    """trec_eval parameter strings (as pytrec_eval parses them) for the measures that take some;
    not utility's coefficients: pytrec_eval keeps parameters in a set, losing their order."""

    def cuts(hi: int) -> str:
        return ",".join(str(k) for k in sorted(rng.choice(np.arange(1, hi), size=int(rng.integers(1, 4)), replace=False)))

    def fractions() -> str:
        return ",".join(f"{f:.2f}" for f in sorted(rng.choice(np.arange(0, 101), size=3, replace=False) / 100))

    return [
        f"P.{cuts(20)}", f"recall.{cuts(20)}", f"map_cut.{cuts(20)}", f"ndcg_cut.{cuts(20)}",
        f"relative_P.{cuts(20)}", f"success.{cuts(20)}", f"iprec_at_recall.{fractions()}",
        f"11pt_avg.{fractions()}", f"Rprec_mult.{fractions()}", f"set_F.{rng.uniform(0.1, 3):.2f}",
    ]  # fmt: skip


@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), level=st.integers(1, 3), judged_only=st.booleans())
def test_parameters_relevance_level_and_judged_only_match_pytrec_eval(tmp_path_factory, seed, level, judged_only):
    """pytrec_eval's measures with random trec_eval parameters, ``relevance_level`` (-l) and
    ``judged_docs_only_flag`` (-J), per query, to 1e-12 (ndcg's gain pairs are left out:
    pytrec_eval aborts on them; utility's order-dependent coefficients too, see above)."""
    rng = np.random.default_rng(seed)
    qrels, run = O.random_trec(rng, 12, max_docs=15)
    for docs in qrels.values():  # pytrec_eval crashes (heap corruption) on a query judged only negatively
        if max(docs.values()) < 0:
            docs[next(iter(docs))] = 0
    params = _random_parameters(rng)
    plain = sorted(set(PYTREC) - {p.split(".")[0] for p in params})
    qp, rp = _write(tmp_path_factory.mktemp("p"), qrels, run, shuffle=rng)
    out, _ = _capture(lambda sink: evaluate_files(qp, rp, params + plain + ["num_q"], per_query=True,
                                                  rel_level=level, judged_only=judged_only, digits=17,
                                                  out=sink))  # fmt: skip
    rows = _rows(out)
    evaluator = pytrec_eval.RelevanceEvaluator(
        qrels, set(params + plain + ["num_q"]), relevance_level=level, judged_docs_only_flag=judged_only
    )
    want = evaluator.evaluate({q: run[q] for q in qrels})
    # one value per measure, named by its parameters as given (trec_eval; pytrec_eval keys it plainly)
    printed = {p.split(".")[0]: p.replace(".", "_", 1) for p in params if p.startswith(("11pt_avg", "set_F"))}
    compared = set()
    for q, vals in want.items():
        for name, v in vals.items():
            if name in GEOMETRIC or name == "num_q":  # trec_eval prints these as a summary only
                continue
            got = rows[(printed.get(name, name), q)]
            compared.add(name)
            if math.isnan(v):  # trec_eval's 0/0 when -J leaves no document: printed as trec_eval does
                assert judged_only and name.startswith(("iprec_at_recall", "11pt_avg")), (name, q)
                assert rows[("num_ret", q)] == "0" and got.strip() in ("nan", "-nan"), (name, q, got)
                continue
            assert abs(float(got) - v) <= 1e-12, (name, q, got, v)
    assert int(rows[("num_q", "all")]) == len(want)
    # every measure pytrec_eval has (but the summary-only ones) was compared per query, the
    # parameterised ones under their parameter names (P_3, Rprec_mult_0.25, ...)
    bases = {n if n in PYTREC else n.rsplit("_", 1)[0] for n in compared}
    assert bases == set(PYTREC) - GEOMETRIC - {"num_q"}


@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), level=st.integers(1, 3))
def test_yaap_dcg_and_ideal_dcg_against_their_definitions(tmp_path_factory, seed, level):
    """trec_eval measures pytrec_eval lacks and all_trec leaves out: ``yaap`` (Robertson 2012,
    trec_eval's m_yaap.c) and ``dcg`` / ``ideal_dcg`` (m_ndcg.c, default and given gains), per query
    against plain-Python definitions; ``ndcg`` = dcg / ideal_dcg."""
    rng = np.random.default_rng(seed)
    qrels, run = O.random_trec(rng, 10, max_docs=15)
    qp, rp = _write(tmp_path_factory.mktemp("y"), qrels, run)
    args = ["yaap", "dcg", "ideal_dcg", "ndcg"]
    rows = _rows(_capture(lambda s: evaluate_files(qp, rp, args, per_query=True, rel_level=level, digits=17,
                                                   out=s))[0])  # fmt: skip
    gained = _rows(_capture(lambda s: evaluate_files(qp, rp, ["dcg.1=3,2=9"], per_query=True, digits=17,
                                                     out=s))[0])  # fmt: skip
    for q, docs in run.items():
        grades = [qrels[q].get(d, -1) for d in docs]
        ranked = O.rank(grades, list(docs.values()), list(docs))
        R = sum(1 for g in qrels[q].values() if g >= level)
        hits, s = 0, 0.0
        for i, g in enumerate(ranked, start=1):
            if g >= level:
                hits += 1
                s += hits / i
        assert abs(float(rows[("yaap", q)]) - math.log((1 + s) / (1 + R - s))) <= 1e-12, q
        for gain, table, name in ((lambda g: g, rows, "dcg"), (lambda g: {1: 3, 2: 9}.get(g, g), gained,
                                                                  "dcg_1=3,2=9")):  # fmt: skip
            dcg = sum(gain(g) / math.log2(i + 2) for i, g in enumerate(ranked) if g > 0)
            ideal = sorted((gain(g) for g in qrels[q].values() if g > 0), reverse=True)
            idcg = sum(x / math.log2(i + 2) for i, x in enumerate(ideal))
            assert abs(float(table[(name, q)]) - dcg) <= 1e-12, q
            if table is rows:
                assert abs(float(rows[("ideal_dcg", q)]) - idcg) <= 1e-12, q
                assert abs(float(rows[("ndcg", q)]) - (dcg / idcg if idcg else 0.0)) <= 1e-12, q
    acc = TrecMeasure("yaap", rel_level=level, per_query=True)
    trec_batch(qrels, run).feed(acc)
    assert np.allclose(acc.per_query_values(), [float(rows[("yaap", q)]) for q in sorted(run)], rtol=0, atol=1e-12)


def test_judged_only_leaving_no_document_prints_what_trec_eval_prints(tmp_path, capsys):
    """trec_eval's ``iprec_at_recall`` / ``11pt_avg`` of a query that ``-J`` leaves without
    documents is C's 0.0 / 0.0, printed by ``printf("%6.4f")``: ``-nan`` on x86-64 (the default
    NaN has its sign bit set), ``nan`` on arm64 -- at the cutoffs of 0 relevant documents only
    (the others stay 0), and the summary (the sum over queries / num_q) is that NaN too."""
    qp, rp = tmp_path / "qrels", tmp_path / "run"
    qp.write_text("q1 0 a 1\nq1 0 b 0\nq2 0 c 1\n")
    rp.write_text("q1 Q0 a 1 2.0 r\nq1 Q0 b 2 1.0 r\nq2 Q0 zz 1 1.0 r\n")  # q2: only an unjudged document
    args = ["-J", "-q", "-m", "iprec_at_recall..0,.5,1", "-m", "11pt_avg", "-m", "map"]
    assert main(["trec", str(qp), str(rp), *args]) == 0
    rows = {(n.strip(), q): v for n, q, v in (line.split("\t") for line in capsys.readouterr().out.splitlines())}
    with np.errstate(invalid="ignore"):
        c_nan = np.float64(0.0) / np.float64(0.0)  # what C's 0.0 / 0.0 gives on this machine
    text = "  -nan" if math.copysign(1.0, float(c_nan)) < 0 else "   nan"
    for q in ("q2", "all"):
        assert rows[("iprec_at_recall_0.00", q)] == text and rows[("11pt_avg", q)] == text, q
    assert rows[("iprec_at_recall_0.50", "q2")] == "0.0000" and rows[("iprec_at_recall_1.00", "all")] == "0.5000"
    assert rows[("map", "all")] == "0.5000" and rows[("iprec_at_recall_0.00", "q1")] == "1.0000"
