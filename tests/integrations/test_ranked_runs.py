"""``_ranked.runs_of`` reads the exact buffer through its pair-level view: the same runs as the
saved state's arrays give (the definition it replaced), unweighted and weighted."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from streammetrics._engines.plan import empty_set
from streammetrics._engines.ranked import runs_config, runs_of


def from_state_dict(acc: Any) -> tuple[Any, ...]:
    """The runs as the state dict holds them: values in group order, cut at the offsets."""
    sd = acc.state_dict()
    values, off = np.asarray(sd["s.values"], dtype=np.float64), sd["s.offsets"]
    w = sd.get("s.weights")
    cut = int(off[1])
    return (values[:cut], None if w is None else w[:cut], values[cut:], None if w is None else w[cut:])


@pytest.mark.parametrize("case", ["plain", "weighted", "weighted_later", "float32", "ignored", "one_class",
                                  "empty"])
def test_runs_of_equals_the_saved_arrays(case: str) -> None:
    rng = np.random.default_rng(5)
    n = 500
    y = rng.integers(0, 2, n)
    s = np.round(rng.random(n), 2)  # ties
    ignore = -1 if case == "ignored" else None
    acc = empty_set(runs_config(ignore), "MetricSet")
    if case == "ignored":
        y[::5] = -1
    if case == "one_class":
        y[:] = 1
    if case == "float32":
        s = s.astype(np.float32)
    if case != "empty":
        for lo in range(0, n, 97):  # several sorted runs to consolidate
            part = slice(lo, lo + 97)
            w = rng.random(n)[part] + 0.1 if case == "weighted" or (case == "weighted_later" and lo) else None
            acc.update(y[part], s[part], sample_weight=w)
    got, want = runs_of(acc), from_state_dict(acc)
    for a, b in zip(got, want, strict=True):
        assert (a is None) == (b is None)
        if a is not None:
            assert a.dtype == np.float64 and a.tobytes() == np.asarray(b, dtype=np.float64).tobytes()
    assert got[0].shape[0] + got[2].shape[0] == (0 if case == "empty" else int((y != -1).sum()))
    assert (got[1] is None) == (case in ("plain", "float32", "ignored", "one_class", "empty"))
