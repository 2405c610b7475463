"""Topic names from the zoo's files (issue 24): BERTopic's labels are checked, never silently
mismatched or made up; names from a file are shown safely; `Topics.topic_names` has one name a topic."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

import tealeaves as tl
from tealeaves.topics import topic_labels

FIXTURE = Path(__file__).parent / "fixtures" / "bertopic_sotu"


def _with_labels(tmp_path: Path, key: str, value) -> Path:
    d = tmp_path / "bt"
    shutil.copytree(FIXTURE, d)
    j = json.loads((d / "topics.json").read_text())
    j[key] = value
    (d / "topics.json").write_text(json.dumps(j))
    return d


def _saved():
    return json.loads((FIXTURE / "topics.json").read_text())


def test_custom_labels_of_the_wrong_length_are_refused(tmp_path):
    d = _with_labels(tmp_path, "custom_labels", ["x"])
    with pytest.raises(tl.InvalidModelError, match=r"custom_labels has 1 labels for the 6 topics \(-1, 0"):
        tl.load_topics(d)


def test_custom_labels_in_order_name_the_topics(tmp_path):
    ids = sorted(int(k) for k in _saved()["topic_labels"])
    d = _with_labels(tmp_path, "custom_labels", [f"label {t}" for t in ids])
    assert tl.load_topics(d).topic_names == tuple(f"label {t}" for t in ids if t != -1)


@pytest.mark.parametrize("bad", [5, {"a": 1}, None, [1]])
def test_a_label_that_is_not_a_string_is_refused(tmp_path, bad):
    labels = {k: v for k, v in _saved()["topic_labels"].items()}
    labels["2"] = bad
    d = _with_labels(tmp_path, "topic_labels", labels)
    with pytest.raises(tl.InvalidModelError, match=r"topic_labels\[2\] is .*, not a string"):
        tl.load_topics(d)


def test_labels_that_are_not_a_mapping_are_refused(tmp_path):
    d = _with_labels(tmp_path, "topic_labels", "0_a_b")
    with pytest.raises(tl.InvalidModelError, match="topic_labels is a str, not topic id -> name"):
        tl.load_topics(d)


def test_a_name_with_control_characters_is_shown_quoted(tmp_path):
    labels = dict(_saved()["topic_labels"])
    labels["0"] = "a\nb\x1b[31m"
    t = tl.load_topics(_with_labels(tmp_path, "topic_labels", labels))
    assert t.topic_names[0] == "a\nb\x1b[31m"  # kept as saved
    shown = topic_labels(t)[0]
    assert "\n" not in shown and "\x1b" not in shown and shown.startswith("0 ('a\\nb")


def test_topic_names_must_be_one_string_a_topic():
    with pytest.raises(tl.InvalidModelError, match="topic_names must be 2 strings"):
        tl.Topics(name="m", source="test", top_words=(("a",), ("b",)), topic_names=("x",))
    with pytest.raises(tl.InvalidModelError, match="topic_names must be 2 strings"):
        tl.Topics(name="m", source="test", top_words=(("a",), ("b",)), topic_names=("x", 3))
    assert topic_labels([["a"], ["b"]]) == ["0", "1"]
