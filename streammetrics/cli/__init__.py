"""The ``streammetrics evaluate`` command line (``cli`` extra: pyarrow, rich, matplotlib).

Importing this package imports none of the optional dependencies; they are loaded when the command
runs. See :mod:`streammetrics.cli.evaluate`.
"""
