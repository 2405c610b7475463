"""Red team 5 (a): model readers and text decoding (F3, F4, F9, F11-F13, F15, F17, F27, F32, F36 of
/work/wt/REDTEAM5.md; docs/hostile_input.md, section "Red team 5 (a)"). Expected values are computed
here by hand, never taken from the code under test."""

from __future__ import annotations

import gzip
import json
import warnings
from pathlib import Path

import numpy as np
import pytest
from clirun import one_line_error, run_cli

import tealeaves as tl
from tealeaves.errors import InputFileError, InvalidModelError
from tealeaves.files.textfile import CHUNK, read_lines


def write_weights(path: Path, rows: dict[int, dict[str, str]]) -> Path:
    """A MALLET --topic-word-weights-file: topic<TAB>word<TAB>weight."""
    path.write_text("".join(f"{t}\t{w}\t{x}\n" for t, ws in rows.items() for w, x in ws.items()))
    return path


def save_npz(path: Path, phi, alpha, vocab) -> Path:
    np.savez(path, phi=np.array(phi, float), alpha=np.array(alpha, float), beta=np.array(0.01),
             name=np.array("m"), metadata=np.array("{}"), format_version=np.array(1), vocab=np.array(vocab))
    return path


# --- F3: a row of finite weights whose sum overflows float64 -----------------------------------

def test_mallet_weights_whose_row_sum_overflows_are_normalised_not_zeroed(tmp_path):
    w = write_weights(tmp_path / "w.txt", {0: {"a": "1e308", "b": "1e308", "c": "1"},
                                           1: {"a": "1", "b": "1", "c": "1"}})
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no numpy overflow warning either
        m = tl.load_model(w, format="mallet-weights", alpha=[0.5, 0.5])
    # by hand: 1e308 / 2e308 = 0.5 each, 1 / 2e308 = 5e-309
    np.testing.assert_allclose(m.phi[0, :2], [0.5, 0.5], rtol=1e-15)
    assert m.phi[0, 2] == pytest.approx(5e-309, rel=1e-6)
    np.testing.assert_allclose(m.phi[1], [1 / 3] * 3, rtol=1e-15)
    # convert writes a model tealeaves then reads back
    out = tmp_path / "w.npz"
    keys = tmp_path / "keys.txt"
    keys.write_text("0\t0.5\ta b c\n1\t0.5\ta b c\n")
    code, _, err = run_cli(["convert", w, out, "--alpha", keys])
    assert code == 0, err
    np.testing.assert_allclose(tl.load_model(out).phi[0, :2], [0.5, 0.5], rtol=1e-15)


def test_plain_array_whose_row_sum_overflows(tmp_path):
    np.save(tmp_path / "big.npy", np.array([[1e308, 1e308, 1.0], [1.0, 1.0, 2.0]]))
    vocab = tmp_path / "v.txt"
    vocab.write_text("a\nb\nc\n")
    one_line_error(["diversity", tmp_path / "big.npy", "--vocab", vocab, "--alpha", "0.5", "--topn", "2"],
                   "row 0 sums to more than float64 holds", "--normalize")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        m = tl.load_model(tmp_path / "big.npy", format="arrays", vocab=vocab, alpha=0.5, normalize=True)
    np.testing.assert_allclose(m.phi[0, :2], [0.5, 0.5], rtol=1e-15)
    np.testing.assert_allclose(m.phi[1], [0.25, 0.25, 0.5], rtol=1e-15)
    # our own .npz: the overflowing row is refused (not "all zeros", which it is not) or rescaled
    save_npz(tmp_path / "big.npz", [[1e308, 1e308, 1.0], [0.2, 0.3, 0.5]], [0.5, 0.5], ["a", "b", "c"])
    with pytest.raises(InvalidModelError, match="sums to more than float64 holds"):
        tl.load_model(tmp_path / "big.npz")
    np.testing.assert_allclose(tl.load_model(tmp_path / "big.npz", normalize=True).phi[0, :2], [0.5, 0.5])


# --- F4: a topic-keys file that does not describe the weights ----------------------------------

def test_topic_keys_must_match_the_weights_file(tmp_path):
    w = write_weights(tmp_path / "w.txt", {0: {"a": "5", "b": "1", "c": "0.5"},
                                           1: {"a": "0.5", "b": "1", "c": "5"}})
    keys = tmp_path / "keys.txt"
    keys.write_text("0\t0.1\ta b c\n1\t5\tc b a\n")
    np.testing.assert_allclose(tl.load_model(w, format="mallet-weights", alpha=keys).alpha, [0.1, 5])
    keys.write_text("0\t5\tc b a\n1\t0.1\ta b c\n")  # the two topics' lines swapped
    with pytest.raises(InputFileError, match=r"keys.txt: topic 0 lists 'c' before 'b', but in .*w.txt"):
        tl.load_model(w, format="mallet-weights", alpha=keys)
    keys.write_text("0\t5\tc\n1\t0.1\ta\n")  # one top word each, the other topic's
    with pytest.raises(InputFileError, match="topic 0 lists 'c' among its 1 top words"):
        tl.load_model(w, format="mallet-weights", alpha=keys)
    keys.write_text("0\t0.5\tzebra lion\n1\t0.5\tkoala emu\n")  # another model's keys
    one_line_error(["convert", w, tmp_path / "o.npz", "--alpha", keys],
                   "keys.txt: topic 0's top word 'zebra' is not a word of")
    assert not (tmp_path / "o.npz").exists()


# --- F9: pyLDAvis JSON read as strictly as plain arrays ----------------------------------------

def _lv(path: Path, dists) -> Path:
    path.write_text(json.dumps({"topic_term_dists": dists, "vocab": ["a", "b", "c"]}))
    return path


def test_pyldavis_rows_must_be_distributions_unless_normalize(tmp_path):
    lv = _lv(tmp_path / "lv.json", [[5, 3, 2], [1, 2, 7]])  # term counts, not distributions
    one_line_error(["diversity", lv, "--alpha", "0.5", "--topn", "2"],
                   "lv.json: topic_term_dists row 0 sums to 10, not 1", "--normalize")
    code, _, err = run_cli(["diversity", lv, "--alpha", "0.5", "--topn", "2", "--normalize"])
    assert code == 0 and "2 of 2 rows rescaled" in err, err
    m = tl.load_model(lv, alpha=0.5, normalize=True)
    np.testing.assert_allclose(m.phi, [[0.5, 0.3, 0.2], [0.1, 0.2, 0.7]])
    assert "rescaled" in m.metadata["normalized"]
    data = {"topic_term_dists": [[5, 3, 2], [1, 2, 7]], "vocab": ["a", "b", "c"]}  # a dict, in Python
    with pytest.raises(InvalidModelError, match="row 0 sums to 10, not 1"):
        tl.load_model(data, alpha=0.5)
    np.testing.assert_allclose(tl.load_model(data, alpha=0.5, normalize=True).phi[1], [0.1, 0.2, 0.7])


@pytest.mark.parametrize("cell,shown", [("0.5", '"0.5"'), (True, "true"), (None, "null")])
def test_pyldavis_cells_must_be_json_numbers(tmp_path, cell, shown):
    lv = _lv(tmp_path / "lv.json", [[cell, 0.3, 0.2], [0.1, 0.2, 0.7]])
    one_line_error(["diversity", lv, "--alpha", "0.5", "--topn", "2"],
                   f"lv.json: topic_term_dists[0][0] is {shown}, not a number")


# --- F11: a decoding error names the line of the bad byte ---------------------------------------

@pytest.mark.parametrize("bad_line", [2, 900, 5000])
def test_decoding_error_names_the_bad_bytes_line(tmp_path, bad_line):
    lines = [b"a b c\n"] * 6000
    lines[bad_line - 1] = b"a \xff c\n"
    (tmp_path / "d.txt").write_bytes(b"".join(lines))
    with pytest.raises(InputFileError, match=rf"d.txt:{bad_line}: not UTF-8 text"):
        list(read_lines(tmp_path / "d.txt"))


def test_decoding_across_read_chunks(tmp_path):
    """Past the first chunk the line is still right, and a character split between two chunks
    decodes."""
    head = b"x" * (CHUNK - 1) + b"\n"  # line 1 ends exactly one byte before the chunk boundary
    split = "é".encode()  # two bytes: the first is the last of chunk 1 after this line
    body = head + split + b" a\n" + b"a b\n" * 10 + b"\xff\n"
    (tmp_path / "d.txt").write_bytes(body)
    with pytest.raises(InputFileError, match=r"d.txt:13: not UTF-8 text"):
        list(read_lines(tmp_path / "d.txt"))
    (tmp_path / "ok.txt").write_bytes(head + split + b" a\n")
    assert [line for _, line in read_lines(tmp_path / "ok.txt")][1] == "é a\n"


# --- F12: only LF (or CRLF) ends a line ---------------------------------------------------------

def test_a_lone_carriage_return_does_not_split_a_document(tmp_path):
    p = tmp_path / "cr.txt"
    p.write_bytes("a\rb\nc\r\n\r\nd\u0085e\n".encode())  # wc -l: 4 lines
    assert [line for _, line in read_lines(p)] == ["a\rb\n", "c\n", "\n", "d\x85e\n"]
    c = tl.read_corpus(p, vocab=["a", "b", "c", "d", "e"])
    assert len(c) == 4 and [list(d) for d in c] == [[0, 1], [2], [], [3, 4]]


def test_labels_with_a_lone_carriage_return_keep_their_count(tmp_path):
    (tmp_path / "lab.txt").write_bytes(b"1\r2\n3\n")  # 2 lines
    (tmp_path / "gold.txt").write_text("1\n2\n3\n")
    one_line_error(["bcubed", tmp_path / "lab.txt", tmp_path / "gold.txt"],
                   "lab.txt has 2 labels but ", "gold.txt has 3")
    (tmp_path / "lab.txt").write_bytes(b"1\r\n2\r\n3\r\n")  # CRLF ends a line
    assert "B-Cubed over 3 items" in run_cli(["bcubed", tmp_path / "lab.txt", tmp_path / "gold.txt"])[1]


def test_a_file_of_classic_mac_line_ends_is_refused(tmp_path):
    (tmp_path / "mac.txt").write_bytes(b"a b\rc\rb a\r")
    with pytest.raises(InputFileError, match=r"mac.txt: its lines end in lone carriage returns"):
        tl.read_corpus(tmp_path / "mac.txt", vocab=["a", "b", "c"])
    (tmp_path / "mac.txt").write_bytes(b"a b\rc\rb a\n")  # an editor added one LF at the end
    with pytest.raises(InputFileError, match=r"mac.txt: its lines end in lone carriage returns"):
        tl.read_corpus(tmp_path / "mac.txt", vocab=["a", "b", "c"])
    (tmp_path / "mac.txt").write_bytes(b"a b\r\n")  # one line ended by CRLF: fine
    assert len(tl.read_corpus(tmp_path / "mac.txt", vocab=["a", "b", "c"])) == 1


# --- F13: dropped tokens that look like vocabulary words ----------------------------------------

def test_dropped_lookalike_words_are_counted_and_named(tmp_path):
    nfd, nfc = "cafe\u0301", "caf\u00e9"
    docs = tmp_path / "d.txt"
    docs.write_text(f"{nfc} {nfc} a\u200b zz b\n", encoding="utf-8")
    c = tl.read_corpus(docs, vocab=[nfd, "a", "b"])
    rep = c.report()
    assert rep["oov_tokens"] == 4 and rep["oov_lookalike_tokens"] == 3  # zz looks like nothing
    assert rep["oov_lookalike_example"] == [nfc, nfd]
    save_npz(tmp_path / "m.npz", [[0.5, 0.3, 0.2], [0.1, 0.2, 0.7]], [0.5, 0.5], [nfd, "a", "b"])
    code, out, err = run_cli(["heldout", tmp_path / "m.npz", docs, "--method", "exact"])
    assert code == 0, err
    assert ("3 of the dropped tokens look like a vocabulary word" in out
            and "'caf\\xe9' for 'cafe\\u0301'" in out), out


def test_a_second_byte_order_mark_is_dropped(tmp_path):
    p = tmp_path / "two.txt"
    p.write_bytes("\ufeffa b\n".encode() + "\ufeffc\n".encode())  # two files joined with cat
    c = tl.read_corpus(p, vocab=["a", "b", "c"])
    assert c.oov_tokens == 0 and [list(d) for d in c] == [[0, 1], [2]]


# --- F15 (and F28's missing .state): gensim dictionaries that do not match ------------------------

def test_gensim_id2word_with_a_gap_or_non_words(tmp_path):
    pytest.importorskip("gensim")
    from gensim.models import LdaModel

    # not trained (gensim's own training log would look the missing word up); 4 columns (max id + 1)
    lda = LdaModel(num_topics=2, id2word={0: "a", 1: "b", 3: "d"}, random_state=1)
    with pytest.raises(InvalidModelError, match=r"id2word has no word for id 2 \(1 of the model's 4"):
        tl.load_model(lda)
    lda.save(str(tmp_path / "g.gensim"))
    one_line_error(["convert", tmp_path / "g.gensim", tmp_path / "g.npz", "--allow-pickle"],
                   "g.gensim: id2word has no word for id 2")
    lda.id2word = {0: b"a", 1: "b", 2: "c", 3: "d"}
    with pytest.raises(InvalidModelError, match=r"id2word maps id 0 to b'a' \(bytes\), not a word"):
        tl.load_model(lda)
    lda.id2word = {0: "a", 1: "b", 2: "c", 3: "d"}
    lda.save(str(tmp_path / "h.gensim"))
    (tmp_path / "h.gensim.state").unlink()
    one_line_error(["convert", tmp_path / "h.gensim", tmp_path / "h.npz", "--allow-pickle"],
                   "h.gensim: the model has no state: its .state file is missing")


# --- F17: scikit-learn pipelines ------------------------------------------------------------------

def _pipeline(tmp_path: Path, vectorizer, name: str) -> Path:
    pytest.importorskip("sklearn")
    import joblib
    from sklearn.decomposition import LatentDirichletAllocation
    from sklearn.pipeline import make_pipeline

    texts = ["a b c a", "b c d", "c d e e", "a e b", "d d a c"]
    pipe = make_pipeline(vectorizer, LatentDirichletAllocation(2, max_iter=3, random_state=0)).fit(texts)
    joblib.dump(pipe, tmp_path / name)
    (tmp_path / "docs.txt").write_text("\n".join(texts) + "\n")
    return tmp_path / name


def test_sklearn_ngram_vocabulary_is_refused_naming_the_file(tmp_path):
    from sklearn.feature_extraction.text import CountVectorizer

    p = _pipeline(tmp_path, CountVectorizer(ngram_range=(1, 2), token_pattern=r"\S+"), "bi.joblib")
    one_line_error(["diversity", p, "--allow-pickle"],
                   "bi.joblib: the pipeline's CountVectorizer makes word n-grams (ngram_range=(1, 2))")
    p = _pipeline(tmp_path, CountVectorizer(analyzer="char"), "ch.joblib")
    one_line_error(["diversity", p, "--allow-pickle"], "ch.joblib: ", "character n-grams (analyzer='char')")


def test_sklearn_lda_fitted_on_tfidf_is_read_with_a_warning(tmp_path):
    from sklearn.feature_extraction.text import CountVectorizer, TfidfVectorizer

    p = _pipeline(tmp_path, TfidfVectorizer(token_pattern=r"\S+"), "tfidf.joblib")
    code, _, err = run_cli(["diversity", p, "--allow-pickle", "--topn", "2"])
    assert code == 0 and "warning: " in err and "fitted to TF-IDF weights (TfidfVectorizer)" in err, err
    p = _pipeline(tmp_path, CountVectorizer(token_pattern=r"\S+"), "counts.joblib")
    code, _, err = run_cli(["diversity", p, "--allow-pickle", "--topn", "2"])
    assert code == 0 and "warning" not in err, err


# --- F27: a top-words file that is a MALLET keys file, a matrix, or has a blank line -------------

def test_topic_keys_file_as_top_words(tmp_path):
    keys = tmp_path / "keys.txt"
    keys.write_text("0\t0.5\ta b c \n1\t0.5\tc b a \n")  # MALLET writes a trailing space
    code, out, err = run_cli(["diversity", keys, "--topn", "3"])
    assert code == 0 and "0.5000" in out, (out, err)  # by hand: 3 unique words of 6


@pytest.mark.parametrize("text", ["0.5 0.3 0.2\n0.1 0.2 0.7\n", "0.5,0.3,0.2\n0.1,0.2,0.7\n"])
def test_numeric_matrix_as_top_words_is_refused(tmp_path, text):
    (tmp_path / "phi.csv").write_text(text)
    one_line_error(["diversity", tmp_path / "phi.csv", "--topn", "3"],
                   "phi.csv: holds only numbers (a topic-word matrix?)", "--model-format arrays")


def test_blank_line_between_topics_is_refused(tmp_path):
    (tmp_path / "tw.txt").write_text("a b c\n\nc b a\n")
    one_line_error(["diversity", tmp_path / "tw.txt", "--topn", "3"], "tw.txt:2: a blank line between topics")
    (tmp_path / "tw.txt").write_text("a b c\nc b a\n\n\n")  # at the end: ignored
    assert "0.5000" in run_cli(["diversity", tmp_path / "tw.txt", "--topn", "3"])[1]


# --- F32: tomotopy term weighting ---------------------------------------------------------------

def test_tomotopy_term_weighting_is_kept_and_warned(tmp_path):
    tp = pytest.importorskip("tomotopy")
    docs = ["a b c a", "b c d", "c d e e", "a e b", "d d a c"]
    for tw, name in ((tp.TermWeight.IDF, "idf"), (tp.TermWeight.ONE, "one")):
        mdl = tp.LDAModel(k=2, tw=tw, seed=1)
        for d in docs:
            mdl.add_doc(d.split())
        mdl.train(5, workers=1)
        assert tl.load_model(mdl).metadata["term_weighting"] == name
        mdl.save(str(tmp_path / f"{name}.bin"))
        code, _, err = run_cli(["diversity", tmp_path / f"{name}.bin", "--topn", "2"])
        assert code == 0, err
        assert ("trained with term weighting IDF" in err) == (name == "idf"), err
    assert "caveat" not in tl.load_model(tmp_path / "one.bin").metadata


# --- F36: compressed files and archives read as text ---------------------------------------------

def test_compressed_and_archive_files_are_named(tmp_path):
    (tmp_path / "d.txt.gz").write_bytes(gzip.compress(b"a b c\n"))
    save_npz(tmp_path / "m.npz", [[0.5, 0.3, 0.2], [0.1, 0.2, 0.7]], [0.5, 0.5], ["a", "b", "c"])
    one_line_error(["heldout", tmp_path / "m.npz", tmp_path / "d.txt.gz", "--method", "exact"],
                   "d.txt.gz: is gzip-compressed, not text", "zcat")
    one_line_error(["heldout", tmp_path / "m.npz", tmp_path / "m.npz", "--format", "text",
                    "--method", "exact"], "m.npz: is a zip archive (or a NumPy .npz), not text")
    (tmp_path / "ref.bz2").write_bytes(b"BZh91AY&SY" + bytes(20))
    with pytest.raises(InputFileError, match="ref.bz2: is bzip2-compressed"):
        list(read_lines(tmp_path / "ref.bz2", encoding="latin-1"))
    (tmp_path / "BZh.txt").write_text("BZh is a word here\n")  # 'BZh' alone starts text
    assert len(list(read_lines(tmp_path / "BZh.txt"))) == 1
