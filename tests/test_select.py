"""`tealeaves select`: on a small slice of the bundled corpus it trains LDA for every K and restart,
evaluates every model, says which K each metric favours, writes its plots, and when killed
half-way resumes without recomputing anything finished (and without a corrupt file)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest
from test_report import assert_clean_layout

import tealeaves as tl
from tealeaves import datasets
from tealeaves.corpus import write_text_corpus

pytest.importorskip("tomotopy")


def _select_cmd(corpus, out, *extra):
    return [sys.executable, "-m", "tealeaves", "select", str(corpus), "--topics", "2,3,4", "--restarts", "2",
            "--holdout", "0.25", "--iterations", "30", "--particles", "10", "--out", str(out), "--quiet",
            *map(str, extra)]


def test_select_trains_evaluates_resumes_and_plots(tmp_path):
    corpus = tmp_path / "corpus.txt"
    write_text_corpus(datasets.sotu().train.subset(range(300)), corpus)
    out = tmp_path / "run"
    first = subprocess.Popen(_select_cmd(corpus, out), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.time() + 300
    while time.time() < deadline and first.poll() is None:
        if (out / "evals").exists() and len(os.listdir(out / "evals")) >= 2:
            break
        time.sleep(0.02)
    assert first.poll() is None, "the run ended before it could be interrupted"
    first.send_signal(signal.SIGKILL)
    first.wait()
    finished = [p for f in ("evals", "models") for p in (out / f).iterdir() if not p.name.startswith(".")]
    done = {p: os.stat(p).st_mtime_ns for p in finished if p.suffix == ".json"}
    models = {p: os.stat(p).st_mtime_ns for p in finished if p.suffix == ".npz"}
    assert 2 <= len(done) < 6 and not (out / "selection.json").exists()
    for p in (out / "evals").iterdir():  # no half-written file where a finished one should be
        assert p.suffix == ".json" or p.name.startswith("."), p
    r = subprocess.run(_select_cmd(corpus, out, "--json", tmp_path / "sel.json", "--report",
                                   tmp_path / "sel.html", "--figures", tmp_path / "figs"),
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    for p, mtime in {**done, **models}.items():
        assert os.stat(p).st_mtime_ns == mtime, f"{p.name} was recomputed"
    for folder in ("models", "evals"):  # the killed run's temporary files are gone
        assert not [p for p in os.listdir(out / folder) if p.startswith(".")], folder
    evals = sorted((out / "evals").glob("*.json"))
    assert [p.stem for p in evals] == [f"K{k}-r{r}" for k in (2, 3, 4) for r in (0, 1)]
    for p in evals:
        e = json.loads(p.read_text())
        assert e["row"]["tokens"] > 0 and len(e["doc_log_prob"]) == 75
    for p in sorted((out / "models").glob("*.npz")):
        assert tl.load_model(p).num_topics == int(p.stem[1 : p.stem.index("-")])
    sel = json.loads((tmp_path / "sel.json").read_text())
    assert sel["topics"] == [2, 3, 4] and "log-lik/token" in sel["choice"]
    assert sel["choice"]["log-lik/token"]["k"] in (2, 3, 4)
    assert "favours K =" in r.stdout and "significantly" in r.stdout
    figs = sorted(os.listdir(tmp_path / "figs"))
    assert any(f.endswith(".png") for f in figs) and any(f.endswith(".svg") for f in figs)
    assert any("select-log-lik-token" in f for f in figs)
    assert_clean_layout(tmp_path / "sel.html")


def test_select_refuses_an_out_directory_of_another_run(tmp_path):
    c = datasets.sotu().train.subset(range(40))
    texts = [[c.vocab[i] for i in d] for d in c]
    tl.select(texts, topics=[2], restarts=1, holdout=0.3, out=tmp_path, iterations=5, particles=5,
              coherence=("umass",), progress=False)
    with pytest.raises(tl.MethodError, match="another corpus, holdout or seed"):
        tl.select(texts, topics=[2], restarts=1, holdout=0.3, out=tmp_path, iterations=5, seed=1,
                  progress=False)
