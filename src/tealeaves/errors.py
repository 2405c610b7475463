"""Exceptions. Every error a user can cause is a `TealeavesError` with a one-line message
that names what is wrong and where; the CLI prints it and exits with status 2."""

import struct
import tokenize
import zipfile
import zlib
from collections.abc import Sequence

# What a damaged .npz or .npy file can raise while numpy reads it: a truncated or mutated zip
# archive (bad headers, bad deflate data, an unknown compression method), a bad array header, a
# shape too large to allocate, a header numpy's parser (tokenize, ast) rejects. Readers turn these
# into one-line InputFileErrors.
ARCHIVE_ERRORS = (OSError, EOFError, ValueError, KeyError, TypeError, RecursionError, MemoryError,
                  OverflowError, NotImplementedError, SyntaxError, zipfile.BadZipFile, zlib.error,
                  struct.error, tokenize.TokenError)


class TealeavesError(ValueError):
    """Base class of all input errors raised by tealeaves. `options` lists the parameters the
    message names, as the Python API spells them (`high_top`); the CLI shows each as its flag
    (`--high-top`, `cli.message`)."""

    def __init__(self, *args: object, options: Sequence[str] = ()) -> None:
        super().__init__(*args)
        self.options = tuple(options)


class InvalidModelError(TealeavesError):
    """A topic model's parameters are malformed (shapes, negative/NaN values, bad alpha)."""


class InvalidCorpusError(TealeavesError):
    """A corpus or document is malformed or does not fit the model."""


class InputFileError(TealeavesError):
    """A file cannot be read, is truncated, or is not in the expected format."""


class MethodError(TealeavesError):
    """Unknown method name, unknown parameter or invalid parameter value."""


class TooLargeError(TealeavesError):
    """An exact computation was asked for a problem past its size limit."""


class Interrupted(KeyboardInterrupt):
    """Ctrl-C during a run that keeps its finished work (`files.kept`, select's `out`): the message
    says what was kept and where (`folder`); the same call or command with that folder (the
    command's option `flag`) resumes it."""

    def __init__(self, message: str, folder: str, flag: str = "--keep") -> None:
        super().__init__(message)
        self.folder, self.flag = folder, flag


SHOWN_CHARS = 40  # input text longer than this is cut in messages


def shorten(text: object, limit: int = SHOWN_CHARS) -> str:
    """Text from the input as a message may show it: at most `limit` characters, then an
    ellipsis and the full length (a 200 MB token must not be printed whole)."""
    text = str(text)
    return text if len(text) <= limit else f"{text[:limit]}… ({len(text):,} characters)"


def shown(text: object, limit: int = SHOWN_CHARS) -> str:
    """`shorten`, quoted like `repr` (for a word, token or label named in an error). A value that is
    not a string or a number is named by its type (`described`): a file's nested list may be a
    "billion laughs" or 200,000 levels deep, whose str() never ends or overflows the stack."""
    if not isinstance(text, str):
        if not _flat(text):
            return described(text)
        text = str(text)
    return repr(text) if len(text) <= limit else f"{text[:limit]!r}… ({len(text):,} characters)"


def described(value: object, limit: int = SHOWN_CHARS) -> str:
    """`value` of unchecked type for an error message: a number's repr (a huge integer by its bits),
    None or a boolean as such, anything else only as "a <type>" (never its str or repr, see `shown`)."""
    import numbers

    if isinstance(value, int) and value.bit_length() > 10_000:
        return f"an integer of {value.bit_length():,} bits"
    scalar = type(value).__module__ == "numpy" and getattr(value, "ndim", None) == 0
    if value is None or scalar or isinstance(value, numbers.Number) or _flat(value):
        text = repr(value)
        return text if len(text) <= limit else f"{text[:limit]}…"
    return f"a {type(value).__name__}"


def _flat(value: object) -> bool:
    """A value whose str() is short and cheap: a number, None, or a list or tuple of at most 16
    numbers and short strings (a shape, a pair)."""
    import numbers

    def small(x: object) -> bool:
        if isinstance(x, int) and not isinstance(x, bool):
            return x.bit_length() <= 10_000  # str() of a larger one is slow, then refused
        return x is None or isinstance(x, numbers.Number) or (isinstance(x, str) and len(x) <= 80)

    if isinstance(value, list | tuple):
        return len(value) <= 16 and all(small(x) for x in value)
    return small(value) and not isinstance(value, str)


class BadValueError(InputFileError, MethodError):
    """A value in a file or a record is not of its field's type or range (a choice that is not a
    whole number, a boolean that is not true or false, a NaN proportion)."""


# The bundled names (`tealeaves.datasets` resolves them; here so that every error can name them).
SOTU_MODELS = ("sotu-20-asym", "sotu-20-sym", "sotu-50-asym")
SOTU_CORPORA = ("sotu:train", "sotu:heldout")
JUDGMENT_STUDIES = {"hoyle2021": "hoyle2021.json.gz", "proxann2025:bills": "proxann2025_bills.json.gz"}


def no_such_file(path: object, text: str = "no such file") -> InputFileError:
    """The one-line error for a missing file; a `sotu:` name given where a file is expected says
    which bundled names work, and where (as models, or as corpora)."""
    path = str(path)
    hint = ""
    if path.startswith("sotu:"):
        hint = (f"; bundled names work only as a model ({', '.join('sotu:' + m for m in SOTU_MODELS)}) "
                f"or as a corpus ({', '.join(SOTU_CORPORA)}), not here")
    return InputFileError(f"{path}: {text}{hint}")
