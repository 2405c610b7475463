"""Red team 6 (x): a closed standard output or one in a narrow encoding never loses the finished
file outputs; `select --out` never resumes with another corpus; a piped reference corpus is read
(once); stability refuses options its distance ignores; numeric top words can be read as words."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import numpy as np
import pytest
from clirun import one_line_error, run_cli

import tealeaves as tl
from tealeaves.cli import main


@pytest.fixture
def doc_path(tmp_path: Path) -> str:
    p = tmp_path / "d.txt"
    p.write_text("a b c a\nb b c\n")
    return str(p)


# -- F3: a closed standard output (`| head`) ------------------------------------------------------

class ClosedPipe(io.StringIO):
    """Standard output whose reader went away."""

    def write(self, text: str) -> int:
        raise BrokenPipeError(32, "Broken pipe")

    def flush(self) -> None:
        raise BrokenPipeError(32, "Broken pipe")


def test_closed_stdout_still_writes_the_files(model_path, doc_path, tmp_path, monkeypatch):
    out = tmp_path / "out.json"
    err = io.StringIO()
    monkeypatch.setattr(sys, "stdout", ClosedPipe())
    monkeypatch.setattr(sys, "stderr", err)
    code = main(["heldout", model_path, doc_path, "--method", "exact", "--json", str(out)])
    assert code == 141
    assert json.loads(out.read_text())["results"], "the finished result file was rolled back"
    assert "standard output was closed" in err.getvalue()


def test_closed_stdout_with_json_to_stdout_is_said(model_path, doc_path, monkeypatch):
    err = io.StringIO()
    monkeypatch.setattr(sys, "stdout", ClosedPipe())
    monkeypatch.setattr(sys, "stderr", err)
    code = main(["heldout", model_path, doc_path, "--method", "exact", "--json", "-"])
    assert code == 141 and "standard output was closed" in err.getvalue()


# -- F8: an output encoding other than UTF-8 --------------------------------------------------------

@pytest.mark.parametrize("encoding", ["ascii", "latin-1"])
def test_narrow_stdout_encoding_escapes_and_keeps_files(model_path, doc_path, tmp_path, monkeypatch,
                                                        encoding):
    out = tmp_path / "out.json"
    raw, raw_err = io.BytesIO(), io.BytesIO()
    monkeypatch.setattr(sys, "stdout", io.TextIOWrapper(raw, encoding=encoding))
    monkeypatch.setattr(sys, "stderr", io.TextIOWrapper(raw_err, encoding=encoding))
    code = main(["heldout", model_path, doc_path, "--method", "exact", "--runs", "1",
                 "--json", str(out)])
    sys.stdout.flush()
    assert code == 0 and out.exists()
    text = raw.getvalue().decode(encoding)
    assert "sd" in text and ("\\xb1" in text or "\u00b1" in text)
    assert "\u2014" not in text or encoding == "cp1252"


# -- F9: `select --out` resumed with another corpus ----------------------------------------------

def test_select_out_refuses_another_corpus_of_the_same_size(tmp_path):
    from tealeaves import datasets

    c = datasets.sotu().train.subset(range(80))
    docs = [" ".join(c.vocab[i] for i in d) for d in c]
    first, second = tmp_path / "c.txt", tmp_path / "c2.txt"
    first.write_text("\n".join(docs[:40]) + "\n")
    second.write_text("\n".join(docs[40:]) + "\n")
    out = tmp_path / "runs"
    opts = ["--topics", "2", "--restarts", "1", "--holdout", "0.3", "--iterations", "5", "--particles",
            "5", "--out", out]
    code, _, err = run_cli(["select", first, *opts])
    assert code == 0, err
    assert json.loads((out / "split.json").read_text())["corpus"].startswith("sha256:")
    line = one_line_error(["select", second, *opts], "another corpus", "c.txt", "c2.txt")
    assert "use another --out" in line
    assert run_cli(["select", first, *opts])[0] == 0  # the same corpus resumes


# -- F10: a reference corpus through a pipe ---------------------------------------------------------

def _pipe_of(text: str) -> str:
    """A path to an anonymous pipe (as `<(cat FILE)` gives) holding `text`."""
    import os
    import threading

    r, w = os.pipe()

    def feed() -> None:
        with os.fdopen(w, "wb") as fh:
            fh.write(text.encode())

    threading.Thread(target=feed, daemon=True).start()
    return f"/proc/self/fd/{r}"


REFERENCE = "a b c a\nb c\na a b\nc b a c\n"


def test_piped_reference_is_counted_for_every_measure(model_path, tmp_path):
    ref = tmp_path / "ref.txt"
    ref.write_text(REFERENCE)
    code, want, err = run_cli(["coherence", model_path, ref, "--topn", "3"])
    assert code == 0, err
    code, got, err = run_cli(["coherence", model_path, _pipe_of(REFERENCE), "--topn", "3"])
    assert code == 0, err
    table = [line for line in got.splitlines() if not line.startswith("fingerprint")]
    assert table == [line for line in want.splitlines() if not line.startswith("fingerprint")]


def test_piped_reference_read_twice_is_refused_not_empty(model_path):
    pipe = _pipe_of(REFERENCE)
    model = tl.load_model(model_path)
    tl.coherence(model, pipe, measure="npmi", topn=3)
    with pytest.raises(tl.TealeavesError, match="already read.*give a file"):
        tl.coherence(model, pipe, measure="umass", topn=3)


# -- F6: stability options that the distance would ignore ----------------------------------------

def _restarts(tmp_path: Path) -> list[str]:
    rng = np.random.default_rng(6)
    paths = []
    for i in range(2):
        phi = rng.dirichlet(np.ones(8), size=3)
        p = tmp_path / f"r{i}.npz"
        tl.save_model(tl.TopicModel(phi, np.full(3, 0.5), vocab=[f"w{j}" for j in range(8)]), p)
        paths.append(str(p))
    return paths


@pytest.mark.parametrize("opts, flag", [
    (["--p", "0.5"], "--p"),
    (["--distance", "average-jaccard", "--p", "0.5"], "--p"),
    (["--distance", "jensen-shannon", "--topn", "3"], "--topn"),
    (["--topn", "3"], "--topn"),
])
def test_stability_refuses_an_option_its_distance_ignores(tmp_path, opts, flag):
    line = one_line_error(["stability", *_restarts(tmp_path), *opts], flag, "applies only with")
    assert "jensen-shannon" in line or "average-jaccard" in line


def test_stability_api_refuses_p_without_rbo(tmp_path):
    models = [tl.load_model(p) for p in _restarts(tmp_path)]
    with pytest.raises(tl.MethodError, match="p applies only with distance rbo"):
        tl.stability(models, distance="jensen-shannon", p=0.5)
    with pytest.raises(tl.MethodError, match="topn applies only"):
        tl.stability(models, topn=3)
    assert tl.stability(models, distance="rbo", p=0.5, topn=3).params["p"] == 0.5
    assert tl.stability(models, distance="average-jaccard", topn=3).topn == 3


# -- F4, F11: top-words files whose words are numbers; MALLET keys with an irregular line --------

def _file(tmp_path: Path, name: str, text: str) -> str:
    p = tmp_path / name
    p.write_text(text)
    return str(p)


@pytest.mark.parametrize("text", ["1999 2000 2001\n2003 2004 2005\n",
                                  "1999\t2000\t2001 2002\n2003\t2004\t2005\n"])
def test_numeric_top_words_say_how_and_read_as_words(tmp_path, text):
    from tealeaves.io.topwords import read_top_words

    path = _file(tmp_path, "tw.txt", text)
    with pytest.raises(tl.TealeavesError, match="--model-format top-words"):
        read_top_words(path)
    assert read_top_words(path, layout="words") == [line.split() for line in text.splitlines()]


def test_numeric_top_words_through_the_cli(tmp_path):
    path = _file(tmp_path, "tw.txt", "1999 2000 2001\n2003 2004 2005\n")
    one_line_error(["diversity", path, "--topn", "3"], "--model-format top-words")
    code, out, err = run_cli(["diversity", path, "--topn", "3", "--model-format", "top-words"])
    assert code == 0 and "1.0000" in out, err
    one_line_error(["heldout", path, path, "--model-format", "top-words"], "not a model")


@pytest.mark.parametrize("text, where", [
    ("0\t0.5\tw01 w02 w03\n1\tnan\tw04 w05 w06\n", ":2:"),
    ("0\t1,5\tw01 w02 w03\n1\t0,5\tw04 w05 w06\n", ":1:"),
    ("0\t0.5\tw01 w02 w03\n1 0.5 w04 w05 w06\n", ":2:"),
])
def test_topic_keys_with_an_irregular_line_are_an_error_naming_it(tmp_path, text, where):
    from tealeaves.io.topwords import read_top_words

    path = _file(tmp_path, "keys.txt", text)
    with pytest.raises(tl.TealeavesError, match=where):
        read_top_words(path)


def test_topic_keys_read_and_a_words_file_of_ids_is_not_keys(tmp_path):
    from tealeaves.io.topwords import read_top_words

    keys = _file(tmp_path, "keys.txt", "0\t0.5\tw01 w02 w03\n1\t0.25\tw04 w05 w06\n")
    assert read_top_words(keys) == [["w01", "w02", "w03"], ["w04", "w05", "w06"]]
    ids = _file(tmp_path, "ids.txt", "17\t4\tw01 w02\n23\t9\tw03 w04\n")  # not topic numbers 0..1
    assert read_top_words(ids) == [["17", "4", "w01", "w02"], ["23", "9", "w03", "w04"]]


# -- F12: select's decision over 2..5 held-out documents ----------------------------------------------

def _evals(values: dict[int, list[float]], tokens: list[int]):
    return [{"topics": k, "restart": 0, "doc_log_prob": v, "doc_tokens": tokens,
             "row": {"train_per_token": -1.0}} for k, v in values.items()]


@pytest.mark.parametrize("n", [2, 3, 5])
def test_few_held_out_documents_separate_nothing(n):
    from tealeaves.select.rule import decide

    # every document favours K = 3 by 2 nats: a percentile bootstrap over n <= 5 documents calls it
    # "significant", though all n leaning one way happens by chance with probability 2^(1-n) > 5%
    d = decide([2, 3], _evals({2: [-12.0 - i for i in range(n)], 3: [-10.0 - i for i in range(n)]}, [4] * n))
    c = d["comparisons"][0]
    assert d["k"] == 3 and not c["separated"] and d["tied"] == [2]
    assert "too few to separate" in c["note"] and "--holdout" in c["note"]


def test_six_held_out_documents_can_separate():
    from tealeaves.select.rule import decide

    d = decide([2, 3], _evals({2: [-12.0 - i for i in range(6)], 3: [-10.0 - i for i in range(6)]}, [4] * 6))
    assert d["comparisons"][0]["separated"]


# -- F20: numba's colour reset printed as text on a terminal ---------------------------------------

def test_no_escaped_colour_reset_on_a_terminal(model_path, doc_path):
    import os
    import pty
    import subprocess

    pytest.importorskip("colorama")  # numba sets up colours (and colorama's exit hook) only with it
    main_fd, child_fd = pty.openpty()
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_DISABLE_ERROR_MESSAGE_HIGHLIGHTING"}
    proc = subprocess.Popen([sys.executable, "-m", "tealeaves", "heldout", model_path, doc_path, "--method",
                             "exact"], stdout=child_fd, stderr=subprocess.DEVNULL, env=env)
    os.close(child_fd)
    chunks = []
    while True:
        try:
            data = os.read(main_fd, 4096)
        except OSError:  # the terminal closed: the command ended
            break
        if not data:
            break
        chunks.append(data)
    assert proc.wait(timeout=600) == 0
    os.close(main_fd)
    out = b"".join(chunks).decode()
    assert "exact" in out and "\\x1b" not in out


# -- F16: an output that replaces a file keeps its mode; a read-only file is not replaced --------

def test_read_only_output_is_refused_before_the_work(model_path, doc_path, tmp_path):
    import os

    ro = tmp_path / "ro.json"
    ro.write_text("precious\n")
    os.chmod(ro, 0o444)
    one_line_error(["heldout", model_path, doc_path, "--method", "exact", "--json", ro],
                   "ro.json", "read-only")
    assert ro.read_text() == "precious\n"


def test_replaced_output_keeps_its_mode(model_path, doc_path, tmp_path):
    import os
    import stat

    out = tmp_path / "private.json"
    out.write_text("old\n")
    os.chmod(out, 0o600)
    code, _, err = run_cli(["heldout", model_path, doc_path, "--method", "exact", "--json", out])
    assert code == 0, err
    assert json.loads(out.read_text())["command"] == "heldout"
    assert stat.S_IMODE(os.stat(out).st_mode) == 0o600


# -- F17: compare's options for one method given with the other ---------------------------------

@pytest.mark.parametrize("opts, flag", [
    (["--method", "difference", "--temperatures", "50"], "--temperatures"),
    (["--method", "difference", "--no-align-topics"], "--no-align-topics"),
    (["--method", "difference", "--path", "geometric"], "--path"),
    (["--method", "difference", "--burn-in", "7"], "--burn-in"),
    (["--estimator", "exact"], "--estimator"),
])
def test_compare_refuses_options_of_the_other_method(model_path, doc_path, opts, flag):
    one_line_error(["compare", model_path, model_path, doc_path, *opts], flag, "applies only to --method")


# -- F19: word-vector files follow the text rules (BOM at a line start, lone CR line ends) --------

def _vector_lines() -> list[str]:
    rng = np.random.default_rng(19)
    return [f"{w} " + " ".join(f"{x:.4f}" for x in rng.normal(size=4)) for w in ("a", "b", "c")]


def test_vectors_with_a_bom_at_a_line_start_keep_the_word(tmp_path):
    from tealeaves.coherence.embeddings import read_vectors

    lines = _vector_lines()
    plain = tmp_path / "v.txt"
    plain.write_text("\n".join(lines) + "\n")
    marked = tmp_path / "vbom.txt"
    marked.write_bytes(("\n".join(lines[:2]) + "\n\ufeff" + lines[2] + "\n").encode())
    want = read_vectors(plain, ["a", "b", "c"], format="glove")
    got = read_vectors(marked, ["a", "b", "c"], format="glove")
    assert sorted(got.vectors) == ["a", "b", "c"]
    assert np.array_equal(got.vectors["c"], want.vectors["c"])


def test_vectors_with_lone_cr_line_ends_are_refused(tmp_path):
    from tealeaves.coherence.embeddings import read_vectors

    cr = tmp_path / "vcr.txt"
    cr.write_bytes(("\r".join(_vector_lines()) + "\r").encode())
    with pytest.raises(tl.TealeavesError, match="lone carriage returns"):
        read_vectors(cr, ["a", "b", "c"])
