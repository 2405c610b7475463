"""Make the files of docs/guide/other_models.md's zoo section in a folder (default: the current one):
tomotopy's LDA, HDP, CTM, DMR, PA, LLDA and PLDA trained with fixed seeds on the first 600
paragraphs of the bundled State of the Union corpus (the guide's reference.txt), each saved by
tomotopy's own `save` as NAME.tomotopy, and copies of the committed BERTopic and OCTIS fixtures
(tests/fixtures/, made by BERTopic's and OCTIS's own save functions: see their scripts).

    python scripts/make_zoo_examples.py [FOLDER]

tests/test_docs.py runs it in the folder where the guide's examples run. Made with tomotopy 0.14.0."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

FIXTURES = Path(__file__).resolve().parent.parent / "tests" / "fixtures"
DOCS = 600
ITERATIONS = 100


def models() -> dict:
    """name -> an untrained tomotopy model (fixed seeds)."""
    import warnings

    import tomotopy as tp

    warnings.filterwarnings("ignore", "`tomotopy.LLDAModel` is deprecated", DeprecationWarning)

    return {"lda": tp.LDAModel(k=8, seed=1),
            "hdp": tp.HDPModel(initial_k=4, gamma=0.01, alpha=0.1, eta=0.5, seed=1),
            "ctm": tp.CTModel(k=8, seed=1), "dmr": tp.DMRModel(k=8, seed=1),
            "pa": tp.PAModel(k1=3, k2=8, seed=1), "llda": tp.LLDAModel(k=5, seed=1),
            "plda": tp.PLDAModel(latent_topics=2, topics_per_label=2, seed=1)}


def make(folder: str | Path = ".") -> None:
    """Train and save every model, and copy the fixtures, into `folder`."""
    from tealeaves.datasets import sotu

    out = Path(folder)
    s = sotu()
    c = s.train
    party = [s.parties[p] for p in s.party["train"][:DOCS]]  # labels and DMR metadata: the party
    texts = [[c.vocab[w] for w in c[d]] for d in range(DOCS)]
    for name, mdl in models().items():
        for words, p in zip(texts, party, strict=True):
            if not words:
                continue
            if name == "dmr":
                mdl.add_doc(words, metadata=p)
            elif name in ("llda", "plda"):
                mdl.add_doc(words, labels=[p])
            else:
                mdl.add_doc(words)
        mdl.train(ITERATIONS, workers=1)
        mdl.save(str(out / f"{name}.tomotopy"))
    shutil.copytree(FIXTURES / "bertopic_sotu", out / "bertopic_sotu", dirs_exist_ok=True)
    for f in ("octis_lda.npz", "octis_lda_vocab.txt", "octis_nmf.npz", "octis_nmf_vocab.txt"):
        shutil.copy(FIXTURES / f, out / f)


if __name__ == "__main__":
    make(sys.argv[1] if len(sys.argv) > 1 else ".")
