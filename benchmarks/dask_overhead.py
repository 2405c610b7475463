"""What Dask costs against local processes: the same held-out job (`tealeaves heldout`, 2,000
documents at T = 50, of 20, 30, 40, 60 and 100 tokens by default) run with `--workers 2` and with
`--dask` on a real `dask scheduler` and two `dask worker --nthreads 1` processes on 127.0.0.1, started here;
then coherence counting (`tealeaves coherence`, umass, npmi and c_v: three passes over the bundled
SOTU training paragraphs written as a text file, 16,197 documents) the same way.

CPU is counted over every process involved: the CLI process and everything it waited for (its pool
workers), plus, for Dask, what the scheduler's and the workers' process trees (nannies included)
spent during the job. Dask rows, each forced onto the cluster with `--dask-min-seconds 0`:
"fresh" is the first job on workers started without a preload (they import tealeaves and load the
kernels in it), "fresh, preload" the first job on workers started with `--preload
tealeaves.cli.warmup` (kernels loaded when the worker started, before the job), "warm" a later job.
The "policy" row is the plain `--dask ADDRESS --workers 2` a user would type: a job estimated
under DASK_MIN_SECONDS runs locally (the row says where it ran). Local runs twice; ratios are
against their mean. The machine is shared, so wall time is noisy: CPU time is the primary figure.
Results are checked bit-identical.

    pip install ".[dask]" psutil && python benchmarks/dask_overhead.py [--docs 2000] [--lengths 20 60 100]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from typing import Any

import psutil

TIMEOUT = 1800  # seconds for any one job; the benchmark never waits without a bound


def tree_cpu(pids: list[int]) -> float:
    """CPU seconds (user + system) spent so far by these processes and all their descendants."""
    total = 0.0
    for pid in pids:
        try:
            root = psutil.Process(pid)
            procs = [root, *root.children(recursive=True)]
        except psutil.NoSuchProcess:
            continue
        for p in procs:
            try:
                t = p.cpu_times()
                total += t.user + t.system + t.children_user + t.children_system
            except psutil.NoSuchProcess:
                pass
    return total


def children_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def run_cli(args: list[str], watch: list[int]) -> dict:
    """Run `tealeaves ARGS` and return its wall time, its CPU (with the processes it waited for)
    and the CPU the `watch` process trees spent meanwhile."""
    before_self, before_watch = children_cpu(), tree_cpu(watch)
    t0 = time.perf_counter()
    r = subprocess.run([sys.executable, "-m", "tealeaves", *args], capture_output=True, text=True,
                       timeout=TIMEOUT)
    wall = time.perf_counter() - t0
    if r.returncode != 0:
        raise SystemExit(f"tealeaves {' '.join(args)} failed: {r.stderr.strip()}")
    cli = children_cpu() - before_self
    cluster = tree_cpu(watch) - before_watch
    return {"wall_s": round(wall, 3), "cpu_s": round(cli + cluster, 3), "cpu_client_s": round(cli, 3),
            "cpu_cluster_s": round(cluster, 3)}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_cluster(workers: int, work: str, preload: bool = False) -> tuple[str, list[subprocess.Popen]]:
    port = free_port()
    address = f"tcp://127.0.0.1:{port}"
    log = open(os.path.join(work, "cluster.log"), "w")  # noqa: SIM115 - kept open for the processes
    procs = [subprocess.Popen(["dask", "scheduler", "--host", "127.0.0.1", "--port", str(port),
                               "--no-dashboard"], stdout=log, stderr=log)]
    for _ in range(workers):
        procs.append(subprocess.Popen(["dask", "worker", address, "--nthreads", "1", "--no-dashboard",
                                       "--host", "127.0.0.1", "--local-directory", work,
                                       *(["--preload", "tealeaves.cli.warmup"] if preload else [])],
                                      stdout=log, stderr=log))
    from distributed import Client

    try:
        with Client(address, timeout="60s") as client:
            client.wait_for_workers(workers, timeout=120)
    except BaseException:  # interrupted or failed: leave no cluster behind
        stop(procs)
        raise
    return address, procs


def stop(procs: list[subprocess.Popen]) -> None:
    for p in reversed(procs):
        p.terminate()
    for p in reversed(procs):
        try:
            p.wait(timeout=30)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait(timeout=30)


def ratios(rows: list[dict]) -> None:
    """CPU and wall ratios of every row against the mean of the rows marked local."""
    local = [r for r in rows if r.get("baseline")]
    base_cpu = sum(r["cpu_s"] for r in local) / len(local)
    base_wall = sum(r["wall_s"] for r in local) / len(local)
    for r in rows:
        r["cpu_ratio"] = round(r["cpu_s"] / base_cpu, 2)
        r["wall_ratio"] = round(r["wall_s"] / base_wall, 2)


def compare(name: str, job: list[str], args: argparse.Namespace, work: str, value: Callable[[dict], Any],
            one: bool = False) -> dict:
    """`job` locally (twice, the baseline; with `one`, also in one process), then on the cluster:
    fresh, fresh with the preload, warm, and as the policy places it."""
    rows, outputs = [], {}

    def run(label: str, extra: list[str], watch: list[int], **kw) -> None:
        outputs[label] = out = os.path.join(work, f"{name}-{len(outputs)}.json")
        row = {"path": label, **kw, **run_cli([*job, *extra, "--json", out], watch)}
        record = json.load(open(out)).get("dask", {"ran": "local", "jobs": []})
        row["ran"] = record["ran"]
        row["estimated_seconds"] = record["jobs"][0]["estimated_seconds"] if record["jobs"] else None
        rows.append(row)

    local = ["--workers", str(args.workers)]
    for rep in (1, 2):
        run(f"--workers {args.workers} ({rep})", local, [], baseline=True)
    if one:
        run("--workers 1", ["--workers", "1"], [])
    force = ["--dask-min-seconds", "0"]
    for preload in (False, True):
        address, procs = start_cluster(args.workers, work, preload)
        try:
            pids = [p.pid for p in procs]
            run("--dask, fresh" + (", preload" if preload else ""), ["--dask", address, *force], pids)
            if preload:
                run("--dask, warm", ["--dask", address, *force], pids)
                run("--dask (policy)", ["--dask", address, *local], pids)
        finally:
            stop(procs)
    ratios(rows)
    values = {k: value(json.load(open(v))) for k, v in outputs.items()}
    first = next(iter(values.values()))
    return {"bit_identical": all(v == first for v in values.values()), "rows": rows}


def measure(length: int, args: argparse.Namespace, work: str) -> dict:
    """Held-out on `args.docs` documents of `length` tokens."""
    m, d = os.path.join(work, f"m{length}.npz"), os.path.join(work, f"d{length}.txt")
    subprocess.run([sys.executable, "-m", "tealeaves", "synth", m, d, "--topics", str(args.topics), "--words",
                    str(args.words), "--docs", str(args.docs), "--length", str(length)],
                   check=True, capture_output=True, timeout=600)
    job = ["heldout", m, d, "--particles", str(args.particles), "--quiet"]
    few = os.path.join(work, "few.txt")
    with open(d) as src, open(few, "w") as dst:
        dst.writelines(line for _, line in zip(range(20), src, strict=False))
    run_cli([*job[:2], few, *job[3:]], [])  # fill the numba cache: no side compiles during the runs
    return {"length": length, **compare(f"h{length}", job, args, work,
                                        lambda r: r["results"][0]["documents"]["log_prob"])}


def measure_coherence(args: argparse.Namespace, work: str) -> dict:
    """Coherence counting of the bundled SOTU training paragraphs (as a text file) for the bundled
    50-topic model: three measures, three passes over the text."""
    from tealeaves import read_corpus  # resolves the bundled names (datasets)

    corpus = read_corpus("sotu:train")
    ref = os.path.join(work, "sotu_train.txt")
    with open(ref, "w") as fh:
        for d in range(len(corpus)):
            fh.write(" ".join(corpus.vocab[i] for i in corpus[d]) + "\n")
    model = os.path.join(os.path.dirname(__file__), "..", "src", "tealeaves", "data", "sotu-50-asym.npz")
    job = ["coherence", model, ref, "--measure", "umass,npmi,c_v", "--convention", "tealeaves"]
    run_cli([*job, "--json", os.path.join(work, "c0.json")], [])
    def value(r: dict) -> list:
        return [{k: v for k, v in x.items() if k != "seconds"} for x in r["results"]]

    res = compare("coh", job, args, work, value, one=True)
    return {"documents": len(corpus), "tokens": int(corpus.num_tokens), "bytes": os.path.getsize(ref), **res}


def measure_evaluate(args: argparse.Namespace, work: str) -> dict:
    """`tealeaves evaluate` of two bundled SOTU models (20 and 50 topics) on 400 held-out SOTU
    paragraphs (left-to-right, R = 100, 2 runs), coherence (npmi) from the training paragraphs."""
    from tealeaves import read_corpus

    data = os.path.join(os.path.dirname(__file__), "..", "src", "tealeaves", "data")
    files = {}
    for part, limit in (("train", None), ("heldout", 400)):
        corpus = read_corpus(f"sotu:{part}")
        files[part] = os.path.join(work, f"sotu_{part}.txt")
        with open(files[part], "w") as fh:
            for d in range(len(corpus) if limit is None else limit):
                fh.write(" ".join(corpus.vocab[i] for i in corpus[d]) + "\n")
    job = ["evaluate", os.path.join(data, "sotu-20-sym.npz"), os.path.join(data, "sotu-50-asym.npz"),
           "--heldout", files["heldout"], "--reference", files["train"], "--measure", "npmi",
           "--particles", str(args.particles), "--quiet"]
    run_cli([*job, "--json", os.path.join(work, "e0.json")], [])

    def value(r: dict) -> list:
        return [{k: v for k, v in row.items() if "seconds" not in k} for row in r["rows"]]

    return compare("eval", job, args, work, value)


def measure_select(args: argparse.Namespace, work: str) -> dict:
    """`tealeaves select` on a synthetic corpus (1,000 documents of 60 tokens, 10 true topics,
    V = 500): K = 5, 10, 15, 2 restarts each, 100 tomotopy iterations, R = 50."""
    corpus = os.path.join(work, "select.txt")
    subprocess.run([sys.executable, "-m", "tealeaves", "synth", os.path.join(work, "select.npz"), corpus,
                    "--topics", "10", "--words", "500", "--docs", "1000", "--length", "60"],
                   check=True, capture_output=True, timeout=600)
    job = ["select", corpus, "--topics", "5,10,15", "--restarts", "2", "--iterations", "100",
           "--particles", "50", "--quiet"]

    def value(r: dict) -> list:
        return [(e["model"], e["row"].get("per_token")) for e in r["evaluations"]]

    return compare("sel", job, args, work, value)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--docs", type=int, default=2000)
    ap.add_argument("--lengths", type=int, nargs="+", default=[20, 30, 40, 60, 100],
                    help="tokens per document")
    ap.add_argument("--topics", type=int, default=50)
    ap.add_argument("--words", type=int, default=1000)
    ap.add_argument("--particles", type=int, default=100)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--no-coherence", action="store_true", help="skip the coherence counting part")
    ap.add_argument("--only", nargs="+", choices=["heldout", "coherence", "evaluate", "select"],
                    help="measure only these parts and update them in an existing --out file")
    ap.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "results", "dask_overhead.json"))
    args = ap.parse_args()
    work = tempfile.mkdtemp(prefix="tl-dask-")
    from tealeaves.util.parallel import DASK_MIN_SECONDS

    load_before = os.getloadavg()
    parts = set(args.only or ["heldout", "coherence", "evaluate", "select"]) - (
        {"coherence"} if args.no_coherence else set())
    old = json.load(open(args.out)) if args.only and os.path.exists(args.out) else {}
    sizes = ([measure(length, args, work) for length in args.lengths] if "heldout" in parts
             else old.get("sizes"))
    coherence = measure_coherence(args, work) if "coherence" in parts else old.get("coherence")
    evaluate = measure_evaluate(args, work) if "evaluate" in parts else old.get("evaluate")
    select = measure_select(args, work) if "select" in parts else old.get("select")
    result = {"docs": args.docs, "topics": args.topics, "words": args.words, "particles": args.particles,
              "workers": args.workers, "cpus": os.cpu_count(), "dask_min_seconds": DASK_MIN_SECONDS,
              "load_average": {"before": load_before, "after": os.getloadavg()},
              "sizes": sizes, "coherence": coherence, "evaluate": evaluate, "select": select,
              "note": "CPU over all processes involved is the primary figure; wall times are noisy when "
                      "other jobs share the machine. Ratios are against the mean of the two local runs. "
                      "'ran' says where the job ran (the policy row runs small jobs locally)."}
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out, "w") as fh:
        json.dump(result, fh, indent=1)
    print(f"{'job':>9} {'path':<24} {'ran':<8} {'wall s':>7} {'CPU s':>7} {'client':>7} {'cluster':>7} "
          f"{'CPU x':>6} {'wall x':>6}")
    shown = [(f"{size['length']} tok", size) for size in sizes or []]
    shown += [(name, part) for name, part in (("coherence", coherence), ("evaluate", evaluate),
                                              ("select", select)) if part]
    for label, part in shown:
        for r in part["rows"]:
            print(f"{label:>9} {r['path']:<24} {r['ran']:<8} {r['wall_s']:>7.2f} {r['cpu_s']:>7.2f} "
                  f"{r['cpu_client_s']:>7.2f} {r['cpu_cluster_s']:>7.2f} {r['cpu_ratio']:>6.2f} "
                  f"{r['wall_ratio']:>6.2f}")
    print(f"bit-identical: {[p['bit_identical'] for _, p in shown]}; written to {args.out}")
    if not all(p["bit_identical"] for _, p in shown):
        raise SystemExit("Dask and local results differ")


if __name__ == "__main__":
    main()
