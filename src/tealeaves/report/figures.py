"""Each chart of a report as a file a paper can use: SVG (the report's own drawing) and, with
the plot extra (matplotlib), PNG at 200 dpi drawn from the same `Chart`.

Every text matplotlib draws (titles, axis labels, tick labels, legends, notes) goes through
`literal`, and the figure is drawn with LaTeX off (`text.usetex`, whatever the user's
matplotlibrc says; both in `util.drawing`): a word or model name such as `$x^$` is shown as written, never parsed as
mathematics (matplotlib's mathtext raised on it, and LaTeX would)."""

from __future__ import annotations

import os
import re

from ..files.atomic import atomic_path, makedirs, write_text
from ..util.drawing import literal, pyplot
from ..util.numbers import finite_float
from .svg import Chart, render


def _ok(v) -> bool:
    return finite_float(v) is not None


def slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:60] or "chart"


def _wrapped(label: str, width: int = 24) -> str:
    """A label on lines of at most `width` characters (long words broken), never cut; literal."""
    import textwrap

    return literal("\n".join(textwrap.wrap(label, width, break_long_words=True)) or label)


def write_png(c: Chart, path: str) -> None:
    """`c` drawn with matplotlib (Agg), 200 dpi."""
    with pyplot() as plt:
        _draw(plt, c, path)


def _draw(plt, c: Chart, path: str) -> None:
    """`write_png`'s drawing: every text through `literal` (`_wrapped` calls it)."""
    lines = sum(_wrapped(lab, 50).count("\n") + 1 for lab in c.labels)
    fig, ax = plt.subplots(figsize=(6.4, 3.6) if c.kind != "hbars" else (7.5, 0.6 + max(0.28 * len(c.labels), 0.16 * lines)))
    if c.kind == "points":
        far = c.clip or [False] * len(c.labels)
        for i, (_label, v) in enumerate(zip(c.labels, c.y, strict=True)):
            if not _ok(v) or far[i]:
                continue
            lo, hi = c.lo[i], c.hi[i]
            err = [[v - lo], [hi - v]] if _ok(lo) and _ok(hi) else None
            ax.errorbar([i], [v], yerr=err, fmt="o", color="#1f5fa8", capsize=4)
        gap = c.gap or [None] * len(c.labels)
        for i, (v, g) in enumerate(zip(c.y, gap, strict=True)):
            if _ok(v) and _ok(g) and not far[i]:  # the expected Jensen gap beside the sd bar
                ax.errorbar([i + 0.12], [v], yerr=[[0], [g]], fmt="none", ecolor="#d68910", capsize=4)
        ax.set_xticks(range(len(c.labels)), [_wrapped(lab) for lab in c.labels], rotation=20, ha="right")
        off = [f"{lab}: {v:.4g}" for lab, v, f in zip(c.labels, c.y, far, strict=True) if f]
        if off:
            ax.text(0.99, 0.98, literal("off the chart: " + "; ".join(off)), transform=ax.transAxes,
                    ha="right", va="top", fontsize=8)
    elif c.kind == "lines":
        for s in c.series:
            xs = [x for x, y in zip(s["x"], s["y"], strict=True) if _ok(y)]
            ys = [y for y in s["y"] if _ok(y)]
            lo = s.get("lo") or []
            hi = s.get("hi") or []
            if lo and hi and all(_ok(a) and _ok(b) for a, b in zip(lo, hi, strict=True)):
                err = [[y - a for y, a in zip(s["y"], lo, strict=True)], [b - y for y, b in zip(s["y"], hi, strict=True)]]
                ax.errorbar(s["x"], s["y"], yerr=err, fmt="o-", capsize=4, label=literal(s["name"]))
            else:
                ax.plot(xs, ys, "o-", label=literal(s["name"]))
        if c.logx:
            ax.set_xscale("log")
        xs = sorted({x for s in c.series for x in s["x"]})
        ax.set_xticks(xs, [literal(f"{x:g}") for x in xs])
        if len(c.series) > 1:
            ax.legend(fontsize=8)
    elif c.kind == "scatter":
        ax.scatter(c.x, c.y, s=8, color="#1f5fa8")
        if c.diagonal:
            vals = [v for v in list(c.x) + list(c.y) if _ok(v)]
            if vals:
                ax.plot([min(vals), max(vals)], [min(vals), max(vals)], "--", color="#c33", lw=1)
    elif c.kind == "hbars":
        vals = [v if _ok(v) else 0.0 for v in c.y]
        ax.barh(range(len(vals)), vals, color="#6c9bd2")
        ax.set_yticks(range(len(vals)), [_wrapped(lab, 50) for lab in c.labels], fontsize=8)
        ax.invert_yaxis()
    elif c.kind == "hist":
        ax.hist([v for v in c.y if _ok(v)], bins=c.bins, color="#6c9bd2")
    ax.set_title(_wrapped(c.title, 70), fontsize=11)
    ax.set_xlabel(_wrapped(c.xlabel, 70))
    ax.set_ylabel(_wrapped(c.ylabel, 40) if c.kind != "hbars" else "")
    try:
        fig.tight_layout()
        with atomic_path(path, suffix=".png", follow_link=False) as tmp:
            fig.savefig(tmp, dpi=200, format="png")
    finally:
        plt.close(fig)


def write_all(charts: list[Chart], folder: str) -> list[str]:
    """Every chart as NN-name.svg and, when matplotlib is installed, NN-name.png; the paths."""
    makedirs(folder)  # removed again if the command fails
    try:
        import matplotlib  # noqa: F401

        png = True
    except ImportError:
        png = False
    written = []
    for i, c in enumerate(charts, 1):
        stem = os.path.join(folder, f"{i:02d}-{slug(c.name or c.title)}")
        write_text(stem + ".svg", render(c), follow_link=False)
        written.append(stem + ".svg")
        if png:
            write_png(c, stem + ".png")
            written.append(stem + ".png")
    return written
