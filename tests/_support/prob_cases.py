"""Shared cases of issue #32's last gathered exact groups on the engines (Dask, Spark, Ray):
``scores="probability"`` AUROC / AP groups (binary and multiclass), an exact group between two
other state groups in the set's member order, and label mapping (``classes=`` / ``pos_label=``,
string labels) beside a second exact group. The oracle is one process (the set, or ``Sliced``
of it, fed every row once); a refused batch is compared with one process fed the refused
partition alone (the engines name a row by its index in its partition, as the state path does)."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pandas as pd

import streammetrics as sm

C = 3
SCORES = [f"s{c}" for c in range(C)]
SPAM = ("ham", "spam")
ANIMALS = ("cat", "dog", "eel")


def frame(n: int, seed: int, slices: int = 3) -> pd.DataFrame:
    """Rows with tied probabilities: multiclass ``y`` with rows ``s0..s2`` summing to 1 (one
    decimal), binary ``yb`` / ``pb`` (two decimals), float weights ``w`` with zeros, a slice key
    ``g``, string labels ``ys`` (:data:`SPAM`, positive where ``yb``) and ``yc`` (:data:`ANIMALS`)."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, C, n)
    raw = rng.random((n, C)) + 0.8 * np.eye(C)[y]
    s = np.round(raw / raw.sum(axis=1, keepdims=True), 1)
    s[:, C - 1] = np.clip(1.0 - s[:, : C - 1].sum(axis=1), 0.0, 1.0)
    s[:, 0] = 1.0 - s[:, 1:].sum(axis=1)  # rows of [0, 1] values summing to 1 within an ulp
    yb = (y == 1).astype(np.int64)
    w = np.round(rng.random(n) * 3, 1)
    w[rng.random(n) < 0.1] = 0.0
    return pd.DataFrame({"y": y, **{c: s[:, i] for i, c in enumerate(SCORES)}, "yb": yb,
                         "pb": np.round(rng.random(n) * 0.6 + 0.4 * yb, 2), "w": w,
                         "g": rng.integers(0, slices, n), "ys": np.array(SPAM, dtype=object)[yb],
                         "yc": np.array(ANIMALS, dtype=object)[y]})


def binary_set() -> sm.MetricSet:
    """Binary ``scores="probability"`` AUROC / AP (full, partial, interpolated) and F1."""
    return sm.MetricSet(a=sm.AUROC(scores="probability"), p=sm.AveragePrecision(scores="probability"),
                        f1=sm.F1(), part=sm.AUROC(scores="probability", max_fpr=0.3))


def multiclass_set() -> sm.MetricSet:
    """Multiclass ``scores="probability"`` AUROC / AP (every average), accuracy, a raw exact
    group (one-vs-one AUROC) and a bounded AUROC as states around them."""
    return sm.MetricSet(acc=sm.Accuracy(C), a=sm.AUROC(C, scores="probability", average="weighted"),
                        p=sm.AveragePrecision(C, scores="probability", average=None),
                        m=sm.AUROC(C, scores="probability", average="micro"),
                        ovo=sm.AUROC(C, multi_class="ovo"), bounded=sm.AUROC(C, max_bytes=4096))


def between_set() -> sm.MetricSet:
    """Exact groups between the other members' groups in the member order: F1 (ignoring -1),
    a probability AUROC, accuracy, AUROC ignoring -1, a bounded AUROC (five state groups)."""
    return sm.MetricSet(f=sm.F1(C, ignore_index=-1), a=sm.AUROC(C, scores="probability"),
                        acc=sm.Accuracy(C), b=sm.AUROC(C, ignore_index=-1),
                        bounded=sm.AUROC(C, max_bytes=4096))


def binary_between_set() -> sm.MetricSet:
    """A binary probability AUROC / AP group between F1 (ignoring -1) and accuracy: the score
    ranges, which keep the set's error order (``rest_order.checked_first``), as the keyed ones do."""
    return sm.MetricSet(f=sm.F1(ignore_index=-1), a=sm.AUROC(scores="probability"),
                        p=sm.AveragePrecision(scores="probability"), acc=sm.Accuracy())


def spam_set() -> sm.MetricSet:
    """``pos_label="spam"`` on two exact groups (raw and ``scores="probability"``) and F1."""
    return sm.MetricSet(a=sm.AUROC(pos_label="spam"), f1=sm.F1(pos_label="spam"),
                        p=sm.AveragePrecision(pos_label="spam", scores="probability"))


def animal_set() -> sm.MetricSet:
    """``classes=ANIMALS`` on two exact groups (one-vs-rest AUROC / AP, one-vs-one AUROC)."""
    cls = list(ANIMALS)
    return sm.MetricSet(a=sm.AUROC(classes=cls), acc=sm.Accuracy(classes=cls),
                        ovo=sm.AUROC(classes=cls, multi_class="ovo"), p=sm.AveragePrecision(classes=cls))


#: The cases: (set builder, label column, score column(s)).
CASES: dict[str, tuple[Any, str, Any]] = {
    "binary": (binary_set, "yb", "pb"), "multiclass": (multiclass_set, "y", SCORES),
    "between": (between_set, "y", SCORES), "binary_between": (binary_between_set, "yb", "pb"), "spam": (spam_set, "ys", "pb"), "animals": (animal_set, "yc", SCORES),
}


def one_process(case: str, df: pd.DataFrame, by: Any = None, weighted: bool = False) -> Any:
    """One process's values of ``case`` over ``df`` (``Sliced`` with ``by``)."""
    make, label, score = CASES[case]
    w = df.w.to_numpy() if weighted else None
    if by is None:
        return make().update(df[label].to_numpy(), df[score].to_numpy(), sample_weight=w).compute()
    return sm.Sliced(make()).update(df[label].to_numpy(), df[score].to_numpy(), slices=df[by].to_numpy(),
                                    sample_weight=w).compute()


def refused(case: str, df: pd.DataFrame, weighted: bool = False) -> str:
    """The message of one process's ``ValueError`` for the rows ``df`` (one partition)."""
    make, label, score = CASES[case]
    try:
        make().update(df[label].to_numpy(), df[score].to_numpy(),
                      sample_weight=df.w.to_numpy() if weighted else None)
    except ValueError as exc:
        return str(exc)
    raise AssertionError("one process accepted the rows")


def spoiled(df: pd.DataFrame, case: str, row: int, how: str) -> pd.DataFrame:
    """``df`` with row ``row`` spoiled: ``how`` ``"above"`` (a probability 1.25), ``"below"``
    (-0.5), ``"label"`` (label -1: refused by the exact groups that do not ignore it, not by
    the others of :func:`between_set`), ``"seven"`` (label 7: refused by every group, first by
    the set's first), ``"unknown"`` (a label outside the classes), ``"nan"``."""
    _, label, score = CASES[case]
    out = df.copy()
    col = score if isinstance(score, str) else score[1]
    if how in ("above", "below", "nan"):
        out[col] = out[col].astype(np.float64)
        out.loc[out.index[row], col] = {"above": 1.25, "below": -0.5, "nan": np.nan}[how]
    elif how in ("label", "seven"):
        out.loc[out.index[row], label] = -1 if how == "label" else 7
    else:
        out[label] = out[label].astype(object)
        out.loc[out.index[row], label] = "yak"
    return out


def assert_close(got: Any, want: Any) -> None:
    """Equal structure, values within 1e-12 (nan where nan)."""
    if isinstance(want, dict) or hasattr(want, "keys"):
        assert set(got.keys()) == set(want.keys())
        for k in want:
            assert_close(got[k], want[k])
        return
    np.testing.assert_allclose(np.asarray(got, float), np.asarray(want, float), rtol=1e-12, atol=1e-12)


def assert_bitwise(got: Any, want: Any, names: list[str]) -> None:
    """The members ``names`` bit for bit (per slice where ``want`` is by slice)."""
    rows = [(got, want)] if names[0] in want else [(got[k], want[k]) for k in want]
    for g, w in rows:
        for n in names:
            assert np.array_equal(np.asarray(g[n], float), np.asarray(w[n], float), equal_nan=True), n


#: The ``evaluate`` runs every engine's test makes: (case, keyword arguments).
ENGINE_RUNS: tuple[tuple[str, dict[str, Any]], ...] = (
    ("binary", {}), ("binary", {"weight": "w"}), ("multiclass", {"by": "g"}), ("between", {"weight": "w"}),
    ("binary_between", {}), ("spam", {}), ("animals", {}))


def check_runs(evaluate: Any, data: Any, df: pd.DataFrame, seen: list[Any]) -> None:
    """:data:`ENGINE_RUNS` of an engine's ``evaluate`` over ``data`` (``df`` on the engine):
    one process's values, and a range route taken (``seen``: what the spied routes gave, a
    None where a route was not taken; cleared before each run)."""
    for case, kwargs in ENGINE_RUNS:
        make, label, score = CASES[case]
        seen.clear()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            got = evaluate(data, make(), label=label, score=score, **kwargs)
            want = one_process(case, df, kwargs.get("by"), "weight" in kwargs)
        assert any(s is not None for s in seen), case  # a range route, not the state path
        assert_close(got, want)
