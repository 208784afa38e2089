"""Fixtures of the integration tests."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest


@pytest.fixture(scope="module")
def client() -> Iterator[Any]:
    """A client of a real dask LocalCluster (two single-threaded worker processes), one per module
    (``tests/integrations/test_dask.py`` has its own: a client that connects by address)."""
    import engine_cases as cases

    with cases.local_cluster() as c:
        yield c
