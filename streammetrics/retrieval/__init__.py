"""The retrieval family: measures over streams of queries (precision and recall at k, MAP, MRR,
nDCG, ...) on the shared per-query kernel. Every name of ``__all__`` is also importable from
``streammetrics``; the base ``RetrievalMetric`` and its ``QueryState`` are importable from here."""

from .hits import *  # noqa: F403  -- HitRateAtK, FallOutAtK, AUROCAtK, PrecisionRecallAtK, ...
from .metrics import *  # noqa: F403  -- the measures: metrics.__all__
from .metrics import QueryState as QueryState
from .metrics import RetrievalMetric as RetrievalMetric

__all__ = [
    "PrecisionAtK", "RecallAtK", "RPrecision", "PrecisionAtRecall", "MAP", "MRR", "CG", "DCG", "NDCG",
    "InterpolatedPrecision", "ElevenPointAP", "SystemEfficiency", "SetPrecision", "SetRecall",
    "HitRateAtK", "FallOutAtK", "AUROCAtK", "PrecisionRecallAtK", "RecallAtFixedPrecision", "F1AtK",
]
