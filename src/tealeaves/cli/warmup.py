"""`tealeaves warm-up`: compile every numba kernel once, on a tiny synthetic model, so that no later
command compiles. The kernels are cached on disk (see tealeaves.sampling) until tealeaves or numba
changes; run it after installing or upgrading (for example when building a container image)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from ..heldout import heldout, method_names


def _parts() -> list[tuple[str, Callable[[], Any]]]:
    """(what, call) for every entry point that runs kernels: each estimator for both tasks, Ratio-AIS
    along both paths, Iteration-AIS, CSL's LDA chain, the predictive metrics, coherence counting and
    the meta-evaluation's Kendall tau.
    Default parameters, so the kernels are compiled for the argument types real runs pass."""
    from .. import synthetic
    from ..coherence import count
    from ..compare import compare, training_curve
    from ..csl import csl
    from ..heldout import completion
    from ..intrusion import infer_theta

    model = synthetic.random_model(3, 12, seed=0, vocab=[f"w{i}" for i in range(12)])
    other = synthetic.random_model(3, 12, seed=1, vocab=model.vocab)
    docs = synthetic.generate(model, 2, 6, seed=0)
    quick: dict[str, Any] = {"progress": False, "bootstrap": 0}
    parts: list[tuple[str, Callable[[], Any]]] = []
    for name in method_names("heldout"):
        parts.append((f"heldout {name}", lambda n=name: heldout(model, docs, method=n, **quick)))
    for name in method_names("completion"):
        parts.append((f"completion {name}", lambda n=name: completion(model, docs, method=n, **quick)))
    for path in ("convex", "geometric"):
        parts.append((f"compare ratio-ais {path}", lambda p=path: compare(
            model, other, docs, path=p, temperatures=5, chains=1, start_temperatures=5, **quick)))
    parts.append(("compare burn-in start", lambda: compare(
        model, other, docs, start="burn-in", burn_in=2, temperatures=5, chains=1, **quick)))
    parts.append(("curve", lambda: training_curve([model, other], docs, temperatures=5,
                                                  first_temperatures=5, chains=1, **quick)))
    parts.append(("csl", lambda: csl(model, docs, samples=4, burn_in=1, chains=2)))
    parts.append(("predictive", lambda: infer_theta(model, docs, burn_in=1, samples=2, progress=False)))
    parts.append(("coherence counts", lambda: count([["w1", "w2"], ["w2", "w3"]], ["w1", "w2", "w3"])))
    parts.append(("metaeval kendall", _kendall))
    return parts


def _kendall() -> Any:
    """Kendall's tau-b, both of its paths (pairs, and the sort for rows of 200 or more)."""
    import numpy as np

    from ..metaeval.stats import SORT_FROM, kendall_rows

    for n in (3, SORT_FROM):
        kendall_rows(np.arange(n, dtype=float)[None], np.arange(n, dtype=float)[None])


def warm_up(quiet: bool = False) -> dict[str, Any]:
    """Run every kernel once; seconds per part (compiling, or loading from the disk cache)."""
    seconds: dict[str, float] = {}
    start = time.perf_counter()
    parts = _parts()
    for what, call in parts:
        t0 = time.perf_counter()
        call()
        seconds[what] = time.perf_counter() - t0
        if not quiet:
            print(f"{what:<36} {seconds[what]:7.2f} s", flush=True)
    total = time.perf_counter() - start
    return {"command": "warm-up", "seconds": total, "parts": seconds}


def dask_setup(worker: Any) -> None:
    """`dask worker ADDRESS --preload tealeaves.cli.warmup`: load (or compile, the first time on the
    machine) every numba kernel when the worker starts, not in the first job sent to it."""
    warm_up(quiet=True)
