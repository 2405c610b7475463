"""A budget per document from its own runs (`target_gap=`, issue 36 point 1): accuracy and CPU cost
against today's default and tomotopy's `infer`, side by side in one process.

Model and documents as in benchmarks/heldout_vs_peers.py: tomotopy LDA trained on the bundled
training paragraphs (T = 20, 50, ...; cached in --cache), 300 random held-out State of the Union
paragraphs (37 tokens on average) and 12 whole held-out addresses (2,234 tokens on average).
References: that benchmark's (benchmarks/results/heldout_vs_peers_references.json: left-to-right
`smc-full`, 1,000 particles, 2 runs on the paragraphs; `smc` R = 500, K = 256, 2 runs on the
addresses at T = 20), or a JSON given by --address-reference T=PATH ({"doc_log_prob": [...]}, an
independent longer run) for the addresses at T; the JSON records which.

Each configuration runs under --seeds seeds; for each: the error of the total per token (estimate
less reference), the largest error of one document, CPU seconds (`time.process_time`, numpy on
one thread, the kernels compiled before) over tomotopy's `infer(docs, iterations=100, workers=1)`
on the same documents (timed in the same round), the documents' final budgets, and the interval's
coverage: the share of documents whose reference lies in [estimate - 1.96 se, estimate + gap +
1.96 se] (se = the runs' sd over sqrt(runs), gap = sd^2 / (2 runs), the estimated Jensen gap) and
whether the total's reference lies in [total - 1.96 sd, total + gap + 1.96 sd] (sd: the bootstrap
over runs). The reference's own error counts against the coverage.

    nice -n 10 python experiments/adaptive_budget.py --topics 20 --sets paragraphs addresses \
        --configs default gap --seeds 0 1 [--address-reference 50=/path.json]

Merges its rows into experiments/results/adaptive_budget.json; `markdown()` gives
docs/adaptive_budget.md.
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import json  # noqa: E402
import math  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "benchmarks"))
import heldout_vs_peers as peers  # noqa: E402

import tealeaves as tl  # noqa: E402
from tealeaves.heldout import adaptive  # noqa: E402

RESULTS = os.path.join(HERE, "results", "adaptive_budget.json")
PAGE = os.path.join(HERE, "..", "docs", "adaptive_budget.md")
# name -> (what it is, tl.heldout keywords)
CONFIGS: dict[str, tuple[str, dict]] = {
    "default": ("today's default: smc, R = 300, K = 128, 1 run", {}),
    "fixed-30-64": ("no target: smc, R = 30, K = 64, 1 run", {"particles": 30, "rejuvenate": 64}),
    "fixed-15-64x2": ("no target: smc, R = 15, K = 64, 2 runs (an interval)",
                      {"particles": 15, "rejuvenate": 64, "runs": 2}),
    "gap": ("target_gap 0.0005 from R = 4, K = 8, doubling K then R in turn (4 runs)",
            {"target_gap": 5e-4, "particles": 4, "rejuvenate": 8}),
    "gap-reuse": ("as `gap`, but the result keeps the 4 runs that made the stopping decision",
                  {"target_gap": 5e-4, "particles": 4, "rejuvenate": 8}),
    "gap-R": ("target_gap 0.0005 from R = 4, K = 8, doubling R only",
              {"target_gap": 5e-4, "particles": 4, "rejuvenate": 8, "grow": ("particles",)}),
    "gap-K": ("target_gap 0.0005 from R = 4, K = 8, doubling K only",
              {"target_gap": 5e-4, "particles": 4, "rejuvenate": 8, "grow": ("rejuvenate",)}),
    "gap-0.001": ("target_gap 0.001 from R = 4, K = 8, doubling K then R in turn",
                  {"target_gap": 1e-3, "particles": 4, "rejuvenate": 8}),
    "gap-0.00025": ("target_gap 0.00025 from R = 4, K = 8, doubling K then R in turn",
                    {"target_gap": 2.5e-4, "particles": 4, "rejuvenate": 8}),
    "gap-8-16": ("target_gap 0.0005 from R = 8, K = 16, doubling K then R in turn",
                 {"target_gap": 5e-4, "particles": 8, "rejuvenate": 16}),
    "gap-8-32": ("target_gap 0.0005 from R = 8, K = 32, doubling K then R in turn",
                 {"target_gap": 5e-4, "particles": 8, "rejuvenate": 32}),
    "gap-32-8": ("target_gap 0.0005 from R = 32, K = 8, doubling K then R in turn",
                 {"target_gap": 5e-4, "particles": 32, "rejuvenate": 8}),
    "gap-64-8": ("target_gap 0.0005 from R = 64, K = 8, doubling K then R in turn",
                 {"target_gap": 5e-4, "particles": 64, "rejuvenate": 8}),
    "gap-64-8-R": ("target_gap 0.0005 from R = 64, K = 8, doubling R only",
                   {"target_gap": 5e-4, "particles": 64, "rejuvenate": 8, "grow": ("particles",)}),
}


def measure(T: int, name: str, corpus: tl.Corpus, model: tl.TopicModel, mdl, configs: list[str],
            seed: int, keep) -> None:
    """One round on one document set: tomotopy's infer, then each configuration, timed alike. Rows
    keep each document's estimate and run-to-run sd; errors are taken against the reference in
    `scored` (so a better reference can come later); `keep(row)` saves each."""
    texts = [[corpus.vocab[i] for i in d] for d in corpus]
    docs = [mdl.make_doc(d) for d in texts]
    t0 = time.process_time()
    mdl.infer(docs, iterations=peers.INFER_ITERATIONS, workers=1)
    infer_cpu = time.process_time() - t0
    for c in configs:
        kw = CONFIGS[c][1]
        adaptive.FRESH = c != "gap-reuse"
        t0 = time.process_time()
        r = tl.heldout(model, corpus, seed=seed, workers=1, bootstrap=1000, max_hours=1000, **kw)
        cpu = time.process_time() - t0
        adaptive.FRESH = True
        row = {"T": T, "set": name, "config": c, "seed": seed, "documents": len(corpus),
               "tokens": int(corpus.num_tokens), "infer_cpu": infer_cpu, "cpu": cpu,
               "cost_over_infer": cpu / infer_cpu, "site_updates": r.site_updates, "runs": r.runs,
               "doc_log_prob": r.doc_log_prob.tolist(),
               "doc_sd": r.doc_sd.tolist() if r.runs >= 2 else [None] * len(corpus),
               "total_sd": r.sd if math.isfinite(r.sd) else None}
        a = r.adaptive
        if a is not None:
            row["not_converged"] = a["not_converged"]
            row["grown"] = {g: [int(np.median(v)), int(np.max(v))] for g, v in a["grown"].items()}
        keep(row)
        print(json.dumps({k: v for k, v in row.items() if k not in ("doc_log_prob", "doc_sd")}), flush=True)


def scored(row: dict, ref: np.ndarray) -> dict:
    """A row's figures against reference values `ref`: the error of the total per token, the worst
    document, and (runs >= 2) the estimated gap and the coverage of the intervals (module doc)."""
    est = np.array(row["doc_log_prob"])
    err = est - ref
    out = {"error_per_token": float(err.sum() / row["tokens"]), "worst_document": float(np.abs(err).max())}
    if row["runs"] >= 2:
        sd = np.array(row["doc_sd"])
        gap, se = sd**2 / (2 * row["runs"]), sd / math.sqrt(row["runs"])
        out["estimated_gap_per_token"] = float(gap.sum() / row["tokens"])
        out["document_coverage"] = float(np.mean((err >= -gap - 1.96 * se) & (err <= 1.96 * se)))
        half = 1.96 * row["total_sd"]
        out["total_covered"] = bool(-gap.sum() - half <= err.sum() <= half)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--topics", type=int, nargs="+", default=[20])
    ap.add_argument("--sets", nargs="+", default=list(peers.SETS), choices=peers.SETS)
    ap.add_argument("--configs", nargs="+", default=["default", "gap"], choices=list(CONFIGS))
    ap.add_argument("--seeds", type=int, nargs="*", default=[0, 1],
                    help="none: only read the references again and rewrite the page")
    ap.add_argument("--cache", default=peers.default_cache())
    ap.add_argument("--address-reference", nargs="*", default=[], metavar="T=PATH")
    args = ap.parse_args()
    given = {int(k): v for k, v in (x.split("=", 1) for x in args.address_reference)}
    with open(peers.REFERENCES) as fh:
        cached = json.load(fh)
    saved = json.load(open(RESULTS)) if os.path.exists(RESULTS) else {"rows": [], "references": {}}
    for r in saved["rows"]:  # NaN is not JSON (one run: no sd)
        r["total_sd"] = r["total_sd"] if r["total_sd"] is not None and math.isfinite(r["total_sd"]) else None
        r["doc_sd"] = [None if r["runs"] < 2 else x for x in r["doc_sd"]]
    for T in args.topics:
        docs = peers.documents(T)
        mdl = peers.tomotopy_model(T, args.cache)
        model, _ = peers.as_topic_model(mdl, docs["paragraphs"].vocab)
        tl.heldout(model, docs["paragraphs"].subset([0]), particles=4, rejuvenate=4, target_gap=1e-3,
                   bootstrap=0)  # compile before timing
        for name in args.sets:
            if name == "addresses" and T in given:
                with open(given[T]) as fh:
                    entry = json.load(fh)
                how = f"{entry.get('method', os.path.basename(given[T]))} (independent of the table's runs)"
            else:
                entry = cached[str(T)][f"tomotopy/{name}"]
                how = f"{entry['method']}, {entry['runs']} runs"
            saved["references"][f"{T}/{name}"] = {"how": how, "doc_log_prob": list(entry["doc_log_prob"])}
            for seed in args.seeds:
                def keep(row: dict) -> None:  # saved as each configuration finishes
                    key = (row["T"], row["set"], row["config"], row["seed"])
                    saved["rows"] = [r for r in saved["rows"]
                                     if (r["T"], r["set"], r["config"], r["seed"]) != key] + [row]
                    with open(RESULTS, "w") as fh:
                        json.dump(saved, fh, indent=1)

                measure(T, name, docs[name], model, mdl, args.configs, seed, keep)
    with open(RESULTS, "w") as fh:
        json.dump(saved, fh, indent=1)
    with open(PAGE, "w") as fh:
        fh.write(markdown(saved))


def summary(result: dict) -> list[dict]:
    """One line per (T, set, config): the seeds' mean error per token and its range, the worst
    document over seeds, the median cost over infer, coverage."""
    groups: dict[tuple, list[dict]] = {}
    for r in result["rows"]:
        ref = np.array(result["references"][f"{r['T']}/{r['set']}"]["doc_log_prob"])
        groups.setdefault((r["T"], r["set"], r["config"]), []).append(r | scored(r, ref))
    order = {c: i for i, c in enumerate(CONFIGS)}
    out = []
    for (T, s, c), rows in sorted(groups.items(), key=lambda kv: (kv[0][0], kv[0][1], order[kv[0][2]])):
        e = [r["error_per_token"] for r in rows]
        line = {"T": T, "set": s, "config": c, "seeds": len(rows), "error": float(np.mean(e)),
                "error_min": min(e), "error_max": max(e), "worst": max(r["worst_document"] for r in rows),
                "cost": float(np.median([r["cost_over_infer"] for r in rows]))}
        if all("document_coverage" in r for r in rows):
            line["coverage"] = float(np.mean([r["document_coverage"] for r in rows]))
            line["total_covered"] = sum(r["total_covered"] for r in rows)
        if all("grown" in r for r in rows):
            line["grown"] = {g: max(r["grown"][g][1] for r in rows) for g in rows[0]["grown"]}
            line["not_converged"] = sum(r["not_converged"] for r in rows)
        out.append(line)
    return out


def markdown(result: dict) -> str:
    """docs/adaptive_budget.md from the JSON."""
    lines = [
        "# A budget per document from its own runs (`target_gap`)",
        "",
        "Generated by `experiments/adaptive_budget.py` from `experiments/results/adaptive_budget.json`;",
        "do not edit by hand. The machine (2 cores) was shared with other jobs; CPU seconds are compared",
        "side by side in one process.",
        "",
        "`tl.heldout(model, docs, target_gap=g)` doubles each document's left-to-right budget (K, then R,",
        "in turn) until the estimated Jensen gap of its 4 runs, s² / (2 · 4), is at most g times its tokens",
        "and two consecutive budgets agree within their errors (`heldout/adaptive.py` says what this",
        "guarantees and what not). Configurations:",
        "",
    ]
    for c, (what, _) in CONFIGS.items():
        lines.append(f"- `{c}`: {what}")
    lines += ["", "References: " + "; ".join(f"T = {k.split('/')[0]} {k.split('/')[1]}: {v['how']}"
                                               for k, v in sorted(result["references"].items())) + ".", "",
              "Error: the total per token less the reference's (mean over seeds, [range]); worst: the",
              "largest error of one document over all seeds; cost: CPU seconds over tomotopy's",
              "`infer(iterations=100, workers=1)` on the same documents (median over seeds); coverage: the",
              "share of documents whose reference lies in [estimate − 1.96 se, estimate + gap + 1.96 se],",
              "and in how many seeds the",
              "total's reference lies in the same interval of the total (bootstrap sd); largest R, K: the",
              "largest final budget of one document.",
              "",
              "| T | documents | configuration | seeds | error per token | worst document | cost × infer "
              "| coverage | total covered | largest R, K |",
              "|---|---|---|---|---|---|---|---|---|---|"]
    for s in summary(result):
        cov = f"{s['coverage']:.2f}" if "coverage" in s else "—"
        tot = f"{s['total_covered']} of {s['seeds']}" if "total_covered" in s else "—"
        g = s.get("grown")
        kw = CONFIGS[s["config"]][1]
        g = {**{k: kw.get(k, d) for k, d in (("particles", 300), ("rejuvenate", 128))}, **(g or {})}
        rk = f"{g['particles']}, {g['rejuvenate']}"
        lines.append(f"| {s['T']} | {s['set']} | `{s['config']}` | {s['seeds']} | {s['error']:+.4f} "
                     f"[{s['error_min']:+.4f}, {s['error_max']:+.4f}] | {s['worst']:.2f} | {s['cost']:.1f} "
                     f"| {cov} | {tot} | {rk} |")
    return "\n".join(lines + [""] + findings(result)) + "\n"


def findings(result: dict) -> list[str]:
    """What the table shows, its figures taken from it."""
    by = {(s["T"], s["set"], s["config"]): s for s in summary(result)}
    out = ["## What it shows", ""]
    reuse = [(k[0], k[1]) for k in by if k[2] == "gap-reuse" and (k[0], k[1], "gap") in by]
    if reuse:
        parts = [f"T = {T} {name}: {by[(T, name, 'gap-reuse')]['error']:+.4f} kept, "
                 f"{by[(T, name, 'gap')]['error']:+.4f} drawn anew" for T, name in sorted(reuse)]
        out += ["- **The result's runs must not be the runs that decided.** Kept, they are the runs that "
                "happened to agree closely, which is when they missed P-hat's rare high values: error per "
                "token " + "; ".join(parts) + ". Drawn anew at the budget decided on, the estimate of P(w) "
                "is unbiased (tests/test_adaptive_gap.py, against exact values); `target_sd` had the same "
                "defect and has the same fix.", ""]
    for T in sorted({k[0] for k in by}):
        d, g = by.get((T, "addresses", "default")), by.get((T, "addresses", "gap"))
        p, q = by.get((T, "paragraphs", "default")), by.get((T, "paragraphs", "gap"))
        if d and g and p and q:
            cheaper = "less than" if g["cost"] < d["cost"] else "more than"
            out += [f"- **T = {T}.** On whole addresses `gap` costs {g['cost']:.0f}× infer, {cheaper} the "
                    f"default's {d['cost']:.0f}×; its total is {g['error']:+.4f} per token against "
                    f"{d['error']:+.4f}, a document up to {g['worst']:.1f} nats off (the default: "
                    f"{d['worst']:.1f}), and the interval covers {g['coverage']:.0%} of the documents: "
                    "4 runs at a few dozen particles understate the sd of a long document's log estimate, "
                    "so the stated gap is too small. On paragraphs it costs more than the default "
                    f"({q['cost']:.0f}× against {p['cost']:.0f}×): the deciding runs, the doublings and the "
                    "new runs cost more than one run of 300 particles on a 37-token document.", ""]
    own = sorted(k for k, v in result["references"].items()
                 if v["how"].startswith("left-to-right(particles=300, variant=smc, rejuvenate=128)"))
    if own:
        out += ["- **References that are not independent of the default:** " + ", ".join(
            f"T = {k.split('/')[0]} {k.split('/')[1]}" for k in own) + " (the default's own setting, 2 runs "
            "of other seeds): there the default's row measures its noise, not its bias, and every other "
            "row is compared with a number that is itself low by the default's gap.", ""]
    fixed = []
    for T in sorted({k[0] for k in by}):
        f = by.get((T, "addresses", "fixed-30-64"))
        if f:
            fixed.append(f"T = {T}: {f['error']:+.4f} per token, a document {f['worst']:.1f} nats off, at "
                         f"{f['cost']:.0f}× infer")
    out += ["- **Not a default.** No configuration here meets issue 36's targets (0.001 nats per token in "
            "total, no paragraph off by a nat, an interval that covers) at a cost near tomotopy's `infer`. "
            "A fixed small budget (`fixed-30-64`: R = 30, K = 64, one run) on the whole addresses: "
            + "; ".join(fixed) + ": cheap, and at 20 topics better than `gap`, but far off as topics grow. "
            "`target_gap` stays a named option: it gives each document a budget from its own runs, an "
            "unbiased estimate of P(w) and a stated gap, with the caveats above.", ""]
    return out


if __name__ == "__main__":
    main()
