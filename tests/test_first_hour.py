"""A newcomer's first hour (issue 14): each command that stumbled, now working."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

import tealeaves as tl
from tealeaves import datasets
from tealeaves.cli import main
from tealeaves.corpus import write_text_corpus


def _cli(*args, **kw):
    return subprocess.run([sys.executable, "-m", "tealeaves", *map(str, args)], capture_output=True,
                          text=True, timeout=600, **kw)


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("first")
    c = datasets.sotu()
    write_text_corpus(c.train.subset(range(300)), d / "ref.txt")
    texts = [[c.train.vocab[i] for i in doc] for doc in c.train.subset(range(300))]
    from gensim.corpora import Dictionary
    from gensim.models import LdaModel

    dictionary = Dictionary(texts)
    bow = [dictionary.doc2bow(t) for t in texts]
    LdaModel(bow, id2word=dictionary, num_topics=4, passes=2, random_state=1).save(str(d / "lda.gensim"))
    auto = LdaModel(bow, id2word=dictionary, num_topics=4, passes=1, eta="auto", random_state=1)
    auto.save(str(d / "auto.gensim"))
    return d


def test_every_command_reads_a_gensim_file_with_consent(files):
    d = files
    for args in (["coherence", d / "lda.gensim", d / "ref.txt"], ["diversity", d / "lda.gensim"],
                 ["predictive", d / "lda.gensim", d / "ref.txt", "--samples", 5]):
        r = _cli(*args)
        assert r.returncode == 2 and "--allow-pickle" in r.stderr, r.stderr
        assert "utf-8" not in r.stderr.lower()
        r = _cli(*args, "--allow-pickle", "--model-format", "gensim")
        assert r.returncode == 0, r.stderr
    assert _cli("convert", d / "lda.gensim", d / "lda.npz", "--allow-pickle").returncode == 0
    assert tl.load_model(d / "lda.npz").num_topics == 4


def test_gensim_auto_eta_says_why_there_is_no_beta(files):
    m = tl.load_model(files / "auto.gensim", allow_pickle=True)
    assert m.beta is None and "eta differs by word" in m.metadata["beta"]


def test_demo_synthetic_writes_its_report_and_its_json_renders(tmp_path):
    r = _cli("demo", "--synthetic", "--runs", 2, "--quiet", "--report", tmp_path / "s.html", "--json",
             tmp_path / "s.json")
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "s.html").read_text().count("<svg") >= 2
    assert _cli("report", tmp_path / "s.json", "-o", tmp_path / "again.html").returncode == 0


def test_demo_help_tells_the_truth():
    """The quick demo's CPU seconds as benchmarks/estimates.py measured them (test_doc_figures ties
    DEMO_CPU_SECONDS to that measurement)."""
    from tealeaves.cli.tools import DEMO_CPU_SECONDS

    out = " ".join(_cli("demo", "--help").stdout.split())
    quick, full = DEMO_CPU_SECONDS["quick"], DEMO_CPU_SECONDS["full"]
    assert f"about {quick} CPU seconds (the full demo about {full})" in out


def test_json_to_standard_output():
    r = _cli("heldout", "sotu:sotu-20-asym", "sotu:heldout", "--particles", 2, "--json", "-", "--quiet")
    assert r.returncode == 0, r.stderr
    data = json.loads(r.stdout)  # nothing else on stdout
    assert data["results"][0]["tokens"] > 100_000 and "documents" in r.stderr


def test_bundled_corpus_from_python_and_by_name():
    assert tl.datasets.SOTU_MODELS and len(tl.read_corpus("sotu:heldout")) == 3400
    assert tl.load_model("sotu:sotu-50-asym").num_topics == 50


def test_encoding(tmp_path):
    (tmp_path / "lee.txt").write_bytes("the café government people\n".encode("latin-1"))
    r = _cli("heldout", "sotu:sotu-20-asym", tmp_path / "lee.txt", "--particles", 2)
    assert r.returncode == 2 and "--encoding latin-1" in r.stderr
    r = _cli("heldout", "sotu:sotu-20-asym", tmp_path / "lee.txt", "--particles", 2, "--encoding", "latin-1")
    assert r.returncode == 0 and "café x1" in r.stdout
    assert "unknown text encoding" in _cli("heldout", "sotu:sotu-20-asym", tmp_path / "lee.txt", "--encoding",
                                           "klingon").stderr


def test_heldout_help_names_formats_and_defaults():
    out = _cli("heldout", "--help").stdout
    assert "MALLET" in out and "tomotopy" in out and "--allow-pickle" in out
    assert "particles R (default 300)" in out and "number of temperatures S (default 2000)" in out


def test_usage_errors_are_one_line():
    r = _cli("heldout", "--nonsense")
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1
    assert r.stderr.startswith("tealeaves: error:")


def test_broken_pipe_is_quiet():
    p = subprocess.Popen(f"{sys.executable} -m tealeaves heldout --help | head -c 10", shell=True,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    _, err = p.communicate(timeout=120)
    assert b"Broken pipe" not in err and b"Traceback" not in err


def test_plot_without_matplotlib_fails_before_any_work(tmp_path, monkeypatch, capsys):
    model = datasets.sotu_model("sotu-20-asym")
    tasks = tl.intrusion.word_tasks(model)
    tl.intrusion.write_tasks(tasks, tmp_path / "t.jsonl", tmp_path / "k.jsonl")
    with open(tmp_path / "r.jsonl", "w") as fh:
        for t in tasks:
            fh.write(json.dumps({"annotator": "a", "item": t.item, "choice": t.intruder}) + "\n")
    for name in ["matplotlib", *(m for m in sys.modules if m.startswith("matplotlib."))]:
        monkeypatch.setitem(sys.modules, name, None)  # `import matplotlib(.x)` raises ImportError
    code = main(["intrusion", "score", str(tmp_path / "k.jsonl"), str(tmp_path / "r.jsonl"), "--plot",
                 str(tmp_path / "p.png"), "--json", str(tmp_path / "s.json")])
    out = capsys.readouterr()
    assert code == 2 and 'pip install "tealeaves[plot]"' in out.err and "model" not in out.out


def test_training_curve_has_an_sd_by_default():
    model = datasets.sotu_model("sotu-20-asym")
    docs = datasets.sotu().heldout.subset(range(4))
    curve = tl.training_curve([datasets.sotu_model("sotu-20-sym"), model], docs, temperatures=10,
                              first_temperatures=20)
    assert np.all(np.isfinite(curve.sd))
