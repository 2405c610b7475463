"""The LLM judge against llama.cpp's OpenAI-compatible server on 127.0.0.1, serving the tiny
"designed" model the tests write (tests/tinyllm.py: one block of 32 dimensions, 334 tokens): what
the judge itself costs per request (client, HTTP, server, cache) when the model costs almost
nothing, the cache hit rate of a run resumed after its server was killed, and the time and
requests a 50-topic model needs (the bundled sotu-50-asym), estimated before and measured.

    pip install ".[test]" && python benchmarks/judge_speed.py

A real model's time per request is its own (seconds for a 7B model on a CPU): the estimate takes
it from the cache once the model has answered there. The server runs one request at a time
(llama-cpp-python serialises them), so concurrency helps only by overlapping the client's and
the server's work. The machine is shared (2 cores); the figures are a floor.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))

import tinyllm  # noqa: E402

import tealeaves as tl  # noqa: E402
from tealeaves.judge.cache import Cache  # noqa: E402

PLAIN = {"repeat_penalty": 1.0, "top_k": 0, "min_p": 0.0}


def run(url: str, cache: Path, task: str, model, **kw):
    j = tl.Judge(url, "designed", cache=cache, progress=False, extra_body=PLAIN, **kw)
    try:
        est = getattr(j, task)(model, dry_run=True)
        res = getattr(j, task)(model)
    finally:
        j.close()
    a = res.accounting
    return {"task": task, "method": kw.get("method", "auto"), "concurrency": kw.get("concurrency", 4),
            "samples": kw.get("samples", 5), "requests": a["requests"], "sent": a["sent"],
            "cached": a["cached"],
            "seconds": a["seconds"], "requests_per_second": a["requests_per_second"],
            "estimate_requests": est["requests"], "estimate_seconds": est["seconds"],
            "estimate_seconds_per_request": est["seconds_per_request"],
            "estimate_from": est["seconds_per_request_from"], "answered": res.summary["answered"],
            "topics": len(res.items)}


def resumed(gguf: Path, work: Path, model) -> dict:
    """Kill the server after about half the requests of a sampled word-intrusion run, start it
    again on the same port, resume: the cache hit rate of the resumed run."""
    kw = dict(method="samples", samples=6, retries=1, concurrency=2)
    cache = work / "resume.sqlite"
    s = tinyllm.start_server({"designed": gguf})
    port, total = s.port, 50 * 6
    err = []

    def go():
        try:
            j = tl.Judge(s.url, "designed", cache=cache, progress=False, extra_body=PLAIN, **kw)
            j.word_intrusion(model)
        except Exception as exc:  # noqa: BLE001 - reported below
            err.append(str(exc))

    t = threading.Thread(target=go)
    t.start()
    probe = Cache(cache)
    while len(probe) < total // 2 and t.is_alive():
        time.sleep(0.02)
    tinyllm.stop(s.proc)
    t.join()
    kept = len(probe)
    with tinyllm.llama_server({"designed": gguf}, port=port) as s2:
        j = tl.Judge(s2.url, "designed", cache=cache, progress=False, extra_body=PLAIN, **kw)
        res = j.word_intrusion(model)
    a = res.accounting
    return {"requests": a["requests"], "kept_before_the_kill": kept, "cached": a["cached"], "sent": a["sent"],
            "cache_hit_rate": a["cache_hit_rate"], "first_run_error": err[0] if err else None}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=str(HERE / "results" / "judge_speed.json"))
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="tl-judge-bench-"))
    gguf = tinyllm.write_model(work / "designed.gguf")
    model = tl.load_model("sotu:sotu-50-asym")
    rows = []
    with tinyllm.llama_server({"designed": gguf}) as s:
        for task, kw in [("word_intrusion", {"method": "logprobs", "concurrency": 1}),
                         ("word_intrusion", {"method": "logprobs", "concurrency": 4}),
                         ("ratings", {"method": "logprobs", "concurrency": 4}),
                         ("word_intrusion", {"method": "samples", "samples": 5, "concurrency": 4})]:
            cache = work / f"{task}-{kw['method']}-{kw['concurrency']}.sqlite"
            first = run(s.url, cache, task, model, **kw)
            again = run(s.url, cache, task, model, **kw)  # all from the cache; the estimate now measured
            # what the estimate says of a fresh run once the cache has timed this model
            timed = again["estimate_seconds_per_request"] * first["requests"] / kw["concurrency"]
            rows.append({**first, "rerun_cached": again["cached"], "rerun_seconds": again["seconds"],
                         "timed_seconds_per_request": again["estimate_seconds_per_request"],
                         "estimate_once_timed_seconds": timed})
            print(f"{task:15s} {kw['method']:8s} x{kw['concurrency']}: {first['requests']} requests in "
                  f"{first['seconds']:.2f} s = {first['requests_per_second']:.1f}/s (estimate before any "
                  f"answer: {first['estimate_seconds']:.0f} s at the assumed "
                  f"{first['estimate_seconds_per_request']:g} s; "
                  f"once the cache has timed the model: {timed:.1f} s); rerun "
                  f"{again['cached']}/{again['requests']} from the cache in {again['seconds']:.2f} s")
    res = resumed(gguf, work, model)
    print(f"resumed after the server was killed: {res['cached']} of {res['requests']} requests from the "
          f"cache (hit rate {res['cache_hit_rate']:.3f}), {res['sent']} sent")
    out = {"model": "tiny designed GGUF (tests/tinyllm.py)", "topics": 50, "runs": rows, "resumed": res,
           "llama_cpp_python": __import__("llama_cpp").__version__, "cpus": os.cpu_count()}
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w") as fh:
        json.dump(out, fh, indent=1)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
