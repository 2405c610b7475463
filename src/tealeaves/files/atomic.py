"""Output files: whole or not at all, never a replaced non-file, nothing left by a failed command.

- A regular file is written to a temporary file beside it, then renamed over it (`os.replace`
  is atomic on one file system): Ctrl-C or a crash never leaves a half-written result where a
  good one was.
- A symbolic link is followed: the file it points to is replaced (or created), never the link.
  Except for a file the tool names itself inside a folder it keeps (`follow_link=False`: a
  `select --out` folder's evaluations and models, `report --figures`' charts, a `--keep` folder):
  there a link, or anything else that is not a folder, is replaced by the new file, and what it
  pointed to is never touched (a link planted in the folder never redirects a write outside it).
- A name for an open stream (`/dev/stdout`, `/dev/fd/2`, `/proc/self/fd/1`, or a link to one) is
  written through even when the stream goes to a regular file (`> out.txt`): appended to it,
  never replaced (the shell's file would lose what was printed before, and the rest).
- A character device (`/dev/null`, a terminal) or a FIFO (named pipe) is written through: the
  complete output goes into a temporary file first, then is copied into the device or pipe,
  which stays what it was. A FIFO is opened without blocking; one that no process is reading
  is a one-line error, never a wait. The CLI opens it before any work (`claim`).
- Anything else (a block device, a socket, a folder) is refused with a one-line error.
- An output that brings a companion file named after it (an intrusion key's `KEY.secret`) must be
  a regular file (`check_regular`): a secret is never written through a device or pipe, nor beside one.
- A write error (disk full, `/dev/full`, permission) names the output file as the user gave it,
  never a temporary name or none.
- Inside `transaction()` (the CLI runs every command in one), outputs are held as temporary files
  and put in place together when the command succeeds; when it fails, every one is removed, and
  so are the folders `makedirs` created: a failed command leaves nothing behind. Devices and
  FIFOs are written first, files renamed only when those succeeded: a failing `/dev/full` leaves
  every file as it was.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import shutil
import stat
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field

from ..errors import MethodError

_UMASK = os.umask(0)
os.umask(_UMASK)


@dataclass
class _Pending:
    tmp: str
    path: str
    through: bool


@dataclass
class _Transaction:
    pending: list[_Pending] = field(default_factory=list)
    folders: list[str] = field(default_factory=list)


_TX: _Transaction | None = None
_CLAIMED: dict[tuple[int, int], int] = {}  # (device, inode) of a FIFO -> its open write end


def resolve(target: str | os.PathLike, follow_link: bool = True) -> tuple[str, bool]:
    """(the path to write, whether to write through it rather than replace it). A link resolves
    to the regular file it points to (existing or not); a device or FIFO is written through.
    `follow_link=False`: `target` itself is replaced, whatever non-folder it is."""
    target = os.fspath(target)
    if not follow_link:
        with contextlib.suppress(FileNotFoundError):
            mode = os.lstat(target).st_mode
            if stat.S_ISDIR(mode):
                raise MethodError(f"{target!r} is a folder; it must be a file")
        return target, False
    try:
        st = os.stat(target)
    except FileNotFoundError:  # a new file, or a link to one
        return (os.path.realpath(target) if os.path.islink(target) else target), False
    except OSError as exc:
        if os.path.islink(target):  # a loop of links: replacing the link is not an answer
            raise MethodError(f"{target!r} is a link that cannot be followed ({exc.strerror})") from None
        return target, False  # EACCES...: the write will say what is wrong
    if stat.S_ISREG(st.st_mode):
        if _stream(target):
            return target, True
        return (os.path.realpath(target) if os.path.islink(target) else target), False
    if stat.S_ISCHR(st.st_mode) or stat.S_ISFIFO(st.st_mode):
        return target, True
    raise MethodError(f"{target!r} is {_kind(st.st_mode)}; an output must be a regular file, a character "
                      "device or a FIFO")


_FD_FOLDER = re.compile(r"/proc/(self|thread-self|\d+)(/task/\d+)?/fd")


def _stream(target: str) -> bool:
    """Whether `target` is, or links to, an open file descriptor (`/dev/stdout` -> `/proc/self/fd/1`)."""
    path = os.path.abspath(target)
    for _ in range(40):  # the kernel's limit of links followed
        if _FD_FOLDER.fullmatch(os.path.realpath(os.path.dirname(path))):
            return True
        if not os.path.islink(path):
            return False
        path = os.path.join(os.path.dirname(path), os.readlink(path))
    return False


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def check_regular(target: str | os.PathLike, why: str) -> None:
    """Refuse a `target` that would be written through (a device or FIFO), with `why` it must be a
    regular file (new, existing or linked to)."""
    if resolve(target)[1]:
        raise MethodError(f"{os.fspath(target)!r} is a device, FIFO or stream, not a regular file; {why}")


def with_extension(path: str | os.PathLike, ext: str) -> str:
    """`path` as a writer that adds `ext` to a name without it (numpy's .npz) will write it: the
    name itself when it ends in `ext` (in any case: `m.NPZ`) or is a device or FIFO written through."""
    path = os.fspath(path)
    if path.lower().endswith(ext.lower()) or (os.path.exists(path) and resolve(path)[1]):
        return path
    return path + ext


def claim(target: str | os.PathLike) -> None:
    """Open a FIFO output now, without blocking (no reader: a one-line error before any work), and
    keep it open for the write at the end. Other targets need nothing."""
    path, through = resolve(target)
    if through and stat.S_ISFIFO(os.stat(path).st_mode):
        key = _key(path)
        if key not in _CLAIMED:
            _CLAIMED[key] = _open_through(path)


def _key(path: str) -> tuple[int, int]:
    st = os.stat(path)
    return st.st_dev, st.st_ino


def _open_through(path: str) -> int:
    """The write end of a device or FIFO, without blocking on a FIFO nobody reads (a regular file
    behind a stream: appended to)."""
    append = os.O_APPEND if stat.S_ISREG(os.stat(path).st_mode) else 0
    try:
        fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK | os.O_NOCTTY | append)
    except OSError as exc:
        if exc.errno == errno.ENXIO:
            raise MethodError(f"{path!r} is a FIFO that no process is reading; start the reader first "
                              "(tealeaves does not wait)") from None
        raise
    return fd


def _write_through(tmp: str, path: str) -> None:
    fd = _CLAIMED.pop(_key(path), None)
    if fd is None:
        fd = _open_through(path)
    os.set_blocking(fd, True)
    with open(fd, "wb") as out, open(tmp, "rb") as src:
        shutil.copyfileobj(src, out)


def _remove(path: str) -> None:
    with contextlib.suppress(OSError):
        os.unlink(path)


@contextlib.contextmanager
def _naming(target: str, tmp: str | None) -> Iterator[None]:
    """An OSError inside that names no file, or the temporary file `tmp` (None: any file), names
    `target` instead (a full disk or `/dev/full` says which output it could not write)."""
    try:
        yield
    except OSError as exc:
        if tmp is None or exc.filename is None or exc.filename == tmp:
            exc.filename = target
            exc.filename2 = None
        raise


def _commit(pending: list[_Pending]) -> None:
    """Put every output in place: first the copies into devices and FIFOs (which cannot be undone
    and may fail: `/dev/full`), then, only when they all succeeded, the renames of the files."""
    try:
        for p in pending:
            if p.through:
                with _naming(p.path, p.tmp):
                    _write_through(p.tmp, p.path)
        for p in pending:
            if not p.through:
                with _naming(p.path, p.tmp):
                    os.replace(p.tmp, p.path)
    finally:
        for p in pending:
            _remove(p.tmp)


def _temporary(path: str, through: bool, suffix: str = "") -> str:
    """A new empty temporary file for the output `path`: beside it (the rename is then atomic), or
    in the temporary folder for a device or FIFO. Its name keeps at most 100 characters of the
    output's, so a long but valid output name never makes a temporary name too long."""
    folder = tempfile.gettempdir() if through else os.path.dirname(os.path.abspath(path))
    prefix = f".{os.path.basename(path)[:100]}."
    fd, tmp = tempfile.mkstemp(prefix=prefix, suffix=suffix or ".tmp", dir=folder)
    os.close(fd)
    return tmp


def probe(target: str | os.PathLike) -> None:
    """Create, then remove, what writing the regular file `target` will create (its temporary file
    beside it, and the file itself when new): any reason the write at the end would fail (no such
    folder, a file where a folder should be, permissions, a read-only or pseudo file system, a
    name too long) is an OSError now, before any work."""
    path, through = resolve(target)
    if through:
        return
    _writable(path)
    _remove(_temporary(path, through))
    if not os.path.lexists(path):
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
        _remove(path)


def _writable(path: str) -> os.stat_result | None:
    """The status of the regular file an output will replace (None: none yet, or a link, which is
    replaced itself); a read-only one is refused, as the shell's `>` refuses it (the rename that
    replaces a file would not)."""
    try:
        st = os.lstat(path)
    except OSError:
        return None
    if stat.S_ISREG(st.st_mode) and (not st.st_mode & 0o222 or not os.access(path, os.W_OK)):
        raise MethodError(f"{path}: is read-only; it is not replaced (make it writable or write "
                          "another file)")
    return st if stat.S_ISREG(st.st_mode) else None


@contextlib.contextmanager
def atomic_path(target: str | os.PathLike, suffix: str = "", mode: int | None = None,
                follow_link: bool = True) -> Iterator[str]:
    """A temporary path to write (ending in `suffix`, for writers that add an extension
    otherwise); put in place at `target` (see the module docstring) when the block succeeds (or,
    inside a transaction, when it does), removed when it fails. `mode`: the file's permissions
    (default: 0666 less the umask). `follow_link=False`: a file the tool names in a folder it keeps,
    which replaces a link rather than writing where it points (`resolve`)."""
    path, through = resolve(target, follow_link)
    old = None if through else _writable(path)
    with _naming(os.fspath(target), None):
        tmp = _temporary(path, through, suffix)
    try:
        with _naming(os.fspath(target), tmp):
            yield tmp
        if mode is None and old is not None:  # a replaced file keeps its permissions (and owner)
            mode = stat.S_IMODE(old.st_mode)
            if (old.st_uid, old.st_gid) != (os.getuid(), os.getgid()):
                with contextlib.suppress(OSError):
                    os.chown(tmp, old.st_uid, old.st_gid)
        os.chmod(tmp, 0o666 & ~_UMASK if mode is None else mode)  # mkstemp makes 0600
    except BaseException:
        _remove(tmp)
        raise
    if _TX is not None:
        _TX.pending.append(_Pending(tmp, path, through))
    else:
        _commit([_Pending(tmp, path, through)])


@contextlib.contextmanager
def atomic_paths(targets: list[str | os.PathLike]) -> Iterator[list[str]]:
    """Temporary paths for several files that belong together (tasks and their key): all are
    put in place only after every one was written, so a failure leaves none half-done."""
    with transaction(), contextlib.ExitStack() as stack:
        yield [stack.enter_context(atomic_path(t)) for t in targets]


@contextlib.contextmanager
def transaction() -> Iterator[None]:
    """Every output written inside is put in place when the block succeeds, all together; when it
    fails, none is, and the folders created by `makedirs` are removed again. Nested, the outer
    transaction decides."""
    global _TX
    outer, tx = _TX, _Transaction()
    _TX = tx
    try:
        yield
    except BaseException:
        _TX = outer
        for p in tx.pending:
            _remove(p.tmp)
        for folder in reversed(tx.folders):
            with contextlib.suppress(OSError):
                os.rmdir(folder)  # only if empty
        if outer is None:
            _release()
        raise
    _TX = outer
    if outer is not None:
        outer.pending += tx.pending
        outer.folders += tx.folders
        return
    try:
        _commit(tx.pending)
    finally:
        _release()


@contextlib.contextmanager
def immediate() -> Iterator[None]:
    """Outputs written inside are put in place at once even within a transaction (the folder of
    `tealeaves select --out`, which a later run resumes from)."""
    global _TX
    saved, _TX = _TX, None
    try:
        yield
    finally:
        _TX = saved


def makedirs(folder: str | os.PathLike) -> None:
    """`os.makedirs(folder, exist_ok=True)`; inside a transaction that fails, the folders it
    created are removed again (when empty)."""
    folder = os.path.abspath(os.fspath(folder))
    missing = []
    f = folder
    while not os.path.isdir(f) and os.path.dirname(f) != f:
        missing.append(f)
        f = os.path.dirname(f)
    os.makedirs(folder, exist_ok=True)
    if _TX is not None:
        _TX.folders += reversed(missing)


def _release() -> None:
    """Close the FIFOs claimed and not written (a failed command: the reader sees end of file)."""
    for fd in _CLAIMED.values():
        with contextlib.suppress(OSError):
            os.close(fd)
    _CLAIMED.clear()


def write_text(target: str | os.PathLike, text: str, follow_link: bool = True) -> None:
    """`text` (UTF-8) to `target`, atomically (`follow_link`: `atomic_path`)."""
    with atomic_path(target, follow_link=follow_link) as tmp, open(tmp, "w", encoding="utf-8") as fh:
        fh.write(text)
