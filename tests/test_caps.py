"""Models of every kind (issue 24, part A): `tl.load_topics` and its readers (gensim HdpModel, Nmf,
LsiModel, LdaMulticore, LdaSeqModel; scikit-learn NMF; plain arrays), every metric refusing in one line
the kinds it does not apply to, and `evaluate` putting every kind in one table. The models are made by
the real libraries on a small slice of the bundled corpus."""

import json
import warnings

import numpy as np
import pytest
from clirun import one_line_error, run_cli

import tealeaves as tl
from tealeaves.coherence import exclusivity
from tealeaves.topics import NotApplicableError, as_topics

pytest.importorskip("gensim")
pytest.importorskip("sklearn")

K = 4


@pytest.fixture(scope="module")
def texts():
    train = tl.datasets.sotu().train
    docs = train.subset(np.arange(300))
    return [[docs.vocab[i] for i in docs[d]] for d in range(len(docs))]


@pytest.fixture(scope="module")
def bow(texts):
    from gensim.corpora import Dictionary

    d = Dictionary(texts)
    return d, [d.doc2bow(t) for t in texts]


@pytest.fixture(scope="module")
def gensim_models(bow, tmp_path_factory):
    """LdaModel, HdpModel, Nmf and LsiModel, as objects and saved by gensim (path per name)."""
    from gensim.models import HdpModel, LdaModel, LsiModel, Nmf

    d, corpus = bow
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        models = {"lda": LdaModel(corpus, num_topics=K, id2word=d, random_state=0, passes=2),
                  "hdp": HdpModel(corpus, d, T=8, K=4, random_state=0),
                  "nmf": Nmf(corpus, num_topics=K, id2word=d, random_state=0, passes=2),
                  "lsi": LsiModel(corpus, num_topics=K, id2word=d, random_seed=0)}
    out = tmp_path_factory.mktemp("gensim")
    paths = {}
    for name, m in models.items():
        m.save(str(out / name))
        paths[name] = out / name
    return models, paths


@pytest.fixture(scope="module")
def sk_nmf(texts, tmp_path_factory):
    """A scikit-learn CountVectorizer + NMF pipeline, and the same dumped with joblib."""
    import joblib
    from sklearn.decomposition import NMF
    from sklearn.feature_extraction.text import CountVectorizer
    from sklearn.pipeline import make_pipeline

    pipe = make_pipeline(CountVectorizer(analyzer=str.split), NMF(K, random_state=0, max_iter=300))
    pipe.fit([" ".join(t) for t in texts])
    path = tmp_path_factory.mktemp("sk") / "nmf.joblib"
    joblib.dump(pipe, path)
    return pipe, path


# -- readers ------------------------------------------------------------------------------------------


def test_gensim_hdp_is_its_truncated_topics_with_their_weights(gensim_models):
    models, paths = gensim_models
    hdp = models["hdp"]
    for t in (tl.load_topics(hdp), tl.load_topics(paths["hdp"], allow_pickle=True)):
        assert t.source == "gensim HdpModel" and t.weights_kind == "distributions"
        np.testing.assert_allclose(t.weights, hdp.get_topics())
        np.testing.assert_allclose(t.topic_weights, hdp.hdp_to_lda()[0])
        assert t.vocab == tuple(hdp.id2word[i] for i in range(len(hdp.id2word)))
        reason = tl.topics.why_not("heldout", t)  # an HDP's prior is named (issue 32), never "no prior"
        assert "hierarchical Dirichlet-process prior" in reason and reason.endswith("no likelihood")
        assert tl.topics.why_not("exclusivity", t) is None


def test_gensim_nmf_is_nonnegative_weights(gensim_models):
    models, paths = gensim_models
    t = tl.load_topics(paths["nmf"], allow_pickle=True)
    assert (t.source, t.weights_kind, t.weights_note) == ("gensim Nmf", "nonnegative", "NMF components")
    np.testing.assert_allclose(t.weights, models["nmf"].get_topics(normalize=False))
    assert exclusivity(t).shape == (K,)
    with pytest.raises(NotApplicableError, match="NMF components are not probabilities: no likelihood"):
        tl.heldout(t, [[0, 1]])


def test_gensim_lsi_is_signed_weights_ranked_as_gensim_shows_them(gensim_models):
    models, paths = gensim_models
    lsi = models["lsi"]
    t = tl.load_topics(paths["lsi"], allow_pickle=True)
    assert t.weights_kind == "signed" and t.provides() == {"top_words"}
    np.testing.assert_allclose(t.topic_weights, lsi.projection.s[:K])
    for k, words in enumerate(t.ranked_words(5)):  # gensim orders a topic's words by |weight|
        assert words == [w for w, _ in lsi.show_topic(k, topn=5)]


def test_gensim_ldamulticore_is_an_lda(bow, tmp_path):
    from gensim.models import LdaMulticore

    d, corpus = bow
    mc = LdaMulticore(corpus, num_topics=K, id2word=d, workers=1, passes=1, random_state=0)
    mc.save(str(tmp_path / "mc"))
    model = tl.load_model(tmp_path / "mc", allow_pickle=True)
    np.testing.assert_allclose(model.phi, mc.get_topics(), rtol=1e-6)
    t = tl.load_topics(mc)
    assert t.lda is not None and t.provides() >= {"lda", "generative"}


def test_gensim_ldaseq_one_time_slice_or_every_slice(bow, tmp_path):
    from gensim.models import LdaSeqModel

    d, corpus = bow
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        seq = LdaSeqModel(corpus[:60], time_slice=[30, 30], id2word=d, num_topics=2, passes=1, em_min_iter=1,
                          em_max_iter=1, lda_inference_max_iter=2, random_state=0, chunksize=60)
    seq.save(str(tmp_path / "seq"))
    one = tl.load_model(tmp_path / "seq", allow_pickle=True, time_slice=1)
    for k in range(2):  # gensim's own reading of slice 1: print_topic's (word, probability) pairs
        for word, p in seq.print_topic(k, time=1, top_terms=5):
            assert one.phi[k, one.vocab.index(word)] == pytest.approx(p, rel=1e-6)
    np.testing.assert_allclose(one.alpha, seq.alphas)
    every = tl.load_topics(seq, time_slice="all")
    assert [t.name for t in every] == ["gensim@0", "gensim@1"] and all(t.lda is not None for t in every)
    with pytest.raises(tl.MethodError, match="has 2 time slices; choose one with time_slice=0..1"):
        tl.load_model(tmp_path / "seq", allow_pickle=True)


def test_sklearn_nmf_object_and_joblib_file(sk_nmf):
    pipe, path = sk_nmf
    nmf = pipe[-1]
    for t in (tl.load_topics(pipe), tl.load_topics(path, allow_pickle=True)):
        assert (t.source, t.weights_kind) == ("scikit-learn NMF", "nonnegative")
        assert t.weights_note == "NMF components"
        np.testing.assert_allclose(t.weights, nmf.components_)
        assert t.vocab == tuple(pipe[0].get_feature_names_out())
    with pytest.raises(tl.MethodError, match="is a scikit-learn NMF .NMF components., not an LDA model"):
        tl.load_model(pipe)


def test_plain_arrays_npy_csv_and_npz(tmp_path):
    rng = np.random.default_rng(0)
    phi = rng.dirichlet(np.ones(6), size=3)
    vocab = tmp_path / "vocab.txt"
    vocab.write_text("\n".join(f"w{i}" for i in range(6)) + "\n")
    np.save(tmp_path / "tw.npy", phi)
    np.savetxt(tmp_path / "tw.csv", phi, delimiter=",")
    theta = rng.dirichlet(np.ones(3), size=5)
    np.save(tmp_path / "dt.npy", theta)
    for src in ("tw.npy", "tw.csv"):
        t = tl.load_topics(tmp_path / src, format="arrays", vocab=vocab, doc_topic=tmp_path / "dt.npy")
        assert t.prior is None and t.weights_kind == "distributions" and t.vocab[0] == "w0"
        np.testing.assert_allclose(t.weights, phi)
        np.testing.assert_allclose(t.doc_topic, theta)
        assert tl.topics.why_not("topic intrusion", t) is None
    assert tl.io.detect(str(tmp_path / "tw.npy")) == "arrays"
    words = np.array([f"w{i}" for i in range(6)])
    np.savez(tmp_path / "lda.npz", topic_word=phi, alpha=np.full(3, 0.1), vocab=words)
    model = tl.load_model(tmp_path / "lda.npz")  # distributions with a Dirichlet prior: an LDA
    np.testing.assert_allclose(model.phi, phi)
    np.testing.assert_allclose(model.alpha, 0.1)
    mean, cov = np.zeros(3), np.eye(3)
    np.savez(tmp_path / "ctm.npz", topic_word=phi, mean=mean, cov=cov)
    ctm = tl.load_topics(tmp_path / "ctm.npz", vocab=vocab)
    assert (ctm.prior, ctm.decoder) == ("logistic-normal", "mixture") and "generative" in ctm.provides()
    assert tl.heldout(ctm, [[0, 1]], temperatures=20, bootstrap=0).method == "ais"  # ais over eta
    with pytest.raises(NotApplicableError, match="compare needs LDA .* not a logistic-normal prior"):
        tl.compare(ctm, model, [[0, 1]])
    with pytest.raises(tl.MethodError, match="chib integrates over a Dirichlet prior"):
        tl.heldout(ctm, [[0, 1]], method="chib")
    with pytest.raises(NotApplicableError, match="needs LDA .* this model has a logistic-normal prior"):
        tl.completion(ctm, [[0, 1]])


def test_weights_given_as_nonnegative_are_not_checked_as_distributions(tmp_path):
    np.save(tmp_path / "w.npy", np.array([[3.0, 1.0, 0.0], [0.0, 2.0, 2.0]]))
    t = tl.load_topics(tmp_path / "w.npy", vocab=["a", "b", "c"], weights="nonnegative")
    assert t.ranked_words(2) == [["a", "b"], ["b", "c"]] and exclusivity(t).shape == (2,)


# -- bad input (docs/hostile_input.md, "Issue 24: models of every kind") --------------------------------


def test_weights_not_distributions_need_normalize(tmp_path):
    np.save(tmp_path / "w.npy", np.array([[0.5, 0.5, 0.0], [1.0, 2.0, 1.0]]))
    (tmp_path / "v.txt").write_text("a\nb\nc\n")
    with pytest.raises(tl.InvalidModelError, match="row 1 sums to 4, not 1 .* --normalize"):
        tl.load_topics(tmp_path / "w.npy", vocab=tmp_path / "v.txt")
    one_line_error(["diversity", tmp_path / "w.npy", "--vocab", tmp_path / "v.txt"],
                   "row 1 sums to 4, not 1", "--normalize")
    t = tl.load_topics(tmp_path / "w.npy", vocab=tmp_path / "v.txt", normalize=True)
    np.testing.assert_allclose(t.weights[1], [0.25, 0.5, 0.25])
    assert t.metadata["normalized"] == ("the topic-word matrix: 1 of 2 rows rescaled to sum to 1 (their "
                                        "sums were 4 to 4)")
    code, out, err = run_cli(["diversity", tmp_path / "w.npy", "--vocab", tmp_path / "v.txt", "--normalize",
                              "--topn", "2"])
    assert code == 0 and "--normalize: the topic-word matrix: 1 of 2 rows rescaled" in err


def test_another_librarys_file_with_the_wrong_model_format(gensim_models, sk_nmf):
    _, paths = gensim_models
    _, joblib_path = sk_nmf
    one_line_error(["diversity", joblib_path, "--model-format", "gensim", "--allow-pickle"],
                   "this is a pickled scikit-learn Pipeline", "not a gensim model file",
                   "--model-format sklearn")
    one_line_error(["diversity", paths["lsi"], "--model-format", "sklearn", "--allow-pickle"],
                   "this is a pickled gensim LsiModel", "not a scikit-learn model", "--model-format gensim")
    one_line_error(["diversity", paths["hdp"], "--model-format", "tomotopy"],
                   "this is a pickled gensim HdpModel", "not a tomotopy model file")


def test_pickle_without_consent(gensim_models, sk_nmf):
    _, paths = gensim_models
    _, joblib_path = sk_nmf
    for path in (paths["nmf"], joblib_path):
        with pytest.raises(tl.MethodError, match="unpickling runs code stored in the file"):
            tl.load_topics(path)
        one_line_error(["evaluate", path, "--heldout", path], "allow_pickle=True", "--allow-pickle")


def test_lsi_given_to_heldout(gensim_models, tmp_path):
    _, paths = gensim_models
    docs = tmp_path / "docs.txt"
    docs.write_text("states united\n")
    one_line_error(["heldout", paths["lsi"], docs, "--allow-pickle"],
                   "heldout does not apply", "LSI singular vectors are not probabilities: no likelihood")
    one_line_error(["compare", paths["lsi"], paths["lda"], docs, "--allow-pickle"], "compare does not apply")
    with pytest.raises(NotApplicableError, match="predictive does not apply"):
        tl.intrusion.predictive(tl.load_topics(paths["lsi"], allow_pickle=True), [[0, 1]])


def test_top_words_only_model_given_to_exclusivity():
    t = as_topics([["a", "b", "c"], ["d", "e", "f"]], name="words")
    with pytest.raises(NotApplicableError, match="^exclusivity does not apply: 'words' .top words.: "
                                                 "top words only, no topic-word weights$"):
        exclusivity(t)
    assert tl.diversity(t, 3) == 1.0  # what applies still works
    tasks = tl.intrusion.word_tasks(t, n_words=2, high_top=3, seed=0, relax=True)
    assert len(tasks) == 2 and all(len(x.options) == 3 for x in tasks)


# -- one table across kinds --------------------------------------------------------------------------


def test_evaluate_mixes_lda_nmf_and_lsi(gensim_models, sk_nmf, tmp_path):
    models, paths = gensim_models
    pipe, joblib_path = sk_nmf
    train = tl.datasets.sotu().train.subset(np.arange(300))
    held = tl.datasets.sotu().heldout.subset(np.arange(20))
    kinds = [tl.load_topics(models["lda"], name="lda"), tl.load_topics(pipe, name="nmf"),
             tl.load_topics(models["lsi"], name="lsi")]
    res = tl.evaluate(kinds, heldout=held, reference=train, runs=2, particles=5, coherence=("npmi",))
    lda, nmf, lsi = res.rows
    for key in ("per_token", "perplexity", "diversity", "exclusivity", "predictive_rank"):
        assert np.isfinite(lda[key]), key
    assert np.isfinite(lda["coherence"]["npmi"]) and "not_applicable" not in lda
    for row in (nmf, lsi):
        assert np.isfinite(row["coherence"]["npmi"]) and np.isfinite(row["diversity"])
        assert row["per_token"] is None and row["predictive_rank"] is None
        assert row["not_applicable"]["heldout"].endswith("are not probabilities: no likelihood")
    assert np.isfinite(nmf["exclusivity"]) and "exclusivity" not in nmf["not_applicable"]
    assert lsi["exclusivity"] is None and "signed" in lsi["not_applicable"]["exclusivity"]
    table = res.table().splitlines()
    assert table[4].split()[:5] == ["lsi", str(K), "—", "—", "—"]
    summary = res.summary()
    assert "only lda has a likelihood: no held-out ranking" in summary and "rank 1" not in summary
    assert "— lsi: exclusivity: 'lsi' (gensim LsiModel): its topic-word weights are signed" in summary
    doc = json.loads(json.dumps(res.to_dict()))
    assert doc["rows"][1]["per_token"] is None
    assert "no likelihood" in doc["rows"][1]["not_applicable"]["heldout"]

    from tealeaves.report import render

    html = render([{"command": "evaluate", **doc}], "mixed")
    assert "does not apply" in html and "its topic-word weights are signed" in html

    held_path, ref_path = tmp_path / "held.txt", tmp_path / "ref.txt"
    for path, docs in ((held_path, held), (ref_path, train)):
        path.write_text("".join(" ".join(docs.vocab[i] for i in docs[d]) + "\n" for d in range(len(docs))))
    code, out, err = run_cli(["evaluate", paths["lda"], joblib_path, paths["lsi"], "--heldout", held_path,
                              "--reference", ref_path, "--allow-pickle", "--runs", "2", "--particles", "5",
                              "--measure", "npmi", "--quiet", "--json", tmp_path / "e.json"])
    assert code == 0, err
    assert "— lsi: heldout:" in out and "— nmf.joblib: heldout:" in out
    rows = json.loads((tmp_path / "e.json").read_text())["rows"]
    assert [r["per_token"] is None for r in rows] == [False, True, True]
