"""Smoke tests: the demo runs and the package imports its public names."""

import streammetrics as sm
from streammetrics.__main__ import main


def test_demo_runs(capsys):
    assert main([]) == 0
    out = capsys.readouterr().out
    assert "569 rows" in out and "accuracy" in out and "weighted avg" in out
    assert "auroc                   0.9945" in out and "Youden" in out


def test_public_names_importable():
    for name in sm.__all__:
        assert getattr(sm, name) is not None
