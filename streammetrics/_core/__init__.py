"""The core every family shares: the accumulator protocol (``metric``, ``state``), input
validation, constructor-argument checks, persistence and the checks of untrusted states,
warnings, averaging, label mapping and intervals. Private: it imports nothing above it."""
