"""Weights that are all zero: every function of ``streammetrics.functional`` answers as its
scikit-learn namesake does -- the same exception type and message (scikit-learn's
``_check_sample_weight`` refuses them; ``top_k_accuracy_score``, ``dcg_score`` and
``ndcg_score`` average with ``numpy.average``, which raises ``ZeroDivisionError``)."""

from __future__ import annotations

import inspect
import warnings

import numpy as np
import pytest
import sklearn.metrics as skm

import streammetrics.functional as F

_RNG = np.random.default_rng(0)
_INPUTS = [
    (np.array([0, 1, 1, 0, 1, 0]), np.array([0, 1, 0, 0, 1, 1])),
    (np.array([0, 1, 1, 0, 1, 0]), np.array([0.1, 0.8, 0.4, 0.3, 0.9, 0.6])),
    (np.array([0, 1, 2, 2, 1, 0]), np.array([0, 2, 2, 1, 1, 0])),
    (np.array([0, 1, 2, 2, 1, 0]), _RNG.dirichlet([1, 1, 1], 6)),
    (np.array([[1, 0, 1], [0, 1, 0], [1, 1, 0]]), np.array([[0.9, 0.2, 0.4], [0.1, 0.8, 0.3], [0.5, 0.6, 0.2]])),
    (np.array([1.5, 2.0, 0.5, 3.0, 1.0, 2.5]), np.array([1.0, 2.5, 0.5, 2.0, 1.5, 2.5])),  # positive targets
]
_KWARGS = {"fbeta_score": {"beta": 0.5},  # required arguments beside the targets
           "metric_at_thresholds": {"metric_func": lambda y, p, sample_weight=None: float(np.mean(y == p))}}
_NAN_ON_ZERO = {"label_ranking_average_precision_score"}
_NAMES = sorted(n for n in F.__all__ if hasattr(skm, n)
                and "sample_weight" in inspect.signature(getattr(skm, n)).parameters)


def _outcome(fn, args, w, kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            fn(*args, sample_weight=w, **kwargs)
        except Exception as e:  # noqa: BLE001 - the outcome compared is the exception itself
            return type(e), str(e)
    return None, None


@pytest.mark.parametrize("name", _NAMES)
def test_all_zero_weights_answer_as_scikit_learn(name):
    ours, theirs = getattr(F, name), getattr(skm, name)
    kwargs = _KWARGS.get(name, {})
    compared = 0
    for args in _INPUTS:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                theirs(*args, **kwargs)  # an input this function takes
        except Exception:  # noqa: BLE001
            continue
        w = np.zeros(args[0].shape[0])
        want = _outcome(theirs, args, w, kwargs)
        if name in _NAN_ON_ZERO:  # scikit-learn divides 0 by 0 there: nan (numpy's warning)
            assert want[0] is None
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                assert np.isnan(ours(*args, sample_weight=w, **kwargs))
                assert np.isnan(theirs(*args, sample_weight=w, **kwargs))
        else:
            assert want[0] is not None, f"scikit-learn's {name} accepted all-zero weights"
            assert _outcome(ours, args, w, kwargs) == want
        compared += 1
    assert compared, f"no input suits {name}"


def test_some_zero_weights_still_accepted():
    y, p = _INPUTS[0]
    w = np.array([0.0, 1, 0, 2, 0, 1])
    assert F.accuracy_score(y, p, sample_weight=w) == pytest.approx(skm.accuracy_score(y, p, sample_weight=w))
