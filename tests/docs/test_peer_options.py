"""The docs' comparison tables list every option of the peers (issue #33), read from the installed
peers with ``inspect.signature``:

- ``docs/functional.md``, "What is there": every classification, ranking and calibration function
  of ``sklearn.metrics`` (and ``sklearn.calibration.calibration_curve``) is a row, and the row
  names every parameter beyond the first two (the data) in backticks; every such function is in
  ``streammetrics.functional`` with those parameters;
- ``docs/functional.md``, "torchmetrics' classification options": every constructor option of
  ``torchmetrics.classification``'s ``Binary*`` / ``Multiclass*`` / ``Multilabel*`` classes is a
  row, and every class (its name without the task prefix) is in the table of classes;
- ``docs/calibration.md``, "The peers' options": every option of torchmetrics'
  ``BinaryCalibrationError`` / ``MulticlassCalibrationError`` and of ``calibration_curve``.
"""

from __future__ import annotations

import inspect
import re
from pathlib import Path

import pytest

import streammetrics.functional as F

ROOT = Path(__file__).resolve().parents[2]
FUNCTIONAL = ROOT / "docs" / "functional.md"
CALIBRATION = ROOT / "docs" / "calibration.md"
#: scikit-learn's modules of the families the table covers (regression has its own page)
SKLEARN_MODULES = ("sklearn.metrics._classification", "sklearn.metrics._ranking")
TASK_PREFIX = re.compile(r"^(Binary|Multiclass|Multilabel)")


def section(path: Path, heading: str) -> str:
    """The text of ``path`` from the heading line ``heading`` to the next heading of its level."""
    text = path.read_text(encoding="utf-8")
    m = re.search(rf"^(#+) {re.escape(heading)}\s*$", text, re.M)
    assert m, f"{path.name}: no section {heading!r}"
    level = len(m.group(1))
    end = re.compile(rf"^#{{1,{level}}} ", re.M).search(text, m.end())
    return text[m.end():end.start() if end else len(text)]


def table_rows(text: str) -> list[list[str]]:
    """The cells of every table row (header and rule rows left out; ``\\|`` inside a cell kept)."""
    rows = []
    for line in text.splitlines():
        if not line.startswith("|") or re.fullmatch(r"\|(\s*:?-+:?\s*\|)+", line.strip()):
            continue
        cells = [c.strip() for c in re.split(r"(?<!\\)\|", line.strip())[1:-1]]
        rows.append(cells)
    return rows[1:]  # the header


def ticked(cell: str) -> set[str]:
    """The identifiers named in backticks in ``cell`` (``f(beta=)`` names ``f`` and ``beta``)."""
    return {w for code in re.findall(r"`([^`]*)`", cell) for w in re.findall(r"[A-Za-z_]\w*", code)}


def sklearn_functions() -> dict[str, object]:
    sk = pytest.importorskip("sklearn.metrics")
    cal = pytest.importorskip("sklearn.calibration")
    out = {name: getattr(sk, name) for name in sk.__all__
           if inspect.isfunction(getattr(sk, name)) and getattr(sk, name).__module__ in SKLEARN_MODULES}
    out["calibration_curve"] = cal.calibration_curve
    return out


def test_every_sklearn_function_and_parameter_is_in_the_functional_table():
    rows = table_rows(section(FUNCTIONAL, "What is there"))
    assert rows, "docs/functional.md: no table under 'What is there'"
    by_name: dict[str, set[str]] = {}
    for cells in rows:
        names = ticked(cells[0])
        for name in names:
            by_name.setdefault(name, set()).update(names | ticked(" ".join(cells[1:])))
    missing = []
    for name, func in sorted(sklearn_functions().items()):
        params = list(inspect.signature(func).parameters)[2:]  # beyond the data (y_true, y_pred, ...)
        if name not in by_name:
            missing.append(f"{name} (no row)")
            continue
        missing += [f"{name}: {p}" for p in params if p not in by_name[name]]
    assert not missing, f"docs/functional.md 'What is there' lacks: {missing}"


def test_every_sklearn_function_and_parameter_is_in_streammetrics_functional():
    missing = []
    for name, func in sorted(sklearn_functions().items()):
        ours = getattr(F, name, None)
        if ours is None:
            missing.append(f"{name} (no function)")
            continue
        theirs, mine = inspect.signature(func).parameters, inspect.signature(ours).parameters
        missing += [f"{name}: {p}" for p in theirs if p not in mine]
    assert not missing, f"streammetrics.functional lacks: {missing}"


def torchmetrics_classes() -> dict[str, type]:
    tc = pytest.importorskip("torchmetrics.classification")
    return {n: getattr(tc, n) for n in dir(tc)
            if inspect.isclass(getattr(tc, n)) and TASK_PREFIX.match(n)}


def test_every_torchmetrics_option_and_class_is_in_the_torchmetrics_tables():
    text = section(FUNCTIONAL, "torchmetrics' classification options")
    rows = table_rows(text)
    options = {name for cells in rows for name in ticked(cells[0])}
    listed = {name for cells in rows for name in ticked(" ".join(cells))}
    missing = set()
    for cls_name, cls in torchmetrics_classes().items():
        for p in list(inspect.signature(cls.__init__).parameters)[1:]:
            if p not in ("kwargs",) and p not in options:
                missing.add(f"option {p} ({cls_name})")
        family = TASK_PREFIX.sub("", cls_name)
        if family not in listed:
            missing.add(f"class {family}")
    assert not missing, f"docs/functional.md torchmetrics tables lack: {sorted(missing)}"


def test_every_calibration_peer_option_is_in_the_calibration_table():
    tc = pytest.importorskip("torchmetrics.classification")
    cal = pytest.importorskip("sklearn.calibration")
    rows = table_rows(section(CALIBRATION, "The peers' options"))
    options = {(cells[0].split()[0], name) for cells in rows for name in ticked(cells[1])}
    want = {("torchmetrics", p) for cls in (tc.BinaryCalibrationError, tc.MulticlassCalibrationError)
            for p in list(inspect.signature(cls.__init__).parameters)[1:] if p != "kwargs"}
    want |= {("scikit-learn", p) for p in list(inspect.signature(cal.calibration_curve).parameters)[2:]}
    assert not want - options, f"docs/calibration.md 'The peers' options' lacks: {sorted(want - options)}"


def test_the_parsers_see_what_they_read():
    """A row that names no option, or an option in a row of another function, is not taken."""
    rows = table_rows("| a | b |\n|---|---|\n| `f(beta=)`, `g` | `x`, y \\| `z` |\n")
    assert rows == [["`f(beta=)`, `g`", "`x`, y \\| `z`"]]
    assert ticked(rows[0][0]) == {"f", "beta", "g"} and ticked(rows[0][1]) == {"x", "z"}
