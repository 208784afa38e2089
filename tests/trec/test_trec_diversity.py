"""ndeval's diversity measures (``streammetrics.trec.diversity``) against pyndeval (NIST's ndeval.c
wrapped), to 1e-12: pyndeval returns unrounded doubles. Random subtopic qrels with graded
judgments, documents judged for some subtopics only, queries missing from the run or the qrels,
heavy score ties; the command (``streammetrics trec``) and the functions."""

from __future__ import annotations

import io
import math
import random
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from streammetrics.cli.trec import main
from streammetrics.trec.diversity import diversity_values, evaluate_diversity, parse_diversity, rank_run
from streammetrics.trec.diversity_files import evaluate_diversity_files

# pyndeval's names -> ours
_PYND = {"ERR-IA": "ERR_IA", "nERR-IA": "nERR_IA", "alpha-DCG": "alpha_DCG", "alpha-nDCG": "alpha_nDCG",
         "P-IA": "P_IA", "strec": "StRecall"}  # fmt: skip
_ALPHA = {"ERR-IA", "nERR-IA", "alpha-DCG", "alpha-nDCG"}
_CUTS = (1, 2, 3, 5, 10, 20)


def _random_case(rng: random.Random) -> tuple[list[tuple[str, str, str, int]], list[tuple[str, str, float]]]:
    """Subtopic qrels (line order random: subtopics interleaved across queries) and a run with
    heavy ties; queries of the qrels missing from the run and of the run missing from the qrels."""
    qrels: list[tuple[str, str, str, int]] = []
    run: list[tuple[str, str, float]] = []
    for q in range(rng.randint(1, 6)):
        qid = str(rng.randint(0, 9)) + "q" + str(q)
        seen = set()
        for _ in range(rng.randint(0, 25)):
            d = f"d{rng.randint(0, 30)}"
            for s in rng.sample("abcdefg", rng.randint(1, 4)):  # judged for some subtopics only
                if (d, s) not in seen:
                    seen.add((d, s))
                    qrels.append((qid, s, d, rng.choice([0, 1, 1, 2, 3])))
        if rng.random() < 0.85:
            for d in {f"d{rng.randint(0, 40)}" for _ in range(rng.randint(1, 30))}:
                run.append((qid, d, float(rng.randint(-2, 4)) / rng.choice([1, 3])))
    for d in ("x1", "x2"):
        run.append(("only_in_run", d, 1.0))
    rng.shuffle(qrels)
    return qrels, run


def _pyndeval(qrels, run, rel, alpha, beta, names):  # type: ignore[no-untyped-def]
    pyndeval = pytest.importorskip("pyndeval")
    by_q: dict[str, list[tuple[str, str, float]]] = {}
    for r in run:
        by_q.setdefault(r[0], []).append(r)
    flat = [r for q in sorted(by_q) for r in by_q[q]]  # pyndeval wants each query's lines together
    ev = pyndeval.RelevanceEvaluator(qrels, names, relevance_level=rel, alpha=alpha, beta=beta)
    return ev.evaluate(flat)


def _ours_names(names: list[str], rel: int, alpha: float, beta: float) -> list[str]:
    out = []
    for n in names:
        if n in ("NRBP", "nNRBP"):
            out.append(f"{n}(rel={rel}, alpha={alpha!r}, beta={beta!r})")
        elif n == "MAP-IA":
            out.append(f"AP_IA(rel={rel})")
        else:
            base, k = n.split("@")
            extra = f", alpha={alpha!r}" if base in _ALPHA else ""
            out.append(f"{_PYND[base]}(rel={rel}{extra})@{k}")
    return out


_NAMES = [f"{m}@{k}" for m in _PYND for k in _CUTS] + ["NRBP", "nNRBP", "MAP-IA"]


def _close(a: float, b: float) -> bool:
    return (math.isnan(a) and math.isnan(b)) or abs(a - b) <= 1e-12


def _qrels_dict(qrels):  # type: ignore[no-untyped-def]
    """{qid: {doc: {subtopic: grade}}} with subtopics numbered in line order, as pyndeval numbers
    them (and as the file reader does)."""
    index: dict[str, int] = {}
    out: dict[str, dict[str, dict[int, int]]] = {}
    for qid, s, d, g in qrels:
        out.setdefault(qid, {}).setdefault(d, {})[index.setdefault(s, len(index))] = g
    return out


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), alpha=st.sampled_from([0.5, 0.3, 0.0, 1.0, 0.77, 0.1]),
       beta=st.sampled_from([0.5, 0.9, 0.0, 1.0, 0.25]), rel=st.sampled_from([0, 1, 2, 3]))  # fmt: skip
def test_functions_equal_pyndeval(seed: int, alpha: float, beta: float, rel: int) -> None:
    rng = random.Random(seed)
    qrels, run = _random_case(rng)
    if not qrels:
        return
    ref = _pyndeval(qrels, run, rel, alpha, beta, _NAMES)
    runs: dict[str, dict[str, float]] = {}
    for qid, d, sc in run:
        runs.setdefault(qid, {})[d] = sc
    per_query, means = evaluate_diversity(runs, _qrels_dict(qrels), _ours_names(_NAMES, rel, alpha, beta))
    assert set(per_query) == set(ref)  # the queries of both (pyndeval's, ndeval's default)
    for qid, values in per_query.items():
        for name, v in zip(_NAMES, values, strict=True):
            assert _close(v, ref[qid][name]), (qid, name, v, ref[qid][name])
    for i, name in enumerate(_NAMES):
        col = [ref[q][name] for q in sorted(ref)]
        if col:
            assert _close(means[i], math.fsum(col) / len(col)) or abs(means[i] - sum(col) / len(col)) <= 1e-12


def _write(tmp: Path, qrels, run) -> tuple[str, str]:  # type: ignore[no-untyped-def]
    qp, rp = tmp / "qrels", tmp / "run"
    qp.write_text("".join(f"{q} {s} {d} {g}\n" for q, s, d, g in qrels))
    rp.write_text("".join(f"{q} Q0 {d} {i} {sc!r} sys\n" for i, (q, d, sc) in enumerate(run)))
    return str(qp), str(rp)


def _parse(text: str) -> dict[tuple[str, str], float]:
    out = {}
    for line in text.splitlines():
        name, qid, value = line.split("\t")
        out[name.strip(), qid] = float(value)
    return out


@pytest.mark.parametrize("seed", range(12))
def test_command_equals_pyndeval(tmp_path: Path, seed: int, capsys: pytest.CaptureFixture[str]) -> None:
    rng = random.Random(seed)
    qrels, run = _random_case(rng)
    rng.shuffle(run)  # any line order: grouped by the external sort
    if not qrels:
        qrels = [("1", "a", "d1", 1)]
    alpha, beta, rel = rng.choice([0.5, 0.3]), rng.choice([0.5, 0.8]), rng.choice([1, 2])
    ref = _pyndeval(qrels, run, rel, alpha, beta, _NAMES)
    ours = _ours_names(_NAMES, rel, alpha, beta)
    qp, rp = _write(tmp_path, qrels, run)
    args = ["trec", qp, rp, "-q", "--digits", "17", "--memory-lines", "7"] + [a for n in ours for a in ("-m", n)]
    for complete in (False, True):
        rc = main(args + (["-c"] if complete else []))
        out = capsys.readouterr()
        if not ref and not complete:
            assert rc == 2 and "no query" in out.err
            continue
        assert rc == 0, out.err
        got = _parse(out.out)
        for name, o in zip(_NAMES, ours, strict=True):
            for qid in ref:
                assert _close(got[o, qid], ref[qid][name]), (qid, name)
            qids = sorted({q for q, *_ in qrels}) if complete else sorted(ref)
            col = [ref[q][name] if q in ref else 0.0 for q in qids]
            mean = sum(col) / len(col)
            assert _close(got[o, "all"], mean) or abs(got[o, "all"] - mean) <= 1e-12, (name, complete)


def test_command_averages_as_ir_measures_with_c(tmp_path: Path) -> None:
    """ir_measures' pyndeval provider averages over every query of the qrels (0 for a query the
    run lacks): ``-c``."""
    ir_measures = pytest.importorskip("ir_measures")
    pytest.importorskip("pyndeval")
    rng = random.Random(5)
    qrels, run = _random_case(rng)
    qp, rp = _write(tmp_path, qrels, run)
    names = ["alpha_nDCG@5", "alpha_nDCG@20", "ERR_IA@10", "nERR_IA@20", "P_IA@5", "StRecall@10",
             "AP_IA", "NRBP", "nNRBP", "alpha_DCG(alpha=0.2)@10"]  # fmt: skip
    means = evaluate_diversity_files(qp, rp, names, complete=True, out=io.StringIO())
    for n in names:  # one call each: ir_measures hands its run iterator to the first pyndeval call
        m = ir_measures.parse_measure(n)  # only (alpha=0.2 beside alpha=0.5 would score 0 there)
        ref = ir_measures.calc_aggregate([m], [ir_measures.Qrel(q, d, g, s) for q, s, d, g in qrels],
                                         [ir_measures.ScoredDoc(q, d, sc) for q, d, sc in run])  # fmt: skip
        assert _close(means[n], ref[m]), n


def test_judged_only_and_max_docs_equal_pyndeval_on_the_cut_run(tmp_path: Path) -> None:
    """judged_only drops the documents the query's qrels do not name (ir_measures' filter; its own
    judged_only fails on a run iterator): per measure and for all (-J); -M keeps the top M."""
    rng = random.Random(11)
    qrels, run = _random_case(rng)
    qp, rp = _write(tmp_path, qrels, run)
    judged = {(q, d) for q, _, d, _ in qrels}
    plain = _ours_names(_NAMES, 1, 0.5, 0.5)
    own = [o if o.startswith(("NRBP", "nNRBP", "StRecall")) else o.replace("(rel=1", "(rel=1, judged_only=True")
           for o in plain]  # fmt: skip
    by_q: dict[str, list[tuple[str, str, float]]] = {}
    for r in run:
        by_q.setdefault(r[0], []).append(r)
    top3 = [r for rows in by_q.values() for r in sorted(rows, key=lambda r: (-r[2], r[1]))[:3]]
    cases = [  # (our names, options, the run pyndeval sees, the measures compared)
        (own, {}, [r for r in run if (r[0], r[1]) in judged], [n for n, o in zip(_NAMES, own, strict=True) if "judged" in o]),
        (plain, {"judged_only": True}, [r for r in run if (r[0], r[1]) in judged], _NAMES),
        (plain, {"max_docs": 3}, top3, _NAMES),
    ]
    for ours, options, seen, compared in cases:
        ref = _pyndeval(qrels, seen, 1, 0.5, 0.5, _NAMES)
        out = io.StringIO()
        evaluate_diversity_files(qp, rp, ours, per_query=True, digits=17, out=out, **options)  # type: ignore[arg-type]
        got = _parse(out.getvalue())
        assert ref
        for name, o in zip(_NAMES, ours, strict=True):
            if name in compared:
                for qid in ref:
                    assert _close(got[o, qid], ref[qid][name]), (qid, name, options)


def _slow(ranked: list[str], judg: dict[str, dict[int, int]], k: int, alpha: float) -> tuple[float, float]:
    """alpha-DCG@k and alpha-nDCG@k from the definition, with the plain quadratic greedy ideal."""
    rel = {d: [s for s in sorted(g) if g[s] >= 1] for d, g in judg.items()}
    n_sub = len({s for ss in rel.values() for s in ss})

    def gains(order: list[str]) -> list[float]:
        seen: dict[int, int] = {}
        out = []
        for d in order:
            g = 0.0
            for s in rel.get(d, []):
                g += (1 - alpha) ** seen.get(s, 0)
                seen[s] = seen.get(s, 0) + 1
            out.append(g)
        return out

    left, ideal_order, seen2 = set(rel), [], {}  # type: ignore[var-annotated]
    while left:
        def score(d: str) -> float:
            return sum((1 - alpha) ** seen2.get(s, 0) for s in rel[d])

        best = max(left, key=lambda d: (score(d), d))
        ideal_order.append(best)
        left.discard(best)
        for s in rel[best]:
            seen2[s] = seen2.get(s, 0) + 1
    disc = [1.0] + [1 / math.log2(r + 1) for r in range(2, k + 1)]
    norm = sum(n_sub * (1 - alpha) ** i * disc[i] for i in range(k))
    run_g, ideal_g = gains(ranked)[:k], gains(ideal_order)[:k]
    dcg = sum(g * disc[i] for i, g in enumerate(run_g))
    idcg = sum(g * disc[i] for i, g in enumerate(ideal_g))
    return (dcg / norm if k > 1 else dcg), (dcg / idcg if dcg else 0.0)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), k=st.integers(1, 45), alpha=st.sampled_from([0.5, 0.25, 0.75]))
def test_deep_cutoffs_follow_the_definition(seed: int, k: int, alpha: float) -> None:
    """Cutoffs deeper than ndeval's 20: the same definition (a slow oracle of the formulas, with the
    plain quadratic greedy for the ideal ranking)."""
    rng = random.Random(seed)
    docs = [f"d{i:02d}" for i in range(rng.randint(1, 40))]
    judg = {d: {s: rng.choice([0, 1]) for s in rng.sample(range(6), rng.randint(1, 3))} for d in docs}
    ranked = rng.sample(docs + ["u1", "u2"], rng.randint(1, len(docs) + 2))
    dcg, ndcg = diversity_values(ranked, judg, [f"alpha_DCG(alpha={alpha})@{k}", f"alpha_nDCG(alpha={alpha})@{k}"])
    if not any(g for gs in judg.values() for g in gs.values()):
        assert dcg == ndcg == 0.0
        return
    want = _slow(ranked, judg, k, alpha)
    assert math.isclose(dcg, want[0], rel_tol=1e-9, abs_tol=1e-12)
    assert math.isclose(ndcg, want[1], rel_tol=1e-9, abs_tol=1e-12)


def test_per_query_api_with_named_subtopics_and_no_relevant_document() -> None:
    judg = {"A": {"x": 1}, "B": {"y": 2, "x": 0}, "C": {"z": 0}}
    ranked = rank_run({"C": 1.0, "B": 3.0, "A": 3.0, "U": 2.0})
    assert ranked == ["A", "B", "U", "C"]
    p, s, ap = diversity_values(ranked, judg, ["P_IA@2", "StRecall@1", "AP_IA"])
    assert (p, s, ap) == (2 / 4, 1 / 2, (1 / 1 + 1 / 2) / 2)  # x found at 1, y at 2
    assert diversity_values(ranked, judg, ["P_IA(rel=2)@2"]) == [1 / 2]
    none = diversity_values(ranked, {"A": {"x": 0}}, ["alpha_nDCG@5", "NRBP", "nNRBP", "AP_IA"])
    assert none[:2] == [0.0, 0.0] and math.isnan(none[2]) and none[3] == 0.0  # ndeval's 0/0


def test_complete_gives_a_missing_query_0_in_every_measure_as_ndeval_c() -> None:
    # ndeval -c averages over every qrels topic; a topic the run lacks gets 0 in every column
    # (its TopicVal), nNRBP included -- while a retrieved topic without a relevant document
    # keeps nNRBP's 0/0
    qrels = {"1": {"A": {"a": 0}}, "2": {"B": {"b": 0}}}
    names = ["alpha_nDCG@5", "nNRBP"]
    per_query, means = evaluate_diversity({"1": {"A": 1.0}}, qrels, names, complete=True)
    assert per_query["2"] == [0.0, 0.0]
    assert per_query["1"][0] == 0.0 and math.isnan(per_query["1"][1]) and math.isnan(means[1])
    per_query, means = evaluate_diversity({}, qrels, names, complete=True)
    assert per_query == {"1": [0.0, 0.0], "2": [0.0, 0.0]} and means == [0.0, 0.0]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("alpha_nDCG", "needs a cutoff"),
        ("alpha_nDCG@0", "cutoff must be in"),
        ("alpha_nDCG(alpha=1.5)@5", "alpha must be in [0, 1]"),
        ("NRBP(beta=-0.1)", "beta must be in [0, 1]"),
        ("NRBP@5", "takes no parameter 'cutoff'"),
        ("StRecall(judged_only=True)@5", "takes no parameter 'judged_only'"),
        ("P_IA(cutoff=True)", "cutoff must be int"),
        ("AP_IA(rel=1.5)", "rel must be int"),
        ("alpha_nDCG(cutoff=5)@5", "cutoff given twice"),
        ("ERR@5", "not a diversity measure"),
    ],
)
def test_bad_measure_names_are_one_line_errors(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=message.replace("[", r"\[").replace("]", r"\]")):
        parse_diversity(text)


def test_aliases_and_defaults() -> None:
    assert parse_diversity("MAP_IA").kind == "AP_IA"
    assert parse_diversity("α_nDCG@5").kind == "alpha_nDCG"
    m = parse_diversity("nERR_IA(alpha=0.5)@10")
    assert (m.kind, m.cutoff, m.alpha, m.beta, m.rel, m.judged_only) == ("nERR_IA", 10, 0.5, 0.5, None, False)


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), alpha=st.sampled_from([0.3, 0.5, 0.7, 0.9, 1.0, 0.0]))
def test_ideal_ranking_ties_equal_pyndeval(seed: int, alpha: float) -> None:
    """The greedy ideal ranking under heavy ties: many documents relevant to the same subtopics,
    ids of mixed length and case and non-ASCII (ties go to the largest id, bytewise), and subtopic
    ids numbered in another order than the query's own (pyndeval numbers them over the file)."""
    rng = random.Random(seed)
    ids = ["d9", "d10", "D1", "z", "é", "éa", "a", "ab", "b"] + [f"x{i}" for i in range(rng.randint(0, 12))]
    qrels = [("0", "s2", "other", 1), ("0", "s1", "other", 1)]  # subtopics numbered s2, s1, ... first
    for d in ids:
        for s in rng.sample(["s1", "s2", "s3", "s4"], rng.randint(1, 3)):
            qrels.append(("1", s, d, rng.choice([0, 1, 1, 1])))
    run = [("1", d, float(rng.randint(0, 2))) for d in rng.sample(ids, rng.randint(1, len(ids)))]
    run += [("0", "other", 1.0)]
    names = ["alpha-nDCG@5", "alpha-nDCG@20", "nERR-IA@10", "nERR-IA@20", "nNRBP"]
    ref = _pyndeval(qrels, run, 1, alpha, 0.5, names)
    runs: dict[str, dict[str, float]] = {}
    for qid, d, sc in run:
        runs.setdefault(qid, {})[d] = sc
    per_query, _ = evaluate_diversity(runs, _qrels_dict(qrels), _ours_names(names, 1, alpha, 0.5))
    for qid in ref:
        for name, v in zip(names, per_query[qid], strict=True):
            assert _close(v, ref[qid][name]), (qid, name, v, ref[qid][name])
