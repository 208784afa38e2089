"""Parity helper for the ``streammetrics.functional`` tests: call a function of
``streammetrics.functional`` and its namesake in ``sklearn.metrics`` on the same arguments and
check value, type, dtype, errors and warnings agree; and the small helpers of their property
tests (rows as :class:`laws.Data`, weights to draw, a call without warnings)."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import sklearn.exceptions
import sklearn.metrics
from helpers import quiet as quiet  # re-exported: the functional tests' import
from hypothesis import strategies as st
from laws import Data, streamed

import streammetrics
import streammetrics.functional as F

TOL = {"rtol": 1e-12, "atol": 1e-12}


def _warned(record: list[warnings.WarningMessage], undefined: type) -> tuple[bool, bool]:
    """(an undefined-metric warning was raised, another UserWarning was raised)."""
    und = any(issubclass(w.category, undefined) for w in record)
    user = any(issubclass(w.category, UserWarning) and not issubclass(w.category, undefined) for w in record)
    return und, user


def assert_same(ours: Any, ref: Any, where: str = "") -> None:
    """Equal values (1e-12, nan == nan), equal Python types and numpy dtypes, recursively."""
    if isinstance(ref, tuple):
        assert isinstance(ours, tuple) and len(ours) == len(ref), where
        for i, (a, b) in enumerate(zip(ours, ref, strict=True)):
            assert_same(a, b, f"{where}[{i}]")
        return
    if isinstance(ref, dict):
        assert isinstance(ours, dict) and list(ours) == list(ref), (where, list(ours), list(ref))
        for k in ref:
            assert_same(ours[k], ref[k], f"{where}[{k!r}]")
        return
    if ref is None:
        assert ours is None, where
        return
    if isinstance(ref, str):
        assert ours == ref, f"{where}:\n{ours}\n!=\n{ref}"
        return
    if isinstance(ref, np.ndarray):
        assert isinstance(ours, np.ndarray), (where, type(ours))
        assert ours.dtype == ref.dtype, (where, ours.dtype, ref.dtype)
        assert ours.shape == ref.shape, (where, ours.shape, ref.shape)
        np.testing.assert_allclose(ours, ref, **TOL, err_msg=where)
        return
    assert type(ours) is type(ref), (where, type(ours), type(ref), ours, ref)
    np.testing.assert_allclose(ours, ref, **TOL, err_msg=where)


def check(name: str, *args: Any, warn: bool = True, **kwargs: Any) -> Any:
    """Compare ``F.name(*args, **kwargs)`` with ``sklearn.metrics.name``; returns sklearn's value
    (or the exception type both raised). ``warn``: also compare the warnings raised."""
    ref_fn = getattr(sklearn.metrics, name)
    our_fn = getattr(F, name)
    ref_exc: BaseException | None = None
    with warnings.catch_warnings(record=True) as ref_rec:
        warnings.simplefilter("always")
        try:
            ref = ref_fn(*args, **kwargs)
        except (ValueError, NotImplementedError) as exc:
            ref_exc = exc
    with warnings.catch_warnings(record=True) as our_rec:
        warnings.simplefilter("always")
        if ref_exc is not None:
            expected = ValueError if isinstance(ref_exc, ValueError) else NotImplementedError
            try:
                our_fn(*args, **kwargs)
            except expected:
                return expected
            raise AssertionError(f"{name}: scikit-learn raised {ref_exc!r}, streammetrics did not")
        ours = our_fn(*args, **kwargs)
    assert_same(ours, ref, name)
    if warn:
        ref_w = _warned(ref_rec, sklearn.exceptions.UndefinedMetricWarning)
        our_w = _warned(our_rec, streammetrics.UndefinedMetricWarning)
        # an undefined-metric warning where scikit-learn gives one; a plain UserWarning may be
        # either (ours may be the more specific UndefinedMetricWarning)
        assert ref_w[0] == our_w[0] or (ref_w[1] and our_w[0]), (
            name,
            [str(w.message) for w in ref_rec],
            [str(w.message) for w in our_rec],
        )
        if ref_w[1]:
            assert our_w[0] or our_w[1], (name, [str(w.message) for w in ref_rec])
    return ref


def rows(y: np.ndarray, p: np.ndarray) -> Data:
    """Labels and predictions as :class:`laws.Data` with one group per row."""
    return Data(y, p, np.arange(len(y)))


def weights(draw: Any, n: int) -> Any:
    """Draw None, or ``n`` sample weights with zeros and tiny values among them."""
    values = st.lists(st.just(0.0) | st.floats(2.0**-128, 5.0), min_size=n, max_size=n)
    return draw(st.none() | values.map(np.array))


def fed(make: Any, y: np.ndarray, p: np.ndarray, w: Any, seed: int) -> Any:
    """The accumulator ``make()`` fed (y, p, w) in random batches over workers, merged, saved."""
    return streamed(make, rows(y, p), w, np.random.default_rng(seed))
