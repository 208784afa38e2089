"""TREC evaluation: trec_eval's measures, options and output format (``streammetrics trec``).

This package is the library; the commands ``streammetrics trec`` and ``streammetrics
trec-compare`` are :mod:`streammetrics.cli.trec` and :mod:`streammetrics.cli.trec_compare`.

``streammetrics trec QRELS RUN [-m MEASURE ...] [-q] [-c] [-l LEVEL] [-M N] [-J] [-N N] [-n] [-Z FILE]
[-R qrels|qrels_jg|prefs|qrels_prefs] [--trec-version 9|10]`` prints ``measure<TAB>qid|all<TAB>value``
lines exactly as trec_eval does (names, order, ``%6.4f``), so scripts can switch; it reproduces
every line of the 15 cases of trec_eval's own quicktest. Every measure of trec_eval is computed with
trec_eval's own definitions (per-query kernels in :mod:`._kernels`, :mod:`.judgment_groups`,
:mod:`.preferences`; the measure table in :mod:`._measures`), with its parameter syntax (``P.5,10``,
``ndcg_cut.10,20``, ``iprec_at_recall..1,.5``, ``Rprec_mult.0.5``, ``utility.2,-1,0,0``,
``11pt_avg..25,.5``, ``ndcg.1=3,2=9``, ``success.1,5``, ``relstring.20``) and nicknames
(``official``, the default, ``all_trec``, ``set``, ``all_prefs``, ``prefs``, ``qrels_jg``). Input is
read as trec_eval reads it: ``#`` comment lines, extra trailing run fields, any line order. A run
whose queries are contiguous is evaluated query by query in bounded memory; any other order is
grouped by query with an external sort, also in bounded memory (``--memory-lines``; trec_eval
reads the whole run into memory).

Where trec_eval's versions differ, ``--trec-version`` picks one: 9 (default, as pytrec_eval and
ir_measures) ranks float32-rounded scores and puts the recall cutoffs of ``iprec_at_recall`` /
``11pt_avg`` at ``(long)(c*R + 0.9)`` relevant documents (``--fused-cutoffs``: with ``c*R + 0.9``
rounded once, as arm64/macOS builds compute it, which the quicktest's ``v9/`` outputs follow); 10
ranks double scores, uses ``lround(c*R)``, and with ``-c`` also prints the per-query lines of
queries missing from the run.

Differences from trec_eval: a score or grade that is not a number is an error (trec_eval reads it
as 0); ``rbp`` rescales gains outside [0, 1] from a range that starts at 0 (trec_eval leaves it
uninitialised); a qrels query absent from the run is skipped
without ``-c`` (trec_eval 10.0 exits with an error); a document judged twice in a query is an error
when the qrels are read (trec_eval: when that query is evaluated). As in trec_eval, a query left
with no document by ``-J`` (or ``-M 0``) has ``iprec_at_recall`` (at the cutoffs of 0 relevant
documents) and ``11pt_avg`` 0/0, printed as C's ``printf`` prints that NaN (``-nan`` on x86-64,
``nan`` on arm64), and so are their means. :func:`trec_metrics` gives the
library's streaming accumulators of the common measures; :class:`TrecMeasures` every measure as an
accumulator (the preference and judgment-group measures with ``judgments="prefs"``,
``"qrels_prefs"`` or ``"qrels_jg"``, fed each query's judgment rows).

Beyond trec_eval: ir_measures' names (``AP``, ``AP@10``, ``nDCG``, ``nDCG@10``, ``P@5``, ``R@100``,
``RR``, ``RR@10``, ``Rprec``, ``Bpref``, ``Judged@10``, ``NumRet``, ``NumRel``, ``NumRelRet``,
``iprec@0.5``, ``infAP``, and ``ERR@k``, ``RBP(p=0.8)`` which trec_eval lacks) are accepted
wherever a measure is, mapped to trec_eval's measures as ir_measures maps them and printed under
the name given (:mod:`.irnames`, :mod:`._ir_kernels`). :func:`per_query_values` gives each run's
per-query values as an array. ``streammetrics trec-compare QRELS RUN1 RUN2 ...`` (:mod:`.compare`)
compares runs against the first: means, paired differences, the paired t-test, the randomization
(sign-flip) test, the bootstrap interval of the mean difference, Holm-adjusted across runs, as a
table, ``--json`` and ``--latex``; the tests (:mod:`.significance`) need numpy only.

Diversity: ndeval's intent-aware measures (``alpha_nDCG@20``, ``ERR_IA@20``, ``NRBP``, ...; see
:mod:`.diversity`) on subtopic qrels (``topic subtopic docno judgment``, :mod:`.subtopics`), in
``streammetrics trec`` (:mod:`.diversity_files`) and as the accumulator :class:`DiversityMeasures`
(:mod:`.diversity_stream`), equal to pyndeval.
"""

from __future__ import annotations

from .accumulators import trec_metrics
from .diversity_stream import DiversityMeasures
from .evaluate import DEFAULT_MEASURES, evaluate_files
from .perquery import PerQuery, per_query_values
from .readers import Qrels, RunChunk, TrecFormatError, iter_run, read_qrels, read_run_chunks
from .runfile import GroupedRun, read_run_grouped
from .stream import NOT_IN_QRELS, UNJUDGED, TrecBatch, TrecMeasure, TrecMeasures, trec_batch

__all__ = [
    "read_qrels",
    "iter_run",
    "read_run_chunks",
    "read_run_grouped",
    "trec_metrics",
    "evaluate_files",
    "per_query_values",
    "PerQuery",
    "DEFAULT_MEASURES",
    "Qrels",
    "RunChunk",
    "GroupedRun",
    "TrecFormatError",
    "TrecMeasures",
    "TrecMeasure",
    "TrecBatch",
    "trec_batch",
    "NOT_IN_QRELS",
    "UNJUDGED",
    "DiversityMeasures",
]
