"""Numba kernels shared by every estimator, and the per-document arrays they run on.
Nothing outside this package knows about numba.

Compiled kernels are cached on disk (`cache=True`). numba checks only the file a function is
defined in, so a kernel that inlines a function from another file could be served stale after
an edit or upgrade; the cache therefore lives in a directory named after a hash of this
package's sources (under $NUMBA_CACHE_DIR if set, else the user's cache directory)."""

import hashlib
import os
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

__all__ = ["PreparedDoc", "PreparedModels", "child", "prepare_doc", "prepare_models", "new_state"]
