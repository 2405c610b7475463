"""Real corpora for the experiments and benchmarks, built offline and deterministically from what a
Debian machine has (nothing downloaded):

- `sotu()`: the bundled State of the Union paragraphs (training then held-out part; already
  tokenized, stop words removed, 3,000-word vocabulary: scripts/make_sotu.py).
- `gnu_info()`: the paragraphs of the GNU manuals in Info format under /usr/share/info (coreutils,
  findutils, grep, sed, gzip, diffutils, gnupg, wget, gettext, ... as installed: Debian 12 ships
  them with those packages), files in sorted order, node headers (`File: ... Node: ...`), menu
  entries (`* Name::`) and the index markers dropped, split at blank lines, tokenized as the SOTU
  paragraphs were (`tealeaves.util.text.tokenize`, scikit-learn's English stop words removed),
  words seen fewer than `MIN_COUNT` times dropped, paragraphs with fewer than `MIN_TOKENS` tokens
  left out. Which manuals exist depends on the packages installed: the files read and the sha256
  of the result are returned with it (`describe`), and the experiments record them.

- `man_pages()`: the paragraphs of the Linux manual pages in sections 2-8 under /usr/share/man
  (Debian's `manpages` package and those of the packages installed: system calls, library
  functions, file formats, overviews, administration), parsed from their groff source: comment
  lines, tables (`.TS`/`.TE`) and examples (`.EX`/`.EE`, `.nf`/`.fi`) dropped, the sections NAME,
  SYNOPSIS, SEE ALSO and COLOPHON left out, the text arguments of font macros (`.B`, `.BR`, ...)
  kept, escapes (`\\fB`, `\\-`, ...) removed, a paragraph ending at `.PP`, `.LP`, `.P`, `.SH`
  or `.SS`; then tokenized as the Info paragraphs.

    python experiments/corpora.py gnu-info /tmp/gnu_info.txt   # one paragraph per line
    python experiments/corpora.py man-pages /tmp/man_pages.txt
"""

from __future__ import annotations

import collections
import gzip
import hashlib
import re
import sys
from pathlib import Path

INFO = Path("/usr/share/info")
MIN_TOKENS = 12
MIN_COUNT = 5


def sotu() -> list[list[str]]:
    from tealeaves import datasets

    corpus = datasets.sotu()
    return [[part.vocab[i] for i in doc] for part in (corpus.train, corpus.heldout) for doc in part]


def _info_files(root: Path) -> list[Path]:
    return sorted(p for p in root.glob("*.info*.gz") if p.is_file() and not p.is_symlink())


def _paragraphs(text: str):
    for para in re.split(r"\n[ \t]*\n", text):
        lines = [ln for ln in para.splitlines()
                 if not ln.startswith(("File:", "\x1f", "* ", "Tag Table:", "End Tag Table"))
                 and not re.fullmatch(r"[-=*.]{3,}\s*", ln)]
        if lines:
            yield "\n".join(lines)


def gnu_info(root: Path = INFO) -> list[list[str]]:
    """The GNU Info manuals' paragraphs as token lists (see the module notes)."""
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

    from tealeaves.util.text import tokenize

    docs = []
    for path in _info_files(root):
        with gzip.open(path, "rt", encoding="utf-8", errors="replace") as fh:
            text = fh.read()
        for para in _paragraphs(text):
            docs.append([t for t in tokenize(para) if t not in ENGLISH_STOP_WORDS])
    counts = collections.Counter(w for d in docs for w in d)
    docs = [[w for w in d if counts[w] >= MIN_COUNT] for d in docs]
    return [d for d in docs if len(d) >= MIN_TOKENS]


MAN = Path("/usr/share/man")
MAN_SECTIONS = ("man2", "man3", "man4", "man5", "man7", "man8")
_SKIP_SECTIONS = {"NAME", "SYNOPSIS", "SEE ALSO", "COLOPHON"}
_FONT_MACROS = ("B", "I", "BR", "IR", "RB", "RI", "BI", "IB", "SM", "SB")


def _man_files(root: Path = MAN) -> list[Path]:
    return sorted(p for s in MAN_SECTIONS for p in (root / s).glob("*.gz")
                  if p.is_file() and not p.is_symlink())


def _man_text(line: str) -> str:
    line = re.sub(r"\\f(\[[^]]*\]|\(..|.)", "", line)  # font changes
    line = re.sub(r"\\\*?(\(..|\[[^]]*\])", " ", line)  # named characters and strings
    return re.sub(r"\\.", " ", line)  # any other escape


def _man_paragraphs(source: str):
    para: list[str] = []
    skip_section = skipping = False
    for line in source.splitlines():
        if line.startswith((".\\\"", "'\\\"", '.\\"')):
            continue
        macro = re.match(r"[.'](\S+)\s*(.*)", line)
        if macro is None:
            if not (skip_section or skipping):
                para.append(_man_text(line))
            continue
        name, rest = macro.groups()
        if name in ("TS", "EX", "nf"):
            skipping = True
        elif name in ("TE", "EE", "fi"):
            skipping = False
        elif name in ("SH", "SS", "PP", "LP", "P"):
            if para:
                yield " ".join(para)
            para = []
            if name == "SH":
                skip_section = rest.strip('" ').upper() in _SKIP_SECTIONS
        elif name in _FONT_MACROS and not (skip_section or skipping):
            para.append(_man_text(rest.replace('"', " ")))
    if para:
        yield " ".join(para)


def man_pages(root: Path = MAN) -> list[list[str]]:
    """The Linux manual pages' paragraphs as token lists (see the module notes)."""
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

    from tealeaves.util.text import tokenize

    docs = []
    for path in _man_files(root):
        with gzip.open(path, "rt", encoding="utf-8", errors="replace") as fh:
            source = fh.read()
        if source.startswith(".so ") and len(source.splitlines()) <= 2:
            continue  # a link to another page
        for para in _man_paragraphs(source):
            docs.append([t for t in tokenize(para) if t not in ENGLISH_STOP_WORDS])
    counts = collections.Counter(w for d in docs for w in d)
    docs = [[w for w in d if counts[w] >= MIN_COUNT] for d in docs]
    return [d for d in docs if len(d) >= MIN_TOKENS]


def describe(docs: list[list[str]], root: Path | None = INFO) -> dict:
    """What a corpus is: documents, tokens, words, the sha256 of its text (one document per line)
    and, for the Info corpus, the files read."""
    h = hashlib.sha256()
    for d in docs:
        h.update((" ".join(d) + "\n").encode("utf-8"))
    out = {"documents": len(docs), "tokens": sum(map(len, docs)), "words": len({w for d in docs for w in d}),
           "sha256": h.hexdigest()}
    if root is not None:
        out["files"] = [p.name for p in _info_files(root)]
    return out


def write(docs: list[list[str]], path: str) -> None:
    with open(path, "w", encoding="utf-8") as fh:
        fh.writelines(" ".join(d) + "\n" for d in docs)


if __name__ == "__main__":
    name, out = sys.argv[1], sys.argv[2]
    docs = {"gnu-info": gnu_info, "man-pages": man_pages, "sotu": sotu}[name]()
    write(docs, out)
    print(describe(docs, INFO if name == "gnu-info" else None))
