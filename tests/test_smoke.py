"""Smoke tests: the demo runs and the package imports its public names."""

import pytest

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


#: Optional third-party packages (extras), by their import names.
OPTIONAL = ["torch", "dask", "distributed", "pyspark", "ray", "prometheus_client", "opentelemetry", "pyarrow",
            "pandas", "matplotlib", "rich", "scipy", "sklearn", "lightning", "keras", "transformers", "mlflow",
            "tensorboard", "numba", "pytrec_eval", "ir_measures", "accelerate", "fairlearn"]

#: What each integration module imports of its own extra when it is imported (the rest it
#: imports when called). Importing the module may add nothing optional beyond what these add.
INTEGRATION_IMPORTS = {
    "dask": (), "spark": (), "spark_streaming": (), "ray": (), "hf": (), "tensorboard": (),
    "spark_evaluators": ("pyspark.ml.evaluation", "pyspark.ml.functions", "pyspark.ml.linalg",
                         "pyspark.ml.param.shared", "pyspark.sql"),
    "torch": ("torch", "torch.distributed"), "prometheus": ("prometheus_client",),
    "prometheus_sliced": ("prometheus_client",), "otel": ("opentelemetry.metrics",),
    "lightning": ("lightning.pytorch", "torch.distributed"), "keras": ("keras",), "mlflow": ("mlflow",),
}


def _optional_loaded_by(modules: list[str], first: tuple[str, ...] = ()) -> list[str]:
    """The optional packages that importing ``modules`` (after ``first``) adds to sys.modules,
    in a fresh interpreter."""
    import os
    import subprocess
    import sys

    code = (
        "import importlib, sys\n"
        f"for m in {list(first)!r}:\n    importlib.import_module(m)\n"
        f"before = {{m for m in {OPTIONAL!r} if m in sys.modules}}\n"
        f"for m in {modules!r}:\n    importlib.import_module(m)\n"
        "import streammetrics as sm\n"
        "[getattr(sm, n) for n in sm.__all__]\n"
        f"print(sorted(m for m in {OPTIONAL!r} if m in sys.modules and m not in before))"
    )
    env = {**os.environ, "KERAS_BACKEND": os.environ.get("KERAS_BACKEND", "torch")}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False, env=env,
                         timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    return eval(out.stdout.strip().splitlines()[-1])  # noqa: S307 - a list literal we printed


def _stable() -> tuple[list[str], list[str]]:
    from test_architecture_map import MAP, stable_modules

    return stable_modules(MAP.read_text(encoding="utf-8"))


def test_import_loads_no_integration() -> None:
    """``import streammetrics`` (and every public name), and every stable library module that
    docs/architecture.md lists (``functional``, ``plot``, the families), never imports an
    optional extra."""
    library, _ = _stable()
    assert {"streammetrics", "streammetrics.functional", "streammetrics.plot", "streammetrics.regression"} <= set(library)
    assert _optional_loaded_by(library) == []


def test_every_stable_integration_is_listed_here() -> None:
    _, integrations = _stable()
    assert integrations and sorted(n.split(".", 1)[1] for n in integrations) == sorted(INTEGRATION_IMPORTS)


@pytest.mark.parametrize("name", sorted(INTEGRATION_IMPORTS))
def test_an_integration_imports_only_its_own_extra(name: str) -> None:
    """Importing ``streammetrics.<name>`` adds no optional package beyond what importing the
    third-party modules it stands on adds (checked in a fresh interpreter)."""
    import importlib.util

    first = INTEGRATION_IMPORTS[name]
    missing = [m for m in first if importlib.util.find_spec(m.split(".")[0]) is None]
    if missing:
        pytest.skip(f"streammetrics.{name} needs {missing} (an optional extra), not installed")
    assert _optional_loaded_by([f"streammetrics.{name}"], first) == []


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
