"""The library's streaming accumulators configured to give trec_eval's values (``trec_metrics``).

Where the library's defaults differ from trec_eval these use trec_eval's conventions: AP@k divides
by R (``denominator="R"``) and interpolated precision uses ``interpolation="trec"``. The
``streammetrics trec`` command computes every trec_eval measure with the per-query kernels of
:mod:`._kernels`; these accumulators are the streaming/mergeable form of the common ones.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from streammetrics.retrieval import metrics as retrieval_metrics
from streammetrics.retrieval.metrics import RetrievalMetric

__all__ = ["trec_metrics"]

_COUNTERS = {"num_ret": "retrieved", "num_rel": "relevant", "num_rel_ret": "relevant_retrieved"}


def trec_metrics(
    names: Sequence[str], rel_level: float = 1, per_query: bool = False
) -> dict[str, RetrievalMetric]:
    """Accumulators that print trec_eval's values for the given (single) trec_eval measure names.

    Parameters
    ----------
    names : sequence of str
        trec_eval measure names, one value each (``"map"``, ``"P_10"``, ``"ndcg_cut_10"``, ...).
    rel_level : float, default 1
        Minimum grade of a relevant document (trec_eval ``-l``).
    per_query : bool, default False
        Keep every query's value.

    Returns
    -------
    dict of str to RetrievalMetric
        One accumulator per name (put them in a :class:`~streammetrics.MetricSet` to share one
        ranking per batch).

    Examples
    --------
    >>> from streammetrics.trec import trec_metrics
    >>> sorted(trec_metrics(["map", "P_5"]))
    ['P_5', 'map']
    """
    out: dict[str, RetrievalMetric] = {}
    kw: dict[str, Any] = {"rel_level": rel_level, "per_query": per_query}
    for name in names:
        if name in ("runid", "num_q"):
            continue
        if name in _COUNTERS:
            out["_set"] = retrieval_metrics.SetPrecision(average="micro", **kw)
            continue
        family, _, k = name.rpartition("_")
        try:
            if name == "map":
                out[name] = retrieval_metrics.MAP(**kw)
            elif name == "Rprec":
                out[name] = retrieval_metrics.RPrecision(**kw)
            elif name == "recip_rank":
                out[name] = retrieval_metrics.MRR(**kw)
            elif name == "ndcg":
                out[name] = retrieval_metrics.NDCG(per_query=per_query)
            elif name == "set_P":
                out[name] = retrieval_metrics.SetPrecision(**kw)
            elif name == "set_recall":
                out[name] = retrieval_metrics.SetRecall(**kw)
            elif name == "11pt_avg":
                out[name] = retrieval_metrics.ElevenPointAP(interpolation="trec", **kw)
            elif family == "iprec_at_recall":
                out[name] = retrieval_metrics.InterpolatedPrecision(float(k), interpolation="trec", **kw)
            elif family == "P":
                out[name] = retrieval_metrics.PrecisionAtK(int(k), **kw)
            elif family == "recall":
                out[name] = retrieval_metrics.RecallAtK(int(k), **kw)
            elif family == "map_cut":
                out[name] = retrieval_metrics.MAP(int(k), denominator="R", **kw)
            elif family == "ndcg_cut":
                out[name] = retrieval_metrics.NDCG(int(k), per_query=per_query)
            else:
                raise ValueError
        except ValueError:
            raise ValueError(
                f"measure {name!r} is not supported; supported: runid num_q num_ret num_rel num_rel_ret map "
                "map_cut_K P_K recall_K Rprec recip_rank ndcg ndcg_cut_K set_P set_recall "
                "iprec_at_recall_X 11pt_avg"
            ) from None
    return out
