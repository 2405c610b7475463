"""tealeaves' default held-out estimate against the numbers users print instead, side by side in one
run (issue 36, point 3): tokens per CPU-second and error per token of `tl.heldout(model, docs)`,
of `method="bridge"` (its defaults, with topics_limit = T so that the bridge itself is measured),
tomotopy's `LDAModel.infer(docs, iterations=100, workers=1)`, gensim's `LdaModel.log_perplexity`,
scikit-learn's `LatentDirichletAllocation.perplexity` and MALLET's `evaluate-topics` (its defaults:
10 particles, no resampling), on short documents (300 random held-out State of the Union
paragraphs) and whole ones (12 held-out addresses), at T = 20, 50, 200 and 1,000 topics.

Models: for each T, a tomotopy LDA trained on the bundled training paragraphs (fixed seed; cached
in --cache), scored by tealeaves, tomotopy and MALLET (MALLET's evaluator takes the model as integer
topic-word counts, rebuilt from tomotopy's final assignments: tomotopy's phi is (n_tw + eta) /
(n_t + V eta), MALLET's the same, so both score one model); gensim and scikit-learn score their
own LDA models trained on the same paragraphs (online variational Bayes), as their users do.

Error per token: the number each tool prints, as log-likelihood per token (gensim's bound as is;
scikit-learn's -log perplexity; tomotopy's summed `infer` log-likelihood, MALLET's summed document
log-likelihood, tealeaves' total, each divided by the tokens), less the reference log P(w | Phi,
alpha) per token of the same model and documents. References (cached in
benchmarks/results/heldout_vs_peers_references.json, new ones with each run's per-document values; one whose
settings differ from `reference_settings` is recomputed; --recompute-references redoes all):
left-to-right `smc-full` with 1,000 particles, 2 runs, on the paragraphs; on the whole addresses
(tomotopy's model) `smc` with 500 particles and K = 256, 2 runs, at T = 20; at T = 200 `smc-full`
(a full Gibbs pass over all earlier positions at every position, not the default's K = 128 of
them) with 300 particles, 2 runs; at T = 50 and 1,000 `smc` with 1,000 particles and K = 128, 2 runs
(`smc-full` with 300 particles: 3.3 and 2.1 times their site updates, more than an hour of CPU on a
shared 2-core machine; with 1,000 particles at all three T: 2 CPU-hours). Past
T = 20 the JSON also keeps, to measure these references, one at the default's own setting (300
particles, K = 128, 2 runs: the table's references before) and, at T = 200, one by `smc` with 1,000
particles, K = 128, 2 runs (`reference_summary()` compares them, in docs/performance.md).
gensim's and scikit-learn's models, whose numbers are off by nats per token, get `smc` with 300
particles and K = 128, 1 run, at T = 20, and past it `smc-full` with 100 particles on the
paragraphs and `smc` with 100 particles, K = 32 on the addresses, 1 run). --skip-long-references
[T ...] leaves out a missing reference of tomotopy's model on the addresses (at those T, or all; its
rows then have no error). --without gensim scikit-learn leaves those tools out (their models are
trained first: minutes at T = 1,000). --tools TOOL ... times only those tools (their rows replace
the ones in --out, the other rows stay); --rescore recomputes the error columns of the rows in --out
against the current references without timing again (tealeaves' and the bridge's per-document
estimates from the same seeds, checked against the stored totals).
For tealeaves' rows the JSON and the table also give the largest error of one document (the JSON
keeps each round's per-document estimates).

Timing: CPU seconds of this process (`time.process_time`; numpy's BLAS held to one thread, tomotopy
with one worker) for every tool but MALLET, whose evaluator runs in a JVM child (the CPU time of
its thread, after an untimed pass for the JIT compiler); every tool takes its turn once per round
(`--rounds`), each document set in turn, so a busy spell on the shared machine hits them all. The
table gives the median over rounds (the spread is in the JSON).

    python benchmarks/heldout_vs_peers.py --mallet-src Mallet [--topics 20 50 200 1000] [--rounds 3]
        [--keep] [--skip-long-references [T ...]] [--without TOOL ...] [--references-only]
        [--reference-workers N] [--tools TOOL ...] [--rescore]

MALLET is compiled from a source checkout as in `benchmarks/mallet_speed.py` (nothing of MALLET is
committed; a build is reused from --cache). Writes benchmarks/results/heldout_vs_peers.json
(--keep keeps its rows of other T); `table()` and `cost_ratios()` are in docs/performance.md.
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import glob  # noqa: E402
import json  # noqa: E402
import math  # noqa: E402
import pickle  # noqa: E402
import platform  # noqa: E402
import re  # noqa: E402
import subprocess  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

import tealeaves as tl  # noqa: E402
from tealeaves import datasets  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
RESULTS = os.path.join(HERE, "results", "heldout_vs_peers.json")
REFERENCES = os.path.join(HERE, "results", "heldout_vs_peers_references.json")
TOPICS = (20, 50, 200, 1000)
PARAGRAPHS, PARAGRAPH_SEED = 300, 0
ADDRESSES, ADDRESS_SEED = 12, 2
# fewer documents where the references (and tealeaves' default) cost too much: the first of the
# same random picks (paragraphs, addresses)
SIZES = {200: (300, 4), 1000: (100, 4)}
TP_ITERATIONS = {20: 500, 50: 500, 200: 500, 1000: 300}
TP_SEED = 20261122
INFER_ITERATIONS = 100
MALLET_PARTICLES = 10  # evaluate-topics' default (no resampling)
# and "tealeaves before" with --previous
TOOLS = ("tealeaves", "bridge", "tomotopy", "gensim", "scikit-learn", "MALLET")
SETS = ("paragraphs", "addresses")


def default_cache() -> str:
    return os.path.join(tempfile.gettempdir(), "tealeaves-peers")


def documents(T: int = 20) -> dict[str, tl.Corpus]:
    """300 random held-out paragraphs (with at least one token) and 12 random held-out addresses
    (their paragraphs joined); at T in SIZES the first of them in the same random order."""
    s = datasets.sotu()
    held, addr = s.heldout, s.address["heldout"]
    paragraphs, addresses = SIZES.get(T, (PARAGRAPHS, ADDRESSES))
    nonempty = np.flatnonzero([len(held[i]) > 0 for i in range(len(held))])
    pick = np.random.default_rng(PARAGRAPH_SEED).choice(nonempty, PARAGRAPHS, replace=False)
    pick = np.sort(pick[:paragraphs])
    names = np.unique(addr)
    chosen = np.random.default_rng(ADDRESS_SEED).choice(names, ADDRESSES, replace=False)
    chosen = np.sort(chosen[:addresses])
    whole = [np.concatenate([held[i] for i in np.flatnonzero(addr == a)]) for a in chosen]
    return {"paragraphs": held.subset(pick),
            "addresses": tl.Corpus.from_word_ids(whole, vocab=held.vocab, source="sotu:heldout addresses")}


def training_texts() -> list[list[str]]:
    train = datasets.sotu().train
    vocab = train.vocab
    return [[vocab[i] for i in d] for d in train if len(d)]


def tomotopy_model(T: int, cache: str):
    import tomotopy as tp

    path = os.path.join(cache, f"tomotopy-{T}.bin")
    if os.path.exists(path):
        return tp.LDAModel.load(path)
    mdl = tp.LDAModel(k=T, alpha=0.1, eta=0.01, seed=TP_SEED)
    mdl.optim_interval = 10
    mdl.burn_in = 100
    for d in training_texts():
        mdl.add_doc(d)
    mdl.train(TP_ITERATIONS[T], workers=1)
    mdl.save(path)
    return mdl


def as_topic_model(mdl, vocab: tuple[str, ...]) -> tuple[tl.TopicModel, np.ndarray]:
    """tomotopy's model as a TopicModel in the bundled vocabulary's order, and its topic-word counts
    n_tw (T x V, the same order) from the final assignments: phi = (n_tw + eta) / (n_t + V eta)."""
    model = tl.load_model(mdl)
    pos = {w: i for i, w in enumerate(model.vocab)}
    order = [pos[w] for w in vocab]
    index = {w: i for i, w in enumerate(vocab)}
    ids = np.array([index.get(w, -1) for w in mdl.vocabs])
    counts = np.zeros((mdl.k, len(vocab)), np.int64)
    for d in mdl.docs:
        np.add.at(counts, (np.asarray(d.topics), ids[np.asarray(d.words)]), 1)
    out = tl.TopicModel(model.phi[:, order], model.alpha, vocab=list(vocab), beta=model.beta,
                        name=f"tomotopy-{mdl.k}")
    return out, counts


def gensim_model(T: int, cache: str):
    from gensim.corpora import Dictionary
    from gensim.models import LdaModel

    path = os.path.join(cache, f"gensim-{T}")
    if os.path.exists(path):
        return LdaModel.load(path)
    texts = training_texts()
    dictionary = Dictionary(texts)
    lda = LdaModel([dictionary.doc2bow(d) for d in texts], id2word=dictionary, num_topics=T, passes=5,
                   random_state=1)
    lda.save(path)
    return lda


def _tokens(doc: list[str]) -> list[str]:
    return doc


def sklearn_model(T: int, cache: str):
    """scikit-learn's LDA (online variational Bayes) and its vectorizer (refitted on the same
    paragraphs each time: only the model is cached)."""
    from sklearn.decomposition import LatentDirichletAllocation
    from sklearn.feature_extraction.text import CountVectorizer

    texts = training_texts()
    vec = CountVectorizer(analyzer=_tokens)
    X = vec.fit_transform(texts)
    path = os.path.join(cache, f"sklearn-{T}.pickle")
    if os.path.exists(path):
        with open(path, "rb") as fh:
            return pickle.load(fh), vec
    lda = LatentDirichletAllocation(n_components=T, learning_method="online", max_iter=10, random_state=1)
    lda.fit(X)
    with open(path, "wb") as fh:
        pickle.dump(lda, fh)
    return lda, vec


def mallet_run(cp: str, workload: str, seed: int) -> tuple[float, float]:
    """One timed evaluate-topics pass (after the JIT's): (CPU seconds, summed log-likelihood)."""
    cmd = ["java", "-XX:+UseSerialGC", "-cp", cp, "EvalBench", workload, str(MALLET_PARTICLES), "false",
           str(seed), "1"]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout.split("\n")
    return float(out[0].split()[0]), float(sum(float(x) for x in out[1:] if x.strip()))


def reference_params(lib: str, name: str, T: int) -> dict:
    """left-to-right's settings for the reference of `lib`'s model on document set `name` (module
    doc). gensim's and scikit-learn's numbers are tenths of a nat per token off, so their references
    past T = 20 are cheaper (their own error is below a hundredth)."""
    if lib != "tomotopy" and T > 20:
        if name == "paragraphs":
            return {"variant": "smc-full", "particles": 100, "runs": 1}
        return {"variant": "smc", "particles": 100, "rejuvenate": 32, "runs": 1}
    if name == "paragraphs":
        return {"variant": "smc-full", "particles": 1000, "runs": 2}
    if lib == "tomotopy":
        if T == 200:  # not the default's variant: a full Gibbs pass over the earlier positions
            return {"variant": "smc-full", "particles": 300, "runs": 2}
        if T > 20:  # the default's variant with 3.3 times its particles, twice (smc-full: hours)
            return {"variant": "smc", "particles": 1000, "rejuvenate": 128, "runs": 2}
        return {"variant": "smc", "particles": 500, "rejuvenate": 256, "runs": 2}
    return {"variant": "smc", "particles": 300, "rejuvenate": 128, "runs": 1}


def _settings(entry: dict) -> dict:
    """The settings a cached reference was computed with (older entries: read from its label)."""
    if "params" in entry:
        return entry["params"]
    out: dict = {k: int(v) if v.isdigit() else v for k, v in re.findall(r"(\w+)=([^,)]+)", entry["method"])}
    return {**out, "runs": entry["runs"]}


# more references of tomotopy's model on the addresses past T = 20, to measure the references
# themselves: at the default's own setting (the references before issue 36's second pass), and by
# the other variant where both are affordable
DEFAULT_SETTING = {"variant": "smc", "particles": 300, "rejuvenate": 128, "runs": 2}
CROSS_CHECK = {200: {"variant": "smc", "particles": 1000, "rejuvenate": 128, "runs": 2}}


def reference_settings(lib: str, name: str, T: int) -> dict[str, dict]:
    """Every reference of `lib`'s model on `name` at T: its key in the JSON -> left-to-right's settings
    (the first is the table's)."""
    out = {f"{lib}/{name}": reference_params(lib, name, T)}
    if lib == "tomotopy" and name == "addresses" and T > 20:
        out[f"{lib}/{name} default-setting"] = DEFAULT_SETTING
        if T in CROSS_CHECK:
            out[f"{lib}/{name} cross-check"] = CROSS_CHECK[T]
    return out


def references(models: dict, docs: dict[str, tl.Corpus], T: int, cached: dict, recompute: bool,
               skip_long: bool = False, workers: int = 2, cache: str | None = None) -> dict:
    """Reference log P(w) per document for each library's model and document set (module doc); a
    cached one computed with other settings than `reference_settings` is recomputed. Each is written
    at once into REFERENCES (merged with what another process wrote there meanwhile); `cache`: a
    folder keeping every finished document of a reference (an interrupted one resumes)."""
    out = cached.setdefault(str(T), {})
    todo = [(lib, model, name, corpus, key, params) for lib, model in models.items()
            for name, corpus in docs.items() for key, params in reference_settings(lib, name, T).items()]
    for lib, model, name, corpus, key, params in todo:
        if key in out and not recompute and _settings(out[key]) == params:
            continue
        if skip_long and lib == "tomotopy" and name == "addresses":
            out.pop(key, None)
            print(f"  reference T={T} {key}: not computed (--skip-long-references)", flush=True)
            continue
        t0, c0 = time.time(), time.process_time()
        folder = f"T{T}-{key.replace('/', '-').replace(' ', '-')}"
        keep = None if cache is None else os.path.join(cache, "references", folder)
        res = tl.heldout(model, corpus, method="left-to-right", seed=999, workers=workers, bootstrap=0,
                         max_hours=1000, keep=keep, **params)
        out[key] = {"method": res.label, "params": params, "runs": res.runs,
                    "doc_log_prob": res.doc_log_prob.tolist(), "run_log_prob": res.run_log_prob.tolist(),
                    "tokens": int(res.tokens), "doc_tokens": [int(n) for n in res.doc_tokens],
                    "seconds": time.time() - t0, "cpu_seconds": time.process_time() - c0, "workers": workers}
        print(f"  reference T={T} {key}: {res.per_token:.5f} per token ({time.time() - t0:.0f} s)",
              flush=True)
        merged = {}
        if os.path.exists(REFERENCES):
            with open(REFERENCES) as fh:
                merged = json.load(fh)
        merged.setdefault(str(T), {})[key] = out[key]
        with open(REFERENCES + ".tmp", "w") as fh:
            json.dump(merged, fh, indent=1)
        os.replace(REFERENCES + ".tmp", REFERENCES)
    return out


def cpu(fn, *args) -> tuple[float, float]:
    t0 = time.process_time()
    value = fn(*args)
    return time.process_time() - t0, value


def prepare(T: int, args: argparse.Namespace, docs: dict[str, tl.Corpus], cached: dict) -> tuple:
    """The three libraries' models at T topics (trained or from the cache) and the references."""
    vocab = docs["paragraphs"].vocab
    texts = {k: [[vocab[i] for i in d] for d in c] for k, c in docs.items()}
    mdl = tomotopy_model(T, args.cache)
    model, counts = as_topic_model(mdl, vocab)
    glda = None if "gensim" in args.without else gensim_model(T, args.cache)
    sk, vec = (None, None) if "scikit-learn" in args.without else sklearn_model(T, args.cache)
    libs = {"tomotopy": model}
    if glda is not None:
        libs["gensim"] = tl.load_model(glda)
    if sk is not None:
        libs["scikit-learn"] = tl.load_model(sk, vocab=vec)
    refs = {lib: references({lib: m}, {k: tl.Corpus.from_tokens(t, m.vocab) for k, t in texts.items()}, T,
                            cached, args.recompute_references,
                            args.skip_long_references is not None
                            and (not args.skip_long_references or T in args.skip_long_references),
                            args.reference_workers, args.cache)
            for lib, m in libs.items()}
    return texts, mdl, model, counts, glda, sk, vec, refs


def measure(T: int, args: argparse.Namespace, cp: str, tmp: str, docs: dict[str, tl.Corpus],
            cached: dict) -> tuple[list[dict], str]:
    """Every tool on both document sets at T topics, `args.rounds` turns each: the table's rows and
    the default's label."""
    from mallet_speed import write_counts  # the workload format MALLET's harness reads

    texts, mdl, model, counts, glda, sk, vec, refs = prepare(T, args, docs, cached)
    tp_docs = {k: [mdl.make_doc(d) for d in t] for k, t in texts.items()}
    bow = {k: [glda.id2word.doc2bow(d) for d in t] for k, t in texts.items()} if glda else {}
    X = {k: vec.transform(t) for k, t in texts.items()} if vec else {}
    workloads = {k: os.path.join(tmp, f"T{T}-{k}.bin") for k in docs}
    for k, c in docs.items():
        write_counts(workloads[k], model.alpha, float(mdl.eta), counts, c)

    labels: dict[str, str] = {}
    worst: dict[tuple[str, str], list[float]] = {}
    per_doc: dict[tuple[str, str], list[list[float]]] = {}

    def ours(k: str, r: int, tool: str = "tealeaves", **params) -> float:
        res = tl.heldout(model, docs[k], seed=r, workers=1, bootstrap=0, max_hours=1000, **params)
        per_doc.setdefault((tool, k), []).append(res.doc_log_prob.tolist())
        ref = refs["tomotopy"].get(f"tomotopy/{k}")
        if ref is not None:
            gap = np.abs(res.doc_log_prob - np.asarray(ref["doc_log_prob"]))
            worst.setdefault((tool, k), []).append(float(np.max(gap)))
        labels[tool] = res.label
        return res.total

    calls = {
        "tealeaves": ours,
        # the bridge itself at every T (its default topics_limit would hand T > 20 to left-to-right)
        "bridge": lambda k, r: ours(k, r, "bridge", method="bridge", topics_limit=T),
        "tomotopy": lambda k, r: float(np.sum(mdl.infer(tp_docs[k], iterations=INFER_ITERATIONS,
                                                        workers=1)[1])),
        "gensim": lambda k, r: float(glda.log_perplexity(bow[k])) * docs[k].num_tokens,
        "scikit-learn": lambda k, r: -math.log(sk.perplexity(X[k])) * docs[k].num_tokens,
        "MALLET": None,
    }
    for tool in args.without:
        del calls[tool]
    if args.tools:
        calls = {tool: call for tool, call in calls.items() if tool in args.tools}
    if args.previous:
        calls["tealeaves before"] = lambda k, r: ours(k, r, "tealeaves before", method="left-to-right")
    label = tl.heldout(model, docs["paragraphs"].subset([0, 1]), workers=1, bootstrap=0).label  # compile/load
    times = {(tool, k): [] for tool in calls for k in SETS}
    values = {(tool, k): [] for tool in calls for k in SETS}
    for r in range(args.rounds):
        for k in SETS:
            for tool, call in calls.items():
                sec, value = mallet_run(cp, workloads[k], r + 1) if call is None else cpu(call, k, r)
                times[(tool, k)].append(sec)
                values[(tool, k)].append(value)
                print(f"T={T} round {r} {k:<10} {tool:<16} {sec:8.3f} CPU s  "
                      f"{value / docs[k].num_tokens:+.4f} per token", flush=True)
    rows = []
    for k in SETS:
        tokens = int(docs[k].num_tokens)
        for tool in calls:
            lib = tool if tool in ("gensim", "scikit-learn") else "tomotopy"
            ref = refs[lib].get(f"{lib}/{k}")
            total = float(np.sum(ref["doc_log_prob"])) if ref else math.nan
            secs = times[(tool, k)]
            rows.append({"T": T, "documents": k, "tool": tool, "tokens": tokens, "cpu_seconds": secs,
                         "tokens_per_cpu_second": tokens / float(np.median(secs)),
                         "error_per_token": ([(v - total) / tokens for v in values[(tool, k)]]
                                             if ref else None),
                         "per_token": [v / tokens for v in values[(tool, k)]],
                         "reference_per_token": total / tokens if ref else None,
                         "reference": ref["method"] if ref else None,
                         "label": labels.get(tool, tool), "worst_document_error": worst.get((tool, k)),
                         "doc_log_prob": per_doc.get((tool, k))})
    return rows, label


def rescore(T: int, args: argparse.Namespace, docs: dict[str, tl.Corpus], cached: dict,
            rows: list[dict]) -> None:
    """The error columns of `rows` (T topics) against the current references, without timing again:
    totals from the stored per-token numbers; tealeaves' and the bridge's per-document estimates
    (for the worst document) recomputed with the rounds' seeds, checked to give the stored totals."""
    texts, mdl, model, counts, glda, sk, vec, refs = prepare(T, args, docs, cached)
    for row in rows:
        if row["T"] != T:
            continue
        k, tool, tokens = row["documents"], row["tool"], row["tokens"]
        lib = tool if tool in ("gensim", "scikit-learn") else "tomotopy"
        ref = refs.get(lib, {}).get(f"{lib}/{k}")
        if ref is None:
            continue
        total = float(np.sum(ref["doc_log_prob"]))
        row.update(error_per_token=[v - total / tokens for v in row["per_token"]],
                   reference_per_token=total / tokens, reference=ref["method"])
        if tool not in ("tealeaves", "bridge"):
            continue
        params = {"method": "bridge", "topics_limit": T} if tool == "bridge" else {}
        estimates, worst = [], []
        for r, stored in enumerate(row["per_token"]):
            res = tl.heldout(model, docs[k], seed=r, workers=1, bootstrap=0, max_hours=1000, **params)
            if res.label != row["label"] or not math.isclose(res.total, stored * tokens, rel_tol=1e-9):
                raise SystemExit(f"T={T} {k} {tool} round {r}: {res.label} gives {res.total / tokens:.6f} "
                                 f"per token, the JSON {stored:.6f} ({row['label']}): not the timed run")
            estimates.append(res.doc_log_prob.tolist())
            worst.append(float(np.max(np.abs(res.doc_log_prob - np.asarray(ref["doc_log_prob"])))))
        row.update(doc_log_prob=estimates, worst_document_error=worst)
        print(f"T={T} {k} {tool}: {np.mean(row['error_per_token']):+.5f} per token, worst {max(worst):.2f}",
              flush=True)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--mallet-src", required=True, help="a MALLET source checkout (src/main/java, lib/)")
    ap.add_argument("--topics", type=int, nargs="+", default=list(TOPICS))
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--previous", action="store_true",
                    help="also time left-to-right, the default before issue 36 (slow on whole documents)")
    ap.add_argument("--cache", default=default_cache(),
                    help="trained models are kept here between runs")
    ap.add_argument("--recompute-references", action="store_true")
    ap.add_argument("--without", nargs="+", default=[], choices=["gensim", "scikit-learn"],
                    help="leave these tools out (their models are not trained)")
    ap.add_argument("--skip-long-references", nargs="*", type=int, default=None,
                    help="leave out a missing reference of tomotopy's model on the whole addresses "
                         "(the costly one): those rows get no error")
    ap.add_argument("--reference-workers", type=int, default=2,
                    help="worker processes of the references (their numbers do not depend on it)")
    ap.add_argument("--references-only", action="store_true", help="train the models and compute the "
                    "missing references, then stop")
    ap.add_argument("--tools", nargs="+", choices=TOOLS,
                    help="time only these tools: their rows at --topics replace those in --out, the "
                         "other rows stay")
    ap.add_argument("--rescore", action="store_true",
                    help="recompute the error columns of the rows at --topics in --out against the "
                         "current references (same seeds, no timing), then stop")
    ap.add_argument("--out", default=RESULTS)
    ap.add_argument("--keep", action="store_true", help="keep the rows of other T already in --out")
    args = ap.parse_args()
    from mallet_speed import build
    from threadpoolctl import threadpool_limits

    threadpool_limits(1)
    os.makedirs(args.cache, exist_ok=True)
    docs = documents()
    cached = {}
    if os.path.exists(REFERENCES):
        with open(REFERENCES) as fh:
            cached = json.load(fh)
    result = {"tools": list(TOOLS) + (["tealeaves before"] if args.previous else []), "rounds": args.rounds,
              "machine": platform.processor() or platform.machine(), "load_average": [],
              "documents": {k: {"count": len(c), "tokens": int(c.num_tokens)} for k, c in docs.items()},
              "fewer_documents": {str(T): dict(zip(SETS, n, strict=True)) for T, n in SIZES.items()},
              "rows": []}
    if args.references_only:
        for T in args.topics:
            prepare(T, args, documents(T), cached)
        return
    if args.rescore:
        with open(args.out) as fh:
            result = json.load(fh)
        for T in args.topics:
            rescore(T, args, documents(T), cached, result["rows"])
        save(result, args.out)
        print(table(result))
        return
    if (args.keep or args.tools) and os.path.exists(args.out):
        with open(args.out) as fh:
            kept = json.load(fh)
        result["rows"] = [r for r in kept["rows"]
                          if r["T"] not in args.topics or (args.tools and r["tool"] not in args.tools)]
        if args.tools:  # only some tools timed now: the rest of the file as it was
            result = {**kept, "rows": result["rows"],
                      "load_average_tools": {**kept.get("load_average_tools", {})}}
    with tempfile.TemporaryDirectory() as tmp:
        built = os.path.join(args.cache, "mallet-build")
        if os.path.exists(os.path.join(built, "classes", "EvalBench.class")):  # compiled by an earlier run
            jars = [j for j in glob.glob(os.path.join(args.mallet_src, "lib", "*.jar"))
                    if os.path.getsize(j) > 1000]
            cp = os.pathsep.join([os.path.join(built, "classes"), *jars])
        else:
            cp = build(args.mallet_src, built, ("EvalBench.java",))
        java = subprocess.run(["java", "-version"], capture_output=True, text=True)
        result["java"] = java.stderr.splitlines()[0]
        for T in args.topics:
            if args.tools:
                result["load_average_tools"][f"{T} " + " ".join(args.tools)] = os.getloadavg()[0]
            else:
                result["load_average"].append(os.getloadavg()[0])
            rows, result["default"] = measure(T, args, cp, tmp, documents(T), cached)
            result["rows"] += rows
            save(result, args.out)
    print(table(result))


def save(result: dict, path: str) -> None:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as fh:
        json.dump(result, fh, indent=1)


def _row(result: dict, T: int, k: str, tool: str) -> dict | None:
    rows = (r for r in result["rows"] if r["T"] == T and r["documents"] == k and r["tool"] == tool)
    return next(rows, None)


def table(result: dict) -> str:
    """docs/performance.md's table: tokens per CPU-second (median over rounds), the mean error per
    token over rounds and (tealeaves) the largest error of one document over rounds, in nats, each
    tool, document set and number of topics (with the number of documents where it is not 300
    paragraphs or 12 addresses)."""
    lines = ["| documents | T | " + " | ".join(result["tools"]) + " |",
             "|---|---|" + "---|" * len(result["tools"])]
    for k in SETS:
        for T in sorted({r["T"] for r in result["rows"]}):
            cells = []
            for tool in result["tools"]:
                r = _row(result, T, k, tool)
                if r is None:
                    cells.append("–")
                    continue
                errs = r["error_per_token"]
                err = "no reference" if errs is None else f"{np.mean(errs):+.4f}"
                cell = f"{r['tokens_per_cpu_second']:,.0f} tok/s, {err}"
                if r.get("worst_document_error"):
                    cell += f", worst {max(r['worst_document_error']):.2f}"
                cells.append(cell)
            fewer = result.get("fewer_documents", {}).get(str(T))
            name = f"{k} ({fewer[k]})" if fewer else k
            lines.append(f"| {name} | {T:,} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def reference_summary(refs: dict) -> str:
    """docs/performance.md's sentence on the references of tomotopy's model on the whole addresses past
    T = 20 (`refs`: the references JSON): each one's settings and CPU seconds, how far apart its two
    runs are (in total and on one address), and its total less those of the other references of the
    same documents (`reference_settings`), with the largest difference on one address."""
    parts = []
    for T in sorted(int(t) for t in refs if int(t) > 20):
        main = refs[str(T)].get("tomotopy/addresses")
        if main is None or "run_log_prob" not in main:
            continue
        docs, tokens = np.asarray(main["doc_log_prob"]), main["tokens"]
        runs = np.asarray(main["run_log_prob"])
        apart = runs[0] - runs[1]
        text = (f"T = {T:,} ({len(docs)} addresses, {tokens:,} tokens): {main['method']}, "
                f"{main['cpu_seconds']:,.0f} CPU s, its 2 runs {abs(np.sum(apart)):.2f} nats apart "
                f"in total and up to {np.max(np.abs(apart)):.2f} on one address")
        for key in ("default-setting", "cross-check"):
            other = refs[str(T)].get(f"tomotopy/addresses {key}")
            if other:
                d = docs - np.asarray(other["doc_log_prob"])
                text += (f"; less {other['method']}: {np.sum(d):+.2f} nats ({np.sum(d) / tokens:+.4f} per "
                         f"token), up to {np.max(np.abs(d)):.2f} on one address")
        parts.append(text)
    return "; ".join(parts)


def cost_ratios(result: dict) -> str:
    """docs/performance.md's sentence: CPU time of tealeaves' default and of the bridge over
    tomotopy's `infer` (ratios of the tokens per CPU-second in the table)."""
    parts = []
    for T in sorted({r["T"] for r in result["rows"]}):
        for k in SETS:
            infer = _row(result, T, k, "tomotopy")
            cells = [f"{tool} {infer['tokens_per_cpu_second'] / r['tokens_per_cpu_second']:.1f}×"
                     for tool in ("tealeaves", "bridge") if (r := _row(result, T, k, tool)) and infer]
            parts.append(f"{k} at T = {T}: " + ", ".join(cells))
    return "CPU time over tomotopy's infer: " + "; ".join(parts)


if __name__ == "__main__":
    main()
