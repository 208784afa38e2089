"""A pytest plugin that runs scikit-learn's own metric tests against ``streammetrics.functional``.

Not collected by the default test run (its name does not start with ``test_``). The job, as
``.ci/run`` runs it (from the repository root; ``tests/functional/test_sklearn_suite_command.py`` keeps the
two the same)::

    PYTHONPATH=.:tests/_support python -m pytest -p sklearn_suite_plugin -o addopts="-q" -o filterwarnings="" \\
        --pyargs sklearn.metrics.tests.test_classification sklearn.metrics.tests.test_ranking \\
        sklearn.metrics.tests.test_regression sklearn.metrics.tests.test_common \\
        -k "not test_confusion_matrix_dtype"

runs the installed scikit-learn's test modules (never copied into this repository) with, at run
time, every name of :data:`streammetrics.functional.__all__` in those modules bound to
streammetrics' function -- module globals, ``@pytest.mark.parametrize`` values (also inside
``functools.partial``) and module-level metric registries (``test_common``'s ``ALL_METRICS``).
scikit-learn's ``UndefinedMetricWarning`` is left as it is: the tests' ``pytest.warns`` on it
catch streammetrics' warnings (``streammetrics._core.warn.sklearn_compatible``). Tests of functions streammetrics does not
provide (d2_* scores, ...) run unchanged. The run ends with a tally of the tests that
call streammetrics. Deselected (``-k``), a known failure with scikit-learn 1.9.1:
``test_confusion_matrix_dtype`` (int64 weights of 2**63 - 1 overflow: streammetrics counts in
float64, and weights above 2**128 are refused).
"""

from __future__ import annotations

import functools
from typing import Any

import pytest

import streammetrics.functional as F

NAMES = {n for n in F.__all__ if n != "type_of_target"}
_BOUND = pytest.StashKey[bool]()
_TALLY = {"collected": 0, "passed": 0, "failed": 0, "skipped": 0}
_FLAGGED: set[str] = set()
_REBOUND_KEYS: set[Any] = set()  # registry keys (metric names) that now name our functions


def _ours(value: Any) -> Any:
    """streammetrics' function for a scikit-learn metric function (or a partial of one)."""
    if isinstance(value, functools.partial):
        inner = _ours(value.func)
        return value if inner is value.func else functools.partial(inner, *value.args, **value.keywords)
    name = getattr(value, "__name__", None)
    module = getattr(value, "__module__", "") or ""
    if name in NAMES and module.startswith("sklearn.metrics"):
        return getattr(F, name)
    return value


def _uses_ours(item: pytest.Item) -> bool:
    """Whether a test calls a bound function (by name in its source or its parameters)."""
    if item.stash.get(_BOUND, False):
        return True
    params = getattr(getattr(item, "callspec", None), "params", {})
    if any(isinstance(v, str) and v in _REBOUND_KEYS for v in params.values()):
        return True  # a registry test (test_common) parametrized by the name of one of ours
    fn = getattr(item, "function", None)
    code = getattr(fn, "__code__", None)
    return code is not None and bool(NAMES & set(code.co_names))


def pytest_collection_modifyitems(
    session: pytest.Session, config: pytest.Config, items: list[pytest.Item]
) -> None:
    patched: set[int] = set()
    for item in items:
        mod = getattr(item, "module", None)
        if mod is not None and id(mod) not in patched:
            patched.add(id(mod))
            for name in NAMES & set(mod.__dict__):
                mod.__dict__[name] = getattr(F, name)
            for value in list(mod.__dict__.values()):  # registries (test_common's ALL_METRICS)
                if isinstance(value, dict):
                    for key, metric in list(value.items()):
                        ours = _ours(metric)
                        if ours is not metric:
                            value[key] = ours
                            _REBOUND_KEYS.add(key)
        callspec = getattr(item, "callspec", None)
        if callspec is not None:
            for key, value in list(callspec.params.items()):
                ours = _ours(value)
                if ours is not value:
                    callspec.params[key] = ours
                    item.stash[_BOUND] = True
        if _uses_ours(item):
            item.stash[_BOUND] = True
            _TALLY["collected"] += 1


def pytest_collection_finish(session: pytest.Session) -> None:
    _FLAGGED.update(item.nodeid for item in session.items if item.stash.get(_BOUND, False))


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if report.nodeid not in _FLAGGED:
        return
    if report.when == "call" or (report.when == "setup" and not report.passed):
        _TALLY["passed" if report.passed else "skipped" if report.skipped else "failed"] += 1


def pytest_terminal_summary(terminalreporter: Any) -> None:
    t = _TALLY
    terminalreporter.write_line(
        f"streammetrics.functional: {t['collected']} tests call it directly: {t['passed']} passed, "
        f"{t['failed']} failed, {t['skipped']} skipped"
    )
