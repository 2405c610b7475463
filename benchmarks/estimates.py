"""Estimates against measured time (issue 33): every stage tealeaves estimates before the work, at
several sizes, in CPU seconds of one process (the machine is shared: wall-clock time would measure
the other jobs too; CPU seconds count this process and its finished children).

- `evaluate`'s stages (`tealeaves.evaluate.cost.estimate_cost`): held-out (left-to-right, the
  default: 300 particles, 2 runs), predictive, coherence (NPMI and UMass over a text reference) and
  automated intrusion, for the bundled 20- and 50-topic State of the Union models and a synthetic
  200-topic one, on 100 and 400 held-out paragraphs (and ten of them joined into one) with
  references of 2,000 and 8,000 paragraphs (`--quick`: 50 and 200; 1,000); each stage's CPU
  seconds as `tl.evaluate` times them (`res.stages`);
- the other held-out estimators (Chib-style, AIS, importance sampling; and left-to-right alone) at
  the demo's settings on 50 paragraphs (`--quick`: 10), against the estimate `heldout` checks;
- `compare`'s Ratio-AIS (its defaults) at 20, 50 and 200 topics on 10 and 30 paragraphs
  (`--quick`: 5): its estimate is `update_seconds` of the site updates `compare` checks;
- each trainer (`select.train`) at K = 5, 20 and 50, and `select`'s plan (`select._check_plan`,
  training and evaluating every model; K = 5 and 20, one restart, 100 iterations) per trainer, on
  500 and 1,500 paragraphs (`--quick`: 300);
- `tealeaves demo` and `tealeaves demo --quick` as a user runs them (a child process; its CPU
  seconds from `getrusage`: user + system, as `/usr/bin/time` gives them), against the figure
  docs/guide/demo.md states.

The numba kernels are compiled (and cached) by a warm-up before anything is timed. Ratios are
measured / estimated: 1 is exact, above 1 the estimate was short.

    python benchmarks/estimates.py [--quick] [--out benchmarks/results/estimates.json]

The constants the estimates use are then set to the full-size run's fit (`"fit"`;
tests/test_doc_figures.py keeps them equal), and every estimate is computed again from the same
workloads with them, the measured CPU seconds kept (`--reestimate RUN.json`: no work is timed
again; the run's estimates and summary before stay as `"estimate_before"` and `"summary_before"`,
`"fit"` is fitted again from the run's measurements, `"constants"` are the ones estimated with):

    python benchmarks/estimates.py --reestimate RUN.json [--out benchmarks/results/estimates.json]

The fit is checked on a separate run of other sizes (`--quick`: other documents, references,
estimators' documents and corpora; not the fit's own measurements), estimated with the full run's
constants:

    python benchmarks/estimates.py --quick --no-demo --out QUICK.json
    python benchmarks/estimates.py --reestimate QUICK.json --out benchmarks/results/estimates_check.json

Each part can run alone (`--part evaluate` (`--model NAME`: one model's workloads), heldout,
compare, train, select or demo; each its own process, timed beside the others on a shared machine,
into --out) and `--combine PART.json ...` makes one run of them (its summary and fit).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time

import numpy as np

import tealeaves as tl
from tealeaves import datasets
from tealeaves.corpus import write_text_corpus
from tealeaves.evaluate import STAGES
from tealeaves.evaluate.cost import ratio_ais_updates
from tealeaves.util.limits import update_seconds
from tealeaves.util.stages import cpu_seconds

HERE = os.path.dirname(os.path.abspath(__file__))
SIZES = {"full": {"docs": (100, 400), "refs": (2000, 8000), "compare_docs": (10, 30),
                  "select_docs": (500, 1500), "method_docs": 50},
         "quick": {"docs": (50, 200), "refs": (1000,), "compare_docs": (5,), "select_docs": (300,),
                   "method_docs": 10}}


def synthetic_200() -> tl.TopicModel:
    """A 200-topic model on the State of the Union's words (topics Dir(0.05), symmetric alpha)."""
    vocab = datasets.sotu_model("sotu-20-asym").vocab
    m = tl.synthetic.random_model(200, len(vocab), beta=0.05, alpha_sum=5.0, alpha_shape="symmetric", seed=7)
    return tl.TopicModel(m.phi, m.alpha, vocab=vocab, name="synthetic-200")


def warm_up() -> None:
    docs = datasets.sotu().heldout.subset(range(3))
    m = datasets.sotu_model("sotu-20-asym")
    tl.evaluate([m], heldout=docs, reference=datasets.sotu().train.subset(range(50)), particles=5)
    tl.compare(m, datasets.sotu_model("sotu-20-sym"), docs, temperatures=5, start_temperatures=5, chains=2)
    for method in ("chib", "ais", "is-prior-theta"):
        tl.heldout(m, docs, method=method, runs=2)
    import importlib

    sel = importlib.import_module("tealeaves.select")
    texts = [[m.vocab[w] for w in d] for d in docs]
    for trainer in sel.TRAINERS:  # the libraries imported once before any is timed
        sel.train(texts, 2, trainer, 10, 0, "warm")


def joined(docs: tl.Corpus, group: int) -> tl.Corpus:
    """Every `group` consecutive documents joined into one (long documents, the same tokens)."""
    words = [np.concatenate([docs[i] for i in range(j, min(j + group, len(docs)))])
             for j in range(0, len(docs), group)]
    return tl.Corpus.from_word_ids(words, docs.vocab, f"{docs.source} joined by {group}")


def evaluate_stages(sizes: dict, tmp: str, only: str | None = None) -> list[dict]:
    """Every workload of `evaluate` (one model at a time, or only the model named `only`):
    paragraphs and ten paragraphs joined, the reference as a text file (as the command line reads
    it) and, at one size, as a Corpus."""
    corpus = datasets.sotu()
    models = [_model(m) for m in ("sotu-20-asym", "sotu-50-asym", "synthetic-200") if only in (None, m)]
    refs = {}
    for R in sizes["refs"]:
        refs[R] = os.path.join(tmp, f"ref{R}.txt")
        write_text_corpus(corpus.train.subset(range(R)), refs[R])
    out = []
    for m in models:
        for D in sizes["docs"]:
            for R in sizes["refs"]:
                for group in (1, 10):  # paragraphs (about 36 tokens) and ten of them joined
                    if (m.num_topics == 200 or group > 1) and (D > sizes["docs"][1] or R > sizes["refs"][0]):
                        continue  # the 200-topic model and long documents at the smaller sizes only
                    out.append(_evaluate_one(m, corpus, D, refs[R], R, group))
        out.append(_evaluate_one(m, corpus, sizes["docs"][0], corpus.train.subset(range(sizes["refs"][0])),
                                 sizes["refs"][0], 1))
    return out


def _evaluate_one(m: tl.TopicModel, corpus, D: int, ref, R: int, group: int) -> dict:
    from tealeaves.heldout import get_method

    docs = corpus.heldout.subset(range(D))
    docs = joined(docs, group) if group > 1 else docs
    res = tl.evaluate([m], heldout=docs, reference=ref, seed=0)
    spec = get_method("left-to-right")
    work = 2 * sum(spec.work(int(n), spec.resolve({}), m.num_topics) for n in docs.lengths)
    kind = "memory" if isinstance(ref, tl.Corpus) else "text"
    ref_tokens = int(ref.num_tokens) if kind == "memory" else int(corpus.train.subset(range(R)).num_tokens)
    row = {"model": m.name, "topics": m.num_topics, "words": m.num_words, "documents": len(docs),
           "joined": group, "tokens": int(docs.num_tokens), "reference_documents": R,
           "reference_tokens": ref_tokens, "reference_kind": kind, "heldout_site_updates": work,
           "stages": {s: {"cpu": res.stages[s]["cpu"], "wall": res.stages[s]["wall"],
                          "estimate": res.estimate["stages"].get(s)} for s in STAGES}}
    print(f"evaluate {m.name} D={len(docs)} (joined {group}) R={R} {kind}: " + ", ".join(
        f"{s} {v['cpu']:.2f}/{v['estimate']:.2f}" for s, v in row["stages"].items()
        if v["estimate"]), flush=True)
    return row


def heldout_methods(sizes: dict) -> list[dict]:
    """The other held-out estimators at the demo's settings, against the estimate `heldout` checks
    its budget with (`update_seconds` of the estimator's own cost model)."""
    from tealeaves.heldout import get_method

    corpus = datasets.sotu()
    out = []
    for m in (datasets.sotu_model("sotu-20-asym"), datasets.sotu_model("sotu-50-asym"), synthetic_200()):
        docs = corpus.heldout.subset(range(sizes["method_docs"]))
        for method, params in (("chib", {"chain_length": 400}), ("ais", {"temperatures": 1000}),
                               ("is-prior-theta", {"samples": 1000}), ("left-to-right", {})):
            c0 = cpu_seconds()
            tl.heldout(m, docs, method=method, runs=2, seed=0, **params)
            cpu = cpu_seconds() - c0
            est = heldout_estimate(m, docs, method, params, 2)
            spec = get_method(method)
            work = 2 * sum(spec.work(int(n), spec.resolve(params), m.num_topics) for n in docs.lengths)
            out.append({"method": method, "kernel": spec.kernel, "topics": m.num_topics,
                        "documents": len(docs), "tokens": int(docs.num_tokens), "site_updates": work,
                        "cpu": cpu, "estimate": est})
            print(f"heldout {method} K={m.num_topics}: {cpu:.2f}/{est:.2f}", flush=True)
    return out


def heldout_estimate(m, docs, method: str, params: dict, runs: int) -> float:
    from tealeaves.evaluate.cost import heldout_seconds
    from tealeaves.heldout import get_method

    spec = get_method(method)
    return heldout_seconds(spec, spec.resolve(params), docs.lengths, runs, m.num_topics, 1)


def compare_runs(sizes: dict) -> list[dict]:
    corpus = datasets.sotu()
    pairs = [(datasets.sotu_model("sotu-20-asym"), datasets.sotu_model("sotu-20-sym")),
             (datasets.sotu_model("sotu-50-asym"), _perturbed(datasets.sotu_model("sotu-50-asym"))),
             (synthetic_200(), _perturbed(synthetic_200()))]
    out = []
    for a, b in pairs:
        for D in sizes["compare_docs"]:
            docs = corpus.heldout.subset(range(D))
            c0 = cpu_seconds()
            tl.compare(a, b, docs, seed=0)
            cpu = cpu_seconds() - c0
            updates = ratio_ais_updates(docs.num_tokens)  # what evaluate prices Ratio-AIS by
            est = update_seconds(updates, 1, a.num_topics, "pair")
            out.append({"topics": a.num_topics, "documents": D, "tokens": int(docs.num_tokens),
                        "site_updates": updates, "cpu": cpu, "estimate": est})
            print(f"ratio-ais K={a.num_topics} D={D}: {cpu:.2f}/{est:.2f}", flush=True)
    return out


def _perturbed(m: tl.TopicModel) -> tl.TopicModel:
    rng = np.random.default_rng(1)
    phi = m.phi * rng.lognormal(0, 0.3, size=m.phi.shape)
    return tl.TopicModel(phi / phi.sum(axis=1, keepdims=True), m.alpha, vocab=m.vocab, name=m.name + "-b")


def train_runs(sizes: dict) -> list[dict]:
    """Training alone, per trainer (`select.train`, 100 iterations: tomotopy 100 sweeps, gensim 2
    passes, scikit-learn 10 batch iterations), against `select.train_seconds`."""
    import importlib

    sel = importlib.import_module("tealeaves.select")
    corpus = datasets.sotu()
    texts = [[corpus.train.vocab[w] for w in d] for d in corpus.train]
    out = []
    for trainer in sel.TRAINERS:
        for D in sizes["select_docs"]:
            for K in (5, 20, 50):
                part = texts[:D]
                c0 = cpu_seconds()
                sel.train(part, K, trainer, 100, 0, "m")
                cpu = cpu_seconds() - c0
                est = sel.train_seconds(part, K, trainer, 100)
                out.append({"trainer": trainer, "documents": D, "tokens": sum(map(len, part)), "topics": K,
                            "iterations": 100, "passes": sel._passes(trainer, 100), "cpu": cpu,
                            "estimate": est})
                print(f"train {trainer} D={D} K={K}: {cpu:.2f}/{est:.2f}", flush=True)
    return out


def select_runs(sizes: dict) -> list[dict]:
    import importlib

    sel = importlib.import_module("tealeaves.select")
    corpus = datasets.sotu()
    texts = [[corpus.train.vocab[w] for w in d] for d in corpus.train]
    out = []
    for trainer in sel.TRAINERS:
        for D in sizes["select_docs"]:
            part = texts[:D]
            train_idx, test_idx = sel.split(len(part), 0.2, 0)
            train, test = [part[i] for i in train_idx], [part[i] for i in test_idx]
            est = sel._check_plan(train, test, [5, 20], 1, 100, 1, {}, trainer=trainer)
            c0 = cpu_seconds()
            sel.select(part, topics=[5, 20], restarts=1, iterations=100, trainer=trainer, progress=False)
            cpu = cpu_seconds() - c0
            out.append({"trainer": trainer, "documents": D, "topics": [5, 20], "restarts": 1,
                        "iterations": 100, "cpu": cpu, "estimate": est})
            print(f"select {trainer} D={D}: {cpu:.2f}/{est:.2f}", flush=True)
    return out


def demo_runs(quick_only: bool) -> list[dict]:
    out = []
    for args in ([["--quick"]] if quick_only else [["--quick"], []]):
        with tempfile.TemporaryDirectory() as tmp:
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            t0 = time.perf_counter()
            subprocess.run([sys.executable, "-m", "tealeaves", "demo", *args, "--report",
                            os.path.join(tmp, "demo.html")], check=True, capture_output=True, cwd=tmp)
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
        out.append({"args": args, "cpu": cpu, "wall": time.perf_counter() - t0})
        print(f"demo {' '.join(args) or '(full)'}: {cpu:.1f} CPU s", flush=True)
    return out


def summary(r: dict) -> dict:
    """Per stage: the ratio measured / estimated at its lowest and highest over the sizes."""
    ratios: dict[str, list[float]] = {}
    for row in r["evaluate"]:
        for s, v in row["stages"].items():
            if v["estimate"] and v["cpu"] > 0.05:  # a stage of under 0.05 CPU s is noise
                ratios.setdefault(f"evaluate {s}", []).append(v["cpu"] / v["estimate"])
    for key in ("compare", "select"):
        for row in r[key]:
            name = "ratio-ais" if key == "compare" else "select"
            ratios.setdefault(name, []).append(row["cpu"] / row["estimate"])
    for row in r.get("heldout", []):
        ratios.setdefault(f"heldout {row['method']}", []).append(row["cpu"] / row["estimate"])
    for row in r.get("train", []):
        ratios.setdefault(f"train {row['trainer']}", []).append(row["cpu"] / row["estimate"])
    return {k: {"min": min(v), "max": max(v), "n": len(v)} for k, v in ratios.items()}


def _line(t: list[float], y: list[float]) -> list[float]:
    """a, b of y = a + b t, least squares of the relative error (weights 1 / y)."""
    b, a = np.polyfit(np.asarray(t, float), np.asarray(y, float), 1, w=1 / np.asarray(y, float))
    return [float(f"{max(a, 0.0):.2g}"), float(f"{max(b, 0.0):.2g}")]


def fit(r: dict) -> dict:
    """The constants the estimates use, fitted to these measurements (two significant digits):
    SITE_SECONDS per kernel, each from its own runs (a + b topics per site update: "sparse" from
    left-to-right in evaluate and alone, "dense", "ais" and "importance" from the held-out
    estimators on those kernels, "pair" from Ratio-AIS), SITE_SECONDS["theta"] with
    PREDICTIVE_DOC_SECONDS from the predictive stage (sweeps x (a + b topics) + documents x (c + d
    topics^2 words)), the counting rates (over the coherence and intrusion stages of at least 0.05
    CPU s, with PASS_SECONDS per counting pass; text references counted as `estimate_cost` counts
    them, `text_tokens`) -- these two by non-negative least squares of the relative error -- and
    TRAIN_SECONDS per trainer (seconds per call, per token and pass, per token, pass and topic:
    non-negative least squares)."""
    from scipy.optimize import nnls

    from tealeaves.evaluate.cost import DEFAULT_WINDOWS, PREDICTIVE_SWEEPS, word_tasks_work
    from tealeaves.heldout import get_method

    per: dict[str, list[tuple[int, float]]] = {}
    for row in r["evaluate"]:
        per.setdefault("sparse", []).append((row["topics"], row["stages"]["held-out"]["cpu"]
                                             / row["heldout_site_updates"]))
    for row in r["heldout"]:
        kernel = get_method(row["method"]).kernel
        per.setdefault(kernel, []).append((row["topics"], row["cpu"] / row["site_updates"]))
    per["pair"] = [(row["topics"], row["cpu"] / row["site_updates"]) for row in r["compare"]]
    sites = {k: _line(*zip(*per[k], strict=True)) for k in ("sparse", "dense", "ais", "importance", "pair")}
    a = np.array([[row["tokens"] * PREDICTIVE_SWEEPS, row["tokens"] * PREDICTIVE_SWEEPS * row["topics"],
                   row["documents"], row["documents"] * row["topics"] ** 2 * row["words"]]
                  for row in r["evaluate"]])
    y = np.array([row["stages"]["predictive"]["cpu"] for row in r["evaluate"]])
    coef, _ = nnls(a / y[:, None], np.ones_like(y))  # least squares of the relative error
    sites["theta"] = [float(f"{x:.2g}") for x in coef[:2]]
    out = {"SITE_SECONDS": sites, "PREDICTIVE_DOC_SECONDS": [float(f"{x:.2g}") for x in coef[2:]]}
    rows, y = [], []
    windows = [DEFAULT_WINDOWS[m] for m in ("npmi", "umass")]
    for row in r["evaluate"]:
        text = row["reference_kind"] == "text"
        n = text_tokens(row["reference_documents"]) if text else row["reference_tokens"]
        T, V = row["topics"], row["words"]
        rows.append([n * len(windows) * text, n * sum(w or 1 for w in windows),
                     len(windows) * (10 * T) ** 2, 0, len(windows)])
        y.append(row["stages"]["coherence"]["cpu"])
        rows.append([n * text, n * 10, (6 * T) ** 2, T * T * 10, 1])
        y.append(max(row["stages"]["intrusion"]["cpu"] - word_tasks_work(T, V, 10) / 1e8, 0.0))
    a, y = np.array(rows, float), np.array(y, float)
    keep = y > 0.05  # a stage of under 0.05 CPU s is noise (as in `summary`)
    inv, _ = nnls(a[keep] / y[keep, None], np.ones(int(keep.sum())))  # least squares of the relative error
    names = ("TEXT_RATE", "COUNT_RATE", "PAIR_RATE", "TASK_RATE")
    out["rates"] = {n: float(f"{1 / x:.2g}") if x > 0 else None for n, x in zip(names, inv[:4], strict=True)}
    out["PASS_SECONDS"] = float(f"{inv[4]:.2g}")
    out["TRAIN_SECONDS"] = {}
    for trainer in sorted({row["trainer"] for row in r["train"]}):
        mine = [row for row in r["train"] if row["trainer"] == trainer]
        a = np.array([[1.0, row["passes"] * row["tokens"], row["passes"] * row["tokens"] * row["topics"]]
                      for row in mine])
        coef, _ = nnls(a, np.array([row["cpu"] for row in mine]))
        out["TRAIN_SECONDS"][trainer] = [float(f"{x:.2g}") for x in coef]
    return out


_TEXT_TOKENS: dict[int, float] = {}


def text_tokens(R: int) -> float:
    """The tokens `estimate_cost` assumes for the first R training paragraphs as a text file (its
    size / BYTES_PER_TOKEN, as a user's file is priced): the counting rates are fitted on the same
    count the estimate will use."""
    from tealeaves.evaluate.cost import reference_tokens

    if R not in _TEXT_TOKENS:
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "ref.txt")
            write_text_corpus(datasets.sotu().train.subset(range(R)), path)
            _TEXT_TOKENS[R] = reference_tokens(path)[0]
    return _TEXT_TOKENS[R]


def _model(name: str) -> tl.TopicModel:
    return synthetic_200() if name == "synthetic-200" else datasets.sotu_model(name)


def reestimate(r: dict, tmp: str) -> dict:
    """Every estimate of run `r` computed again with the package's constants as they are now, from
    the same workloads (models, documents, references and settings rebuilt as the run built them);
    the run's estimates are kept as "estimate_before", its summary as "summary_before"."""
    import importlib

    from tealeaves.evaluate.cost import estimate_cost
    from tealeaves.evaluate.options import EvaluateOptions
    from tealeaves.heldout import get_method

    sel = importlib.import_module("tealeaves.select")
    corpus = datasets.sotu()
    refs: dict[tuple[int, str], object] = {}
    for row in r["evaluate"]:
        R, kind = row["reference_documents"], row["reference_kind"]
        if (R, kind) not in refs:
            if kind == "text":
                refs[R, kind] = os.path.join(tmp, f"ref{R}.txt")
                write_text_corpus(corpus.train.subset(range(R)), refs[R, kind])
            else:
                refs[R, kind] = corpus.train.subset(range(R))
        docs = corpus.heldout.subset(range(row["documents"] * row["joined"]))
        docs = joined(docs, row["joined"]) if row["joined"] > 1 else docs
        est = estimate_cost([_model(row["model"])], [docs], refs[R, kind], EvaluateOptions(seed=0))["seconds"]
        for s, v in row["stages"].items():  # a stage estimate_cost leaves out (the judge's): as it was
            v["estimate_before"], v["estimate"] = v["estimate"], est.get(s, v["estimate"])
    models = {m: _model(m) for m in ("sotu-20-asym", "sotu-50-asym", "synthetic-200")}
    for row in r["heldout"]:
        m = next(m for m in models.values() if m.num_topics == row["topics"])
        docs = corpus.heldout.subset(range(row["documents"]))
        params = {"chib": {"chain_length": 400}, "ais": {"temperatures": 1000},
                  "is-prior-theta": {"samples": 1000}, "left-to-right": {}}[row["method"]]
        row["estimate_before"] = row["estimate"]
        row["estimate"] = heldout_estimate(m, docs, row["method"], params, 2)
        row["kernel"] = get_method(row["method"]).kernel
    for row in r["compare"]:
        row["estimate_before"] = row["estimate"]
        row["estimate"] = update_seconds(row["site_updates"], 1, row["topics"], "pair")
    texts = [[corpus.train.vocab[w] for w in d] for d in corpus.train]
    for row in r["train"]:
        row["estimate_before"] = row["estimate"]
        row["estimate"] = sel.train_seconds(texts[:row["documents"]], row["topics"], row["trainer"], 100)
    for row in r["select"]:
        part = texts[:row["documents"]]
        train_idx, test_idx = sel.split(len(part), 0.2, 0)
        row["estimate_before"] = row["estimate"]
        row["estimate"] = sel._check_plan([part[i] for i in train_idx], [part[i] for i in test_idx],
                                          row["topics"], 1, 100, 1, {}, trainer=row["trainer"])
    r["summary_before"], r["summary"] = r["summary"], summary(r)
    r["fit"], r["constants"] = fit(r), constants()
    return r


def constants() -> dict:
    """The constants the package's estimates use now (what a run's "estimate"s were computed with)."""
    import importlib

    from tealeaves.evaluate import cost
    from tealeaves.util.limits import SITE_SECONDS

    sel = importlib.import_module("tealeaves.select")
    return {"SITE_SECONDS": {k: list(v) for k, v in SITE_SECONDS.items()},
            "PREDICTIVE_DOC_SECONDS": list(cost.PREDICTIVE_DOC_SECONDS), "PASS_SECONDS": cost.PASS_SECONDS,
            "rates": {k: getattr(cost, k) for k in ("TEXT_RATE", "COUNT_RATE", "PAIR_RATE", "TASK_RATE")},
            "TRAIN_SECONDS": {k: list(v) for k, v in sel.TRAIN_SECONDS.items()}}


PARTS = {"evaluate": "evaluate_stages", "heldout": "heldout_methods", "compare": "compare_runs",
         "train": "train_runs", "select": "select_runs", "demo": "demo_runs"}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--out", default=os.path.join(HERE, "results", "estimates.json"))
    ap.add_argument("--no-demo", action="store_true")
    ap.add_argument("--reestimate", metavar="RUN.json",
                    help="a run's results: its estimates computed again with the constants as they are now")
    ap.add_argument("--part", choices=PARTS, help="run this part only (into --out)")
    ap.add_argument("--model", help="with --part evaluate: this model's workloads only")
    ap.add_argument("--combine", nargs="+", metavar="PART.json", help="the parts' results made one run")
    args = ap.parse_args()
    sizes = SIZES["quick" if args.quick else "full"]
    if args.part:
        warm_up()
        with tempfile.TemporaryDirectory() as tmp, open(args.out, "w", encoding="utf-8") as fh:
            rows = (demo_runs(args.quick) if args.part == "demo" else evaluate_stages(sizes, tmp, args.model)
                    if args.part == "evaluate" else globals()[PARTS[args.part]](sizes))
            json.dump({"quick": args.quick, args.part: rows}, fh, indent=1)
        return
    if args.combine:
        r = {"machine": platform.machine(), "cpus": os.cpu_count(),
             "shared": "measured on a 2-core machine shared with other jobs: CPU seconds, not wall-clock; "
                       "each part in its own process, beside the others"}
        for path in args.combine:
            with open(path, encoding="utf-8") as fh:
                for key, value in json.load(fh).items():
                    r[key] = r.get(key, []) + value if isinstance(value, list) else value
        r["summary"] = summary(r)
        r["fit"] = fit(r)
        _print_and_write(r, args.out)
        return
    if args.reestimate:
        with open(args.reestimate, encoding="utf-8") as fh, tempfile.TemporaryDirectory() as tmp:
            r = reestimate(json.load(fh), tmp)
        _print_and_write(r, args.out)
        return
    warm_up()
    with tempfile.TemporaryDirectory() as tmp:
        r = {"quick": args.quick, "machine": platform.machine(), "cpus": os.cpu_count(),
             "shared": "measured on a 2-core machine shared with other jobs: CPU seconds, not wall-clock",
             "evaluate": evaluate_stages(sizes, tmp), "heldout": heldout_methods(sizes),
             "compare": compare_runs(sizes), "train": train_runs(sizes), "select": select_runs(sizes)}
    r["demo"] = [] if args.no_demo else demo_runs(args.quick)
    r["summary"] = summary(r)
    r["fit"], r["constants"] = fit(r), constants()
    _print_and_write(r, args.out)


def _print_and_write(r: dict, out: str) -> None:
    print("fit:", json.dumps(r["fit"]))
    for k, v in r["summary"].items():
        print(f"{k:24s} measured / estimated {v['min']:.2f} .. {v['max']:.2f} ({v['n']} sizes)")
    os.makedirs(os.path.dirname(out), exist_ok=True)
    with open(out, "w", encoding="utf-8") as fh:
        json.dump(r, fh, indent=1)


if __name__ == "__main__":
    main()
