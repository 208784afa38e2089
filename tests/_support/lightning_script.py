"""A tiny Lightning run used by tests/integrations/test_lightning.py (also as a DDP entry point: Lightning's
``ddp`` strategy re-runs this script for the other ranks).

Usage: python tests/_support/lightning_script.py OUT.json DEVICES
Writes, from rank 0, the callback's logged validation values per epoch and the final model's
validation predictions (computed on rank 0 over the whole validation set, no sampler).
"""

from __future__ import annotations

import json
import sys
import warnings

import lightning.pytorch as pl
import numpy as np
import torch
from torch.utils.data import DataLoader, TensorDataset

import streammetrics as sm
from streammetrics.lightning import StreamMetricsCallback

N_VAL = 101  # odd on purpose: with 2 ranks the DistributedSampler pads one duplicate


def data(n: int, seed: int) -> TensorDataset:
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, 4, generator=g)
    y = (x[:, 0] + 0.7 * torch.randn(n, generator=g) > 0).long()
    return TensorDataset(x, y)


class Model(pl.LightningModule):
    def __init__(self) -> None:
        super().__init__()
        self.net = torch.nn.Linear(4, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.net(x).squeeze(-1)

    def training_step(self, batch, batch_idx):
        x, y = batch
        return torch.nn.functional.binary_cross_entropy_with_logits(self(x), y.float())

    def validation_step(self, batch, batch_idx):
        x, y = batch
        return {"y_true": y, "y_score": torch.sigmoid(self(x))}

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.5)


class Record(pl.Callback):
    """The values the streammetrics callback logged, per epoch (read from the trainer)."""

    def __init__(self) -> None:
        self.epochs: list[dict[str, float]] = []

    def on_validation_epoch_end(self, trainer, pl_module):
        if not trainer.sanity_checking:
            self.epochs.append({k: float(v) for k, v in trainer.callback_metrics.items() if k.startswith(("val/", "reg/"))})


def main(out: str, devices: int) -> None:
    warnings.filterwarnings("ignore")
    pl.seed_everything(0, verbose=False)
    callback = StreamMetricsCallback(sm.MetricSet(auroc=sm.AUROC(), ap=sm.AveragePrecision(),
                                                  cm=sm.ConfusionMatrix()), stages=["validate"])
    # issue #30: regression metrics through the same callback (the 0/1 label as a float target,
    # the probability as the prediction), synced over the ranks with the padding trimmed
    regression = StreamMetricsCallback(
        sm.MetricSet(mse=sm.MeanSquaredError(), mae=sm.MeanAbsoluteError(), r2=sm.R2Score(),
                     medae=sm.MedianAbsoluteError(), spearman=sm.SpearmanCorrCoef(),
                     kendall=sm.KendallTau()),
        stages=["validate"], prefix={"validate": "reg/"},
        extract=lambda out, batch: (out["y_true"].double(), out["y_score"]))
    record = Record()
    trainer = pl.Trainer(
        max_epochs=2, accelerator="cpu", devices=devices,
        strategy="ddp" if devices > 1 else "auto",
        logger=False, enable_checkpointing=False, enable_progress_bar=False,
        enable_model_summary=False, num_sanity_val_steps=0,
        callbacks=[callback, regression, record],
    )
    model = Model()
    trainer.fit(model, DataLoader(data(200, 1), batch_size=32), DataLoader(data(N_VAL, 2), batch_size=16))
    if trainer.global_rank == 0:
        val = data(N_VAL, 2)
        with torch.no_grad():
            scores = torch.sigmoid(model(val.tensors[0])).numpy()
        cm = np.asarray(callback.results["validate"]["cm"]).tolist()
        with open(out, "w") as f:
            json.dump({"epochs": record.epochs, "y": val.tensors[1].numpy().tolist(),
                       "scores": scores.tolist(), "cm": cm,
                       "regression": {k: float(v) for k, v in regression.results["validate"].items()}}, f)


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]))
