"""Make tests/fixtures/bertopic_sotu/: a BERTopic model saved by BERTopic's own `save` (safetensors,
with c-TF-IDF), fitted on 400 paragraphs of the bundled State of the Union corpus.

No embedding model is downloaded: the documents' embeddings are precomputed (TF-IDF reduced to 32
dimensions by truncated SVD) and BERTopic is given `embedding_model=None`; PCA stands in for UMAP
and HDBSCAN clusters, so some documents are outliers (topic -1). Run with BERTopic installed
(python -m venv /tmp/bt && /tmp/bt/bin/pip install bertopic), from the repository root:

    PYTHONPATH=src /tmp/bt/bin/python scripts/make_bertopic_fixture.py

Also writes tests/fixtures/bertopic_sotu.pickle (`serialization="pickle"`, for the consent tests).

Made with BERTopic 0.17.4, scikit-learn 1.9.1, hdbscan 0.8.44, numpy 2.4.6, Python 3.11.7."""

import json
import shutil
from pathlib import Path

import bertopic
import numpy as np
from bertopic import BERTopic
from hdbscan import HDBSCAN
from sklearn.decomposition import PCA, TruncatedSVD
from sklearn.feature_extraction.text import CountVectorizer, TfidfVectorizer

from tealeaves.datasets import sotu

OUT = Path("tests/fixtures/bertopic_sotu")
corpus = sotu().train
docs = [" ".join(corpus.vocab[w] for w in corpus.words[corpus.offsets[d]:corpus.offsets[d + 1]])
        for d in range(400)]
tfidf = TfidfVectorizer(min_df=2).fit_transform(docs)
emb = TruncatedSVD(32, random_state=0).fit_transform(tfidf)
emb /= np.linalg.norm(emb, axis=1, keepdims=True)
model = BERTopic(embedding_model=None, umap_model=PCA(2, random_state=0),
                 hdbscan_model=HDBSCAN(min_cluster_size=8, prediction_data=True),
                 vectorizer_model=CountVectorizer(min_df=3), calculate_probabilities=False)
model.fit(docs, embeddings=emb)
if OUT.exists():
    shutil.rmtree(OUT)
model.save(str(OUT), serialization="safetensors", save_ctfidf=True, save_embedding_model=False)
(OUT / "MADE_BY.json").write_text(json.dumps({"bertopic": bertopic.__version__,
                                               "script": "scripts/make_bertopic_fixture.py"}) + "\n")
print(model.get_topic_info().head(20))
model.save(str(OUT.parent / "bertopic_sotu.pickle"), serialization="pickle", save_embedding_model=False)
