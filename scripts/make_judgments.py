"""Build the bundled human judgments (src/tealeaves/data/hoyle2021.json.gz, proxann2025_bills.json.gz)
from the studies' public releases, both under the MIT licence:

- Hoyle et al. 2021: github.com/ahoho/topics at commit 6c9c92c, data/human/all_data/
  (all_data.json, all_data.csv, {wikitext,nytimes}_{ratings,intrusion}.csv, LICENSE);
- ProxAnn (Hoyle et al. 2025): github.com/ahoho/proxann at commit 3583fa4, data/
  (the Bills Qualtrics export, json_out/config_bills_part{1,2}.json, llm_out/mean/bills/,
  cohrs/all_cohrs_bills.csv and all_cohrs.csv, LICENSE).

    python scripts/make_judgments.py /path/to/human   # a folder with hoyle2021/ and proxann2025/

The readers (tealeaves.judgments.hoyle, .proxann) do the reading; this script checks what they
read against the authors' own derived files, strips nothing but worker identifiers (workers are
renumbered in file order: the Qualtrics export's Prolific ids never reach the bundle), keeps each
study's licence text and citation with its data, and writes the bundle.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from dataclasses import replace

import numpy as np

from tealeaves.judgments import bundle, hoyle, proxann

DATA = os.path.join(os.path.dirname(__file__), "..", "src", "tealeaves", "data")
SOURCES = {
    "hoyle2021": "github.com/ahoho/topics, commit 6c9c92c, data/human/all_data/",
    "proxann2025:bills": "github.com/ahoho/proxann, commit 3583fa4, data/ (Bills)",
}


def check_hoyle_sample(study, folder: str) -> None:
    """The authors' subsample, redrawn from the per-task files, equals all_data.json's lists."""
    with open(os.path.join(folder, "all_data.json"), encoding="utf-8") as fh:
        data = json.load(fh)
    for task, key in (("rating", "ratings"), ("word-intrusion", "intrusion")):
        sub = hoyle.authors_sample(study[task])
        for i, tid in enumerate(study.topics.ids):
            c, m, t = tid.split("/")
            rows = np.flatnonzero(sub.topic == i)
            want = data[c][m]["metrics"]
            if (sub.value[rows].astype(int).tolist() != want[f"{key}_scores_raw"][int(t)]
                    or sub.familiar[rows].astype(int).tolist() != want[f"{key}_confidences_raw"][int(t)]):
                sys.exit(f"{tid} {task}: the redrawn subsample differs from all_data.json")
    print("hoyle2021: the authors' subsample redrawn from the per-task files equals all_data.json "
          "(300 topics x 2 tasks)")


def write_reference(human: str, path: str) -> None:
    """Reference values for the tests, read straight from the authors' files (plain json/csv,
    not through tealeaves): Hoyle et al.'s per-topic means of their subsample (all_data.json's
    ratings_scores_avg, intrusion_scores_avg) and the first 2 x 52 of their 26,000 resampled
    correlations (analysis/correlation_results.csv, in file order)."""
    import csv

    h = os.path.join(human, "hoyle2021")
    with open(os.path.join(h, "all_data.json"), encoding="utf-8") as fh:
        data = json.load(fh)
    means = {f"{c}/{m}/{t}": [data[c][m]["metrics"]["ratings_scores_avg"][t],
                                data[c][m]["metrics"]["intrusion_scores_avg"][t]]
             for c in data for m in data[c] for t in range(len(data[c][m]["topics"]))}
    with open(os.path.join(h, "analysis", "correlation_results.csv"), encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))[:104]
    ref = {"hoyle2021": {"authors_means": means, "correlation_results_head": rows,
                         "source": SOURCES["hoyle2021"]}}
    with open(path, "w", encoding="utf-8") as fh:
        json.dump(ref, fh, indent=1)
    print(f"{path}: reference values for the tests")


def licence(folder: str) -> str:
    with open(os.path.join(folder, "LICENSE"), encoding="utf-8") as fh:
        return fh.read()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("human", help="folder holding hoyle2021/ and proxann2025/ (the releases' files)")
    ap.add_argument("--out", default=DATA)
    ap.add_argument("--reference", default=os.path.join(os.path.dirname(__file__), "..", "tests", "fixtures",
                                                        "judgments_reference.json"))
    args = ap.parse_args()
    write_reference(args.human, args.reference)

    h = os.path.join(args.human, "hoyle2021")
    study = hoyle.read_hoyle(h)
    check_hoyle_sample(study, h)
    study = replace(study, licence=licence(h), notes=tuple(n.replace(h + "/", "") for n in study.notes)
                    + (f"source: {SOURCES['hoyle2021']}",))
    out = os.path.join(args.out, "hoyle2021.json.gz")
    bundle.save_study(study, out)
    print(f"{out}: {os.path.getsize(out):,} bytes; {study}")

    p = os.path.join(args.human, "proxann2025")
    study = proxann.read_proxann(
        os.path.join(p, "human_annotations_bills.csv"),
        [os.path.join(p, "json_out", f"config_bills_part{i}.json") for i in (1, 2)],
        os.path.join(p, "llm_out", "mean", "bills"),
        {"": os.path.join(p, "cohrs", "all_cohrs_bills.csv"),
         "all_cohrs:": os.path.join(p, "cohrs", "all_cohrs.csv")},
        name="proxann2025:bills")
    n_out = len(proxann.excluded(study))
    print(f"proxann2025:bills: the authors' attention-check rule excludes {n_out} of "
          f"{len(study.extra['responses'])} responses (their evaluation scripts print 'Removed: 20')")
    notes = tuple(n.replace(p + "/", "") for n in study.notes) + (
        f"source: {SOURCES['proxann2025:bills']}",
        "metrics npmi, cv: cohrs/all_cohrs_bills.csv (what the authors' topic-ranking notebook reads); "
        "all_cohrs:npmi, all_cohrs:cv: cohrs/all_cohrs.csv, whose Bills values differ",
        "every response is kept with its attention checks (extra.responses); load_judgments applies the "
        "authors' exclusion rule unless told otherwise")
    study = replace(study, licence=licence(p), notes=notes)
    out = os.path.join(args.out, "proxann2025_bills.json.gz")
    bundle.save_study(study, out)
    print(f"{out}: {os.path.getsize(out):,} bytes; {study}")


if __name__ == "__main__":
    main()
