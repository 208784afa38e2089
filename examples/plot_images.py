"""Draw the example images of docs/plots.md with streammetrics.plot (synthetic data, fixed seed).

    PYTHONPATH=. python examples/plot_images.py [OUTPUT_DIR]   # default: docs/images
"""

from __future__ import annotations

import os
import sys
import warnings

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

import streammetrics as sm  # noqa: E402
from streammetrics.calibration import CalibrationCurve, GainsCurve  # noqa: E402
from streammetrics.plot import plot_curves  # noqa: E402
from streammetrics.ranking.det import DETCurve  # noqa: E402


def main(out: str = "docs/images", cli: bool = True) -> list[str]:
    os.makedirs(out, exist_ok=True)
    rng = np.random.default_rng(0)
    n = 20_000
    y = rng.integers(0, 2, n)
    s = 1.0 / (1.0 + np.exp(-(rng.normal(size=n) + 1.3 * y)))
    k = 3
    yc = rng.integers(0, k, n)
    z = rng.normal(size=(n, k))
    z[np.arange(n), yc] += 1.2
    pc = np.exp(z) / np.exp(z).sum(axis=1, keepdims=True)
    names = ["cat", "dog", "eel"]
    written = []

    def save(disp: object, name: str) -> None:
        fig = disp.figure_  # type: ignore[attr-defined]
        fig.set_size_inches(4.6, 4.2)
        fig.tight_layout()
        path = os.path.join(out, name)
        fig.savefig(path, dpi=72, metadata={"Software": None})  # no version stamp: same bytes each build
        plt.close(fig)
        written.append(path)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        exact = sm.ROCCurve().update(y, s).compute()
        bounded = sm.ROCCurve(thresholds=12).update(y, s).compute()
    save(plot_curves({"exact": exact, "12 bins": bounded}), "roc_exact_and_bounded.png")
    save(sm.PRCurve(classes=names).update(np.array(names)[yc], pc).plot(), "pr_multiclass.png")
    save(CalibrationCurve(n_bins=10).update(y, s).plot(), "reliability.png")
    save(GainsCurve().update(y, s).plot(), "gains.png")
    save(sm.ConfusionMatrix(classes=names).update(np.array(names)[yc], np.array(names)[pc.argmax(1)]).plot(),
         "confusion_matrix.png")
    save(sm.ClassificationReport(k).update(yc, pc.argmax(1)).plot(), "report.png")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        det_exact = DETCurve().update(y, s).compute()
        det_bounded = DETCurve(thresholds=12).update(y, s).compute()
    save(plot_curves({"exact": det_exact, "12 bins": det_bounded}), "det.png")
    yl = (pc > rng.random((n, k)) * 0.9).astype(int)
    predl = np.where(rng.random((n, k)) < 0.8, yl, 1 - yl)
    disp = sm.ConfusionMatrix(k, multilabel=True, classes=names).update(yl, predl).plot()
    disp.figure_.set_size_inches(7.5, 2.6)  # type: ignore[attr-defined]
    disp.figure_.tight_layout()  # type: ignore[attr-defined]
    path = os.path.join(out, "confusion_multilabel.png")
    disp.figure_.savefig(path, dpi=72, metadata={"Software": None})  # type: ignore[attr-defined]
    plt.close(disp.figure_)  # type: ignore[attr-defined]
    written.append(path)
    if cli:
        written += cli_pr_binned(out)
    return written


def cli_pr_binned(out: str) -> list[str]:
    """``pr_binned.png`` of docs/cli.md: the command line's own ``--plot`` on the
    1M-row file of docs/cli.md with ``--max-bytes 4k`` (needs pyarrow, the ``cli`` extra; without
    it the committed image is kept)."""
    import contextlib
    import io
    import shutil
    import tempfile

    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:  # pragma: no cover - the docs CI installs the cli extra
        print("plot_images: pyarrow missing, docs/images/pr_binned.png not redrawn", file=sys.stderr)
        return []
    from streammetrics.cli.evaluate import main as evaluate

    rng = np.random.default_rng(0)
    n = 1_000_000
    y = (rng.random(n) < 0.3).astype(np.int8)
    p = 1 / (1 + np.exp(-(1.3 * rng.normal(size=n) + 1.6 * y - 1.0)))
    with tempfile.TemporaryDirectory() as tmp:
        data = os.path.join(tmp, "scores.parquet")
        pq.write_table(pa.table({"label": y, "score": p}), data, row_group_size=1_000_000)
        args = [data, "--label", "label", "--score", "score", "--max-bytes", "4k", "--metrics",
                "average_precision", "--plot", os.path.join(tmp, "plots"),
                "--json", os.path.join(tmp, "r.json")]
        with contextlib.redirect_stdout(io.StringIO()):  # the command line's table: not the build's log
            evaluate(args)
        path = os.path.join(out, "pr_binned.png")
        shutil.copyfile(os.path.join(tmp, "plots", "pr.png"), path)
    return [path]


if __name__ == "__main__":
    for p in main(*sys.argv[1:]):
        print(p, os.path.getsize(p), "bytes")
