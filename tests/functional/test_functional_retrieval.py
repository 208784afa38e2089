"""torchmetrics' functional retrieval set (``streammetrics.functional.retrieval_*``, one query's
``(preds, target)``) against ``torchmetrics.functional.retrieval`` (1.9) and against the
retrieval classes fed the one query.

torchmetrics computes in float32 (``preds`` cast to float32, float32 results): values agree to
``F32``. Its order of tied scores is unspecified (``torch.topk`` / ``argsort``), so the binary
measures are compared on scores whose ties join documents of the same relevance (every order of
them gives the same value); nDCG, which both tie-average, and AUROC over the whole list (ties
count 1/2 on both sides) on arbitrary ties. Scores are positive and exact in float32:
torchmetrics counts a document scored <= 0 as non-relevant in precision, recall, AP and RR
(ours ranks it as any other; ``test_a_document_scored_at_most_zero_is_ranked_as_any_other``).
Against the classes the values agree to 1e-12 on arbitrary ties (both keep input order).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import streammetrics as sm
import streammetrics.functional as F

torch = pytest.importorskip("torch")
tf = pytest.importorskip("torchmetrics.functional.retrieval")

F32 = 1e-6  # float32 rounding of values in [0, 1]
NAMES = sorted(n for n in F.__all__ if n.startswith("retrieval_"))
DOCS = Path(__file__).resolve().parents[2] / "docs" / "functional.md"


def one_query(rng: np.random.Generator, graded: bool, share_ties: bool) -> tuple[np.ndarray, np.ndarray]:
    """(scores, target) of 1-12 documents: a fifth of the queries without a relevant document,
    a fifth with only relevant ones. ``share_ties``: tied scores have equal relevance."""
    n = int(rng.integers(1, 13))
    p = float(rng.choice([0.0, 0.4, 1.0], p=[0.2, 0.6, 0.2]))
    rel = (rng.random(n) < p).astype(np.int64)
    if graded:
        rel = rel * rng.integers(1, 4, size=n)
    if share_ties:
        scores = (2 * rng.integers(0, 4, size=n) + (rel > 0) + 1) / 16.0
    else:
        scores = rng.integers(1, 5, size=n) / 8.0
    return scores, rel


def theirs(name: str, scores: np.ndarray, rel: np.ndarray, **kw: Any) -> Any:
    out = getattr(tf, name)(torch.tensor(scores, dtype=torch.float32), torch.tensor(rel), **kw)
    return tuple(t.numpy() for t in out) if isinstance(out, tuple) else float(out)


#: name -> (options drawn for one call, graded target?, arbitrary ties?)
CASES: dict[str, Callable[[np.random.Generator], tuple[dict[str, Any], bool, bool]]] = {
    "retrieval_precision": lambda r: ({"top_k": _k(r), "adaptive_k": bool(r.integers(2))}, False, False),
    "retrieval_recall": lambda r: ({"top_k": _k(r)}, False, False),
    "retrieval_r_precision": lambda r: ({}, False, False),
    "retrieval_average_precision": lambda r: ({"top_k": _k(r)}, False, False),
    "retrieval_reciprocal_rank": lambda r: ({"top_k": _k(r)}, False, False),
    "retrieval_hit_rate": lambda r: ({"top_k": _k(r)}, False, False),
    "retrieval_fall_out": lambda r: ({"top_k": _k(r)}, False, False),
    "retrieval_normalized_dcg": lambda r: ({"top_k": _k(r)}, True, True),
    "retrieval_auroc": lambda r: ({"top_k": _k(r), "max_fpr": [None, 0.3, 0.5, 1.0][int(r.integers(4))]},
                                  False, False),
    "retrieval_precision_recall_curve": lambda r: ({"max_k": _k(r), "adaptive_k": bool(r.integers(2))},
                                                   False, False),
}


def _k(rng: np.random.Generator) -> int | None:
    """None (the whole list) or a cutoff from 1 to 15 (often beyond the list's 1-12 documents)."""
    k = int(rng.integers(0, 16))
    return None if k == 0 else k


def test_the_set_is_torchmetrics_set_with_its_parameters() -> None:
    assert sorted(tf.__all__) == NAMES == sorted(CASES)
    for name in NAMES:
        assert list(inspect.signature(getattr(F, name)).parameters) == \
            list(inspect.signature(getattr(tf, name)).parameters), name


def test_the_docs_table_names_every_function_and_parameter() -> None:
    text = DOCS.read_text(encoding="utf-8")
    start = text.index("### torchmetrics' retrieval functions")
    section = text[start:text.index("\n#", start + 5)]
    for name in NAMES:
        row = next((line for line in section.splitlines() if line.startswith(f"| `{name}")), None)
        assert row is not None, name
        for p in list(inspect.signature(getattr(tf, name)).parameters)[2:]:
            assert f"`{p}" in row, (name, p)


def assert_same(mine: Any, peer: Any, tol: float, what: Any) -> None:
    if isinstance(peer, tuple):
        assert len(mine) == 3
        for a, b in zip(mine[:2], peer[:2], strict=True):
            np.testing.assert_allclose(a, b, rtol=0, atol=tol, err_msg=str(what))
        np.testing.assert_array_equal(mine[2], peer[2], err_msg=str(what))
        assert mine[0].dtype == mine[1].dtype == np.float64 and mine[2].dtype == np.int64
    else:
        assert isinstance(mine, float)
        assert mine == pytest.approx(peer, abs=tol), what


@pytest.mark.parametrize("name", NAMES)
def test_equals_torchmetrics_on_random_queries(name: str) -> None:
    rng = np.random.default_rng(sorted(CASES).index(name))
    for trial in range(150):
        options, graded, arbitrary = CASES[name](rng)
        if name == "retrieval_auroc" and options["top_k"] is None and trial % 2:
            arbitrary = True  # the whole list: ties count 1/2 on both sides
        scores, rel = one_query(rng, graded, share_ties=not arbitrary)
        assert_same(getattr(F, name)(scores, rel, **options), theirs(name, scores, rel, **options), F32,
                    (trial, options, scores.tolist(), rel.tolist()))


EDGES = {  # all negative, all positive, one document, cutoffs beyond the list
    "all negative": (np.array([0.5, 0.25, 0.75]), np.array([0, 0, 0])),
    "all positive": (np.array([0.5, 0.25, 0.75]), np.array([1, 1, 1])),
    "one document": (np.array([0.5]), np.array([1])),
    "mixed": (np.array([0.5, 0.25, 0.75, 0.125]), np.array([0, 1, 1, 0])),
}


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("edge", sorted(EDGES))
@pytest.mark.parametrize("k", [None, 1, 3, 50])
def test_edges_equal_torchmetrics(name: str, edge: str, k: int | None) -> None:
    scores, rel = EDGES[edge]
    key = "max_k" if name.endswith("curve") else "top_k"
    options = {} if name == "retrieval_r_precision" else {key: k}
    variants = [options]
    if "adaptive_k" in inspect.signature(getattr(F, name)).parameters:
        variants.append({**options, "adaptive_k": True})
    for opts in variants:
        assert_same(getattr(F, name)(scores, rel, **opts), theirs(name, scores, rel, **opts), F32, opts)


def ours_class(name: str, options: dict[str, Any], n: int) -> Any:
    k = options.get("top_k", options.get("max_k"))
    return {
        "retrieval_precision": lambda: sm.PrecisionAtK(n if k is None else k, adaptive_k=options["adaptive_k"]),
        "retrieval_recall": lambda: sm.RecallAtK(n if k is None else k),
        "retrieval_r_precision": lambda: sm.RPrecision(),
        "retrieval_average_precision": lambda: sm.MAP(k, denominator="found"),
        "retrieval_reciprocal_rank": lambda: sm.MRR(k),
        "retrieval_hit_rate": lambda: sm.HitRateAtK(k),
        "retrieval_fall_out": lambda: sm.FallOutAtK(k, empty_target_action="neg"),
        "retrieval_normalized_dcg": lambda: sm.NDCG(k, ties="average"),
        "retrieval_auroc": lambda: sm.AUROCAtK(k, max_fpr=options["max_fpr"]),
        "retrieval_precision_recall_curve": lambda: sm.PrecisionRecallAtK(n if k is None else k,
                                                                          adaptive_k=options["adaptive_k"]),
    }[name]()


@pytest.mark.parametrize("name", NAMES)
def test_equals_the_retrieval_class_fed_the_query(name: str) -> None:
    rng = np.random.default_rng(100 + sorted(CASES).index(name))
    for trial in range(150):
        options, graded, _ = CASES[name](rng)
        scores, rel = one_query(rng, graded, share_ties=False)  # arbitrary ties: input order on both sides
        scores = scores - 0.5  # scores <= 0 too
        mine = getattr(F, name)(scores, rel, **options)
        cls = ours_class(name, options, scores.size).update(rel, scores).compute()
        if isinstance(mine, tuple):
            for a, b in zip(mine[:2], cls[:2], strict=True):
                np.testing.assert_allclose(a, b, rtol=0, atol=1e-12, err_msg=str(trial))
        else:
            assert mine == pytest.approx(cls, abs=1e-12), (trial, options)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(-5, 5), st.booleans()), min_size=1, max_size=12),
       st.sampled_from(NAMES), st.integers(0, 14))
def test_only_the_order_of_the_scores_counts(rows: list[tuple[int, bool]], name: str, k: int) -> None:
    """A strictly increasing map of the scores (negative ones included) changes no value."""
    scores = np.array([s for s, _ in rows], dtype=np.float64)
    rel = np.array([r for _, r in rows], dtype=np.int64)
    key = "max_k" if name.endswith("curve") else "top_k"
    options = {} if name == "retrieval_r_precision" else {key: k or None}
    f = getattr(F, name)
    a, b = f(scores, rel, **options), f(3.0 * scores + 100.0, rel, **options)
    if isinstance(a, tuple):
        for x, y in zip(a, b, strict=True):
            np.testing.assert_array_equal(x, y)
    else:
        assert a == b


def test_a_document_scored_at_most_zero_is_ranked_as_any_other() -> None:
    """torchmetrics zeroes the relevance of documents scored <= 0 in P@k, R@k, AP and RR."""
    scores, rel = np.array([0.5, -0.25]), np.array([0, 1])
    assert F.retrieval_average_precision(scores, rel) == 0.5
    assert F.retrieval_reciprocal_rank(scores, rel) == 0.5
    assert F.retrieval_recall(scores, rel) == 1.0
    assert F.retrieval_precision(scores, rel) == 0.5
    for name in ("retrieval_average_precision", "retrieval_reciprocal_rank", "retrieval_recall",
                 "retrieval_precision"):
        assert theirs(name, scores, rel) == 0.0, name  # torchmetrics'; + 1 on the scores: ours
        assert getattr(F, name)(scores + 1.0, rel) == getattr(F, name)(scores, rel)
        assert theirs(name, scores + 1.0, rel) == pytest.approx(getattr(F, name)(scores, rel), abs=F32)


def test_inputs_as_torch_tensors_lists_and_matrices() -> None:
    scores, rel = np.array([[0.5, 0.25], [0.75, 0.125]]), np.array([[0, 1], [1, 0]])
    for name in NAMES:
        f = getattr(F, name)
        want = f(scores.ravel(), rel.ravel())
        for args in [(torch.tensor(scores), torch.tensor(rel)), (scores.tolist(), rel.tolist()), (scores, rel),
                     (scores, rel.astype(bool))]:
            got = f(*args)
            if isinstance(want, tuple):
                for x, y in zip(got, want, strict=True):
                    np.testing.assert_array_equal(x, y)
            else:
                assert got == want, name
        if not isinstance(want, tuple):
            assert want == pytest.approx(theirs(name, scores, rel), abs=F32), name


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("bad", [
    ((np.array([0.5, 0.25]), np.array([1, 0, 1])), r"^target: expected the shape of preds \(2,\), got \(3,\)"),
    ((np.zeros(0), np.zeros(0)), r"^preds: expected one query's scores, a non-empty array, got shape \(0,\)"),
    ((np.float64(0.5), np.int64(1)), r"^preds: expected one query's scores, a non-empty array, got shape \(\)"),
    ((np.array([0.5, np.nan]), np.array([1, 0])), r"^preds: scores must not be NaN; first NaN at index 1"),
    ((np.array([0.5, 0.25]), np.array([1.0, np.nan])), r"^target: expected .*, got nan at index 1"),
    ((np.array([0.5, 0.25, 0.1]), np.array([1, 0, -1])), r"^target: expected .*, got -1 at index 2"),
    ((np.array(["a", "b"]), np.array([1, 0])), r"^preds: "),
])
def test_bad_input_names_the_argument(name: str, bad: tuple[tuple[Any, Any], str]) -> None:
    (preds, target), pattern = bad
    with pytest.raises(ValueError, match=pattern):
        getattr(F, name)(preds, target)


@pytest.mark.parametrize("name", [n for n in NAMES if n != "retrieval_normalized_dcg"])
def test_binary_measures_refuse_grades(name: str) -> None:
    for value in (2, 0.5):
        with pytest.raises(ValueError, match=rf"^target: expected binary relevance, 0 or 1, got {value}"):
            getattr(F, name)([0.5, 0.25], [0, value])


def test_ndcg_takes_grades_and_refuses_negative_ones() -> None:
    assert F.retrieval_normalized_dcg([0.5, 0.25], [0.5, 3]) == pytest.approx(
        theirs("retrieval_normalized_dcg", np.array([0.5, 0.25]), np.array([0.5, 3.0])), abs=F32)
    with pytest.raises(ValueError, match=r"^target: expected grades >= 0 .*, got -1 at index 1"):
        F.retrieval_normalized_dcg([0.5, 0.25], [1, -1])


@pytest.mark.parametrize("call,pattern", [
    (lambda: F.retrieval_precision([0.5], [1], top_k=0), r"^top_k: expected a positive integer or None, got 0"),
    (lambda: F.retrieval_average_precision([0.5], [1], top_k=0), r"^top_k: .*got 0"),
    (lambda: F.retrieval_recall([0.5], [1], top_k=1.5), r"^top_k: .*got 1.5"),
    (lambda: F.retrieval_hit_rate([0.5], [1], top_k=True), r"^top_k: .*got True"),
    (lambda: F.retrieval_precision([0.5], [1], adaptive_k=1), r"^adaptive_k: expected True or False, got 1"),
    (lambda: F.retrieval_precision_recall_curve([0.5], [1], max_k=-1), r"^max_k: .*got -1"),
    (lambda: F.retrieval_precision_recall_curve([0.5], [1], adaptive_k="yes"), r"^adaptive_k: .*got 'yes'"),
    (lambda: F.retrieval_auroc([0.5], [1], max_fpr=0), r"^max_fpr: expected a false positive rate in \(0, 1\]"),
    (lambda: F.retrieval_auroc([0.5], [1], max_fpr=1.5), r"^max_fpr: .*got 1.5"),
])
def test_bad_options_name_the_argument(call: Callable[[], Any], pattern: str) -> None:
    with pytest.raises(ValueError, match=pattern):
        call()
