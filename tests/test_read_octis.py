"""OCTIS model output (the .npz of `save_model_output`) read as `Topics`. The fixtures were written
by OCTIS 1.14.0's own `save_model_output` from its LDA and NMF models
(scripts/make_octis_fixture.py), with the vocabulary each model's columns follow."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import tealeaves as tl
from tealeaves.io import zoo_detect, zoo_load
from tealeaves.topics import why_not

FIXTURES = Path(__file__).parent / "fixtures"


def _fixture(name):
    return FIXTURES / f"octis_{name}.npz", FIXTURES / f"octis_{name}_vocab.txt"


def _raw(path):
    with np.load(path, allow_pickle=False) as f:
        return {k: f[k] for k in f.files}


@pytest.mark.parametrize("name", ["lda", "nmf"])
def test_octis_output_is_detected_and_read(name):
    path, vocab = _fixture(name)
    assert zoo_detect(path) == "octis"
    raw = _raw(path)
    t = zoo_load(path, "octis", vocab=vocab)
    assert [list(w) for w in t.top_words] == raw["topics"].tolist()
    # the topic-document matrix is topics x documents: doc_topic is its transpose
    np.testing.assert_array_equal(t.doc_topic, raw["topic-document-matrix"].T)
    assert t.doc_topic.shape == (300, 5)
    assert t.prior is None and "no prior" in why_not("heldout", t)
    assert why_not("bcubed", t) is None and why_not("exclusivity", t) is None
    # with the model's vocabulary, the matrix's own top words are OCTIS's topics
    assert t.ranked_words(10) == raw["topics"].tolist()


def test_rows_that_sum_to_one_up_to_rounding_are_distributions_and_the_change_is_reported():
    """OCTIS rounds to 7 decimals (LDA's matrix is float32 too): the rows sum to 1 only within
    that; they are rescaled, and by how much is in metadata."""
    path, _ = _fixture("lda")
    raw = _raw(path)["topic-word-matrix"].astype(np.float64)
    off = np.abs(raw.sum(axis=1) - 1).max()
    assert 1e-7 < off < 1e-4
    t = zoo_load(path, "octis")
    assert t.weights_kind == "distributions" and t.metadata["rescaled_by"] == pytest.approx(off)
    np.testing.assert_allclose(t.weights.sum(axis=1), 1.0, atol=1e-12)
    np.testing.assert_allclose(t.weights, raw, atol=1e-4)


def test_rows_that_are_not_distributions_are_never_normalised(tmp_path):
    path, _ = _fixture("nmf")
    raw = _raw(path)
    scaled = tmp_path / "scaled.npz"
    np.savez_compressed(scaled, **{**raw, "topic-word-matrix": raw["topic-word-matrix"] * 3.0})
    t = zoo_load(scaled, "octis")
    assert t.weights_kind == "nonnegative" and "sum to 3" in t.weights_note
    np.testing.assert_array_equal(t.weights, raw["topic-word-matrix"] * 3.0)
    assert "not probabilities" in why_not("heldout", t)
    signed = tmp_path / "signed.npz"
    np.savez_compressed(signed, **{**raw, "topic-word-matrix": raw["topic-word-matrix"] - 0.001})
    t = zoo_load(signed, "octis")
    assert t.weights_kind == "signed" and "signed" in why_not("exclusivity", t)


def test_without_a_vocabulary_the_matrix_has_no_words():
    path, _ = _fixture("lda")
    t = zoo_load(path, "octis")
    assert t.vocab is None and t.weights is not None and len(t.top_words) == 5


def test_a_vocabulary_in_another_order_is_refused(tmp_path):
    """OCTIS saves no vocabulary; the dataset's sorted word list is not its LDA's column order."""
    path, vocab = _fixture("lda")
    words = vocab.read_text().split()
    wrong = tmp_path / "sorted.txt"
    wrong.write_text("\n".join(sorted(words)) + "\n")
    with pytest.raises(tl.InvalidModelError, match="top word .* is not among its 10 largest weights under "
                                                   "the vocabulary given"):
        zoo_load(path, "octis", vocab=wrong)
    with pytest.raises(tl.InvalidModelError, match="the vocabulary has 3 words, the topic-word-matrix 1885"):
        zoo_load(path, "octis", vocab=["a", "b", "c"])


def test_topics_stored_as_python_objects_are_not_unpickled(tmp_path):
    """Topics of unequal lengths make numpy store an object array: a pickle inside the .npz."""
    marker = tmp_path / "PWNED"

    class Payload:
        def __reduce__(self):
            return (exec, (f"open({str(marker)!r}, 'w').write('ran')",))

    path, _ = _fixture("nmf")
    raw = _raw(path)
    topics = np.empty(2, dtype=object)
    topics[:] = [["a", "b"], Payload()]
    bad = tmp_path / "objects.npz"
    with open(bad, "wb") as fh:
        np.savez(fh, **{**raw, "topics": topics})
    assert zoo_detect(bad) == "octis"
    with pytest.raises(tl.InputFileError, match="holds Python objects .* not loaded"):
        zoo_load(bad, "octis")
    assert not marker.exists()
    with np.load(bad, allow_pickle=True) as f:  # the file does run code when unpickled
        f["topics"]
    assert marker.exists()


def test_another_librarys_file_names_octis_format(tmp_path):
    ours = tmp_path / "model.npz"
    tl.save_model(tl.load_model("sotu:sotu-20-asym"), ours)
    assert zoo_detect(ours) is None  # tealeaves' own .npz is not OCTIS's
    with pytest.raises(tl.InputFileError, match="are not OCTIS's; expected OCTIS model output"):
        zoo_load(ours, "octis")
    text = tmp_path / "topics.txt"
    text.write_text("a b c\n")
    with pytest.raises(tl.InputFileError, match="not a readable .npz .*expected OCTIS model output"):
        zoo_load(text, "octis")
    cut = tmp_path / "cut.npz"
    data = _fixture("lda")[0].read_bytes()
    cut.write_bytes(data[: len(data) // 2])
    with pytest.raises(tl.InputFileError, match="expected OCTIS model output") as err:
        zoo_load(cut, "octis")
    assert "\n" not in str(err.value)


def test_a_matrix_of_the_wrong_shape_or_values_is_refused(tmp_path):
    path, _ = _fixture("nmf")
    raw = _raw(path)
    for key, value, message in [
        ("topic-word-matrix", np.full((5, 4), np.nan), "topic-word-matrix has a value that is not finite"),
        ("topic-document-matrix", np.zeros(7), "topic-document-matrix must be a numeric matrix"),
        ("topics", np.array([1, 2]), "topics must be T lists of words"),
    ]:
        bad = tmp_path / f"{key}.npz"
        np.savez_compressed(bad, **{**raw, key: value})
        with pytest.raises(tl.InvalidModelError, match=message):
            zoo_load(bad, "octis")
    bad = tmp_path / "mismatch.npz"
    np.savez_compressed(bad, **{**raw, "topic-document-matrix": np.ones((3, 10)) / 3})
    with pytest.raises(tl.InvalidModelError,
                       match=r"topic-document-matrix has 3 rows \(topics\) for a model of 5 topics"):
        zoo_load(bad, "octis")
