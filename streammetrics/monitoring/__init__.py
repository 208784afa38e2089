"""Monitoring a deployed model when labels are late or missing: estimated performance before
labels arrive (:class:`Estimated`) and score drift against a reference (:class:`Drift`).

The definitions: docs/definitions/monitoring.md; the guide: docs/monitoring.md.
"""

from .drift import Drift
from .estimated import Estimated

__all__ = ["Drift", "Estimated"]
