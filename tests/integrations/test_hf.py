"""streammetrics.hf with a real transformers Trainer: a tiny randomly initialised BERT built from a
config (nothing downloaded), evaluated batch by batch and in one call."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from sklearn.metrics import accuracy_score, roc_auc_score  # noqa: E402

import streammetrics as sm  # noqa: E402
from streammetrics.hf import compute_metrics, logits_to_scores  # noqa: E402


class _Tokens(torch.utils.data.Dataset):
    def __init__(self, n: int, seed: int) -> None:
        g = torch.Generator().manual_seed(seed)
        self.ids = torch.randint(1, 50, (n, 12), generator=g)
        self.labels = (self.ids[:, 0] > 25).long()

    def __len__(self) -> int:
        return len(self.labels)

    def __getitem__(self, i: int) -> dict:
        return {"input_ids": self.ids[i], "attention_mask": torch.ones(12, dtype=torch.long),
                "labels": self.labels[i]}


def _trainer(tmp_path, metrics_fn, batch_eval: bool):
    torch.manual_seed(0)
    config = transformers.BertConfig(vocab_size=50, hidden_size=16, num_hidden_layers=1,
                                     num_attention_heads=2, intermediate_size=32, num_labels=2,
                                     max_position_embeddings=16)
    model = transformers.BertForSequenceClassification(config)
    args = transformers.TrainingArguments(
        output_dir=str(tmp_path), per_device_eval_batch_size=7, report_to=[], use_cpu=True,
        batch_eval_metrics=batch_eval, disable_tqdm=True,
    )
    return transformers.Trainer(model=model, args=args, eval_dataset=_Tokens(45, 1), compute_metrics=metrics_fn)


@pytest.mark.parametrize("batch_eval", [True, False])
def test_trainer_evaluate_equals_sklearn(tmp_path, batch_eval: bool) -> None:
    fn = compute_metrics(sm.MetricSet(auroc=sm.AUROC(), acc=sm.Accuracy(), cm=sm.ConfusionMatrix()))
    trainer = _trainer(tmp_path, fn, batch_eval)
    got = trainer.evaluate()
    pred = trainer.predict(_Tokens(45, 1))
    logits, y = pred.predictions, pred.label_ids
    p1 = np.exp(logits[:, 1]) / np.exp(logits).sum(axis=1)
    assert got["eval_auroc"] == pytest.approx(roc_auc_score(y, p1), abs=1e-9)
    assert got["eval_acc"] == pytest.approx(accuracy_score(y, p1 >= 0.5), abs=1e-12)
    assert "eval_cm" not in got and fn.results["cm"].sum() == 45
    assert fn.metrics["cm"].compute().sum() == 0  # reset after every evaluation


def test_logits_to_scores_and_ignored_labels() -> None:
    z = np.array([[0.0, 1.0, -1.0], [2.0, 0.0, 0.0]])
    p = logits_to_scores(z)
    np.testing.assert_allclose(p.sum(axis=1), 1.0)
    np.testing.assert_allclose(logits_to_scores(np.array([[0.0], [800.0]])), [0.5, 1.0])
    np.testing.assert_allclose(logits_to_scores(np.array([[0.0, 0.0]]), binary=True), [0.5])
    with pytest.raises(ValueError, match="scores"):
        logits_to_scores(z, "tanh")
    fn = compute_metrics(sm.Accuracy(num_classes=3))
    from types import SimpleNamespace

    out = fn(SimpleNamespace(predictions=z, label_ids=np.array([1, -100])))
    assert out == {"accuracy": 1.0}  # the -100 row is dropped
    assert fn(SimpleNamespace(predictions=z[:1], label_ids=np.array([0])), compute_result=False) == {}
    assert fn(SimpleNamespace(predictions=z[1:], label_ids=np.array([0])), compute_result=True) == {"accuracy": 0.5}


class _Targets(_Tokens):
    """The same tokens with a float target (a regression head, ``problem_type="regression"``);
    a few targets are -100.0, which is a value, not padding."""

    def __init__(self, n: int, seed: int) -> None:
        super().__init__(n, seed)
        self.labels = (self.ids[:, 0].float() - 25.0) / 4.0
        self.labels[::9] = -100.0


@pytest.mark.parametrize("batch_eval", [True, False])
def test_trainer_regression_equals_sklearn(tmp_path, batch_eval: bool) -> None:
    """Issue #30: a regression set takes the model's outputs as they are (no sigmoid) and keeps
    every row; its values equal scikit-learn / scipy on the Trainer's own predictions."""
    import scipy.stats as ss
    from sklearn.metrics import mean_squared_error, median_absolute_error, r2_score

    fn = compute_metrics(sm.MetricSet(mse=sm.MeanSquaredError(), r2=sm.R2Score(),
                                      medae=sm.MedianAbsoluteError(), kendall=sm.KendallTau()))
    torch.manual_seed(0)
    config = transformers.BertConfig(vocab_size=50, hidden_size=16, num_hidden_layers=1,
                                     num_attention_heads=2, intermediate_size=32, num_labels=1,
                                     max_position_embeddings=16, problem_type="regression")
    args = transformers.TrainingArguments(output_dir=str(tmp_path), per_device_eval_batch_size=7,
                                          report_to=[], use_cpu=True, batch_eval_metrics=batch_eval,
                                          disable_tqdm=True)
    trainer = transformers.Trainer(model=transformers.BertForSequenceClassification(config), args=args,
                                   eval_dataset=_Targets(45, 1), compute_metrics=fn)
    got = trainer.evaluate()
    pred = trainer.predict(_Targets(45, 1))
    y, p = np.asarray(pred.label_ids, dtype=np.float64).reshape(-1), pred.predictions.reshape(-1)
    assert (y == -100.0).sum() == 5 and fn.results["mse"] == pytest.approx(
        mean_squared_error(y, p), rel=1e-12)  # the -100.0 targets are counted
    assert got["eval_mse"] == pytest.approx(mean_squared_error(y, p), rel=1e-12)
    assert got["eval_r2"] == pytest.approx(r2_score(y, p), rel=1e-12)
    assert got["eval_medae"] == pytest.approx(median_absolute_error(y, p), rel=1e-12)
    assert got["eval_kendall"] == pytest.approx(ss.kendalltau(y, p).statistic, rel=1e-12)


def test_regression_outputs_are_not_squashed_and_padding_is_opt_in() -> None:
    from types import SimpleNamespace

    y = np.array([[1.5], [-100.0], [3.0]])  # (n, 1) targets against (n, 1) outputs
    out = np.array([[2.0], [-99.0], [7.0]])
    fn = compute_metrics(sm.MeanAbsoluteError())
    assert fn(SimpleNamespace(predictions=out, label_ids=y)) == {"meanabsoluteerror": pytest.approx(5.5 / 3)}
    dropped = compute_metrics(sm.MeanAbsoluteError(), ignore_label=-100)
    assert dropped(SimpleNamespace(predictions=out, label_ids=y[:, 0])) == {
        "meanabsoluteerror": pytest.approx(2.25)}
    bounds = np.array([[1.0, 2.0], [-101.0, -99.0], [3.5, 4.0]])  # (lower, upper): kept as given
    cov = compute_metrics(sm.IntervalCoverage())
    assert cov(SimpleNamespace(predictions=bounds, label_ids=y[:, 0])) == {
        "intervalcoverage": pytest.approx(2 / 3)}
    with pytest.raises(ValueError, match="ignore_label"):
        compute_metrics(sm.MeanAbsoluteError(), ignore_label="none")
