"""Griffe extension: the API site shows docstrings with their shared parameter entries filled in.

mkdocstrings reads docstrings from the source (statically, without importing the package), where
shared parameter descriptions stand as placeholder lines (``{family: name, ...}``, see
``streammetrics/_core/docstrings.py``). This extension applies the same :func:`fill` the package
applies at import, so the site, ``help()`` and the doctests show the same text. The module is
loaded by its path: it imports nothing from the package, so the build needs no optional extra.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import griffe

_PATH = Path(__file__).resolve().parents[2] / "streammetrics" / "_core" / "docstrings.py"
_spec = importlib.util.spec_from_file_location("_streammetrics_docstrings", _PATH)
assert _spec is not None and _spec.loader is not None
_snippets = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_snippets)


class FillSnippets(griffe.Extension):
    """Fill the placeholder lines of every docstring as it is read."""

    def on_instance(self, *, obj: griffe.Object, **kwargs: Any) -> None:
        if obj.docstring is not None:
            obj.docstring.value = _snippets.fill(obj.docstring.value)
