"""The second red team's findings on the model-zoo readers (BERTopic directories, OCTIS output,
tomotopy's other models, safetensors), each reproduced on the input the red team used."""

from __future__ import annotations

import json
import os
import shutil
import signal
import struct
import zipfile
from pathlib import Path

import numpy as np
import pytest

import tealeaves as tl
from tealeaves.io import zoo_detect, zoo_load
from tealeaves.io.safetensors import read_safetensors
from tealeaves.io.tomotopy import load_tomotopy
from tealeaves.util import limits

FIXTURES = Path(__file__).parent / "fixtures"
BERTOPIC = FIXTURES / "bertopic_sotu"
OCTIS, OCTIS_VOCAB = FIXTURES / "octis_lda.npz", FIXTURES / "octis_lda_vocab.txt"


@pytest.fixture
def no_hang():
    """A blocking open() (a FIFO without a writer) fails the test instead of hanging the run."""
    def stop(*_):
        raise RuntimeError("blocked: the reader opened a pipe with no writer")

    old = signal.signal(signal.SIGALRM, stop)
    signal.alarm(20)
    yield
    signal.alarm(0)
    signal.signal(signal.SIGALRM, old)


@pytest.fixture
def copy(tmp_path):
    out = tmp_path / "model"
    shutil.copytree(BERTOPIC, out)
    return out


def _edit_topics(d, edit):
    t = json.loads((d / "topics.json").read_text())
    edit(t)
    (d / "topics.json").write_text(json.dumps(t))


def _one_line(exc):
    assert "\n" not in str(exc.value)
    return str(exc.value)


# findings 4 and 40: a FIFO anywhere a zoo reader opens a file


@pytest.mark.parametrize("member", ["ctfidf.safetensors", "ctfidf_config.json", "topics.json", "config.json"])
def test_a_fifo_in_a_bertopic_directory_is_refused_not_waited_on(copy, member, no_hang):
    (copy / member).unlink()
    os.mkfifo(copy / member)
    with pytest.raises(tl.InputFileError, match="is a pipe") as err:
        zoo_load(copy, "bertopic")
    assert member in _one_line(err)


@pytest.mark.parametrize("fmt", ["octis", "tomotopy-ctm", "bertopic-pickle"])
def test_a_fifo_given_to_zoo_detect_or_a_zoo_reader_is_refused(tmp_path, fmt, no_hang):
    if fmt.startswith("tomotopy"):
        pytest.importorskip("tomotopy")
    ff = tmp_path / "ff"
    os.mkfifo(ff)
    with pytest.raises(tl.InputFileError, match="ff: is a pipe; a model file must be a regular file"):
        zoo_detect(ff)
    with pytest.raises(tl.InputFileError, match="ff: is a pipe"):
        zoo_load(ff, fmt, allow_pickle=True)
    with pytest.raises(tl.InputFileError, match="ff: is a pipe"):
        read_safetensors(ff, "a test's tensors")


# finding 5: a broken or looping symbolic link is named, not taken for an absent file


@pytest.mark.parametrize("member", ["ctfidf.safetensors", "ctfidf_config.json", "topics.json"])
@pytest.mark.parametrize("target", ["loop", "nowhere"])
def test_a_broken_or_looping_link_in_a_bertopic_directory_is_named(copy, member, target):
    (copy / member).unlink()
    os.symlink(member if target == "loop" else "nowhere", copy / member)
    with pytest.raises(tl.InputFileError, match="symbolic link that leads to no file") as err:
        zoo_load(copy, "bertopic")
    assert member in _one_line(err)


# finding 6: topic ids int() takes but BERTopic never writes


@pytest.mark.parametrize("key", ["01", " 1", "1_0", "+1"])
def test_a_topic_id_not_in_bertopics_form_is_refused(copy, key):
    def rename(t):
        t["topic_representations"][key] = t["topic_representations"].pop("1")
        t["topic_sizes"][key] = t["topic_sizes"].pop("1")
    _edit_topics(copy, rename)
    with pytest.raises(tl.InvalidModelError, match="is not a whole number in BERTopic's form") as err:
        zoo_load(copy, "bertopic")
    assert "topics.json" in _one_line(err)


# finding 7: each document's topic must be one of the model's topic ids or -1


@pytest.mark.parametrize("value", ["a", 3.5, True, 99, -7, None])
def test_a_document_assignment_that_is_not_a_topic_id_is_refused(copy, value):
    _edit_topics(copy, lambda t: t["topics"].__setitem__(4, value))
    with pytest.raises(tl.InvalidModelError, match=r"topics\[4\] \(document 4's topic\)") as err:
        zoo_load(copy, "bertopic")
    assert "topics.json" in _one_line(err)


def test_valid_document_assignments_are_kept(copy):
    expected = json.loads((copy / "topics.json").read_text())["topics"]
    assert zoo_load(copy, "bertopic").metadata["assignments"] == expected


# finding 8: a topic without a size is refused, not counted as 0


@pytest.mark.parametrize("missing", ["2", "-1"])
def test_a_topic_missing_from_topic_sizes_is_refused(copy, missing):
    _edit_topics(copy, lambda t: t["topic_sizes"].pop(missing))
    with pytest.raises(tl.InvalidModelError, match=f"topic {missing} has no size in topic_sizes"):
        zoo_load(copy, "bertopic")


def test_a_renamed_topic_keeps_no_invented_size(copy):
    def rename(t):
        t["topic_representations"]["7"] = t["topic_representations"].pop("4")
    _edit_topics(copy, rename)
    with pytest.raises(tl.InvalidModelError, match="topic 7 has no size in topic_sizes"):
        zoo_load(copy, "bertopic")


# finding 9: the c-TF-IDF matrix's declared shape gets the memory check before allocation


def test_a_ctfidf_matrix_larger_than_memory_is_refused_before_allocating(tmp_path, monkeypatch):
    n = 2000  # topics and words: a dense matrix of 8 * n * n bytes, declared by small files
    d = tmp_path / "big"
    d.mkdir()
    (d / "config.json").write_text("{}")
    (d / "topics.json").write_text(json.dumps({"topic_representations": {str(t): [[f"w{t}", 1.0]]
                                                                          for t in range(n)},
                                               "topic_sizes": {str(t): 1 for t in range(n)}}))
    (d / "ctfidf_config.json").write_text(json.dumps({"vectorizer_model": {"vocab": {f"w{i}": i
                                                                                     for i in range(n)}}}))
    _safetensors(d / "ctfidf.safetensors", {
        "indptr": ("I64", np.arange(n + 1)), "indices": ("I64", np.arange(n)), "data": ("F64", np.ones(n)),
        "shape": ("I64", np.array([n, n]))})
    monkeypatch.setattr(limits, "memory_bytes", lambda: 2 * 8 * n * n - 1)  # half: just too little
    with pytest.raises(tl.TooLargeError, match=f"a {n:,} x {n:,} matrix \\(topics x words\\) needs"):
        zoo_load(d, "bertopic")
    monkeypatch.setattr(limits, "memory_bytes", lambda: 4 * 8 * n * n)
    np.testing.assert_array_equal(zoo_load(d, "bertopic").weights, np.eye(n))


# findings 9 and 18: an OCTIS member declaring a huge array


def _forged_npz(path, shape):
    """An .npz whose topic-word member's header declares `shape` (float64) over 64 bytes."""
    header = {"descr": "<f8", "fortran_order": False, "shape": shape}
    buf = __import__("io").BytesIO()
    np.lib.format.write_array_header_1_0(buf, header)
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("topic-word-matrix.npy", buf.getvalue() + bytes(64))
        z.writestr("topics.npy", _npy(np.array([["a", "b"]])))


def _npy(arr):
    buf = __import__("io").BytesIO()
    np.save(buf, arr)
    return buf.getvalue()


def test_an_octis_member_declaring_a_huge_array_is_refused_before_allocating(tmp_path):
    path = tmp_path / "forged.npz"
    _forged_npz(path, (10**6, 10**6))
    with pytest.raises(tl.TealeavesError, match=r"declares shape \(1000000, 1000000\)") as err:
        zoo_load(path, "octis")
    _one_line(err)


def test_octis_members_larger_than_memory_are_refused(monkeypatch):
    monkeypatch.setattr(limits, "memory_bytes", lambda: 1000)
    with pytest.raises(tl.TooLargeError, match="needs about"):
        zoo_load(OCTIS, "octis")


# finding 16: the topic-document matrices are proportions over the model's topics


def _octis_with(tmp_path, **change):
    with np.load(OCTIS, allow_pickle=False) as f:
        raw = {k: f[k] for k in f.files}
    path = tmp_path / "changed.npz"
    np.savez_compressed(path, **{**raw, **change})
    return path, raw


def test_an_octis_document_column_summing_to_25_is_not_proportions(tmp_path):
    with np.load(OCTIS) as f:
        tdm = f["topic-document-matrix"].copy()
    tdm[:, 0] = 5
    path, _ = _octis_with(tmp_path, **{"topic-document-matrix": tdm})
    with pytest.raises(tl.InvalidModelError, match="column for document 0 sums to 25, not 1"):
        zoo_load(path, "octis")


def test_an_octis_negative_proportion_is_refused(tmp_path):
    with np.load(OCTIS) as f:
        tdm = f["topic-document-matrix"].copy()
    tdm[0, 0] = -3
    path, _ = _octis_with(tmp_path, **{"topic-document-matrix": tdm})
    with pytest.raises(tl.InvalidModelError, match=r"holds -3 \(topic 0, document 0\)"):
        zoo_load(path, "octis")


def test_an_octis_test_matrix_of_other_topics_is_refused(tmp_path):
    path, _ = _octis_with(tmp_path, **{"test-topic-document-matrix": np.full((3, 7), 1 / 3)})
    with pytest.raises(tl.InvalidModelError, match=r"test-topic-document-matrix has 3 rows \(topics\) for a "
                       "model of 5 topics"):
        zoo_load(path, "octis")
    good, _ = _octis_with(tmp_path, **{"test-topic-document-matrix": np.full((5, 7), 0.2)})
    assert zoo_load(good, "octis").metadata["test_doc_topic"].shape == (7, 5)


# finding 17: a vocabulary naming a word twice


def test_an_octis_vocabulary_listing_a_word_twice_names_both_lines(tmp_path):
    words = OCTIS_VOCAB.read_text().split()
    vocab = tmp_path / "vocab.txt"
    vocab.write_text("\n".join([*words[:-1], words[0]]) + "\n")
    with pytest.raises(tl.InvalidModelError, match=rf"lists '{words[0]}' twice \(lines 1 and {len(words)}\)"):
        zoo_load(OCTIS, "octis", vocab=vocab)
    with pytest.raises(tl.InvalidModelError, match=r"twice \(positions 1 and"):
        zoo_load(OCTIS, "octis", vocab=[*words[:-1], words[0]])


# findings 35 and 36: safetensors integer parts and empty tensors


def _safetensors(path, tensors):
    """The test's own safetensors writer: name -> (dtype code, array)."""
    entries, blobs, at = {}, [], 0
    for name, (code, arr) in tensors.items():
        raw = np.ascontiguousarray(arr).tobytes()
        entries[name] = {"dtype": code, "shape": list(np.shape(arr)), "data_offsets": [at, at + len(raw)]}
        blobs.append(raw)
        at += len(raw)
    text = json.dumps(entries).encode()
    path.write_bytes(struct.pack("<Q", len(text)) + text + b"".join(blobs))


def test_an_unsigned_indptr_that_decreases_is_damage_not_a_traceback(copy):
    parts = read_safetensors(copy / "ctfidf.safetensors", "test")
    indptr = parts["indptr"].astype("<u8")
    indptr[2] = indptr[1] - 1  # np.diff of unsigned values wraps: the decrease must still be seen
    _safetensors(copy / "ctfidf.safetensors", {
        "indptr": ("U64", indptr), "indices": ("I32", parts["indices"].astype("<i4")),
        "data": ("F64", parts["data"].astype("<f8")), "shape": ("I64", parts["shape"].astype("<i8"))})
    with pytest.raises(tl.InvalidModelError, match="CSR parts do not agree"):
        zoo_load(copy, "bertopic")


def test_a_zero_length_tensor_overlaps_nothing(tmp_path):
    path = tmp_path / "t.safetensors"
    entries = {"a": {"dtype": "F64", "shape": [2], "data_offsets": [0, 16]},
               "empty": {"dtype": "F64", "shape": [0, 40], "data_offsets": [0, 0]},
               "b": {"dtype": "F64", "shape": [0], "data_offsets": [16, 16]}}
    text = json.dumps(entries).encode()
    path.write_bytes(struct.pack("<Q", len(text)) + text + np.array([1.0, 2.0]).tobytes())
    out = read_safetensors(path, "test")
    assert out["empty"].shape == (0, 40) and out["b"].shape == (0,) and out["a"].tolist() == [1.0, 2.0]


def test_a_word_twice_in_one_ctfidf_row_is_damage(copy):
    parts = read_safetensors(copy / "ctfidf.safetensors", "test")
    indices = parts["indices"].copy()
    start = int(parts["indptr"][1])
    indices[start + 1] = indices[start]
    _safetensors(copy / "ctfidf.safetensors", {
        k: ({"i4": "I32", "i8": "I64", "f8": "F64"}[v.dtype.str[1:]], indices if k == "indices" else v)
        for k, v in parts.items()})
    with pytest.raises(tl.InvalidModelError, match="gives a word twice in one topic's row"):
        zoo_load(copy, "bertopic")


# finding 10: values in topics.json


@pytest.mark.parametrize("rep, message", [
    ([["x", "y"]], "a word and a finite number"),
    ([["peace", 0.1]] * 10, "lists 'peace' twice"),
])
def test_a_representation_with_bad_scores_or_one_word_repeated_is_refused(copy, rep, message):
    _edit_topics(copy, lambda t: t["topic_representations"].__setitem__("2", rep))
    with pytest.raises(tl.InvalidModelError, match=message):
        zoo_load(copy, "bertopic")


def test_custom_labels_fewer_than_the_topics_are_refused(copy):
    _edit_topics(copy, lambda t: t.__setitem__("custom_labels", ["outliers", "a", "b"]))
    with pytest.raises(tl.InvalidModelError, match="custom_labels has 3 labels for the 6 topics"):
        zoo_load(copy, "bertopic")


# finding 38: a tomotopy model saved before training


def test_a_tomotopy_model_never_trained_is_refused(tmp_path):
    tp = pytest.importorskip("tomotopy")
    m = tp.CTModel(k=3, seed=1)
    for i in range(20):
        m.add_doc([f"w{(i + j) % 7}" for j in range(6)])
    m.save(str(tmp_path / "untrained.bin"))
    with pytest.raises(tl.InvalidModelError, match=r"CTModel never trained \(global_step 0"):
        zoo_load(tmp_path / "untrained.bin", "tomotopy-ctm")


# finding 3: an HPAModel file cannot be told from a PAModel file


def test_an_hpa_file_is_named_pa_or_hpa(tmp_path):
    tp = pytest.importorskip("tomotopy")
    m = tp.HPAModel(k1=2, k2=4, seed=1)
    for i in range(20):
        m.add_doc([f"w{(i + j) % 7}" for j in range(6)])
    m.train(5)
    path = tmp_path / "hpa.bin"
    m.save(str(path))
    assert zoo_detect(path) == "tomotopy-pa"
    with pytest.raises(tl.InputFileError, match="this is a tomotopy PAModel or HPAModel file") as err:
        tl.load_model(path, format="tomotopy")  # was a KeyError traceback for every zoo file
    assert "--model-format tomotopy-pa" in _one_line(err)
    with pytest.raises(tl.InvalidModelError, match="a tomotopy PAModel or HPAModel file, not LDA"):
        load_tomotopy(path)
    with pytest.raises(tl.InputFileError, match="read as a tomotopy PAModel file or an HPAModel file"):
        zoo_load(path, "tomotopy-pa")


@pytest.mark.parametrize("shape", [[0, 10**20], [0] * 65])
def test_an_empty_tensor_declaring_an_impossible_shape_is_one_line(tmp_path, shape):
    path = tmp_path / "t.safetensors"
    text = json.dumps({"e": {"dtype": "F64", "shape": shape, "data_offsets": [0, 0]}}).encode()
    path.write_bytes(struct.pack("<Q", len(text)) + text)
    with pytest.raises(tl.InputFileError, match="more than 64 dimensions or one past"):
        read_safetensors(path, "test")


@pytest.mark.parametrize("word", ["a\x1bb", "a\nb", "a\tb"])
def test_a_representation_word_holding_a_control_character_is_refused(copy, word):
    _edit_topics(copy, lambda t: t["topic_representations"]["2"].__setitem__(0, [word, 0.5]))
    with pytest.raises(tl.InvalidModelError, match="topic 2's word .* holds a control character") as err:
        zoo_load(copy, "bertopic")
    _one_line(err)


def test_an_octis_topic_listing_a_word_twice_is_refused(tmp_path):
    with np.load(OCTIS) as f:
        topics = f["topics"].copy()
    topics[1, 3] = topics[1, 0]
    path, _ = _octis_with(tmp_path, topics=topics)
    with pytest.raises(tl.InvalidModelError, match=f"topic 1 lists '{topics[1, 0]}' twice"):
        zoo_load(path, "octis")
