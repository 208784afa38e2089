"""PyTorch Lightning: a callback that feeds accumulators from validation/test steps and logs them.

Install the extra: ``pip install 'streammetrics[lightning]'``. Importing this module imports
``lightning`` (``import streammetrics`` never does).

Usage::

    import streammetrics as sm
    from streammetrics.lightning import StreamMetricsCallback

    class Model(lightning.LightningModule):
        def validation_step(self, batch, batch_idx):
            x, y = batch
            return {"y_true": y, "y_score": torch.sigmoid(self(x)).squeeze(-1)}

    callback = StreamMetricsCallback(sm.MetricSet(auroc=sm.AUROC(), ap=sm.AveragePrecision()))
    lightning.Trainer(callbacks=[callback]).fit(Model(), train_loader, val_loader)
    # logged per epoch as "val/auroc", "val/ap"; callback.results["validate"] holds the last values

What happens each epoch, per stage (``"validate"``, ``"test"``):

* at the start, the stage's accumulators are reset;
* after every batch, ``y_true`` / ``y_score`` (and ``sample_weight`` if given) are read from the
  step's output (a mapping, keys configurable) or by ``extract(outputs, batch)``, the
  ``DistributedSampler``'s padding duplicates are trimmed off (:class:`streammetrics.torch.PaddingFilter`:
  with ``drop_last=False`` the sampler repeats up to ``world_size - 1`` samples so that every rank
  gets the same count; they would be counted twice) and the batch is folded in;
* at the end, on several ranks the states are merged with :func:`streammetrics.torch.sync`
  (every rank then computes from the global state), the values are computed and their scalars logged
  with ``LightningModule.log_dict`` (the same value on every rank, so no further reduction).

Complexity: the accumulators' own ``update`` per batch; one ``sync`` per epoch and stage.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import lightning.pytorch as pl
import torch.distributed as dist

from streammetrics._core.params import Param, check_param, nonempty_param
from streammetrics._engines.callbacks import as_metric_set, scalar_values

from .torch import PaddingFilter, sync

__all__ = ["StreamMetricsCallback"]

_STAGES = ("validate", "test")
_DEFAULT_PREFIX = {"validate": "val/", "test": "test/"}
#: ``stages``: a non-empty sequence of these.
_STAGES_RULE = f"expected some of {list(_STAGES)}"
_STAGE = Param("choice", _STAGES_RULE, choices=_STAGES)


class StreamMetricsCallback(pl.Callback):
    """Feed streammetrics accumulators from ``validation_step`` / ``test_step`` outputs.

    Parameters
    ----------
    metrics : MetricSet, Metric or mapping of name -> Metric
        The accumulators (one independent copy is kept per stage).
    stages : sequence of {"validate", "test"}
        Which loops to evaluate.
    y_true_key, y_score_key, weight_key : str
        Keys of the step output mapping (``weight_key=None``: unweighted).
    extract : callable, optional
        ``extract(outputs, batch) -> (y_true, y_score)`` or ``(y_true, y_score, sample_weight)``,
        instead of reading keys (e.g. when the step returns a tuple or nothing).
    prefix : mapping of stage -> str, optional
        Prefix of the logged names (default ``"val/"`` and ``"test/"``).
    log : bool
        Log the scalar values through ``LightningModule.log_dict`` (``prog_bar``/``logger`` as
        ``log_kwargs`` say).
    log_kwargs : mapping, optional
        Passed to ``log_dict`` (e.g. ``{"prog_bar": True}``).

    Attributes
    ----------
    results : dict
        ``{stage: values}``: the last computed values per stage (the full ``compute()`` result,
        arrays and curves included).
    metrics : dict
        ``{stage: MetricSet}``: the live accumulators.

    Examples
    --------
    >>> import streammetrics as sm
    >>> from streammetrics.lightning import StreamMetricsCallback
    >>> cb = StreamMetricsCallback({"auroc": sm.AUROC()}, stages=["validate"])
    >>> sorted(cb.metrics)
    ['validate']
    """

    def __init__(
        self,
        metrics: Any,
        *,
        stages: Sequence[str] = _STAGES,
        y_true_key: str = "y_true",
        y_score_key: str = "y_score",
        weight_key: str | None = None,
        extract: Callable[[Any, Any], Sequence[Any]] | None = None,
        prefix: Mapping[str, str] | None = None,
        log: bool = True,
        log_kwargs: Mapping[str, Any] | None = None,
    ) -> None:
        super().__init__()
        template = as_metric_set(metrics)
        stages = [check_param(s, "stages", _STAGE) for s in nonempty_param(stages, "stages", _STAGES_RULE)]
        self.metrics = {s: template.copy().reset() for s in stages}
        self.results: dict[str, Any] = {}
        self.keys = (y_true_key, y_score_key, weight_key)
        self.extract = extract
        self.prefix = {**_DEFAULT_PREFIX, **dict(prefix or {})}
        self.log = log
        self.log_kwargs = dict(log_kwargs or {})
        self._filters: dict[int, PaddingFilter | None] = {}

    # -- per stage -------------------------------------------------------------------------------
    def _start(self, trainer: Any, stage: str) -> None:
        if stage not in self.metrics:
            return
        self.metrics[stage].reset()
        self._filters = {}
        loaders = trainer.val_dataloaders if stage == "validate" else trainer.test_dataloaders
        if loaders is None:
            return
        for i, loader in enumerate(loaders if isinstance(loaders, Sequence) else [loaders]):
            sampler = getattr(loader, "sampler", None)
            self._filters[i] = PaddingFilter(sampler) if _is_distributed(sampler) else None

    def _batch(self, stage: str, outputs: Any, batch: Any, dataloader_idx: int) -> None:
        if stage not in self.metrics:
            return
        if self.extract is not None:
            parts = tuple(self.extract(outputs, batch))
        else:
            if not isinstance(outputs, Mapping):
                raise ValueError(
                    f"StreamMetricsCallback: the {stage} step returned {type(outputs).__name__}; "
                    f"return a mapping with {self.keys[0]!r} and {self.keys[1]!r} or pass extract="
                )
            parts = tuple(outputs[k] for k in self.keys if k is not None)
        keep = self._filters.get(dataloader_idx)
        if keep is not None:
            trimmed = keep(*parts)
            parts = trimmed if isinstance(trimmed, tuple) else (trimmed,)
        if len(parts[0]) == 0:
            return
        weight = parts[2] if len(parts) > 2 else None
        self.metrics[stage].update(parts[0], parts[1], sample_weight=weight)

    def _end(self, trainer: Any, pl_module: Any, stage: str) -> None:
        if stage not in self.metrics:
            return
        ms = self.metrics[stage]
        if dist.is_available() and dist.is_initialized() and dist.get_world_size() > 1:
            ms = sync(ms)  # a new accumulator holding every rank's samples; ours stay per rank
        values = ms.compute()
        self.results[stage] = values
        if self.log and not trainer.sanity_checking:
            scalars = scalar_values(values, self.prefix[stage])
            if scalars:
                pl_module.log_dict(scalars, **{"sync_dist": False, **self.log_kwargs})

    # -- Lightning hooks -------------------------------------------------------------------------
    def on_validation_epoch_start(self, trainer: Any, pl_module: Any) -> None:
        self._start(trainer, "validate")

    def on_validation_batch_end(self, trainer: Any, pl_module: Any, outputs: Any, batch: Any,
                                batch_idx: int, dataloader_idx: int = 0) -> None:
        self._batch("validate", outputs, batch, dataloader_idx)

    def on_validation_epoch_end(self, trainer: Any, pl_module: Any) -> None:
        self._end(trainer, pl_module, "validate")

    def on_test_epoch_start(self, trainer: Any, pl_module: Any) -> None:
        self._start(trainer, "test")

    def on_test_batch_end(self, trainer: Any, pl_module: Any, outputs: Any, batch: Any,
                          batch_idx: int, dataloader_idx: int = 0) -> None:
        self._batch("test", outputs, batch, dataloader_idx)

    def on_test_epoch_end(self, trainer: Any, pl_module: Any) -> None:
        self._end(trainer, pl_module, "test")


def _is_distributed(sampler: Any) -> bool:
    """A ``DistributedSampler`` (or a wrapper with its attributes) spread over several ranks."""
    return all(hasattr(sampler, a) for a in ("num_replicas", "rank", "num_samples", "drop_last", "dataset")) \
        and int(sampler.num_replicas) > 1
