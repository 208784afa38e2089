"""Regression metrics (issue #30): streaming errors over continuous targets of shape (n,) or
(n, k), with scikit-learn's ``multioutput`` readout (definitions: docs/definitions/regression.md).

Every class takes ``update(y_true, y_pred, *, sample_weight=None)`` and is validated by one
step, :func:`streammetrics.regression._base.regression_batch`.
"""

__all__: list[str] = []

# -- whole-set metrics (regwhole) --
from .quantiles import D2AbsoluteErrorScore, D2PinballScore, MedianAbsoluteError  # noqa: E402

__all__ += ["D2AbsoluteErrorScore", "D2PinballScore", "MedianAbsoluteError"]
