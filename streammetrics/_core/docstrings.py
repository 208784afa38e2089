"""Shared numpydoc parameter descriptions, written once and filled into docstrings at import.

Many metrics take the same arguments with the same meaning (``sample_weight``, ``rel_level``,
``zero_division``, ...). Their descriptions live here, grouped by family, and a docstring names
the ones it takes on a line of its own inside its ``Parameters`` section::

    Parameters
    ----------
    k : int
        The rank cutoff, >= 1.
    {retrieval: rel_level, ties, per_query}

The decorator :func:`filled` replaces such a line, once, when the module is imported, by the
entries it names (``name : type`` and the indented description), at the line's indentation, so
``help()``, the doctests and the API site (through ``docs/hooks/griffe_snippets.py``, which
calls :func:`fill` on the text read from the source) show the complete section. A name that is
not in the family is a ``KeyError`` at import, so a typo cannot reach a user.

Classes of one family also share the data their examples run on: a line ``{example: retrieval}``
in an ``Examples`` section becomes the doctest lines of :data:`EXAMPLES` that import the package
and define that data, and each class's own lines follow (so every example still runs as a doctest,
on the same inputs as its siblings): after ``{example: retrieval}``, a class's example reads
``sm.MRR().update(relevance, scores, query_ids=queries).compute()`` and its value.

This module imports nothing from the package (the documentation build loads it by path).
"""

from __future__ import annotations

import re
import textwrap
from typing import TypeVar

_T = TypeVar("_T")

# Label options of every accumulator that takes them (see streammetrics.Accuracy).
_CLASSES_POS_LABEL = (
    "classes, pos_label : optional",
    "Labels as the data has them (see :class:`~streammetrics.Accuracy`).",
)

#: family -> argument key -> (numpydoc header ``name : type``, description). A key differs from
#: the argument's name only where one argument has two meanings (``k`` required or optional).
SNIPPETS: dict[str, dict[str, tuple[str, str]]] = {
    # Retrieval measures (streammetrics.retrieval.metrics).
    "retrieval": {
        "k": ("k : int", "The rank cutoff, >= 1."),
        "k_optional": ("k : int, optional", "The rank cutoff (>= 1); ``None`` reads the whole list."),
        "rel_level": (
            "rel_level : float, default 1",
            "A document is relevant when its grade is >= ``rel_level``.",
        ),
        "ties": (
            "ties : {'first', 'average'}, default 'first'",
            "Equal scores: ranked by document id as trec_eval does, or the expected value over "
            "every order of the tied documents (measures linear in the gains only).",
        ),
        "per_query": (
            "per_query : bool, default False",
            "Keep every query's value for ``per_query_values()`` (8 bytes per query).",
        ),
        "gain": (
            "gain : {'linear', 'exponential'}, default 'linear'",
            "The gain of a grade g: max(g, 0), or 2^max(g, 0) - 1.",
        ),
        "interpolation": (
            "interpolation : {'textbook', 'trec'}, default 'textbook'",
            "The interpolation rule: the best precision at recall >= r, or trec_eval 9's rule.",
        ),
        "average": (
            "average : {'macro', 'micro'}, default 'macro'",
            "The mean over queries, or the ratio of the sums over queries.",
        ),
        "empty_target_action": (
            "empty_target_action : {'neg', 'pos', 'skip', 'error'}, default 'neg'",
            "A query without relevant documents (R = 0) scores 0 (``'neg'``) or 1 (``'pos'``), "
            "is left out of the aggregate (``'skip'``), or is refused with a ValueError at "
            "``update`` (``'error'``); torchmetrics' option of the same name.",
        ),
        "empty_target_action_fallout": (
            "empty_target_action : {'neg', 'pos', 'skip', 'error'}, default 'pos'",
            "A query whose list holds no non-relevant document scores 0 (``'neg'``) or 1 "
            "(``'pos'``, torchmetrics' ``RetrievalFallOut`` default), is left out of the aggregate "
            "(``'skip'``), or is refused with a ValueError at ``update`` (``'error'``).",
        ),
        "aggregation": (
            "aggregation : {'mean', 'median', 'min', 'max'}, default 'mean'",
            "How per-query values combine: the mean (O(1) memory), or the lower median (as "
            "``torch.median``), minimum or maximum of the kept per-query values (8 bytes per query).",
        ),
        "ignore_index": (
            "ignore_index : int, optional",
            "Rows whose relevance equals it are dropped before ranking (torchmetrics' option); a "
            "query left without rows disappears.",
        ),
    },
    # Accumulators of the confusion family (streammetrics.classification.confusion).
    "confusion": {
        "num_classes": (
            "num_classes : int, optional",
            "``None`` (default) for a binary task; C for C classes (multiclass), or L labels with "
            "``multilabel=True``. May be omitted when ``classes`` is given.",
        ),
        "multilabel": (
            "multilabel : bool, default False",
            "Labels and predictions are (n, L) indicator / score matrices.",
        ),
        "average": (
            "average : {'macro', 'micro', 'weighted', None}, default 'macro'",
            "How per-class values combine for multiclass and multilabel tasks; ``None`` (or "
            "torchmetrics' ``\"none\"``) returns the per-class array (see "
            "docs/definitions/confusion.md#averaging).",
        ),
        "threshold": (
            "threshold : float, default 0.5",
            "Scores or probabilities given as ``y_pred`` are predicted positive when "
            "``>= threshold`` (binary, multilabel); multiclass scores predict their argmax.",
        ),
        "ignore_index": (
            "ignore_index : int, optional",
            "Rows whose ``y_true`` equals it are skipped (padding).",
        ),
        "zero_division": (
            "zero_division : {'warn', 0.0, 1.0, nan}, default 'warn'",
            "The value of an undefined ratio (zero denominator); ``'warn'`` gives 0.0 with an "
            ":class:`~streammetrics.UndefinedMetricWarning`.",
        ),
        "classes": (
            "classes : sequence, optional",
            "The labels as the data has them, in class order (binary: ``[negative, positive]``).",
        ),
        "pos_label": (
            "pos_label : optional",
            "Binary tasks only: the positive label (one of ``classes`` when given).",
        ),
        "labels": (
            "labels : sequence, optional",
            "scikit-learn's ``labels=``: the classes per-class values, averages and matrices "
            "cover, in that order (multiclass and multilabel).",
        ),
        "top_k": (
            "top_k : int, default 1",
            "Multiclass only, torchmetrics' ``top_k``: with scores of shape (n, C) a sample is "
            "predicted as its actual class when that is among its k highest scores, else as its "
            "highest-scored class (1 <= k <= C; ties go to the lower class index; 1 is the "
            "argmax). With k > 1 ``y_pred`` must be scores and the state keeps per-class "
            "(TP, FP, FN, TN), O(C) memory (docs/definitions/confusion.md, \"Top-k predictions\").",
        ),
        "absent_classes": (
            "absent_classes : {'include', 'skip'}, default 'include'",
            "Which classes a macro average covers: ``'include'`` every class (scikit-learn with "
            "``labels=range(C)``), ``'skip'`` only those with a true or predicted sample (TP + FP "
            "+ FN > 0; with ``top_k`` > 1 precision, recall and NPV: TP + FN > 0; torchmetrics' "
            "multiclass macro average). Only ``average='macro'`` reads it "
            "(docs/definitions/confusion.md#averaging).",
        ),
        "multidim_average": (
            "multidim_average : {'global', 'samplewise'}, default 'global'",
            "torchmetrics' option: ``'samplewise'`` reads inputs (N, ...) (multiclass scores (N, C, "
            "...), multilabel (N, L, ...)) as N samples and ``compute`` gives one value per sample, "
            "over its extra dimensions (shape (N,), or (N, K) with ``average=None``). Its state keeps "
            "each sample's counts: O(N·K) memory, growing with the stream; it merges by "
            "concatenation in merge order, saves and loads; no sample weights, ``top_k`` 1, class "
            "codes only (docs/definitions/confusion.md#sample-wise-values).",
        ),
    },
    # Accumulators of the ranking family (streammetrics.ranking.metrics, ROC / PR / DET curves).
    "ranking": {
        "num_classes": (
            "num_classes : int, optional",
            "``None``: binary (scores shape (n,)); C: multiclass (scores (n, C)); L with "
            "``multilabel=True``.",
        ),
        "multilabel": ("multilabel : bool, default False", "Labels and scores are (n, L) matrices."),
        "average": (
            "average : {'macro', 'weighted', 'micro', None}, default 'macro'",
            "Multiclass / multilabel: the mean over classes, weighted by support, pooled over "
            "every (sample, class) pair, or ``None`` (or torchmetrics' ``\"none\"``) for the "
            "per-class array.",
        ),
        "ignore_index": ("ignore_index : int, optional", "Rows whose ``y_true`` equals it are skipped."),
        "max_bytes": (
            "max_bytes : int, optional",
            "A memory budget for the whole state: exact until it is reached, then adaptive "
            "mergeable bins with certified ``bounds()`` (docs/definitions/ranking.md#bounded-memory).",
        ),
        "thresholds": (
            "thresholds : array-like, optional",
            "Fixed bin edges instead of adaptive bins (exclusive with ``max_bytes``).",
        ),
        "scores": (
            "scores : {'raw', 'logit', 'probability'}, default 'raw'",
            "The declared score range, used to place adaptive bins (bins only).",
        ),
        "labels": _CLASSES_POS_LABEL,
        # the label-ranking accumulators (streammetrics.ranking.label_ranking)
        "num_labels": (
            "num_labels : int, optional",
            "The number of labels L of every row (checked when given).",
        ),
    },
    # One-shot functions with scikit-learn's signatures (streammetrics.functional).
    "sklearn": {
        "y_true_y_pred": (
            "y_true, y_pred : array-like of shape (n,) or indicator matrix (n, L), dense or sparse",
            "Labels as given (strings, integers, booleans) or 0/1 indicator matrices.",
        ),
        "y_true": ("y_true : array-like of shape (n,) or indicator matrix (n, L)", "True labels."),
        "y_score": (
            "y_score : array-like of shape (n,) or (n, C)",
            "Scores (any real values; probabilities summing to 1 for multiclass ``roc_auc_score``).",
        ),
        "labels": (
            "labels : array-like, optional",
            "The classes the per-class values and averages cover, in that order (default: every "
            "label of ``y_true`` and ``y_pred``, sorted); classes absent from the data count as "
            "empty.",
        ),
        "pos_label": (
            "pos_label : label, default 1",
            'The positive class of binary targets (``average="binary"``).',
        ),
        "average": (
            'average : {"binary", "micro", "macro", "weighted", "samples"} or None',
            '``None`` gives per-class values; ``"samples"`` is for indicator targets.',
        ),
        "beta": ("beta : float", "Weight of recall (beta > 1 favours recall)."),
        "sample_weight": ("sample_weight : array-like of shape (n,), optional", "Non-negative weights."),
        "zero_division": (
            'zero_division : {"warn", 0.0, 1.0, nan}, default "warn"',
            'Value of a ratio whose denominator is 0 ("warn": 0.0 and an '
            "``UndefinedMetricWarning``).",
        ),
        "normalize": (
            "normalize : bool, default True",
            "False gives the (weighted) count instead of the fraction.",
        ),
        "labels_of_y_true": ("labels : array-like, optional", "The classes (default: those of ``y_true``)."),
        "y_pred_renamed": (
            "y_pred : array-like, deprecated",
            "scikit-learn 1.9's old name of ``y_proba`` (``FutureWarning``).",
        ),
        # the Returns entry of the D² scores
        "d2": ("float", "At most 1 (perfect); nan for fewer than two samples. O(n C)."),
        # a Raises entry
        "raises": ("ValueError", "Where scikit-learn raises (see :mod:`streammetrics.functional`)."),
    },
    # Fairlearn's disparity summaries (streammetrics.functional.fairness).
    "fairness": {
        "y_true_y_pred": (
            "y_true, y_pred : array-like of shape (n,)",
            "0/1 labels and predictions, as Fairlearn takes them: each holds values of {0, 1} or of "
            "{-1, 1} (-1 read as 0; booleans and integral floats too); anything else (scores, other "
            "labels) is a ``ValueError``. ``demographic_parity_*`` use ``y_true`` only for its "
            "length, as Fairlearn does.",
        ),
        "sensitive_features": (
            "sensitive_features : array-like, tuple of arrays, dict or DataFrame",
            "The group of each row: one column, or several whose combinations are the groups.",
        ),
        "method": (
            "method : {'between_groups', 'to_overall'}, default 'between_groups'",
            "Compare the groups with each other, or each group with the value over all rows.",
        ),
        "sample_weight": ("sample_weight : array-like of shape (n,), optional", "Non-negative weights."),
        "agg": (
            "agg : {'worst_case', 'mean'}, default 'worst_case'",
            "Combine the true and false positive rate spreads by the worse of the two, or their mean.",
        ),
    },
    # scikit-learn's regression functions (streammetrics.functional.regression).
    "regression": {
        "y_true_y_pred": ("y_true, y_pred : array-like of shape (n,) or (n, k)", "Targets and predictions."),
        "y_true_y_pred_1d": (
            "y_true, y_pred : array-like of shape (n,)",
            "Targets and predictions, in the domain of ``power``.",
        ),
        "sample_weight": (
            "sample_weight : array-like of shape (n,), optional",
            "Non-negative sample weights.",
        ),
        "multioutput": (
            'multioutput : {"raw_values", "uniform_average"} or array-like of shape (k,)',
            "How the per-output values are combined (``raw_values``: the array of them).",
        ),
        "multioutput_variance": (
            'multioutput : {"raw_values", "uniform_average", "variance_weighted"} or array-like',
            "How the per-output values are combined (``variance_weighted``: weighted by the "
            "variance of each output's ``y_true``).",
        ),
        # the accumulators' (streammetrics.regression): the default is part of the header
        "multioutput_class": (
            'multioutput : {"raw_values", "uniform_average"} or array-like of shape (k,), '
            'default "uniform_average"',
            "How the per-output values of (n, k) targets are combined (``raw_values``: the array "
            "of them; weights: their weighted mean).",
        ),
        "num_outputs": (
            "num_outputs : int, default 1",
            "Number of targets per row (``y_pred`` (n, 2) for 1, else (n, k, 2)).",
        ),
        "force_finite": (
            "force_finite : bool, default True",
            "Constant ``y_true``: 1.0 (perfect predictions) or 0.0 instead of nan / -inf.",
        ),
        "alpha": ("alpha : float, default 0.5", "The quantile level, in [0, 1]."),
        "power": (
            "power : float, default 0",
            "The Tweedie power (<= 0 or >= 1): 0 normal, 1 Poisson, 2 gamma.",
        ),
    },
    # The argument checks of streammetrics._core.params.
    "params": {
        "value": ("value : Any", "The argument as given."),
        "name": ("name : str", "The argument's name, which starts the error message."),
    },
    # Label options shared by the accumulators (see streammetrics.Accuracy).
    "labels": {
        "classes_pos_label": _CLASSES_POS_LABEL,
        "classes": (
            "classes : sequence, optional",
            "The labels as the data has them, in class order (see :class:`~streammetrics.Accuracy`).",
        ),
    },
    # Curve results (ROC, DET) built from counts at distinct thresholds.
    "curves": {
        "counts": (
            "counts : ThresholdCounts",
            "The counts at distinct thresholds (the accumulator's ``compute()`` passes them).",
        ),
        "drop_intermediate": (
            "drop_intermediate : bool, default False",
            "Keep only the points that change the curve's shape.",
        ),
        "max_fpr": (
            "max_fpr : float, optional",
            "The McClish-standardised partial area up to this false positive rate, in (0, 1].",
        ),
        "pr_area": (
            "method : {'step', 'interpolated', 'eleven_point', 'trapezoid'}, default 'step'",
            "Which area under the precision-recall curve: average precision (the step sum), "
            "the area of the interpolated curve, the 11-point interpolated mean, or the trapezoid.",
        ),
        # the attributes every curve result with certified bins has
        "read_from": (
            "counts : ThresholdCounts",
            "The counts at distinct thresholds the curve is read from.",
        ),
        "is_exact": ("is_exact : bool", "True when the whole curve is exact (``exact`` all True)."),
        "totals": ("total_pos, total_neg : float", "The (weighted) numbers of positives P and negatives N."),
    },
    # The engines' evaluate (streammetrics.dask, .spark, .ray): columns, options, the result.
    "engine": {
        "metrics": (
            "metrics : MetricSet, Metric or mapping of name -> Metric",
            "Templates: their configuration is used, their current state is not (they are not "
            "modified).",
        ),
        "label": (
            "label : str or list of str, optional",
            "``y_true`` column (several columns: an (n, L) multilabel array, or an (n, k) "
            "multioutput regression target). For retrieval metrics: the relevance grades. "
            "Required, or its alias ``target``.",
        ),
        "score": (
            "score : str or list of str, optional",
            "``y_pred`` / ``y_score`` column, or one column per class for multiclass scores (n, C) "
            "(regression: per output, or the (lower, upper) columns of an interval metric). "
            "Required, or its alias ``prediction``.",
        ),
        "target_prediction": (
            "target, prediction : str or list of str, optional",
            "Aliases of ``label`` and ``score``, the regression family's names (``target=\"y\", "
            "prediction=\"y_hat\"``); give one name of each pair, not both.",
        ),
        "weight": ("weight : str, optional", "``sample_weight`` column (classification family)."),
        "query_doc_id": (
            "query, doc_id : str, optional",
            "Retrieval family only: the query id column (required) and the document id column "
            "(breaks score ties as trec_eval does; without it tied documents keep their input "
            "order, which a shuffle may change). The rows are shuffled so that each query's rows "
            "land in one partition (block), unless ``query_partitioned``.",
        ),
        "query_partitioned": (
            "query_partitioned : bool",
            "Retrieval only: every query's rows are already in one partition (skips the shuffle).",
        ),
        "compute": (
            "compute : bool",
            "True: return the computed values (a dict by name for a MetricSet or a mapping, the "
            "value for a single metric). False: return the merged accumulator(s) instead.",
        ),
        "by": (
            "by : str or list of str, optional",
            "Slice key column(s) (classification metrics): the values per slice, as "
            "``streammetrics.Sliced`` gives them in one process -- ``{key: values}``, keys the "
            "column's values (one name) or tuples of them (a list of names). With "
            "``compute=False`` the merged ``Sliced`` accumulator (around the metric, or a "
            "MetricSet of them).",
        ),
        "positive_index": (
            "positive_index : int",
            "A score column holding one vector per row -- an MLlib ``VectorUDT`` column such as "
            "``LogisticRegression``'s ``probability``, or a column of arrays: binary metrics take "
            "its element ``positive_index`` (default 1, the positive class of a 0/1 label); "
            "multiclass metrics take the whole vector as the (n, C) scores. Ignored for scalar "
            "score columns.",
        ),
        "nulls": (
            "nulls : {\"error\", \"skip\"}",
            "Rows holding a null (None, NaN, NA) in a used column -- label, score, weight, the "
            "``by`` keys, the query and document ids. ``\"error\"`` (default): a ValueError naming "
            "the column and the row (its position in its partition, its index label, its values). "
            "``\"skip\"``: such rows are dropped and a ``NullRowsSkipped`` warning says how many.",
        ),
        "as_frame": (
            "as_frame : bool",
            "Return the values as a DataFrame of the engine (Spark: a Spark DataFrame; Dask: a "
            "one-partition Dask DataFrame; Ray: a Dataset), ready to write back: columns "
            "``metric`` and ``value`` (float), one row per metric -- with ``by``, the slice key "
            "columns first and one row per slice and metric. An array value (a confusion matrix, "
            "per-class scores) gives one row per element, ``metric`` naming it ``cm[0, 1]``. "
            "Needs ``compute=True``.",
        ),
        "update_kwargs": (
            "**update_kwargs",
            "Passed to every ``update`` (e.g. ``n_relevant=`` / ``judged=`` mappings for retrieval).",
        ),
        # the Returns entry of every engine's evaluate
        "returns": (
            "dict, value, Metric or MetricSet",
            "The values (``compute=True``) or accumulators of the same shape as ``metrics``.",
        ),
    },
    # The columns of a record batch in ``streammetrics evaluate`` (streammetrics.cli.columns).
    "cli": {
        "batch": ("batch : pyarrow.RecordBatch", "The batch."),
        "path": ("path : str", "The file the batch comes from (for messages)."),
        "offset": ("offset : int", "Rows of the file before the batch (for messages)."),
    },
    # trec_eval's readers and measures (streammetrics.trec).
    "trec": {
        "path": ("path : str", "The file name, for error messages."),
        "run_path": ("path : str", "The run file."),
        "chunk_lines": ("chunk_lines : int, default 131072", "The lines parsed at once."),
        "first_line": ("first : int", "The line number of the chunk's first line (1-based)."),
        "first_of_lines": ("first : int", "The line number of ``lines[0]`` in the file (1-based)."),
        "opts": ("opts : Options", "The evaluation options (trec_eval version, fused rounding)."),
        "rel_level": ("rel_level : float", "The relevance level of the evaluation (``-l``)."),
        "max_docs": ("max_docs : int or None", "The ranking depth evaluated (``-M``; None: all)."),
        "run_chunk": ("chunk : bytes", "Whole run lines (as :func:`byte_chunks` yields them)."),
        "qrels_chunk": ("chunk : bytes", "Whole qrels lines (as :func:`byte_chunks` yields them)."),
        # Returns entries of the chunk readers (streammetrics.trec.binread)
        "ids": (
            "qids, docnos : list of bytes",
            "The query and document ids of the lines (blank and ``#`` lines skipped).",
        ),
        "line_numbers": ("line_numbers : numpy.ndarray of int64", "The line number of each row."),
        "chunk_count": (
            "lines : int",
            "The number of lines in the chunk, comments and blank lines included.",
        ),
        "rp": ("rp : ResultsPrefs", "The query's preference counts (:func:`form_prefs_counts`)."),
        "kind": (
            'kind : {"all", "ret", "imp"}',
            "Which preferences count: all of them, those between two retrieved documents, or those "
            "fulfilled or possible by a retrieved document over one not retrieved.",
        ),
    },
    # What the plot functions return (streammetrics.plot).
    "plot": {
        "ax": ("ax : matplotlib Axes, optional", "Where to draw; a new figure's axes by default."),
        "labels": ("labels : list of str, optional", "Names of a list's curves (default ``\"class i\"``)."),
        "digits": ("digits : int", "Decimals of the values in the legend."),
        "kwargs": ("**kwargs", "Passed to every ``Axes.plot`` call drawing a curve."),
    },
}

#: example data -> the doctest lines that set it up (a line ``{example: <name>}`` is replaced by them).
EXAMPLES: dict[str, str] = {
    # Two queries, each with its retrieved documents' grades and scores (q1: grades 2, 0; q2: 1, 0).
    "retrieval": (
        ">>> import streammetrics as sm\n"
        ">>> relevance, scores = [2, 0, 1, 0], [0.9, 0.8, 0.4, 0.1]\n"
        '>>> queries = ["q1", "q1", "q2", "q2"]'
    ),
    # One judgment group's preferences (d1 > d2 > d3) and a ranking d2, d1, d4 (d3 not retrieved).
    "prefs": (
        ">>> from streammetrics.trec import preferences as P\n"
        '>>> lines = [("u1", "0", "d1", 2.0), ("u1", "0", "d2", 1.0), ("u1", "0", "d3", 0.0)]\n'
        '>>> rp = P.form_prefs_counts(lines, ["d2", "d1", "d4"])  # d3 is not retrieved'
    ),
    # The package's example run file (q1 retrieves d2, d1; q2 retrieves d3; run id "sys").
    "run_file": (
        ">>> from importlib.resources import files\n"
        '>>> run = str(files("streammetrics") / "data" / "example.run")  # q1: d2, d1; q2: d3'
    ),
    # Binary labels and scores, one positive scored below a negative (AUROC 0.75).
    "ranking": (
        ">>> import streammetrics as sm\n"
        ">>> y_true, y_score = [0, 0, 1, 1], [0.1, 0.4, 0.35, 0.8]"
    ),
    # Binary labels and predictions, and three-class ones.
    "confusion": (
        ">>> import streammetrics as sm\n"
        ">>> y_true, y_pred = [0, 1, 1, 0, 1], [1, 1, 0, 0, 1]\n"
        ">>> y3_true, y3_pred = [0, 1, 2, 2], [0, 2, 2, 1]"
    ),
}

# A line holding only ``{family: name, name, ...}``.
_PLACEHOLDER = re.compile(
    r"^(?P<indent>[ \t]*)\{(?P<family>[a-z]+):\s*(?P<names>\w+(?:\s*,\s*\w+)*)\}[ \t]*$"
)
_WIDTH = 100  # the width descriptions are wrapped to, indentation included


def _entry(indent: str, header: str, description: str) -> list[str]:
    body = textwrap.wrap(description, width=_WIDTH - len(indent) - 4, break_on_hyphens=False)
    return [indent + header] + [indent + "    " + line for line in body]


def fill(text: str) -> str:
    """The docstring ``text`` with every placeholder line replaced by the entries it names.

    Parameters
    ----------
    text : str
        A docstring, as written in the source or as read from ``__doc__``.

    Returns
    -------
    str
        The same text where each line ``{family: name, ...}`` is replaced by those entries of
        :data:`SNIPPETS` (a line ``{example: name}``: the doctest lines ``EXAMPLES[name]``),
        indented as the line was; text without placeholders is returned as is.

    Raises
    ------
    KeyError
        A placeholder names a family or an argument that :data:`SNIPPETS` does not hold, or
        example data that :data:`EXAMPLES` does not hold.

    Examples
    --------
    >>> print(fill("Parameters\\n----------\\n{retrieval: k}"))
    Parameters
    ----------
    k : int
        The rank cutoff, >= 1.
    """
    if "{" not in text:
        return text
    out: list[str] = []
    for line in text.split("\n"):
        match = _PLACEHOLDER.match(line)
        if match is None:
            out.append(line)
            continue
        family = match["family"]
        if family == "example":
            if match["names"] not in EXAMPLES:
                raise KeyError(f"docstring placeholder: no example data {match['names']!r}")
            out.extend(match["indent"] + line for line in EXAMPLES[match["names"]].split("\n"))
            continue
        if family not in SNIPPETS:
            raise KeyError(f"docstring placeholder: unknown family {family!r} in {line.strip()!r}")
        for name in (n.strip() for n in match["names"].split(",")):
            if name not in SNIPPETS[family]:
                raise KeyError(f"docstring placeholder: {family!r} has no entry {name!r}")
            out.extend(_entry(match["indent"], *SNIPPETS[family][name]))
    return "\n".join(out)


def filled(obj: _T) -> _T:
    """Decorator: fill the placeholders of a function's or class's docstring (see :func:`fill`).

    Parameters
    ----------
    obj : function or class
        The object whose ``__doc__`` holds placeholder lines.

    Returns
    -------
    function or class
        ``obj`` itself, its ``__doc__`` filled in place.

    Examples
    --------
    >>> @filled
    ... def f(sample_weight=None):
    ...     '''{sklearn: sample_weight}'''
    >>> print(f.__doc__)
    sample_weight : array-like of shape (n,), optional
        Non-negative weights.
    """
    doc = getattr(obj, "__doc__", None)
    if doc:
        obj.__doc__ = fill(doc)
    return obj

