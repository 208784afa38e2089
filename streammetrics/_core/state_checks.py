"""Semantic invariants of loaded (untrusted) states, one function per state layout.

Shapes, dtypes, finiteness, signs and the ``MAX_SUM`` bound are checked generically (see
:mod:`streammetrics._core.load_checks`); these functions check the relations between the arrays
that any stream of valid updates keeps, so that a crafted file cannot load into a state whose
``compute`` or ``interval`` is absurd (a hit rate of 10, an infinite effective sample size).
Each raises ``ValueError`` naming the array, the rule and the first offending value.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from .load_checks import check_weight_pair

_SLACK = 1 + 1e-9  # rounding of sums accumulated in different orders


def check_part_of(part: float | np.ndarray, whole: float | np.ndarray, what: str) -> None:
    """``part <= whole`` element-wise (up to rounding): e.g. hits within the samples seen."""
    p = np.asarray(part, dtype=np.float64)
    w = np.asarray(whole, dtype=np.float64)
    bad = p > w * _SLACK
    if bad.any():
        i = int(np.argmax(bad.reshape(-1)))
        raise ValueError(
            f"state: {what}: {float(np.broadcast_to(p, bad.shape).reshape(-1)[i])!r} exceeds its "
            f"total {float(np.broadcast_to(w, bad.shape).reshape(-1)[i])!r}"
        )


def check_hit_counts(hits: np.ndarray) -> None:
    """Top-k ``hits`` = (weight of hits, total weight, total squared weight)."""
    check_part_of(hits[0], hits[1], "array 'hits' (weight of hits vs total weight)")
    check_weight_pair(hits[1], hits[2], "array 'hits' (total weight vs squared weights)")


def check_confusion_arrays(arrays: Mapping[str, np.ndarray], task: str,
                           ignore_index: int | None = None) -> None:
    """Confusion ``counts`` with their ``counts_w2`` cell by cell; multilabel ``rows`` =
    (exact-match weight, total weight, total squared weight) consistent with the counts: each
    label counts every row once (at most once with ``ignore_index``, which skips single cells)."""
    check_weight_pair(arrays["counts"], arrays["counts_w2"], "arrays 'counts'/'counts_w2'")
    if task == "multilabel":
        rows = arrays["rows"]
        check_part_of(rows[0], rows[1], "array 'rows' (exact matches vs rows)")
        check_weight_pair(rows[1], rows[2], "array 'rows' (total weight vs squared weights)")
        per_label = arrays["counts"].reshape(arrays["counts"].shape[0], -1).sum(axis=1)
        slack = 1e-9 * np.maximum(per_label, rows[1]) + 1e-300
        ok = per_label <= rows[1] + slack
        if ignore_index is None:
            ok &= per_label >= rows[1] - slack
        if per_label.size and not ok.all():
            i = int(np.argmax(~ok))
            raise ValueError(
                f"state: array 'counts' of label {i} sums to {float(per_label[i])!r}, but 'rows' "
                f"says {float(rows[1])!r} rows were counted"
            )
