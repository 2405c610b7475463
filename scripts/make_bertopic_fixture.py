"""Make the BERTopic fixtures with BERTopic's own `fit` and `save`, and record what BERTopic itself
reads back from each saved pickle (its `get_topic`, topic sizes and labels), for the tests.

1. tests/fixtures/bertopic_sotu/ (`save(serialization="safetensors", save_ctfidf=True)`) and
   tests/fixtures/bertopic_sotu.pickle (`serialization="pickle"`: a joblib file): 400 paragraphs of
   the bundled State of the Union corpus, PCA in place of UMAP, HDBSCAN, so some documents are
   outliers (topic -1).
2. tests/fixtures/bertopic_umap.pickle: BERTopic's default pipeline (UMAP, HDBSCAN,
   CountVectorizer, c-TF-IDF) with custom topic labels (`set_topic_labels`), on 300 paragraphs.
3. tests/fixtures/bertopic_pickles.expected.json: for each pickle, loaded back by `BERTopic.load`,
   every topic's `get_topic(t)` (words and scores), `get_topic_info()`'s counts, and the labels
   (`topic_labels_`, `custom_labels_`), with the versions that made them.

No embedding model is downloaded: the documents' embeddings are precomputed (TF-IDF reduced to
32 dimensions by truncated SVD) and BERTopic is given `embedding_model=None`. Run with BERTopic
installed, from the repository root:

    python -m venv /work/venv-bertopic
    /work/venv-bertopic/bin/pip install torch==2.13.0 bertopic==0.17.4
    PYTHONPATH=src /work/venv-bertopic/bin/python scripts/make_bertopic_fixture.py

Made with BERTopic 0.17.4, umap-learn 0.5.12, hdbscan 0.8.44, scikit-learn 1.9.1, joblib 1.6.0,
numpy 2.4.6, scipy 1.17.1, Python 3.11.7 (the JSON records them)."""

import json
import platform
import shutil
from importlib.metadata import version
from pathlib import Path

import numpy as np
from bertopic import BERTopic
from hdbscan import HDBSCAN
from sklearn.decomposition import PCA, TruncatedSVD
from sklearn.feature_extraction.text import CountVectorizer, TfidfVectorizer
from umap import UMAP

from tealeaves.datasets import sotu

FIXTURES = Path("tests/fixtures")
OUT = FIXTURES / "bertopic_sotu"
LIBRARIES = ("bertopic", "umap-learn", "hdbscan", "scikit-learn", "joblib", "numpy", "scipy", "pandas")


def documents(n: int) -> list[str]:
    corpus = sotu().train
    return [" ".join(corpus.vocab[w] for w in corpus.words[corpus.offsets[d]:corpus.offsets[d + 1]])
            for d in range(n)]


def embeddings(docs: list[str]) -> np.ndarray:
    tfidf = TfidfVectorizer(min_df=2).fit_transform(docs)
    emb = TruncatedSVD(32, random_state=0).fit_transform(tfidf)
    return emb / np.linalg.norm(emb, axis=1, keepdims=True)


def sotu_model() -> None:
    docs = documents(400)
    model = BERTopic(embedding_model=None, umap_model=PCA(2, random_state=0),
                     hdbscan_model=HDBSCAN(min_cluster_size=8, prediction_data=True),
                     vectorizer_model=CountVectorizer(min_df=3), calculate_probabilities=False)
    model.fit(docs, embeddings=embeddings(docs))
    if OUT.exists():
        shutil.rmtree(OUT)
    model.save(str(OUT), serialization="safetensors", save_ctfidf=True, save_embedding_model=False)
    (OUT / "MADE_BY.json").write_text(json.dumps({"bertopic": version("bertopic"),
                                                   "script": "scripts/make_bertopic_fixture.py"}) + "\n")
    model.save(str(FIXTURES / "bertopic_sotu.pickle"), serialization="pickle", save_embedding_model=False)


def umap_model() -> None:
    docs = documents(300)
    model = BERTopic(embedding_model=None,
                     umap_model=UMAP(n_neighbors=10, n_components=5, min_dist=0.0, metric="cosine",
                                     random_state=0),
                     hdbscan_model=HDBSCAN(min_cluster_size=10, metric="euclidean",
                                           cluster_selection_method="eom", prediction_data=True),
                     vectorizer_model=CountVectorizer(min_df=2))
    model.fit(docs, embeddings=embeddings(docs))
    model.set_topic_labels({t: f"topic {t}: {model.get_topic(t)[0][0]}" for t in model.get_topics()})
    model.save(str(FIXTURES / "bertopic_umap.pickle"), serialization="pickle", save_embedding_model=False)


def expected(path: Path) -> dict:
    """What BERTopic itself reads from the saved pickle."""
    model = BERTopic.load(str(path))
    info = model.get_topic_info()
    return {"get_topic": {str(t): [[w, float(s)] for w, s in model.get_topic(t)] for t in model.get_topics()},
            "counts": {str(t): int(n) for t, n in zip(info.Topic, info.Count, strict=True)},
            "topic_labels": {str(t): name for t, name in model.topic_labels_.items()},
            "custom_labels": model.custom_labels_,
            "vocabulary_size": len(model.vectorizer_model.get_feature_names_out())}


if __name__ == "__main__":
    sotu_model()
    umap_model()
    record = {"made_by": {**{lib: version(lib) for lib in LIBRARIES}, "python": platform.python_version(),
                          "script": "scripts/make_bertopic_fixture.py"}}
    for name in ("bertopic_sotu.pickle", "bertopic_umap.pickle"):
        record[name] = expected(FIXTURES / name)
    (FIXTURES / "bertopic_pickles.expected.json").write_text(json.dumps(record) + "\n")
    for name in ("bertopic_sotu.pickle", "bertopic_umap.pickle", "bertopic_pickles.expected.json"):
        print(name, (FIXTURES / name).stat().st_size, "bytes")
