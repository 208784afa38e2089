"""Interpolated and 11-point AP of many keyed problems: the ranges' envelopes per key.

The keyed ranges (:mod:`streammetrics._engines.keyed_ranges`) summarise each key's segment of a
range with the ranked kernel; where an interpolated or 11-point ``AveragePrecision`` member reads
a key's column (:attr:`~streammetrics._engines.keyed_split.KeyedSplit.envelope_columns`), that
summary also holds the key's :class:`~streammetrics._engines.ap_envelope.EnvelopePart` (its
precision envelope as a step function of the best precision below it -- only where an
interpolated member reads the column --, its best precision per 11-point level:
:func:`~streammetrics._engines.ap_envelope.range_part` with the key's offsets).
The root walks each key's parts up its ranges
(:func:`~streammetrics._engines.ranked.combine`, which calls
:func:`~streammetrics._engines.ap_envelope.combine`), then each member averages its classes by
its own rule (``RankingMetric._value_given``), as for the step AP.

A range's parts travel as one :class:`KeyedEnvelopes` (flat arrays, not one object per key:
O(1) arrays whatever the keys), which :func:`to_arrays` / :func:`from_arrays` turn into named
numeric arrays and back -- checked, since Spark ships them as bytes. Memory: 13 numbers per key
in the range, plus for an interpolated AP at most 2 per distinct positive score of the key in
the range (the thresholds whose precision is a record from below); weighted, the key's exact
positive weight (a few floats) and its 11-point candidates (about 4 numbers each; only the
thresholds whose recall lies within 2^-14 of a level: :mod:`.ap_envelope`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from .ap_envelope import LEVELS, EnvelopePart

#: The array names of :func:`to_arrays` (prefixed so they sit beside a summary's other arrays).
NAMES = ("env_sizes", "env_values", "env_masses", "env_levels", "env_exact_sizes", "env_exact")


@dataclass(frozen=True)
class KeyedEnvelopes:
    """The envelope parts of a range's keys, in the order of its summary's codes."""

    sizes: np.ndarray  #: int64 per key: its part's number of (value, mass) pairs; -1: no part
    values: np.ndarray  #: the parts' ``values``, one after the other
    masses: np.ndarray  #: the parts' ``masses``, one after the other
    levels: np.ndarray  #: (keys, 11): each part's ``levels`` (-1 rows where a key has no part)
    exact_sizes: np.ndarray  #: int64 per key: the length of its part's ``exact`` (0: none)
    exact: np.ndarray  #: the parts' ``exact`` (weighted: exact weights, 11-point candidates)

    def parts(self) -> list[EnvelopePart | None]:
        """Per key, its part (None where it has none). O(keys + pairs)."""
        bounds = np.concatenate([[0], np.cumsum(np.maximum(self.sizes, 0))]).tolist()
        ex = np.concatenate([[0], np.cumsum(self.exact_sizes)]).tolist()
        return [None if n < 0 else EnvelopePart(self.values[a:b], self.masses[a:b], self.levels[i],
                                                self.exact[ex[i] : ex[i + 1]])
                for i, (n, a, b) in enumerate(zip(self.sizes.tolist(), bounds[:-1], bounds[1:], strict=True))]


def pack(parts: Sequence[EnvelopePart | None], full: Sequence[bool] | None = None) -> KeyedEnvelopes:
    """The parts of a range's keys (None: a key without one) as flat arrays; with ``full``, per
    key whether its precision envelope is read (an interpolated AP): where not (11-point only),
    its 11 levels alone (no pair: what :func:`~.ap_envelope.combine` reads for the 11-point AP;
    its interpolated AP, then 0, is not read). O(keys + pairs)."""
    if full is not None:
        parts = [p if p is None or keep else EnvelopePart(p.values[:0], p.masses[:0], p.levels, p.exact)
                 for p, keep in zip(parts, full, strict=True)]
    sizes = np.array([-1 if p is None else p.values.shape[0] for p in parts], dtype=np.int64)
    have = [p for p in parts if p is not None]
    levels = np.full((len(parts), LEVELS.shape[0]), -1.0)
    for i, p in enumerate(parts):
        if p is not None:
            levels[i] = p.levels
    exact_sizes = np.array([0 if p is None else p.exact.shape[0] for p in parts], dtype=np.int64)
    return KeyedEnvelopes(sizes, np.concatenate([np.zeros(0)] + [p.values for p in have]),
                          np.concatenate([np.zeros(0)] + [p.masses for p in have]), levels, exact_sizes,
                          np.concatenate([np.zeros(0)] + [p.exact for p in have]))


def to_arrays(env: KeyedEnvelopes) -> dict[str, np.ndarray]:
    """``env`` as the named arrays of :data:`NAMES` (what Spark's summary bytes hold). O(1)."""
    return dict(zip(NAMES, (env.sizes, env.values, env.masses, env.levels, env.exact_sizes, env.exact),
                    strict=True))


def from_arrays(arrays: Mapping[str, np.ndarray], n_keys: int) -> KeyedEnvelopes | None:
    """Read back :func:`to_arrays` from ``arrays`` (None when they hold no envelope), for a range of
    ``n_keys`` keys; arrays that do not fit each other (sizes below -1, pairs that do not add up,
    levels not ``(n_keys, 11)``, a part but not all of :data:`NAMES`) are a ValueError naming
    the first mismatch. O(keys)."""
    present = [n for n in NAMES if n in arrays]
    if not present:
        return None
    if len(present) != len(NAMES):
        raise ValueError(f"keyed envelopes: expected the arrays {list(NAMES)}, got {present}")
    sizes, values, masses, levels, exact_sizes, exact = (np.asarray(arrays[n]) for n in NAMES)
    if sizes.shape != (n_keys,) or sizes.dtype.kind not in "iu" or (sizes < -1).any():
        raise ValueError(f"keyed envelopes: env_sizes must be {n_keys} integers >= -1, got shape "
                         f"{sizes.shape} of {sizes.dtype}")
    pairs = int(np.maximum(sizes, 0).sum())
    if values.shape != (pairs,) or masses.shape != (pairs,):
        raise ValueError(f"keyed envelopes: env_sizes add up to {pairs} pairs, got {values.shape[0]} values "
                         f"and {masses.shape[0]} masses")
    if levels.shape != (n_keys, LEVELS.shape[0]):
        raise ValueError(f"keyed envelopes: env_levels must have shape {(n_keys, LEVELS.shape[0])}, got "
                         f"{levels.shape}")
    if (exact_sizes.shape != (n_keys,) or exact_sizes.dtype.kind not in "iu" or (exact_sizes < 0).any()
            or exact.shape != (int(exact_sizes.sum()),)):
        raise ValueError(f"keyed envelopes: env_exact_sizes must be {n_keys} integers >= 0 adding up to the "
                         f"{exact.shape[0] if exact.ndim == 1 else exact.shape} env_exact numbers, got shape "
                         f"{exact_sizes.shape} of {exact_sizes.dtype}")
    return KeyedEnvelopes(sizes.astype(np.int64), values.astype(np.float64), masses.astype(np.float64),
                          levels.astype(np.float64), exact_sizes.astype(np.int64), exact.astype(np.float64))
