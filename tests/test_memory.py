"""Issue 22 point 3: a model holds one float64 phi and nothing of its size more.

Memory is measured with tracemalloc (numpy reports its allocations to it) on a moderate model,
T = 200, V = 20,000 (phi: 32 MB). The readers work a block of rows at a time
(`model.BLOCK_BYTES`, set to 1 MiB here), so a load may hold phi plus a few blocks (a block's
bytes as read, its float64 copy and the check's boolean masks: under 4 MiB) and the small
arrays: PEAK_FACTOR = 1.25 leaves 8 MB for them and fails any reader that makes a second phi
(2.0), as `test_the_bound_catches_a_second_copy` shows with the old way of loading."""

from __future__ import annotations

import gzip
import math
import tracemalloc
from itertools import product

import numpy as np
import pytest

import tealeaves as tl
from tealeaves import model as model_mod
from tealeaves.errors import InputFileError, InvalidModelError
from tealeaves.heldout import _doc_task, get_method
from tealeaves.io import load_model, mallet
from tealeaves.io.sklearn import from_sklearn

T, V = 200, 20_000
PHI_BYTES = 8 * T * V
PEAK_FACTOR = 1.25
EXAMPLE = tl.__file__.replace("__init__.py", "data/example_model.npz")


@pytest.fixture(autouse=True)
def small_blocks(monkeypatch):
    monkeypatch.setattr(model_mod, "BLOCK_BYTES", 2**20)


def random_phi(t: int = T, v: int = V, seed: int = 0, dtype=np.float64) -> np.ndarray:
    phi = np.random.default_rng(seed).random((t, v)) ** 4 + 1e-9
    return (phi / phi.sum(axis=1, keepdims=True)).astype(dtype)


def old_check(phi) -> np.ndarray:
    """How TopicModel made phi before this change (one C-order float64 copy, rows whose sum is
    more than 1e-12 from one divided by it): the reference the new block-wise path must match
    bit for bit."""
    arr = np.array(phi, dtype=np.float64)
    sums = arr.sum(axis=1)
    rescale = np.abs(sums - 1.0) > 1e-12
    arr[rescale] /= sums[rescale, None]
    return arr


def traced_peak(fn) -> tuple[object, int]:
    tracemalloc.start()
    try:
        out = fn()
        return out, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def save_plain(path, phi, **extra) -> None:
    """An .npz as numpy writes it from a C-order phi (old tealeaves files, other tools)."""
    np.savez_compressed(path, phi=phi, alpha=np.full(phi.shape[0], 0.1), **extra)


@pytest.mark.parametrize("order,dtype", [("C", np.float64), ("F", np.float64), ("C", np.float32)])
def test_npz_load_holds_one_phi(tmp_path, order, dtype):
    phi = np.asarray(random_phi(dtype=dtype), order=order)
    save_plain(tmp_path / "m.npz", phi, vocab=np.array([f"w{i}" for i in range(V)]))
    model, peak = traced_peak(lambda: load_model(tmp_path / "m.npz", normalize=True))
    assert peak < PEAK_FACTOR * PHI_BYTES, peak / PHI_BYTES
    np.testing.assert_array_equal(model.phi, old_check(phi))


def test_the_bound_catches_a_second_copy(tmp_path):
    save_plain(tmp_path / "m.npz", random_phi())

    def old_load():
        with np.load(tmp_path / "m.npz") as f:
            return np.ascontiguousarray(old_check(f["phi"]))

    _, peak = traced_peak(old_load)
    assert peak > 1.9 * PHI_BYTES


def test_saved_models_round_trip_in_the_kernels_layout(tmp_path):
    model = tl.TopicModel(random_phi(), np.full(T, 0.1))
    assert model.phi.flags.f_contiguous and model.phi_wt.flags.c_contiguous
    assert np.shares_memory(model.phi, model.phi_wt)
    tl.save_model(model, tmp_path / "m.npz")
    again, peak = traced_peak(lambda: load_model(tmp_path / "m.npz"))
    assert peak < PEAK_FACTOR * PHI_BYTES
    np.testing.assert_array_equal(again.phi, model.phi)


def test_models_derived_without_a_new_phi_share_it():
    model = tl.TopicModel(random_phi(20, 50), np.full(20, 0.1))
    for other in (model.with_params(name="b"), model.with_vocab([f"w{i}" for i in range(50)])):
        assert other.phi is model.phi
    own = model_mod.phi_layout(20, 50)
    own[:] = random_phi(20, 50)
    assert tl.TopicModel(own, np.full(20, 0.1), copy=False).phi is own
    user = np.asfortranarray(random_phi(20, 50))
    kept = user.copy()
    assert tl.TopicModel(user, np.full(20, 0.1), normalize=True).phi is not user  # copy=True: the user's
    np.testing.assert_array_equal(user, kept)


@pytest.mark.parametrize("seed", range(3))
def test_block_checks_give_the_old_values_and_errors(seed):
    rng = np.random.default_rng(seed)
    phi = random_phi(300, 7000, seed) * rng.uniform(0.5, 2.0, (300, 1))  # rows off by a factor
    phi[rng.random(300) < 0.3] = random_phi(1, 7000, seed + 10)  # and some rows already exact
    np.testing.assert_array_equal(tl.TopicModel(phi, np.full(300, 0.1), normalize=True).phi, old_check(phi))
    f32 = phi.astype(np.float32)
    np.testing.assert_array_equal(tl.TopicModel(f32, np.full(300, 0.1), normalize=True).phi, old_check(f32))
    bad = phi.copy()
    t, w = 250, int(rng.integers(7000))  # in the last block, after a negative value in the first
    bad[t, w] = np.nan
    bad[3, 5] = -1.0
    with pytest.raises(InvalidModelError, match=f"non-finite value \\(nan\\) at topic {t}, word {w}"):
        tl.TopicModel(bad, np.full(300, 0.1), normalize=True)
    with pytest.raises(InvalidModelError, match="topic 7 sums to"):
        tl.TopicModel(np.where(np.arange(300)[:, None] == 7, phi * 2, old_check(phi)), np.full(300, 0.1))


def test_heldout_uses_the_models_phi_without_copying_it():
    model = tl.TopicModel(random_phi(), np.full(T, 0.1))
    docs = [list(np.random.default_rng(d).integers(0, V, 20)) for d in range(3)]
    tl.heldout(tl.TopicModel(random_phi(5, V), np.full(5, 0.1)), docs, particles=2, bootstrap=0)  # compile
    _, peak = traced_peak(lambda: tl.heldout(model, docs, particles=2, bootstrap=0))
    assert peak < 0.25 * PHI_BYTES, peak / PHI_BYTES


@pytest.mark.parametrize("method", ["left-to-right", "is-pzw", "ais"])
def test_heldout_on_the_example_matches_the_old_layout(method):
    """The kernels read the model's own V x T memory now; with a separately built contiguous
    transpose of a C-order phi (the old way) every number is the same, bit for bit."""
    model = load_model(EXAMPLE)
    docs = tl.read_corpus(EXAMPLE.replace("example_model.npz", "example_docs.txt"), vocab=model.vocab)
    res = tl.heldout(model, docs, method=method, runs=2, seed=3, bootstrap=0)
    spec = get_method(method, "heldout")
    shared = (np.ascontiguousarray(np.array(model.phi, order="C").T), np.array(model.alpha), spec.name,
              "heldout", spec.resolve({}, "heldout"), 2)
    seqs = np.random.SeedSequence(3).spawn(len(docs))
    old = np.array([_doc_task(shared, (docs[d], 0, seqs[d]))[0] for d in range(len(docs))]).T
    np.testing.assert_array_equal(res.run_log_prob, old)


def exact_log_prob(phi: np.ndarray, alpha: np.ndarray, words: list[int]) -> float:
    """log P(w) by summing P(w, z) over every assignment z (Wallach et al. 2009, eq. 3)."""
    total, a = 0.0, alpha.sum()
    for z in product(range(len(alpha)), repeat=len(words)):
        n = np.bincount(z, minlength=len(alpha))
        log_p = math.lgamma(a) - math.lgamma(a + len(words))
        log_p += sum(math.lgamma(alpha[t] + n[t]) - math.lgamma(alpha[t]) for t in range(len(alpha)))
        total += math.exp(log_p) * np.prod([phi[t, w] for t, w in zip(z, words, strict=True)])
    return math.log(total)


def test_exact_heldout_after_a_float32_load_matches_enumeration(tmp_path):
    phi = random_phi(3, 6, seed=4, dtype=np.float32)
    save_plain(tmp_path / "tiny.npz", phi)
    model = load_model(tmp_path / "tiny.npz", normalize=True)
    docs = [[0, 5, 2, 2], [1, 3, 4]]
    res = tl.heldout(model, docs, method="exact", bootstrap=0)
    ref = old_check(phi)
    for d, words in enumerate(docs):
        assert res.run_log_prob[0, d] == pytest.approx(exact_log_prob(ref, np.full(3, 0.1), words), rel=1e-12)


def test_mallet_state_counts_in_place(tmp_path):
    rng = np.random.default_rng(5)
    words = np.concatenate([np.arange(V), rng.integers(0, V, 20_000)])
    topics = rng.integers(0, T, words.size)
    alpha = np.full(T, 0.05)
    with gzip.open(tmp_path / "state.gz", "wt") as fh:
        fh.write("#doc source pos typeindex type topic\n#alpha : " + " ".join(map(str, alpha)) + "\n")
        fh.write("#beta : 0.01\n")
        fh.writelines(f"0 NA {i} {w} w{w} {t}\n" for i, (w, t) in enumerate(zip(words, topics, strict=True)))
    model, peak = traced_peak(lambda: load_model(tmp_path / "state.gz"))
    assert peak < PEAK_FACTOR * PHI_BYTES, peak / PHI_BYTES
    counts = np.zeros((T, V))
    np.add.at(counts, (topics, words), 1.0)
    np.testing.assert_array_equal(model.phi, old_check((counts + 0.01) / (counts.sum(axis=1, keepdims=True)
                                                                          + V * 0.01)))


def test_mallet_state_type_index_beyond_int64_is_one_line(tmp_path):
    path = tmp_path / "state.txt"
    path.write_text("#doc source pos typeindex type topic\n#alpha : 0.1 0.1\n#beta : 0.01\n"
                    "0 NA 0 99999999999999999999 w 1\n")
    with pytest.raises(InputFileError, match="typeindex"):
        mallet.read_state(path)


def test_npz_phi_of_strings_is_refused(tmp_path):
    save_plain(tmp_path / "s.npz", np.array([["0.5", "0.5"]]))
    with pytest.raises(InvalidModelError, match="phi holds text, not numbers"):
        load_model(tmp_path / "s.npz")


def test_sklearn_phi_is_the_old_normalisation_and_the_users_array_is_left_alone():
    sklearn = pytest.importorskip("sklearn.decomposition")
    lda = sklearn.LatentDirichletAllocation(n_components=20)
    lda.components_ = random_phi(20, 3000, 6) * 1e3
    kept = lda.components_.copy()
    lda.doc_topic_prior_, lda.topic_word_prior_ = 0.1, 0.01
    model = from_sklearn(lda)
    np.testing.assert_array_equal(model.phi, old_check(kept))
    np.testing.assert_array_equal(lda.components_, kept)


def test_tomotopy_file_streams_phi_from_the_child(tmp_path):
    tp = pytest.importorskip("tomotopy")
    mdl = tp.LDAModel(k=T, seed=1)
    for d in range(V // 100):
        mdl.add_doc([f"w{d * 100 + i}" for i in range(100)])
    mdl.train(1, workers=1)
    mdl.save(str(tmp_path / "m.bin"))
    model, peak = traced_peak(lambda: load_model(tmp_path / "m.bin"))
    assert peak < PEAK_FACTOR * PHI_BYTES, peak / PHI_BYTES
    ref = old_check(np.array([mdl.get_topic_word_dist(k) for k in range(T)], dtype=np.float64))
    np.testing.assert_array_equal(model.phi, ref)
    np.testing.assert_array_equal(tl.load_model(mdl).phi, ref)  # the object: one topic at a time



@pytest.mark.parametrize("eta", ["symmetric", "matrix"])
def test_gensim_topics_in_blocks_are_get_topics(eta):
    gensim = pytest.importorskip("gensim")
    from gensim.corpora import Dictionary

    rng = np.random.default_rng(7)
    texts = [[f"w{i}" for i in rng.integers(0, 3000, 40)] for _ in range(50)]
    words = Dictionary(texts)
    prior = 0.01 if eta == "symmetric" else rng.uniform(0.005, 0.02, (30, len(words)))
    lda = gensim.models.LdaModel([words.doc2bow(t) for t in texts], id2word=words, num_topics=30, eta=prior,
                                 random_state=0, passes=1)
    np.testing.assert_array_equal(tl.load_model(lda).phi, old_check(lda.get_topics()))
