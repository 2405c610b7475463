"""The command line on the bundled example and on files it writes itself."""

import argparse
import csv
import json
import subprocess
import sys

import numpy as np
import pytest

import tealeaves as tl
from tealeaves.cli import main


def test_heldout_table_json_and_csv(example, tmp_path, capsys):
    model, docs, model_path, docs_path = example
    out_json, out_csv = tmp_path / "r.json", tmp_path / "r.csv"
    code = main(["heldout", model_path, docs_path, "--methods", "exact,left-to-right,chib",
                 "--particles", "5", "--chain-length", "50", "--runs", "3", "--seed", "4",
                 "--json", str(out_json), "--csv", str(out_csv), "--quiet"])
    assert code == 0
    out = capsys.readouterr().out
    assert "left-to-right(particles=5, variant=smc, rejuvenate=128)" in out and "vs exact" in out
    data = json.loads(out_json.read_text())
    assert [r["method"] for r in data["results"]] == ["exact", "left-to-right", "chib"]
    lr = data["results"][1]
    assert lr["params"] == {"particles": 5, "variant": "smc", "rejuvenate": 128, "resampling": "systematic",
                            "order": "peaked", "ess": 1.0}
    assert lr["runs"] == 3
    assert len(lr["documents"]["log_prob"]) == len(docs) and lr["tokens"] == docs.num_tokens
    # the CLI gives the same numbers as the Python API with the same seed
    api = tl.heldout(model, docs, method="left-to-right", particles=5, runs=3, seed=4)
    assert lr["total"] == pytest.approx(api.total, rel=1e-12)
    rows = list(csv.DictReader(out_csv.open()))
    assert len(rows) == 3 * len(docs)
    assert float(rows[len(docs)]["log_prob"]) == pytest.approx(api.doc_log_prob[0], rel=1e-12)


def test_completion_command(example, tmp_path, capsys):
    _, docs, model_path, docs_path = example
    out_json = tmp_path / "c.json"
    assert main(["completion", model_path, docs_path, "--methods", "exact,left-to-right",
                 "--observed", "0.5", "--json", str(out_json), "--quiet"]) == 0
    data = json.loads(out_json.read_text())
    assert data["command"] == "completion"
    assert data["results"][0]["tokens"] == sum(d.size - d.size // 2 for d in docs)
    assert abs(data["results"][1]["total"] - data["results"][0]["total"]) < 3.0


def test_synth_then_heldout_with_ids(tmp_path, capsys):
    assert main(["synth", str(tmp_path / "m.npz"), str(tmp_path / "d.txt"), "--topics", "4",
                 "--words", "50", "--docs", "3", "--length", "8", "--seed", "2"]) == 0
    model = tl.load_model(tmp_path / "m.npz")
    docs = tl.read_corpus(tmp_path / "d.txt", vocab=model.vocab)
    assert len(docs) == 3 and docs.num_tokens == 24 and docs.oov_tokens == 0
    ids = tmp_path / "ids.txt"
    ids.write_text("\n".join(" ".join(map(str, d)) for d in docs) + "\n")
    (tmp_path / "vocab.txt").write_text("\n".join(model.vocab) + "\n")
    j1, j2 = tmp_path / "a.json", tmp_path / "b.json"
    assert main(["heldout", str(tmp_path / "m.npz"), str(ids), "--format", "ids", "--vocab",
                 str(tmp_path / "vocab.txt"), "--method", "exact", "--json", str(j1)]) == 0
    assert main(["heldout", str(tmp_path / "m.npz"), str(tmp_path / "d.txt"), "--method", "exact",
                 "--json", str(j2)]) == 0
    a, b = (json.loads(p.read_text())["results"][0]["total"] for p in (j1, j2))
    assert a == b


def test_methods_and_version(capsys):
    assert main(["methods"]) == 0
    out = capsys.readouterr().out
    for name in tl.method_names():
        assert name in out
    assert "--variant" in out
    assert main(["--version"]) == 0 and tl.__version__ in capsys.readouterr().out


def test_demo_runs_every_method_against_exact(tmp_path):
    out_json = tmp_path / "demo.json"
    proc = subprocess.run([sys.executable, "-m", "tealeaves", "demo", "--synthetic", "--runs", "2", "--quiet",
                           "--json", str(out_json)], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    data = json.loads(out_json.read_text())
    by = {r["label"]: r for r in data["results"]}
    exact = by["exact"]["total"]
    assert {r["method"] for r in data["results"]} == set(tl.method_names())
    assert by["harmonic-mean(burn_in=500, samples=500)"]["total"] > exact + 50
    assert abs(by["chib(chain_length=400, iterations=10)"]["total"] - exact) < 1.0
    assert "vs exact" in proc.stdout


def test_help_has_examples():
    proc = subprocess.run([sys.executable, "-m", "tealeaves", "heldout", "--help"],
                          capture_output=True, text=True)
    assert proc.returncode == 0 and "example: tealeaves heldout" in proc.stdout
    assert np.all([flag in proc.stdout for flag in ("--particles", "--runs", "--workers", "--json")])


def _parsers(parser, path=("tealeaves",)):
    """Every parser and sub-parser of the command, with its command words."""
    yield path, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _parsers(sub, (*path, name))


def _option_help(parser, action) -> str:
    formatter = parser._get_formatter()
    formatter.add_argument(action)
    return formatter.format_help()


def test_every_help_states_each_default_and_nothing_internal():
    """Walk every command's parser: an option with a default shows it in its rendered help, an option
    without one still says what it is, and no help text mentions the project's issues."""
    import re

    from tealeaves.cli.main import _shown_default, build_parser

    silent, unstated, internal = [], [], []
    for path, parser in _parsers(build_parser()):
        if re.search(r"\bissues?\s*#?\d", parser.format_help(), re.IGNORECASE):
            internal.append(" ".join(path))
        for a in parser._actions:
            if not a.option_strings or isinstance(a, argparse._HelpAction | argparse._VersionAction) \
                    or a.help is argparse.SUPPRESS:
                continue
            shown = _option_help(parser, a)
            invocation = ", ".join(a.option_strings)
            text = shown.split(invocation, 1)[-1]
            flag = isinstance(a.default, bool) or a.default is None
            # the default's value itself is shown: "defaults to 20" of another tool is not ours
            value = None if flag else _shown_default(a).replace("%%", "%")
            if not flag and ("default" not in text or value not in " ".join(text.split())):
                unstated.append(f"{' '.join(path)} {a.option_strings[-1]} (default {a.default!r})")
            if not re.search(r"[a-z]", text.replace(a.metavar or a.dest.upper(), "")):
                silent.append(f"{' '.join(path)} {a.option_strings[-1]}")
    assert not internal, internal
    assert not unstated, unstated
    assert not silent, silent


@pytest.fixture
def two_models(tmp_path):
    a = tl.synthetic.random_model(6, 120, beta=0.05, seed=1, name="a")
    b = tl.synthetic.perturb_phi(a, 0.4, seed=2).with_params(name="b")
    tl.save_model(a, tmp_path / "a.npz")
    tl.save_model(b, tmp_path / "b.npz")
    tl.corpus.write_text_corpus(tl.synthetic.generate(a, 8, 30, seed=3), tmp_path / "d.txt")
    return tmp_path


def test_compare_command(two_models, capsys):
    d = two_models
    out_json = d / "c.json"
    assert main(["compare", str(d / "a.npz"), str(d / "b.npz"), str(d / "d.txt"), "--temperatures",
                 "100", "--start-temperatures", "100", "--chains", "2", "--json", str(out_json),
                 "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "verdict: A (a) is better" in out and "documents favouring A: " in out and "gap" in out
    data = json.loads(out_json.read_text())["result"]
    assert data["method"] == "ratio-ais" and data["total"] > 0 and len(data["documents"]["log_ratio"]) == 8
    api = tl.compare(tl.load_model(d / "a.npz"), tl.load_model(d / "b.npz"),
                     tl.read_corpus(d / "d.txt", vocab=tl.load_model(d / "a.npz").vocab),
                     temperatures=100, start_temperatures=100, chains=2)
    assert data["total"] == pytest.approx(api.total, rel=1e-12)
    assert main(["compare", str(d / "a.npz"), str(d / "b.npz"), str(d / "d.txt"), "--method",
                 "difference", "--particles", "3", "--quiet"]) == 0
    assert "difference of two left-to-right runs" in capsys.readouterr().out


def test_curve_command(two_models, capsys):
    d = two_models
    out_json = d / "curve.json"
    assert main(["curve", str(d / "b.npz"), str(d / "a.npz"), str(d / "d.txt"), "--temperatures", "50",
                 "--first-temperatures", "200", "--json", str(out_json), "--quiet"]) == 0
    data = json.loads(out_json.read_text())["result"]
    assert data["models"] == ["b", "a"] and data["totals"][1] > data["totals"][0]


def test_compare_and_curve_errors(two_models, capsys):
    d = two_models
    other = tl.synthetic.random_model(3, 120, seed=5)
    tl.save_model(other, d / "small.npz")
    assert main(["compare", str(d / "a.npz"), str(d / "small.npz"), str(d / "d.txt")]) == 2
    assert "same number of topics" in capsys.readouterr().err
    assert main(["curve", str(d / "d.txt")]) == 2
    assert "curve needs at least one model" in capsys.readouterr().err
    assert main(["compare", str(d / "a.npz"), str(d / "b.npz"), str(d / "d.txt"), "--chains", "0"]) == 2
    assert "--chains: must be an integer >= 1" in capsys.readouterr().err


def test_csl_command_on_an_rbm_and_on_lda(tmp_path, capsys):
    from tealeaves.csl import load_digits_binary, train_rbm

    train, _ = load_digits_binary()
    train_rbm(train, 4, epochs=5).save(tmp_path / "rbm.npz")
    out_json = tmp_path / "csl.json"
    assert main(["csl", str(tmp_path / "rbm.npz"), "digits:test", "--samples", "2000",
                 "--json", str(out_json)]) == 0
    out = capsys.readouterr().out
    assert "CSL (a lower bound in expectation)" in out and "exact mean log P(x)" in out
    data = json.loads(out_json.read_text())["result"]
    assert len(data["item_log_prob"]) == 400 and data["mean"] <= data["exact_mean"] + 0.05
    model = tl.synthetic.random_model(4, 50, seed=1)
    tl.save_model(model, tmp_path / "m.npz")
    tl.corpus.write_text_corpus(tl.synthetic.generate(model, 3, 10, seed=2), tmp_path / "d.txt")
    assert main(["csl", str(tmp_path / "m.npz"), str(tmp_path / "d.txt"), "--samples", "50",
                 "--biased"]) == 0
    assert main(["csl", str(tmp_path / "rbm.npz"), str(tmp_path / "d.txt")]) == 2
    assert "expected rows of 0/1 values" in capsys.readouterr().err


def test_coherence_diversity_and_bcubed_commands(tmp_path, capsys):
    ref = tmp_path / "ref.txt"
    ref.write_text("apple pear fig\napple pear\napple plum\npear fig\nkiwi\n")
    topics = tmp_path / "topics.txt"
    topics.write_text("apple pear fig\npear durian\n")
    out_json = tmp_path / "coh.json"
    assert main(["coherence", str(topics), str(ref), "--measure", "umass,npmi", "--topn", "3",
                 "--json", str(out_json)]) == 0
    out = capsys.readouterr().out
    assert "durian*" in out and "do not occur in the reference" in out
    data = json.loads(out_json.read_text())["results"]
    assert [r["measure"] for r in data] == ["umass", "npmi"] and data[0]["topics"][1]["missing"] == ["durian"]
    assert data[0]["topics"][0]["score"] == pytest.approx(
        tl.coherence(str(topics), str(ref), measure="umass", topn=3).per_topic[0])
    assert main(["diversity", str(topics), "--topn", "3"]) == 0
    assert "0.8000" in capsys.readouterr().out  # 4 unique of 5
    (tmp_path / "p.txt").write_text("a\na\nb\nb\nc\n")
    (tmp_path / "g.txt").write_text("x\nx\nx\ny\ny\n")
    assert main(["bcubed", str(tmp_path / "p.txt"), str(tmp_path / "g.txt")]) == 0
    assert "precision 0.8000, recall 0.5333" in capsys.readouterr().out
    (tmp_path / "g1.txt").write_text("x\n")
    assert main(["bcubed", str(tmp_path / "p.txt"), str(tmp_path / "g1.txt")]) == 2
    assert "has 5 labels but" in capsys.readouterr().err
    assert main(["coherence", str(topics), str(ref), "--measure", "cv"]) == 2
    assert "unknown coherence measure 'cv'" in capsys.readouterr().err


def test_every_command_has_help_with_an_example():
    from tealeaves.cli.main import build_parser

    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    checked = 0
    for name, parser in sub.choices.items():
        nested = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        for p in nested[0].choices.values() if nested else [parser]:
            assert "example: tealeaves" in p.format_help(), name
            checked += 1
    assert checked >= 19
