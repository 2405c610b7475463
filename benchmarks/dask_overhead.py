"""What Dask costs against local processes: the same held-out job (`tealeaves heldout`, 2,000
documents at T = 50, of 20, 60 and 100 tokens by default) run with `--workers 2` and with `--dask`
on a real `dask scheduler` and two `dask worker --nthreads 1` processes on 127.0.0.1, started here.

CPU is counted over every process involved: the CLI process and everything it waited for (its pool
workers), plus, for Dask, what the scheduler's and the workers' process trees (nannies included)
spent during the job. The Dask job runs twice: the first on workers that have not yet imported
tealeaves (a fresh cluster), the second on warm workers (a long-lived cluster); local runs twice
too. The machine is shared, so wall time is noisy: CPU time is the primary figure. Results are
checked bit-identical.

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


def start_cluster(workers: int, work: str) -> tuple[str, list[subprocess.Popen]]:
    port = free_port()
    address = f"tcp://127.0.0.1:{port}"
    log = open(os.path.join(work, "cluster.log"), "w")  # noqa: SIM115 - kept open for the processes
    procs = [subprocess.Popen(["dask", "scheduler", "--host", "127.0.0.1", "--port", str(port),
                               "--no-dashboard"], stdout=log, stderr=log)]
    for _ in range(workers):
        procs.append(subprocess.Popen(["dask", "worker", address, "--nthreads", "1", "--no-dashboard",
                                       "--host", "127.0.0.1", "--local-directory", work],
                                      stdout=log, stderr=log))
    from distributed import Client

    with Client(address, timeout="60s") as client:
        client.wait_for_workers(workers, timeout=120)
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


def measure(length: int, args: argparse.Namespace, work: str) -> dict:
    """Both paths on `args.docs` documents of `length` tokens: local twice, then Dask on a fresh
    cluster (cold workers) and again (warm workers)."""
    m, d = os.path.join(work, f"m{length}.npz"), os.path.join(work, f"d{length}.txt")
    subprocess.run([sys.executable, "-m", "tealeaves", "synth", m, d, "--topics", str(args.topics), "--words",
                    str(args.words), "--docs", str(args.docs), "--length", str(length)],
                   check=True, capture_output=True, timeout=600)
    job = ["heldout", m, d, "--particles", str(args.particles), "--quiet"]
    few = os.path.join(work, "few.txt")
    with open(d) as src, open(few, "w") as dst:
        dst.writelines(line for _, line in zip(range(20), src, strict=False))
    run_cli([*job[:2], few, *job[3:]], [])  # fill the numba cache: no side compiles during the runs
    rows, outputs = [], {}
    for rep in (1, 2):
        outputs[f"local{rep}"] = out = os.path.join(work, f"local{length}_{rep}.json")
        rows.append({"path": f"--workers {args.workers}",
                     **run_cli([*job, "--workers", str(args.workers), "--json", out], [])})
    address, procs = start_cluster(args.workers, work)
    try:
        for rep, state in ((1, "cold workers"), (2, "warm workers")):
            outputs[f"dask{rep}"] = out = os.path.join(work, f"dask{length}_{rep}.json")
            rows.append({"path": f"--dask ({state})",
                         **run_cli([*job, "--dask", address, "--json", out], [p.pid for p in procs])})
    finally:
        stop(procs)
    values = {k: json.load(open(v))["results"][0]["documents"]["log_prob"] for k, v in outputs.items()}
    local = rows[:2]
    base_cpu = sum(r["cpu_s"] for r in local) / 2
    base_wall = sum(r["wall_s"] for r in local) / 2
    for r in rows:
        r["cpu_ratio"] = round(r["cpu_s"] / base_cpu, 2)
        r["wall_ratio"] = round(r["wall_s"] / base_wall, 2)
    return {"length": length, "bit_identical": all(v == values["local1"] for v in values.values()),
            "rows": rows}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--docs", type=int, default=2000)
    ap.add_argument("--lengths", type=int, nargs="+", default=[20, 60, 100], help="tokens per document")
    ap.add_argument("--topics", type=int, default=50)
    ap.add_argument("--words", type=int, default=1000)
    ap.add_argument("--particles", type=int, default=100)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "results", "dask_overhead.json"))
    args = ap.parse_args()
    work = tempfile.mkdtemp(prefix="tl-dask-")
    sizes = [measure(length, args, work) for length in args.lengths]
    result = {"docs": args.docs, "topics": args.topics, "words": args.words, "particles": args.particles,
              "workers": args.workers, "cpus": os.cpu_count(), "sizes": sizes,
              "note": "CPU over all processes involved is the primary figure; wall times are noisy when "
                      "other jobs share the machine. Ratios are against the mean of the two local runs."}
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out, "w") as fh:
        json.dump(result, fh, indent=1)
    print(f"{'tokens':>6} {'path':<22} {'wall s':>7} {'CPU s':>7} {'client':>7} {'cluster':>7} "
          f"{'CPU x':>6} {'wall x':>6}")
    for size in sizes:
        for r in size["rows"]:
            print(f"{size['length']:>6} {r['path']:<22} {r['wall_s']:>7.2f} {r['cpu_s']:>7.2f} "
                  f"{r['cpu_client_s']:>7.2f} {r['cpu_cluster_s']:>7.2f} {r['cpu_ratio']:>6.2f} "
                  f"{r['wall_ratio']:>6.2f}")
    print(f"bit-identical: {[s['bit_identical'] for s in sizes]}; written to {args.out}")
    if not all(s["bit_identical"] for s in sizes):
        raise SystemExit("Dask and local results differ")


if __name__ == "__main__":
    main()
