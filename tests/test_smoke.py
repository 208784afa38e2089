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

    extras = ["torch", "dask", "distributed", "pyspark", "ray", "prometheus_client", "opentelemetry", "pyarrow",
              "pandas", "matplotlib", "rich", "scipy", "sklearn", "lightning", "keras",
              "transformers", "mlflow", "tensorboard"]
    code = (
        "import sys, streammetrics as sm\n"
        "[getattr(sm, n) for n in sm.__all__]\n"
        f"print(sorted(m for m in {extras!r} if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]", out.stdout


def test_python_m_streammetrics_runs_the_demo_on_the_core_dependencies_alone() -> None:
    """``python -m streammetrics`` (no command) and ``streammetrics demo`` with every optional
    package unimportable (numpy and sortedcontainers only): the demo runs, from ``cli.demo``."""
    import subprocess
    import sys

    blocked = ["pyarrow", "rich", "matplotlib", "pandas", "scipy", "sklearn", "numba", "torch", "dask",
               "distributed", "pyspark", "ray", "prometheus_client", "pytrec_eval", "ir_measures", "ranx"]
    outputs = []
    for argv in ([], ["demo", "--batch-size", "50", "--threshold", "0.4"]):
        code = (
            "import runpy, sys\n"
            f"for m in {blocked!r}:\n"
            "    sys.modules[m] = None  # as if not installed: importing it raises ImportError\n"
            f"sys.argv = ['streammetrics', *{argv!r}]\n"
            "try:\n"
            "    runpy.run_module('streammetrics', run_name='__main__')\n"
            "finally:\n"
            "    print('demo module loaded:', 'streammetrics.cli.demo' in sys.modules, file=sys.stderr)\n"
        )
        proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0, proc.stderr
        assert "demo module loaded: True" in proc.stderr and "Traceback" not in proc.stderr
        assert "569 rows" in proc.stdout and "classification report" in proc.stdout
        outputs.append(proc.stdout)
    assert "batches of 100, threshold 0.5" in outputs[0]
    assert "batches of 50, threshold 0.4" in outputs[1]
