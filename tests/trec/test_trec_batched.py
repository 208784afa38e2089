"""The block-at-a-time path of ``streammetrics trec`` (trec_eval's official measures, recall,
success) prints exactly what the per-query kernels print: every value to the last digit, with
ties, duplicates, unjudged and negatively judged documents, -M, -l and both trec_eval versions."""

from __future__ import annotations

import io

import numpy as np
import pytest
import retrieval_oracles as O
from helpers import trec_files as _files
from hypothesis import given, settings
from hypothesis import strategies as st

import streammetrics.trec.evaluate as E
from streammetrics.trec import evaluate_files
from streammetrics.trec.batched import fast_path
from streammetrics.trec.irnames import select

MEASURES = ["official", "recall", "success.1,2,7", "P.3,1000"]


def _print(qp, rp, fast: bool, **kw) -> str:
    with pytest.MonkeyPatch.context() as mp:
        if not fast:
            mp.setattr(E, "fast_path", lambda *a: False)
        sink = io.StringIO()
        evaluate_files(qp, rp, MEASURES, per_query=True, digits=17, out=sink, **kw)
        return sink.getvalue()


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), version=st.sampled_from([9, 10]), level=st.sampled_from([1, 2]),
       max_docs=st.sampled_from([None, 1, 4]), ties=st.sampled_from([3, 10**9]))  # fmt: skip
def test_block_values_equal_the_per_query_kernels(tmp_path_factory, seed, version, level, max_docs, ties):
    rng = np.random.default_rng(seed)
    qrels, run = O.random_trec(rng, 25, max_docs=14, tie_levels=ties)
    run["not_judged"] = {"a": 1.0}
    qp, rp = _files(tmp_path_factory.mktemp("b"), qrels, run)
    kw = dict(trec_version=version, rel_level=level, max_docs=max_docs)
    assert fast_path(select(MEASURES), E.Options(version=version), level, max_docs, False, "qrels")
    fast = _print(qp, rp, True, **kw)
    slow = _print(qp, rp, False, **kw)
    assert fast == slow and fast.count("\n") > 100


def test_a_duplicate_document_is_still_reported(tmp_path):
    qp, rp = _files(tmp_path, {"1": {"a": 1}}, {"1": {"a": 1.0, "b": 0.5}})
    with open(rp, "a") as fh:
        fh.write("1 Q0 a 3 0.2 r\n")
    with pytest.raises(ValueError, match="duplicate document 'a'"):
        evaluate_files(qp, rp, ["official"], out=io.StringIO())


def test_other_measures_and_options_take_the_per_query_path():
    opts = E.Options()
    assert not fast_path(select(["ndcg"]), opts, 1, None, False, "qrels")
    assert not fast_path(select(["map"]), opts, 1, None, True, "qrels")
    assert not fast_path(select(["P(rel=2)@5"]), opts, 1, None, False, "qrels")
    assert not fast_path(select(["official"]), E.Options(fused=True), 1, None, False, "qrels")


@settings(max_examples=6, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), memory=st.sampled_from([3, 50, 10**6]))
def test_a_shuffled_run_takes_the_block_path_through_the_external_sort(tmp_path_factory, seed, memory):
    rng = np.random.default_rng(seed)
    qrels, run = O.random_trec(rng, 20, max_docs=12)
    qp, rp = _files(tmp_path_factory.mktemp("s"), qrels, run)
    lines = open(rp).read().splitlines(keepends=True)  # noqa: SIM115
    shuffled = rp + ".shuffled"
    with open(shuffled, "w") as fh:
        fh.writelines(lines[i] for i in rng.permutation(len(lines)))
    slow = _print(qp, rp, False)
    sink = io.StringIO()
    evaluate_files(qp, shuffled, MEASURES, per_query=True, digits=17, out=sink, memory_lines=memory)
    assert sink.getvalue() == slow


@settings(max_examples=8, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), complete=st.booleans(), ties=st.sampled_from([3, 10**9]))
def test_summaries_without_per_query_lines_equal_the_per_query_path(tmp_path_factory, seed, complete, ties):
    rng = np.random.default_rng(seed)
    qrels, run = O.random_trec(rng, 25, max_docs=14, tie_levels=ties)
    qrels["only_judged"] = {"z": 1}  # -c: a query missing from the run
    qp, rp = _files(tmp_path_factory.mktemp("c"), qrels, run)
    outs = []
    for fast in (True, False):
        with pytest.MonkeyPatch.context() as mp:
            if not fast:
                mp.setattr(E, "fast_path", lambda *a: False)
            sink = io.StringIO()
            result = evaluate_files(qp, rp, MEASURES, digits=17, out=sink, complete=complete)
            outs.append((sink.getvalue(), result))
    assert outs[0] == outs[1] and outs[0][1]["num_q"] == len(qrels) - (0 if complete else 1)
