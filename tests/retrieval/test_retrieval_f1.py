"""``F1AtK``: F1@k per query, the harmonic mean of P@k and R@k (ranx's ``f1@k``; against ranx
itself: ``tests/trec/test_trec_ranx.py``)."""

from __future__ import annotations

import numpy as np
import pytest

import streammetrics as sm


@pytest.mark.parametrize("ties", ["first", "average"])
def test_f1_at_k_is_the_harmonic_mean_of_precision_and_recall_at_k(ties):
    """Per query 2PR / (P + R) of ``PrecisionAtK`` and ``RecallAtK`` (0 when both are 0), tied
    scores averaged or in input order alike; graded relevance, queries without a relevant
    document, and ``n_relevant`` beyond the retrieved."""
    rng = np.random.default_rng(11)
    n = 200
    qids = np.sort(rng.integers(0, 30, size=n))
    rel = rng.choice([0, 0, 1, 2], size=n)
    scores = rng.integers(0, 3, size=n) / 2.0
    n_relevant = {int(q): int((rel[qids == q] >= 1).sum() + rng.integers(0, 3)) for q in np.unique(qids)}
    for k in (1, 3, 50):
        opts = {"query_ids": qids, "n_relevant": n_relevant}
        f1 = sm.F1AtK(k, ties=ties, per_query=True).update(rel, scores, **opts).per_query_values()
        p = sm.PrecisionAtK(k, ties=ties, per_query=True).update(rel, scores, **opts).per_query_values()
        r = sm.RecallAtK(k, ties=ties, per_query=True).update(rel, scores, **opts).per_query_values()
        with np.errstate(invalid="ignore", divide="ignore"):
            want = np.where(p + r > 0, 2 * p * r / (p + r), 0.0)
        np.testing.assert_allclose(f1, want, rtol=0, atol=1e-15)
        assert (f1 > 0).any()
    with pytest.raises(ValueError, match="^k: "):
        sm.F1AtK(0)
