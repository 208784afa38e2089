"""``Sliced`` around regression metrics (issue #30): each slice's value is the wrapped metric fed
that slice's rows alone (and scikit-learn's on them), for any batch split, merge and save/load;
one number of outputs for every slice; bounded metrics' certified bounds per slice; the
disparities, tables, the large-state file layout and the Prometheus export."""

from __future__ import annotations

import json
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn import metrics as skm

import streammetrics as sm

#: (make, scikit-learn's function of (y, p, w) or None, kind of targets)
CASES: dict[str, tuple[Callable[[], Any], Any, str]] = {
    "mse": (lambda: sm.MeanSquaredError(), skm.mean_squared_error, "any"),
    "mae_raw": (lambda: sm.MeanAbsoluteError(multioutput="raw_values"),
                lambda y, p, sample_weight: skm.mean_absolute_error(y, p, sample_weight=sample_weight, multioutput="raw_values"), "any"),
    "r2": (lambda: sm.R2Score(), skm.r2_score, "any"),
    "max_error": (lambda: sm.MaxError(), None, "any"),
    "pinball": (lambda: sm.PinballLoss(0.2), lambda y, p, sample_weight: skm.mean_pinball_loss(y, p, sample_weight=sample_weight, alpha=0.2),
                "any"),
    "median_ae": (lambda: sm.MedianAbsoluteError(), skm.median_absolute_error, "any"),
    "msle": (lambda: sm.MeanSquaredLogError(), skm.mean_squared_log_error, "positive"),
    "set": (lambda: sm.MetricSet(mse=sm.MeanSquaredError(), mae=sm.MeanAbsoluteError(), r2=sm.R2Score(),
                                 ev=sm.ExplainedVariance()), None, "any"),
}


def _data(seed: int, n: int, k: int | None, kind: str = "any") -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    shape = (n,) if k is None else (n, k)
    if kind == "positive":
        y, p = rng.integers(0, 5, shape) / 2.0, rng.integers(1, 9, shape) / 2.0
    else:
        y = np.round(rng.normal(size=shape) * 3) / 3  # ties
        p = y + np.round(rng.normal(size=shape) * 2) / 4
    w = rng.integers(0, 4, n).astype(float)  # zeros and repeats
    w[0] = 1.0
    return y, p, w


def _keys(seed: int, n: int, m: int) -> np.ndarray:
    return np.random.default_rng(seed + 1).integers(0, m, n)


def _close(a: Any, b: Any) -> None:
    if isinstance(a, dict):
        assert set(a) == set(b)
        for name in a:
            _close(a[name], b[name])
        return
    np.testing.assert_allclose(np.asarray(a, float), np.asarray(b, float), rtol=1e-12, atol=1e-12,
                               equal_nan=True)


def _each_slice_alone(make: Callable[[], Any], y: np.ndarray, p: np.ndarray, w: np.ndarray,
                      keys: np.ndarray) -> dict[Any, Any]:
    out = {}
    for key in dict.fromkeys(keys.tolist()):
        rows = keys == key
        out[key] = make().update(y[rows], p[rows], sample_weight=w[rows]).compute()
    return out


@settings(max_examples=25, deadline=None)
@given(name=st.sampled_from(sorted(CASES)), seed=st.integers(0, 10**6), n=st.integers(1, 60),
       m=st.integers(1, 5), cuts=st.lists(st.integers(0, 60), max_size=4), k=st.sampled_from([None, 2]))
def test_each_slice_equals_the_metric_on_its_rows_for_any_split_merge_and_save(
        name: str, seed: int, n: int, m: int, cuts: list[int], k: int | None) -> None:
    make, _, kind = CASES[name]
    if name == "msle" and k is not None:
        k = None
    y, p, w = _data(seed, n, k, kind)
    keys = _keys(seed, n, m)
    edges = [0, *sorted(c for c in cuts if c < n), n]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = _each_slice_alone(make, y, p, w, keys)
        split = sm.Sliced(make())
        for a, b in zip(edges[:-1], edges[1:], strict=True):
            split.update(y[a:b], p[a:b], slices=keys[a:b], sample_weight=w[a:b])
        _close(dict(split.compute()), want)
        # a merge of any partition of the rows (here: by parity of the row index)
        parts = [sm.Sliced(make()), sm.Sliced(make())]
        for i, part in enumerate(parts):
            rows = np.arange(n) % 2 == i
            part.update(y[rows], p[rows], slices=keys[rows], sample_weight=w[rows])
        merged = parts[0].merge(parts[1])
        _close(dict(merged.compute()), want)
        back = sm.loads(sm.dumps(split))
        _close(dict(back.compute()), want)
        _close(back.overall(), make().update(y, p, sample_weight=w).compute())
        assert split.counts() == {key: int((keys == key).sum()) for key in want}


@pytest.mark.parametrize("name", [n for n, case in CASES.items() if case[1] is not None])
def test_each_slice_equals_scikit_learn(name: str) -> None:
    make, oracle, kind = CASES[name]
    y, p, w = _data(7, 300, None, kind)
    keys = np.array(["north", "south", "east"])[_keys(7, 300, 3)]
    s = sm.Sliced(make()).update(y, p, slices=keys, sample_weight=w)
    for key, value in s.compute().items():
        rows = keys == key
        _close(value, oracle(y[rows], p[rows], sample_weight=w[rows]))


def test_multioutput_slices_equal_scikit_learn_per_output() -> None:
    y, p, w = _data(3, 200, 3)
    keys = _keys(3, 200, 4)
    s = sm.Sliced(sm.MeanSquaredError(multioutput="raw_values"))
    for a, b in ((0, 1), (1, 77), (77, 200)):
        s.update(y[a:b], p[a:b], slices=keys[a:b], sample_weight=w[a:b])
    for key, value in s.compute().items():
        rows = keys == key
        want = skm.mean_squared_error(y[rows], p[rows], sample_weight=w[rows], multioutput="raw_values")
        _close(value, want)


def test_one_number_of_outputs_for_every_slice() -> None:
    """A new slice must not fix another number of outputs than the slices held (the overall
    value merges them), and a 1-D batch is never cut into blocks that a slice would read as
    one row of k outputs. Rejected batches change nothing."""
    y, p, _ = _data(0, 8, 2)
    s = sm.Sliced(sm.MeanAbsoluteError()).update(y, p, slices=["a"] * 8)
    before = sm.dumps(s)
    with pytest.raises(ValueError, match=r"^y_true: expected 2 output\(s\)"):
        s.update(np.zeros((4, 3)), np.zeros((4, 3)), slices=["b"] * 4)
    with pytest.raises(ValueError, match=r"^y_true: expected 2 output\(s\)"):
        s.update(np.arange(4.0), np.arange(4.0), slices=["b", "b", "c", "c"])
    assert sm.dumps(s) == before
    other = sm.Sliced(sm.MeanAbsoluteError()).update(np.zeros((2, 3)), np.zeros((2, 3)), slices=["b", "b"])
    with pytest.raises(ValueError, match="merge: the slices hold 2 and 3 outputs"):
        s.copy().merge(other)
    # one row of k outputs, as the plain metric reads it once k is known
    s.update(np.array([1.0, 2.0]), np.array([1.5, 2.0]), slices=["b"])
    assert s.counts() == {"a": 8, "b": 1}
    assert s.compute()["b"] == sm.MeanAbsoluteError().update([[1.0, 2.0]], [[1.5, 2.0]]).compute()


def test_a_file_whose_slices_hold_different_outputs_is_refused() -> None:
    """Slice "a" of a 2-output state, slice "b" of a 3-output one, each well formed on its
    own: the overall value could not merge them, so the file is refused."""
    two = sm.Sliced(sm.MeanSquaredError()).update(np.zeros((2, 2)), np.ones((2, 2)), slices=["a", "b"])
    three = sm.Sliced(sm.MeanSquaredError()).update(np.zeros((1, 3)), np.full((1, 3), 2.0), slices=["b"])
    sd, other = two.state_dict(), three.state_dict()
    layout = json.loads(bytes(sd["slices.layout"]).decode())
    assert layout == json.loads(bytes(other["slices.layout"]).decode())
    mixed = dict(sd)
    for j in range(len(layout["arrays"])):
        g = f"slices.g{j}."
        shapes = np.asarray(sd[g + "shapes"])
        first = int(np.prod(shapes[0]))
        mixed[g + "shapes"] = np.concatenate([shapes[:1], np.asarray(other[g + "shapes"])])
        mixed[g + "data"] = np.concatenate([np.asarray(sd[g + "data"])[:first], np.asarray(other[g + "data"])])
    with pytest.raises(ValueError, match=r"^state: the slices hold different numbers of outputs \[2, 3\]"):
        sm.Sliced.from_state_dict(mixed)
    assert sm.Sliced.from_state_dict(sd).compute() == two.compute()


def test_bounds_of_bounded_slices_equal_each_slices_own() -> None:
    rng = np.random.default_rng(5)
    y, p = rng.normal(size=3000), rng.normal(size=3000)
    keys = rng.integers(0, 3, 3000)
    s = sm.Sliced(sm.MedianAbsoluteError(max_bytes=2048)).update(y, p, slices=keys)
    got = s.bounds()
    for key in range(3):
        rows = keys == key
        own = sm.MedianAbsoluteError(max_bytes=2048).update(y[rows], p[rows])
        assert got[key] == own.bounds()
        low, high = got[key]
        assert low <= skm.median_absolute_error(y[rows], p[rows]) <= high
        assert s.compute()[key] == own.compute()
    back = sm.loads(sm.dumps(s))
    assert back.bounds() == got


def test_disparities_tables_and_dicts() -> None:
    y, p, w = _data(11, 120, None)
    keys = np.array(["x", "y", "z"])[_keys(11, 120, 3)]
    s = sm.Sliced(sm.MeanAbsoluteError(), min_count=1).update(y, p, slices=keys, sample_weight=w)
    values = s.compute()
    overall = s.overall()
    assert s.group_max() == max(values.values()) and s.group_min() == min(values.values())
    assert s.difference() == max(values.values()) - min(values.values())
    assert s.difference(method="to_overall") == max(abs(v - overall) for v in values.values())
    assert s.ratio() == min(values.values()) / max(values.values())
    assert json.loads(json.dumps(values.to_dict())) == {k: float(v) for k, v in values.items()}
    frame = values.to_pandas()
    assert list(frame.columns) == ["rows", "value", "undefined"]
    assert frame.loc["x", "value"] == values["x"] and frame.loc["x", "rows"] == int((keys == "x").sum())
    multi = sm.Sliced(sm.MetricSet(mse=sm.MeanSquaredError(), r2=sm.R2Score()))
    multi.update(y, p, slices=keys, sample_weight=w)
    spread = multi.difference()
    for member in ("mse", "r2"):
        per = [v[member] for v in multi.compute().values()]
        assert spread[member] == max(per) - min(per)


def test_the_large_state_layout_and_windows() -> None:
    """1500 slices save with a header that does not grow per slice and load equal; a window
    of a regression metric keeps its overall accumulator beside the slices."""
    y, p, w = _data(2, 6000, None)
    keys = np.arange(6000) % 1500
    small = sm.dumps(sm.Sliced(sm.MeanSquaredError()).update(y[:20], p[:20], slices=keys[:20] % 5))
    big = sm.Sliced(sm.MeanSquaredError()).update(y, p, slices=keys, sample_weight=w)
    data = sm.dumps(big)
    header = int.from_bytes(data[40:48], "little") - int.from_bytes(small[40:48], "little")
    assert header < 1000
    back = sm.loads(data)
    _close(dict(back.compute()), dict(big.compute()))  # nan where a slice's weights are all 0
    win = sm.Sliced(sm.Window(sm.MeanSquaredError(), size=5))
    win.update(y[:40], p[:40], slices=keys[:40] % 2)
    for key in (0, 1):
        rows = np.flatnonzero(keys[:40] % 2 == key)[-5:]
        _close(win.compute()[key], skm.mean_squared_error(y[rows], p[rows]))
    _close(win.overall(), skm.mean_squared_error(y[35:40], p[35:40]))
    _close(sm.loads(sm.dumps(win)).compute(), dict(win.compute()))


def test_bad_batches_name_the_argument_and_change_nothing() -> None:
    s = sm.Sliced(sm.MeanSquaredError()).update([1.0, 2.0], [1.0, 3.0], slices=["a", "b"])
    before = sm.dumps(s)
    with pytest.raises(TypeError, match="missing 1 required positional argument: 'y_pred'"):
        s.update([1.0, 2.0], slices=["a", "b"])  # type: ignore[call-arg]
    with pytest.raises(ValueError, match=r"^y_pred: .*NaN; first offending value y_pred\[2\] = nan"):
        s.update([1.0, 2.0, 3.0], [1.0, 2.0, np.nan], slices=["a", "c", "a"])
    with pytest.raises(ValueError, match=r"^sample_weight: "):
        s.update([1.0, 2.0], [1.0, 2.0], slices=["a", "c"], sample_weight=[1.0, -1.0])
    with pytest.raises(ValueError, match=r"^slices: "):
        s.update([1.0, 2.0], [1.0, 2.0], slices=["a"])
    with pytest.raises(ValueError, match=r"^y_pred: Found input variables with inconsistent numbers"):
        s.update([1.0, 2.0], [1.0], slices=["a", "b"])
    # a slice's refused block: the error names the row of the batch passed, not of the block
    with pytest.raises(ValueError, match=r"^y_true: Mean Squared Logarithmic .*first offending value y_true\[2\] = -3"):
        sm.Sliced(sm.MeanSquaredLogError()).update([1.0, 2.0, -3.0, 1.0], [1.0] * 4, slices=["a", "b", "a", "b"])
    assert sm.dumps(s) == before
    s.update([], [], slices=[])  # an empty batch is accepted and changes nothing
    assert sm.dumps(s) == before
    with pytest.raises(ValueError, match=r"^y_true: expected numbers"):
        s.update(["x", "y"], [1.0, 2.0], slices=["a", "b"])
    assert sm.dumps(s) == before


def test_still_unsupported_families_are_refused_naming_the_accepted_ones() -> None:
    with pytest.raises(ValueError, match=r"^metric: Sliced takes classification and regression .*"
                                         r"Drift and monitoring\.Estimated.*family 'retrieval'"):
        sm.Sliced(sm.NDCG(5))


def test_prometheus_exports_each_regression_slice() -> None:
    pytest.importorskip("prometheus_client")
    from prometheus_client import CollectorRegistry, generate_latest

    from streammetrics.prometheus_sliced import register_sliced

    y, p, _ = _data(4, 100, None)
    keys = np.array(["a", "b"])[_keys(4, 100, 2)]
    s = sm.Sliced(sm.MeanSquaredError()).update(y, p, slices=keys)
    reg = CollectorRegistry()
    register_sliced(s, reg, name="mse")
    text = generate_latest(reg).decode()
    for key in ("a", "b"):
        rows = keys == key
        value = float(text.split(f'streammetrics_mse{{slice="{key}"}} ')[1].split()[0])
        assert abs(value - skm.mean_squared_error(y[rows], p[rows])) < 1e-12


def test_two_key_columns_give_crossed_and_marginal_slices() -> None:
    y, p, w = _data(12, 400, 2)
    region = np.array(["n", "s"])[_keys(12, 400, 2)]
    device = _keys(13, 400, 3)
    s = sm.Sliced(sm.R2Score(multioutput="variance_weighted"))
    s.update(y[:150], p[:150], slices={"region": region[:150], "device": device[:150]}, sample_weight=w[:150])
    s.update(y[150:], p[150:], slices={"region": region[150:], "device": device[150:]}, sample_weight=w[150:])
    for (r, d), value in s.compute().items():
        rows = (region == r) & (device == d)
        _close(value, skm.r2_score(y[rows], p[rows], sample_weight=w[rows], multioutput="variance_weighted"))
    for d, value in s.marginal("device").items():
        rows = device == d
        _close(value, skm.r2_score(y[rows], p[rows], sample_weight=w[rows], multioutput="variance_weighted"))
    assert s.key_names == ("region", "device")
