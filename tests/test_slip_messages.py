"""Common slips get a message naming the likely mistake (issue 33, point 8): a gensim model copied
without a companion file, an HDP given to `convert`, a tealeaves result given as a model, the
coherence command's arguments swapped, a corpus read as a topics file."""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pytest

import tealeaves as tl
from tealeaves.cli import main
from tealeaves.cli.tools import example_paths

gensim = pytest.importorskip("gensim")  # the test extra installs it


def _texts() -> list[list[str]]:
    _, docs = example_paths()
    return [line.split() for line in Path(docs).read_text(encoding="utf-8").splitlines()[:60]]


def _error(capsys, argv: list[str]) -> str:
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1, err
    return err


@pytest.fixture(scope="module")
def gensim_models(tmp_path_factory):
    from gensim.corpora import Dictionary
    from gensim.models import HdpModel, LdaModel

    d = tmp_path_factory.mktemp("gensim")
    texts = _texts()
    vocab = Dictionary(texts)
    bows = [vocab.doc2bow(t) for t in texts]
    LdaModel(bows, id2word=vocab, num_topics=3, passes=1, random_state=0).save(str(d / "lda.gensim"))
    HdpModel(bows, id2word=vocab, random_state=0, T=8).save(str(d / "hdp.gensim"))
    return d


def test_gensim_model_without_a_companion_file_names_it(gensim_models, tmp_path, capsys):
    """It said "no such file" of a file that exists."""
    (tmp_path / "lda.gensim").write_bytes((gensim_models / "lda.gensim").read_bytes())
    for sibling in ("lda.gensim.state", "lda.gensim.id2word"):
        if (gensim_models / sibling).exists():
            (tmp_path / sibling).write_bytes((gensim_models / sibling).read_bytes())
    kept = sorted(p.name for p in gensim_models.iterdir() if p.name.startswith("lda.gensim."))
    gone = [n for n in kept if n.endswith(".npy")]
    assert gone, kept  # gensim saves expElogbeta apart
    err = _error(capsys, ["coherence", str(tmp_path / "lda.gensim"), _examples_docs(), "--allow-pickle"])
    assert f"companion file {gone[0]} is missing" in err, err
    assert "no such file" not in err


def _examples_docs() -> str:
    return example_paths()[1]


def test_convert_of_an_hdp_converts_and_says_what_applies(gensim_models, tmp_path, capsys):
    """It refused and sent the user to a Python function."""
    out = tmp_path / "hdp.npz"
    assert main(["convert", str(gensim_models / "hdp.gensim"), str(out), "--allow-pickle"]) == 0
    text = capsys.readouterr().out
    assert "as plain arrays (topic-word distributions, its vocabulary), not an LDA" in text
    assert "these commands take" in text and "coherence" in text
    assert "these do not (" in text and "prior over topic proportions" in text  # HDP's, named by the reader
    assert "no likelihood" in text and "heldout" in text
    assert "not kept: its topic weights" in text
    original = tl.load_topics(str(gensim_models / "hdp.gensim"), allow_pickle=True)
    back = tl.load_topics(str(out))
    assert back.weights_kind == "distributions" and back.vocab == original.vocab
    np.testing.assert_array_equal(back.weights, original.weights)
    err = _error(capsys, ["heldout", str(out), _examples_docs()])
    assert "no prior over topic proportions" in err


def test_convert_keeps_the_kind_of_weights(tmp_path, capsys):
    """Non-negative weights (NMF-like) come back as non-negative, not as distributions."""
    w = np.random.default_rng(0).gamma(1.0, size=(3, 5)) * 7
    vocab = tuple("abcde")
    t = tl.Topics(name="nmf", source="NMF", vocab=vocab, weights=w, weights_kind="nonnegative")
    from tealeaves.io.arrays import save_arrays

    assert save_arrays(t, str(tmp_path / "nmf.npz")) == []
    back = tl.load_topics(str(tmp_path / "nmf.npz"))
    assert back.weights_kind == "nonnegative"
    np.testing.assert_array_equal(back.weights, w)


def test_top_words_only_cannot_be_written_as_arrays(tmp_path):
    from tealeaves.errors import MethodError
    from tealeaves.io.arrays import save_arrays

    t = tl.Topics(name="lists", source="OCTIS", top_words=(("a", "b"), ("c", "d")))
    with pytest.raises(MethodError, match="top words only, no topic-word weights: there is no matrix"):
        save_arrays(t, str(tmp_path / "t.npz"))
    assert not (tmp_path / "t.npz").exists()


@pytest.mark.parametrize("command", ["coherence", "heldout", "diagnostics", "convert"])
def test_a_tealeaves_result_given_as_a_model_is_named(tmp_path, capsys, command):
    """It was called "pyLDAvis data"."""
    result = tmp_path / "coherence.json"
    result.write_text(json.dumps({"command": "coherence", "model": "lda.npz", "results": []}))
    second = {"coherence": _examples_docs(), "heldout": _examples_docs(), "diagnostics": _examples_docs(),
              "convert": str(tmp_path / "out.npz")}[command]
    err = _error(capsys, [command, str(result), second])
    assert "a tealeaves result (the --json output of `tealeaves coherence`), not a model" in err, err
    assert "give the model it was computed from (lda.npz)" in err
    assert "pyLDAvis" not in err


def test_swapped_coherence_arguments_are_named(tmp_path, capsys):
    """It said "topic 0 repeats a word" (the reference read as a topics file)."""
    model, docs = example_paths()
    err = _error(capsys, ["coherence", docs, model])
    assert "the arguments look swapped" in err and "give the model first" in err
    err = _error(capsys, ["coherence", docs, "sotu:sotu-20-asym"])
    assert "the arguments look swapped" in err
    # a bundled corpus in the reference's place is no model: the topics file's own error
    err = _error(capsys, ["coherence", docs, "sotu:train"])
    assert "is it a corpus (documents) rather than topics?" in err and os.path.basename(docs) in err
