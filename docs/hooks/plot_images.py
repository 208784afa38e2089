"""mkdocs hook: the example images of docs/plots.md are drawn by the docs build itself.

After each build, ``examples/plot_images.py`` draws ``images/*.png`` into the built site with the
library's own plotting code (``streammetrics.plot``, fixed seed), over the copies committed in
``docs/images`` (which the README shows): the site always shows what the current code draws, and
a build never rewrites a tracked file.
"""

from __future__ import annotations

import importlib.util
import os
from typing import Any


def on_post_build(config: Any, **kwargs: Any) -> None:
    root = os.path.dirname(os.path.abspath(config["config_file_path"]))
    script = os.path.join(root, "examples", "plot_images.py")
    spec = importlib.util.spec_from_file_location("plot_images", script)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.main(os.path.join(config["site_dir"], "images"))
