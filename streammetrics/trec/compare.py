"""``streammetrics trec-compare QRELS RUN1 RUN2 [...]``: paired significance tests of runs.

For each measure (trec_eval or ir_measures names; default ``AP nDCG@10 P@10 RR``) it reports each
run's mean over the queries and, against the first run (the baseline), the mean paired difference,
the paired t-test, the paired randomization test (two-sided sign flips: exact by enumeration when
``--permutations`` is at least ``2**queries``, else sampled), the percentile bootstrap interval of
the mean difference, and both p-values Holm-adjusted over the compared runs (per measure and
test). Per-query values come from trec_eval's kernels in one streaming pass over each run
(:func:`.per_query_values`); the tests are :mod:`.significance` (numpy only). This module is the
library part (:func:`compare`); the command, its table, ``--json`` and ``--latex`` output are
:mod:`streammetrics.cli.trec_compare`.
"""

from __future__ import annotations

import math
from typing import Any

from .perquery import PerQuery
from .significance import bootstrap_ci, holm, permutation_test, ttest_rel

__all__ = ["compare", "DEFAULT"]
DEFAULT = ("AP", "nDCG@10", "P@10", "RR")


def compare(
    pq: PerQuery, *, permutations: int = 10000, bootstrap: int = 10000, alpha: float = 0.05, seed: int = 0
) -> dict[str, Any]:
    """The comparison of ``pq``'s runs against its first: a JSON-ready dict with, per measure, one
    row per run (``mean``; for the others ``diff``, ``t``, ``p_t``, ``p_t_holm``, ``p_perm``,
    ``p_perm_holm``, ``ci``). Cost: O(measures * runs * queries * (permutations + bootstrap)).

    Per measure and run: the paired t-test (:func:`.significance.ttest_rel`) and the paired
    randomization test (:func:`.significance.permutation_test`) of the per-query differences from
    the baseline, each with Holm's adjustment over the runs (:func:`.significance.holm`), and the
    percentile bootstrap interval of the mean difference (:func:`.significance.bootstrap_ci`).

    Parameters
    ----------
    pq : PerQuery
        The per-query values of two or more runs on two or more queries (as
        :func:`.perquery.per_query_values` returns them); the first run is the baseline.
    permutations : int, default=10000
        The sign vectors of the randomization test (all of them, exactly, when ``2**queries`` is
        at most this many).
    bootstrap : int, default=10000
        The bootstrap resamples of the interval; 0 leaves ``ci`` None.
    alpha : float, default=0.05
        One minus the confidence level of the interval.
    seed : int, default=0
        The seed of the random sign vectors and resamples (each measure and run has its own
        stream derived from it).

    Returns
    -------
    dict
        ``queries``, ``baseline``, ``permutations``, ``bootstrap``, ``alpha``, ``seed`` and
        ``measures``: per measure ``{"measure": name, "runs": [row per run]}``.

    Raises
    ------
    ValueError
        With fewer than 2 runs or 2 queries.

    Examples
    --------
    >>> import numpy as np
    >>> from streammetrics.trec.compare import compare
    >>> from streammetrics.trec.perquery import PerQuery
    >>> values = np.array([[[0.2, 0.4, 0.5, 0.3]], [[0.3, 0.6, 0.5, 0.6]]])  # (runs, measures, queries)
    >>> pq = PerQuery(("a.run", "b.run"), ("a", "b"), ("AP",), ("q1", "q2", "q3", "q4"), values)
    >>> row = compare(pq, bootstrap=1000)["measures"][0]["runs"][1]
    >>> round(row["diff"], 12), row["p_perm"]  # exact: 4 of the 16 sign vectors reach |0.6|
    (0.15, 0.25)
    """
    n_runs, _, n_q = pq.values.shape
    if n_runs < 2:
        raise ValueError(f"trec-compare needs at least 2 runs, got {n_runs}")
    if n_q < 2:
        raise ValueError(f"trec-compare needs at least 2 judged queries to pair, got {n_q}")
    measures = []
    for m, name in enumerate(pq.names):
        base = pq.values[0, m]
        rows: list[dict[str, Any]] = [{"run": pq.runs[0], "runid": pq.runids[0], "mean": float(base.mean())}]
        for r in range(1, n_runs):
            d = pq.values[r, m] - base
            t, p_t = ttest_rel(pq.values[r, m], base)
            row = {"run": pq.runs[r], "runid": pq.runids[r], "mean": float(pq.values[r, m].mean()),
                   "diff": float(d.mean()), "t": t if math.isfinite(t) else None, "p_t": p_t,
                   "p_perm": permutation_test(d, permutations, seed=[seed, m, r])}  # fmt: skip
            row["ci"] = list(bootstrap_ci(d, bootstrap, alpha, seed=[seed, m, r, 1])) if bootstrap else None
            rows.append(row)
        for key in ("p_t", "p_perm"):
            for row, adjusted in zip(rows[1:], holm([row[key] for row in rows[1:]]), strict=True):
                row[f"{key}_holm"] = adjusted
        measures.append({"measure": name, "runs": rows})
    return {"queries": n_q, "baseline": pq.runs[0], "permutations": permutations, "bootstrap": bootstrap,
            "alpha": alpha, "seed": seed, "measures": measures}  # fmt: skip
