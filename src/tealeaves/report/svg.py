"""Charts of the report: a `Chart` says what to draw (points with intervals per category, lines
over a numeric x with intervals, a scatter, horizontal bars, a histogram); `render` draws it as
a self-contained inline `<svg>` (no JavaScript, nothing fetched), `figures.write_png` the same
chart with matplotlib. Every drawn mark carries class="mark" (the report test counts them).

Layout rules that keep every label visible: the left margin is sized from the longest y tick
label and the y axis title sits left of it; horizontal-bar labels get a column as wide as the
longest label (cut at 48 characters, with the whole label in a tooltip); a point far outside the
others (the harmonic mean) is drawn as an arrow at the edge with its value, so the others'
intervals keep their scale (the held-out section marks those: estimates of one quantity by
several methods, one of them 20 times further off than the others' spread)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from html import escape

W, H = 600, 320
TOP, BOTTOM, RIGHT = 36, 58, 20
CHAR = 6.6  # px per character at the 11 px tick font (a safe overestimate)
LABEL_MAX = 48


@dataclass
class Chart:
    """What to draw. kind: "points" (labels, y, lo, hi), "lines" (series of {name, x, y, lo,
    hi}), "scatter" (x, y), "hbars" (labels, y), "hist" (y values)."""

    kind: str
    title: str
    xlabel: str
    ylabel: str
    name: str = "chart"
    labels: list[str] = field(default_factory=list)
    x: list[float] = field(default_factory=list)
    y: list[float | None] = field(default_factory=list)
    lo: list[float | None] = field(default_factory=list)
    hi: list[float | None] = field(default_factory=list)
    series: list[dict] = field(default_factory=list)
    logx: bool = False
    diagonal: bool = False
    bins: int = 20
    clip: list[bool] = field(default_factory=list)  # points: drawn as arrows at the edge


def _ok(v: float | None) -> bool:
    return v is not None and math.isfinite(v)


def ticks(lo: float, hi: float, n: int = 5) -> list[float]:
    if not math.isfinite(lo) or not math.isfinite(hi):
        return []
    if hi <= lo:
        hi = lo + 1.0
    raw = (hi - lo) / n
    mag = 10 ** math.floor(math.log10(raw))
    step = next(s * mag for s in (1, 2, 2.5, 5, 10) if s * mag >= raw)
    first = math.ceil(lo / step) * step
    return [first + i * step for i in range(int((hi - first) / step + 1e-9) + 1)]


def fmt(v: float, step: float | None = None) -> str:
    """A tick label with as many decimals as the tick step needs."""
    if step is not None and step > 0:
        e = math.floor(math.log10(step) + 1e-9)
        mant = round(step / 10**e, 6)
        decimals = max(0, -e + (0 if mant in (1, 2, 5, 10) else 1))
        return f"{v:,.{decimals}f}".replace(",", "\u2009") if abs(v) >= 1e4 else f"{v:.{decimals}f}"
    return f"{v:.4g}" if abs(v) < 1e5 else f"{v:.3e}"


def fit(text: str, px: float, char: float = CHAR) -> str:
    """`text` cut (with an ellipsis) to what `px` pixels hold; the whole text goes in a tooltip."""
    room = max(int(px / char), 4)
    return text if len(text) <= room else text[: room - 1] + "…"


def _label(text: str, px: float, char: float = CHAR) -> str:
    shown = fit(text, px, char)
    tip = f"<title>{escape(text)}</title>" if shown != text else ""
    return tip + escape(shown)


def _step(t: list[float]) -> float | None:
    return t[1] - t[0] if len(t) > 1 else None


class _Frame:
    """Data-to-pixel mapping with margins sized to the tick labels."""

    def __init__(self, x0: float, x1: float, y0: float, y1: float, width: int = W, height: int = H,
                 logx: bool = False) -> None:
        pad_y = (y1 - y0) * 0.06 or max(abs(y0) * 0.05, 1.0)
        self.y0, self.y1 = y0 - pad_y, y1 + pad_y
        self.logx = logx
        if logx:
            x0, x1 = math.log10(x0), math.log10(x1)
        pad_x = (x1 - x0) * 0.05 or 1.0
        self.x0, self.x1 = x0 - pad_x, x1 + pad_x
        self.w, self.h = width, height
        self.yt = ticks(self.y0, self.y1)
        labels = [fmt(t, _step(self.yt)) for t in self.yt]
        self.left = 26 + int(CHAR * max((len(s) for s in labels), default=3)) + 10

    def x(self, v: float) -> float:
        if self.logx:
            v = math.log10(v)
        return self.left + (v - self.x0) / (self.x1 - self.x0) * (self.w - self.left - RIGHT)

    def y(self, v: float) -> float:
        return self.h - BOTTOM - (v - self.y0) / (self.y1 - self.y0) * (self.h - TOP - BOTTOM)

    def axes(self, c: Chart, xticks: list[tuple[float, str]] | None) -> list[str]:
        plot_w, plot_h = self.w - self.left - RIGHT, self.h - TOP - BOTTOM
        out = [
            f'<text x="{self.w / 2}" y="20" text-anchor="middle" class="title">{_label(c.title, self.w - 16, 7.6)}</text>',
            f'<line x1="{self.left}" y1="{self.h - BOTTOM}" x2="{self.w - RIGHT}" y2="{self.h - BOTTOM}" class="axis"/>',
            f'<line x1="{self.left}" y1="{TOP}" x2="{self.left}" y2="{self.h - BOTTOM}" class="axis"/>',
            f'<text x="{(self.left + self.w - RIGHT) / 2}" y="{self.h - 12}" text-anchor="middle" class="xtitle">{_label(c.xlabel, plot_w, 7.2)}</text>',
            f'<text transform="translate(14,{(TOP + self.h - BOTTOM) / 2}) rotate(-90)" text-anchor="middle" class="ytitle">{_label(c.ylabel, plot_h, 7.2)}</text>',
        ]
        for t in self.yt:
            out.append(f'<text x="{self.left - 6}" y="{self.y(t) + 4:.1f}" text-anchor="end" class="tick">'
                       f"{fmt(t, _step(self.yt))}</text>")
            out.append(f'<line x1="{self.left}" y1="{self.y(t):.1f}" x2="{self.w - RIGHT}" y2="{self.y(t):.1f}" class="grid"/>')
        for v, label in xticks or []:
            out.append(f'<text x="{self.x(v):.1f}" y="{self.h - BOTTOM + 16}" text-anchor="middle" '
                       f'class="tick">{escape(label)}</text>')
        return out


def _svg(parts: list[str], width: int, height: int, name: str) -> str:
    return (f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" width="{width}" '
            f'height="{height}" role="img" data-name="{escape(name)}">' + "".join(parts) + "</svg>")


def outliers(values: Sequence[float | None], lo: Sequence[float | None],
             hi: Sequence[float | None]) -> list[bool]:
    """Points so far from the others that drawing them would squash everyone's intervals: more
    than 20 times the typical spread (and the widest interval) from the median."""
    vals = [v for v in values if _ok(v)]
    if len(vals) < 3:
        return [False] * len(values)
    med = sorted(vals)[len(vals) // 2]
    dev = sorted(abs(v - med) for v in vals)[len(vals) // 2]
    widths = [h - v for v, h in zip(values, hi, strict=True) if _ok(v) and _ok(h)]
    widths += [v - lo_ for v, lo_ in zip(values, lo, strict=True) if _ok(v) and _ok(lo_)]
    scale = max(dev, max(widths, default=0.0), 1e-9)
    return [_ok(v) and abs(v - med) > 20 * scale for v in values]


def points(c: Chart) -> str:
    """One point per category with its interval; far outliers as arrows at the edge."""
    n = len(c.labels)
    far = c.clip or [False] * n
    ins = [i for i in range(n) if _ok(c.y[i]) and not far[i]]
    lows = [c.lo[i] if _ok(c.lo[i]) else c.y[i] for i in ins]
    highs = [c.hi[i] if _ok(c.hi[i]) else c.y[i] for i in ins]
    f = _Frame(-0.5, n - 0.5, min(lows, default=0.0), max(highs, default=1.0))
    slot = max(70, min(170, CHAR * max((len(lab) for lab in c.labels), default=8) + 14))
    width = int(max(W, f.left + RIGHT + slot * n * 1.1))
    f = _Frame(-0.5, n - 0.5, min(lows, default=0.0), max(highs, default=1.0), width=width)
    slot = (width - f.left - RIGHT) / max(n, 1) * 0.95
    out = f.axes(c, None)
    for i, label in enumerate(c.labels):
        x = f.x(i)
        out.append(f'<text x="{x:.1f}" y="{H - BOTTOM + 16}" text-anchor="middle" class="tick">'
                   f"{_label(label, slot - 8)}</text>")
        v = c.y[i]
        if not _ok(v):
            continue
        if far[i]:
            up = v > f.y1
            y = TOP + 6 if up else H - BOTTOM - 6
            arrow = f"{x - 6:.1f},{y + 8 if up else y - 8} {x + 6:.1f},{y + 8 if up else y - 8} {x:.1f},{y}"
            out.append(f'<polygon points="{arrow}" class="mark far"><title>{escape(label)}: {fmt(v)} '
                       "(off the chart)</title></polygon>")
            out.append(f'<text x="{x:.1f}" y="{y + (22 if up else -14)}" text-anchor="middle" class="tick">'
                       f"{fmt(v)}</text>")
            continue
        if _ok(c.lo[i]) and _ok(c.hi[i]):
            out.append(f'<line x1="{x:.1f}" y1="{f.y(c.lo[i]):.1f}" x2="{x:.1f}" y2="{f.y(c.hi[i]):.1f}" class="err"/>')
            for e in (c.lo[i], c.hi[i]):
                out.append(f'<line x1="{x - 5:.1f}" y1="{f.y(e):.1f}" x2="{x + 5:.1f}" y2="{f.y(e):.1f}" class="err"/>')
        out.append(f'<circle cx="{x:.1f}" cy="{f.y(v):.1f}" r="5" class="mark"><title>{escape(label)}: '
                   f"{fmt(v)}</title></circle>")
    return _svg(out, width, H, c.name)


def lines(c: Chart) -> str:
    """Series over a numeric x (K), each point with its interval, plus a legend."""
    xs = [x for s in c.series for x in s["x"]]
    ys = [v for s in c.series for key in ("y", "lo", "hi") for v in s.get(key, []) if _ok(v)]
    f = _Frame(min(xs, default=1), max(xs, default=2), min(ys, default=0.0), max(ys, default=1.0),
               logx=c.logx and min(xs, default=1) > 0)
    out = f.axes(c, [(x, fmt(x)) for x in sorted(set(xs))])
    colors = ("#1f5fa8", "#c0392b", "#2e8b57", "#8e44ad", "#d68910")
    for k, s in enumerate(c.series):
        col = colors[k % len(colors)]
        pts = [(x, y) for x, y in zip(s["x"], s["y"], strict=True) if _ok(y)]
        if len(pts) > 1:
            path = " ".join(f"{f.x(x):.1f},{f.y(y):.1f}" for x, y in pts)
            out.append(f'<polyline points="{path}" fill="none" stroke="{col}" stroke-width="1.5"/>')
        for i, (x, y) in enumerate(zip(s["x"], s["y"], strict=True)):
            if not _ok(y):
                continue
            lo, hi = (s.get("lo") or [None] * len(s["x"]))[i], (s.get("hi") or [None] * len(s["x"]))[i]
            if _ok(lo) and _ok(hi):
                out.append(f'<line x1="{f.x(x):.1f}" y1="{f.y(lo):.1f}" x2="{f.x(x):.1f}" y2="{f.y(hi):.1f}" '
                           f'stroke="{col}" stroke-width="2"/>')
            out.append(f'<circle cx="{f.x(x):.1f}" cy="{f.y(y):.1f}" r="4" fill="{col}" class="mark">'
                       f"<title>{escape(s['name'])}, {fmt(x)}: {fmt(y)}</title></circle>")
        if len(c.series) > 1:
            out.append(f'<text x="{f.w - RIGHT - 4}" y="{TOP + 12 + 14 * k}" text-anchor="end" fill="{col}" '
                       f'class="tick">{escape(s["name"])}</text>')
    return _svg(out, W, H, c.name)


def scatter(c: Chart) -> str:
    pts = [(a, b) for a, b in zip(c.x, c.y, strict=True) if _ok(a) and _ok(b)]
    xs, ys = [p[0] for p in pts], [p[1] for p in pts]
    if c.diagonal:
        lo, hi = min(xs + ys, default=0), max(xs + ys, default=1)
        f = _Frame(lo, hi, lo, hi)
    else:
        f = _Frame(min(xs, default=0), max(xs, default=1), min(ys, default=0), max(ys, default=1))
    xt = ticks(f.x0, f.x1)
    out = f.axes(c, [(t, fmt(t, _step(xt))) for t in xt])
    if c.diagonal and pts:
        lo, hi = min(xs + ys), max(xs + ys)
        out.append(f'<line x1="{f.x(lo):.1f}" y1="{f.y(lo):.1f}" x2="{f.x(hi):.1f}" y2="{f.y(hi):.1f}" class="diag"/>')
    for i, (a, b) in enumerate(pts):
        out.append(f'<circle cx="{f.x(a):.1f}" cy="{f.y(b):.1f}" r="3" class="mark"><title>document {i}: '
                   f"{fmt(a)}, {fmt(b)}</title></circle>")
    return _svg(out, W, H, c.name)


def hbars(c: Chart) -> str:
    """Horizontal bars, one row per label, in a label column as wide as the longest label."""
    n = len(c.labels)
    height = TOP + BOTTOM + 18 * n
    vals = [v if _ok(v) else None for v in c.y]
    fin = [v for v in vals if v is not None]
    lo, hi = min(fin + [0.0]), max(fin + [0.0])
    shown = [lab if len(lab) <= LABEL_MAX else lab[: LABEL_MAX - 1] + "…" for lab in c.labels]
    left = 16 + int(CHAR * max((len(s) for s in shown), default=4))
    plot_w = 360
    width = left + plot_w + RIGHT + 10
    span = (hi - lo) or 1.0

    def x(v: float) -> float:
        return left + 10 + (v - lo) / span * plot_w

    out = [
        f'<text x="{width / 2}" y="20" text-anchor="middle" class="title">{_label(c.title, width - 16, 7.6)}</text>',
        f'<line x1="{x(0):.1f}" y1="{TOP}" x2="{x(0):.1f}" y2="{height - BOTTOM}" class="axis"/>',
        f'<text x="{left + 10 + plot_w / 2}" y="{height - 12}" text-anchor="middle" class="xtitle">{_label(c.xlabel, plot_w, 7.2)}</text>',
    ]
    ht = ticks(lo, hi)
    for t in ht:
        out.append(f'<text x="{x(t):.1f}" y="{height - BOTTOM + 16}" text-anchor="middle" class="tick">'
                   f"{fmt(t, _step(ht))}</text>")
    for i, (label, v) in enumerate(zip(c.labels, vals, strict=True)):
        y = TOP + 18 * i
        out.append(f'<text x="{left}" y="{y + 13}" text-anchor="end" class="tick"><title>{escape(label)}</title>'
                   f"{escape(shown[i])}</text>")
        if v is None:
            out.append(f'<text x="{x(0) + 4:.1f}" y="{y + 13}" class="tick">undefined</text>')
            continue
        a, b = sorted((x(0), x(v)))
        out.append(f'<rect x="{a:.1f}" y="{y + 3}" width="{max(b - a, 1):.1f}" height="13" class="mark">'
                   f"<title>{escape(label)}: {fmt(v)}</title></rect>")
    return _svg(out, int(width), height, c.name)


def histogram(c: Chart) -> str:
    fin = [v for v in c.y if _ok(v)]
    lo, hi = (min(fin), max(fin)) if fin else (0.0, 1.0)
    if hi == lo:
        lo, hi = lo - 0.5, hi + 0.5
    width = (hi - lo) / c.bins
    counts = [0] * c.bins
    for v in fin:
        counts[min(int((v - lo) / width), c.bins - 1)] += 1
    f = _Frame(lo, hi, 0, max(counts, default=1))
    xt = ticks(lo, hi)
    out = f.axes(c, [(t, fmt(t, _step(xt))) for t in xt])
    for i, n in enumerate(counts):
        x0, x1 = f.x(lo + i * width), f.x(lo + (i + 1) * width)
        out.append(f'<rect x="{x0:.1f}" y="{f.y(n):.1f}" width="{max(x1 - x0 - 1, 1):.1f}" '
                   f'height="{max(f.y(0) - f.y(n), 0):.1f}" class="mark"><title>{n}</title></rect>')
    return _svg(out, W, H, c.name)


def render(c: Chart) -> str:
    return {"points": points, "lines": lines, "scatter": scatter, "hbars": hbars,
            "hist": histogram}[c.kind](c)
