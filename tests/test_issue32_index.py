"""Issue 32, point 3: the reference index (.tlx) against forged files whose checksums are right, and
its build against a linked or foreign work folder, a full disk and a second build of one output.

The forged files are written here from the documented format (docs/guide/coherence.md, "A
reference index"), not by the index's own writer: every section re-encoded, every CRC-32 made
right, so only the reader's own checks of what the sections hold can refuse them."""

from __future__ import annotations

import errno
import json
import os
import shutil
import struct
import subprocess
import sys
import textwrap
import time
import zlib
from pathlib import Path

import numpy as np
import pytest
from clirun import one_line_error, run_cli

from tealeaves.coherence import count
from tealeaves.coherence import index as ix
from tealeaves.coherence.index import reference
from tealeaves.errors import InputFileError

SRC = str(Path(__file__).resolve().parent.parent / "src")
ORDER = ("postings", "vocab", "vocab_offsets", "postings_offsets", "word_counts", "doc_lengths",
         "postings_crc")
DTYPES = {"postings": "u1", "vocab": "u1", "vocab_offsets": "<u8", "postings_offsets": "<u8",
          "word_counts": "<u8", "doc_lengths": "<i8", "postings_crc": "<u4"}
WORDS = [a + b for a in "abcdef" for b in "abcdef"]  # 36 words of two letters: sorted, equal lengths
REFUSED = "not a usable tealeaves reference index"


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """A text of 60 documents of 12 two-letter words, its index, and a topics file."""
    d = tmp_path_factory.mktemp("i32")
    rng = np.random.default_rng(32)
    text = d / "ref.txt"
    text.write_text("".join(" ".join(rng.choice(WORDS, 12)) + "\n" for _ in range(60)), encoding="utf-8")
    tlx = d / "ref.tlx"
    ix.build_index(text, tlx, chunk_chars=300)
    (d / "topics.txt").write_text("aa ab ac ad\nba bb bc bd\n", encoding="utf-8")
    return d


def read_sections(path: Path) -> tuple[dict, dict[str, np.ndarray]]:
    """The header and every section of a .tlx, read by the documented layout."""
    data = path.read_bytes()
    hoff = struct.unpack("<Q", data[-16:-8])[0]
    header = json.loads(data[hoff:-16])
    arrays = {name: np.frombuffer(data[off : off + length], DTYPES[name]).copy()
              for name, (off, length, _, _) in header["sections"].items()}
    return header, arrays


def forge(path: Path, header: dict, arrays: dict[str, np.ndarray]) -> Path:
    """A .tlx of these sections and header, every CRC-32 right (each word's postings' too)."""
    post, offs = arrays["postings"], arrays["postings_offsets"].astype(np.int64)
    arrays = {**arrays, "postings_crc": np.array(
        [zlib.crc32(post[offs[g] : offs[g + 1]].tobytes()) for g in range(len(offs) - 1)], "<u4")}
    out = bytearray(b"TLXINDEX" + struct.pack("<II", 1, 0))
    sections = {}
    for name in ORDER:
        out += b"\0" * (-len(out) % 8)
        raw = np.ascontiguousarray(arrays[name]).astype(DTYPES[name]).tobytes()
        sections[name] = [len(out), len(raw), DTYPES[name], zlib.crc32(raw)]
        out += raw
    hoff = len(out)
    out += json.dumps({**header, "sections": sections}).encode("utf-8")
    out += struct.pack("<Q", hoff) + b"TLXINDEX"
    path.write_bytes(bytes(out))
    reference._OPEN.clear()
    return path


def build_error(argv: list, *parts: str) -> str:
    """The build fails with status 2: its last stderr line the one error, holding every part (a
    line saying what the build will cost may come before it)."""
    code, _, err = run_cli(argv)
    lines = err.strip().splitlines()
    errors = [line for line in lines if line.startswith("tealeaves: error: ")]
    assert code == 2 and errors == lines[-1:], (code, err)
    for part in parts:
        assert part in errors[0], (part, errors[0])
    return errors[0]


def refused_everywhere(built: Path, bad: Path, *parts: str) -> None:
    """Opening, verifying, counting and both commands refuse `bad` in one line naming it."""
    with pytest.raises(InputFileError, match=REFUSED) as exc:
        ix.ReferenceIndex(bad).verify()
    assert "\n" not in str(exc.value) and str(bad) in str(exc.value)
    for part in parts:
        assert part in str(exc.value), (part, str(exc.value))
    with pytest.raises(InputFileError, match=REFUSED):
        count(bad, ["aa", "ab"], 10, rule="exact")
    one_line_error(["index", "info", bad, "--verify"], REFUSED, *parts)
    one_line_error(["coherence", built / "topics.txt", bad], REFUSED)


def test_the_forger_writes_what_the_reader_accepts(built, tmp_path):
    """The forger itself: the index's sections unchanged give an index that verifies and counts
    as the original does (so each case below refuses only what it changed)."""
    header, arrays = read_sections(built / "ref.tlx")
    same = forge(tmp_path / "same.tlx", header, arrays)
    ix.ReferenceIndex(same).verify()
    a = count(built / "ref.tlx", ["aa", "ab", "fe"], 5, rule="gensim")
    b = count(same, ["aa", "ab", "fe"], 5, rule="gensim")
    assert (a.single == b.single).all() and (a.joint == b.joint).all()


# ---------------------------------------------------------------- declared counts

def _raise_a_count(built: Path, tmp_path: Path, by: int, verify_only: bool = False) -> Path:
    """Word 'ab' declares `by` more occurrences; a document and the header's tokens as many more,
    so every sum still adds up."""
    header, arrays = read_sections(built / "ref.tlx")
    arrays["word_counts"][1] += np.uint64(by)
    arrays["doc_lengths"][0] += by
    header["corpus"]["tokens"] += by
    return forge(tmp_path / "big.tlx", header, arrays)


def test_a_declared_count_beyond_what_the_file_holds_is_refused(built, tmp_path):
    """A word declaring 2^40 occurrences in a few bytes of postings (a query of it allocated
    8 TiB; --verify allocated 128 GiB for the corpus's positions): refused when opened."""
    bad = _raise_a_count(built, tmp_path, 2**40)
    refused_everywhere(built, bad, "'ab'", "occurrences")


def test_counts_that_wrap_are_refused(built, tmp_path):
    """Word counts whose uint64 sum wraps back to the tokens (2^64 - 5 added to one, 5 to
    another): refused, never summed modulo 2^64 (on main a query's decoding refused it already)."""
    header, arrays = read_sections(built / "ref.tlx")
    with np.errstate(over="ignore"):
        arrays["word_counts"][1] += np.uint64(2**64 - 5)
        arrays["word_counts"][2] += np.uint64(5)
    refused_everywhere(built, forge(tmp_path / "wrap.tlx", header, arrays))


def test_document_lengths_that_wrap_are_refused(built, tmp_path):
    """Four documents each 2^62 tokens longer: their int64 sum wraps back to the tokens."""
    header, arrays = read_sections(built / "ref.tlx")
    arrays["doc_lengths"][:4] += 2**62
    refused_everywhere(built, forge(tmp_path / "wrap.tlx", header, arrays), "document lengths")


def test_header_counts_must_be_whole_numbers(built, tmp_path):
    """The header's documents and tokens as a float, a boolean or text: refused (read by
    records.strict_int), not turned into numbers by int()."""
    header, arrays = read_sections(built / "ref.tlx")
    for field, value in (("tokens", float(header["corpus"]["tokens"])), ("documents", True),
                         ("tokens", 1e300)):
        forged = json.loads(json.dumps(header))
        forged["corpus"][field] = value
        bad = forge(tmp_path / "h.tlx", forged, arrays)
        with pytest.raises(InputFileError, match=REFUSED) as exc:
            ix.ReferenceIndex(bad)
        assert field in str(exc.value)


# ---------------------------------------------------------------- the vocabulary

def test_an_unsorted_vocabulary_is_refused(built, tmp_path):
    """Two words swapped in the vocabulary (each keeps the other's postings): a query of either
    found nothing (binary search) and --verify passed. Refused when opened."""
    header, arrays = read_sections(built / "ref.tlx")
    v = arrays["vocab"]
    v[2:4], v[4:6] = v[4:6].copy(), v[2:4].copy()  # "ab" <-> "ac"
    refused_everywhere(built, forge(tmp_path / "unsorted.tlx", header, arrays), "vocabulary", "'ac'")


def test_a_repeated_word_is_refused(built, tmp_path):
    """A word twice in the vocabulary ('ab' where 'ac' was): counts took either's postings."""
    header, arrays = read_sections(built / "ref.tlx")
    arrays["vocab"][4:6] = arrays["vocab"][2:4]
    refused_everywhere(built, forge(tmp_path / "twice.tlx", header, arrays), "vocabulary", "'ab'")


def _miscount_last_word(header: dict, arrays: dict) -> None:
    """The last word declares one more occurrence (the sums still add up): `--verify` names it."""
    arrays["word_counts"][-1] += np.uint64(1)
    arrays["doc_lengths"][0] += 1
    header["corpus"]["tokens"] += 1


def test_a_vocabulary_that_is_not_utf8_is_refused(built, tmp_path):
    """A byte of the last word made 0xFF (order kept): a word no query can name; and when its
    postings do not fit, `--verify` died naming it (UnicodeDecodeError, a traceback)."""
    header, arrays = read_sections(built / "ref.tlx")
    arrays["vocab"][-1] = 0xFF
    _miscount_last_word(header, arrays)
    refused_everywhere(built, forge(tmp_path / "bytes.tlx", header, arrays), "UTF-8")


def test_a_word_boundary_inside_a_character_is_refused(built, tmp_path):
    """The last two words made b"f\\xc3" and b"\\xa9x": together "féx", each on its own not UTF-8
    (and `--verify`, naming the last, died of it)."""
    header, arrays = read_sections(built / "ref.tlx")
    arrays["vocab"][-4:] = [0x66, 0xC3, 0xA9, 0x78]  # "fe", "ff" become b"f\xc3", b"\xa9x": in order
    _miscount_last_word(header, arrays)
    refused_everywhere(built, forge(tmp_path / "cut.tlx", header, arrays), "UTF-8")


def test_a_real_index_with_any_words_still_opens(tmp_path):
    """What a build writes passes every new check: non-ASCII words; one word in one document."""
    for name, docs in (("one", ["x"]), ("utf", ["é ü 日本 x", "ü x"])):
        out = tmp_path / f"{name}.tlx"
        ix.build_index(docs, out)
        r = ix.ReferenceIndex(out)
        r.verify()
        assert r.lookup("x") >= 0


# ---------------------------------------------------------------- building: the work folder

def test_a_linked_work_folder_is_never_followed(built, tmp_path):
    """OUT.work a symbolic link to another folder holding a file of a chunk's name: the build
    wrote its chunks there and replaced the file. Refused, the folder untouched."""
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "chunk-000000.pos").write_text("precious", encoding="utf-8")
    out = tmp_path / "out.tlx"
    os.symlink(victim, str(out) + ".work")
    build_error(["index", "build", built / "ref.txt", "-o", out], "out.tlx.work", "symbolic link")
    assert sorted(os.listdir(victim)) == ["chunk-000000.pos"]
    assert (victim / "chunk-000000.pos").read_text(encoding="utf-8") == "precious"
    assert not out.exists()


def test_a_file_where_the_work_folder_goes_is_named(built, tmp_path):
    out = tmp_path / "out.tlx"
    Path(str(out) + ".work").write_text("mine", encoding="utf-8")
    build_error(["index", "build", built / "ref.txt", "-o", out], "out.tlx.work", "not a folder")
    assert Path(str(out) + ".work").read_text(encoding="utf-8") == "mine"


def test_a_linked_temporary_chunk_file_is_not_written_through(built, tmp_path):
    """A symbolic link planted in the work folder under a chunk's temporary name: the build
    wrote through it into the file it names. Now the link is replaced, the file untouched."""
    out = tmp_path / "out.tlx"
    work = Path(str(out) + ".work")
    work.mkdir()
    victim = tmp_path / "victim.txt"
    victim.write_text("precious", encoding="utf-8")
    for name in ("chunk-000000.pos.tmp", "chunk-000000.npz.tmp"):
        os.symlink(victim, work / name)
    code, _, err = run_cli(["index", "build", built / "ref.txt", "-o", out])
    assert code == 0, err
    assert victim.read_text(encoding="utf-8") == "precious"
    ix.ReferenceIndex(out).verify()


def test_files_of_others_in_the_work_folder_are_kept(built, tmp_path):
    """The work folder removed after a build held a file the build did not make: it was deleted
    with the folder. Now only the build's own chunk files go; the folder and the file stay."""
    out = tmp_path / "out.tlx"
    work = Path(str(out) + ".work")
    work.mkdir()
    (work / "notes.txt").write_text("mine", encoding="utf-8")
    code, _, err = run_cli(["index", "build", built / "ref.txt", "-o", out])
    assert code == 0, err
    assert sorted(os.listdir(work)) == ["notes.txt"]


# ---------------------------------------------------------------- building: a full disk

BIG_WORDS = 3000


def _big_text(path: Path) -> Path:
    rng = np.random.default_rng(7)
    words = [f"w{i}" for i in range(BIG_WORDS)]
    path.write_text("".join(" ".join(rng.choice(words, 50)) + "\n" for _ in range(3000)), encoding="utf-8")
    return path


CHILD = textwrap.dedent("""
    import json, os, resource, signal, sys
    sys.path.insert(0, {src!r})
    from tealeaves.coherence.index import build_index
    from tealeaves.cli import main
    import contextlib, io
    build_index(["warm up the kernels"], {warm!r})  # compiled and cached before the limit
    os.unlink({warm!r})
    if {fsize}:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails with EFBIG
        resource.setrlimit(resource.RLIMIT_FSIZE, ({fsize}, {fsize}))
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        code = main(["index", "build", {text!r}, "-o", {out!r}])
    left = sorted(os.path.relpath(os.path.join(d, f), {folder!r}) for d, _, fs in os.walk({folder!r})
                  for f in fs)
    print(json.dumps({{"code": code, "err": err.getvalue(), "left": left}}))
""")


def _child(text: Path, folder: Path, fsize: int = 0, mount: int = 0) -> dict:
    """Build `text` into `folder`/ref.tlx in a child process: under a file size limit of `fsize`
    bytes, or in a tmpfs of `mount` bytes mounted over `folder` in a private mount namespace
    (`unshare -m` as root, else `unshare -rm`). Returns its status, stderr and the files left; None
    when no namespace can be made here."""
    out = folder / "ref.tlx"
    script = CHILD.format(src=SRC, warm=str(folder.parent / f"warm-{folder.name}.tlx"), fsize=fsize,
                          text=str(text), out=str(out), folder=str(folder))
    cmd = [sys.executable, "-c", script]
    if mount:
        flags = _namespace(folder)
        if flags is None:
            return None
        mounted = f"mount -t tmpfs -o size={mount} tmpfs {folder} && exec \"$0\" \"$@\""
        cmd = ["unshare", *flags, "sh", "-c", mounted, *cmd]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout.strip().splitlines()[-1])


def _namespace(folder: Path) -> list[str] | None:
    """The `unshare` flags that let a tmpfs be mounted over `folder` here (a private mount
    namespace: `-m` as root, `-r -m` through a user namespace), or None."""
    if shutil.which("unshare") is None:
        return None
    for flags in (["-m"], ["-r", "-m"]):
        probe = subprocess.run(["unshare", *flags, "mount", "-t", "tmpfs", "-o", "size=4096", "tmpfs",
                                str(folder)], capture_output=True, timeout=60)
        if probe.returncode == 0:
            return flags
    return None


def _clean_failure(result: dict, cause: str) -> None:
    lines = result["err"].strip().splitlines()
    assert result["code"] == 2, result
    error = [line for line in lines if line.startswith("tealeaves: error: ")]
    assert len(error) == 1 and error == lines[-1:], result["err"]
    assert "ref.tlx" in error[0] and cause.lower() in error[0].lower(), error[0]
    half = [f for f in result["left"] if f.endswith(".tmp") or "/." in f or f.startswith(".")]
    assert not half, result["left"]
    assert "ref.tlx" not in result["left"] and "ref.tlx.lock" not in result["left"]


@pytest.mark.parametrize("room", ["chunks", "merge"])
def test_a_full_disk_names_the_file_and_leaves_no_half_written_chunk(tmp_path, room):
    """A real full disk (a tmpfs of 48 KiB: the first chunk does not fit; of the finished chunks'
    size and a half: the merge does not): one line naming the file and "No space left on device",
    no half-written file, the finished chunks kept for the next run. The test mounts the tmpfs in
    a private mount namespace; where none can be made it runs under a file size limit instead."""
    text = _big_text(tmp_path / "big.txt")
    whole = tmp_path / "whole"
    whole.mkdir()
    ix.build_index(text, whole / "ref.tlx", keep_work=True)
    work_bytes = sum(f.stat().st_size for f in (whole / "ref.tlx.work").iterdir())
    size = 48 * 1024 if room == "chunks" else work_bytes + (whole / "ref.tlx").stat().st_size // 2 + 8192
    folder = tmp_path / "disk"
    folder.mkdir()
    result = _child(text, folder, mount=size)
    if result is None:  # no mount namespace here: the same failure through a file size limit
        result = _child(text, folder, fsize=min(size, 40_000))
        _clean_failure(result, "File too large")
    else:
        _clean_failure(result, "No space left on device")
        if room == "merge":
            assert any(f.startswith("ref.tlx.work/chunk-") for f in result["left"]), result["left"]


def test_a_file_size_limit_names_the_file(tmp_path):
    """RLIMIT_FSIZE (a quota): the write fails with EFBIG, named with its file, nothing half-written."""
    text = _big_text(tmp_path / "big.txt")
    folder = tmp_path / "limited"
    folder.mkdir()
    _clean_failure(_child(text, folder, fsize=30_000), "File too large")


# ---------------------------------------------------------------- building: two at once

HOLD = textwrap.dedent("""
    import os, sys, time
    sys.path.insert(0, {src!r})
    os.environ["SOURCE_DATE_EPOCH"] = "1700000000"
    from tealeaves.coherence.index import build_index

    def wait(i):
        if i == 0:
            open({started!r}, "w").close()
            t0 = time.monotonic()
            while not os.path.exists({go!r}) and time.monotonic() - t0 < 120:
                time.sleep(0.05)

    build_index({text!r}, {out!r}, chunk_chars=300, progress=wait)
""")


def test_a_second_build_of_one_output_is_refused_while_the_first_runs(built, tmp_path, monkeypatch):
    """Two builds to one output: the second ran alongside, shared the first's chunks and removed
    its work folder. Now it is refused at once, naming the other build's process; the first
    finishes and writes the same file as a build alone."""
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1700000000")
    out, started, go = tmp_path / "ref.tlx", tmp_path / "started", tmp_path / "go"
    first = subprocess.Popen([sys.executable, "-c", HOLD.format(
        src=SRC, started=str(started), go=str(go), text=str(built / "ref.txt"), out=str(out))])
    try:
        t0 = time.monotonic()
        while not started.exists() and first.poll() is None and time.monotonic() - t0 < 120:
            time.sleep(0.05)
        assert started.exists(), "the first build did not start"
        line = build_error(["index", "build", built / "ref.txt", "-o", out], "ref.tlx",
                              "another build", f"process {first.pid}")
        assert "lock" in line
    finally:
        go.touch()
        assert first.wait(timeout=120) == 0
    alone = tmp_path / "alone.tlx"
    ix.build_index(built / "ref.txt", alone, chunk_chars=300)
    assert out.read_bytes() == alone.read_bytes()
    assert not Path(str(out) + ".lock").exists() and not Path(str(out) + ".work").exists()


def test_a_lock_left_by_a_killed_build_does_not_stop_the_next(built, tmp_path):
    """A build killed outright (SIGKILL) leaves its lock file: the next build takes it (the lock
    is the kernel's, released with the process), and finishes."""
    out = tmp_path / "ref.tlx"
    Path(str(out) + ".lock").write_text("pid 999999999 on nowhere\n", encoding="utf-8")
    code, _, err = run_cli(["index", "build", built / "ref.txt", "-o", out])
    assert code == 0, err
    ix.ReferenceIndex(out).verify()
    assert not Path(str(out) + ".lock").exists()


def test_a_file_system_without_locks_builds_unlocked_and_says_so(built, tmp_path, monkeypatch, capsys):
    """flock refused by the file system (ENOLCK): the build runs, and says a second would not be
    refused."""
    from tealeaves.files import lock

    def no_locks(fd, operation):
        raise OSError(errno.ENOLCK, os.strerror(errno.ENOLCK))

    monkeypatch.setattr(lock.fcntl, "flock", no_locks)
    out = tmp_path / "ref.tlx"
    ix.build_index(built / "ref.txt", out, chunk_chars=300)
    assert f"{out}.lock: cannot lock (No locks available)" in capsys.readouterr().err
    ix.ReferenceIndex(out).verify()
    assert not Path(str(out) + ".lock").exists()


def test_a_linked_lock_file_is_not_written_through(built, tmp_path):
    out = tmp_path / "ref.tlx"
    victim = tmp_path / "victim.txt"
    victim.write_text("precious", encoding="utf-8")
    os.symlink(victim, str(out) + ".lock")
    build_error(["index", "build", built / "ref.txt", "-o", out], "ref.tlx.lock", "symbolic link")
    assert victim.read_text(encoding="utf-8") == "precious"
