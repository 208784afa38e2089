"""The public signatures are seen by a type checker: mypy refuses a misspelt or misplaced
constructor argument and a wrong value type, and reads what ``compute()`` and the public
functions return. The cases are checked by mypy itself (its API, on a file written here), each
bad line with the error it must produce; the good lines must produce none.
"""

from __future__ import annotations

import re
import textwrap
import uuid
from pathlib import Path

import pytest

api = pytest.importorskip("mypy.api")

ROOT = Path(__file__).resolve().parents[2]

#: Each line marked ``# E: <text>`` must give an error containing <text> on that line; every
#: other line must give none (``reveal_type`` notes are checked by ``# N: <text>``).
CASES = '''
from typing import assert_type

import numpy as np
import streammetrics as sm

sm.F1(averag="macro")  # E: Unexpected keyword argument "averag" for "F1"
sm.Precision(3, averag=None)  # E: Unexpected keyword argument "averag" for "Precision"
sm.PPV(num_clases=3)  # E: Unexpected keyword argument "num_clases" for "Precision"
sm.F1(beta=2.0)  # E: Unexpected keyword argument "beta" for "F1"
sm.FBeta(3, 2.0)  # E: Too many positional arguments for "FBeta"
sm.ROCCurve(drop_intermediat=True)  # E: Unexpected keyword argument "drop_intermediat" for "ROCCurve"
sm.DETCurve(scores=1)  # E: Argument "scores" to "DETCurve" has incompatible type "int"
sm.ConfusionMatrix(normalise="true")  # E: Unexpected keyword argument "normalise" for "ConfusionMatrix"
sm.CohenKappa(3, weight="linear")  # E: Unexpected keyword argument "weight" for "CohenKappa"
sm.BalancedAccuracy(adjust=True)  # E: Unexpected keyword argument "adjust" for "BalancedAccuracy"
sm.WeightedAccuracy(weight=[0.5, 0.5])  # E: Unexpected keyword argument "weight" for "WeightedAccuracy"
sm.Recall(threshold="0.5")  # E: Argument "threshold" to "Recall" has incompatible type "str"
sm.MetricSet(prefx="val_")  # E: Argument "prefx" to "MetricSet" has incompatible type "str"
sm.NDCG(10, gian="linear")  # E: Unexpected keyword argument "gian" for "NDCG"
sm.KSStatistic(max_byte=10)  # E: Unexpected keyword argument "max_byte" for "KSStatistic"
sm.MeanSquaredError(multi_output="raw_values")  # E: Unexpected keyword argument "multi_output"

f1 = sm.F1(3, average="weighted", classes=["a", "b", "c"], zero_division=0.0)
roc = sm.ROCCurve(drop_intermediate=True, max_bytes=10**6, classes=["n", "p"], pos_label="p")
det = sm.DETCurve(3, average=None, scores="probability")
kappa = sm.CohenKappa(3, weights="linear", labels=[0, 2], ignore_index=-1)
cm = sm.ConfusionMatrix(normalize="true", threshold=0.3)
ba = sm.BalancedAccuracy(adjusted=True, multilabel=False)
wa = sm.WeightedAccuracy(weights=np.array([0.25, 0.75]))
ms = sm.MetricSet([sm.F1(), sm.Recall()], prefix="val_", acc=sm.Accuracy())
reveal_type(ms.compute())  # N: "streammetrics.plot._output.MetricResults"
reveal_type(sm.ClassificationReport().compute())  # N: "streammetrics.classification.report.Report"

# what compute() returns, by class (no longer Any): a wrong use is an error
assert_type(sm.Accuracy().compute(), float)
assert_type(sm.ErrorRate().compute(), float)
assert_type(sm.CohenKappa().compute(), float)
assert_type(sm.F1().compute(), float | np.ndarray)
assert_type(sm.TPR().compute(), float | np.ndarray)
assert_type(sm.ConfusionMatrix().compute(), np.ndarray)
assert_type(sm.ClassificationReport().compute(), sm.Report)
assert_type(sm.AUROC().compute(), float | np.ndarray)
assert_type(sm.ROCCurve().compute(), sm.ROCCurveResult | list[sm.ROCCurveResult])
assert_type(sm.PRCurve().compute(), sm.PRCurveResult | list[sm.PRCurveResult])
assert_type(sm.DETCurve().compute(), sm.DETCurveResult | list[sm.DETCurveResult])
assert_type(sm.CoverageError().compute(), float)
assert_type(sm.NDCG(10).compute(), float)
assert_type(sm.InterpolatedPrecision([0.0, 0.5]).compute(), float | np.ndarray)
assert_type(sm.LogLoss().compute(), float)
assert_type(sm.CalibrationError().compute(), float)
assert_type(sm.KSStatistic().compute(), float | np.ndarray)
assert_type(sm.GainsCurve().compute(), sm.GainsCurveResult | list[sm.GainsCurveResult])
assert_type(sm.Window(sm.Accuracy(), size=10).compute(), float)
assert_type(sm.Decayed(sm.ROCCurve(), half_life=10).compute(), sm.ROCCurveResult | list[sm.ROCCurveResult])
assert_type(sm.DelayedLabels(sm.F1()).compute(), float | np.ndarray)
assert_type(sm.MetricSet(f1=sm.F1()).compute(), sm.MetricResults)
assert_type(sm.F1().update([0, 1], [1, 1]), sm.F1)
assert_type(sm.AUROC().update([0, 1], [0.2, 0.8]).compute(), float | np.ndarray)
assert_type(sm.CoverageError().update([[1, 0]], [[0.5, 0.2]]).compute(), float)
assert_type(sm.CalibrationError().update([0, 1], [0.2, 0.8]).compute(), float)
assert_type(sm.KSStatistic().update([0, 1], [0.2, 0.8]).bounds(), tuple[float | np.ndarray, float | np.ndarray])
assert_type(sm.Window(sm.Accuracy(), size=3).update([0, 1], [0, 1]).compute(), float)
assert_type(sm.Precision().interval(), tuple[float | np.ndarray, float | np.ndarray])
assert_type(sm.MeanSquaredError().update([1.0, 2.0], [1.5, 2.0]).compute(), float | np.ndarray)
assert_type(sm.IntervalCoverage().compute(), float | np.ndarray)
label: str = sm.Accuracy().compute()  # E: Incompatible types in assignment (expression has type "float"
sm.ROCCurve().compute().fpr  # E: Item "list[ROCCurveResult]" of "ROCCurveResult | list[ROCCurveResult]" has no attribute "fpr"
'''

# Spark's evaluate takes Column expressions where it reads columns (issue #32 item 3). Checked only
# where pyspark is installed: without it mypy reads Column as Any and accepts anything.
SPARK_CASES = '''
import streammetrics as sm
from pyspark.sql import functions as F
from streammetrics import spark as sm_spark
sm_spark.evaluate(None, sm.AUROC(), label=F.col("y").cast("int"), score=F.col("p"), weight=F.col("w"))
sm_spark.evaluate(None, sm.MeanSquaredError(), target="y", prediction=["p", F.col("q") * 2], by="k")
sm_spark.evaluate(None, sm.AUROC(), label=3, score="p")  # E: Argument "label" to "evaluate" has incompatible type "int"
sm_spark.evaluate(None, sm.AUROC(), label="y", score="p", by=F.col("k"))  # E: Argument "by" to "evaluate" has incompatible type "Column"
'''


def _expected(text: str) -> dict[int, list[str]]:
    out: dict[int, list[str]] = {}
    for number, line in enumerate(text.splitlines(), 1):
        found = re.search(r"# ([EN]): (.*)$", line)
        if found:
            out[number] = [found.group(1), found.group(2)]
    return out


def test_mypy_sees_the_public_signatures(tmp_path: Path) -> None:
    _check(CASES, tmp_path)


def test_mypy_sees_spark_column_parameters(tmp_path: Path) -> None:
    pytest.importorskip("pyspark")
    _check(SPARK_CASES, tmp_path)


def _check(text_cases: str, tmp_path: Path) -> None:
    # a module name of its own per run: mypy's shared cache (below) remembers a module by name,
    # and a later run under the same name in another temporary directory replays the first path
    cases = tmp_path / f"cases_{uuid.uuid4().hex}.py"
    cases.write_text(textwrap.dedent(text_cases))
    config = tmp_path / "mypy.ini"
    config.write_text(f"[mypy]\nmypy_path = {ROOT}\nignore_missing_imports = True\npython_version = 3.11\n")
    stdout, stderr, _ = api.run([str(cases), "--config-file", str(config), "--cache-dir", str(ROOT / ".mypy_cache"),
                                 "--no-error-summary", "--show-error-codes", "--no-pretty"])
    assert not stderr, stderr
    got: dict[int, list[str]] = {}
    for line in stdout.splitlines():
        found = re.match(rf"{re.escape(str(cases))}:(\d+): (error|note): (.*)$", line)
        assert found, f"unexpected mypy output: {line}"
        got.setdefault(int(found.group(1)), []).append(f"{found.group(2)}: {found.group(3)}")
    expected = _expected(textwrap.dedent(text_cases))
    for number, (kind, text) in expected.items():
        messages = got.get(number, [])
        want = "error" if kind == "E" else "note"
        assert any(m.startswith(want) and text in m for m in messages), (number, text, messages)
    unexpected = {n: m for n, m in got.items() if n not in expected}
    assert not unexpected, f"errors on lines that must type-check: {unexpected}"
