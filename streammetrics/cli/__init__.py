"""The ``streammetrics evaluate`` command line (``cli`` extra: pyarrow, rich, matplotlib).

Importing this package imports none of the optional dependencies; they are loaded when the command
runs. Modules: :mod:`~streammetrics.cli.evaluate` (the command), ``options`` (its arguments and
their types), ``readers`` (CSV, Parquet, JSON Lines in batches; ``jsondepth`` guards pyarrow's
JSON reader), ``labels`` (which label is which class), ``columns`` (batch columns as arrays),
``report`` (JSON and tables), ``plots`` and ``errors`` (one-line errors and exit statuses).
``trec`` and ``trec_compare`` are the ``streammetrics trec`` / ``trec-compare`` commands (core
dependencies only; the library part is :mod:`streammetrics.trec`).
"""
