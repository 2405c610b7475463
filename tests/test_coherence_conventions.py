"""Coherence conventions (issue 25): `convention="gensim"` against gensim itself on real text,
gensim's window count by hand, and the errors of unknown conventions and options."""

import math

import numpy as np
import pytest

import tealeaves as tl
from tealeaves import datasets
from tealeaves.coherence import count, topic_words
from tealeaves.errors import MethodError

ABSENT = "zzz-not-in-the-reference"


def test_gensim_window_count_by_hand():
    """'a b a c c', window 3: windows [a b a] [b a c] [a c c]. Each copy counts (tealeaves):
    a 3, b 2, c 2. gensim's flags: {a, b}; the first a leaves, so a is unset although its
    second copy is inside, and c enters: {b, c}; b leaves, c enters: {c}. So a 1, b 2, c 2."""
    text = [["a", "b", "a", "c", "c"]]
    exact = count(text, ["a", "b", "c"], window=3)
    g = count(text, ["a", "b", "c"], window=3, rule="gensim")
    assert exact.units == g.units == 3
    assert list(exact.single) == [3, 2, 2] and list(g.single) == [1, 2, 2]
    assert (exact.joint[0, 1], exact.joint[0, 2], exact.joint[1, 2]) == (2, 2, 1)
    assert (g.joint[0, 1], g.joint[0, 2], g.joint[1, 2]) == (1, 0, 1)
    assert g.rule == "gensim" and exact.rule == "exact"


def test_gensim_count_short_and_empty_documents_are_one_window():
    """gensim's iter_windows(ignore_below_size=False): a document shorter than the window, an
    empty one too, is one window; whole documents count alike under both rules."""
    texts = [["a", "a"], [], ["b", "x", "a", "b"]]
    g = count(texts, ["a", "b"], window=3, rule="gensim")
    assert g.units == 1 + 1 + 2
    # doc 3: [b x a] then b leaves and b enters: [x a b] still holds both
    assert list(g.single) == [1 + 2, 2] and g.joint[0, 1] == 2
    whole = [count(texts, ["a", "b"], rule=r) for r in ("exact", "gensim")]
    assert whole[0].units == whole[1].units == 3
    assert list(whole[0].single) == list(whole[1].single) == [2, 1]


@pytest.fixture(scope="module")
def sotu():
    """1,500 real paragraphs (the bundled training part's first), gensim's Dictionary of them and
    the 20 topics of the bundled model, the first with its last word replaced by one the
    reference lacks."""
    pytest.importorskip("gensim")
    from gensim.corpora import Dictionary

    c = datasets.sotu().train
    texts = [[c.vocab[i] for i in c.words[c.offsets[d] : c.offsets[d + 1]]] for d in range(1500)]
    topics = topic_words(datasets.sotu_model("sotu-20-asym"), 10)
    topics[0] = topics[0][:9] + [ABSENT]
    return texts, Dictionary(texts), topics


def _gensim(sotu, theirs: str, window: int | None) -> list[float]:
    from gensim.models import CoherenceModel

    texts, dct, topics = sotu
    if theirs == "u_mass":
        cm = CoherenceModel(topics=topics, corpus=[dct.doc2bow(t) for t in texts], dictionary=dct,
                            coherence="u_mass", topn=10)
    else:
        cm = CoherenceModel(topics=topics, texts=texts, dictionary=dct, coherence=theirs, topn=10,
                            window_size=window, processes=1)
    return cm.get_coherence_per_topic()


CASES = [("umass", "u_mass", None)] + [(m, g, w) for m, g in (("uci", "c_uci"), ("npmi", "c_npmi"),
                                                             ("c_v", "c_v")) for w in (None, 5, 30)]


@pytest.mark.parametrize("ours,theirs,window", CASES)
def test_gensim_convention_equals_gensim_on_sotu(sotu, ours, theirs, window):
    """Per topic to 1e-9, windows at gensim's default (10; c_v 110) and two others. The absent
    word: gensim drops it from its topic (the dictionary has no id for it); so does the
    convention, and lists it as missing."""
    texts, dct, topics = sotu
    want = np.array(_gensim(sotu, theirs, window))
    got = tl.coherence(topics, texts, measure=ours, window=window, convention="gensim")
    assert np.all(np.isfinite(want))
    np.testing.assert_allclose(got.per_topic, want, atol=1e-9, rtol=0)
    assert ABSENT in got.missing[0]
    assert all((w in got.missing[k]) == (w not in dct.token2id) for k, t in enumerate(topics) for w in t)
    assert got.params["convention"] == "gensim" and got.to_dict()["params"]["convention"] == "gensim"


@pytest.mark.parametrize("ours,theirs", [("uci", "c_uci"), ("npmi", "c_npmi"), ("c_v", "c_v")])
def test_tealeaves_convention_differs_from_gensim_on_sotu(sotu, ours, theirs):
    """The window test above is not vacuous: on this text words repeat within windows, and the
    exact (tealeaves) counts give other numbers than gensim's."""
    texts, _, topics = sotu
    ours_ = tl.coherence(topics, texts, measure=ours)
    assert ours_.params["convention"] == "tealeaves"
    assert np.max(np.abs(ours_.per_topic - np.array(_gensim(sotu, theirs, None)))) > 1e-4


def test_gensim_convention_topic_without_reference_words_is_nan():
    """gensim refuses the whole call when a topic has no word in the dictionary; here that topic
    scores NaN, the other topics are scored, and the words are listed as missing."""
    ref = [["a", "b", "c"], ["a", "b"]]
    res = tl.coherence([["a", "b"], ["x", "y"]], ref, measure="npmi", convention="gensim")
    assert math.isfinite(res.per_topic[0]) and math.isnan(res.per_topic[1])
    assert res.missing == [[], ["x", "y"]]


def test_unknown_convention_is_one_line():
    with pytest.raises(MethodError, match=r"unknown coherence convention 'mallet' \(known: tealeaves"):
        tl.coherence([["a", "b"]], [["a", "b"]], convention="mallet")


def test_tealeaves_options_refused_under_gensim():
    with pytest.raises(MethodError, match="option 'form' belongs to the tealeaves convention") as e:
        tl.coherence([["a", "b"]], [["a", "b"]], measure="umass", form="mimno", convention="gensim")
    assert "\n" not in str(e.value)


def test_counts_of_another_rule_are_not_reused():
    """Counts passed in were made under one rule; the other convention counts again."""
    text = [["a", "b", "a", "c", "c"]]
    exact = count(text, ["a", "b", "c"], window=3)
    g = tl.coherence([["a", "b", "c"]], text, measure="uci", window=3, convention="gensim", counts=exact)
    fresh = tl.coherence([["a", "b", "c"]], text, measure="uci", window=3, convention="gensim")
    assert g.per_topic[0] == fresh.per_topic[0]
