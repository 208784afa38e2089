"""The declarative constructor checks (streammetrics._core.params) and the one definition of the
retrieval update options: each check against the plain rule it declares, messages as
"<name>: <rule>, got <value>"."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import streammetrics as sm
from streammetrics._core.params import Param, check_param
from streammetrics._queries.kernels import QUERY_OPTIONS

VALUES = st.one_of(
    st.none(), st.booleans(), st.integers(-10, 10), st.integers(), st.floats(),
    st.text(max_size=3), st.sampled_from([np.int64(3), np.float32(0.5), np.bool_(True), "auto", [1]]),
)


@settings(max_examples=200, deadline=None)
@given(VALUES)
def test_int_param_is_a_bounded_integer_not_a_bool(value):
    spec = Param("int", "must be an int in [1, 5]", low=1, high=5)
    ok = (isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))
          and 1 <= value <= 5)
    if ok:
        out = check_param(value, "k", spec)
        assert out == value and type(out) is int
    else:
        with pytest.raises(ValueError) as info:
            check_param(value, "k", spec)
        assert str(info.value) == f"k: must be an int in [1, 5], got {value!r}"[:300]


@settings(max_examples=200, deadline=None)
@given(VALUES)
def test_real_param_is_a_finite_number_above_an_open_bound(value):
    spec = Param("real", "must be a finite number > 0 or None", low=0.0, low_open=True, optional=True)
    numeric = isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, (bool, np.bool_))
    try:
        as_float = float(value) if numeric else math.nan
    except OverflowError:
        as_float = math.inf
    if value is None:
        assert check_param(value, "every_seconds", spec) is None
    elif numeric and math.isfinite(as_float) and as_float > 0:
        assert check_param(value, "every_seconds", spec) == as_float
    else:
        with pytest.raises(ValueError, match=r"^every_seconds: must be a finite number > 0 or None, got "):
            check_param(value, "every_seconds", spec)


@settings(max_examples=200, deadline=None)
@given(VALUES)
def test_choice_param_matches_kind_and_value(value):
    choices = (True, False, "auto", None)
    spec = Param("choice", "must be True, False, 'auto' or None", choices=choices)
    if value is None or (isinstance(value, (bool, np.bool_))) or value == "auto":
        out = check_param(value, "per_class", spec)
        assert out == value and type(out) in (bool, str, type(None))  # the plain choice
    else:
        with pytest.raises(ValueError) as info:
            check_param(value, "per_class", spec)
        assert str(info.value) == f"per_class: must be True, False, 'auto' or None, got {value!r}"[:300]


def test_number_param_words_a_non_finite_value_by_its_own_rule():
    spec = Param("number", "expected a number", finite_rule="expected a finite number")
    assert check_param("2.5", "rel_level", spec) == 2.5  # what float() takes, as before
    with pytest.raises(ValueError, match=r"^rel_level: expected a number, got 'x'$"):
        check_param("x", "rel_level", spec)
    with pytest.raises(ValueError, match=r"^rel_level: expected a finite number, got inf$"):
        check_param(math.inf, "rel_level", spec)


def test_retrieval_options_are_defined_once():
    # the options the metric, its state and a MetricSet take are the one QueryOptions list ...
    assert {"doc_ids", "judged", "n_relevant", "query_ids"} == QUERY_OPTIONS
    metric = sm.NDCG(3)
    assert metric._state.update_keywords == QUERY_OPTIONS
    # ... and the window's query state takes the same names (plus its timestamp)
    for wrapper in (sm.Window(sm.NDCG(3), size=4), sm.Decayed(sm.NDCG(3), half_life=4)):
        assert wrapper._state.update_keywords == QUERY_OPTIONS | {"timestamp"}
        with pytest.raises(TypeError, match="unexpected keyword argument 'doc_id'"):
            wrapper.update([1, 0], [0.5, 0.2], doc_id=["a", "b"])
        wrapper.update([1, 0], [0.5, 0.2], doc_ids=["a", "b"])  # the shared names pass through
        assert wrapper.compute() == pytest.approx(1.0)
    ms = sm.MetricSet(a=sm.NDCG(3), b=sm.MRR())
    for target, counted in ((metric, metric), (ms, ms["a"])):
        with pytest.raises(TypeError, match="unexpected keyword argument 'doc_id'"):
            target.update([1, 0], [0.5, 0.2], doc_id=["a", "b"])
        assert counted.n_queries == 0  # refused: nothing folded in
