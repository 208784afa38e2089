"""The undefined-metric warnings of ``streammetrics`` are catchable by code written for
scikit-learn: a filter, ``pytest.warns`` or ``except`` on ``sklearn.exceptions.UndefinedMetricWarning``
catches them once scikit-learn is imported (``streammetrics._core.warn.sklearn_compatible``), one on
:class:`streammetrics.UndefinedMetricWarning` still does, and ``import streammetrics`` (or a call
that warns) does not import scikit-learn."""

from __future__ import annotations

import subprocess
import sys
import warnings

import numpy as np
import pytest
import sklearn.exceptions
import sklearn.metrics

import streammetrics as sm
import streammetrics.functional as F

SK = sklearn.exceptions.UndefinedMetricWarning

# (function, arguments) that warn as undefined, in scikit-learn too, each through a different path
_FUNCTIONAL = {
    "precision_score": ([0, 0, 0], [0, 0, 0]),  # zero_division
    "recall_score": ([0, 0], [1, 1]),
    "f1_score": ([0, 0], [0, 0]),
    "jaccard_score": ([0, 0], [0, 0]),
    "roc_auc_score": ([1, 1, 1], [0.1, 0.2, 0.3]),  # one class only
    "roc_curve": ([0, 0, 0], [0.1, 0.2, 0.3]),
    "precision_recall_fscore_support": ([0, 1, 2], [0, 0, 0]),
    "classification_report": ([0, 1, 2], [0, 0, 0]),
}
_UNDEFINED = {name: (lambda name=name, a=a: getattr(F, name)(*a)) for name, a in _FUNCTIONAL.items()}
_UNDEFINED["Precision.compute"] = lambda: sm.Precision().update([0, 0], [0, 0]).compute()  # an accumulator


@pytest.mark.parametrize("name", sorted(_UNDEFINED))
def test_filter_on_sklearn_class_catches_ours(name):
    call = _UNDEFINED[name]
    with warnings.catch_warnings():
        warnings.simplefilter("error", SK)  # what code written for scikit-learn sets
        with pytest.raises(SK):
            call()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        warnings.filterwarnings("ignore", category=SK)  # silenced as scikit-learn's would be
        call()


@pytest.mark.parametrize("name", sorted(_UNDEFINED))
def test_pytest_warns_either_class(name):
    with pytest.warns(SK):
        _UNDEFINED[name]()
    with pytest.warns(sm.UndefinedMetricWarning):
        _UNDEFINED[name]()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", sm.UndefinedMetricWarning)  # our own filter still works
        warnings.simplefilter("error", UserWarning)
        warnings.filterwarnings("ignore", category=sm.UndefinedMetricWarning)
        _UNDEFINED[name]()


@pytest.mark.parametrize("name", sorted(_FUNCTIONAL))
def test_same_cases_warn_in_sklearn(name):
    """The functional cases above are ones where scikit-learn warns too (not a vacuous filter)."""
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        getattr(sklearn.metrics, name)(*_FUNCTIONAL[name])
    assert any(issubclass(w.category, SK) for w in rec), name


def test_warning_class_is_both_and_named_as_ours():
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        F.precision_score([0, 0], [0, 0])
    cats = [w.category for w in rec if issubclass(w.category, sm.UndefinedMetricWarning)]
    assert cats and all(issubclass(c, SK) for c in cats)
    assert cats[0].__name__ == "UndefinedMetricWarning" and cats[0].__module__ == "streammetrics._core.metric"
    assert len({id(c) for c in cats}) == 1  # one cached class, not one per warning


def test_import_and_warning_do_not_import_sklearn():
    code = (
        "import sys, warnings\n"
        "import streammetrics, streammetrics.functional as F\n"
        "with warnings.catch_warnings(record=True) as rec:\n"
        "    warnings.simplefilter('always')\n"
        "    F.precision_score([0, 0], [0, 0])\n"
        "    streammetrics.Precision().update([0, 0], [0, 0]).compute()\n"
        "assert len(rec) == 2, rec\n"
        "assert all(w.category is streammetrics.UndefinedMetricWarning for w in rec), rec\n"
        "assert not [m for m in sys.modules if m.split('.')[0] == 'sklearn'], 'sklearn imported'\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_values_unchanged():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert F.precision_score([0, 0, 0], [0, 0, 0]) == sklearn.metrics.precision_score([0, 0, 0], [0, 0, 0])
        assert np.isnan(F.roc_auc_score([1, 1, 1], [0.1, 0.2, 0.3]))
