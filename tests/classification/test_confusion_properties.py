"""Confusion-family property tests (hypothesis): the per-sample (scalar) path equals the batch
path, for the registered configurations that read one label or score per row. The protocol laws
(batch split, merge, save/load, weights, prefix, rejected input) run for every public metric in
``tests/test_protocol_laws.py``."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from laws import NAMES, REGISTRY, assert_same, assert_same_state, make_data, plain_feed, result

import streammetrics as sm

SCALAR_NAMES = [
    n for n in NAMES
    if REGISTRY[n].kind in ("binary_scores", "binary_labels", "multiclass_labels")
    and REGISTRY[n].feed is plain_feed
    and not isinstance(REGISTRY[n].make(), (sm.Window, sm.Decayed))
    and type(REGISTRY[n].make()).__module__.startswith(("streammetrics.classification.confusion", "streammetrics.classification.topk",
                                                         "streammetrics.classification.report", "streammetrics.wrappers.metricset"))
]


@pytest.mark.parametrize("name", SCALAR_NAMES)
@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(0, 40))
def test_per_sample_scalars_equal_batch(name, seed, n):
    case = REGISTRY[name]
    rng = np.random.default_rng(seed)
    d = make_data(case.kind, rng, n)
    w = rng.random(n)
    one_by_one = case.make()
    for yi, pi, wi in zip(d.y.tolist(), d.p.tolist(), w.tolist(), strict=True):
        one_by_one.update(yi, pi, sample_weight=wi)
    batch = case.make().update(d.y, d.p, sample_weight=w)
    assert_same_state(one_by_one, batch)
    assert_same(result(one_by_one), result(batch))
