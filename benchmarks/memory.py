"""Peak memory of the model readers and of `heldout` at large T (issue 22, point 3).

Workload: T = 1000 topics, V = 60,000 words; phi (float64) is T V 8 bytes = 480 MB (458 MiB),
the floor for any reader, since a TopicModel holds phi in float64. Model files, built once in
--cache:
  - npz: tealeaves' .npz written by numpy in C order (as files from before this change, and from
    other tools, are); phi = rows of U(0,1)^8, normalised;
  - mallet-state: a gzip `--output-state` with --tokens tokens (every word type at least once);
  - gensim: an `LdaModel` made without training (its arrays set by gensim's own initialisation)
    and saved with `save`;
  - sklearn: a `LatentDirichletAllocation` with `components_` set (float64), dumped with joblib;
  - tomotopy: an `LDAModel` trained for one iteration on 600 documents of 100 distinct words.
Cases (each in a fresh interpreter, so ru_maxrss is its own high-water mark):
  - baseline: python + numpy + numba + tealeaves (+ the case's library) imported; every other
    case reports its peak minus its own baseline ("added") as well as the absolute peak;
  - <format>: `tealeaves.load_model` of the file; tomotopy also reports the loader child's peak
    (RUSAGE_CHILDREN);
  - <format>-alone: the library's own load of the file, without tealeaves (its floor);
  - heldout: load the .npz, then `heldout` left-to-right (R = 10) on 5 documents of 50 tokens;
    its baseline includes the kernels loaded from numba's cache (a warm-up run fills it).
--before SRC runs every case again with tealeaves from SRC (e.g. /work/main/src) for comparison.

    python benchmarks/memory.py [--before /work/main/src] [--out benchmarks/results/memory.json]
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import platform
import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
SRC = HERE.parent / "src"
CASES = ("baseline", "npz", "mallet-state", "gensim-alone", "gensim", "sklearn-alone", "sklearn",
         "tomotopy-alone", "tomotopy", "heldout")
FILES = {"npz": "model.npz", "mallet-state": "state.gz", "gensim": "gensim.model",
         "sklearn": "sklearn.joblib", "tomotopy": "tomotopy.bin", "heldout": "model.npz"}
LIBRARY = {"gensim": "gensim.models", "sklearn": "sklearn.decomposition", "tomotopy": "tomotopy"}


def make_phi(T: int, V: int, seed: int = 0) -> np.ndarray:
    phi = np.random.default_rng(seed).random((T, V)) ** 8 + 1e-12
    phi /= phi.sum(axis=1, keepdims=True)
    return phi


def build(cache: Path, T: int, V: int, tokens: int) -> None:
    """Write the model files that are missing from `cache`."""
    cache.mkdir(parents=True, exist_ok=True)
    vocab = [f"w{i}" for i in range(V)]
    alpha = np.full(T, 50.0 / T)
    if not (cache / FILES["npz"]).exists():
        np.savez_compressed(cache / FILES["npz"], phi=make_phi(T, V), alpha=alpha, beta=np.float64(0.01),
                            vocab=np.array(vocab), name=np.array("memory"), metadata=np.array("{}"),
                            format_version=np.int64(1))
    if not (cache / FILES["mallet-state"]).exists():
        rng = np.random.default_rng(1)
        words = np.concatenate([np.arange(V), rng.integers(0, V, max(0, tokens - V))])
        topics = rng.integers(0, T, words.size)
        with gzip.open(cache / FILES["mallet-state"], "wt", compresslevel=1) as fh:
            fh.write("#doc source pos typeindex type topic\n#alpha : " + " ".join(map(str, alpha)) + "\n")
            fh.write("#beta : 0.01\n")
            fh.writelines(f"{i // 100} NA {i % 100} {w} w{w} {t}\n"
                          for i, (w, t) in enumerate(zip(words, topics, strict=True)))
    if not (cache / FILES["gensim"]).exists():
        from gensim.corpora import Dictionary
        from gensim.models import LdaModel

        lda = LdaModel(id2word=Dictionary([vocab]), num_topics=T, alpha=alpha, eta=0.01, random_state=0)
        lda.save(str(cache / FILES["gensim"]))
    if not (cache / FILES["sklearn"]).exists():
        import joblib
        from sklearn.decomposition import LatentDirichletAllocation

        lda = LatentDirichletAllocation(n_components=T, doc_topic_prior=alpha[0], topic_word_prior=0.01)
        lda.components_ = make_phi(T, V, 2) * 1e4
        lda.doc_topic_prior_, lda.topic_word_prior_, lda.n_features_in_ = alpha[0], 0.01, V
        joblib.dump(lda, cache / FILES["sklearn"])
    if not (cache / FILES["tomotopy"]).exists():
        import tomotopy as tp

        mdl = tp.LDAModel(k=T, alpha=alpha[0], eta=0.01, seed=1)
        for d in range(V // 100):
            mdl.add_doc(vocab[d * 100:(d + 1) * 100])
        mdl.train(1, workers=1)
        mdl.save(str(cache / FILES["tomotopy"]))


def run_case(case: str, cache: Path) -> dict:
    """In the measuring interpreter: import, note the baseline, do the case, report peaks (bytes)."""
    import numba  # noqa: F401

    import tealeaves as tl
    from tealeaves.io import load_model

    fmt = case.removesuffix("-alone")
    if fmt in LIBRARY:
        __import__(LIBRARY[fmt])
    path = str(cache / FILES.get(fmt, "model.npz"))
    docs = [list(np.random.default_rng(d).integers(0, 1000, 50)) for d in range(5)]
    if case == "heldout":  # the kernels, loaded from numba's cache, belong to the baseline
        small = tl.TopicModel(make_phi(5, 1000), np.full(5, 0.1))
        tl.heldout(small, docs, method="left-to-right", particles=10, bootstrap=0)
    base = _maxrss()
    t0 = time.perf_counter()
    if case == "gensim-alone":
        from gensim.models import LdaModel

        LdaModel.load(path)
    elif case == "sklearn-alone":
        import joblib

        joblib.load(path)
    elif case == "tomotopy-alone":
        import tomotopy as tp

        tp.LDAModel.load(path)
    elif case == "heldout":
        model = load_model(path)
        tl.heldout(model, docs, method="left-to-right", particles=10, bootstrap=0)
    elif case != "baseline":
        pickled = {"allow_pickle": True} if fmt in ("gensim", "sklearn") else {}
        load_model(path, format="pickle" if fmt == "sklearn" else None, **pickled)
    return {"case": case, "baseline": base, "peak": _maxrss(), "seconds": time.perf_counter() - t0,
            "children_peak": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024}


def _maxrss() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # Linux: kilobytes


def measure(case: str, cache: Path, src: Path) -> dict:
    env = {**os.environ, "PYTHONPATH": str(src), "NUMBA_CACHE_DIR": str(cache / f"numba-{src.parent.name}")}
    if case == "heldout":  # warm-up: fill numba's cache for this source tree
        subprocess.run([sys.executable, __file__, "--case", "baseline", "--cache", str(cache)], env=env,
                       check=True, capture_output=True)
        subprocess.run([sys.executable, "-c", "import numpy as np, tealeaves as tl; tl.heldout(tl.TopicModel("
                        "np.full((5, 10), 0.1), np.full(5, 0.1)), [[1, 2, 3]], particles=2, bootstrap=0)"],
                       env=env, check=True, capture_output=True)
    proc = subprocess.run([sys.executable, __file__, "--case", case, "--cache", str(cache)], env=env,
                          capture_output=True, text=True)
    if proc.returncode:
        raise SystemExit(f"{case}: {proc.stderr.strip().splitlines()[-1]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--topics", type=int, default=1000)
    ap.add_argument("--words", type=int, default=60_000)
    ap.add_argument("--tokens", type=int, default=1_000_000)
    ap.add_argument("--cache", type=Path, default=Path("/tmp/tealeaves-memory"))
    ap.add_argument("--before", type=Path, help="also measure tealeaves from this source tree")
    ap.add_argument("--cases", default=",".join(CASES))
    ap.add_argument("--out", type=Path, default=HERE / "results" / "memory.json")
    ap.add_argument("--case", help=argparse.SUPPRESS)  # internal: the measuring interpreter
    ap.add_argument("--build", action="store_true", help=argparse.SUPPRESS)  # internal: write the files
    args = ap.parse_args()
    if args.case:
        print(json.dumps(run_case(args.case, args.cache)))
        return
    cache = args.cache / f"T{args.topics}-V{args.words}-N{args.tokens}"
    if args.build:
        build(cache, args.topics, args.words, args.tokens)
        return
    # this process stays small: Linux carries a parent's resident size into a child's ru_maxrss
    # (fork, then exec keeps the high-water mark), so the files are built in a process of their own
    subprocess.run([sys.executable, __file__, "--build", "--topics", str(args.topics), "--words",
                    str(args.words), "--tokens", str(args.tokens), "--cache", str(args.cache)], check=True)
    own = _maxrss()
    sides = {"after": SRC, **({"before": args.before} if args.before else {})}
    phi_bytes = 8 * args.topics * args.words
    rows = []
    for case in args.cases.split(","):
        for side, src in sides.items():
            if case.endswith("-alone") and side == "before":
                continue
            r = measure(case, cache, src)
            added = r["peak"] - r["baseline"]
            r.update(side=side, added=added, added_over_phi=added / phi_bytes)
            rows.append(r)
            print(f"{case:15s} {side:6s} baseline {r['baseline'] / 2**20:7.0f} MiB  peak "
                  f"{r['peak'] / 2**20:7.0f} MiB  added {added / 2**20:7.0f} MiB "
                  f"({added / phi_bytes:.2f} phi)  "
                  f"child {r['children_peak'] / 2**20:5.0f} MiB  {r['seconds']:.1f} s", flush=True)
    result = {"topics": args.topics, "words": args.words, "tokens": args.tokens, "phi_bytes": phi_bytes,
              "orchestrator_peak": own,
              "files": {k: (cache / v).stat().st_size for k, v in FILES.items() if (cache / v).exists()},
              "machine": {"python": platform.python_version(), "numpy": np.__version__,
                          "cpus": os.cpu_count()}, "rows": rows}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=1) + "\n")


if __name__ == "__main__":
    main()
