"""Constructor arguments declared with ``Param``: each wrong value is a ``ValueError`` whose
message names the argument, states the rule and shows the value (the words users match on)."""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from typing import Any

import pytest

import streammetrics as sm
from streammetrics._intervals import z_value

CASES: list[tuple[Callable[[], Any], str]] = [
    (lambda: sm.F1(num_classes=2.5), "num_classes: must be an int >= 2, got 2.5"),
    (lambda: sm.F1(num_classes=1), "num_classes: must be >= 2, got 1"),
    (lambda: sm.F1(num_classes=0, multilabel=True), "num_classes: must be >= 1, got 0"),
    (lambda: sm.AUROC(3, average="x"), "average: must be one of ('macro', 'weighted', 'micro', None), got 'x'"),
    (lambda: sm.AUROC(scores="x"), "scores: must be 'raw', 'logit' or 'probability', got 'x'"),
    (lambda: sm.AUROC(scores="x", max_bytes=10**6),
     "scores: must be one of ('raw', 'logit', 'probability'), got 'x'"),
    (lambda: sm.AUROC(max_bytes=True), "max_bytes: must be an int, got True"),
    (lambda: sm.Window(sm.F1(), size=2.0), "size: must be an int >= 1, got 2.0"),
    (lambda: sm.Window(sm.F1(), seconds="1"), "seconds: must be a number > 0, got '1'"),
    (lambda: sm.Window(sm.F1(), seconds=-2), "seconds: must be finite and > 0, got -2"),
    (lambda: sm.Window(sm.F1(), seconds=math.inf), "seconds: must be finite and > 0, got inf"),
    (lambda: sm.Window(sm.F1(), seconds=10**400), "seconds: must be finite and > 0, got an int beyond"),
    (lambda: sm.Decayed(sm.F1(), half_life=True), "half_life: must be a finite number > 0, got True"),
    (lambda: sm.Decayed(sm.F1(), half_life_seconds=math.nan),
     "half_life_seconds: must be a finite number > 0, got nan"),
    (lambda: sm.DelayedLabels(sm.F1(), capacity=0), "capacity: must be an int >= 1, got 0"),
    (lambda: sm.DelayedLabels(sm.F1(), ttl=math.inf), "ttl: must be a finite number of seconds > 0 or None, got inf"),
    (lambda: sm.DelayedLabels(sm.F1(), batch_size=1.0), "batch_size: must be an int >= 1, got 1.0"),
    (lambda: sm.DelayedLabels(sm.F1(), max_delay=0), "max_delay: must be a finite number of seconds > 0, got 0"),
    (lambda: sm.CalibrationError(n_bins=2.0), "n_bins: must be an int >= 1, got 2.0"),
    (lambda: z_value(1.0), "confidence: must be in (0, 1), got 1.0"),
    (lambda: z_value("x"), "confidence: must be in (0, 1), got 'x'"),
]


@pytest.mark.parametrize(("build", "message"), CASES, ids=[m.split(":")[0] + str(i) for i, (_, m) in
                                                            enumerate(CASES)])
def test_bad_argument_message(build: Callable[[], Any], message: str) -> None:
    with pytest.raises(ValueError, match="^" + re.escape(message)):
        build()


def test_good_arguments_are_normalised() -> None:
    import numpy as np

    w = sm.Window(sm.F1(), seconds=np.float32(2.5))
    assert type(w.seconds) is float and w.seconds == 2.5
    d = sm.DelayedLabels(sm.F1(), capacity=np.int64(3), ttl=np.int64(4))
    assert type(d.capacity) is int and d.capacity == 3 and type(d.ttl) is float and d.ttl == 4.0
    assert z_value(0.95) == pytest.approx(1.959963984540054)
