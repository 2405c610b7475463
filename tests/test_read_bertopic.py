"""BERTopic's saved directory and its pickle read without BERTopic or torch (the pickle as data:
nothing in it runs). The fixtures were written by BERTopic 0.17.4's own `save`, and what BERTopic
read back from each pickle recorded beside them (scripts/make_bertopic_fixture.py)."""

from __future__ import annotations

import json
import pickle
import shutil
import struct
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import tealeaves as tl
from tealeaves.io import zoo_detect, zoo_load
from tealeaves.io.safetensors import read_safetensors
from tealeaves.topics import why_not

FIXTURES = Path(__file__).parent / "fixtures"
DIR = FIXTURES / "bertopic_sotu"
PICKLE = FIXTURES / "bertopic_sotu.pickle"
UMAP = FIXTURES / "bertopic_umap.pickle"  # BERTopic's default pipeline: UMAP, HDBSCAN, custom labels
EXPECTED = FIXTURES / "bertopic_pickles.expected.json"  # what BERTopic read back from each pickle


def _topics_json():
    return json.loads((DIR / "topics.json").read_text())


@pytest.fixture
def copy(tmp_path):
    out = tmp_path / "model"
    shutil.copytree(DIR, out)
    return out


def test_the_directory_and_the_pickle_are_detected():
    assert zoo_detect(DIR) == "bertopic"
    assert zoo_detect(PICKLE) == "bertopic-pickle"
    assert zoo_detect(FIXTURES) is None  # a directory without BERTopic's files


def test_top_words_scores_and_sizes_are_bertopics():
    """Top words are topics.json's representations; each representation's score is the c-TF-IDF
    value of that word in that topic's row of ctfidf.safetensors (two files BERTopic wrote)."""
    t = zoo_load(DIR, "bertopic")
    tj = _topics_json()
    ids = sorted(int(k) for k in tj["topic_representations"] if k != "-1")
    assert t.num_topics == len(ids) == 5
    assert t.weights_kind == "nonnegative" and t.weights_note == "c-TF-IDF scores"
    for row, topic in enumerate(ids):
        rep = tj["topic_representations"][str(topic)]
        assert list(t.top_words[row]) == [w for w, _ in rep]
        for word, score in rep:
            assert t.weights[row, t.vocab.index(word)] == pytest.approx(score, rel=1e-12)
    np.testing.assert_array_equal(t.topic_weights, [tj["topic_sizes"][str(k)] for k in ids])
    assert t.metadata["topic_names"] == [tj["topic_labels"][str(k)] for k in ids]


def test_the_outlier_topic_is_kept_apart():
    t = zoo_load(DIR, "bertopic")
    tj = _topics_json()
    assert tj["_outliers"] == 1 and "-1" in tj["topic_representations"]
    assert -1 not in t.metadata["topic_ids"]
    assert t.metadata["outliers"]["documents"] == tj["topics"].count(-1) == tj["topic_sizes"]["-1"]
    assert t.metadata["outliers"]["words"] == [w for w, _ in tj["topic_representations"]["-1"]]
    assert t.metadata["assignments"] == tj["topics"]


def test_metrics_that_need_probabilities_say_why_not():
    t = zoo_load(DIR, "bertopic")
    assert why_not("heldout", t) == "'bertopic_sotu' (BERTopic directory): its c-TF-IDF scores are not " \
                                    "probabilities: no likelihood"
    assert why_not("coherence", t) is None and why_not("exclusivity", t) is None
    assert "no document-topic proportions" in why_not("bcubed", t)


def test_without_the_ctfidf_files_top_words_only(copy):
    (copy / "ctfidf.safetensors").unlink()
    (copy / "ctfidf_config.json").unlink()
    t = zoo_load(copy, "bertopic")
    assert t.weights is None and len(t.top_words) == 5
    assert "top words only" in why_not("exclusivity", t)


def test_padding_words_are_dropped(copy):
    """BERTopic pads a representation shorter than top_n_words with ("", 1e-05)."""
    tj = _topics_json()
    tj["topic_representations"]["0"] = tj["topic_representations"]["0"][:3] + [["", 1e-05]] * 7
    (copy / "topics.json").write_text(json.dumps(tj))
    t = zoo_load(copy, "bertopic")
    assert len(t.top_words[0]) == 3 and "" not in t.top_words[0]


def _safetensors(path, tensors, header=None):
    """The test's own safetensors writer: 8-byte length, JSON header, bytes."""
    entries, blobs, at = {}, [], 0
    for name, arr in tensors.items():
        arr = np.ascontiguousarray(arr)
        code = {"f8": "F64", "f4": "F32", "i8": "I64", "i4": "I32"}[f"{arr.dtype.kind}{arr.dtype.itemsize}"]
        entries[name] = {"dtype": code, "shape": list(arr.shape), "data_offsets": [at, at + arr.nbytes]}
        blobs.append(arr.tobytes())
        at += arr.nbytes
    text = json.dumps(header if header is not None else entries).encode()
    path.write_bytes(struct.pack("<Q", len(text)) + text + b"".join(blobs))


def test_the_safetensors_reader_reads_what_the_format_says(tmp_path):
    p = tmp_path / "x.safetensors"
    a, b = np.arange(6, dtype=np.float32).reshape(2, 3), np.array([7, -1], dtype=np.int64)
    _safetensors(p, {"a": a, "b": b})
    out = read_safetensors(p, "a test file")
    np.testing.assert_array_equal(out["a"], a)
    np.testing.assert_array_equal(out["b"], b)


@pytest.mark.parametrize("damage,message", [
    (lambda d: d[:5], "shorter than the 8-byte header length"),
    (lambda d: struct.pack("<Q", 10**12) + d[8:], "header length 1,000,000,000,000 does not fit"),
    (lambda d: d[:-100], "ends past the end|outside the file's"),
    (lambda d: d[:8] + b"\xff" * (len(d) - 8), "header is not UTF-8 JSON"),
])
def test_a_damaged_ctfidf_file_is_one_line(copy, damage, message):
    f = copy / "ctfidf.safetensors"
    f.write_bytes(damage(f.read_bytes()))
    with pytest.raises(tl.InputFileError, match=message) as err:
        zoo_load(copy, "bertopic")
    assert "ctfidf.safetensors (BERTopic's c-TF-IDF matrix, safetensors)" in str(err.value)
    assert "\n" not in str(err.value)


@pytest.mark.parametrize("header,message", [
    ({"a": {"dtype": "Q9", "shape": [2], "data_offsets": [0, 16]}}, "dtype 'Q9'"),
    ({"a": {"dtype": "F64", "shape": [-2], "data_offsets": [0, 16]}}, "not whole numbers"),
    ({"a": {"dtype": "F64", "shape": [3], "data_offsets": [0, 16]}}, "needs 24 bytes, its offsets span 16"),
    ({"a": {"dtype": "F64", "shape": [2], "data_offsets": [0, 16]},
      "b": {"dtype": "F64", "shape": [1], "data_offsets": [8, 16]}}, "overlap"),
    ({"a": {"dtype": "F64", "shape": [2], "data_offsets": [0, 99]}}, "outside the file's 16 bytes"),
    ({"a": [1, 2]}, "is not described by dtype, shape and data_offsets"),
    ([1, 2], "the header is not a JSON object"),
])
def test_a_lying_safetensors_header_is_refused(tmp_path, header, message):
    p = tmp_path / "x.safetensors"
    _safetensors(p, {"a": np.zeros(2)}, header=header)
    with pytest.raises(tl.InputFileError, match=message):
        read_safetensors(p, "a test file")


def test_ctfidf_parts_that_disagree_are_refused(copy):
    f = copy / "ctfidf.safetensors"
    parts = read_safetensors(f, "test")
    _safetensors(f, {**parts, "shape": np.array([6, 999], dtype=np.int64)})
    with pytest.raises(tl.InvalidModelError, match=r"c-TF-IDF matrix is \[6, 999\].*6 topics.*723 words"):
        zoo_load(copy, "bertopic")
    _safetensors(f, {**parts, "indices": parts["indices"] + 10_000})
    with pytest.raises(tl.InvalidModelError, match="names a column outside"):
        zoo_load(copy, "bertopic")
    _safetensors(f, {**parts, "data": -parts["data"]})
    with pytest.raises(tl.InvalidModelError, match="finite and non-negative"):
        zoo_load(copy, "bertopic")


def test_a_vocabulary_with_a_column_twice_is_refused(copy):
    cfg = json.loads((copy / "ctfidf_config.json").read_text())
    vocab = cfg["vectorizer_model"]["vocab"]
    first, second = list(vocab)[:2]
    vocab[second] = vocab[first]
    (copy / "ctfidf_config.json").write_text(json.dumps(cfg))
    with pytest.raises(tl.InvalidModelError, match="the columns must be 0..722, each once"):
        zoo_load(copy, "bertopic")


def test_another_tools_directory_names_bertopics_format(tmp_path):
    (tmp_path / "topics.json").write_text('{"topics": [[1, 2]]}')
    (tmp_path / "config.json").write_text("{}")
    with pytest.raises(tl.InputFileError, match="no 'topic_representations'; not BERTopic's topics.json.*"
                                                "a BERTopic directory"):
        zoo_load(tmp_path, "bertopic")
    (tmp_path / "config.json").unlink()
    with pytest.raises(tl.InputFileError, match="no config.json; expected a BERTopic directory"):
        zoo_load(tmp_path, "bertopic")
    f = tmp_path / "file.txt"
    f.write_text("x")
    with pytest.raises(tl.InputFileError, match="not a directory; expected a BERTopic directory"):
        zoo_load(f, "bertopic")


class Payload:
    def __init__(self, marker):
        self.marker = str(marker)

    def __reduce__(self):
        return (exec, (f"open({self.marker!r}, 'w').write('ran')",))


class FakeBERTopic:
    """Pickled under BERTopic's class name (`_as_bertopic`), its attributes holding a payload that
    runs code when unpickled by pickle itself."""

    def __init__(self, marker):
        self.topic_representations_ = {0: [("a", Payload(marker))]}


def _as_bertopic(obj) -> bytes:
    """`obj` pickled (protocol 2: classes named as text lines) as if its class were BERTopic's."""
    data = pickle.dumps(obj, protocol=2)
    ours = f"{type(obj).__module__}\n{type(obj).__qualname__}\n".encode()
    assert ours in data
    return data.replace(ours, b"bertopic._bertopic\nBERTopic\n")


def test_a_crafted_pickle_runs_nothing(tmp_path):
    """The restricted reader imports and calls nothing the file names: an exec payload, alone or
    inside attributes of a class named like BERTopic's, is a one-line error and never runs."""
    marker = tmp_path / "PWNED"
    alone, inside = tmp_path / "alone.pickle", tmp_path / "inside.pickle"
    alone.write_bytes(pickle.dumps(Payload(marker), protocol=4))
    inside.write_bytes(_as_bertopic(FakeBERTopic(marker)))
    assert zoo_detect(inside) == "bertopic-pickle"
    with pytest.raises(tl.InputFileError, match=r"holds a pickled builtins exec \(builtins.exec\), not a "
                                                r"fitted BERTopic model"):
        zoo_load(alone, "bertopic-pickle")
    with pytest.raises(tl.InvalidModelError, match="topic 0's representation is not a list of"):
        zoo_load(inside, "bertopic-pickle", allow_pickle=True)
    assert not marker.exists()


def test_the_pickle_reads_as_the_directory_without_bertopic():
    """BERTopic's pickle (a joblib file) read as data, no consent needed, gives what its directory
    gives; neither BERTopic nor its sub-models' libraries are imported (checked in a fresh process)."""
    t, d = zoo_load(PICKLE, "bertopic-pickle"), zoo_load(DIR, "bertopic")
    assert t.top_words == d.top_words and t.vocab == d.vocab
    np.testing.assert_array_equal(t.weights, d.weights)
    np.testing.assert_array_equal(t.topic_weights, d.topic_weights)
    for key in ("topic_ids", "topic_names", "outliers", "assignments"):
        assert t.metadata[key] == d.metadata[key], key
    code = ("import sys; from tealeaves.io import zoo_load; "
            f"zoo_load({str(PICKLE)!r}, 'bertopic-pickle'); zoo_load({str(UMAP)!r}, 'bertopic-pickle'); "
            "print(sorted({m.split('.')[0] for m in sys.modules} & "
            "{'bertopic', 'hdbscan', 'umap', 'sklearn', 'joblib', 'torch', 'pynndescent', 'pandas'}))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]", out.stdout + out.stderr


@pytest.mark.parametrize("name", ["bertopic_sotu.pickle", "bertopic_umap.pickle"])
def test_a_pickle_gives_bertopics_own_topics(name):
    """Against what BERTopic itself read from each pickle when the fixture was made
    (scripts/make_bertopic_fixture.py: `BERTopic.load(path)`, then `get_topic(t)` for every topic,
    `get_topic_info()`'s counts and the labels): the top words in order, their c-TF-IDF scores
    exactly, the topic sizes, and the names (custom labels where set, `topic_labels_` else)."""
    expected = json.loads(EXPECTED.read_text())[name]
    t = zoo_load(FIXTURES / name, "bertopic-pickle")
    ids = t.metadata["topic_ids"]
    assert [str(k) for k in ids] == [k for k in expected["get_topic"] if k != "-1"]
    assert len(t.vocab) == expected["vocabulary_size"]
    for row, k in enumerate(ids):
        words = expected["get_topic"][str(k)]
        assert list(t.top_words[row]) == [w for w, _ in words if w]
        for word, score in words:
            assert t.weights[row, t.vocab.index(word)] == score
    np.testing.assert_array_equal(t.topic_weights, [expected["counts"][str(k)] for k in ids])
    labels = expected["custom_labels"]
    names = labels[1:] if labels and "-1" in expected["counts"] else labels
    assert t.metadata["topic_names"] == (names or [expected["topic_labels"][str(k)] for k in ids])
    if "-1" in expected["get_topic"]:
        assert t.metadata["outliers"]["documents"] == expected["counts"]["-1"]
        assert t.metadata["outliers"]["words"] == [w for w, _ in expected["get_topic"]["-1"]]


def test_the_pickle_with_numpy_scores_and_counts_is_read(tmp_path):
    """The real pickle's scores are numpy floats (the reader took only Python floats, issue 32);
    sizes and document topics given as numpy integers are counts too."""
    from tealeaves.io.safepickle import read_pickle

    attrs = read_pickle(PICKLE).attrs()
    assert all(type(s) is np.float64 for rep in attrs["topic_representations_"].values() for _, s in rep)
    t = zoo_load(PICKLE, "bertopic-pickle")
    assert t.top_words[0][:2] == ("shall", "citizens")
