"""How per-document work is spread: in this process (workers=1), over local processes, or over a
Dask distributed cluster.

`run_tasks(fn, shared, items, workers)` calls `fn(shared, item)` for every item and returns the
results in item order. `shared` (the model's arrays, the method and its parameters) is sent
once to each worker process. Every item carries its own seed, so results do not depend on
`workers`, on the cluster, or on the order in which items finish.

Inside `with use_dask(address):` (the CLI's `--dask ADDRESS` or $TEALEAVES_DASK), `run_tasks` and
`stream_tasks` send the items to the Dask cluster at `address` instead (`workers` is then ignored):
`shared` is scattered to every worker once, and the workers need tealeaves installed.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from typing import Any

from .checks import check_memory
from .errors import MethodError

_SHARED: Any = None
_DASK: Any = None  # the distributed.Client in use, set by use_dask
DASK_ENV = "TEALEAVES_DASK"
WORKER_BYTES = 100 * 2**20  # a worker process: Python, numpy, numba and its copy of the shared data


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
    previous, _DASK = _DASK, client
    try:
        yield client
    finally:
        _DASK = previous
        if own:
            client.close()


def _dask_run(fn: Callable[[Any, Any], Any], shared: Any, items: Sequence[Any],
              progress: Progress | None) -> list[Any]:
    from distributed import as_completed

    shared_f = _DASK.scatter(shared, broadcast=True, hash=False)
    futures = [_DASK.submit(fn, shared_f, item, pure=False) for item in items]
    for _ in as_completed(futures):
        if progress:
            progress.advance()
    return _DASK.gather(futures)


def _dask_stream(fn: Callable[[Any, Any], Any], shared: Any, items: Iterable[Any]) -> Iterator[Any]:
    from distributed import as_completed

    shared_f = _DASK.scatter(shared, broadcast=True, hash=False)
    limit = 2 * max(1, len(_DASK.scheduler_info().get("workers", {})))
    pending = as_completed()
    in_flight = 0
    for item in items:
        pending.add(_DASK.submit(fn, shared_f, item, pure=False))
        in_flight += 1
        if in_flight >= limit:
            yield next(pending).result()
            in_flight -= 1
    for f in pending:
        yield f.result()


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
              progress: Progress | None = None) -> list[Any]:
    if workers < 1:
        raise ValueError("workers must be >= 1")
    if _DASK is not None:
        return _dask_run(fn, shared, items, progress)
    workers = min(workers, max(1, len(items)))
    out: list[Any] = []
    if workers == 1:
        for item in items:
            out.append(fn(shared, item))
            if progress:
                progress.advance()
        return out
    # chunks of items: fewer round trips, still about 8 per worker to balance the load
    size = max(1, len(items) // (8 * workers))
    chunks = [items[i : i + size] for i in range(0, len(items), size)]
    with _pool(workers, initializer=_init, initargs=(shared,)) as ex:
        futures = [ex.submit(_call, fn, chunk) for chunk in chunks]
        for f, chunk in zip(futures, chunks, strict=True):
            out.extend(f.result())
            if progress:
                progress.advance(len(chunk))
    return out


def stream_tasks(fn: Callable[[Any, Any], Any], shared: Any, items: Iterable[Any],
                 workers: int = 1) -> Iterator[Any]:
    """Yield `fn(shared, item)` for a stream of items, in completion order (for results that
    are summed, such as counts). Items are read lazily and at most 2 x workers are in flight,
    so a stream larger than memory works."""
    if _DASK is not None:
        yield from _dask_stream(fn, shared, items)
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
