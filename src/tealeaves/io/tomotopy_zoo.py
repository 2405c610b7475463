"""tomotopy's other models, as `Topics`: HDP, CTM, DMR, PA, labelled and partially labelled LDA.

What each gives (topic-word rows are tomotopy's `get_topic_word_dist`, distributions over
`used_vocabs`; `doc_topic` the training documents' proportions when the file keeps them):

- `tomotopy-hdp` (HDPModel): the live topics only (`is_live_topic`), as distributions;
  `topic_weights` the number of words assigned to each (`get_count_by_topics`: counts, not a
  distribution). Its prior, a hierarchical Dirichlet process (alpha, gamma, in `metadata`), is not a
  finite Dirichlet over the live topics: it is named (`topics.hdp_prior`, which says why no likelihood
  is claimed for it) and no likelihood is claimed.
- `tomotopy-ctm` (CTModel): logistic-normal prior, `mean` = `prior_mean` (K) and `cov` =
  `prior_cov` (K x K) of η with θ = softmax(η); mixture decoder.
- `tomotopy-dmr` (DMRModel): its Dirichlet prior depends on the document's metadata
  (`get_topic_prior`), so there is none unless `metadata=` names the value to score held-out
  documents under; then alpha is that value's prior and the model is LDA. Every value's prior
  is in `metadata["prior_by_metadata"]`.
- `tomotopy-pa` (PAModel): the k2 sub-topics (the ones with word distributions); the super-topics'
  alpha, sub-alpha and sub-topic mixtures in `metadata`; no single Dirichlet over the sub-topics,
  so no prior.
- `tomotopy-llda`, `tomotopy-plda` (LLDAModel, PLDAModel): topics named by their labels
  (`metadata["topic_names"]`; PLDA's label `l` owns topics l*n .. l*n+n-1, its latent topics come
  last). A document without labels may use every topic (tomotopy sets its label mask to ones), so
  for held-out documents the model is LDA with the model's alpha.

tomotopy's file starts with a 4-byte model id that several classes share ("LDA" for LDA, HDP, PA,
HPA and MGLDA; "DMR" for DMR and GDMR). The file also holds the constructor's arguments as a
pickle: `init_params` reads them with an unpickler that resolves no globals (so it runs nothing)
and tells the classes apart. The model itself is loaded in a child process (`native`) with the
class's `_load`, which does not unpickle."""

from __future__ import annotations

import io
import os
import pickle
import struct
from dataclasses import replace
from typing import Any

import numpy as np

from ..errors import InputFileError, InvalidModelError, MethodError, shown
from ..files.textfile import check_regular
from ..topics import DMR_PRIOR, PA_PRIOR, Topics, hdp_prior
from .common import build_model, require
from .native import load_isolated

FORMATS = {"tomotopy-hdp": "HDPModel", "tomotopy-ctm": "CTModel", "tomotopy-dmr": "DMRModel",
           "tomotopy-pa": "PAModel", "tomotopy-llda": "LLDAModel", "tomotopy-plda": "PLDAModel"}
# what a file read as each format may be: HPAModel files store PAModel's id and arguments
NAMES = {**FORMATS, "tomotopy-pa": "PAModel or HPAModel"}
TERM_WEIGHTS = (b"one\x00", b"idf\x00", b"pmi\x00")
# model ids tomotopy writes that name one class; "LDA" and "DMR" are told apart by init_params
UNIQUE_IDS = {b"CTM\x00": "tomotopy-ctm", b"LLDA": "tomotopy-llda", b"PLDA": "tomotopy-plda"}
UNSUPPORTED_IDS = {b"hLDA": "HLDAModel", b"SLDA": "SLDAModel", b"DTM\x00": "DTModel", b"PTM\x00": "PTModel"}
MAX_BLOCKS = 64  # the init-params block is the sixth in every file tomotopy 0.14 writes
MAX_PICKLE = 1 << 20
TAIL = 1 << 20  # bytes at the end of the file searched for the last tagged block
READS = "tomotopy's LDA, HDP, CTM, DMR, PA, LLDA and PLDA models"


def first_block(head: bytes) -> int | None:
    """Where tomotopy's first tagged block starts (after the model id and the term weighting), or
    None if `head` is not the start of tomotopy's tagged format."""
    at = head.find(b"TPTK", 0, 16)
    if at < 8 or not any(tw in head[4:at] for tw in TERM_WEIGHTS):
        return None
    return at


def term_weighting(path: str) -> str | None:
    """The term weighting a tomotopy file records ("one", "idf" or "pmi"; after the model id),
    None when it cannot be read."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(64)
    except OSError:
        return None
    at = first_block(head)
    found = [tw for tw in TERM_WEIGHTS if at is not None and tw in head[4:at]]
    return found[0].rstrip(b"\x00").decode() if found else None


def weighting_metadata(tw: str | None) -> dict[str, str]:
    """The metadata of a model trained with term weighting `tw`: the weighting, and for IDF or PMI
    the caveat the CLI prints (its likelihood is over weighted counts, not the raw counts scored)."""
    if tw is None:
        return {}
    out = {"term_weighting": tw}
    if tw != "one":
        out["caveat"] = (f"trained with term weighting {tw.upper()}: its topic-word distributions are over "
                         f"{tw.upper()}-weighted counts, so its held-out likelihood of raw counts is not "
                         "comparable with count-trained models")
    return out


def sniff(path: str, head: bytes) -> str | None:
    """The zoo format of a tomotopy file (None for plain LDA, which the `tomotopy` reader takes,
    and for files that are not tomotopy's). A tomotopy model tealeaves does not read raises."""
    start = first_block(head)
    if start is None:
        return None
    mid = head[:4]
    if mid in UNIQUE_IDS:
        return UNIQUE_IDS[mid]
    if mid in UNSUPPORTED_IDS:
        raise InputFileError(f"{path}: a tomotopy {UNSUPPORTED_IDS[mid]} file; tealeaves reads {READS}")
    if mid not in (b"LDA\x00", b"DMR\x00"):
        return None
    params = init_params(path, start)
    if params is None:  # no readable arguments: the model id alone decides
        return "tomotopy-dmr" if mid == b"DMR\x00" else None
    if mid == b"DMR\x00":
        if "degrees" in params:
            raise InputFileError(f"{path}: a tomotopy GDMRModel file; tealeaves reads {READS}")
        return "tomotopy-dmr"
    if "initial_k" in params:
        return "tomotopy-hdp"
    if "k1" in params:
        return "tomotopy-pa"
    if "k_g" in params:
        raise InputFileError(f"{path}: a tomotopy MGLDAModel file; tealeaves reads {READS}")
    return None


class _NoGlobals(pickle.Unpickler):
    """An unpickler that builds only plain values: any global (a class or function, the way a
    pickle runs code) is refused."""

    def find_class(self, module: str, name: str) -> Any:
        raise pickle.UnpicklingError(f"refused global {module}.{name}")


def _blocks(path: str, start: int, want: bytes) -> bytes | None:
    """The body (after its key) of the tagged block named `want` in tomotopy's file, or None.
    A tagged block: "TPTK", two u16, a u64 length L of the rest (from the length on), a u32 key
    length, a u32, the key (NUL-terminated), the body. At most MAX_BLOCKS are passed, each
    checked against the file's size; the body read is at most MAX_PICKLE bytes."""
    with open(path, "rb") as fh:
        size = os.fstat(fh.fileno()).st_size
        pos = start
        for _ in range(MAX_BLOCKS):
            fh.seek(pos)
            head = fh.read(24)
            if len(head) < 24 or head[:4] != b"TPTK":
                return None
            length, keylen = struct.unpack_from("<QI", head, 8)
            if length < 16 or pos + 8 + length > size or keylen > 256:
                return None
            if fh.read(keylen) == want:
                n = length - 16 - keylen
                return fh.read(n) if 0 <= n <= MAX_PICKLE else None
            pos += 8 + length
    return None


def check_complete(path: str) -> None:
    """Refuse, in milliseconds, a tomotopy file cut short where it shows (tomotopy's loader would
    loop on it until the time limit): a tagged block of the header, or the last tagged block in the
    file's final TAIL bytes (the documents are tagged blocks to the end of a full save), whose
    length passes the end of the file. A cut inside the untagged counts between them is left to
    the loader's time limit."""
    try:
        with open(path, "rb") as fh:
            size = os.fstat(fh.fileno()).st_size
            start = first_block(fh.read(64))
            if start is None:
                return
            pos, last = start, start
            for _ in range(MAX_BLOCKS):  # the header: tagged blocks one after another
                fh.seek(pos)
                head = fh.read(16)
                if head[:4] != b"TPTK":
                    break
                _past_end(path, pos, head, size)
                last, pos = pos, pos + 8 + struct.unpack_from("<Q", head, 8)[0]
            fh.seek(max(size - TAIL, last))
            tail_at = fh.tell()
            tail = fh.read()
    except OSError:
        return  # the loader names the problem
    at = tail.rfind(b"TPTK")
    if at >= 0 and tail_at + at > last:
        _past_end(path, tail_at + at, tail[at:at + 16], size)


def _past_end(path: str, pos: int, head: bytes, size: int) -> None:
    if len(head) < 16 or pos + 8 + struct.unpack_from("<Q", head, 8)[0] > size:
        raise InputFileError(f"{path}: truncated or damaged: the tagged block at byte {pos:,} ends past "
                             f"the file's {size:,} bytes (a tomotopy model file cut short)")


def init_params(path: str, start: int) -> dict[str, Any] | None:
    """The constructor's arguments tomotopy stored in the file (its "extra" tagged block: a u32
    length and a pickle), read without running code; None if there is no such block or it is
    not a plain dict."""
    try:
        body = _blocks(path, start, b"extra\x00")
        if body is None or len(body) < 4 or struct.unpack_from("<I", body)[0] != len(body) - 4:
            return None
        out = _NoGlobals(io.BytesIO(body[4:])).load()
    except (OSError, struct.error, pickle.UnpicklingError, EOFError, ValueError, TypeError, KeyError,
            IndexError, AttributeError, MemoryError, RecursionError):
        return None
    return out if isinstance(out, dict) else None


def stored_alphas(path: str, k: int) -> np.ndarray | None:
    """The alpha vector the file stores (its "alphas" block: u32 rows, u32 columns = 1, float32
    values), or None if it is absent or not k positive numbers. tomotopy 0.14's loader resets a
    labelled model's alphas to the initial alpha (its `alpha` after `load` is not the trained one,
    and its log-likelihood changes), so the trained values are taken from the file."""
    try:
        with open(path, "rb") as fh:
            start = first_block(fh.read(64))
        body = _blocks(path, start, b"alphas\x00") if start is not None else None
    except OSError:
        return None
    if body is None or len(body) != 8 + 4 * k or struct.unpack_from("<II", body) != (k, 1):
        return None
    alpha = np.frombuffer(body[8:], dtype="<f4").astype(np.float64)
    return alpha if np.isfinite(alpha).all() and (alpha > 0).all() else None


def load_zoo(path: str | os.PathLike, fmt: str, timeout: float | None = None,
             metadata: str | None = None) -> Topics:
    """The tomotopy model at `path` read as `fmt` (a key of `FORMATS`). `metadata`: for DMR,
    the metadata value whose prior scores held-out documents."""
    path = os.fspath(path)
    if fmt not in FORMATS:
        raise MethodError(f"unknown tomotopy format {fmt!r} (known: {', '.join(FORMATS)})")
    if metadata is not None and fmt != "tomotopy-dmr":
        raise MethodError(f"{path}: metadata= is for tomotopy's DMRModel, not {FORMATS[fmt]}")
    check_regular(path)
    require("tomotopy", "tomotopy")
    check_complete(path)
    cls = FORMATS[fmt]
    try:
        a = load_isolated("tomotopy_zoo", path, f"tomotopy ({cls})", timeout, args=(cls,))
    except InputFileError as exc:
        hint = " or an HPAModel file, which tealeaves does not read" if cls == "PAModel" else ""
        raise InputFileError(f"{exc} (read as a tomotopy {cls} file{hint}; --model-format {fmt})") from None
    if int(a.get("global_step", 1)) == 0:
        raise InvalidModelError(f"{path}: a tomotopy {NAMES[fmt]} never trained (global_step 0: saved before "
                                "train(), its topics are the random start)")
    vocab = tuple(str(w) for w in a["vocab"])
    phi = a["phi"].array
    name = os.path.basename(path)
    source = f"tomotopy {cls}"
    meta: dict[str, Any] = {"format": fmt, "source": path, "eta": float(a["eta"]),
                            "removed_top_words": [str(w) for w in a["removed_top_words"]],
                            **weighting_metadata(term_weighting(path))}
    common: dict[str, Any] = {"name": name, "source": source, "vocab": vocab, "weights": phi,
                              "weights_kind": "distributions", "doc_topic": a.get("doc_topic"),
                              "metadata": meta}
    if cls == "HDPModel":
        meta.update(hdp_alpha=float(a["hdp_alpha"]), gamma=float(a["gamma"]), num_tables=int(a["num_tables"]),
                    topic_ids=[int(k) for k in a["topic_ids"]],
                    topic_weights="words assigned to each live topic (counts)")
        ids = tuple(f"id {k}" for k in meta["topic_ids"])  # tomotopy's topic ids of the live topics
        note = hdp_prior(meta["hdp_alpha"], meta["gamma"],
                         f"its truncation to the {phi.shape[0]} live topics",
                         "the live topics' words and alpha")
        return Topics(topic_weights=a["topic_weights"], topic_names=ids, prior_note=note, **common)
    if cls == "CTModel":
        return Topics(prior="logistic-normal", mean=a["mean"], cov=a["cov"], decoder="mixture", **common)
    if cls == "PAModel":
        meta.update(super_alpha=a["super_alpha"], subalpha=a["subalpha"], super_sub=a["super_sub"],
                    topic_weights="words assigned to each sub-topic (counts)")
        return Topics(topic_weights=a["topic_weights"], prior_note=PA_PRIOR, **common)
    if cls == "DMRModel":
        values = [str(v) for v in a["metadata_values"]]
        priors = a["prior_by_metadata"]
        meta.update(metadata_values=values, prior_by_metadata=priors, sigma=float(a["sigma"]))
        if metadata is None:
            return Topics(prior_note=DMR_PRIOR, **common)
        if metadata not in values:
            raise MethodError(f"{path}: metadata {shown(metadata)} is not one of the model's "
                              f"{len(values)} values ({', '.join(shown(v) for v in values[:10])})")
        meta["scored_metadata"] = metadata
        alpha = priors[values.index(metadata)]
        return _as_lda(a, alpha, common, f"{source}, prior of metadata {shown(metadata)}")
    labels = [str(x) for x in a["labels"]]
    per, latent = int(a["topics_per_label"]), int(a["latent_topics"])
    meta["topic_names"] = _label_names(labels, per, latent, phi.shape[0], path)
    alpha = stored_alphas(path, phi.shape[0])
    if alpha is None:
        raise InvalidModelError(f"{path}: no trained alpha vector of {phi.shape[0]} positive numbers in the "
                                f"file (tomotopy's loader gives only the initial alpha for {cls})")
    return _as_lda(a, alpha, common, f"{source}, documents without labels")


def _label_names(labels: list[str], per: int, latent: int, k: int, path: str) -> list[str]:
    """Topic names: label `l`'s topics l*per .. l*per+per-1 (suffixed /j when per > 1), then the
    latent topics."""
    if len(labels) * per + latent != k:
        raise InvalidModelError(f"{path}: {len(labels)} labels x {per} topics + {latent} latent topics "
                                f"is not the model's {k} topics")
    names = [lab if per == 1 else f"{lab}/{j}" for lab in labels for j in range(per)]
    return names + [f"latent/{j}" for j in range(latent)]


def _as_lda(a: dict[str, Any], alpha: np.ndarray, common: dict[str, Any], source: str) -> Topics:
    """A Dirichlet-mixture model: `Topics` with its `TopicModel`."""
    meta = common["metadata"]
    model = build_model(a["phi"], alpha, list(common["vocab"]), meta["eta"], common["name"], meta["source"],
                        meta, copy=False)
    names = meta.get("topic_names")
    return replace(Topics.from_lda(model, source=source), doc_topic=common["doc_topic"], metadata=meta,
                   topic_names=tuple(names) if names is not None else None)
