"""The retrieval family: measures over streams of queries (precision and recall at k, MAP, MRR,
nDCG, ...) on the shared per-query kernel. Every name is also importable from ``streammetrics``."""

from .metrics import (
    CG,
    DCG,
    MAP,
    MRR,
    NDCG,
    ElevenPointAP,
    InterpolatedPrecision,
    PrecisionAtK,
    PrecisionAtRecall,
    QueryState,
    RecallAtK,
    RetrievalMetric,
    RPrecision,
    SetPrecision,
    SetRecall,
    SystemEfficiency,
)

__all__ = [
    "QueryState", "RetrievalMetric", "PrecisionAtK", "RecallAtK", "RPrecision", "PrecisionAtRecall",
    "MAP", "MRR", "CG", "DCG", "NDCG", "InterpolatedPrecision", "ElevenPointAP", "SystemEfficiency",
    "SetPrecision", "SetRecall",
]
