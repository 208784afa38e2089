"""The hot-path shortcuts of ConfusionCounts / MetricSet give exactly the general path's results.

``ConfusionCounts.prepare`` has two shortcuts (unweighted binary 1-D integer/bool arrays, and
one unweighted sample as Python ints) and ``MetricSet.update`` skips its conversion step for
arrays and Python numbers. These tests feed the same data through a shortcut and through the
general path (lists, numpy scalars, or all-ones weights, which the shortcuts never take) and
require identical states, values and error messages.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import streammetrics as sm
from streammetrics._counts.confusion_counts import ConfusionCounts

DTYPES = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "bool"]


def _set() -> sm.MetricSet:
    return sm.MetricSet(precision=sm.Precision(), recall=sm.Recall(), f1=sm.F1(), accuracy=sm.Accuracy())


def _outcome(fn):  # type: ignore[no-untyped-def]
    try:
        fn()
    except ValueError as exc:
        return ("error", str(exc))
    return ("ok", None)


labels = st.lists(st.sampled_from([0, 1]), min_size=0, max_size=40)


@settings(max_examples=150, deadline=None)
@given(
    y=labels,
    p=labels,
    ydt=st.sampled_from(DTYPES),
    pdt=st.sampled_from(DTYPES),
    bad=st.one_of(st.none(), st.tuples(st.booleans(), st.integers(0, 39),
                                       st.sampled_from([2, 3, -1, 127, 2**31 - 1]))),
)
def test_binary_batch_shortcut_equals_general_path(y, p, ydt, pdt, bad) -> None:  # type: ignore[no-untyped-def]
    n = min(len(y), len(p))
    y, p = list(y[:n]), list(p[:n])
    if bad is not None and n:
        in_y, i, value = bad
        target, dt = (y, ydt) if in_y else (p, pdt)
        if dt != "bool" and np.can_cast(np.min_scalar_type(value), dt, "same_kind") \
                and np.iinfo(dt).min <= value <= np.iinfo(dt).max:
            target[i % n] = value
    ya, pa = np.array(y, dtype=ydt), np.array(p, dtype=pdt)
    fast, general = _set(), _set()
    got = _outcome(lambda: fast.update(ya, pa))  # the shortcut (when valid)
    want = _outcome(lambda: general.update(ya, pa, sample_weight=np.ones(n)))  # general path
    assert got == want
    if got[0] == "ok":
        np.testing.assert_array_equal(fast["precision"]._state.matrix(), general["precision"]._state.matrix())
    else:  # atomic: a rejected batch changes nothing
        assert fast["precision"]._state.matrix().sum() == 0


def test_mixed_dtypes_and_views() -> None:
    rng = np.random.default_rng(1)
    y = rng.integers(0, 2, 1000)
    p = rng.integers(0, 2, 1000)
    ref = _set().update(y.tolist(), p.tolist()).compute()
    for a, b in [(y.astype(np.uint64), p), (y, p.astype(np.uint64)), (y.astype(bool), p),
                 (y[::-1][::-1], p.astype(np.int8)), (y.astype(np.uint8), p.astype(bool))]:
        assert _set().update(a, b).compute() == ref
    # strided views take the shortcut too
    y2, p2 = np.repeat(y, 2)[::2], np.repeat(p, 2)[::2]
    assert _set().update(y2, p2).compute() == ref


def test_scalar_shortcut_equals_numpy_scalars_and_weights_after_tracking() -> None:
    rng = np.random.default_rng(2)
    y = rng.integers(0, 2, 300).tolist()
    p = rng.integers(0, 2, 300).tolist()
    for ignore in (None, 1):
        a = ConfusionCounts("binary", ignore_index=ignore)
        b = ConfusionCounts("binary", ignore_index=ignore)
        # weights first: counts_w2 is tracked, then both shortcuts must keep it right
        for s in (a, b):
            s.apply(s.prepare([1, 0, 1], [1, 1, 0], sample_weight=[0.5, 2.0, 1.5]))
        for i, (yi, pi) in enumerate(zip(y, p, strict=True)):
            a.apply(a.prepare(yi, pi))  # Python ints: shortcut
            b.apply(b.prepare(np.int64(yi), np.int64(pi)))  # numpy scalars: general path
            if i % 50 == 0 and ignore is None:
                batch_y, batch_p = np.array(y[:20]), np.array(p[:20])
                a.apply(a.prepare(batch_y, batch_p))  # array shortcut
                b.apply(b.prepare(batch_y.tolist(), batch_p.tolist()))  # lists: general path
        ra, rb = a.arrays(), b.arrays()
        for k in ra:
            np.testing.assert_array_equal(ra[k], rb[k])


@pytest.mark.parametrize("num_classes", [None, 3])
@pytest.mark.parametrize(("yv", "pv"), [(0, 5), (5, 0), (-1, 0), (0, -1), (2, 1)])
def test_scalar_shortcut_errors_match_general_path(num_classes, yv, pv) -> None:  # type: ignore[no-untyped-def]
    a, b = ConfusionCounts("binary" if num_classes is None else "multiclass", num_classes), \
        ConfusionCounts("binary" if num_classes is None else "multiclass", num_classes)
    got = _outcome(lambda: a.prepare(yv, pv))
    want = _outcome(lambda: b.prepare(np.int64(yv), np.int64(pv)))
    assert got[0] == want[0]
    assert got[0] == "ok" or got[1] == re.sub(r"np\.int64\((-?\d+)\)", r"\1", want[1])


def test_metricset_skips_conversion_only_for_plain_inputs() -> None:
    ms = _set()
    with pytest.raises(ValueError, match="y_true: expected numbers or booleans"):
        ms.update(np.array(["a", "b"]), np.array([0, 1]))
    with pytest.raises(ValueError, match="y_pred: labels must be 0 or 1"):
        ms.update(np.array([0, 1]), np.array([0, 2]))
    assert ms["accuracy"]._state.matrix().sum() == 0
    ms.update(True, 1).update(0, 0.7).update([1, 0], [1, 1])
    assert ms["accuracy"]._state.matrix().tolist() == [[0.0, 2.0], [0.0, 2.0]]
