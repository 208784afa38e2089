"""Which trec_eval rules ``streammetrics trec`` / ``trec-compare`` follow is said where it is used
(issue #28): ``trec --help`` names the default (trec_eval 9.0.8's, as pytrec_eval and ir_measures)
and that ``--trec-version 10`` is the one reproducing trec_eval 10.0's quicktest; ``trec-compare``'s
table and JSON name the rules of the run; docs/trec.md makes the quicktest claim for version 10."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from streammetrics.__main__ import main

DOC = Path(__file__).resolve().parents[2] / "docs" / "trec.md"


def test_trec_help_names_the_default_rules(capsys):
    assert main(["trec", "--help"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "trec_eval 9.0.8's by default (as pytrec_eval and ir_measures" in text
    assert "--trec-version 10 follows trec_eval 10.0 and reproduces its quicktest line for line" in text


@pytest.mark.parametrize("version", ["9", "10", None])
def test_trec_compare_names_the_rules_used(tmp_path, capsys, version):
    qrels, run1, run2 = tmp_path / "qrels", tmp_path / "a", tmp_path / "b"
    qrels.write_text("q1 0 d1 1\nq1 0 d2 0\nq2 0 d3 1\n")
    run1.write_text("q1 Q0 d1 1 2 a\nq1 Q0 d2 2 1 a\nq2 Q0 d3 1 1 a\n")
    run2.write_text("q1 Q0 d2 1 2 b\nq1 Q0 d1 2 1 b\nq2 Q0 d3 1 1 b\n")
    out_json = tmp_path / "out.json"
    extra = [] if version is None else ["--trec-version", version]
    assert main(["trec-compare", str(qrels), str(run1), str(run2), "--json", str(out_json), *extra]) == 0
    first = capsys.readouterr().out.splitlines()[0]
    want = version or "9"
    assert f"trec_eval {want} rules (--trec-version {want})" in first
    assert json.loads(out_json.read_text())["trec_version"] == int(want)


def test_the_quicktest_claim_names_the_version():
    text = " ".join(DOC.read_text().split())
    claims = [m.start() for m in re.finditer(r"reproduces every line", text)]
    assert claims
    for at in claims:  # each claim says under which --trec-version it holds
        assert "--trec-version 10" in text[max(0, at - 80) : at + 200]
    assert "trec_eval 9.0.8" in text
