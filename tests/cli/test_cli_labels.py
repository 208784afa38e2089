"""``streammetrics evaluate`` never guesses which label is which class: ``--pos-label``, a score column
named after a label, ``--classes`` for the positions of a list column -- each equal to scikit-learn
with the classes given explicitly, and the mapping used is in the JSON and the table."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import run_json
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")
pytest.importorskip("rich")
metrics = pytest.importorskip("sklearn.metrics")

from streammetrics.__main__ import main  # noqa: E402


def cancer_data(n: int = 1500, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Labels cancer/healthy (cancer the rarer, and alphabetically first) and a score of cancer."""
    rng = np.random.default_rng(seed)
    is_cancer = rng.random(n) < 0.3
    score = np.clip(rng.normal(0.35 + 0.3 * is_cancer, 0.15), 0, 1)
    return np.where(is_cancer, "cancer", "healthy"), is_cancer.astype(int), score


def test_pos_label_gives_the_sklearn_auroc_with_text_labels(tmp_path, capsys):
    dx, y, s = cancer_data()
    path = str(tmp_path / "dx.parquet")
    pq.write_table(pa.table({"dx": dx, "score": s}), path)
    res = run_json(capsys, path, "--label", "dx", "--score", "score", "--pos-label", "cancer")
    expected = metrics.roc_auc_score(dx == "cancer", s)
    assert res["metrics"]["auroc"] == pytest.approx(expected, rel=1e-12)
    assert res["metrics"]["auroc"] > 0.8  # not the alphabetical guess (1 - AUROC)
    pred = (s >= 0.5).astype(int)
    assert res["metrics"]["recall"] == pytest.approx(metrics.recall_score(y, pred), rel=1e-12)
    assert res["metrics"]["average_precision"] == pytest.approx(
        metrics.average_precision_score(dx, s, pos_label="cancer"), rel=1e-12)
    assert res["label_mapping"] == {"healthy": 0, "cancer": 1}
    assert res["positive_label"] == "cancer" and res["label_mapping_from"] == "--pos-label"
    # the other way round: healthy positive
    res = run_json(capsys, path, "--label", "dx", "--score", "score", "--pos-label", "healthy")
    assert res["metrics"]["auroc"] == pytest.approx(metrics.roc_auc_score(dx == "healthy", s), rel=1e-12)


@pytest.mark.parametrize("column", ["p_cancer", "cancer", "cancer_prob", "prob-cancer"])
def test_a_score_column_named_after_a_label_makes_it_positive(tmp_path, capsys, column):
    dx, _, s = cancer_data(seed=1)
    path = str(tmp_path / "dx.csv")
    import pyarrow.csv as pcsv

    pcsv.write_csv(pa.table({"dx": dx, column: s}), path)
    res = run_json(capsys, path, "--label", "dx", "--score", column)
    assert res["metrics"]["auroc"] == pytest.approx(metrics.roc_auc_score(dx == "cancer", s), rel=1e-12)
    assert res["positive_label"] == "cancer" and res["label_mapping"] == {"healthy": 0, "cancer": 1}
    assert res["label_mapping_from"] == f"the score column name {column!r}"
    # the table says so too
    assert main(["evaluate", path, "--label", "dx", "--score", column, "--quiet"]) == 0
    out = capsys.readouterr().out
    assert f"labels: 'healthy' -> 0, 'cancer' -> 1 (positive: 'cancer', from the score column name {column!r})" \
        in out.replace("\n", " ")


def test_classes_give_list_positions_and_the_sklearn_accuracy(tmp_path, capsys):
    """10 digit classes named in words: the list column's position i is the i-th name of --classes
    (alphabetical order would be eight, five, four, ...)."""
    names = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine"]
    rng = np.random.default_rng(3)
    y = rng.integers(0, 10, 2000)
    p = rng.random((2000, 10))
    p[np.arange(2000), y] += rng.random(2000) * 1.5
    p /= p.sum(axis=1, keepdims=True)
    path = str(tmp_path / "digits.parquet")
    pq.write_table(pa.table({"digit": np.array(names)[y], "probs": list(p)}), path)
    res = run_json(capsys, path, "--label", "digit", "--score", "probs", "--classes", ",".join(names))
    pred = p.argmax(axis=1)
    assert res["metrics"]["accuracy"] == pytest.approx(metrics.accuracy_score(y, pred), rel=1e-12)
    assert res["metrics"]["accuracy"] > 0.6  # by position; alphabetical order would give ~0.1
    recall = metrics.recall_score(y, pred, average=None)
    assert [res["per_class"]["recall"][n] for n in names] == pytest.approx(recall, rel=1e-12)
    assert res["metrics"]["auroc"] == pytest.approx(
        metrics.roc_auc_score(y, p, multi_class="ovr", average="macro"), rel=1e-12)
    assert res["label_mapping"] == {n: i for i, n in enumerate(names)} and res["classes"] == names
    assert res["label_mapping_from"] == "--classes, class i = position i of the list column 'probs'"
    assert res["positive_label"] is None


def test_numeric_labels_with_pos_label(tmp_path, capsys):
    rng = np.random.default_rng(4)
    y = np.where(rng.random(1000) < 0.4, 1, -1)
    s = np.clip(rng.normal(0.4 + 0.2 * (y == 1), 0.2), 0, 1)
    path = str(tmp_path / "pm.parquet")
    pq.write_table(pa.table({"y": y, "s": s}), path)
    res = run_json(capsys, path, "--label", "y", "--score", "s", "--pos-label", "1")
    assert res["metrics"]["auroc"] == pytest.approx(metrics.roc_auc_score(y, s), rel=1e-12)
    assert res["label_mapping"] == {"-1": 0, "1": 1} and res["positive_label"] == 1
    # 0/1 labels with --pos-label 0: the classes swap
    y01 = (y == 1).astype(int)
    pq.write_table(pa.table({"y": y01, "s": s}), path)
    res = run_json(capsys, path, "--label", "y", "--score", "s", "--pos-label", "0")
    assert res["metrics"]["auroc"] == pytest.approx(metrics.roc_auc_score(1 - y01, s), rel=1e-12)
    assert res["metrics"]["precision"] == pytest.approx(
        metrics.precision_score(1 - y01, (s >= 0.5).astype(int)), rel=1e-12)


def test_integer_labels_and_the_bundled_example_are_unchanged(capsys):
    res = run_json(capsys)
    assert res["label_mapping"] is None and res["positive_label"] == 1 and res["label_mapping_from"] is None
    assert res["rows"] == 569 and res["classes"] == ["0", "1"]
    assert main(["evaluate"]) == 0
    out = capsys.readouterr().out
    assert "0.9945" in out and "labels:" not in out


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(names=st.lists(st.text(st.characters(categories=["L", "N"]), min_size=1, max_size=6), min_size=2,
                      max_size=2, unique=True), positive=st.integers(0, 1), seed=st.integers(0, 2**16))
def test_text_labels_any_names_equal_sklearn(tmp_path_factory, capsys, names, positive, seed):
    """Whatever the two names (and so their alphabetical order), --pos-label decides."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, 60)
    y[:2] = [0, 1]
    s = np.round(rng.random(60) * 0.7 + 0.3 * y, 2)
    text = np.array(names, dtype=object)[y]
    path = str(tmp_path_factory.mktemp("names") / "t.parquet")
    pq.write_table(pa.table({"c": pa.array(list(text), pa.string()), "s": s}), path)
    res = run_json(capsys, path, "--label", "c", "--score", "s", "--pos-label", names[positive],
                   "--metrics", "auroc,recall")
    is_pos = (y == positive).astype(int)
    assert res["metrics"]["auroc"] == pytest.approx(metrics.roc_auc_score(is_pos, s), rel=1e-12)
    assert res["metrics"]["recall"] == pytest.approx(metrics.recall_score(is_pos, (s >= 0.5).astype(int)),
                                                     rel=1e-12)
    assert res["positive_label"] == names[positive]
