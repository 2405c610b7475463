"""The hostile-input catalogue (docs/hostile_input.md) kept true: every `catalogue` row is run as
written and must give its message in one line with status 2 (or be accepted, where the row says
so); every other row names a test that exists. Plus the cases that need more than one command."""

from __future__ import annotations

import contextlib
import csv as csv_module  # `csv` names a response file's text below
import io
import json
import os
import re
import shlex
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from limits import time_limit

import tealeaves as tl
from tealeaves.cli import main
from tealeaves.cli.tools import example_paths

DOC = Path(__file__).resolve().parent.parent / "docs" / "hostile_input.md"


def catalogue() -> list[dict[str, str]]:
    """The rows of every table in the catalogue: case, input, gets, test."""
    rows = []
    for line in DOC.read_text(encoding="utf-8").splitlines():
        cells = [c.strip() for c in re.split(r"(?<!\\)\|", line)[1:-1]]
        if len(cells) == 4 and cells[0] not in ("Case", "---"):
            rows.append(dict(zip(("case", "input", "gets", "test"), cells, strict=True)))
    return rows


ROWS = catalogue()
RUN = [r for r in ROWS if r["test"] == "`catalogue`"]




def _npz(path: Path, **change) -> None:
    model_path, _ = example_paths()
    arrays = dict(np.load(model_path, allow_pickle=False))
    arrays.update(change)
    np.savez(path, **arrays)


@pytest.fixture(scope="module")
def folder(tmp_path_factory) -> Path:
    """Every file the catalogue's commands name."""
    d = tmp_path_factory.mktemp("hostile")
    model_path, docs_path = example_paths()
    model = tl.load_model(model_path)
    (d / "model.npz").write_bytes(Path(model_path).read_bytes())
    (d / "docs.txt").write_text(Path(docs_path).read_text(encoding="utf-8"), encoding="utf-8")
    _npz(d / "beta_vector.npz", beta=np.array([0.1, 0.2]))
    _npz(d / "metadata_list.npz", metadata=np.array(json.dumps([1, 2])))
    _npz(d / "metadata_deep.npz", metadata=np.array("[" * 10_000 + "]" * 10_000))
    _npz(d / "complex_phi.npz", phi=model.phi.astype(complex) * (1 + 1j))
    _npz(d / "vocab_numbers.npz", vocab=np.arange(model.num_words))
    data = Path(model_path).read_bytes()
    (d / "truncated.npz").write_bytes(data[: len(data) // 2])
    np.savez(d / "string_ids.npz", words=np.array(["a", "b"]), offsets=np.array([0, 2]))
    np.savez(d / "words_2d.npz", words=np.zeros((2, 2), np.int64), offsets=np.array([0, 4]))
    np.savez(d / "id_2to32.npz", words=np.array([2**32 + 5], np.int64), offsets=np.array([0, 1]))
    np.savez(d / "float_ids.npz", words=np.array([1.5]), offsets=np.array([0, 1]))
    (d / "random.bin").write_bytes(np.random.default_rng(0).integers(0, 256, 3000, dtype=np.uint8).tobytes())
    (d / "unknown.txt").write_text("zzz qqq\nqqq\n", encoding="utf-8")
    (d / "state_1e8.txt").write_text(
        "#doc source pos typeindex type topic\n#alpha : 0.1 0.1\n#beta : 0.01\n"
        "0 x 0 0 a 0\n0 x 1 100000000 b 1\n"
    )
    (d / "weights_dup.txt").write_text("0\ta\t1.5\n0\ta\t2.5\n1\ta\t1\n1\tb\t1\n")
    dists = {
        "topic_term_dists": [[0.5, 0.5], [0.3, 0.7]],
        "doc_topic_dists": [[1, 0]],
        "doc_lengths": [2],
        "term_frequency": [1, 1],
    }
    (d / "ldavis_numbers.json").write_text(json.dumps({**dists, "vocab": [1, 2]}))
    (d / "ldavis_null.json").write_text(json.dumps({**dists, "vocab": ["a", None]}))
    (d / "ldavis_deep.json").write_text("[" * 100_000 + "]" * 100_000)
    (d / "gold.txt").write_text("1\n1\n2\n")
    (d / "labels_nan.txt").write_text("1\nnan\n2\n")
    (d / "labels_blank.txt").write_text("1\n\n2\n")
    tasks = tl.intrusion.word_tasks(model, seed=0, attention_checks=1)
    tl.intrusion.write_tasks(tasks, d / "tasks.jsonl", d / "key.jsonl")
    answers = [{"annotator": "a", "item": t.item, "choice": t.intruder} for t in tasks]
    (d / "responses.jsonl").write_text("".join(json.dumps(r) + "\n" for r in answers))
    (d / "responses_list.jsonl").write_text(json.dumps(answers[0]) + "\n[1, 2]\n")
    (d / "responses_fraction.jsonl").write_text(json.dumps({**answers[0], "choice": 1.5}) + "\n")
    (d / "responses_true.jsonl").write_text(json.dumps({**answers[0], "choice": True}) + "\n")
    (d / "responses_anonymous.jsonl").write_text(json.dumps({"item": tasks[0].item, "choice": 0}) + "\n")
    csv = "annotator,item,choice\r\n" + "".join(f"a,{r['item']},{r['choice']}\r\n" for r in answers)
    (d / "responses_bom.csv").write_bytes(b"\xef\xbb\xbf" + csv.encode())
    tl.intrusion.write_tasks(tasks, d / "tasks.csv", d / "key.csv")
    with open(d / "key.csv", newline="", encoding="utf-8") as fh:
        key_rows = list(csv_module.DictReader(fh))
    key_rows[0]["topic"] = "seven"
    with open(d / "key_topic_text.csv", "w", newline="", encoding="utf-8") as fh:
        writer = csv_module.DictWriter(fh, fieldnames=list(key_rows[0]))
        writer.writeheader()
        writer.writerows(key_rows)
    rows = (d / "tasks.jsonl").read_text().splitlines()
    (d / "tasks_dup.jsonl").write_text("\n".join([*rows, rows[0]]) + "\n")
    (d / "garbage.sqlite").write_bytes(
        np.random.default_rng(1).integers(0, 256, 8192, dtype=np.uint8).tobytes()
    )
    _damaged_db(d, tasks, "damaged_options.sqlite", "UPDATE responses SET options = 'not json'")
    _damaged_db(d, tasks, "damaged_blob.sqlite", "UPDATE responses SET options = x'00ff'")
    _damaged_db(d, tasks, "damaged_choice.sqlite", "UPDATE responses SET choice = 'two'")
    return d


def _damaged_db(d: Path, tasks, name: str, damage: str) -> None:
    """An annotation database with one answer, then damaged by `damage` (SQL), as another program
    or a bad disk might leave it (SQLite keeps any value in any column)."""
    from tealeaves.annotate import open_store

    store = open_store(str(d / name))
    store.install([t.public() for t in tasks])
    store.add_participant("a0", "0" * 64)
    store.answer("a0", tasks[0].item, tasks[0].options, 1, 100)
    store.engine.dispose()
    with contextlib.closing(sqlite3.connect(d / name)) as db:
        db.execute(damage)
        db.commit()
        db.execute("PRAGMA journal_mode=DELETE")  # no -wal/-shm files left beside it


def _run(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with time_limit(120), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv)
    return code, out.getvalue(), err.getvalue()


@pytest.mark.parametrize("row", RUN, ids=[r["case"] for r in RUN])
def test_catalogue_row(row, folder, monkeypatch):
    monkeypatch.chdir(folder)
    command = re.search(r"`(tealeaves [^`]+)`", row["input"]).group(1)
    argv = shlex.split(command)[1:]
    expected = re.findall(r'"([^"]+)"', row["gets"])
    assert expected, f"row {row['case']} quotes no message"
    before = set(os.listdir(folder))
    code, out, err = _run(argv)
    if row["gets"].startswith("accepted"):
        assert code == 0, err
        text = out
    else:
        lines = err.strip().splitlines()
        assert code == 2 and len(lines) == 1 and lines[0].startswith("tealeaves: error: "), (code, err)
        text = lines[0]
    for part in expected:
        assert part.lower() in text.lower(), (part, text)
    if code == 2:  # an error writes and creates nothing (no database, no half-written output)
        assert set(os.listdir(folder)) == before, set(os.listdir(folder)) ^ before


def test_every_other_row_names_a_test_that_exists():
    tests = Path(__file__).resolve().parent
    assert len(ROWS) >= 70 and len(RUN) >= 45
    for row in ROWS:
        if row["test"] == "`catalogue`":
            continue
        m = re.fullmatch(r"`(test_\w+\.py)::(test_\w+)`", row["test"])
        assert m, f"{row['case']}: the test column must be `catalogue` or `file::test`"
        source = (tests / m.group(1)).read_text(encoding="utf-8")
        assert re.search(rf"^def {m.group(2)}\(", source, re.M), (
            f"{row['case']}: {row['test']} does not exist"
        )
    cases = [r["case"] for r in ROWS]
    assert len(cases) == len(set(cases))


def test_api_cases(tmp_path):
    with pytest.raises(tl.MethodError, match="has a missing or non-finite label"):
        tl.bcubed(np.array([1.0, np.nan, 2.0]), np.array([1, 1, 2]))
    with pytest.raises(tl.MethodError, match="missing label"):
        tl.bcubed(np.array([1, None, 2], dtype=object), np.array([1, 1, 2]))
    p = tmp_path / "doc_topics.txt"
    p.write_text("#doc name topic proportion ...\n0\tdoc0\t-1\t0.5\t1\t0.5\n")
    with pytest.raises(tl.InputFileError, match=r"doc_topics.txt:2: topic -1 is out of range"):
        tl.io.read_doc_topics(p)
    model = tl.synthetic.random_model(3, 20, seed=0)
    with pytest.raises(tl.MethodError, match="no document has a token the model knows"):
        tl.intrusion.predictive(model, tl.Corpus.from_word_ids([[]], model.vocab))
    with pytest.raises(tl.TooLargeError, match="GiB of memory"):
        tl.synthetic.random_model(10**6, 10**6)
    with pytest.raises(tl.InvalidModelError, match="complex"):
        tl.TopicModel(model.phi.astype(complex), model.alpha)


def test_writes_are_atomic(tmp_path, monkeypatch):
    """A failure (or Ctrl-C) part-way through writing leaves the previous file whole and no
    temporary file behind: results, models, corpora, task files."""
    from tealeaves.files import atomic
    from tealeaves.intrusion import tasks as tasks_module
    from tealeaves.output.jsonout import write_json

    target = tmp_path / "result.json"
    write_json(target, {"value": 1})
    good = target.read_text()

    def interrupted(path, text):
        with atomic.atomic_path(path) as tmp, open(tmp, "w") as fh:
            fh.write(text[:5])
            raise KeyboardInterrupt

    monkeypatch.setattr(atomic, "write_text", interrupted)
    with pytest.raises(KeyboardInterrupt):
        write_json(target, {"value": 2})
    assert target.read_text() == good and os.listdir(tmp_path) == ["result.json"]
    monkeypatch.undo()

    model = tl.synthetic.random_model(3, 30, seed=0)
    tl.save_model(model, tmp_path / "m.npz")
    saved = (tmp_path / "m.npz").read_bytes()

    def half_written(path, **arrays):
        Path(path).write_bytes(b"PK\x03\x04 half")
        raise OSError("disk full")

    monkeypatch.setattr(np, "savez_compressed", half_written)
    with pytest.raises((OSError, tl.InputFileError)):
        tl.save_model(tl.synthetic.random_model(3, 30, seed=1), tmp_path / "m.npz")
    with pytest.raises((OSError, tl.InputFileError)):
        tl.save_corpus(tl.synthetic.generate(model, 2, 5), tmp_path / "c.npz")
    monkeypatch.undo()
    assert (tmp_path / "m.npz").read_bytes() == saved and tl.load_model(tmp_path / "m.npz").num_topics == 3

    tasks = tl.intrusion.word_tasks(model, seed=0)
    tl.intrusion.write_tasks(tasks, tmp_path / "t.jsonl", tmp_path / "k.jsonl")
    before = {n: (tmp_path / n).read_text() for n in ("t.jsonl", "k.jsonl")}
    calls = []

    def second_fails(rows, name, out):
        calls.append(name)
        if len(calls) == 2:
            raise KeyboardInterrupt
        Path(out).write_text("new tasks\n")

    monkeypatch.setattr(tasks_module, "_write_rows", second_fails)
    with pytest.raises(KeyboardInterrupt):
        tl.intrusion.write_tasks(tasks, tmp_path / "t.jsonl", tmp_path / "k.jsonl")
    # the tasks file was written but is not put in place without its key
    assert {n: (tmp_path / n).read_text() for n in ("t.jsonl", "k.jsonl")} == before
    assert sorted(os.listdir(tmp_path)) == ["k.jsonl", "m.npz", "result.json", "t.jsonl"]


def test_item_ids_need_the_secret(tmp_path):
    import hashlib

    model = tl.synthetic.random_model(6, 100, seed=2)
    a = tl.intrusion.word_tasks(model, seed=0, attention_checks=2)
    b = tl.intrusion.word_tasks(model, seed=0, attention_checks=2)
    assert {t.item for t in a}.isdisjoint({t.item for t in b})  # a fresh secret each time
    secret = tl.intrusion.new_secret()
    assert [t.key() for t in tl.intrusion.word_tasks(model, seed=0, secret=secret)] == [
        t.key() for t in tl.intrusion.word_tasks(model, seed=0, secret=secret)
    ]
    # the old unkeyed ids could be recomputed from the model name and the seed
    guesses = {
        "i" + hashlib.sha256(f"{model.name}|{kind}|{i}|0".encode()).hexdigest()[:n]
        for kind in ("word", "attention")
        for i in range(6)
        for n in (12, 16)
    }
    assert guesses.isdisjoint({t.item for t in a})
    assert all(set(t.public()) == {"item", "kind", "text", "options"} for t in a)
    with pytest.raises(tl.MethodError, match="at least 16 characters"):
        tl.intrusion.word_tasks(model, secret="short")

    # the CLI keeps the secret beside the key (owner-only) and reuses it: same ids on a rerun
    tl.save_model(model, tmp_path / "m.npz")
    argv = [
        "intrusion",
        "words",
        str(tmp_path / "m.npz"),
        "-o",
        str(tmp_path / "t.jsonl"),
        "--key",
        str(tmp_path / "k.jsonl"),
    ]
    assert _run(argv)[0] == 0
    first = (tmp_path / "t.jsonl").read_text()
    secret_file = tmp_path / "k.jsonl.secret"
    assert secret_file.stat().st_mode & 0o077 == 0
    assert _run(argv)[0] == 0 and (tmp_path / "t.jsonl").read_text() == first
    rows = [json.loads(x) for x in first.splitlines()]
    assert all(set(r) == {"item", "kind", "text", "options"} for r in rows)
    assert "model" not in first and '"topic"' not in first


def _launcher() -> str:
    script = Path(sys.executable).parent / "tealeaves"
    return str(script) if script.exists() else "tealeaves"


@pytest.mark.parametrize("delay,workers", [(0.3, 1), (6.0, 2)], ids=["start-up", "two-workers"])
def test_ctrl_c_is_one_line(folder, delay, workers):
    """Ctrl-C (SIGINT to the whole process group, as a terminal sends it) while the package is
    importing, or while two worker processes compute: one line, status 130, no traceback."""
    proc = subprocess.Popen(
        [
            _launcher(),
            "heldout",
            "sotu:sotu-50-asym",
            "sotu:heldout",
            "--particles",
            "5000",
            "--workers",
            str(workers),
            "--max-hours",
            "1000",
            "--quiet",
        ],
        cwd=folder,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        # as a terminal's foreground job has it (a background job, like this suite, may ignore SIGINT)
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    time.sleep(delay)
    os.killpg(proc.pid, signal.SIGINT)
    try:
        out, err = proc.communicate(timeout=60)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == 130, (proc.returncode, err)
    # once the command runs, it also says that nothing was kept and how to keep work (issue 32)
    hint = ("; nothing was kept (--keep DIR keeps each finished document, and the same command with it "
            "resumes)")
    assert err.strip() in ("tealeaves: interrupted", "tealeaves: interrupted" + hint), err
