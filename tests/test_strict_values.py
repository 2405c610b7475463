"""Values inside files (issue 20): every reader types whole numbers, booleans, numbers, option lists
and topic proportions with the one set of strict parsers in `tealeaves.files.records`, and a value they
refuse is a one-line error naming the file, the line (or row) and the field."""

from __future__ import annotations

import contextlib
import csv
import json
import sqlite3
from pathlib import Path

import numpy as np
import pytest
from clirun import one_line_error as _one_line_error
from clirun import run_cli as _run

import tealeaves as tl
from tealeaves.cli.tools import example_paths
from tealeaves.errors import BadValueError
from tealeaves.files.records import (
    check_proportions,
    parse_json,
    read_csv,
    strict_bool,
    strict_choice,
    strict_float,
    strict_int,
)

SECRET = "0" * 32
# text that str.isdigit() (or int()) takes for a number, and other near-numbers: none is a choice
NOT_WHOLE = ["²", "①", "𐩀", "--1", " 3", "3 ", "3.0", "1e3", "0x1f", "٣", "+3", "1_0", "", "3\n", "9" * 5000]


@pytest.fixture(scope="module")
def model():
    return tl.load_model(example_paths()[0])


@pytest.fixture(scope="module")
def tasks(model):
    return tl.intrusion.word_tasks(model, seed=0, attention_checks=2, secret=SECRET)






def _write_csv(path: Path, rows: list[dict[str, str]], header: list[str] | None = None) -> None:
    with open(path, "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        header = header or list(rows[0])
        w.writerow(header)
        for r in rows:
            w.writerow([r[k] for k in header])


def _key_csv_rows(tmp_path: Path, tasks) -> list[dict[str, str]]:
    tl.intrusion.write_tasks(tasks, tmp_path / "t.csv", tmp_path / "k.csv", secret=SECRET)
    with open(tmp_path / "k.csv", newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


# -- the parsers ---------------------------------------------------------------------------------


@pytest.mark.parametrize("text", NOT_WHOLE)
def test_near_numbers_are_not_whole_numbers(text):
    with pytest.raises(BadValueError) as exc:
        strict_int(text, "f.csv:7", "choice")
    msg = str(exc.value)
    assert msg.startswith("f.csv:7: choice ") and "not a whole number" in msg and "\n" not in msg
    assert len(msg) < 200  # a 5,000-digit value is shown cut short


def test_whole_numbers_and_json_types():
    assert [strict_int(v, "w", "f") for v in ("0", "7", "-2", "007", 12, np.int64(3))] == [0, 7, -2, 7, 12, 3]
    for value in (True, False, 3.0, None, [1], np.bool_(True), 10**30):
        with pytest.raises(BadValueError, match="is not a whole number"):
            strict_int(value, "w", "f")
    with pytest.raises(BadValueError, match="w: f 5 is out of range"):
        strict_int("5", "w", "f", low=0, high=4)
    assert strict_choice("2", 3, "w") == 2
    with pytest.raises(BadValueError, match="w: choice True is not an option position"):
        strict_choice(True, 3, "w")
    with pytest.raises(BadValueError, match="has no option 3"):
        strict_choice(3, 3, "w")


@pytest.mark.parametrize("text,value", [("TRUE", True), ("true", True), ("True", True), ("1", True),
                                        ("yes", True), ("YES", True), ("FALSE", False), ("false", False),
                                        ("0", False), ("no", False), (True, True), (False, False),
                                        (1, True), (0, False)])
def test_booleans_as_spreadsheets_write_them(text, value):
    assert strict_bool(text, "w", "attention") is value


@pytest.mark.parametrize("text", ["", "maybe", "t", "y", "2", " true", "vrai", None, 2, 0.0, [], "TRUE\n"])
def test_other_booleans_are_refused(text):
    with pytest.raises(BadValueError, match="w: attention .* is not true or false"):
        strict_bool(text, "w", "attention")


@pytest.mark.parametrize("text", ["nan", "NaN", "inf", "-Infinity", "1e400", "٣", "1_0", " 1", "0x10", "",
                                  True])
def test_numbers_from_files_are_finite_ascii(text):
    with pytest.raises(BadValueError, match="w: alpha .* is not a finite number"):
        strict_float(text, "w", "alpha")
    assert strict_float("-1.5e-3", "w", "alpha") == -1.5e-3 and strict_float(2, "w", "alpha") == 2.0


def test_json_with_a_huge_integer_is_one_error():
    """Python's int() refuses more than 4,300 digits (ValueError, not JSONDecodeError)."""
    with pytest.raises(tl.InputFileError, match=r"r.jsonl:3: not valid JSON \(a number of 5000 digits\)"):
        parse_json('{"choice": ' + "9" * 5000 + "}", "r.jsonl:3")


def test_proportions():
    good = np.array([[0.2, 0.8], [0.5, 0.5]])
    np.testing.assert_array_equal(check_proportions(good, "t.npy"), good)
    for bad, part in [(np.array([[0.2, 0.8], [np.nan, 1.0]]), "document 1: topic 0's proportion nan"),
                      (np.array([[0.2, 0.8], [np.inf, 0.0]]), "document 1: topic 0's proportion inf"),
                      (np.array([[1.2, -0.2], [0.5, 0.5]]), "document 0: topic 0's proportion 1.2"),
                      (np.array([[0.5, 0.5], [0.2, 0.2]]), "document 1: the topic proportions sum to 0.4"),
                      (np.array([["a", "b"]]), "must be a 2-d numeric matrix")]:
        with pytest.raises(BadValueError, match="t.npy: ") as exc:
            check_proportions(bad, "t.npy")
        assert part in str(exc.value)


def test_csv_refuses_a_repeated_column(tmp_path):
    p = tmp_path / "r.csv"
    p.write_text("annotator,item,choice,choice\na,i1,0,3\n")
    with pytest.raises(tl.InputFileError, match=r"r.csv:1: the header names column\(s\) 'choice' more "):
        read_csv(p)


# -- every reader, through the command line ------------------------------------------------------


@pytest.mark.parametrize("choice", NOT_WHOLE)
def test_response_csv_choices(tmp_path, tasks, choice):
    tl.intrusion.write_tasks(tasks, tmp_path / "t.jsonl", tmp_path / "k.jsonl", secret=SECRET)
    rows = [{"annotator": "a", "item": t.item, "choice": str(t.intruder)} for t in tasks]
    rows[1]["choice"] = choice
    _write_csv(tmp_path / "r.csv", rows)
    line = 3 + choice.count("\n")  # the line the row ends on
    _one_line_error(["intrusion", "score", tmp_path / "k.jsonl", tmp_path / "r.csv"],
                    f"r.csv:{line}: choice", "is not an option position")


@pytest.mark.parametrize("raw", ["true", "3.0", "9" * 5000, '"²"', '"--1"', "null"])
def test_response_jsonl_choices(tmp_path, tasks, raw):
    tl.intrusion.write_tasks(tasks, tmp_path / "t.jsonl", tmp_path / "k.jsonl", secret=SECRET)
    lines = [json.dumps({"annotator": "a", "item": t.item, "choice": t.intruder}) for t in tasks]
    lines[2] = f'{{"annotator": "a", "item": "{tasks[2].item}", "choice": {raw}}}'
    (tmp_path / "r.jsonl").write_text("\n".join(lines) + "\n")
    line = _one_line_error(["intrusion", "score", tmp_path / "k.jsonl", tmp_path / "r.jsonl"], "r.jsonl:3: ")
    assert "choice" in line or "not valid JSON" in line, line  # the field, or the JSON itself


@pytest.mark.parametrize("options", ["5", "true", '"w1"', '{"a": 1}', "[1, 2]", "[" * 5000 + "]" * 5000])
def test_response_options_must_be_a_list_of_strings(tmp_path, tasks, options):
    """`options` in a response (JSON, or JSON text in a CSV cell, depth-limited) is a list of strings."""
    tl.intrusion.write_tasks(tasks, tmp_path / "t.jsonl", tmp_path / "k.jsonl", secret=SECRET)
    rows = [{"annotator": "a", "item": t.item, "choice": str(t.intruder), "options": json.dumps(t.options)}
            for t in tasks]
    rows[0]["options"] = options
    _write_csv(tmp_path / "r.csv", rows)
    _one_line_error(["intrusion", "score", tmp_path / "k.jsonl", tmp_path / "r.csv"], "r.csv:2: options")
    lines = [json.dumps({"annotator": "a", "item": t.item, "choice": t.intruder}) for t in tasks]
    lines[0] = lines[0][:-1] + f', "options": {options}}}'
    (tmp_path / "r.jsonl").write_text("\n".join(lines) + "\n")
    line = _one_line_error(["intrusion", "score", tmp_path / "k.jsonl", tmp_path / "r.jsonl"], "r.jsonl:1: ")
    assert "options" in line or "nested more than 64 levels" in line, line


def test_choice_and_chosen_must_agree(tmp_path, tasks):
    tl.intrusion.write_tasks(tasks, tmp_path / "t.jsonl", tmp_path / "k.jsonl", secret=SECRET)
    t = tasks[0]
    wrong = t.options[(t.intruder + 1) % len(t.options)]
    rows = [{"annotator": "a", "item": t.item, "choice": str(t.intruder), "chosen": wrong}]
    _write_csv(tmp_path / "r.csv", rows)
    _one_line_error(["intrusion", "score", tmp_path / "k.jsonl", tmp_path / "r.csv"],
                    f"r.csv:2: choice {t.intruder} is", "but chosen is")


def _attention_responses(tasks) -> list[dict]:
    """'good' answers every item right; 'bad' picks a wrong option on every attention check."""
    out = []
    for t in tasks:
        out.append({"annotator": "good", "item": t.item, "choice": t.intruder})
        out.append({"annotator": "bad", "item": t.item,
                    "choice": (t.intruder + 1) % len(t.options) if t.attention else t.intruder})
    return out


@pytest.mark.parametrize("true,false", [("TRUE", "FALSE"), ("true", "false"), ("1", "0"), ("yes", "no")])
def test_attention_column_from_a_spreadsheet(tmp_path, tasks, true, false):
    """A key CSV saved by a spreadsheet (TRUE/FALSE, 1/0, ...) keeps its attention checks on."""
    rows = _key_csv_rows(tmp_path, tasks)
    for r in rows:
        r["attention"] = true if r["attention"] == "True" else false
        r["relaxed"] = false
    _write_csv(tmp_path / "k2.csv", rows)
    res = tl.intrusion.score(tmp_path / "k2.csv", _attention_responses(tasks), bootstrap=10)
    assert res.excluded_annotators == ["bad"]
    assert res.responses_used == sum(not t.attention for t in tasks)  # 'good' only, no checks


@pytest.mark.parametrize("value", ["", "maybe", "Tru"])
def test_attention_column_that_is_not_a_boolean(tmp_path, tasks, value):
    rows = _key_csv_rows(tmp_path, tasks)
    for r in rows[6:12]:  # lines 8-13: the second item's rows (5 words + intruder each)
        r["attention"] = value
    _write_csv(tmp_path / "k2.csv", rows)
    (tmp_path / "r.jsonl").write_text("")
    _one_line_error(["intrusion", "score", tmp_path / "k2.csv", tmp_path / "r.jsonl"],
                    "k2.csv:8: attention", "is not true or false")


def test_attention_false_as_text_in_a_json_key(tmp_path, tasks):
    """`"attention": "false"` was truthy: the item was taken for an attention check."""
    keys = [t.key() for t in tasks]
    keys[0]["attention"] = "false"
    responses = [{"annotator": "a", "item": t.item, "choice": t.intruder} for t in tasks]
    responses[0]["choice"] = (tasks[0].intruder + 1) % 6  # a wrong answer to an ordinary item
    res = tl.intrusion.score(keys, responses, bootstrap=10)
    assert res.excluded_annotators == [] and res.responses_used == sum(not t.attention for t in tasks)


@pytest.mark.parametrize("field,value", [("intruder", True), ("intruder", 2.0), ("intruder", "²"),
                                         ("topic", True), ("topic", -1), ("attention", "maybe"),
                                         ("option_topics", [True]), ("options", 5), ("options", True)])
def test_key_jsonl_values(tmp_path, tasks, field, value):
    """`"intruder": true` was position 1; every key value is typed."""
    keys = [t.key() for t in tasks]
    keys[1][field] = value
    (tmp_path / "k.jsonl").write_text("".join(json.dumps(k) + "\n" for k in keys))
    (tmp_path / "r.jsonl").write_text("")
    _one_line_error(["intrusion", "score", tmp_path / "k.jsonl", tmp_path / "r.jsonl"], "k.jsonl:2: ", field)


def test_key_csv_rows_of_one_item_must_agree(tmp_path, tasks):
    rows = _key_csv_rows(tmp_path, tasks)
    rows[3]["intruder"] = "4"  # the first item's 4th option row (line 5) disagrees with line 2
    _write_csv(tmp_path / "k2.csv", rows)
    (tmp_path / "r.jsonl").write_text("")
    _one_line_error(["intrusion", "score", tmp_path / "k2.csv", tmp_path / "r.jsonl"],
                    "k2.csv:5: item", "intruder '4' differs", "(", "k2.csv:2)")


@pytest.mark.parametrize("value", ["٣", "1e3", " 1", "True"])
def test_task_csv_topic(tmp_path, tasks, value):
    tl.intrusion.write_tasks(tasks, tmp_path / "t.csv", tmp_path / "k.csv", secret=SECRET)
    with open(tmp_path / "k.csv", newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    for r in rows[:6]:
        r["topic"] = value
    _write_csv(tmp_path / "k2.csv", rows)
    with pytest.raises(BadValueError, match="k2.csv:2: topic .* is not a whole number"):
        tl.intrusion.read_tasks(tmp_path / "k2.csv")


def test_tasks_jsonl_options_are_strings(tmp_path, tasks):
    rows = [t.public() for t in tasks]
    rows[2]["options"] = [1, 2, 3]
    (tmp_path / "t.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    with pytest.raises(BadValueError, match=r"t.jsonl:3: options must be a list of strings"):
        tl.intrusion.read_tasks(tmp_path / "t.jsonl")


def test_zero_intruder_proportion_scores_zero_when_chosen():
    """log 0 = -inf for the intruder: an annotator who picks it agrees (0), not nan."""
    key = [{"item": "d0", "kind": "topic", "model": "A", "document": 0, "intruder": 1,
            "options": ["t", "u", "v"], "option_log_theta": [np.log(0.6), -np.inf, np.log(0.4)]}]
    res = tl.intrusion.score(key, [{"annotator": "a", "item": "d0", "choice": 1}], bootstrap=10)
    assert res.topic_log_odds == {"A": {0: 0.0}}


# -- MALLET files ----------------------------------------------------------------------------------


def _weights(tmp_path: Path, topics: int = 3) -> Path:
    p = tmp_path / "w.txt"
    p.write_text("".join(f"{t}\t{w}\t{1 + t + i}\n" for t in range(topics) for i, w in enumerate("abcd")))
    return p


def test_topic_keys_topic_listed_twice(tmp_path):
    keys = tmp_path / "keys.txt"
    keys.write_text("0\t0.1\ta b\n1\t0.2\tb c\n\n1\t0.3\tc d\n2\t0.1\td a\n")
    with pytest.raises(tl.InputFileError, match=r"keys.txt:4: topic 1 is listed twice \(lines 2 and 4\)"):
        tl.io.read_topic_keys(keys)
    _one_line_error(["diversity", _weights(tmp_path), "--alpha", keys], "keys.txt:4: topic 1 is listed twice")


def test_topic_keys_with_fewer_topics_than_the_model(tmp_path):
    """One line would have been spread over every topic; two were a shape error from the model."""
    keys = tmp_path / "keys.txt"
    for lines in (["0\t0.1\ta b"], ["0\t0.1\ta b", "1\t0.2\tb c"]):
        keys.write_text("\n".join(lines) + "\n")
        _one_line_error(["diversity", _weights(tmp_path), "--alpha", keys],
                        f"keys.txt: {len(lines)} topic(s), but", "w.txt has 3")
    keys.write_text("0\t0.1\td\n1\t0.2\td c\n2\t0.3\td c b\n")  # each topic's largest weights
    m = tl.load_model(_weights(tmp_path), format="mallet-weights", alpha=keys)
    np.testing.assert_allclose(m.alpha, [0.1, 0.2, 0.3])


@pytest.mark.parametrize("line,part", [("٣\t0.1\ta", "topic '٣' is not a whole number"),
                                       ("1.0\t0.1\ta", "topic '1.0' is not a whole number"),
                                       ("1\tnan\ta", "alpha 'nan' is not a finite number"),
                                       ("1\t-0.5\ta", "alpha -0.5 must be positive"),
                                       ("1\t1_0\ta", "alpha '1_0' is not a finite number"),
                                       ("9" * 5000 + "\t0.1\ta", "is not a whole number")])
def test_topic_keys_values(tmp_path, line, part):
    keys = tmp_path / "keys.txt"
    keys.write_text(f"0\t0.1\ta\n{line}\n")
    with pytest.raises(tl.InputFileError, match="keys.txt:2: ") as exc:
        tl.io.read_topic_keys(keys)
    assert part in str(exc.value) and len(str(exc.value)) < 300


@pytest.mark.parametrize("line,part", [("1\tb\tnan", "weight 'nan' is not a finite number"),
                                       ("1\tb\t-1", "weight -1.0 is out of range"),
                                       ("١\tb\t1", "topic '١' is not a whole number")])
def test_topic_word_weights_values(tmp_path, line, part):
    w = tmp_path / "w.txt"
    w.write_text(f"0\ta\t1\n0\tb\t1\n1\ta\t1\n{line}\n")
    with pytest.raises(tl.InputFileError, match="w.txt:4: ") as exc:
        tl.load_model(w, format="mallet-weights", alpha=0.1)
    assert part in str(exc.value)


@pytest.mark.parametrize("row,part", [("0.5\tnan", "topic proportions must be finite numbers"),
                                      ("0.5\t-0.5", "topic 1's proportion -0.5"),
                                      ("0.5\t0.1", "sum to 0.6, not 1"),
                                      ("0.5\t٠.5", "topic proportions must be finite numbers")])
def test_doc_topics_values(tmp_path, row, part):
    p = tmp_path / "dt.txt"
    p.write_text(f"0\tdoc0\t0.2\t0.8\n1\tdoc1\t{row}\n")
    with pytest.raises(tl.InputFileError, match="dt.txt:2: ") as exc:
        tl.io.read_doc_topics(p)
    assert part in str(exc.value)


def test_doc_topics_sparse_layout(tmp_path):
    p = tmp_path / "dt.txt"
    head = "#doc name topic proportion ...\n"
    p.write_text(head + "0\tdoc0\t1\t0.7\t0\t0.2\n")  # below a threshold: rows may sum below 1
    np.testing.assert_allclose(tl.io.read_doc_topics(p)[1], [[0.2, 0.7]])
    for pairs, part in [("1.0\t0.7", "topic '1.0' is not a whole number"),
                        ("1\t0.5\t1\t0.5", "a topic is listed twice"), ("1\tinf", "finite numbers")]:
        p.write_text(head + f"0\tdoc0\t{pairs}\n")
        with pytest.raises(tl.InputFileError, match="dt.txt:2: ") as exc:
            tl.io.read_doc_topics(p)
        assert part in str(exc.value)


def test_state_file_values(tmp_path):
    p = tmp_path / "s.txt"
    head = "#doc source pos typeindex type topic\n#alpha : 0.1 0.1\n#beta : 0.01\n"
    for body, part in [("0 x 0 0 a ١\n", "s.txt:4: topic '١' is not a whole number"),
                       ("0 x 0 0 a 1_0\n", "s.txt:4: topic '1_0' is not a whole number"),
                       ("0 x 0 ² a 0\n", "s.txt:4: typeindex '²' is not a whole number")]:
        p.write_text(head + body)
        with pytest.raises(tl.InputFileError) as exc:
            tl.load_model(p, format="mallet-state")
        assert part in str(exc.value)
    p.write_text(head.replace("0.1 0.1", "0.1 nan") + "0 x 0 0 a 0\n")
    with pytest.raises(tl.InputFileError, match="s.txt:2: #alpha values must be finite numbers, got 'nan'"):
        tl.load_model(p, format="mallet-state")


# -- theta and labels --------------------------------------------------------------------------------


@pytest.mark.parametrize("damage,part", [("nan", "document 3: topic 1's proportion nan"),
                                         ("negative", "document 3: topic 1's proportion -0.1"),
                                         ("sum", "document 3: the topic proportions sum to 2"),
                                         ("int", "document 0: the topic proportions sum to 0")])
def test_theta_file(tmp_path, model, damage, part):
    """A theta file that is not topic proportions builds no tasks (an integer matrix was taken
    for documents of word ids, and theta inferred from them)."""
    docs = example_paths()[1]
    D = len(tl.read_corpus(docs, vocab=model.vocab))
    theta = np.full((D, model.num_topics), 1 / model.num_topics)
    if damage == "nan":
        theta[3, 1] = np.nan
    elif damage == "negative":
        theta[3, 0] += 0.1 + theta[3, 1]  # the row still sums to 1
        theta[3, 1] = -0.1
    elif damage == "sum":
        theta[3] *= 2
    else:
        theta = np.zeros_like(theta, dtype=np.int64)
    np.save(tmp_path / "theta.npy", theta)
    _one_line_error(["intrusion", "topics", example_paths()[0], docs, "--theta", tmp_path / "theta.npy",
                     "-o", tmp_path / "t.jsonl", "--key", tmp_path / "k.jsonl"], "theta.npy: " + part)
    assert not (tmp_path / "t.jsonl").exists() and not (tmp_path / "k.jsonl").exists()


def test_theta_in_the_library_call(model):
    theta = np.full((2, model.num_topics), 1 / model.num_topics)
    theta[1, 0] = np.nan
    with pytest.raises(tl.TealeavesError, match="theta: document 1: topic 0's proportion nan"):
        tl.intrusion.topic_tasks(model, theta, secret=SECRET)


def test_bcubed_doc_topic_matrix(tmp_path):
    np.save(tmp_path / "pred.npy", np.array([[0.9, 0.1], [-0.2, 1.2], [0.4, 0.6]]))
    (tmp_path / "gold.txt").write_text("a\nb\nb\n")
    _one_line_error(["bcubed", tmp_path / "pred.npy", tmp_path / "gold.txt"],
                    "pred.npy: document 1: topic 0's proportion -0.2")


# -- the rest: word ids, options, the database export -------------------------------------------------


@pytest.mark.parametrize("token", ["٣", "1_0", "²", "9" * 5000])
def test_word_id_documents(tmp_path, model, token):
    (tmp_path / "ids.txt").write_text(f"0 1\n2 {token}\n")
    with pytest.raises(tl.InputFileError, match="ids.txt:2: token .* is not a whole number") as exc:
        tl.read_corpus(tmp_path / "ids.txt", vocab=model.vocab, format="ids")
    assert len(str(exc.value).replace(str(tmp_path), "")) < 200  # the token is cut, not printed whole


@pytest.mark.parametrize("option,value", [("--bootstrap", "٣"), ("--bootstrap", "1_000"), ("--seed", "²")])
def test_number_options_are_ascii(tmp_path, tasks, option, value):
    tl.intrusion.write_tasks(tasks, tmp_path / "t.jsonl", tmp_path / "k.jsonl", secret=SECRET)
    (tmp_path / "r.jsonl").write_text("")
    _one_line_error(["intrusion", "score", tmp_path / "k.jsonl", tmp_path / "r.jsonl", option, value],
                    f"argument {option}: expected an integer, got {value!r}")


@pytest.mark.parametrize("alpha", ["nan", "0.1,inf", "٣"])
def test_alpha_option_values(tmp_path, alpha):
    _one_line_error(["diversity", _weights(tmp_path), "--alpha", alpha], "--alpha", "finite numbers")


@pytest.mark.parametrize("damage,part", [("UPDATE responses SET options = '[1, 2]'",
                                          "damaged response 1: options: expected a list of strings"),
                                         ("UPDATE responses SET choice = 1.5",
                                          "damaged response 1: choice is float")])
def test_export_of_damaged_values(tmp_path, tasks, damage, part):
    from tealeaves.annotate import open_store

    db = tmp_path / "a.sqlite"
    store = open_store(str(db))
    store.install([t.public() for t in tasks])
    store.add_participant("a0", "0" * 64)
    store.answer("a0", tasks[0].item, tasks[0].options, 1, 100)
    store.engine.dispose()
    with contextlib.closing(sqlite3.connect(db)) as con:
        con.execute(damage)
        con.commit()
        con.execute("PRAGMA journal_mode=DELETE")
    _one_line_error(["annotate", "export", "--db", db, "-o", tmp_path / "r.csv"], part)
    assert not (tmp_path / "r.csv").exists()


# -- red-team round (REDTEAM.md items 6-9, 11, 14, 16, 17) ------------------------------------------


def _key_lines(tmp_path: Path, tasks) -> list[dict]:
    tl.intrusion.write_tasks(tasks, tmp_path / "t.jsonl", tmp_path / "k.jsonl", secret=SECRET)
    return [json.loads(line) for line in (tmp_path / "k.jsonl").read_text().splitlines()]


def _correct_responses(path: Path, key: list[dict], annotator: str = "a") -> Path:
    path.write_text("".join(json.dumps({"annotator": annotator, "item": k["item"], "choice": k["intruder"]})
                            + "\n" for k in key))
    return path


@pytest.mark.parametrize("text", ['{"a": 1, "a": 2}', '[{"x": {"b": 1, "c": 2, "b": 1}}]'])
def test_json_object_naming_a_key_twice(text):
    with pytest.raises(tl.InputFileError, match=r"f.json: not valid JSON \(the key '[ab]' appears twice"):
        parse_json(text, "f.json")


def test_duplicate_keys_in_key_and_response_files(tmp_path, tasks):
    key = _key_lines(tmp_path, tasks)
    lines = (tmp_path / "k.jsonl").read_text().splitlines(keepends=True)
    (tmp_path / "k2.jsonl").write_text(lines[0].replace('"intruder": ', '"intruder": 0, "intruder": ', 1)
                                       + "".join(lines[1:]))
    r = _correct_responses(tmp_path / "r.jsonl", key)
    _one_line_error(["intrusion", "score", tmp_path / "k2.jsonl", r],
                    "k2.jsonl:1: not valid JSON (the key 'intruder' appears twice")
    (tmp_path / "r2.jsonl").write_text(f'{{"annotator": "a", "item": "{key[0]["item"]}", "choice": 0, '
                                       f'"choice": {key[0]["intruder"]}}}\n')
    _one_line_error(["intrusion", "score", tmp_path / "k.jsonl", tmp_path / "r2.jsonl"],
                    "r2.jsonl:1: not valid JSON (the key 'choice' appears twice")


@pytest.mark.parametrize("literal", ["NaN", "Infinity", "-Infinity", "1e999", "-1e999"])
def test_json_non_finite_literals_are_refused(literal):
    with pytest.raises(tl.InputFileError, match="f.json: not valid JSON"):
        parse_json(f'{{"diversity": {literal}}}', "f.json")


def test_key_with_log_zero_is_still_read(tmp_path):
    """-Infinity (log 0) is what json.dumps writes for a key's zero proportion: the key reader
    takes it (and scores it), and no other reader does."""
    from tealeaves.intrusion.tasks import Task

    task = Task(item="d0", kind="topic", model="A", options=["t u", "v w", "x y"], document=0, intruder=1,
                option_topics=[0, 1, 2], option_log_theta=[float(np.log(0.6)), -np.inf, float(np.log(0.4))])
    tl.intrusion.write_tasks([task], tmp_path / "t.jsonl", tmp_path / "k.jsonl", secret=SECRET)
    assert "-Infinity" in (tmp_path / "k.jsonl").read_text()
    assert tl.intrusion.read_key(tmp_path / "k.jsonl")[0]["option_log_theta"][1] == -np.inf
    (tmp_path / "r.jsonl").write_text('{"annotator": "a", "item": "d0", "choice": 1}\n')
    assert _run(["intrusion", "score", tmp_path / "k.jsonl", tmp_path / "r.jsonl"])[0] == 0
    with pytest.raises(tl.InputFileError, match="-Infinity is not a JSON number"):
        parse_json('{"x": -Infinity}', "f.json")


def _diversity_json(tmp_path: Path, **fields) -> Path:
    doc = {"task": "diversity", "diversity": 0.5, "topn": 10, "exclusivity": [1.0, 2.0]}
    p = tmp_path / "d.json"
    p.write_text(json.dumps({**doc, **fields}))
    return p


@pytest.mark.parametrize("fields,part", [({"diversity": -7}, "field diversity: expected a number in 0..1"),
                                         ({"diversity": 5}, "field diversity: expected a number in 0..1"),
                                         ({"topn": -5}, "field topn: expected a whole number >= 1"),
                                         ({"topn": 1e300}, "field topn: expected a whole number >= 1"),
                                         ({"topn": 2.5}, "field topn: expected a whole number >= 1"),
                                         ({"exclusivity": [-1.0]},
                                          "field exclusivity[0]: expected a number >= 0")])
def test_report_refuses_impossible_values(tmp_path, fields, part):
    _one_line_error(["report", _diversity_json(tmp_path, **fields), "-o", tmp_path / "r.html"], part)
    assert not (tmp_path / "r.html").exists()


def test_report_refuses_negative_counts_and_non_finite_literals(tmp_path):
    doc = {"task": "heldout", "results": [{"label": "m", "method": "is", "total": -10.0, "per_token": -2.0,
                                           "perplexity": 7.4, "tokens": -160, "seconds": 0.1}]}
    p = tmp_path / "h.json"
    p.write_text(json.dumps(doc))
    _one_line_error(["report", p, "-o", tmp_path / "r.html"],
                    "field results[0].tokens: expected a whole number >= 0")
    for literal, why in (("NaN", "NaN is not a JSON number"), ("Infinity", "Infinity is not a JSON number"),
                         ("1e999", "the number 1e999 is too large for a float")):
        p.write_text(json.dumps(doc).replace('"tokens": -160', f'"tokens": {literal}'))
        _one_line_error(["report", p, "-o", tmp_path / "r.html"], "h.json: ", f"not valid JSON ({why})")
    p.write_text('{"task": "diversity", "diversity": 0.5, "diversity": 0.9}')
    _one_line_error(["report", p, "-o", tmp_path / "r.html"], "the key 'diversity' appears twice")


def test_report_still_reads_what_tealeaves_writes_for_unavailable_values(tmp_path):
    """tealeaves writes an unavailable number as null (never NaN): the range checks let null pass."""
    p = _diversity_json(tmp_path, diversity=None, exclusivity=[1.0])
    assert _run(["report", p, "-o", tmp_path / "r.html"])[0] == 0


def _damaged_key(tmp_path: Path, tasks, change) -> Path:
    key = _key_lines(tmp_path, tasks)
    key = [k for k in key if not k["attention"]]
    change(key[0])
    p = tmp_path / "k2.jsonl"
    p.write_text("".join(json.dumps(k) + "\n" for k in key))
    _correct_responses(tmp_path / "r.jsonl", key)
    return p


@pytest.mark.parametrize("change,part", [
    (lambda k: k.update(options=[k["options"][0]] * len(k["options"])), "options 0 and 1 look the same"),
    (lambda k: k.update(options=["ﬁre", "fire", "x", "y", "z", "w"]), "options 0 and 1 look the same"),
    (lambda k: k.update(options=["a", " ", "x", "y", "z", "w"]), "option 1 is blank"),
    (lambda k: k.update(kind="topic"), "a topic item needs an integer document"),
    (lambda k: k.update(kind="topic", document=0, topic=None), "a topic item needs one option_log_theta"),
    (lambda k: k.update(document=3), "a word item has no document"),
    (lambda k: k.update(option_log_theta=[-1.0] * 6), "a word item has no option_topics or option_log_theta"),
])
def test_key_rows_that_cannot_be_true(tmp_path, tasks, change, part):
    _one_line_error(["intrusion", "score", _damaged_key(tmp_path, tasks, change), tmp_path / "r.jsonl"],
                    "k2.jsonl:1: ", part)


def _topic_key(tmp_path: Path, change=None) -> tuple[Path, Path]:
    model = tl.synthetic.random_model(8, 40, seed=3)
    rng = np.random.default_rng(0)
    theta = rng.dirichlet(np.ones(8), size=4)
    made = tl.intrusion.topic_tasks(model, theta, n_topics=3, seed=1)
    tl.intrusion.write_tasks(made, tmp_path / "t.jsonl", tmp_path / "k.jsonl", secret=SECRET)
    key = [json.loads(line) for line in (tmp_path / "k.jsonl").read_text().splitlines()]
    if change:
        change(key[0])
        (tmp_path / "k.jsonl").write_text("".join(json.dumps(k) + "\n" for k in key))
    return tmp_path / "k.jsonl", _correct_responses(tmp_path / "r.jsonl", key)


@pytest.mark.parametrize("change,part", [
    (lambda k: k.update(option_log_theta=[5.0] * len(k["options"])),
     "option_log_theta 5.0 is not a log proportion"),
    (lambda k: k.update(option_topics=[0] * len(k["options"])), "names a topic twice"),
    (lambda k: k.update(option_topics=k["option_topics"][:-1]), "option_topics names"),
    (lambda k: k.update(kind="word"), "a word item needs an integer topic"),
    (lambda k: k.update(kind="word", topic=1), "a word item has no document"),
])
def test_topic_key_rows_that_cannot_be_true(tmp_path, change, part):
    key, responses = _topic_key(tmp_path, change)
    _one_line_error(["intrusion", "score", key, responses], "k.jsonl:1: ", part)


def test_scores_never_print_nan_without_a_reason(tmp_path):
    """One annotator, one document: no interval and no kappa can be computed; each says why."""
    key, _ = _topic_key(tmp_path)
    first = key.read_text().splitlines()[0]
    key.write_text(first + "\n")
    responses = _correct_responses(tmp_path / "r1.jsonl", [json.loads(first)])
    code, out, _ = _run(["intrusion", "score", key, responses])
    assert code == 0 and "nan" not in out.lower(), out
    assert "n/a (<2 docs)" in out
    assert "agreement (topic intrusion): n/a, needs two raters on at least one item" in out


def test_kappa_when_everyone_agrees_on_one_position(tmp_path, tasks):
    key = [k for k in _key_lines(tmp_path, tasks) if not k["attention"]][:1]
    (tmp_path / "k1.jsonl").write_text(json.dumps(key[0]) + "\n")
    answers = [{"annotator": a, "item": key[0]["item"], "choice": 0} for a in "abc"]
    (tmp_path / "r.jsonl").write_text("".join(json.dumps(r) + "\n" for r in answers))
    code, out, _ = _run(["intrusion", "score", tmp_path / "k1.jsonl", tmp_path / "r.jsonl"])
    assert code == 0 and "nan" not in out.lower(), out
    assert "n/a (<2 topics)" in out and "(word intrusion): n/a, every answer chose the same position" in out


def test_empty_inputs_are_errors(tmp_path, tasks):
    (tmp_path / "blank.txt").write_text("\n\n\n")
    _one_line_error(["intrusion", "auto", example_paths()[0], tmp_path / "blank.txt"],
                    "the reference corpus is empty")
    key = _key_lines(tmp_path, tasks)
    (tmp_path / "r0.jsonl").write_text("")
    _one_line_error(["intrusion", "score", tmp_path / "k.jsonl", tmp_path / "r0.jsonl"],
                    "no response to score: the responses file holds no response")
    checks = [k for k in key if k["attention"]]
    (tmp_path / "ka.jsonl").write_text("".join(json.dumps(k) + "\n" for k in checks))
    answered = _correct_responses(tmp_path / "r.jsonl", checks)
    _one_line_error(["intrusion", "score", tmp_path / "ka.jsonl", answered],
                    "no response to score: every item in the key is an attention check")
    _one_line_error(["intrusion", "score", tmp_path / "k.jsonl", tmp_path / "r.jsonl"],
                    "no response to score: every response answers an attention check")


def test_utf16_files_are_named_with_the_right_advice(tmp_path, tasks):
    key = _key_lines(tmp_path, tasks)
    r = _correct_responses(tmp_path / "r.jsonl", key)
    (tmp_path / "r16.jsonl").write_bytes(r.read_text().encode("utf-16"))  # with a byte-order mark
    msg = _one_line_error(["intrusion", "score", tmp_path / "k.jsonl", tmp_path / "r16.jsonl"],
                          "r16.jsonl: looks like UTF-16 (NUL bytes / a byte-order mark)", "save it as UTF-8")
    assert "--encoding" not in msg and "latin-1" not in msg  # score has no --encoding
    # a UTF-16-LE CSV without a byte-order mark decodes as UTF-8 (NUL after every character)
    (tmp_path / "r.csv").write_bytes("annotator,item,choice\na,x,1\n".encode("utf-16-le"))
    _one_line_error(["intrusion", "score", tmp_path / "k.jsonl", tmp_path / "r.csv"],
                    "r.csv: looks like UTF-16", "iconv -f UTF-16-LE -t UTF-8")
    docs = tmp_path / "d.txt"
    docs.write_bytes("the people of the nation\n".encode("utf-16-le"))
    _one_line_error(["heldout", "sotu:sotu-20-asym", docs, "--particles", "2"], "d.txt:1: looks like UTF-16",
                    "--encoding utf-16-le")
    docs.write_bytes("the people of the nation\n".encode("utf-16"))
    _one_line_error(["heldout", "sotu:sotu-20-asym", docs, "--particles", "2"], "d.txt:1: looks like UTF-16",
                    "--encoding utf-16")
    vocab = tmp_path / "v.txt"
    vocab.write_bytes("\n".join(f"w{i}" for i in range(30)).encode("utf-16"))
    msg = _one_line_error(["diversity", example_paths()[0], "--vocab", vocab], "looks like UTF-16")
    assert "--encoding" not in msg


def test_a_stray_nul_in_a_text_file(tmp_path):
    docs = tmp_path / "d.txt"
    docs.write_bytes(b"the people of the nation and the government\nthe\x00 people\n")
    _one_line_error(["heldout", "sotu:sotu-20-asym", docs, "--particles", "2"],
                    "d.txt:2: holds a NUL character (column 4)")


def test_tokenizer_removals_are_counted(tmp_path):
    model = example_paths()[0]
    docs = tmp_path / "d.txt"
    docs.write_text("w29 w30 a 12\nw1 b\n")
    _one_line_error(["heldout", model, docs, "--tokenize", "default"],
                    "no token is in the model's vocabulary (0 dropped; "
                    "6 string(s) removed whole by the tokenizer)")
    corpus = tl.read_corpus(docs, tokenizer="default")
    assert corpus.tokenizer_dropped == 6 and corpus.report()["tokenizer_dropped"] == 6
    assert tl.read_corpus(docs).tokenizer_dropped == 0  # whitespace removes nothing


STATE_HEAD = "#doc source pos typeindex type topic\n#alpha : 0.1 0.1\n#beta : 0.01\n"


@pytest.mark.parametrize("body,part", [
    ("-1 x 0 0 a 0\n", "s.txt:4: document -1 is out of range"),
    ("0 x 0 0 a 0\n1 x 0 1 b 1\n0 x 1 0 a 0\n", "s.txt:6: document 0 after document 1 (line 5)"),
    ("0 x 0 0 a 0\n0 x 1 1 b 1\n0 x 1 1 b 0\n", "s.txt:6: position 1 of document 0 is listed twice (line 5)"),
    ("0 x 0 0 a 0\n0 x 2 1 b 1\n0 x 1 1 b 0\n", "s.txt:6: position 1 of document 0 comes after position 2"),
    ("0 x -3 0 a 0\n", "s.txt:4: position -3 is out of range"),
    ("x x 0 0 a 0\n", "s.txt:4: document 'x' is not a whole number"),
])
def test_state_file_order(tmp_path, body, part):
    p = tmp_path / "s.txt"
    p.write_text(STATE_HEAD + body)
    with pytest.raises(tl.InputFileError) as exc:
        tl.load_model(p, format="mallet-state")
    assert part in str(exc.value) and "\n" not in str(exc.value)
    p.write_text(STATE_HEAD + "0 x 0 0 a 0\n0 x 1 1 b 1\n2 x 0 1 b 0\n")  # document 1 empty: fine
    assert tl.load_model(p, format="mallet-state").num_topics == 2


@pytest.mark.parametrize("field,value,part", [
    ("annotator", " alice ", "annotator ' alice ' has white space at its start or end"),
    ("annotator", "al\nice", "annotator 'al\\nice' holds the control character U+000A"),
    ("annotator", "a\x00b", "holds the control character U+0000"),
    ("annotator", "a\x1b[31m", "holds the control character U+001B"),
    ("annotator", 5, "annotator 5 is not a string"),
    ("choice", "2", "choice '2' is text; in JSON a position is a number"),
])
def test_response_ids_and_json_choices(tmp_path, tasks, field, value, part):
    key = _key_lines(tmp_path, tasks)
    r = {"annotator": "a", "item": key[0]["item"], "choice": 2, field: value}
    (tmp_path / "r.jsonl").write_text(json.dumps(r) + "\n")
    _one_line_error(["intrusion", "score", tmp_path / "k.jsonl", tmp_path / "r.jsonl"], "r.jsonl:1: ", part)


def test_response_csv_ids_are_checked_and_choices_are_text(tmp_path, tasks):
    key = _key_lines(tmp_path, tasks)
    rows = [{"annotator": "a", "item": k["item"], "choice": str(k["intruder"])} for k in key]
    _write_csv(tmp_path / "r.csv", rows)
    assert _run(["intrusion", "score", tmp_path / "k.jsonl", tmp_path / "r.csv"])[0] == 0  # "2" in a CSV cell
    rows[1]["annotator"] = "a "
    _write_csv(tmp_path / "r.csv", rows)
    _one_line_error(["intrusion", "score", tmp_path / "k.jsonl", tmp_path / "r.csv"],
                    "r.csv:3: annotator 'a ' has white space")


@pytest.mark.parametrize("encoding", ["unicode_escape", "raw_unicode_escape", "idna", "punycode", "utf-7",
                                      "U7"])
def test_transforming_codecs_are_not_encodings(tmp_path, encoding):
    _one_line_error(["heldout", example_paths()[0], example_paths()[1], "--encoding", encoding],
                    "--encoding", "transforms text rather than decoding a character set")


def test_real_character_sets_are_still_encodings():
    from tealeaves.files.textfile import check_encoding

    for name in ("utf-8", "latin-1", "cp1252", "utf-16-le", "palmos", "koi8-r"):
        assert check_encoding(name) == name
