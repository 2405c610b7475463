"""Make tests/fixtures/octis_lda.npz and octis_nmf.npz: OCTIS model output written by OCTIS's own
`save_model_output`, from its LDA and NMF models (both gensim underneath) trained on 300
paragraphs of the bundled State of the Union corpus, and the vocabulary each model's columns
follow (`model.id2word` in id order: OCTIS saves none) as octis_lda_vocab.txt / octis_nmf_vocab.txt.

OCTIS's pinned dependencies (scikit-learn < 1.1, torch) do not install on Python 3.11 here, so
OCTIS is installed without them and run on current gensim, scikit-learn and pandas (neither model
uses torch):

    python -m venv /tmp/oc && /tmp/oc/bin/pip install --no-deps octis \\
        && /tmp/oc/bin/pip install gensim scikit-learn pandas scipy numpy tqdm requests
    PYTHONPATH=src /tmp/oc/bin/python scripts/make_octis_fixture.py

Made with OCTIS 1.14.0, gensim 4.4.0, numpy 2.4.6, Python 3.11.7."""

import tempfile
from pathlib import Path

from octis.dataset.dataset import Dataset
from octis.models.LDA import LDA
from octis.models.model import save_model_output
from octis.models.NMF import NMF

from tealeaves.datasets import sotu

OUT = Path("tests/fixtures")
corpus = sotu().train
docs = [" ".join(corpus.vocab[w] for w in corpus.words[corpus.offsets[d]:corpus.offsets[d + 1]])
        for d in range(300)]
docs = [d for d in docs if d]
with tempfile.TemporaryDirectory() as tmp:
    (Path(tmp) / "corpus.tsv").write_text("".join(d + "\n" for d in docs))
    dataset = Dataset()
    dataset.load_custom_dataset_from_folder(tmp)
for name, model in [("lda", LDA(num_topics=5, passes=2, random_state=1)),
                    ("nmf", NMF(num_topics=5, random_state=1))]:
    model.partitioning(False)
    output = model.train_model(dataset)
    save_model_output(output, str(OUT / f"octis_{name}"))  # numpy adds .npz
    words = [model.id2word[i] for i in range(len(model.id2word))]
    (OUT / f"octis_{name}_vocab.txt").write_text("".join(w + "\n" for w in words))
    print(name, {k: getattr(v, "shape", len(v)) for k, v in output.items()})
