"""Red team 3's findings on the reference index, Dask addresses and evaluate's estimate (F5, F6,
F7, F9, F10, F16, F17): each case that failed, now refused in one line or answered rightly."""

from __future__ import annotations

import hashlib
import os
import socket
import struct
import subprocess
import sys
import threading

import numpy as np
import pytest
from clirun import one_line_error, run_cli

import tealeaves as tl
from tealeaves.coherence import index as ix
from tealeaves.coherence.index import build
from tealeaves.errors import InputFileError, MethodError
from tealeaves.evaluate import reference_tokens
from tealeaves.util.limits import check_cost
from tealeaves.util.parallel import use_dask

CHUNK = 2_000  # characters per build chunk: several chunks


@pytest.fixture(scope="module")
def text(tmp_path_factory):
    """300 documents of 40 words drawn from 60, written as text."""
    rng = np.random.default_rng(5)
    words = [f"w{i}" for i in range(60)]
    path = tmp_path_factory.mktemp("rt3b") / "ref.txt"
    path.write_text("".join(" ".join(rng.choice(words, 40)) + "\n" for _ in range(300)), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def tlx(text):
    out = text.with_suffix(".tlx")
    ix.build_index(text, out, chunk_chars=CHUNK)
    return out


@pytest.fixture(scope="module")
def topics(text):
    path = text.parent / "topics.txt"
    path.write_text("w1 w2 w3 w4 w5\nw10 w11 w12 w13 w14\n", encoding="utf-8")
    return path


# ---------------------------------------------------------------- F5 content hash

def test_f5_results_on_an_index_compare_with_each_other_and_with_its_text(text, tlx, topics):
    a = tl.coherence(str(topics), str(tlx))
    b = tl.coherence(str(topics), str(tlx))
    c = tl.coherence(str(topics), str(text))
    assert tl.comparable(a, b) and tl.comparable(a, c), (tl.comparable(a, b), tl.comparable(a, c))
    assert a.fingerprint["reference"]["hash"] == "sha256:" + hashlib.sha256(text.read_bytes()).hexdigest()


def test_f5_index_info_labels_the_file_hash_and_the_chunk_hash(text, tlx):
    code, out, _ = run_cli(["index", "info", tlx])
    rows = dict(line.split(None, 1) for line in out.splitlines() if line.startswith("sha256"))
    assert code == 0 and rows["sha256"].startswith(hashlib.sha256(text.read_bytes()).hexdigest() + " ")
    assert "chunk hash" in out and "SHA-256 of its chunks' SHA-256s" in out


# ---------------------------------------------------------------- F6 damaged chunks

def _duplicate_a_position(work: str) -> None:
    """In chunk 0, give a word's first occurrence the position of another word's first: still
    increasing and inside the corpus, the same size."""
    with np.load(os.path.join(work, "chunk-000000.npz")) as z:
        counts = z["counts"]
    posf = os.path.join(work, "chunk-000000.pos")
    pos = np.fromfile(posf, "<u4")
    first = np.concatenate([[0], np.cumsum(counts)])[:-1]
    i = next(g for g in range(len(counts)) if counts[g] >= 2 and pos[first[g]] > 0)
    j = next(g for g in range(len(counts)) if pos[first[g]] < pos[first[i]])
    pos[first[i]] = pos[first[j]]
    pos.tofile(posf)


def test_f6_resumed_build_recounts_a_damaged_chunk(text, tlx, tmp_path, monkeypatch):
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1700000000")
    whole = tmp_path / "whole.tlx"
    ix.build_index(text, whole, chunk_chars=CHUNK)
    out = tmp_path / "resumed.tlx"
    done: list[int] = []

    def interrupt(i):
        done.append(i)
        if len(done) == 2:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        ix.build_index(text, out, chunk_chars=CHUNK, progress=interrupt)
    _duplicate_a_position(str(out) + ".work")
    again: list[int] = []
    ix.build_index(text, out, chunk_chars=CHUNK, progress=again.append)
    assert 0 in again  # the damaged chunk was counted again
    assert out.read_bytes() == whole.read_bytes()


def test_f6_verify_checks_the_postings_not_only_their_crc(text, tmp_path, monkeypatch):
    monkeypatch.setattr(build, "_chunk_check", lambda *a: "unchecked")  # damage goes unseen
    out = tmp_path / "damaged.tlx"

    def interrupt(i):
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        ix.build_index(text, out, chunk_chars=CHUNK, progress=interrupt)
    _duplicate_a_position(str(out) + ".work")
    ix.build_index(text, out, chunk_chars=CHUNK)
    with pytest.raises(InputFileError, match="damaged"):
        ix.ReferenceIndex(out).verify()
    one_line_error(["index", "info", out, "--verify"], "damaged")


# ---------------------------------------------------------------- F7 header JSON

def test_f7_deeply_nested_header_is_one_line(tlx, tmp_path, topics):
    b = tlx.read_bytes()
    hoff = struct.unpack("<Q", b[-16:-8])[0]
    deep = tmp_path / "deep.tlx"
    deep.write_bytes(b[:hoff] + b"[" * 200_000 + b"]" * 200_000 + struct.pack("<Q", hoff) + b"TLXINDEX")
    with pytest.raises(InputFileError, match="damaged header.*nested more than 64"):
        ix.ReferenceIndex(deep)
    one_line_error(["index", "info", deep], "deep.tlx: not a usable tealeaves reference index")
    one_line_error(["coherence", topics, deep], "nested more than 64")


# ---------------------------------------------------------------- F16 pipes

@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes")
@pytest.mark.parametrize("name", ["ff", "ff.tlx"])
def test_f16_a_pipe_as_index_is_refused_at_once(tmp_path, topics, name):
    fifo = tmp_path / name
    os.mkfifo(fifo)
    argv = ["index", "info", str(fifo)] if name == "ff" else ["coherence", str(topics), str(fifo)]
    r = subprocess.run([sys.executable, "-m", "tealeaves", *argv], capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 2 and r.stderr.strip() == (
        f"tealeaves: error: {fifo}: is a pipe; a reference index must be a regular file"), r.stderr


# ---------------------------------------------------------------- F9, F10 Dask addresses

@pytest.fixture
def web_server():
    """A local port answering like a web server, not Dask."""
    srv = socket.socket()
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind(("127.0.0.1", 0))
    srv.listen(5)

    def serve():
        while True:
            try:
                c, _ = srv.accept()
            except OSError:
                return
            c.sendall(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n")
            threading.Timer(5, c.close).start()

    threading.Thread(target=serve, daemon=True).start()
    yield f"tcp://127.0.0.1:{srv.getsockname()[1]}"
    srv.close()


def test_f9_a_port_that_is_not_dask_is_one_line(web_server, topics, text):
    one_line_error(["coherence", topics, text, "--dask", web_server, "--dask-min-seconds", "0"],
                   f"cannot reach the Dask scheduler at '{web_server}'", "does not speak Dask's protocol")
    with pytest.raises(MethodError, match="does not speak Dask's protocol"), use_dask(web_server, 0):
        pass


@pytest.mark.parametrize("address", ["nonsense", "tcp://", "http://localhost:8786", "tcp://[::1",
                                     "inproc://x", "tcp://localhost:99999", "tcp://localhost:0"])
def test_f10_a_malformed_address_is_refused_before_any_client(address, topics, text, monkeypatch):
    import distributed

    class NoClient:
        def __init__(self, *a, **k):
            raise AssertionError("a Client was made")

    monkeypatch.setattr(distributed, "Client", NoClient)
    one_line_error(["coherence", topics, text, "--dask", address, "--dask-min-seconds", "0"],
                   f"{address!r} is not a Dask scheduler address")
    with pytest.raises(MethodError, match="not a Dask scheduler address"), use_dask(address, 1e9):
        pass  # refused on entry, though no job would go there


def test_f10_tls_without_credentials_is_one_line(topics, text):
    one_line_error(["coherence", topics, text, "--dask", "tls://localhost:8786", "--dask-min-seconds", "0"],
                   "tls:// needs TLS credentials")


# ---------------------------------------------------------------- F17 evaluate's estimate

def test_f17_a_refusal_under_a_tenth_of_an_hour_says_seconds():
    with pytest.raises(MethodError) as e:
        check_cost("evaluating 2 model(s)", seconds=0.374, max_hours=0.0001)  # 0.36 s allowed
    assert "about 0.37 seconds" in str(e.value) and "max_hours=0.0001 (0.36 seconds)" in str(e.value)
    with pytest.raises(MethodError) as e:
        check_cost("x", seconds=0.3601, max_hours=0.0001)  # differs from 0.36 s in the 4th digit
    assert "about 0.3601 seconds" in str(e.value) and "(0.36 seconds)" in str(e.value)
    with pytest.raises(MethodError, match=r"about 5 minutes.*\(3 minutes\)"):
        check_cost("x", seconds=300, max_hours=0.05)


def test_f17_an_index_reference_is_sized_by_its_header(text, tlx):
    tokens = sum(len(line.split()) for line in text.read_text().splitlines())
    assert tokens == 300 * 40
    assert reference_tokens(str(tlx)) == (float(tokens), f"{tokens:,} tokens (its index header)")
