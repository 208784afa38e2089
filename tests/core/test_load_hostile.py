"""Hostile state files: one regression test per example of issue 12 ("Untrusted state
files"), size limits, version messages, files written by 0.1.0, and temporary-file cleanup."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import warnings

import numpy as np
import pytest
from load_corpus import build, saved, split

import streammetrics as sm
from streammetrics._core.persistence import FILE_VERSION, remove_stale_temps

#: Written by streammetrics 0.1.0 (file version 1, format version 1):
#: ``sm.F1(3).update([0, 1, 2, 2], [0, 1, 1, 2], sample_weight=[1, 2, 1, 0.5])``.
F1_V010 = bytes.fromhex(
    "534d5354415445005dee6d66e6674b6d9395fe7c4b56161dddcb6a1513f1e9a9f8c37dc1ceb3b2215301000000000000"
    "7b2266696c655f76657273696f6e223a312c22636c617373223a224631222c22666f726d61745f76657273696f6e223a"
    "312c22636f6e666967223a7b226e756d5f636c6173736573223a332c226d756c74696c6162656c223a66616c73652c22"
    "7468726573686f6c64223a302e352c2269676e6f72655f696e646578223a6e756c6c2c227a65726f5f6469766973696f"
    "6e223a227761726e222c2261766572616765223a226d6163726f227d2c227363616c617273223a7b7d2c226172726179"
    "73223a5b7b226e616d65223a22636f756e7473222c226474797065223a223c6638222c227368617065223a5b332c335d"
    "2c226f6666736574223a302c226e6279746573223a37327d2c7b226e616d65223a22636f756e74735f7732222c226474"
    "797065223a223c6638222c227368617065223a5b332c335d2c226f6666736574223a37322c226e6279746573223a3732"
    "7d5d7d000000000000f03f00000000000000000000000000000000000000000000000000000000000000400000000000"
    "0000000000000000000000000000000000f03f000000000000e03f000000000000f03f00000000000000000000000000"
    "0000000000000000000000000000000000104000000000000000000000000000000000000000000000f03f0000000000"
    "00d03f"
)
F1_V010_VALUE = 0.7666666666666666
#: ``sm.Window(sm.AUROC(), size=4).update([0, 1, 1, 0], [0.1, 0.8, 0.4, 0.3])`` by 0.1.0.
WINDOW_V010 = bytes.fromhex(
    "534d5354415445009abad65a890ae21a7d9bb83693d99e27dbd80b52fa61a065d4fd9ccaad31ad98a401000000000000"
    "7b2266696c655f76657273696f6e223a312c22636c617373223a2257696e646f77222c22666f726d61745f7665727369"
    "6f6e223a312c22636f6e666967223a7b226d6574726963223a7b22636c617373223a224155524f43222c22636f6e6669"
    "67223a7b226e756d5f636c6173736573223a6e756c6c2c226d756c74696c6162656c223a66616c73652c226176657261"
    "6765223a226d6163726f222c2269676e6f72655f696e646578223a6e756c6c2c226d61785f667072223a6e756c6c2c22"
    "6d756c74695f636c617373223a226f7672227d7d2c2273697a65223a342c227365636f6e6473223a6e756c6c7d2c2273"
    "63616c617273223a7b226e6577657374223a6e756c6c7d2c22617272617973223a5b7b226e616d65223a22736567302e"
    "795f74727565222c226474797065223a223c6938222c227368617065223a5b345d2c226f6666736574223a302c226e62"
    "79746573223a33327d2c7b226e616d65223a22736567302e795f70726564222c226474797065223a223c6638222c2273"
    "68617065223a5b345d2c226f6666736574223a33322c226e6279746573223a33327d5d7d000000000000000001000000"
    "00000000010000000000000000000000000000009a9999999999b93f9a9999999999e93f9a9999999999d93f33333333"
    "3333d33f"
)
WINDOW_V010_VALUE = 1.0


def tampered(name: str, edit) -> bytes:
    header, payload = split(saved(name))
    out = edit(header, payload)
    return build(*out) if isinstance(out, tuple) else build(header, payload)


def set_config(path, value):
    def edit(header, payload):
        target = header["config"]
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value
    return edit


def refused(data: bytes, match: str, seconds: float = 2.0) -> None:
    start = time.perf_counter()
    with pytest.raises(ValueError, match=match):
        sm.loads(data)
    assert time.perf_counter() - start < seconds


# -- crafted files that raised KeyError, TypeError, IndexError, RecursionError, MemoryError ------
def test_array_entry_without_a_name_or_as_a_list():
    def no_name(header, payload):
        del header["arrays"][0]["name"]
    def as_list(header, payload):
        header["arrays"][0] = list(header["arrays"][0].values())
    refused(tampered("F1-binary", no_name), "array entry.*name")
    refused(tampered("F1-binary", as_list), "array entry")


def test_thresholds_beyond_any_memory():
    for value in (2**63, 3 * 10**8):
        refused(tampered("ROCCurve-thresholds", set_config(["thresholds"], value)), f"thresholds={value}")
    refused(tampered("ROCCurve-thresholds", set_config(["thresholds"], 3e8)), "thresholds")


def test_num_classes_beyond_the_arrays_fails_at_once():
    for name in ("ConfusionMatrix", "AUROC-multiclass", "AveragePrecision-max_bytes", "ClassificationReport"):
        refused(tampered(name, set_config(["num_classes"], 10**7)), "num_classes")
    refused(tampered("MetricSet", set_config(["members", "c", "config", "num_classes"], 10**7)), "num_classes")
    refused(tampered("Window-AUROC", set_config(["metric", "config", "num_classes"], 10**7)), "num_classes")


def test_window_whose_metric_class_is_a_list():
    refused(tampered("Window-Recall", set_config(["metric", "class"], ["Recall"])), "unknown metric class")


def test_metricset_groups_holding_numbers():
    refused(tampered("MetricSet", set_config(["groups"], [[1, 2]])), "groups")
    refused(tampered("MetricSet", set_config(["groups"], 5)), "groups")


def test_header_nested_100k_deep():
    header, payload = split(saved("F1-binary"))
    deep = b'{"a":' * 100_000 + b"1" + b"}" * 100_000
    refused(build(None, payload, raw=deep), "nested")
    text = json.dumps(header).encode()[:-1] + b',"x":' + b"[" * 100_000 + b"]" * 100_000 + b"}"
    refused(build(None, payload, raw=text), "nested")
    refused(tampered("F1-binary", set_config(["average"], [[[[["macro"]]]]] * 1)), "average|configuration")


# -- semantic invariants ------------------------------------------------------------------------
def with_array(name: str, array: str, values) -> bytes:
    def edit(header, payload):
        spec = next(a for a in header["arrays"] if a["name"] == array)
        arr = np.asarray(values, dtype=spec["dtype"]).reshape(spec["shape"])
        start = spec["offset"]
        return header, payload[:start] + arr.tobytes() + payload[start + spec["nbytes"]:]
    return tampered(name, edit)


def test_topk_hits_above_the_sample_count():
    refused(with_array("TopKAccuracy", "hits", [30.0, 3.0, 3.0]), "exceeds its total")


def test_inconsistent_squared_weight_sums():
    refused(with_array("TopKAccuracy", "hits", [2.0, 3.0, 0.0]), "squared weights")  # zero width
    refused(with_array("TopKAccuracy", "hits", [2.0, 3.0, 1e-30]), "squared weights")  # absurd
    refused(with_array("TopKAccuracy", "hits", [2.0, 3.0, 10.0]), "squared weights")  # n_eff < 1
    header, payload = split(saved("ConfusionMatrix"))
    counts = np.frombuffer(payload[:72]).reshape(3, 3)
    refused(with_array("ConfusionMatrix", "counts_w2", counts * counts + 1.0), "counts_w2")
    refused(with_array("ConfusionMatrix", "counts_w2", np.zeros(9)), "counts_w2")


def test_bins_of_1e308():
    header, payload = split(saved("ROCCurve-thresholds"))
    n = next(a for a in header["arrays"] if a["name"] == "bin_pos")["shape"][0]
    refused(with_array("ROCCurve-thresholds", "bin_pos", [1e308] * n), "bin_pos")
    refused(with_array("AUROC", "weights", [1e308] * 30), "weights")


def test_decayed_newest_far_ahead_of_its_rows():
    def newest(value):
        def edit(header, payload):
            header["scalars"]["newest"] = value
        return edit
    d = sm.Decayed(sm.AUROC(), half_life_seconds=10.0)
    d.update([0, 1, 1], [0.2, 0.7, 0.4], timestamp=[1.0, 2.0, 3.0])
    header, payload = split(sm.dumps(d))
    header["scalars"]["newest"] = 1e30
    refused(build(header, payload), "half-lives")
    refused(tampered("Decayed-Precision", newest(1e30)), "n_seen - 1")
    def n_seen(header, payload):
        header["scalars"]["newest"], header["scalars"]["n_seen"] = 1e30, 10**30 + 1
    refused(tampered("Decayed-Precision", n_seen), "n_seen")


def test_delayed_labels_out_of_order_times_still_expire():
    dl = sm.DelayedLabels(sm.Recall(), ttl=10.0, clock=lambda: 0.0)
    for i, t in enumerate([5.0, 1.0, 3.0]):
        dl.predict([f"id{i}"], [0.5], timestamp=t)
    header, payload = split(sm.dumps(dl))
    loaded = sm.loads(build(header, payload))
    loaded.clock = lambda: 0.0  # (a clock is not part of the saved state)
    loaded.expire(timestamp=12.0)  # 1.0 is older than the ttl; 3.0 and 5.0 are not
    assert loaded.stats()["expired"] == 1
    assert loaded.stats()["pending"] == 2
    loaded.expire(timestamp=14.5)  # then 3.0
    assert loaded.stats()["expired"] == 2


# -- limits and versions ------------------------------------------------------------------------
def test_max_bytes_is_checked_before_reading(tmp_path):
    data = saved("AUROC")
    path = tmp_path / "a.sm"
    path.write_bytes(data)
    with pytest.raises(ValueError, match="max_bytes=100"):
        sm.load(path, max_bytes=100)
    with pytest.raises(ValueError, match="max_bytes=100"):
        sm.loads(data, max_bytes=100)
    assert sm.load(path, max_bytes=None).compute() == sm.loads(data, max_bytes=len(data)).compute()
    for bad in (0, -1, 1.5, True, "1"):
        with pytest.raises(ValueError, match="max_bytes"):
            sm.loads(data, max_bytes=bad)


def test_a_future_version_says_to_upgrade():
    def file_version(header, payload):
        header["file_version"] = FILE_VERSION + 1
    def format_version(header, payload):
        header["format_version"] = 2
    refused(tampered("F1-binary", file_version), "newer than this library.*upgrade")
    refused(tampered("F1-binary", format_version), "newer than this library.*upgrade")
    def old(header, payload):
        header["file_version"] = 0
    refused(tampered("F1-binary", old), "unknown file format version 0")


def test_files_written_by_0_1_0_keep_loading(tmp_path):
    f1 = sm.loads(F1_V010)
    assert isinstance(f1, sm.F1) and f1.compute() == pytest.approx(F1_V010_VALUE, abs=1e-15)
    win = sm.loads(WINDOW_V010)
    assert isinstance(win, sm.Window) and win.compute() == pytest.approx(WINDOW_V010_VALUE, abs=1e-15)
    # and a fixture generated now with the current code is still version 1
    path = tmp_path / "fixture.sm"
    sm.save(sm.F1(3).update([0, 1, 2, 2], [0, 1, 1, 2], sample_weight=[1, 2, 1, 0.5]), path)
    header, _ = split(path.read_bytes())
    assert header["file_version"] == 1 and header["format_version"] == 1
    assert path.read_bytes() == F1_V010  # the format did not change
    assert sm.load(path).compute() == f1.compute()


# -- temporary files of killed saves --------------------------------------------------------------
def dead_pid() -> int:
    proc = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)
    return int(proc.stdout)


def test_killed_saves_leave_temporary_files_that_the_next_save_removes(tmp_path):
    path = tmp_path / "state.sm"
    script = f"""
import os, streammetrics as sm, streammetrics._core.persistence as p
p.os.replace = lambda src, dst: os._exit(9)  # killed between writing the temp file and renaming it
sm.save(sm.Recall().update([1] * 1000, [0.9] * 1000), {str(path)!r})
"""
    for _ in range(3):
        result = subprocess.run([sys.executable, "-c", script], capture_output=True,
                                env={**os.environ, "PYTHONPATH": os.getcwd()})
        assert result.returncode == 9
    leftovers = sorted(tmp_path.glob(".state.sm.*.tmp"))
    assert len(leftovers) == 3
    old = time.time() - 3600
    for tmp in leftovers:
        os.utime(tmp, (old, old))
    sm.save(sm.Recall().update([1, 0], [0.9, 0.2]), path)
    assert sorted(tmp_path.glob(".state.sm.*.tmp")) == []
    assert sm.load(path).compute() == 1.0


def test_stale_temp_rules(tmp_path):
    path = tmp_path / "s.sm"
    now = time.time()
    files = {
        "dead_old": (f".s.sm.{dead_pid()}-abc.tmp", now - 120, True),
        "dead_fresh": (f".s.sm.{dead_pid()}-abd.tmp", now - 5, False),  # may still be renamed
        "alive_old": (f".s.sm.{os.getpid()}-abe.tmp", now - 3600, False),  # a save in progress
        "v010_old": (".s.sm.k2j4h5.tmp", now - 2 * 24 * 3600, True),  # 0.1.0 name, abandoned
        "v010_fresh": (".s.sm.k2j4h6.tmp", now - 3600, False),
        "other_target": (f".t.sm.{dead_pid()}-abf.tmp", now - 3600, False),
    }
    for name, mtime, _ in files.values():
        (tmp_path / name).write_bytes(b"x")
        os.utime(tmp_path / name, (mtime, mtime))
    removed = {p.name for p in remove_stale_temps(path, now=now)}
    assert removed == {name for name, _, gone in files.values() if gone}
    for name, _, gone in files.values():
        assert (tmp_path / name).exists() != gone


def test_a_loaded_state_computes_and_saves_again():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", sm.UndefinedMetricWarning)
        for name in ("Decayed-Precision", "DelayedLabels", "MetricSet"):
            m = sm.loads(saved(name))
            m.compute()
            assert sm.dumps(sm.loads(sm.dumps(m))) == sm.dumps(m)


def test_config_values_of_the_wrong_type_are_malformed_not_truthy():
    cases = [
        ("AUROC-multiclass", ["multilabel"], float("nan"), "multilabel"),
        ("AveragePrecision-max_bytes", ["interpolated"], 2.0, "interpolated"),
        ("F1-binary", ["multilabel"], None, "multilabel"),
        ("F1-binary", ["threshold"], True, "threshold"),
        ("F1-binary", ["zero_division"], True, "zero_division"),
        ("ConfusionMatrix", ["num_classes"], 3.0, "num_classes"),
        ("TopKAccuracy", ["k"], True, "'k'"),
        ("NDCG", ["rel_level"], False, "rel_level"),
        ("Window-Recall", ["size"], 10.0, "size"),
        ("DelayedLabels", ["capacity"], True, "capacity"),
        ("Window-Recall", ["metric", "config", "multilabel"], 0, "multilabel"),
        ("MetricSet", ["members", "k", "config", "k"], 2.5, "'k'"),
        ("PRCurve-multilabel-thresholds", ["thresholds"], [0.2, True], "thresholds"),
    ]
    for name, path, value, match in cases:
        refused(tampered(name, set_config(path, value)), match)


def test_subnormal_bin_weights_are_refused():
    header, payload = split(saved("AveragePrecision-max_bytes"))
    n = next(a for a in header["arrays"] if a["name"] == "bin_neg")["shape"][0]
    refused(with_array("AveragePrecision-max_bytes", "bin_neg", [1e-320] * n), "subnormal")


@pytest.mark.parametrize("make", [
    lambda: sm.AUROC(20_000),
    lambda: sm.AUROC(200, multi_class="ovo"),
    lambda: sm.AUROC(5_000, thresholds=10),
    lambda: sm.AveragePrecision(2_000, max_bytes=2**22),
    lambda: sm.ConfusionMatrix(1_000),
    lambda: sm.Precision(50_000, multilabel=True),
    lambda: sm.ROCCurve(thresholds=10**6),
], ids=["auroc", "ovo", "thresholds", "max_bytes", "confusion", "multilabel", "grid"])
def test_valid_many_class_states_still_load(make):
    """The memory budget (a multiple of the bytes a file carries) admits every valid state."""
    metric = make()
    again = sm.loads(sm.dumps(metric))
    assert type(again) is type(metric) and again._config() == metric._config()


def test_arrays_may_not_share_bytes():
    """Many entries over the same bytes would load as many copies: memory beyond the file."""
    def overlap(header, payload):
        for spec in header["arrays"]:
            spec["offset"] = 0
    refused(tampered("ConfusionMatrix", overlap), "overlap")


def test_retrieval_counts_beyond_any_stream():
    header, payload = split(saved("NDCG"))
    name = next(a["name"] for a in header["arrays"] if a["name"].endswith(".count"))
    refused(with_array("NDCG", name, [2**62]), "count")


def test_oversized_headers_and_integers():
    header, payload = split(saved("F1-binary"))
    text = json.dumps(header).encode().replace(b'"format_version": 1', b'"format_version": ' + b"9" * 5000)
    refused(build(None, payload, raw=text), "corrupted header")
    from streammetrics._core.persistence import MAX_HEADER
    big = json.dumps(header).encode()[:-1] + b', "pad": "' + b" " * MAX_HEADER + b'"}'
    refused(build(None, payload, raw=big), "corrupted header")


def test_an_empty_time_window_with_a_clock_position_loads():
    """No rows but a 'newest' time: a time window after its rows expired (was a TypeError)."""
    window = sm.Window(sm.Precision(), seconds=10.0, clock=lambda: 100.0)
    window.update([1, 0], [0.7, 0.2]).advance(200.0)
    header, payload = split(sm.dumps(window))
    assert header["arrays"] == [] and header["scalars"]["newest"] == 200.0
    loaded = sm.loads(build(header, payload))
    assert len(loaded) == 0 and sm.dumps(loaded) == sm.dumps(window)
