"""``streammetrics trec-compare QRELS RUN1 RUN2 [...]``: paired significance tests of runs.

For each measure (trec_eval or ir_measures names; default ``AP nDCG@10 P@10 RR``) it reports each
run's mean over the queries and, against the first run (the baseline), the mean paired difference,
the paired t-test, the paired randomization test (sign flips: exact by enumeration when
``--permutations`` is at least ``2**queries``, else sampled), Wilcoxon's signed-rank test, the
sign test, the percentile bootstrap interval of the mean difference, and every p-value
Holm-adjusted over the compared runs (per measure and test); two-sided or one-sided
(``alternative``, as scipy's: ``"greater"`` tests run > baseline). Per-query values come from
trec_eval's kernels in one streaming pass over each run (:func:`.per_query_values`); the tests are
:mod:`.significance` and :mod:`.rank_tests` (numpy only). This module is the
library part (:func:`compare`); the command, its table, ``--json`` and ``--latex`` output are
:mod:`streammetrics.cli.trec_compare`.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .irnames import select
from .perquery import PerQuery
from .rank_tests import sign_test, wilcoxon
from .significance import bootstrap_ci, check_alternative, holm, permutation_test, ttest_rel
from .tukey import tukey_hsd

__all__ = ["compare", "DEFAULT"]
DEFAULT = ("AP", "nDCG@10", "P@10", "RR")


def compare(
    pq: PerQuery,
    *,
    permutations: int = 10000,
    bootstrap: int = 10000,
    alpha: float = 0.05,
    seed: int = 0,
    alternative: str = "two-sided",
    zero_method: str = "wilcox",
    wilcoxon_method: str = "auto",
    correction: bool = False,
) -> dict[str, Any]:
    """The comparison of ``pq``'s runs against its first: a JSON-ready dict with, per measure, one
    row per run (``mean``; for the others ``diff``, ``t``, ``p_t``, ``p_perm``, ``p_wilcoxon``,
    ``p_sign``, each with its ``_holm`` adjustment, ``p_tukey`` and ``ci``). Cost:
    O(measures * runs * queries * (permutations + bootstrap)).

    Per measure and run: the paired t-test (:func:`.significance.ttest_rel`) and the paired
    randomization test (:func:`.significance.permutation_test`) of the per-query differences from
    the baseline, each with Holm's adjustment over the runs (:func:`.significance.holm`), and the
    percentile bootstrap interval of the mean difference (:func:`.significance.bootstrap_ci`);
    Wilcoxon's signed-rank test (:func:`.rank_tests.wilcoxon`, ``scipy.stats.wilcoxon``'s) and the
    sign test (:func:`.rank_tests.sign_test`), Holm-adjusted too; Tukey's HSD across all the runs
    (:func:`.tukey.tukey_hsd`: one-way, as ranx's ``stat_test="tukey"`` and
    ``scipy.stats.tukey_hsd``; always two-sided, family-wise already): ``p_tukey`` against the
    baseline, and per measure ``tukey``, the ``runs x runs`` matrix of p-values.

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
    alternative : {"two-sided", "greater", "less"}, default="two-sided"
        Every test's alternative for ``run - baseline`` (scipy's names); one-sided, the interval
        is a bound (the other end infinite, None in JSON).
    zero_method, wilcoxon_method, correction
        ``scipy.stats.wilcoxon``'s ``zero_method`` (``"wilcox"``, ``"pratt"``, ``"zsplit"``),
        ``method`` (``"auto"``, ``"exact"``, ``"asymptotic"``) and ``correction``.

    Returns
    -------
    dict
        ``queries``, ``baseline``, ``permutations``, ``bootstrap``, ``alpha``, ``seed``,
        ``alternative``, ``zero_method``, ``wilcoxon_method``, ``correction`` and ``measures``:
        per measure ``{"measure": name, "runs": [row per run]}``.

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
    check_alternative(alternative)
    n_runs, _, n_q = pq.values.shape
    if n_runs < 2:
        raise ValueError(f"trec-compare needs at least 2 runs, got {n_runs}")
    if n_q < 2:
        raise ValueError(f"trec-compare needs at least 2 judged queries to pair, got {n_q}")
    _check_defined(pq)
    measures = []
    for m, name in enumerate(pq.names):
        base = pq.values[0, m]
        rows: list[dict[str, Any]] = [{"run": pq.runs[0], "runid": pq.runids[0], "mean": float(base.mean())}]
        for r in range(1, n_runs):
            d = pq.values[r, m] - base
            t, p_t = ttest_rel(pq.values[r, m], base, alternative)
            w, p_w = wilcoxon(d, zero_method=zero_method, correction=correction, alternative=alternative,
                              method=wilcoxon_method)  # fmt: skip
            row = {"run": pq.runs[r], "runid": pq.runids[r], "mean": float(pq.values[r, m].mean()),
                   "diff": float(d.mean()), "t": t if math.isfinite(t) else None, "p_t": p_t,
                   "p_perm": permutation_test(d, permutations, seed=[seed, m, r], alternative=alternative),
                   "wilcoxon": w, "p_wilcoxon": p_w, "sign_positive": sign_test(d)[0],
                   "p_sign": sign_test(d, alternative)[1]}  # fmt: skip
            rng_seed = [seed, m, r, 1]
            row["ci"] = list(bootstrap_ci(d, bootstrap, alpha, rng_seed, alternative)) if bootstrap else None
            rows.append(row)
        for key in ("p_t", "p_perm", "p_wilcoxon", "p_sign"):
            for row, adjusted in zip(rows[1:], holm([row[key] for row in rows[1:]]), strict=True):
                row[f"{key}_holm"] = adjusted
        _, tukey_p = tukey_hsd([pq.values[r, m] for r in range(n_runs)])
        for r, row in enumerate(rows[1:], 1):
            row["p_tukey"] = float(tukey_p[r, 0])
        measures.append({"measure": name, "runs": rows, "tukey": tukey_p.tolist()})
    return {"queries": n_q, "baseline": pq.runs[0], "permutations": permutations, "bootstrap": bootstrap,
            "alpha": alpha, "seed": seed, "alternative": alternative, "zero_method": zero_method,
            "wilcoxon_method": wilcoxon_method, "correction": correction, "measures": measures}  # fmt: skip


def _check_defined(pq: PerQuery) -> None:
    """Refuse a measure averaged over the queries that define it (``Accuracy@k``) with an
    undefined (NaN) value: the runs cannot be paired on that query. (trec_eval's 0/0 of
    ``iprec_at_recall`` under ``-J`` stays NaN, as trec_eval prints it.) O(values)."""
    try:
        partial = {n for s in select(list(pq.names)) if s.measure.avg == "defined" for n in s.printed}
    except ValueError:  # names that are not measures (a PerQuery built by hand)
        return
    for m, name in enumerate(pq.names):
        undefined = np.isnan(pq.values[:, m]) if name in partial else None
        if undefined is not None and undefined.any():
            r, q = (int(i) for i in np.argwhere(undefined)[0])
            raise ValueError(f"measure {name!r} has no value for query {pq.qids[q]!r} of run {pq.runs[r]!r} "
                             "(no relevant or no non-relevant document in its top k), so the runs cannot "
                             "be paired query by query")  # fmt: skip
