"""Every bad input of the issue gets its documented one-line error (Python: the exception;
CLI: `tealeaves: error: ...` on stderr, exit status 2, no traceback)."""

import re
import subprocess
import sys

import numpy as np
import pytest

import tealeaves as tl
from tealeaves.cli import main

PHI = np.array([[0.5, 0.5, 0.0], [0.2, 0.3, 0.5]])


@pytest.mark.parametrize("phi,alpha,match", [
    (PHI, [0.0, 1.0], r"alpha\[0\] = 0 must be > 0"),
    (PHI, [-1.0, 1.0], r"alpha\[0\] = -1 must be > 0"),
    (PHI, [np.nan, 1.0], r"alpha\[0\] is not finite"),
    (PHI, [np.inf, 1.0], r"alpha\[0\] is not finite"),
    (PHI, [1.0, 1.0, 1.0], r"alpha must have one value per topic \(length 2\)"),
    (PHI, 0.1, r"alpha must have one value per topic"),
    ([[0.5, -0.1, 0.6], [0.2, 0.3, 0.5]], [1, 1], r"negative value .* topic 0, word 1"),
    ([[0.5, np.nan, 0.5], [0.2, 0.3, 0.5]], [1, 1], r"non-finite value \(nan\) at topic 0, word 1"),
    ([[0.5, 0.6, 0.5], [0.2, 0.3, 0.5]], [1, 1], r"row of topic 0 sums to 1.6.*normalize"),
    ([[0.0, 0.0, 0.0], [0.2, 0.3, 0.5]], [1, 1], r"row of topic 0 is all zeros"),
    ([0.2, 0.8], [1], r"phi must be a T x V matrix"),
])
def test_invalid_models(phi, alpha, match):
    with pytest.raises(tl.InvalidModelError, match=match):
        tl.TopicModel(phi, alpha)


def test_invalid_vocab():
    with pytest.raises(tl.InvalidModelError, match="vocab has 2 words but phi has 3 columns"):
        tl.TopicModel(PHI, [1, 1], vocab=["a", "b"])
    with pytest.raises(tl.InvalidModelError, match="'a' appears twice"):
        tl.TopicModel(PHI, [1, 1], vocab=["a", "b", "a"])


@pytest.fixture
def model():
    return tl.TopicModel(PHI, [0.5, 1.0], vocab=["a", "b", "c"])


def test_word_id_out_of_range(model):
    with pytest.raises(tl.InvalidCorpusError, match="document 1 has word id 3 >= vocabulary size 3"):
        tl.heldout(model, [[0, 1], [3]], method="exact")
    bare = tl.TopicModel(PHI, [0.5, 1.0])
    with pytest.raises(tl.InvalidCorpusError,
                       match="document 0 has word id 7 but the model has 3 words"):
        tl.heldout(bare, [[7]], method="exact")


def test_word_with_zero_probability_everywhere():
    phi = np.array([[0.5, 0.5, 0.0], [0.2, 0.8, 0.0]])
    m = tl.TopicModel(phi, [1, 1], vocab=["a", "b", "c"])
    with pytest.raises(tl.InvalidCorpusError,
                       match=r"document 1 has word 2 \('c'\), which has probability 0"):
        tl.heldout(m, [[0], [1, 2]])


def test_corpus_vocabulary_mismatch(tmp_path, model):
    c = tl.Corpus.from_word_ids([[0, 1]], vocab=["a", "x", "c"])
    with pytest.raises(tl.InvalidCorpusError, match=r"1 ids differ, first at id 1 \('x' vs 'b'\)"):
        tl.heldout(model, c)
    tl.save_corpus(c, tmp_path / "c.npz")
    with pytest.raises(tl.InvalidCorpusError, match="does not match"):
        tl.read_corpus(tmp_path / "c.npz", vocab=model.vocab)


def test_unreadable_and_truncated_files(tmp_path, model):
    with pytest.raises(tl.InputFileError, match="no such file"):
        tl.load_model(tmp_path / "missing.npz")
    tl.save_model(model, tmp_path / "m.npz")
    data = (tmp_path / "m.npz").read_bytes()
    (tmp_path / "cut.npz").write_bytes(data[: len(data) // 2])
    with pytest.raises(tl.InputFileError, match="truncated or not a model"):
        tl.load_model(tmp_path / "cut.npz")
    (tmp_path / "junk.bin").write_bytes(b"\x00\x01junk")
    with pytest.raises(tl.InputFileError, match="cannot tell the model format"):
        tl.load_model(tmp_path / "junk.bin")
    (tmp_path / "latin1.txt").write_bytes("caf\xe9\n".encode("latin-1"))
    with pytest.raises(tl.InputFileError, match="not utf-8 text.*--encoding"):
        tl.read_corpus(tmp_path / "latin1.txt", vocab=model.vocab)
    (tmp_path / "ids.txt").write_text("0 1\n2 x\n")
    with pytest.raises(tl.InputFileError, match=r"ids.txt:2: token 'x' is not a whole number"):
        tl.read_corpus(tmp_path / "ids.txt", vocab=model.vocab, format="ids")


@pytest.mark.parametrize("kwargs,match", [
    ({"method": "magic"}, r"unknown heldout method 'magic' \(known: "),
    ({"method": "ais", "particles": 3},
     r"method 'ais' has no parameter 'particles' \(it takes: temperatures, schedule\)"),
    ({"method": "left-to-right", "particles": 0}, "particles must be an integer >= 1"),
    ({"method": "left-to-right", "particles": 2.5}, "particles must be an integer >= 1, got 2.5"),
    ({"method": "ais", "schedule": "cosine"}, "schedule must be one of geometric, sigmoid, linear"),
    ({"method": "left-to-right", "resample": False},
     r"parameter 'resample' was replaced by variant: .*'extend-only' \(was resample=False\)"),
    ({"method": "left-to-right", "variant": "smc2"},
     "variant must be one of smc, smc-full, algorithm-3, extend-only"),
    ({"method": "exact", "runs": 0}, "runs must be an integer >= 1"),
    ({"method": "exact", "seed": -1}, "seed must be an integer >= 0"),
])
def test_bad_methods_and_parameters(model, kwargs, match):
    with pytest.raises(tl.MethodError, match=match):
        tl.heldout(model, [[0, 1]], **kwargs)


def test_bad_completion_options(model):
    with pytest.raises(tl.MethodError, match="unknown completion method 'chib'"):
        tl.completion(model, [[0, 1]], method="chib")
    with pytest.raises(tl.MethodError, match=r"observed must be a fraction in \[0, 1\)"):
        tl.completion(model, [[0, 1]], observed=1.5)
    with pytest.raises(tl.MethodError, match="split must be one of first, random"):
        tl.completion(model, [[0, 1]], split="middle")


def test_strict_mode(tmp_path, model):
    p = tmp_path / "d.txt"
    p.write_text("a b zz\n", encoding="utf-8")
    with pytest.raises(tl.InvalidCorpusError, match=r"1 tokens are not in the model's vocabulary .*'zz'"):
        tl.read_corpus(p, vocab=model.vocab, strict=True)
    p.write_text("a b\n\n", encoding="utf-8")
    with pytest.raises(tl.InvalidCorpusError, match="line 2 is an empty document"):
        tl.read_corpus(p, vocab=model.vocab, strict=True)


# ---------------------------------------------------------------- the command line


@pytest.fixture
def files(tmp_path, model):
    tl.save_model(model, tmp_path / "m.npz")
    (tmp_path / "d.txt").write_text("a b c\nb b\n", encoding="utf-8")
    long = " ".join(["a", "b", "c"] * 700)
    (tmp_path / "long.txt").write_text(long + "\n", encoding="utf-8")
    (tmp_path / "oov.txt").write_text("a qq\n", encoding="utf-8")
    (tmp_path / "empty.txt").write_text("", encoding="utf-8")
    (tmp_path / "allqq.txt").write_text("qq qq\nqq\n", encoding="utf-8")
    (tmp_path / "bad.npz").write_bytes(b"PK\x03\x04 truncated")
    (tmp_path / "nan.npz").write_bytes(b"")
    np.savez(tmp_path / "nan.npz", phi=PHI, alpha=np.array([np.nan, 1.0]))
    np.savez(tmp_path / "unnorm.npz", phi=PHI * 2, alpha=np.array([1.0, 1.0]), vocab=np.array(model.vocab))
    (tmp_path / "vocab.txt").write_text("a\nb\nx\n", encoding="utf-8")
    (tmp_path / "ids.txt").write_text("0 1 2\n", encoding="utf-8")
    return tmp_path


CLI_CASES = [
    (["heldout", "{d}/m.npz", "{d}/missing.txt"], "missing.txt: cannot read"),
    (["heldout", "{d}/bad.npz", "{d}/d.txt"], "bad.npz: cannot read model .npz"),
    (["heldout", "{d}/nan.npz", "{d}/d.txt"], r"nan.npz: alpha\[0\] is not finite"),
    (["heldout", "{d}/unnorm.npz", "{d}/d.txt"], "sums to 2, not 1"),
    (["heldout", "{d}/m.npz", "{d}/d.txt", "--method", "magic"], "unknown heldout method 'magic'"),
    (["heldout", "{d}/m.npz", "{d}/d.txt", "--method", "ais", "--particles", "3"],
     "--particles does not apply to ais"),
    (["heldout", "{d}/m.npz", "{d}/d.txt", "--particles", "0"], "particles must be an integer >= 1"),
    (["heldout", "{d}/m.npz", "{d}/long.txt", "--method", "exact", "--max-states", "1000"],
     r"exact: document 0: N=2100 tokens and T=2 topics need C\(N\+T-1, T-1\) = 2.1e\+03"),
    (["heldout", "{d}/m.npz", "{d}/oov.txt", "--strict"], "not in the model's vocabulary"),
    (["heldout", "{d}/m.npz", "{d}/ids.txt", "--format", "ids", "--vocab", "{d}/vocab.txt"],
     "does not match the model"),
    (["heldout", "{d}/m.npz", "{d}/d.txt", "--json", "{d}/no/such/dir/out.json"],
     "the folder .* does not exist"),
    (["completion", "{d}/m.npz", "{d}/d.txt", "--observed", "2"],
     "--observed: must be a finite number >= 0.0 and < 1.0"),
    (["heldout", "{d}/m.npz", "{d}/empty.txt"], "empty.txt: no documents"),
    (["heldout", "{d}/m.npz", "{d}/allqq.txt"], "no token is in the model's vocabulary (3 dropped)"),
]


@pytest.mark.parametrize("argv,message", CLI_CASES)
def test_cli_errors_are_one_line_with_status_2(files, capsys, argv, message):
    code = main([a.format(d=files) for a in argv])
    err = capsys.readouterr().err
    assert code == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("tealeaves: error: "), err
    assert message in lines[0] or re.search(message, lines[0]), lines[0]


def test_cli_warns_when_most_tokens_are_unknown(files, capsys):
    (files / "mostly.txt").write_text("a qq qq zz\n", encoding="utf-8")
    assert main(["heldout", f"{files}/m.npz", f"{files}/mostly.txt", "--method", "exact"]) == 0
    captured = capsys.readouterr()
    assert "warning: 75% of the tokens" in captured.err
    assert "most frequent dropped words: qq x2, zz x1" in captured.out


def test_cli_normalize_flag_accepts_unnormalised_rows(files, capsys):
    assert main(["heldout", f"{files}/unnorm.npz", f"{files}/d.txt", "--method", "exact",
                 "--normalize"]) == 0


def test_cli_subprocess_has_no_traceback(files):
    proc = subprocess.run([sys.executable, "-m", "tealeaves", "heldout", f"{files}/bad.npz",
                           f"{files}/d.txt"], capture_output=True, text=True)
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr and proc.stderr.startswith("tealeaves: error:")
    proc = subprocess.run([sys.executable, "-m", "tealeaves", "heldout"], capture_output=True, text=True)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
