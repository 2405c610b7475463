"""Coherence on a real corpus against gensim's CoherenceModel, timed as a user runs it (issue 22).

Reference: `benchmarks/real_corpus.py` (30,000 real paragraphs, one per line, whitespace tokens).
Topics: a 50-topic tomotopy LDA trained on it (seed 1, one worker, `--iterations`), 10 words each,
written one topic per line; both libraries score the same topics over the same file.

Three timings per measure, each CPU seconds (user + system; the primary figure, as the machine is
shared and wall time depends on the load) and wall seconds:
- whole process: a new Python process per measure and library, from start-up to exit, reading the
  reference file. tealeaves: `tealeaves coherence TOPICS REFERENCE --measure M` (the console
  script's entry point). gensim: a script that imports gensim, reads the file, tokenizes it
  (`str.split`, what tealeaves does), builds the `Dictionary` (and for u_mass the bag-of-words
  corpus) and calls `CoherenceModel(..., processes=1).get_coherence_per_topic()`.
- from the file, in one Python process: tealeaves `tl.coherence(topics, path, measure=M)`; gensim
  the same steps as above without start-up and import (timed inside the gensim process).
- computation only: each library given its prepared corpus: tealeaves a `Corpus` of word ids,
  gensim its texts and `Dictionary` (u_mass: bag-of-words corpus); only the coherence call timed
  (for gensim, its `CoherenceModel` phase inside the whole-process run). As gensim maps its token
  lists to ids inside that call, tealeaves is also timed from the same token lists in memory
  (`computation_from_token_lists`). The first CLI run of each measure (a warm-up) is recorded apart.
Agreement: means and the largest per-topic difference from gensim, and that difference again once
every paragraph keeps only the first copy of each word (gensim undercounts a word repeated inside a
window; see tealeaves.coherence.counts).
tealeaves is timed best of `--repeats` after a warm-up run (numba's compiled code is cached on
disk); gensim best of `--gensim-repeats` (3 each by default; the whole run takes about 4 CPU-minutes).

    pip install gensim tomotopy scikit-learn && python benchmarks/coherence_real.py
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
MEASURES = (("umass", "u_mass"), ("uci", "c_uci"), ("npmi", "c_npmi"), ("c_v", "c_v"))
TOPICS, TOPN = 50, 10
TL = {"convention": "tealeaves"}  # the results were measured under the tealeaves convention (exact counts)


def clock() -> tuple[float, float]:
    return time.process_time(), time.perf_counter()


def since(start: tuple[float, float]) -> dict:
    cpu, wall = clock()
    return {"cpu": cpu - start[0], "wall": wall - start[1]}


def read_texts(path: str) -> list[list[str]]:
    with open(path, encoding="utf-8") as fh:
        return [line.split() for line in fh]


def read_topics(path: str) -> list[list[str]]:
    with open(path, encoding="utf-8") as fh:
        return [line.split() for line in fh if line.strip()]


def gensim_child(measure: str, reference: str, topics_path: str) -> None:
    """The gensim side of a whole-process run: prints its phases' times and its scores as JSON."""
    t = clock()
    from gensim.corpora import Dictionary
    from gensim.models import CoherenceModel
    phases = {"import": since(t)}
    topics = read_topics(topics_path)
    t = clock()
    texts = read_texts(reference)
    phases["read_and_tokenize"] = since(t)
    t = clock()
    dct = Dictionary(texts)
    kw = {"corpus": [dct.doc2bow(x) for x in texts]} if measure == "u_mass" else {"texts": texts}
    phases["dictionary"] = since(t)
    t = clock()
    scores = CoherenceModel(topics=topics, dictionary=dct, coherence=measure, topn=TOPN, processes=1,
                            **kw).get_coherence_per_topic()
    phases["coherence"] = since(t)
    print(json.dumps({"phases": phases, "per_topic": [float(s) for s in scores]}))


def run_process(argv: list[str]) -> tuple[dict, str]:
    """Run `argv` as a new process; its CPU (user + system, from the kernel) and wall seconds."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    out = subprocess.run(argv, check=True, capture_output=True, text=True, env=os.environ.copy())
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {"cpu": cpu, "wall": wall}, out.stdout


def best(runs: list[dict]) -> dict:
    return {"cpu": min(r["cpu"] for r in runs), "wall": min(r["wall"] for r in runs), "runs": runs}


def in_process(fn, repeats: int) -> tuple[dict, object]:
    runs, out = [], None
    for _ in range(repeats):
        t = clock()
        out = fn()
        runs.append(since(t))
    return best(runs), out


def train_topics(reference: str, out: str, iterations: int) -> list[list[str]]:
    import tomotopy as tp

    lda = tp.LDAModel(k=TOPICS, seed=1)
    for doc in read_texts(reference):
        lda.add_doc(doc)
    lda.train(iterations, workers=1)
    topics = [[w for w, _ in lda.get_topic_words(k, top_n=TOPN)] for k in range(TOPICS)]
    with open(out, "w", encoding="utf-8") as fh:
        fh.writelines(" ".join(t) + "\n" for t in topics)
    return topics


def without_repeats(texts: list[list[str]], topics: list[list[str]]) -> dict:
    """The largest per-topic difference from gensim, per window measure, once every paragraph keeps
    only the first copy of each word: where no word repeats inside a window the counts agree."""
    import numpy as np
    from gensim.corpora import Dictionary
    from gensim.models import CoherenceModel

    import tealeaves as tl

    once = [list(dict.fromkeys(x)) for x in texts]
    dct = Dictionary(once)
    out = {}
    for ours, theirs in MEASURES[1:]:
        g = CoherenceModel(topics=topics, texts=once, dictionary=dct, coherence=theirs, topn=TOPN,
                           processes=1).get_coherence_per_topic()
        ours_ = tl.coherence(topics, once, measure=ours, **TL).per_topic
        out[ours] = float(np.max(np.abs(ours_ - np.array(g))))
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--gensim-child", nargs=3, metavar=("MEASURE", "REFERENCE", "TOPICS"))
    ap.add_argument("--paragraphs", type=int, default=30_000)
    ap.add_argument("--iterations", type=int, default=200)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--gensim-repeats", type=int, default=3)
    ap.add_argument("--workdir", default="/tmp")
    ap.add_argument("--out", default=os.path.join(HERE, "results", "coherence_real.json"))
    args = ap.parse_args()
    if args.gensim_child:
        gensim_child(*args.gensim_child)
        return

    import numpy as np
    from real_corpus import build

    import tealeaves as tl

    reference = os.path.join(args.workdir, "tealeaves_real_corpus.txt")
    topics_path = os.path.join(args.workdir, "tealeaves_real_topics.txt")
    corpus_info = build(reference, args.paragraphs)
    print(corpus_info, flush=True)
    topics = train_topics(reference, topics_path, args.iterations)
    texts = read_texts(reference)
    vocab = sorted({w for x in texts for w in x})
    index = {w: i for i, w in enumerate(vocab)}
    ids = tl.Corpus.from_word_ids([[index[w] for w in x] for x in texts], vocab=vocab)
    launch = "import sys; from tealeaves_launch import main; sys.exit(main())"
    cli = [sys.executable, "-c", launch, "coherence", topics_path, reference, "--topn", str(TOPN),
           "--convention", "tealeaves"]
    child = [sys.executable, os.path.abspath(__file__), "--gensim-child"]
    rows = []
    for ours, theirs in MEASURES:
        jpath = os.path.join(args.workdir, f"tealeaves_real_{ours}.json")
        argv = cli + ["--measure", ours, "--json", jpath]
        first_tl = run_process(argv)[0]  # a warm-up: fills numba's cache on a first run
        whole_tl = best([run_process(argv)[0] for _ in range(args.repeats)])
        with open(jpath, encoding="utf-8") as fh:
            cli_scores = [t["score"] for t in json.load(fh)["results"][0]["topics"]]
        file_tl, _ = in_process(lambda o=ours: tl.coherence(topics, reference, measure=o, **TL), args.repeats)
        comp_tl, res = in_process(lambda o=ours: tl.coherence(topics, ids, measure=o, **TL), args.repeats)
        tok_tl, _ = in_process(lambda o=ours: tl.coherence(topics, texts, measure=o, **TL), args.repeats)
        g_runs, g_file, g_comp, g_scores = [], [], [], None
        for _ in range(args.gensim_repeats):
            whole, out = run_process(child + [theirs, reference, topics_path])
            got = json.loads(out)
            g_runs.append(whole)
            ph = got["phases"]
            g_file.append({k: sum(ph[p][k] for p in ("read_and_tokenize", "dictionary", "coherence"))
                           for k in ("cpu", "wall")})
            g_comp.append(ph["coherence"])
            g_scores = np.array(got["per_topic"])
        ours_scores = np.asarray(res.per_topic)
        assert np.allclose(cli_scores, ours_scores, rtol=0, atol=1e-12), "CLI and library disagree"
        row = {
            "measure": ours, "gensim_measure": theirs,
            "tealeaves": {"whole_process": whole_tl, "whole_process_first_run": first_tl,
                          "from_file": file_tl, "computation": comp_tl,
                          "computation_from_token_lists": tok_tl},
            "gensim": {"whole_process": best(g_runs), "from_file": best(g_file),
                       "computation": best(g_comp),
                       "phases_last_run": ph},
            "tealeaves_mean": float(ours_scores.mean()), "gensim_mean": float(g_scores.mean()),
            "largest_topic_difference": float(np.max(np.abs(ours_scores - g_scores))),
        }
        row["ratio_computation_from_token_lists_cpu"] = row["gensim"]["computation"]["cpu"] / tok_tl["cpu"]
        for level in ("whole_process", "from_file", "computation"):
            row[f"ratio_{level}_cpu"] = row["gensim"][level]["cpu"] / row["tealeaves"][level]["cpu"]
            row[f"ratio_{level}_wall"] = row["gensim"][level]["wall"] / row["tealeaves"][level]["wall"]
        rows.append(row)
        g = row["gensim"]
        print(f"{ours:6s} CPU s, tealeaves / gensim: whole process {whole_tl['cpu']:.2f} / "
              f"{g['whole_process']['cpu']:.2f} ({row['ratio_whole_process_cpu']:.1f}x); from file "
              f"{file_tl['cpu']:.2f} / {g['from_file']['cpu']:.2f} ({row['ratio_from_file_cpu']:.1f}x);"
              f" computation {comp_tl['cpu']:.3f} / {row['gensim']['computation']['cpu']:.2f} "
              f"({row['ratio_computation_cpu']:.1f}x) | means {row['tealeaves_mean']:.4f} / "
              f"{row['gensim_mean']:.4f}, largest topic difference {row['largest_topic_difference']:.4f}",
              flush=True)
    corpus_info.pop("path")
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w", encoding="utf-8") as fh:
        json.dump({"corpus": corpus_info, "topics": TOPICS, "topn": TOPN, "lda_iterations": args.iterations,
                   "repeats": args.repeats, "gensim_repeats": args.gensim_repeats,
                   "gensim_version": __import__("gensim").__version__, "topic_words": topics,
                   "load_average_at_end": os.getloadavg(), "cpus": os.cpu_count(), "results": rows,
                   "largest_topic_difference_without_repeats": without_repeats(texts, topics)},
                  fh, indent=1)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    sys.path.insert(0, HERE)
    main()
