"""ir_measures options of issue #33: several names of one value each printed, ``nDCG(dcg='exp-log2')``
and ``nDCG(gains=...)``, against ir_measures (and their definitions where ir_measures' provider rounds)."""

from __future__ import annotations

import io

import numpy as np
import pytest

from streammetrics.trec import TrecMeasures, evaluate_files, trec_batch
from tests import retrieval_oracles as O
from tests.test_trec_irparse import _files, _lines


@pytest.mark.parametrize(
    "names",
    [["Rprec", "RPrec"], ["ndcg_cut_10", "nDCG@10"], ["ndcg_cut.10", "nDCG@10"], ["P.5", "P@5", "official"],
     ["RPrec", "Rprec", "RPrec"]],  # fmt: skip
)
def test_each_name_of_one_value_is_printed(tmp_path, names):
    qrels, run = O.random_trec(np.random.default_rng(4), 6, max_docs=10)
    qp, rp = _files(tmp_path, qrels, run)
    printed = _lines(lambda s: evaluate_files(qp, rp, names, per_query=True, digits=17, out=s))
    acc = TrecMeasures(names)
    trec_batch(qrels, run).feed(acc)
    summary = acc.compute()
    wanted = {n.replace(".", "_") if n in ("ndcg_cut.10", "P.5") else n for n in names} - {"official"}
    for name in wanted:
        assert (name, "all") in printed and name in summary, name
    values = {printed[(n, "all")] for n in wanted}
    assert len(values) == 1  # one value under every name
    sink = io.StringIO()
    evaluate_files(qp, rp, names, digits=4, out=sink)
    assert len(sink.getvalue().splitlines()) == len(set(sink.getvalue().splitlines()))  # no line twice
