"""`tealeaves select`: on a small slice of the bundled corpus it trains LDA for every K and restart,
evaluates every model, says which K each metric favours, writes its plots, and when killed
half-way resumes without recomputing anything finished (and without a corrupt file)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

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


def _killed_copy(full, out):
    """`out` as a run of `full`'s settings killed part-way leaves it: the split, the models of
    K2-r0, K2-r1 and K3-r0, the evaluations of K2-r0 and K2-r1 only (K3-r0 was trained, not yet
    evaluated), and the temporary files of the writes it was in the middle of."""
    (out / "models").mkdir(parents=True)
    (out / "evals").mkdir()
    shutil.copy2(full / "split.json", out / "split.json")
    for name in ("K2-r0", "K2-r1", "K3-r0"):
        shutil.copy2(full / "models" / f"{name}.npz", out / "models" / f"{name}.npz")
    for name in ("K2-r0", "K2-r1"):
        shutil.copy2(full / "evals" / f"{name}.json", out / "evals" / f"{name}.json")
    model = (full / "models" / "K3-r1.npz").read_bytes()
    (out / "models" / ".K3-r1.npz.k1ll3d.npz").write_bytes(model[: len(model) // 2])
    (out / "evals" / ".K3-r0.json.k1ll3d.tmp").write_text('{"model": "K3-r0", "row": {"tok')


def test_select_trains_evaluates_resumes_and_plots(tmp_path):
    """A run killed part-way (its `--out` folder prepared by hand, as the kill leaves it) resumes:
    nothing finished is recomputed, the temporary files are removed, and the result equals an
    uninterrupted run's."""
    corpus = tmp_path / "corpus.txt"
    write_text_corpus(datasets.sotu().train.subset(range(300)), corpus)
    full = tmp_path / "full"
    r = subprocess.run(_select_cmd(corpus, full, "--json", tmp_path / "full.json"), capture_output=True,
                       text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    out = tmp_path / "run"
    _killed_copy(full, out)
    kept = {p: (os.stat(p).st_mtime_ns, p.read_bytes()) for f in ("models", "evals")
            for p in (out / f).iterdir() if not p.name.startswith(".")}
    os.utime(out / "split.json", ns=(1, 1))  # an old timestamp: rewriting it would show
    r = subprocess.run(_select_cmd(corpus, out, "--json", tmp_path / "sel.json", "--report",
                                   tmp_path / "sel.html", "--figures", tmp_path / "figs", "--latex",
                                   tmp_path / "sel.tex", "--markdown", tmp_path / "sel.md"),
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    for p, (mtime, data) in kept.items():
        assert os.stat(p).st_mtime_ns == mtime and p.read_bytes() == data, f"{p.name} was recomputed"
    assert os.stat(out / "split.json").st_mtime_ns == 1
    for folder in ("models", "evals"):  # the killed run's temporary files are gone
        assert not [p for p in os.listdir(out / folder) if p.startswith(".")], folder
    evals = sorted((out / "evals").glob("*.json"))
    assert [p.stem for p in evals] == [f"K{k}-r{r}" for k in (2, 3, 4) for r in (0, 1)]
    assert sorted(p.stem for p in (out / "models").glob("*.npz")) == [p.stem for p in evals]
    for p in evals:
        e = json.loads(p.read_text())
        assert e["row"]["tokens"] > 0 and len(e["doc_log_prob"]) == 75
    for p in sorted((out / "models").glob("*.npz")):
        assert tl.load_model(p).num_topics == int(p.stem[1 : p.stem.index("-")])
    sel = json.loads((tmp_path / "sel.json").read_text())
    whole = json.loads((tmp_path / "full.json").read_text())
    assert sel["topics"] == [2, 3, 4] and "log-lik/token" in sel["choice"]
    assert sel["per_k"] == whole["per_k"] and sel["choice"] == whole["choice"]  # same answer as unbroken
    assert sel["decision"] == whole["decision"] and sel["decision"]["k"] in (2, 3, 4)
    others = [k for k in (2, 3, 4) if k != sel["decision"]["k"]]
    assert [c["k"] for c in sel["decision"]["comparisons"]] == others  # every K, not only the runner-up
    assert all(e["row"]["classic"]["griffiths_2004"] is not None for e in sel["evaluations"])
    assert sel["choice"]["log-lik/token"]["k"] in (2, 3, 4)
    assert "favours K =" in r.stdout and "significantly" in r.stdout
    assert "decision (best-train): K =" in r.stdout
    figs = sorted(os.listdir(tmp_path / "figs"))
    assert any(f.endswith(".png") for f in figs) and any(f.endswith(".svg") for f in figs)
    assert any("select-log-lik-token" in f for f in figs)
    assert_clean_layout(tmp_path / "sel.html")
    # the chosen model's topics: terminal, JSON, report, and every table as LaTeX and Markdown (issue 33)
    chosen = sel["chosen"]
    assert chosen["k"] == sel["decision"]["k"] and chosen["model"] == f"K{chosen['k']}-r{chosen['restart']}"
    assert len(chosen["words"]) == chosen["k"] and chosen["diagnostics"]["task"] == "diagnostics"
    assert f"topics of {chosen['model']}" in r.stdout and " ".join(chosen["words"][0]) in r.stdout
    html = (tmp_path / "sel.html").read_text()
    assert f"Topics of the chosen model, {chosen['model']}" in html
    tex, md = (tmp_path / "sel.tex").read_text(), (tmp_path / "sel.md").read_text()
    assert r"\toprule" in tex and f"Per topic, {chosen['model']}" in tex
    assert f"**Per topic, {chosen['model']}" in md and "| K |" in md
    assert "LaTeX tables ->" in r.stdout and "Markdown tables ->" in r.stdout
    if sel["decision"]["k"] in (2, 4):  # at an edge of the grid 2, 3, 4: said, with what to try
        assert sel["edge"]["side"] == ("lower" if sel["decision"]["k"] == 2 else "upper")
        assert "EDGE OF THE GRID" in r.stdout and "Edge of the grid" in html
    else:
        assert "edge" not in sel


def test_select_refuses_an_out_directory_of_another_run(tmp_path):
    c = datasets.sotu().train.subset(range(40))
    texts = [[c.vocab[i] for i in d] for d in c]
    tl.select(texts, topics=[2], restarts=1, holdout=0.3, out=tmp_path, iterations=5, particles=5,
              coherence=("umass",), progress=False)
    with pytest.raises(tl.MethodError, match="another corpus, holdout or seed"):
        tl.select(texts, topics=[2], restarts=1, holdout=0.3, out=tmp_path, iterations=5, seed=1,
                  progress=False)


def test_select_refuses_an_out_directory_made_with_other_settings(tmp_path):
    """A resumed run reuses saved models and evaluations: other training or evaluation settings would
    mix two runs under the new settings' name, so they are refused, naming what differs."""
    c = datasets.sotu().train.subset(range(40))
    texts = [[c.vocab[i] for i in d] for d in c]
    kw = dict(topics=[2], restarts=1, holdout=0.3, out=tmp_path, particles=5, coherence=("umass",),
              progress=False)
    tl.select(texts, iterations=5, **kw)
    with pytest.raises(tl.MethodError, match=r"other settings: iterations 5 \(now 7\)") as e:
        tl.select(texts, iterations=7, **kw)
    assert "\n" not in str(e.value)
    assert tl.select(texts, iterations=5, **kw).decision["k"] == 2  # the same settings resume
