"""One query's retrieval measures with torchmetrics' functional signatures.

``retrieval_precision(preds, target, top_k=None, adaptive_k=False)``, ... as
``torchmetrics.functional.retrieval`` (1.9): one query's scores ``preds`` and relevance
``target`` in, a float (the precision-recall curve: three arrays) out. Each function reads the
one per-query kernel the retrieval classes read (:class:`~streammetrics._queries.spec.Spec`
evaluated on the query ranked by :func:`~streammetrics._queries.batch.prepare_queries`), so its
value is that of the matching class (``PrecisionAtK``, ``MAP(k, denominator="found")``, ...)
fed the one query. Definitions and the differences from torchmetrics: docs/functional.md,
"torchmetrics' retrieval functions".

Ranking: score descending, ties in input order (torchmetrics: ``torch.topk`` / ``argsort``
order, unspecified); nDCG averages the gains of tied documents, as torchmetrics does. A document
scored <= 0 is ranked like any other (torchmetrics counts it as non-relevant in precision,
recall, AP and RR). Cost: O(n log n) for a query of n documents (O(max_k) more for the curve).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from streammetrics._core.params import Param, check_param
from streammetrics._core.validation import as_numpy, check_scores, first_bad
from streammetrics._queries.batch import prepare_queries
from streammetrics._queries.kernels import MAX_GRADE
from streammetrics._queries.spec import Spec

__all__ = [
    "retrieval_auroc",
    "retrieval_average_precision",
    "retrieval_fall_out",
    "retrieval_hit_rate",
    "retrieval_normalized_dcg",
    "retrieval_precision",
    "retrieval_precision_recall_curve",
    "retrieval_r_precision",
    "retrieval_recall",
    "retrieval_reciprocal_rank",
]

_TOP_K = Param("int", "expected a positive integer or None", low=1, optional=True)
_FLAG = Param("flag", "expected True or False")
_FPR_RULE = "expected a false positive rate in (0, 1] or None"
_MAX_FPR = Param("number", _FPR_RULE, low=0.0, high=1.0, low_open=True, finite_rule=_FPR_RULE, optional=True)


def _query(preds: Any, target: Any, graded: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """One query's ``(scores, grades)``, flattened (any shape, as torchmetrics), checked.

    ``preds``: numbers, not NaN (±inf rank first / last). ``target``: 0 / 1 (booleans too), or
    with ``graded`` finite grades in [0, 2**128]. ValueError naming the argument and the first
    offending value. O(n).
    """
    p, t = as_numpy(preds, "preds"), as_numpy(target, "target")
    if p.shape != t.shape:
        raise ValueError(f"target: expected the shape of preds {p.shape}, got {t.shape}")
    if p.ndim == 0 or p.size == 0:
        raise ValueError(f"preds: expected one query's scores, a non-empty array, got shape {p.shape}")
    p, given = check_scores(p.reshape(-1), "preds"), t.reshape(-1)
    t = given.astype(np.float64)
    bad = ~((t >= 0) & (t <= MAX_GRADE)) if graded else (t != 0) & (t != 1)
    if bad.any():
        i = first_bad(bad)
        rule = "grades >= 0 (finite, at most 2**128)" if graded else "binary relevance, 0 or 1"
        raise ValueError(f"target: expected {rule}, got {given[i].item()!r} at index {i}")
    return p, t


def _values(spec: Spec, p: np.ndarray, t: np.ndarray) -> np.ndarray:
    """The spec's per-query values of the one query (width,): the retrieval classes' kernel."""
    return spec.evaluate(prepare_queries(t, p))[0]


def _value(spec: Spec, p: np.ndarray, t: np.ndarray) -> float:
    return float(_values(spec, p, t)[0])


def _top_k(top_k: Any) -> int | None:
    return check_param(top_k, "top_k", _TOP_K)  # type: ignore[no-any-return]


def retrieval_precision(preds: Any, target: Any, top_k: int | None = None, adaptive_k: bool = False) -> float:
    """P@k: the relevant documents among the top k, divided by k (ranks past the list's end are
    non-relevant); with ``adaptive_k`` a list of n < k documents divides by n. As
    ``torchmetrics.functional.retrieval.retrieval_precision``; ``PrecisionAtK(k, adaptive_k=)``
    fed the query.

    Parameters
    ----------
    preds : array-like
        One query's scores (any shape, flattened).
    target : array-like
        The relevance of each document, 0 or 1 (booleans too), the shape of ``preds``.
    top_k : int, optional
        The cutoff k (None: the list's length).
    adaptive_k : bool, default False
        Divide by min(k, n) for a list of n documents.

    Returns
    -------
    float

    Complexity: O(n log n) for n documents.

    Examples
    --------
    >>> from streammetrics.functional import retrieval_precision
    >>> retrieval_precision([0.2, 0.3, 0.5], [1, 0, 1], top_k=2)
    0.5
    """
    k, adaptive = _top_k(top_k), check_param(adaptive_k, "adaptive_k", _FLAG)
    p, t = _query(preds, target)
    return _value(Spec("p", k=p.size if k is None else k, adaptive=adaptive), p, t)


def retrieval_recall(preds: Any, target: Any, top_k: int | None = None) -> float:
    """R@k: the relevant documents among the top k over the relevant documents of the list (0
    when there are none). As ``torchmetrics.functional.retrieval.retrieval_recall``;
    ``RecallAtK(k)`` fed the query.

    Parameters
    ----------
    preds : array-like
        One query's scores (any shape, flattened).
    target : array-like
        The relevance of each document, 0 or 1, the shape of ``preds``.
    top_k : int, optional
        The cutoff k (None: the whole list).

    Returns
    -------
    float

    Complexity: O(n log n) for n documents.

    Examples
    --------
    >>> from streammetrics.functional import retrieval_recall
    >>> retrieval_recall([0.2, 0.3, 0.5], [1, 0, 1], top_k=2)
    0.5
    """
    k = _top_k(top_k)
    p, t = _query(preds, target)
    return _value(Spec("r", k=p.size if k is None else k), p, t)


def retrieval_r_precision(preds: Any, target: Any) -> float:
    """R-precision: the relevant documents among the top R over R, R the relevant documents
    of the list (0 when R = 0). As ``torchmetrics.functional.retrieval.retrieval_r_precision``;
    ``RPrecision()`` fed the query.

    Parameters
    ----------
    preds : array-like
        One query's scores (any shape, flattened).
    target : array-like
        The relevance of each document, 0 or 1, the shape of ``preds``.

    Returns
    -------
    float

    Complexity: O(n log n) for n documents.

    Examples
    --------
    >>> from streammetrics.functional import retrieval_r_precision
    >>> retrieval_r_precision([0.2, 0.3, 0.5], [1, 0, 1])
    0.5
    """
    p, t = _query(preds, target)
    return _value(Spec("rprec"), p, t)


def retrieval_average_precision(preds: Any, target: Any, top_k: int | None = None) -> float:
    """AP@k: the mean of the precision at the rank of each relevant document among the top k
    (0 when the top k holds none). As
    ``torchmetrics.functional.retrieval.retrieval_average_precision``;
    ``MAP(k, denominator="found")`` fed the query.

    Parameters
    ----------
    preds : array-like
        One query's scores (any shape, flattened).
    target : array-like
        The relevance of each document, 0 or 1, the shape of ``preds``.
    top_k : int, optional
        The cutoff k (None: the whole list).

    Returns
    -------
    float

    Complexity: O(n log n) for n documents.

    Examples
    --------
    >>> from streammetrics.functional import retrieval_average_precision
    >>> round(retrieval_average_precision([0.2, 0.3, 0.5], [1, 0, 1]), 6)  # (1/1 + 2/3) / 2
    0.833333
    """
    k = _top_k(top_k)
    p, t = _query(preds, target)
    return _value(Spec("ap", k=k, denominator="found"), p, t)


def retrieval_reciprocal_rank(preds: Any, target: Any, top_k: int | None = None) -> float:
    """RR@k: 1 / the rank of the first relevant document, 0 when none is among the top k. As
    ``torchmetrics.functional.retrieval.retrieval_reciprocal_rank``; ``MRR(k)`` fed the query.

    Parameters
    ----------
    preds : array-like
        One query's scores (any shape, flattened).
    target : array-like
        The relevance of each document, 0 or 1, the shape of ``preds``.
    top_k : int, optional
        The cutoff k (None: the whole list).

    Returns
    -------
    float

    Complexity: O(n log n) for n documents.

    Examples
    --------
    >>> from streammetrics.functional import retrieval_reciprocal_rank
    >>> retrieval_reciprocal_rank([0.2, 0.5, 0.3], [1, 0, 1])
    0.5
    """
    k = _top_k(top_k)
    p, t = _query(preds, target)
    return _value(Spec("rr", k=k), p, t)


def retrieval_hit_rate(preds: Any, target: Any, top_k: int | None = None) -> float:
    """Hit rate: 1 when a relevant document is among the top k, else 0. As
    ``torchmetrics.functional.retrieval.retrieval_hit_rate``; ``HitRateAtK(k)`` fed the query.

    Parameters
    ----------
    preds : array-like
        One query's scores (any shape, flattened).
    target : array-like
        The relevance of each document, 0 or 1, the shape of ``preds``.
    top_k : int, optional
        The cutoff k (None: the whole list).

    Returns
    -------
    float

    Complexity: O(n log n) for n documents.

    Examples
    --------
    >>> from streammetrics.functional import retrieval_hit_rate
    >>> retrieval_hit_rate([0.2, 0.5, 0.3], [1, 0, 1], top_k=1)
    0.0
    """
    k = _top_k(top_k)
    p, t = _query(preds, target)
    return _value(Spec("hit", k=k), p, t)


def retrieval_fall_out(preds: Any, target: Any, top_k: int | None = None) -> float:
    """Fall-out@k: the non-relevant documents among the top k over the non-relevant documents
    of the list (0 when there are none; lower is better). As
    ``torchmetrics.functional.retrieval.retrieval_fall_out``;
    ``FallOutAtK(k, empty_target_action="neg")`` fed the query.

    Parameters
    ----------
    preds : array-like
        One query's scores (any shape, flattened).
    target : array-like
        The relevance of each document, 0 or 1, the shape of ``preds``.
    top_k : int, optional
        The cutoff k (None: the whole list).

    Returns
    -------
    float

    Complexity: O(n log n) for n documents.

    Examples
    --------
    >>> from streammetrics.functional import retrieval_fall_out
    >>> retrieval_fall_out([0.2, 0.5, 0.3, 0.1], [1, 0, 1, 0], top_k=2)
    0.5
    """
    k = _top_k(top_k)
    p, t = _query(preds, target)
    return _value(Spec("fallout", k=k), p, t)


def retrieval_normalized_dcg(preds: Any, target: Any, top_k: int | None = None) -> float:
    """nDCG@k = DCG@k / IDCG@k with linear gains (the grades), tied scores sharing the mean gain
    of their group, the ideal ranking from the list's own grades (0 when it has no positive
    grade). As ``torchmetrics.functional.retrieval.retrieval_normalized_dcg``;
    ``NDCG(k, ties="average")`` fed the query.

    Parameters
    ----------
    preds : array-like
        One query's scores (any shape, flattened).
    target : array-like
        The grade of each document, >= 0, the shape of ``preds`` (negative grades are refused:
        torchmetrics sums them as negative gains, the retrieval classes count them as 0).
    top_k : int, optional
        The cutoff k (None: the whole list).

    Returns
    -------
    float

    Complexity: O(n log n) for n documents.

    Examples
    --------
    >>> from streammetrics.functional import retrieval_normalized_dcg
    >>> retrieval_normalized_dcg([0.1, 0.2, 0.3], [0, 1, 2])
    1.0
    """
    k = _top_k(top_k)
    p, t = _query(preds, target, graded=True)
    return _value(Spec("ndcg", k=k, ties="average"), p, t)


def retrieval_auroc(preds: Any, target: Any, top_k: int | None = None, max_fpr: float | None = None) -> float:
    """The AUROC of the top k documents: the share of (relevant, non-relevant) pairs whose
    scores order them correctly, a tie counting 1/2; 0 when the top k holds one kind only. With
    ``max_fpr`` the McClish-standardised partial AUC up to that false positive rate. As
    ``torchmetrics.functional.retrieval.retrieval_auroc``; ``AUROCAtK(k, max_fpr=)`` fed the query.

    Parameters
    ----------
    preds : array-like
        One query's scores (any shape, flattened).
    target : array-like
        The relevance of each document, 0 or 1, the shape of ``preds``.
    top_k : int, optional
        The cutoff k (None: the whole list).
    max_fpr : float, optional
        Partial AUC up to this false positive rate, in (0, 1] (None or 1: the whole curve).

    Returns
    -------
    float

    Complexity: O(n log n) for n documents.

    Examples
    --------
    >>> from streammetrics.functional import retrieval_auroc
    >>> retrieval_auroc([0.9, 0.8, 0.7, 0.6], [1, 0, 1, 0])
    0.75
    """
    k = _top_k(top_k)
    fpr = check_param(max_fpr, "max_fpr", _MAX_FPR)
    p, t = _query(preds, target)
    return _value(Spec("auroc", k=k, max_fpr=None if fpr is None else float(fpr)), p, t)


def retrieval_precision_recall_curve(
    preds: Any, target: Any, max_k: int | None = None, adaptive_k: bool = False
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """P@j and R@j for j = 1..``max_k`` (ranks past the list's end are non-relevant; with
    ``adaptive_k`` a list of n < j documents divides P@j by n). As
    ``torchmetrics.functional.retrieval.retrieval_precision_recall_curve``;
    ``PrecisionRecallAtK(max_k, adaptive_k=)`` fed the query.

    Parameters
    ----------
    preds : array-like
        One query's scores (any shape, flattened).
    target : array-like
        The relevance of each document, 0 or 1, the shape of ``preds``.
    max_k : int, optional
        The longest cutoff (None: the list's length).
    adaptive_k : bool, default False
        Divide P@j by min(j, n) for a list of n documents.

    Returns
    -------
    precision, recall : numpy.ndarray of shape (max_k,), float64
    top_k : numpy.ndarray of shape (max_k,), int64
        The divisor of each precision: 1..max_k, or with ``adaptive_k`` min(j, n) (torchmetrics').

    Complexity: O(n log n + max_k) for n documents.

    Examples
    --------
    >>> from streammetrics.functional import retrieval_precision_recall_curve
    >>> precision, recall, top_k = retrieval_precision_recall_curve([0.2, 0.3, 0.5], [1, 0, 1], max_k=4)
    >>> precision.tolist(), recall.tolist(), top_k.tolist()
    ([1.0, 0.5, 0.6666666666666666, 0.5], [0.5, 0.5, 1.0, 1.0], [1, 2, 3, 4])
    """
    k = check_param(max_k, "max_k", _TOP_K)
    adaptive = check_param(adaptive_k, "adaptive_k", _FLAG)
    p, t = _query(preds, target)
    k = p.size if k is None else int(k)
    curve = _values(Spec("prcurve", k=k, adaptive=adaptive), p, t)
    ranks = np.arange(1, k + 1, dtype=np.int64)
    return curve[:k].copy(), curve[k:].copy(), np.minimum(ranks, p.size) if adaptive else ranks
