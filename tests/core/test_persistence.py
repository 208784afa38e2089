"""save/load: the state dict, and every kind of bad file rejected with a ValueError saying why.
(Round trips of every public metric, sets with their groups and prefix among them, and pickles:
the protocol laws, ``tests/test_protocol_laws.py``.)"""

from __future__ import annotations

import hashlib
import json
import os
import pickle
import subprocess
import sys

import numpy as np
import pytest
from helpers import header_of

import streammetrics as sm
from streammetrics._core.persistence import MAGIC


def sample_set():
    ms = sm.MetricSet(p=sm.Precision(3, average=None, zero_division=np.nan), r=sm.Recall(3),
                      k=sm.TopKAccuracy(3, k=2), cm=sm.ConfusionMatrix(3))
    rng = np.random.default_rng(0)
    ms.update(rng.integers(0, 3, 100), rng.random((100, 3)), sample_weight=rng.random(100))
    return ms


def test_state_dict_is_flat_plain_data():
    d = sm.F1(3).update([0, 1, 2], [0, 1, 1]).state_dict()
    assert d["class"] == "F1" and d["format_version"] == 1
    json.dumps(d["config"])
    assert all(isinstance(v, np.ndarray) for k, v in d.items() if k not in ("class", "format_version", "config"))
    again = sm.F1.from_state_dict(d)
    assert again.compute() == sm.F1(3).update([0, 1, 2], [0, 1, 1]).compute()
    with pytest.raises(ValueError, match="not a Precision"):
        sm.Precision.from_state_dict(d)


def write(path, data: bytes):
    path.write_bytes(data)
    return path


def rehash(data: bytes) -> bytes:
    body = data[len(MAGIC) + 32:]
    return MAGIC + hashlib.sha256(body).digest() + body


def test_empty_truncated_foreign_and_corrupted_files(tmp_path):
    good = sm.dumps(sample_set())
    cases = {
        "empty": (b"", "empty"),
        "foreign": (b"PK\x03\x04 this is a zip file", "not a streammetrics state file"),
        "short magic": (MAGIC[:4], "truncated"),
        "truncated": (good[: len(good) // 2], "truncated|checksum"),
        "bit flip": (good[:-5] + bytes([good[-5] ^ 0xFF]) + good[-4:], "checksum"),
        "json text": (b'{"class": "F1"}', "not a streammetrics state file"),
    }
    for name, (data, message) in cases.items():
        with pytest.raises(ValueError, match=message):
            sm.load(write(tmp_path / f"{name}.sm", data))


def with_header(header: dict, payload: bytes) -> bytes:
    h = json.dumps(header).encode()
    return rehash(MAGIC + bytes(32) + len(h).to_bytes(8, "little") + h + payload)


def test_tampered_files_with_valid_checksums_are_rejected(tmp_path):
    good = sm.dumps(sm.F1(3).update([0, 1, 2], [0, 1, 1]))
    header, payload = header_of(good)

    def tampered(**changes):
        h = json.loads(json.dumps(header))
        for path, value in changes.items():
            target = h
            keys = path.split("__")
            for k in keys[:-1]:
                target = target[int(k)] if k.isdigit() else target[k]
            last = keys[-1]
            target[int(last) if last.isdigit() else last] = value
        return with_header(h, payload)

    cases = [
        (tampered(file_version=99), "unknown file format version"),
        (tampered(format_version=7), "unknown format version"),
        (tampered(**{"class": "os.system"}), "unknown metric class"),
        (tampered(config={"num_classes": 3, "bogus": 1}), "bad configuration"),
        (tampered(config={"num_classes": -3}), "num_classes"),
        (tampered(arrays__0__dtype="|O"), "disallowed dtype"),
        (tampered(arrays__0__shape=[4, 4]), "does not fit|shape"),
        (tampered(arrays__0__offset=10**9), "does not fit"),
        (tampered(arrays__0__name="other"), "missing array|unexpected"),
    ]
    for i, (data, message) in enumerate(cases):
        with pytest.raises(ValueError, match=message):
            sm.load(write(tmp_path / f"t{i}.sm", data))
    # negative counts with a valid checksum
    bad_payload = bytearray(payload)
    bad_payload[0:8] = np.float64(-5).tobytes()
    with pytest.raises(ValueError, match="negative or non-finite"):
        sm.load(write(tmp_path / "neg.sm", with_header(header, bytes(bad_payload))))


def test_pickled_payload_is_never_unpickled(tmp_path):
    class Boom:
        def __reduce__(self):
            return (os.system, ("echo pwned > " + str(tmp_path / "pwned"),))

    evil = pickle.dumps(Boom())
    data = with_header({"file_version": 1, "class": "F1", "format_version": 1, "config": {},
                        "scalars": {}, "arrays": [{"name": "counts", "dtype": "|O", "shape": [1],
                                                    "offset": 0, "nbytes": len(evil)}]}, evil)
    with pytest.raises(ValueError):
        sm.load(write(tmp_path / "evil.sm", data))
    np.save(tmp_path / "evil.npy", np.array([Boom()], dtype=object), allow_pickle=True)
    with pytest.raises(ValueError):
        sm.load(tmp_path / "evil.npy")
    assert not (tmp_path / "pwned").exists()


def test_save_is_atomic_under_a_crash(tmp_path):
    """A writer killed in the middle of save() leaves the previous file loadable."""
    path = tmp_path / "state.sm"
    sm.save(sm.Recall().update([1, 1, 0], [0.9, 0.1, 0.3]), path)
    script = f"""
import os, streammetrics as sm, streammetrics._core.persistence as p
real_replace = os.replace
def crash(src, dst):
    os._exit(9)  # die after writing the temporary file, before the rename
p.os.replace = crash
sm.save(sm.Recall().update([1] * 1000, [0.9] * 1000), {str(path)!r})
"""
    result = subprocess.run([sys.executable, "-c", script], capture_output=True)
    assert result.returncode == 9
    assert sm.load(path).compute() == 0.5


def test_save_rejects_non_metrics(tmp_path):
    with pytest.raises(ValueError, match="metric"):
        sm.save({"a": 1}, tmp_path / "x.sm")  # type: ignore[arg-type]


def test_zero_dimensional_arrays_keep_their_shape():
    from streammetrics._core.persistence import _encode

    header, chunks = _encode({"class": "F1", "format_version": 1, "config": {}, "x": np.array(2.5)})
    assert b'"shape":[]' in header and len(chunks[0]) == 8
