"""Child process of `tealeaves.io.native`: load a tomotopy model file and write phi (over
`used_vocabs`, float64), alpha, eta and the words to an .npz. Usage: tomotopy.py MODEL OUT.npz."""

import sys

import numpy as np

try:
    import tomotopy as tp
except ImportError:
    sys.stderr.write('tomotopy is not installed: pip install "tealeaves[tomotopy]"\n')
    sys.exit(3)

path, out = sys.argv[1], sys.argv[2]
try:
    mdl = tp.LDAModel.load(path)
except Exception as exc:  # tomotopy raises OSError/ValueError/RuntimeError for bad files
    sys.stderr.write(f"{type(exc).__name__}: {exc}\n")
    sys.exit(3)
np.savez(
    out,
    phi=np.array([mdl.get_topic_word_dist(k) for k in range(mdl.k)], dtype=np.float64),
    alpha=np.asarray(mdl.alpha, dtype=np.float64).reshape(-1),
    eta=np.float64(mdl.eta),
    vocab=np.array([str(w) for w in mdl.used_vocabs], dtype=str),
    removed_top_words=np.array([str(w) for w in getattr(mdl, "removed_top_words", [])], dtype=str),
)
