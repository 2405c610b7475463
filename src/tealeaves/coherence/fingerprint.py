"""What a coherence number depends on, and whether two numbers can be compared.

A `CoherenceResult` carries a `fingerprint`: the measure, the convention, how the reference was
cut into units (window, counting rule) and the topic segmented, epsilon and gamma, Palmetto's
minimum frequency, the options, the top-n, the policy for absent words, the reference (its name,
a content hash, documents and tokens) and its tokenizer. `comparable(a, b)` says whether two
numbers were computed alike and, if not, what differs.

The content hash is taken while the reference is counted, never by a second read: a text file's
or an iterable's documents as they stream past (`StreamHash`: each document's text, tokens joined
by one space for a token list, followed by a newline, UTF-8), a `Corpus` from its stored arrays
(`corpus_digest`: vocabulary, offsets, word ids). So the same text read twice hashes alike and a
changed byte does not; the same text given as a file and as a `Corpus` hashes differently
(`hash_of` says which). A reference index (.tlx) carries the hash its build took of its corpus
the same way (header `corpus.content`), so a number from an index and one from its text compare.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import MethodError

SEGMENTATION = {"one_pre": "one-preceding", "one_one": "one-one", "one_set": "one-set"}
# measure -> segmentation under the tealeaves and gensim conventions (Palmetto: palmetto.MEASURES)
CLASSIC_SEGMENTATION = {"umass": "one_pre", "uci": "one_one", "npmi": "one_one", "c_v": "one_set"}
COUNTING = {"exact": "exact sliding windows",  # a word is in a window if any copy is
            "gensim": "gensim sliding windows",  # gensim's accumulator (`counts._count_gensim`)
            "context": "context windows"}  # +-window around each occurrence (Palmetto's C_A)
# keys that make two numbers incomparable when they differ, in the order a difference is named
KEYS = ("measure", "convention", "counting", "window", "segmentation", "epsilon", "gamma",
        "min_frequency", "options", "topn", "absent", "reference.hash", "reference.documents",
        "reference.tokens", "tokenizer")
# the tealeaves convention's options and their defaults: a default given explicitly is the same number
DEFAULT_OPTIONS = {"umass": {"form": "gensim"}, "npmi": {"zero": "epsilon"}, "c_v": {"zero": "epsilon"}}
HASH_CHUNK = 1 << 22  # array elements hashed at a time


class StreamHash:
    """SHA-256 of documents as they stream past: a string as it is (its line ending included),
    a token list as its tokens joined by one space plus a newline."""

    def __init__(self) -> None:
        self._h = hashlib.sha256()

    def update(self, doc: Any) -> None:
        text = doc if isinstance(doc, str) else " ".join(map(str, doc)) + "\n"
        self._h.update(text.encode("utf-8", "surrogatepass"))

    def hexdigest(self) -> str:
        return "sha256:" + self._h.hexdigest()


def corpus_digest(corpus: Any) -> str:
    """SHA-256 of a Corpus's stored arrays: its vocabulary (one word a line), offsets and word ids
    (as little-endian int64, hashed in slices so no full copy is made)."""
    h = hashlib.sha256(b"tealeaves-corpus\n")
    for w in corpus.vocab if corpus.vocab is not None else ():
        h.update(str(w).encode("utf-8", "surrogatepass") + b"\n")
    for arr in (np.asarray(corpus.offsets), np.asarray(corpus.words)):
        h.update(f"{arr.size}\n".encode())
        for lo in range(0, arr.size, HASH_CHUNK):
            h.update(np.ascontiguousarray(arr[lo : lo + HASH_CHUNK], dtype="<i8").tobytes())
    return "sha256:" + h.hexdigest()


def _stored(reference: Any, counts: Any = None) -> bool:
    """Whether the reference is a Corpus (or a bundled name for one, or an index of one, as its
    `counts.digest_of` says): tokens as stored, arrays hashed."""
    from ..corpus import Corpus
    from ..datasets import bundled_corpus

    if getattr(counts, "digest_of", ""):
        return counts.digest_of == "arrays"
    return isinstance(reference, Corpus) or bundled_corpus(reference) is not None


def reference_name(reference: Any) -> str:
    """The reference as a user named it: a path or bundled name, else its kind."""
    if isinstance(reference, str | os.PathLike):
        return os.fspath(reference)
    return f"<{type(reference).__name__}>"


def tokenizer(reference: Any, counts: Any = None) -> str:
    """How the reference's text became tokens."""
    if _stored(reference, counts):
        return "as stored in the corpus"
    if isinstance(reference, str | os.PathLike):
        return "whitespace (str.split)"
    return "given as tokens (strings split on whitespace)"


def describe_reference(reference: Any, counts: Any) -> dict[str, Any]:
    """The reference part of a fingerprint: name, hash (and what was hashed), documents, tokens."""
    digest = getattr(counts, "digest", "") or None
    kind = "arrays" if _stored(reference, counts) else "text"
    return {"name": reference_name(reference), "hash": digest, "hash_of": kind if digest else None,
            "documents": int(counts.documents), "empty_documents": int(getattr(counts, "empty", 0)),
            "tokens": int(counts.tokens)}


def fingerprint_of(measure: str, convention: str, window: int | None, rule: str, topn: int,
                   absent: str, options: Mapping[str, Any], reference: Any, counts: Any,
                   palmetto: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Everything a coherence number depends on (see the module docstring). `palmetto`: the
    measure's segmentation, epsilon, gamma and minimum frequency under Palmetto's convention."""
    if palmetto is not None:
        seg, eps, gamma, minimum = (palmetto["segmentation"], palmetto["epsilon"], palmetto["gamma"],
                                    palmetto["min_frequency"])
    else:
        seg, eps = CLASSIC_SEGMENTATION[measure], 1e-12
        gamma, minimum = (1.0 if measure == "c_v" else None), None
    if convention == "tealeaves":
        options = {**DEFAULT_OPTIONS.get(measure, {}), **options}
    if options.get("form") == "mimno":
        eps = None  # Mimno's form adds 1 to the joint count instead
    return {"measure": measure, "convention": convention,
            "counting": "boolean documents" if window is None else COUNTING[rule],
            "window": window, "segmentation": SEGMENTATION[seg], "epsilon": eps, "gamma": gamma,
            "min_frequency": minimum, "options": dict(sorted(options.items())), "topn": topn,
            "absent": absent, "reference": describe_reference(reference, counts),
            "tokenizer": tokenizer(reference, counts)}


def _get(fp: Mapping[str, Any], key: str) -> Any:
    for part in key.split("."):
        fp = fp.get(part) if isinstance(fp, Mapping) else None
    return fp


def _fp(x: Any) -> Mapping[str, Any]:
    fp = x.get("fingerprint") if isinstance(x, Mapping) else getattr(x, "fingerprint", None)
    if not isinstance(fp, Mapping):
        raise MethodError(f"comparable needs coherence results or their JSON (with a 'fingerprint'), got "
                          f"{type(x).__name__}")
    return fp


def _show(v: Any) -> str:
    if isinstance(v, str) and v.startswith("sha256:"):
        return v[7:19]
    return "none" if v is None else str(v)


@dataclass(frozen=True)
class Comparison:
    """Whether two coherence numbers can be compared; `reason` names what differs (one line).
    True in a boolean context when they can."""

    ok: bool
    reason: str
    differences: tuple[str, ...] = ()

    def __bool__(self) -> bool:
        return self.ok

    def __str__(self) -> str:
        return self.reason


def comparable(a: Any, b: Any) -> Comparison:
    """Can coherence result `a` be compared with `b` (results or their JSON dicts)? Not when any
    fingerprint key differs, or when either reference has no hash."""
    fa, fb = _fp(a), _fp(b)
    diffs = [f"{k} {_show(_get(fa, k))} vs {_show(_get(fb, k))}" for k in KEYS if _get(fa, k) != _get(fb, k)]
    if not diffs and _get(fa, "reference.hash") is None:
        diffs = ["the reference has no content hash, so it cannot be told the same"]
    if diffs:
        return Comparison(False, "not comparable: " + "; ".join(diffs), tuple(diffs))
    return Comparison(True, "comparable: same measure, convention, counting, top-n, policy and reference")


def _window(fp: Mapping[str, Any]) -> str:
    if fp["window"] is None:
        return "documents"
    return f"±{fp['window']}" if fp["counting"] == COUNTING["context"] else str(fp["window"])


def line(fps: Sequence[Mapping[str, Any]]) -> str:
    """One line that says how a table of coherence numbers (one fingerprint per measure) was made."""
    f0 = fps[0]
    ref = f0["reference"]
    per = ", ".join(f"{f['measure']} {_window(f)} {f['segmentation']} absent={f['absent']}" for f in fps)
    extras = []
    eps = sorted({f["epsilon"] for f in fps if f["epsilon"] is not None})
    if eps:
        extras.append("ε " + "/".join(f"{e:g}" for e in eps))
    if any(f["gamma"] is not None for f in fps):
        extras.append(f"γ {next(f['gamma'] for f in fps if f['gamma'] is not None):g}")
    mins = [f"{f['measure']} {f['min_frequency']}" for f in fps if f["min_frequency"] is not None]
    if mins:
        extras.append("min frequency " + ", ".join(mins))
    opts = sorted({f"{k}={v}" for f in fps for k, v in f["options"].items()})
    digest = ref["hash"][:19] if ref["hash"] else "no content hash"
    how = ", ".join(extras + opts)
    empty = (f"{ref['empty_documents']:,} of them empty (each one window or document), "
             if ref.get("empty_documents") else "")
    return (f"fingerprint: {f0['convention']} convention, top {f0['topn']}; {per}; {how}; "
            f"reference {ref['name']} {digest} ({ref['documents']:,} documents, {empty}{ref['tokens']:,} "
            f"tokens, tokens {f0['tokenizer']})").replace("; ; ", "; ")
