"""The fields of the bounded ranking state, declared once for the parts it is assembled from.

:class:`~streammetrics._scores.binned.bins.BinnedScores` is built from :class:`BinFields` subclasses (its
removal and persistence parts); this base only declares, for type checkers, the storage they
share: per column the sorted bin keys and their positive / negative weights, the shift, and
bins pending a fold.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import TYPE_CHECKING

import numpy as np


class BinFields:
    """Declarations of the bounded ranking state's storage (see the module docstring)."""

    n_columns: int
    capacity: int
    edges: np.ndarray | None
    scores: str
    _keys: list[np.ndarray]
    _pos: list[np.ndarray]
    _neg: list[np.ndarray]
    _shift: np.ndarray
    _pend: list[tuple[np.ndarray, np.ndarray, np.ndarray] | None]

    if TYPE_CHECKING:  # BinnedScores' own methods

        def key(self) -> Hashable: ...

        def _settle(self) -> None: ...
