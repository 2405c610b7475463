"""One command at a time on a long piece of work kept on disk (`tealeaves index build`'s index and
its work folder, `select --out`'s folder): a lock file beside it, held with the kernel's `flock`.

A second command on the same work is refused at once (never a wait), naming the first: its
process, host and start, as the holder wrote them into the lock file. The lock is the kernel's, so
it is released when its process ends however it ends (Ctrl-C, SIGKILL, a crash): a lock file left
behind is simply taken by the next command, never judged stale by what it says, so no command can
take the place of one still running. The holder removes its lock file when done; one that finds
the file it locked removed or replaced meanwhile locks the new one (the usual flock protocol).
A lock file that is a symbolic link is never followed; one on a file system without locks runs
unlocked, with a warning on stderr.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import socket
import stat
import sys
import time
from collections.abc import Iterator

from ..errors import MethodError

HOLDER_BYTES = 300  # what is read of a holder's description


def _holder(fd: int) -> str:
    with contextlib.suppress(OSError):
        text = os.pread(fd, HOLDER_BYTES, 0).decode("utf-8", "replace").strip()
        if text and text.isprintable():
            return text
    return "a process that has not said which"


@contextlib.contextmanager
def exclusive(lock: str | os.PathLike, target: str, what: str) -> Iterator[None]:
    """Hold the lock file `lock` for the block (created when missing, removed at the end); a
    second holder is refused with "TARGET: another WHAT is running (HOLDER; its lock: LOCK)"."""
    lock = os.fspath(lock)
    flags = os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK
    fd = -1
    for _ in range(100):  # each retry: the file locked was removed by its holder meanwhile
        try:
            fd = os.open(lock, flags, 0o644)
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise MethodError(f"{lock}: is a symbolic link; the lock of {target} is never followed "
                                  "(remove it)") from None
            raise OSError(exc.errno, exc.strerror, lock) from None
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            os.close(fd)
            raise MethodError(f"{lock}: is not a regular file; it cannot lock {target} (remove it)")
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = _holder(fd)
            os.close(fd)
            raise MethodError(f"{target}: another {what} is running ({holder}; its lock: {lock}); wait "
                              "for it to end, or stop it") from None
        except OSError as exc:  # a file system without locks
            sys.stderr.write(f"tealeaves: warning: {lock}: cannot lock ({exc.strerror}); a second {what} "
                             "would not be refused\n")
            break
        try:
            now = os.stat(lock, follow_symlinks=False)
        except FileNotFoundError:
            now = None
        mine = os.fstat(fd)
        if now is not None and (now.st_dev, now.st_ino) == (mine.st_dev, mine.st_ino):
            break
        os.close(fd)
        fd = -1
    else:
        raise MethodError(f"{lock}: replaced again and again while taking it; is something removing it?")
    with contextlib.suppress(OSError):  # who holds it, for the message of a second command
        started = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime())
        text = f"process {os.getpid()} on {socket.gethostname()}, started {started}\n".encode()
        os.ftruncate(fd, 0)
        os.pwrite(fd, text, 0)
    try:
        yield
    finally:
        with contextlib.suppress(OSError):
            now, mine = os.stat(lock, follow_symlinks=False), os.fstat(fd)
            if (now.st_dev, now.st_ino) == (mine.st_dev, mine.st_ino):
                os.unlink(lock)  # still holding it: a command waiting on this file sees it gone
        os.close(fd)
