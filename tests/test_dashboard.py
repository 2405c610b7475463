"""The report as a dashboard (issue 26, point 4), measured in headless Chromium: charts in a grid of
small multiples at the page's full width; every label whole (no text leaves its chart or its table
cell, nothing cut with an ellipsis, for hostile model names and words); every interval visible; the
expected Jensen gap drawn beside the sd; the recommendation first; per-topic tables sortable by a
click and readable without JavaScript; class names, left-aligned excerpts cut at a word; the
terminal's decimals; LaTeX and Markdown tables with every special character escaped."""

from __future__ import annotations

import json
import math
import os
import re
import subprocess
import sys

import pytest
from servers import CHROMIUM, CHROMIUM_ARGS

from tealeaves.report import all_tables, charts, render, tables_text
from tealeaves.report import svg as svgmod
from tealeaves.report.tables import Table, latex, markdown
from tealeaves.util.text import excerpt

HOSTILE = "a_b%c&d#e$f{g}h\\i~j^k|l"
LONG_WORD = "Wwwwwwwwwwmmmmmmmmmm" * 4  # 80 wide characters, no space to break at
NAMES = [f"{HOSTILE} model with a long name, forty topics, symmetric alpha, restart 1",
         LONG_WORD, "lda-10"]
WORDS = [["government", "people", LONG_WORD, "states", "nation", "congress", "public", "great",
          "country", "power"],
         ["war", "military", "forces", "defense", "army", "navy", "peace", "security", "enemy", "arms"],
         ["tax", "revenue", "debt", "treasury", "budget", "bank", "money", "spending", "deficit", "credit"]]
STAB = [0.91, None, 0.42]  # per topic of NAMES[0] (None: undefined)


def _row(name, k, per_token, sd, npmi, rank):
    return {"model": name, "topics": k, "per_token": per_token, "per_token_sd": sd,
            "perplexity": math.exp(-per_token), "coherence": {"npmi": npmi, "umass": -2.1234},
            "diversity": 0.81234, "exclusivity": 8.7654, "predictive_rank": rank,
            "auto_model_precision": 0.56789, "auto_model_precision_ci": [0.4, 0.7]}


def evaluate_doc():
    """An evaluate result by hand: hostile and long names, tiny intervals, per-topic data of every
    kind (top words, coherence, diagnostics, stability as CONTRACT3 describes it)."""
    rows = [_row(NAMES[0], 3, -7.123456, 0.0000012, 0.0512, 123.45),
            _row(NAMES[1], 3, -7.123401, 0.0000015, 0.0734, 98.76),
            _row(NAMES[2], 10, -7.3, 0.0000011, 0.0222, 45.6)]
    diag = {"task": "diagnostics", "model": NAMES[0], "counts": "expected", "flagged": [1],
            "topics": [{"topic": t, "words": " ".join(WORDS[t]), "tokens": [1200.0, 15.0, 430.0][t],
                        "document_entropy": [4.5, 0.2, 3.3][t], "coherence": [-80.5, -300.25, -120.0][t],
                        "uniform_dist": 2.5, "corpus_dist": [1.25, 0.004567, 0.9][t], "eff_num_words": 55.5,
                        "rank_1_docs": 0.25, "exclusivity": 0.5, "kl_background": [1.0, None, 0.75][t],
                        "flags": ["", "near-corpus one-document", ""][t]} for t in range(3)]}
    stability = [{"task": "stability", "distance": "jensen-shannon", "topn": None, "topics": 3,
                  "models": NAMES[:2], "per_topic": {NAMES[0]: STAB, NAMES[1]: [0.9, 0.5, 0.4]},
                  "per_model": {NAMES[0]: 0.665, NAMES[1]: 0.6}, "score": 0.63,
                  "flagged": {NAMES[1]: "merged two topics of the others"}, "params": {}, "seconds": 0.1}]
    from tealeaves.evaluate.human import carried, trusted

    human = carried("hoyle2021", ["coherence.npmi", "coherence.umass", "exclusivity", "diversity"])
    human["trusted"] = trusted(human)  # each metric's agreement with people (evaluate --human)
    return {"task": "evaluate", "rows": rows, "groups": [NAMES[:2], NAMES[2:]], "human": human,
            "comparisons": [{"a": NAMES[0], "b": NAMES[1], "method": "difference", "per_token": 0.0004,
                             "per_token_interval": [-0.0020, 0.0028], "verdict": "not separated"}],
            "params": {"coherence": ["npmi", "umass"]},
            "topic_words": {n: WORDS for n in NAMES},
            "topic_coherence": {NAMES[0]: {"npmi": [0.1, -0.05, None]}},
            "diagnostics": {NAMES[0]: diag}, "stability": stability}


SD, GAP = 23.0, 489.0  # the held-out chart: a ±23-nat sd bar, a 489-nat expected gap
DOC_SD = math.sqrt(GAP)  # four documents, two runs: 0.5 * 4 * sd^2 / 2 = sd^2 = GAP


def heldout_doc():
    r = {"label": "is-prior-theta(samples=10)", "method": "is-prior-theta", "total": -51234.5678, "sd": SD,
         "per_token": -7.5, "perplexity": 1808.04, "tokens": 6831, "seconds": 1.5, "unbiased": True,
         "runs": 2,
         "note": "unbiased for P(w)", "documents": {"log_prob": [-1.0, -2.0, -3.0, -4.0], "sd": [DOC_SD] * 4}}
    r2 = {**r, "label": "left-to-right", "method": "left-to-right", "total": -50800.25, "sd": 0.01,
          "documents": {"log_prob": [-1.1, -2.1, -3.1, -4.1], "sd": [0.01] * 4}}
    return {"command": "heldout", "model": NAMES[0], "docs": "held.txt", "results": [r, r2]}


def select_doc():
    ks = [5, 10, 15, 25]
    per_k = {"log-lik/token": {"mean": [-7.4, -7.31234, -7.31201, -7.35],
                               "sd": [0.00001, 0.02, 0.00002, 0.01]},
             "diversity": {"mean": [0.95, 0.9, 0.85, 0.7], "sd": [0.01, 0.01, 0.01, 0.01]},
             "exclusivity": {"mean": [8.0, 8.5, 9.0, 9.5], "sd": [0.1, 0.1, 0.1, 0.1]},
             "pred. rank": {"mean": [300.0, 200.0, 150.0, 100.0], "sd": [5.0, 5.0, 5.0, 5.0]}}
    choice = {"log-lik/token": {"k": 15, "runner_up": 10, "significant": False,
                                "why": "+0.00033 nats per token, 95% interval [-0.00200, +0.00280]"},
              "diversity": {"k": 5, "runner_up": 10, "significant": True, "why": "Welch"},
              "exclusivity": {"k": 25, "runner_up": 15, "significant": True, "why": "Welch"},
              "pred. rank": {"k": 25, "runner_up": 15, "significant": True, "why": "Welch"}}
    return {"task": "select", "topics": ks, "restarts": 3, "per_k": per_k, "choice": choice, "params": {}}


TEXT = ("Fellow citizens of the Senate and House of Representatives: among the vicissitudes incident to "
        "life no event could have filled me with greater anxieties than that of which the notification "
        "was transmitted by your order, and received on the fourteenth day of the present month. ") * 2


def other_docs():
    return [{"command": "diversity", "model": NAMES[1], "diversity": 0.8, "topn": 25,
             "exclusivity": [9.1, 9.2, 9.3], "words": WORDS},
            {"command": "bcubed", "precision": 0.5, "recall": 0.25, "f": 0.3, "f_of_means": 0.33, "items": 9,
             "per_class": [{"class": c, "precision": 0.5, "recall": 0.25, "f": 0.3}
                           for c in ("Democratic", "Democratic-Republican", "Whig")]},
            {"task": "intrusion-tasks", "tasks": [{"kind": "topic", "text": TEXT, "options": ["a", "b"]}]},
            proxann_doc()]


def proxann_doc():
    """A `proxann score --json` result by hand: a hostile model name, long words, labels and
    a topic whose tau is undefined."""
    agreement = {"krippendorff_alpha_interval": 0.41, "krippendorff_alpha_ordinal": 0.4, "fleiss_kappa": 0.27,
                 "items": 21, "answers": 84, "note": None}
    summary = {NAMES[0]: {"topics": 3, "responses": 12, "tau_fit": 0.61234, "tau_fit_topics": 2,
                          "tau_fit_ci": [0.4, 0.8], "tau_rank": 0.5, "tau_rank_topics": 3,
                          "tau_rank_ci": [None, None],
                          "annotator_tau_fit": 0.45, "human_tau_fit": 0.33, "distractor_rating": 1.25,
                          "clarity": 3.5, "agreement": agreement}}
    topics = [{"model": NAMES[0], "topic": t, "item": f"item{t}", "words": " ".join(WORDS[t]),
               "annotators": 4, "tau_fit": [0.81, None, 0.41][t], "tau_rank": 0.5, "spearman_fit": 0.9,
               "annotator_tau_fit": 0.4, "human_tau_fit": 0.3, "distractor_rating": 1.0, "clarity": 3.0,
               "labels": [HOSTILE, LONG_WORD, "public finance and the national debt"]} for t in range(3)]
    return {"command": "proxann score", "task": "proxann-score", "summary": summary, "topics": topics,
            "documents": [], "responses": [{}] * 12, "excluded_annotators": [HOSTILE], "incomplete": 1,
            "attention_failures": {HOSTILE: 2}, "params": {}}


ALL = [evaluate_doc(), heldout_doc(), select_doc(), *other_docs()]


def _page(tmp_path, docs=None, name="r.html"):
    path = tmp_path / name
    path.write_text(render(docs or ALL, f"report of {HOSTILE}"), encoding="utf-8")
    return path


MEASURE = """() => {
  const inside = (b, r) => b.x >= r.x - 0.5 && b.y >= r.y - 0.5 && b.right <= r.right + 0.5
                           && b.bottom <= r.bottom + 0.5;
  const charts = [...document.querySelectorAll('svg')].map(s => {
    const r = s.getBoundingClientRect();
    const texts = [...s.querySelectorAll('text')].filter(t => t.textContent.trim());
    const box = e => e.getBoundingClientRect();
    const circles = [...s.querySelectorAll('circle.mark')].map(c => box(c).height);
    return {name: s.dataset.name,
            outside: texts.filter(t => !inside(box(t), r)).map(t => t.textContent),
            texts: texts.map(t => [...t.querySelectorAll('tspan')].map(x => x.textContent).join(' ')
                                  || t.textContent),
            err: [...s.querySelectorAll('line.err')].filter((l, i) => i % 3 === 0).map(l => box(l).height),
            gap: [...s.querySelectorAll('line.gap')].filter((l, i) => i % 3 === 0).map(l => box(l).height),
            marker: Math.max(0, ...circles), top: r.y, left: r.x, width: r.width,
            grid: [...document.querySelectorAll('.grid')].indexOf(s.closest('.grid'))};
  });
  const cut = [...document.querySelectorAll('td, th, p, li, h1, h2, h3, caption')]
    .filter(e => e.scrollWidth > e.clientWidth + 1).map(e => e.textContent.slice(0, 60));
  const grids = [...document.querySelectorAll('.grid')].map(g => g.getBoundingClientRect().width);
  return {charts, cut, grids, page: document.documentElement.scrollWidth, view: window.innerWidth,
          body: document.body.getBoundingClientRect().width};
}"""


def _browser(path, width=1400, js=True, script=MEASURE, actions=None):
    from playwright.sync_api import sync_playwright

    if not os.path.exists(CHROMIUM):
        pytest.skip("Debian's chromium is not installed (.ci/run installs it)")
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        context = browser.new_context(viewport={"width": width, "height": 900}, java_script_enabled=js)
        page = context.new_page()
        page.goto(f"file://{path}")
        out = actions(page) if actions else page.evaluate(script)
        browser.close()
    return out


def _squash(s):
    return re.sub(r"\s+", "", s)


@pytest.mark.parametrize("width", [1400, 760, 420])
def test_every_label_whole_and_inside_its_box(tmp_path, width):
    m = _browser(_page(tmp_path), width)
    assert m["page"] <= m["view"], "the page scrolls sideways"
    assert not m["cut"], m["cut"]  # no table cell, paragraph or heading overflows
    for c in m["charts"]:
        assert not c["outside"], (c["name"], c["outside"])
        assert not any("…" in t for t in c["texts"]), (c["name"], c["texts"])  # nothing cut
    shown = _squash(" ".join(t for c in m["charts"] for t in c["texts"]))
    for label in [*NAMES, "predictive rank (lower is better)", "difference (nats per token)",
                  f"Held-out log-likelihood per token minus {NAMES[0]}'s (the best)",
                  "topic 0: " + " ".join(WORDS[0]), "topic 2: " + " ".join(WORDS[2]),
                  "Kendall tau of the mean fit with theta, per topic: " + NAMES[0],  # proxann score
                  "2: " + " ".join(WORDS[2])]:
        assert _squash(label) in shown, label  # whole, wrapped at most


def test_charts_form_a_grid_at_full_width(tmp_path):
    m = _browser(_page(tmp_path), 1400)
    assert max(m["grids"]) >= 0.95 * m["body"]  # the grid spans the page, not its left half
    ev = [c for c in m["charts"] if c["name"].startswith("evaluate-")]
    assert len({c["grid"] for c in ev}) == 1 and len(ev) >= 6
    rows = {}
    for c in ev:
        rows.setdefault(round(c["top"]), []).append(c)
    assert max(len(r) for r in rows.values()) >= 2  # small multiples side by side
    narrow = _browser(_page(tmp_path), 420)
    assert all(len(r) == 1 for r in _rows(narrow, "evaluate-").values())  # one column on a phone
    many = evaluate_doc()
    many["rows"] = [_row(f"model number {i} of twelve", 10, -7.1 - i / 100, 0.01, 0.05, 100.0)
                    for i in range(12)]
    m = _browser(_page(tmp_path, [many], "many.html"), 1400)
    ev = [c for c in m["charts"] if c["name"].startswith("evaluate-")]
    assert all(len(r) == 1 for r in _rows(m, "evaluate-").values())  # twelve models: a whole row each
    assert all(c["width"] >= 0.95 * m["body"] for c in ev) and not any(c["outside"] for c in ev)


def _rows(m, prefix):
    rows = {}
    for c in m["charts"]:
        if c["name"].startswith(prefix):
            rows.setdefault(round(c["top"]), []).append(c)
    return rows


def test_every_interval_is_visible(tmp_path):
    m = _browser(_page(tmp_path), 1400)
    checked = 0
    for c in m["charts"]:
        for h in c["err"]:
            assert h > c["marker"] + 1, (c["name"], h, c["marker"])  # sticks out of the point
            checked += 1
    assert checked >= 3 + 3 + 4  # per-token (sd 1e-6 of a 0.18 spread), auto MP, select's points


def test_heldout_chart_shows_the_jensen_gap_beside_the_sd(tmp_path):
    path = _page(tmp_path, [heldout_doc()])
    m = _browser(path)
    est = next(c for c in m["charts"] if c["name"] == "heldout-estimates")
    assert len(est["gap"]) == 2 and len(est["err"]) == 2
    # drawn to scale: the 489-nat gap about 489 / (2 * 23) times the ±23 bar
    assert est["gap"][0] / est["err"][0] == pytest.approx(GAP / (2 * SD), rel=0.05)
    assert est["err"][1] > est["marker"]  # the 0.01-nat sd is still visible
    html = path.read_text()
    assert "expected Jensen gap 489.00 nats" in html and "±1 sd 23.00 nats" in html


def _column(page, table, col):
    return page.evaluate(f"""() => [...document.querySelectorAll('table')[{table}].tBodies[0].rows]
                                   .map(r => r.cells[{col}].textContent)""")


def test_per_topic_table_sorts_by_a_click_and_reads_without_script(tmp_path):
    path = _page(tmp_path, [evaluate_doc()])

    def find(page):
        heads = page.evaluate("""() => [...document.querySelectorAll('table')].map(t =>
                                    [...t.tHead.rows[0].cells].map(c => c.textContent))""")
        i = next(i for i, h in enumerate(heads) if "stability" in h and "top words" in h)
        return i, heads[i].index("stability")

    def click(page):
        t, col = find(page)
        before = _column(page, t, col)
        head = page.locator("table").nth(t).locator("th").nth(col)
        head.click()
        up = _column(page, t, col)
        words_up = _column(page, t, 1)
        head.click()
        return before, up, _column(page, t, col), words_up

    before, up, down, words_up = _browser(path, actions=click)
    assert before == ["–", "0.91", "0.42"]  # worst first: the flagged topic 1, then by NPMI (0.1, then none)
    assert up == ["0.42", "0.91", "–"] and down == ["0.91", "0.42", "–"]  # undefined last both ways
    assert words_up[0].startswith("tax revenue")  # whole rows move
    no_js = _browser(path, js=False, actions=lambda page: _column(page, *find(page)))
    assert no_js == before
    html = path.read_text()
    assert "<td>near-corpus, one-document</td>" in html


def test_a_long_per_topic_table_is_folded_worst_first_with_one_coherence_column(tmp_path):
    """40 topics: the 25 worst shown first (junk-flagged, then the lowest NPMI), one coherence column
    (NPMI, named with its convention) and the others behind "show all columns"; the checkboxes unfold
    rows and columns with and without the page's script (issue 33: a 212-topic page was 22,000 px)."""
    k = 40
    npmi = [round(0.2 - 0.004 * ((7 * t) % k), 4) for t in range(k)]  # a shuffled order of values
    junk = {11: ["incoherent"], 30: ["never-together"]}
    fp = {"npmi": {"measure": "npmi", "convention": "gensim", "topn": 10, "window": 10,
                   "reference": {"name": "train.txt"}}}
    doc = {"task": "evaluate", "rows": [_row(NAMES[2], k, -7.3, 0.0001, 0.05, 45.6)], "groups": [[NAMES[2]]],
           "comparisons": [], "params": {"coherence": ["npmi", "umass"], "coherence_fingerprint": fp},
           "topic_words": {NAMES[2]: [[f"w{t}a", f"w{t}b", f"w{t}c"] for t in range(k)]},
           "topic_coherence": {NAMES[2]: {"npmi": npmi, "umass": [-2.0] * k}},
           "topic_flags": {NAMES[2]: [junk.get(t, []) for t in range(k)]}}
    path = _page(tmp_path, [doc])

    def look(page, tick=()):
        for box in tick:
            page.locator(f"input.{box}").first.check()
        return page.evaluate("""() => {
          const t = [...document.querySelectorAll('table')]
                      .find(t => t.tHead.textContent.includes('top words'));
          const seen = e => e.getClientRects().length > 0;
          return {head: [...t.tHead.rows[0].cells].filter(seen).map(c => c.textContent),
                  rows: [...t.tBodies[0].rows].filter(seen).map(r => r.cells[0].textContent),
                  all: t.tBodies[0].rows.length}; }""")

    for js in (True, False):
        folded = _browser(path, js=js, actions=look)
        assert folded["all"] == k and len(folded["rows"]) == 25, folded
        assert folded["rows"][:2] == ["11", "30"]  # junk first (by NPMI), then the lowest NPMI
        rest = [t for t in range(k) if t not in junk]
        assert folded["rows"][2:] == [str(t) for t in sorted(rest, key=lambda t: npmi[t])][:23]
        coh = [h for h in folded["head"] if "NPMI" in h or "UMass" in h]
        assert len(coh) == 1 and "gensim convention" in coh[0] and "top 10" in coh[0], folded["head"]
        opened = _browser(path, js=js, actions=lambda page: look(page, ("rows", "cols")))
        assert len(opened["rows"]) == k and any("UMass" in h for h in opened["head"]), opened


def test_recommendation_comes_first_with_its_reasons(tmp_path):
    html = render([evaluate_doc()])
    top = html.index("Recommendation")
    assert top < html.index("Models side by side") and top < html.index("<svg")
    head = html[top:html.index("</div>", top)]
    assert "Recommended: " in head and "nats per token" in head
    assert "Could not be separated" in head  # the first group holds two models
    assert "Disagree: " in head and "favours lda-10 (known to favour many topics)" in head  # predictive rank
    assert "merged two topics of the others" in head  # the restart stability flags
    # evaluate --human: the metric trusted for interpretability, its agreement with people in a table
    assert "Trusted for interpretability: NPMI, the highest measured agreement with people" in head
    assert html.index("Agreement with people (Hoyle et al. 2021)") > top
    s = render([select_doc()])
    head = s[s.index("Recommendation"):s.index("</div>", s.index("Recommendation"))]
    assert "Recommended: K = 15" in head and "Could not be separated from K = 10" in head
    assert "diversity favours K = 5 (known to favour few topics)" in head
    assert "exclusivity favours K = 25 (known to favour many topics)" in head


def test_class_names_and_excerpts_as_people_read_them(tmp_path):
    path = _page(tmp_path, other_docs())
    html = path.read_text()
    assert "<td>Democratic-Republican</td>" in html
    cut = excerpt(TEXT, 200)
    assert cut.endswith("…") and len(cut) <= 200 and TEXT.startswith(cut[:-1])
    assert TEXT[len(cut) - 1] == " "  # cut where a word ends
    assert excerpt("x" * 300, 10) == "x" * 9 + "…" and excerpt("short  text\n", 10) == "short text"

    def align(page):
        return page.evaluate("""() => [...document.querySelectorAll('td')]
            .filter(td => td.textContent.startsWith('Fellow'))
            .map(td => [getComputedStyle(td).textAlign, td.textContent])""")

    (how, shown), = _browser(path, actions=align)
    assert how in ("left", "start") and shown == cut


def test_exclusivity_and_coherence_bars_carry_the_top_words():
    ex = next(c for c in charts(other_docs()) if c.name == "exclusivity")
    assert ex.labels[1] == "topic 1: " + " ".join(WORDS[1])
    coh = {"command": "coherence", "model": "m", "results": [
        {"measure": "npmi", "mean": 0.1, "params": {"window": 10},
         "topics": [{"words": WORDS[0], "score": 0.1}]}]}
    bars = next(c for c in charts([coh]) if c.kind == "hbars")
    assert bars.labels == ["topic 0: " + " ".join(WORDS[0])]  # all ten words, 130 characters, not cut at 40


def _terminal_cells(table_text):
    lines = table_text.splitlines()
    return [re.split(r"\s{2,}", ln.strip()) for ln in lines[2:]]


def test_decimals_match_the_terminal():
    from tealeaves.evaluate import EvaluationResult

    doc = evaluate_doc()
    names = ["m1", "m2", "m3"]  # names without spaces: the terminal table splits on them
    for r, n in zip(doc["rows"], names, strict=True):
        r["model"] = n
    res = EvaluationResult(doc["rows"], [], [], {}, {"coherence": ["npmi", "umass"]}, 0.0)
    term = _terminal_cells(res.table())
    report = next(t for t in all_tables([{**doc, "groups": [], "stability": None}])
                  if t.caption == "Models side by side")
    for a, b in zip(term, report.rows, strict=True):
        assert a == b, (a, b)
    assert term[0][2] == "-7.1235" and term[0][4] == f"{math.exp(7.123456):.1f}" and term[0][5] == "0.051"


def test_select_and_diagnostics_decimals_match_the_terminal():
    import numpy as np

    from tealeaves.diagnostics import SHOWN, DiagnosticsResult
    from tealeaves.select import SelectionResult

    doc = select_doc()
    per_k = {**{m: {"mean": [math.nan] * 4, "sd": [math.nan] * 4}
                for m in ("npmi", "umass", "auto MP")}, **doc["per_k"]}
    res = SelectionResult(doc["topics"], 3, [], per_k, {}, {}, 0.0)
    term = _terminal_cells(res.table())
    head = res.table().splitlines()[0].split()
    report = next(t for t in all_tables([doc]) if t.head[0] == "K")
    for m in doc["per_k"]:
        i = head.index(m.split()[0]) if m != "pred. rank" else head.index("pred.")
        j = report.head.index(m)
        assert [r[i] for r in term] == [r[j] for r in report.rows], m
    d = evaluate_doc()["diagnostics"][NAMES[0]]
    scores = {n: np.array([np.nan if t.get(n) is None else t[n] for t in d["topics"]], dtype=float)
              for n, _ in SHOWN}
    res = DiagnosticsResult(NAMES[0], "expected", [t["words"].split() for t in d["topics"]], scores,
                            [t["flags"].split() for t in d["topics"]])
    lines = res.table().splitlines()
    term_head = lines[0].split()
    term = {r[0]: r for r in (re.split(r"\s+", ln.strip()) for ln in lines[1:])}
    rep = next(t for t in all_tables([d]) if "tokens" in t.head)
    compared = 0
    for _, h in SHOWN:  # the same value in both, column by column, topic by topic (rows are reordered)
        if h in rep.head:
            i, j = term_head.index(h), rep.head.index(h)
            for row in rep.rows:
                assert term[row[0]][i] == (row[j] if row[j] != "–" else "nan"), (h, row[0])
                compared += 1
    assert compared >= 3 * 8


HOSTILE_CELLS = ["_ % & # $ { } \\ ~ ^ |", "line one\nline two", "<b>bold</b> *x* [l](u) `c`"]


def test_latex_escapes_every_special_character():
    t = Table(["model", "value"], [[c, "1.5"] for c in HOSTILE_CELLS], caption="A & B_1 100%")
    out = latex(t)
    assert (r"\_ \% \& \# \$ \{ \} \textbackslash{} \textasciitilde{} \textasciicircum{} \textbar{} & 1.5 \\"
            in out)
    assert "line one line two & 1.5" in out
    assert r"\caption{A \& B\_1 100\%}" in out and r"\begin{tabular}{lr}" in out
    assert out.count(r"\toprule") == out.count(r"\midrule") == out.count(r"\bottomrule") == 1
    cells = [ln.removesuffix(r" \\") for ln in out.splitlines() if ln.endswith(r" \\")]
    caption = next(ln for ln in out.splitlines() if "caption" in ln)
    cells.append(re.sub(r"^\\caption\{(.*)\}$", r"\1", caption))
    assert len(cells) == 1 + len(HOSTILE_CELLS) + 1
    for line in cells:  # no special character left bare: only our escapes and one column separator
        bare = re.sub(r"\\(textbackslash|textasciitilde|textasciicircum|textbar|textless|textgreater)\{\}|"
                      r"\\[_%&#${}]", "", line)
        assert not re.search(r"[_%#$~^\\{}]", bare), line
        assert bare.count("&") == (0 if line.startswith("A ") else 1), line


def test_markdown_escapes_every_special_character():
    t = Table(["model|name", "value"], [[c, "1.5"] for c in HOSTILE_CELLS])
    out = markdown(t).splitlines()
    assert out[0] == r"| model\|name | value |" and out[1] == "| :--- | ---: |"
    assert out[2] == r"| \_ % \& # \$ { } \\ \~ ^ \| | 1.5 |"
    assert out[3] == "| line one line two | 1.5 |"
    assert out[4] == r"| \<b\>bold\</b\> \*x\* \[l\](u) \`c\` | 1.5 |"
    for line in out:
        assert len(re.findall(r"(?<!\\)\|", line)) == 3  # two cells a row, whatever they hold


def test_report_command_writes_latex_and_markdown(tmp_path):
    src = tmp_path / "ev.json"
    src.write_text(json.dumps(evaluate_doc()), encoding="utf-8")
    r = subprocess.run([sys.executable, "-m", "tealeaves", "report", str(src), "--latex",
                        str(tmp_path / "t.tex"), "--markdown", str(tmp_path / "t.md")],
                       capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert r.returncode == 0, r.stderr
    assert not (tmp_path / "report.html").exists()  # only the tables were asked for
    tex, md = (tmp_path / "t.tex").read_text(), (tmp_path / "t.md").read_text()
    assert tex == tables_text([evaluate_doc()], "latex") and md == tables_text([evaluate_doc()], "markdown")
    assert r"a\_b\%c\&d\#e\$f\{g\}h\textbackslash{}i\textasciitilde{}j\textasciicircum{}k\textbar{}l" in tex
    assert r"a\_b%c\&d#e\$f{g}h\\i\~j^k\|l" in md
    assert "-7.1235" in tex and "-7.1235" in md  # the terminal's decimals


def test_svg_wrap_keeps_every_character():
    for text in [NAMES[0], LONG_WORD, "日本語のトピック名" * 10, "a\u0301" * 50, ""]:
        lines = svgmod.wrap(text, 120)
        assert _squash("".join(lines)) == _squash(text)
        assert all(svgmod.text_width(ln) <= 120 or len(ln) == 1 for ln in lines)


def test_a_name_made_of_markup_is_shown_as_text(tmp_path):
    doc = evaluate_doc()
    evil = "<img src=x onerror=alert(1)></table><script>alert(2)</script>"
    doc["rows"][2]["model"] = evil
    doc["groups"] = [[evil]]
    doc["topic_words"] = {evil: [["<b>", "&amp;"], ["x", "y"]]}
    html = render([doc])
    assert "<img" not in html and "<script>alert" not in html and "<b>" not in html
    assert "&lt;img src=x onerror=alert(1)&gt;" in html and "&amp;amp;" in html
    m = _browser(_page(tmp_path, [doc]), 760, actions=lambda page: page.evaluate(
        "() => [document.querySelectorAll('img').length, document.querySelectorAll('script').length]"))
    assert m == [0, 1]  # only the report's own sorting script


@pytest.mark.parametrize("where, value, field", [
    ("stability", 1.5, "stability[0].per_topic"),
    ("stability", "x", "stability[0].per_topic"),
    ("topic_words", [["a", 3]], "topic_words"),
    ("diagnostics", {"topics": "none"}, "diagnostics"),
    ("topic_coherence", {"npmi": "high"}, "topic_coherence"),
])
def test_forged_per_topic_fields_are_one_line_errors(tmp_path, where, value, field):
    from tealeaves.errors import InputFileError
    from tealeaves.report import write_report

    doc = evaluate_doc()
    if where == "stability":
        doc["stability"][0]["per_topic"][NAMES[0]] = [value, 0.5, 0.5]
    else:
        doc[where] = {NAMES[0]: value}
    p = tmp_path / "forged.json"
    p.write_text(json.dumps(doc), encoding="utf-8")
    with pytest.raises(InputFileError) as e:
        write_report([p], tmp_path / "r.html")
    msg = str(e.value)
    assert "\n" not in msg and str(p) in msg and f"field {field}" in msg, msg
    assert not (tmp_path / "r.html").exists()


def test_per_topic_data_of_different_lengths_is_drawn_with_dashes():
    from tealeaves.report.pertopic import table

    t = table("m", words=WORDS, coherence={"npmi": [0.5]}, stability=[0.25, 0.75, None, 1.0])
    assert [r[0] for r in t.rows] == ["0", "1", "2", "3"]
    assert [r[2] for r in t.rows] == ["0.500", "–", "–", "–"] and [r[3] for r in t.rows] == ["0.25", "0.75",
                                                                                             "–", "1.00"]
    assert t.rows[3][1] == "" and table("m") is None


def test_evaluate_json_carries_each_models_top_words(example):
    import numpy as np

    import tealeaves as tl

    model, docs, model_path, _ = example
    doc = tl.evaluate([model_path], heldout=docs.subset(range(5)), particles=5, seed=1,
                      compare_models="none").to_dict()
    name = doc["rows"][0]["model"]
    order = np.argsort(-model.phi, axis=1, kind="stable")[:, :10]
    assert doc["topic_words"][name] == [[model.vocab[i] for i in row] for row in order]
    assert doc["topic_coherence"] == {}  # no reference: no coherence
    t = next(t for t in all_tables([doc]) if "top words" in t.head)
    assert [r[1] for r in t.rows] == [" ".join(w) for w in doc["topic_words"][name]]


def test_a_real_heldout_result_shows_the_gap_its_note_states(example):
    import tealeaves as tl

    model, docs, _, _ = example
    res = tl.heldout(model, docs.subset(range(6)), method="is-prior-theta", runs=3, seed=2, samples=20)
    doc = {"command": "heldout", "model": "m", "docs": "d", "results": [res.to_dict()]}
    stated = re.search(r"expected gap of the total about ([0-9.]+) nats", res.note).group(1)
    t = next(t for t in all_tables([doc]) if "expected Jensen gap" in t.head)
    assert t.rows[0][t.head.index("expected Jensen gap")] == stated
    est = charts([doc])[0]
    assert est.gap[0] == pytest.approx(float(stated), abs=0.006)


def test_infinite_cells_sort_as_numbers():
    """The terminal's rule writes an infinity as "inf" / "-inf": the table keeps them numeric, with
    sort keys the page's parseFloat reads as ±Infinity (as text they made the order arbitrary)."""
    from tealeaves.report.tables import Table, html

    page = html(Table(["v"], [["1.5"], ["inf"], ["-inf"], ["−inf*"]], sortable=True))
    keys = re.findall(r'<td class="n" data-v="([^"]*)">', page)
    assert keys == ["1.5", "Infinity", "-Infinity", "-Infinity"]
