"""The capability model (issue 24 point 1): what a model of each kind provides, and the one-line
reason a metric does not apply to it."""

import numpy as np
import pytest

import tealeaves as tl
from tealeaves.errors import InvalidModelError
from tealeaves.topics import NEEDS, NotApplicableError, Topics, as_topics, require, why_not

VOCAB = tuple(f"w{i}" for i in range(6))


def _nmf() -> Topics:
    w = np.array([[3.0, 2.0, 1.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.5, 1.0, 4.0, 2.0]])
    return Topics(name="nmf", source="scikit-learn NMF", vocab=VOCAB, weights=w, weights_kind="nonnegative",
                  weights_note="NMF components")


def test_lda_provides_every_metric():
    model = tl.synthetic.random_model(3, 6, seed=1, vocab=list(VOCAB))
    t = as_topics(model)
    assert t.provides() >= {"top_words", "weights", "distributions", "generative", "lda"}
    for metric in NEEDS:
        assert why_not(metric, model) is None
    assert t.ranked_words(2) == [[VOCAB[i] for i in np.argsort(-row, kind="stable")[:2]] for row in model.phi]


def test_weights_that_are_not_probabilities_give_no_likelihood():
    t = _nmf()
    assert why_not("coherence", t) is None and why_not("exclusivity", t) is None
    reason = why_not("heldout", t)
    assert reason == "'nmf' (scikit-learn NMF): its NMF components are not probabilities: no likelihood"
    with pytest.raises(NotApplicableError, match="^heldout does not apply: 'nmf' .*no likelihood$"):
        require("heldout", t)
    assert t.ranked_words(3) == [["w0", "w1", "w2"], ["w4", "w5", "w3"]]


def test_signed_weights_rank_by_magnitude_and_give_no_exclusivity():
    w = np.array([[0.1, -0.9, 0.5, 0.0, 0.2, 0.0]])
    t = Topics(name="lsi", source="gensim LsiModel", vocab=VOCAB, weights=w, weights_kind="signed")
    assert t.ranked_words(2) == [["w1", "w2"]]
    assert "signed" in why_not("exclusivity", t)


def test_top_words_only():
    t = as_topics([["a", "b"], ["c", "d"]])
    assert t.num_topics == 2 and why_not("diversity", t) is None
    assert why_not("heldout", t).endswith("top words only: no likelihood")
    assert why_not("exclusivity", t).endswith("top words only, no topic-word weights")


def test_parts_that_disagree_are_one_line_errors():
    with pytest.raises(InvalidModelError, match="topic 1 is not a distribution"):
        Topics(name="x", source="s", weights=np.array([[0.5, 0.5], [0.5, 0.6]]), weights_kind="distributions")
    with pytest.raises(InvalidModelError, match="negative values"):
        Topics(name="x", source="s", weights=np.array([[0.5, -0.5]]), weights_kind="nonnegative")
    with pytest.raises(InvalidModelError, match="needs mean and cov"):
        Topics(name="x", source="s", weights=np.full((2, 2), 0.5), weights_kind="distributions",
               prior="logistic-normal", decoder="mixture")
    with pytest.raises(InvalidModelError, match="3 lists of top words for 2 topics"):
        Topics(name="x", source="s", weights=np.full((2, 2), 0.5), weights_kind="distributions",
               top_words=(("a",), ("b",), ("c",)))
