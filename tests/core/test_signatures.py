"""Every public class takes its parameters explicitly: no ``*args`` / ``**kwargs`` in the
constructor of a class exported by ``streammetrics``, ``streammetrics.regression``,
``streammetrics.monitoring`` or ``streammetrics.calibration`` (so ``help()``, IDEs and mypy see
them, and a misspelt keyword is refused by Python itself, naming the class called), apart from the
deliberate exceptions of ``VARIADIC`` below. That every parameter is described in the class
docstring is checked by tests/core/test_docstrings.py (its ``MODULES`` hold these four).
"""

from __future__ import annotations

import importlib
import inspect
import warnings
from typing import Any

import pytest

import streammetrics as sm
from streammetrics._core.metric import Metric

PACKAGES = ("streammetrics", "streammetrics.regression", "streammetrics.monitoring", "streammetrics.calibration")

#: Deliberate exceptions: class name -> (the variadic parameter, why).
VARIADIC = {
    # ``MetricSet(f1=sm.F1(), auroc=sm.AUROC())``: the members by name are the set itself (as
    # torchmetrics' ``MetricCollection``), not options; each is typed ``Metric`` (mypy refuses
    # ``MetricSet(prefx="val_")``) and checked at run time (a ValueError naming ``prefx``).
    "MetricSet": "named",
}


def _public_classes() -> list[tuple[str, type]]:
    seen: dict[int, tuple[str, type]] = {}
    for package in PACKAGES:
        module = importlib.import_module(package)
        for name in getattr(module, "__all__", None) or dir(module):
            obj = getattr(module, name)
            if inspect.isclass(obj) and not issubclass(obj, BaseException):
                seen.setdefault(id(obj), (name, obj))
    return sorted(seen.values(), key=lambda item: item[0])


PUBLIC = _public_classes()
METRICS = [(name, cls) for name, cls in PUBLIC if issubclass(cls, Metric) and cls is not Metric]


def test_the_public_classes_are_found() -> None:
    names = {name for name, _ in PUBLIC}
    # the aliases are the same classes (checked once), the results and the wrappers are classes too
    assert {"F1", "Precision", "ROCCurve", "Report", "MetricResults", "LabelReport", "MetricSet", "Window",
            "MeanSquaredError", "Drift", "CalibrationError", "ROCCurveResult"} <= names
    assert sm.TPR is sm.Recall and sm.PPV is sm.Precision
    assert len(METRICS) > 60


@pytest.mark.parametrize(("name", "cls"), PUBLIC, ids=[name for name, _ in PUBLIC])
def test_constructor_has_no_variadic_parameters(name: str, cls: type) -> None:
    signature = inspect.signature(cls)  # what a call binds against (__init__, or a NamedTuple's __new__)
    variadic = [p.name for p in signature.parameters.values() if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
    allowed = [VARIADIC[name]] if name in VARIADIC else []
    assert variadic == allowed, f"{name}{signature}: variadic parameters {variadic}"


@pytest.mark.parametrize(("name", "cls"), PUBLIC, ids=[name for name, _ in PUBLIC])
def test_constructor_is_the_class_own(name: str, cls: type) -> None:
    """Python's argument errors name the function's qualified name: a class whose constructor is
    inherited from a private base would show that base to the user (``_MomentsMetric.__init__()
    got an unexpected keyword argument``). A NamedTuple's generated ``__new__`` names the class."""
    if issubclass(cls, tuple):
        assert cls.__new__.__qualname__ == f"{cls.__qualname__}.__new__"
        return
    assert "__init__" in cls.__dict__, f"{name} inherits {cls.__init__.__qualname__}"
    assert cls.__init__.__qualname__ == f"{cls.__qualname__}.__init__"


def _args(cls: type) -> tuple[list[Any], dict[str, Any]]:
    """Values of the required parameters, enough to reach the binding of a keyword."""
    args: list[Any] = []
    for p in inspect.signature(cls).parameters.values():
        if p.default is p.empty and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
            args.append(sm.Accuracy() if p.name in ("metric", "metrics") else 1)
    return args, {}


@pytest.mark.parametrize(("name", "cls"), METRICS, ids=[name for name, _ in METRICS])
def test_misspelt_keyword_is_a_type_error_naming_the_class_and_the_argument(name: str, cls: type) -> None:
    args, _ = _args(cls)
    with warnings.catch_warnings(), pytest.raises((TypeError, ValueError)) as info:
        warnings.simplefilter("ignore")
        cls(*args, averag="macro")
    text = str(info.value)
    if name in VARIADIC:  # a member by name: refused as not an accumulator, naming it
        assert isinstance(info.value, ValueError) and text.startswith("averag: expected a streammetrics")
        return
    assert isinstance(info.value, TypeError)
    assert text.startswith(f"{name}.__init__() got an unexpected keyword argument 'averag'"), text


def test_the_issue_example() -> None:
    with pytest.raises(TypeError, match=r"^F1\.__init__\(\) got an unexpected keyword argument 'averag'"):
        sm.F1(averag="macro")  # type: ignore[call-arg]
    with pytest.raises(TypeError, match=r"^Precision\.__init__\(\) got an unexpected keyword argument 'averag'"):
        sm.PPV(averag="macro")  # type: ignore[call-arg]
    # F1 is FBeta at beta=1: it takes no beta (it used to drop one silently)
    with pytest.raises(TypeError, match=r"^F1\.__init__\(\) got an unexpected keyword argument 'beta'"):
        sm.F1(beta=2.0)  # type: ignore[call-arg]


def test_explicit_keywords_still_reach_the_state() -> None:
    """The constructors pass every argument on: a non-default value of each shows in the config."""
    assert sm.F1(3, average="micro", classes=["a", "b", "c"], zero_division=0.0)._config()["average"] == "micro"
    m = sm.Precision(classes=["cat", "dog"], pos_label="cat", threshold=0.3, ignore_index=-1)
    config = m._config()
    assert (config["threshold"], config["ignore_index"]) == (0.3, -1)
    assert m.update(["cat", "dog", "dog"], ["cat", "cat", "dog"]).compute() == 0.5
    assert sm.CohenKappa(3, weights="linear", labels=[0, 2])._config()["labels"] == [0, 2]
    assert sm.ROCCurve(2, multilabel=True, drop_intermediate=True, max_bytes=10**6)._config()["max_bytes"] == 10**6
    assert sm.DETCurve(scores="probability", max_bytes=10**6)._config()["scores"] == "probability"
    assert sm.FBeta(beta=2.0, average="weighted", num_classes=3)._config()["beta"] == 2.0
    assert sm.BalancedAccuracy(3, adjusted=True, zero_division=1.0)._config()["zero_division"] == 1.0
    assert sm.WeightedAccuracy(weights=[0.25, 0.75], threshold=0.2)._config()["threshold"] == 0.2
    assert sm.ConfusionMatrix(2, multilabel=True, normalize="all")._config()["multilabel"] is True
