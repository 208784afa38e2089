"""``streammetrics drift REFERENCE CURRENT --score COL [--by COL] [--json PATH|-]``.

Score drift of prediction files without labels: the scores of CURRENT against those of
REFERENCE (CSV, Parquet or JSON Lines, as ``streammetrics evaluate`` reads them), as
:class:`streammetrics.monitoring.Drift` defines them: PSI, Jensen-Shannon distance, KS and
Wasserstein-1 (docs/definitions/monitoring.md). ``--score`` names one column (one score per
row) or several, comma-separated (one score per class: per-class drift and the drift of the
predicted-class shares). ``--by`` gives one row per segment of CURRENT, each against the same
segment of REFERENCE when REFERENCE has that column (a segment REFERENCE lacks: against all
of it, and said so), else against all of REFERENCE.

The reference is read into memory (its quantiles are needed); the current file is streamed.
Exit status: 0 success, 1 data error, 2 usage error, 130 interrupted; errors are one line.
"""

from __future__ import annotations

import argparse
import json
import math
import warnings
from collections.abc import Iterator
from typing import Any

import numpy as np

from .commands import command, doc_paragraph, runner
from .errors import InputError
from .options import batch_size, parse_size, positive_int

__all__ = ["add_parser", "run"]

ALL = "all"  # the row of every current score (segments are rows of their own)


def _arguments(p: argparse.ArgumentParser) -> None:
    """The arguments of ``drift``."""
    p.add_argument("reference", help="reference predictions (CSV, Parquet, JSON Lines)")
    p.add_argument("current", help="current predictions, same format rules")
    p.add_argument("--score", required=True, metavar="COL[,COL...]",
                   help="score column, or one column per class, comma-separated")
    p.add_argument("--by", metavar="COL", default=None, help="one row per segment of this column")
    p.add_argument("--weight", metavar="COL", default=None, help="weight column of CURRENT")
    p.add_argument("--bins", type=positive_int, default=10, metavar="N",
                   help="quantile bins of PSI and JS (default 10)")
    p.add_argument("--max-bytes", type=parse_size, default=None, metavar="SIZE",
                   help="bounded memory per segment (e.g. 64k): KS and Wasserstein certified intervals")
    p.add_argument("--batch-size", type=batch_size, default=65536, metavar="ROWS",
                   help="rows per batch (default 65536)")
    p.add_argument("--json", metavar="PATH", default=None,
                   help="write the results as JSON to PATH ('-' for stdout)")
    p.add_argument("--digits", type=int, choices=range(0, 18), default=4, metavar="0..17",
                   help="decimals printed (default 4)")


add_parser = command("drift", arguments=_arguments, description=doc_paragraph(__doc__, 1),
                     help="score drift of a prediction file against a reference file, without labels")


def _columns(args: argparse.Namespace) -> list[str]:
    cols = [c.strip() for c in args.score.split(",")]
    if not all(cols) or len(set(cols)) != len(cols):
        raise InputError(f"--score: expected one column or distinct comma-separated columns, "
                         f"got {args.score!r}", 2)
    return cols


def _floats(arr: Any, path: str, column: str, offset: int) -> np.ndarray:
    """A numeric arrow column as float64; a missing or non-numeric value is a data error
    naming the file, the row (1-based, as the file's data rows) and the column."""
    import pyarrow as pa

    if not (pa.types.is_floating(arr.type) or pa.types.is_integer(arr.type)):
        raise InputError(f"{path}: column {column!r} is not numeric (type {arr.type})", 1)
    if arr.null_count:
        i = next(i for i, v in enumerate(arr.is_valid().to_pylist()) if not v)
        raise InputError(f"{path}: row {offset + i + 1}: column {column!r}: value is missing", 1)
    return np.asarray(arr.to_numpy(zero_copy_only=False), dtype=np.float64)


def _batches(path: str, scores: list[str], extra: list[str],
             size: int) -> Iterator[tuple[np.ndarray, dict[str, Any]]]:
    """(scores (n,) or (n, C), {column: numpy values}) per batch of ``path``."""
    from .readers import open_source

    src = open_source(path, [*scores, *extra], size, float_columns=scores)
    offset = 0
    for batch in src.batches:
        cols = [_floats(batch.column(c), path, c, offset) for c in scores]
        s = cols[0].astype(np.float64) if len(cols) == 1 else np.stack(cols, axis=1).astype(np.float64)
        bad = ~np.isfinite(s)
        if bad.any():
            i = int(np.argmax(bad.reshape(s.shape[0], -1).any(axis=1)))
            raise InputError(f"{path}: row {offset + i + 1}: a score is not finite (NaN or inf)", 1)
        other = {c: batch.column(c).to_numpy(zero_copy_only=False) for c in extra}
        yield s, other
        offset += batch.num_rows


def _keys(values: np.ndarray) -> np.ndarray:
    return np.array([ALL if v is None else str(v) for v in values.tolist()], dtype=object)


def _run(args: argparse.Namespace) -> int:
    try:
        import pyarrow  # noqa: F401
    except ImportError:
        raise InputError("drift needs pyarrow: pip install 'streammetrics[cli]'", 2) from None
    from streammetrics.monitoring import Drift

    scores = _columns(args)
    if args.json is not None and not args.json.strip():
        raise InputError("--json: an empty path", 2)
    from .readers import open_source

    ref_has_by = False
    if args.by is not None:
        ref_has_by = args.by in open_source(args.reference, scores, 1, float_columns=scores).columns
    ref_parts: list[np.ndarray] = []
    ref_keys: list[np.ndarray] = []
    for s, other in _batches(args.reference, scores, [args.by] if ref_has_by else [], args.batch_size):
        ref_parts.append(s)
        if ref_has_by:
            ref_keys.append(_keys(other[args.by]))
    if not ref_parts or sum(p.shape[0] for p in ref_parts) == 0:
        raise InputError(f"{args.reference}: no rows", 1)
    reference = np.concatenate(ref_parts)

    def make(ref: Any) -> Drift:
        try:
            return Drift(ref, bins=args.bins, max_bytes=args.max_bytes)
        except ValueError as exc:
            raise InputError(str(exc), 2 if "max_bytes" in str(exc) or "bins" in str(exc) else 1) from None

    whole = make(reference)
    kept = whole.reference_config()
    segments: dict[str, Drift] = {}
    by_ref: dict[str, np.ndarray] = {}
    if ref_has_by:
        keys = np.concatenate(ref_keys)
        for k in dict.fromkeys(keys.tolist()):
            by_ref[k] = reference[keys == k]
    extra = [c for c in (args.by, args.weight) if c is not None]
    n_current = 0
    against_all: set[str] = set()  # segments of CURRENT that REFERENCE lacks: against all of it
    for s, other in _batches(args.current, scores, extra, args.batch_size):
        w = None
        if args.weight is not None:
            w = np.asarray(other[args.weight], dtype=np.float64)
        try:
            whole.update(s, sample_weight=w)
            if args.by is not None:
                keys = _keys(other[args.by])
                for k in dict.fromkeys(keys.tolist()):
                    if k not in segments:
                        own = ref_has_by and k in by_ref
                        segments[k] = make(by_ref[k] if own else kept)
                        if ref_has_by and not own:
                            against_all.add(k)
                    rows = keys == k
                    segments[k].update(s[rows], sample_weight=None if w is None else w[rows])
        except ValueError as exc:
            raise InputError(f"{args.current}: {exc}", 1) from None
        n_current += s.shape[0]
    results = {ALL: whole, **{k: segments[k] for k in sorted(segments)}}
    doc = _document(args, reference.shape[0], n_current, results)
    for name, entry in doc["segments"].items():
        entry["reference"] = "segment" if ref_has_by and name != ALL and name not in against_all else "all"
    if args.json is not None:
        text = json.dumps(doc, indent=2, allow_nan=True)
        if args.json == "-":
            print(text)
            return 0
        try:
            with open(args.json, "w") as fh:
                fh.write(text + "\n")
        except OSError as exc:
            raise InputError(f"--json: cannot write {args.json}: {exc.strerror}", 2) from None
    print(_table(doc, args.digits))
    return 0


run = runner("drift", _run)


def _plain(v: Any) -> Any:
    if isinstance(v, np.ndarray):
        return [_plain(x) for x in v.tolist()]
    if isinstance(v, float) and not math.isfinite(v):
        return None if math.isnan(v) else v
    return float(v) if isinstance(v, (float, np.floating)) else v


def _document(args: argparse.Namespace, n_ref: int, n_cur: int, results: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {"reference": args.reference, "current": args.current, "score": _columns(args),
                           "bins": args.bins, "max_bytes": args.max_bytes, "n_reference": n_ref,
                           "n_current": n_cur, "by": args.by, "segments": {}}
    for name, d in results.items():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            value, bounds = d.compute(), d.bounds()
        entry: dict[str, Any] = {"n": d._state.sample_count(),  # noqa: SLF001 -- the state's own count
                                 "nbytes": d.nbytes}
        entry.update({k: _plain(v) for k, v in value.items()})
        if not d.is_exact:
            entry["bounds"] = {k: [_plain(lo), _plain(hi)] for k, (lo, hi) in bounds.items()
                               if k in ("ks", "wasserstein")}
        out["segments"][name] = entry
    return out


def _fmt(v: Any, digits: int) -> str:
    return "nan" if v is None else f"{v:.{digits}f}"


def _table(doc: dict[str, Any], digits: int) -> str:
    stats = ("psi", "js", "ks", "wasserstein")
    multi = len(doc["score"]) > 1
    head = ["segment", *([] if not multi else ["class"]), "n", *stats]
    rows: list[list[str]] = []
    for name, e in doc["segments"].items():
        n = f"{e['n']:g}"
        if not multi:
            rows.append([name, n, *(_fmt(e[k], digits) for k in stats)])
            continue
        for c, col in enumerate(doc["score"]):
            rows.append([name, col, n, *(_fmt(e[k][c], digits) for k in stats)])
    widths = [max(len(r[i]) for r in [head, *rows]) for i in range(len(head))]
    lines = ["  ".join(x.rjust(w) if i else x.ljust(w)
                       for i, (x, w) in enumerate(zip(r, widths, strict=True))) for r in [head, *rows]]
    if multi:
        lines.append("")
        lines += [f"{name}: class shares psi {_fmt(e['class_psi'], digits)}, "
                  f"chi2 {_fmt(e['class_chi2'], digits)}" for name, e in doc["segments"].items()]
    lacking = [name for name, e in doc["segments"].items() if name != ALL and e["reference"] == "all"]
    if doc["by"] is not None and lacking and len(lacking) < len(doc["segments"]) - 1:
        lines.append("")
        lines.append("not in the reference, compared with all of it: " + ", ".join(lacking))
    bounded = [(name, e["bounds"]) for name, e in doc["segments"].items() if "bounds" in e]
    if bounded:
        lines.append("")
        for name, b in bounded:
            parts = []
            for k in ("ks", "wasserstein"):
                lo, hi = b[k]
                if multi:
                    parts.append(f"{k} [" + ", ".join(f"{_fmt(a, digits)}..{_fmt(z, digits)}"
                                                      for a, z in zip(lo, hi, strict=True)) + "]")
                else:
                    parts.append(f"{k} in [{_fmt(lo, digits)}, {_fmt(hi, digits)}]")
            lines.append(f"{name}: certified " + "; ".join(parts))
    return "\n".join(lines)


