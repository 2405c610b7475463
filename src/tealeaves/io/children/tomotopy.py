"""Child process of `tealeaves.io.native`: load a tomotopy model file and write, into the
directory OUT, `phi.npy` (T x V over `used_vocabs`, tomotopy's float32, written one topic at a
time so this process never holds a second phi) and `arrays.npz` (alpha, eta and the words).
Usage: tomotopy.py MODEL OUT.

The file is read with `LDAModel._load`, not `load`: `load` also unpickles the file's "extra"
block (tomotopy keeps its constructor arguments there as a pickle), and unpickling runs code."""

import os
import sys

import numpy as np

try:
    import tomotopy as tp
except ImportError:
    sys.stderr.write('tomotopy is not installed: pip install "tealeaves[tomotopy]"\n')
    sys.exit(3)

path, out = sys.argv[1], sys.argv[2]
try:
    mdl, _extra = tp.LDAModel._load(tp.LDAModel, path)  # _extra (a pickle) is never unpickled
except Exception as exc:  # tomotopy raises OSError/ValueError/RuntimeError for bad files
    sys.stderr.write(f"{type(exc).__name__}: {exc}\n")
    sys.exit(3)
vocab = np.array([str(w) for w in mdl.used_vocabs], dtype=str)
with open(os.path.join(out, "phi.npy"), "wb") as fh:
    header = {"descr": np.lib.format.dtype_to_descr(np.dtype(np.float32)), "fortran_order": False,
              "shape": (int(mdl.k), len(vocab))}
    np.lib.format.write_array_header_1_0(fh, header)
    for k in range(mdl.k):
        row = np.asarray(mdl.get_topic_word_dist(k), dtype=np.float64)
        if not np.array_equal(row.astype(np.float32), row):  # not expected: tomotopy is float32
            sys.stderr.write(f"topic {k}: tomotopy gave values that are not float32\n")
            sys.exit(3)
        fh.write(row.astype(np.float32).tobytes())
np.savez(
    os.path.join(out, "arrays.npz"),
    alpha=np.asarray(mdl.alpha, dtype=np.float64).reshape(-1),
    eta=np.float64(mdl.eta),
    vocab=vocab,
    removed_top_words=np.array([str(w) for w in getattr(mdl, "removed_top_words", [])], dtype=str),
)
