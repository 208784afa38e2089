"""The exact buffer's saved bytes (``_scores/exact/persist.py`` through ``_core/persistence.py``).

The file format is fixed: ``dumps`` of an exact state must equal, byte for byte, the file a
reference writer builds from the format's specification (``_core/persistence.py``'s docstring)
over arrays an oracle computes from the raw data (each group's scores sorted, in the buffer's
dtype; offsets; weights when any differ from 1), for unweighted, weighted, tied, empty,
float32, multiclass, spilled and large states, inside and outside ``trusted_states()``. The
save path must not copy the scores more than it needs to (peak memory of ``state_dict`` and
``dumps``, measured with ``tracemalloc``), and what it returns stays the caller's own copy.
"""

from __future__ import annotations

import hashlib
import json
import tracemalloc
from typing import Any

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import streammetrics as sm
from streammetrics._core.metric import trusted_states
from streammetrics._scores.exact import buffer as buffer_mod
from streammetrics._scores.exact import spill as spill_mod


def _spec_bytes(state: dict[str, Any]) -> bytes:
    """The file format written from its specification: magic, SHA-256 of the rest, header
    length, compact JSON header, then each array's little-endian C-order bytes in order."""
    arrays, chunks, scalars, offset = [], [], {}, 0
    for key, value in state.items():
        if key in ("class", "format_version", "config"):
            continue
        if isinstance(value, np.ndarray):
            data = np.ascontiguousarray(value).tobytes() if value.ndim else value.tobytes()
            arrays.append({"name": key, "dtype": value.dtype.str, "shape": list(value.shape),
                           "offset": offset, "nbytes": len(data)})
            chunks.append(data)
            offset += len(data)
        else:
            scalars[key] = value
    header = json.dumps({"file_version": 1, "class": state["class"],
                         "format_version": state["format_version"], "config": state["config"],
                         "scalars": scalars, "arrays": arrays}, separators=(",", ":")).encode()
    body = len(header).to_bytes(8, "little") + header + b"".join(chunks)
    return b"SMSTATE\x00" + hashlib.sha256(body).digest() + body


def _oracle(m: sm.Metric, columns: list[tuple[np.ndarray, np.ndarray, np.ndarray | None]],
            dtype: Any) -> dict[str, Any]:
    """The state an exact buffer must save: per column, the negatives' then the positives'
    scores sorted (weights follow their scores; tests give tied scores equal weights), and
    the weights only if one of them is not 1."""
    values, offsets, weights = [], [0], []
    for pos, score, w in columns:
        for grp in (~pos, pos):
            order = np.argsort(score[grp], kind="stable")
            values.append(score[grp][order])
            offsets.append(offsets[-1] + int(grp.sum()))
            weights.append(np.ones(int(grp.sum())) if w is None else w[grp][order])
    out = {key: m.state_dict()[key] for key in ("class", "format_version", "config")}
    out["values"] = np.concatenate(values).astype(dtype)
    out["offsets"] = np.asarray(offsets, dtype=np.int64)
    if any(w is not None and (w != 1).any() for _, _, w in columns):
        out["weights"] = np.concatenate(weights).astype(np.float64)
    return out


def _tie_weight(p: np.ndarray) -> np.ndarray:
    """A weight that is a function of the score: tied scores weigh the same (their order free)."""
    return 1.0 + np.round(p * 1000) % 7 / 4


def _binary_case(kind: str, rng: np.random.Generator) -> tuple[sm.Metric, dict[str, Any]]:
    n = {"large": 300_000, "spilled": 400_000}.get(kind, 2_000)
    y = rng.integers(0, 2, n).astype(bool)
    p = np.round(rng.random(n), 3)  # ties
    if kind == "float32":
        p = p.astype(np.float32)
    w = _tie_weight(p) if kind in ("weighted", "mixed") else None
    if kind == "mixed":  # unweighted rows (scores < 0.5, weight 1), then weighted ones (>= 0.5)
        w = np.where(p < 0.5, 1.0, w)
    m = sm.AUROC()
    if kind == "mixed":
        low = np.flatnonzero(p < 0.5)
        parts = [(part, False) for part in np.array_split(low, 3)]
        parts += [(part, True) for part in np.array_split(np.flatnonzero(p >= 0.5), 4)]
    else:  # several batches: several runs per group
        parts = [(part, w is not None) for part in np.array_split(np.arange(n), 7)]
    for part, with_weights in parts:
        m.update(y[part], p[part], sample_weight=w[part] if with_weights and w is not None else None)
    if kind == "spilled" and spill_mod.can_spill(p):  # the queue waits in maps until the save
        assert m._state._spills  # type: ignore[attr-defined]
    return m, _oracle(m, [(y, p, w)], p.dtype)


KINDS = ["unweighted", "weighted", "mixed", "float32", "large"]


@pytest.mark.parametrize("kind", KINDS)
def test_saved_bytes_are_the_format_of_the_oracle_state(kind: str) -> None:
    m, expected = _binary_case(kind, np.random.default_rng(KINDS.index(kind)))
    assert sm.dumps(m) == _spec_bytes(expected)
    with trusted_states():  # the engines' bytes: the same plus the derived counts
        state = m.state_dict()
        assert all(np.array_equal(state[k], v) for k, v in expected.items())
        assert sm.dumps(m) == _spec_bytes(state)
        assert sm.dumps(sm.loads(sm.dumps(m))) == sm.dumps(m)
    assert sm.dumps(sm.loads(sm.dumps(m))) == sm.dumps(m)


def test_empty_and_multiclass_states_save_as_specified() -> None:
    for m in (sm.AUROC(), sm.AUROC(num_classes=3)):
        groups = 2 * (3 if m.state_dict()["config"]["num_classes"] else 1)
        expected = {**{k: m.state_dict()[k] for k in ("class", "format_version", "config")},
                    "values": np.zeros(0), "offsets": np.zeros(groups + 1, dtype=np.int64)}
        assert sm.dumps(m) == _spec_bytes(expected)
    rng = np.random.default_rng(5)
    y, s = rng.integers(0, 3, 3000), np.round(rng.random((3000, 3)), 2)
    m = sm.AUROC(num_classes=3).update(y, s)
    expected = _oracle(m, [(y == c, s[:, c], None) for c in range(3)], np.float64)
    assert sm.dumps(m) == _spec_bytes(expected)


def test_spilled_queue_saves_as_specified(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(spill_mod, "CHUNK", 4096)
    monkeypatch.setattr(buffer_mod, "SPILL_MIN", 4096)
    m, expected = _binary_case("spilled", np.random.default_rng(9))
    assert sm.dumps(m) == _spec_bytes(expected)


@settings(max_examples=40, deadline=None)
@example(seed=0, n=0, batches=1, weighted=True, decimals=0)  # weighted, yet no weight stored
@example(seed=1, n=5, batches=2, weighted=True, decimals=0)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(0, 300), batches=st.integers(1, 5),
       weighted=st.booleans(), decimals=st.integers(0, 3))
def test_random_states_save_as_specified(seed: int, n: int, batches: int, weighted: bool,
                                         decimals: int) -> None:
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n).astype(bool)
    p = np.round(rng.random(n), decimals)
    w = _tie_weight(p) if weighted else None
    m = sm.AUROC()
    for part in np.array_split(np.arange(n), batches):
        m.update(y[part], p[part], sample_weight=None if w is None else w[part])
    assert sm.dumps(m) == _spec_bytes(_oracle(m, [(y, p, w)], np.float64))


def _peak_bytes(fn: Any) -> int:
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        out = fn()
        peak = tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()
    del out
    return peak


def test_save_path_copies_the_scores_no_more_than_needed() -> None:
    n = 1_000_000
    rng = np.random.default_rng(3)
    m = sm.AUROC().update(rng.integers(0, 2, n), np.round(rng.random(n), 4))
    m.state_dict()  # the groups' runs consolidated once (the state's own work, not the save's)
    score_bytes = 8 * n
    # one concatenation of the scores; no unit weights, no converted copy of it
    assert _peak_bytes(m.state_dict) < 1.5 * score_bytes
    # the state's arrays and the file's bytes, nothing else of that size
    assert _peak_bytes(lambda: sm.dumps(m)) < 2.5 * score_bytes


def test_saved_arrays_are_the_callers_own() -> None:
    rng = np.random.default_rng(4)
    m = sm.AUROC().update(rng.integers(0, 2, 100), rng.random(100))
    before, data = m.compute(), sm.dumps(m)
    state = m.state_dict()
    state["values"][:] = 0.5
    assert m.compute() == before and sm.dumps(m) == data


def test_weighted_load_converts_the_weights_only_when_needed() -> None:
    n = 1_000_000
    rng = np.random.default_rng(6)
    p = np.round(rng.random(n), 4)
    data = sm.dumps(sm.AUROC().update(rng.integers(0, 2, n), p, sample_weight=_tie_weight(p)))
    # read (scores and weights), checked, each group's copy, the fold's work: no float64 copy
    # of float64 weights on top (loaded from float32 weights, the conversion is needed)
    assert _peak_bytes(lambda: sm.loads(data)) < 4.6 * 8 * n
