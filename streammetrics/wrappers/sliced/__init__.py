"""``Sliced`` (``core``) and its parts: the state of crossed and marginal slices, per-slice
accumulators, slice keys, results, the saved form and the overflow slice's absorbed keys. Private
parts; the public name is ``streammetrics.Sliced``."""
