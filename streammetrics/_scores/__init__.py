"""The score states behind every ranking metric, behind one protocol (``protocol``): exact
(``exact/``, a sorted buffer) or bounded (``binned/``, adaptive mergeable bins), with the
counts-at-thresholds kernel (``thresholds``) that turns either into curves, areas and
certificates. Private."""
