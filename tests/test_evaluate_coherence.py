"""`evaluate`'s coherence options: the absent-word policy (`--absent`), the coherence fingerprint in
its CSV as in its JSON, IRBO for every model with top words, and word-embedding coherence and
WE-IRBO with `--embeddings`; bad values of the new options are one-line errors."""

from __future__ import annotations

import csv
import json

import numpy as np
import pytest

import tealeaves as tl
from tealeaves import datasets
from tealeaves.coherence import topic_words
from tealeaves.coherence.embeddings import embedding_coherence, we_irbo
from tealeaves.coherence.rbo import irbo
from tealeaves.errors import MethodError


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """A model, held-out documents, a reference that lacks two of topic 0's top words, and word
    vectors (word2vec text) for most of the model's top words."""
    d = tmp_path_factory.mktemp("evalcoh")
    c = datasets.sotu()
    model = datasets.sotu_model("sotu-20-asym")
    tl.save_model(model, d / "m.npz")
    words = topic_words(model, 10)
    gone = set(words[0][3:5])
    (d / "held.txt").write_text("".join(" ".join(c.heldout.vocab[i] for i in doc) + "\n"
                                        for doc in list(c.heldout)[:3]))
    (d / "ref.txt").write_text("".join(" ".join(w for w in (c.train.vocab[i] for i in doc) if w not in gone)
                                       + "\n" for doc in list(c.train)[:800]))
    rng = np.random.default_rng(7)
    vocab = sorted({w for t in words for w in t})[:-5]  # the last five have no vector
    rows = [f"{w} " + " ".join(f"{x:.6f}" for x in rng.normal(size=8)) for w in vocab]
    (d / "vec.txt").write_text(f"{len(rows)} 8\n" + "\n".join(rows) + "\n")
    return d, model, sorted(gone)


def _evaluate(d, **kw):
    return tl.evaluate([d / "m.npz"], heldout=d / "held.txt", runs=1, particles=5,
                       coherence=("npmi", "umass"), **kw)


@pytest.mark.parametrize("absent", ["skip", "smooth"])
def test_absent_policy_reaches_coherence(files, absent):
    d, model, gone = files
    res = _evaluate(d, reference=d / "ref.txt", absent=absent)
    for m in ("npmi", "umass"):
        want = tl.coherence(model, d / "ref.txt", measure=m, absent=absent)
        assert res.rows[0]["coherence"][m] == want.mean
        assert res.params["coherence_fingerprint"][m]["absent"] == absent
    assert res.params["absent"] == absent


def test_absent_policies_differ_here(files):
    """The reference does lack words, so the policy changes the numbers (the test above can fail)."""
    d, model, gone = files
    skip = tl.coherence(model, d / "ref.txt", measure="npmi", absent="skip")
    smooth = tl.coherence(model, d / "ref.txt", measure="npmi", absent="smooth")
    assert skip.missing[0] == [w for w in topic_words(model, 10)[0] if w in gone] and skip.mean != smooth.mean


def test_absent_fail_names_the_topic(files):
    d, _, gone = files
    with pytest.raises(MethodError, match="topic 0: 2 of its top 10 words") as e:
        _evaluate(d, reference=d / "ref.txt", absent="fail")
    assert all(w in str(e.value) for w in gone) and "\n" not in str(e.value)


def test_irbo_always_and_embeddings_on_request(files):
    d, model, _ = files
    plain = _evaluate(d)
    assert plain.rows[0]["irbo"] == irbo(model, 10) and "we_pairwise" not in plain.rows[0]
    assert "IRBO" in plain.table() and "WE pair" not in plain.table()
    res = _evaluate(d, embeddings=d / "vec.txt")
    row = res.rows[0]
    assert row["we_pairwise"] == embedding_coherence(model, d / "vec.txt", "pairwise").score
    assert row["we_centroid"] == embedding_coherence(model, d / "vec.txt", "centroid").score
    assert row["we_irbo"] == we_irbo(model, d / "vec.txt").score
    words = topic_words(model, 10)
    vocab = sorted({w for t in words for w in t})
    assert row["we_missing_words"] == sum(w in vocab[-5:] for t in words for w in t) > 0
    assert res.params["embeddings"]["dim"] == 8
    assert all(h in res.table() for h in ("IRBO", "WE pair", "WE centroid", "WE-IRBO"))


def test_irbo_of_disjoint_and_identical_topics(tmp_path):
    """IRBO is 1 for topics that share no word and 0 for identical ones (its definition), as
    evaluate reports it for models of top words only."""
    from tealeaves.topics import Topics

    def row(lists):
        t = Topics(name="t", source="words", top_words=tuple(map(tuple, lists)))
        return tl.evaluate([t], coherence=(), topn=3)
    assert row([["a", "b", "c"], ["d", "e", "f"]]).rows[0]["irbo"] == 1.0
    assert row([["a", "b", "c"], ["a", "b", "c"]]).rows[0]["irbo"] == 0.0


def _cli(args, capsys):
    from tealeaves.cli import main

    code = main([str(a) for a in args])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_cli_csv_carries_the_fingerprint_of_the_json(files, tmp_path, capsys):
    d, _, _ = files
    code, out, err = _cli(["evaluate", d / "m.npz", "--heldout", d / "held.txt", "--reference", d / "ref.txt",
                           "--absent", "skip", "--embeddings", d / "vec.txt", "--runs", 1, "--particles", 5,
                           "--csv", tmp_path / "e.csv", "--json", tmp_path / "e.json", "--quiet",
                           "--report", tmp_path / "e.html"], capsys)
    assert code == 0, err
    doc = json.loads((tmp_path / "e.json").read_text())
    with open(tmp_path / "e.csv", newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    fp = json.loads(rows[0]["coherence_fingerprint"])
    assert fp == doc["params"]["coherence_fingerprint"] and fp["npmi"]["absent"] == "skip"
    assert float(rows[0]["we_irbo"]) == doc["rows"][0]["we_irbo"] and float(rows[0]["irbo"]) > 0
    assert "WE-IRBO" in out
    html = (tmp_path / "e.html").read_text()
    assert all(f'<th scope="col">{h}</th>' in html for h in ("IRBO", "WE pairwise", "WE-IRBO"))


def _one_line_error(code, err):
    assert code == 2 and err.startswith("tealeaves: error: ") and err.count("\n") == 1, err


def test_cli_absent_without_reference(files, capsys):
    d, _, _ = files
    code, _, err = _cli(["evaluate", d / "m.npz", "--heldout", d / "held.txt", "--absent", "skip"], capsys)
    _one_line_error(code, err)
    assert "reference" in err


def test_cli_absent_unknown_policy(files, capsys):
    d, _, _ = files
    code, _, err = _cli(["evaluate", d / "m.npz", "--heldout", d / "held.txt", "--absent", "drop"], capsys)
    _one_line_error(code, err)
    assert "--absent" in err and "'drop'" in err
    with pytest.raises(MethodError, match="absent must be one of skip, smooth, fail, got 'drop'"):
        tl.evaluate([d / "m.npz"], heldout=d / "held.txt", reference=d / "ref.txt", absent="drop")


@pytest.mark.parametrize("content,expected", [
    (None, "no such file"),
    ("3 8\nwar 0.1 0.2\n", "vec.txt"),
    ("", "vec.txt"),
])
def test_cli_bad_embeddings_file(files, tmp_path, capsys, content, expected):
    d, _, _ = files
    vec = tmp_path / "vec.txt"
    if content is not None:
        vec.write_text(content)
    code, _, err = _cli(["evaluate", d / "m.npz", "--heldout", d / "held.txt", "--embeddings", vec,
                         "--quiet"], capsys)
    _one_line_error(code, err)
    assert expected in err


def test_cli_embeddings_file_is_not_overwritten(files, capsys):
    d, _, _ = files
    before = (d / "vec.txt").read_bytes()
    code, _, err = _cli(["evaluate", d / "m.npz", "--heldout", d / "held.txt", "--embeddings", d / "vec.txt",
                         "--csv", d / "vec.txt"], capsys)
    _one_line_error(code, err)
    assert (d / "vec.txt").read_bytes() == before
