"""Every figure in the README and docs/ that cites a benchmark or an experiment agrees with that
script's committed JSON, rounded as printed. Pages an experiment writes are rebuilt from its JSON
and must equal the committed page; figures in hand-written pages are listed below (`FIGURES`)
as the phrase that carries them, built from the JSON, and must appear in the page (whitespace
and line breaks aside). Also: the commands the docs say take `--json` are exactly those whose
parser has it."""

from __future__ import annotations

import argparse
import importlib.util
import json
import re
from collections.abc import Callable
from functools import cache
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parent.parent


@cache
def results(path: str) -> dict:
    return json.loads((ROOT / path).read_text(encoding="utf-8"))


@cache
def page(path: str) -> str:
    """The page's text with every run of whitespace as one space."""
    return re.sub(r"\s+", " ", (ROOT / path).read_text(encoding="utf-8"))


def script(path: str):
    """A benchmark or experiment script, imported as a module (its main() is not run)."""
    spec = importlib.util.spec_from_file_location(Path(path).stem, ROOT / path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def minus(x: float, digits: int) -> str:
    """As the hand-written pages print a signed number: with a real minus sign."""
    return f"{x:.{digits}f}".replace("-", "−")


# --- the results the hand-written pages cite ------------------------------------------------------

def speed(T: int, N: int, variant: str) -> float:
    """benchmarks/heldout_speed.py: million site updates per second."""
    rows = results("benchmarks/results/heldout_speed.json")["results"]
    return next(r["site_updates_per_second"] for r in rows
                if r["section"] == "lr" and r["T"] == T and r["N"] == N and r["variant"] == variant) / 1e6


def estimator_speed(T: int, param: str, *others: str) -> float:
    """benchmarks/heldout_speed.py, estimators at the same budget: million site updates per second."""
    rows = results("benchmarks/results/heldout_speed.json")["results"]
    return next(r["site_updates_per_second"] for r in rows if r["section"] == "estimators" and r["T"] == T
                and set(r["params"]) == {param, *others}) / 1e6


def workers_speedup(T: int) -> float:
    rows = {r["workers"]: r["site_updates_per_second"]
            for r in results("benchmarks/results/heldout_speed.json")["results"]
            if r["section"] == "workers" and r["T"] == T}
    return rows[2] / rows[1]


def mallet() -> list[dict]:
    return results("benchmarks/results/mallet_speed.json")["rows"]


def mallet_ratios() -> list[float]:
    return [r["smc"] / r["mallet"] for r in mallet()]


def twice_phrase() -> str:
    """Where smc-full is at least twice MALLET's rate, per number of topics."""
    parts = []
    for T in sorted({r["T"] for r in mallet()}):
        lengths = [str(r["N"]) for r in mallet() if r["T"] == T and r["smc"] / r["mallet"] >= 2]
        if lengths:
            words = lengths[0] if len(lengths) == 1 else "-, ".join(lengths[:-1]) + "- and " + lengths[-1]
            parts.append(f"at T = {T} on {words}-token documents")
    return "at least twice as fast " + " and ".join(parts) if parts else "never twice as fast"


def time_vs_previous_default(T: int) -> list[float]:
    """The default (100 particles) against the previous one (algorithm 3, 20 particles, dense
    kernel) at the same documents: five times the site updates at their two rates."""
    return [5 * speed(T, N, "dense") / speed(T, N, "smc") for N in (50, 200, 800)]


def accuracy(subset: str, label: str) -> dict:
    """experiments/default_accuracy.py: one candidate on one set of paragraphs."""
    s = results("experiments/results/default_accuracy.json")["sets"][subset]
    return next(c for c in s["candidates"] if c["label"] == label)


LR = "left-to-right(particles={}, variant={})"
DEFAULT = LR.format(100, "smc")  # the full pass: named smc in the JSON, smc-full since issue 21
PREVIOUS = LR.format(20, "algorithm-3")


def err(subset: str, label: str, digits: int = 4) -> str:
    """The error per token of one call, as a positive number of nats 'low'."""
    return f"{-accuracy(subset, label)['error_per_token_mean']:.{digits}f}"


def reference_noise() -> float:
    """How far apart independent 200,000-temperature AIS references are, per token (both sets)."""
    sets = results("experiments/results/default_accuracy.json")["sets"]
    return max(sets[s]["reference_spread"]["largest_difference_per_token"] for s in ("random", "long"))


def convergence(particles: int) -> float:
    rows = results("experiments/results/default_accuracy.json")["sets"]["random"]["convergence"]
    return next(r["error_per_token_mean"] for r in rows if r["particles"] == particles)


def coherence(measure: str) -> dict:
    """benchmarks/coherence_real.py: one measure's row."""
    return next(r for r in results("benchmarks/results/coherence_real.json")["results"]
                if r["measure"] == measure)


def secs(x: float) -> str:
    """Seconds as the coherence page prints them: 3 decimals below 0.1, 2 below 10, else 1."""
    return f"{x:.3f}" if x < 0.1 else f"{x:.2f}" if x < 10 else f"{x:.1f}"


def span(lo: str, hi: str) -> str:
    """'1.3–1.5', or '1.0' when both ends print the same."""
    return lo if lo == hi else f"{lo}–{hi}"


def r0(x: float) -> str:
    """Two significant figures below 10, none after the point above (as the performance page)."""
    return f"{x:.0f}" if x >= 10 else f"{x:.1f}"


# --- the figures ----------------------------------------------------------------------------------

def _performance() -> list[tuple[str, str]]:
    p = "docs/performance.md"
    out = []
    for T in (20, 50, 200, 1000):
        cells = [" / ".join(f"{speed(T, N, v):.1f}" for N in (50, 200, 800, 2000))
                 for v in ("smc", "algorithm-3")]
        dense = " / ".join(f"{speed(T, N, 'dense'):.1f}" for N in (50, 200, 800))
        out.append((p, f"| {T} | 50 / 200 / 800 / 2000 | {cells[0]} | {cells[1]} | {dense} / – |"))
    for r in mallet():
        out.append((p, f"| {r['T']} | {r['N']} | {r['mallet'] / 1e6:.1f} | {r['smc'] / 1e6:.1f} | "
                       f"{r['algorithm_3'] / 1e6:.1f} | {r['smc'] / r['mallet']:.1f}× |"))
    ratios = mallet_ratios()
    agree = max(abs(r["mallet_total"] - r["algorithm_3_total"]) / (r["N"] * r["docs"]) for r in mallet())
    budget = results("benchmarks/results/heldout_speed.json")["workload"]["particles"] * 200 * 199 // 2
    same_budget = ", ".join(
        f"{name} {r0(estimator_speed(50, *params))} / {r0(estimator_speed(1000, *params))}"
        for name, params in (("harmonic mean", ("burn_in", "samples")), ("AIS", ("temperatures",)),
                             ("is-prior-theta", ("samples",)), ("is-iterated", ("samples", "iterations"))))
    out += [
        (p, f"algorithm-3 totals agree within {agree:.3f} nats per token"),
        (p, f"tealeaves' full pass (`smc-full`, the default before issue 21) is {min(ratios):.1f} to "
            f"{max(ratios):.1f} times as fast as MALLET per core; {twice_phrase()}"),
        (p, f"Two workers run {workers_speedup(50):.2f}× one at T = 50 (200 documents) and "
            f"{workers_speedup(1000):.2f}× at T = 1000 (100 documents"),
        (p, f"At the same budget ({budget:,} site updates per 200-token document): chib "
            f"{r0(estimator_speed(50, 'chain_length', 'iterations'))} / "
            f"{r0(estimator_speed(1000, 'chain_length', 'iterations'))} M/s (T = 50 / 1000), {same_budget}."),
        (p, f"the call runs at {speed(1000, 50, 'smc'):.1f} M/s there"),
    ]
    return out


def _choosing() -> list[tuple[str, str]]:
    p = "docs/choosing_an_estimator.md"
    out = []
    rows = [  # (label in the JSON, first cell without its cost, digits of the errors, of the worst paragraph)
        (DEFAULT, "`left-to-right` `smc-full`, 100 particles (the default before issue 21; ×5 site updates)",
         4, 1),
        (LR.format(20, "smc"), "`left-to-right` `smc-full`, 20 particles (×1)", 4, 1),
        (PREVIOUS, "`left-to-right` `algorithm-3`, 20 particles (the previous default)", 4, 1),
        ("chib(chain_length=400, iterations=10)", "`chib`, S = 400", 4, 1),
        ("chib(chain_length=1000, iterations=10)", "`chib`, S = 1000", 4, 1),
        ("ais(temperatures=1000, schedule=geometric)", "`ais`, 1,000 temperatures", 3, 0),
        ("is-prior-theta(samples=1000)", "`is-prior-theta`, 1,000 samples", 3, 0),
    ]
    for label, cell, d, w in rows:
        a, b = accuracy("random", label), accuracy("long", label)
        if cell.startswith("`chib`"):
            cell += f" (×{a['cost_vs_previous_default']:.1f} / ×{b['cost_vs_previous_default']:.1f})"
        worst = f"{a['largest_paragraph_error']:.{w}f} / {b['largest_paragraph_error']:.{w}f}"
        out.append((p, f"| {cell} | {minus(a['error_per_token_mean'], d)} | "
                       f"{minus(b['error_per_token_mean'], d)} | {worst}"))
    t20, t50, t200, t1000 = (time_vs_previous_default(T) for T in (20, 50, 200, 1000))
    forty = accuracy("random", LR.format(40, "smc"))
    out += [
        (p, f"{minus(convergence(1000), 4)} per token at 1,000 particles and "
            f"{minus(convergence(3000), 4)} at 3,000"),
        (p, f"up to {reference_noise():.4f} nats per token"),
        (p, f"The default before issue 21 (`smc-full`, 100 particles) was about {err('random', DEFAULT, 3)} "
            "nats per token low on short real paragraphs"),
        (p, f"(40 particles) left-to-right is {minus(forty['error_per_token_mean'], 4)} per token with a "
            f"paragraph {forty['largest_paragraph_error']:.1f} nats off"),
        (p, "150 particles still give "
            f"{minus(accuracy('random', LR.format(150, 'smc'))['error_per_token_mean'], 4)}"),
        (p, f"{min(t20):.1f}–{max(t20):.1f}× its time at 20 topics, {min(t50):.1f}–{max(t50):.1f}× at 50, "
            f"{min(t200):.1f}–{max(t200):.1f}× at 200 and {min(t1000):.1f}–{max(t1000):.1f}× at 1,000"),
        (p, "on the real paragraphs of that page "
            f"{accuracy('random', DEFAULT)['time_vs_previous_default']:.1f}× and "
            f"{accuracy('long', DEFAULT)['time_vs_previous_default']:.1f}×"),
    ]
    return out


def _readme_and_checks() -> list[tuple[str, str]]:
    best = max(accuracy(s, DEFAULT)["largest_paragraph_error"] for s in ("random", "long"))
    worst_prev = [accuracy(s, PREVIOUS)["largest_paragraph_error"] for s in ("random", "long")]
    ratios = mallet_ratios()
    return [
        ("README.md", f"run left-to-right (`smc-full`) at {speed(50, 200, 'smc'):.0f} million site updates "
                      f"per second per "
                      f"core at 50 topics and {speed(1000, 200, 'smc'):.0f} million at 1,000 topics"),
        ("README.md", f"{min(ratios):.1f} to {max(ratios):.1f} times MALLET's rate"),
        ("docs/checks.md", f"one call of the default before issue 21 (`smc-full`, 100 particles) is "
                           f"{err('random', DEFAULT)} nats per token low on random "
                           f"paragraphs and {err('long', DEFAULT)} on long ones, no paragraph off by more "
                           f"than {best:.1f} nats; the previous default (algorithm 3, 20 particles) was "
                           f"{err('random', PREVIOUS)} and {err('long', PREVIOUS)} low with paragraphs "
                           f"{min(worst_prev):.0f}–{max(worst_prev):.0f} nats off"),
        ("docs/checks.md", f"differ by up to {reference_noise():.4f} nats per token"),
        ("docs/guide/demo.md", f"differ by up to {reference_noise():.4f} nats per token"),
    ]


def _coherence() -> list[tuple[str, str]]:
    p = "docs/guide/coherence.md"
    bench = results("benchmarks/results/coherence_real.json")
    c = bench["corpus"]
    assert c["paragraphs"] >= 20_000
    out = [(p, f"on {c['paragraphs']:,} real paragraphs ({c['tokens']:,} tokens"),
           (p, f"{bench['topics']} topics × {bench['topn']} words from a tomotopy LDA"),
           (p, f"best of {bench['repeats']} runs for tealeaves and {bench['gensim_repeats']} for gensim")]
    levels = ("whole_process", "from_file", "computation")
    for m in ("umass", "uci", "npmi", "c_v"):
        r = coherence(m)
        cells = " | ".join(f"{secs(r['tealeaves'][lv]['cpu'])} / {secs(r['gensim'][lv]['cpu'])} s: "
                           f"{r0(r[f'ratio_{lv}_cpu'])}×" for lv in levels)
        out.append((p, f"| {m} | {cells} |"))
    rs = bench["results"]
    tok = [r["tealeaves"]["computation_from_token_lists"]["cpu"] for r in rs]
    tok_ratio = [r["ratio_computation_from_token_lists_cpu"] for r in rs]
    start = [r["tealeaves"]["whole_process"]["cpu"] - r["tealeaves"]["from_file"]["cpu"] for r in rs]
    g_start = [r["gensim"]["whole_process"]["cpu"] - r["gensim"]["from_file"]["cpu"] for r in rs]
    window = ("uci", "npmi", "c_v")
    diff = {m: abs(coherence(m)["tealeaves_mean"] - coherence(m)["gensim_mean"]) for m in window}
    worst = {m: coherence(m)["largest_topic_difference"] for m in window}
    assert coherence("umass")["largest_topic_difference"] == 0
    out += [
        (p, f"about {span(f'{min(start):.1f}', f'{max(start):.1f}')} s of tealeaves' whole process and "
            f"{span(f'{min(g_start):.1f}', f'{max(g_start):.1f}')} s of gensim's"),
        (p, f"from the same token lists in memory takes {span(secs(min(tok)), secs(max(tok)))} s "
            f"({span(r0(min(tok_ratio)), r0(max(tok_ratio)))}× gensim)"),
        (p, f"by {diff['uci']:.4f} for UCI ({coherence('uci')['tealeaves_mean']:.3f} against "
            f"{coherence('uci')['gensim_mean']:.3f}), {diff['npmi']:.4f} for NPMI and {diff['c_v']:.4f} "
            f"for C_V, and single topics by up to {worst['uci']:.2f}, {worst['npmi']:.3f} and "
            f"{worst['c_v']:.3f}"),
    ]
    once = max(bench["largest_topic_difference_without_repeats"].values())
    out.append((p, "per-topic values agree " + ("exactly" if once == 0 else f"to within {once:.0e}")))
    return out


def sci(x: float) -> str:
    """1.8e8, 4.4e-6: scientific notation as the pages print it."""
    mantissa, exponent = f"{x:.1e}".split("e")
    return f"{mantissa}e{int(exponent)}"


def pct(x: float) -> str:
    """A share as a percentage with at most one decimal (99.5, 93)."""
    return f"{round(100 * x, 1):g}"


def _compare() -> list[tuple[str, str]]:
    p = "docs/guide/compare.md"
    cov = results("experiments/results/compare_coverage.json")["rows"]
    bracket = [r["bracket_holds"] for r in cov]
    doc2 = [r["document_interval_coverage"] for r in cov if r["chains"] >= 2]
    doc4 = [r["document_interval_coverage"] for r in cov if r["chains"] == 4]
    sets2 = [r["interval_coverage"] for r in cov if r["chains"] >= 2]
    assert all(r["interval_coverage"] is None for r in cov if r["chains"] == 1)
    small = results("experiments/results/compare_small_n.json")

    def cover(population: str, interval: str, size: int | None = None, noisy: bool = False) -> list[float]:
        return [r["coverage"] for r in small["rows"] if r["population"] == population
                and r["interval"] == interval and (size is None or r["documents"] == size)
                and (r["noise"] != "exact values") == noisy]

    before = "percentile bootstrap (before)"
    jk = "jackknife t"
    syn_jk = [pct(cover("synthetic", jk, n)[0]) for n in (5, 10, 30)]
    old5, old10 = cover("sotu", before, 5) + cover("synthetic", before, 5), cover("sotu", before, 10) + \
        cover("synthetic", before, 10)
    noisy = cover("sotu", jk, noisy=True)
    syn = results("experiments/results/compare_synthetic.json")
    cheap = {r["approach"]: r for r in syn["ordering"] if r["setting"] == "cheap"}
    ratio = [r for a, r in cheap.items() if a.startswith("Ratio-AIS")]
    var = {r["approach"]: r["variance"] for r in syn["variance"]}
    ratio_var = [v for a, v in var.items() if a.startswith("Ratio-AIS")]
    ais, lr = cheap["standard AIS (difference)"], cheap["left-to-right (difference)"]
    out = [
        (p, f"held on only {pct(min(bracket))}–{pct(max(bracket))}% of short real paragraphs"),
        (p, f"covered the exact log ratio on {pct(min(doc2))}–{pct(max(doc2))}% of 200 paragraphs with 2 or "
            f"more chains, and on {pct(min(doc4))}–{pct(max(doc4))}% with 4 (the default)"),
        (p, f"in {pct(min(sets2))}–{pct(max(sets2))}% of the {cov[0]['cases']} sets with 2 or more chains"),
        (p, f"covered it {pct(min(old5))}–{pct(max(old5))}% of the time with 5 documents and "
            f"{pct(min(old10))}–{pct(max(old10))}% with 10"),
        (p, f"covered it {pct(min(cover('sotu', jk)))}–{pct(max(cover('sotu', jk)))}% of the time on "
            f"State of the Union paragraphs ({pct(min(noisy))}–{pct(max(noisy))}% with Ratio-AIS"),
        (p, f"{syn_jk[0]}% with 5, {syn_jk[1]}% with 10 and {syn_jk[2]}% with 30 documents"),
        (p, f"below {small['minimum_documents']} documents every output carries a warning"),
        (p, f"Ratio-AIS puts {min(r['percent_correct'] for r in ratio):.0f}–"
            f"{max(r['percent_correct'] for r in ratio):.0f}% of documents on the side where A wins"),
        (p, f"with correlation {min(r['correlation_with_long_lr'] for r in ratio):.2f}–"
            f"{max(r['correlation_with_long_lr'] for r in ratio):.2f} to that run, against "
            f"{ais['percent_correct']:.0f}% (r = {minus(ais['correlation_with_long_lr'], 2)}) for "
            f"differencing two AIS runs and {lr['percent_correct']:.0f}% (r = "
            f"{lr['correlation_with_long_lr']:.2f}) for two left-to-right runs"),
        (p, f"is {min(ratio_var) * 1e7:.1f}–{max(ratio_var) * 1e7:.1f}e-7 against "
            f"{sci(var['left-to-right (difference)'])} and {sci(var['standard AIS (difference)'])}"),
    ]
    names = {"ratio-ais convex": "Ratio-AIS, convex path", "ratio-ais geometric": "Ratio-AIS, geometric path",
             "difference left-to-right": "difference of two left-to-right runs (algorithm 3)",
             "difference ais": "difference of two AIS runs"}
    for r in results("benchmarks/results/compare_variance.json")["results"]:
        last = r["points"][-1]
        how = ("interpolated" if r["how"] == "interpolated" else
               f"extrapolated from sd {last['sd']:.2f} at {sci(last['site_updates_per_doc'])}")
        rel = f"{float(format(r['relative_to_ratio_ais_convex'], '.3g')):,g}"
        out.append((p, f"| {names[r['approach']]} | {sci(r['cost_to_target'])} ({how}) | {rel} |"))
    return out


def _annotate_load() -> list[tuple[str, str]]:
    def run(backend: str, annotators: int) -> dict:
        file = "annotate_load_postgresql" if backend == "postgresql" else "annotate_load"
        runs = results(f"benchmarks/results/{file}.json")["runs"]
        return next(r for r in runs if r["annotators"] == annotators)

    s50, s200 = run("sqlite", 50), run("sqlite", 200)
    p50, p200 = run("postgresql", 50), run("postgresql", 200)
    assert all(r["stored_exactly_once"] for r in (s50, s200, p50, p200))
    return [("docs/guide/intrusion.md",
             f"SQLite, 50 annotators at once: {s50['requests_per_second']:.0f} requests/s, p50 "
             f"{s50['p50_ms']:.0f} ms, p95 {s50['p95_ms']:.0f} ms; 200 at once: "
             f"{s200['requests_per_second']:.0f} requests/s, p95 {s200['p95_ms']:.0f} ms; PostgreSQL 15 "
             f"(`--db postgresql+psycopg://...`), 50 at once: {p50['requests_per_second']:.0f} requests/s, "
             f"p95 {p50['p95_ms']:.0f} ms; 200 at once: "
             f"{p200['requests_per_second']:.0f} requests/s, p95 {p200['p95_ms']:.0f} ms")]


def _startup() -> list[tuple[str, str]]:
    """benchmarks/startup.py: now, before issue 22's lazy imports, and without a bytecode cache."""
    now, before, nobc = (results(f"benchmarks/results/{f}.json")["commands"]
                         for f in ("startup", "startup_before", "startup_no_bytecode"))
    names = {"import numpy, scipy, numba": '`python -c "import numpy, scipy, numba"` (baseline)',
             "import tealeaves": '`python -c "import tealeaves"`', "tealeaves --help": "`tealeaves --help`",
             "tealeaves heldout --help": "`tealeaves heldout --help`"}
    p = "docs/performance.md"
    out = [(p, f"| {names[k]} | {r['cpu_seconds']:.3f} | {r['cpu_ratio']:.2f} | {r['wall_seconds']:.3f} | "
               f"{r['wall_ratio']:.2f} | {before[k]['cpu_seconds']:.3f}, {before[k]['cpu_ratio']:.2f} |")
           for k, r in now.items()]
    out.append((p, f"the ratios are {nobc['tealeaves --help']['cpu_ratio']:.2f}× (`--help`) and "
                   f"{nobc['tealeaves heldout --help']['cpu_ratio']:.2f}× (`heldout --help`)"))
    out.append(("README.md", f"`import tealeaves` costs {now['import tealeaves']['cpu_ratio']:.2f}× the CPU "
                             f"of importing numpy + scipy + numba and `tealeaves --help` "
                             f"{now['tealeaves --help']['cpu_ratio']:.2f}× (was "
                             f"{before['tealeaves --help']['cpu_ratio']:.2f}×)"))
    return out




def linear(documents: str, params: dict, model: str = "sotu-20-asym") -> dict:
    """experiments/linear_smc.py, held-out part: one estimator (its given parameters) on one set of
    documents."""
    rows = results("experiments/results/linear_smc.json")["heldout"][model]
    return next(r for r in rows if r["documents"] == documents and r["params"] == params)


NEW = {"variant": "smc", "rejuvenate": 128, "particles": 300, "order": "peaked"}
FIRST = {"variant": "smc", "rejuvenate": 128, "particles": 300, "order": "given"}  # issue 21's first default
FULL = {"variant": "smc-full", "particles": 100, "order": "given"}


def _linear() -> list[tuple[str, str]]:
    new, full = linear("random paragraphs", NEW), linear("random paragraphs", FULL)
    speed = {N: [linear(f"N = {N}", label)["tokens_per_cpu_second"] for label in (FULL, NEW)]
             for N in (50, 200, 800, 3200)}
    ratio = new["cpu_per_call"] / full["cpu_per_call"]
    phrase = (f"on 100 random held-out paragraphs it is {minus(new['error_per_token_mean'], 4)} nats per "
              f"token from a 200,000-temperature AIS reference, no paragraph off by more than "
              f"{new['largest_document_error']:.2f} nats, at {ratio:.1f}× "
              f"the CPU time of the default before issue 21 (`smc-full`, 100 particles: "
              f"{minus(full['error_per_token_mean'], 4)} in the same runs, worst paragraph "
              f"{full['largest_document_error']:.2f})")
    tokens = ", ".join(f"{speed[N][1]:,.0f} against {speed[N][0]:,.0f} at N = {N:,}"
                       for N in (50, 200, 800, 3200))
    tune = results("experiments/results/linear_smc.json")["tune"]["sotu-20-asym"]
    r200 = next(r for r in tune if r["documents"] == "random paragraphs" and r["params"]["particles"] == 200)
    prev = linear("random paragraphs", FIRST)
    within = max(abs(x) for x in new["error_per_token"])  # the worst of the seeds
    prev_low = prev["error_per_token_min"]
    long = {mod: [linear("N = 3200", label, mod) for label in (FULL, NEW)]
            for mod in ("sotu-20-asym", "sotu-50-asym")}
    long_phrase = "; ".join(
        f"`{mod}`, 3,200 tokens: {b['tokens_per_cpu_second'] / a['tokens_per_cpu_second']:.1f}× the tokens "
        f"per CPU-second, error per token {minus(b['error_per_token_mean'], 4)} against "
        f"{minus(a['error_per_token_mean'], 4)}" for mod, (a, b) in long.items())
    k_rows = {(r["documents"], r["params"].get("rejuvenate")): r["error_per_token_mean"] for r in tune}
    k_phrase = "; ".join(
        f"{N:,} tokens: `smc-full` {minus(k_rows[(f'N = {N}', None)], 4)}, " + ", ".join(
            f"K = {K} {minus(k_rows[(f'N = {N}', K)], 4)}" for K in (64, 128, 256)) for N in (800, 3200))
    readme = (f"the default (`smc`, 300 particles, at most 128 earlier positions rejuvenated per step, the "
              f"words with the least topic entropy first, repeats in later rounds) was "
              f"{minus(new['error_per_token_mean'], 4)} nats "
              f"per token from a 200,000-temperature AIS reference (mean of {new['seeds']} seeds, each "
              f"within {within:.5f}; worst paragraph {new['largest_document_error']:.2f} nats off;")
    return [("README.md", readme),
            ("docs/choosing_an_estimator.md", phrase),
            ("docs/choosing_an_estimator.md", f"with 200 one training paragraph was "
                                              f"{r200['largest_document_error']:.2f} nats off"),
            ("docs/choosing_an_estimator.md", f"every one of the {new['seeds']} seeds' calls was within "
                                              f"{within:.4f} per token"),
            ("docs/choosing_an_estimator.md", f"in the given order one of the {prev['seeds']} was "
                                              f"{minus(prev_low, 4)}"),
            ("docs/choosing_an_estimator.md", f"against a reference): errors per token at {k_phrase}"),
            ("docs/choosing_an_estimator.md", long_phrase),
            ("docs/performance.md", f"tokens per CPU-second, the default against `smc-full` with 100 "
                                    f"particles: {tokens}")]


def _conventions() -> list[tuple[str, str]]:
    """experiments/coherence_conventions.py: the tealeaves and gensim conventions on the corpus."""
    p = "docs/guide/coherence.md"
    r = results("experiments/results/coherence_conventions.json")

    def worst(win: int) -> dict:
        rows = [u for m in r["models"].values() for u in m["undercount"] if u["window"] == win]
        return max(rows, key=lambda u: u["largest_relative_undercount"])

    u10, u110, d = worst(10), worst(110), r["largest_topic_difference"]
    assert d["umass"] == 0
    agree = r["gensim_agreement"]
    topics = sum(m["topics"] for m in r["models"].values())
    pal, ours = r["models"]["sotu-20-asym"]["palmetto"], r["models"]["sotu-20-asym"]["measures"]
    t_uci, t_cv = ours["uci"]["tealeaves_mean"], ours["c_v"]["tealeaves_mean"]
    return [(p, f"({', '.join(r['models'])}, {topics} topics) over the {r['reference']['paragraphs']:,} "
                "State of the Union training paragraphs"),
            (p, f"misses up to {u10['largest_relative_undercount']:.0%} of a topic word's windows at "
                f"window 10 "
                f"(\"{u10['word']}\") and {u110['largest_relative_undercount']:.0%} at window 110 "
                f"(\"{u110['word']}\")"),
            (p, f"single topics differ by up to {d['uci']:.3f} (UCI), {d['npmi']:.3f} (NPMI) and "
                f"{d['c_v']:.3f} (C_V) between the conventions; UMass counts documents and agrees exactly"),
            (p, "on every topic and measure " + ("exactly" if agree == 0 else f"to within {agree:.0e}")),
            (p, f"for sotu-20-asym, {pal['uci']['pairs_below_minimum']:.0%} of the topics' word pairs share "
                f"fewer than 100 windows of 10 and {pal['c_v']['pairs_below_minimum']:.0%} fewer than 1,100 "
                f"windows of 110, which Palmetto counts as never together: its mean UCI is "
                f"{minus(pal['uci']['mean'], 2)} against tealeaves' {minus(t_uci, 2)}, "
                f"and its C_V {minus(pal['c_v']['mean'], 2)} against {minus(t_cv, 2)}")]


def _dask() -> list[tuple[str, str]]:
    """benchmarks/dask_overhead.py: held-out and coherence counting, local against Dask."""
    r = results("benchmarks/results/dask_overhead.json")
    before = results("benchmarks/results/dask_overhead_before.json")
    p = "docs/performance.md"
    parts = [(f"held-out, {s['length']} tokens", s) for s in r["sizes"]]
    parts.append((f"coherence counting, {r['coherence']['documents']:,} documents", r["coherence"]))
    parts += [(label, r[key]) for key, label in (("evaluate", "`evaluate`, 2 models, 400 documents"),
                                                   ("select", "`select`, K = 5, 10, 15 × 2 restarts"))]
    out = []

    def x(row: dict) -> str:
        return f"{row['cpu_ratio']:.2f}×, {row['wall_ratio']:.2f}×"

    for label, part in parts:
        rows = {row["path"]: row for row in part["rows"]}
        base = [row for row in part["rows"] if row.get("baseline")]
        cpu, wall = (sum(row[k] for row in base) / len(base) for k in ("cpu_s", "wall_s"))
        policy = rows["--dask (policy)"]
        where = "here" if policy["ran"] == "local" else "cluster"
        out.append((p, f"| {label} | {cpu:.1f} ({wall:.1f}) | {x(rows['--dask, fresh'])} | "
                       f"{x(rows['--dask, fresh, preload'])} | {x(rows['--dask, warm'])} | {x(policy)}, "
                       f"{where} |"))
    one = {row["path"]: row for row in r["coherence"]["rows"]}["--workers 1"]
    warm = {row["path"]: row for row in r["coherence"]["rows"]}["--dask, warm"]
    out.append((p, f"one process (`--workers 1`) counts it in {one['cpu_s']:.1f} CPU-seconds "
                   f"({one['cpu_ratio']:.2f}× `--workers 2`); the warm cluster takes "
                   f"{warm['cpu_s'] / one['cpu_s']:.2f}× that"))
    def row(size: dict, path: str) -> dict:
        return next(x for x in size["rows"] if x["path"] == path)

    lengths = ", ".join(str(s["length"]) for s in r["sizes"])
    estimates = ", ".join(f"{row(s, '--dask, warm')['estimated_seconds']:.1f}" for s in r["sizes"])
    warm_cpu = ", ".join(f"{row(s, '--dask, warm')['cpu_ratio']:.2f}×" for s in r["sizes"])
    here = " and ".join(str(s["length"]) for s in r["sizes"] if row(s, "--dask (policy)")["ran"] == "local")
    out.append((p, f"The jobs of {lengths} tokens are estimated at {estimates} seconds; forced onto the warm "
                   f"cluster they cost {warm_cpu} the CPU of `--workers 2`; under the policy those of "
                   f"{here} tokens ran here."))
    old = {s["length"]: s["rows"][3] for s in before["sizes"]}
    out.append((p, f"warm cluster, one task per document: {x(old[20])} at 20 tokens, {x(old[60])} at 60"))
    out.append((p, f"DASK_MIN_SECONDS = {r['dask_min_seconds']:g}"))
    return out


def _diagnostics() -> list[tuple[str, str]]:
    """docs/guide/diagnostics.md: the junk-topic flags' hits, false flags and value ranges
    (experiments/junk_topics.py)."""
    r = results("experiments/results/junk_topics.json")
    p = "docs/guide/diagnostics.md"
    out = [(p, f"{len(r['settings']) * r['seeds']} corpora, "
               f"{r['summary']['assignments']['near-uniform']['ordinary_topics']} ordinary topics")]
    for counts, per in r["summary"].items():
        for flag, s in per.items():
            ranges = (f"{s['ordinary_min']:.3f}–{s['ordinary_max']:.3f} | "
                      f"{s['planted_min']:.3f}–{s['planted_max']:.3f} |")
            out.append((p, f"| {counts} | {flag} | {r['thresholds'][flag]:g} | {s['hits']}/{s['corpora']} | "
                           f"{s['false']}/{s['ordinary_topics']} | {ranges}"))
    near = r["summary"]["assignments"]["near-corpus"]
    out.append((p, f"({near['planted_min']:.2f}–{near['planted_max']:.2f} here"))
    return out


def _index() -> list[tuple[str, str]]:
    """benchmarks/coherence_index.py: the reference index's build, size and query time, on 16 MB and on
    1 GB of real text (benchmarks/real_gigabyte.py)."""
    p = "docs/performance.md"
    r = results("benchmarks/results/coherence_index.json")
    small, big = r["corpora"]["real"], r["corpora"]["real_1gb"]
    out = [(p, f"({small['paragraphs']:,} paragraphs, {small['tokens']:,} tokens; every paragraph found "
               "here)"),
           (p, f"{big['bytes']:,} bytes: {big['paragraphs']:,} paragraphs (the documents) and "
               f"{big['tokens']:,} tokens")]
    out += [(p, f"| {name} | {src['package']} {src['version']} | {src['paragraphs']:,} | {src['tokens']:,} | "
                f"{src['duplicates']:,} |") for name, src in big["sources"].items() if "package" in src]
    for name, b in r["builds"].items():
        mib = b["peak_memory_bytes"] / 2**20, b["estimated_memory_bytes"] / 2**20
        out.append((p, f"| {name} | {b['text_bytes'] / 1e6:,.1f} MB | {b['tokens']:,} | "
                       f"{b['vocabulary']:,} | {b['seconds']:.1f} | {b['cpu_seconds']:.1f} | "
                       f"{mib[0]:,.0f} MiB | {mib[1]:,.0f} MiB | {b['index_bytes'] / 1e6:,.1f} MB |"))
    for name in ("real", "real_1gb"):
        q = r["query"][name]
        assert q["identical"]
        out.append((p, f"| {name} | {q['index_seconds']:.2f} | {q['index_cpu_seconds']:.2f} | "
                       f"{q['streaming_seconds']:.1f} | {q['streaming_cpu_seconds']:.1f} | "
                       f"{q['occurrences']:,} | identical |"))
    b, wiki, load = r["builds"]["real_1gb"], r["projection"]["wikipedia"], r["load_average"]
    out.append((p, f"a 1-minute load average of {min(load):.1f} to {max(load):.1f} during this run"))
    out += [(p, f"{b['index_bytes'] / b['tokens']:.1f} bytes a token"),
            (p, f"English Wikipedia (4.5e9 tokens) in about {wiki['seconds'] / 3600:.1f} hours "
                f"({wiki['cpu_seconds'] / 3600:.1f} CPU hours) with one worker, an index of about "
                f"{wiki['index_bytes'] / 1e9:.1f} GB"),
            (p, f"the memory estimate for Wikipedia is {wiki['estimated_memory_bytes'] / 2**30:.1f} GiB")]
    return out


def _select() -> list[tuple[str, str]]:
    """experiments/select_synthetic.py: how often each rule finds K_true, with and without a stuck
    restart (docs/guide/model_selection.md)."""
    s = results("experiments/results/select_synthetic.json")["summary"]
    p = "docs/guide/model_selection.md"

    def hits(method: str, label: str) -> str:
        x = s[method][label]
        return f"{x['k_true_or_not_separated']} of {x['runs']}"

    r = results("experiments/results/select_synthetic.json")
    grid = r["settings"]["grid"]
    ordinary = {m: v["ordinary"] for m, v in s.items()}
    largest = all(k == max(grid) for m in ("Griffiths 2004", "pred. rank") for k in ordinary[m]["chosen"])
    smallest = all(k == min(grid) for k in ordinary["diversity"]["chosen"])
    fewer = all(ordinary[m]["mean_signed_error"] < 0 for m in ("Arun 2010", "Cao Juan 2009", "Deveaud 2014"))
    claim = ("Griffiths 2004 and predictive rank always chose the largest K, diversity the smallest, and "
             "Arun, Cao Juan and Deveaud chose fewer topics than there were")
    return [(p, claim if largest and smallest and fewer else "(the JSON no longer supports: " + claim + ")"),
            (p, f"`best-train` found K_true (or did not separate it from its choice) in "
                f"{hits('rule: best-train', 'ordinary')} ordinary runs and "
                f"{hits('rule: best-train', 'stuck')} runs with a stuck restart; the mean over restarts in "
                f"{hits('rule: mean', 'ordinary')} and "
                f"{hits('rule: mean', 'stuck')}, the rule before in {hits('rule: old', 'ordinary')} and "
                f"{hits('rule: old', 'stuck')}")]


ESTIMATE_STAGES = [  # benchmarks/estimates.py's summary key -> as docs/guide/model_selection.md names it
    ("evaluate held-out", "held-out"), ("evaluate coherence", "coherence"),
    ("evaluate intrusion", "intrusion"),
    ("evaluate predictive", "predictive"), ("ratio-ais", "Ratio-AIS"),
    ("heldout left-to-right", "left-to-right alone"), ("heldout chib", "Chib-style"),
    ("heldout ais", "AIS"), ("heldout is-prior-theta", "importance sampling"),
    ("select", "`select`'s whole plan"),
    ("train tomotopy", "tomotopy training"), ("train gensim", "gensim training"),
    ("train sklearn", "scikit-learn training")]


def estimates_phrase(path: str = "benchmarks/results/estimates.json") -> str:
    """benchmarks/estimates.py: measured / estimated CPU seconds per stage, lowest to highest."""
    r = results(path)["summary"]
    return "; ".join(f"{name} {r[key]['min']:.2f} to {r[key]['max']:.2f} ({r[key]['n']} workloads)"
                     for key, name in ESTIMATE_STAGES)


def demo_cpu(args: list[str]) -> float:
    """benchmarks/estimates.py: the CPU seconds of `tealeaves demo` (with `args`)."""
    return next(d["cpu"] for d in results("benchmarks/results/estimates.json")["demo"] if d["args"] == args)


def _estimates() -> list[tuple[str, str]]:
    p = "docs/guide/model_selection.md"
    return [(p, estimates_phrase()), (p, estimates_phrase("benchmarks/results/estimates_check.json")),
            ("docs/guide/demo.md", f"`tealeaves demo` takes {demo_cpu([]):.0f} CPU-seconds with the default "
                                   f"of 300 particles and `--quick` {demo_cpu(['--quick']):.0f}, on this "
                                   "2-core machine, measured by `benchmarks/estimates.py --part demo`")]


def _peers() -> list[tuple[str, str]]:
    """docs/performance.md's held-out table against tomotopy, gensim, scikit-learn and MALLET."""
    bench = script("benchmarks/heldout_vs_peers.py")
    data = results("benchmarks/results/heldout_vs_peers.json")
    lines = [*bench.table(data).splitlines(), bench.cost_ratios(data),
             bench.reference_summary(results("benchmarks/results/heldout_vs_peers_references.json"))]
    ratios = {kind: sorted(float(x) for x in re.findall(kind + r" at T = \d+: tealeaves ([\d.]+)×",
                                                        lines[-2]))
              for kind in ("paragraphs", "addresses")}
    bridge = sorted(float(x) for x in re.findall(r"bridge ([\d.]+)×", lines[-2]))
    para, addr = ratios["paragraphs"], ratios["addresses"]
    readme = (f"the default costs {para[0]:.0f}–{para[-1]:.0f}× on paragraphs "
              f"and {addr[0]:.0f}–{addr[-1]:.0f}× on whole addresses; "
              f"`method=\"bridge\"` (accurate up to 20 topics) {bridge[0]:.1f}–{bridge[-1]:.1f}×")
    low = [re.search(rf"^\| addresses \(\d+\) \| {T} \| [\d,]+ tok/s, -([\d.]+),", line, re.M)
           for T in ("200", "1,000") for line in lines]
    low = [m.group(1) for m in low if m]
    past = f"At 200 and 1,000 topics it is {low[0]} and {low[1]} nats per token low on whole addresses"
    return [("docs/performance.md", line) for line in lines] + [("README.md", readme), ("README.md", past)]


def _judge() -> list[tuple[str, str]]:
    """experiments/qualify_proxann.py: ProxAnn's released LLM answers through the qualification
    path against the published Table 3 (docs/guide/judge.md)."""
    r = results("experiments/results/qualify_proxann.json")
    same = all((c["winning_rate"] > 0.5) == c["published"].endswith("*")
               for j in r["judges"].values() for c in j["table3"] if c["published"])
    cells = sum(1 for j in r["judges"].values() for c in j["table3"] if c["published"])
    claim = "with the same LLMs winning in every cell"
    shown = claim if same and cells == 24 else "(the JSON no longer supports: " + claim + ")"
    return [("docs/guide/judge.md", shown),
            ("docs/guide/judge.md", f"the largest difference from a published advantage probability is "
                                    f"{r['largest_difference']:.3f}")]


def _extended() -> str:
    """experiments/new_user_run.py: what `select --extend 2` did (docs/new_user_run.md)."""
    x = results("experiments/results/new_user_run.json")["select-extend"]
    near = next(c for c in x["comparisons"] if c["k"] == x["edge"]["neighbour"])
    added = x["grid"]["added"]
    return (f"it trained K = {added[0]} and {added[1]} itself and chose K = {x['chosen']}, still better than "
            f"K = {near['k']} by +{near['difference']:.4f} nats per token (95% interval "
            f"[{near['interval'][0]:+.5f}, {near['interval'][1]:+.5f}]), stopping at the two Ks allowed "
            f"(\"try K = {x['edge']['suggest'][0]}, {x['edge']['suggest'][1]}\")")


def _new_user() -> list[tuple[str, str]]:
    """experiments/new_user_run.py: the new-user run of issue 33 (docs/new_user_run.md)."""
    r = results("experiments/results/new_user_run.json")
    p = "docs/new_user_run.md"
    tr, ho = r["corpus"]["train"], r["corpus"]["heldout"]
    st = r["evaluate"]["stages"]
    c = {k: {m: v["mean"] for m, v in x.items()} for k, x in r["coherence"].items()}
    top20 = c["gensim-topn20"]
    near = next(x for x in r["select"]["comparisons"] if x["k"] == r["select"]["edge"]["neighbour"])
    low = sorted(n for *_, n in r["stability"]["tomotopy"]["low_pairs"])
    g, t = r["stability"]["gensim"], r["stability"]["tomotopy"]
    junk = r["junk_full_reference"]
    sds = [x["per_token_sd"] for x in r["evaluate"]["rows"] if x["per_token_sd"] is not None]
    worst = min(junk["flagged"], key=lambda x: x["npmi"])
    return [(p, f"{tr['documents']:,} training and {ho['documents']:,} held-out paragraphs "
                f"({tr['tokens']:,} and {ho['tokens']:,} tokens, {tr['words']:,} words"),
            (p, f"`evaluate`: {st['total']['cpu']:.1f} CPU-seconds against an estimate of "
                f"{st['total']['estimate']:.1f} (held-out {st['held-out']['cpu']:.1f} against "
                f"{st['held-out']['estimate']:.1f}); coherence {st['coherence']['cpu']:.1f} CPU-seconds "
                f"against {st['coherence']['estimate']:.1f}"),
            (p, f"mean NPMI {c['default']['npmi']:.3f}, C_V {c['default']['c_v']:.3f}; `--topn 20` only "
                f"when asked: {top20['npmi']:.3f} and {top20['c_v']:.3f}; tealeaves' "
                f"exact counts {c['tealeaves']['npmi']:.3f} and {c['tealeaves']['c_v']:.3f}"),
            (p, f"K = {r['select']['chosen']} chosen, still better than K = {near['k']} by "
                f"+{near['difference']:.4f} nats per token (95% interval [{near['interval'][0]:+.5f}, "
                f"{near['interval'][1]:+.5f}])"),
            (p, "try K = " + ", ".join(map(str, r["select"]["edge"]["suggest"]))),
            (p, f"had {low[0]}, {low[1]} and {low[2]} topics without a counterpart pair by pair"),
            (p, _extended()),
            (p, f"it read 0.0000 for sds of {min(sds):.1e} to {max(sds):.1e} nats per token"),
            (p, f"({junk['tokens']:,} tokens) {len(junk['flagged'])} of tomotopy K = 20's topics were "
                f"flagged incoherent, among them \"{worst['words']}\" (also never-together, NPMI "
                f"{minus(worst['npmi'], 3)})"),
            (p, f"group stability {g['score']:.3f} for gensim, {t['score']:.3f} for tomotopy; "
                f"{g['recurring']} and {t['recurring']} of 20 topics recur in every restart")]


GROUPS = [_performance, _peers, _choosing, _readme_and_checks, _coherence, _compare, _annotate_load,
          _startup, _linear, _conventions, _dask, _diagnostics, _index, _select, _estimates, _judge,
          _new_user]


def test_estimate_constants_are_the_benchmarks_fit():
    """The rates every estimate uses are those benchmarks/estimates.py fitted on its full-size run
    (estimates.json "fit"), the check run on other sizes (estimates_check.json) was estimated
    with them, and the demo's help states the demo's measured CPU seconds."""
    from tealeaves.cli.tools import DEMO_CPU_SECONDS
    from tealeaves.evaluate import cost
    from tealeaves.select import TRAIN_SECONDS
    from tealeaves.util.limits import SITE_SECONDS

    fit = results("benchmarks/results/estimates.json")["fit"]
    assert {k: list(v) for k, v in SITE_SECONDS.items()} == fit["SITE_SECONDS"]
    assert list(cost.PREDICTIVE_DOC_SECONDS) == fit["PREDICTIVE_DOC_SECONDS"]
    assert cost.PASS_SECONDS == fit["PASS_SECONDS"]
    assert {k: list(v) for k, v in TRAIN_SECONDS.items()} == fit["TRAIN_SECONDS"]
    fitted = {k: v for k, v in fit["rates"].items() if v is not None}  # None: not separable in the run
    assert {k: getattr(cost, k) for k in fitted} == fitted
    used = results("benchmarks/results/estimates_check.json")["constants"]  # the check run's estimates
    assert used["SITE_SECONDS"] == fit["SITE_SECONDS"] and used["TRAIN_SECONDS"] == fit["TRAIN_SECONDS"]
    assert used["PREDICTIVE_DOC_SECONDS"] == fit["PREDICTIVE_DOC_SECONDS"]
    assert used["PASS_SECONDS"] == fit["PASS_SECONDS"]
    assert DEMO_CPU_SECONDS == {"quick": round(demo_cpu(["--quick"])), "full": round(demo_cpu([]))}


def test_estimates_hold_within_twice_on_the_check_run():
    """Issue 33 (7): every stage's estimate, with the constants fitted on the full-size run, is
    within 2x of the CPU seconds measured on the separate check run of other sizes (one shared
    dense rate was 2.7x short for Ratio-AIS at 200 topics and 4.2x for importance sampling)."""
    r = results("benchmarks/results/estimates_check.json")["summary"]
    far = {k: (round(v["min"], 2), round(v["max"], 2)) for k, v in r.items()
           if not 0.5 <= v["min"] <= v["max"] <= 2.0}
    assert not far, far
    assert {key for key, _ in ESTIMATE_STAGES} <= set(r)


@pytest.mark.parametrize("group", GROUPS, ids=lambda g: g.__name__.strip("_"))
def test_hand_written_figures_match_their_json(group):
    wrong = [f"{path} should say: {phrase}" for path, phrase in group() if phrase not in page(path)]
    assert not wrong, "\n".join(wrong)


GENERATED: list[tuple[str, str, str, Callable]] = [  # page, script, its JSON, page from JSON
    ("docs/default_accuracy.md", "experiments/default_accuracy.py",
     "experiments/results/default_accuracy.json", lambda m, r: m.markdown(r)),
    ("docs/perplexity_conventions.md", "experiments/library_conventions.py",
     "experiments/results/library_conventions.json", lambda m, r: m.page(r)),
    ("docs/csl_lda_chain.md", "experiments/csl_lda_chain.py", "experiments/results/csl_lda_chain.json",
     lambda m, r: m.markdown(r)),
    ("docs/compare_small_n.md", "experiments/compare_small_n.py", "experiments/results/compare_small_n.json",
     lambda m, r: m.markdown(r)),
    ("docs/linear_smc.md", "experiments/linear_smc.py", "experiments/results/linear_smc.json",
     lambda m, r: m.markdown(r)),
    ("docs/logistic_normal.md", "experiments/ctm_heldout.py", "experiments/results/ctm_heldout.json",
     lambda m, r: m.markdown(r)),
    ("docs/logistic_normal_budget.md", "experiments/ctm_adaptive.py", "experiments/results/ctm_adaptive.json",
     lambda m, r: m.markdown(r)),
    ("docs/coherence_conventions.md", "experiments/coherence_conventions.py",
     "experiments/results/coherence_conventions.json", lambda m, r: m.markdown(r)),
    ("docs/stability_restarts.md", "experiments/stability_restarts.py",
     "experiments/results/stability_restarts.json", lambda m, r: m.markdown(r)),
    ("docs/select_experiment.md", "experiments/select_synthetic.py",
     "experiments/results/select_synthetic.json", lambda m, r: m.markdown(r)),
    ("docs/lee_whiteley.md", "experiments/lee_whiteley.py", "experiments/results/lee_whiteley.json",
     lambda m, r: m.markdown(r)),
    ("docs/adaptive_budget.md", "experiments/adaptive_budget.py", "experiments/results/adaptive_budget.json",
     lambda m, r: m.markdown(r)),
    ("docs/heldout_bridge.md", "experiments/heldout_bridge.py", "experiments/results/heldout_bridge.json",
     lambda m, r: m.markdown(r)),
    ("docs/heldout_cheap.md", "experiments/heldout_cheap.py", "experiments/results/heldout_cheap.json",
     lambda m, r: m.markdown(r)),
    ("docs/chib_small_alpha.md", "experiments/chib_small_alpha.py",
     "experiments/results/chib_small_alpha.json", lambda m, r: m.markdown(r)),
    ("docs/human_agreement.md", "experiments/human_agreement.py", "experiments/results/human_agreement.json",
     lambda m, r: m.markdown(r)),
    ("docs/junk_flags.md", "experiments/junk_human.py", "experiments/results/junk_human.json",
     lambda m, r: m.markdown(r)),
]


def test_junk_flag_thresholds_are_the_measured_ones():
    """The incoherent flag's cut is the one experiments/junk_human.py chose, and the figures the
    flags' docstring and the diagnostics guide quote are its."""
    from tealeaves.diagnostics import flags

    r = results("experiments/results/junk_human.json")
    cut = r["chosen"]["incoherent"]
    assert flags.THRESHOLDS["incoherent"] == cut
    test = r["incoherent"]["rating"]["test"]
    assert f"NPMI < {cut:g} (its words" in flags.__doc__
    quoted = f"precision {test['precision']:.2f} and recall {test['recall']:.2f} on the other half"
    assert quoted in " ".join(flags.__doc__.split())
    assert f"| incoherent | NPMI of the top 10 words | < {cut:g} |" in page("docs/guide/diagnostics.md")
    settled = r["reference_settled"]
    assert settled["unsettled_tokens"] < flags.MIN_REFERENCE_TOKENS <= settled["settled_tokens"]
    assert r["min_reference_tokens"] == flags.MIN_REFERENCE_TOKENS
    rare = r["rare_words"]["rating"]
    assert f"({rare['hits']} of {rare['flagged']} junk)" in flags.__doc__


@pytest.mark.parametrize(("doc", "path", "data", "build"), GENERATED, ids=[g[0] for g in GENERATED])
def test_generated_page_equals_its_json(doc, path, data, build):
    assert build(script(path), results(data)) == (ROOT / doc).read_text(encoding="utf-8"), (
        f"{doc} differs from {data}: rerun {path} (or its part that writes the page)")


def test_packaged_agreement_figures_equal_their_json():
    """The figures `evaluate --human hoyle2021` carries over (src/tealeaves/data/human_agreement.json)
    are built from experiments/results/human_agreement.json, not typed by hand; and the package reads
    that file."""
    from tealeaves.datasets import human_agreement_figures

    made = script("experiments/human_agreement.py")
    built = made.figures(results("experiments/results/human_agreement.json"))
    shipped = results("src/tealeaves/data/human_agreement.json")
    assert built == shipped, "rerun experiments/human_agreement.py (--only carry-over writes the figures)"
    assert human_agreement_figures() == shipped
    npmi = next(m for m in shipped["measurements"] if m["study"] == "hoyle2021" and m["metric"] == "npmi"
                and m["judgment"] == "rating" and m["statistic"] == "spearman")
    assert npmi["topics"] == 300 and npmi["convention"] == "gensim"


def test_mallet_default_on_the_demo_is_computed():
    """docs/perplexity_conventions.md's MALLET figure is computed over seeds, not a fixed string."""
    demo = results("experiments/results/library_conventions.json")["mallet_default_on_demo"]
    diffs = np.array(demo["minus_exact"])
    assert demo["seeds"] == diffs.size >= 10
    assert (demo["min"], demo["max"]) == (diffs.min(), diffs.max()) and np.isclose(demo["mean"], diffs.mean())


def test_check_excess_error_as_checks_md_states():
    """docs/checks.md's '23×': algorithm 3's excess error in tests/test_accuracy.py's own setting."""
    import tealeaves as tl
    from tealeaves import datasets

    model = datasets.sotu_model("sotu-20-asym")
    held = datasets.sotu().heldout
    pick = np.random.default_rng(11).choice(len(held), 24, replace=False)
    cut = tl.Corpus.from_word_ids([held[i][:7] for i in pick], vocab=model.vocab)
    bad = tl.heldout(model, cut, variant="algorithm-3", particles=2000, check=len(cut), seed=4)
    phrase = f"its errors' mean square is {bad.check['excess_error']:.0f}× what run-to-run noise explains"
    assert phrase in page("docs/checks.md")


# --- which commands take --json -------------------------------------------------------------------

def _commands_with_json() -> set[str]:
    from tealeaves.cli.main import build_parser

    found: set[str] = set()

    def walk(parser: argparse.ArgumentParser, name: str) -> None:
        subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        if not subs and any("--json" in a.option_strings for a in parser._actions):
            found.add(name.strip())
        for action in subs:
            for sub, p in action.choices.items():
                walk(p, f"{name} {sub}")

    walk(build_parser(), "")
    return found


@pytest.mark.parametrize("path", ["README.md", "docs/guide/quickstart.md"])
def test_docs_list_exactly_the_commands_with_json(path):
    listed = re.search(r"<!-- json-commands -->(.*?)<!-- /json-commands -->", page(path))
    assert listed, f"{path}: the list of commands with --json is not marked"
    named = set(re.findall(r"`([a-z -]+)`", listed.group(1)))
    have = _commands_with_json()
    assert named == have, f"{path}: listed without --json: {named - have}; not listed: {have - named}"
