"""MetricSet with the habits torchmetrics' MetricCollection users bring: ``prefix=`` / ``postfix=``,
a list constructor, ``keys()`` / ``items()`` / ``values()``, ``clone()``."""

from __future__ import annotations

import numpy as np
import pytest

import streammetrics as sm

Y = [0, 1, 1, 0, 1, 0, 1, 1]
S = [0.1, 0.8, 0.4, 0.35, 0.9, 0.6, 0.7, 0.2]


def _set(**kw: object) -> sm.MetricSet:
    return sm.MetricSet(auroc=sm.AUROC(), f1=sm.F1(), **kw)  # type: ignore[arg-type]


def test_prefix_and_postfix_name_what_compute_reports() -> None:
    plain = _set().update(Y, S).compute()
    named = _set(prefix="val_", postfix="_epoch").update(Y, S)
    out = named.compute()
    assert list(out) == ["val_auroc_epoch", "val_f1_epoch"]
    assert out["val_auroc_epoch"] == plain["auroc"] and out["val_f1_epoch"] == plain["f1"]
    assert named.keys() == ["val_auroc_epoch", "val_f1_epoch"]
    assert named.keys(keep_base=True) == ["auroc", "f1"]
    assert list(named) == named.keys()
    assert [n for n, _ in named.items(keep_base=True)] == ["auroc", "f1"]
    assert named["auroc"] is named["val_auroc_epoch"] is named.values()[0]
    assert "val_f1_epoch" in named and "f1" in named and "nope" not in named
    with pytest.raises(KeyError):
        named["val_auroc"]


def test_clone_is_independent_and_renamed() -> None:
    train = _set().update(Y, S)
    val = train.clone(prefix="val_")
    assert val.keys() == ["val_auroc", "val_f1"] and train.keys() == ["auroc", "f1"]
    assert val.compute()["val_auroc"] == train.compute()["auroc"]
    val.reset()
    assert train.compute()["auroc"] == _set().update(Y, S).compute()["auroc"]
    kept = val.clone(postfix="_x")
    assert kept.keys() == ["val_auroc_x", "val_f1_x"]
    assert val.clone(prefix="").keys() == ["auroc", "f1"]


def test_list_constructor_names_members_by_class() -> None:
    ms = sm.MetricSet([sm.AUROC(), sm.AveragePrecision(), sm.F1()])
    assert ms.keys() == ["AUROC", "AveragePrecision", "F1"]
    assert sm.MetricSet(sm.AUROC()).keys() == ["AUROC"]
    value = ms.update(Y, S).compute()
    assert value["AUROC"] == sm.AUROC().update(Y, S).compute()


def test_bad_constructor_arguments_name_the_argument() -> None:
    with pytest.raises(ValueError, match="metrics: two members of class F1"):
        sm.MetricSet([sm.F1(), sm.F1()])
    with pytest.raises(ValueError, match="prefix: expected a string or None, got 3"):
        sm.MetricSet(f1=sm.F1(), prefix=3)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"metrics\[1\]"):
        sm.MetricSet([sm.F1(), "auroc"])  # type: ignore[list-item]
    with pytest.raises(ValueError, match="metrics: expected a mapping"):
        sm.MetricSet(42)  # type: ignore[arg-type]


def test_names_match_torchmetrics_metric_collection() -> None:
    torch = pytest.importorskip("torch")
    tm = pytest.importorskip("torchmetrics")
    coll = tm.MetricCollection({"auroc": tm.classification.BinaryAUROC(), "f1": tm.classification.BinaryF1Score()},
                               prefix="val_", postfix="_e")
    coll.update(torch.tensor(S), torch.tensor(Y))
    theirs = {k: float(v) for k, v in coll.compute().items()}
    ours = _set(prefix="val_", postfix="_e").update(Y, S).compute()
    assert sorted(theirs) == sorted(ours)
    for k, v in theirs.items():
        assert np.isclose(ours[k], v, atol=1e-6)  # torchmetrics computes in float32
    assert sorted(coll.keys()) == sorted(_set(prefix="val_", postfix="_e").keys())
