"""Fuzzing (Hypothesis): every reader and every command's input files get random bytes, truncations
and mutations of valid files. Each must give a valid result or a one-line tealeaves error: never
another exception, a crash or a hang (each case runs under a time limit).

The CI budget is `FUZZ_EXAMPLES` cases per target (100 by default, derandomised so CI is
reproducible); a release runs `TEALEAVES_FUZZ_EXAMPLES=2000 TEALEAVES_FUZZ_RANDOM=1 pytest
tests/test_fuzz.py` (docs/development.md)."""

from __future__ import annotations

import contextlib
import gzip
import io
import json
import os
import sqlite3
import tempfile
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from limits import time_limit

import tealeaves as tl
from tealeaves.cli import main
from tealeaves.cli.tools import example_paths
from tealeaves.corpus import read_vocab_file
from tealeaves.files.records import read_csv, read_json, read_json_lines
from tealeaves.report import load_results

FUZZ_EXAMPLES = int(os.environ.get("TEALEAVES_FUZZ_EXAMPLES", "100"))
FUZZ = settings(
    max_examples=FUZZ_EXAMPLES,
    deadline=None,  # a hang is caught by the time limit below, not by timing each case
    derandomize=not os.environ.get("TEALEAVES_FUZZ_RANDOM"),
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    database=None,
)
LIMIT_S = 30




def _seeds() -> dict[str, bytes]:
    """One valid file of every kind a reader takes."""
    model_path, docs_path = example_paths()
    model = tl.load_model(model_path)
    out: dict[str, bytes] = {"npz": Path(model_path).read_bytes(), "docs": Path(docs_path).read_bytes()}
    with tempfile.TemporaryDirectory() as d:
        corpus = tl.read_corpus(docs_path, vocab=model.vocab)
        tl.save_corpus(corpus, Path(d) / "c.npz")
        out["corpus_npz"] = (Path(d) / "c.npz").read_bytes()
        # a fixed secret and fixed times make every seed file the same bytes on every run, so
        # that the derandomised cases are the same in CI as here
        tasks = tl.intrusion.word_tasks(model, seed=0, attention_checks=1, secret="0" * 32)
        tl.intrusion.write_tasks(tasks, Path(d) / "t.jsonl", Path(d) / "k.jsonl")
        tl.intrusion.write_tasks(tasks, Path(d) / "t.csv", Path(d) / "k.csv")
        for name in ("t.jsonl", "k.jsonl", "t.csv", "k.csv"):
            out[name] = (Path(d) / name).read_bytes()
        from tealeaves.annotate import open_store

        store = open_store(str(Path(d) / "a.sqlite"))
        store.install([t.public() for t in tasks])
        store.add_participant("a0", "0" * 64)
        store.answer("a0", tasks[0].item, tasks[0].options, 1, 100)
        store.engine.dispose()
        with contextlib.closing(sqlite3.connect(Path(d) / "a.sqlite")) as db:
            db.execute("UPDATE participants SET started_at = 1.0e9, code = '0123456789AB'")
            db.execute("UPDATE responses SET received_at = 1.0e9")
            db.commit()
            db.execute("PRAGMA journal_mode=DELETE")
            db.execute("VACUUM")
        out["db"] = (Path(d) / "a.sqlite").read_bytes()
    small = model.phi[:3, :8] / model.phi[:3, :8].sum(axis=1, keepdims=True)
    words = model.vocab[:8]
    state = ["#doc source pos typeindex type topic", "#alpha : 0.1 0.1 0.1", "#beta : 0.01"]
    state += [
        f"{d} doc{d} {i} {w} {words[w]} {(d + w) % 3}" for d in range(3) for i, w in enumerate(range(8))
    ]
    out["state"] = ("\n".join(state) + "\n").encode()
    out["weights"] = "".join(
        f"{t}\t{words[w]}\t{small[t, w] * 100:.4f}\n" for t in range(3) for w in range(8)
    ).encode()
    out["keys"] = "".join(f"{t}\t0.1\t{' '.join(words[:3])}\n" for t in range(3)).encode()
    out["doc_topics"] = "".join(f"{d}\tdoc{d}\t0.2\t0.3\t0.5\n" for d in range(4)).encode()
    out["ldavis"] = json.dumps(
        {
            "topic_term_dists": small.tolist(),
            "vocab": list(words),
            "doc_topic_dists": [[0.2, 0.3, 0.5]],
            "doc_lengths": [8],
            "term_frequency": [1] * 8,
        }
    ).encode()
    answers = [
        {"annotator": f"a{i % 3}", "item": t.item, "choice": (t.intruder + i) % 6}
        for i, t in enumerate(tasks)
    ]
    out["responses"] = "".join(json.dumps(r) + "\n" for r in answers).encode()
    out["responses_csv"] = (
        "annotator,item,choice\n" + "".join(f"{r['annotator']},{r['item']},{r['choice']}\n" for r in answers)
    ).encode()
    out["labels"] = b"".join(f"{i % 3}\n".encode() for i in range(20))
    theta = io.BytesIO()  # topic proportions of the 20 example documents
    np.save(theta, np.random.default_rng(0).dirichlet(np.ones(model.num_topics), size=20))
    out["theta"] = theta.getvalue()
    out["ids"] = b"".join(f"{i} {i + 1} {(7 * i) % 300}\n".encode() for i in range(20))
    out.update(_proxann_seeds(model, np.random.default_rng(0).dirichlet(np.ones(model.num_topics), size=20)))
    out["state_gz"] = gzip.compress(out["state"], mtime=0)  # the same bytes on every run
    out["docs_utf16"] = out["docs"].decode("utf-8").encode("utf-16")
    out["vocab"] = "".join(w + "\n" for w in model.vocab).encode()
    with tempfile.TemporaryDirectory() as d:
        assert main(["diversity", model_path, "--json", str(Path(d) / "r.json")]) == 0
        out["result_json"] = (Path(d) / "r.json").read_bytes()
    out["bertopic_pickle"] = (Path(__file__).parent / "fixtures" / "bertopic_sotu.pickle").read_bytes()
    arrays = io.BytesIO()  # a plain-arrays archive: topic-word matrix, words, alpha
    np.savez(arrays, topic_word=small, vocab=np.array(words), alpha=np.array(0.1))
    out["arrays_npz"] = arrays.getvalue()
    return out


def _proxann_seeds(model: tl.TopicModel, theta: np.ndarray) -> dict[str, bytes]:
    """A ProxAnn task set, its key and answers to it (JSON lines and CSV), the same bytes every run."""
    tasks = tl.proxann.proxann_tasks(model, theta, texts=[f"text {i}" for i in range(20)], n_exemplars=3,
                                     n_eval=4, instructed_check=True, secret="0" * 32)
    out = {"px_tasks": "".join(json.dumps(t.public()) + "\n" for t in tasks).encode(),
           "px_key": "".join(json.dumps(t.key()) + "\n" for t in tasks).encode()}
    rows = []
    for a in range(3):
        for t in tasks:
            ranked = [d["id"] for d in t.documents if d["rank"]]
            for d in t.documents:
                rows.append({"annotator": f"a{a}", "item": t.item, "document": d["id"],
                             "rating": 1 + (a + 1) % 5, "clarity": 3, "label": "law",
                             "rank": ranked.index(d["id"]) + 1 if d["rank"] else None})
    out["px_answers"] = "".join(json.dumps(r) + "\n" for r in rows).encode()
    fields = list(rows[0])
    out["px_answers_csv"] = (",".join(fields) + "\n" + "".join(
        ",".join("" if r[f] is None else str(r[f]) for f in fields) + "\n" for r in rows)).encode()
    return out


SEEDS = _seeds()


@st.composite
def variants(draw, seed: bytes) -> bytes:
    """Random bytes, a truncation of `seed`, or `seed` with a few bytes replaced, inserted or
    deleted (Hypothesis shrinks a failure to a small one)."""
    kind = draw(st.sampled_from(["random", "truncate", "mutate", "mutate"]))
    if kind == "random":
        return draw(st.binary(max_size=2048))
    if kind == "truncate":
        return seed[: draw(st.integers(0, max(len(seed) - 1, 0)))]
    data = bytearray(seed)
    for _ in range(draw(st.integers(1, 8))):
        if not data:
            break
        pos = draw(st.integers(0, len(data) - 1))
        op = draw(st.sampled_from(["replace", "insert", "delete"]))
        byte = draw(st.integers(0, 255))
        if op == "replace":
            data[pos] = byte
        elif op == "insert":
            data.insert(pos, byte)
        else:
            del data[pos]
    return bytes(data)


def _with_file(data: bytes, suffix: str, fn: Callable[[str], object]) -> object:
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "input" + suffix)
        with open(path, "wb") as fh:
            fh.write(data)
        with time_limit(LIMIT_S):
            return fn(path)


def _valid_model(m) -> None:
    assert isinstance(m, tl.TopicModel)
    assert np.all(np.isfinite(m.phi)) and np.allclose(m.phi.sum(axis=1), 1) and np.all(m.alpha > 0)


def _reader_ok(data: bytes, suffix: str, read: Callable[[str], object], check=None) -> None:
    try:
        result = _with_file(data, suffix, read)
    except tl.TealeavesError as exc:
        assert "\n" not in str(exc).strip(), str(exc)
        return
    if check:
        check(result)


def _app_tasks(path: str) -> list:
    """A task file read and checked as `annotate serve` installs it."""
    from tealeaves.annotate.taskset import check_task_set, read_task_set

    tasks = read_task_set(path)
    check_task_set(tasks, path)
    return tasks


def _weights_with_keys(keys: str) -> tl.TopicModel:
    """A MALLET topic-word weights file (good) whose alpha comes from the (fuzzed) keys file."""
    weights = os.path.join(os.path.dirname(keys), "weights.txt")
    Path(weights).write_bytes(SEEDS["weights"])
    return tl.load_model(weights, format="mallet-weights", alpha=keys)


READERS = {
    "npz model": ("npz", ".npz", lambda p: tl.load_model(p), _valid_model),
    "npz model, detected": ("npz", ".bin", lambda p: tl.load_model(p), _valid_model),
    "MALLET state": ("state", ".txt", lambda p: tl.load_model(p, format="mallet-state"), _valid_model),
    "MALLET state, detected": ("state", "", lambda p: tl.load_model(p), _valid_model),
    "MALLET weights": (
        "weights",
        ".txt",
        lambda p: tl.load_model(p, format="mallet-weights", alpha=0.1),
        _valid_model,
    ),
    "MALLET topic keys": ("keys", ".txt", tl.io.read_topic_keys, None),
    "MALLET doc-topics": ("doc_topics", ".txt", tl.io.read_doc_topics, None),
    "MALLET topic keys as the weights' alpha": ("keys", ".txt", _weights_with_keys, _valid_model),
    "word-id documents": ("ids", ".txt", lambda p: tl.read_corpus(p, format="ids"), None),
    "pyLDAvis": ("ldavis", ".json", lambda p: tl.load_model(p, format="pyldavis", alpha=0.1), _valid_model),
    "text corpus": ("docs", ".txt", tl.read_corpus, None),
    "text corpus, UTF-16": ("docs_utf16", ".txt", lambda p: tl.read_corpus(p, encoding="utf-16"), None),
    "MALLET state, gzip": ("state_gz", ".gz", lambda p: tl.load_model(p, format="mallet-state"),
                           _valid_model),
    "vocabulary file": ("vocab", ".txt", read_vocab_file, None),
    "result JSON for the report": ("result_json", ".json", lambda p: load_results([p]), None),
    "npz corpus": ("corpus_npz", ".npz", tl.read_corpus, None),
    "tasks JSONL": ("t.jsonl", ".jsonl", tl.intrusion.read_tasks, None),
    "tasks CSV": ("t.csv", ".csv", tl.intrusion.read_tasks, None),
    "key JSONL": ("k.jsonl", ".jsonl", tl.intrusion.read_key, None),
    "key CSV": ("k.csv", ".csv", tl.intrusion.read_key, None),
    "tasks JSONL, checked for the app": ("t.jsonl", ".jsonl", lambda p: _app_tasks(p), None),
    "tasks CSV, checked for the app": ("t.csv", ".csv", lambda p: _app_tasks(p), None),
    "ProxAnn tasks, checked for the app": ("px_tasks", ".jsonl", lambda p: _app_tasks(p), None),
    "ProxAnn key": ("px_key", ".jsonl", tl.proxann.read_key, None),
    "ProxAnn answers JSONL": ("px_answers", ".jsonl", tl.proxann.read_responses, None),
    "ProxAnn answers CSV": ("px_answers_csv", ".csv", tl.proxann.read_responses, None),
    "responses JSONL": ("responses", ".jsonl", tl.intrusion.read_responses, None),
    "responses CSV": ("responses_csv", ".csv", tl.intrusion.read_responses, None),
    "JSON": ("result_json", ".json", read_json, None),
    "JSON lines": ("responses", ".jsonl", read_json_lines, None),
    "CSV": ("responses_csv", ".csv", read_csv, None),
    "BERTopic pickle, read as data": ("bertopic_pickle", ".pickle",
                                      lambda p: tl.load_topics(p, format="bertopic-pickle"), None),
    "plain-arrays archive": ("arrays_npz", ".npz", lambda p: tl.load_topics(p, format="arrays"), None),
}


@pytest.mark.parametrize("name", list(READERS))
def test_reader(name):
    seed_name, suffix, read, check = READERS[name]

    @FUZZ
    @given(data=variants(SEEDS[seed_name]))
    def run(data):
        _reader_ok(data, suffix, read, check)

    run()


def test_scoring_fuzzed_responses():
    """A fuzzed responses file scored against a good key: scores or a one-line error."""
    with tempfile.TemporaryDirectory() as d:
        key = os.path.join(d, "key.jsonl")
        Path(key).write_bytes(SEEDS["k.jsonl"])

        @FUZZ
        @given(data=variants(SEEDS["responses"]))
        def run(data):
            _reader_ok(data, ".jsonl", lambda p: tl.intrusion.score(key, p, bootstrap=10))

        run()


def test_scoring_fuzzed_proxann_answers():
    """Fuzzed ProxAnn answers scored against a good key: scores or a one-line error."""
    with tempfile.TemporaryDirectory() as d:
        key = os.path.join(d, "key.jsonl")
        Path(key).write_bytes(SEEDS["px_key"])

        @FUZZ
        @given(data=variants(SEEDS["px_answers"]))
        def run(data):
            _reader_ok(data, ".jsonl", lambda p: tl.proxann.score_proxann(key, p, bootstrap=10))

        run()


def test_app_study_from_fuzzed_exports():
    """A study the meta-evaluation reads from the app's export and key (`metaeval --responses
    --key`), either fuzzed, then the agreement of a score with it: a result or a one-line error."""
    from tealeaves.metaeval import agreement, people_side
    from tealeaves.metaeval.appstudy import app_study

    def study_and_agreement(export: str, key: str) -> None:
        study = app_study(export, key)
        people, quality = people_side(study)
        score = np.arange(people.n_topics, dtype=float)
        agreement({"s": score}, people, quality=quality, bootstrap=10, splits=5)

    with tempfile.TemporaryDirectory() as d:
        px_key, px_export = os.path.join(d, "key.jsonl"), os.path.join(d, "answers.csv")
        Path(px_key).write_bytes(SEEDS["px_key"])
        Path(px_export).write_bytes(SEEDS["px_answers_csv"])
        word_key = os.path.join(d, "k.jsonl")
        Path(word_key).write_bytes(SEEDS["k.jsonl"])

        @FUZZ
        @given(data=variants(SEEDS["px_answers_csv"]), key=variants(SEEDS["px_key"]),
               words=variants(SEEDS["responses"]), which=st.integers(0, 2))
        def run(data, key, words, which):
            if which == 0:
                _reader_ok(data, ".csv", lambda p: study_and_agreement(p, px_key))
            elif which == 1:
                _reader_ok(key, ".jsonl", lambda p: study_and_agreement(px_export, p))
            else:
                _reader_ok(words, ".jsonl", lambda p: study_and_agreement(p, word_key))

        run()


def _cli_ok(argv: list[str]) -> None:
    out, err = io.StringIO(), io.StringIO()
    with time_limit(LIMIT_S), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv)
    text = err.getvalue()
    assert code in (0, 2), (code, text)
    assert "Traceback" not in text
    assert all(line.startswith("tealeaves: ") for line in text.strip().splitlines()), text
    if code == 2:
        assert sum(line.startswith("tealeaves: error: ") for line in text.splitlines()) == 1, text


CLI = {
    # command (FUZZED is the fuzzed file, MODEL and DOCS good ones), seed, suffix
    "model for diversity": (["diversity", "FUZZED"], "npz", ".npz"),
    "state for diversity": (["diversity", "FUZZED", "--model-format", "mallet-state"], "state", ".gz"),
    "documents for heldout": (
        ["heldout", "MODEL", "FUZZED", "--method", "is-prior-theta", "--samples", "20"],
        "docs",
        ".txt",
    ),
    "npz documents for heldout": (
        ["heldout", "MODEL", "FUZZED", "--method", "is-prior-theta", "--samples", "20"],
        "corpus_npz",
        ".npz",
    ),
    "reference for coherence": (["coherence", "MODEL", "FUZZED"], "docs", ".txt"),
    "responses for intrusion score": (
        ["intrusion", "score", "KEY", "FUZZED", "--bootstrap", "10"],
        "responses",
        ".jsonl",
    ),
    "CSV responses for intrusion score": (
        ["intrusion", "score", "KEY", "FUZZED", "--bootstrap", "10"],
        "responses_csv",
        ".csv",
    ),
    "key for intrusion score": (
        ["intrusion", "score", "FUZZED", "RESPONSES", "--bootstrap", "10"],
        "k.jsonl",
        ".jsonl",
    ),
    "labels for bcubed": (["bcubed", "FUZZED", "LABELS"], "labels", ".txt"),
    "doc-topic matrix for bcubed": (["bcubed", "FUZZED", "LABELS"], "theta", ".npy"),
    "theta for intrusion topics": (
        ["intrusion", "topics", "MODEL", "DOCS", "--theta", "FUZZED", "-o", "OUTJSONL", "--key", "OUTKEY"],
        "theta",
        ".npy",
    ),
    "CSV key for intrusion score": (
        ["intrusion", "score", "FUZZED", "RESPONSES", "--bootstrap", "10"],
        "k.csv",
        ".csv",
    ),
    "result for report": (["report", "FUZZED", "-o", "OUT"], "result_json", ".json"),
    "key for intrusion auto": (["intrusion", "auto", "FUZZED", "DOCS"], "k.jsonl", ".jsonl"),
    "database for annotate export": (
        ["annotate", "export", "--db", "FUZZED", "-o", "OUTCSV"],
        "db",
        ".sqlite",
    ),
}


@pytest.mark.parametrize("name", list(CLI))
def test_cli_input(name):
    argv, seed_name, suffix = CLI[name]
    model_path, docs_path = example_paths()
    with tempfile.TemporaryDirectory() as d:
        files = {
            "MODEL": model_path,
            "DOCS": docs_path,
            "KEY": os.path.join(d, "key.jsonl"),
            "RESPONSES": os.path.join(d, "responses.jsonl"),
            "LABELS": os.path.join(d, "labels.txt"),
            "OUT": os.path.join(d, "out.html"),
            "OUTCSV": os.path.join(d, "out.csv"),
            "OUTJSONL": os.path.join(d, "out.jsonl"),
            "OUTKEY": os.path.join(d, "out_key.jsonl"),
        }
        Path(files["KEY"]).write_bytes(SEEDS["k.jsonl"])
        Path(files["RESPONSES"]).write_bytes(SEEDS["responses"])
        Path(files["LABELS"]).write_bytes(SEEDS["labels"])

        @FUZZ
        @given(data=variants(SEEDS[seed_name]))
        def run(data):
            fuzzed = os.path.join(d, "fuzzed" + suffix)
            Path(fuzzed).write_bytes(data)
            _cli_ok([files.get(a, fuzzed if a == "FUZZED" else a) for a in argv])

        run()


@settings(
    max_examples=max(3, FUZZ_EXAMPLES // 8),
    deadline=None,
    database=None,
    derandomize=not os.environ.get("TEALEAVES_FUZZ_RANDOM"),
)
@given(data=st.binary(min_size=0, max_size=512))
def test_tomotopy_loader_never_takes_the_process_down(data):
    """tomotopy's native loader runs in a child process: whatever the bytes, a model or a one-line
    error, in time (the child is stopped after 5 s here)."""

    def load(p):
        return tl.load_model(p, format="tomotopy", timeout=5)

    _reader_ok(b"LDA\x00" + data, ".bin", load, _valid_model)
