"""Child process of `tealeaves.io.native`: load a tomotopy model file of the class named (HDPModel,
CTModel, DMRModel, PAModel, LLDAModel, PLDAModel) and write into OUT `phi.npy` (the topics' word
distributions over `used_vocabs`, float32, one topic at a time) and `arrays.npz` (what the
class adds: priors, label names, topic sizes, the training documents' proportions).
Usage: tomotopy_zoo.py MODEL OUT CLASS.

The file is read with the class's `_load`, not `load`: `load` also unpickles the file's "extra"
block (tomotopy keeps its constructor arguments there as a pickle), and unpickling runs code."""

import os
import sys

import numpy as np

try:
    import tomotopy as tp
except ImportError:
    sys.stderr.write('tomotopy is not installed: pip install "tealeaves[tomotopy]"\n')
    sys.exit(3)


def fail(message: str) -> None:
    sys.stderr.write(message + "\n")
    sys.exit(3)


def sub_topic_dist(mdl, s: int) -> np.ndarray:
    """PAModel.get_sub_topic_dist(s), which tomotopy 0.14.0 breaks (it calls a method that does not
    exist), from get_sub_topics(s, k2)."""
    out = np.zeros(mdl.k2)
    for k, p in mdl.get_sub_topics(s, top_n=mdl.k2):
        out[k] = p
    return out


path, out, kind = sys.argv[1], sys.argv[2], sys.argv[3]
cls = getattr(tp, kind, None)
if cls is None or not hasattr(cls, "_load"):
    fail(f"tomotopy {tp.__version__} has no {kind} loader")
try:
    mdl, _extra = cls._load(cls, path)  # _extra (a pickle) is never unpickled
except Exception as exc:  # tomotopy raises OSError/ValueError/RuntimeError for bad files
    fail(f"{type(exc).__name__}: {exc}")

arrays = {"vocab": np.array([str(w) for w in mdl.used_vocabs], dtype=str),
          "eta": np.float64(mdl.eta), "global_step": np.int64(mdl.global_step),
          "removed_top_words": np.array([str(w) for w in getattr(mdl, "removed_top_words", [])], dtype=str)}
if kind == "HDPModel":
    topics = [k for k in range(mdl.k) if mdl.is_live_topic(k)]
    counts = np.asarray(mdl.get_count_by_topics(), dtype=np.float64)
    arrays.update(topic_ids=np.array(topics), topic_weights=counts[topics], hdp_alpha=np.float64(mdl.alpha),
                  gamma=np.float64(mdl.gamma), num_tables=np.int64(mdl.num_tables))
elif kind == "PAModel":
    topics = list(range(mdl.k2))  # the sub-topics: the ones with word distributions
    arrays.update(super_alpha=np.asarray(mdl.alpha, dtype=np.float64),
                  subalpha=np.asarray(mdl.subalpha, dtype=np.float64),
                  super_sub=np.array([sub_topic_dist(mdl, s) for s in range(mdl.k1)]),
                  topic_weights=np.asarray(mdl.get_count_by_topics(), dtype=np.float64))
else:
    topics = list(range(mdl.k))
if kind == "CTModel":
    arrays.update(mean=np.asarray(mdl.prior_mean, dtype=np.float64),
                  cov=np.asarray(mdl.prior_cov, dtype=np.float64))
elif kind == "DMRModel":
    names = [str(m) for m in mdl.metadata_dict]
    arrays.update(metadata_values=np.array(names, dtype=str),
                  prior_by_metadata=np.array([mdl.get_topic_prior(m) for m in names], dtype=np.float64),
                  sigma=np.float64(mdl.sigma))
elif kind in ("LLDAModel", "PLDAModel"):
    arrays.update(alpha=np.asarray(mdl.alpha, dtype=np.float64).reshape(-1),
                  labels=np.array([str(x) for x in mdl.topic_label_dict], dtype=str),
                  topics_per_label=np.int64(getattr(mdl, "topics_per_label", 1)),
                  latent_topics=np.int64(getattr(mdl, "latent_topics", mdl.k - len(mdl.topic_label_dict))))

rows = []
for d in mdl.docs:  # a file saved with full=False keeps no documents
    dist = np.asarray(d.get_sub_topic_dist() if kind == "PAModel" else d.get_topic_dist(), dtype=np.float64)
    if kind == "HDPModel" and dist.size:
        dead = dist.sum() - dist[topics].sum()
        if dead > 1e-4:
            fail(f"a training document has {dead:.3g} of its words on topics that are not live")
        dist = dist[topics]
    if dist.size != len(topics):
        rows = []
        break
    rows.append(dist)
if rows:
    arrays["doc_topic"] = np.array(rows)

with open(os.path.join(out, "phi.npy"), "wb") as fh:
    header = {"descr": np.lib.format.dtype_to_descr(np.dtype(np.float32)), "fortran_order": False,
              "shape": (len(topics), len(arrays["vocab"]))}
    np.lib.format.write_array_header_1_0(fh, header)
    for k in topics:
        row = np.asarray(mdl.get_topic_word_dist(k), dtype=np.float64)
        if not np.array_equal(row.astype(np.float32), row):  # not expected: tomotopy is float32
            fail(f"topic {k}: tomotopy gave values that are not float32")
        fh.write(row.astype(np.float32).tobytes())
np.savez(os.path.join(out, "arrays.npz"), **arrays)
