"""``HingeLoss``: the streaming hinge loss of decision values, and :func:`hinge_terms`, its one
kernel (also that of :func:`streammetrics.functional.hinge_loss`).

Binary (``num_classes=None``): with y = +1 for the positive class and -1 otherwise, the loss of
a decision f is max(0, 1 - y f). Multiclass (C classes, (n, C) decisions):

* ``"crammer-singer"`` (scikit-learn's ``hinge_loss``, torchmetrics' default): max(0, 1 - (f_y -
  max_{k != y} f_k)), one value per sample;
* ``"one-vs-all"`` (torchmetrics'): per class c, max(0, 1 - s_c f_c) with s_c = +1 if y = c else
  -1; the result is one mean per class.

``squared=True`` squares each loss. The value is the weighted mean sum_i w_i loss_i / sum_i w_i;
``ignore_index`` (torchmetrics') leaves out the rows whose label equals it.

State (:class:`HingeSums`): float64 sums ``weight`` (1,) and ``loss`` (K,), K = C for one-vs-all,
else 1; they merge by addition and rescale (decay). Complexity: ``update`` O(n C), ``compute``
O(K), memory K + 1 floats.

Unlike torchmetrics, decisions are used as given: torchmetrics takes the sigmoid (binary) or row
softmax (multiclass) of any batch with a value outside [0, 1], so the two agree on decisions in
[0, 1] (or on decisions passed through that transform first). Decisions must be finite with
\\|f\\| <= 2**64 (so every sum the state holds stays finite and loads back).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from streammetrics._core.averaging import undefined_without_weight as undefined
from streammetrics._core.metric import M, Metric
from streammetrics._core.params import FLAG, IGNORE_INDEX, Param, check_param
from streammetrics._core.state import State, SummedState
from streammetrics._core.validation import drop_ignored, first_bad, score_batch
from streammetrics._counts.label_options import label_options

__all__ = ["HingeLoss", "hinge_terms"]

#: Largest |decision| an update takes: squared losses stay below 2**132, their weighted sums finite.
MAX_DECISION = 2.0**64
_TOL = 1e-9  # relative slack of the loaded-state bound (rounding of the sums)
MODES = ("crammer-singer", "one-vs-all")
_MODE = Param("choice", f"must be one of {MODES}", choices=MODES)


def hinge_terms(d: np.ndarray, target: np.ndarray, mode: str = "crammer-singer",
                squared: bool = False) -> np.ndarray:
    """The per-sample hinge losses (the module docstring's definitions).

    Parameters
    ----------
    d : numpy.ndarray
        float64 decisions: (n,) binary, or (n, C) multiclass.
    target : numpy.ndarray
        Binary: the signs (+1.0 / -1.0) of shape (n,); multiclass: class codes in [0, C).
    mode : {"crammer-singer", "one-vs-all"}
        The multiclass margin (ignored for binary).
    squared : bool
        Square each loss.

    Returns
    -------
    numpy.ndarray
        (n,) losses, or (n, C) for one-vs-all. O(n C).

    Examples
    --------
    >>> import numpy as np
    >>> hinge_terms(np.array([2.0, 0.5, -1.0]), np.array([1.0, 1.0, 1.0]))
    array([0. , 0.5, 2. ])
    >>> hinge_terms(np.array([[2.0, 0.5], [0.0, 1.0]]), np.array([0, 0]))  # Crammer-Singer
    array([0., 2.])
    """
    if d.ndim == 1:
        margin = target * d
    else:
        n, c = d.shape
        rows = np.arange(n)
        if mode == "crammer-singer":
            others = d.copy()
            others[rows, target] = -np.inf
            best = others.max(axis=1) if c > 1 else np.full(n, -np.inf)
            margin = d[rows, target] - best
        else:
            sign = np.full(d.shape, -1.0)
            sign[rows, target] = 1.0
            margin = sign * d
    losses = np.clip(1 - margin, 0, None)
    return losses * losses if squared else losses


class HingeSums(SummedState):
    """Weighted sums of the hinge loss: ``weight`` (1,) and ``loss`` (K,) (module docstring)."""

    weight_powers: Mapping[str, Any] = {}
    # float sums: a window rebuilds from its rows rather than subtract (no rounding residue)
    subtract = State.subtract  # type: ignore[assignment]

    def __init__(self, num_classes: int | None, mode: str, squared: bool,
                 ignore_index: int | None = None) -> None:
        self.num_classes = num_classes
        self.mode = mode
        self.squared = bool(squared)
        self.ignore_index = ignore_index
        k = int(num_classes) if num_classes is not None and mode == "one-vs-all" else 1
        self._arrays = {"weight": np.zeros(1), "loss": np.zeros(k)}

    def key(self) -> tuple[Any, ...]:
        base = (self.num_classes, self.mode, self.squared)
        return base if self.ignore_index is None else (*base, ("ignore_index", self.ignore_index))

    def prepare(self, y_true: Any, y_score: Any, sample_weight: Any = None) -> Any:
        task = "binary" if self.num_classes is None else "multiclass"
        b = score_batch(y_true, y_score, sample_weight, task, self.num_classes or 1, self.ignore_index)
        d = b.s.astype(np.float64)
        bad = ~(np.abs(d) <= MAX_DECISION)
        if bad.any():
            idx = first_bad(bad)
            raise ValueError(f"y_score: decisions must be finite with |value| <= 2**64; first invalid "
                             f"value {float(d[idx])!r} at index {idx}")
        y, d, w = drop_ignored(np.asarray(b.y), d, b.w, self.ignore_index)  # (checked first, as given)
        if d.shape[0] == 0:
            return None
        target = np.where(y.astype(bool), 1.0, -1.0) if task == "binary" else y.astype(np.intp)
        losses = hinge_terms(d, target, self.mode, self.squared)
        if w is None:
            return {"weight": np.array([float(d.shape[0])]),
                    "loss": np.atleast_1d(losses.sum(axis=0))}
        weighted = losses * (w[:, None] if losses.ndim == 2 else w)
        return {"weight": np.array([float(w.sum())]), "loss": np.atleast_1d(weighted.sum(axis=0))}

    def apply(self, delta: Any) -> None:
        if delta is None:
            return
        for name, inc in delta.items():
            self._arrays[name] += inc

    def _check_loaded(self, arrays: Mapping[str, np.ndarray]) -> None:
        # every sample's loss is at most (1 + 2 MAX_DECISION) (squared: its square), so each sum
        # is at most that times the total weight (and the mean stays finite)
        top = 1.0 + 2.0 * MAX_DECISION
        bound = arrays["weight"][0] * (top * top if self.squared else top) * (1 + _TOL)
        bad = arrays["loss"] > bound
        if bad.any():
            i = int(np.argmax(bad))
            raise ValueError(f"state: array 'loss' holds {float(arrays['loss'][i])!r} at index {i}, more "
                             f"than the total weight {float(arrays['weight'][0])!r} allows (largest loss "
                             "per sample x weight)")

    def sample_count(self) -> float:
        """Total weight of the samples folded in. O(1)."""
        return float(self._arrays["weight"][0])

    def totals(self) -> tuple[float, np.ndarray]:
        """(sum w, per-output sums of w loss (a copy)). O(K)."""
        return float(self._arrays["weight"][0]), self._arrays["loss"].copy()


class HingeLoss(Metric["float | np.ndarray"]):
    """Streaming hinge loss, equal to ``sklearn.metrics.hinge_loss`` (binary and Crammer &
    Singer's multiclass) and to torchmetrics' ``BinaryHingeLoss`` / ``MulticlassHingeLoss``
    (``squared``, ``multiclass_mode``) on decisions in [0, 1] (module docstring).

    Parameters
    ----------
    num_classes : int or None
        None: binary (``y_score`` (n,) decisions, the positive class +1); C: multiclass
        (``y_score`` (n, C), column c the decision for class c).
    squared : bool, default False
        Square each sample's loss (torchmetrics' ``squared``).
    multiclass_mode : {"crammer-singer", "one-vs-all"}, default "crammer-singer"
        Multiclass margin; ``"one-vs-all"`` makes ``compute`` return C per-class means (a
        binary metric has one margin, y f, and ignores it).
    classes : sequence, optional
        The labels in class order (scikit-learn's ``labels=`` of ``hinge_loss``: column i is
        ``classes[i]``); two classes without ``num_classes`` are binary, the second positive.
    pos_label : label, optional
        Binary: the positive class (+1); every other label is -1.
    ignore_index : int, optional
        Rows whose ``y_true`` equals it are skipped (torchmetrics' ``ignore_index``; their
        decisions are still checked). With ``classes``, a label outside them and outside [0, C).

    Notes
    -----
    ``update`` O(n C), ``compute`` O(C), memory C + 1 floats (1 + 1 unless one-vs-all). An empty
    state (total weight 0) is nan (one-vs-all: C nans) with an ``UndefinedMetricWarning``.

    Examples
    --------
    >>> m = HingeLoss(classes=[-1, 1])
    >>> m.update([-1, 1, 1], [-2.2, 1.3, 0.5]).compute()
    0.16666666666666666
    """

    def __init__(self, num_classes: int | None = None, *, squared: bool = False,
                 multiclass_mode: str = "crammer-singer", classes: Any = None,
                 pos_label: Any = None, ignore_index: int | None = None) -> None:
        super().__init__()
        ignore_index = check_param(ignore_index, "ignore_index", IGNORE_INDEX)
        self.ignore_index = None if ignore_index is None else int(ignore_index)
        self._labels = label_options(num_classes, classes=classes, pos_label=pos_label,
                                     ignore_index=self.ignore_index)
        self.num_classes = self._labels.num_classes
        self.squared = check_param(squared, "squared", FLAG)
        self.multiclass_mode = check_param(multiclass_mode, "multiclass_mode", _MODE)
        if self.num_classes is not None and self.num_classes < 2:
            raise ValueError(f"num_classes: a multiclass hinge loss needs at least 2 classes, "
                             f"got {self.num_classes!r}")
        self._state: HingeSums = HingeSums(self.num_classes, self.multiclass_mode, self.squared,
                                           self.ignore_index)

    def _config(self) -> dict[str, Any]:
        config = {"num_classes": self.num_classes, "squared": self.squared,
                  "multiclass_mode": self.multiclass_mode, **self._labels.config()}
        if self.ignore_index is not None:  # (configs and saved files without it stay as they were)
            config["ignore_index"] = self.ignore_index
        return config

    def update(self: M, y_true: ArrayLike, y_score: ArrayLike, *,
               sample_weight: ArrayLike | None = None) -> M:
        """Fold in one batch: labels and decision values.

        Binary: ``y_true`` 0/1 (or the labels of ``classes``/``pos_label``) of shape (n,),
        ``y_score`` (n,); multiclass: ``y_true`` in [0, C) (or of ``classes``), ``y_score``
        (n, C). Decisions finite with \\|f\\| <= 2**64. Atomic: a rejected batch changes nothing.
        O(n C). Returns ``self``.
        """
        return self._update_state(y_true, y_score, sample_weight)

    def _compute(self) -> float | np.ndarray:
        w, loss = self._state.totals()
        if w <= 0:
            nan = undefined("HingeLoss")
            return np.full(loss.shape[0], nan) if self._one_vs_all else nan
        return loss / w if self._one_vs_all else float(loss[0] / w)

    @property
    def _one_vs_all(self) -> bool:
        return self.num_classes is not None and self.multiclass_mode == "one-vs-all"

