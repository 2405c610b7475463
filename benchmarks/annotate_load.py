"""Load on the annotation app: `tealeaves annotate serve` in its own process on 127.0.0.1, and N
simulated annotators (threads of this process, one keep-alive connection each) answering the whole
task set at once, every 4th answer sent twice. Prints throughput and latency percentiles over all
requests and checks that every acknowledged answer is stored exactly once.

    pip install ".[annotate]" && python benchmarks/annotate_load.py [--annotators 50 100 200] [--db URL]

The client threads share the machine (2 cores here) with the server, so the figures are a floor.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile

import tealeaves as tl
from tealeaves.annotate import open_store
from tealeaves.annotate.simulate import AppServer, run_annotators
from tealeaves.intrusion import infer_theta, topic_tasks, word_tasks, write_tasks


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--annotators", type=int, nargs="+", default=[50, 100, 200])
    ap.add_argument("--db", default=None, help="SQLAlchemy URL (default: a new SQLite file per run)")
    ap.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "results", "annotate_load.json"))
    args = ap.parse_args()
    work = tempfile.mkdtemp(prefix="tl-load-")
    model = tl.synthetic.random_model(20, 1000, seed=1)
    docs = tl.synthetic.generate(model, 10, 60, seed=2)
    tasks = word_tasks(model, seed=1, attention_checks=2) + topic_tasks(
        model, infer_theta(model, docs), seed=1
    )
    write_tasks(tasks, os.path.join(work, "tasks.jsonl"), os.path.join(work, "key.jsonl"))
    rows = []
    for n in args.annotators:
        db = args.db or os.path.join(work, f"load{n}.sqlite")
        with AppServer(os.path.join(work, "tasks.jsonl"), db) as server:
            stats = run_annotators(server.url, n, prefix=f"bench{n}-")
        stored = {
            (r["annotator"], r["item"]): r["choice"]
            for r in open_store(db).responses()
            if r["annotator"].startswith(f"bench{n}-")
        }
        exact = stored == stats["acked"] and len(stored) == n * len(tasks)
        row = {k: v for k, v in stats.items() if k != "acked"} | {
            "tasks": len(tasks),
            "stored_exactly_once": exact,
            "backend": db.split(":")[0] if "://" in db else "sqlite",
        }
        row["statuses"] = {str(k): v for k, v in row["statuses"].items()}
        rows.append(row)
        print(
            f"{row['backend']:>10} {n:4d} annotators x {len(tasks)} tasks: {stats['requests']} requests in "
            f"{stats['seconds']:.1f} s = {stats['requests_per_second']:.0f}/s; p50 {stats['p50_ms']:.0f} ms, "
            f"p95 {stats['p95_ms']:.0f} ms, max {stats['max_ms']:.0f} ms; stored exactly once: {exact}"
        )
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w") as fh:
        json.dump({"benchmark": "annotate_load", "cpus": os.cpu_count(), "runs": rows}, fh, indent=1)
    print(f"-> {args.out}")


if __name__ == "__main__":
    main()
