"""The model zoo's formats: detection and loading for `load_topics` (tomotopy's other models,
BERTopic's directory and pickle, OCTIS's model output), each returning `Topics`.

Formats (`--model-format`): tomotopy-hdp, tomotopy-ctm, tomotopy-dmr, tomotopy-pa, tomotopy-llda,
tomotopy-plda (`tomotopy_zoo`), bertopic (a saved directory), bertopic-pickle (read as data by
`safepickle`; `bertopic`), octis (`octis`: an .npz whose members are all OCTIS's keys)."""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from ..corpus import read_vocab_file
from ..errors import InputFileError, MethodError
from ..files.textfile import check_regular
from ..topics import Topics
from . import tomotopy_zoo
from .bertopic import is_bertopic_dir, load_bertopic_dir, load_bertopic_pickle, pickled_class
from .native import load_timeout
from .octis import is_octis_npz, load_octis
from .pickled import looks_like_pickle

ZOO_FORMATS = (*tomotopy_zoo.FORMATS, "bertopic", "bertopic-pickle", "octis")


def zoo_detect(path: str | os.PathLike) -> str | None:
    """The zoo format of `path` where its name and first bytes tell it unambiguously, else None
    (then the other readers' detection applies: plain tomotopy LDA is "tomotopy"). A pickle is
    "bertopic-pickle" when the class it names first (read from its opcodes, nothing run) is
    BERTopic's (read as data, `safepickle`: no consent needed). A file of a
    tomotopy model tealeaves does not read (SLDA, HLDA, ...) raises, naming it; so does anything
    but a regular file or a directory (a pipe, a device, a broken symbolic link). An HPAModel file
    cannot be told from a PAModel file: both are "tomotopy-pa"."""
    p = os.fspath(path)
    if os.path.isdir(p):
        return "bertopic" if is_bertopic_dir(p) else None
    if not os.path.lexists(p):
        return None  # the caller's checks name a missing file
    check_regular(p)  # a pipe would block the read below; a device may never end
    try:
        with open(p, "rb") as fh:
            head = fh.read(4096)
    except OSError:
        return None  # the caller's checks name a missing or unreadable file
    if head.startswith(b"PK"):
        return "octis" if is_octis_npz(p) else None
    if looks_like_pickle(head):
        return "bertopic-pickle" if (pickled_class(head) or "").startswith("bertopic.") else None
    return tomotopy_zoo.sniff(p, head)


def zoo_load(path: str | os.PathLike, fmt: str, allow_pickle: bool = False, timeout: float | None = None,
             metadata: str | None = None, vocab: str | os.PathLike | Sequence[str] | None = None,
             **kw: Any) -> Topics:
    """The model at `path` in zoo format `fmt` as `Topics`. `allow_pickle`: accepted, not needed
    (bertopic-pickle is read as data); `timeout`: tomotopy's loader's time limit; `metadata`: the
    DMR metadata value whose prior scores held-out documents; `vocab`: for OCTIS, the words of its matrix's
    columns (a file, one word a line, or a list)."""
    if kw:
        raise MethodError(f"{os.fspath(path)}: format {fmt} takes no {', '.join(sorted(kw))}")
    if timeout is not None:
        load_timeout(timeout)  # the options first, then the file
    if fmt not in ZOO_FORMATS:
        raise MethodError(f"unknown model-zoo format {fmt!r} (known: {', '.join(ZOO_FORMATS)})")
    if metadata is not None and fmt != "tomotopy-dmr":
        raise MethodError(f"{os.fspath(path)}: metadata= (--dmr-metadata) is for tomotopy's DMR models, "
                          f"not {fmt}")
    if vocab is not None and fmt != "octis":
        raise MethodError(f"{os.fspath(path)}: format {fmt} carries its own vocabulary; vocab= is for octis")
    if fmt == "octis":
        named = isinstance(vocab, str | os.PathLike)
        words = read_vocab_file(vocab) if named else vocab
        return load_octis(path, words, os.fspath(vocab) if named else None)
    if fmt in tomotopy_zoo.FORMATS:
        return tomotopy_zoo.load_zoo(path, fmt, timeout=timeout, metadata=metadata)
    if fmt == "bertopic":
        return load_bertopic_dir(path)
    if os.path.isdir(path):
        raise InputFileError(f"{os.fspath(path)}: is a directory; format {fmt} is a file")
    return load_bertopic_pickle(path, allow_pickle)


__all__ = ["ZOO_FORMATS", "zoo_detect", "zoo_load"]
