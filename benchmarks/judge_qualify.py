"""What qualifying a judge costs (`tealeaves judge qualify`): llama.cpp's OpenAI-compatible server on
127.0.0.1 serving the tests' tiny "noisy" model (tests/tinyllm.py: one block of 32 dimensions,
digits whose probabilities move with the prompt), asked every question of the bundled studies:
Hoyle et al.'s 300 topics (a 3-point rating and a word-intrusion item each) and ProxAnn's 24 Bills
topics (a label, 7 fits and a ranking each). The estimate before any answer, the run (requests,
tokens, seconds), and a rerun: its cache hit rate and what the statistics alone take.

    pip install ".[test]" && python benchmarks/judge_qualify.py

The tiny model costs the server little per token, but its vocabulary is about one token per
character, so ProxAnn's prompts (seven documents of up to 1,000 characters) are ~6,000 tokens and
dominate. The judge's agreement with people is chance: the model knows nothing of topics. The
machine is shared (2 cores); the times are a ceiling of what it takes alone.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))

import tinyllm  # noqa: E402

import tealeaves as tl  # noqa: E402
from tealeaves.judge.qualify import qualify  # noqa: E402


def summary(res) -> dict:
    out = {}
    for t in res.tasks:
        c = (t["correlation"] or {}).get("all") or {}
        out[f"{t['study']} {t['task']}"] = {
            "statistic": t["statistic"], "estimate": c.get("estimate"), "low": c.get("low"),
            "high": c.get("high"),
            "scored": t["scored"], "topics": t["topics"], "human_baseline": t["human_baseline"]["mean"],
            "alt_test": {lv: {k: a.get(k) for k in ("advantage_probability", "winning_rate", "passes", "why")}
                         for lv, a in t["alt_test"].items()},
            "trusted": t["verdict"]["trusted"]}
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=str(HERE / "results" / "judge_qualify.json"))
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="tl-judge-qualify-"))
    gguf = tinyllm.write_model(work / "noisy.gguf", kind="noisy", seed=5, noise=2.0)
    cache = work / "judge.sqlite"
    with tinyllm.llama_server({"noisy": gguf}) as s:
        j = tl.Judge(s.url, "noisy", cache=cache, progress=False)
        est = qualify(j, dry_run=True)
        t0 = time.perf_counter()
        first = qualify(j)
        wall = time.perf_counter() - t0
        est_timed = qualify(j, dry_run=True)
        t0 = time.perf_counter()
        again = qualify(j)
        rerun = time.perf_counter() - t0
        j.close()
    a, b = first.accounting, again.accounting
    per_task = {k: {"requests": v["requests"], "prompt_tokens": v["prompt_tokens"]}
                for k, v in est["tasks"].items()}
    # what the estimate says of a fresh run once the cache has timed this model (median seconds)
    timed = est_timed["total"]["seconds_per_request"] * est["total"]["requests"] / est["total"]["concurrency"]
    out = {"model": "tiny noisy GGUF (tests/tinyllm.py)",
           "topics": {"hoyle2021": 300, "proxann2025:bills": 24},
           "estimate_before": est["total"], "estimate_per_task": per_task,
           "timed_seconds_per_request": est_timed["total"]["seconds_per_request"],
           "estimate_once_timed_seconds": timed,
           "run": {"requests": a["requests"], "sent": a["sent"], "cached": a["cached"], "tokens": a["tokens"],
                   "unanswered": a["unanswered"], "malformed": a["malformed"], "seconds": wall,
                   "requests_per_second": a["sent"] / wall},
           "rerun": {"requests": b["requests"], "cached": b["cached"], "sent": b["sent"],
                     "cache_hit_rate": b["cache_hit_rate"], "seconds": rerun},
           "figures": summary(first), "llama_cpp_python": __import__("llama_cpp").__version__,
           "cpus": os.cpu_count()}
    print(f"estimate before any answer: {est['total']['requests']:,} requests, about "
          f"{est['total']['prompt_tokens']:,} prompt tokens, {est['total']['seconds']:.0f} s at the assumed "
          f"{est['total']['seconds_per_request']:g} s per request")
    print(f"run: {a['requests']:,} requests ({a['sent']:,} sent) in {wall:.0f} s ({a['sent'] / wall:.2f}/s); "
          f"{a['tokens']['prompt']:,} prompt tokens; {a['unanswered']} unanswered")
    print(f"estimate of a fresh run once the cache has timed the model: {timed:.0f} s")
    print(f"rerun: {b['cached']:,} of {b['requests']:,} from the cache (hit rate {b['cache_hit_rate']:.3f}) "
          f"in {rerun:.1f} s (the statistics)")
    print("\n".join(first.lines()))
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w") as fh:
        json.dump(out, fh, indent=1)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
