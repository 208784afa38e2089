"""Constructors of every public class given wrong-typed or out-of-range arguments (nan, inf,
negative, huge ints, strings, bytes, complex, lists, None, bools, other objects): each either
builds a metric that saves and loads, or raises a ``ValueError`` whose message names the
argument -- never another exception, and never a hang or a huge allocation (a size no machine
holds is refused at once)."""

from __future__ import annotations

import inspect
import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import streammetrics as sm
from streammetrics._core.metric import Metric

CLASSES = sorted(n for n in Metric._registry if n in sm.__all__ and n != "MetricSet")
WRAPPERS = {"Window": ("size", "seconds"), "Decayed": ("half_life", "half_life_seconds"),
            "DelayedLabels": (), "Sliced": (), "Estimated": ()}
REQUIRED = {"k": 5, "recall": 0.5, "r": 0.5, "num_classes": 5, "alpha": 0.2,
            "reference": [0.1, 0.4, 0.4, 0.9], "max_k": 5, "min_precision": 0.5}  # reference: Drift (issue #31)
#: extra keyword arguments the classes taking ``**kw`` pass on to the confusion counts
CONFUSION_KW = ("multilabel", "threshold", "ignore_index", "zero_division")

BAD = st.one_of(
    st.sampled_from([math.nan, math.inf, -math.inf, -1, -1.5, 0, 1.5, 10**30, -(10**30), 2**63,
                     10**9, "x", "", "3", b"a", 1 + 2j, [1], [], [[1, 2]], (0.5,), {"a": 1}, None,
                     True, False, np.float64("nan"), np.int64(-1), np.uint64(2**63), object()]),
    st.integers(-100, 1000), st.floats(), st.text(max_size=3),
)


def parameters(name: str) -> list[str]:
    cls = Metric._registry[name]
    sig = inspect.signature(cls.__init__)
    names = [p.name for p in sig.parameters.values()
             if p.name not in ("self", "clock") and p.kind not in (p.VAR_KEYWORD, p.VAR_POSITIONAL)]
    if any(p.kind == p.VAR_KEYWORD for p in sig.parameters.values()):
        names += [k for k in CONFUSION_KW if k not in names]
    return names


def arguments(name: str, param: str, value: object) -> dict[str, object]:
    cls = Metric._registry[name]
    sig = inspect.signature(cls.__init__)
    # TopKAccuracy: num_classes defaults to None only because classes= may give it instead
    kwargs: dict[str, object] = {p.name: REQUIRED[p.name] for p in sig.parameters.values()
                                 if (p.default is p.empty or (name, p.name) == ("TopKAccuracy", "num_classes"))
                                 and p.name in REQUIRED and p.name != param}
    if name in WRAPPERS:
        kwargs["metric"] = sm.Recall()
        knobs = WRAPPERS[name]
        if knobs and param not in knobs:
            kwargs[knobs[0]] = 10
    kwargs[param] = value
    return kwargs


CASES = [(name, param) for name in CLASSES for param in parameters(name)]


@settings(max_examples=80, deadline=None)
@given(st.sampled_from(CASES), BAD)
def test_constructor_argument_is_a_value_error_naming_it(case, value):
    name, param = case
    if param == "metric" and value is None:
        return
    cls = Metric._registry[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            m = cls(**arguments(name, param, value))
        except ValueError as exc:
            assert param in str(exc), f"{name}({param}={value!r}): {exc}"
            return
        except TypeError as exc:  # as Python gives it: a keyword this class does not take
            assert param in CONFUSION_KW and "unexpected keyword argument" in str(exc)
            return
        # accepted: a metric that saves and loads (small ones: a valid many-class state of
        # gigabytes is legitimate, and load's default size limit applies to it)
        if m.nbytes <= 10**7:
            assert type(sm.loads(sm.dumps(m))) is cls


@pytest.mark.parametrize("make, text", [
    (lambda: sm.F1(threshold=[1]), "threshold: expected a finite number, got [1]"),
    (lambda: sm.Recall(threshold=None), "threshold: expected a finite number, got None"),
    (lambda: sm.Accuracy(threshold="0.5"), "threshold: expected a finite number, got '0.5'"),
    (lambda: sm.Precision(threshold=10**400), "threshold: expected a finite number, got an int"),
    (lambda: sm.FBeta(beta="x"), "beta: expected a number >= 0 (or inf), got 'x'"),
    (lambda: sm.AUROC(thresholds=[1j]), "thresholds: expected an int >= 2 or a non-empty 1-D"),
    (lambda: sm.PRCurve(thresholds=2**63), "thresholds=9223372036854775808: implies about"),
    (lambda: sm.WeightedAccuracy(3, weights="abc"), "weights: expected 3 class weights, got 'abc'"),
    (lambda: sm.Recall(num_classes=10**9), "num_classes=1000000000: implies about"),
    (lambda: sm.AUROC(num_classes=10**30), "num_classes=1000000000000000000000000000000: implies"),
    (lambda: sm.BrierScore(num_classes=10**30), "num_classes: at most 4194304 classes"),
])
def test_named_messages(make, text):
    with pytest.raises(ValueError) as info:
        make()
    assert str(info.value).startswith(text)


def test_the_same_message_through_load():
    f1 = sm.F1(threshold=0.25)
    data = sm.dumps(f1)
    assert b"0.25" in data
    # a configuration holding a list where the threshold goes: load names the argument
    from load_corpus import build, split  # the corpus' checksum-recomputing helpers

    header, payload = split(data)
    header["config"]["threshold"] = [1]
    with pytest.raises(ValueError, match=r"F1 config .threshold. must be a number, got \[1\]"):
        sm.loads(build(header, payload))
