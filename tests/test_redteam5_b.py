"""Red team 5 (b): outputs never destroy an input (bundled data, a gensim model's files, a BERTopic
folder), are checked creatable before the work and committed all or nothing; one counted, reported
policy for unknown words and empty documents in every command; terminal output never carries an
input's control characters."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from clirun import one_line_error, run_cli

import tealeaves as tl

SRC = Path(tl.__file__).resolve().parent


def md5(path: Path) -> str:
    return hashlib.md5(path.read_bytes()).hexdigest()


# -- F5: a bundled name's file is an input -------------------------------------------------------

@pytest.fixture
def package_copy(tmp_path: Path) -> Path:
    """A copy of the installed package (its data may be destroyed by a failing test, never the real one)."""
    shutil.copytree(SRC, tmp_path / "pkg" / "tealeaves", ignore=shutil.ignore_patterns("__pycache__"))
    return tmp_path / "pkg"


def run_copy(pkg: Path, *argv: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "tealeaves", *argv], capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(pkg)}, cwd=pkg, timeout=600)


def test_json_onto_a_bundled_models_file_is_refused(package_copy):
    data = package_copy / "tealeaves" / "data"
    before = md5(data / "sotu-20-asym.npz")
    r = run_copy(package_copy, "diversity", "sotu:sotu-20-asym", "--json", str(data / "sotu-20-asym.npz"))
    assert r.returncode == 2 and "sotu:sotu-20-asym" in r.stderr and "Traceback" not in r.stderr, r.stderr
    assert md5(data / "sotu-20-asym.npz") == before


def test_index_onto_the_bundled_corpus_and_any_output_in_the_data_folder_are_refused(package_copy):
    data = package_copy / "tealeaves" / "data"
    before = md5(data / "sotu_corpus.npz")
    r = run_copy(package_copy, "index", "build", "sotu:train", "-o", str(data / "sotu_corpus.npz"))
    assert r.returncode == 2 and "sotu:train" in r.stderr, r.stderr
    assert md5(data / "sotu_corpus.npz") == before
    r = run_copy(package_copy, "diversity", "sotu:sotu-20-asym", "--json", str(data / "new.json"))
    assert r.returncode == 2 and "bundled data folder" in r.stderr, r.stderr
    assert not (data / "new.json").exists()


# -- F28: every file a model reader reads is an input ---------------------------------------------

@pytest.mark.parametrize("side", [".state", ".id2word", ".expElogbeta.npy"])
def test_json_onto_a_gensim_models_side_file_is_refused(tmp_path, model_path, side):
    gensim = tmp_path / "g.gensim"  # the names gensim's save writes; the refusal comes before reading
    for f in ("", ".state", ".id2word", ".expElogbeta.npy"):
        Path(f"{gensim}{f}").write_text("model part")
    side_file = Path(f"{gensim}{side}")
    one_line_error(["heldout", model_path, gensim, "--json", side_file], "gensim", "overwritten")
    assert side_file.read_text() == "model part"


def test_json_into_a_bertopic_folder_is_refused(tmp_path):
    folder = tmp_path / "bt"
    shutil.copytree(Path(__file__).parent / "fixtures" / "bertopic_sotu", folder)
    before = md5(folder / "topics.json")
    one_line_error(["diversity", folder, "--json", folder / "topics.json"], "inside the folder")
    assert md5(folder / "topics.json") == before


# -- F14: an output that cannot be created is refused before the work ------------------------------

def test_output_name_too_long_is_refused_before_the_work(tmp_path, model_path):
    docs = tmp_path / "d.txt"
    docs.write_text("a b c\n")
    out = tmp_path / ("x" * 300 + ".json")
    code, stdout, err = run_cli(["heldout", model_path, docs, "--method", "exact", "--json", out])
    assert code == 2 and stdout == "" and "cannot be written" in err, (stdout, err)


def test_output_under_a_file_says_it_is_a_file(tmp_path, model_path):
    docs = tmp_path / "d.txt"
    docs.write_text("a b c\n")
    one_line_error(["heldout", model_path, docs, "--method", "exact", "--json", docs / "x.json"],
                   "is a file, not a folder")


def test_output_on_a_pseudo_file_system_is_refused_before_the_work(tmp_path, model_path):
    if not os.path.isdir("/proc/self"):
        pytest.skip("no procfs")
    docs = tmp_path / "d.txt"
    docs.write_text("a b c\n")
    code, stdout, err = run_cli(["heldout", model_path, docs, "--method", "exact", "--json", "/proc/x.json"])
    assert code == 2 and stdout == "" and "cannot be written" in err, (stdout, err)


def test_long_valid_output_name_is_written(tmp_path, model_path):
    docs = tmp_path / "d.txt"
    docs.write_text("a b c\n")
    out = tmp_path / ("x" * 240 + ".json")  # a valid name; its temporary file's name must be too
    code, _, err = run_cli(["heldout", model_path, docs, "--method", "exact", "--json", out])
    assert code == 0 and json.loads(out.read_text())["command"] == "heldout", err
    assert sorted(os.listdir(tmp_path)) == sorted(["m.npz", "d.txt", out.name])


# -- F22: a failing device output leaves the files as they were -------------------------------------

def test_failing_device_output_leaves_the_other_outputs_untouched(tmp_path, model_path):
    if not os.path.exists("/dev/full"):
        pytest.skip("no /dev/full")
    docs = tmp_path / "d.txt"
    docs.write_text("a b c\n")
    old = tmp_path / "old.json"
    old.write_text("old")
    one_line_error(["heldout", model_path, docs, "--method", "exact", "--json", old, "--csv", "/dev/full"],
                   "/dev/full")
    assert old.read_text() == "old"
    assert sorted(os.listdir(tmp_path)) == ["d.txt", "m.npz", "old.json"]


# -- one counted, reported policy for unknown words and empty documents (F1, F2, F19, F23, F24, F29) --

@pytest.fixture
def oov_docs(tmp_path: Path) -> Path:
    """4 documents: 3 unknown tokens (zz x2, yy), a blank line, a line of unknown words only."""
    p = tmp_path / "oov.txt"
    p.write_text("a b zz c\n\nzz yy\nc c\n")
    return p


def corpus_line(stdout: str) -> None:
    assert "4 documents, 5 tokens scored, 3 dropped (not among the model's 3 words), 2 empty documents" \
        in stdout, stdout
    assert "most frequent dropped words: zz x2, yy x1" in stdout, stdout


def test_csl_reports_unknown_words_and_leaves_empty_documents_out_of_the_mean(tmp_path, model_path, oov_docs):
    nonempty = tmp_path / "nonempty.txt"
    nonempty.write_text("a b c\nc c\n")
    args = ["--samples", "5", "--chains", "1", "--doc-length", "3"]
    code, stdout, err = run_cli(["csl", model_path, oov_docs, *args, "--json", tmp_path / "c1.json"])
    assert code == 0, err
    corpus_line(stdout)
    assert "2 empty documents left out" in stdout
    code, _, err = run_cli(["csl", model_path, nonempty, *args, "--json", tmp_path / "c2.json"])
    assert code == 0, err
    one = json.loads((tmp_path / "c1.json").read_text())["result"]
    two = json.loads((tmp_path / "c2.json").read_text())["result"]
    assert one["items"] == 2 and one["mean"] == pytest.approx(two["mean"])  # the same two documents
    assert one["corpus"]["oov_tokens"] == 3 and one["empty_documents_left_out"] == 2


def test_predictive_reports_unknown_words_and_has_strict(tmp_path, model_path, oov_docs):
    code, stdout, err = run_cli(["predictive", model_path, oov_docs, "--samples", "5", "--burn-in", "5",
                                 "--quiet", "--json", tmp_path / "p.json"])
    assert code == 0, err
    corpus_line(stdout)
    rep = json.loads((tmp_path / "p.json").read_text())["corpus_report"]
    assert rep["oov_tokens"] == 3 and rep["oov_top_words"] == {"zz": 2, "yy": 1}
    one_line_error(["predictive", model_path, oov_docs, "--strict"], "not in the model's vocabulary")


@pytest.mark.parametrize("text", ["a b\n\nc\n", "a b\nzz\n"])
def test_diagnostics_with_an_empty_document_reports_it_without_a_traceback(tmp_path, model_path, text):
    docs = tmp_path / "docs.txt"
    docs.write_text(text)
    code, stdout, err = run_cli(["diagnostics", model_path, docs, "--burn-in", "5", "--samples", "5",
                                 "--json", tmp_path / "d.json"])
    assert code == 0 and "Traceback" not in err, err
    assert "1 empty documents" in stdout
    assert json.loads((tmp_path / "d.json").read_text())["corpus_report"]["empty_documents"] == 1


def test_diagnostics_counts_unknown_words(tmp_path, model_path, oov_docs):
    code, stdout, err = run_cli(["diagnostics", model_path, oov_docs, "--burn-in", "5", "--samples", "5",
                                 "--json", tmp_path / "d.json"])
    assert code == 0, err
    corpus_line(stdout)
    assert json.loads((tmp_path / "d.json").read_text())["corpus_report"]["oov_tokens"] == 3


def four_topics(tmp_path: Path) -> str:
    p = tmp_path / "m4.npz"
    phi = np.full((4, 4), 0.05) + np.eye(4) * 0.8
    tl.save_model(tl.TopicModel(phi / phi.sum(1, keepdims=True), np.full(4, 0.5), vocab=list("abcd")), p)
    return str(p)


def test_intrusion_topics_makes_no_task_for_an_empty_document(tmp_path):
    model = four_topics(tmp_path)
    docs = tmp_path / "docs.txt"
    docs.write_text("a a b\nc d d\nqq rr\n\nb c zz\n")
    code, stdout, err = run_cli(["intrusion", "topics", model, docs, "-o", tmp_path / "t.jsonl",
                                 "--key", tmp_path / "k.jsonl", "--samples", "5", "--burn-in", "5",
                                 "--quiet"])
    assert code == 0, err
    assert "1 documents skipped, no task: no word of the model (lines 3)" in stdout
    assert "1 documents skipped, no task: no text to show (lines 4)" in stdout
    assert "5 documents, 8 tokens scored, 3 dropped" in stdout
    rows = [json.loads(line) for line in (tmp_path / "k.jsonl").read_text().splitlines()]
    assert sorted(r["document"] for r in rows) == [0, 1, 4]


def test_select_counts_heldout_words_unseen_in_training_and_leaves_out_empty_lines(tmp_path):
    from tealeaves.select import split

    rng = np.random.default_rng(0)
    lines = ["u01 u02 w01"]  # two words no other document has (document 0 is held out: asserted below)
    lines += [" ".join(f"w{rng.integers(40):02d}" for _ in range(30)) for _ in range(20)] + ["", "", ""]
    docs = tmp_path / "s.txt"
    docs.write_text("\n".join(lines) + "\n")
    code, stdout, err = run_cli(["select", docs, "--trainer", "sklearn", "--iterations", "3",
                                 "--restarts", "1", "--particles", "3", "--quiet", "--topics", "2,3",
                                 "--holdout", "0.3", "--json", tmp_path / "sel.json"])
    assert code == 0, err
    assert "21 documents: " in stdout and "3 empty documents left out" in stdout, stdout
    train_idx, test_idx = split(21, 0.3, 0)  # the documents are the 21 non-empty lines
    seen = {w for i in train_idx for w in lines[i].split()}
    test_tokens = [w for i in test_idx for w in lines[i].split()]
    unseen = sum(w not in seen for w in test_tokens)
    assert 0 in test_idx and unseen >= 2
    out = json.loads((tmp_path / "sel.json").read_text())
    rep = out["params"]["heldout_corpus"]
    assert out["params"]["empty_documents_left_out"] == 3
    scored = len(test_tokens) - unseen
    assert (rep["documents"], rep["oov_tokens"], rep["tokens"]) == (len(test_idx), unseen, scored)
    assert f"{scored} tokens scored, {unseen} dropped (not in the training documents" in stdout
    assert sum(out["evaluations"][0]["doc_tokens"]) == scored


# -- F34: an RBM whose activations overflow ---------------------------------------------------------

@pytest.mark.parametrize("W", [np.full((5, 3), 1e308), np.full((5, 3), 1e12), np.zeros((5, 0))])
def test_rbm_with_overflowing_weights_or_no_hidden_unit_is_refused(tmp_path, W):
    rbm = tmp_path / "rbm.npz"
    np.savez(rbm, W=W, b=np.zeros(5), c=np.zeros(W.shape[1]))
    data = tmp_path / "bin.txt"
    data.write_text("1 0 1 0 1\n0 0 0 0 0\n")
    line = one_line_error(["csl", rbm, data, "--samples", "5", "--chains", "1"], "RBM")
    assert "nan" not in line


def test_rbm_with_large_but_safe_weights_is_scored(tmp_path):
    rbm = tmp_path / "rbm.npz"
    np.savez(rbm, W=np.full((5, 3), 50.0), b=np.zeros(5), c=np.zeros(3))
    data = tmp_path / "bin.txt"
    data.write_text("1 0 1 0 1\n0 0 0 0 0\n")
    code, stdout, err = run_cli(["csl", rbm, data, "--samples", "5", "--chains", "1"])
    assert code == 0 and "nan" not in stdout and err.count("Warning") == 0, (stdout, err)


# -- F35: control characters from input files never reach the terminal ---------------------------------

def test_escape_sequences_in_tokens_are_shown_escaped(tmp_path, model_path):
    docs = tmp_path / "esc.txt"
    docs.write_text("a \x1b[31mRED\x1b[0m b \x1b]0;pwned\x07 c\n")
    code, stdout, err = run_cli(["heldout", model_path, docs, "--method", "exact"])
    assert code == 0, err
    assert "\x1b" not in stdout + err and "\x07" not in stdout + err
    assert "\\x1b[31mRED\\x1b[0m" in stdout and "\\x1b]0;pwned\\x07" in stdout


def test_escape_sequences_in_vocabulary_words_are_shown_escaped(tmp_path):
    model = tmp_path / "escvocab.npz"
    words = ["a", "b\x1b[2J", "c\x1b]0;pwned\x07", "d"]
    phi = np.full((2, 4), 0.1) + np.array([[0.6, 0, 0, 0], [0, 0, 0, 0.6]])
    tl.save_model(tl.TopicModel(phi / phi.sum(1, keepdims=True), np.full(2, 0.5), vocab=words), model)
    ref = tmp_path / "ref.txt"
    ref.write_text("a d\na a\nd d a\n")
    code, stdout, err = run_cli(["coherence", model, ref, "--topn", "3"])
    assert code == 0, err
    assert "\x1b" not in stdout + err and "b\\x1b[2J" in stdout, stdout


def test_stability_refuses_a_name_with_a_control_character(tmp_path, model_path):
    other = tmp_path / "copy.npz"
    shutil.copy(model_path, other)
    one_line_error(["stability", model_path, other, "--name", "a\x1b[31m", "--name", "b"],
                   "control character U+001B")


def test_json_to_standard_output_keeps_its_escapes(tmp_path, model_path, capsys):
    from tealeaves.cli import main

    docs = tmp_path / "esc.txt"
    docs.write_text("a \x1b[31mRED b \x7f\n")  # DEL: JSON leaves it as it is
    assert main(["heldout", model_path, str(docs), "--method", "exact", "--json", "-"]) == 0
    out = json.loads(capsys.readouterr().out)  # still JSON; the words as they were in the file
    assert out["results"][0]["corpus"]["oov_top_words"] == {"\x1b[31mRED": 1, "\x7f": 1}


# -- F25: blank lines in a coherence reference are counted and said ------------------------------------

@pytest.mark.parametrize("indexed", [False, True])
def test_blank_lines_in_a_coherence_reference_are_counted(tmp_path, model_path, indexed):
    ref = tmp_path / "ref.txt"
    ref.write_text("a b\na c c\nb c\n\n\n\n")
    if indexed:
        code, _, err = run_cli(["index", "build", ref, "-o", tmp_path / "ref.tlx"])
        assert code == 0, err
        ref = tmp_path / "ref.tlx"
    code, stdout, err = run_cli(["coherence", model_path, ref, "--topn", "3", "--measure", "npmi",
                                 "--json", tmp_path / "c.json"])
    assert code == 0, err
    assert "(6 documents, 3 of them empty (each one window or document), 7 tokens" in stdout, stdout
    result = json.loads((tmp_path / "c.json").read_text())["results"][0]
    assert result["fingerprint"]["reference"]["empty_documents"] == 3


def test_a_reference_without_blank_lines_says_nothing_of_them(tmp_path, model_path):
    ref = tmp_path / "ref.txt"
    ref.write_text("a b\na c c\nb c\n")
    code, stdout, err = run_cli(["coherence", model_path, ref, "--topn", "3", "--measure", "npmi"])
    assert code == 0 and "(3 documents, 7 tokens" in stdout and "empty" not in stdout, (stdout, err)


def test_folder_output_under_a_file_is_refused_before_the_work(tmp_path):
    ev = tmp_path / "ev.json"
    ev.write_text("{}")
    one_line_error(["report", ev, "-o", tmp_path / "r.html", "--figures", ev / "figs" / "more"],
                   "is a file, not a folder")
