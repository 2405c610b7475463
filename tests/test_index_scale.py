"""The reference index at scale: counting only the pairs within the topics (`count(groups=...)`)
gives the numbers of counting the text, for every window, rule, convention and absent-word policy."""

from __future__ import annotations

import numpy as np
import pytest

from tealeaves import datasets
from tealeaves.coherence import CONVENTION_MEASURES, coherence, count, topic_words
from tealeaves.coherence import index as ix
from tealeaves.coherence.counts import group_pairs
from tealeaves.coherence.index import kernels
from tealeaves.errors import MethodError

WINDOWS = (None, 1, 2, 3, 10, 39, 40, 110)


@pytest.fixture(scope="module")
def repeats(tmp_path_factory):
    """Text where words repeat within windows, with empty and short lines, in chunks of a few documents;
    topics over its words, one with a word it lacks."""
    folder = tmp_path_factory.mktemp("scale")
    rng = np.random.default_rng(11)
    words = [f"w{i}" for i in range(15)]
    p = np.linspace(3, 1, len(words))
    lines = []
    for d in range(400):
        n = 0 if d % 9 == 0 else int(rng.integers(1, 60))
        lines.append(" ".join(rng.choice(words, n, p=p / p.sum())))
    text = folder / "rep.txt"
    text.write_text("\n".join(lines) + "\n", encoding="utf-8")
    tlx = folder / "rep.tlx"
    ix.build_index(text, tlx, chunk_chars=700)
    groups = [["w0", "w1", "w2", "w3"], ["w3", "w9", "w14", "absent"], ["w5", "w13"]]
    return text, tlx, groups


@pytest.mark.parametrize("rule,window", [(r, w) for r in ("exact", "gensim") for w in WINDOWS])
def test_group_pairs_equal_streaming(repeats, rule, window):
    text, tlx, groups = repeats
    targets = sorted({w for g in groups for w in g})
    full = count(text, targets, window=window, rule=rule)
    part = count(tlx, targets, window=window, rule=rule, groups=groups)
    assert part.partial and not full.partial
    assert (part.units, part.documents, part.tokens) == (full.units, full.documents, full.tokens)
    np.testing.assert_array_equal(part.single, full.single)
    pairs = group_pairs(targets, groups)
    inside = np.zeros_like(full.joint, bool)
    inside[pairs[:, 0], pairs[:, 1]] = inside[pairs[:, 1], pairs[:, 0]] = True
    np.fill_diagonal(inside, True)
    np.testing.assert_array_equal(part.joint[inside], full.joint[inside])
    assert (part.joint[~inside] == -1).all() and (~inside).any()


def test_overlap_kernel_against_sets():
    """The skipping overlap of two interval lists equals the size of the intersection of the sets
    they cover, for lists of very different lengths (the skip is taken) and equal ones."""
    rng = np.random.default_rng(5)
    for n_short, n_long in ((3, 2000), (50, 50), (1, 1), (0, 40), (400, 9)):
        lists = []
        for n in (n_short, n_long):
            edges = np.sort(rng.choice(20_000, 2 * n, replace=False))
            lists.append((edges[0::2], edges[1::2]))
        a = np.concatenate([lists[0][0], lists[1][0]]).astype(np.int64)
        b = np.concatenate([lists[0][1], lists[1][1]]).astype(np.int64)
        covered = [set().union(*[range(s, e) for s, e in zip(*lst, strict=True)]) for lst in lists]
        if n_short <= n_long:
            got = kernels.overlap(a, b, 0, n_short, n_short, n_short + n_long)
        else:
            got = kernels.overlap(a, b, n_short, n_short + n_long, 0, n_short)
        assert got == len(covered[0] & covered[1])


@pytest.mark.parametrize("convention,measure", [(c, m) for c, ms in CONVENTION_MEASURES.items() for m in ms])
@pytest.mark.parametrize("absent", ["skip", "smooth", None])
def test_coherence_identical_with_absent_words(repeats, convention, measure, absent):
    text, tlx, groups = repeats
    a = coherence(groups, text, measure=measure, convention=convention, absent=absent, topn=4)
    b = coherence(groups, tlx, measure=measure, convention=convention, absent=absent, topn=4)
    np.testing.assert_array_equal(a.per_topic, b.per_topic)
    assert a.missing == b.missing == [[], ["absent"], []]
    assert a.coverage == b.coverage


def test_absent_fail_is_the_same_error(repeats):
    text, tlx, groups = repeats
    errors = []
    for ref in (text, tlx):
        with pytest.raises(MethodError) as e:
            coherence(groups, ref, measure="npmi", absent="fail")
        errors.append(str(e.value))
    assert errors[0] == errors[1] and "topic 1" in errors[0] and "absent" in errors[0]


def test_partial_counts_are_not_reused_for_other_topics(repeats):
    """Counts of one set of topics' pairs, handed to coherence for topics that pair other words,
    are counted again rather than read as zeros."""
    text, tlx, groups = repeats
    other = [["w0", "w9"], ["w1", "w13", "w14"]]
    targets = sorted({w for g in groups + other for w in g})
    partial = count(tlx, targets, window=10, groups=groups)
    assert not partial.covers(other) and partial.covers(groups)
    got = coherence(other, tlx, measure="npmi", counts=partial)
    np.testing.assert_array_equal(got.per_topic, coherence(other, text, measure="npmi").per_topic)


def test_sotu_topics_identical(tmp_path):
    """A real corpus and model: 20 topics x 10 words, all four classic measures."""
    c = datasets.sotu().train
    text = tmp_path / "sotu.txt"
    text.write_text("".join(" ".join(c.vocab[i] for i in doc) + "\n" for doc in list(c)[:2000]))
    tlx = tmp_path / "sotu.tlx"
    ix.build_index(text, tlx, chunk_chars=80_000)
    words = topic_words(datasets.sotu_model("sotu-20-asym"), 10)
    for m in ("umass", "uci", "npmi", "c_v"):
        np.testing.assert_array_equal(coherence(words, tlx, measure=m).per_topic,
                                      coherence(words, text, measure=m).per_topic)
