"""tealeaves' left-to-right against MALLET's on the same workload, one core each.

MALLET's evaluator (`MarginalProbEstimator.leftToRight`, behind `mallet evaluate-topics`) holds
integer counts n_tw and uses phi = (n_tw + beta) / (n_t + V beta); the workload of
`heldout_speed.py` is defined by exactly such counts, so both programs score the same model on
the same documents. MALLET's `--use-resampling` is algorithm 3 (R N(N-1)/2 site updates per
document, like tealeaves' `smc-full`, recorded as "smc", its name before issue 21, and
`algorithm-3`). `benchmarks/mallet/LtrBench.java` calls MALLET's own method; this script
compiles MALLET from a source checkout with `javac` (Debian's
default-jdk-headless; MALLET's own lib/*.jar) and pins both programs to the same single core.

    git clone https://github.com/mimno/Mallet   # any recent checkout (measured: 2de54cb)
    python benchmarks/mallet_speed.py --mallet-src Mallet [--rounds 2] \
        [--out benchmarks/results/mallet_speed.json]

Each cell: the programs take turns `--rounds` times, each turn the best of three timed runs; the
best turn of each is kept.

Both programs score the same model: their algorithm-3 totals agree within 0.006 nats per token.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import platform
import shutil
import struct
import subprocess
import tempfile

import numpy as np
from heldout_speed import BETA, R, pseudo_counts, time_heldout, workload

HERE = os.path.dirname(os.path.abspath(__file__))
CELLS = [(50, 50), (50, 200), (50, 800), (1000, 50), (1000, 200), (1000, 800)]
DOCS = {50: 200, 200: 50, 800: 8}
VAR_STUB = (
    "package com.google.errorprone.annotations;\n"
    "/** Compile-time stand-in for Error Prone's marker annotation (no behaviour). */\n"
    "public @interface Var {}\n"
)


def build(src: str, out: str, benches: tuple[str, ...] = ("LtrBench.java",)) -> str:
    """Compile MALLET and the `benches` (files in benchmarks/mallet/) into `out`; return the class
    path."""
    # MALLET's lib/ jars; a checkout without Git LFS holds small pointer files in place of some
    jars = [j for j in glob.glob(os.path.join(src, "lib", "*.jar")) if os.path.getsize(j) > 1000]
    classes = os.path.join(out, "classes")
    cp = os.pathsep.join([classes, *jars])
    os.makedirs(classes, exist_ok=True)
    stub = os.path.join(out, "Var.java")  # MALLET's sources import Error Prone's @Var annotation
    with open(stub, "w", encoding="utf-8") as fh:
        fh.write(VAR_STUB)
    sources = glob.glob(os.path.join(src, "src", "main", "java", "**", "*.java"), recursive=True)
    if not sources:
        raise SystemExit(f"{src}: no MALLET sources under src/main/java")
    listing = os.path.join(out, "sources.txt")
    with open(listing, "w", encoding="utf-8") as fh:
        fh.write("\n".join([stub, *sources, *(os.path.join(HERE, "mallet", b) for b in benches)]))
    subprocess.run(["javac", "-nowarn", "-encoding", "UTF-8", "-cp", cp, "-d", classes, f"@{listing}"],
                   check=True, capture_output=True)
    return cp


def write_counts(path: str, alpha, beta: float, counts: np.ndarray, corpus) -> None:
    """The workload file LtrBench and EvalBench read (benchmarks/mallet/): T, V; alpha, beta; each
    word's (topic, count) pairs; the documents (word ids). Big-endian, as Java's DataInputStream."""
    T, V = counts.shape
    with open(path, "wb") as fh:
        fh.write(struct.pack(">ii", T, V))
        fh.write(np.asarray(alpha, ">f8").tobytes() + struct.pack(">d", beta))
        for w in range(V):
            topics = np.flatnonzero(counts[:, w])
            pairs = np.column_stack([topics, counts[topics, w]]).astype(">i4")
            fh.write(struct.pack(">i", topics.size) + pairs.tobytes())
        fh.write(struct.pack(">i", len(corpus)))
        for d in range(len(corpus)):
            words = np.asarray(corpus[d], ">i4")
            fh.write(struct.pack(">i", words.size) + words.tobytes())


def write_workload(path: str, T: int, N: int, docs: int) -> tuple:
    counts = pseudo_counts(T).astype(np.int64)
    model, corpus = workload(T, N, docs)
    write_counts(path, model.alpha, BETA, counts, corpus)
    return model, corpus


def best_of_three(model, corpus, variant: str) -> tuple[float, float, float]:
    return max(time_heldout(model, corpus, "left-to-right", particles=R, variant=variant) for _ in range(3))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--mallet-src", required=True, help="a MALLET source checkout (src/main/java, lib/)")
    ap.add_argument("--out", default=os.path.join(HERE, "results", "mallet_speed.json"))
    ap.add_argument("--rounds", type=int, default=2, help="turns of both programs per cell (best kept)")
    args = ap.parse_args()
    if shutil.which("javac") is None:
        raise SystemExit("javac not found: apt-get install default-jdk-headless")
    os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})  # one core, for java too (inherited)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        cp = build(args.mallet_src, os.path.join(tmp, "build"))
        print(f"R = {R}, million site updates per second, one core")
        print(f"{'T':>5} {'N':>5} {'MALLET':>8} {'smc':>8} {'alg. 3':>8} {'smc/MALLET':>11}")
        for T, N in CELLS:
            path = os.path.join(tmp, f"w{T}_{N}.bin")
            model, corpus = write_workload(path, T, N, DOCS[N])
            mallet_rate, mallet_total, smc, alg3 = 0.0, 0.0, (0.0,), (0.0,)
            for _ in range(args.rounds):  # the two programs take turns: a busy spell hits both
                java = subprocess.run(["java", "-XX:+UseSerialGC", "-cp", cp, "LtrBench", path, str(R),
                                       "true", "1"], check=True, capture_output=True, text=True)
                rate, _seconds, total = map(float, java.stdout.split())
                if rate > mallet_rate:
                    mallet_rate, mallet_total = rate, total
                smc = max(smc, best_of_three(model, corpus, "smc-full"))
                alg3 = max(alg3, best_of_three(model, corpus, "algorithm-3"))
            row = {"T": T, "N": N, "docs": len(corpus), "mallet": mallet_rate, "smc": smc[0],
                   "algorithm_3": alg3[0], "mallet_total": mallet_total, "algorithm_3_total": alg3[2],
                   "smc_total": smc[2]}
            rows.append(row)
            print(f"{T:>5} {N:>5} {mallet_rate / 1e6:>8.1f} {smc[0] / 1e6:>8.1f} {alg3[0] / 1e6:>8.1f} "
                  f"{smc[0] / mallet_rate:>10.2f}x")
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    java_version = subprocess.run(["java", "-version"], capture_output=True, text=True).stderr.splitlines()[0]
    with open(args.out, "w", encoding="utf-8") as fh:
        json.dump({"particles": R, "rounds": args.rounds,
                   "machine": platform.processor() or platform.machine(), "java": java_version, "rows": rows},
                  fh, indent=1)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
