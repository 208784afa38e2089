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


def test_import_loads_no_integration() -> None:
    """``import streammetrics`` (and every public name) never imports an optional extra."""
    import subprocess
    import sys

    extras = ["torch", "dask", "distributed", "pyspark", "ray", "prometheus_client", "pyarrow",
              "pandas", "matplotlib", "rich", "scipy", "sklearn", "lightning", "keras",
              "transformers", "mlflow", "tensorboard"]
    code = (
        "import sys, streammetrics as sm\n"
        "[getattr(sm, n) for n in sm.__all__]\n"
        f"print(sorted(m for m in {extras!r} if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]", out.stdout
