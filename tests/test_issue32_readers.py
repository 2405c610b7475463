"""Issue 32, the readers: numbers inside files (one strict parser for every reader), the plain-arrays
reader, readers of other libraries (gensim LSI, safetensors, database URLs), WE-IRBO's angular
similarity against an exact computation, and pickles read as data (`io.safepickle`). Every case is a
row of docs/hostile_input.md ("Issue 32: readers")."""

from __future__ import annotations

import io
import json
import pickle
import shutil
import struct
import zipfile
from pathlib import Path

import numpy as np
import pytest
from clirun import one_line_error

import tealeaves as tl
from tealeaves.io import zoo_load

FIXTURES = Path(__file__).parent / "fixtures"
BIG = "1" + "0" * 350  # a JSON integer past float's range (1.8e308): 351 digits, under the length cap
PHI = np.full((2, 3), 1 / 3)


def _npy(array: np.ndarray) -> bytes:
    buf = io.BytesIO()
    np.save(buf, array)
    return buf.getvalue()


def _forged_npy(shape: tuple[int, ...]) -> bytes:
    """A .npy header declaring `shape` (float64) over 64 bytes of data."""
    header = f"{{'descr': '<f8', 'fortran_order': False, 'shape': {shape}, }}".encode()
    header += b" " * (118 - len(header)) + b"\n"
    return b"\x93NUMPY\x01\x00" + len(header).to_bytes(2, "little") + header + b"\0" * 64


def _zip(path: Path, members: dict[str, bytes]) -> Path:
    with zipfile.ZipFile(path, "w") as z:
        for name, data in members.items():
            z.writestr(name, data)
    return path


# -- 1. numbers inside files: one strict parser ----------------------------------------------------

def test_a_json_integer_past_float_range_is_refused_where_it_is_read(tmp_path):
    """`records.parse_json` refuses an integer too large for a float as it refuses 1e999: every
    reader that takes numbers from JSON (select's saved values, reports, model files) gets numbers
    it can use as floats."""
    p = tmp_path / "x.json"
    p.write_text(f'{{"documents": {BIG}}}')
    with pytest.raises(tl.InputFileError, match=r"x.json: not valid JSON \(the number 1000.* is too large "
                                                r"for a float\)"):
        tl.files.records.read_json(p)
    p.write_text(f'{{"documents": {BIG[:300]}}}')  # 300 digits: a float (1e299), read
    assert tl.files.records.read_json(p)["documents"] == 10**299


def test_pyldavis_cell_past_float_range(tmp_path):
    (tmp_path / "l.json").write_text(
        f'{{"topic_term_dists": [[{BIG}, 0.5], [0.5, 0.5]], "vocab": ["a", "b"]}}')
    one_line_error(["diversity", tmp_path / "l.json", "--alpha", "0.1"], "l.json", "too large for a float")


@pytest.fixture
def bertopic_dir(tmp_path):
    out = tmp_path / "bt"
    shutil.copytree(FIXTURES / "bertopic_sotu", out)
    return out


def _edit(path: Path, change, value) -> None:
    """Set one value of the JSON file `path` (`change(data, v)`), written as `value`'s text (so a
    number can be written with 351 digits)."""
    data = json.loads(path.read_text())
    change(data, "__VALUE__")
    text = json.dumps(data)
    assert text.count('"__VALUE__"') == 1
    path.write_text(text.replace('"__VALUE__"', value))


def _size(d, v):
    d["topic_sizes"]["-1"] = v


def _score(d, v):
    d["topic_representations"]["0"][0][1] = v


def _assignment(d, v):
    d["topics"][0] = v


def _column(d, v):
    d["vectorizer_model"]["vocab"]["great"] = v


@pytest.mark.parametrize("file,change", [("topics.json", _size), ("topics.json", _score),
                                         ("topics.json", _assignment), ("ctfidf_config.json", _column)],
                         ids=["size", "score", "assignment", "column"])
def test_bertopic_numbers_past_float_range(bertopic_dir, file, change):
    _edit(bertopic_dir / file, change, BIG)
    one_line_error(["diversity", bertopic_dir], file, "too large for a float")


@pytest.mark.parametrize("change,value,message", [
    (_size, '"250"', r"topic_sizes\[-1\] \(a count of documents\) '250' is not a whole number"),
    (_size, "2.5", r"topic_sizes\[-1\] \(a count of documents\) 2.5 is not a whole number"),
    (_size, "-3", r"topic_sizes\[-1\] \(a count of documents\) -3 is out of range"),
    (_score, '"0.05"', "a word and a finite number"),
], ids=["size-text", "size-fraction", "size-negative", "score-text"])
def test_bertopic_numbers_go_through_the_strict_parsers(bertopic_dir, change, value, message):
    _edit(bertopic_dir / "topics.json", change, value)
    with pytest.raises(tl.InvalidModelError, match=message):
        zoo_load(bertopic_dir, "bertopic")


def test_select_resumes_over_a_saved_value_past_float_range(tmp_path):
    """A saved evaluation holding a 351-digit number crashed the decision (float() of it); now the
    file is unreadable, so select evaluates that model again."""
    c = tl.datasets.sotu().train.subset(range(40))
    texts = [[c.vocab[i] for i in d] for d in c]
    kw = dict(topics=[2], restarts=1, holdout=0.3, out=tmp_path, iterations=5, particles=5,
              coherence=("umass",), progress=False)
    first = tl.select(texts, **kw)
    (saved,) = (tmp_path / "evals").glob("*.json")
    doc = json.loads(saved.read_text())
    text = json.dumps(doc).replace(json.dumps(doc["doc_log_prob"][0]), BIG, 1)
    saved.write_text(text)
    again = tl.select(texts, **kw)
    assert again.decision["k"] == first.decision["k"] == 2
    assert json.loads(saved.read_text())["doc_log_prob"] == doc["doc_log_prob"]


def test_vectors_header_and_values_are_read_strictly(tmp_path):
    (tmp_path / "topics.txt").write_text("a b\n")
    (tmp_path / "v.txt").write_text("1" * 5000 + " 2\na 1 0\nb 0 1\n")
    one_line_error(["embedding-coherence", tmp_path / "topics.txt", tmp_path / "v.txt"],
                   "v.txt:1: the header's number of vectors", "is not a whole number")
    (tmp_path / "v.txt").write_text("2 2\na 1_0 0\nb 0 1\n")  # float() reads 1_0 as 10
    one_line_error(["embedding-coherence", tmp_path / "topics.txt", tmp_path / "v.txt"],
                   "v.txt:2: a vector's values must be finite numbers, got '1_0'")


def test_numpy_scalars_are_numbers_in_a_bertopic_pickle(tmp_path):
    """A BERTopic object whose sizes, document topics and vocabulary columns are numpy integers
    and whose scores are numpy float32 (not only Python numbers) is read; its scores are numbers."""
    t = tl.load_topics(_as_bertopic(tmp_path, _Fake(np.int64, np.float32)), format="bertopic-pickle")
    assert t.top_words == (("a", "b"), ("c", "b"))
    np.testing.assert_array_equal(t.topic_weights, [2, 1])
    assert t.metadata["assignments"] == [0, 0, 1]
    assert t.vocab == ("a", "b", "c") and t.weights[1, 2] == np.float32(0.5)


# -- BERTopic pickles read as data -------------------------------------------------------------------

class _Fake:
    """A tiny fitted-BERTopic stand-in: the attributes the reader takes, of the given number types."""

    def __init__(self, ints, floats):
        import scipy.sparse as sp

        self.topic_representations_ = {ints(0): [("a", floats(0.5)), ("b", floats(0.25))],
                                       ints(1): [("c", floats(0.5)), ("b", floats(0.125))]}
        self.topic_sizes_ = {ints(0): ints(2), ints(1): ints(1)}
        self.topics_ = np.array([0, 0, 1], dtype=np.int64)
        self.custom_labels_ = None
        self.c_tf_idf_ = sp.csr_matrix(np.array([[0.5, 0.25, 0.0], [0.0, 0.125, 0.5]]))
        self.vectorizer_model = _Vectorizer({"a": ints(0), "b": ints(1), "c": ints(2)})


class _Vectorizer:
    def __init__(self, vocabulary):
        self.vocabulary_ = vocabulary


def _as_bertopic(tmp_path: Path, obj) -> Path:
    """`obj` pickled (protocol 2: classes named in text lines) as if its class were BERTopic's."""
    data = pickle.dumps(obj, protocol=2)
    ours = f"{type(obj).__module__}\n{type(obj).__qualname__}\n".encode()
    assert data.count(ours) == 1
    path = tmp_path / "fake.pickle"
    path.write_bytes(data.replace(ours, b"bertopic._bertopic\nBERTopic\n"))
    return path


def _joblib_array_pickle(tmp_path: Path, shape: tuple[int, ...]) -> Path:
    """A joblib file (protocol 2: no frames to resize) of an array whose wrapper declares `shape`."""
    import joblib

    path = tmp_path / "arr.pickle"
    joblib.dump({"x": np.zeros(3)}, path, protocol=2)
    raw = path.read_bytes()
    declared = b"K\x03\x85"  # BININT1 3, TUPLE1: the wrapper's shape (3,)
    forged = b"".join(b"J" + struct.pack("<i", n) for n in shape) + b"\x86"  # BININTs, TUPLE2
    assert raw.count(declared) == 1
    path.write_bytes(raw.replace(declared, forged))
    return path


def test_a_forged_array_size_in_a_joblib_file_allocates_nothing(tmp_path):
    from tealeaves.io.safepickle import read_pickle

    path = _joblib_array_pickle(tmp_path, (10**6, 10**6))
    assert read_pickle(_joblib_array_pickle(tmp_path / "..", (1, 3)))["x"].shape == (1, 3)  # the same bytes
    with pytest.raises(tl.InputFileError, match=r"arr.pickle: not a readable pickle \(an array of shape "
                                                r"\(1000000, 1000000\) \(8,000,000,000,000 bytes\) where the "
                                                r"file has \d+ bytes left"):
        read_pickle(path)


def test_damaged_and_compressed_bertopic_pickles_are_one_line(tmp_path):
    good = (FIXTURES / "bertopic_umap.pickle").read_bytes()
    (tmp_path / "cut.pickle").write_bytes(good[: len(good) // 2])
    one_line_error(["diversity", tmp_path / "cut.pickle"], "cut.pickle: not a readable pickle")
    import zlib

    (tmp_path / "z.pickle").write_bytes(zlib.compress(good))
    one_line_error(["diversity", tmp_path / "z.pickle", "--model-format", "bertopic-pickle"],
                   "z.pickle: a zlib-compressed joblib file")


def test_the_restricted_reader_calls_only_its_builders(tmp_path):
    """A pickle that would call a builder with what it does not take (bytearray(10**12) would
    allocate a terabyte), declare a bytearray longer than the file, or call something that is not a
    class it names, is refused."""
    from tealeaves.io.safepickle import read_pickle

    big = b"\x80\x04\x8c\x08builtins\x8c\tbytearray\x93\x8a\x06\x00\x10\xa5\xd4\xe8\x00\x85R."
    (tmp_path / "b.pickle").write_bytes(big)
    with pytest.raises(tl.InputFileError, match=r"b.pickle: not a readable pickle \(TypeError: bytearray of"):
        read_pickle(tmp_path / "b.pickle")
    huge = b"\x80\x05\x96" + struct.pack("<Q", 2**40) + b"."  # BYTEARRAY8 of 1 TiB over 1 byte
    (tmp_path / "h.pickle").write_bytes(huge)
    with pytest.raises(tl.InputFileError, match=r"a bytearray of 1,099,511,627,776 bytes where the file "
                                                r"holds 1"):
        read_pickle(tmp_path / "h.pickle")  # pickle's own reader allocates the terabyte first
    call_int = b"\x80\x04K\x05)R."  # REDUCE with the int 5 as the callable
    (tmp_path / "c.pickle").write_bytes(call_int)
    with pytest.raises(tl.InputFileError, match=r"it calls 5, which is not a class it names"):
        read_pickle(tmp_path / "c.pickle")


# -- 2. the plain-arrays reader ------------------------------------------------------------------------

@pytest.mark.parametrize("members,message", [
    ({"topic_word.npy": _forged_npy((10**6, 10**6))}, "array 'topic_word' declares shape (1000000, 1000000)"),
    ({"topic_word.npy": _npy(PHI), "doc_topic": _forged_npy((10**6, 10**6))},
     "array 'doc_topic' declares shape (1000000, 1000000)"),
    ({"topic_word.npy": b"not an array"}, "topic_word is not a NumPy array (a member of raw bytes"),
    ({"topic_word.npy": _npy(PHI), "vocab.npy": b"abc"}, "vocab is not a NumPy array (a member of raw bytes"),
    ({"topic_word.npy": _npy(PHI), "vocab.npy": _npy(np.array([273.0, 1.0, 2.0]))},
     "vocab must be a 1-d array of strings (words), got float64"),
    ({"topic_word.npy": _npy(PHI), "vocab.npy": _npy(np.array("abc"))},
     "vocab must be a vector, got an array of shape ()"),
    ({"topic_word.npy": _npy(PHI), "mean.npy": _npy(np.array(0.0)), "cov.npy": _npy(np.eye(2))},
     "mean must be a vector, got an array of shape ()"),
    ({"topic_word.npy": _npy(PHI), "alpha.npy": _npy(np.ones((2, 1))), "vocab.npy": _npy(np.array(["a", "b",
                                                                                                 "c"]))},
     "alpha must be a number or a vector, got an array of shape (2, 1)"),
], ids=["forged-header", "forged-unsuffixed", "raw-topic-word", "raw-vocab", "float-vocab", "0d-vocab",
        "0d-mean", "2d-alpha"])
def test_an_arrays_archive_is_checked_before_and_while_it_is_read(tmp_path, members, message):
    path = _zip(tmp_path / "a.npz", members)
    extra = [] if "alpha.npy" in members or "mean.npy" in members else ["--alpha", "0.1"]
    one_line_error(["diversity", path, "--model-format", "arrays", "--topn", "2", *extra], "a.npz", message)


def test_a_forged_member_after_a_raw_one_is_still_checked(tmp_path):
    """check_array_file stopped at the first member that was not an array; the forged phi after it
    was then allocated (7.3 TiB asked of numpy)."""
    from tealeaves.cli.tools import example_paths

    model_path, docs = example_paths()
    members = {"aaa.npy": b"raw bytes, not an array", "phi.npy": _forged_npy((10**6, 10**6))}
    with np.load(model_path) as f:
        members.update({f"{k}.npy": _npy(f[k]) for k in f.files if k != "phi"})
    path = _zip(tmp_path / "m.npz", members)
    one_line_error(["heldout", path, docs], "m.npz: array 'phi' declares shape (1000000, 1000000)")


def test_alpha_given_for_an_archive_holding_one_is_refused(tmp_path):
    path = _zip(tmp_path / "a.npz", {"topic_word.npy": _npy(PHI), "alpha.npy": _npy(np.array([0.1, 0.2])),
                                     "vocab.npy": _npy(np.array(["a", "b", "c"]))})
    one_line_error(["diversity", path, "--alpha", "5", "--topn", "2"],
                   "a.npz (an arrays archive holding alpha) has its own alpha")
    assert list(tl.load_model(path).alpha) == [0.1, 0.2]  # its own, without --alpha


def test_numbers_given_as_words_are_refused(tmp_path):
    np.save(tmp_path / "tw.npy", PHI)
    with pytest.raises(tl.MethodError, match=r"vocab must be words \(strings\); entry 0 is 273.0 \(float\)"):
        tl.load_model(tmp_path / "tw.npy", format="arrays", vocab=[273.0, 1.0, 2.0], alpha=0.1)
    m = tl.load_model(tmp_path / "tw.npy", format="arrays", vocab=np.array(["x", "y", "z"]), alpha=0.1)
    assert m.vocab == ("x", "y", "z") and all(type(w) is str for w in m.vocab)


def test_doc_topic_as_an_array(tmp_path):
    """doc_topic= given as an array (not a file) was os.fspath()'d: a TypeError traceback."""
    np.save(tmp_path / "tw.npy", PHI)
    theta = np.array([[0.25, 0.75], [1.0, 0.0]])
    t = tl.load_topics(tmp_path / "tw.npy", format="arrays", alpha=0.1, doc_topic=theta)
    np.testing.assert_array_equal(t.doc_topic, theta)
    with pytest.raises(tl.InvalidModelError,
                       match="doc_topic=: the document-topic matrix must be a non-empty 2-d matrix"):
        tl.load_topics(tmp_path / "tw.npy", format="arrays", alpha=0.1, doc_topic=np.array(0.5))


# -- 7. readers of other libraries -------------------------------------------------------------------

def test_a_gensim_lsi_without_its_projection_file(tmp_path):
    from gensim.corpora import Dictionary
    from gensim.models import LsiModel

    texts = [["a", "b", "c"], ["b", "c", "d"], ["a", "d", "e"], ["c", "e", "a"]]
    d = Dictionary(texts)
    LsiModel([d.doc2bow(t) for t in texts], id2word=d, num_topics=2).save(str(tmp_path / "lsi.gensim"))
    assert tl.load_topics(tmp_path / "lsi.gensim", allow_pickle=True).num_topics == 2
    (tmp_path / "lsi.gensim.projection").unlink()
    one_line_error(["diversity", tmp_path / "lsi.gensim", "--allow-pickle"],
                   "lsi.gensim: the LsiModel has no projection", "lsi.gensim.projection")


def test_a_safetensors_tensor_of_size_0_with_huge_dimensions(tmp_path, bertopic_dir):
    from tealeaves.io.safetensors import read_safetensors

    header = {"a": {"dtype": "F64", "shape": [0, 2**62, 2**62], "data_offsets": [0, 0]}}
    text = json.dumps(header).encode()
    (tmp_path / "x.safetensors").write_bytes(struct.pack("<Q", len(text)) + text)
    with pytest.raises(tl.InputFileError, match=r"x.safetensors \(a test file, safetensors\): tensor 'a' "
                       r"has shape '\[0, 4611686018427387904, .*more elements than an array can hold"):
        read_safetensors(tmp_path / "x.safetensors", "a test file")
    shutil.copy(tmp_path / "x.safetensors", bertopic_dir / "ctfidf.safetensors")
    one_line_error(["diversity", bertopic_dir], "ctfidf.safetensors", "more elements than an array can hold")


@pytest.mark.parametrize("argv", [
    ["annotate", "export", "--db", "postgresql://u:secretpw@localhost:abc/db", "-o", "o.csv"],
    ["annotate", "export", "--db", "postgresql+psycopg://u@[::1:5432/db", "-o", "o.csv"],
], ids=["port-not-a-number", "bad-ipv6"])
def test_a_database_url_sqlalchemy_cannot_parse(tmp_path, monkeypatch, argv):
    monkeypatch.chdir(tmp_path)
    line = one_line_error(argv, "not a database URL")
    assert "secretpw" not in line and not (tmp_path / "o.csv").exists()


def test_a_database_url_with_a_bad_port_in_serve(tmp_path, monkeypatch):
    model = tl.synthetic.random_model(3, 20, seed=0)
    tasks = tl.intrusion.word_tasks(model, seed=0)
    tl.intrusion.write_tasks(tasks, tmp_path / "t.jsonl", tmp_path / "k.jsonl")
    one_line_error(["annotate", "serve", "--tasks", tmp_path / "t.jsonl", "--db", "postgresql://h:x/db"],
                   "database postgresql://h:x/db: not a database URL", "the port a number")


def test_a_password_in_the_url_query_is_hidden(tmp_path, monkeypatch):
    """?password=... (libpq reads it from the query) was printed in the error; only user:password@
    was hidden. Now every secret of the URL is *** (`store._shown`, the one formatter of URLs)."""
    monkeypatch.chdir(tmp_path)
    line = one_line_error(["annotate", "export", "--db", "postgresql+psycopg://alice@127.0.0.1:1/ann?"
                           "password=S3cretPW99&sslpassword=K3y99&sslmode=bogus", "-o", "o.csv"],
                          "cannot connect")
    assert "S3cretPW99" not in line and "K3y99" not in line and "password=***" in line, line


def test_a_database_server_that_never_answers_is_an_error_not_a_wait(tmp_path, monkeypatch):
    """A server that accepts the connection and never speaks (a listening socket nobody serves):
    `annotate export` waited forever. Now it gives up after CONNECT_TIMEOUT seconds (made 2 here,
    libpq's smallest) with a one-line error."""
    import socket

    from tealeaves.annotate import store

    pytest.importorskip("psycopg")
    monkeypatch.setattr(store, "CONNECT_TIMEOUT", 2)
    monkeypatch.chdir(tmp_path)
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)  # the kernel completes the handshake; nothing ever answers
        port = silent.getsockname()[1]
        line = one_line_error(["annotate", "export", "--db", f"postgresql+psycopg://alice:pw@127.0.0.1:{port}/ann",
                               "-o", "o.csv"], "cannot connect")
    assert "timeout" in line and "pw@" not in line and not (tmp_path / "o.csv").exists(), line


# -- 11. WE-IRBO's angular similarity against an exact computation -------------------------------------

def _exact_we_irbo(a: np.ndarray, b: np.ndarray, p: float, variant: str) -> float:
    """WE-IRBO of two topics (all words distinct, every one with a vector) at 60 digits (mpmath),
    from the raw vectors: angles by acos of the exact cosine, OCTIS's greedy matching or the
    prefixes' centroids, Webber et al.'s RBO_ext at s = l = k, IRBO = 1 - RBO. Shares no code with
    tealeaves."""
    import mpmath as mp

    mp.mp.dps = 60

    def vec(x):
        return [mp.mpf(float(v)) for v in x]

    def angular(u, v):
        cos = mp.fsum(x * y for x, y in zip(u, v, strict=True)) / (
            mp.sqrt(mp.fsum(x * x for x in u)) * mp.sqrt(mp.fsum(y * y for y in v)))
        return 1 - mp.acos(max(min(cos, mp.mpf(1)), mp.mpf(-1))) / mp.pi

    A, B = [vec(x) for x in a], [vec(x) for x in b]
    k = len(A)
    overlaps = []
    for d in range(1, k + 1):
        if variant == "centroid":
            ca = [mp.fsum(col) for col in zip(*A[:d], strict=True)]
            cb = [mp.fsum(col) for col in zip(*B[:d], strict=True)]
            overlaps.append(angular(ca, cb))
            continue
        sims = sorted(((angular(A[i], B[j]), i, j) for i in range(d) for j in range(d)),
                      key=lambda t: (-t[0], t[1], t[2]))
        rows, cols, total = set(), set(), mp.mpf(0)
        for s, i, j in sims:
            if i not in rows and j not in cols:
                rows.add(i)
                cols.add(j)
                total += s
        overlaps.append(total)
    p = mp.mpf(p)
    rbo = (1 - p) * mp.fsum(overlaps[d - 1] / d * p ** (d - 1) for d in range(1, k + 1)) \
        + p**k * overlaps[k - 1] / k
    return float(1 - rbo)


@pytest.mark.parametrize("variant", ["match", "centroid"])
def test_we_irbo_of_a_topic_beside_its_copy_is_exact(variant):
    """A topic beside its own copy (each word's vector scaled by 3, half of them turned by 1e-9):
    1 - arccos(u . v)/pi was off the exact value by up to 6.7e-9 (the cosine's last bit is 1.4e-8
    of angle there); 2 atan2(|u - v|, |u + v|) is exact to rounding. Checked against mpmath at 60
    digits, with every similarity too."""
    from tealeaves.coherence.embeddings import _similarities, we_irbo
    from tealeaves.util.vectors import unit_rows

    rng = np.random.default_rng(0)
    a = rng.normal(size=(10, 50))
    b = a * 3.0
    b[5:] += rng.normal(size=(5, 50)) * 1e-9
    words = [[f"a{i}" for i in range(10)], [f"b{i}" for i in range(10)]]
    vectors = {**{w: v for w, v in zip(words[0], a, strict=True)}, **{w: v for w, v in zip(words[1], b,
                                                                                            strict=True)}}
    got = we_irbo(words, vectors, topn=10, variant=variant)
    assert abs(got.score - _exact_we_irbo(a, b, 0.9, variant)) <= 1e-15
    import mpmath as mp

    mp.mp.dps = 60
    sims = _similarities(unit_rows(a), unit_rows(b), True)
    for i in range(10):
        for j in range(10):
            u, v = [mp.mpf(float(x)) for x in a[i]], [mp.mpf(float(x)) for x in b[j]]
            cos = mp.fsum(x * y for x, y in zip(u, v, strict=True)) / mp.sqrt(
                mp.fsum(x * x for x in u) * mp.fsum(y * y for y in v))
            exact = 1 - mp.acos(max(min(cos, mp.mpf(1)), mp.mpf(-1))) / mp.pi
            assert abs(sims[i, j] - float(exact)) <= 4e-16, (i, j)


def test_octis_centroid_distance_near_parallel_is_exact():
    """OCTIS's centroid coherence sums 1 - cos(u, t): written |u - t|^2 / 2 it keeps its digits when
    the words' vectors are nearly parallel (1 - cos there has none left)."""
    import mpmath as mp

    from tealeaves.coherence.embeddings import _octis_coherence

    mp.mp.dps = 60
    rng = np.random.default_rng(1)
    base = np.abs(rng.normal(size=20)) + 0.5
    raw = np.array([base * (1 + 1e-9 * rng.normal(size=20)) for _ in range(5)])
    got = _octis_coherence(raw, "centroid", 5)
    rows = [[mp.mpf(float(x)) for x in r] for r in raw]
    units = []
    for r in rows:
        n = mp.sqrt(mp.fsum(x * x for x in r))
        u = [x / n for x in r]
        s = mp.fsum(u)
        v = [x / s for x in u]
        nv = mp.sqrt(mp.fsum(x * x for x in v))
        units.append([x / nv for x in v])
    total = [mp.fsum(col) for col in zip(*rows, strict=True)]
    nt = mp.sqrt(mp.fsum(x * x for x in total))
    t = [x / nt for x in total]
    exact = mp.fsum(1 - mp.fsum(x * y for x, y in zip(u, t, strict=True)) for u in units) / 5
    assert abs(got - float(exact)) <= 1e-15 * max(1.0, abs(float(exact))) + 1e-30
    assert abs(got - float(exact)) <= 1e-6 * float(exact)  # relative: the value is ~1e-18


def _exact_js(p, q) -> float:
    """The Jensen-Shannon distance (base 2) at 50 digits (mpmath), from its definition."""
    import mpmath as mp

    mp.mp.dps = 50
    total = mp.mpf(0)
    for a, b in zip(p, q, strict=True):
        a, b = mp.mpf(float(a)), mp.mpf(float(b))
        m = (a + b) / 2
        total += (a * mp.log(a / m) if a else 0) + (b * mp.log(b / m) if b else 0)
    return float(mp.sqrt(total / (2 * mp.log(2))))


def test_js_distance_of_nearly_equal_topics_is_exact():
    """Stability's Jensen-Shannon distance: two topics differing by 1e-7 relative are ~5e-8 apart;
    summing p ln(p/m) + q ln(q/m) left 1e-16 of cancellation, 0.5% of the distance. Now within
    1e-12 relative of the exact value, and exact at the ends (equal: 0, disjoint: 1)."""
    from tealeaves.diagnostics.stability import js_distances

    rng = np.random.default_rng(0)
    P = rng.dirichlet(np.ones(50), size=4)
    Q = P * (1 + 1e-7 * rng.normal(size=P.shape))
    Q /= Q.sum(axis=1, keepdims=True)
    got = js_distances(P, Q)
    for i in range(4):
        exact = _exact_js(P[i], Q[i])
        assert abs(got[i, i] - exact) <= 1e-12 * exact, (i, got[i, i], exact)
        for j in range(4):
            assert abs(got[i, j] - _exact_js(P[i], Q[j])) <= 1e-15
    apart = np.array([[0.5, 0.5, 0.0, 0.0], [0.0, 0.0, 0.25, 0.75]])
    np.testing.assert_array_equal(js_distances(apart, apart), [[0.0, 1.0], [1.0, 0.0]])
