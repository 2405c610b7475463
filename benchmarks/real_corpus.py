"""A real-text reference corpus of at least 20,000 paragraphs, built offline and deterministically.

Sources, in this order: the bundled State of the Union paragraphs (`sotu:train` then `sotu:heldout`,
already tokenized, stop words removed, 3,000-word vocabulary; see scripts/make_sotu.py), then the
docstrings of this Python's standard library (every module, class and function docstring of the
`.py` files under `sysconfig.get_paths()["stdlib"]`, tests and site-packages left out, files in
sorted order, read with `ast`, nothing imported), split into paragraphs at blank lines. Docstring
paragraphs, then those of the plain-text documentation under /usr/share/doc (`.txt`, `.md`, `.rst`
files, sorted, symbolic links left out; which files exist depends on the packages installed, so
the sha256 of the result is recorded), are tokenized as the SOTU ones were
(`tealeaves.util.text.tokenize`, scikit-learn's English stop words removed) and kept if they have at
least `MIN_TOKENS` tokens, until the corpus has `paragraphs` documents. Written one paragraph per line,
tokens separated by single spaces.

    python benchmarks/real_corpus.py [--paragraphs 30000] [--out /tmp/tealeaves_real_corpus.txt]
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import re
import sys
import sysconfig
from collections.abc import Iterator
from pathlib import Path

MIN_TOKENS = 12
DEFAULT_OUT = "/tmp/tealeaves_real_corpus.txt"


def sotu_paragraphs() -> Iterator[list[str]]:
    from tealeaves import datasets

    corpus = datasets.sotu()
    for part in (corpus.train, corpus.heldout):
        for doc in part:
            yield [part.vocab[i] for i in doc]


def docstrings(root: Path) -> Iterator[str]:
    """Every docstring of the standard library's source files under `root`, in a fixed order."""
    skip = {"test", "tests", "idle_test", "site-packages", "lib2to3", "__pycache__"}
    for path in sorted(root.rglob("*.py")):
        if skip & set(path.relative_to(root).parts):
            continue
        try:
            tree = ast.parse(path.read_bytes())
        except (SyntaxError, ValueError):
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
                doc = ast.get_docstring(node)
                if doc:
                    yield doc


def doc_files(root: Path) -> Iterator[str]:
    """The text of every plain-text documentation file under `root`, in a fixed order."""
    for path in sorted(root.rglob("*")):
        if path.suffix in (".txt", ".md", ".rst") and path.is_file() and not path.is_symlink():
            yield path.read_text(encoding="utf-8", errors="replace")


def text_paragraphs(texts: Iterator[str]) -> Iterator[list[str]]:
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

    from tealeaves.util.text import tokenize

    stop = set(ENGLISH_STOP_WORDS)
    for doc in texts:
        for para in re.split(r"\n\s*\n", doc):
            toks = [t for t in tokenize(para) if t not in stop]
            if len(toks) >= MIN_TOKENS:
                yield toks


def build(out: str, paragraphs: int = 30_000) -> dict:
    """Write the corpus to `out`; return what it holds (paragraphs per source, tokens, sha256)."""
    root = Path(sysconfig.get_paths()["stdlib"])
    gens = {"sotu": sotu_paragraphs(), "python_stdlib_docstrings": text_paragraphs(docstrings(root)),
            "usr_share_doc": text_paragraphs(doc_files(Path("/usr/share/doc")))}
    sources = dict.fromkeys(gens, 0)
    tokens = 0
    sha = hashlib.sha256()
    with open(out, "w", encoding="utf-8") as fh:
        for name, gen in gens.items():
            for toks in gen:
                if sum(sources.values()) == paragraphs:
                    break
                line = " ".join(toks) + "\n"
                fh.write(line)
                sha.update(line.encode("utf-8"))
                sources[name] += 1
                tokens += len(toks)
    n = sum(sources.values())
    if n < paragraphs:
        raise SystemExit(f"only {n} paragraphs found, {paragraphs} asked for")
    return {"path": out, "paragraphs": n, "tokens": tokens, "sources": sources, "sha256": sha.hexdigest(),
            "python": sys.version.split()[0], "stdlib": str(root), "min_tokens_text_paragraph": MIN_TOKENS}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--paragraphs", type=int, default=30_000)
    ap.add_argument("--out", default=DEFAULT_OUT)
    args = ap.parse_args()
    print(build(args.out, args.paragraphs))


if __name__ == "__main__":
    main()
