"""The bounded score state: adaptive mergeable bins (``bins``) with certified bounds, and their
parts (array kernels, batch keys, fields, persistence, removal and decay). Private."""
