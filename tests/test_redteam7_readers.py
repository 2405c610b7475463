"""Red team 7 (readers): a BERTopic pickle's values nested as a "billion laughs" or 200,000 deep are
named by their type in one line (never printed); a scikit-learn vectorizer with two words on one
column, a plain-arrays vocabulary with an empty or spaced word and an archive with two members of
one name are refused; gensim's own log line about a damaged .state file is not shown."""

from __future__ import annotations

import logging
import pickle
import zipfile

import numpy as np
import pytest
from clirun import one_line_error, run_cli

import tealeaves as tl


class FakeBERTopic:
    """Pickled under BERTopic's class name (`_pickled`): the attributes its pickle holds."""

    def __init__(self) -> None:
        self.topic_representations_ = {-1: [("the", 0.1)], 0: [("tax", 0.3), ("budget", 0.2)],
                                       1: [("war", 0.4), ("army", 0.1)]}
        self.topic_sizes_ = {-1: 3, 0: 10, 1: 7}
        self.topics_ = [0, 1, -1]
        self.custom_labels_ = None


def _pickled(obj: FakeBERTopic, deep_word: bool = False) -> bytes:
    data = pickle.dumps(obj, protocol=2)
    ours = f"{__name__}\nFakeBERTopic\n".encode()
    assert ours in data
    data = data.replace(ours, b"bertopic._bertopic\nBERTopic\n")
    if deep_word:  # the word "tax" becomes a list nested 200,000 deep ("(" marks, "l" builds a list)
        key = b"X" + len(b"tax").to_bytes(4, "little") + b"tax"
        assert data.count(key) == 1
        data = data.replace(key, b"(" * 200_000 + b"l" * 200_000)
    return data


def _laughs() -> list:
    """x = [x, x] 64 times: a few hundred bytes pickled, 2**64 leaves printed."""
    x: list = ["lol"]
    for _ in range(64):
        x = [x, x]
    return x


@pytest.mark.parametrize("field, message", [
    ("word", "topic 0's representation is not a list of [word, score] pairs"),
    ("labels", "custom_labels[0] is a list, not a string"),
    ("sizes", "topic_sizes[0] (a count of documents) a list is not a whole number"),
    ("deep", "topic 0's representation is not a list of [word, score] pairs"),
])
def test_nested_bertopic_pickle_values_are_one_line(tmp_path, field, message):
    """Named by type in well under a second; before the fix the "billion laughs" cases hung in str()
    (in C, holding the interpreter: no in-process timeout can stop it) and "deep" raised RecursionError."""
    m = FakeBERTopic()
    if field == "word":
        m.topic_representations_[0][0] = (_laughs(), 0.3)
    elif field == "labels":
        m.custom_labels_ = [_laughs()] * 3
    elif field == "sizes":
        m.topic_sizes_[0] = _laughs()
    p = tmp_path / "m.pickle"
    p.write_bytes(_pickled(m, deep_word=field == "deep"))
    one_line_error(["diversity", p, "--topn", "2"], message)  # before: the 64-level ones never returned


@pytest.mark.parametrize("where", ["representations", "sizes"])
def test_a_nested_tuple_topic_id_is_one_line(tmp_path, where):
    """A dict key that is a nested tuple (red team 7's untried case): named by its type, one line."""
    m = FakeBERTopic()
    key = ((0, 1), (2, (3,)))
    if where == "representations":
        m.topic_representations_[key] = m.topic_representations_[0]
    else:
        m.topic_sizes_[key] = 5
    p = tmp_path / "m.pickle"
    p.write_bytes(_pickled(m))
    one_line_error(["diversity", p, "--topn", "2"], "m.pickle: a topic id a tuple is not a whole number")


def test_sklearn_vocabulary_with_two_words_on_one_column_is_refused(tmp_path):
    joblib = pytest.importorskip("joblib")
    from sklearn.decomposition import NMF
    from sklearn.feature_extraction.text import CountVectorizer
    from sklearn.pipeline import make_pipeline

    docs = ["tax budget cut tax", "war army navy war", "budget tax war", "army navy budget"] * 3
    pipe = make_pipeline(CountVectorizer(token_pattern=r"\S+"), NMF(2, init="nndsvda", max_iter=50))
    pipe.fit(docs)
    vec = pipe.steps[0][1]
    vec.vocabulary_["army"] = vec.vocabulary_["budget"]  # column of "army" left without a word
    p = tmp_path / "sk.joblib"
    joblib.dump(pipe, p)
    one_line_error(["diversity", p, "--allow-pickle", "--topn", "2"],
                   "sk.joblib: the CountVectorizer's vocabulary_ gives", "each once")


@pytest.mark.parametrize("word", ["", " b", "b  c", "b\tc"])
@pytest.mark.parametrize("command", [["diversity", "--topn", "2"], ["coherence", "REF", "--topn", "2"]])
def test_arrays_vocabulary_word_empty_or_spaced_is_refused_by_every_command(tmp_path, word, command):
    p, ref = tmp_path / "m.npz", tmp_path / "ref.txt"
    ref.write_text("a c d\nd a c\n")
    np.savez(p, topic_word=np.full((2, 4), 0.25), vocab=np.array(["a", word, "c", "d"]))
    argv = [c if c != "REF" else ref for c in command]
    one_line_error([argv[0], p, *argv[1:]], "m.npz", f"vocab word at index 1 ({word!r}) is empty or has "
                                                      "whitespace")


def test_an_n_gram_is_a_word_for_word_metrics_not_for_likelihood(tmp_path):
    """scikit-learn's and BERTopic's n-gram vectorizers name columns "new york": diversity takes
    such a model; a likelihood, which counts whitespace-split tokens, refuses it."""
    vocab, phi = ["tax", "new york", "war", "army"], np.full((2, 4), 0.25)
    from tealeaves.topics import Topics, check_topics

    topics = Topics(name="bigrams", source="test", vocab=tuple(vocab), weights=phi,
                    weights_kind="distributions")
    check_topics(topics)
    assert tl.diversity(topics, topn=2) is not None
    with pytest.raises(tl.InvalidModelError, match="empty or has whitespace"):
        tl.TopicModel(phi, [0.5, 0.5], vocab=vocab)


def test_an_n_gram_is_shown_as_one_word(tmp_path):
    """An n-gram among the top words is quoted, so that a reader tells "new york" from the two words
    new and york (before: shown unquoted in coherence's top-words column)."""
    np.savez(tmp_path / "m.npz", topic_word=np.array([[0.4, 0.3, 0.2, 0.1], [0.1, 0.2, 0.3, 0.4]]),
             vocab=np.array(["tax", "new york", "war", "army"]))
    (tmp_path / "ref.txt").write_text("tax war army\nnew york tax\n" * 20)
    code, out, err = run_cli(["coherence", tmp_path / "m.npz", tmp_path / "ref.txt", "--topn", "3"])
    assert code == 0, err
    assert 'tax "new york"* war' in out and 'army war "new york"*' in out, out


def test_archive_with_two_members_of_one_name_is_refused(tmp_path):
    p = tmp_path / "m.npz"
    np.savez(p, topic_word=np.full((2, 3), 1 / 3), vocab=np.array(["a", "b", "c"]))
    with zipfile.ZipFile(p, "a") as z, pytest.warns(UserWarning, match="Duplicate name"):
        z.writestr("topic_word.npy", z.read("topic_word.npy"))
    one_line_error(["diversity", p, "--topn", "2"], "m.npz: two members named 'topic_word'")


def test_gensim_lda_with_truncated_state_shows_one_line(tmp_path, monkeypatch):
    pytest.importorskip("gensim")
    from gensim.corpora import Dictionary
    from gensim.models import LdaModel

    texts = [["tax", "budget", "cut"], ["war", "army", "navy"], ["tax", "war"]] * 3
    words = Dictionary(texts)
    p = tmp_path / "g.model"
    LdaModel([words.doc2bow(t) for t in texts], num_topics=2, id2word=words, passes=1,
             random_state=0).save(str(p))
    state = tmp_path / "g.model.state"
    state.write_bytes(state.read_bytes()[:300])
    docs = tmp_path / "d.txt"
    docs.write_text("tax war\n")
    monkeypatch.setattr(logging.root, "handlers", [])  # as in a fresh process: gensim's warning
    one_line_error(["heldout", p, docs, "--allow-pickle", "--particles", "5", "--runs", "1", "--quiet"],
                   "g.model: the model has no state")
    assert logging.root.handlers == []  # nor configured the root logger for the rest of the run
