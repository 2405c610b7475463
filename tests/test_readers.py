"""Model readers against the real libraries (gensim, scikit-learn, tomotopy: train a tiny model
here, save it the library's way, load it) and MALLET files written to MALLET's documented layout."""

from __future__ import annotations

import gzip
import json

import numpy as np
import pytest

import tealeaves as tl
from tealeaves.io import detect, mallet

DOCS = [
    ["apple", "pear", "fig", "plum"] * 3,
    ["car", "road", "wheel", "tyre"] * 3,
    ["apple", "car", "sky", "road"] * 2,
    ["pear", "plum", "fig", "sky"] * 2,
] * 6


def _mallet_state(path, T=3, beta=0.01, seed=0):
    """A MALLET `--output-state` file for DOCS with random topic assignments; returns the
    expected phi (computed here from the assignments), alpha and the vocabulary in type order."""
    rng = np.random.default_rng(seed)
    vocab: dict[str, int] = {}
    alpha = rng.uniform(0.05, 0.5, T)
    counts = np.zeros((T, 0)).tolist()
    lines = [
        "#doc source pos typeindex type topic",
        "#alpha : " + " ".join(repr(float(a)) for a in alpha) + " ",
        f"#beta : {beta}",
    ]
    assignments = []
    for d, doc in enumerate(DOCS):
        for pos, w in enumerate(doc):
            t = int(rng.integers(T))
            idx = vocab.setdefault(w, len(vocab))
            assignments.append((t, idx))
            lines.append(f"{d} file:/data/doc {d}.txt {pos} {idx} {w} {t}")  # a source with a space
    V = len(vocab)
    counts = np.zeros((T, V))
    for t, w in assignments:
        counts[t, w] += 1
    phi = np.array(
        [[(counts[t, w] + beta) / (counts[t].sum() + V * beta) for w in range(V)] for t in range(T)]
    )
    with gzip.open(path, "wt", encoding="utf-8") as fh:
        fh.write("\n".join(lines) + "\n")
    return phi, alpha, list(vocab), counts


def test_mallet_state_weights_and_keys(tmp_path):
    phi, alpha, vocab, counts = _mallet_state(tmp_path / "state.gz")
    m = tl.load_model(tmp_path / "state.gz")
    assert detect(str(tmp_path / "state.gz")) == "mallet-state"
    np.testing.assert_allclose(m.phi, phi, rtol=1e-12)
    np.testing.assert_allclose(m.alpha, alpha, rtol=1e-15)
    assert list(m.vocab) == vocab and m.beta == 0.01
    # the same model as topic-word weights (beta + n_wt for every pair) and topic keys (alpha)
    T, V = counts.shape
    with open(tmp_path / "weights.txt", "w") as fh:
        for t in range(T):
            for w in range(V):
                fh.write(f"{t}\t{vocab[w]}\t{0.01 + counts[t, w]}\n")
    with open(tmp_path / "keys.txt", "w") as fh:
        for t in range(T):
            top = " ".join(vocab[w] for w in np.argsort(-counts[t])[:5])
            fh.write(f"{t}\t{float(alpha[t])!r}\t{top}\n")
    w = tl.load_model(tmp_path / "weights.txt", alpha=tmp_path / "keys.txt")
    np.testing.assert_allclose(w.phi, phi, rtol=1e-12)
    np.testing.assert_allclose(w.alpha, alpha, rtol=1e-15)
    assert list(w.vocab) == vocab and w.beta is None  # the weights file does not state beta
    with pytest.raises(tl.MethodError, match="carry no alpha"):
        tl.load_model(tmp_path / "weights.txt")
    a, top = mallet.read_topic_keys(tmp_path / "keys.txt")
    assert len(top) == T and len(top[0]) == 5


def test_mallet_doc_topics_both_layouts(tmp_path):
    theta = np.random.default_rng(1).dirichlet(np.ones(4), size=3)
    with open(tmp_path / "new.txt", "w") as fh:
        for d, row in enumerate(theta):
            fh.write(f"{d}\tdoc{d}.txt\t" + "\t".join(repr(float(x)) for x in row) + "\n")
    with open(tmp_path / "old.txt", "w") as fh:
        fh.write("#doc name topic proportion ...\n")
        for d, row in enumerate(theta):
            order = np.argsort(-row)
            fh.write(f"{d} doc{d}.txt " + " ".join(f"{t} {float(row[t])!r}" for t in order) + " \n")
    for f in ("new.txt", "old.txt"):
        names, got = tl.io.read_doc_topics(tmp_path / f, num_topics=4)
        assert names == ["doc0.txt", "doc1.txt", "doc2.txt"]
        np.testing.assert_allclose(got, theta, rtol=1e-15)


def test_mallet_bad_files(tmp_path):
    p = tmp_path / "s.gz"
    with gzip.open(p, "wt") as fh:
        fh.write("#doc source pos typeindex type topic\n#alpha : 0.1 0.1\n#beta : 0.01\n0 NA 0 0 a 5\n")
    with pytest.raises(tl.InputFileError, match="topic 5 but #alpha has 2 values"):
        tl.load_model(p)
    with gzip.open(p, "wt") as fh:
        fh.write("#doc source pos typeindex type topic\n#alpha : 0.1 0.1\n#beta : 0.01\n0 NA 0 x a 1\n")
    with pytest.raises(tl.InputFileError, match=r"s.gz:4: typeindex 'x' is not a whole number"):
        tl.load_model(p)
    with gzip.open(p, "wt") as fh:
        fh.write("#doc source pos typeindex type topic\n0 NA 0 0 a 1\n")
    with pytest.raises(tl.InputFileError, match="no '#alpha :'"):
        tl.load_model(p, format="mallet-state")
    w = tmp_path / "w.txt"
    w.write_text("0\ta\t1.5\n0\tb\t0.5\n1\ta\t2\n")
    with pytest.raises(tl.InputFileError, match="3 weights for 2 topics x 2 words"):
        tl.load_model(w, alpha=[0.1, 0.1])
    (tmp_path / "junk.bin").write_bytes(b"\x00\x01junk")
    with pytest.raises(tl.InputFileError, match="cannot tell the model format"):
        tl.load_model(tmp_path / "junk.bin")


def test_gensim_lda_saved_and_loaded(tmp_path):
    from gensim.corpora import Dictionary
    from gensim.models import LdaModel

    dictionary = Dictionary(DOCS)
    bow = [dictionary.doc2bow(d) for d in DOCS]
    lda = LdaModel(
        bow, id2word=dictionary, num_topics=3, alpha="asymmetric", eta=0.05, random_state=1, passes=2
    )
    lda.save(str(tmp_path / "lda.gensim"))
    assert detect(str(tmp_path / "lda.gensim")) == "gensim"
    with pytest.raises(tl.MethodError, match="unpickling runs code"):
        tl.load_model(tmp_path / "lda.gensim")  # a pickle: only with consent
    m = tl.load_model(tmp_path / "lda.gensim", allow_pickle=True)
    np.testing.assert_allclose(m.phi, lda.get_topics() / lda.get_topics().sum(1, keepdims=True), rtol=1e-6)
    np.testing.assert_allclose(m.alpha, lda.alpha)
    assert len(set(np.round(m.alpha, 8))) == 3  # asymmetric kept
    assert list(m.vocab) == [dictionary[i] for i in range(len(dictionary))] and m.beta == pytest.approx(0.05)
    assert tl.load_model(lda).vocab == m.vocab  # the object itself
    bare = LdaModel(bow, num_topics=2, random_state=1)  # no id2word: gensim invents ids
    bare.save(str(tmp_path / "bare.gensim"))
    b = tl.load_model(tmp_path / "bare.gensim", allow_pickle=True)
    assert b.vocab is None and "saved without its dictionary" in b.metadata["vocab"]
    with pytest.raises(tl.MethodError, match="no vocabulary"):
        tl.coherence(b, DOCS)


def test_sklearn_lda_with_vectorizer_and_pipeline():
    from sklearn.decomposition import LatentDirichletAllocation
    from sklearn.feature_extraction.text import CountVectorizer
    from sklearn.pipeline import make_pipeline

    texts = [" ".join(d) for d in DOCS]
    vec = CountVectorizer()
    X = vec.fit_transform(texts)
    lda = LatentDirichletAllocation(
        n_components=3, doc_topic_prior=0.2, topic_word_prior=0.05, random_state=0
    ).fit(X)
    m = tl.load_model(lda, vocab=vec)
    np.testing.assert_allclose(m.phi, lda.components_ / lda.components_.sum(1, keepdims=True), rtol=1e-12)
    np.testing.assert_allclose(m.alpha, [0.2] * 3)
    assert list(m.vocab) == list(vec.get_feature_names_out()) and m.beta == 0.05
    pipe = make_pipeline(CountVectorizer(), LatentDirichletAllocation(n_components=2, random_state=0)).fit(
        texts
    )
    p = tl.load_model(pipe)
    assert list(p.vocab) == list(pipe[0].get_feature_names_out())
    np.testing.assert_allclose(p.alpha, [0.5, 0.5])  # scikit-learn's default 1 / n_components
    with pytest.raises(tl.MethodError, match="vocabulary has 2 words but the model"):
        tl.load_model(lda, vocab=["a", "b"])
    with pytest.raises(tl.InvalidModelError, match="not fitted"):
        tl.load_model(LatentDirichletAllocation(n_components=2))


def test_tomotopy_uses_used_vocabs_and_optimised_alpha(tmp_path):
    import tomotopy as tp

    mdl = tp.LDAModel(k=3, alpha=0.3, eta=0.02, min_cf=3, seed=1)
    for d in DOCS[:-1] + [DOCS[-1] + ["rare"]]:
        mdl.add_doc(d)
    mdl.train(100, workers=1)
    assert "rare" in list(mdl.vocabs) and "rare" not in list(mdl.used_vocabs)
    mdl.save(str(tmp_path / "m.tomotopy"))
    assert detect(str(tmp_path / "m.tomotopy")) == "tomotopy"
    m = tl.load_model(tmp_path / "m.tomotopy")
    assert list(m.vocab) == list(mdl.used_vocabs)
    want = np.array([mdl.get_topic_word_dist(k) for k in range(3)], dtype=np.float64)
    np.testing.assert_allclose(m.phi, want / want.sum(1, keepdims=True), rtol=1e-12)
    np.testing.assert_allclose(m.alpha, np.asarray(mdl.alpha, dtype=np.float64))
    assert not np.allclose(m.alpha, 0.3)  # optimised during training, not the initial value
    assert m.beta == pytest.approx(0.02)


def test_pyldavis_dict_and_json(tmp_path):
    phi = np.random.default_rng(0).dirichlet(np.ones(5), size=2)
    data = {"topic_term_dists": phi.tolist(), "vocab": list("abcde"), "doc_topic_dists": [[0.5, 0.5]]}
    m = tl.load_model(data, alpha=0.1)
    np.testing.assert_allclose(m.phi, phi) and np.testing.assert_allclose(m.alpha, [0.1, 0.1])
    (tmp_path / "vis.json").write_text(json.dumps(data))
    assert tl.load_model(tmp_path / "vis.json", alpha=[0.1, 0.2]).vocab == tuple("abcde")
    with pytest.raises(tl.MethodError, match="has no alpha"):
        tl.load_model(data)
    with pytest.raises(tl.InputFileError, match="lacks vocab"):
        tl.load_model({"topic_term_dists": phi.tolist()}, alpha=0.1)
    with pytest.raises(tl.MethodError, match="cannot make a topic model from a builtins.list"):
        tl.load_model([1, 2, 3])


def test_missing_extra_names_the_pip_command(monkeypatch, tmp_path):
    import importlib

    real = importlib.import_module

    def fake(name, *a, **k):
        if name == "tomotopy":
            raise ImportError(name)
        return real(name, *a, **k)

    monkeypatch.setattr(importlib, "import_module", fake)
    (tmp_path / "x.bin").write_bytes(b"LDA\x00" + b"\x00" * 20)
    with pytest.raises(tl.MethodError, match=r'pip install "tealeaves\[tomotopy\]"'):
        tl.load_model(tmp_path / "x.bin")
