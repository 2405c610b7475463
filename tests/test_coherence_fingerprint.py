"""Issue 25 points 2 and 3: the fingerprint on every coherence number, `comparable`, the
reference's content hash, per-topic coverage and the policy for absent words."""

from __future__ import annotations

import hashlib
import json
import math

import numpy as np
import pytest

import tealeaves as tl
from tealeaves.cli import main
from tealeaves.coherence import count
from tealeaves.coherence.fingerprint import StreamHash, corpus_digest
from tealeaves.corpus import Corpus
from tealeaves.errors import MethodError

TL = {"convention": "tealeaves"}  # these tests check the tealeaves convention (exact counts)

EPS = 1e-12
# A tiny reference, counted by hand below (documents; window 10 covers each whole document).
DOCS = ["apple banana", "apple cherry", "banana cherry apple", "date", "apple"]
TOPIC = ["apple", "banana", "cherry", "date", "zebra"]  # zebra is absent


@pytest.fixture
def ref(tmp_path):
    p = tmp_path / "ref.txt"
    p.write_text("".join(d + "\n" for d in DOCS), encoding="utf-8")
    return str(p)


def test_fingerprint_fields_per_convention(ref):
    # convention, measure -> (counting, window, segmentation, epsilon, gamma, min_frequency, absent)
    expected = {
        ("tealeaves", "umass"): ("boolean documents", None, "one-preceding", EPS, None, None, "smooth"),
        ("tealeaves", "npmi"): ("exact sliding windows", 10, "one-one", EPS, None, None, "skip"),
        ("tealeaves", "c_v"): ("exact sliding windows", 110, "one-set", EPS, 1.0, None, "skip"),
        ("gensim", "uci"): ("gensim sliding windows", 10, "one-one", EPS, None, None, "skip"),
        ("gensim", "c_v"): ("gensim sliding windows", 110, "one-set", EPS, 1.0, None, "skip"),
        ("palmetto", "umass"): ("boolean documents", None, "one-preceding", EPS, None, 10, "smooth"),
        ("palmetto", "c_p"): ("exact sliding windows", 70, "one-preceding", EPS, None, 700, "smooth"),
        ("palmetto", "c_a"): ("context windows", 1, "one-one", EPS, 1.0, 10, "smooth"),  # +-5 > documents
    }
    for (conv, m), (counting, win, seg, eps, gamma, minimum, absent) in expected.items():
        win_asked = 1 if m == "c_a" else None
        fp = tl.coherence([TOPIC], ref, measure=m, convention=conv, window=win_asked).fingerprint
        assert (fp["measure"], fp["convention"], fp["counting"], fp["window"], fp["segmentation"],
                fp["epsilon"], fp["gamma"], fp["min_frequency"], fp["absent"]) == \
            (m, conv, counting, win, seg, eps, gamma, minimum, absent), (conv, m)
        assert fp["topn"] == 10  # under every convention (gensim's own CoherenceModel defaults to 20)
        assert fp["tokenizer"] == "whitespace (str.split)"
        digest = "sha256:" + hashlib.sha256("".join(d + "\n" for d in DOCS).encode()).hexdigest()
        assert fp["reference"] == {"name": ref, "hash": digest, "hash_of": "text", "documents": 5,
                                   "empty_documents": 0, "tokens": 9}
    mimno = tl.coherence([TOPIC], ref, measure="umass", form="mimno", **TL).fingerprint
    assert mimno["options"] == {"form": "mimno"} and mimno["epsilon"] is None
    # a default option given explicitly is the same number (the command line passes them)
    implicit = tl.coherence([TOPIC], ref, measure="npmi", **TL)
    assert implicit.fingerprint["options"] == {"zero": "epsilon"}
    assert tl.comparable(implicit, tl.coherence([TOPIC], ref, measure="npmi", zero="epsilon", **TL))
    assert not tl.comparable(implicit, tl.coherence([TOPIC], ref, measure="npmi", zero="limit", **TL))


def test_bundled_reference_hashes_its_arrays():
    fp = tl.coherence([["war", "peace"]], "sotu:train", measure="npmi", **TL).fingerprint
    train = tl.datasets.sotu().train
    assert fp["reference"]["hash"] == corpus_digest(train) and fp["reference"]["hash_of"] == "arrays"
    assert fp["reference"]["documents"] == len(train) and fp["reference"]["tokens"] == train.num_tokens
    assert fp["tokenizer"] == "as stored in the corpus"


def test_hash_same_text_twice_and_one_changed_byte(tmp_path):
    a, b, c = tmp_path / "a.txt", tmp_path / "b.txt", tmp_path / "c.txt"
    text = "the cat sat\non the mat\n"
    a.write_text(text, encoding="utf-8")
    b.write_text(text, encoding="utf-8")
    c.write_text(text.replace("mat", "hat"), encoding="utf-8")
    d = [count(str(p), ["cat", "mat"], window=10).digest for p in (a, a, b, c)]
    assert d[0] == d[1] == d[2] != d[3]
    assert d[0] == "sha256:" + hashlib.sha256(text.encode()).hexdigest()
    # token lists hash as their tokens joined by spaces, one line each: the same text
    assert count([["the", "cat", "sat"], ["on", "the", "mat"]], ["cat"], window=10).digest == d[0]
    # in parallel processes the hash is the same (documents hashed as they are read, in order)
    assert count(str(a), ["cat", "mat"], window=10, workers=2, chunk_docs=1).digest == d[0]
    h = StreamHash()
    h.update("x\n")
    assert h.hexdigest() != StreamHash().hexdigest()
    def corpus(words):
        return Corpus(np.array(words), np.array([0, 2, 3]), vocab=["a", "b"])

    assert corpus_digest(corpus([0, 1, 1])) == corpus_digest(corpus([0, 1, 1]))
    changed = corpus([0, 1, 0])
    assert corpus_digest(corpus([0, 1, 1])) != corpus_digest(changed)


def test_comparable_names_what_differs(ref, tmp_path):
    base = tl.coherence([TOPIC], ref, measure="npmi", **TL)
    assert tl.comparable(base, tl.coherence([TOPIC], ref, measure="npmi", **TL))
    assert base.comparable(json.loads(json.dumps(base.to_dict())))  # a saved result compares too
    wider = tl.comparable(base, tl.coherence([TOPIC], ref, measure="npmi", window=20, **TL))
    assert not wider and str(wider) == "not comparable: window 10 vs 20"
    other = tmp_path / "other.txt"
    other.write_text("apple banana\napple\n", encoding="utf-8")
    res = tl.comparable(base, tl.coherence([TOPIC], str(other), measure="npmi", **TL))
    assert not res and "reference.hash" in res.reason and "reference.documents 5 vs 2" in res.reason
    conv = tl.comparable(base, tl.coherence([TOPIC], ref, measure="npmi", convention="gensim"))
    assert not conv and conv.reason.startswith("not comparable: convention tealeaves vs gensim")
    assert "\n" not in conv.reason
    policy = tl.comparable(base, tl.coherence([TOPIC], ref, measure="npmi", absent="smooth", **TL))
    assert policy.differences == ("absent skip vs smooth",)


def test_coverage_by_hand(ref):
    # documents containing: apple 4, banana 2, cherry 2, date 1, zebra 0;
    # apple-banana 2, apple-cherry 2, banana-cherry 1, date with nothing
    r = tl.coherence([TOPIC], ref, measure="umass", **TL)
    cov = r.coverage[0]
    assert r.missing == [["zebra"]]
    assert cov["word_pairs"] == 10 and cov["pairs_with_absent"] == 4
    assert cov["zero_pairs"] == 3  # date with apple, banana, cherry
    assert cov["skipped_pairs"] == 0 and cov["reason"] is None  # umass smooths by default
    # umass smooth by hand: pairs (w_i, w_j), j < i, log((D(i,j)/5 + eps) / (D(j)/5))
    D = {"apple": 4, "banana": 2, "cherry": 2, "date": 1, "zebra": 0}
    J = {frozenset(p): n for p, n in [(("apple", "banana"), 2), (("apple", "cherry"), 2),
                                      (("banana", "cherry"), 1)]}
    vals = []
    for i in range(1, 5):
        for j in range(i):
            wi, wj = TOPIC[i], TOPIC[j]
            joint = J.get(frozenset((wi, wj)), 0)
            vals.append(math.log((joint / 5 + EPS) / (D[wj] / 5)))  # wj is never zebra (last)
    assert r.per_topic[0] == pytest.approx(np.mean(vals), abs=1e-12)
    skip = tl.coherence([TOPIC], ref, measure="umass", absent="skip", **TL)
    assert skip.coverage[0]["skipped_pairs"] == 4
    assert skip.per_topic[0] == pytest.approx(np.mean(vals[:6]), abs=1e-12)


def test_each_absent_policy(ref):
    topic = ["apple", "banana", "zebra"]
    N = 5  # one window of 10 per document
    pa, pb, pab = 4 / N, 2 / N, 2 / N
    npmi_ab = math.log((pab + EPS) / (pa * pb)) / -math.log(pab + EPS)
    skip = tl.coherence([topic], ref, measure="npmi", absent="skip", **TL)
    assert skip.per_topic[0] == pytest.approx(npmi_ab, abs=1e-12)
    assert skip.coverage[0]["skipped_pairs"] == 2
    # smooth: zebra's probability is eps: NPMI(zebra, w) = log(eps / (eps p_w)) / -log(eps)
    smooth = tl.coherence([topic], ref, measure="npmi", absent="smooth", **TL)
    z = [math.log(EPS / (EPS * p)) / -math.log(EPS) for p in (pa, pb)]
    assert smooth.per_topic[0] == pytest.approx(np.mean([npmi_ab, npmi_ab, *z, *z]), abs=1e-12)
    assert smooth.coverage[0]["skipped_pairs"] == 0
    gsmooth = tl.coherence([topic], ref, measure="npmi", absent="smooth", convention="gensim")
    assert gsmooth.per_topic[0] == pytest.approx(smooth.per_topic[0], abs=1e-12)  # no repeated words
    with pytest.raises(MethodError, match=r"^topic 0: 1 of its top 3 words do not occur in the reference: "
                                          r"zebra \(absent='fail'"):
        tl.coherence([topic], ref, measure="npmi", absent="fail", **TL)
    with pytest.raises(MethodError, match="absent must be one of skip, smooth, fail"):
        tl.coherence([topic], ref, measure="npmi", absent="drop", **TL)
    # Palmetto's default (smooth: undefined values count as 0) keeps its numbers
    pal = tl.coherence([topic], ref, measure="npmi", convention="palmetto")
    assert pal.params["absent"] == "smooth" and pal.undefined_pairs == [6]


def test_defaults_keep_each_conventions_numbers(ref):
    topics = [TOPIC, ["apple", "cherry", "banana"]]
    for conv, m in [("tealeaves", "umass"), ("tealeaves", "npmi"), ("tealeaves", "c_v"),
                    ("gensim", "umass"), ("gensim", "c_v"), ("palmetto", "npmi")]:
        default = tl.coherence(topics, ref, measure=m, convention=conv)
        explicit = tl.coherence(topics, ref, measure=m, convention=conv, absent=default.params["absent"])
        assert np.array_equal(default.per_topic, explicit.per_topic)
    # gensim drops absent words: its skip is the same as scoring the topic without them
    g = tl.coherence([TOPIC], ref, measure="npmi", convention="gensim")
    assert g.per_topic[0] == tl.coherence([TOPIC[:4]], ref, measure="npmi", convention="gensim").per_topic[0]


def test_nan_always_has_its_reason(ref):
    r = tl.coherence([["zebra", "yak"], ["apple", "zebra"], ["apple", "banana"]], ref, measure="npmi", **TL)
    assert math.isnan(r.per_topic[0]) and math.isnan(r.per_topic[1]) and not math.isnan(r.per_topic[2])
    assert r.coverage[0]["reason"] == "none of its 2 top words occurs in the reference"
    assert r.coverage[1]["reason"] == "only 1 of its 2 top words occurs in the reference: no pair to score"
    assert r.coverage[2]["reason"] is None
    d = r.to_dict()["topics"]
    assert d[0]["score"] is None and d[0]["reason"] and d[0]["missing"] == ["zebra", "yak"]


def test_json_fields(ref, tmp_path):
    out = tmp_path / "c.json"
    topics = tmp_path / "topics.txt"
    topics.write_text(" ".join(TOPIC) + "\napple banana cherry\n", encoding="utf-8")
    assert main(["coherence", str(topics), ref, "--measure", "umass,npmi", "--json", str(out),
                 "--convention", "tealeaves"]) == 0
    doc = json.loads(out.read_text(encoding="utf-8"))
    umass, npmi = doc["results"]
    assert set(umass["fingerprint"]) == {"measure", "convention", "counting", "window", "segmentation",
                                         "epsilon", "gamma", "min_frequency", "options", "topn", "absent",
                                         "reference", "tokenizer"}
    assert npmi["fingerprint"]["reference"]["documents"] == 5 and npmi["params"]["absent"] == "skip"
    t0 = npmi["topics"][0]
    assert (t0["missing"], t0["word_pairs"], t0["pairs_with_absent"], t0["zero_pairs"], t0["skipped_pairs"]) \
        == (["zebra"], 10, 4, 3, 4)
    assert tl.comparable(umass, npmi).reason.startswith("not comparable: measure umass vs npmi")


def test_cli_output_lines(ref, tmp_path, capsys):
    topics = tmp_path / "topics.txt"
    topics.write_text(" ".join(TOPIC) + "\nzebra yak\n", encoding="utf-8")
    assert main(["coherence", str(topics), ref, "--measure", "umass,npmi", "--convention", "tealeaves"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["topic", "umass", "npmi", "absent", "never", "together", "top", "words"]
    assert lines[1].split()[3:7] == ["1", "3/3", "of", "10"]
    assert lines[1].endswith("apple banana cherry date zebra*")
    assert lines[2].split()[1:3] == ["0.0000", "—"]  # umass smooths (log(eps/eps) = 0), npmi skips
    assert "— topic 1 npmi: none of its 2 top words occurs in the reference" in lines
    assert any(x.startswith("* 3 top words do not occur in the reference; npmi (absent=skip)") for x in lines)
    fp = lines[-1]
    assert fp.startswith("fingerprint: tealeaves convention, top 10; umass documents one-preceding "
                         "absent=smooth, npmi 10 one-one absent=skip; ε 1e-12")
    assert f"reference {ref} sha256:" in fp and "(5 documents, 9 tokens, tokens whitespace (str.split))" in fp
    assert main(["coherence", str(topics), ref, "--measure", "npmi", "--absent", "smooth"]) == 0
    assert "absent=smooth" in capsys.readouterr().out


def test_cli_absent_fail_is_one_line(ref, tmp_path, capsys):
    topics = tmp_path / "topics.txt"
    topics.write_text(" ".join(TOPIC) + "\n", encoding="utf-8")
    assert main(["coherence", str(topics), ref, "--measure", "npmi", "--absent", "fail"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["tealeaves: error: topic 0: 1 of its top 5 words do not occur in the reference: zebra "
                   "(absent='fail'; 'skip' leaves them out, 'smooth' gives them the convention's value)"]


@pytest.mark.parametrize(("measure", "topic", "expected", "places"), [
    ("umass", ["doc", "test"], -0.693147181, 7),  # gensim 4.4.0 test_direct_confirmation.py
    ("uci", ["test", "doc"], -0.182321557, 7),
    ("npmi", ["test", "doc"], -0.113282753, 7),
    ("c_v", ["fake", "tokens"], 0.6230, 4),  # test_indirect_confirmation.py
])
def test_gensim_test_suite_values_reproduced(measure, topic, expected, places):
    """gensim's toy accumulator (word 1 in documents 2, 3, 4; word 2 in 3 and 5; 5 documents) as a
    reference gives the values gensim's own tests expect, to the places they assert."""
    a, b = topic[-1], topic[0]
    ref = [["other"], [a], [a, b], [a], [b]]
    got = tl.coherence([topic], ref, measure=measure, convention="gensim").mean
    assert round(got - expected, places) == 0


def test_comparable_refuses_what_is_not_a_result():
    with pytest.raises(MethodError, match="comparable needs coherence results or their JSON"):
        tl.comparable({"mean": 0.1}, {"mean": 0.2})


def test_corpus_reference_and_unhashed_counts(ref):
    corpus = tl.read_corpus(ref)
    fp = tl.coherence([TOPIC], corpus, measure="npmi", **TL).fingerprint
    assert fp["reference"]["hash"] == corpus_digest(corpus) and fp["reference"]["hash_of"] == "arrays"
    assert fp["tokenizer"] == "as stored in the corpus" and fp["reference"]["name"] == "<Corpus>"
    counts = count(ref, sorted(TOPIC), window=10)
    counts.digest = ""  # counts made elsewhere, without a hash
    a = tl.coherence([TOPIC], ref, measure="npmi", counts=counts, **TL)
    res = tl.comparable(a, a)
    assert not res and res.reason == ("not comparable: the reference has no content hash, so it cannot be "
                                      "told the same")
