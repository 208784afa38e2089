"""Hypothesis profiles.

* ``ci`` (loaded when the environment has ``CI`` set, as ``.ci/run`` does): derandomized, so a
  run of CI is reproducible and a landing is never decided by which random examples were drawn.
* ``explore``: random, 1000 examples where a test sets no count of its own; run it locally to hunt for new failures
  (``HYPOTHESIS_PROFILE=explore pytest``). A failure it finds becomes an explicit example.
* ``default``: Hypothesis's own defaults (random examples).
"""

from __future__ import annotations

import os

from hypothesis import settings

settings.register_profile("ci", derandomize=True, print_blob=True)
settings.register_profile("explore", max_examples=1000, print_blob=True)
_profile = os.environ.get("HYPOTHESIS_PROFILE") or ("ci" if os.environ.get("CI") else "default")
settings.load_profile(_profile)
