"""Model files and corpus readers: round trips, OOV and empty-document accounting."""

import numpy as np
import pytest

import tealeaves as tl


def test_model_round_trip(tmp_path):
    model = tl.synthetic.random_model(4, 30, beta=0.02, seed=3)
    path = tmp_path / "m.npz"
    tl.save_model(model, path)
    back = tl.load_model(path)
    np.testing.assert_array_equal(back.phi, model.phi)
    np.testing.assert_array_equal(back.alpha, model.alpha)
    assert back.vocab == model.vocab and back.beta == 0.02 and back.name == model.name
    assert back.metadata == model.metadata


def test_model_without_vocab_or_beta(tmp_path):
    model = tl.TopicModel(np.full((2, 3), 1 / 3), [0.5, 0.5])
    tl.save_model(model, tmp_path / "m.npz")
    back = tl.load_model(tmp_path / "m.npz")
    assert back.vocab is None and back.beta is None


def test_normalize_option():
    phi = np.array([[2.0, 2.0], [1.0, 3.0]])
    model = tl.TopicModel(phi, [1.0, 1.0], normalize=True)
    np.testing.assert_allclose(model.phi, [[0.5, 0.5], [0.25, 0.75]])


def test_text_corpus_counts_oov_and_empty(tmp_path):
    vocab = ["apple", "pear", "plum"]
    p = tmp_path / "docs.txt"
    p.write_text("apple pear kiwi\n\nkiwi kiwi fig\nplum  apple\n", encoding="utf-8")
    c = tl.read_corpus(p, vocab=vocab)
    assert len(c) == 4
    assert [list(d) for d in c] == [[0, 1], [], [], [2, 0]]
    rep = c.report()
    assert rep["oov_tokens"] == 4 and rep["oov_top_words"] == {"kiwi": 3, "fig": 1}
    assert rep["empty_documents"] == 2 and rep["empty_document_indices"] == [1, 2]


def test_text_corpus_builds_vocab_when_none(tmp_path):
    p = tmp_path / "docs.txt"
    p.write_text("b a b\nc\n", encoding="utf-8")
    c = tl.read_corpus(p)
    assert c.vocab == ("b", "a", "c") and [list(d) for d in c] == [[0, 1, 0], [2]]


def test_ids_and_npz_corpora(tmp_path):
    (tmp_path / "ids.txt").write_text("0 2 2\n1\n\n", encoding="utf-8")
    c = tl.read_corpus(tmp_path / "ids.txt", vocab=["a", "b", "c"], format="ids")
    assert [list(d) for d in c] == [[0, 2, 2], [1], []]
    tl.save_corpus(c, tmp_path / "c.npz")
    back = tl.read_corpus(tmp_path / "c.npz", vocab=["a", "b", "c"])
    np.testing.assert_array_equal(back.words, c.words)
    np.testing.assert_array_equal(back.offsets, c.offsets)


def test_results_report_dropped_tokens(tmp_path, example):
    model, _, _, _ = example
    p = tmp_path / "docs.txt"
    p.write_text(f"{model.vocab[0]} zzz {model.vocab[1]}\n\n", encoding="utf-8")
    res = tl.heldout(model, tl.read_corpus(p, vocab=model.vocab), method="exact")
    assert res.corpus["oov_tokens"] == 1 and res.corpus["empty_documents"] == 1
    assert res.tokens == 2


def test_synthetic_generator_matches_model_marginals():
    model = tl.synthetic.random_model(3, 6, beta=1.0, seed=1)
    docs = tl.synthetic.generate(model, 3000, 20, seed=2)
    freq = np.bincount(docs.words, minlength=6) / docs.num_tokens
    want = model.m @ model.phi
    # per-document theta makes tokens correlated; documents are the independent unit
    per_doc = np.array([np.bincount(d, minlength=6) / 20 for d in docs])
    se = per_doc.std(axis=0, ddof=1) / np.sqrt(len(docs))
    assert np.all(np.abs(freq - want) < 4.5 * se)


def test_perturbations_follow_section_6_4():
    model = tl.synthetic.random_model(4, 10, seed=1)
    other = np.random.default_rng(0).dirichlet(np.ones(10), size=4)
    p = tl.synthetic.perturb_phi(model, 0.25, other=other)
    np.testing.assert_allclose(p.phi, 0.75 * model.phi + 0.25 * other)
    m2 = np.array([0.1, 0.2, 0.3, 0.4])
    q = tl.synthetic.perturb_m(model, 0.5, other=m2)
    np.testing.assert_allclose(q.alpha, model.alpha_sum * (0.5 * model.m + 0.5 * m2))
    assert q.alpha_sum == pytest.approx(model.alpha_sum)
