"""Monitoring a deployed model when labels are late or missing (docs/monitoring.md).

:class:`Drift` compares the current scores with a reference, without labels.
"""

# -- drift (the drift helper's block) --
from .drift import Drift

__all__ = ["Drift"]
