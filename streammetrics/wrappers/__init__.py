"""Accumulators over accumulators: ``Window`` (``window``), ``Decayed`` (``decay``),
``DelayedLabels`` (``delayed/``), ``Sliced`` (``sliced/``), ``MetricSet`` (``metricset``) and
``Checkpointer`` (``checkpoint``). Their public names are importable from ``streammetrics``; this
package imports nothing, so that a family that builds on the wrappers' base (``monitoring``)
does not run the wrappers that build on it."""
