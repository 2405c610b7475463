"""Rank-biased overlap, IRBO, embedding-weighted IRBO, the word-vector reader and embedding
coherence (issue 25, point 5). Expected values are worked out by hand from the formulas quoted in
each test, or are OCTIS 1.14.0's numbers (noted where used)."""

from __future__ import annotations

import gzip
import math
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from tealeaves.coherence import topic_words
from tealeaves.coherence.embeddings import (
    Vectors,
    embedding_coherence,
    read_vectors,
    train_vectors,
    we_irbo,
)
from tealeaves.coherence.rbo import irbo, rbo
from tealeaves.errors import InputFileError, MethodError

R2 = math.sqrt(2)

# 2-d vectors with simple cosines: cos(a, b) = 0, cos(a, c) = cos(b, c) = 1/sqrt 2, cos(a, d) = -1
VECS = {"a": [1.0, 0.0], "b": [0.0, 1.0], "c": [1.0, 1.0], "d": [-1.0, 0.0], "z": [0.0, 0.0],
        "e": [0.5, -1.0]}


# -- RBO ---------------------------------------------------------------------------------------

# RBO_ext (Webber et al. eq. 32); equal lengths k: (1-p)/p sum_d A_d p^d + p^k A_k, A_d = X_d / d
@pytest.mark.parametrize(("a", "b", "p", "expected"), [
    ("abc", "abc", 0.5, 1.0),          # A = 1, 1, 1: 1 * (.5 + .25 + .125) + .125
    ("abc", "bac", 0.5, 0.5),          # A = 0, 1, 1: (.25 + .125) + .125
    ("abc", "def", 0.5, 0.0),
    ("ab", "ca", 0.5, 0.25),           # A = 0, 1/2: .25 * .5 + .25 * .5
    # s=1, l=3, X = 1, 1, 1: sum1 = .5 + .125 + 1/24, sum2 = .125 + 1/12, + .125
    ("abc", "a", 0.5, 1.0),
    ("ab", "bcd", 0.5, 0.25),          # s=2, X = 0, 1, 1: sum1 = 1/8 + 1/24, sum2 = 1/48, + .125 * (0 + 1/2)
    ("abcdefg", "abcdefg", 0.9, 1.0),  # OCTIS rbo.py doctests: rbo_ext = 1.0 and 0.9
    ("abcdefg", "bacdefg", 0.9, 0.9),
])
def test_rbo_by_hand(a, b, p, expected):
    assert rbo(list(a), list(b), p) == pytest.approx(expected, abs=1e-12)
    assert rbo(list(b), list(a), p) == pytest.approx(expected, abs=1e-12)


def test_rbo_bad_input():
    with pytest.raises(MethodError, match="persistence"):
        rbo(["a"], ["a"], 1.0)
    with pytest.raises(MethodError, match="repeated"):
        rbo(["a", "a"], ["a", "b"])
    with pytest.raises(MethodError, match="non-empty"):
        rbo([], ["a"])


def test_irbo_by_hand():
    # RBO(1,2) = 0.5 (above), RBO(1,3) = RBO(2,3) = 0: IRBO = 1 - (0.5 / 3)
    assert irbo([["a", "b", "c"], ["b", "a", "c"], ["d", "e", "f"]], topn=3, p=0.5) == pytest.approx(5 / 6)


def test_irbo_matches_octis_on_bundled_model():
    # OCTIS 1.14.0 InvertedRBO(topk=10, weight=0.9) on sotu-20-asym's top 10 words: 0.9448288787546617
    import tealeaves as tl

    assert irbo(tl.load_topics("sotu:sotu-20-asym"), 10, 0.9) == pytest.approx(0.9448288787546617, abs=1e-12)


def test_irbo_needs_two_topics_of_topn_words():
    with pytest.raises(MethodError, match="at least 2 topics"):
        irbo([["a", "b"]], topn=2)
    with pytest.raises(MethodError, match="has 2 word"):
        irbo([["a", "b"], ["c", "d", "e"]], topn=3)


# -- vector files --------------------------------------------------------------------------------

def _text_rows(vecs, trailing=""):
    return "".join(f"{w} {' '.join(repr(x) for x in v)}{trailing}\n" for w, v in vecs.items())


def write_formats(tmp_path, vecs=VECS):
    """The same vectors as word2vec text, word2vec binary, GloVe, fastText .vec (a trailing space
    on each row, as fastText writes) and gzipped word2vec text."""
    dim = len(next(iter(vecs.values())))
    head = f"{len(vecs)} {dim}\n"
    files = {"w2v.txt": head + _text_rows(vecs), "glove.txt": _text_rows(vecs),
             "ft.vec": head + _text_rows(vecs, " ")}
    out = {}
    for name, text in files.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
        out[name] = tmp_path / name
    binary = head.encode() + b"".join(w.encode() + b" " + np.asarray(v, "<f4").tobytes() + b"\n"
                                      for w, v in vecs.items())
    (tmp_path / "w2v.bin").write_bytes(binary)
    out["w2v.bin"] = tmp_path / "w2v.bin"
    (tmp_path / "w2v.txt.gz").write_bytes(gzip.compress(files["w2v.txt"].encode()))
    out["w2v.txt.gz"] = tmp_path / "w2v.txt.gz"
    return out


def test_every_format_detected_and_read_the_same(tmp_path):
    formats = {"w2v.txt": "word2vec", "glove.txt": "glove", "ft.vec": "word2vec",
               "w2v.bin": "word2vec-binary", "w2v.txt.gz": "word2vec"}
    for name, path in write_formats(tmp_path).items():
        vec = read_vectors(path, ["a", "c", "q"])
        assert vec.info["format"] == formats[name], name
        assert vec.dim == 2
        assert sorted(vec.vectors) == ["a", "c"]
        np.testing.assert_array_equal(vec.vectors["c"], [1.0, 1.0])


def test_embedding_coherence_by_hand_and_same_in_every_format(tmp_path):
    topics = [["a", "b", "c"], ["a", "b", "q"], ["a", "q", "z"]]
    for path in write_formats(tmp_path).values():
        pw = embedding_coherence(topics, path, "pairwise", topn=3)
        ce = embedding_coherence(topics, path, "centroid", topn=3)
        # pairwise: mean of cos(a,b)=0, cos(a,c)=cos(b,c)=1/sqrt2; topic 1: q has no vector, cos(a,b)=0
        assert pw.per_topic[0] == pytest.approx(R2 / 3)
        assert pw.per_topic[1] == pytest.approx(0.0)
        # centroid of a, b, c is along (1, 1): cosines 1/sqrt2, 1/sqrt2, 1
        assert ce.per_topic[0] == pytest.approx((R2 + 1) / 3)
        # topic 2: only a has a vector (z is all zeros: no direction): undefined, listed, counted
        assert math.isnan(pw.per_topic[2]) and math.isnan(ce.per_topic[2])
        assert pw.missing == [[], ["q"], ["q", "z"]]
        assert pw.params["undefined_topics"] == 1
        assert pw.score == pytest.approx((R2 / 3 + 0) / 2)


def test_octis_convention_by_hand():
    # OCTIS divides each vector by its component sum: d = (-1, 0) becomes (1, 0), so a and d,
    # opposite (cosine -1), score 1; (2 ordered pairs) / (topn (topn - 1) = 2)
    ours = embedding_coherence([["a", "d"]], VECS, "pairwise", topn=2)
    octis = embedding_coherence([["a", "d"]], VECS, "pairwise", topn=2, convention="octis")
    assert ours.per_topic[0] == pytest.approx(-1.0) and octis.per_topic[0] == pytest.approx(1.0)
    # centroid: E_a = (1, 0), E_e = (.5, -1) / -.5 = (-1, 2); t = a + e = (1.5, -1), sum .5 > 0.
    # distances 1 - 1.5/sqrt 3.25 and 1 + 3.5/(sqrt 5 sqrt 3.25), summed, / topn
    octis = embedding_coherence([["a", "e"]], VECS, "centroid", topn=2, convention="octis")
    s325 = math.sqrt(3.25)
    assert octis.per_topic[0] == pytest.approx((1 - 1.5 / s325 + 1 + 3.5 / (math.sqrt(5) * s325)) / 2)
    # ours: mean cosine with the centroid's direction (1.5, -1): 1.5/sqrt 3.25 and 1.75/(sqrt 1.25 sqrt 3.25)
    ours = embedding_coherence([["a", "e"]], VECS, "centroid", topn=2)
    assert ours.per_topic[0] == pytest.approx((1.5 / s325 + 1.75 / (math.sqrt(1.25) * s325)) / 2)
    # OCTIS divides by topn (topn - 1) whatever is missing; a topic without vectors scores -1
    part = embedding_coherence([["a", "c", "q"], ["q", "r", "s"]], VECS, "pairwise", topn=3,
                               convention="octis")
    np.testing.assert_allclose(part.per_topic, [2 / R2 / 6, -1.0])
    with pytest.raises(MethodError, match="convention"):
        embedding_coherence([["a", "d"]], VECS, convention="gensim")


def test_pairwise_equals_gensim_similarity(tmp_path):
    gensim = pytest.importorskip("gensim")
    rng = np.random.default_rng(7)
    words = [f"w{i}" for i in range(6)]
    kv = gensim.models.KeyedVectors(vector_size=5)
    kv.add_vectors(words, rng.normal(size=(6, 5)).astype(np.float32))
    for binary in (True, False):
        path = tmp_path / f"kv{binary}"
        kv.save_word2vec_format(str(path), binary=binary)
        res = embedding_coherence([words[:2], words[2:5]], path, "pairwise", topn=3)
        assert res.per_topic[0] == pytest.approx(float(kv.similarity("w0", "w1")), abs=1e-6)
        expected = np.mean([kv.similarity("w2", "w3"), kv.similarity("w2", "w4"), kv.similarity("w3", "w4")])
        assert res.per_topic[1] == pytest.approx(float(expected), abs=1e-6)
        # a KeyedVectors object itself is accepted as the vectors
        assert embedding_coherence([words[:2]], kv, "pairwise", topn=2).per_topic[0] == pytest.approx(
            res.per_topic[0], abs=1e-6)


# -- embedding-weighted IRBO -------------------------------------------------------------------

def test_we_irbo_match_by_hand():
    # angular similarity 1 - arccos(cos)/pi: a-c .75, a-d 0, b-c .75, b-d .5.
    # X_1 = sim(a, c) = .75; X_2: greedy matching of [[.75, 0], [.75, .5]]: (a,c) .75 then (b,d) .5 = 1.25
    # RBO_ext, k=2, p=.5: (.75 * .5 + 1.25/2 * .25) + .25 * 1.25/2 = .6875
    res = we_irbo([["a", "b"], ["c", "d"]], VECS, topn=2, p=0.5, variant="match")
    assert res.score == pytest.approx(1 - 0.6875)
    np.testing.assert_allclose(res.per_topic, [0.3125, 0.3125])
    # cosine: X_1 = 1/sqrt2, X_2: [[r, -1], [r, 0]] -> r + 0; RBO = r * (.5 + .125 + .125)
    cos = we_irbo([["a", "b"], ["c", "d"]], VECS, topn=2, p=0.5, variant="match", normalize=False)
    assert cos.score == pytest.approx(1 - 0.75 / R2)


def test_we_irbo_centroid_by_hand():
    # X_1 = angular(a, c) = .75; X_2 = angular(a+b, c+d) = angular((1,1), (0,1)) = .75
    # OCTIS's agreement is X_d / d: RBO = (.75 * .5 + .75/2 * .25) + .25 * .75/2 = .5625
    res = we_irbo([["a", "b"], ["c", "d"]], VECS, topn=2, p=0.5, variant="centroid")
    assert res.score == pytest.approx(1 - 0.5625)
    # so two identical topics do not reach RBO 1 (OCTIS's definition): (.5 + .25/2) + .25/2 = .75
    same = we_irbo([["a", "b"], ["a", "b"]], VECS, topn=2, p=0.5, variant="centroid")
    assert same.score == pytest.approx(0.25)


def test_we_irbo_word_without_vector_matches_only_itself():
    # q has no vector: sims a-q 0, a-b .5, q-q 1, q-b 0. X_1 = 0; X_2 = 1 + .5
    # RBO = (0 + 1.5/2 * .25) + .25 * 1.5/2 = .375
    res = we_irbo([["a", "q"], ["q", "b"]], VECS, topn=2, p=0.5, variant="match")
    assert res.score == pytest.approx(0.625)
    assert res.missing == [["q"], ["q"]]


def test_we_irbo_with_orthogonal_vectors_is_irbo():
    # one-hot vectors: cosine 1 for the same word, 0 otherwise: the match overlap is the plain overlap
    import tealeaves as tl

    words = topic_words(tl.load_topics("sotu:sotu-20-asym"), 10)
    vocab = sorted({w for t in words for w in t})
    onehot = {w: np.eye(len(vocab))[i] for i, w in enumerate(vocab)}
    res = we_irbo(words, onehot, topn=10, p=0.9, variant="match", normalize=False)
    assert res.score == pytest.approx(0.9448288787546617, abs=1e-12)  # OCTIS's IRBO, above


def test_we_irbo_bad_variant():
    with pytest.raises(MethodError, match="variant"):
        we_irbo([["a", "b"], ["c", "d"]], VECS, topn=2, variant="mean")


# -- damaged files: one-line errors naming file and line ---------------------------------------

@pytest.mark.parametrize(("text", "match"), [
    ("3 2\na 1 0\nb 0\nc 1 1\n", r":3: 1 values, expected 2"),
    ("3 2\na 1 0\nb 0 1 1\nc 1 1\n", r":3: 3 values, expected 2"),
    ("3 2\na 1 0\nb 0 1\n", "header says 3 vectors, the file has 2"),
    ("2 2\na 1 0\nb 0 1\nc 1 1\n", "header says 2 vectors, the file has 3"),
    ("2 2\na 1 x\nb 0 1\n", r":2: a vector's values must be finite numbers, got 'x'"),
    ("2 2\na 1 nan\nb 0 1\n", r":2: a vector's values must be finite numbers, got 'nan'"),
    ("2 2\na 1 1_0\nb 0 1\n", r":2: a vector's values must be finite numbers, got '1_0'"),  # float() takes it
    ("1" * 5000 + " 2\na 1 0\n", r":1: the header's number of vectors '1111.* is not a whole number"),
    ("", "empty"),
    ("a 1 0\nb 0 1 2\n", r":2: 3 values, expected 2"),  # GloVe: the first row sets the dimension
    ("2 0\na\nb\n", "dimension 0"),
])
def test_damaged_text_files(tmp_path, text, match):
    path = tmp_path / "v.txt"
    path.write_text(text)
    with pytest.raises(InputFileError, match=match) as err:
        read_vectors(path, ["a", "b"])
    assert "\n" not in str(err.value) and str(path) in str(err.value)


def test_damaged_binary_files(tmp_path):
    good = write_formats(tmp_path)["w2v.bin"].read_bytes()
    cut = tmp_path / "cut.bin"
    cut.write_bytes(good[:-7])
    with pytest.raises(InputFileError, match="truncated: ends in vector 6 of 6"):
        read_vectors(cut, ["a"])
    extra = tmp_path / "extra.bin"
    extra.write_bytes(good + b"more 12345678")
    with pytest.raises(InputFileError, match="more data after the 6 vectors"):
        read_vectors(extra, ["a"])
    nan = tmp_path / "nan.bin"
    nan.write_bytes(b"1 2\na " + np.array([np.nan, 1], "<f4").tobytes())
    with pytest.raises(InputFileError, match="NaN"):
        read_vectors(nan, ["a"])


def test_format_given_that_does_not_fit(tmp_path):
    files = write_formats(tmp_path)
    with pytest.raises(InputFileError, match="no header line"):
        read_vectors(files["glove.txt"], ["a"], format="word2vec")
    with pytest.raises(MethodError, match="unknown vector format"):
        read_vectors(files["w2v.txt"], ["a"], format="bert")


def test_word_utf8_cannot_spell_is_missing(tmp_path):
    path = write_formats(tmp_path)["w2v.txt"]
    res = embedding_coherence([["a", "c", "\udcff"]], path, "pairwise", topn=3)
    assert res.missing == [["\udcff"]] and res.per_topic[0] == pytest.approx(1 / R2)


def test_duplicates_keep_the_first_and_are_counted(tmp_path):
    path = tmp_path / "dup.txt"
    path.write_text("3 2\na 1 0\na 0 1\nb 0 1\n")
    vec = read_vectors(path, ["a", "b"])
    np.testing.assert_array_equal(vec.vectors["a"], [1, 0])
    assert vec.info["duplicates"] == 1


def test_glove_words_with_spaces_are_skipped_and_counted(tmp_path):
    path = tmp_path / "g.txt"
    path.write_text("a 1 0\nat name 0 1\nb 0 1\n\n")
    vec = read_vectors(path, ["a", "b", "name"])
    assert sorted(vec.vectors) == ["a", "b"]
    assert vec.info["words_with_spaces"] == 1 and vec.info["blank_lines"] == 1


def test_reader_keeps_only_the_rows_asked_for(tmp_path):
    rows = {f"w{i}": [float(i), 1.0] for i in range(2000)}
    path = write_formats(tmp_path, rows)["w2v.bin"]
    vec = read_vectors(path, ["w5", "w1999", "absent"])
    assert sorted(vec.vectors) == ["w1999", "w5"] and vec.info["rows"] == 2000


# -- training on the reference -----------------------------------------------------------------

TRAIN = textwrap.dedent("""
    import sys
    from tealeaves.corpus import Corpus
    from tealeaves.coherence.embeddings import train_vectors
    docs = [["tax", "budget", "deficit", "year"], ["war", "army", "navy", "peace"]] * 30
    vec = train_vectors(Corpus.from_tokens(docs, sorted({w for d in docs for w in d})), dim=8, epochs=3)
    print(repr(vec.vectors["tax"].tolist()))
""")


def test_trained_vectors_are_the_same_in_every_process():
    pytest.importorskip("gensim")
    outs = set()
    for seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        outs.add(subprocess.run([sys.executable, "-c", TRAIN], env=env, capture_output=True, text=True,
                                check=True).stdout)
    assert len(outs) == 1


def test_train_vectors_checks_its_parameters():
    with pytest.raises(MethodError, match="dim must be"):
        train_vectors("sotu:train", dim=0)


def test_vectors_of_different_lengths_refused():
    with pytest.raises(MethodError, match="different lengths"):
        Vectors.from_mapping({"a": [1, 0], "b": [1, 0, 0]}, ["a", "b"])


# -- the command -------------------------------------------------------------------------------

def run(*argv):
    from tealeaves.cli import main

    return main(list(argv))


def test_cli_embedding_coherence_and_irbo(tmp_path, capsys):
    files = write_formats(tmp_path)
    topics = tmp_path / "topics.txt"
    topics.write_text("a b c\nc d e\n")
    assert run("embedding-coherence", str(topics), str(files["glove.txt"]), "--topn", "3") == 0
    out = capsys.readouterr().out
    assert "pairwise" in out and f"{R2 / 3:.4f}" in out
    assert run("irbo", str(topics), "--topn", "3", "--vectors", str(files["w2v.bin"]), "--json",
               str(tmp_path / "r.json")) == 0
    assert "IRBO" in capsys.readouterr().out
    import json

    data = json.loads((tmp_path / "r.json").read_text())
    assert [r["measure"] for r in data["embedding"]] == ["we_irbo_match", "we_irbo_centroid"]


def test_cli_damaged_vectors_one_line(tmp_path, capsys):
    topics = tmp_path / "topics.txt"
    topics.write_text("a b\n")
    bad = tmp_path / "bad.vec"
    bad.write_text("2 2\na 1 0\n")
    assert run("embedding-coherence", str(topics), str(bad), "--topn", "2") == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("tealeaves: error:") and "header says 2 vectors" in err and "\n" not in err


def test_cli_needs_vectors(tmp_path, capsys):
    topics = tmp_path / "topics.txt"
    topics.write_text("a b\n")
    assert run("embedding-coherence", str(topics), "--topn", "2") == 2
    assert "needs word vectors" in capsys.readouterr().err


# -- fuzzed vector files: a one-line error or finite vectors of the header's length ----------------

def _fuzz_seeds(tmp_path_factory) -> dict[str, bytes]:
    d = tmp_path_factory.mktemp("seeds")
    return {name: path.read_bytes() for name, path in write_formats(d).items()}


@pytest.mark.parametrize("name", ["w2v.txt", "glove.txt", "ft.vec", "w2v.bin", "w2v.txt.gz"])
def test_fuzzed_vector_files(tmp_path_factory, name):
    from hypothesis import HealthCheck, given, settings
    from test_fuzz import variants

    seed = _fuzz_seeds(tmp_path_factory)[name]
    folder = tmp_path_factory.mktemp("fuzz")

    @settings(max_examples=int(os.environ.get("TEALEAVES_FUZZ_EXAMPLES", "100")), deadline=None,
              derandomize=True, database=None, suppress_health_check=[HealthCheck.too_slow])
    @given(data=variants(seed))  # random bytes, truncations and byte edits of the seed (test_fuzz's)
    def run(data):
        path = folder / name
        path.write_bytes(data)
        try:
            vec = read_vectors(path, list(VECS))
        except (InputFileError, MethodError) as exc:
            assert "\n" not in str(exc).strip()
            return
        for v in vec.vectors.values():
            assert v.shape == (vec.dim,) and np.all(np.isfinite(v))

    run()
