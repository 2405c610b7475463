"""Files that appear whole or not at all: write to a temporary file beside the target, then
rename it over the target (`os.replace` is atomic on one file system), so Ctrl-C or a crash
never leaves a half-written result where a good one was."""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator

_UMASK = os.umask(0)
os.umask(_UMASK)


@contextlib.contextmanager
def atomic_path(target: str | os.PathLike, suffix: str = "") -> Iterator[str]:
    """A temporary path in the target's directory (ending in `suffix`, for writers that add an
    extension otherwise); renamed to `target` when the block succeeds, removed when it fails."""
    target = os.fspath(target)
    folder = os.path.dirname(os.path.abspath(target))
    fd, tmp = tempfile.mkstemp(prefix=f".{os.path.basename(target)}.", suffix=suffix or ".tmp", dir=folder)
    os.close(fd)
    try:
        yield tmp
        os.chmod(tmp, 0o666 & ~_UMASK)  # mkstemp makes 0600; a result file gets the usual mode
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


@contextlib.contextmanager
def atomic_paths(targets: list[str | os.PathLike]) -> Iterator[list[str]]:
    """Temporary paths for several files that belong together (tasks and their key): all are
    renamed into place only after every one was written, so a failure leaves none half-done."""
    with contextlib.ExitStack() as stack:
        yield [stack.enter_context(atomic_path(t)) for t in targets]


def write_text(target: str | os.PathLike, text: str) -> None:
    """`text` (UTF-8) to `target`, atomically."""
    with atomic_path(target) as tmp, open(tmp, "w", encoding="utf-8") as fh:
        fh.write(text)
