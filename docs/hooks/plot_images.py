"""mkdocs hook: the example images of docs/plots.md are drawn by the docs build itself.

Before each build, ``examples/plot_images.py`` redraws ``docs/images/*.png`` with the library's
own plotting code (``streammetrics.plot``, fixed seed), so the pictures in the docs always show
what the current code draws.
"""

from __future__ import annotations

import importlib.util
import os
from typing import Any


def on_pre_build(config: Any, **kwargs: Any) -> None:
    root = os.path.dirname(os.path.abspath(config["config_file_path"]))
    script = os.path.join(root, "examples", "plot_images.py")
    spec = importlib.util.spec_from_file_location("plot_images", script)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.main(os.path.join(config["docs_dir"], "images"))
