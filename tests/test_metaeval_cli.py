"""`tealeaves metaeval`: terminal tables, --json, the report section (drawn in Chromium), and bad
input as one-line errors."""

from __future__ import annotations

import json
import os

import pytest
from clirun import one_line_error, run_cli
from servers import CHROMIUM, CHROMIUM_ARGS


def test_bundled_study_table_and_json(tmp_path):
    out = tmp_path / "m.json"
    code, text, _ = run_cli(["metaeval", "hoyle2021", "--metric", "c_npmi_10_full", "--metric", "c_v_full",
                             "--bootstrap", "100", "--statistic", "spearman", "--json", out])
    assert code == 0
    assert "wikitext (150 topics)  nytimes (150 topics)  all (300 topics)" in text
    assert "ceiling (split half)" in text and "paired comparisons with the best score" in text
    doc = json.loads(out.read_text())
    assert doc["command"] == "metaeval" and doc["task"] == "metaeval" and doc["judgment_task"] == "rating"
    assert {r["score"] for r in doc["rows"]} == {"c_npmi_10_full", "c_v_full"}


def test_judges_and_the_alternative_annotator_test(tmp_path):
    out = tmp_path / "p.json"
    code, text, _ = run_cli(["metaeval", "proxann2025:bills", "--metric", "npmi", "--judge", "Qwen3-32B",
                             "--bootstrap", "100", "--statistic", "kendall", "--json", out])
    assert code == 0 and "alternative-annotator test, Qwen3-32B" in text and "advantage probability" in text
    doc = json.loads(out.read_text())
    t = doc["alt_test"]["Qwen3-32B"]
    assert t["pseudo"] == "dataset" and t["annotators"] == 4  # every worker judged one topic
    assert doc["quality"] == "theta" and "excluded 20 of 121" in doc["study_notes"][-1]


def test_user_scores_and_too_few_topics(tmp_path):
    answers = tmp_path / "answers.csv"
    answers.write_text("topic,annotator,task,value\n" + "".join(
        f"t{t},a{a},rating,{(t + a) % 3 + 1}\n" for t in range(4) for a in range(3)))
    scores = tmp_path / "scores.csv"
    scores.write_text("topic,mine\nt0,0.1\nt1,0.4\nt2,0.3\nt3,0.9\n")
    code, text, _ = run_cli(["metaeval", answers, "--scores", scores, "--bootstrap", "50"])
    assert code == 0 and "n/a, 4 topics: a correlation's bootstrap interval needs at least 10" in text


def test_the_report_draws_the_section(tmp_path):
    out = tmp_path / "m.json"
    assert run_cli(["metaeval", "proxann2025:bills", "--metric", "npmi", "--metric", "cv", "--judge",
                    "gpt-4o-2024-08-06", "--bootstrap", "100", "--json", out])[0] == 0
    assert run_cli(["report", out, "-o", tmp_path / "r.html"])[0] == 0
    from playwright.sync_api import sync_playwright

    if not os.path.exists(CHROMIUM):
        pytest.skip("Debian's chromium is not installed (.ci/run installs it)")
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        page = browser.new_page()
        page.goto(f"file://{tmp_path / 'r.html'}")
        headings = page.locator("h2").all_inner_texts()
        captions = page.locator("caption").all_inner_texts()
        cells = page.locator("td").all_inner_texts()
        browser.close()
    assert any("Agreement with people: proxann2025:bills (fit)" in h for h in headings)
    assert any("Alternative-annotator test" in c for c in captions)
    assert any(c.startswith("Kendall") for c in captions) and "ceiling" in cells


def test_bad_input_is_one_line(tmp_path):
    one_line_error(["metaeval", "hoyle2021", "--metric", "nope"], "no metric 'nope'")
    one_line_error(["metaeval", "hoyle2021", "--task", "fit"], "has no task 'fit'")
    one_line_error(["metaeval", "proxann2025:bills", "--judge", "nope"], "no judge 'nope'")
    bad = tmp_path / "s.csv"
    bad.write_text("topic,x\nwikitext/mallet/0,1\nnot-a-topic,2\n")
    one_line_error(["metaeval", "hoyle2021", "--scores", bad], "s.csv:3: topic 'not-a-topic' is not among")
    bad.write_text("topic,x\nwikitext/mallet/0,1\nwikitext/mallet/0,2\n")
    one_line_error(["metaeval", "hoyle2021", "--scores", bad], "appears twice")
    bad.write_text("topic,x\nwikitext/mallet/0,many\n")
    one_line_error(["metaeval", "hoyle2021", "--scores", bad], "s.csv:2: x 'many' is not a finite number")
    ragged = tmp_path / "a.csv"
    ragged.write_text("topic,annotator,task,value\nt1,a,rating,1,9\n")
    one_line_error(["metaeval", ragged], "a.csv:2", "different number of fields")
    ragged.write_text("topic,annotator,task,value\nt1,a,rank,1\nt1,a,rank,1\n")
    one_line_error(["metaeval", ragged], "answered this topic twice")
