"""The engines' shared arguments are declared once (``streammetrics._engines.request.Request``): every
public ``evaluate`` of Dask, Spark and Ray spells them in its own signature exactly as declared
(checked when it is defined), and builds its run from them through one function (``make_run``)."""

from __future__ import annotations

import dataclasses
import inspect
from typing import Any

import pandas as pd
import pytest

import streammetrics as sm
from streammetrics import dask as sm_dask
from streammetrics import ray as sm_ray
from streammetrics import spark as sm_spark
from streammetrics._engines.plan import Columns
from streammetrics._engines.request import WIDER, Request, engine_evaluate, make_run

EVALUATES = {"dask.evaluate": sm_dask.evaluate, "dask.evaluate_parquet": sm_dask.evaluate_parquet,
             "spark.evaluate": sm_spark.evaluate, "ray.evaluate": sm_ray.evaluate,
             "ray.evaluate_parquet": sm_ray.evaluate_parquet}


@pytest.mark.parametrize("name", sorted(EVALUATES))
def test_every_evaluate_spells_the_request(name: str) -> None:
    params = inspect.signature(EVALUATES[name]).parameters
    assert list(params)[1] == "metrics"
    for f in dataclasses.fields(Request):
        p = params[f.name]
        if f.name == "update_kwargs":
            assert p.kind is p.VAR_KEYWORD
            continue
        assert p.kind is p.KEYWORD_ONLY
        assert p.default == (p.empty if f.default is dataclasses.MISSING else f.default)
        # Spark's and Dask's are wider where they also take column expressions (issue #32 item 3)
        wider = WIDER.get(f.name, ()) if name in ("spark.evaluate", "dask.evaluate") else ()
        assert str(p.annotation) in (str(f.type), *wider)
    doc = EVALUATES[name].__doc__ or ""
    assert "{engine:" not in doc  # the shared descriptions are filled in


def test_a_signature_that_differs_is_refused_at_definition() -> None:
    def wrong_default(data: Any, metrics: Any, *, label: Columns | None = None, score: Columns | None = None,
                      target: Columns | None = None, prediction: Columns | None = None, weight: str | None = None,
                      query: str | None = None, doc_id: str | None = None, query_partitioned: bool = True,
                      compute: bool = True, by: Columns | None = None, **update_kwargs: Any) -> Any:
        """Doc."""

    with pytest.raises(TypeError, match="query_partitioned"):
        engine_evaluate(wrong_default)

    def no_catch_all(data: Any, metrics: Any, *, label: Columns | None = None, score: Columns | None = None,
                      target: Columns | None = None, prediction: Columns | None = None, weight: str | None = None,
                     query: str | None = None, doc_id: str | None = None, query_partitioned: bool = False,
                     compute: bool = True, by: Columns | None = None, positive_index: int = 1,
                     nulls: str = "error", as_frame: bool = False) -> Any:
        """Doc."""

    with pytest.raises(TypeError, match="update_kwargs"):
        engine_evaluate(no_catch_all)

    def loose_type(data: Any, metrics: Any, *, label: Any = None, score: Columns | None = None,
                   target: Columns | None = None, prediction: Columns | None = None, weight: str | None = None,
                   query: str | None = None, doc_id: str | None = None, query_partitioned: bool = False,
                   compute: bool = True, by: Columns | None = None, **update_kwargs: Any) -> Any:
        """Doc."""

    with pytest.raises(TypeError, match="'label'"):
        engine_evaluate(loose_type)
    assert engine_evaluate(sm_ray.evaluate) is sm_ray.evaluate  # a matching one is kept as it is


def test_request_of_takes_the_fields_and_ignores_the_rest() -> None:
    request = Request.of({"label": "y", "score": ["a", "b"], "target": None, "prediction": None, "weight": None, "query": None, "doc_id": None,
                          "query_partitioned": False, "compute": False, "by": "g", "update_kwargs": {},
                          "positive_index": 1, "nulls": "error", "as_frame": False,
                          "depth": 3, "df": object()})
    assert request == Request("y", ["a", "b"], compute=False, by="g")
    with pytest.raises(KeyError):
        Request.of({"label": "y"})


def test_make_run_checks_the_request_as_every_engine_did() -> None:
    frame = pd.DataFrame({"y": [0, 1, 1, 0], "p": [0.1, 0.8, 0.6, 0.3], "q": [1, 1, 2, 2]})
    run = make_run(sm.F1(), Request("y", "p"), available=list(frame.columns))
    assert run.plan.columns() == ["y", "p"] and run.shuffle_on is None
    template = sm.F1()
    empty = make_run(template, Request("y", "p", compute=False), available=["y", "p"])
    for acc in (empty.result(None), empty.result_of_bytes(b"")):  # no partition: the empty twin
        assert isinstance(acc, sm.F1) and acc is not template
        y, p = frame["y"].to_numpy(), frame["p"].to_numpy()
        assert acc.update(y, p).compute() == sm.F1().update(y, p).compute()  # empty before
    with pytest.raises(ValueError, match=r"columns \['w'\] are not in the DataFrame"):
        make_run(sm.F1(), Request("y", "p", weight="w"), available=list(frame.columns))
    with pytest.raises(ValueError, match="query/doc_id: only retrieval metrics"):
        make_run(sm.F1(), Request("y", "p", query="q"), available=list(frame.columns))
    retrieval = make_run(sm.NDCG(k=2), Request("y", "p", query="q"), available=list(frame.columns))
    assert retrieval.shuffle_on == "q"
    partitioned = make_run(sm.NDCG(k=2), Request("y", "p", query="q", query_partitioned=True),
                           available=list(frame.columns))
    assert partitioned.shuffle_on is None


def test_target_and_prediction_name_the_label_and_score_columns() -> None:
    """The regression family's names (issue #30): ``target`` / ``prediction`` are aliases of
    ``label`` / ``score``; one name of each pair is required, both is a ValueError naming them."""
    cols = ["y", "p", "lo", "hi"]
    run = make_run(sm.MeanSquaredError(), Request(target="y", prediction="p"), available=cols)
    assert (run.plan.label, run.plan.score, run.plan.family) == ("y", "p", "regression")
    mixed = make_run(sm.IntervalCoverage(), Request(label="y", prediction=["lo", "hi"]), available=cols)
    assert mixed.plan.columns() == ["y", "lo", "hi"]
    with pytest.raises(ValueError, match=r"target: is another name for label=.*label='y' and target='p'"):
        make_run(sm.MeanSquaredError(), Request(label="y", target="p", score="p"), available=cols)
    with pytest.raises(ValueError, match="prediction: is another name for score="):
        make_run(sm.MeanSquaredError(), Request(target="y", score="p", prediction="p"), available=cols)
    with pytest.raises(ValueError, match=r"label: name the label column\(s\)"):
        make_run(sm.MeanSquaredError(), Request(score="p"), available=cols)
    with pytest.raises(ValueError, match=r"score: name the score column\(s\)"):
        make_run(sm.MeanSquaredError(), Request(target="y"), available=cols)
    with pytest.raises(ValueError, match=r"columns \['nope'\]"):
        make_run(sm.MeanSquaredError(), Request(target="nope", prediction="p"), available=cols)
