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


def close(a: float, b: float) -> bool:
    """Equal to ``REL`` relative (absolute below 1), nan equal to nan."""
    if np.isnan(a) and np.isnan(b):
        return True
    return abs(a - b) <= REL * max(1.0, abs(b))


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
