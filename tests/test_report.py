"""`tealeaves demo --quick` on the bundled corpus writes a report; the report renders in headless
Chromium with every plot present and non-empty and nothing fetched from the network; every
command's --json output can be fed to `tealeaves report`; the bundled corpus is what it says."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest
from servers import CHROMIUM, CHROMIUM_ARGS

import tealeaves as tl
from tealeaves import datasets


def _run(*args, cwd=None):
    r = subprocess.run(
        [sys.executable, "-m", "tealeaves", *map(str, args)],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=900,
    )
    assert r.returncode == 0, r.stderr
    return r.stdout


LAYOUT = """() => [...document.querySelectorAll('svg')].map(s => {
    const r = s.getBoundingClientRect();
    const texts = [...s.querySelectorAll('text')].filter(t => t.textContent.trim());
    const boxes = texts.map(t => {
        const c = t.getBoundingClientRect();
        return {b: {x: c.x, y: c.y, width: c.width, height: c.height}, text: t.textContent,
                cls: t.getAttribute('class') || ''};
    });
    const outside = boxes.filter(({b}) => b.x < r.x - 0.5 || b.y < r.y - 0.5 || b.x + b.width > r.right + 0.5
                                      || b.y + b.height > r.bottom + 0.5).map(x => x.text);
    const ticks = boxes.filter(x => x.cls.includes('tick'));
    const overlaps = [];
    for (let i = 0; i < ticks.length; i++) for (let j = i + 1; j < ticks.length; j++) {
        const a = ticks[i].b, b = ticks[j].b;
        if (a.x < b.x + b.width - 0.5 && b.x < a.x + a.width - 0.5 && a.y < b.y + b.height - 0.5
            && b.y < a.y + a.height - 0.5) overlaps.push([ticks[i].text, ticks[j].text]);
    }
    return {name: s.dataset.name, outside, overlaps,
            xtitle: !!s.querySelector('.xtitle') && s.querySelector('.xtitle').textContent.trim().length > 0,
            ytitle: !!s.querySelector('.ytitle')};
})"""


def _layout(path):
    """Per chart: text that leaves the chart's box, tick labels that overlap, axis titles."""
    from playwright.sync_api import sync_playwright

    if not os.path.exists(CHROMIUM):
        pytest.skip("Debian's chromium is not installed (.ci/run installs it)")
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        page = browser.new_page()
        page.goto(f"file://{path}")
        out = page.evaluate(LAYOUT)
        browser.close()
    return out


def assert_clean_layout(path):
    for c in _layout(path):
        assert not c["outside"], (c["name"], c["outside"])
        assert not c["overlaps"], (c["name"], c["overlaps"])
        assert c["xtitle"], c["name"]
        assert c["ytitle"] or c["name"].startswith(("coherence", "exclusivity", "model-precision")), c["name"]


def _render(path):
    """Open `path` in headless Chromium; per SVG chart: its size and number of drawn marks; and every
    request the page made."""
    from playwright.sync_api import sync_playwright

    if not os.path.exists(CHROMIUM):
        pytest.skip("Debian's chromium is not installed (.ci/run installs it)")
    requests = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        page = browser.new_page()
        page.on("request", lambda r: requests.append(r.url))
        page.goto(f"file://{path}")
        charts = page.evaluate("""() => [...document.querySelectorAll('svg')].map(s => {
            const r = s.getBoundingClientRect();
            const marks = [...s.querySelectorAll('.mark')].filter(m => {
                const b = m.getBoundingClientRect(); return b.width > 0 && b.height > 0; });
            return {w: r.width, h: r.height, marks: marks.length,
                    title: (s.querySelector('.title') || {}).textContent};
        })""")
        headings = page.locator("h2").all_inner_texts()
        browser.close()
    return charts, headings, requests


def test_bundled_corpus_split_and_labels():
    c = datasets.sotu()
    assert len(c.train) + len(c.heldout) == 19597 and len(c.heldout) == len(c.heldout_text) == 3400
    assert c.train.vocab == c.heldout.vocab and len(c.train.vocab) == 3000
    assert len(c.party["heldout"]) == len(c.heldout) and set(c.parties) >= {"Democratic", "Republican"}
    # whole addresses are held out
    assert not set(c.address["train"].tolist()) & set(c.address["heldout"].tolist())
    assert len(set(c.address["heldout"].tolist())) == 249 // 5 and c.year["heldout"].min() >= 1790
    for name in datasets.SOTU_MODELS:
        m = datasets.sotu_model(name)
        assert m.vocab == c.train.vocab and m.name == name
    asym, sym = datasets.sotu_model("sotu-20-asym"), datasets.sotu_model("sotu-20-sym")
    assert asym.alpha.max() / asym.alpha.min() > 3 and np.allclose(sym.alpha, sym.alpha[0])
    with pytest.raises(tl.MethodError, match="unknown bundled model"):
        datasets.sotu_model("nope")


def test_demo_quick_writes_a_report_that_renders(tmp_path):
    out = _run(
        "demo", "--quick", "--quiet", "--report", tmp_path / "demo.html", "--json", tmp_path / "demo.json"
    )
    assert "left-to-right" in out and "B-Cubed" in out and "report ->" in out
    data = json.loads((tmp_path / "demo.json").read_text())
    kinds = [s.get("command") or s.get("task") for s in data["sections"]]
    assert {"heldout", "compare", "coherence", "bcubed", "predictive", "intrusion-tasks"} <= set(kinds)
    charts, headings, requests = _render(tmp_path / "demo.html")
    assert len(charts) >= 8
    for c in charts:
        assert c["w"] > 100 and c["h"] > 100 and c["marks"] > 0, c
    assert any("Held-out likelihood" in h for h in headings) and any("Coherence" in h for h in headings)
    assert all(u.startswith("file://") for u in requests), requests  # nothing fetched at view time
    assert_clean_layout(tmp_path / "demo.html")
    html = (tmp_path / "demo.html").read_text()
    assert "<td>Republican</td>" in html and "<td>Democratic</td>" in html  # classes by name, not 0-6


def test_every_commands_json_feeds_the_report(tmp_path, example):
    _, _, model_path, docs_path = example
    j = {
        k: tmp_path / f"{k}.json"
        for k in (
            "heldout",
            "compare",
            "curve",
            "coherence",
            "diversity",
            "bcubed",
            "predictive",
            "score",
            "auto",
            "csl",
        )
    }
    _run(
        "heldout",
        model_path,
        docs_path,
        "--methods",
        "left-to-right,chib",
        "--runs",
        "2",
        "--json",
        j["heldout"],
    )
    _run(
        "compare",
        model_path,
        model_path,
        docs_path,
        "--temperatures",
        20,
        "--start-temperatures",
        20,
        "--json",
        j["compare"],
    )
    _run(
        "curve",
        model_path,
        model_path,
        docs_path,
        "--temperatures",
        10,
        "--first-temperatures",
        20,
        "--json",
        j["curve"],
    )
    _run("coherence", model_path, docs_path, "--json", j["coherence"])
    _run("diversity", model_path, "--json", j["diversity"])
    (tmp_path / "a.txt").write_text("1\n1\n2\n2\n")
    (tmp_path / "b.txt").write_text("x\nx\nx\ny\n")
    _run("bcubed", tmp_path / "a.txt", tmp_path / "b.txt", "--json", j["bcubed"])
    _run("predictive", model_path, docs_path, "--samples", 20, "--json", j["predictive"])
    _run("intrusion", "words", model_path, "-o", tmp_path / "t.jsonl", "--key", tmp_path / "k.jsonl")
    key = tl.intrusion.read_key(tmp_path / "k.jsonl")
    with open(tmp_path / "r.jsonl", "w") as fh:
        for a in range(3):
            for k in key:
                fh.write(
                    json.dumps({"annotator": f"a{a}", "item": k["item"], "choice": (k["intruder"] + a) % 6})
                    + "\n"
                )
    _run("intrusion", "score", tmp_path / "k.jsonl", tmp_path / "r.jsonl", "--json", j["score"])
    _run("intrusion", "auto", tmp_path / "k.jsonl", docs_path, "--json", j["auto"])
    _run("csl", model_path, docs_path, "--samples", 50, "--chains", 2, "--json", j["csl"])
    _run("report", *j.values(), "-o", tmp_path / "all.html", "--title", "everything")
    charts, headings, requests = _render(tmp_path / "all.html")
    assert len(headings) == len(j) and all(c["marks"] > 0 for c in charts)
    assert all(u.startswith("file://") for u in requests)
    assert_clean_layout(tmp_path / "all.html")
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "tealeaves",
            "report",
            str(tmp_path / "t.jsonl"),
            "-o",
            str(tmp_path / "x.html"),
        ],
        capture_output=True,
        text=True,
    )
    assert r.returncode == 2 and "not a JSON result" in r.stderr and "Traceback" not in r.stderr
