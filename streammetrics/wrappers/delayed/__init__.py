"""``DelayedLabels`` (``core``) and its parts: pending predictions, their time order, batched
folding and its checks, unknown ids, slice keys around a ``Sliced``. Private parts; the public name
is ``streammetrics.DelayedLabels``."""
