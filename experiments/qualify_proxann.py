"""ProxAnn's released LLM answers (Hoyle et al., ACL 2025; the Bills study) through the path that
qualifies a judge (`metaeval.qualify.qualify_bundled`, the scoring `tealeaves judge qualify` gives a
language model answering now): per LLM, the alternative-annotator test's advantage probability at
the document and topic level for fit and rank (ProxAnn's Table 3; epsilon 0.1, pseudo-annotators
within the corpus, 10 draws), whether it wins (winning rate > 0.5), against the published cells;
its Kendall tau with the people's topic quality (theta) with its two-stage interval, beside one
person against the rest; and the verdict.

    python experiments/qualify_proxann.py

Writes experiments/results/qualify_proxann.json. The published cells are human_agreement.py's
(PUBLISHED_TABLE3); the pseudo-annotators are random, so the authors' draws cannot be repeated:
agreement within 0.01 is what is claimed (tests/test_qualify.py checks it).
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT))

from human_agreement import PUBLISHED_TABLE3  # noqa: E402

import tealeaves as tl  # noqa: E402
from tealeaves.metaeval.qualify import qualify_bundled  # noqa: E402

OUT = ROOT / "results" / "qualify_proxann.json"
CELLS = [("document", "fit"), ("document", "rank"), ("topic", "fit"), ("topic", "rank")]


def main() -> None:
    bills = tl.load_judgments("proxann2025:bills")
    out: dict = {"seed": 42, "bootstrap": 1000, "judges": {}}
    t0 = time.perf_counter()
    print(f"{'LLM':28s} " + " ".join(f"{lv[:3]} {task:4s} ours/pub" for lv, task in CELLS)
          + "  tau fit [95%]          tau rank [95%]")
    worst = 0.0
    for name in sorted(bills.judges):
        res = qualify_bundled(bills, name, seed=42, bootstrap=1000)
        tasks = {t["task"]: t for t in res.tasks}
        pub = PUBLISHED_TABLE3.get(name)
        cells = []
        for k, (lv, task) in enumerate(CELLS):
            a = tasks[task]["alt_test"][lv]
            star = "*" if a["winning_rate"] > 0.5 else " "
            cell = {"level": lv, "task": task, "advantage_probability": a["advantage_probability"],
                    "winning_rate": a["winning_rate"], "published": pub[k] if pub else None}
            if pub:
                worst = max(worst, abs(a["advantage_probability"] - float(pub[k].rstrip("*"))))
            cells.append(cell)
            cell["shown"] = f"{a['advantage_probability']:.2f}{star}/{pub[k] if pub else '-':5s}"
        taus = {t: tasks[t]["correlation"]["all"] for t in ("fit", "rank")}
        out["judges"][name] = {"table3": cells, "tau": taus,
                               "human_baseline": {t: tasks[t]["human_baseline"]["mean"] for t in taus},
                               "verdict": {t: tasks[t]["verdict"] for t in taus}}
        print(f"{name:28s} " + " ".join(f"{c['shown']:>17s}" for c in cells) + "  "
              + "  ".join(f"{c['estimate']:+.2f} [{c['low']:+.2f}, {c['high']:+.2f}]" for c in taus.values()))
    base = out["judges"][sorted(bills.judges)[0]]["human_baseline"]
    print(f"one person against the rest (Kendall tau): fit {base['fit']:.2f}, rank {base['rank']:.2f}")
    print(f"largest difference from a published advantage probability: {worst:.4f}")
    out["largest_difference"] = worst
    out["seconds"] = time.perf_counter() - t0
    OUT.parent.mkdir(exist_ok=True)
    OUT.write_text(json.dumps(out, indent=1))
    print(f"wrote {OUT} ({out['seconds']:.0f} s)")


if __name__ == "__main__":
    main()
