"""Build tests/fixtures/mallet_diagnostics/: a small MALLET state and MALLET's own diagnostics XML
for it, the reference `tests/test_diagnostics.py` compares `tealeaves.diagnostics` against.

MALLET is compiled from its public source (https://github.com/mimno/Mallet, measured at commit
2de54cb) with `javac`, as benchmarks/mallet_speed.py does. Each of the 60 documents joins 5
consecutive documents of the bundled State of the Union corpus (`sotu:train`), cut to 150 tokens.
MALLET imports them (`Csv2Vectors --keep-sequence`, tokens as they are), trains 8 topics for 300
iterations on one thread with a fixed seed, optimising an asymmetric alpha every 20 iterations
after 50, and writes its state (`--output-state`) and its diagnostics (`--diagnostics-file`,
`TopicModelDiagnostics.toXML`, 20 top words).

    python scripts/make_mallet_diagnostics.py --mallet-src /tmp/Mallet [--classes DIR]
"""

from __future__ import annotations

import argparse
import glob
import os
import subprocess
import tempfile

import tealeaves as tl

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "tests", "fixtures", "mallet_diagnostics")
DOCS, JOIN, LENGTH, TOPICS, ITERATIONS, SEED = 60, 5, 150, 8, 300, 7
VAR_STUB = "package com.google.errorprone.annotations;\npublic @interface Var {}\n"


def class_path(src: str, classes: str | None, work: str) -> str:
    """MALLET's classes (compiled here unless `classes` holds them) and its lib/ jars."""
    jars = [j for j in glob.glob(os.path.join(src, "lib", "*.jar")) if os.path.getsize(j) > 1000]
    if classes is None:
        classes = os.path.join(work, "classes")
        os.makedirs(classes)
        stub = os.path.join(work, "Var.java")  # MALLET's sources import Error Prone's @Var
        with open(stub, "w", encoding="utf-8") as fh:
            fh.write(VAR_STUB)
        sources = glob.glob(os.path.join(src, "src", "main", "java", "**", "*.java"), recursive=True)
        listing = os.path.join(work, "sources.txt")
        with open(listing, "w", encoding="utf-8") as fh:
            fh.write("\n".join([stub, *sources]))
        subprocess.run(["javac", "-nowarn", "-encoding", "UTF-8", "-cp", os.pathsep.join(jars), "-d",
                        classes, f"@{listing}"], check=True, capture_output=True)
    return os.pathsep.join([classes, *jars])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mallet-src", required=True)
    ap.add_argument("--classes", help="MALLET's compiled classes (else compiled into a temporary directory)")
    args = ap.parse_args()
    corpus = tl.read_corpus("sotu:train")
    with tempfile.TemporaryDirectory() as work:
        cp = class_path(args.mallet_src, args.classes, work)
        text = os.path.join(work, "docs.tsv")
        with open(text, "w", encoding="utf-8") as fh:
            for d in range(DOCS):
                ids = [w for j in range(JOIN) for w in corpus[d * JOIN + j]][:LENGTH]
                words = [corpus.vocab[w] for w in ids]
                fh.write(f"doc{d}\tx\t{' '.join(words)}\n")
        data = os.path.join(work, "docs.mallet")
        java = ["java", "-Xmx1g", "-cp", cp]
        subprocess.run([*java, "cc.mallet.classify.tui.Csv2Vectors", "--input", text, "--output", data,
                        "--keep-sequence", "--token-regex", r"\S+"], check=True, capture_output=True)
        os.makedirs(OUT, exist_ok=True)
        subprocess.run([*java, "cc.mallet.topics.tui.TopicTrainer", "--input", data,
                        "--num-topics", str(TOPICS), "--num-iterations", str(ITERATIONS),
                        "--random-seed", str(SEED), "--num-threads", "1",
                        "--optimize-interval", "20", "--optimize-burn-in", "50",
                        "--output-state", os.path.join(OUT, "state.gz"),
                        "--diagnostics-file", os.path.join(OUT, "diagnostics.xml")],
                       check=True, capture_output=True)
    print(f"wrote {OUT}/state.gz and diagnostics.xml")


if __name__ == "__main__":
    main()
