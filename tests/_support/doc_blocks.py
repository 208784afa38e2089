"""Extract and run the examples of README.md and docs/*.md (used by tests/docs/test_readme_examples.py
and tests/docs/test_docs_examples.py).

What runs:

* every fenced ```python block, on its own: in a fresh namespace (in this process, or in a fresh
  interpreter when it imports a heavy integration -- Dask, Spark, Ray, torch, Lightning, Keras,
  transformers, MLflow, TensorBoard -- which start clusters, JVMs or process groups);
* every line of a ```bash (or unlabelled) block that starts with ``streammetrics``, as
  ``python -m streammetrics ...`` in a subprocess (in the directory a ``cd DIR`` line before it
  names); other lines (``pip install``, ``python -m pytest``) are not run.

Both run in a temporary directory that holds a copy of the clone's ``examples/`` and a link to
``streammetrics/``, so a relative path such as ``examples/animals.csv`` reads the bundled file,
and whatever an example writes (``--json out.json``, ``sm.save(..., "recall.sm")``) lands in
the temporary directory, not in the clone.

Output: a ```text block that follows a python block (or a bash block of one command), with only
blank lines in between, is what that block prints; the run's stdout must equal it (trailing
whitespace ignored).

Exceptions: an HTML comment ``<!-- notest: reason -->`` on the line before a fence marks an
intended fragment (the reason is required); a block that needs an optional package that is not
installed is skipped, naming the package.
"""

from __future__ import annotations

import ast
import contextlib
import importlib.util
import io
import os
import re
import shlex
import shutil
import subprocess
import sys
import textwrap
import warnings
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FENCE = re.compile(r"^(?P<indent>[ \t]*)```(?P<info>[^\n`]*)\n(?P<body>.*?)^(?P=indent)```[ \t]*$", re.M | re.S)
NOTEST = re.compile(r"<!--\s*notest:\s*(?P<reason>\S[^>]*?)\s*-->\s*$")

# An integration submodule of streammetrics needs these packages installed.
EXTRAS = {
    "dask": ("dask", "distributed"), "spark": ("pyspark",), "ray": ("ray",), "torch": ("torch",),
    "lightning": ("lightning", "torch"), "keras": ("keras",), "hf": ("transformers", "torch"),
    "mlflow": ("mlflow",), "tensorboard": ("tensorboard", "torch"), "prometheus": ("prometheus_client",),
    "otel": ("opentelemetry",), "prometheus_sliced": ("prometheus_client",), "spark_evaluators": ("pyspark",),
    "spark_streaming": ("pyspark",),
    "plot": ("matplotlib",),
}
# Blocks importing one of these run in a fresh interpreter.
HEAVY = {"dask", "distributed", "pyspark", "ray", "torch", "lightning", "keras", "transformers", "mlflow",
         "tensorboard"}


@dataclass
class Block:
    """One example: ``kind`` is "python" or "command"; ``expected`` the output shown after it."""

    page: str
    line: int
    kind: str
    code: str
    expected: str | None = None
    notest: str | None = None
    cwd: str = "."
    command: int = 0  # the command's position in its shell block (from 1), 0 for python

    @property
    def id(self) -> str:
        return f"{self.page}:{self.line}" + (f"#{self.command}" if self.command else "")


def _commands(body: str) -> list[tuple[str, str]]:
    """The ``streammetrics ...`` lines of a shell block, continuation lines joined, each with the
    directory a ``cd DIR`` line before it moved to ("." at first)."""
    lines, current, cwd = [], "", "."
    for raw in body.splitlines():
        current += raw.rstrip()
        if current.endswith("\\"):
            current = current[:-1] + " "
            continue
        words = current.strip().split()
        if words[:1] == ["streammetrics"]:
            lines.append((current.strip(), cwd))
        elif words[:1] == ["cd"] and len(words) == 2:
            cwd = os.path.normpath(os.path.join(cwd, words[1]))
        current = ""
    return lines


def blocks(page: str) -> list[Block]:
    """Every runnable example of ``page`` (a path relative to the repository root), in order."""
    text = (ROOT / page).read_text(encoding="utf-8")
    found: list[Block] = []
    fences = list(FENCE.finditer(text))
    for i, m in enumerate(fences):
        lang = (m["info"].strip().split() or [""])[0]
        before = text[: m.start()].rstrip("\n").rsplit("\n", 1)[-1]
        note = NOTEST.search(before)
        line = text.count("\n", 0, m.start()) + 1
        body = textwrap.dedent(m["body"])
        expected = None
        if i + 1 < len(fences):
            nxt = fences[i + 1]
            if (nxt["info"].strip().split() or [""])[0] == "text" and not text[m.end():nxt.start()].strip():
                expected = textwrap.dedent(nxt["body"])
        if lang == "python":
            found.append(Block(page, line, "python", body, expected, note["reason"] if note else None))
        elif lang in ("bash", "sh", "shell", ""):
            commands = _commands(body)
            for k, (command, cwd) in enumerate(commands, 1):
                found.append(Block(page, line, "command", command, expected if len(commands) == 1 else None,
                                   note["reason"] if note else None, cwd, k))
    return found


def _imported(code: str) -> set[str]:
    """Dotted module names the code imports."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(code)):
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.add(node.module)
            if node.module == "streammetrics":
                names |= {f"streammetrics.{alias.name}" for alias in node.names}
    return names


def _needs(block: Block) -> set[str]:
    """Optional packages the block needs (top-level import names)."""
    needs: set[str] = set()
    if block.kind == "python":
        for name in _imported(block.code):
            parts = name.split(".")
            if parts[0] == "streammetrics":
                if len(parts) > 1:
                    needs |= set(EXTRAS.get(parts[1], ()))
            elif parts[0] not in sys.stdlib_module_names:
                needs.add(parts[0])
        if ".plot(" in block.code:
            needs.add("matplotlib")
        if "to_pandas(" in block.code:
            needs.add("pandas")
    else:
        args = shlex.split(block.code, comments=True)
        if len(args) > 1 and args[1] in ("evaluate", "drift"):  # they read files with pyarrow
            needs.add("pyarrow")
        if "--plot" in args:
            needs.add("matplotlib")
    return needs


def skip_reason(block: Block) -> str | None:
    """Why the block cannot run here (an optional package missing), or None."""
    missing = sorted(name for name in _needs(block) if importlib.util.find_spec(name) is None)
    if missing:
        return f"{block.id} needs {', '.join(missing)} (an optional extra), not installed"
    if "pyspark" in _needs(block) and shutil.which("java") is None:
        return f"{block.id} needs Java for Spark, not installed"
    return None


def workdir(tmp: Path) -> Path:
    """``tmp`` with a copy of the clone's examples/ (what an example writes there, ``--json
    out.json`` after ``cd examples/trec`` say, stays in ``tmp``, never in the tracked tree) and a
    link to streammetrics/ (the bundled files, read only)."""
    shutil.copytree(ROOT / "examples", tmp / "examples", ignore=shutil.ignore_patterns("__pycache__"))
    (tmp / "streammetrics").symlink_to(ROOT / "streammetrics", target_is_directory=True)
    return tmp


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), *filter(None, [env.get("PYTHONPATH")])])
    env.setdefault("MPLBACKEND", "Agg")
    env.setdefault("KERAS_BACKEND", "torch")
    env["COLUMNS"] = "100"  # the CLI's tables and help: the width the docs show
    return env


def run(block: Block, cwd: Path) -> str:
    """Run the block in ``cwd``; return its stdout; raise AssertionError with the output if it fails."""
    if block.kind == "command":
        args = shlex.split(block.code, comments=True)
        proc = subprocess.run([sys.executable, "-m", "streammetrics", *args[1:]], cwd=cwd / block.cwd, env=_env(),
                              capture_output=True, text=True, timeout=600, check=False)
        assert proc.returncode == 0, f"{block.id}: `{block.code}` exited {proc.returncode}\n{proc.stderr}"
        return proc.stdout
    heavy = {name.split(".")[0] for name in _imported(block.code)} & HEAVY or any(
        name.split(".")[:1] == ["streammetrics"] and name.split(".")[1:2] and name.split(".")[1] in EXTRAS
        and name.split(".")[1] not in ("plot", "prometheus") for name in _imported(block.code))
    if heavy:
        proc = subprocess.run([sys.executable, "-c", block.code], cwd=cwd, env=_env(), capture_output=True,
                              text=True, timeout=600, check=False)
        assert proc.returncode == 0, f"{block.id} failed:\n{proc.stdout}\n{proc.stderr}"
        return proc.stdout
    if importlib.util.find_spec("matplotlib") is not None:
        import matplotlib

        matplotlib.use("Agg")
    out = io.StringIO()
    old = os.getcwd()
    os.chdir(cwd)
    try:
        with contextlib.redirect_stdout(out), warnings.catch_warnings():
            exec(compile(block.code, block.id, "exec"), {"__name__": "__main__"})  # noqa: S102
    finally:
        os.chdir(old)
        if "matplotlib.pyplot" in sys.modules:
            sys.modules["matplotlib.pyplot"].close("all")
    return out.getvalue()


def same_output(got: str, expected: str) -> bool:
    """Equal up to trailing whitespace on each line and trailing blank lines."""
    def norm(s: str) -> list[str]:
        return [line.rstrip() for line in s.rstrip().splitlines()]
    return norm(got) == norm(expected)
