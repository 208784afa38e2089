"""``streammetrics trec``: trec_eval's values and output format from TREC files, vs pytrec_eval."""

from __future__ import annotations

import numpy as np
import pytest
import pytrec_eval
import retrieval_oracles as O

from streammetrics.__main__ import main
from streammetrics.trec import evaluate_files, iter_run, read_qrels, read_run_chunks

MEASURES = [
    "map",
    "map_cut_5",
    "map_cut_10",
    "P_1",
    "P_5",
    "P_10",
    "recall_5",
    "Rprec",
    "recip_rank",
    "ndcg",
    "ndcg_cut_3",
    "ndcg_cut_10",
    "set_P",
    "set_recall",
    "iprec_at_recall_0.00",
    "iprec_at_recall_0.30",
    "iprec_at_recall_0.70",
    "iprec_at_recall_1.00",
    "11pt_avg",
]


def write(tmp_path, qrels, run, extra_qrels=None):
    qp, rp = tmp_path / "qrels.txt", tmp_path / "run.txt"
    with open(qp, "w") as f:
        for q, d in {**qrels, **(extra_qrels or {})}.items():
            for doc, g in d.items():
                f.write(f"{q} 0 {doc} {g}\n")
    with open(rp, "w") as f:
        for q, d in run.items():
            for i, (doc, s) in enumerate(d.items()):
                f.write(f"{q} Q0 {doc} {i + 1} {s!r} run_x\n")
    return str(qp), str(rp)


def parse(out: str) -> dict[tuple[str, str], str]:
    rows = {}
    for line in out.splitlines():
        name, qid, value = line.split("\t")
        assert name == name.rstrip() or len(name) == 22
        rows[(name.strip(), qid)] = value
    return rows


def near_ties(rng, run):
    """Scores that differ only below float32 precision: trec_eval ties them."""
    out = {}
    for q, d in run.items():
        out[q] = {doc: float(s) + float(rng.integers(0, 3)) * 1e-9 for doc, s in d.items()}
    return out


@pytest.mark.parametrize("seed", [0, 1])
def test_trec_command_matches_pytrec_eval(tmp_path, capsys, seed):
    rng = np.random.default_rng(seed)
    qrels, run = O.random_trec(rng, 80)
    run = near_ties(rng, run)
    run["q_unjudged"] = {"dx": 1.0}  # not in the qrels: trec_eval skips it
    qp, rp = write(tmp_path, qrels, run)
    args = ["trec", qp, rp, "-q", "--digits", "17"]
    for m in MEASURES + ["num_q", "num_ret", "num_rel", "num_rel_ret", "runid"]:
        args += ["-m", m]
    assert main(args) == 0
    rows = parse(capsys.readouterr().out)
    trec_names = {m for m in MEASURES if not m.startswith("iprec")} | {"iprec_at_recall"}
    ev = pytrec_eval.RelevanceEvaluator(qrels, trec_names | {"num_ret", "num_rel", "num_rel_ret"})
    want = ev.evaluate(run)
    assert set(want) == set(qrels)
    for q, vals in want.items():
        for m in MEASURES:
            assert abs(float(rows[(m, q)]) - vals[m]) <= 1e-12, (m, q)
    for m in MEASURES:
        mean = float(np.mean([want[q][m] for q in want]))
        assert abs(float(rows[(m, "all")]) - mean) <= 1e-12, m
    for m in ("num_ret", "num_rel", "num_rel_ret"):
        assert int(rows[(m, "all")]) == sum(int(want[q][m]) for q in want)
    assert rows[("num_q", "all")] == str(len(want)) and rows[("runid", "all")] == "run_x"


def test_default_output_format_and_families(tmp_path, capsys):
    qrels = {"1": {"a": 1, "b": 0, "c": 2}}
    run = {"1": {"a": 0.5, "b": 0.9, "c": 0.1}}
    qp, rp = write(tmp_path, qrels, run)
    assert main(["trec", qp, rp]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == f"{'runid':<22}\tall\trun_x"
    assert out[1] == f"{'num_q':<22}\tall\t1"
    assert any(line.startswith("map ") and line.endswith("\tall\t0.5833") for line in out)
    assert [line.split()[0] for line in out if line.startswith("P_")] == [
        f"P_{k}" for k in (5, 10, 15, 20, 30, 100, 200, 500, 1000)
    ]
    with open(tmp_path / "o.txt", "w") as sink:
        res = evaluate_files(qp, rp, ["P.1,2", "ndcg_cut.2", "iprec_at_recall.0.5"], out=sink)
    assert list(res) == ["iprec_at_recall_0.50", "P_1", "P_2", "ndcg_cut_2"]  # trec_eval's measure order
    assert res["P_1"] == 0.0 and res["P_2"] == 0.5 and abs(res["iprec_at_recall_0.50"] - 2 / 3) < 1e-15


def test_complete_flag_counts_queries_missing_from_the_run(tmp_path, capsys):
    qrels = {"1": {"a": 1}, "2": {"b": 1}}
    run = {"1": {"a": 1.0}}
    qp, rp = write(tmp_path, qrels, run)
    assert main(["trec", qp, rp, "-m", "map", "-m", "num_q"]) == 0
    rows = parse(capsys.readouterr().out)
    assert rows[("map", "all")] == "1.0000" and rows[("num_q", "all")] == "1"
    assert main(["trec", qp, rp, "-m", "map", "-m", "num_q", "-c"]) == 0
    rows = parse(capsys.readouterr().out)
    assert rows[("map", "all")] == "0.5000" and rows[("num_q", "all")] == "2"


@pytest.mark.parametrize(
    "qrels_text,run_text,message",
    [
        ("1 0 a 1\n1 0 b\n", "1 Q0 a 1 1.0 r\n", "qrels.txt:2: expected 4 fields"),
        ("1 0 a x\n", "1 Q0 a 1 1.0 r\n", "qrels.txt:1: grade 'x' is not a number"),
        ("1 0 a 1\n1 0 a 2\n", "1 Q0 a 1 1.0 r\n", "qrels.txt:2: duplicate judgment"),
        ("1 0 a 1\n", "1 Q0 a 1 1.0 r\n1 Q0 b 2 r\n", "run.txt:2: expected 6 fields"),
        ("1 0 a 1\n", "1 Q0 a 1 high r\n", "run.txt:1: score 'high' is not a number"),
        ("1 0 a 1\n", "1 Q0 a 1 nan r\n", "run.txt:1: score is NaN"),
        ("1 0 a 1\n", "1 Q0 a 1 1 r\n1 Q0 a 2 0.5 r\n", "run.txt:2: duplicate document 'a'"),
    ],
)
def test_malformed_files_name_file_and_line(tmp_path, capsys, qrels_text, run_text, message):
    qp, rp = tmp_path / "qrels.txt", tmp_path / "run.txt"
    qp.write_text(qrels_text)
    rp.write_text(run_text)
    assert main(["trec", str(qp), str(rp), "-m", "map"]) == 2
    err = capsys.readouterr().err
    assert message in err and "streammetrics trec: error:" in err


def test_unknown_measure_and_readers(tmp_path, capsys):
    qp, rp = tmp_path / "qrels.txt", tmp_path / "run.txt"
    qp.write_text("1 0 a 2\n\n1 0 b 0\n")
    rp.write_text("1 Q0 a 1 1.5 r\n1 Q0 b 2 0.5 r\n2 Q0 c 1 3 r\n")
    assert read_qrels(str(qp)).docs == {"1": {"a": 2.0, "b": 0.0}}
    assert [(q, d) for q, d, _, _ in iter_run(str(rp))] == [("1", ["a", "b"]), ("2", ["c"])]
    assert main(["trec", str(qp), str(rp), "-m", "bpref_x"]) == 2
    assert "measure 'bpref_x' is not supported" in capsys.readouterr().err


@pytest.mark.parametrize("chunk_lines", [1, 2, 3, 7, 1000])
def test_run_chunks_carry_queries_across_chunk_boundaries(tmp_path, chunk_lines):
    rng = np.random.default_rng(chunk_lines)
    rows, expected = [], []
    for q in range(6):
        n = int(rng.integers(1, 6))
        docs = [f"d{j}" for j in rng.permutation(10)[:n]]
        scores = rng.integers(0, 5, n).astype(float).tolist()
        expected.append((f"q{q}", docs, scores))
        rows += [f"q{q} Q0 {d} {i + 1} {s} rid" for i, (d, s) in enumerate(zip(docs, scores, strict=True))]
        rows.append("")  # blank lines are skipped
    path = tmp_path / "run.txt"
    path.write_text("\n".join(rows) + "\n")
    got = []
    for chunk in read_run_chunks(str(path), chunk_lines=chunk_lines):
        pos = 0
        for q, n in zip(chunk.qids, chunk.lengths.tolist(), strict=True):
            got.append((q, chunk.docs[pos : pos + n], chunk.scores[pos : pos + n].tolist()))
            pos += n
    assert got == expected
    # a duplicate or a reappearing query split over chunks is still found, with its line
    path.write_text("a Q0 x 1 1 r\na Q0 y 2 1 r\na Q0 x 3 1 r\nb Q0 x 1 1 r\na Q0 z 1 1 r\n")
    with pytest.raises(ValueError, match="run.txt:3: duplicate document 'x' for query 'a'"):
        list(read_run_chunks(str(path), chunk_lines=chunk_lines))
    path.write_text("a Q0 x 1 1 r\nb Q0 x 1 1 r\na Q0 z 1 1 r\n")
    with pytest.raises(ValueError, match="run.txt:3: query 'a' reappears"):
        list(read_run_chunks(str(path), chunk_lines=chunk_lines))


def test_trec_runs_on_the_core_dependencies_alone(tmp_path):
    """``streammetrics trec`` with every optional package made unimportable (numpy and
    sortedcontainers only) prints what it prints with them."""
    import subprocess
    import sys

    qp, rp = tmp_path / "qrels.txt", tmp_path / "run.txt"
    qp.write_text("1 0 a 1\n1 0 b 0\n2 0 c 2\n")
    rp.write_text("1 Q0 a 1 0.5 r\n1 Q0 b 2 0.9 r\n2 Q0 c 1 1.0 r\n")
    code = (
        "import sys\n"
        "for m in ('pyarrow', 'pandas', 'scipy', 'sklearn', 'torch', 'pytrec_eval', 'ir_measures', 'ranx'):\n"
        "    sys.modules[m] = None\n"
        "from streammetrics.__main__ import main\n"
        f"sys.exit(main(['trec', {str(qp)!r}, {str(rp)!r}, '-m', 'all_trec']))\n"
    )
    blocked = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert blocked.returncode == 0, blocked.stderr
    free = subprocess.run([sys.executable, "-m", "streammetrics", "trec", str(qp), str(rp), "-m", "all_trec"],
                          capture_output=True, text=True, check=False)  # fmt: skip
    assert blocked.stdout == free.stdout and "map" in free.stdout


def test_help_and_readme_name_the_trec_eval_version_of_each_recall_cutoff_rule(capsys):
    """``--help`` and the retrieval guide (docs/retrieval.md) say which trec_eval version each iprec_at_recall / 11pt_avg
    cutoff rule follows, and which is the default."""
    from pathlib import Path

    assert main(["trec", "--help"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "--trec-version {9,10}" in text and "(default 9, as pytrec_eval and ir_measures)" in text
    assert "9 rounds scores to float32" in text and "at (long)(c*R + 0.9) relevant documents" in text
    assert "10 keeps scores as doubles, uses lround(c*R)" in text
    readme = " ".join((Path(__file__).resolve().parents[2] / "docs" / "retrieval.md").read_text().split())
    assert "`--trec-version 9` (default, as pytrec_eval and ir_measures" in readme
    assert "`(long)(c·R + 0.9)`) or `--trec-version 10` (double scores, `lround(c·R)`)" in readme


def test_trec_commands_and_library_import_nothing_beyond_the_core(tmp_path):
    """With an import hook that allows only the standard library, numpy and sortedcontainers (the
    core dependencies), ``streammetrics trec`` (qrels and prefs), ``trec-compare`` (--json) and
    ``sm.trec.TrecMeasures`` run and print what they print without it."""
    import json
    import subprocess
    import sys

    qp, rp, rp2 = tmp_path / "qrels.txt", tmp_path / "run.txt", tmp_path / "run2.txt"
    qp.write_text("1 0 a 1\n1 0 b 0\n2 0 c 2\n2 0 a 1\n3 0 b 1\n")
    rp.write_text("1 Q0 a 1 0.5 r\n1 Q0 b 2 0.9 r\n2 Q0 c 1 1.0 r\n3 Q0 a 1 1.0 r\n3 Q0 b 2 0.2 r\n")
    rp2.write_text("1 Q0 a 1 0.9 s\n2 Q0 a 1 1.0 s\n2 Q0 c 2 0.5 s\n3 Q0 b 1 1.0 s\n")
    hook = (
        "import sys, importlib.abc\n"
        "class Core(importlib.abc.MetaPathFinder):\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        top = name.split('.')[0]\n"
        "        if top in sys.stdlib_module_names or top in ('numpy', 'sortedcontainers', 'streammetrics'):\n"
        "            return None\n"
        "        raise ImportError('not a core dependency: ' + name)\n"
        "sys.meta_path.insert(0, Core())\n"
    )
    lib = (
        "from streammetrics.trec import TrecMeasures, trec_batch\n"
        "acc = TrecMeasures(['official', 'nDCG@10', 'RBP(p=0.8)'])\n"
        "trec_batch({'1': {'a': 1, 'b': 0}}, {'1': {'a': 0.5, 'b': 0.9}}).feed(acc)\n"
        "print(sorted(acc.compute().items()))\n"
    )
    cli = "import sys\nfrom streammetrics.__main__ import main\nsys.exit(main(sys.argv[1:]))\n"
    jsons = [tmp_path / "a.json", tmp_path / "b.json"]
    cases = [
        (cli, ["trec", str(qp), str(rp), "-m", "all_trec", "-m", "nDCG@10", "-q", "-c"]),
        (cli, ["trec", str(qp), str(rp), "-m", "all_prefs", "-R", "qrels_prefs", "-q"]),
        (lib, []),
    ]
    for code, args in cases:
        outs = [subprocess.run([sys.executable, "-c", pre + code, *args], capture_output=True, text=True,
                               check=False) for pre in (hook, "")]  # fmt: skip
        assert outs[0].returncode == 0, outs[0].stderr
        assert outs[0].stdout == outs[1].stdout and outs[0].stdout.strip()
    for pre, out in zip((hook, ""), jsons, strict=True):
        args = ["trec-compare", str(qp), str(rp), str(rp2), "-m", "AP", "--permutations", "8", "--json", str(out)]
        done = subprocess.run([sys.executable, "-c", pre + cli, *args], capture_output=True, text=True, check=False)
        assert done.returncode == 0, done.stderr
    assert json.loads(jsons[0].read_text()) == json.loads(jsons[1].read_text())
