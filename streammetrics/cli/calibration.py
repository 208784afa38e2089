"""The calibration rows of ``streammetrics evaluate``: log loss, Brier score, ECE (binary and
multiclass) and the KS statistic (binary).

How the command knows the scores are probabilities: it never guesses silently. Log loss, Brier
and ECE need probabilities (binary: P(class 1) in [0, 1]; multiclass: rows summing to 1 within
scikit-learn's tolerance), so every batch is checked by the library's own validation. With
``--from-logits`` the scores are logits and the sigmoid / row softmax is taken first. Otherwise,
when a batch holds a value that is not a probability:

* rows asked for by name (``--metrics log_loss,...``) are a data error (exit 1) naming the file,
  row and value;
* rows shown by default are dropped for the whole run with a one-line note (in the table and
  in the JSON ``notes``) naming the first offending value.

They live in a MetricSet of their own beside the main one, so dropping them never touches the
other metrics. KS reads the exact sorted score buffer shared with AUROC (any scores, so it is in
the main set); it has no bounded mode, so ``--max-bytes`` drops it (default) or refuses it (named).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import Any

__all__ = ["PROBABILISTIC", "ENTRIES", "ECE_BINS", "Members", "build_probabilistic",
           "default_names", "ks_threshold"]

#: the rows that need probabilities (their own MetricSet)
PROBABILISTIC = ("log_loss", "brier", "ece")
#: uniform bins of the ECE row and of the reliability diagram (torchmetrics' default)
ECE_BINS = 15
_CM = ("binary", "multiclass")


def _unused(*_: Any, **__: Any) -> Any:  # pragma: no cover - built by build_probabilistic
    raise AssertionError("probabilistic rows are built by build_probabilistic")


def _ks(num_classes: int | None, multilabel: bool, threshold: float, average: Any,
        max_bytes: int | None = None) -> Any:
    import streammetrics as sm

    return sm.KSStatistic(max_bytes=max_bytes)  # the state of AUROC / AP with the same max_bytes


#: name -> (factory, tasks, per-class values): merged into ``evaluate.METRICS``
ENTRIES: dict[str, tuple[Any, tuple[str, ...], bool]] = {
    "log_loss": (_unused, _CM, False),
    "brier": (_unused, _CM, False),
    "ece": (_unused, _CM, False),
    "ks": (_ks, ("binary",), False),
}
#: appended to the default rows of each task
_DEFAULTS = {"binary": ["log_loss", "brier", "ece", "ks"], "multiclass": ["log_loss", "brier", "ece"],
            "multilabel": []}


def default_names(base: list[str], task: str) -> list[str]:
    """The default rows of ``task``: ``base`` plus the calibration rows.

    Parameters
    ----------
    base : list of str
        The task's default rows of the main set.
    task : {"binary", "multiclass", "multilabel"}
        The task of the run.

    Returns
    -------
    list of str
        ``base`` followed by the calibration rows of ``task`` (KS too under ``--max-bytes``:
        it shares the bins of AUROC and AP, exact while each bin holds one distinct score,
        with certified bounds after).
    """
    return [*base, *_DEFAULTS[task]]


def build_probabilistic(num_classes: int | None, names: list[str], from_logits: bool,
                        plots: bool) -> Any:
    """The MetricSet of the probabilistic rows in ``names`` (and of the reliability diagram when
    ``plots``), or None when there are none.

    Parameters
    ----------
    num_classes : int or None
        Number of classes (None: binary).
    names : list of str
        The rows of the run; those in ``PROBABILISTIC`` are built here.
    from_logits : bool
        ``--from-logits``: the scores are logits.
    plots : bool
        Whether ``--plot`` asks for the reliability diagram (members ``plot_ece`` and
        ``plot_calibration``).

    Returns
    -------
    MetricSet or None
        The probabilistic members, or None when there are none.
    """
    import streammetrics as sm

    members: dict[str, Any] = {}
    if "log_loss" in names:
        members["log_loss"] = sm.LogLoss(num_classes, from_logits=from_logits)
    if "brier" in names:
        members["brier"] = sm.BrierScore(num_classes, n_bins=ECE_BINS, from_logits=from_logits)
    if "ece" in names:
        members["ece"] = sm.CalibrationError(num_classes, n_bins=ECE_BINS, from_logits=from_logits)
    if plots:
        if "ece" not in names:
            members["plot_ece"] = sm.CalibrationError(num_classes, n_bins=ECE_BINS, from_logits=from_logits)
        members["plot_calibration"] = sm.CalibrationCurve(ECE_BINS, num_classes=num_classes,
                                                          from_logits=from_logits)
    return sm.MetricSet(**members) if members else None


class Members:
    """The main MetricSet (None when only probabilistic rows are asked for) and the probabilistic
    one seen as one mapping of metrics (what ``report.results`` and ``plots.write_plots`` read),
    with one ``update`` for both.

    Parameters
    ----------
    main : MetricSet or None
        The metrics that take any scores (None when only probabilistic rows are asked for).
    prob : MetricSet or None
        The metrics that take probabilities (from :func:`build_probabilistic`).
    explicit : list of str
        The probabilistic rows asked for by name: a batch of non-probabilities is then an error
        (otherwise those rows are dropped with a note).
    from_logits : bool
        ``--from-logits``: the scores are logits.
    notes : list of str
        Collects the one-line notes for the report.
    """

    def __init__(self, main: Any, prob: Any, explicit: list[str], from_logits: bool,
                 notes: list[str]) -> None:
        self.main = main
        self.prob = prob
        self.explicit = explicit
        self.from_logits = from_logits
        self.notes = notes

    def update(self, y: Any, s: Any, sample_weight: Any = None,
               locate: Callable[[ValueError], str] | None = None) -> None:
        """Update the main set (its errors propagate), then the probabilistic one: a batch that is
        not probabilities is an error if those rows were asked for, else drops them (noted).

        Parameters
        ----------
        y : ndarray
            Labels of the batch.
        s : ndarray
            Scores of the batch.
        sample_weight : ndarray, optional
            Weights of the batch.
        locate : callable, optional
            Turns the library's ``ValueError`` into a message naming the file and row (used in
            the note when the rows are dropped).

        Returns
        -------
        None
        """
        if self.main is not None:
            self.main.update(y, s, sample_weight=sample_weight)
        if self.prob is None:
            return
        try:
            self.prob.update(y, s, sample_weight=sample_weight)
        except ValueError as raw:
            exc = ValueError(_cli_message(str(raw)))
            if self.explicit:
                raise ValueError(f"{exc} ({', '.join(self.explicit)} take probabilities; "
                                 "--from-logits if the scores are logits)") from None
            dropped = [n for n in self.prob if not n.startswith("plot_")]
            what = ", ".join(dropped) if dropped else "the reliability diagram"
            if dropped and "plot_calibration" in self.prob:
                what += " and the reliability diagram"
            where = locate(exc) if locate else str(exc)
            self.notes.append(f"{what} skipped: the scores are not probabilities ({where}); "
                              "pass --from-logits if they are logits")
            self.prob = None

    def _sets(self) -> list[Any]:
        return [ms for ms in (self.main, self.prob) if ms is not None]

    def __iter__(self) -> Iterator[str]:
        for ms in self._sets():
            yield from ms

    def __contains__(self, name: object) -> bool:
        return any(name in list(ms) for ms in self._sets())

    def __getitem__(self, name: str) -> Any:
        for ms in self._sets():
            if name in list(ms):
                return ms[name]
        raise KeyError(name)

    @property
    def nbytes(self) -> int:
        """Bytes held by both sets' states."""
        return int(sum(ms.nbytes for ms in self._sets()))


def ks_threshold(ks: Any) -> float | None:
    """The threshold where KS is attained, None when it is undefined (its warning is already in
    the report's ``warnings``).

    Parameters
    ----------
    ks : KSStatistic
        The updated KS member.

    Returns
    -------
    float or None
        The threshold, or None when KS is undefined.
    """
    import math
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            t = float(ks.threshold())
        except ValueError:
            return None
    return t if math.isfinite(t) else None


def _cli_message(msg: str) -> str:
    """The library's message for the command line: without its Python hint ``(pass
    from_logits=True ...)`` (the CLI names its own option), and its batch row ``first invalid
    row 7`` as ``at index 7``, which the caller turns into the file's row."""
    msg = re.sub(r"\s*\(pass from_logits=True[^)]*\)", "", msg)
    return re.sub(r"first invalid row (\d+)", r"first invalid row at index \1", msg)
