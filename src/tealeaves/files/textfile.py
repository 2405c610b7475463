"""Text input, bounded: every text file tealeaves reads (documents, vocabularies, MALLET files,
JSON, CSV, topic lists) is opened here. A line longer than MAX_LINE characters, or a file whose
(decompressed) text would need more than half of this machine's memory, is a one-line
`InputFileError` naming the file and line, raised while reading in chunks (never after reading
it whole). Inputs that never end are refused: character and block devices (/dev/zero,
/dev/urandom) and sockets. A FIFO or pipe (`<(zcat docs.gz)`) is read with the same bounds; a
pipe with no data for PIPE_IDLE seconds (no writer, or a stalled one) is an error, not a hang.
Encodings are checked here too (`check_encoding`: text encodings only), a byte-order mark at the
start is dropped in any encoding, and text that does not decode is a one-line error naming the
file and the line of the bad byte (UTF-16/32 without a byte-order mark: name the byte order). Text
is decoded here, chunk by chunk (`_decoded`), so line ends are counted exactly: only LF (or CRLF)
ends a line, as `wc -l` counts. A compressed file or an archive (gzip, zip/.npz, bzip2, xz, zstd,
.npy) read as text is named for what it is (`check_container`), not told to change its encoding."""

from __future__ import annotations

import codecs
import contextlib
import gzip
import io
import os
import select
import stat
import zlib
from collections.abc import Iterator
from typing import IO

from ..errors import InputFileError, TooLargeError, no_such_file, shorten, shown
from ..util import limits

MAX_LINE = 64 * 2**20  # characters in one line (a document, a MALLET token line, a JSON line)
# Memory a reader may hold per byte of text (a corpus: a list entry and an array element per
# token of at least two bytes); a file whose text times this passes half the memory is refused.
BYTES_PER_BYTE = 8
PIPE_IDLE = 300.0  # seconds a FIFO or pipe may stay silent
CHUNK = 2**20


# codecs Python calls text encodings that rewrite the text rather than decode a character set:
# backslash escapes (unicode_escape rewrites "\\n" in a document), domain-name and UTF-7 encodings
TRANSFORMING = ("unicode-escape", "raw-unicode-escape", "idna", "punycode", "utf-7")


def check_encoding(encoding: str) -> str:
    """`encoding` if Python can decode text files with it as a character set, else a one-line
    error: an unknown name, a codec that is not a text encoding (rot13, hex, base64, zlib_codec,
    uu, ...), or one that transforms text (`TRANSFORMING`: unicode_escape, idna, utf-7, ...)."""
    import codecs

    example = "(for example utf-8, latin-1, cp1252, utf-16)"
    try:
        info = codecs.lookup(encoding)
    except (LookupError, TypeError, ValueError):
        raise InputFileError(f"unknown text encoding {shown(encoding)} {example}") from None
    if not getattr(info, "_is_text_encoding", True) or info.name == "undefined":
        raise InputFileError(f"{shown(encoding)} is a {info.name} codec, not a text encoding {example}")
    if info.name in TRANSFORMING:
        raise InputFileError(f"{shown(encoding)} is the {info.name} codec, which transforms text rather "
                             f"than decoding a character set {example}")
    return encoding


def _advice(option: bool, utf16: str | None = None) -> str:
    """How to give the right encoding: by the reader's encoding option when it has one (`option`),
    else by saving the file as UTF-8 (the only encoding that file format is read in)."""
    if option:
        name = utf16 or "latin-1"
        return f"give its encoding (CLI --encoding {name}, Python encoding={name!r})"
    source = (utf16 or "ENCODING").upper()
    return f"this file is read as UTF-8 only: save it as UTF-8 (iconv -f {source} -t UTF-8)"


def _utf16(data: bytes | str) -> str | None:
    """'utf-16' (a byte-order mark), 'utf-16-le' or 'utf-16-be' (NUL bytes in at least a quarter of
    the places: ASCII text in UTF-16 without a mark, a NUL after or before each character) when
    `data` looks like UTF-16, else None (a binary file has a NUL in about 1 byte of 256)."""
    nul = b"\x00" if isinstance(data, bytes) else "\x00"
    head = data[:2] if isinstance(data, bytes) else data[:2].encode("latin-1", "replace")
    if head in (b"\xff\xfe", b"\xfe\xff"):
        return "utf-16"
    if data.count(nul) * 4 < len(data) or not data:
        return None
    return "utf-16-le" if data.index(nul) % 2 else "utf-16-be"


def _looks_utf16(where: str, utf16: str, option: bool, encoding: str) -> InputFileError:
    return InputFileError(f"{where}: looks like UTF-16 (NUL bytes / a byte-order mark), not "
                          f"{_name(encoding)} text; {_advice(option, utf16)}")


def _name(encoding: str) -> str:
    return "UTF-8" if encoding == "utf-8-sig" else encoding  # the fixed UTF-8 of a format


def _nul(where: str, text: str, option: bool, encoding: str) -> InputFileError:
    """The error for decoded text holding NUL characters: UTF-16 read in another encoding (many
    NULs, or a byte-order mark read as latin-1), else a stray NUL, which no text file holds."""
    utf16 = _utf16(text)
    if utf16:
        return _looks_utf16(where, utf16, option, encoding)
    return InputFileError(f"{where}: holds a NUL character (column {text.index(chr(0)) + 1}); text has "
                          "none: is it a binary file, or UTF-16/32?")


def _not_text(path: str, line: int, encoding: str, exc: UnicodeError, option: bool = True,
              whole: bool = False) -> InputFileError:
    """The one-line error for text that does not decode in `encoding`, at `line` (the bad byte's).
    UTF-16 and UTF-32 without a byte-order mark cannot be read as plain utf-16/utf-32: name the
    byte order. UTF-16 read as anything else is named as such (without a line when the file is
    read `whole`: it is the whole file's encoding). The advice names --encoding only when the
    reader has it (`option`)."""
    name = _name(encoding)
    where = f"{path}:{line}"
    if not isinstance(exc, UnicodeDecodeError):
        size = "16" if "16" in encoding else "32"
        hint = (f"; without a byte-order mark, name the byte order: --encoding utf-{size}-le or "
                f"utf-{size}-be" if "BOM" in str(exc) else "")
        return InputFileError(f"{where}: not {shown(name)} text ({shorten(exc, 80)}){hint}")
    utf16 = _utf16(exc.object) if isinstance(exc.object, bytes) and "16" not in encoding else None
    if utf16:
        return _looks_utf16(path if whole else where, utf16, option, encoding)
    hint = f"; is it a binary file? If not, {_advice(option)}" if name.lower() in ("utf-8", "utf8") else ""
    return InputFileError(f"{where}: not {name} text ({exc.reason}){hint}")


def _kind(path: str, wanted: str = "a regular file or a pipe") -> str:
    """'file' or 'pipe', or a one-line error for anything else (and for a missing path)."""
    try:
        mode = os.stat(path).st_mode
    except OSError as exc:
        if os.path.islink(path):
            raise InputFileError(f"{path}: is a symbolic link that leads to no file (broken or a loop: "
                                 f"{exc.strerror or exc})") from None
        if isinstance(exc, FileNotFoundError):
            raise no_such_file(path, "cannot read: no such file") from None
        raise InputFileError(f"{path}: cannot read ({exc.strerror or exc})") from None
    if stat.S_ISREG(mode):
        return "file"
    if stat.S_ISFIFO(mode):
        return "pipe"
    if stat.S_ISDIR(mode):
        raise InputFileError(f"{path}: is a folder, not a file")
    what = ("a character device" if stat.S_ISCHR(mode) else "a block device" if stat.S_ISBLK(mode)
            else "a socket" if stat.S_ISSOCK(mode) else "not a regular file")
    raise InputFileError(f"{path}: is {what}, not a file (its input may never end); give {wanted}")


def check_regular(path: str | os.PathLike, what: str = "a model file") -> None:
    """A one-line error unless `path` is a regular file (`what` is read more than once, or by a
    library that seeks: a pipe cannot be)."""
    p = os.fspath(path)
    if _kind(p, "a regular file") == "pipe":
        raise InputFileError(f"{p}: is a pipe; {what} must be a regular file")


class _Metered(io.RawIOBase):
    """Counts the bytes read; past `budget` (half the memory over `factor`) checks that the text
    so far, times `factor`, fits in half the memory, else a one-line InputFileError."""

    def __init__(self, path: str, budget: float, factor: float) -> None:
        super().__init__()
        self.path, self.budget, self.factor, self.count = path, budget, factor, 0

    def readable(self) -> bool:
        return True

    def _counted(self, n: int) -> int:
        self.count += n
        if self.count > self.budget:
            try:
                limits.check_memory(f"{self.path}: text of more than {self.count:,} bytes",
                                    self.count * self.factor, how=f"{self.factor:g} bytes held per byte read")
            except TooLargeError as exc:
                raise InputFileError(str(exc)) from None
            self.budget = self.count * 2  # memory_bytes() unknown at open, or changed: check again later
        return n


_READ_PIPES: set[str] = set()  # the anonymous pipes read so far: a second read would see nothing


def anonymous_pipe(path: str | os.PathLike) -> str | None:
    """`pipe:[inode]` for an anonymous pipe (`/dev/stdin`, `<(zcat ...)`), which yields its text
    once; None for anything else (a file, or a named FIFO, which a new writer can fill again)."""
    with contextlib.suppress(OSError):
        if stat.S_ISFIFO(os.stat(path).st_mode):
            name = os.path.basename(os.path.realpath(path))
            return name if name.startswith("pipe:[") else None
    return None


def is_pipe(path: str | os.PathLike) -> bool:
    """Whether `path` is a pipe or FIFO (its text can be read once)."""
    with contextlib.suppress(OSError):
        return stat.S_ISFIFO(os.stat(path).st_mode)
    return False


class _Bounded(_Metered):
    """The bytes of a regular file or a pipe; a pipe silent for PIPE_IDLE seconds is an error."""

    def __init__(self, path: str, kind: str, budget: float, factor: float) -> None:
        super().__init__(path, budget, factor)
        self.pipe = kind == "pipe"
        self.once = anonymous_pipe(path) if self.pipe else None
        if self.once in _READ_PIPES:
            raise InputFileError(f"{path}: is a pipe, already read: a pipe's text can be read only once "
                                 "and it is needed again here; give a file (for example zcat X.gz > FILE)")
        try:
            self.fd = os.open(path, os.O_RDONLY | (os.O_NONBLOCK if self.pipe else 0))
        except OSError as exc:
            raise InputFileError(f"{path}: cannot read ({exc.strerror or exc})") from None

    def readinto(self, buffer) -> int:
        view = memoryview(buffer).cast("B")
        if self.once is not None:
            _READ_PIPES.add(self.once)
        return self._counted(self._read_pipe(view) if self.pipe else os.readv(self.fd, [view]))

    def _read_pipe(self, view: memoryview) -> int:
        # Linux: select waits while no writer has opened the FIFO yet, and reports end of input
        # once the last writer has closed it
        while True:
            ready, _, _ = select.select([self.fd], [], [], PIPE_IDLE)
            if not ready:
                raise InputFileError(f"{self.path}: no data from the pipe for {PIPE_IDLE:g} s "
                                     "(no writer, or a stalled one)")
            try:
                return os.readv(self.fd, [view])
            except BlockingIOError:
                continue

    def close(self) -> None:
        if not self.closed:
            os.close(self.fd)
        super().close()


class _Gunzipped(_Metered):
    """The decompressed bytes of a gzip stream, counted (a small file can hold a huge text)."""

    def __init__(self, inner: IO[bytes], path: str, budget: float, factor: float) -> None:
        super().__init__(path, budget, factor)
        self.inner = gzip.GzipFile(fileobj=inner)

    def readinto(self, buffer) -> int:
        data = self.inner.read(len(buffer))
        memoryview(buffer).cast("B")[: len(data)] = data
        return self._counted(len(data))

    def close(self) -> None:
        self.inner.close()
        super().close()


def open_binary(path: str | os.PathLike, decompress: bool = False,
                factor: float = BYTES_PER_BYTE) -> IO[bytes]:
    """The bytes of a regular file or pipe, bounded (see the module notes); `decompress`: gunzip
    it when it starts with gzip's magic bytes (the bound then applies to the decompressed text)."""
    p = os.fspath(path)
    budget = _memory_budget(factor)
    raw = _Bounded(p, _kind(p), budget, factor)
    buffered = io.BufferedReader(raw, CHUNK)
    if decompress and buffered.peek(2)[:2] == b"\x1f\x8b":
        raw.budget = float("inf")
        return io.BufferedReader(_Gunzipped(buffered, p, budget, factor), CHUNK)
    return buffered


def _memory_budget(factor: float) -> float:
    """Bytes of text after which the memory check first runs."""
    total = limits.memory_bytes()
    return total / 2 / factor if total else float("inf")


# The first bytes of containers that are never text: a file starting so is named for what it is
# (decompress it, or read it by its format) rather than told to change its encoding.
CONTAINERS = (
    (b"\x1f\x8b", "gzip-compressed", "decompress it (zcat {p} > FILE) or pass it through a pipe "
                                     "(<(zcat {p}))"),
    (b"PK\x03\x04", "a zip archive (or a NumPy .npz)", "a .npz corpus or model is read by its format, "
                                                      "not as text; unzip other archives"),
    (b"PK\x05\x06", "an empty zip archive", "it holds no text"),
    (b"BZh", "bzip2-compressed", "decompress it (bzcat {p} > FILE)"),
    (b"\xfd7zXZ\x00", "xz-compressed", "decompress it (xzcat {p} > FILE)"),
    (b"\x28\xb5\x2f\xfd", "zstd-compressed", "decompress it (zstdcat {p} > FILE)"),
    (b"\x93NUMPY", "a NumPy .npy array", "read it as an array (a model's arrays), not as text"),
)


def check_container(path: str, head: bytes) -> None:
    """A one-line error when `head`, the first bytes of the file `path` read as text, is the magic
    number of a compressed file or an archive (bzip2 only with its block magic: 'BZh' can start
    text)."""
    for magic, what, advice in CONTAINERS:
        if head.startswith(magic) and (magic != b"BZh" or head[4:10] == b"1AY&SY"):
            raise InputFileError(f"{path}: is {what}, not text; {advice.format(p=path)}")


class _BadText(Exception):
    """Text that does not decode: the UnicodeError and the 1-based line that holds the bad byte."""

    def __init__(self, exc: UnicodeError, line: int) -> None:
        super().__init__(str(exc))
        self.exc, self.line = exc, line


def _decoded(fh: IO[bytes], path: str, encoding: str) -> Iterator[str]:
    """The text of `fh` decoded chunk by chunk, strictly; a decoding error is a `_BadText` naming
    the line of the bad byte (line ends counted in the text decoded before it), not the line the
    reader had reached (a text wrapper decodes ahead)."""
    check_container(path, fh.peek(16)[:16] if hasattr(fh, "peek") else b"")
    decoder = codecs.getincrementaldecoder(encoding)("strict")
    ends = 0
    while True:
        chunk = fh.read(CHUNK)
        try:
            text = decoder.decode(chunk, final=not chunk)
        except UnicodeDecodeError as exc:
            before = codecs.decode(exc.object[: exc.start], encoding, "replace") if exc.start else ""
            raise _BadText(exc, ends + before.count("\n") + 1) from None
        except UnicodeError as exc:  # utf-16/32 without a byte-order mark
            raise _BadText(exc, ends + 1) from None
        if text:
            ends += text.count("\n")
            yield text
        if not chunk:
            return


def read_lines(path: str | os.PathLike, encoding: str | None = None, decompress: bool = False,
               factor: float = BYTES_PER_BYTE) -> Iterator[tuple[int, str]]:
    """(line number, line) for every line of a text file, its line end kept as "\\n"; see the
    module notes for the bounds. Only LF (or CRLF) ends a line, as `wc -l` counts: a lone CR, like
    U+0085 and U+2028, stays inside its line (whitespace to the tokenizer), so line n is always the
    file's line n; a file of one line holding lone CRs (classic Mac OS line ends) is an error. A
    byte-order mark at the start of any line is dropped (files joined with cat). `encoding` None:
    UTF-8, the only encoding the file's format is read in (the advice on a decoding error is then
    to save it as UTF-8, not to give an encoding). Decoding and reading errors (at the line of the
    bad byte), NUL characters (UTF-16 read as something else) and compressed or archive files are
    one-line InputFileErrors."""
    p = os.fspath(path)
    option, encoding = encoding is not None, encoding or "utf-8-sig"
    lineno = 0
    pending = ""  # the start of a line not ended yet
    mac = False  # line 1 holds a lone CR
    try:
        with open_binary(p, decompress, factor) as fh:
            for text in _decoded(fh, p, encoding):
                if "\x00" in text:
                    raise _nul_in(p, lineno, pending, text, option, encoding)
                parts = text.split("\n")
                parts[0] = pending + parts[0]
                pending = parts.pop()
                _check_length(p, lineno + 1, parts[0] if parts else pending)
                for part in parts:  # only the first can be longer than a chunk
                    lineno += 1
                    if part.startswith("\ufeff"):
                        part = part[1:]
                    part = part[:-1] if part.endswith("\r") else part
                    mac = mac or (lineno == 1 and "\r" in part)
                    yield lineno, part + "\n"
            if pending:
                lineno += 1
                mac = mac or (lineno == 1 and "\r" in pending.rstrip("\r"))
                yield lineno, pending[1:] if pending.startswith("\ufeff") else pending
            if mac and lineno == 1:  # one line holding lone CRs: they were its line ends
                raise InputFileError(f"{p}: its lines end in lone carriage returns (CR, classic Mac OS), but "
                                     "only LF or CRLF ends a line; convert it (tr '\\r' '\\n')")
    except _BadText as bad:
        raise _not_text(p, bad.line, encoding, bad.exc, option) from None
    except (OSError, EOFError, zlib.error) as exc:
        raise InputFileError(f"{p}: cannot read ({getattr(exc, 'strerror', None) or exc})") from None


def _nul_in(path: str, lineno: int, pending: str, text: str, option: bool, encoding: str) -> InputFileError:
    """`_nul`'s error for the line of `text` (a chunk continuing line lineno + 1, which began with
    `pending`) that holds the first NUL."""
    at = text.index("\x00")
    start = text.rfind("\n", 0, at) + 1
    end = text.find("\n", at)
    line = (pending if start == 0 else "") + text[start : end if end >= 0 else len(text)]
    return _nul(f"{path}:{lineno + text.count(chr(10), 0, at) + 1}", line, option, encoding)


def _check_length(path: str, lineno: int, line: str) -> None:
    if len(line) > MAX_LINE:
        raise InputFileError(f"{path}:{lineno}: line longer than {MAX_LINE // 2**20} MiB "
                             "characters (is it one document per line?)")


def read_text(path: str | os.PathLike, encoding: str | None = None, factor: float = BYTES_PER_BYTE) -> str:
    """A whole text file, bounded and checked like `read_lines` (lines may be of any length up to
    the memory bound: JSON documents are often one line); line ends are kept as they are."""
    p = os.fspath(path)
    option, encoding = encoding is not None, encoding or "utf-8-sig"
    parts = []
    try:
        with open_binary(p, False, factor) as fh:
            for chunk in _decoded(fh, p, encoding):
                if "\x00" in chunk:
                    raise _nul(p, chunk, option, encoding)
                parts.append(chunk)
    except _BadText as bad:
        raise _not_text(p, bad.line, encoding, bad.exc, option, whole=True) from None
    except (OSError, EOFError) as exc:
        raise InputFileError(f"{p}: cannot read ({getattr(exc, 'strerror', None) or exc})") from None
    text = "".join(parts)
    return text[1:] if text.startswith("\ufeff") else text
