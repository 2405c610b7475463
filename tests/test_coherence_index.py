"""The reference index (.tlx): the same numbers as counting the text, its header, damaged files,
resumed and parallel builds, and the CLI."""

from __future__ import annotations

import json
import os
import struct

import numpy as np
import pytest

from tealeaves import datasets
from tealeaves.coherence import CONVENTION_MEASURES, coherence, count, topic_words
from tealeaves.coherence import index as ix
from tealeaves.coherence.index import reference
from tealeaves.errors import InputFileError, MethodError, TealeavesError

DOCS = 3000


@pytest.fixture(scope="module")
def ref(tmp_path_factory):
    """The first 3,000 SOTU training paragraphs as text, and their index (several chunks)."""
    folder = tmp_path_factory.mktemp("index")
    c = datasets.sotu().train
    text = folder / "sotu.txt"
    text.write_text("".join(" ".join(c.vocab[i] for i in doc) + "\n" for doc in list(c)[:DOCS]))
    tlx = folder / "sotu.tlx"
    ix.build_index(text, tlx, chunk_chars=60_000)
    return text, tlx


@pytest.fixture(scope="module")
def repeats(tmp_path_factory):
    """Text where words repeat within windows (gensim's count differs), with empty, blank and
    short lines, indexed in chunks of a few documents."""
    folder = tmp_path_factory.mktemp("repeats")
    rng = np.random.default_rng(3)
    words = [f"w{i}" for i in range(12)] + ["é", "x"]
    lines = []
    for d in range(300):
        n = 0 if d % 7 == 0 else int(rng.integers(1, 40))
        lines.append(" ".join(rng.choice(words, n)) + ("  \t" if d % 5 == 0 else ""))
    text = folder / "rep.txt"
    text.write_text("\n".join(lines) + "\n", encoding="utf-8")
    tlx = folder / "rep.tlx"
    ix.build_index(text, tlx, chunk_chars=500)
    return text, tlx, sorted(words[:10] + ["absent"])


def _same(a, b) -> None:
    assert a.units == b.units and a.documents == b.documents and a.tokens == b.tokens
    np.testing.assert_array_equal(a.single, b.single)
    np.testing.assert_array_equal(a.joint, b.joint)


WINDOWS = (None, 1, 2, 3, 10, 39, 40, 110)


@pytest.mark.parametrize("rule,window", [(r, w) for r in ("exact", "gensim") for w in WINDOWS]
                         + [("context", w) for w in (1, 2, 5, 10)])
def test_counts_equal_streaming_with_repeats(repeats, rule, window):
    text, tlx, targets = repeats
    _same(count(text, targets, window=window, rule=rule), count(tlx, targets, window=window, rule=rule))


def test_gensim_rule_differs_from_exact_on_this_text(repeats):
    """The text above does test the gensim simulation: its counts are not the exact ones."""
    _, tlx, targets = repeats
    assert not np.array_equal(count(tlx, targets, 10, rule="gensim").joint, count(tlx, targets, 10).joint)


def _models() -> list[list[list[str]]]:
    asym = topic_words(datasets.sotu_model("sotu-20-asym"), 10)
    sym = topic_words(datasets.sotu_model("sotu-20-sym"), 10)
    absent = [asym[0][:9] + ["notawordinsotu"], sym[1]]
    return [asym, sym, absent]


@pytest.mark.parametrize("convention,measure", [(c, m) for c, ms in CONVENTION_MEASURES.items() for m in ms])
def test_coherence_identical_from_index(ref, convention, measure):
    text, tlx = ref
    for words in _models():
        a = coherence(words, text, measure=measure, convention=convention)
        b = coherence(words, tlx, measure=measure, convention=convention)
        np.testing.assert_array_equal(a.per_topic, b.per_topic)
        assert a.missing == b.missing and a.units == b.units


def test_header_round_trip(ref):
    text, tlx = ref
    lines = text.read_text().splitlines()
    h = ix.ReferenceIndex(tlx).header
    assert h["version"] == ix.VERSION and h["format"] == "tealeaves reference index"
    assert h["corpus"]["name"] == "sotu.txt" and h["corpus"]["bytes"] == os.path.getsize(text)
    assert h["corpus"]["documents"] == DOCS and h["corpus"]["tokens"] == sum(len(x.split()) for x in lines)
    assert h["vocabulary"] == len({w for x in lines for w in x.split()})
    assert h["lowercase"] is False and set(h["rules"]) == {"exact", "gensim", "context"}


def test_index_detected_by_content(ref, tmp_path):
    _, tlx = ref
    other = tmp_path / "ref.bin"
    other.write_bytes(tlx.read_bytes())
    assert ix.is_index(other)
    _same(count(other, ["war", "peace"], 10), count(tlx, ["war", "peace"], 10))


def _damaged(tlx, tmp_path, change) -> str:
    data = bytearray(tlx.read_bytes())
    data = change(data)
    p = tmp_path / "bad.tlx"
    p.write_bytes(bytes(data))
    return str(p)


def _one_line(path: str, words=("war", "peace")) -> str:
    with pytest.raises(TealeavesError) as e:
        count(path, list(words), 10)
    msg = str(e.value)
    assert "\n" not in msg and "bad.tlx" in msg
    return msg


def test_truncated_index(ref, tmp_path):
    _, tlx = ref
    assert "truncated" in _one_line(_damaged(tlx, tmp_path, lambda d: d[: len(d) // 2]))
    assert "truncated" in _one_line(_damaged(tlx, tmp_path, lambda d: d[:10]))


def test_empty_file_named_tlx(tmp_path):
    p = tmp_path / "bad.tlx"
    p.write_bytes(b"")
    assert "does not start with TLXINDEX" in _one_line(str(p))


def test_text_file_named_tlx(tmp_path):
    p = tmp_path / "bad.tlx"
    p.write_text("war peace\n")
    assert "does not start with TLXINDEX" in _one_line(str(p))


def test_wrong_version(ref, tmp_path):
    _, tlx = ref

    def v9(d):
        d[8:12] = struct.pack("<I", 9)
        return d
    assert "format version 9" in _one_line(_damaged(tlx, tmp_path, v9))


def test_damaged_header(ref, tmp_path):
    _, tlx = ref

    def garble(d):
        hoff = struct.unpack("<Q", bytes(d[-16:-8]))[0]
        d[hoff : hoff + 5] = b"xxxxx"
        return d
    assert "damaged header" in _one_line(_damaged(tlx, tmp_path, garble))


def test_damaged_section_fails_crc(ref, tmp_path):
    _, tlx = ref
    h = ix.ReferenceIndex(tlx).header

    def flip(d):
        off = h["sections"]["doc_lengths"][0]
        d[off] ^= 0xFF
        return d
    assert "CRC-32" in _one_line(_damaged(tlx, tmp_path, flip))


def test_damaged_postings(ref, tmp_path):
    """A byte of a word's postings changed: the query of that word fails its CRC-32 (here also
    its code no longer ends where it should); `verify` (index info --verify) checks them all."""
    _, tlx = ref
    r = ix.ReferenceIndex(tlx)
    g = r.lookup("war")
    start = r.header["sections"]["postings"][0] + int(r.arrays["postings_offsets"][g])

    def flip(d):
        d[start] = 0xFF
        return d
    bad = _damaged(tlx, tmp_path, flip)
    assert "postings of 'war'" in _one_line(bad)
    with pytest.raises(InputFileError, match="postings.*CRC-32"):
        ix.ReferenceIndex(bad).verify()
    ix.ReferenceIndex(tlx).verify()


def test_resumed_build_gives_the_same_file(ref, tmp_path, monkeypatch):
    text, _ = ref
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1700000000")
    whole = tmp_path / "whole.tlx"
    ix.build_index(text, whole, chunk_chars=60_000)
    out = tmp_path / "resumed.tlx"
    done: list[int] = []

    def interrupt(i):
        done.append(i)
        if len(done) == 3:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        ix.build_index(text, out, chunk_chars=60_000, progress=interrupt)
    assert not out.exists() and len(os.listdir(str(out) + ".work")) >= 2 * 3
    again: list[int] = []
    ix.build_index(text, out, chunk_chars=60_000, progress=again.append)
    assert out.read_bytes() == whole.read_bytes()
    assert again and again == list(range(3, 3 + len(again)))  # chunks 0-2 were reused
    assert not os.path.exists(str(out) + ".work")


def test_two_workers_give_the_same_file(ref, tmp_path, monkeypatch):
    text, _ = ref
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1700000000")
    one, two = tmp_path / "one.tlx", tmp_path / "two.tlx"
    ix.build_index(text, one, chunk_chars=60_000, workers=1)
    ix.build_index(text, two, chunk_chars=60_000, workers=2)
    assert one.read_bytes() == two.read_bytes()


def test_bundled_corpus_index_equals_its_counts(tmp_path):
    tlx = tmp_path / "train.tlx"
    ix.build_index("sotu:train", tlx)
    targets = sorted({w for t in _models()[0] for w in t})
    _same(count("sotu:train", targets, 110), count(tlx, targets, 110))
    assert ix.ReferenceIndex(tlx).header["corpus"]["name"] == "sotu:train"


def test_max_memory_refused_in_advance(ref, tmp_path):
    text, _ = ref
    with pytest.raises(MethodError, match="indexing needs about .* GiB.*--max-memory is 0.01 GB"):
        ix.build_index(text, tmp_path / "x.tlx", max_memory=0.01)
    assert not (tmp_path / "x.tlx").exists()


def _cli(args, capsys):
    from tealeaves.cli import main

    code = main(args)
    out = capsys.readouterr()
    return code, out.out, out.err


def test_cli_build_info_and_coherence(ref, tmp_path, capsys):
    text, _ = ref
    tlx = tmp_path / "cli.tlx"
    code, _, err = _cli(["index", "build", str(text), "-o", str(tlx)], capsys)
    assert code == 0 and tlx.exists()
    code, out, _ = _cli(["index", "info", str(tlx), "--verify"], capsys)
    assert code == 0 and "sotu.txt" in out and f"{DOCS:,}" in out and "postings verified" in out
    topics = tmp_path / "topics.txt"
    topics.write_text("\n".join(" ".join(t) for t in _models()[2]) + "\n")
    res = {}
    for name, r in (("text", text), ("index", tlx)):
        j = tmp_path / f"{name}.json"
        code, _, _ = _cli(["coherence", str(topics), str(r), "--measure", "umass,npmi,c_v",
                           "--json", str(j)], capsys)
        assert code == 0
        res[name] = [x["topics"] for x in json.loads(j.read_text())["results"]]
    assert res["text"] == res["index"]


def test_cli_damaged_index_is_one_line(ref, tmp_path, capsys):
    _, tlx = ref
    bad = tmp_path / "bad.tlx"
    bad.write_bytes(tlx.read_bytes()[:1000])
    topics = tmp_path / "topics.txt"
    topics.write_text("war peace nation\n")
    code, _, err = _cli(["coherence", str(topics), str(bad)], capsys)
    assert code == 2 and err.count("\n") == 1 and "truncated" in err
    code, _, err = _cli(["index", "info", str(bad)], capsys)
    assert code == 2 and err.count("\n") == 1 and err.startswith("tealeaves: error: ")


def test_evaluate_reference_index(ref, tmp_path):
    """evaluate --reference ref.tlx: the coherence columns equal those from the text."""
    import tealeaves as tl

    text, tlx = ref
    c = datasets.sotu().heldout
    held = tmp_path / "held.txt"
    held.write_text("".join(" ".join(c.vocab[i] for i in doc) + "\n" for doc in list(c)[:3]))
    model = datasets.sotu_model("sotu-20-asym")
    rows = {}
    for name, r in (("text", text), ("index", tlx)):
        res = tl.evaluate([model], heldout=held, reference=r, runs=1, coherence=("umass", "npmi", "c_v"),
                          particles=5)
        rows[name] = (res.rows[0]["coherence"], res.rows[0]["auto_model_precision"])
    assert set(rows["text"][0]) == {"umass", "npmi", "c_v"} and rows["text"] == rows["index"]


def test_dask_build_gives_the_same_file(ref, tmp_path, monkeypatch):
    """Over a Dask cluster (chunks sent in groups, results back to this process): the same file."""
    pytest.importorskip("distributed")
    from distributed import LocalCluster

    from tealeaves.util.parallel import use_dask

    text, _ = ref
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1700000000")
    here, there = tmp_path / "here.tlx", tmp_path / "there.tlx"
    ix.build_index(text, here, chunk_chars=60_000)
    with LocalCluster(n_workers=1, threads_per_worker=1, processes=True, dashboard_address=None) as c, \
            use_dask(c.scheduler_address, min_seconds=0) as session:
        ix.build_index(text, there, chunk_chars=60_000)
    assert session.record["ran"] == "cluster"
    assert here.read_bytes() == there.read_bytes()


def test_fuzzed_index_is_read_or_refused_in_one_line(repeats, tmp_path_factory):
    """Random byte changes, cuts and insertions anywhere in an index: every query either answers
    the undamaged index's counts or raises a one-line TealeavesError; never another exception,
    never other numbers."""
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    _, tlx, targets = repeats
    good = tlx.read_bytes()
    folder = tmp_path_factory.mktemp("fuzz")
    cases = (("exact", None), ("gensim", 10), ("context", 5))
    want = {c: count(tlx, targets, c[1], rule=c[0]) for c in cases}

    @settings(max_examples=150, derandomize=True, deadline=None, suppress_health_check=list(HealthCheck))
    @given(st.lists(st.tuples(st.integers(0, len(good) - 1), st.integers(0, 255), st.sampled_from("xcd")),
                    min_size=1, max_size=4))
    def run(edits):
        data = bytearray(good)
        for at, value, kind in edits:
            at = min(at, max(len(data) - 1, 0))
            if kind == "x" and data:
                data[at] = value
            elif kind == "c":
                del data[at:]
            else:
                data[at:at] = bytes([value])
        p = folder / "fuzz.tlx"
        p.write_bytes(bytes(data))
        reference._OPEN.clear()
        for rule, window in cases:
            try:
                got = count(p, targets, window, rule=rule)
            except TealeavesError as exc:
                assert "\n" not in str(exc)
            else:
                _same(got, want[rule, window])

    run()
