"""Issue 20, points 1, 5 and 9: a model without a vocabulary never scores text (the reader's
made-up word ids are refused where documents meet a model); `--vocab FILE` gives it its words;
`--encoding` takes only text encodings and UTF-16 without a byte-order mark is a one-line error;
`--plot` is checked before any work; `tealeaves report` checks the shape of every result file
(each field of each real result, mutated, gets a one-line error naming the file and the field);
input words echoed in messages are cut."""

from __future__ import annotations

import copy
import json

import numpy as np
import pytest

import tealeaves as tl
from tealeaves.cli import main
from tealeaves.errors import shorten, shown

WORDS = [f"w{c}{d}" for c in "abcdefghij" for d in range(6)]  # 60 words, none a prefix of another


def _err(capsys, argv: list[str]) -> str:
    """Run the CLI, expect exit status 2 and return its one-line error."""
    assert main([str(a) for a in argv]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("tealeaves: error: ") and "\n" not in err and "Traceback" not in err, err
    return err


def _total(capsys, argv: list[str]) -> float:
    assert main([str(a) for a in argv]) == 0, capsys.readouterr().err
    capsys.readouterr()
    return json.loads(open(argv[argv.index("--json") + 1]).read())["results"][0]["total"]


@pytest.fixture(scope="module")
def sklearn_files(tmp_path_factory):
    """An LDA fitted by scikit-learn on a CountVectorizer corpus, saved with joblib without the
    vectorizer, its vocabulary file, and held-out text."""
    joblib = pytest.importorskip("joblib")
    pytest.importorskip("sklearn")
    from sklearn.decomposition import LatentDirichletAllocation
    from sklearn.feature_extraction.text import CountVectorizer

    d = tmp_path_factory.mktemp("sk")
    rng = np.random.default_rng(0)
    docs = [" ".join(rng.choice(WORDS[:30] if i % 2 else WORDS[30:], 25)) for i in range(60)]
    vec = CountVectorizer(token_pattern=r"\S+")
    lda = LatentDirichletAllocation(n_components=3, random_state=0).fit(vec.fit_transform(docs[:40]))
    joblib.dump(lda, d / "bare.joblib")
    (d / "vocab.txt").write_text("\n".join(vec.get_feature_names_out()) + "\n")
    (d / "held.txt").write_text("\n".join(docs[40:]) + "\n")
    full = tl.load_model(lda, vocab=vec)
    tl.save_model(full, d / "full.npz")
    return d, lda, vec, full


def test_sklearn_model_without_vocabulary_refuses_text_and_vocab_fixes_it(capsys, sklearn_files):
    d, lda, vec, full = sklearn_files
    assert main(["convert", str(d / "bare.joblib"), str(d / "bare.npz"), "--allow-pickle"]) == 0
    assert "without a vocabulary" in capsys.readouterr().out
    bare = tl.load_model(d / "bare.npz")
    assert bare.vocab is None
    for argv in (["heldout", d / "bare.npz", d / "held.txt"],
                 ["evaluate", d / "bare.npz", "--heldout", d / "held.txt"],
                 ["completion", d / "bare.npz", d / "held.txt"],
                 ["compare", d / "bare.npz", d / "bare.npz", d / "held.txt"],
                 ["curve", d / "bare.npz", d / "held.txt"],
                 ["predictive", d / "bare.npz", d / "held.txt"],
                 ["csl", d / "bare.npz", d / "held.txt"]):
        err = _err(capsys, argv)
        assert "has no vocabulary" in err and "--vocab FILE" in err and "convert" in err, err
    for argv in (["coherence", d / "bare.npz", d / "held.txt"],
                 ["intrusion", "words", d / "bare.npz", "-o", d / "t.jsonl", "--key", d / "k.jsonl"]):
        assert "has no vocabulary" in _err(capsys, argv)
    # the same model given its words (by --vocab, by convert --vocab) agrees with the model built
    # with its vectorizer, to the last digit (same seed)
    common = ["--method", "left-to-right", "--particles", "10", "--quiet"]
    ref = _total(capsys, ["heldout", d / "full.npz", d / "held.txt", *common, "--json", d / "a.json"])
    given = _total(capsys, ["heldout", d / "bare.npz", d / "held.txt", "--vocab", d / "vocab.txt", *common,
                            "--json", d / "b.json"])
    assert main(["convert", str(d / "bare.joblib"), str(d / "conv.npz"), "--allow-pickle", "--vocab",
                 str(d / "vocab.txt")]) == 0
    assert "with its vocabulary" in capsys.readouterr().out
    converted = _total(capsys, ["heldout", d / "conv.npz", d / "held.txt", *common, "--json", d / "c.json"])
    assert ref == given == converted
    assert main(["evaluate", str(d / "bare.npz"), "--heldout", str(d / "held.txt"), "--vocab",
                 str(d / "vocab.txt"), "--runs", "1", "--particles", "5", "--quiet"]) == 0
    capsys.readouterr()
    # Python: vocab= takes the vectorizer, a word list or the file
    for v in (vec, list(vec.get_feature_names_out()), d / "vocab.txt"):
        assert tl.load_model(d / "bare.npz", vocab=v).vocab == full.vocab


def test_python_api_refuses_text_read_without_the_models_vocabulary(sklearn_files):
    d, _, _, full = sklearn_files
    bare = tl.load_model(d / "bare.npz")
    text = tl.read_corpus(d / "held.txt")  # no vocab: the reader numbers the words itself
    assert text.built_vocab and text.subset([0, 1]).built_vocab
    with pytest.raises(tl.TealeavesError, match="text documents cannot be scored by model"):
        tl.heldout(bare, text)
    with pytest.raises(tl.TealeavesError, match="were read without model 'sklearn'"):
        tl.heldout(full, text)  # a model with words: read the text with them
    with pytest.raises(tl.TealeavesError, match="text documents cannot be scored"):
        tl.evaluate([bare], heldout=d / "held.txt")
    # word ids are fine without words; ids beyond the model's words stay an error naming them
    ids = tl.read_corpus(d / "held.txt", vocab=full.vocab)
    plain = tl.Corpus(ids.words, ids.offsets)
    assert tl.heldout(bare, plain, particles=5).total == tl.heldout(full, ids, particles=5).total
    (d / "ids.txt").write_text("0 1 2\n3 60 4\n")
    with pytest.raises(tl.TealeavesError, match="document 1 has word id 60 but the model has 60 words"):
        tl.heldout(bare, tl.read_corpus(d / "ids.txt", format="ids"))
    other = tl.Corpus(ids.words, ids.offsets, vocab=tuple(full.vocab) + ("extra",))
    with pytest.raises(tl.TealeavesError, match="61 words but model 'sklearn' has 60"):
        tl.heldout(bare, other)


def test_vocab_file_is_strict_and_checked_against_a_model_that_has_words(capsys, sklearn_files, tmp_path):
    d, _, _, full = sklearn_files
    words = (d / "vocab.txt").read_text().split("\n")
    (tmp_path / "gap.txt").write_text("\n".join(words[:5] + [""] + words[5:]))
    (tmp_path / "two.txt").write_text("a b\n" + "\n".join(words[1:]))
    (tmp_path / "short.txt").write_text("\n".join(words[:10]))
    (tmp_path / "swapped.txt").write_text("\n".join([words[1], words[0], *words[2:]]))
    for name, expect in (("gap", r"gap.txt:6: expected one word per line"),
                         ("two", r"two.txt:1: expected one word per line"),
                         ("short", "has 10 words but model 'sklearn' has 60"),
                         ("swapped", "does not match")):
        model = d / ("full.npz" if name == "swapped" else "bare.npz")
        err = _err(capsys, ["heldout", model, d / "held.txt", "--vocab", tmp_path / f"{name}.txt"])
        assert expect in err.replace("vocabulary ", ""), err


@pytest.mark.parametrize("codec", ["rot13", "hex", "base64", "zlib_codec", "uu", "bz2", "undefined",
                                   "no-such-codec", ""])
def test_encodings_that_are_not_text_encodings_are_refused_up_front(capsys, codec, example):
    _, _, model_path, docs_path = example
    err = _err(capsys, ["heldout", model_path, docs_path, "--encoding", codec])
    assert "--encoding" in err and ("not a text encoding" in err or "unknown text encoding" in err)
    with pytest.raises(tl.TealeavesError, match="not a text encoding|unknown text encoding"):
        tl.read_corpus(docs_path, encoding=codec)
    for argv in (["coherence", model_path, docs_path], ["evaluate", model_path, "--heldout", docs_path],
                 ["predictive", model_path, docs_path], ["select", docs_path],
                 ["intrusion", "auto", model_path, docs_path]):
        err = _err(capsys, [*argv, "--encoding", codec])
        assert "not a text encoding" in err or "unknown text encoding" in err, err


def test_utf16_without_a_byte_order_mark(capsys, tmp_path, example):
    model, docs, model_path, docs_path = example
    text = open(docs_path, encoding="utf-8").read()
    (tmp_path / "le.txt").write_bytes(text.encode("utf-16-le"))
    (tmp_path / "be.txt").write_bytes(text.encode("utf-16-be"))
    (tmp_path / "bom.txt").write_bytes(text.encode("utf-16"))
    for name in ("le", "be"):
        err = _err(capsys, ["heldout", model_path, tmp_path / f"{name}.txt", "--encoding", "utf-16"])
        assert "byte-order mark" in err and "utf-16-le or utf-16-be" in err
        assert "byte-order mark" in _err(capsys, ["coherence", model_path, tmp_path / f"{name}.txt",
                                                  "--encoding", "utf-16"])
    # naming the byte order decodes it; a BOM is read with plain utf-16 (and dropped by -le too)
    for name, enc in (("le", "utf-16-le"), ("be", "utf-16-be"), ("bom", "utf-16"), ("bom", "utf-16-le")):
        c = tl.read_corpus(tmp_path / f"{name}.txt", vocab=model.vocab, encoding=enc)
        assert np.array_equal(c.words, docs.words) and c.oov_tokens == 0, (name, enc)
    (tmp_path / "bom8.txt").write_text(text, encoding="utf-8-sig")
    c = tl.read_corpus(tmp_path / "bom8.txt", vocab=model.vocab)
    assert np.array_equal(c.words, docs.words) and c.oov_tokens == 0


@pytest.mark.parametrize("plot", ["scores.txt", "scores", "scores.html", "scores.png.bak"])
def test_plot_path_checked_before_any_work(capsys, tmp_path, plot):
    pytest.importorskip("matplotlib")
    key = tmp_path / "no-key.jsonl"  # never read: the plot path fails first
    err = _err(capsys, ["intrusion", "score", key, tmp_path / "r.jsonl", "--plot", tmp_path / plot])
    assert "matplotlib writes" in err and ".png" in err
    assert not (tmp_path / plot).exists()


def test_long_words_are_cut_in_messages(capsys, tmp_path, example):
    model, _, model_path, _ = example
    huge = "x" * 1_000_000
    assert shorten(huge) == "x" * 40 + "… (1,000,000 characters)" and shorten("short") == "short"
    assert shown(huge).startswith("'" + "x" * 40 + "'…") and shown("ab") == "'ab'"
    doc = " ".join(model.vocab[:5])
    (tmp_path / "d.txt").write_text(f"{doc} {huge}\n{doc}\n")
    assert main(["heldout", model_path, str(tmp_path / "d.txt"), "--particles", "2", "--quiet",
                 "--json", str(tmp_path / "o.json")]) == 0
    out = capsys.readouterr().out
    assert "most frequent dropped words: " + "x" * 40 + "… (1,000,000 characters) x1" in out
    assert len(out) < 5000
    dropped = json.loads((tmp_path / "o.json").read_text())["results"][0]["corpus"]["oov_top_words"]
    assert max(len(k) for k in dropped) < 100
    (tmp_path / "ids.txt").write_text(f"{huge} 1 2\n")
    for argv in (["heldout", model_path, tmp_path / "d.txt", "--strict"],
                 ["heldout", model_path, tmp_path / "ids.txt", "--format", "ids"]):
        err = _err(capsys, argv)
        assert "1,000,000 characters" in err and len(err) < 400
    (tmp_path / "v.txt").write_text("\n".join([huge, *model.vocab[1:]]))
    err = _err(capsys, ["heldout", model_path, tmp_path / "d.txt", "--vocab", tmp_path / "v.txt"])
    assert "1,000,000 characters" in err and len(err) < 400
    with pytest.raises(tl.TealeavesError) as info:
        tl.TopicModel(model.phi, model.alpha, vocab=[huge, huge, *model.vocab[2:]])
    assert len(str(info.value)) < 200


# ----------------------------------------------------------------------------------- the report


@pytest.fixture(scope="module")
def results(tmp_path_factory, example):
    """A real JSON result of every kind the report draws (one per command, plus demo sections)."""
    _, _, m, docs = example
    d = tmp_path_factory.mktemp("results")
    j = {k: d / f"{k}.json" for k in ("heldout", "completion", "compare", "curve", "coherence", "diversity",
                                       "bcubed", "predictive", "score", "auto", "csl", "evaluate")}
    runs = [["heldout", m, docs, "--methods", "left-to-right,chib", "--runs", "2", "--check", "1",
             "--check-temperatures", "20", "--particles", "5"],
            ["completion", m, docs, "--particles", "5"],
            ["compare", m, m, docs, "--temperatures", "10", "--start-temperatures", "10",
             "--bootstrap", "50"],
            ["curve", m, m, docs, "--temperatures", "5", "--first-temperatures", "10", "--bootstrap", "50"],
            ["coherence", m, docs], ["diversity", m], ["predictive", m, docs, "--samples", "10"],
            ["csl", m, docs, "--samples", "20", "--chains", "2"],
            ["evaluate", m, m, "--heldout", docs, "--reference", docs, "--particles", "5", "--runs", "1",
             "--compare", "difference"]]
    for argv in runs:
        assert main([str(a) for a in [*argv, "--json", j[argv[0]]]]) == 0
    (d / "a.txt").write_text("1\n1\n2\n2\n")
    (d / "b.txt").write_text("x\nx\nx\ny\n")
    assert main(["bcubed", str(d / "a.txt"), str(d / "b.txt"), "--json", str(j["bcubed"])]) == 0
    assert main(["intrusion", "words", m, "-o", str(d / "t.jsonl"), "--key", str(d / "k.jsonl")]) == 0
    key = tl.intrusion.read_key(d / "k.jsonl")
    with open(d / "r.jsonl", "w") as fh:
        for a in range(3):
            for k in key:
                row = {"annotator": f"a{a}", "item": k["item"], "choice": (k["intruder"] + a) % 6}
                fh.write(json.dumps(row) + "\n")
    assert main(["intrusion", "score", str(d / "k.jsonl"), str(d / "r.jsonl"), "--json",
                 str(j["score"])]) == 0
    assert main(["intrusion", "auto", str(d / "k.jsonl"), docs, "--json", str(j["auto"])]) == 0
    out = {k: json.loads(p.read_text()) for k, p in j.items()}
    tasks = [json.loads(line) for line in open(d / "t.jsonl")][:3]
    out["sections"] = {"command": "demo", "sections": [
        {"task": "text", "title": "A note", "text": "words"},
        {"task": "intrusion-tasks", "tasks": tasks}]}
    out["select"] = {"command": "select", "topics": [2, 4], "restarts": 1,
                     "per_k": {"log-lik/token": {"mean": [-5.1, -5.0], "sd": [0.1, None]}},
                     "params": {"documents": 10, "trainer": "tomotopy"},
                     "choice": {"log-lik/token": {"k": 4, "runner_up": 2, "significant": False, "why": "x"}}}
    return d, out


def test_every_real_result_feeds_the_report(results, capsys):
    d, docs = results
    for name, doc in docs.items():
        p = d / f"real-{name}.json"
        p.write_text(json.dumps(doc))
        assert main(["report", str(p), "-o", str(d / f"real-{name}.html")]) == 0, capsys.readouterr().err
    capsys.readouterr()


def _paths(v, path=()):
    """Every (path, value) inside a JSON value."""
    yield path, v
    if isinstance(v, dict):
        for k, x in v.items():
            yield from _paths(x, (*path, k))
    elif isinstance(v, list):
        for i, x in enumerate(v[:2]):  # the first two items of each list stand for the rest
            yield from _paths(x, (*path, i))


def _set(doc, path, value):
    out = copy.deepcopy(doc)
    target = out
    for k in path[:-1]:
        target = target[k]
    if value is _DELETE:
        del target[path[-1]]
    else:
        target[path[-1]] = value
    return out


_DELETE = object()
MUTATIONS = ["text", 3.5, -1e308, True, None, [], [1, "a"], {}, {"x": 1}, _DELETE]


def test_report_of_mutated_results_is_a_one_line_error_or_a_report(results, tmp_path):
    """Each field of each real result, in turn, replaced by a value of another type (or deleted):
    the report is written or refused with one line naming the file; never a traceback."""
    from tealeaves.report import write_report

    _, docs = results
    p = tmp_path / "forged.json"
    refused = tried = 0
    for name, doc in docs.items():
        for path, value in list(_paths(doc)):
            if not path:
                continue
            for new in MUTATIONS:
                if type(new) is type(value) and new != -1e308:  # another type (or an extreme number)
                    continue
                if new is _DELETE and isinstance(path[-1], int):
                    continue
                p.write_text(json.dumps(_set(doc, path, new)))
                tried += 1
                try:  # what `tealeaves report` runs (any other exception fails the test)
                    write_report([p], tmp_path / "f.html")
                except tl.TealeavesError as exc:
                    refused += 1
                    assert str(exc).startswith(f"{p}: ") and "\n" not in str(exc), (name, path, exc)
    assert tried > 3000 and refused > tried // 4, (tried, refused)


@pytest.mark.parametrize("forged,field", [
    ({"command": "heldout"}, "results is missing"),
    ({"command": "heldout", "results": {"a": 1}}, "field results: expected a list"),
    ({"command": "heldout", "results": [{"label": "x"}]}, "field results[0].method is missing"),
    ({"command": "curve", "models": ["a"], "totals": [1.0, 2.0], "sd": [0.1], "per_token": [1.0]},
     "differ in length"),
    ({"command": "evaluate", "rows": "abc"}, "field rows: expected a list"),
    ({"command": "intrusion-auto", "summary": {}, "items": [{"options": ["a"], "predicted": 5,
                                                             "intruder": 0, "correct": True}]},
     "items[0].predicted: expected a position"),
    ({"command": "select", "topics": ["2"], "per_k": {}}, "field topics[0]: expected a number"),
    ({"command": "nonsense"}, "kind 'nonsense'"),
    ({"command": ["heldout"]}, "kind ['heldout']"),
    ({"sections": "x"}, "field sections: expected a list"),
    ([1, 2], "expected a JSON object, got a list"),
])
def test_report_names_the_file_and_field(forged, field, tmp_path, capsys):
    p = tmp_path / "r.json"
    p.write_text(json.dumps(forged))
    err = _err(capsys, ["report", p, "-o", tmp_path / "x.html"])
    assert f"{p}: " in err and field in err, err
    assert not (tmp_path / "x.html").exists()
    err = _err(capsys, ["report", p, "-o", tmp_path / "x.html", "--figures", tmp_path / "figs"])
    assert field in err
