"""Raw held-out text meets a model's vocabulary: the default tokenizer, the user's own, and the
report of what was scored and dropped."""

from __future__ import annotations

import subprocess
import sys

import tealeaves as tl
from tealeaves.util.text import tokenize


def test_default_tokenizer():
    assert tokenize("The Nation's 3 big-ideas: Ünïcode, I, e.g. U.S.") == [
        "the",
        "nations",
        "big",
        "ideas",
        "ünïcode",
    ]
    assert tokenize("") == [] and tokenize("1990 -- ... 42") == []


def _cli(*args):
    return subprocess.run(
        [sys.executable, "-m", "tealeaves", *map(str, args)], capture_output=True, text=True
    )


def test_raw_text_is_tokenized_mapped_and_drops_reported(tmp_path):
    m = tl.synthetic.random_model(3, 6, seed=0)
    m = tl.TopicModel(m.phi, m.alpha, vocab=["peace", "war", "tax", "budget", "nations", "army"])
    p = tmp_path / "raw.txt"
    p.write_text("Peace, and WAR! The nation's budget.\nThe the THE of of of\nTax tax; army's army\n")
    c = tl.read_corpus(p, vocab=m.vocab, tokenizer="default")
    assert [c[d].tolist() for d in range(3)] == [[0, 1, 4, 3], [], [2, 2, 5]]  # "army's" -> "armys": unknown
    rep = c.report()
    assert rep["tokens"] == 7 and rep["oov_tokens"] == 9 and rep["empty_documents"] == 1
    assert rep["oov_top_words"] == {"the": 4, "of": 3, "and": 1, "armys": 1}
    own = tl.read_corpus(p, vocab=m.vocab, tokenizer=lambda s: s.lower().replace(",", " ").split())
    assert own.num_tokens == 3  # peace, tax, army: the other words keep their punctuation
    assert tl.read_corpus(p, vocab=m.vocab).num_tokens == 1  # whitespace: only "army" is a known word
    tl.save_model(m, tmp_path / "m.npz")
    r = _cli("heldout", tmp_path / "m.npz", p, "--tokenize", "default", "--particles", 3)
    assert r.returncode == 0, r.stderr
    assert "7 tokens scored, 9 dropped" in r.stdout and "the x4, of x3" in r.stdout
    assert (
        "1 empty documents" in r.stdout and "56% of the tokens" in r.stderr
    )
    (tmp_path / "other.txt").write_text("alpha beta\ngamma\n")
    r = _cli("heldout", tmp_path / "m.npz", tmp_path / "other.txt")
    assert r.returncode == 2 and "no token is in the model's vocabulary" in r.stderr
