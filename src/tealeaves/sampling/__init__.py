"""Numba kernels shared by every estimator, and the per-document arrays they run on.
Nothing outside this package knows about numba.

Compiled kernels are cached on disk (`cache=True`). numba checks only the file a function is
defined in, so a kernel that inlines a function from another file could be served stale after
an edit or upgrade; the cache therefore lives in a directory named after a hash of this
package's sources (under $NUMBA_CACHE_DIR if set, else the user's cache directory)."""

import contextlib
import hashlib
import os
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import numba


def _cache_dir() -> str | None:
    here = Path(__file__).resolve().parent
    digest = hashlib.sha256()
    for f in sorted(here.glob("*.py")):
        digest.update(f.name.encode())
        digest.update(f.read_bytes())
    base = os.environ.get("NUMBA_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"), "tealeaves")
    path = os.path.join(base, f"numba-{digest.hexdigest()[:16]}")
    try:
        os.makedirs(path, exist_ok=True)
    except OSError:
        return None
    return path


_dir = _cache_dir()
if _dir is not None:
    numba.config.CACHE_DIR = _dir

from .prepare import PreparedDoc, PreparedModels, prepare_doc, prepare_models  # noqa: E402
from .rng import child, new_state  # noqa: E402

# what the first compilation of one estimator's kernels took here (2 busy cores); said when it compiles
COMPILE_ESTIMATE = "5-20 s"


class Timer:
    """Seconds a `with` block took (`.seconds`, set when it ends)."""

    seconds: float = 0.0


def _cache_misses() -> int:
    """Kernels compiled so far in this process because the disk cache had no version for them."""
    total = 0
    for name, module in list(sys.modules.items()):
        if name.startswith("tealeaves.") and module is not None:
            for obj in list(vars(module).values()):
                if isinstance(obj, numba.core.registry.CPUDispatcher):
                    total += sum(obj.stats.cache_misses.values())
    return total


@contextlib.contextmanager
def compiling(label: str, notice: bool = True) -> Iterator[Timer]:
    """Time a warm-up call that compiles (first run) or loads (later runs, from the disk cache) the
    kernels it touches. With `notice`, stderr says so, once, as soon as it starts compiling."""
    timer, done, before = Timer(), threading.Event(), _cache_misses()

    def watch() -> None:
        while not done.wait(0.25):
            if _cache_misses() > before:
                print(f"tealeaves: compiling the numba kernels for {label} (first run only, about "
                      f"{COMPILE_ESTIMATE}; cached for later runs)...", file=sys.stderr, flush=True)
                return

    watcher = threading.Thread(target=watch, daemon=True)
    if notice:
        watcher.start()
    start = time.perf_counter()
    try:
        yield timer
    finally:
        timer.seconds = time.perf_counter() - start
        done.set()


__all__ = ["PreparedDoc", "PreparedModels", "child", "compiling", "prepare_doc", "prepare_models",
           "new_state"]
