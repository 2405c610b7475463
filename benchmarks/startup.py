"""Start-up cost: `import tealeaves`, `tealeaves --help` and `tealeaves heldout --help` against the
import of the core dependencies (`import numpy, scipy, numba`), side by side in one run. Each command
runs in a fresh Python process, several times in turn; the table gives the median CPU seconds (user +
system, from resource.getrusage(RUSAGE_CHILDREN) before and after each child) and median wall seconds,
and the ratio of each median to the baseline's.

    python benchmarks/startup.py [--repeats 9] [--out benchmarks/results/startup.json]

CPU time is the figure to read on a shared machine: wall time includes waiting for a core. Python's
bytecode is cached as after `pip install` (in a temporary PYTHONPYCACHEPREFIX, for every module
alike, so the source tree is left alone; `--no-bytecode` measures with PYTHONDONTWRITEBYTECODE=1,
where every tealeaves module is compiled from source at each start).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time

LAUNCH = "import sys; from tealeaves_launch import main; sys.argv[0] = 'tealeaves'; sys.exit(main())"

COMMANDS: dict[str, list[str]] = {
    "import numpy, scipy, numba": ["-c", "import numpy, scipy, numba"],
    "import tealeaves": ["-c", "import tealeaves"],
    "tealeaves --help": ["-c", LAUNCH, "--help"],
    "tealeaves heldout --help": ["-c", LAUNCH, "heldout", "--help"],
}
BASELINE = "import numpy, scipy, numba"


def run_once(args: list[str], env: dict[str, str]) -> tuple[float, float]:
    """CPU seconds (user + system) and wall seconds of one fresh `python ARGS` process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run([sys.executable, *args], check=True, stdout=subprocess.DEVNULL, env=env)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return cpu, wall


def measure(repeats: int, env: dict[str, str]) -> dict[str, dict[str, float]]:
    """Median CPU and wall seconds per command; the commands take turns so load drifts hit all alike."""
    for args in COMMANDS.values():  # warm the file cache and Python's bytecode cache
        run_once(args, env)
    samples: dict[str, list[tuple[float, float]]] = {name: [] for name in COMMANDS}
    for _ in range(repeats):
        for name, args in COMMANDS.items():
            samples[name].append(run_once(args, env))
    rows = {}
    for name, pairs in samples.items():
        rows[name] = {
            "cpu_seconds": statistics.median(c for c, _ in pairs),
            "wall_seconds": statistics.median(w for _, w in pairs),
        }
    base = rows[BASELINE]
    for row in rows.values():
        row["cpu_ratio"] = row["cpu_seconds"] / base["cpu_seconds"]
        row["wall_ratio"] = row["wall_seconds"] / base["wall_seconds"]
    return rows


def spec_origin(name: str) -> str:
    """Where `name` is imported from, without importing it."""
    import importlib.util

    spec = importlib.util.find_spec(name)
    return spec.origin if spec is not None and spec.origin else "?"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=9)
    ap.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "results", "startup.json"))
    ap.add_argument("--no-bytecode", action="store_true", help="PYTHONDONTWRITEBYTECODE=1: no bytecode cache")
    args = ap.parse_args()
    env = dict(os.environ)
    with tempfile.TemporaryDirectory(prefix="tl-pyc-") as pyc:
        if args.no_bytecode:
            env["PYTHONDONTWRITEBYTECODE"] = "1"
        else:
            env.pop("PYTHONDONTWRITEBYTECODE", None)
            env["PYTHONPYCACHEPREFIX"] = pyc
        rows = measure(args.repeats, env)
    print(f"{'command':<28} {'CPU s':>7} {'x base':>7} {'wall s':>7} {'x base':>7}")
    for name, row in rows.items():
        print(
            f"{name:<28} {row['cpu_seconds']:7.3f} {row['cpu_ratio']:7.2f} "
            f"{row['wall_seconds']:7.3f} {row['wall_ratio']:7.2f}"
        )
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w", encoding="utf-8") as fh:
        json.dump(
            {
                "repeats": args.repeats,
                "bytecode_cache": not args.no_bytecode,
                "tealeaves": os.path.dirname(os.path.dirname(spec_origin("tealeaves"))),
                "python": platform.python_version(),
                "machine": f"{platform.machine()}, {os.cpu_count()} cores",
                "load_average": list(os.getloadavg()),
                "commands": rows,
            },
            fh,
            indent=2,
        )
        fh.write("\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
