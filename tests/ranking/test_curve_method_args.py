"""Curve results' methods (``at``, ``best_threshold``) given wrong-typed arguments: a
``ValueError`` naming the argument, never a TypeError from ``float()`` (issue #12)."""

from __future__ import annotations

import math

import numpy as np
import pytest

import streammetrics as sm


@pytest.fixture(scope="module")
def curves() -> list:
    rng = np.random.default_rng(3)
    y, s = rng.integers(0, 2, 200), rng.random(200)
    return [sm.ROCCurve().update(y, s).compute(), sm.PRCurve().update(y, s).compute(),
            sm.ROCCurve(max_bytes=2048).update(y, s).compute()]


@pytest.mark.parametrize("bad", [[0.5], "0.5", None, 1 + 2j, float("nan"), True])
def test_at_rejects_non_numbers_naming_threshold(curves, bad) -> None:
    for curve in curves:
        with pytest.raises(ValueError, match="^threshold: "):
            curve.at(bad)


def test_at_takes_infinite_and_huge_thresholds(curves) -> None:
    for curve in curves:
        top, bottom = curve.at(math.inf), curve.at(-math.inf)
        assert top.tp == 0 and top.fp == 0
        assert bottom.fn == 0 and bottom.tn == 0
        assert curve.at(10**400).tp == top.tp  # an int beyond float64 is +inf
        assert curve.at(np.float32(0.5)).threshold == curve.at(0.5).threshold


@pytest.mark.parametrize("bad", [[0.9], "0.9", 1 + 2j, float("nan"), float("inf")])
def test_best_threshold_value_must_be_a_number(curves, bad) -> None:
    for curve in curves:
        with pytest.raises(ValueError, match="^value: "):
            curve.best_threshold("tpr_at_tnr", value=bad)


@pytest.mark.parametrize("bad", [[2.0], "2", None, float("inf"), float("nan"), 0.0, -1.0])
def test_best_threshold_beta_must_be_positive_and_finite(curves, bad) -> None:
    for curve in curves:
        with pytest.raises(ValueError, match="^beta: "):
            curve.best_threshold("fbeta", beta=bad)
