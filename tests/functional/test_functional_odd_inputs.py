"""Odd inputs to every function of ``streammetrics.functional``, side by side with scikit-learn
(Fairlearn for the fairness functions): the table and the rule are in
``tests/_support/functional_odd_inputs.py`` -- where the reference raises on purpose we raise the same
type, where it raises by accident we raise a ``ValueError``, where it returns we return the same
value, except for the documented differences (``DOCUMENTED``: we refuse; ``DIFFERENT``: the
reference is wrong, checked below against the right value). Plus the accumulators' ``update`` on
the same inputs: refused with a ``ValueError`` naming the argument, the state unchanged."""

from __future__ import annotations

import warnings

import fairlearn.metrics as fm
import numpy as np
import pytest
import sklearn.metrics as skm
from functional_odd_inputs import BASE, KNOWN, cases, compare, function_name
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import sparse

import streammetrics as sm
import streammetrics.functional as F
from streammetrics.functional._targets import InputTypeError

_CASES = cases()


def test_table_covers_every_function():
    # the retrieval_* functions (torchmetrics', one query): tests/functional/test_functional_retrieval.py
    assert {function_name(n) for n in BASE} == {n for n in F.__all__ if not n.startswith("retrieval_")}
    assert {n for n in BASE if n.endswith("[2d]")}, "the regression functions' (n, 2) entries"
    assert len(_CASES) > 5000


@pytest.mark.parametrize(
    "name,arg,odd",
    [pytest.param(*c, marks=pytest.mark.xfail(reason=KNOWN[c], strict=True)) if c in KNOWN else c
     for c in _CASES],
)
def test_odd_input_answered_as_reference(name, arg, odd):
    problem = compare(name, arg, odd)
    assert problem is None, problem


# ---- the issue's examples -------------------------------------------------------------------

def test_issue_examples():
    with pytest.raises(ValueError):
        F.accuracy_score(None, [1])
    with pytest.raises(TypeError):  # scikit-learn's InvalidParameterError is a TypeError too
        F.roc_auc_score(None, [0.5])
    with pytest.raises(ValueError, match="Mix of label input types"):
        F.accuracy_score(["a", 1], [1, 1])
    with pytest.raises(ValueError, match="datetime64"):
        F.accuracy_score(np.array([1, 2], dtype="datetime64[D]"), [1, 1])
    with pytest.raises(ValueError, match="Complex data not supported"):
        F.accuracy_score(np.array([1, 0]) + 0j, [1, 0])
    with pytest.raises(ValueError, match="sample_weight: expected numbers"):
        F.accuracy_score([1, 0], [1, 0], sample_weight=["1", "2"])
    with pytest.raises(ValueError, match="masked"):
        F.roc_auc_score([0, 1, 1], np.ma.array([0.1, 0.2, 0.9], mask=[0, 1, 0]))
    # a mask without masked entries is no mask
    assert F.roc_auc_score([0, 1, 1], np.ma.array([0.1, 0.2, 0.9])) == skm.roc_auc_score([0, 1, 1], [0.1, 0.2, 0.9])


def test_input_type_error_is_both():
    assert issubclass(InputTypeError, ValueError) and issubclass(InputTypeError, TypeError)
    with pytest.raises(InputTypeError, match="y_true"):
        F.f1_score(np.array(1), [1])


# ---- where scikit-learn is wrong: the right value -------------------------------------------

def test_dcg_int64_min_relevance_does_not_wrap():
    y = np.array([[np.iinfo(np.int64).min, 1, 0, 2], [0, 2, 1, 1]])
    s = np.array([[0.6, 0.6, 0.3, 0.3], [0.2, 0.5, 0.3, 0.1]])
    assert F.dcg_score(y, s) == pytest.approx(skm.dcg_score(y.astype(np.float64), s), rel=1e-12)
    assert F.dcg_score(y, s) < 0


@pytest.mark.parametrize("extreme", [np.iinfo(np.int64).min, np.iinfo(np.uint64).max])
def test_dcg_extreme_integer_scores_rank_as_their_order(extreme):
    y = np.array([[3, 1, 0, 2], [0, 2, 1, 1]])
    s = np.array([[extreme, 1, 0, 2], [0, 2, 1, 1]], dtype=np.asarray(extreme).dtype)
    # the same order with small scores: the extreme one is the lowest / the highest
    small = s.astype(object)
    small[0, 0] = -10 if extreme < 0 else 10
    small = small.astype(np.int64)
    assert F.dcg_score(y, s) == pytest.approx(skm.dcg_score(y, small), rel=1e-12)
    assert F.ndcg_score(y, s) == pytest.approx(skm.ndcg_score(y, small), rel=1e-12)


def test_uint64_labels_counted_as_their_own_class():
    yt = np.array([0, 1, 1, 0], dtype=np.uint64)
    yp = np.array([np.iinfo(np.uint64).max, 1, 0, 0], dtype=np.uint64)
    small = np.where(yp == np.iinfo(np.uint64).max, 2, yp).astype(np.int64)  # same order
    np.testing.assert_array_equal(F.confusion_matrix(yt, yp), skm.confusion_matrix(yt.astype(np.int64), small))
    assert F.balanced_accuracy_score(yt, yp) == pytest.approx(
        skm.balanced_accuracy_score(yt.astype(np.int64), small), rel=1e-12)


def test_auc_extreme_integer_x():
    x = np.array([np.iinfo(np.int64).min, 0, 1, 1])
    y = np.array([0.0, 0.5, 0.7, 1.0])
    assert F.auc(x, y) == pytest.approx(np.trapezoid(y, x.astype(np.float64)), rel=1e-12)
    with pytest.raises(ValueError, match="neither increasing nor decreasing"):
        F.auc(np.array([np.iinfo(np.uint64).max, 0, 1, 1], dtype=np.uint64), y)


# ---- fairness: Fairlearn's behaviour --------------------------------------------------------

_FAIR = ["demographic_parity_difference", "demographic_parity_ratio",
         "equalized_odds_difference", "equalized_odds_ratio"]


def test_demographic_parity_float_predictions_refused():
    """The issue's case: Fairlearn reads 0.7 as "not selected" (0.25 here), the old code
    thresholded at 0.5 (0.0): now a ValueError naming the first score."""
    y_pred = [0.7, 0.2, 1.0, 0.0, 1.0, 0.6, 1.0, 1.0]
    g = ["a"] * 4 + ["b"] * 4
    with pytest.raises(ValueError, match=r"y_pred: values must be from \{0, 1\} or \{-1, 1\}.*0.7"):
        F.demographic_parity_difference([0] * 8, y_pred, sensitive_features=g)


@pytest.mark.parametrize("name", _FAIR)
def test_fairness_scores_refused_as_fairlearn_refuses_or_misreads(name):
    for yp in ([0.7, 0.2, 0.9, 0.1], [2, 1, 0, 1], [0, 1, 2, 0]):
        with pytest.raises(ValueError, match="y_pred"):
            getattr(F, name)([0, 1, 1, 0], yp, sensitive_features=["a", "a", "b", "b"])


@settings(max_examples=60, deadline=None)
@given(
    data=st.data(),
    n=st.integers(2, 30),
    encoding=st.sampled_from(["01", "-11", "bool", "float"]),
    weighted=st.sampled_from(["none", "array", "scalar"]),
    name=st.sampled_from(_FAIR),
    method=st.sampled_from(["between_groups", "to_overall"]),
)
def test_fairness_matches_fairlearn(data, n, encoding, weighted, name, method):
    yt = np.array(data.draw(st.lists(st.integers(0, 1), min_size=n, max_size=n)))
    yp = np.array(data.draw(st.lists(st.integers(0, 1), min_size=n, max_size=n)))
    g = np.array(data.draw(st.lists(st.sampled_from("abc"), min_size=n, max_size=n)))
    enc = {"01": lambda a: a, "-11": lambda a: 2 * a - 1, "bool": lambda a: a.astype(bool),
           "float": lambda a: a.astype(np.float64)}[encoding]
    kw = {"sensitive_features": g, "method": method}
    if weighted == "array":
        kw["sample_weight"] = np.array(data.draw(st.lists(st.sampled_from([0.5, 1.0, 2.0, 3.0]), min_size=n, max_size=n)))
    elif weighted == "scalar":
        kw["sample_weight"] = 2.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = getattr(fm, name)(enc(yt), enc(yp), **kw)
    got = getattr(F, name)(enc(yt), enc(yp), **kw)
    assert got == pytest.approx(float(want), rel=1e-12, abs=1e-12, nan_ok=True)


def test_demographic_parity_reads_y_true_length_only():
    g = ["a", "a", "b", "b"]
    for yt in (["x", "y", "x", "z"], [0.3, 7, 2, 1], [5, 5, 5, 5]):
        want = fm.demographic_parity_difference(yt, [1, 0, 0, 0], sensitive_features=g)
        assert F.demographic_parity_difference(yt, [1, 0, 0, 0], sensitive_features=g) == want
    with pytest.raises(ValueError, match="rows"):
        F.demographic_parity_difference([0, 1, 0], [1, 0, 0, 0], sensitive_features=g)


# ---- the accumulators on the same inputs ----------------------------------------------------

_Y = np.array([0, 1, 1, 0])
_S = np.array([0.1, 0.8, 0.4, 0.3])
_W = np.array([1.0, 2.0, 1.0, 1.0])
_ODD = {
    "y_true": {"masked": np.ma.array(_Y, mask=[0, 1, 0, 0]), "complex": _Y + 0j, "None": None,
               "datetime": _Y.astype("datetime64[D]"), "set": {0, 1}},
    "y_score": {"masked": np.ma.array(_S, mask=[0, 1, 0, 0]), "complex": _S + 0j, "str": _S.astype(str)},
    "sample_weight": {"masked": np.ma.array(_W, mask=[0, 1, 0, 0]), "complex": _W + 1j, "str": _W.astype(str),
                      "str-list": ["1", "2", "1", "1"], "object-None": np.array([None, 1, 1, 1], dtype=object),
                      "timedelta": np.array([1, 2, 1, 1], dtype="timedelta64[s]"), "2-d": _W[:, None]},
}


@pytest.mark.parametrize("cls", [sm.AUROC, sm.AveragePrecision, sm.Precision, sm.Accuracy, sm.BrierScore])
@pytest.mark.parametrize("arg,odd", [(a, o) for a, vals in _ODD.items() for o in vals])
def test_accumulator_update_refuses_and_keeps_state(cls, arg, odd):
    labels_only = cls in (sm.Precision, sm.Accuracy)
    second = (_S > 0.5).astype(int) if labels_only else _S
    m = cls().update(_Y, second, sample_weight=_W)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        before = m.compute()
    args = {"y_true": _Y, "y_score": second, "sample_weight": _W}
    args[arg] = _ODD[arg][odd]
    name = "y_pred" if arg == "y_score" and (labels_only or cls is sm.BrierScore) else arg
    with pytest.raises(ValueError, match=name):
        m.update(args["y_true"], args["y_score"], sample_weight=args["sample_weight"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert m.compute() == before


# ---- regression: scikit-learn's answers, our messages ---------------------------------------

def test_regression_odd_inputs_raise_sklearns_types_naming_the_argument():
    y, p = [0.5, 1.0, 2.5, 7.0], [1.0, 1.0, 5.0, 3.5]
    for fn in ("mean_squared_error", "max_error", "r2_score", "median_absolute_error"):
        for odd, arg in ((np.array(1.0), "y_true"), (set(y), "y_true"), (dict(enumerate(p)), "y_pred")):
            args = (odd, p) if arg == "y_true" else (y, odd)
            with pytest.raises(TypeError, match=f"^{arg}: ") as info:  # scikit-learn: a TypeError
                getattr(F, fn)(*args)
            assert isinstance(info.value, ValueError)
            with pytest.raises(TypeError):
                getattr(skm, fn)(*args)
    for w in (2.0, np.array(2.0), sparse.csr_matrix(np.ones((1, 4)))):  # scikit-learn: array-likes only
        with pytest.raises(TypeError, match="^sample_weight: "):
            F.mean_absolute_error(y, p, sample_weight=w)
        with pytest.raises((TypeError, ValueError)):
            skm.mean_absolute_error(y, p, sample_weight=w)
    column = sparse.csr_matrix(np.array(y)[:, None])
    for fn in ("mean_squared_error", "max_error", "median_absolute_error", "d2_tweedie_score"):
        with pytest.raises(TypeError, match="^y_true: sparse matrices are not supported"):
            getattr(F, fn)(column, p)
        with pytest.raises(TypeError):  # InvalidParameterError: "must be an array-like"
            getattr(skm, fn)(column, p)


def test_regression_numbers_given_as_strings_read_where_sklearn_reads_them():
    y, p = np.array([0.5, 1.0, 2.5, 7.0]), np.array([1.0, 1.0, 5.0, 3.5])
    for fn in ("mean_squared_error", "r2_score", "mean_pinball_loss", "d2_absolute_error_score"):
        for ys in (y.astype(str), y.astype(bytes), [[str(v)] for v in y]):
            assert getattr(F, fn)(ys, p) == pytest.approx(getattr(skm, fn)(ys, p), rel=1e-12, abs=1e-12)
    with pytest.raises(ValueError, match=r"^y_pred: could not convert string to float: 'x' \(first offending "
                                         r"value y_pred\[2\]\)"):
        F.mean_squared_error(y, ["1", "2", "x", "3"])
    for fn in ("max_error", "median_absolute_error"):  # scikit-learn's dtype="numeric": refused
        with pytest.raises(ValueError, match="^y_true: "):
            getattr(F, fn)(y.astype(str), p)
        with pytest.raises(ValueError):
            getattr(skm, fn)(y.astype(str), p)
