"""Every command of ``streammetrics``: ``demo``, ``evaluate``, ``trec``, ``trec-compare`` and ``drift``.

Importing this package imports none of the optional dependencies; they are loaded when a command
runs. :mod:`~streammetrics.cli.demo` is the default command (the bundled example through a
MetricSet; core dependencies only). ``streammetrics evaluate`` (``cli`` extra: pyarrow, rich,
matplotlib) is :mod:`~streammetrics.cli.evaluate` (the command), ``options`` (its arguments and
their types), ``readers`` (CSV, Parquet, JSON Lines in batches; ``jsondepth`` guards pyarrow's
JSON reader), ``labels`` (which label is which class), ``columns`` (batch columns as arrays),
``report`` (JSON and tables), ``plots``, ``plan`` (what a run reads: columns, task, classes) and
``errors`` (one-line errors and exit statuses); ``commands`` registers every command's parser.
``trec`` and ``trec_compare`` are the ``streammetrics trec`` / ``trec-compare`` commands (core
dependencies only; the library part is :mod:`streammetrics.trec`). ``drift`` is ``streammetrics
drift`` (score drift against a reference file; ``cli`` extra; the library part is
:class:`streammetrics.monitoring.Drift`).
"""
