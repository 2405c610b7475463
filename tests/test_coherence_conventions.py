"""Coherence conventions (issue 25): `convention="gensim"` against gensim itself on real text,
gensim's window count by hand, `convention="palmetto"` against the facts of Palmetto's unit
tests, and the errors of unknown conventions, measures and options."""

import math

import numpy as np
import pytest

import tealeaves as tl
from tealeaves import datasets
from tealeaves.coherence import count, palmetto, topic_words
from tealeaves.errors import InvalidCorpusError, MethodError

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
    ours_ = tl.coherence(topics, texts, measure=ours, convention="tealeaves")
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
    known = r"\(known: tealeaves, gensim, palmetto\)"
    with pytest.raises(MethodError, match=r"unknown coherence convention 'mallet' " + known):
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


# ---------------------------------------------------------------- Palmetto: its unit tests' facts
# Inputs and expected values below are carried over from Palmetto's unit tests (github.com/
# dice-group/Palmetto at 6185dfd, palmetto/src/test/java/org/aksw/palmetto/...), each named at
# its case. Palmetto indexes word sets by bit mask: 1 = A, 2 = B, 3 = AB, 4 = C, 5 = AC, 6 = BC.

ABC = ["A", "B", "C"]
DOC = "A B C B A C C".split()


def _masks(single, joint) -> list[float]:
    """Our counts (or probabilities) as Palmetto's array entries 1..6."""
    return [single[0], single[1], joint[0, 1], single[2], joint[0, 2], joint[1, 2]]


@pytest.mark.parametrize("doc,window,expected", [
    (DOC, 3, [4, 4, 3, 5, 4, 4]),  # prob/BooleanSlidingWindowFrequencyDeterminerCountingTest.java
    (DOC, 4, [4, 4, 4, 4, 4, 4]),  # same file
    (["A", "B", "C"], 4, [1, 1, 1, 1, 1, 1]),  # same file: a document shorter than the window
])
def test_palmetto_boolean_sliding_window_counts(doc, window, expected):
    """Palmetto's boolean sliding window is the exact count (a word is in a window if any copy is)."""
    c = count([doc], ABC, window=window, rule=palmetto.rule("npmi"))
    assert _masks(c.single, c.joint) == expected


def test_palmetto_boolean_sliding_window_counts_realistic():
    """prob/BooleanSlidingWindowFrequencyDeterminerCountingTest.java, 'a more realistic example':
    a 328-token document, word 5 at 166 and 256, word 8 at 259, window 10: counts 20, 10, 7."""
    doc = ["x"] * 328
    doc[166] = doc[256] = "w5"
    doc[259] = "w8"
    c = count([doc], ["w5", "w8"], window=10)
    assert (c.single[0], c.single[1], c.joint[0, 1]) == (20, 10, 7)


@pytest.mark.parametrize("doc,window,expected", [
    (DOC, 1, [2, 2, 2, 3, 1, 2]),  # prob/ContextWindowFrequencyDeterminerCountingTest.java
    (DOC, 2, [2, 2, 2, 3, 4, 3]),  # same file
    (["A", "B", "C"], 2, [1, 1, 1, 1, 1, 1]),  # same file: a short document
])
def test_palmetto_context_window_counts(doc, window, expected):
    c = count([doc], ABC, window=window, rule=palmetto.rule("c_a"))
    assert _masks(c.single, c.joint) == expected


@pytest.mark.parametrize("window,expected", [
    (3, [4 / 5, 4 / 5, 3 / 5, 1.0, 4 / 5, 4 / 5]),  # prob/BooleanSlidingWindowProbabilitySupplierTest.java
    (4, [1.0] * 6),  # same file
])
def test_palmetto_window_probabilities(window, expected):
    """With the minimum frequency set to 1, as that test sets it."""
    c = count([DOC], ABC, window=window)
    P = palmetto.probabilities(c, [0, 1, 2], 1)
    np.testing.assert_allclose(_masks(np.diag(P), P), expected, atol=1e-8, rtol=0)


def _P(masks: list[float]) -> np.ndarray:
    """Palmetto's probability array (index 0..7 by bit mask) as our 3 x 3 matrix."""
    p = masks
    return np.array([[p[1], p[3], p[5]], [p[3], p[2], p[6]], [p[5], p[6], p[4]]])


T, H, Q = 2 / 3, 1 / 3, 0.25
P1 = [0, 1.0, T, T, T, T, T, T]
P2 = [0, T, T, H, T, H, H, 0]
P3 = [0, Q, 0.5, Q, 0.5, Q, Q, Q]
P4 = [0, Q, 0.5, 0, 0.5, 0, Q, 0]
EPS = palmetto.EPSILON
Z = math.log(8 * EPS) / -math.log(EPS)  # NPMI of a pair that never co-occurs, P = 1/4 and 1/2


@pytest.mark.parametrize("kind,segmentation,masks,expected", [
    # calculations/direct/LogCondProbCoherenceCalculationTest.java (OnePreceding)
    ("m_lc", "one_pre", P1, math.log(2 / 3) * 2 / 3),
    ("m_lc", "one_pre", P2, math.log(1 / 2)),
    ("m_lc", "one_pre", P3, math.log(1 / 2) / 3),
    # calculations/direct/LogRatioCoherenceCalculationTest.java (OneOne)
    ("m_lr", "one_one", P1, math.log(3 / 2) / 3),
    ("m_lr", "one_one", P2, math.log(3 / 4)),
    ("m_lr", "one_one", P3, 2 * math.log(2) / 3),
    ("m_lr", "one_one", P4, 2 * math.log(8 * EPS) / 3),
    # calculations/direct/NormalizedLogRatioCoherenceCalculationTest.java (OneOne)
    ("m_nlr", "one_one", P1, math.log(3 / 2) / (-3 * math.log(2 / 3))),
    ("m_nlr", "one_one", P2, math.log(3 / 4) / -math.log(1 / 3)),
    ("m_nlr", "one_one", P3, 2 * math.log(2) / (-3 * math.log(1 / 4))),
    ("m_nlr", "one_one", P4, 2 * (math.log(8 * EPS) / -math.log(EPS)) / 3),
    # calculations/direct/FitelsonCoherenceCalculationTest.java (OneOne)
    ("m_f", "one_one", P1, 2 / 3),
    ("m_f", "one_one", P2, -1 / 3),
    ("m_f", "one_one", P3, 1 / 2),
])
def test_palmetto_direct_confirmation_facts(kind, segmentation, masks, expected):
    """Palmetto's tests: the arithmetic mean of the confirmations, to its delta of 1e-8."""
    P = _P(masks)
    vals = [palmetto.confirm(P, i, j, kind) for i, j in palmetto.segments(3, segmentation)]
    assert np.mean([0.0 if v is None else v for v in vals]) == pytest.approx(expected, abs=1e-8)


def _nlr(p_joint: float, pa: float, pb: float) -> float:
    return math.log(p_joint / (pa * pb)) / -math.log(p_joint)


@pytest.mark.parametrize("masks,gamma,expected", [
    # vector/NormalizedLogRatioCalculationBasedCreatorTest.java
    (P1, 1, [[-1, 0, 0], [0, _nlr(T, T, T), _nlr(T, T, T)], [0, _nlr(T, T, T), _nlr(T, T, T)]]),
    (P2, 1, [[_nlr(T, T, T), _nlr(H, T, T), _nlr(H, T, T)], [_nlr(H, T, T), _nlr(T, T, T), _nlr(H, T, T)],
             [_nlr(H, T, T), _nlr(H, T, T), _nlr(T, T, T)]]),
    (P3, 1, [[math.log(4) / -math.log(Q), math.log(2) / -math.log(Q), math.log(2) / -math.log(Q)],
             [math.log(2) / -math.log(Q), math.log(2) / -math.log(0.5), 0],
             [math.log(2) / -math.log(Q), 0, math.log(2) / -math.log(0.5)]]),
    (P4, 1, [[math.log(4) / -math.log(Q), Z, Z], [Z, math.log(2) / -math.log(0.5), 0],
             [Z, 0, math.log(2) / -math.log(0.5)]]),
    (P1, 2, [[1, 0, 0], [0, _nlr(T, T, T) ** 2, _nlr(T, T, T) ** 2],
             [0, _nlr(T, T, T) ** 2, _nlr(T, T, T) ** 2]]),
])
def test_palmetto_nlr_context_vector_facts(masks, gamma, expected):
    np.testing.assert_allclose(palmetto.nlr_vectors(_P(masks), gamma), expected, atol=1e-8, rtol=0)


@pytest.mark.parametrize("segmentation,vectors,expected", [
    # calculations/indirect/CosinusBasedCoherenceTest.java
    ("one_one", [[1, T, T], [T, T, T], [T, T, T]],
     (2 * (14 / 9) / (math.sqrt(17 / 9) * math.sqrt(4 / 3)) + 1) / 3),
    ("one_one", [[T, H, H], [H, T, H], [H, H, T]], 5 / 6),
    ("one_one", [[Q, Q, Q], [Q, 0.5, Q], [Q, Q, 0.5]],
     (0.5 / (math.sqrt(3 / 16) * math.sqrt(6 / 16)) + 5 / 6) / 3),
    ("one_set", [[Q, Q, Q], [Q, 0.5, Q], [Q, Q, 0.5]],
     ((11 / 16) / (math.sqrt(3 / 16) * math.sqrt(41 / 16))
      + (30 / 16) / (math.sqrt(6 / 16) * math.sqrt(41 / 16))) / 3),
])
def test_palmetto_cosine_facts(segmentation, vectors, expected):
    vals = palmetto.indirect(np.array(vectors, dtype=float), segmentation)
    assert np.mean(vals) == pytest.approx(expected, abs=1e-8)


def test_palmetto_umass_minimum_frequency_and_undefined_zero_by_hand():
    """21 documents: D(a) 16, D(b) 12, D(a, b) 12, D(c) 6. Palmetto's boolean-document minimum is
    10 documents, so P(c) = 0 and both pairs with c are undefined, counted as 0 in the mean."""
    ref = [["a", "b"]] * 12 + [["a"]] * 3 + [["c"]] * 5 + [["a", "c"]]
    res = tl.coherence([["a", "b", "c"]], ref, measure="umass", convention="palmetto")
    assert res.per_topic[0] == pytest.approx(math.log((12 / 21 + EPS) / (16 / 21)) / 3, abs=1e-12)
    assert res.undefined_pairs == [2] and res.missing == [[]]
    assert res.params == {"topn": 10, "window": None, "convention": "palmetto", "absent": "smooth"}


def test_palmetto_window_minimum_is_ten_windows_per_token_of_window():
    """uci at window 2: the minimum is 20 windows. 'a b' repeated: each word in 19 or 20 windows."""
    ref = [["a", "b"] * 10 + ["a"]]  # 21 tokens, 20 windows of 2: a in 20, b in 20, both in 20
    ok = tl.coherence([["a", "b"]], ref, measure="uci", window=2, convention="palmetto")
    assert ok.per_topic[0] == pytest.approx(math.log((1 + EPS) / 1), abs=1e-12) and ok.undefined_pairs == [0]
    short = tl.coherence([["a", "b"]], [["a", "b"] * 10], measure="uci", window=2, convention="palmetto")
    assert short.per_topic[0] == 0.0 and short.undefined_pairs == [2]  # 19 windows: below 20


def test_palmetto_measures_only_in_palmetto():
    for conv in ("tealeaves", "gensim"):
        with pytest.raises(MethodError, match=f"c_p exists only in the palmetto convention; the {conv} "
                                              "convention has umass, uci, npmi, c_v"):
            tl.coherence([["a", "b"]], [["a", "b"]], measure="c_p", convention=conv)
    known = r"\(known: umass, uci, npmi, c_v, c_p, c_a\)"
    with pytest.raises(MethodError, match=r"unknown coherence measure 'c_x' " + known):
        tl.coherence([["a", "b"]], [["a", "b"]], measure="c_x", convention="palmetto")


def test_palmetto_context_windows_need_tokens():
    """N = tokens - documents x (w - 1) must be positive (Palmetto would divide by it)."""
    with pytest.raises(InvalidCorpusError, match=r"no context windows of \+-5 tokens"):
        tl.coherence([["a", "b"]], [["a", "b"], ["b"]], measure="c_a", convention="palmetto")


def test_palmetto_all_measures_on_sotu_are_finite():
    """Every Palmetto measure runs on the bundled corpus; C_A's N is tokens - 4 x documents."""
    ref = datasets.sotu().train
    model = datasets.sotu_model("sotu-20-asym")
    for m in palmetto.MEASURES:
        res = tl.coherence(model, ref, measure=m, convention="palmetto")
        assert np.all(np.isfinite(res.per_topic)) and res.params["window"] == palmetto.MEASURES[m][1]
        if m == "c_a":
            assert res.units == ref.num_tokens - 4 * len(ref)


def test_cli_convention_gives_the_library_numbers(sotu, tmp_path):
    """`tealeaves coherence --convention gensim` prints and writes the same per-topic numbers as
    the library with convention="gensim" (which equals gensim, above), C_P and C_A under palmetto."""
    import json

    from clirun import run_cli

    texts, _, topics = sotu
    (tmp_path / "ref.txt").write_text("\n".join(" ".join(t) for t in texts[:300]) + "\n", encoding="utf-8")
    (tmp_path / "topics.txt").write_text("\n".join(" ".join(t) for t in topics) + "\n", encoding="utf-8")
    for convention, measures in (("gensim", "npmi,c_v"), ("palmetto", "c_p,c_a")):
        out = tmp_path / f"{convention}.json"
        code, stdout, _ = run_cli(["coherence", tmp_path / "topics.txt", tmp_path / "ref.txt", "--measure",
                                   measures, "--convention", convention, "--json", out])
        assert code == 0
        for r in json.loads(out.read_text())["results"]:
            lib = tl.coherence(topics, tmp_path / "ref.txt", measure=r["measure"], convention=convention)
            assert r["params"]["convention"] == convention
            cli = [np.nan if t["score"] is None else t["score"] for t in r["topics"]]
            np.testing.assert_allclose(cli, lib.per_topic, rtol=0, atol=1e-12)
        assert "do not occur in the reference" in stdout  # the absent word, with the convention's policy


def test_cli_convention_errors_are_one_line(tmp_path):
    from clirun import one_line_error

    (tmp_path / "ref.txt").write_text("a b c\nb c d\n", encoding="utf-8")
    (tmp_path / "topics.txt").write_text("a b\nc d\n", encoding="utf-8")
    args = ["coherence", tmp_path / "topics.txt", tmp_path / "ref.txt"]
    one_line_error([*args, "--measure", "c_p"], "'c_p'", "--convention palmetto")
    one_line_error([*args, "--convention", "gensim", "--zero", "limit"], "tealeaves convention")


def test_default_is_gensims_numbers_with_the_top_10(tmp_path, capsys):
    """The default convention is gensim's (what papers report), and no convention changes top-n:
    `--convention gensim` used to switch it to 20 silently (issue 33)."""
    from tealeaves.cli import main

    texts = [["apple", "banana", "cherry", "apple"], ["banana", "cherry", "date"], ["apple", "date"]] * 4
    topics = [["apple", "banana", "cherry", "date"]]
    res = tl.coherence(topics, texts, measure="npmi")
    assert res.params["convention"] == "gensim" and res.fingerprint["topn"] == 10
    same = tl.coherence(topics, texts, measure="npmi", convention="gensim", topn=10)
    np.testing.assert_array_equal(res.per_topic, same.per_topic)
    ref, top = tmp_path / "ref.txt", tmp_path / "topics.txt"
    ref.write_text("".join(" ".join(t) + "\n" for t in texts), encoding="utf-8")
    top.write_text(" ".join(topics[0]) + "\n", encoding="utf-8")
    for extra in ([], ["--convention", "gensim"]):
        assert main(["coherence", str(top), str(ref), "--measure", "npmi", *extra]) == 0
        out = capsys.readouterr().out
        assert ("fingerprint: gensim convention, top 10; npmi 10 one-one absent=skip; ε 1e-12; "
                f"reference {ref}") in out


def test_gensim_convention_takes_word_lists_as_gensim_does():
    """Word lists longer than topn: gensim drops absent words first, then cuts every topic to topn
    only if the first topic is longer than topn; its default topn is 20. Random documents over 30
    words, topics of 13 and 15 words with an absent word, each measure against gensim itself."""
    pytest.importorskip("gensim")
    from gensim.corpora import Dictionary
    from gensim.models import CoherenceModel

    rng = np.random.default_rng(3)
    texts = [[f"w{i}" for i in rng.integers(0, 30, 25)] for _ in range(40)]
    dct = Dictionary(texts)
    cases = [
        ([["zz"] + [f"w{i}" for i in range(12)], [f"w{i}" for i in range(10, 23)]], 10),  # drop, then cut
        ([[f"w{i}" for i in range(5)], [f"w{i}" for i in range(5, 20)]], 10),  # first short: no cut
        ([["zz", "yy"] + [f"w{i}" for i in range(9)], [f"w{i}" for i in range(12, 27)]], 10),
        ([[f"w{i}" for i in range(15)], [f"w{i}" for i in range(15, 30)]], None),  # gensim's topn 20
    ]
    for topics, topn in cases:
        for ours, theirs in (("umass", "u_mass"), ("npmi", "c_npmi"), ("c_v", "c_v")):
            kw = {} if topn is None else {"topn": topn}
            args = {"corpus": [dct.doc2bow(t) for t in texts]} if theirs == "u_mass" else {"texts": texts}
            cm = CoherenceModel(topics=topics, dictionary=dct, coherence=theirs, processes=1, **args, **kw)
            res = tl.coherence(topics, texts, measure=ours, convention="gensim", topn=topn or 20)  # ours: 10
            np.testing.assert_allclose(res.per_topic, cm.get_coherence_per_topic(), rtol=0, atol=1e-9,
                                       err_msg=f"{ours} {topn} {topics}")
