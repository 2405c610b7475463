"""How per-document work is spread: in this process (workers=1), over local processes, or over a
Dask distributed cluster.

`run_tasks(fn, shared, items, workers, costs=...)` calls `fn(shared, item)` for every item and
returns the results in item order. `shared` (the model's arrays, the method and its parameters) is
sent once to each worker process. Items travel in batches of about equal estimated cost (`batches`:
a few per worker, the heaviest first, an item heavier than a batch's share alone in its batch).
Every item carries its own seed, so results do not depend on `workers`, on the batching, on the
cluster, or on the order in which items finish.

Inside `with use_dask(address):` (the CLI's `--dask ADDRESS` or $TEALEAVES_DASK), `run_tasks` and
`stream_tasks` send the batches to the Dask cluster at `address` instead (`workers` is then the
cluster's number of worker threads): `shared` is scattered to every worker once, and the workers
need the same tealeaves (and numba) installed.
"""

from __future__ import annotations

import contextlib
import functools
import heapq
import os
import signal
import sys
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, as_completed, wait
from typing import Any

import numpy as np

from ..errors import MethodError
from .limits import check_memory

_SHARED: Any = None
_DASK: Any = None  # the distributed.Client in use, set by use_dask
DASK_ENV = "TEALEAVES_DASK"
WORKER_WAIT = 20.0  # seconds to wait for a Dask cluster's first worker
WORKER_BYTES = 100 * 2**20  # a worker process: Python, numpy, numba and its copy of the shared data
BATCHES_PER_WORKER = 6  # enough to balance the load, few enough that per-task overhead is negligible
ITEM_OVERHEAD = 0.01  # per-item cost not in the estimators' model, as a fraction of the mean
STREAM_GROUP = 8  # stream items (coherence chunks) per Dask task, summed on the worker


def batches(costs: Sequence[float], workers: int, per_worker: int = BATCHES_PER_WORKER) -> list[list[int]]:
    """Item indices in at most `per_worker` x `workers` batches of about equal total cost, heaviest
    batch first, indices ascending within a batch; every index in exactly one batch. Items are
    placed heaviest first on the lightest batch, so an item costing more than a batch's share ends
    up alone in its batch. Each item also costs ITEM_OVERHEAD x the mean cost (so items estimated
    at zero spread out, and all-zero costs count as equal)."""
    weights = np.asarray(costs, dtype=np.float64).reshape(-1)
    if weights.size == 0:
        return []
    if not np.isfinite(weights).all() or (weights < 0).any():
        raise ValueError("costs must be finite and non-negative")
    weights = weights + ITEM_OVERHEAD * max(float(weights.mean()), 1e-300)  # each item costs something
    k = min(weights.size, max(1, int(per_worker) * max(1, int(workers))))
    heap = [(0.0, b) for b in range(k)]
    members: list[list[int]] = [[] for _ in range(k)]
    loads = np.zeros(k)
    for i in np.argsort(-weights, kind="stable").tolist():
        load, b = heapq.heappop(heap)
        members[b].append(i)
        loads[b] = load + weights[i]
        heapq.heappush(heap, (loads[b], b))
    order = sorted((b for b in range(k) if members[b]), key=lambda b: (-loads[b], b))
    return [sorted(members[b]) for b in order]


def _dask_threads() -> int:
    """Worker threads in the Dask cluster (at least 1, so that batching works before they join)."""
    return max(1, sum(_DASK.nthreads().values()))


@contextlib.contextmanager
def use_dask(address: Any) -> Iterator[Any]:
    """Run tasks on the Dask cluster at `address` (a scheduler address such as
    'tcp://10.0.0.5:8786', or a `distributed.Client`) inside this block."""
    global _DASK
    try:
        from distributed import Client
    except ImportError:
        raise MethodError('Dask needs its extra: pip install "tealeaves[dask]"') from None
    own = not isinstance(address, Client)
    try:
        client = Client(address, timeout="20s") if own else address
    except (OSError, TimeoutError, ValueError) as exc:
        raise MethodError(f"cannot reach the Dask scheduler at {address!r} ({exc})") from None
    try:
        client.wait_for_workers(1, timeout=WORKER_WAIT)
    except TimeoutError:
        where = client.scheduler.address
        if own:
            client.close()
        raise MethodError(f"the Dask scheduler at {where!r} has no workers (waited {WORKER_WAIT:g} s); "
                          f"start some with: dask worker {where}") from None
    previous, _DASK = _DASK, client
    try:
        yield client
    finally:
        _DASK = previous
        if own:
            client.close()


def _dask_run(fn: Callable[[Any, Any], Any], shared: Any, items: Sequence[Any], costs: Sequence[float],
              progress: Progress | None) -> list[Any]:
    from distributed import as_completed as dask_completed

    groups = batches(costs, _dask_threads())
    shared_f = _DASK.scatter(shared, broadcast=True, hash=False)
    futures = {_DASK.submit(_call_batch, fn, shared_f, [items[i] for i in g], pure=False,
                            priority=len(groups) - rank): g for rank, g in enumerate(groups)}
    out: list[Any] = [None] * len(items)
    for f in dask_completed(futures):
        g = futures[f]
        for i, r in zip(g, f.result(), strict=True):
            out[i] = r
        if progress:
            progress.advance(len(g))
    return out


def _call_batch(fn: Callable[[Any, Any], Any], shared: Any, batch: Sequence[Any],
                combine: Callable[[Any, Any], Any] | None = None) -> list[Any]:
    """`fn(shared, item)` for each item of a batch; with `combine`, the results folded into one."""
    results = [fn(shared, item) for item in batch]
    return [functools.reduce(combine, results)] if combine is not None and results else results


def _groups(items: Iterable[Any], size: int) -> Iterator[list[Any]]:
    group: list[Any] = []
    for item in items:
        group.append(item)
        if len(group) >= size:
            yield group
            group = []
    if group:
        yield group


def _dask_stream(fn: Callable[[Any, Any], Any], shared: Any, items: Iterable[Any],
                 combine: Callable[[Any, Any], Any] | None) -> Iterator[Any]:
    from distributed import as_completed as dask_completed

    shared_f = _DASK.scatter(shared, broadcast=True, hash=False)
    limit = 2 * _dask_threads()
    pending = dask_completed()
    in_flight = 0
    for group in _groups(items, STREAM_GROUP):
        pending.add(_DASK.submit(_call_batch, fn, shared_f, group, combine, pure=False))
        in_flight += 1
        if in_flight >= limit:
            yield from next(pending).result()
            in_flight -= 1
    for f in pending:
        yield from f.result()


def _quiet_worker() -> None:
    """Workers ignore Ctrl-C: the parent stops them, and prints one line instead of a traceback
    from every process."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _init(shared: Any) -> None:
    global _SHARED
    _quiet_worker()
    _SHARED = shared


@contextlib.contextmanager
def _pool(workers: int, **kw: Any) -> Iterator[ProcessPoolExecutor]:
    """A process pool that, when the block fails or is interrupted, cancels what is queued and
    stops its workers at once instead of waiting for them."""
    check_memory(f"{workers:,} worker processes", workers * WORKER_BYTES,
                 how=f"about {WORKER_BYTES / 2**20:.0f} MiB each: Python, numpy, numba and the shared data")
    ex = ProcessPoolExecutor(max_workers=workers, **kw)
    try:
        yield ex
    except BaseException:
        workers_now = list((getattr(ex, "_processes", None) or {}).values())  # shutdown forgets them
        for proc in workers_now:
            proc.terminate()
        ex.shutdown(wait=False, cancel_futures=True)
        raise
    ex.shutdown(wait=True)


def _call(fn: Callable[[Any, Any], Any], chunk: Sequence[Any]) -> list[Any]:
    return [fn(_SHARED, item) for item in chunk]


def run_tasks(fn: Callable[[Any, Any], Any], shared: Any, items: Sequence[Any], workers: int = 1,
              progress: Progress | None = None, costs: Sequence[float] | None = None) -> list[Any]:
    """`[fn(shared, item) for item in items]`, spread over `workers` processes or the Dask cluster
    in batches of about equal total `costs` (one estimate per item, in any unit; equal if omitted)."""
    if workers < 1:
        raise ValueError("workers must be >= 1")
    if costs is None:
        costs = [1.0] * len(items)
    elif len(costs) != len(items):
        raise ValueError(f"{len(costs)} costs for {len(items)} items")
    if _DASK is not None:
        return _dask_run(fn, shared, items, costs, progress)
    workers = min(workers, max(1, len(items)))
    out: list[Any] = []
    if workers == 1:
        for item in items:
            out.append(fn(shared, item))
            if progress:
                progress.advance()
        return out
    out = [None] * len(items)
    with _pool(workers, initializer=_init, initargs=(shared,)) as ex:
        futures = {ex.submit(_call, fn, [items[i] for i in g]): g for g in batches(costs, workers)}
        for f in as_completed(futures):
            g = futures[f]
            for i, r in zip(g, f.result(), strict=True):
                out[i] = r
            if progress:
                progress.advance(len(g))
    return out


def stream_tasks(fn: Callable[[Any, Any], Any], shared: Any, items: Iterable[Any],
                 workers: int = 1, combine: Callable[[Any, Any], Any] | None = None) -> Iterator[Any]:
    """Yield `fn(shared, item)` for a stream of items, in completion order (for results that
    are summed, such as counts). Items are read lazily and at most 2 x workers are in flight,
    so a stream larger than memory works. On Dask, STREAM_GROUP items go in one task and, with
    `combine` (an exact, associative fold such as integer `+`), come back folded into one result."""
    if _DASK is not None:
        yield from _dask_stream(fn, shared, items, combine)
        return
    if workers <= 1:
        for item in items:
            yield fn(shared, item)
        return
    with _pool(workers, initializer=_quiet_worker) as ex:
        pending: set = set()
        for item in items:
            pending.add(ex.submit(fn, shared, item))
            if len(pending) >= 2 * workers:
                done, pending = wait(pending, return_when=FIRST_COMPLETED)
                for f in done:
                    yield f.result()
        for f in pending:
            yield f.result()


def default_workers() -> int:
    return max(1, len(os.sched_getaffinity(0)))


class Progress:
    """A one-line progress bar on stderr, shown only when stderr is a terminal."""

    def __init__(self, total: int, label: str, enabled: bool | None = None) -> None:
        self.total = max(total, 1)
        self.done = 0
        self.label = label
        self.enabled = sys.stderr.isatty() if enabled is None else enabled
        self.start = time.perf_counter()
        self._last = 0.0

    def advance(self, k: int = 1) -> None:
        self.done += k
        if not self.enabled:
            return
        now = time.perf_counter()
        if now - self._last < 0.2 and self.done < self.total:
            return
        self._last = now
        frac = self.done / self.total
        bar = "#" * int(30 * frac)
        sys.stderr.write(f"\r{self.label} [{bar:<30}] {self.done}/{self.total} "
                         f"{now - self.start:.0f}s")
        if self.done >= self.total:
            sys.stderr.write("\n")
        sys.stderr.flush()
