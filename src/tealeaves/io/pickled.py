"""Pickle-based model files: gensim's `LdaModel.save` (a pickle plus sibling files) and pickled or
joblib-dumped model objects (scikit-learn's only way to save a model).

Unpickling runs code named in the file, so a crafted "model" can do anything the user can.
These files are loaded only with `allow_pickle=True` (CLI `--allow-pickle`), never because a
file looks like one; the refusal says so in one line. Formats that are data (our `.npz`, MALLET's
text files, tomotopy's binary format read in a child process) need no consent."""

from __future__ import annotations

import os
import pickle
from collections.abc import Callable
from typing import Any

from ..errors import InputFileError, MethodError
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
        raise InputFileError(f"{path}: no such file") from None
    except Exception as exc:  # unpickling raises anything the file's code raises
        raise InputFileError(f"{path}: cannot unpickle it ({type(exc).__name__}: {exc})") from None
    try:
        return from_object(obj)
    except MethodError as exc:
        raise MethodError(f"{path}: {exc}") from None


def gensim_sibling(path: str) -> bool:
    """gensim's `save` writes FILE and, for an LdaModel, FILE.state."""
    return os.path.exists(path + ".state")
