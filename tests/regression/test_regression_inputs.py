"""Bad input is a ValueError naming the argument and the first offending value, and leaves the
state exactly as it was; bad constructor arguments and hostile state files are refused."""

from __future__ import annotations

import numpy as np
import pytest

import streammetrics as sm
from streammetrics.regression import __all__ as REGRESSION

# the interval metrics take y_pred as (n, 2) bounds: tests/regression/test_whole_intervals.py
ALL = [getattr(sm, name) for name in REGRESSION if not name.startswith("Interval")]


def fed(cls, **kw):
    m = cls(**kw)
    y = np.array([1.0, 2.0, 0.5, 3.0])
    return m.update(y, y + 0.25)


def unchanged(m, bad):
    before = m.state_dict()
    with pytest.raises(ValueError) as info:
        bad(m)
    after = m.state_dict()
    assert before.keys() == after.keys()
    for k in before:
        if isinstance(before[k], np.ndarray):
            np.testing.assert_array_equal(before[k], after[k])
        else:
            assert before[k] == after[k]
    return str(info.value)


@pytest.mark.parametrize("cls", ALL, ids=lambda c: c.__name__)
def test_non_finite_and_mismatched_inputs_name_the_argument_and_value(cls):
    m = fed(cls)
    msg = unchanged(m, lambda m: m.update([1.0, np.nan, 2.0], [1.0, 1.0, 1.0]))
    assert msg.startswith("y_true:") and "contains NaN" in msg and "y_true[1] = nan" in msg
    msg = unchanged(m, lambda m: m.update([1.0, 2.0, 2.0], [1.0, 1.0, -np.inf]))
    assert msg.startswith("y_pred:") and "contains infinity" in msg and "y_pred[2] = -inf" in msg
    msg = unchanged(m, lambda m: m.update([1.0, 2.0], [1.0, 1.0, 1.0]))
    assert "inconsistent numbers of samples: [2, 3]" in msg
    msg = unchanged(m, lambda m: m.update([1.0, 2.0], [1.0, 1.0], sample_weight=[1.0, -1.0]))
    assert msg.startswith("sample_weight:") and "-1.0 at index 1" in msg
    msg = unchanged(m, lambda m: m.update([1.0, 2.0], [1.0, 1.0], sample_weight=[1.0, np.nan]))
    assert "Input sample_weight contains NaN" in msg
    msg = unchanged(m, lambda m: m.update([[1.0, 2.0]], [[1.0, 2.0]]))  # another number of outputs
    assert msg.startswith(("y_true: expected 1 output", "y_true: Multioutput not supported"))
    msg = unchanged(m, lambda m: m.update(["a", "b"], [1.0, 2.0]))
    assert msg.startswith("y_true:")
    msg = unchanged(m, lambda m: m.update([1.0 + 1j], [1.0]))
    assert "Complex data not supported" in msg
    msg = unchanged(m, lambda m: m.update(np.ones((2, 1, 1)), np.ones((2, 1, 1))))
    assert msg.startswith("y_true: expected shape (n,) or (n, n_outputs)")


@pytest.mark.parametrize("cls", [sm.MeanSquaredLogError, sm.RootMeanSquaredLogError])
def test_logs_refuse_values_at_or_below_minus_one(cls):
    m = fed(cls)
    msg = unchanged(m, lambda m: m.update([1.0, 2.0, -1.0], [1.0, 1.0, 1.0]))
    assert msg.startswith("y_true:") and "less than or equal to -1" in msg and "y_true[2] = -1.0" in msg
    msg = unchanged(m, lambda m: m.update([1.0, 2.0], [1.0, -3.0]))
    assert msg.startswith("y_pred:") and "y_pred[1] = -3.0" in msg


@pytest.mark.parametrize("power, y, p, arg, rule", [
    (-1.0, [1.0, 2.0], [1.0, 0.0], "y_pred", "strictly positive y_pred"),
    (1.0, [1.0, -2.0], [1.0, 1.0], "y_true", "non-negative y and strictly positive y_pred"),
    (1.5, [1.0, 2.0], [0.0, 1.0], "y_pred", "non-negative y and strictly positive y_pred"),
    (2.0, [0.0, 2.0], [1.0, 1.0], "y_true", "strictly positive y and y_pred"),
    (3.0, [1.0, 2.0], [1.0, -1.0], "y_pred", "strictly positive y and y_pred"),
])
@pytest.mark.parametrize("cls", [sm.TweedieDeviance, sm.D2TweedieScore])
def test_tweedie_domains(power, y, p, arg, rule, cls):
    m = fed(cls, power=power)
    msg = unchanged(m, lambda m: m.update(y, p))
    assert msg.startswith(f"{arg}:") and rule in msg and f"power={power}" in msg
    values = np.array(y if arg == "y_true" else p)
    first = int(np.argmax(values < 0 if "non-negative y" in rule and arg == "y_true" else values <= 0))
    assert f"{arg}[{first}] = {float(values[first])!r}" in msg


@pytest.mark.parametrize("cls", [sm.TweedieDeviance, sm.D2TweedieScore])
def test_tweedie_domains_name_the_entry_of_several_outputs_and_overflows(cls):
    m = cls(power=2.0, multioutput="raw_values").update([[1.0, 2.0], [3.0, 1.0]], [[1.0, 1.0], [2.0, 2.0]])
    msg = unchanged(m, lambda m: m.update([[1.0, 2.0], [0.0, 1.0]], [[1.0, 1.0], [1.0, 1.0]]))
    assert msg.startswith("y_true:") and "y_true[1, 0] = 0.0" in msg
    msg = unchanged(m, lambda m: m.update([[1.0, 2.0]], [[1.0, -2.0]]))
    assert msg.startswith("y_pred:") and "y_pred[0, 1] = -2.0" in msg
    m3 = cls(power=3.0).update([1.0, 2.0], [1.0, 1.5])
    msg = unchanged(m3, lambda m: m.update([1e200, 1.0], [1e-200, 1.0]))
    assert msg.startswith("y_pred: values too large")


def test_values_whose_squares_overflow_are_refused_not_stored_as_inf():
    m = fed(sm.MeanSquaredError)
    msg = unchanged(m, lambda m: m.update([1e200, -1e200], [0.0, 0.0]))
    assert msg.startswith("y_true: values too large")
    msg = unchanged(m, lambda m: m.update([1e300, 0.0], [-1e300, 0.0]))
    assert "too large" in msg
    m2 = fed(sm.MeanSquaredLogError)
    assert np.isfinite(m2.compute())


def test_one_sample_as_scalars_and_a_row_of_known_outputs():
    m = sm.MeanSquaredError().update(3.0, 2.5).update(1, 2, sample_weight=2.0)
    assert m.compute() == pytest.approx((0.25 + 2.0) / 3.0, rel=1e-15)
    r = sm.MeanAbsoluteError(multioutput=[1.0, 1.0])  # two outputs: a 1-D pair is one row
    r.update([1.0, 2.0], [0.0, 0.0]).update([[1.0, 2.0]], [[1.0, 2.0]])
    assert r.compute() == pytest.approx(0.75)


@pytest.mark.parametrize("make, match", [
    (lambda: sm.MeanSquaredError(multioutput="variance_weighted"), "multioutput: Allowed 'multioutput'"),
    (lambda: sm.R2Score(multioutput="mean"), "multioutput: Allowed"),
    (lambda: sm.R2Score(multioutput=[0.0, 0.0]), "multioutput: the output weights sum to 0"),
    (lambda: sm.R2Score(multioutput=[1.0, np.nan]), "multioutput: Input multioutput contains NaN"),
    (lambda: sm.R2Score(force_finite="yes"), "force_finite"),
    (lambda: sm.PinballLoss(alpha=1.5), "alpha: expected a number in"),
    (lambda: sm.TweedieDeviance(power=0.5), "power: expected a number <= 0 or >= 1"),
    (lambda: sm.TweedieDeviance(power=np.nan), "power"),
])
def test_constructor_arguments(make, match):
    with pytest.raises(ValueError, match=match):
        make()


def test_merge_refuses_another_number_of_outputs_and_nothing_changes():
    a = sm.MeanSquaredError(multioutput="raw_values").update([[1.0, 2.0]], [[1.0, 1.0]])
    b = sm.MeanSquaredError(multioutput="raw_values").update([1.0], [2.0])
    before = a.state_dict()
    with pytest.raises(ValueError, match="outputs"):
        a.merge(b)
    np.testing.assert_array_equal(a.state_dict()["m2_r"], before["m2_r"])
    assert sm.MeanSquaredError(multioutput="raw_values").merge(b).compute() == [1.0]  # empty: adopts


def _moments_state(**changes):
    m = sm.R2Score(multioutput="raw_values").update([[1.0, 2.0], [3.0, 5.0], [2.0, 2.0]],
                                                    [[1.5, 2.0], [2.0, 4.0], [2.0, 3.0]])
    sd = m.state_dict()
    sd.update(changes)
    return sd


@pytest.mark.parametrize("changes, match", [
    ({"m2_y": np.array([1.0, -1.0])}, "m2_y"),
    ({"abs_r": np.array([np.inf, 1.0])}, "non-finite"),
    ({"mean_y": np.array([1.0])}, "shape"),
    ({"rows": np.array(2.5)}, "whole number"),
    ({"rows": np.array(0.0)}, "both be 0 or both positive"),
    ({"weight": np.array(-3.0)}, "weight"),
    ({"mean_y_lo": np.array([0.5, 0.0])}, "rounding residue"),
    ({"mean_r": np.array([1e200, 0.0]), "mean_r_lo": np.array([0.0, 0.0])}, "beyond|overflow"),
    ({"extra": np.zeros(2)}, "unexpected arrays"),
    ({"m2_r": np.array(["a", "b"])}, "non-numeric"),
])
def test_hostile_moment_states_are_refused(changes, match):
    sd = _moments_state(**changes)
    with pytest.raises(ValueError, match=match):
        sm.loads(sm.dumps(sm.R2Score.from_state_dict(sd)))  # never built: from_state_dict raises


def test_hostile_loss_and_max_states_are_refused():
    sd = sm.PinballLoss().update([1.0, 2.0], [2.0, 2.0]).state_dict()
    for changes, match in (({"loss": np.array([-1.0])}, "loss"), ({"loss_lo": np.array([0.25])}, "residue"),
                           ({"rows": np.array(0.0), "weight": np.array(0.0)}, "zero sums")):
        with pytest.raises(ValueError, match=match):
            sm.PinballLoss.from_state_dict({**sd, **changes})
    sd = sm.MaxError().update([1.0, 2.0], [2.0, 2.0]).state_dict()
    with pytest.raises(ValueError, match="max"):
        sm.MaxError.from_state_dict({**sd, "max": np.array([np.nan])})
    with pytest.raises(ValueError, match="output"):
        sm.MaxError(multioutput=[1.0, 1.0]).from_state_dict({**sd, "config": {"multioutput": [1.0, 1.0]}})
