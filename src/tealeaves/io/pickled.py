"""Pickle-based model files: gensim's `LdaModel.save` (a pickle plus sibling files) and pickled or
joblib-dumped model objects (scikit-learn's only way to save a model).

Unpickling runs code named in the file, so a crafted "model" can do anything the user can.
These files are loaded only with `allow_pickle=True` (CLI `--allow-pickle`), never because a
file looks like one; the refusal says so in one line. Formats that are data (our `.npz`, MALLET's
text files, tomotopy's binary format read in a child process) need no consent."""

from __future__ import annotations

import os
import pickle
import pickletools
from collections.abc import Callable
from typing import Any

from ..errors import InputFileError, MethodError, no_such_file
from ..model import TopicModel

# protocol 2+ pickles start with PROTO (0x80) and the protocol number
PICKLE_PROTOCOLS = tuple(bytes([0x80, p]) for p in range(2, 6))


def looks_like_pickle(head: bytes) -> bool:
    return head[:2] in PICKLE_PROTOCOLS


def refuse(path: str, what: str) -> MethodError:
    """The one-line refusal for a pickle-based file loaded without consent."""
    return MethodError(
        f"{path}: {what} is a Python pickle (gensim's save files and scikit-learn models are), and "
        "unpickling runs code stored in the file; load it only if you trust it, with "
        "allow_pickle=True (CLI: --allow-pickle; tealeaves convert makes a safe .npz of it)"
    )


def load_pickled_object(path: str, from_object: Callable[[Any], TopicModel]) -> TopicModel:
    """A model from a pickle or joblib file of a model object (consent already given)."""
    try:
        import joblib  # scikit-learn's recommended dump format; reads plain pickles too

        loader: Callable[[str], Any] = joblib.load
    except ImportError:
        def loader(p: str) -> Any:
            with open(p, "rb") as fh:
                return pickle.load(fh)

    try:
        obj = loader(path)
    except FileNotFoundError:
        raise no_such_file(path) from None
    except Exception as exc:  # unpickling raises anything the file's code raises
        raise InputFileError(f"{path}: cannot unpickle it ({type(exc).__name__}: {exc})") from None
    try:
        return from_object(obj)
    except MethodError as exc:
        msg = str(exc)
        raise MethodError(msg if msg.startswith(f"{path}: ") else f"{path}: {msg}") from None


def gensim_sibling(path: str) -> bool:
    """gensim's `save` writes FILE and, for an LdaModel, FILE.state."""
    return os.path.exists(path + ".state")


STRING_OPS = ("SHORT_BINUNICODE", "BINUNICODE", "BINUNICODE8", "UNICODE", "SHORT_BINSTRING", "BINSTRING",
              "STRING")


def pickle_class(path: str, max_ops: int = 64) -> str | None:
    """The class of the object a pickle holds ("gensim.models.lsimodel.LsiModel"), read from its
    first opcodes without unpickling anything (`pickletools.genops` only parses); None when the
    file does not start with a class reference."""
    strings: list[str] = []
    try:
        with open(path, "rb") as fh:
            for i, (op, arg, _) in enumerate(pickletools.genops(fh)):
                if op.name in STRING_OPS:
                    strings.append(str(arg))
                elif op.name == "STACK_GLOBAL" and len(strings) >= 2:
                    return f"{strings[-2]}.{strings[-1]}"
                elif op.name in ("GLOBAL", "INST"):
                    return str(arg).replace(" ", ".")
                if i >= max_ops:
                    return None
    except Exception:  # a damaged pickle: genops raises ValueError, EOFError, struct.error, ...
        return None
    return None


LIBRARIES = {"gensim": "gensim", "sklearn": "scikit-learn", "tomotopy": "tomotopy", "bertopic": "BERTopic",
             "octis": "OCTIS", "numpy": "NumPy", "pandas": "pandas", "torch": "PyTorch"}


def library_of(cls: str | None) -> str | None:
    """The library a pickled class comes from ("scikit-learn"), if we know it."""
    if not cls:
        return None
    return LIBRARIES.get(cls.split(".")[0], cls.split(".")[0])


def describe_pickle(cls: str | None) -> str:
    """What a pickle holds, in words: "a pickled scikit-learn NMF (sklearn.decomposition._nmf.NMF)"."""
    if not cls:
        return "a Python pickle"
    return f"a pickled {library_of(cls)} {cls.rsplit('.', 1)[-1]} ({cls})"
