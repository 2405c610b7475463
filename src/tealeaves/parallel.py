"""How per-document work is spread: in this process (workers=1) or over local processes.

`run_tasks(fn, shared, items, workers)` calls `fn(shared, item)` for every item and returns the
results in item order. `shared` (the model's arrays, the method and its parameters) is sent
once to each worker process. Every item carries its own seed, so results do not depend on
`workers` or on the order in which items finish.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from typing import Any

_SHARED: Any = None


def _init(shared: Any) -> None:
    global _SHARED
    _SHARED = shared


def _call(fn: Callable[[Any, Any], Any], item: Any) -> Any:
    return fn(_SHARED, item)


def run_tasks(fn: Callable[[Any, Any], Any], shared: Any, items: Sequence[Any], workers: int = 1,
              progress: Progress | None = None) -> list[Any]:
    if workers < 1:
        raise ValueError("workers must be >= 1")
    workers = min(workers, max(1, len(items)))
    out: list[Any] = []
    if workers == 1:
        for item in items:
            out.append(fn(shared, item))
            if progress:
                progress.advance()
        return out
    with ProcessPoolExecutor(max_workers=workers, initializer=_init, initargs=(shared,)) as ex:
        futures = [ex.submit(_call, fn, item) for item in items]
        for f in futures:
            out.append(f.result())
            if progress:
                progress.advance()
    return out


def stream_tasks(fn: Callable[[Any, Any], Any], shared: Any, items: Iterable[Any],
                 workers: int = 1) -> Iterator[Any]:
    """Yield `fn(shared, item)` for a stream of items, in completion order (for results that
    are summed, such as counts). Items are read lazily and at most 2 x workers are in flight,
    so a stream larger than memory works."""
    if workers <= 1:
        for item in items:
            yield fn(shared, item)
        return
    with ProcessPoolExecutor(max_workers=workers) as ex:
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
