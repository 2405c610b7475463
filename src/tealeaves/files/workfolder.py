"""A folder of a long command's work files (`tealeaves index build`'s chunks), never followed.

The folder is opened once, refused if it is a symbolic link or not a folder, and every file in it
is then read, written, renamed and removed relative to that open folder (`dir_fd`): a link put
where the folder was, or in it under a file's name, is never written through. A file is written
whole or not at all (a temporary name, then renamed); a write that fails (a full disk, a quota)
removes its temporary file and names the file it was writing, with the cause.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import stat
from collections.abc import Callable, Iterator
from typing import BinaryIO

import numpy as np

from ..errors import MethodError

_NOFOLLOW = os.O_NOFOLLOW | os.O_CLOEXEC


class WorkFolder:
    """The folder `path` (created if missing, its parent must exist), opened for `what` work
    ("the index's chunks": said in errors). `created`: whether this made it."""

    def __init__(self, path: str | os.PathLike, what: str) -> None:
        self.path = os.fspath(path)
        self.created = False
        with contextlib.suppress(FileExistsError):
            os.mkdir(self.path)
            self.created = True
        try:
            self.fd = os.open(self.path, os.O_RDONLY | os.O_DIRECTORY | _NOFOLLOW)
        except OSError as exc:
            if exc.errno == errno.ELOOP or stat.S_ISLNK(_lstat_mode(self.path)):
                raise MethodError(f"{self.path}: is a symbolic link; {what} are kept in this folder, "
                                  "never through a link (remove the link, or write elsewhere)") from None
            if exc.errno == errno.ENOTDIR:
                raise MethodError(f"{self.path}: exists and is not a folder; {what} are kept in a folder "
                                  "of this name (remove it, or write elsewhere)") from None
            raise OSError(exc.errno, exc.strerror, self.path) from None

    def file(self, name: str) -> str:
        """The path of the file `name` in the folder (for messages)."""
        return os.path.join(self.path, name)

    @contextlib.contextmanager
    def _named(self, name: str) -> Iterator[None]:
        try:
            yield
        except OSError as exc:
            raise OSError(exc.errno, exc.strerror or str(exc), self.file(name)) from None

    def write(self, name: str, fill: Callable[[BinaryIO], None]) -> None:
        """The file `name`, written by `fill(fh)` under a temporary name (a link or file left there
        is removed, never followed), then renamed: whole or not at all."""
        tmp = name + ".tmp"
        try:
            with self._named(name):
                self.remove(tmp)
                fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW, 0o644, dir_fd=self.fd)
                with os.fdopen(fd, "wb") as fh:
                    fill(fh)
                os.replace(tmp, name, src_dir_fd=self.fd, dst_dir_fd=self.fd)
        except BaseException:
            self.remove(tmp)
            raise

    def open(self, name: str) -> BinaryIO:
        """The file `name` opened to read (a link there is an error, never followed)."""
        with self._named(name):
            return os.fdopen(os.open(name, os.O_RDONLY | _NOFOLLOW, dir_fd=self.fd), "rb")

    def read_array(self, name: str, dtype: str, count: int = -1, offset: int = 0) -> np.ndarray:
        """`count` items of `dtype` (-1: all to the end) from byte `offset` of the file `name`."""
        with self.open(name) as fh, self._named(name):
            item = np.dtype(dtype).itemsize
            if count < 0:
                count = (os.fstat(fh.fileno()).st_size - offset) // item
            out = np.empty(count, dtype)
            fh.seek(offset)
            got = fh.readinto(memoryview(out).cast("B")) if count else 0
            if got != count * item:
                raise OSError(errno.EIO, f"{got} of {count * item} bytes read (the file is shorter)")
        return out

    def size(self, name: str) -> int:
        with self._named(name):
            return os.stat(name, dir_fd=self.fd, follow_symlinks=False).st_size

    def names(self) -> list[str]:
        return os.listdir(self.fd)

    def remove(self, name: str) -> None:
        """Remove the file (or link) `name`, if there."""
        with contextlib.suppress(FileNotFoundError):
            os.unlink(name, dir_fd=self.fd)

    def clear(self, pattern: str) -> None:
        """Remove the files whose names match `pattern` (a regular expression, whole name), then
        the folder if nothing else is left in it; close it."""
        for name in self.names():
            if re.fullmatch(pattern, name):
                self.remove(name)
        self.close(remove_if_empty=True)

    def close(self, remove_if_empty: bool = False) -> None:
        if self.fd < 0:
            return
        if remove_if_empty:
            with contextlib.suppress(OSError):
                if not self.names():
                    os.rmdir(self.path)  # a link put there meanwhile: ENOTDIR, nothing removed
        os.close(self.fd)
        self.fd = -1


def _lstat_mode(path: str) -> int:
    try:
        return os.lstat(path).st_mode
    except OSError:
        return 0
