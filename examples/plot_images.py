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


def main(out: str = "docs/images") -> list[str]:
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
        fig.savefig(path, dpi=72)
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
    return written


if __name__ == "__main__":
    for p in main(*sys.argv[1:]):
        print(p, os.path.getsize(p), "bytes")
