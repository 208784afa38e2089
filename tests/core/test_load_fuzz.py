"""Crafted-file fuzzer: a state file is hostile input (a checksum is not authentication).

Valid saved files of every public accumulator and wrapper (``load_corpus.CORPUS``) are mutated
-- header values, types, nesting, sizes, missing and extra keys; array bytes; array shapes --
and re-checksummed. ``loads`` must either raise ``ValueError`` or give a metric that computes
(no exception, no RuntimeWarning, no infinite value), re-saves and re-loads, each case within a
couple of seconds. Huge declared sizes are loaded in a subprocess under an address-space limit.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
import textwrap
import tracemalloc
import warnings
from typing import Any

import load_corpus as lc
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from load_corpus import CORPUS, INFINITE_BY_DEFINITION, build, saved, split, values_of

import streammetrics as sm

NAMES = sorted(CORPUS)
SPECIALS: list[Any] = [
    0, 1, -1, 2, 3, 7, 2**31, 2**53 + 1, 2**63, -(2**63), 10**7, 10**30, 0.5, -0.5, 1e-320, 1e308,
    -1e308, math.nan, math.inf, -math.inf, True, False, None, "", "x", "Recall", "macro", [], [1],
    [[1, 2]], [None], ["a", "b"], {}, {"a": 1}, {"class": "Recall", "config": {}}, 1e7, 3e8,
]
FLOAT_SPECIALS = [math.nan, math.inf, -math.inf, -1.0, -0.0, 0.0, 1e308, 1e200, 1e-320, 2.0**60, 3.0]
INT_SPECIALS = [-1, 0, 1, 2, 3, 2**31, 2**62, 2**63 - 1, -(2**63), 10**12]
CACHE = {name: saved(name) for name in NAMES}
PEAK_BYTES = 64 * 2**20  # a load of a few kilobytes may not allocate more than this


def paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every path into a JSON value (the value itself included)."""
    out = [prefix]
    if isinstance(value, dict):
        for k, v in value.items():
            out += paths(v, (*prefix, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            out += paths(v, (*prefix, i))
    return out


def get(value: Any, path: tuple[Any, ...]) -> Any:
    for k in path:
        value = value[k]
    return value


def mutate_header(header: dict[str, Any], data: st.DataObject) -> dict[str, Any]:
    h = json.loads(json.dumps(header))
    all_paths = [p for p in paths(h) if p]
    path = data.draw(st.sampled_from(all_paths), label="path")
    parent, key = get(h, path[:-1]), path[-1]
    action = data.draw(st.sampled_from(["replace", "replace", "delete", "wrap", "nest", "extra",
                                        "scale"]), label="action")
    old = parent[key]
    if action == "replace":
        parent[key] = data.draw(st.sampled_from(SPECIALS), label="value")
    elif action == "delete":
        del parent[key]
    elif action == "wrap":
        parent[key] = [old]
    elif action == "nest":
        nested: Any = old
        for _ in range(data.draw(st.integers(2, 80), label="depth")):
            nested = [nested]
        parent[key] = nested
    elif action == "extra":
        target = parent if isinstance(parent, dict) else h
        target[data.draw(st.sampled_from(["bogus", "name", "class", "config"]), label="k")] = 1
    else:  # scale a number: sizes, counts, times
        if isinstance(old, (int, float)) and not isinstance(old, bool):
            factor = data.draw(st.sampled_from([-1, 2, 10, 1000, 10**6, 10**12]), label="factor")
            parent[key] = old * factor
        else:
            parent[key] = data.draw(st.sampled_from(SPECIALS), label="value")
    return h


def _usable(spec: Any, payload: bytes) -> bool:
    """An array entry that (still) describes bytes of the payload (the header may be mutated)."""
    try:
        dtype = np.dtype(spec["dtype"])
        off, nb, name = spec["offset"], spec["nbytes"], spec["name"]
        return (dtype.kind in "biuf" and type(off) is int and type(nb) is int and isinstance(name, str)
                and off >= 0 and nb > 0 and nb % dtype.itemsize == 0 and off + nb <= len(payload))
    except (KeyError, TypeError, ValueError):
        return False


def mutate_payload(header: dict[str, Any], payload: bytes, data: st.DataObject) -> tuple[dict, bytes]:
    arrays = header.get("arrays") if isinstance(header, dict) else None
    arrays = [a for a in arrays if _usable(a, payload)] if isinstance(arrays, list) else []
    if not arrays:
        return header, payload
    spec = data.draw(st.sampled_from(arrays), label="array")
    dtype = np.dtype(spec["dtype"])
    arr = np.frombuffer(payload[spec["offset"]:spec["offset"] + spec["nbytes"]], dtype=dtype).copy()
    flat = arr.reshape(-1)
    action = data.draw(st.sampled_from(["value", "value", "resize", "swap"]), label="payload action")
    if action == "resize":  # a consistent description of a shorter / longer array
        n = data.draw(st.sampled_from([0, 1, max(flat.size - 1, 0), flat.size + 1]), label="size")
        new = np.resize(flat, n) if flat.size else np.zeros(n, dtype)
        h = json.loads(json.dumps(header))
        tail = len(payload)
        a = h["arrays"][header["arrays"].index(spec)]
        a["shape"], a["nbytes"], a["offset"] = [n], new.nbytes, tail
        return h, payload + new.tobytes()
    i = data.draw(st.integers(0, flat.size - 1), label="index")
    if action == "swap" and flat.size > 1:
        j = data.draw(st.integers(0, flat.size - 1), label="other")
        flat[i], flat[j] = flat[j], flat[i]
    elif dtype.kind == "f":
        flat[i] = data.draw(st.sampled_from(FLOAT_SPECIALS), label="float")
    elif dtype.kind == "b":
        flat.view(np.uint8)[i] = data.draw(st.sampled_from([0, 1, 2, 255]), label="bool byte")
    else:
        info = np.iinfo(dtype)
        value = data.draw(st.sampled_from(INT_SPECIALS), label="int")
        flat[i] = min(max(value, info.min), info.max)
    start = spec["offset"]
    return header, payload[:start] + arr.tobytes() + payload[start + spec["nbytes"]:]


def assert_loads_safely(data: bytes) -> None:
    """``ValueError``, or a metric that computes finite values (nan = undefined), re-saves and
    re-loads; all within ``PEAK_BYTES`` of allocation (numpy's included: it reports to
    tracemalloc), so no declared size makes a short file allocate at its word."""
    tracemalloc.start()
    try:
        _load_compute_resave(data)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < PEAK_BYTES, f"allocated {peak} bytes at peak"


def _load_compute_resave(data: bytes) -> None:
    try:
        metric = sm.loads(data)
    except ValueError as exc:
        assert str(exc)
    else:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", sm.UndefinedMetricWarning)
            warnings.simplefilter("error", RuntimeWarning)
            result = metric.compute()
            nums = values_of(result, INFINITE_BY_DEFINITION)
            assert not any(math.isinf(v) for v in nums), (type(metric).__name__, result)
            again = sm.loads(sm.dumps(metric))
            assert type(again) is type(metric)
            interval = getattr(metric, "interval", None)
            if interval is not None:
                try:
                    low, high = interval()
                except (ValueError, AttributeError):  # not for this configuration / wrapped metric
                    pass
                else:
                    assert not np.any(np.asarray(low) > np.asarray(high)), (low, high)


fuzz = settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def test_the_corpus_covers_every_public_accumulator():
    public = {n for n in sm.__all__ if isinstance(getattr(sm, n), type)
              and issubclass(getattr(sm, n), sm.Metric) and getattr(sm, n) is not sm.Metric}
    covered = {type(sm.loads(CACHE[name])).__name__ for name in NAMES}
    aliases = {"TPR", "Sensitivity", "TNR", "FPR", "FNR", "PPV"}  # other names of covered classes
    assert public - aliases <= covered, sorted(public - aliases - covered)


@pytest.mark.parametrize("name", NAMES)
def test_every_saved_state_round_trips(name):
    assert_loads_safely(CACHE[name])
    assert sm.dumps(sm.loads(CACHE[name])) == CACHE[name]


@pytest.mark.parametrize("name", NAMES)
@fuzz
@given(data=st.data())
def test_mutated_headers_load_or_raise_value_error(name, data):
    header, payload = split(CACHE[name])
    assert_loads_safely(build(mutate_header(header, data), payload))


@pytest.mark.parametrize("name", NAMES)
@fuzz
@given(data=st.data())
def test_mutated_arrays_load_or_raise_value_error(name, data):
    header, payload = split(CACHE[name])
    h, p = mutate_payload(header, payload, data)
    assert_loads_safely(build(h, p))


@pytest.mark.parametrize("name", NAMES)
@settings(max_examples=10, deadline=None)
@given(data=st.data())
def test_mutated_headers_and_arrays_together(name, data):
    header, payload = split(CACHE[name])
    h, p = mutate_payload(mutate_header(header, data), payload, data)
    assert_loads_safely(build(h, p))


# -- a crafted file that loads must also merge, update and read as a valid state does -----------
def _predict_label(scores):
    def feed(m):
        m.predict(["fz1", "fz2"], scores)
        m.label(["fz1", "fz2"], [0, 1])
    return feed


def _intervals(m):
    """Regression prediction intervals: targets and (n, 2) [lower, upper] bounds."""
    return m.update([0.5, 1.5, 3.0], [[0.0, 1.0], [1.0, 2.0], [0.0, 2.5]])


FEEDERS = [lc._binary, lc._multiclass, lc._multilabel, lc._queries, lc._trec, lc._diversity, lc._sliced, lc._sliced_scores,
           lc._sliced_controls, _intervals,
           lc._scores, lc._probabilities,  # monitoring (no labels)
           lambda m: m.update([0.2, 0.8]),  # reg-delayed: probabilities alone (Window(Estimated))
           lc._samplewise,  # multidim_average="samplewise": (N, C, ...) scores, no weights
           _predict_label([0.3, 0.8]), _predict_label([[0.2, 0.3, 0.5], [0.6, 0.2, 0.2]]),
           _predict_label([[0.0, 1.0], [1.0, 2.0]])]  # reg-delayed: DelayedLabels of intervals


def _feeder(name: str) -> Any:
    """The corpus helper that feeds this entry a valid batch (the one that does not raise)."""
    for feed in FEEDERS:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                feed(sm.loads(CACHE[name]))
            return feed
        except (ValueError, TypeError):  # not this entry's kind of input
            continue
    raise AssertionError(f"no feeder for {name}")


def _optional(read: Any) -> Any:
    """A read some configurations do not offer (interval, bounds): its ValueError / missing
    method is fine, anything else is not."""
    try:
        return read()
    except (ValueError, AttributeError) as exc:
        if isinstance(exc, AttributeError) and not str(exc).startswith(("has no", type(exc).__name__)) \
                and " has no " not in str(exc):
            raise
        return None


@pytest.mark.parametrize("name", NAMES)
@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_mutated_files_that_load_merge_update_and_read(name, data):
    """What load lets through, every later call relies on: merging with a valid twin (both
    ways), an update with a valid batch, then compute (finite or nan), interval, bounds and a
    save / load round trip -- a ValueError where a call refuses, never another exception."""
    header, payload = split(CACHE[name])
    h, p = mutate_payload(header, payload, data)
    if data.draw(st.booleans(), label="header too"):
        h = mutate_header(h, data)
    try:
        metric = sm.loads(build(h, p))
    except ValueError:
        return
    feed = _feeder(name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", sm.UndefinedMetricWarning)
        warnings.simplefilter("error", RuntimeWarning)
        for step in (lambda: sm.loads(CACHE[name]).merge(metric.copy()),
                     lambda: metric.merge(sm.loads(CACHE[name])),
                     lambda: feed(metric)):
            try:
                step()
            except ValueError as exc:
                assert str(exc)
        nums = values_of(metric.compute(), INFINITE_BY_DEFINITION)
        assert not any(math.isinf(v) for v in nums), (name, nums)
        _optional(lambda: metric.interval())
        _optional(lambda: metric.bounds())
        assert sm.dumps(sm.loads(sm.dumps(metric))) == sm.dumps(metric)


HUGE_SIZES = """
import json, resource, sys, time
sys.path.insert(0, "tests/_support")
resource.setrlimit(resource.RLIMIT_AS, (AS_LIMIT_BYTES, AS_LIMIT_BYTES))
import streammetrics as sm
from load_corpus import build, saved, split
cases = [("ConfusionMatrix", ("num_classes",), 10**7), ("AUROC-multiclass", ("num_classes",), 10**7),
         ("AUROC-ovo", ("num_classes",), 10**5), ("ROCCurve-thresholds", ("thresholds",), 3 * 10**8),
         ("ROCCurve-thresholds", ("thresholds",), 2**63), ("TopKAccuracy", ("num_classes",), 10**9),
         ("AveragePrecision-max_bytes", ("max_bytes",), 10**15),
         ("AveragePrecision-max_bytes", ("num_classes",), 10**6),
         ("Precision-multilabel", ("num_classes",), 10**8),
         ("Window-Recall", ("size",), 10**15), ("DelayedLabels", ("capacity",), 10**15),
         ("Window-AUROC", ("metric", "config", "num_classes"), 10**7),
         ("Decayed-AUROC-thresholds", ("metric", "config", "thresholds"), 10**9),
         ("MetricSet", ("members", "c", "config", "num_classes"), 10**7)]
for name, path, value in cases:
    header, payload = split(saved(name))
    target = header["config"]
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    start = time.perf_counter()
    try:
        sm.loads(build(header, payload))
        outcome = "loaded"
    except ValueError:
        outcome = "ValueError"
    print(name, path[-1], outcome, round(time.perf_counter() - start, 3))
"""


def test_huge_declared_sizes_fail_fast_under_an_address_space_limit():
    """A few hundred bytes declaring 10**7 classes or 3e8 thresholds: a ValueError, in a
    process that may not map more than 1.5 GiB (so nothing is allocated at the file's word)."""
    limit = 3 * 2**29
    script = HUGE_SIZES.replace("AS_LIMIT_BYTES", str(limit))
    result = subprocess.run([sys.executable, "-c", textwrap.dedent(script)], capture_output=True,
                            text=True, timeout=120)
    assert result.returncode == 0, result.stderr[-2000:]
    lines = result.stdout.strip().splitlines()
    assert len(lines) == 14
    for line in lines:
        name, key, outcome, _seconds = line.split()  # seconds: printed for reading, not judged
        if name != "TopKAccuracy" and key in ("num_classes", "thresholds"):  # top-k: O(1) state
            assert outcome == "ValueError", line


# -- the other side: every state a valid stream produces must load -------------------------------
def _ml(c):
    return lambda rng, n: (rng.integers(-1, 2, (n, c)), rng.random((n, c)))


def _mc(c, ignore=None):
    def make(rng, n):
        y = rng.integers(0, c, n)
        if ignore is not None:
            y[rng.random(n) < 0.3] = ignore
        return y, rng.random((n, c))
    return make


def _bin(rng, n):
    return rng.integers(0, 2, n), rng.random(n)


STREAMS = {
    "multilabel-ignore": (lambda: sm.Precision(3, multilabel=True, ignore_index=-1), _ml(3)),
    "decayed-multilabel": (lambda: sm.Decayed(sm.Recall(3, multilabel=True, ignore_index=-1),
                                              half_life=0.7), _ml(3)),
    "accuracy-ignore": (lambda: sm.Accuracy(3, ignore_index=0), _mc(3)),
    "topk-ignore": (lambda: sm.TopKAccuracy(4, k=2, ignore_index=1), _mc(4, ignore=1)),
    "decayed-topk": (lambda: sm.Decayed(sm.TopKAccuracy(3, k=1), half_life=0.3), _mc(3)),
    "f1-top_k-ignore": (lambda: sm.F1(4, top_k=2, ignore_index=1, average=None), _mc(4, ignore=1)),
    "decayed-precision-top_k": (lambda: sm.Decayed(sm.Precision(3, top_k=2, average="micro"),
                                                   half_life=0.3), _mc(3)),
    "decayed-f1": (lambda: sm.Decayed(sm.F1(), half_life=0.25), _bin),
    "decayed-binned": (lambda: sm.Decayed(sm.AUROC(max_bytes=2048), half_life=0.5), _bin),
    "binned-multiclass": (lambda: sm.AUROC(3, max_bytes=4096), _mc(3)),
    "thresholds": (lambda: sm.ROCCurve(thresholds=7), _bin),
    "exact": (lambda: sm.AveragePrecision(), _bin),
    "window": (lambda: sm.Window(sm.MatthewsCorrCoef(), size=5), _bin),
}


@pytest.mark.parametrize("name", sorted(STREAMS))
@settings(max_examples=12, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), steps=st.integers(1, 60),
       weights=st.sampled_from([None, (1e-3, 1e3), (1e-12, 1e-9), (1e9, 1e12)]),
       merge=st.booleans())
def test_states_of_valid_streams_load(name, seed, steps, weights, merge):
    make, batch = STREAMS[name]
    rng = np.random.default_rng(seed)
    metrics = [make(), make()]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", sm.UndefinedMetricWarning)
        for i in range(steps):
            n = int(rng.integers(1, 5))
            y, s = batch(rng, n)
            w = None if weights is None else rng.uniform(*weights, n)
            metrics[i % 2 if merge else 0].update(y, s, sample_weight=w)
        metric = metrics[0].merge(metrics[1]) if merge else metrics[0]
        data = sm.dumps(metric)
        again = sm.loads(data)
        assert sm.dumps(again) == data
        np.testing.assert_equal(values_of(again.compute()), values_of(metric.compute()))
