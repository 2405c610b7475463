"""Declared sizes are checked before work (issue 20, point 4): sizes a file declares (MALLET
counts, .npz/.npy headers, distinct labels), text that never ends or never breaks a line
(gzip bombs, /dev/zero, FIFOs), and every size option of the commands and their Python
parameters. Each gets a one-line error with the estimate, quickly; big-but-cheap values pass.
`memory_bytes` is fixed where the test needs a known machine; every call runs under a time
limit, so a regression fails instead of hanging."""

from __future__ import annotations

import gzip
import io
import json
import os
import threading
import zipfile
from pathlib import Path

import numpy as np
import pytest
from limits import time_limit

import tealeaves as tl
from tealeaves.cli import main
from tealeaves.cli.tools import example_paths
from tealeaves.files import records, textfile
from tealeaves.util import limits as util_limits

GIB = 2**30




def cli_error(capsys, *argv: str) -> str:
    """Run the CLI; it must fail with status 2 and one line on stderr; return that line."""
    with time_limit():
        code = main([str(a) for a in argv])
    err = capsys.readouterr().err.strip()
    assert code == 2, err
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("tealeaves: error: "), err
    return lines[0]


@pytest.fixture
def memory(monkeypatch):
    """This machine has 1 GiB (so the limit is 512 MiB), whatever it really has."""
    monkeypatch.setattr(util_limits, "memory_bytes", lambda: GIB)
    return GIB


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("sizes")
    model_path, docs_path = example_paths()
    (d / "model.npz").write_bytes(Path(model_path).read_bytes())
    (d / "docs.txt").write_text(Path(docs_path).read_text(encoding="utf-8"), encoding="utf-8")
    return d


@pytest.fixture(scope="module")
def model(files):
    return tl.load_model(files / "model.npz")


@pytest.fixture(scope="module")
def docs(files, model):
    return tl.read_corpus(files / "docs.txt", vocab=model.vocab)


# --- sizes a file declares ------------------------------------------------------------------


def _state(path: Path, topics: int, types: int, compress: bool = True) -> None:
    """A MALLET state whose #alpha declares `topics` and whose tokens use `types` word types."""
    text = io.StringIO()
    text.write("#doc source pos typeindex type topic\n#alpha : " + " ".join(["0.1"] * topics) + "\n")
    text.write("#beta : 0.01\n")
    for i in range(types):
        text.write(f"0 NA {i} {i} w{i} {i % topics}\n")
    data = text.getvalue().encode()
    path.write_bytes(gzip.compress(data) if compress else data)


@pytest.mark.parametrize("topics,types,compress", [(100_000, 100_000, True), (20_000, 4_000, False),
                                                   (4_000, 20_000, True)])
def test_mallet_state_counts_checked_before_allocating(tmp_path, capsys, memory, topics, types, compress):
    path = tmp_path / "state.gz"
    _state(path, topics, types, compress)
    need = 8 * topics * types / GIB  # the reader holds one float64 matrix: phi, filled in place
    line = cli_error(capsys, "convert", path, tmp_path / "out.npz")
    assert f"a {topics:,} x {types:,} matrix" in line and f"{need:,.1f} GiB" in line, line
    with time_limit(), pytest.raises(tl.TooLargeError, match="topics x words"):
        tl.load_model(path)
    assert not (tmp_path / "out.npz").exists()


def test_mallet_state_that_fits_still_loads(tmp_path, memory):
    path = tmp_path / "state.gz"
    _state(path, 50, 400)
    with time_limit():
        m = tl.load_model(path)
    assert m.phi.shape == (50, 400)


def test_mallet_doc_topics_declared_topic_checked(tmp_path, memory):
    path = tmp_path / "doc-topics.txt"
    lines = ["#doc name topic proportion"] + [f"{d}\tdoc{d}\t999999\t1.0" for d in range(200)]
    path.write_text("\n".join(lines) + "\n")
    with time_limit(), pytest.raises(tl.TooLargeError,
                                     match=r"200 x 1,000,000 matrix \(documents x topics\)"):
        tl.io.read_doc_topics(path)


def _forged_npz(path: Path, arrays: dict[str, tuple[tuple[int, ...], str]]) -> None:
    """An .npz whose array headers declare `shape` but hold 64 bytes of data each."""
    with zipfile.ZipFile(path, "w") as z:
        for name, (shape, descr) in arrays.items():
            head = io.BytesIO()
            np.lib.format.write_array_header_1_0(head, {"descr": descr, "fortran_order": False,
                                                        "shape": shape})
            z.writestr(name + ".npy", head.getvalue() + b"\0" * 64)


@pytest.mark.parametrize("name,arrays,argv", [
    ("model.npz", {"phi": ((10**6, 10**6), "<f8"), "alpha": ((10**6,), "<f8")}, ["heldout", "{f}", "{docs}"]),
    ("corpus.npz", {"words": ((10**12,), "<i8"), "offsets": ((2,), "<i8")}, ["heldout", "{model}", "{f}"]),
    ("rbm.npz", {"W": ((10**5, 10**5), "<f8"), "b": ((10**5,), "<f8"), "c": ((10**5,), "<f8")},
     ["csl", "{f}", "digits:test"]),
])
def test_npz_shapes_checked_against_the_data(files, tmp_path, capsys, name, arrays, argv):
    path = tmp_path / name
    _forged_npz(path, arrays)
    args = [a.format(f=path, docs=files / "docs.txt", model=files / "model.npz") for a in argv]
    line = cli_error(capsys, *args)
    assert "declares shape" in line and "holds 64 bytes" in line, line


def _forged_npy(path: Path, shape: tuple[int, ...]) -> None:
    head = io.BytesIO()
    np.lib.format.write_array_header_1_0(head, {"descr": "<f8", "fortran_order": False, "shape": shape})
    path.write_bytes(head.getvalue() + bytes(24))


def test_npy_theta_and_labels_checked(files, tmp_path, capsys):
    labels, theta = tmp_path / "labels.npy", tmp_path / "theta.npy"
    _forged_npy(labels, (10**11,))
    _forged_npy(theta, (20, 10**10))
    assert "declares shape (100000000000,)" in cli_error(capsys, "bcubed", labels, labels)
    line = cli_error(capsys, "intrusion", "topics", files / "model.npz", files / "docs.txt", "--theta", theta,
                     "-o", tmp_path / "t.jsonl", "--key", tmp_path / "k.jsonl")
    assert "declares shape (20, 10000000000)" in line, line


def test_npz_that_fits_in_its_file_but_not_in_memory(tmp_path, memory):
    path = tmp_path / "m.npz"
    np.savez_compressed(path, phi=np.zeros((9000, 9000)), alpha=np.ones(9000))  # 618 MiB, compressed
    with time_limit(), pytest.raises(tl.TooLargeError,
                                     match=r"array 'phi' of shape \(9000, 9000\) needs about"):
        tl.load_model(path)


def test_distinct_labels_table_checked(tmp_path, capsys, memory):
    n = 20_000  # 20,000 x 20,000 int64 = 3 GiB
    pred, gold = tmp_path / "pred.txt", tmp_path / "gold.txt"
    pred.write_text("".join(f"p{i}\n" for i in range(n)))
    gold.write_text("".join(f"g{i}\n" for i in range(n)))
    line = cli_error(capsys, "bcubed", pred, gold)
    assert "20,000 clusters x 20,000 classes table needs about 3.0 GiB" in line, line
    with time_limit(), pytest.raises(tl.TooLargeError, match="classes table"):
        tl.clustering.nmi(np.arange(n), np.arange(n))


# --- text that never ends or never breaks a line ------------------------------------------------


@pytest.fixture
def short_lines(monkeypatch):
    monkeypatch.setattr(textfile, "MAX_LINE", 2**20)  # 1 MiB, so the tests write little


def _one_gzip_line(path: Path, mib: int, head: bytes = b"") -> None:
    with gzip.open(path, "wb") as fh:
        fh.write(head)
        for _ in range(mib):
            fh.write(b"a" * 2**20)


def test_gzip_line_without_newline(files, tmp_path, capsys, short_lines):
    path = tmp_path / "state.gz"
    _one_gzip_line(path, 3, b"#doc source pos typeindex type topic\n")
    line = cli_error(capsys, "convert", path, tmp_path / "m.npz")
    assert f"{path}:2: line longer than 1 MiB" in line


@pytest.mark.parametrize("argv", [
    ["heldout", "{model}", "{long}"],
    ["heldout", "{model}", "{long}", "--format", "ids"],
    ["coherence", "{model}", "{long}", "--measure", "umass"],
    ["coherence", "{long}", "{docs}"],
    ["bcubed", "{long}", "{long}"],
    ["intrusion", "topics", "{model}", "{docs}", "--texts", "{long}", "-o", "{tmp}/t.jsonl",
     "--key", "{tmp}/k.jsonl"],
])
def test_long_line_in_every_text_reader(files, tmp_path, capsys, short_lines, argv):
    long = tmp_path / "long.txt"
    long.write_bytes(b"w001 " * (2**20 // 4) + b"\n")
    args = [a.format(model=files / "model.npz", docs=files / "docs.txt", long=long, tmp=tmp_path)
            for a in argv]
    line = cli_error(capsys, *args)
    assert f"{long}:1: line longer than 1 MiB" in line, line


@pytest.mark.parametrize("kind", ["gzip-state", "text-docs", "json-lines", "csv"])
def test_decompressed_size_over_the_budget(files, tmp_path, monkeypatch, kind):
    # budget 64 MiB / 2 / 8 = 4 MiB of text
    monkeypatch.setattr(util_limits, "memory_bytes", lambda: 64 * 2**20)
    with time_limit():
        if kind == "gzip-state":
            path = tmp_path / "state.gz"
            with gzip.open(path, "wt") as fh:
                fh.write("#doc source pos typeindex type topic\n#alpha : 0.1\n#beta : 0.01\n")
                source = "x" * 10_000  # long lines, positions in order (the reader checks the order)
                fh.writelines(f"0 {source} {i} 0 w 0\n" for i in range(800))
            assert path.stat().st_size < 200_000  # a small file that holds 8 MB
            call = lambda: tl.load_model(path)  # noqa: E731
        elif kind == "text-docs":
            path = tmp_path / "docs.txt"
            path.write_text("w001 w002\n" * 600_000)
            call = lambda: tl.read_corpus(path)  # noqa: E731
        elif kind == "json-lines":
            path = tmp_path / "r.jsonl"
            path.write_text('{"annotator": "a", "item": "x", "choice": 1}\n' * 120_000)
            call = lambda: records.read_json_lines(path)  # noqa: E731
        else:
            path = tmp_path / "r.csv"
            path.write_text("annotator,item,choice\n" + "a,x,1\n" * 1_000_000)
            call = lambda: records.read_csv(path)  # noqa: E731
        with pytest.raises(tl.InputFileError,
                           match=rf"{path.name}: text of more than [\d,]+ bytes needs about"):
            call()


@pytest.mark.parametrize("device", ["/dev/zero", "/dev/urandom", "/dev/null"])
@pytest.mark.parametrize("argv", [
    ["heldout", "{model}", "{dev}"],
    ["heldout", "{dev}", "{docs}"],
    ["coherence", "{model}", "{dev}"],
    ["intrusion", "score", "{dev}", "{dev}"],
    ["bcubed", "{dev}", "{dev}"],
    ["convert", "{dev}", "{tmp}/m.npz", "--model-format", "mallet-state"],
])
def test_devices_that_never_end_are_refused(files, tmp_path, capsys, device, argv):
    if not os.path.exists(device):
        pytest.skip(f"no {device}")
    args = [a.format(model=files / "model.npz", docs=files / "docs.txt", dev=device, tmp=tmp_path)
            for a in argv]
    line = cli_error(capsys, *args)
    assert f"{device}: is a character device" in line, line


def test_fifo_without_writer_times_out(files, tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(textfile, "PIPE_IDLE", 0.5)
    fifo = tmp_path / "docs.fifo"
    os.mkfifo(fifo)
    line = cli_error(capsys, "heldout", files / "model.npz", fifo)
    assert f"{fifo}: no data from the pipe for 0.5 s" in line
    line = cli_error(capsys, "heldout", fifo, files / "docs.txt")
    assert "is a pipe; a model file must be a regular file" in line


def test_fifo_with_a_writer_is_read(files, tmp_path, model):
    fifo = tmp_path / "docs.fifo"
    os.mkfifo(fifo)
    text = (files / "docs.txt").read_bytes()

    def write():
        with open(fifo, "wb") as fh:
            fh.write(text)

    writer = threading.Thread(target=write)
    writer.start()
    with time_limit():
        corpus = tl.read_corpus(fifo, vocab=model.vocab)
    writer.join()
    expected = tl.read_corpus(files / "docs.txt", vocab=model.vocab)
    assert np.array_equal(corpus.words, expected.words) and np.array_equal(corpus.offsets, expected.offsets)


# --- size options and their Python parameters ---------------------------------------------------


@pytest.mark.parametrize("argv,says", [
    (["heldout", "{model}", "{docs}", "--runs", "2", "--bootstrap", "100000000000"],
     "bootstrap with 100,000,000,000 resamples needs about"),
    (["heldout", "{model}", "{docs}", "--runs", "1000000000"],
     "1,000,000,000 runs of 20 documents needs about"),
    (["heldout", "{model}", "{docs}", "--particles", "1000000000000"], "would take about"),
    (["heldout", "{model}", "{docs}", "--method", "ais", "--temperatures", "100000000000"],
     "would take about"),
    (["heldout", "{model}", "{docs}", "--check", "3", "--check-temperatures", "100000000000"],
     "would take about"),
    (["completion", "{model}", "{docs}", "--runs", "3", "--bootstrap", "50000000000"],
     "bootstrap with 50,000,000,000 resamples"),
    (["compare", "{model}", "{model}", "{docs}", "--bootstrap", "100000000000"], "bootstrap with"),
    (["compare", "{model}", "{model}", "{docs}", "--temperatures", "100000000000"],
     "Ratio-AIS would take about"),
    (["compare", "{model}", "{model}", "{docs}", "--chains", "1000000000"], "resamples needs about"),
    (["compare", "{model}", "{model}", "{docs}", "--chains", "1000000000", "--bootstrap", "0"],
     "would take about"),
    (["curve", "{model}", "{model}", "{docs}", "--bootstrap", "100000000000"], "bootstrap with"),
    (["curve", "{model}", "{model}", "{docs}", "--first-temperatures", "100000000000"],
     "Iteration-AIS would take about"),
    (["curve", "{model}", "{model}", "{docs}", "--temperatures", "1000000", "--max-hours", "0.01"],
     "more than max_hours=0.01"),
    (["csl", "{model}", "{docs}", "--doc-length", "1000000000000"], "doc length 1,000,000,000,000"),
    (["csl", "{model}", "{docs}", "--samples", "10000000000"], "CSL with 10,000,000,000 samples"),
    (["csl", "{model}", "{docs}", "--chains", "100000", "--burn-in", "10000000"], "would take about"),
    (["csl", "{model}", "{docs}", "--sweeps", "10000000000"], "would take about"),
    (["intrusion", "words", "{model}", "-o", "{tmp}/t.jsonl", "--key", "{tmp}/k.jsonl", "--attention-checks",
      "100000000"], "100,000,005 intrusion tasks of 6 items needs about"),
    (["intrusion", "topics", "{model}", "{docs}", "-o", "{tmp}/t.jsonl", "--key", "{tmp}/k.jsonl",
      "--samples", "10000000000000"], "would take about"),
    (["intrusion", "topics", "{model}", "{docs}", "-o", "{tmp}/t.jsonl", "--key", "{tmp}/k.jsonl",
      "--burn-in", "10000000000000"], "would take about"),
    (["select", "{docs}", "--topics", "1000000"], "would take about"),
    (["select", "{docs}", "--topics", "5", "--iterations", "100000000000"], "would take about"),
    (["select", "{docs}", "--topics", "5", "--restarts", "100000000000"], "would take about"),
    (["select", "{docs}", "--topics", "5", "--particles", "1000000000000"], "would take about"),
    (["evaluate", "{model}", "--heldout", "{docs}", "--particles", "1000000000000"], "would take about"),
    (["synth", "{tmp}/m.npz", "{tmp}/d.txt", "--topics", "1000000", "--words", "1000000"], "needs about"),
    (["synth", "{tmp}/m.npz", "{tmp}/d.txt", "--docs", "1000000", "--length", "1000000000"], "needs about"),
])
def test_size_options_refused_up_front(files, tmp_path, capsys, argv, says):
    args = [a.format(model=files / "model.npz", docs=files / "docs.txt", tmp=tmp_path) for a in argv]
    line = cli_error(capsys, *args)
    assert says in line, line
    assert "GiB" in line or "hours" in line  # the estimate is in the message
    assert not any(p.name in ("t.jsonl", "k.jsonl", "m.npz", "d.txt") for p in tmp_path.iterdir())


def test_intrusion_score_bootstrap(files, tmp_path, model):
    tasks = tl.intrusion.word_tasks(model, seed=0)
    tl.intrusion.write_tasks(tasks, tmp_path / "tasks.jsonl", tmp_path / "key.jsonl")
    answers = [{"annotator": "a", "item": t.item, "choice": t.intruder} for t in tasks]
    with time_limit(), pytest.raises(tl.TealeavesError, match="bootstrap with 100,000,000,000 resamples"):
        tl.intrusion.score(tmp_path / "key.jsonl", answers, bootstrap=10**11)


def test_python_parameters_share_the_checks(model, docs, files, memory):
    with time_limit():
        with pytest.raises(tl.TooLargeError, match="bootstrap with"):
            tl.heldout(model, docs, runs=2, bootstrap=10**11)
        with pytest.raises(tl.MethodError, match="would take about"):
            tl.heldout(model, docs, particles=10**12)
        with pytest.raises(tl.TooLargeError, match="doc length"):
            tl.csl(_lda_chain(model, 10**12), docs)
        with pytest.raises(tl.TealeavesError, match="would take about"):
            tl.compare(model, model, docs, temperatures=10**11)
        with pytest.raises(tl.TealeavesError, match="bootstrap with"):
            tl.training_curve([model, model], docs, bootstrap=10**11)
        with pytest.raises(tl.TooLargeError, match="intrusion tasks"):
            tl.intrusion.word_tasks(model, attention_checks=10**8)
        with pytest.raises(tl.TealeavesError, match="would take about"):
            tl.intrusion.infer_theta(model, docs, samples=10**13)
        with pytest.raises(tl.TealeavesError, match="would take about|needs about"):
            tl.select(files / "docs.txt", topics=[10**6])
        with pytest.raises(tl.TooLargeError, match="2,000,003 int64 46 x 46 matrices"):
            tl.coherence(model, files / "docs.txt", workers=10**6)
        with pytest.raises(tl.TooLargeError, match="20 worker processes needs about 2.0 GiB"):
            tl.intrusion.infer_theta(model, docs, workers=10**6)


def _lda_chain(model, doc_length):
    from tealeaves.csl import LdaChain

    return LdaChain(model, doc_length=doc_length)


def test_big_but_cheap_values_pass(files, model, docs, tmp_path):
    """A window longer than every document is the whole document; a bootstrap with one run has
    nothing to resample; a thousand attention checks fit."""
    with time_limit(120):
        huge = tl.coherence(model, files / "docs.txt", measure="npmi", window=2**63)
        longest = int(docs.lengths.max())
        whole = tl.coherence(model, files / "docs.txt", measure="npmi", window=longest)
        assert np.allclose(huge.per_topic, whole.per_topic, equal_nan=True)
        res = tl.heldout(model, docs.subset(range(3)), particles=2, runs=1, bootstrap=10**11)
        assert np.isnan(res.sd)
        assert len(tl.intrusion.word_tasks(model, attention_checks=1000)) == model.num_topics + 1000


def test_estimate_in_one_place(memory):
    """Every check goes through check_cost: memory against half the machine, time against
    max_hours, the estimate in the message."""
    with pytest.raises(tl.TooLargeError, match=r"^x needs about 1.0 GiB of memory \(how\); this machine "
                                               r"has 1.0 GiB \(the limit is half\)$"):
        util_limits.check_cost("x", nbytes=GIB, how="how")
    util_limits.check_cost("half fits", nbytes=GIB / 2)
    with pytest.raises(tl.MethodError, match=r"y would take about 2.0 hours \(z\), more than max_hours=1"):
        util_limits.check_cost("y", seconds=7200, max_hours=1, how="z")
    util_limits.check_cost("fits", nbytes=1, seconds=1)


def test_json_text_roundtrip_unchanged(tmp_path):
    """The bounded reader reads what open() read: a byte-order mark dropped, line ends kept."""
    path = tmp_path / "a.json"
    path.write_bytes(b"\xef\xbb\xbf" + json.dumps({"a": "b\r\nc"}).encode() + b"\r\n")
    assert records.read_json(path) == {"a": "b\r\nc"}
