"""Coherence counts and measures against hand computation, gensim (test extra) and each other."""

import math

import numpy as np
import pytest

import tealeaves as tl
from tealeaves.coherence import count, diversity, exclusivity, frex, group_coherence

TL = {"convention": "tealeaves"}  # these tests check the tealeaves convention (exact counts)

EPS = 1e-12


def test_window_counts_by_hand_with_a_repeated_word():
    """'a b a c' with window 2: windows {a,b} {a,b} {a,c}; a word is in a window if any copy is.
    gensim's counter would drop 'a' from the second window (its first copy left)."""
    c = count([["a", "b", "a", "c"]], ["a", "b", "c"], window=2)
    assert c.units == 3
    assert list(c.single) == [3, 2, 1]
    assert c.joint[0, 1] == 2 and c.joint[0, 2] == 1 and c.joint[1, 2] == 0


def test_short_documents_are_one_window_and_document_counts_are_boolean():
    c = count([["a", "a"], ["b"], [], ["a", "x", "b", "y", "z"]], ["a", "b"], window=3)
    assert c.units == 1 + 1 + 1 + 3  # max(1, n - w + 1) per document
    # 'a': doc 1 and window 1 of doc 4; 'b': doc 2 and all three windows of doc 4
    assert list(c.single) == [1 + 1, 1 + 3]
    assert c.joint[0, 1] == 1
    d = count([["a", "a", "b"], ["b"], ["c"]], ["a", "b"])
    assert d.units == 3 and list(d.single) == [1, 2] and d.joint[0, 1] == 1


REF = [["apple", "pear", "fig"], ["apple", "pear"], ["apple", "plum"], ["pear", "fig"], ["kiwi"]]


def test_umass_by_hand_both_forms_and_absent_words():
    # D(apple)=3, D(pear)=3, D(fig)=2, D(apple,pear)=2, D(apple,fig)=1, D(pear,fig)=2, N=5
    res = tl.coherence([["apple", "pear", "fig"]], REF, measure="umass", topn=3, **TL)
    want = np.mean([math.log((2 / 5 + EPS) / (3 / 5)), math.log((1 / 5 + EPS) / (3 / 5)),
                    math.log((2 / 5 + EPS) / (3 / 5))])
    assert res.per_topic[0] == pytest.approx(want, rel=1e-12)
    mimno = tl.coherence([["apple", "pear", "fig"]], REF, measure="umass", topn=3, form="mimno", **TL)
    assert mimno.per_topic[0] == pytest.approx(math.log(3 / 3) + math.log(2 / 3) + math.log(3 / 3))
    absent = tl.coherence([["apple", "durian"]], REF, measure="umass", **TL)
    # pair (durian | apple): log((0 + eps) / (3/5)); durian is reported missing
    assert absent.per_topic[0] == pytest.approx(math.log(EPS / (3 / 5)))
    assert absent.missing == [["durian"]]
    flipped = tl.coherence([["durian", "apple"]], REF, measure="umass", **TL)
    assert flipped.per_topic[0] == 0.0 and flipped.undefined_pairs == [1]  # gensim's 0, reported


def test_pmi_npmi_by_hand_with_zero_cooccurrence():
    docs = [["a", "b"], ["a", "c"], ["b", "x"], ["x", "x"]]  # window 10 = whole documents
    p = {"a": 2 / 4, "b": 2 / 4, "c": 1 / 4}
    pj = {("a", "b"): 1 / 4, ("a", "c"): 1 / 4, ("b", "c"): 0.0}
    topic = ["a", "b", "c"]
    pmis, npmis, lim = [], [], []
    for x in topic:
        for y in topic:
            if x == y:
                continue
            j = pj.get((x, y), pj.get((y, x)))
            v = math.log((j + EPS) / (p[x] * p[y]))
            pmis.append(v)
            npmis.append(v / -math.log(j + EPS))
            lim.append(-1.0 if j == 0 else v / -math.log(j + EPS))
    uci = tl.coherence([topic], docs, measure="uci", topn=3, **TL).per_topic[0]
    npmi = tl.coherence([topic], docs, measure="npmi", topn=3, **TL).per_topic[0]
    assert uci == pytest.approx(np.mean(pmis)) and npmi == pytest.approx(np.mean(npmis))
    got = tl.coherence([topic], docs, measure="npmi", topn=3, zero="limit", **TL).per_topic[0]
    assert got == pytest.approx(np.mean(lim))


def test_c_v_by_hand():
    docs = [["a", "b"], ["a", "c"], ["b", "x"], ["x", "x"]]
    topic = ["a", "b", "c"]
    single = {"a": 2, "b": 2, "c": 1}
    joint = {frozenset("ab"): 1, frozenset("ac"): 1, frozenset("bc"): 0}
    N = 4

    def npmi(x, y):
        j = single[x] if x == y else joint[frozenset((x, y))]
        return math.log((j / N + EPS) / (single[x] / N * single[y] / N)) / -math.log(j / N + EPS)

    M = np.array([[npmi(x, y) for y in topic] for x in topic])
    total = M.sum(axis=0)
    want = np.mean([M[i] @ total / (np.linalg.norm(M[i]) * np.linalg.norm(total)) for i in range(3)])
    assert tl.coherence([topic], docs, measure="c_v", topn=3, **TL).per_topic[0] == pytest.approx(want)


def test_streaming_and_parallel_counts_equal_in_memory(tmp_path):
    rng = np.random.default_rng(0)
    words = [f"w{i}" for i in range(40)]
    docs = [list(rng.choice(words, size=rng.integers(0, 30))) for _ in range(500)]
    path = tmp_path / "ref.txt"
    path.write_text("\n".join(" ".join(d) for d in docs) + "\n")
    targets = words[:15]
    for window in (None, 4, 110):
        mem = count(docs, targets, window=window, chunk_docs=10 ** 6)
        streamed = count(path, targets, window=window, chunk_docs=37)
        parallel = count(path, targets, window=window, chunk_docs=50, workers=2)
        corpus = tl.read_corpus(path)
        from_corpus = count(corpus, targets, window=window)
        for c in (streamed, parallel, from_corpus):
            assert c.units == mem.units
            np.testing.assert_array_equal(c.single, mem.single)
            np.testing.assert_array_equal(c.joint, mem.joint)


def test_diversity_exclusivity_frex_and_group_coherence():
    assert diversity([["a", "b", "c"], ["a", "d", "e"]], topn=3) == pytest.approx(5 / 6)
    phi = np.array([[0.5, 0.3, 0.2, 0.0 + 1e-9], [0.1, 0.1, 0.2, 0.6]])
    phi /= phi.sum(axis=1, keepdims=True)
    m = tl.TopicModel(phi, [1.0, 1.0], vocab=["a", "b", "c", "d"])
    # by hand: exclusivity = phi / column sums; ECDF ranks within each topic over 4 words
    excl = phi / phi.sum(axis=0)
    from scipy.stats import rankdata
    f = 1 / (0.7 / (rankdata(excl[0]) / 4) + 0.3 / (rankdata(phi[0]) / 4))
    top2 = np.argsort(-phi[0])[:2]
    assert exclusivity(m, topn=2)[0] == pytest.approx(f[top2].sum())
    assert frex(m, topn=1) == [["a"], ["d"]]
    ref = [["a", "b"], ["a", "b"], ["a"], ["c", "d"], ["d"]]
    g = group_coherence([["a", "b"], ["d", "c"]], ref, labels=[0, 0, 0, 1, 1], topn=2)
    # group 0: log((D(b,a) + 1) / D(a)) = log(3/3); group 1: log((1 + 1) / 2)
    assert g["per_group"][0] == pytest.approx(0.0) and g["per_group"][1] == pytest.approx(0.0)
    g0 = group_coherence([["a", "b"], ["d", "c"]], ref, labels=np.eye(2)[[0, 0, 0, 1, 1]], topn=2,
                         smoothing=0)
    assert g0["per_group"][0] == pytest.approx(math.log(2 / 3)) and g0["per_group"][1] == pytest.approx(
        math.log(1 / 2))


def test_bad_input():
    with pytest.raises(tl.MethodError, match="unknown coherence measure 'cv'"):
        tl.coherence([["a", "b"]], REF, measure="cv", **TL)
    with pytest.raises(tl.InvalidCorpusError, match="reference corpus is empty"):
        tl.coherence([["a", "b"]], [], measure="npmi", **TL)
    m = tl.synthetic.random_model(2, 5, seed=0)
    with pytest.raises(tl.MethodError, match="topn=6 is larger than the vocabulary"):
        tl.coherence(m, REF, topn=6, **TL)
    with pytest.raises(tl.MethodError, match="umass counts whole documents"):
        tl.coherence([["a", "b"]], REF, measure="umass", window=5, **TL)


# ---------------------------------------------------------------- against gensim (test extra)

gensim = pytest.importorskip("gensim")


@pytest.fixture(scope="module")
def lee():
    from gensim.corpora import Dictionary
    from gensim.test.utils import datapath
    from gensim.utils import simple_preprocess

    with open(datapath("lee_background.cor"), encoding="utf-8") as fh:
        texts = [simple_preprocess(line) for line in fh]
    dct = Dictionary(texts)
    rng = np.random.default_rng(0)
    pool = [dct[i] for i, _ in sorted(dct.dfs.items(), key=lambda kv: -kv[1])[20:400]]
    topics = [list(rng.choice(pool, 10, replace=False)) for _ in range(20)]
    return texts, dct, topics


def test_umass_equals_gensim_on_the_lee_corpus(lee):
    from gensim.models import CoherenceModel

    texts, dct, topics = lee
    g = CoherenceModel(topics=topics, corpus=[dct.doc2bow(t) for t in texts], dictionary=dct,
                       coherence="u_mass", topn=10).get_coherence_per_topic()
    ours = tl.coherence(topics, texts, measure="umass", **TL).per_topic
    np.testing.assert_allclose(ours, g, atol=1e-9, rtol=0)


@pytest.mark.parametrize("ours,theirs", [("uci", "c_uci"), ("npmi", "c_npmi"), ("c_v", "c_v")])
def test_window_measures_equal_gensim_where_no_word_repeats(lee, ours, theirs):
    from gensim.models import CoherenceModel

    texts, dct, topics = lee
    unique = [list(dict.fromkeys(t)) for t in texts]  # no word repeats inside any window
    g = CoherenceModel(topics=topics, texts=unique, dictionary=dct, coherence=theirs, topn=10,
                       processes=1).get_coherence_per_topic()
    got = tl.coherence(topics, unique, measure=ours, **TL).per_topic
    np.testing.assert_allclose(got, g, atol=1e-9, rtol=0)
