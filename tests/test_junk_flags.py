"""The coherence flags of junk topics (issue 33, point 3): a topic of names that never occur together
is flagged incoherent, never-together and rare-words (it showed "flags: none"); a topic of words
that occur together is not; the diagnostics compute them over their own documents and list the
flagged topics first. Thresholds: tealeaves.diagnostics.flags (set in experiments/junk_human.py)."""

from __future__ import annotations

import numpy as np
import pytest

import tealeaves as tl
from tealeaves.coherence.measures import RARE_FREQUENCY
from tealeaves.diagnostics.flags import THRESHOLDS, coherence_flags, coherence_values

COMMON = 400  # ordinary words w0..w399
THEME = [f"theme{i}" for i in range(10)]  # occur together, in the same documents
NAMES = [f"Name{i}" for i in range(10)]  # each in one document of its own
GENERIC = [f"w{i}" for i in range(10)]  # common words scattered at random


def reference(docs: int, length: int = 100, seed: int = 0) -> tl.Corpus:
    """`docs` documents of random common words; one in 20 holds the theme's words together; ten
    documents hold one name each."""
    rng = np.random.default_rng(seed)
    vocab = [f"w{i}" for i in range(COMMON)] + THEME + NAMES
    out = []
    for d in range(docs):
        ids = rng.integers(0, COMMON, size=length)
        if d % 20 == 0:
            ids[:10] = COMMON + np.arange(10)  # the theme, side by side
        if d < len(NAMES):
            ids[50] = COMMON + len(THEME) + d
        out.append(ids)
    return tl.Corpus.from_word_ids(out, vocab)


def test_names_that_never_co_occur_are_flagged_and_a_theme_is_not():
    ref = reference(docs=21_000)  # 2.1 million tokens: a name once is rarer than one per million
    assert 1 / ref.num_tokens < RARE_FREQUENCY
    res = tl.coherence([THEME, NAMES, GENERIC], ref, measure="npmi", topn=10)
    v = coherence_values(res)
    flags = coherence_flags(res)
    assert v["npmi"][0] > 0.5 and flags[0] == []
    assert v["never_together"][1] == 1.0 and v["rare_share"][1] == 1.0
    assert v["npmi"][1] < THRESHOLDS["incoherent"]
    assert flags[1] == ["incoherent", "never-together", "rare-words"]
    # common words scattered at random co-occur as chance has them: NPMI about 0
    assert abs(v["npmi"][2]) < 0.02 and flags[2] == ["incoherent"]
    # the flags read a result's JSON as they read the result
    assert coherence_flags(res.to_dict()) == flags


def test_no_coherence_flags_over_a_small_reference():
    """Over 20,000 tokens most pairs never meet by chance: no flags, and the reason."""
    from tealeaves.diagnostics.flags import MIN_REFERENCE_TOKENS, too_small

    ref = reference(docs=200)
    res = tl.coherence([THEME, NAMES], ref, measure="npmi", topn=10)
    assert coherence_flags(res) is None
    assert too_small(res) == (f"no coherence flags: the reference has 20,000 tokens, fewer than the "
                              f"{MIN_REFERENCE_TOKENS:,} they need (over fewer, NPMI is ruled by word pairs "
                              "that never meet by chance: docs/junk_flags.md)")


def test_rare_words_are_not_measured_from_whole_documents():
    ref = reference(docs=200)
    res = tl.coherence([THEME, NAMES], ref, measure="umass", topn=10)
    assert all("rare_words" not in c for c in res.coverage)
    with pytest.raises(ValueError, match="need NPMI"):
        coherence_flags(res)


def test_diagnostics_flag_the_names_topic_and_list_it_first():
    ref = reference(docs=3_100)  # 310,000 tokens: enough for the coherence flags
    vocab = ref.vocab
    K, V = 3, len(vocab)
    phi = np.full((K, V), 1e-6)
    for k, words in enumerate((THEME, GENERIC, NAMES)):
        for w in words:
            phi[k, vocab.index(w)] = 1.0
        phi[k] /= phi[k].sum()
    phi[1, :COMMON] += 1e-3  # the generic topic: every common word a little
    phi /= phi.sum(axis=1, keepdims=True)
    model = tl.TopicModel(phi, np.full(K, 0.1), vocab=vocab)
    theta = np.full((len(ref), K), 1 / K)
    res = tl.diagnostics(model, ref, theta=theta)
    assert res.words[2][:10] and set(res.words[2][:10]) == set(NAMES)
    assert "never-together" in res.flags[2] and "incoherent" in res.flags[2]
    assert "incoherent" not in res.flags[0]
    assert res.order() == [1, 2, 0]  # flagged first (the generic topic is near-uniform too), then the rest
    lines = res.table().splitlines()
    assert [line.split()[0] for line in lines[1:]] == ["1", "2", "0"]
    assert "npmi@10" in lines[0] and "mallet-coh@20" in lines[0]
    row = res.rows()[2]
    assert row["never_together"] == 1.0 and row["npmi"] < 0
