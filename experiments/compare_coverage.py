"""Does Ratio-AIS's reported 95% per-token interval cover the exact log ratio? (issue 12: the
measurement behind `tl.compare`'s default temperatures and chains.)

Models A = `sotu-20-asym`, B = `sotu-20-sym` (same words, 20 topics each). 40 cases: 5 random
held-out State of the Union paragraphs cut to their first 7 tokens, where log P(w | A) and
log P(w | B) are computed exactly. For every setting of temperatures and chains, each case runs
`tl.compare(A, B, docs, ...)` (both directions, convex path, AIS start) and records whether the
per-token interval about these documents (`interval("documents")`) covers the exact per-token log
ratio of those documents; and, per
document, whether forward <= exact <= reverse (the bracket that holds on average) and whether
the document's interval (the bracket widened by 1.96 chain sd) covers it.

    python experiments/compare_coverage.py [--cases 40]

Writes experiments/results/compare_coverage.json and docs/compare_coverage.md.
"""

from __future__ import annotations

import argparse
import json
import os
import time

import numpy as np

import tealeaves as tl
from tealeaves import datasets

HERE = os.path.dirname(os.path.abspath(__file__))
SETTINGS = [(t, c) for t in (100, 300, 1000, 3000) for c in (1, 2, 4)]


def cases(n: int, size: int = 5, length: int = 7) -> list[tl.Corpus]:
    held = datasets.sotu().heldout
    rng = np.random.default_rng(2024)
    out = []
    for _ in range(n):
        pick = rng.choice(len(held), size, replace=False)
        out.append(tl.Corpus.from_word_ids([held[i][:length] for i in pick], vocab=held.vocab))
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--cases", type=int, default=40)
    args = ap.parse_args()
    a, b = datasets.sotu_model("sotu-20-asym"), datasets.sotu_model("sotu-20-sym")
    sets = cases(args.cases)
    exact = [tl.heldout(a, d, method="exact").doc_log_prob - tl.heldout(b, d, method="exact").doc_log_prob
             for d in sets]
    rows = []
    for temperatures, chains in SETTINGS:
        covered, bracket, doc_cover, docs, t0 = 0, 0, 0, 0, time.perf_counter()
        for k, (d, ex) in enumerate(zip(sets, exact, strict=True)):
            res = tl.compare(a, b, d, temperatures=temperatures, chains=chains, seed=k)
            lo, hi = res.per_token_interval("documents")
            truth = ex.sum() / d.num_tokens
            covered += lo <= truth <= hi  # False when unavailable (one chain: NaN)
            f, r = res.forward.doc_log_ratio, res.reverse.doc_log_ratio
            bracket += int(((f <= ex) & (ex <= r)).sum())
            dlo, dhi = res.document_intervals()
            doc_cover += int(((dlo <= ex) & (ex <= dhi)).sum())  # 0 when unavailable (one chain)
            docs += ex.size
        given = chains >= 2  # with one chain both intervals are unavailable (null)
        row = {"temperatures": temperatures, "chains": chains, "cases": len(sets),
               "interval_coverage": covered / len(sets) if given else None, "bracket_holds": bracket / docs,
               "document_interval_coverage": doc_cover / docs if given else None,
               "seconds": time.perf_counter() - t0}
        rows.append(row)
        print(f"temperatures {temperatures:5d} chains {chains}: per-token interval covers "
              f"{row['interval_coverage']}, forward <= exact <= reverse on {row['bracket_holds']:.0%} "
              f"of documents, document intervals cover {row['document_interval_coverage']} "
              f"({row['seconds']:.1f} s)", flush=True)
    os.makedirs(os.path.join(HERE, "results"), exist_ok=True)
    with open(os.path.join(HERE, "results", "compare_coverage.json"), "w") as fh:
        json.dump({"models": [a.name, b.name], "rows": rows}, fh, indent=1)
    lines = ["# Coverage of Ratio-AIS intervals against the exact log ratio", "",
             f"`python experiments/compare_coverage.py`: A = {a.name}, B = {b.name}; {len(sets)} cases "
             "of 5 held-out paragraphs cut to 7 tokens (exact log ratio by dynamic programming); "
             "both directions, convex path, AIS start.", "",
             "| temperatures | chains | per-token interval (these documents) covers "
             "| forward ≤ exact ≤ reverse (documents) "
             "| document interval covers | seconds |", "|---|---|---|---|---|---|"]
    for r in rows:
        def cell(x: float | None) -> str:
            return "unavailable (1 chain)" if x is None else f"{x:.0%}"
        lines.append(f"| {r['temperatures']} | {r['chains']} | {cell(r['interval_coverage'])} | "
                     f"{r['bracket_holds']:.0%} | {cell(r['document_interval_coverage'])} | "
                     f"{r['seconds']:.1f} |")
    lines += ["", "The per-token interval here is the one about these documents (estimator noise only); "
              "with one chain there is no spread between chains and both intervals are unavailable. "
              "The interval about the population the documents were drawn from is measured in "
              "[Comparison intervals with few documents](compare_small_n.md)."]
    path = os.path.join(HERE, "..", "docs", "compare_coverage.md")
    with open(path, "w") as fh:
        fh.write("\n".join(lines) + "\n")
    print(f"wrote {os.path.normpath(path)}")


if __name__ == "__main__":
    main()
