"""Red team 3, embeddings, IRBO and per-topic diagnostics (F1, F2, F3, F4, F8, F11-F15): each case
with a value computed by hand or an error checked, see docs/hostile_input.md."""

from __future__ import annotations

import argparse
import math
from pathlib import Path

import numpy as np
import pytest

import tealeaves as tl
from tealeaves.cli import main
from tealeaves.cli.paths import check_outputs
from tealeaves.coherence.embeddings import embedding_coherence, we_irbo
from tealeaves.coherence.rbo import irbo, rbo
from tealeaves.diagnostics import diagnostics
from tealeaves.errors import InputFileError, InvalidModelError, MethodError, TealeavesError, TooLargeError
from tealeaves.util.vectors import norms, unit_rows

R2 = math.sqrt(2)


def write_vectors(path: Path, vecs: dict[str, list[float]]) -> Path:
    dim = len(next(iter(vecs.values())))
    rows = "".join(f"{w} {' '.join(repr(x) for x in v)}\n" for w, v in vecs.items())
    path.write_text(f"{len(vecs)} {dim}\n{rows}", encoding="utf-8")
    return path


def write_state(path: Path, alpha: str, rows: list[str]) -> Path:
    path.write_text("#doc source pos typeindex type topic\n#alpha : " + alpha + "\n#beta : 0.01\n"
                    + "".join(r + "\n" for r in rows), encoding="utf-8")
    return path


# --- F13: every argument naming a file is an input ----------------------------------------------

def test_vector_file_and_training_corpus_are_never_overwritten(tmp_path, capsys):
    topics = tmp_path / "topics.txt"
    topics.write_text("a b\nc d\n", encoding="utf-8")
    vec = write_vectors(tmp_path / "v.txt", {"a": [1.0, 0.0], "b": [0.0, 1.0], "c": [1.0, 1.0],
                                             "d": [-1.0, 0.0]})
    corpus = tmp_path / "docs.txt"
    corpus.write_text("a b c d\nc d a\n", encoding="utf-8")
    before = vec.read_bytes(), corpus.read_bytes()
    for argv in (["embedding-coherence", str(topics), str(vec), "--topn", "2", "--json", str(vec)],
                 ["irbo", str(topics), "--topn", "2", "--vectors", str(vec), "--json", str(vec)],
                 ["irbo", str(topics), "--topn", "2", "--train-on", str(corpus), "--json", str(corpus)],
                 ["embedding-coherence", str(topics), "--topn", "2", "--train-on", str(corpus),
                  "--json", str(corpus)]):
        assert main(argv) == 2
        assert "is an input of this command; it would be overwritten" in capsys.readouterr().err
    assert (vec.read_bytes(), corpus.read_bytes()) == before


def test_any_argument_naming_an_existing_file_is_an_input(tmp_path):
    # an option no list names (as the vector file was): still an input
    f = tmp_path / "x.txt"
    f.write_text("data\n", encoding="utf-8")
    args = argparse.Namespace(command="anything", some_new_option=str(f), json=str(f))
    with pytest.raises(MethodError, match="is an input of this command"):
        check_outputs(args)
    check_outputs(argparse.Namespace(command="anything", some_new_option=str(f),
                                     json=str(tmp_path / "out.json")))


# --- F1: scale-safe norms ----------------------------------------------------------------------------

def test_norms_neither_overflow_nor_underflow():
    for scale in (1e200, 1.0, 1e-200):
        assert float(norms(np.array([3.0, 4.0]) * scale)) == pytest.approx(5 * scale, rel=1e-15)
        np.testing.assert_allclose(unit_rows(np.array([[3.0, 4.0]]) * scale), [[0.6, 0.8]], rtol=1e-15)
    assert np.isnan(unit_rows(np.zeros((1, 2)))).all()


@pytest.mark.parametrize("scale", [1e200, 1e-200, 1.0])
def test_embedding_coherence_of_huge_and_tiny_vectors(tmp_path, scale):
    # dog (1,0), cat (0,1), mouse -s(1,1): cosines dog.cat 0, dog.mouse = cat.mouse = -1/sqrt2
    vec = write_vectors(tmp_path / "v.vec", {"dog": [1.0, 0.0], "cat": [0.0, 1.0],
                                             "mouse": [-scale, -scale]})
    pair = embedding_coherence([["dog", "cat", "mouse"]], vec, "pairwise", topn=3)
    assert pair.per_topic[0] == pytest.approx((0 - 2 / R2) / 3, abs=1e-12)
    assert pair.missing == [[]]
    # centroid: the mean (1 - s, 1 - s)/3 points along -(1,1) for a huge s, along (1,1) for a tiny one
    # (the words' cosines with it: -1/sqrt2, -1/sqrt2, 1, or 1/sqrt2, 1/sqrt2, -1)
    cen = embedding_coherence([["dog", "cat", "mouse"]], vec, "centroid", topn=3).per_topic[0]
    if scale == 1.0:  # the mean (0, 0): no direction
        assert math.isnan(cen)
    else:
        sign = -1 if scale > 1 else 1
        assert cen == pytest.approx(sign * (2 / R2 - 1) / 3, abs=1e-12)


@pytest.mark.parametrize("scale", [1e300, 1e-300])
def test_we_irbo_and_octis_convention_do_not_depend_on_the_scale(scale):
    # the by-hand values of test_embeddings.py (vectors a, b, c, d there) at any scale
    vecs = {"a": [scale, 0.0], "b": [0.0, scale], "c": [scale, scale], "d": [-scale, 0.0]}
    assert we_irbo([["a", "b"], ["c", "d"]], vecs, 2, 0.5, "match").score == pytest.approx(1 - 0.6875)
    assert we_irbo([["a", "b"], ["c", "d"]], vecs, 2, 0.5, "centroid").score == pytest.approx(1 - 0.5625)
    # OCTIS: a/1, b/1, c/2 -> units a, b, (1,1)/sqrt2: pairwise (0 + 2/sqrt2) * 2 / (3 * 2)
    octis = embedding_coherence([["a", "b", "c"]], vecs, "pairwise", topn=3, convention="octis")
    assert octis.per_topic[0] == pytest.approx(2 * (2 / R2) / 6)


# --- F2: a tiny p -------------------------------------------------------------------------------------

def test_irbo_with_a_subnormal_p(capsys):
    # p -> 0: RBO is the agreement at depth 1
    assert irbo([["a", "b", "c"], ["b", "a", "d"]], topn=3, p=1e-320) == 1.0
    assert rbo("abc", "abd", p=1e-320) == pytest.approx(1.0)
    assert rbo("abc", "bac", 0.5) == pytest.approx(0.5)  # (.25 + .125) + .125, as before


def test_irbo_prints_p_as_given(tmp_path, capsys):
    topics = tmp_path / "t.txt"
    topics.write_text("a b\nc d\n", encoding="utf-8")
    assert main(["irbo", str(topics), "--topn", "2", "--p", "0.9999999999999999"]) == 0
    assert "p 0.9999999999999999)" in capsys.readouterr().out


# --- F15: --measure lists ---------------------------------------------------------------------------

@pytest.mark.parametrize(("measure", "message"), [(",", "--measure names no measure"),
                                                  (" ", "--measure names no measure"),
                                                  ("pairwise,pairwise", "names 'pairwise' twice")])
def test_measure_list_without_or_with_a_repeated_measure(tmp_path, capsys, measure, message):
    topics = tmp_path / "t.txt"
    topics.write_text("a b\nc d\n", encoding="utf-8")
    # the vector file does not exist: the list is refused before it is read
    assert main(["embedding-coherence", str(topics), str(tmp_path / "none.vec"), "--measure", measure]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err and len(err.strip().splitlines()) == 1


# --- F3: bundled names -------------------------------------------------------------------------------

def test_diagnostics_reads_a_bundled_model():
    corpus = tl.read_corpus("sotu:heldout")
    docs = [corpus[d] for d in range(4)]
    res = diagnostics("sotu:sotu-20-asym", docs, theta=np.full((4, 20), 1 / 20), topn=5)
    assert res.num_topics == 20 and res.params["documents"] == 4


def test_diagnostics_cli_bundled_model_without_documents_asks_for_them(capsys):
    assert main(["diagnostics", "sotu:sotu-20-asym"]) == 2
    err = capsys.readouterr().err
    assert "not a MALLET state file, so diagnostics need the documents" in err and "no such file" not in err


# --- F4, F8: the state file ----------------------------------------------------------------------------

def test_state_naming_a_word_twice_is_refused(tmp_path):
    p = write_state(tmp_path / "s.txt", "0.5 0.5", ["0 NA 0 0 apple 0", "0 NA 1 1 apple 1"])
    for read in (diagnostics, tl.load_model):
        with pytest.raises(InputFileError, match=r"s.txt:5: the word 'apple' is type 1 here but type 0"):
            read(p)


def test_alpha_whose_sum_overflows_is_refused(tmp_path):
    p = write_state(tmp_path / "s.txt", "1e308 1e308", ["0 NA 0 0 apple 0", "0 NA 1 1 b 1"])
    for read in (diagnostics, tl.load_model):
        with pytest.raises(InputFileError, match=r"s.txt:2: #alpha: alpha's values sum beyond"):
            read(p)
    with pytest.raises(InvalidModelError, match="sum beyond"):
        tl.TopicModel(np.full((2, 2), 0.5), alpha=[1e308, 1e308])


def test_state_alpha_cli_is_one_line_without_warnings(tmp_path, capsys):
    p = write_state(tmp_path / "s.txt", "1e308 1e308", ["0 NA 0 0 apple 0", "0 NA 1 1 b 1"])
    assert main(["diagnostics", str(p)]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "RuntimeWarning" not in err


# --- F11, F12: theta -----------------------------------------------------------------------------------

def example():
    model = tl.load_model(Path(tl.__file__).parent / "data" / "example_model.npz")
    corpus = tl.read_corpus(Path(tl.__file__).parent / "data" / "example_docs.txt", vocab=model.vocab)
    theta = np.random.default_rng(0).dirichlet(np.ones(model.num_topics), size=len(corpus))
    return model, corpus, theta


def test_theta_rows_must_be_proportions():
    model, corpus, theta = example()
    zero, inf = theta.copy(), theta.copy()
    zero[3] = 0
    inf[2, 1] = np.inf
    for bad, where in ((theta * 10, "document 0's"), (zero, "document 3's"), (inf, "document 2's")):
        with pytest.raises(MethodError, match=f"theta: {where} topic proportions are not a distribution"):
            diagnostics(model, corpus, theta=bad, topn=5)
    assert diagnostics(model, corpus, theta=theta, topn=5).num_topics == model.num_topics


@pytest.mark.parametrize("bad", ["abc", [[1, "x"]], [[1j, 0]]])
def test_theta_that_is_not_numbers_is_a_tealeaves_error(bad):
    model, corpus, _ = example()
    with pytest.raises(TealeavesError, match="theta must be a"):
        diagnostics(model, corpus, theta=bad, topn=5)


# --- F14: the size of the co-document counts ------------------------------------------------------------

def test_topn_sized_before_allocating(tmp_path, capsys):
    p = write_state(tmp_path / "s.txt", "0.5 0.5", ["0 NA 0 0 apple 0", "0 NA 1 1 b 1"])
    for topn in (100_000, 10**12):
        with pytest.raises(TooLargeError, match=f"top {topn:,} words needs about"):
            diagnostics(p, topn=topn)
    assert main(["diagnostics", str(p), "--topn", "100000"]) == 2
    err = capsys.readouterr().err
    assert "co-document counts" in err and len(err.strip().splitlines()) == 1
