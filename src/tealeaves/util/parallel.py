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
need the same tealeaves (and numba) installed. Start workers with `dask worker ADDRESS --preload
tealeaves.parallel` to load every kernel when the worker starts rather than in the first job.

A job whose estimated seconds (the caller's cost model: `seconds=`) are below `min_seconds`
(DASK_MIN_SECONDS unless given; the CLI's `--dask-min-seconds`) runs here instead, as if there were
no cluster, before `distributed` is even imported: using a cluster has a fixed cost (importing
`distributed`, connecting, the scheduler's and workers' share) that a small job does not repay.
The numbers are the same either way; one line on stderr and `dask` in every JSON result say where
each job ran and why. Once connected (a larger job, or `min_seconds=0`), every job uses the cluster.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import heapq
import importlib.util
import os
import re
import signal
import sys
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, ThreadPoolExecutor, as_completed, wait
from typing import Any

import numpy as np

from ..errors import MethodError, shorten
from .limits import check_float, check_memory

_SHARED: Any = None
_SESSION: _DaskSession | None = None  # the use_dask block we are in (connected or not yet)
DASK_ENV = "TEALEAVES_DASK"
DASK_MIN_SECONDS = 10.0  # smaller jobs (estimated seconds) run here: docs/performance.md measures it
WORKER_WAIT = 20.0  # seconds to wait for a Dask cluster's first worker
CONNECT_TIMEOUT = 20.0  # seconds to reach a Dask scheduler and hear it answer
DASK_SCHEMES = ("tcp", "tls", "ucx")
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


def _dask() -> Any:
    """The connected `distributed.Client` of the `use_dask` block."""
    assert _SESSION is not None and _SESSION.client is not None
    return _SESSION.client


def _dask_threads() -> int:
    """Worker threads in the Dask cluster (at least 1, so that batching works before they join)."""
    return max(1, sum(_dask().nthreads().values()))


class _DaskSession:
    """A `use_dask` block: the scheduler's address, the client once connected, and where each job
    ran (`record`, also put in every JSON result written inside the block)."""

    def __init__(self, address: Any, min_seconds: float, client: Any = None) -> None:
        self.address = address if client is None else client.scheduler.address
        self.client = client
        self.min_seconds = min_seconds
        self.record: dict[str, Any] = {"address": str(self.address), "min_seconds": min_seconds,
                                       "ran": "nowhere yet", "jobs": []}
        self.told = False

    def connect(self) -> Any:
        """The client, connecting (and waiting for a first worker) on first use."""
        if self.client is None:
            self.client = _connect(self.address)
        return self.client

    def would_use(self, seconds: float | None) -> bool:
        """Whether a job of `seconds` (estimated; None: unknown) goes to the cluster."""
        return self.client is not None or seconds is None or not seconds < self.min_seconds

    def place(self, seconds: float | None, what: str) -> bool:
        """Decide where a job runs, connecting if it is the cluster; record it, and say once on
        stderr when a job runs here instead."""
        remote = self.would_use(seconds)
        if seconds is None:
            why = "no estimate of its cost"
        elif seconds < self.min_seconds:
            why = f"estimated {seconds:.3g} s of work, below the {self.min_seconds:g} s threshold"
            why += "; the cluster was already in use" if remote else ""
        else:
            why = f"estimated {seconds:.3g} s of work, at least the {self.min_seconds:g} s threshold"
        if remote:
            self.connect()
        elif not self.told:
            self.told = True
            sys.stderr.write(f"tealeaves: {what} runs here, not on the Dask cluster at "
                             f"{self.record['address']}: {why} (--dask-min-seconds 0 always uses the "
                             "cluster)\n")
        where = "cluster" if remote else "local"
        self.record["jobs"].append({"what": what, "ran": where, "estimated_seconds": seconds,
                                    "why": why})
        ran = {j["ran"] for j in self.record["jobs"]}
        self.record["ran"] = where if len(ran) == 1 else "local and cluster"
        return remote


def check_address(address: str) -> str:
    """`address` if it is a Dask scheduler address ([tcp|tls|ucx://]HOST:PORT, PORT 1-65535), else a
    one-line MethodError saying what is wrong."""
    text = address.strip()
    scheme, rest = text.split("://", 1) if "://" in text else ("tcp", text)
    form = "give tcp://HOST:PORT, tls://HOST:PORT or ucx://HOST:PORT"
    if scheme.lower() not in DASK_SCHEMES:
        raise MethodError(f"{address!r} is not a Dask scheduler address: scheme {scheme!r} ({form})")
    m = re.fullmatch(r"(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9_.-]+):([0-9]{1,5})", rest)
    if m is None or not 1 <= int(m.group(2)) <= 65535:
        raise MethodError(f"{address!r} is not a Dask scheduler address: no host and port 1-65535 ({form})")
    return text


def _identify(address: str, args: dict) -> Any:
    """The scheduler's answer to 'identity' (in a thread of its own: its own event loop)."""
    from distributed.comm import connect

    async def ask() -> Any:
        comm = await connect(address, timeout=CONNECT_TIMEOUT, **args)
        try:
            await comm.write({"op": "identity", "reply": True})
            return await comm.read()
        finally:
            comm.abort()

    return asyncio.run(asyncio.wait_for(ask(), CONNECT_TIMEOUT + 1))


def _probe(address: str) -> None:
    """A one-line MethodError unless a Dask scheduler answers at `address` within CONNECT_TIMEOUT
    seconds (checked before any Client is made: a failed Client waits at exit)."""
    from distributed.security import Security

    args = Security().get_connection_args("client")
    if address.lower().startswith("tls://") and args.get("ssl_context") is None:
        raise MethodError(f"cannot reach the Dask scheduler at {address!r}: tls:// needs TLS credentials "
                          "(distributed.comm.tls in Dask's configuration) or a connected Client")
    with ThreadPoolExecutor(1) as pool:
        try:
            reply = pool.submit(_identify, address, args).result()
        except TimeoutError:
            raise MethodError(f"cannot reach the Dask scheduler at {address!r} (no answer within "
                              f"{CONNECT_TIMEOUT:g} s)") from None
        except OSError as exc:
            raise MethodError(f"cannot reach the Dask scheduler at {address!r} ({shorten(exc, 160)}; "
                              f"tried for up to {CONNECT_TIMEOUT:g} s)") from None
        except (Exception, MemoryError):  # noqa: BLE001 - whatever a stranger's bytes make of the decoder
            reply = None
    if not isinstance(reply, dict) or reply.get("type") != "Scheduler":
        raise MethodError(f"cannot reach the Dask scheduler at {address!r} (it does not speak Dask's "
                          "protocol, or is not a scheduler)")


def _connect(address: Any) -> Any:
    """A `distributed.Client` for the scheduler at `address`, with at least one worker."""
    from distributed import Client

    if isinstance(address, str):
        address = check_address(address)
        _probe(address)
    try:
        client = Client(address, timeout=f"{CONNECT_TIMEOUT:g}s", set_as_default=False)
    except (Exception, MemoryError) as exc:  # noqa: BLE001 - one line, whatever failed
        raise MethodError(f"cannot reach the Dask scheduler at {address!r} ({shorten(exc, 160)})") from None
    try:
        client.wait_for_workers(1, timeout=WORKER_WAIT)
    except TimeoutError:
        where = client.scheduler.address
        client.close()
        raise MethodError(f"the Dask scheduler at {where!r} has no workers (waited {WORKER_WAIT:g} s); "
                          f"start some with: dask worker {where}") from None
    return client


@contextlib.contextmanager
def use_dask(address: Any, min_seconds: float | None = None) -> Iterator[_DaskSession]:
    """Run tasks on the Dask cluster at `address` (a scheduler address such as
    'tcp://10.0.0.5:8786', or a connected `distributed.Client`) inside this block; jobs estimated
    at fewer than `min_seconds` (default DASK_MIN_SECONDS; 0: every job) run here instead, and the
    address is contacted only when a job goes there (with `min_seconds=0`, at once)."""
    global _SESSION
    min_s = DASK_MIN_SECONDS if min_seconds is None else check_float("dask min_seconds", min_seconds, 0)
    given = "distributed" in sys.modules and isinstance(address, sys.modules["distributed"].Client)
    if not given and importlib.util.find_spec("distributed") is None:
        raise MethodError('Dask needs its extra: pip install "tealeaves[dask]"')
    if isinstance(address, str):
        check_address(address)  # a malformed address is refused at once, not when a job goes there
    session = _DaskSession(address, min_s, address if given else None)
    if min_s == 0:
        session.connect()
    previous = _SESSION
    _SESSION = session
    try:
        yield session
    finally:
        _SESSION = previous
        if session.client is not None and not given:
            session.client.close()


def session_record() -> dict[str, Any] | None:
    """What the current `use_dask` block has recorded (the address, the threshold, where each job
    ran and why), for every result file written inside it; None outside one."""
    return None if _SESSION is None else _SESSION.record


def on_dask(seconds: float | None) -> bool:
    """Whether a job estimated at `seconds` (one worker; None: unknown) will run on the Dask cluster
    (connecting now if so), to skip local preparation such as loading kernels. Records nothing."""
    if _SESSION is None or not _SESSION.would_use(seconds):
        return False
    _SESSION.connect()
    return True


def _placed(seconds: float | None, what: str) -> bool:
    """Where this job runs (True: the cluster), decided and recorded by the `use_dask` block."""
    return _SESSION is not None and _SESSION.place(seconds, what)


def _dask_run(fn: Callable[[Any, Any], Any], shared: Any, items: Sequence[Any], costs: Sequence[float],
              progress: Progress | None, on_result: Callable[[int, Any], None] | None = None) -> list[Any]:
    from distributed import as_completed as dask_completed

    groups = batches(costs, _dask_threads())
    shared_f = _dask().scatter(shared, broadcast=True, hash=False)
    futures = {_dask().submit(_call_batch, fn, shared_f, [items[i] for i in g], pure=False,
                            priority=len(groups) - rank): g for rank, g in enumerate(groups)}
    return _gather(futures, dask_completed(futures, loop=_dask().loop), len(items), progress, on_result)


def _gather(futures: dict[Any, Sequence[int]], done: Iterable[Any], n: int,
            progress: Progress | None, on_result: Callable[[int, Any], None] | None = None) -> list[Any]:
    """The `n` results of batched futures (future -> the item indices of its batch) in item order,
    taken as they finish (`done`, the pool's or Dask's as-completed iterator), each passed to
    `on_result(index, result)` as it arrives."""
    out: list[Any] = [None] * n
    for f in done:
        g = futures[f]
        for i, r in zip(g, f.result(), strict=True):
            out[i] = r
            if on_result is not None:
                on_result(i, r)
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

    shared_f = _dask().scatter(shared, broadcast=True, hash=False)
    limit = 2 * _dask_threads()
    pending = dask_completed(loop=_dask().loop)
    in_flight = 0
    for group in _groups(items, STREAM_GROUP):
        pending.add(_dask().submit(_call_batch, fn, shared_f, group, combine, pure=False))
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
              progress: Progress | None = None, costs: Sequence[float] | None = None,
              seconds: float | None = None, what: str = "this job", done: dict[int, Any] | None = None,
              on_result: Callable[[int, Any], None] | None = None) -> list[Any]:
    """`[fn(shared, item) for item in items]`, spread over `workers` processes or the Dask cluster
    in batches of about equal total `costs` (one estimate per item, in any unit; equal if omitted).
    `seconds`: the whole job's estimated seconds on one worker (None: unknown), which decides
    whether a `use_dask` block sends it to the cluster (see DASK_MIN_SECONDS). `done`: results
    already finished (item index -> result: a resumed run's, `files.kept`), not computed again;
    `on_result(index, result)` is called in this process as each other item finishes."""
    if workers < 1:
        raise ValueError("workers must be >= 1")
    if costs is None:
        costs = [1.0] * len(items)
    elif len(costs) != len(items):
        raise ValueError(f"{len(costs)} costs for {len(items)} items")
    if done:  # only the others run; every item carries its own seed, so their results are the same
        todo = [i for i in range(len(items)) if i not in done]
        if progress:
            progress.advance(len(items) - len(todo))
        share = sum(costs[i] for i in todo) / max(sum(costs), 1e-300)
        rest = run_tasks(fn, shared, [items[i] for i in todo], workers, progress, [costs[i] for i in todo],
                         None if seconds is None else seconds * share, what, None,
                         None if on_result is None else lambda j, r: on_result(todo[j], r))
        out = [done.get(i) for i in range(len(items))]
        for i, r in zip(todo, rest, strict=True):
            out[i] = r
        return out
    if _placed(seconds, what):
        return _dask_run(fn, shared, items, costs, progress, on_result)
    workers = min(workers, max(1, len(items)))
    out: list[Any] = []
    if workers == 1:
        for i, item in enumerate(items):
            out.append(fn(shared, item))
            if on_result is not None:
                on_result(i, out[-1])
            if progress:
                progress.advance()
        return out
    with _pool(workers, initializer=_init, initargs=(shared,)) as ex:
        futures = {ex.submit(_call, fn, [items[i] for i in g]): g for g in batches(costs, workers)}
        return _gather(futures, as_completed(futures), len(items), progress, on_result)


def stream_tasks(fn: Callable[[Any, Any], Any], shared: Any, items: Iterable[Any],
                 workers: int = 1, combine: Callable[[Any, Any], Any] | None = None,
                 seconds: float | None = None, what: str = "this job") -> Iterator[Any]:
    """Yield `fn(shared, item)` for a stream of items, in completion order (for results that
    are summed, such as counts). Items are read lazily and at most 2 x workers are in flight,
    so a stream larger than memory works. On Dask, STREAM_GROUP items go in one task and, with
    `combine` (an exact, associative fold such as integer `+`), come back folded into one result.
    `seconds` and `what` as for `run_tasks`."""
    if _placed(seconds, what):
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
