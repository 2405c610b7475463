"""What building llama-cpp-python (the sdist the test extra installs: llama.cpp's OpenAI-compatible
server for the LLM judge's tests) costs: CPU and wall seconds of `pip wheel`, with the flags .ci/run
uses and, for comparison, with the same flags but llama.cpp's common library and -O3 left as they
are. Each build runs in a fresh build environment, without pip's cache.

    python benchmarks/llama_build.py [--only ci]

CPU seconds (user + system of pip and every compiler it started) do not depend on what else the
machine does; wall seconds do: on an idle 2-core machine a build takes about CPU / 2 plus the
serial configure step.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent


def ci_settings() -> tuple[str, str]:
    """LLAMA_VERSION and LLAMA_ARGS as .ci/run sets them (from .ci/llama.env: one place)."""
    script = 'ROOT="$PWD"; . .ci/llama.env; echo "$LLAMA_VERSION"; echo "$LLAMA_ARGS"'
    out = subprocess.run(["bash", "-c", script], capture_output=True, text=True, check=True, cwd=ROOT)
    version, args = out.stdout.strip().split("\n", 1)
    return version, args


def build(version: str, cmake_args: str, work: Path) -> dict:
    env = {**os.environ, "CMAKE_ARGS": cmake_args, "CMAKE_BUILD_PARALLEL_LEVEL": "2"}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    r = subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-cache-dir", "-w",
                        str(work), f"llama-cpp-python=={version}"], env=env, capture_output=True, text=True)
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {"cmake_args": cmake_args, "ok": r.returncode == 0, "wall_seconds": wall, "cpu_seconds": cpu,
            "error": r.stderr[-2000:] if r.returncode else None,
            "wheel_bytes": sum(p.stat().st_size for p in work.glob("*.whl"))}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", choices=("ci", "all"), default="all")
    ap.add_argument("--out", default=str(HERE / "results" / "llama_build.json"))
    args = ap.parse_args()
    version, ci_args = ci_settings()
    kept = ("-DCMAKE_PROJECT_", "-DCMAKE_C_FLAGS_RELEASE", "-DCMAKE_CXX_FLAGS")  # common and -O1 out
    full_args = " ".join(a for a in shlex.split(ci_args) if not a.startswith(kept))
    runs = {"ci": ci_args} if args.only == "ci" else {"ci": ci_args, "with common, -O3": full_args}
    out = {"version": version, "cpus": os.cpu_count(), "load_before": os.getloadavg(), "builds": {}}
    for name, cmake_args in runs.items():
        with tempfile.TemporaryDirectory() as d:
            res = build(version, cmake_args, Path(d))
        out["builds"][name] = res
        print(f"{name}: {'ok' if res['ok'] else 'FAILED'}, {res['cpu_seconds']:.0f} CPU s, "
              f"{res['wall_seconds']:.0f} s wall (load {os.getloadavg()[0]:.1f})")
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w") as fh:
        json.dump(out, fh, indent=1)


if __name__ == "__main__":
    main()
