"""TREC evaluation: trec_eval's measures, options and output format (``streammetrics trec``).

``streammetrics trec QRELS RUN [-m MEASURE ...] [-q] [-c] [-l LEVEL] [-M N] [-J] [-N N] [-n] [-Z FILE]
[--trec-version 9|10]`` prints ``measure<TAB>qid|all<TAB>value`` lines exactly as trec_eval does
(names, order, ``%6.4f``), so scripts can switch. Every measure of trec_eval's ``all_trec`` set is
computed with trec_eval's own definitions (per-query kernels in :mod:`._kernels`, the measure table
in :mod:`._measures`), with its parameter syntax (``P.5,10``, ``ndcg_cut.10,20``,
``iprec_at_recall..1,.5``, ``Rprec_mult.0.5``, ``utility.2,-1,0,0``, ``11pt_avg..25,.5``,
``ndcg.1=3,2=9``, ``success.1,5``, ``relstring.20``) and nicknames (``official``, the default,
``all_trec``, ``set``). Input is read as trec_eval reads it: ``#`` comment lines, extra trailing run
fields, any line order (the run is grouped by query in memory, as trec_eval does).

Where trec_eval's versions differ, ``--trec-version`` picks one: 9 (default, as pytrec_eval and
ir_measures) ranks float32-rounded scores and puts the recall cutoffs of ``iprec_at_recall`` /
``11pt_avg`` at ``(long)(c*R + 0.9)`` relevant documents; 10 ranks double scores, uses
``lround(c*R)``, and with ``-c`` also prints the per-query lines of queries missing from the run.

Differences from trec_eval: a score that is not a number is an error (trec_eval reads it as 0);
``name=gain`` pairs of ``ndcg``/``G``/``rbp`` set the gains (trec_eval 10.0 ignores them: its pair
names are not terminated); a qrels query absent from the run is skipped without ``-c`` (trec_eval 10.0
exits with an error); the preference and judgment-group formats (``-R prefs|qrels_prefs|qrels_jg``)
are not supported yet. :func:`trec_metrics` gives the streaming accumulators of the common measures.
"""

from __future__ import annotations

from .accumulators import trec_metrics
from .cli import add_parser, main, run
from .evaluate import DEFAULT_MEASURES, evaluate_files
from .readers import Qrels, RunChunk, TrecFormatError, iter_run, read_qrels, read_run_chunks
from .runfile import GroupedRun, read_run_grouped

__all__ = [
    "read_qrels",
    "iter_run",
    "read_run_chunks",
    "read_run_grouped",
    "trec_metrics",
    "evaluate_files",
    "main",
    "add_parser",
    "run",
    "DEFAULT_MEASURES",
    "Qrels",
    "RunChunk",
    "GroupedRun",
    "TrecFormatError",
]
