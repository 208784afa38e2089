"""Small helpers several test modules share: calls without their warnings, a relative
comparison, scipy's KS statistic, the header of a saved file, TREC files and a CLI run."""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Any

import numpy as np

REL = 1e-12


def quiet(fn: Any, *args: Any, **kwargs: Any) -> Any:
    """``fn(*args, **kwargs)`` without its warnings (undefined values, absent classes)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*args, **kwargs)


def quiet_compute(metric: Any) -> Any:
    """``metric.compute()`` without its warnings."""
    return quiet(metric.compute)


def close(a: float, b: float, rel: float = REL) -> bool:
    """Equal to ``rel`` relative (absolute below 1), nan equal to nan."""
    if np.isnan(a) and np.isnan(b):
        return True
    return abs(a - b) <= rel * max(1.0, abs(b))


def value_array(metric: Any) -> np.ndarray:
    """A metric's value as one float array, without warnings (a calibration curve: its
    ``prob_true``, ``prob_pred`` and ``counts`` end to end)."""
    import streammetrics as sm

    v = quiet(metric.compute)
    if isinstance(v, sm.CalibrationCurveResult):
        return np.concatenate([v.prob_true, v.prob_pred, v.counts])
    return np.atleast_1d(np.asarray(v, dtype=float))


def streamed_rows(make: Any, y: np.ndarray, p: np.ndarray, w: Any, rng: np.random.Generator) -> Any:
    """``make()`` fed the rows in up to 4 batches, each sent to one of 1-3 workers at random, the
    workers merged, saved and loaded."""
    import streammetrics as sm

    n = y.shape[0]
    cuts = sorted(set(rng.integers(1, max(n, 2), 3).tolist()) - {n})
    parts = [make() for _ in range(int(rng.integers(1, 4)))]
    for a, b in zip([0, *cuts], [*cuts, n], strict=True):
        parts[int(rng.integers(0, len(parts)))].update(y[a:b], p[a:b], sample_weight=None if w is None else w[a:b])
    return sm.loads(sm.dumps(parts[0].merge(*parts[1:])))


def ks_stat(a: np.ndarray, b: np.ndarray) -> float:
    """``scipy.stats.ks_2samp(a, b).statistic`` (its p-value's warnings silenced)."""
    import scipy.stats as ss

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return float(ss.ks_2samp(a, b).statistic)


def header_of(data: bytes) -> tuple[dict, bytes]:
    """The JSON header of a saved state (``streammetrics.dumps``) and the bytes after it."""
    from streammetrics._core.persistence import MAGIC

    body = data[len(MAGIC) + 32:]
    n = int.from_bytes(body[:8], "little")
    return json.loads(body[8:8 + n]), body[8 + n:]


def trec_files(tmp_path: Path, qrels: dict, run: dict) -> tuple[str, str]:
    """``qrels`` ({query: {doc: grade}}) and ``run`` ({query: {doc: score}}, ranked in order) as
    TREC files in ``tmp_path``; their paths."""
    qp, rp = tmp_path / "qrels", tmp_path / "run"
    qp.write_text("".join(f"{q} 0 {d} {g}\n" for q, docs in qrels.items() for d, g in docs.items()))
    rp.write_text("".join(f"{q} Q0 {d} {i + 1} {s!r} r\n" for q, docs in run.items()
                          for i, (d, s) in enumerate(docs.items())))  # fmt: skip
    return str(qp), str(rp)


def run_json(capsys: Any, *argv: str) -> dict:
    """``streammetrics evaluate *argv --json -``: its exit code 0 and its JSON output."""
    from streammetrics.__main__ import main

    rc = main(["evaluate", *argv, "--json", "-"])
    out = capsys.readouterr()
    assert rc == 0, out.err
    return json.loads(out.out)
