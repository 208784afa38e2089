"""ir_measures' C/W/L user-model measures (its cwl_eval provider: ``NERR8``, ``NERR9``, ``NERR10``,
``NERR11``, ``SDCG``, ``INST``, ``INSQ``, ``BPM``, each with ``min_rel`` / ``max_rel``) in
``streammetrics trec`` and ``TrecMeasures``, against ir_measures with cwl-eval itself (issue #33).

ir_measures ranks by score alone (a stable sort of the run's order); ours ranks as trec_eval (ties
by document id descending): ir_measures is given each query's documents in that order, while our
run files list them shuffled. Values are compared unrounded (cwl_eval's own ``value``, not its
4-decimal print) to 1e-12."""

from __future__ import annotations

import io
import logging
import math

import numpy as np
import pytest
import retrieval_oracles as O
from helpers import trec_files
from hypothesis import given, settings
from hypothesis import strategies as st

from streammetrics.__main__ import main
from streammetrics.trec import TrecMeasures, evaluate_files, trec_batch

pytest.importorskip("cwl")
ir_measures = pytest.importorskip("ir_measures")
logging.getLogger("ir_measures.cwl_eval").disabled = True  # (its warnings on unseen grades)

TOL = 1e-12
#: ours -> ir_measures' measure object (its parser reads no negative numbers: min_rel=-1 is built)
CWL = {
    "NERR8(max_rel=3)@5": None,
    "NERR8(max_rel=2, min_rel=1)@1": None,
    "NERR9(max_rel=3)@10": None,
    "NERR9(max_rel=1)@3": None,
    "NERR10(max_rel=3)": None,
    "NERR10(p=0.5, max_rel=2)": None,
    "NERR10(p=1, max_rel=4)": None,
    "NERR11(max_rel=3)": None,
    "NERR11(T=2.5, max_rel=3)": None,
    "SDCG(max_rel=3)@10": None,
    "SDCG(max_rel=2, dcg='log2')@3": None,
    "INST(max_rel=3)": None,
    "INST(T=3, max_rel=3)": None,
    "INST(T=0.5, max_rel=1)": None,
    "INSQ(T=2, max_rel=3)": None,
    "INSQ(T=0.5, max_rel=3, min_rel=-1)": ir_measures.INSQ(T=0.5, max_rel=3, min_rel=-1),
    "BPM(max_rel=3)@20": None,
    "BPM(T=1.5, max_rel=3)@4": None,
    "BPM(T=0.5, max_rel=2, min_rel=1)@2": None,
    "NERR9(max_rel=2, min_rel=-2)@4": ir_measures.NERR9(cutoff=4, max_rel=2, min_rel=-2),
}


def _irm(name: str):
    return CWL.get(name) or ir_measures.parse_measure(name)


def _trec_order(run: dict[str, dict[str, float]]) -> dict[str, dict[str, float]]:
    """Each query's documents in trec_eval's order (score descending, id descending)."""
    return {q: dict(sorted(sorted(d.items(), reverse=True), key=lambda kv: -kv[1])) for q, d in run.items()}


def _shuffled(run: dict[str, dict[str, float]], rng: np.random.Generator) -> dict[str, dict[str, float]]:
    return {q: dict(list(d.items())[i] for i in rng.permutation(len(d))) for q, d in run.items()}


def _printed(qp: str, rp: str, names, **kw) -> dict[tuple[str, str], float]:
    sink = io.StringIO()
    evaluate_files(qp, rp, names, per_query=True, complete=True, digits=17, out=sink, **kw)
    rows = (line.split("\t") for line in sink.getvalue().splitlines())
    return {(n.rstrip(), q): float(v) for n, q, v in rows}


def _random_case(rng: np.random.Generator, n: int) -> tuple[dict, dict]:
    """Random qrels and run with graded and negative grades (some above max_rel), heavy ties,
    unjudged documents, a query of the qrels missing from the run and one of the run missing
    from the qrels."""
    qrels, run = O.random_trec(rng, n, max_docs=14, grades=(-2, -1, 0, 0, 1, 2, 3, 4), tie_levels=3)
    del run["q1"]
    run["q_unjudged"] = {"d1": 1.0, "d2": 1.0}
    return qrels, run


@settings(max_examples=8, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), version=st.sampled_from([9, 10]))
def test_cwl_measures_equal_ir_measures_cwl_eval(tmp_path_factory, seed, version):
    """Per query and mean (``-c``: ir_measures averages over the qrels' queries, 0 for one
    missing from the run, and ignores the run's queries without judgments)."""
    rng = np.random.default_rng(seed)
    qrels, run = _random_case(rng, 16)
    qp, rp = trec_files(tmp_path_factory.mktemp("cwl"), qrels, _shuffled(run, rng))
    got = _printed(qp, rp, list(CWL), trec_version=version)
    ref = ir_measures.cwl_eval.calc([_irm(n) for n in CWL], qrels, _trec_order(run))
    names = {_irm(n): n for n in CWL}
    for m in ref.per_query:
        key = (names[m.measure], m.query_id)
        if m.query_id in run:
            assert abs(got[key] - m.value) <= TOL, key
        else:  # -c: 0 in the mean (trec_eval 10 prints a line for it, 9 none)
            assert got.get(key, 0.0) == 0.0 and m.value == 0.0
            assert (key in got) == (version == 10), key
    assert not any(q == "q_unjudged" for _, q in got)
    for m, want in ref.aggregated.items():
        assert abs(got[(names[m], "all")] - want) <= TOL, names[m]


def test_cwl_measures_past_cwl_eval_depth_equal_ir_measures(tmp_path):
    """cwl_eval evaluates the top 1000 documents padded to 1000 ranks: rankings of 999, 1000 and
    1500 documents, with cutoffs and targets beyond 1000."""
    rng = np.random.default_rng(5)
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    for qi, n in enumerate((1500, 1000, 999, 1)):
        docs = [f"d{i:05d}" for i in range(n)]
        qrels[f"q{qi}"] = {d: int(rng.integers(-1, 4)) for d in docs if rng.random() < 0.4} or {"x": 1}
        run[f"q{qi}"] = {d: float(n - i) for i, d in enumerate(docs)}
    names = ["NERR8(max_rel=3)@1500", "NERR9(max_rel=2)@999", "NERR10(p=1, max_rel=3)", "NERR11(T=200, max_rel=3)",
             "SDCG(max_rel=3)@1200", "SDCG(max_rel=3)@1000", "INST(T=300, max_rel=3)", "INSQ(T=100, max_rel=3)",
             "BPM(T=150, max_rel=3)@1001", "BPM(T=15, max_rel=3)@1001", "BPM(T=2000, max_rel=3)@5000"]  # fmt: skip
    qp, rp = trec_files(tmp_path, qrels, run)
    got = _printed(qp, rp, names, trec_version=10)
    ref = ir_measures.cwl_eval.calc([_irm(n) for n in names], qrels, run)
    by = {_irm(n): n for n in names}
    for m in ref.per_query:
        assert abs(got[(by[m.measure], m.query_id)] - m.value) <= TOL, (by[m.measure], m.query_id)


STREAMED = ["INST(T=2, max_rel=3)", "NERR10(p=0.8, max_rel=3)", "SDCG(max_rel=3)@5", "BPM(T=1, max_rel=3)@10",
            "NERR8(max_rel=2)@3", "NERR11(max_rel=3)", "INSQ(max_rel=3)", "NERR9(max_rel=3)@4", "map"]  # fmt: skip


@settings(max_examples=8, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), parts=st.integers(1, 4), shards=st.integers(1, 3),
       wrap=st.sampled_from(["plain", "window", "decayed"]))
def test_cwl_streams_merges_and_reloads_equal_to_one_shot_and_ir_measures(seed, parts, shards, wrap):
    """``TrecMeasures`` with the C/W/L measures: any batch split, merge across shards and
    save/load round trip equals the one shot and ir_measures (the queries of both qrels and run,
    as ``trec_batch`` feeds them); a Window holding every query and a Decayed of infinite
    half-life equal the plain accumulator; per-query values equal ir_measures' per query."""
    import streammetrics as sm

    rng = np.random.default_rng(seed)
    qrels, run = O.random_trec(rng, 14, max_docs=12, grades=(-1, 0, 0, 1, 2, 3))
    wrapped = {"plain": lambda m: m, "window": lambda m: sm.Window(m, size=1000),
               "decayed": lambda m: sm.Decayed(m, half_life=1e300)}[wrap]  # fmt: skip
    one = TrecMeasures(STREAMED, per_query=True)
    trec_batch(qrels, run).feed(one)
    qids = list(run)
    accs = [wrapped(TrecMeasures(STREAMED)) for _ in range(shards)]
    cuts = np.sort(rng.choice(np.arange(1, len(qids)), size=min(parts, len(qids) - 1), replace=False))
    for i, chunk in enumerate(np.split(np.array(qids), cuts)):
        acc = accs[i % shards]
        trec_batch({q: qrels[q] for q in chunk}, {q: run[q] for q in chunk}).feed(acc)
        accs[i % shards] = sm.loads(sm.dumps(acc))  # a save/load round trip between batches
    cwl = STREAMED[:-1]
    ref = ir_measures.cwl_eval.calc([_irm(n) for n in cwl], qrels, _trec_order(run))
    names = {_irm(n): n for n in cwl}
    for m, want in ref.aggregated.items():
        assert abs(one.compute()[names[m]] - want) <= TOL, names[m]
    if wrap != "window" or shards == 1:
        streamed = accs[0].merge(*accs[1:]) if shards > 1 else accs[0]
        for name in STREAMED:
            assert abs(streamed.compute()[name] - one.compute()[name]) <= TOL, (name, wrap)
    values = one.per_query_values()
    order = {q: i for i, q in enumerate(sorted(qids, key=str.encode))}  # trec_batch's order
    for m in ref.per_query:
        assert abs(values[names[m.measure]][order[m.query_id]] - m.value) <= TOL, (names[m.measure], m.query_id)


def test_cwl_trec_name_with_the_ir_measures_defaults(tmp_path):
    """The trec_eval-style names (``-m cwl_INST.max_rel=3``) are the same measures, ir_measures'
    defaults (``T=1``, ``min_rel=0``, ``p=0.9``) filled in."""
    qrels, run = O.random_trec(np.random.default_rng(3), 8)
    qp, rp = trec_files(tmp_path, qrels, run)
    pairs = [("INST(max_rel=3)", "cwl_INST.max_rel=3"), ("NERR10(max_rel=2)", "cwl_NERR10.max_rel=2"),
             ("BPM(max_rel=3)@5", "cwl_BPM.cutoff=5,max_rel=3")]  # fmt: skip
    ours = _printed(qp, rp, [name for pair in pairs for name in pair])
    for ir, trec in pairs:
        for (n, q), v in ours.items():
            if n == ir:
                assert ours[(f"cwl_{trec[4:].replace('.', '_', 1)}", q)] == v, (ir, q)


@pytest.mark.parametrize("measure, words", [
    ("INST", "INST needs max_rel (as in INST(max_rel=3))"),
    ("INST(T=3)", "INST needs max_rel"),
    ("NERR8(max_rel=3)", "NERR8 needs cutoff (as in NERR8(max_rel=3)@10)"),
    ("BPM(T=2, max_rel=3)", "BPM needs cutoff"),
    ("INST(max_rel=3)@5", "INST takes no parameter 'cutoff'"),
    ("INSQ(rel=1, max_rel=3)", "INSQ takes no parameter 'rel'"),
    ("SDCG(max_rel=3, dcg='exp-log2')@5", "SDCG's dcg must be 'log2'"),
    ("INST(max_rel=3, min_rel=3)", "min_rel must be less than max_rel, got 3 and 3"),
    ("INST(max_rel=2.5)", "parameter max_rel must be int, got 2.5"),
    ("INST(max_rel=99999999999999999999)", "max_rel must be an integer in [-2**52, 2**52]"),
    ("INST(T=0, max_rel=2)", "the desired gain T must be in (0, 2**52], got 0.0"),
    ("INST(T=1e400, max_rel=2)", "the desired gain T must be in (0, 2**52], got inf"),
    ("NERR11(T=-1, max_rel=2)", "the desired gain T must be in (0, 2**52]"),
    ("NERR10(p=1.5, max_rel=2)", "the persistence p must be in (0, 1], got 1.5"),
    ("NERR10(p=0, max_rel=2)", "the persistence p must be in (0, 1], got 0.0"),
    ("NERR8(max_rel=3)@0", "cutoff must be positive"),
    ("NERR9(max_rel=3)@99999999999999999999", "at most 2**63 - 1"),
    ("cwl_INST", "INST needs max_rel"),
    ("cwl_NERR8.max_rel=3,cutoff=2.5", "cutoff must be an integer"),
    ("cwl_INST.max_rel=3,rel=2", "INST takes no parameter 'rel'"),
    ("cwl_INST.max_rel=3,max_rel=4", "max_rel given twice"),
    ("cwl_INSQ.max_rel=3,T=1e400", "finite"), ("cwl_INSQ.max_rel=3,T=x", "got 0.0"),  # (atof)
])  # fmt: skip
def test_cwl_bad_parameters_are_one_line_errors(tmp_path, capsys, measure, words):
    qp, rp = trec_files(tmp_path, {"q1": {"a": 1}}, {"q1": {"a": 1.0}})
    status = main(["trec", qp, rp, "-m", measure])
    err = capsys.readouterr().err
    assert status == 2 and len(err.strip().splitlines()) == 1 and words in err and "Traceback" not in err, err
    with pytest.raises(ValueError, match=None) as info:
        TrecMeasures([measure])
    assert words in str(info.value)


def test_cwl_state_values_outside_zero_one_are_refused():
    """Each C/W/L value is in [0, 1] (expected gain per document, gains in [0, 1]): a loaded
    state summing beyond its query count is refused, naming the column."""
    acc = TrecMeasures(["INST(max_rel=3)"])
    trec_batch({"q1": {"a": 3, "b": 0}}, {"q1": {"a": 1.0, "b": 2.0}}).feed(acc)
    state = acc.state_dict()
    key = next(k for k in state if k.endswith(".sums"))
    state[key] = np.array([1.5])
    with pytest.raises(ValueError, match=r"outside the range of INST\(max_rel=3\)"):
        TrecMeasures.from_state_dict(state)


def test_cwl_by_hand():
    """Small cases computed from the definitions. INSQ(T=1, max_rel=1) with gains 1, 1 (grade 2
    clipped to 1), 0: W_i = prod_{j<i} ((j+1)/(j+2))**2 / sum_{k<=1000} prod_{j<k} (...) =
    (2/(i+1))**2 / sum_{k<=1000} (2/(k+1))**2, so the value is (1 + 4/9) / sum; BPM(T=1)@3 stops
    at the first document reaching the gain T; SDCG@2 with both top documents relevant is 1."""
    acc = TrecMeasures(["INSQ(max_rel=1)", "BPM(T=1, max_rel=2)@3", "SDCG(max_rel=1)@2"], per_query=True)
    trec_batch({"q": {"a": 1, "b": 2}}, {"q": {"a": 3.0, "b": 2.0, "c": 1.0}}).feed(acc)
    got = acc.compute()
    want_insq = (1.0 + 4.0 / 9.0) / math.fsum(4.0 / (k + 1) ** 2 for k in range(1, 1001))
    assert abs(got["INSQ(max_rel=1)"] - want_insq) <= TOL
    assert abs(got["BPM(T=1, max_rel=2)@3"] - (0.5 + 1.0) / 2) <= TOL  # a: 0.5, b: 1 -> stop at 2
    assert abs(got["SDCG(max_rel=1)@2"] - 1.0) <= TOL


def test_cwl_trec_compare_pairs_the_queries(tmp_path, capsys):
    qrels, run = O.random_trec(np.random.default_rng(11), 10)
    qp, rp = trec_files(tmp_path, qrels, run)
    other = tmp_path / "other"
    other.write_text("".join(f"{q} Q0 {d} 1 {-s!r} b\n" for q, docs in run.items() for d, s in docs.items()))
    assert main(["trec-compare", qp, rp, str(other), "-m", "INST(T=2, max_rel=3)", "-m", "BPM(max_rel=3)@5"]) == 0
    out = capsys.readouterr().out
    assert "INST(T=2, max_rel=3)" in out and "BPM(max_rel=3)@5" in out


def test_rbp_equals_cwl_eval_where_its_depth_does_not_matter(tmp_path):
    """ir_measures computes ``RBP(p, rel)`` with cwl_eval, which weighs ranks 1..1000 by
    ``p**(i-1) / sum_{k<=1000} p**(k-1)``: ours, ``(1 - p) sum_i p**(i-1) rel_i`` over the whole
    ranking, differs by the factor ``1 - p**1000`` (below 1e-12 for p <= 0.97) on rankings of at
    most 1000 documents."""
    qrels, run = O.random_trec(np.random.default_rng(4), 20, max_docs=14, grades=(-1, 0, 1, 2, 3))
    qp, rp = trec_files(tmp_path, qrels, _trec_order(run))
    names = ["RBP(p=0.8, rel=1)", "RBP(p=0.5, rel=2)", "RBP(p=0.95, rel=1)"]
    got = _printed(qp, rp, names)
    ref = ir_measures.cwl_eval.calc([ir_measures.parse_measure(n) for n in names], qrels, _trec_order(run))
    by = {ir_measures.parse_measure(n): n for n in names}
    for m in ref.per_query:
        assert abs(got[(by[m.measure], m.query_id)] - m.value) <= TOL, (by[m.measure], m.query_id)
    for m, want in ref.aggregated.items():
        assert abs(got[(by[m], "all")] - want) <= TOL


@pytest.mark.parametrize("args, want", [
    (["Compat.p=0.5", "Compat(p=0.8)"], {"Compat_p=0.5": "Compat(p=0.5)", "Compat(p=0.8)": "Compat(p=0.8)"}),
    (["RBP(p=0.5)", "RBP_p.0.8"], {"RBP(p=0.5)": "RBP(p=0.5)", "RBP_p_0.8": "RBP(p=0.8)"}),
    (["cwl_INST.T=2,max_rel=3", "INST(max_rel=3)"],
     {"cwl_INST_T=2,max_rel=3": "INST(T=2, max_rel=3)", "INST(max_rel=3)": "INST(max_rel=3)"}),
])  # fmt: skip
def test_one_parameter_list_measure_named_both_ways_prints_each_value(tmp_path, args, want):
    """A measure taking one parameter list (RBP_p, Compat, the C/W/L ones) named trec_eval's way
    beside an ir_measures name with other parameters: each value under its own name (the lists
    were merged into one malformed list, the ir_measures name's value lost)."""
    qrels, run = O.random_trec(np.random.default_rng(2), 6)
    qp, rp = trec_files(tmp_path, qrels, run)
    got = _printed(qp, rp, args)
    ref = _printed(qp, rp, list(want.values()))
    assert {n for n, _ in got} == set(want)
    for (n, q), v in got.items():
        assert v == ref[(want[n], q)], (n, q)


def test_cwl_means_equal_ir_measures_front_door(tmp_path):
    """Through ir_measures' own ``calc_aggregate`` (which routes these names to cwl_eval; its
    parser wants ``T`` and ``p`` as floats, ours takes ints too): the same means."""
    rng = np.random.default_rng(9)
    qrels, run = _random_case(rng, 12)
    qp, rp = trec_files(tmp_path, qrels, _shuffled(run, rng))
    names = ["INST(T=2.0, max_rel=3)", "NERR10(p=0.5, max_rel=3)", "BPM(T=1.0, max_rel=3)@5", "SDCG(max_rel=2)@10",
             "NERR11(T=1.5, max_rel=3)", "INSQ(max_rel=1)", "NERR8(max_rel=3)@3", "NERR9(max_rel=3)@7"]  # fmt: skip
    got = _printed(qp, rp, [*names, "INST(T=2, max_rel=3)"])
    ref = ir_measures.calc_aggregate([ir_measures.parse_measure(n) for n in names], qrels, _trec_order(run))
    by = {ir_measures.parse_measure(n): n for n in names}
    assert len(ref) == len(names)
    for m, want in ref.items():
        assert abs(got[(by[m], "all")] - want) <= TOL, by[m]
    assert got[("INST(T=2, max_rel=3)", "all")] == got[("INST(T=2.0, max_rel=3)", "all")]
