"""The reference index (`tealeaves index build`, issue 25 point 4): build rate, peak memory and size,
and the time to answer 50 topics x 10 words x the four classic measures from it, against the
streaming path (the same numbers: checked).

Corpora: the real text of `benchmarks/real_corpus.py` (every paragraph it can find here: SOTU,
Python docstrings, /usr/share/doc; about 16 MB), and that text repeated `--copies` times (a larger
file to time the build on; repeated text has no new words, so its vocabulary, and the merge's
memory for it, stay those of the real text). Each build runs in a child process (`tealeaves index
build`), timed by wall clock, its peak memory its maximum resident set size. Topics: the bundled
50-topic SOTU model's top 10 words (`sotu:sotu-50-asym`; SOTU's paragraphs are part of the
reference). Query: `tl.coherence(topics, ref.tlx, measure=m)` for umass, uci, npmi, c_v at their
default windows, the index opened afresh (best of `--repeats`); streaming: the same from the text
file, the reference counted once per window, as `tealeaves coherence` does (one run).
Projections to 1 GB and to English Wikipedia (4.5e9 tokens) scale the measured rates linearly:
they are projections, not measurements.

    python benchmarks/coherence_index.py [--copies 64] [--workers 1]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
MEASURES = ("umass", "uci", "npmi", "c_v")
WIKI_TOKENS = 4.5e9


def build(text: str, out: str, workers: int) -> dict:
    """Build in a child process: wall seconds, its peak resident memory, the index size."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-m", "tealeaves", "index", "build", text, "-o", out,
                    "--workers", str(workers)], check=True, env={**os.environ})
    wall = time.perf_counter() - t0
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    from tealeaves.coherence.index import ReferenceIndex

    h = ReferenceIndex(out).header
    size = os.path.getsize(text)
    return {"text_bytes": size, "documents": h["corpus"]["documents"], "tokens": h["corpus"]["tokens"],
            "vocabulary": h["vocabulary"], "index_bytes": os.path.getsize(out), "seconds": wall,
            "peak_memory_bytes": peak * 1024 if peak > before else None,
            "mb_per_second": size / 1e6 / wall, "tokens_per_second": h["corpus"]["tokens"] / wall,
            "workers": workers}


def query(words: list[list[str]], reference: str, repeats: int) -> dict:
    import tealeaves as tl
    from tealeaves.coherence import index

    times, means = [], {}
    for _ in range(repeats):
        index._OPEN.clear()
        t0 = time.perf_counter()
        for m in MEASURES:
            means[m] = tl.coherence(words, reference, measure=m).per_topic
        times.append(time.perf_counter() - t0)
    return {"seconds": min(times), "runs": times, "per_topic": means}


def streaming(words: list[list[str]], text: str) -> dict:
    import tealeaves as tl
    from tealeaves.coherence import count, counting

    targets = sorted({w for t in words for w in t})
    t0 = time.perf_counter()
    cache, out = {}, {}
    for m in MEASURES:
        win, rule = counting(m)
        if win not in cache:
            cache[win] = count(text, targets, window=win, rule=rule)
        out[m] = tl.coherence(words, text, measure=m, counts=cache[win]).per_topic
    return {"seconds": time.perf_counter() - t0, "per_topic": out}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--copies", type=int, default=64)
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--folder", default="/tmp/tealeaves_index_bench")
    ap.add_argument("--out", default=str(HERE / "results" / "coherence_index.json"))
    args = ap.parse_args()
    sys.path.insert(0, str(HERE))
    import numpy as np
    from real_corpus import build as real_corpus

    import tealeaves as tl
    from tealeaves.coherence import topic_words

    folder = Path(args.folder)
    folder.mkdir(parents=True, exist_ok=True)
    real = str(folder / "real.txt")
    try:  # every paragraph there is: ask for more than exist, then for what was found
        corpus = real_corpus(real, paragraphs=10**9)
    except SystemExit as exc:
        corpus = real_corpus(real, paragraphs=int(str(exc).split()[1]))
    big = str(folder / f"real_x{args.copies}.txt")
    data = Path(real).read_bytes()
    with open(big, "wb") as fh:
        for _ in range(args.copies):
            fh.write(data)
    builds = {"real": build(real, str(folder / "real.tlx"), args.workers),
              f"real_x{args.copies}": build(big, str(folder / "big.tlx"), args.workers)}
    words = topic_words(tl.datasets.sotu_model("sotu-50-asym"), 10)
    q = query(words, str(folder / "real.tlx"), args.repeats)
    q_big = query(words, str(folder / "big.tlx"), args.repeats)
    s = streaming(words, real)
    identical = all(np.array_equal(q["per_topic"][m], s["per_topic"][m], equal_nan=True) for m in MEASURES)
    from tealeaves.coherence.index import ReferenceIndex

    targets = sorted({w for t in words for w in t})
    big_index = ReferenceIndex(str(folder / "big.tlx"))
    occurrences = sum(len(big_index.positions(w)) for w in targets)
    rate = builds[f"real_x{args.copies}"]
    per_token_index = rate["index_bytes"] / rate["tokens"]
    bytes_per_token = rate["text_bytes"] / rate["tokens"]
    from tealeaves.coherence.index import build_estimate

    projection = {
        "note": "linear projections of the measured build rate and index size per token; not measured",
        "1GB": {"seconds": 1e9 / (rate["mb_per_second"] * 1e6),
                "index_bytes": 1e9 / bytes_per_token * per_token_index,
                "estimated_memory_bytes": build_estimate(1e9, args.workers)["memory"]},
        "wikipedia": {"tokens": WIKI_TOKENS, "seconds": WIKI_TOKENS / rate["tokens_per_second"],
                      "index_bytes": WIKI_TOKENS * per_token_index,
                      "estimated_memory_bytes": build_estimate(WIKI_TOKENS * bytes_per_token,
                                                               args.workers)["memory"]},
    }
    result = {"benchmark": "coherence_index", "machine": platform.machine(), "cpus": os.cpu_count(),
              "corpus": {k: corpus[k] for k in corpus if k != "path"},
              "builds": builds, "query": {"topics": len(words), "words": 10, "measures": list(MEASURES),
                                          "index_seconds": q["seconds"], "index_runs": q["runs"],
                                          f"index_seconds_x{args.copies}": q_big["seconds"],
                                          "streaming_seconds": s["seconds"], "identical": identical,
                                          "distinct_words": len(targets),
                                          f"occurrences_x{args.copies}": occurrences},
              "projection": projection}
    Path(args.out).write_text(json.dumps(result, indent=1, default=float) + "\n")
    for name, b in builds.items():
        print(f"build {name}: {b['text_bytes'] / 1e6:.1f} MB, {b['tokens']:,} tokens in {b['seconds']:.1f} s "
              f"({b['mb_per_second']:.2f} MB/s), peak {(b['peak_memory_bytes'] or 0) / 2**20:.0f} MiB, "
              f"index {b['index_bytes'] / 1e6:.1f} MB")
    print(f"query 50 x 10 x 4 measures: index {q['seconds']:.2f} s "
          f"(x{args.copies}: {q_big['seconds']:.2f} s), "
          f"streaming {s['seconds']:.2f} s, identical {identical}")
    one, wiki = projection["1GB"], projection["wikipedia"]
    print(f"projected: 1 GB in {one['seconds'] / 60:.1f} min, index {one['index_bytes'] / 1e9:.2f} GB; "
          f"Wikipedia {wiki['seconds'] / 3600:.1f} h, index {wiki['index_bytes'] / 1e9:.1f} GB")


if __name__ == "__main__":
    main()
