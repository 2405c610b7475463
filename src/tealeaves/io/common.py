"""What every reader shares: the one-line error for a missing optional library, the refusal of an
alpha given for a model that holds its own, and building the `TopicModel` (a single alpha value
spread over the topics; a validation error names the source)."""

from __future__ import annotations

import importlib
from collections.abc import Iterator, Sequence
from typing import Any, BinaryIO

import numpy as np

from ..errors import BadValueError, InvalidModelError, MethodError, shown
from ..files.records import strict_int
from ..model import CheckedPhi, TopicModel, check_number_kind, fill_phi, phi_layout, row_blocks


def require(module: str, extra: str) -> None:
    try:
        importlib.import_module(module)
    except ImportError:
        raise MethodError(
            f'this needs {module}, which is not installed: pip install "tealeaves[{extra}]"'
        ) from None


def refuse_alpha(alpha: Any, what: str) -> None:
    """Refuse `alpha` for a model that carries its own (applying it silently, or ignoring it
    silently, would both score something other than what was asked)."""
    if alpha is not None:
        raise MethodError(f"{what} has its own alpha; alpha= (CLI: --alpha) is only for formats without "
                          "one (MALLET topic-word weights, pyLDAvis JSON, plain arrays without alpha)")


def words_by_column(vocab: dict, where: str, field: str) -> tuple[str, ...]:
    """A vectorizer's words in column order from its {word: column} map (scikit-learn's
    `vocabulary_`, BERTopic's saved vocab): every column 0..V-1 exactly once, each a word. Two words
    on one column leave another column without a word: every later word would be off by one."""
    words: list[str | None] = [None] * len(vocab)
    for w, i in vocab.items():
        try:
            column = strict_int(i, where, "a column", 0, len(vocab) - 1, text=False)
        except BadValueError:
            column = None
        if column is None or words[column] is not None or not isinstance(w, str):
            raise InvalidModelError(f"{where}: {field} gives {shown(w)} column {shown(i)}; "
                                    f"the columns must be 0..{len(vocab) - 1}, each once, of words")
        words[column] = w
    return tuple(words)  # type: ignore[arg-type]


def build_model(
    phi: Any,
    alpha: Any,
    vocab: Sequence[str] | None,
    beta: float | None,
    name: str,
    source: str | None,
    metadata: dict[str, Any],
    normalize: bool = True,
    copy: bool = True,
) -> TopicModel:
    """A validated model from a reader's arrays. `alpha` may be one number for every topic.
    `normalize` rescales rows that do not sum to one (libraries store float32 or unnormalised
    weights); errors are prefixed with `source` (or `name`). `copy=False`: a reader's own phi
    (float64, `phi_layout`) is used in place, or a `CheckedPhi` as it is."""
    shape = phi.array.shape if isinstance(phi, CheckedPhi) else np.shape(phi)
    try:
        alpha = np.asarray(alpha, dtype=np.float64).reshape(-1)
    except (TypeError, ValueError):
        raise InvalidModelError(f"{source or name}: alpha is not numeric") from None
    if alpha.size == 1 and len(shape) == 2:
        alpha = np.full(shape[0], float(alpha[0]))
    try:
        return TopicModel(phi, alpha, vocab=vocab, beta=beta, name=name, metadata=metadata,
                          normalize=normalize, copy=copy)
    except InvalidModelError as exc:
        raise InvalidModelError(f"{source or name}: {exc}") from None


def read_phi(fh: BinaryIO, normalize: bool) -> CheckedPhi:
    """phi (T x V) from the .npy stream `fh` (a file or a zip member), read a block of rows at a
    time into the TopicModel layout and checked on the way (`fill_phi`): the memory used beyond
    phi is one block, whatever the file's dtype or order. A short or odd file raises ValueError
    (the caller names the file); a bad value, InvalidModelError."""
    fmt = np.lib.format
    version = fmt.read_magic(fh)
    read_header = fmt.read_array_header_1_0 if version == (1, 0) else fmt.read_array_header_2_0
    shape, fortran, dtype = read_header(fh)
    if len(shape) != 2 or shape[0] < 1 or shape[1] < 1:
        raise InvalidModelError(f"phi must be a T x V matrix, got shape {tuple(shape)}")
    check_number_kind(dtype.kind, "phi")
    if dtype.hasobject or dtype.kind not in "iuf":
        raise InvalidModelError(f"phi is not a numeric matrix (its type is {dtype})")
    T, V = (int(n) for n in shape)
    dest = phi_layout(T, V)
    if fortran:  # the bytes are phi.T in C order: dest's own memory, read a block of words at a time
        for words in row_blocks(V, T):
            dest.T[words] = _read_rows(fh, words.stop - words.start, T, dtype)
        return CheckedPhi(fill_phi(dest, (dest[rows] for rows in row_blocks(T, V)), normalize))
    blocks: Iterator[np.ndarray] = (_read_rows(fh, r.stop - r.start, V, dtype) for r in row_blocks(T, V))
    return CheckedPhi(fill_phi(dest, blocks, normalize))


def _read_rows(fh: BinaryIO, rows: int, cols: int, dtype: np.dtype) -> np.ndarray:
    """The next `rows` x `cols` values of the stream, read in pieces of at most 1 MiB (a zip
    member's `read(n)` builds its result by concatenation: large reads cost twice their size)."""
    want = rows * cols * dtype.itemsize
    data = bytearray(want)
    got = 0
    while got < want:
        piece = fh.read(min(want - got, 2**20))
        if not piece:
            raise ValueError(f"the array data ends {want - got:,} bytes early (truncated)")
        data[got:got + len(piece)] = piece
        got += len(piece)
    return np.frombuffer(data, dtype=dtype).reshape(rows, cols)
