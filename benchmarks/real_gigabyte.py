"""At least 1 GB of real, non-repeated text, assembled offline from Debian packages, for the reference
index benchmark (`benchmarks/coherence_index.py` builds it if missing).

Setup, once (Debian 12; about 290 MB downloaded, no network needed afterwards):

    apt-get install linux-source-6.1 gcc-12-source glibc-source binutils-source gdb-source

Sources, in this order: the real corpus of `benchmarks/real_corpus.py` (every paragraph it finds:
State of the Union, the standard library's docstrings, /usr/share/doc), then every text file in the
Linux kernel's source tarball (`/usr/src/linux-source-*.tar.xz`: C sources, headers, the kernel's
Documentation, scripts), then those of GCC, the GNU C library, binutils and GDB (`PACKAGES`: source
code, its comments, manuals in Texinfo, change logs), members in archive order. A member
whose first 8 KiB hold a NUL byte is binary and left out; text is decoded as UTF-8, undecodable bytes
replaced. Each text is split into paragraphs at blank lines, tokenized as the real corpus is
(`tealeaves.util.text.tokenize`, scikit-learn's English stop words removed), and a paragraph is kept
if it has at least `MIN_TOKENS` tokens and is not an exact copy of one kept before (licence headers
repeat across files: only the first copy stays). Written one paragraph per line, tokens separated by
single spaces; what was written (bytes, paragraphs, tokens per source, the packages' versions, the
SHA-256) is returned and printed.

    python benchmarks/real_gigabyte.py [--out /tmp/tealeaves_index_bench/real_1gb.txt]
"""

from __future__ import annotations

import argparse
import glob
import hashlib
import json
import re
import subprocess
import tarfile
from collections.abc import Iterator
from pathlib import Path

from real_corpus import MIN_TOKENS
from real_corpus import build as real_corpus

DEFAULT_OUT = "/tmp/tealeaves_index_bench/real_1gb.txt"
PACKAGES = {"linux": ("linux-source-6.1", "/usr/src/linux-source-*.tar.xz"),
            "gcc": ("gcc-12-source", "/usr/src/gcc-*/gcc-*.tar.*"),
            "glibc": ("glibc-source", "/usr/src/glibc/glibc-*.tar.*"),
            "binutils": ("binutils-source", "/usr/src/binutils/binutils-*.tar.*"),
            "gdb": ("gdb-source", "/usr/src/gdb.tar.*")}


def archive_texts(path: str) -> Iterator[str]:
    """The text of every text member of the tar archive at `path`, in archive order."""
    with tarfile.open(path, "r|*") as tf:
        for member in tf:
            if not member.isfile():
                continue
            data = tf.extractfile(member).read()
            if b"\0" not in data[:8192]:
                yield data.decode("utf-8", "replace")


def paragraphs(texts: Iterator[str], stop: set[str]) -> Iterator[list[str]]:
    from tealeaves.util.text import tokenize

    for text in texts:
        for para in re.split(r"\n\s*\n", text):
            toks = [t for t in tokenize(para) if t not in stop]
            if len(toks) >= MIN_TOKENS:
                yield toks


def version(package: str) -> str:
    out = subprocess.run(["dpkg-query", "-W", "-f", "${Version}", package], capture_output=True, text=True)
    return out.stdout.strip() or "not installed"


def build(out: str) -> dict:
    """Write the corpus to `out`; return what it holds."""
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

    Path(out).parent.mkdir(parents=True, exist_ok=True)
    small = out + ".real_corpus.txt"
    try:  # every paragraph there is: ask for more than exist, then for what was found
        real = real_corpus(small, paragraphs=10**9)
    except SystemExit as exc:
        real = real_corpus(small, paragraphs=int(str(exc).split()[1]))
    archives = {}
    for name, (package, pattern) in PACKAGES.items():
        found = sorted(glob.glob(pattern))
        if not found:
            raise SystemExit(f"no {pattern}: apt-get install {package}")
        archives[name] = found[0]
    stop = set(ENGLISH_STOP_WORDS)
    seen: set[bytes] = set()
    sha = hashlib.sha256()
    stats: dict[str, dict] = {}
    nbytes = 0
    with open(out, "wb") as fh:
        def write(line: bytes, source: str, ntok: int) -> None:
            nonlocal nbytes
            key = hashlib.blake2b(line, digest_size=12).digest()
            if key in seen:
                stats[source]["duplicates"] += 1
                return
            seen.add(key)
            fh.write(line)
            sha.update(line)
            nbytes += len(line)
            stats[source]["paragraphs"] += 1
            stats[source]["tokens"] += ntok

        stats["real_corpus"] = {"paragraphs": 0, "tokens": 0, "duplicates": 0}
        with open(small, "rb") as src:
            for line in src:
                write(line, "real_corpus", len(line.split()))
        for name, path in archives.items():
            stats[name] = {"paragraphs": 0, "tokens": 0, "duplicates": 0, "archive": path,
                           "package": PACKAGES[name][0], "version": version(PACKAGES[name][0])}
            for toks in paragraphs(archive_texts(path), stop):
                write((" ".join(toks) + "\n").encode("utf-8"), name, len(toks))
    Path(small).unlink()
    return {"path": out, "bytes": nbytes, "paragraphs": sum(s["paragraphs"] for s in stats.values()),
            "tokens": sum(s["tokens"] for s in stats.values()), "sources": stats, "sha256": sha.hexdigest(),
            "real_corpus": {k: v for k, v in real.items() if k != "path"},
            "min_tokens_paragraph": MIN_TOKENS}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=DEFAULT_OUT)
    args = ap.parse_args()
    info = build(args.out)
    Path(args.out + ".json").write_text(json.dumps(info, indent=1) + "\n")
    print(json.dumps(info, indent=1))


if __name__ == "__main__":
    main()
