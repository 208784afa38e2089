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


@pytest.fixture(scope="module")
def spark_session() -> Iterator[Any]:
    """A real local Spark (``local[2]``, no UI, 4 shuffle partitions), one per module, stopped at
    its end (``tests/integrations/test_spark.py`` keeps its own ``spark`` fixture)."""
    import os
    import shutil
    import sys
    import warnings

    pytest.importorskip("pyspark")
    if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
        pytest.skip("Spark needs a Java runtime")
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    from pyspark.sql import SparkSession

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)  # pyspark on pandas 3
        session = (
            SparkSession.builder.master("local[2]")
            .appName("streammetrics-tests")
            .config("spark.ui.enabled", "false")
            .config("spark.ui.showConsoleProgress", "false")
            .config("spark.sql.shuffle.partitions", "4")
            .getOrCreate()
        )
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()
