"""Monitoring a model in production: estimated performance before labels arrive (and drift).

The definitions: docs/definitions/monitoring.md; the guide: docs/monitoring.md.
"""

# -- estimated performance (Estimated) --
from .estimated import Estimated

__all__ = ["Estimated"]
