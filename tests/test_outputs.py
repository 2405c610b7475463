"""Output files (issue 20): a device, FIFO or link is never replaced; collisions are checked on
the names the writers use (after added extensions); a failed command leaves nothing behind; CSV
cells that a spreadsheet would run as formulas are quoted, and read back as they were."""

from __future__ import annotations

import csv
import json
import os
import socket
import stat
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import tealeaves as tl
from tealeaves.cli import main
from tealeaves.files import atomic, csvout

ROOT = pytest.mark.skipif(os.geteuid() != 0, reason="mknod needs root")


@pytest.fixture
def model_path(tmp_path: Path) -> str:
    p = tmp_path / "m.npz"
    tl.save_model(tl.synthetic.random_model(3, 30, seed=0), p)
    return str(p)


def run(capsys, *argv) -> tuple[int, str]:
    code = main([str(a) for a in argv])
    return code, capsys.readouterr().err


def one_line_error(code: int, err: str, text: str) -> None:
    assert code == 2 and err.count("\n") == 1 and text in err and "Traceback" not in err, err


def listing(folder: Path) -> list[str]:
    return sorted(os.listdir(folder))


# -- targets that are not regular files ---------------------------------------------------------

@ROOT
def test_json_to_character_device_writes_through(tmp_path, model_path, capsys):
    dev = tmp_path / "null"
    os.mknod(dev, stat.S_IFCHR | 0o666, os.makedev(1, 3))  # a copy of /dev/null
    code, err = run(capsys, "diversity", model_path, "--topn", 5, "--json", dev)
    assert code == 0, err
    assert stat.S_ISCHR(os.stat(dev).st_mode) and os.stat(dev).st_rdev == os.makedev(1, 3)
    assert listing(tmp_path) == ["m.npz", "null"]


def test_json_to_fifo_without_reader_fails_before_work(tmp_path, model_path, capsys):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    code, err = run(capsys, "diversity", model_path, "--topn", 5, "--json", fifo)
    one_line_error(code, err, "is a FIFO that no process is reading")
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)


def test_json_to_fifo_with_reader_writes_through(tmp_path, model_path, capsys):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)  # a reader is present before the command
    try:
        code, err = run(capsys, "diversity", model_path, "--topn", 5, "--json", fifo)
        assert code == 0, err
        data = os.read(reader, 1 << 16)
    finally:
        os.close(reader)
    assert json.loads(data)["command"] == "diversity"
    assert stat.S_ISFIFO(os.stat(fifo).st_mode) and listing(tmp_path) == ["fifo", "m.npz"]


def test_failed_command_closes_a_claimed_fifo_without_writing(tmp_path, model_path, capsys):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
    try:
        code, err = run(capsys, "diversity", model_path, "--topn", 500, "--json", fifo)  # topn > V
        assert code == 2
        assert os.read(reader, 100) == b""  # end of file: the writer was closed, nothing written
    finally:
        os.close(reader)


def test_link_to_standard_output_writes_through(tmp_path, model_path):
    link = tmp_path / "out"
    link.symlink_to("/proc/self/fd/1")
    r = subprocess.run([sys.executable, "-m", "tealeaves", "diversity", model_path, "--topn", "5",
                        "--json", str(link)], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert os.path.islink(link) and os.readlink(link) == "/proc/self/fd/1"
    assert '"command": "diversity"' in r.stdout


def test_link_to_file_replaces_the_file_not_the_link(tmp_path, model_path, capsys):
    target = tmp_path / "real.json"
    target.write_text("old")
    link = tmp_path / "link.json"
    link.symlink_to("real.json")
    code, err = run(capsys, "diversity", model_path, "--topn", 5, "--json", link)
    assert code == 0, err
    assert os.path.islink(link) and os.readlink(link) == "real.json"
    assert json.loads(target.read_text())["command"] == "diversity"
    dangling = tmp_path / "dangling.json"
    dangling.symlink_to("made.json")
    assert run(capsys, "diversity", model_path, "--topn", 5, "--json", dangling)[0] == 0
    assert os.path.islink(dangling) and json.loads((tmp_path / "made.json").read_text())


def test_link_loop_is_refused(tmp_path, model_path, capsys):
    loop = tmp_path / "loop.json"
    loop.symlink_to("loop.json")
    code, err = run(capsys, "diversity", model_path, "--topn", 5, "--json", loop)
    one_line_error(code, err, "is a link that cannot be followed")
    assert os.readlink(loop) == "loop.json"


def test_socket_is_refused(tmp_path, model_path, capsys):
    path = tmp_path / "sock"
    with socket.socket(socket.AF_UNIX) as s:
        s.bind(str(path))
        code, err = run(capsys, "diversity", model_path, "--topn", 5, "--json", path)
    one_line_error(code, err, "is a socket; an output must be a regular file")


def test_model_output_to_device_keeps_its_name(tmp_path, capsys):
    """`convert m.npz /dev/null`: numpy's rule would write /dev/null.npz beside the device."""
    if os.geteuid() != 0:
        pytest.skip("mknod needs root")
    dev = tmp_path / "null"
    os.mknod(dev, stat.S_IFCHR | 0o666, os.makedev(1, 3))
    model = tmp_path / "m.npz"
    tl.save_model(tl.synthetic.random_model(2, 5, seed=0), model)
    code, err = run(capsys, "convert", model, dev)
    assert code == 0, err
    assert listing(tmp_path) == ["m.npz", "null"] and stat.S_ISCHR(os.stat(dev).st_mode)


# -- collisions after added extensions ----------------------------------------------------------

def test_synth_documents_over_model_name(tmp_path, capsys):
    code, err = run(capsys, "synth", tmp_path / "x", tmp_path / "x.npz", "--topics", 2, "--words", 5,
                    "--docs", 1, "--length", 3)
    one_line_error(code, err, "name the same file")
    assert listing(tmp_path) == []


def test_convert_over_its_input_after_extension(tmp_path, model_path, capsys):
    code, err = run(capsys, "convert", model_path, model_path[: -len(".npz")])
    one_line_error(code, err, "is an input of this command")


def test_intrusion_tasks_over_the_key_secret(tmp_path, model_path, capsys):
    code, err = run(capsys, "intrusion", "words", model_path, "-o", tmp_path / "k.jsonl.secret",
                    "--key", tmp_path / "k.jsonl")
    one_line_error(code, err, "name the same file")
    assert listing(tmp_path) == ["m.npz"]


def test_output_where_figures_go(tmp_path, capsys):
    res = tmp_path / "r.json"
    res.write_text(json.dumps({"command": "diversity", "diversity": 0.5, "topn": 5}))
    code, err = run(capsys, "report", res, "-o", tmp_path / "figs" / "01-diversity.svg",
                    "--figures", tmp_path / "figs")
    one_line_error(code, err, "writes its own files")
    figs = tmp_path / "figs"
    figs.mkdir()
    inp = figs / "02-x.png"
    inp.write_text(json.dumps({"command": "diversity", "diversity": 0.5, "topn": 5}))
    code, err = run(capsys, "report", inp, "-o", tmp_path / "r.html", "--figures", figs)
    one_line_error(code, err, "would write over the input")


def test_a_linked_file_in_the_figures_folder_is_replaced_not_written_through(tmp_path):
    """--figures DIR holding DIR/01-x.svg (and .png), symbolic links to the user's file: the chart was
    written into that file (`report.figures.write_all`, which `report --figures` calls). Now the link
    is replaced by the chart; the user's file is untouched."""
    from tealeaves.report.figures import write_all
    from tealeaves.report.svg import Chart

    chart = Chart("hbars", "t", "x", "y", name="x", labels=["a", "b"], y=[1.0, 2.0])
    names = [os.path.basename(p) for p in write_all([chart], str(tmp_path / "made"))]
    figs = tmp_path / "figs"
    figs.mkdir()
    precious = tmp_path / "precious.txt"
    precious.write_text("precious notes")
    for n in names:
        os.symlink("../precious.txt", figs / n)
    write_all([chart], str(figs))
    assert precious.read_text() == "precious notes"
    assert names and not any((figs / n).is_symlink() for n in names)
    assert (figs / names[0]).read_bytes() == (tmp_path / "made" / names[0]).read_bytes()


def test_select_out_folder_owns_its_files(tmp_path, capsys):
    corpus = tmp_path / "c.txt"
    corpus.write_text("a b c\n" * 10)
    code, err = run(capsys, "select", corpus, "--topics", 2, "--out", tmp_path / "runs",
                    "--json", tmp_path / "runs" / "selection.json")
    one_line_error(code, err, "writes its own files")
    inside = tmp_path / "runs" / "models" / "c.txt"
    inside.parent.mkdir(parents=True)
    inside.write_text("a b c\n" * 10)
    code, err = run(capsys, "select", inside, "--topics", 2, "--out", tmp_path / "runs")
    one_line_error(code, err, "would write over the input")
    assert listing(tmp_path / "runs") == ["models"] and listing(tmp_path / "runs" / "models") == ["c.txt"]


# -- a failed command leaves nothing behind -----------------------------------------------------

def test_failed_second_output_leaves_neither(tmp_path, capsys, monkeypatch):
    import tealeaves.cli.tools as cli

    def fail(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(cli, "write_text_corpus", fail)
    code, err = run(capsys, "synth", tmp_path / "m", tmp_path / "d.txt", "--topics", 2, "--words", 5,
                    "--docs", 1, "--length", 3)
    one_line_error(code, err, "No space left on device")
    assert listing(tmp_path) == []  # no model, no temporary file


def test_failed_csv_leaves_no_json_report_or_figures(tmp_path, capsys, monkeypatch):
    model = tl.synthetic.random_model(2, 40, seed=0)
    tl.save_model(model, tmp_path / "m.npz")
    tl.corpus.write_text_corpus(tl.synthetic.generate(model, 3, 8, seed=1), tmp_path / "d.txt")

    def fail(*args):
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(csvout, "write_dicts", fail)
    code, err = run(capsys, "evaluate", tmp_path / "m.npz", "--heldout", tmp_path / "d.txt", "--particles", 2,
                    "--runs", 1, "--compare", "none", "--quiet", "--json", tmp_path / "e.json",
                    "--report", tmp_path / "e.html", "--figures", tmp_path / "figs" / "sub",
                    "--csv", tmp_path / "e.csv")
    one_line_error(code, err, "Input/output error")
    assert listing(tmp_path) == ["d.txt", "m.npz"]


def test_transaction_removes_everything_on_failure(tmp_path):
    with pytest.raises(KeyboardInterrupt), atomic.transaction():
        atomic.write_text(tmp_path / "a.txt", "a")
        atomic.makedirs(tmp_path / "new" / "deeper")
        atomic.write_text(tmp_path / "new" / "deeper" / "b.txt", "b")
        raise KeyboardInterrupt
    assert listing(tmp_path) == []
    with atomic.transaction():
        atomic.write_text(tmp_path / "a.txt", "a")
        assert "a.txt" not in listing(tmp_path)  # held until the end
    assert (tmp_path / "a.txt").read_text() == "a" and listing(tmp_path) == ["a.txt"]


TASK = {"item": "i1", "kind": "word", "text": "", "options": ["a", "b", "c"]}


def test_serve_on_busy_port_creates_no_database(tmp_path, capsys):
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text(json.dumps(TASK) + "\n")
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen(1)
        port = holder.getsockname()[1]
        code, err = run(capsys, "annotate", "serve", "--tasks", tasks, "--db", tmp_path / "new.sqlite",
                        "--port", port)
    one_line_error(code, err, "cannot listen on")
    assert listing(tmp_path) == ["tasks.jsonl"]


def test_serve_startup_failure_removes_new_database(tmp_path, capsys, monkeypatch):
    from tealeaves.annotate import store

    original = store.Store.install

    def install_then_fail(self, tasks):
        original(self, tasks)
        raise tl.errors.MethodError("startup failed after install")

    monkeypatch.setattr(store.Store, "install", install_then_fail)
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text(json.dumps(TASK) + "\n")
    with socket.socket() as probe:  # a free port
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    code, err = run(capsys, "annotate", "serve", "--tasks", tasks, "--db", tmp_path / "new.sqlite",
                    "--port", port)
    one_line_error(code, err, "startup failed after install")
    assert listing(tmp_path) == ["tasks.jsonl"]  # no database, no -wal, no -shm


# -- CSV: formula-leading cells -----------------------------------------------------------------

HOSTILE = ["=HYPERLINK(\"http://x\",\"y\")", "+cmd", "-2+3", "@SUM(A1)", "\tx", "\rx", "'=quoted", "'plain",
           "-1.25", "-inf", "+3", "nan", "2e-05", "plain"]


def test_cell_rule():
    quoted = {"=HYPERLINK(\"http://x\",\"y\")", "+cmd", "-2+3", "@SUM(A1)", "\tx", "\rx", "'=quoted"}
    for text in HOSTILE:
        expect = "'" + text if text in quoted else text
        assert csvout.cell(text) == expect, text
        assert csvout.uncell(csvout.cell(text)) == text
    assert csvout.cell(-1.5) == -1.5 and csvout.cell(None) is None
    assert csvout.cell(np.int64(-3)) == "-3"


def _raw_cells(path: Path) -> list[str]:
    with open(path, newline="", encoding="utf-8") as fh:
        return [c for row in csv.reader(fh) for c in row]


SPREADSHEET_FORMULA = ("=", "+", "-", "@", "\t", "\r")  # OWASP's CSV-injection list, not the code's


def _no_formula(cells: list[str]) -> None:
    for c in cells:
        if c.startswith(SPREADSHEET_FORMULA):
            float(c)  # only a plain number may begin with one of them


def test_intrusion_csv_quotes_formulas_and_reads_back(tmp_path):
    words = ["=cmd|'/Ccalc'!A0", "+1+1", "-x", "@x", "'=q", "''", "-1.25"]
    vocab = words + [f"w{i}" for i in range(33)]
    rng = np.random.default_rng(0)
    phi = rng.dirichlet(np.full(len(vocab), 0.1), size=4)
    phi[0, :7] += 1.0
    phi[1, :3] += 0.5
    phi[2, 3:7] += 0.5
    model = tl.TopicModel(phi / phi.sum(1, keepdims=True), np.full(4, 0.1), vocab=vocab)
    tasks = tl.intrusion.word_tasks(model, relax=True, seed=0)
    tl.intrusion.write_tasks(tasks, tmp_path / "t.csv", tmp_path / "k.csv")
    cells = _raw_cells(tmp_path / "t.csv") + _raw_cells(tmp_path / "k.csv")
    assert "'=cmd|'/Ccalc'!A0" in cells and "'''" in cells and "-1.25" in cells
    _no_formula(cells)
    back = tl.intrusion.read_key(tmp_path / "k.csv")
    assert [r["options"] for r in back] == [t.options for t in tasks]
    assert [r["options"] for r in tl.intrusion.read_tasks(tmp_path / "t.csv")] == [t.options for t in tasks]


def test_annotate_export_quotes_participant_ids(tmp_path):
    from tealeaves.annotate import export_responses, open_store

    db = str(tmp_path / "a.sqlite")
    store = open_store(db)
    store.install([{"item": "i1", "kind": "word", "text": "", "options": ["=a", "b", "-3"]}])
    store.answer("=HYPERLINK(\"x\")", "i1", ["=a", "b", "-3"], 0, 1200)
    store.answer("@bob", "i1", ["=a", "b", "-3"], 2, 900)
    store.engine.dispose()
    export_responses(db, tmp_path / "r.csv")
    cells = _raw_cells(tmp_path / "r.csv")
    assert "'=HYPERLINK(\"x\")" in cells and "'@bob" in cells and "'=a" in cells
    _no_formula(cells)
    from tealeaves.files.records import read_csv

    _, rows = read_csv(tmp_path / "r.csv")
    assert [r["annotator"] for r in rows] == ["=HYPERLINK(\"x\")", "@bob"]
    assert [r["chosen"] for r in rows] == ["=a", "-3"]


class _FakeEvaluation:
    """What `evaluate` returns, for a mix of models: one row has a field the other lacks."""

    rows = [{"model": "=cmd", "topics": 2, "heldout_per_token": -1.25, "coherence": {"npmi": -0.5},
             "auto_model_precision_ci": None},
            {"model": "b", "topics": 3, "heldout_per_token": float("-inf"), "coherence": {"npmi": 0.1},
             "auto_model_precision_ci": None, "auto_note": "+no intruder"}]
    scoring = {"documents": 1, "tokens": 3, "oov_tokens": 0, "rule": "x"}
    params = {"coherence_fingerprint": {"npmi": {"measure": "npmi"}}}
    diagnostics: dict = {}  # evaluate --diagnostics only
    stability = None  # evaluate --stability only
    unreadable: list = []  # models that could not be read (issue 32)

    def table(self) -> str:
        return "table"

    def summary(self) -> str:
        return "summary"

    def timing(self) -> str:
        return "timing"

    def legend(self) -> str:
        return "legend"

    def to_dict(self) -> dict:
        return {"rows": self.rows}


def test_evaluate_csv_takes_every_column_and_quotes(tmp_path, capsys, monkeypatch):
    import tealeaves.cli.evaluate as cli_evaluate

    monkeypatch.setattr(cli_evaluate, "evaluate", lambda *a, **k: _FakeEvaluation())
    m = tmp_path / "m.npz"
    tl.save_model(tl.synthetic.random_model(2, 5, seed=0), m)
    code, err = run(capsys, "evaluate", m, "--heldout", m, "--json", tmp_path / "e.json", "--csv",
                    tmp_path / "e.csv")
    assert code == 0, err
    with open(tmp_path / "e.csv", newline="", encoding="utf-8") as fh:
        rows = list(csv.reader(fh))
    fp = '{"npmi": {"measure": "npmi"}}'
    assert rows == [["model", "topics", "heldout_per_token", "coherence_npmi", "coherence_fingerprint",
                     "not_applicable", "auto_note"],
                    ["'=cmd", "2", "-1.25", "-0.5", fp, "", ""],
                    ["b", "3", "-inf", "0.1", fp, "", "'+no intruder"]]
    assert (tmp_path / "e.json").exists()


def test_heldout_csv_numbers_stay_numbers(tmp_path, capsys):
    from tealeaves.cli.tools import example_paths

    model, docs = example_paths()
    code, err = run(capsys, "heldout", model, docs, "--method", "exact", "--csv", tmp_path / "h.csv",
                    "--bootstrap", 0)
    assert code == 0, err
    with open(tmp_path / "h.csv", newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    assert rows and all(float(r["log_prob"]) < 0 and not r["log_prob"].startswith("'") for r in rows), rows


def test_plot_format_checked_before_work(tmp_path, capsys, monkeypatch):
    pytest.importorskip("matplotlib")
    from tealeaves import intrusion

    def never(*args, **kwargs):
        raise AssertionError("scoring ran before the output check")

    monkeypatch.setattr(intrusion, "score", never)
    key, responses = tmp_path / "k.jsonl", tmp_path / "r.jsonl"
    key.write_text("")
    responses.write_text("")
    code, err = run(capsys, "intrusion", "score", key, responses, "--plot", tmp_path / "scores.txt")
    one_line_error(code, err, "has extension .txt; matplotlib writes")
    assert listing(tmp_path) == ["k.jsonl", "r.jsonl"]


# -- red team: companions, regular-only outputs, empty names, formats, redirects, write errors --

CLI = "import sys; from tealeaves.cli import main; sys.exit(main())"


def _task_set(tmp_path: Path, model_path: str, capsys, tasks: str = "t.jsonl", key: str = "k.jsonl") -> None:
    code, err = run(capsys, "intrusion", "words", model_path, "-o", tmp_path / tasks, "--key", tmp_path / key)
    assert code == 0, err


def _contents(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in folder.iterdir() if p.is_file()}


def test_sqlite_companions_of_an_input_database_are_inputs(tmp_path, capsys):
    db = tmp_path / "answers"  # no extension: only the companion rule stands between -o and the WAL
    db.write_bytes(b"SQLite format 3\0")
    for end in ("-wal", "-shm", "-journal"):
        (tmp_path / f"answers{end}").write_bytes(b"committed answers " + end.encode())
    before = _contents(tmp_path)
    for given in (str(db), f"sqlite:///{db}"):
        for end in ("-wal", "-shm", "-journal"):
            code, err = run(capsys, "annotate", "export", "--db", given, "-o", tmp_path / f"answers{end}")
            one_line_error(code, err, f"is SQLite's {end} file of the input")
    code, err = run(capsys, "annotate", "export", "--db", db, "-o", tmp_path / "ANSWERS-WAL")
    one_line_error(code, err, "differ only in case")
    assert _contents(tmp_path) == before


def test_secret_of_an_input_key_is_an_input(tmp_path, model_path, capsys):
    _task_set(tmp_path, model_path, capsys)
    before = _contents(tmp_path)
    code, err = run(capsys, "intrusion", "score", tmp_path / "k.jsonl", tmp_path / "t.jsonl",
                    "--json", tmp_path / "k.jsonl.secret")
    one_line_error(code, err, "is the secret of the input")
    code, err = run(capsys, "intrusion", "score", tmp_path / "k.jsonl", tmp_path / "t.jsonl",
                    "--json", tmp_path / "K.JSONL")
    one_line_error(code, err, "differ only in case")
    assert _contents(tmp_path) == before


def test_key_and_its_secret_must_be_regular_files(tmp_path, model_path, capsys):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    stream = tmp_path / "out"
    stream.symlink_to("/proc/self/fd/1")  # `/dev/stdout`, whatever standard output is
    for key in (fifo, stream, "/dev/stderr"):
        code, err = run(capsys, "intrusion", "words", model_path, "-o", tmp_path / "t.jsonl", "--key", key)
        one_line_error(code, err, "not a regular file; a key's secret is written beside it")
    os.mkfifo(tmp_path / "k.jsonl.secret")
    code, err = run(capsys, "intrusion", "words", model_path, "-o", tmp_path / "t.jsonl",
                    "--key", tmp_path / "k.jsonl")
    one_line_error(code, err, "the secret of --key")
    assert listing(tmp_path) == ["fifo", "k.jsonl.secret", "m.npz", "out"]
    assert not os.path.exists("/dev/stderr.secret")
    tasks = tl.intrusion.word_tasks(tl.load_model(model_path), seed=0)
    with pytest.raises(tl.errors.MethodError, match="not a regular file"):
        tl.intrusion.write_tasks(tasks, tmp_path / "t.jsonl", fifo, secret="s" * 16)
    tl.intrusion.write_tasks(tasks, tmp_path / "t.jsonl", stream)  # no secret: written through
    assert listing(tmp_path) == ["fifo", "k.jsonl.secret", "m.npz", "out", "t.jsonl"]


@ROOT
def test_key_to_a_character_device_is_refused(tmp_path, model_path, capsys):
    dev = tmp_path / "null"
    os.mknod(dev, stat.S_IFCHR | 0o666, os.makedev(1, 3))
    code, err = run(capsys, "intrusion", "words", model_path, "-o", tmp_path / "t.jsonl", "--key", dev)
    one_line_error(code, err, "not a regular file")
    assert listing(tmp_path) == ["m.npz", "null"]


def test_stream_to_a_regular_file_is_appended_not_replaced(tmp_path, model_path):
    out = tmp_path / "out.txt"
    with open(out, "w") as fh:
        subprocess.run([sys.executable, "-c", CLI, "diversity", model_path, "--topn", "5",
                        "--json", "/dev/stdout"], stdout=fh, check=True)
        inode = os.fstat(fh.fileno()).st_ino
    text = out.read_text()
    assert os.stat(out).st_ino == inode  # the shell's file, not a new one
    assert text.startswith("topic diversity") and json.loads(text[text.index("{"):])["command"] == "diversity"


def test_empty_output_names_are_errors(tmp_path, model_path, capsys):
    docs = tmp_path / "d.txt"
    docs.write_text("w00 w01 w02\n")
    for argv, flag in [
        (["diversity", model_path, "--json", ""], "--json"),
        (["heldout", model_path, docs, "--csv", ""], "--csv"),
        (["report", model_path, "-o", ""], "-o/--output"),
        (["report", model_path, "--figures", ""], "--figures"),
        (["convert", model_path, ""], "MODEL_OUT"),
        (["synth", tmp_path / "s.npz", ""], "DOCS_OUT"),
        (["intrusion", "words", model_path, "-o", "", "--key", tmp_path / "k.jsonl"], "-o/--output"),
        (["intrusion", "words", model_path, "-o", tmp_path / "t.jsonl", "--key", ""], "--key"),
        (["annotate", "export", "--db", model_path, "-o", ""], "-o/--output"),
    ]:
        code, err = run(capsys, *argv)
        one_line_error(code, err, f"{flag} is empty; give a file name")
    assert listing(tmp_path) == ["d.txt", "m.npz"]


def test_task_and_export_format_follows_the_extension_in_any_case(tmp_path, model_path, capsys):
    _task_set(tmp_path, model_path, capsys, "t.CSV", "k.Csv")
    assert (tmp_path / "t.CSV").read_text().startswith("item,kind,text,position,option\n")
    _task_set(tmp_path, model_path, capsys, "t.csv", "k.csv")
    for read, a, b in [(tl.intrusion.read_key, "k.Csv", "k.csv"),
                       (tl.intrusion.read_tasks, "t.CSV", "t.csv")]:
        upper, lower = read(tmp_path / a), read(tmp_path / b)  # the same rows but their secret ids
        assert [r | {"item": ""} for r in upper] == [r | {"item": ""} for r in lower] and len(upper) == 3
    _task_set(tmp_path, model_path, capsys, "t", "k.NDJSON")  # no extension: JSON lines
    assert json.loads((tmp_path / "t").read_text().splitlines()[0])["kind"] == "word"
    before = listing(tmp_path)
    for tasks, key, bad in [("x.xlsx", "y.jsonl", ".xlsx"), ("x.jsonl", "y.JSON", ".json"),
                            ("x.txt", "y.csv", ".txt")]:
        code, err = run(capsys, "intrusion", "words", model_path, "-o", tmp_path / tasks,
                        "--key", tmp_path / key)
        one_line_error(code, err, f"has the extension {bad}; tealeaves writes .csv (CSV) or .jsonl")
    code, err = run(capsys, "intrusion", "words", model_path, "-o", tmp_path / "x.jsonl",
                    "--key", tmp_path / "X.JSONL")
    one_line_error(code, err, "name the same file")
    code, err = run(capsys, "annotate", "export", "--db", tmp_path / "db.sqlite", "-o", tmp_path / "r.XLSX")
    one_line_error(code, err, "has the extension .xlsx")
    assert listing(tmp_path) == before
    with pytest.raises(tl.errors.MethodError, match="has the extension .xlsx"):
        tl.intrusion.write_tasks([], tmp_path / "t.jsonl", tmp_path / "k.xlsx")


def test_model_output_extension_in_any_case(tmp_path, model_path, capsys):
    code, err = run(capsys, "convert", model_path, tmp_path / "out.NPZ")
    assert code == 0, err
    assert listing(tmp_path) == ["m.npz", "out.NPZ"]  # not out.NPZ.npz
    assert tl.load_model(str(tmp_path / "out.NPZ")).num_topics == 3


def test_redirect_is_an_http_url_or_a_relative_path():
    pytest.importorskip("starlette")
    from tealeaves.annotate.app import AppConfig

    for url in ["javascript:alert(1)", "JavaScript:alert(1)", "data:text/html,x", "vbscript:x", "https:/x",
                "{participant}:x", " https://x", "java\tscript:x", "\\\\evil.com", "ftp://x/y", ""]:
        with pytest.raises(tl.errors.MethodError, match="redirect URL"):
            AppConfig(redirect=url)
    for url in ["https://app.prolific.com/submissions/complete?cc={code}", "http://x/{participant}",
                "/thanks?code={code}", "done.html", "?c={code}"]:
        assert AppConfig(redirect=url).redirect == url


def test_serve_refuses_a_script_redirect_before_anything(tmp_path, capsys):
    pytest.importorskip("starlette")
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text(json.dumps(TASK) + "\n")
    with socket.socket() as holder:  # a busy port: a server that started would fail, not run on
        holder.bind(("127.0.0.1", 0))
        holder.listen(1)
        code, err = run(capsys, "annotate", "serve", "--tasks", tasks, "--db", tmp_path / "new.sqlite",
                        "--port", holder.getsockname()[1], "--redirect", "javascript:alert(1)")
    one_line_error(code, err, "is not an http(s) URL or a relative path")
    assert listing(tmp_path) == ["tasks.jsonl"]


def test_write_errors_name_the_file(tmp_path, model_path, capsys):
    code, err = run(capsys, "diversity", model_path, "--json", "/dev/full")
    one_line_error(code, err, "/dev/full: No space left on device")
    with open("/dev/full", "w") as full:
        done = subprocess.run([sys.executable, "-c", CLI, "diversity", model_path, "--json", "-"],
                              stdout=full, stderr=subprocess.PIPE, text=True)
    assert done.returncode == 2 and "standard output: No space left on device" in done.stderr, done.stderr
    target = tmp_path / "r.json"
    with pytest.raises(OSError) as info, atomic.atomic_path(target):
        raise OSError(28, "No space left on device")  # a write into the temporary file
    assert info.value.filename == str(target)
    with pytest.raises(OSError) as info, atomic.atomic_path(target):
        open(tmp_path / "missing-input")  # an input's error keeps its own name
    assert info.value.filename == str(tmp_path / "missing-input")
    assert listing(tmp_path) == ["m.npz"]
