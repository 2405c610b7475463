"""tomotopy's other models (HDP, CTM, DMR, PA, LLDA, PLDA) read as `Topics`: each trained here with
the real library on a slice of the bundled corpus, saved with its own `save`, read back through
`tealeaves.io` and compared with what the live tomotopy object reports."""

from __future__ import annotations

import pickle
import struct
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import tealeaves as tl
from tealeaves.io import load_model, zoo_detect, zoo_load
from tealeaves.topics import why_not

tp = pytest.importorskip("tomotopy")

DOCS = 200


class Payload:
    """Unpickling this writes `marker`: stands for any code a crafted model file could run."""

    def __init__(self, marker):
        self.marker = str(marker)

    def __reduce__(self):
        return (exec, (f"open({self.marker!r}, 'w').write('ran')",))


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """name -> (path, the live tomotopy model) for each model of the zoo."""
    from tealeaves.datasets import sotu

    s = sotu()
    c = s.train
    docs = [[c.vocab[w] for w in c.words[c.offsets[d]:c.offsets[d + 1]]] for d in range(DOCS)]
    party = [str(p) for p in s.party["train"][:DOCS]]
    models = {
        "hdp": tp.HDPModel(initial_k=3, seed=1),
        "ctm": tp.CTModel(k=3, seed=1),
        "dmr": tp.DMRModel(k=3, seed=1),
        "pa": tp.PAModel(k1=2, k2=4, seed=1),
        "llda": tp.LLDAModel(k=4, seed=1),
        "plda": tp.PLDAModel(latent_topics=1, topics_per_label=2, seed=1),
        "lda": tp.LDAModel(k=3, seed=1),
    }
    out = {}
    d = tmp_path_factory.mktemp("zoo")
    for name, mdl in models.items():
        for words, p in zip(docs, party, strict=True):
            if not words:
                continue
            if name == "dmr":
                mdl.add_doc(words, metadata=p)
            elif name in ("llda", "plda"):
                mdl.add_doc(words, labels=[p])
            else:
                mdl.add_doc(words)
        mdl.train(20, workers=1)
        path = d / f"{name}.bin"
        mdl.save(str(path))
        out[name] = (path, mdl)
    return out


def _close(a, b):
    np.testing.assert_allclose(np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64), rtol=1e-5,
                               atol=1e-7)


@pytest.mark.parametrize("name,fmt", [("hdp", "tomotopy-hdp"), ("ctm", "tomotopy-ctm"),
                                      ("dmr", "tomotopy-dmr"), ("pa", "tomotopy-pa"),
                                      ("llda", "tomotopy-llda"), ("plda", "tomotopy-plda"), ("lda", None)])
def test_each_model_is_detected_from_its_file(trained, name, fmt):
    """"LDA" opens LDA, HDP and PA files alike: the stored constructor arguments tell them apart;
    plain LDA is left to the `tomotopy` reader."""
    path, _ = trained[name]
    assert zoo_detect(path) == fmt


def test_hdp_gives_its_live_topics_and_their_word_counts(trained):
    path, mdl = trained["hdp"]
    t = zoo_load(path, "tomotopy-hdp")
    live = [k for k in range(mdl.k) if mdl.is_live_topic(k)]
    assert t.num_topics == mdl.live_k == len(live)
    _close(t.weights, [mdl.get_topic_word_dist(k) for k in live])
    _close(t.topic_weights, np.asarray(mdl.get_count_by_topics())[live])
    assert t.weights_kind == "distributions" and t.prior is None
    assert t.metadata["gamma"] == pytest.approx(mdl.gamma)
    assert t.metadata["hdp_alpha"] == pytest.approx(mdl.alpha)
    assert t.vocab == tuple(mdl.used_vocabs)
    _close(t.doc_topic.sum(axis=1), np.ones(len(mdl.docs)))
    assert "hierarchical Dirichlet-process prior" in why_not("heldout", t)
    assert why_not("coherence", t) is None and why_not("exclusivity", t) is None


def test_ctm_gives_its_logistic_normal_prior(trained):
    path, mdl = trained["ctm"]
    t = tl.io.zoo_load(path, "tomotopy-ctm")
    assert (t.prior, t.decoder, t.weights_kind) == ("logistic-normal", "mixture", "distributions")
    _close(t.mean, mdl.prior_mean)
    _close(t.cov, mdl.prior_cov)
    assert t.cov.shape == (mdl.k, mdl.k)
    _close(t.weights, [mdl.get_topic_word_dist(k) for k in range(mdl.k)])
    _close(t.doc_topic, [d.get_topic_dist() for d in mdl.docs])
    assert why_not("heldout", t) is None and t.lda is None
    assert "logistic-normal" in why_not("compare", t)


def test_dmr_has_a_prior_only_for_a_named_metadata_value(trained):
    path, mdl = trained["dmr"]
    t = zoo_load(path, "tomotopy-dmr")
    assert t.prior is None and "depends on each document's metadata" in why_not("heldout", t)
    values = list(mdl.metadata_dict)
    assert t.metadata["metadata_values"] == values
    for v in values:
        scored = zoo_load(path, "tomotopy-dmr", metadata=v)
        _close(scored.alpha, mdl.get_topic_prior(v))
        assert scored.lda is not None and why_not("compare", scored) is None
        _close(scored.lda.phi, [mdl.get_topic_word_dist(k) for k in range(mdl.k)])
    with pytest.raises(tl.MethodError, match="metadata 'no such party' is not one of"):
        zoo_load(path, "tomotopy-dmr", metadata="no such party")


def test_pa_gives_its_sub_topics(trained):
    path, mdl = trained["pa"]
    t = zoo_load(path, "tomotopy-pa")
    assert t.num_topics == mdl.k2 and t.prior is None
    _close(t.weights, [mdl.get_topic_word_dist(k) for k in range(mdl.k2)])
    for s in range(mdl.k1):
        expected = np.zeros(mdl.k2)
        for k, p in mdl.get_sub_topics(s, top_n=mdl.k2):
            expected[k] = p
        _close(t.metadata["super_sub"][s], expected)
    _close(t.metadata["super_alpha"], mdl.alpha)
    _close(t.doc_topic, [d.get_sub_topic_dist() for d in mdl.docs])


@pytest.mark.parametrize("name", ["llda", "plda"])
def test_labelled_topics_are_named_by_their_labels(trained, name):
    """A document's proportions are exactly zero on other labels' topics (tomotopy masks them):
    so each topic's name must be the label whose documents alone use it (or latent)."""
    path, mdl = trained[name]
    t = zoo_load(path, f"tomotopy-{name}")
    names = t.metadata["topic_names"]
    assert len(names) == mdl.k and t.lda is not None and t.prior == "dirichlet"
    _close(t.alpha, mdl.alpha)
    for d, row in zip(mdl.docs, t.doc_topic, strict=True):
        (label,) = [lab for lab, _ in d.labels]
        for k, n in enumerate(names):
            if not (n == label or n.startswith(f"{label}/") or n.startswith("latent/")):
                assert row[k] == 0.0, (label, n)
    latent = 1 if name == "plda" else mdl.k - len(mdl.topic_label_dict)
    assert sum(n.startswith("latent/") for n in names) == latent


def test_the_pickle_inside_a_tomotopy_file_is_never_run(trained, tmp_path):
    """tomotopy keeps its constructor arguments in the file as a pickle and its own `load` unpickles
    it: a crafted file runs code there. tealeaves reads the model with `_load` instead."""
    marker = tmp_path / "PWNED"
    for name, fmt in [("lda", None), ("ctm", "tomotopy-ctm")]:
        bad = tmp_path / f"{name}.bin"
        bad.write_bytes(_with_extra(trained[name][0].read_bytes(), pickle.dumps(Payload(marker), protocol=4)))
        if fmt is None:
            assert load_model(bad).num_topics == 3
        else:
            assert zoo_detect(bad) == fmt and zoo_load(bad, fmt).num_topics == 3
        assert not marker.exists()
    # the crafted file does run code under tomotopy's own loader (so the test above can fail)
    lda_file = tmp_path / "lda.bin"
    subprocess.run([sys.executable, "-c", f"import tomotopy as tp; tp.LDAModel.load({str(lda_file)!r})"],
                   capture_output=True, timeout=120)
    assert marker.read_text() == "ran"


def _with_extra(data: bytes, payload: bytes) -> bytes:
    """tomotopy's file with the pickle in its "extra" tagged block replaced by `payload` (the
    test's own reading of the format: "TPTK", two u16, u64 length, u32 key length, u32, key)."""
    pos = data.find(b"TPTK")
    while data[pos:pos + 4] == b"TPTK":
        (length,) = struct.unpack_from("<Q", data, pos + 8)
        (keylen,) = struct.unpack_from("<I", data, pos + 16)
        if data[pos + 24:pos + 24 + keylen] == b"extra\x00":
            body = data[pos + 16:pos + 24 + keylen] + struct.pack("<I", len(payload)) + payload
            block = data[pos:pos + 8] + struct.pack("<Q", len(body) + 8) + body
            return data[:pos] + block + data[pos + 8 + length:]
        pos += 8 + length
    raise AssertionError("no extra block")


def test_an_hdp_file_given_to_the_lda_reader_is_named(trained):
    path, _ = trained["hdp"]
    with pytest.raises(tl.MethodError, match="HDPModel .*not an LDA model .read as format tomotopy-hdp"):
        tl.load_model(path)


def test_unsupported_tomotopy_models_are_named(tmp_path):
    mdl = tp.SLDAModel(k=2, vars=["l"], seed=1)
    for words in (["a", "b", "c"], ["b", "c", "d"], ["a", "d", "e"]):
        mdl.add_doc(words, y=[1.0])
    mdl.train(2, workers=1)
    path = tmp_path / "slda.bin"
    mdl.save(str(path))
    with pytest.raises(tl.InputFileError, match="a tomotopy SLDAModel file; tealeaves reads tomotopy's"):
        zoo_detect(path)


def test_a_wrong_or_damaged_file_is_one_line_naming_tomotopys_class(trained, tmp_path):
    ctm, _ = trained["ctm"]
    with pytest.raises(tl.InputFileError, match=r"tomotopy \(HDPModel\) cannot load it.*read as a tomotopy "
                                                 r"HDPModel file; --model-format tomotopy-hdp"):
        zoo_load(ctm, "tomotopy-hdp")
    fake = tmp_path / "fake.bin"
    fake.write_bytes(b"CTM\x00\x00one\x00\x00TPTK" + b"\x00" * 64)
    assert zoo_detect(fake) == "tomotopy-ctm"
    with pytest.raises(tl.InputFileError, match=r"tomotopy \(CTModel\) cannot load it") as err:
        zoo_load(fake, "tomotopy-ctm")
    assert "\n" not in str(err.value)
    other = tmp_path / "topics.txt"
    other.write_text("a b c\n")
    with pytest.raises(tl.InputFileError, match=r"read as a tomotopy PLDAModel file"):
        zoo_load(other, "tomotopy-plda")
    with pytest.raises(tl.MethodError, match=r"metadata= \(--dmr-metadata\) is for tomotopy's DMR"):
        zoo_load(ctm, "tomotopy-ctm", metadata="x")


@pytest.mark.parametrize("name", ["hdp", "ctm", "dmr", "pa", "llda", "plda", "lda"])
def test_every_zoo_file_loads_through_load_topics(trained, name):
    """The general entry point detects the zoo's formats (plain LDA stays tomotopy's LDA reader)."""
    path, mdl = trained[name]
    t = tl.load_topics(path)
    assert t.num_topics == (mdl.live_k if name == "hdp" else mdl.k2 if name == "pa" else mdl.k)
    assert (t.lda is not None) == (name in ("lda", "llda", "plda"))
    if name == "ctm":
        assert t.prior == "logistic-normal"


def test_bertopic_and_octis_load_through_load_topics_and_the_cli():
    from clirun import run_cli

    fixtures = Path(__file__).parent / "fixtures"
    bt = tl.load_topics(fixtures / "bertopic_sotu")
    assert bt.source.startswith("BERTopic") and bt.weights_kind == "nonnegative"
    octis = tl.load_topics(fixtures / "octis_lda.npz", vocab=fixtures / "octis_lda_vocab.txt")
    assert octis.doc_topic is not None
    code, out, _ = run_cli(["diversity", fixtures / "bertopic_sotu"])
    assert code == 0 and "topic diversity" in out


def test_a_pipe_given_as_a_model_is_refused_not_read(tmp_path):
    import os

    from clirun import one_line_error

    fifo = tmp_path / "model"
    os.mkfifo(fifo)
    commands = (["diversity", fifo], ["coherence", fifo, "sotu:train"], ["heldout", fifo, "sotu:heldout"])
    for command in commands:
        one_line_error(command, "is a pipe")


def test_heldout_on_a_ctm_file_runs_ais_over_eta(trained, tmp_path):
    """`tealeaves heldout CTM_FILE DOCS`: a logistic-normal prior is scored by its one estimator
    (ais over eta), the default method for it; the collapsed estimators are refused in one line."""
    import json

    from clirun import one_line_error, run_cli

    path, mdl = trained["ctm"]
    docs = tmp_path / "docs.txt"
    words = list(mdl.used_vocabs)
    docs.write_text(" ".join(words[:6]) + "\n" + " ".join(words[3:8]) + "\n", encoding="utf-8")
    code, out, _ = run_cli(["heldout", path, docs, "--temperatures", "20", "--runs", "2", "--json",
                            tmp_path / "r.json", "--quiet"])
    assert code == 0, out
    res = json.loads((tmp_path / "r.json").read_text())["results"][0]
    assert res["method"] == "ais" and res["params"]["prior"] == "logistic-normal"
    one_line_error(["heldout", path, docs, "--method", "left-to-right", "--particles", "5"],
                   "left-to-right integrates over a Dirichlet prior", "give --method ais, or no --method")
    one_line_error(["heldout", path, docs, "--particles", "5"], "--particles does not apply to ais")


def test_topic_names_are_the_labels_the_hdp_ids_and_bertopics_names(trained, tmp_path):
    """`Topics.topic_names`: LLDA's labels in tomotopy's order, HDP's live topic ids, BERTopic's saved
    topic labels (outliers left out); the coherence table lists topics by index and name."""
    import json

    from clirun import run_cli

    from tealeaves.topics import topic_labels

    path, mdl = trained["llda"]
    t = tl.load_topics(path)
    labels = list(mdl.topic_label_dict)
    assert t.topic_names[:len(labels)] == tuple(labels)
    assert topic_labels(t.lda)[:len(labels)] == [f"{k} ({lab})" for k, lab in enumerate(labels)]
    path, mdl = trained["hdp"]
    assert tl.load_topics(path).topic_names == tuple(f"id {k}" for k in range(mdl.k) if mdl.is_live_topic(k))
    fixture = Path(__file__).parent / "fixtures" / "bertopic_sotu"
    saved = json.loads((fixture / "topics.json").read_text())["topic_labels"]
    bt = tl.load_topics(fixture)
    assert bt.topic_names == tuple(v for k, v in saved.items() if k != "-1")
    ref = tmp_path / "ref.txt"
    ref.write_text("shall citizens country public year militia\npeace force states having united\n")
    code, out, err = run_cli(["coherence", fixture, ref, "--measure", "umass"])
    assert code == 0, err
    assert f"0 ({saved['0']})" in out and f"4 ({saved['4']})" in out


def test_dmr_metadata_through_load_topics_and_the_cli(trained, tmp_path):
    """metadata= (CLI --dmr-metadata) reaches the DMR reader; anywhere else it is a one-line error."""
    from clirun import one_line_error, run_cli

    path, mdl = trained["dmr"]
    value = list(mdl.metadata_dict)[0]
    scored = tl.load_topics(path, metadata=value)
    _close(scored.alpha, mdl.get_topic_prior(value))
    with pytest.raises(tl.MethodError, match="is for tomotopy's DMRModel; this is format tomotopy"):
        tl.load_topics(trained["lda"][0], metadata=value)
    with pytest.raises(tl.MethodError, match="metadata must be a string"):
        tl.load_topics(path, metadata=3)
    held = tmp_path / "held.txt"
    held.write_text(" ".join(list(mdl.used_vocabs)[:8]) + "\n")
    code, out, err = run_cli(["heldout", path, held, "--dmr-metadata", value, "--particles", "5"])
    assert code == 0, err
    one_line_error(["heldout", path, held], "depends on each document's metadata", "--dmr-metadata")
