"""Charts of the report: a `Chart` says what to draw (points with intervals per category, lines
over a numeric x with intervals, a scatter, horizontal bars, a histogram); `render` draws it as
a self-contained inline `<svg>` (no JavaScript, nothing fetched), `figures.write_png` the same
chart with matplotlib. Every drawn mark carries class="mark" (the report test counts them).

Layout rules that keep every label whole and every interval visible:

- no label is ever cut: text is measured (`text_width`: per-character widths at least those of
  DejaVu Sans, the widest common sans-serif font, so the estimate errs long) and wrapped onto as
  many lines as it needs (`wrap`: at spaces, and inside a word longer than the room); margins,
  rows and slots grow with the lines;
- the SVG scales with its grid cell (`viewBox`, width 100%), so the layout inside is fixed;
- an interval shorter than `MIN_BAR` pixels is drawn `MIN_BAR` long with its caps, dashed, and
  the chart says so; the point marker is smaller than that, so every interval shows;
- a point far outside the others (the harmonic mean) is drawn as an arrow at the edge with its
  value, so the others' intervals keep their scale;
- points may carry an expected Jensen gap (`gap`): drawn beside the ±1 sd bar as a bracket from the
  estimate up to estimate + gap (where log P(w) is expected to lie), so both sizes are visible."""

from __future__ import annotations

import math
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, field
from html import escape

from ..util.numbers import finite_float

W, H = 600, 320
RIGHT = 20
TICK, AXIS, TITLE = 11.0, 12.0, 13.0  # font sizes (px) of tick labels, axis titles and the chart title
LINE = 1.25  # line height, in font sizes
MIN_BAR = 12.0  # px: the shortest interval drawn
MARK_R = 4.0  # px: the point marker's radius (less than MIN_BAR / 2)
BAR_LABEL = 240.0  # px: widest label column of horizontal bars before labels wrap
SLOT_MAX = 170.0  # px: widest category slot of a points chart before labels wrap


@dataclass
class Chart:
    """What to draw. kind: "points" (labels, y, lo, hi; optional gap), "lines" (series of {name, x,
    y, lo, hi}), "scatter" (x, y), "hbars" (labels, y), "hist" (y values)."""

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
    gap: list[float | None] = field(default_factory=list)  # points: expected Jensen gap (nats)
    wide: bool = False  # spans the whole row of the report's grid


def _ok(v: float | None) -> bool:
    return finite_float(v) is not None


# --- text: measured, wrapped, never cut ---

_NARROW = set("ijl.,:;'|!`ɪ")
_SLIM = set("ftrI()[]{}/\\- \"*")
_WIDE_LOWER = set("mw")
_WIDE_UPPER = set("MW@%&")
_ROUND_UPPER = set("CDGHNOQUK")


def char_em(ch: str) -> float:
    """The width of `ch` in ems, at least DejaVu Sans's (an overestimate for most fonts)."""
    if ch in _NARROW:
        return 0.34
    if ch in _SLIM:
        return 0.5
    if ch in _WIDE_LOWER:
        return 1.0
    if ch in _WIDE_UPPER:
        return 1.05
    if ch.isascii():
        if ch.isupper():
            return 0.86 if ch in _ROUND_UPPER else 0.78
        return 0.66 if ch.isalnum() else 0.86
    if unicodedata.combining(ch) or unicodedata.category(ch) in ("Mn", "Me", "Cf"):
        return 0.0
    if unicodedata.east_asian_width(ch) in ("W", "F") or unicodedata.category(ch) == "So":
        return 1.35
    return 1.0


def text_width(text: str, size: float = TICK, bold: bool = False) -> float:
    """Pixels `text` takes at `size` px (bold: 10% more), erring long."""
    return sum(char_em(c) for c in text) * size * (1.1 if bold else 1.0)


def wrap(text: str, px: float, size: float = TICK, bold: bool = False) -> list[str]:
    """`text` on lines no wider than `px`: broken at spaces, and inside any word longer than a line.
    Every character is kept; a blank text is one empty line."""
    text = " ".join(text.split())
    lines: list[str] = []
    cur = ""
    for word in text.split(" "):
        trial = f"{cur} {word}" if cur else word
        if text_width(trial, size, bold) <= px:
            cur = trial
            continue
        if cur:
            lines.append(cur)
        cur = ""
        for ch in word:  # a word longer than the room: broken where it must be
            if cur and text_width(cur + ch, size, bold) > px:
                lines.append(cur)
                cur = ""
            cur += ch
    lines.append(cur)
    return lines


def text(x: float, y: float, lines: Sequence[str], cls: str, anchor: str = "middle", size: float = TICK,
         transform: str = "", tip: str = "", extra: str = "") -> str:
    """A `<text>` of one or more lines (tspans), the first line's baseline at `y`."""
    dy = size * LINE
    spans = "".join(f'<tspan x="{x:.1f}" dy="{0 if i == 0 else dy:.1f}">{escape(s)}</tspan>'
                    for i, s in enumerate(lines))
    t = f"<title>{escape(tip)}</title>" if tip else ""
    tr = f' transform="{transform}"' if transform else ""
    return f'<text x="{x:.1f}" y="{y:.1f}" text-anchor="{anchor}" class="{cls}"{tr}{extra}>{t}{spans}</text>'


def _height(lines: Sequence[str], size: float) -> float:
    return len(lines) * size * LINE


# --- axes ---

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


def _step(t: list[float]) -> float | None:
    return t[1] - t[0] if len(t) > 1 else None


class _Frame:
    """Data-to-pixel mapping with margins sized to the (wrapped) title, axis titles and tick labels.
    `below`: pixels the x tick labels need under the axis."""

    def __init__(self, c: Chart, x0: float, x1: float, y0: float, y1: float, width: float = W,
                 logx: bool = False, below: float = TICK * LINE) -> None:
        pad_y = (y1 - y0) * 0.06 or max(abs(y0) * 0.05, 1.0)
        self.y0, self.y1 = y0 - pad_y, y1 + pad_y
        self.logx = logx
        if logx:
            x0, x1 = math.log10(x0), math.log10(x1)
        pad_x = (x1 - x0) * 0.05 or 1.0
        self.x0, self.x1 = x0 - pad_x, x1 + pad_x
        self.w = width
        self.yt = ticks(self.y0, self.y1)
        labels = [fmt(t, _step(self.yt)) for t in self.yt]
        tick_w = max((text_width(s) for s in labels), default=text_width("000"))
        self.title = wrap(c.title, self.w - 16, TITLE, bold=True)
        self.top = 10 + _height(self.title, TITLE) + 10
        self.plot_h = H - 36 - 58  # the plot's own height does not shrink for long titles
        self.ytitle = wrap(c.ylabel, self.plot_h, AXIS)
        self.left = 8 + _height(self.ytitle, AXIS) + 6 + tick_w + 8
        self.xtitle = wrap(c.xlabel, self.w - self.left - RIGHT, AXIS)
        self.below = below
        self.bottom = 8 + below + 6 + _height(self.xtitle, AXIS) + 4
        self.h = self.top + self.plot_h + self.bottom

    def x(self, v: float) -> float:
        if self.logx:
            v = math.log10(v)
        return self.left + (v - self.x0) / (self.x1 - self.x0) * (self.w - self.left - RIGHT)

    def y(self, v: float) -> float:
        return self.top + self.plot_h - (v - self.y0) / (self.y1 - self.y0) * self.plot_h

    @property
    def base(self) -> float:
        return self.top + self.plot_h

    def axes(self, xticks: list[tuple[float, str]] | None) -> list[str]:
        mid_y = self.top + self.plot_h / 2
        out = [
            text(self.w / 2, 10 + TITLE, self.title, "title", size=TITLE),
            f'<line x1="{self.left:.1f}" y1="{self.base:.1f}" x2="{self.w - RIGHT:.1f}" y2="{self.base:.1f}" '
            'class="axis"/>',
            f'<line x1="{self.left:.1f}" y1="{self.top:.1f}" x2="{self.left:.1f}" y2="{self.base:.1f}" '
            'class="axis"/>',
            text((self.left + self.w - RIGHT) / 2, self.base + 8 + self.below + 6 + AXIS, self.xtitle, "xtitle",
                 size=AXIS),
        ]
        if any(self.ytitle):
            # rotated: its lines stack to the right, so the first line sits nearest the edge
            out.append(text(0, 0, self.ytitle, "ytitle", size=AXIS,
                            transform=f"translate({8 + AXIS:.1f},{mid_y:.1f}) rotate(-90)"))
        for t in self.yt:
            out.append(f'<text x="{self.left - 6:.1f}" y="{self.y(t) + 4:.1f}" text-anchor="end" class="tick">'
                       f"{fmt(t, _step(self.yt))}</text>")
            out.append(f'<line x1="{self.left:.1f}" y1="{self.y(t):.1f}" x2="{self.w - RIGHT:.1f}" '
                       f'y2="{self.y(t):.1f}" class="grid"/>')
        for v, label in xticks or []:
            out.append(f'<text x="{self.x(v):.1f}" y="{self.base + 8 + TICK:.1f}" text-anchor="middle" '
                       f'class="tick">{escape(label)}</text>')
        return out


def _svg(parts: list[str], width: float, height: float, c: Chart) -> str:
    w, h = math.ceil(width), math.ceil(height)
    return (f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {w} {h}" width="{w}" height="{h}" '
            f'role="img" data-name="{escape(c.name)}" aria-label="{escape(c.title)}">' + "".join(parts) + "</svg>")


def _interval(x: float, ylo: float, yhi: float, cls: str = "err", stroke: str = "") -> tuple[list[str], bool]:
    """A vertical interval from pixel `ylo` to `yhi` with caps; one shorter than MIN_BAR is drawn
    MIN_BAR long, dashed (class "tiny"). Returns the parts and whether it was widened."""
    a, b = sorted((ylo, yhi))
    tiny = b - a < MIN_BAR
    if tiny:
        mid = (a + b) / 2
        a, b = mid - MIN_BAR / 2, mid + MIN_BAR / 2
    c = f"{cls} tiny" if tiny else cls
    out = [f'<line x1="{x:.1f}" y1="{a:.1f}" x2="{x:.1f}" y2="{b:.1f}" class="{c}"{stroke}/>']
    out += [f'<line x1="{x - 5:.1f}" y1="{e:.1f}" x2="{x + 5:.1f}" y2="{e:.1f}" class="{c}"{stroke}/>'
            for e in (a, b)]
    return out, tiny


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


# --- the charts ---

def points(c: Chart) -> str:
    """One point per category with its interval (and expected Jensen gap); far outliers as arrows."""
    n = len(c.labels)
    far = c.clip or [False] * n
    gap = c.gap or [None] * n
    ins = [i for i in range(n) if _ok(c.y[i]) and not far[i]]
    lows = [c.lo[i] if _ok(c.lo[i]) else c.y[i] for i in ins]
    highs = [max(c.hi[i] if _ok(c.hi[i]) else c.y[i], c.y[i] + (gap[i] if _ok(gap[i]) else 0.0)) for i in ins]
    longest = max((text_width(w) for lab in c.labels for w in lab.split()), default=50.0)
    slot = max(70.0, min(SLOT_MAX, longest + 16))
    probe = _Frame(c, -0.5, n - 0.5, min(lows, default=0.0), max(highs, default=1.0))
    width = max(W, probe.left + RIGHT + slot * n * 1.1)
    room = (width - probe.left - RIGHT) / max(n, 1) * 0.95 - 8
    wrapped = [wrap(lab, room) for lab in c.labels]
    below = max((_height(w, TICK) for w in wrapped), default=TICK * LINE)
    f = _Frame(c, -0.5, n - 0.5, min(lows, default=0.0), max(highs, default=1.0), width=width, below=below)
    out = f.axes(None)
    widened = False
    for i, label in enumerate(c.labels):
        x = f.x(i)
        out.append(text(x, f.base + 8 + TICK, wrapped[i], "tick", tip=label))
        v = c.y[i]
        if not _ok(v):
            continue
        if far[i]:
            up = v > f.y1
            y = f.top + 6 if up else f.base - 6
            arrow = f"{x - 6:.1f},{y + 8 if up else y - 8} {x + 6:.1f},{y + 8 if up else y - 8} {x:.1f},{y}"
            out.append(f'<polygon points="{arrow}" class="mark far"><title>{escape(label)}: {fmt(v)} '
                       "(off the chart)</title></polygon>")
            out.append(f'<text x="{x:.1f}" y="{y + (22 if up else -14)}" text-anchor="middle" class="tick">'
                       f"{fmt(v)}</text>")
            continue
        if _ok(c.lo[i]) and _ok(c.hi[i]):
            parts, tiny = _interval(x, f.y(c.lo[i]), f.y(c.hi[i]))
            out += parts
            widened |= tiny
        if _ok(gap[i]) and gap[i] > 0:
            parts, tiny = _interval(x + 12, f.y(v), f.y(v + gap[i]), "gap")
            out += [p.replace("/>", f"><title>{escape(label)}: expected Jensen gap {gap[i]:.1f} nats</title>"
                              "</line>") for p in parts]
            widened |= tiny
        out.append(f'<circle cx="{x:.1f}" cy="{f.y(v):.1f}" r="{MARK_R}" class="mark"><title>{escape(label)}: '
                   f"{fmt(v)}</title></circle>")
    return _svg(out, width, f.h, c)


def lines(c: Chart) -> str:
    """Series over a numeric x (K), each point with its interval, plus a legend."""
    xs = [x for s in c.series for x in s["x"]]
    ys = [v for s in c.series for key in ("y", "lo", "hi") for v in s.get(key, []) if _ok(v)]
    f = _Frame(c, min(xs, default=1), max(xs, default=2), min(ys, default=0.0), max(ys, default=1.0),
               logx=c.logx and min(xs, default=1) > 0)
    out = f.axes([(x, fmt(x)) for x in sorted(set(xs))])
    colors = ("#1f5fa8", "#c0392b", "#2e8b57", "#8e44ad", "#d68910")
    widened = False
    legend_y = f.top + TICK
    for k, s in enumerate(c.series):
        col = colors[k % len(colors)]
        stroke = f' stroke="{col}"'
        pts = [(x, y) for x, y in zip(s["x"], s["y"], strict=True) if _ok(y)]
        if len(pts) > 1:
            path = " ".join(f"{f.x(x):.1f},{f.y(y):.1f}" for x, y in pts)
            out.append(f'<polyline points="{path}" fill="none" stroke="{col}" stroke-width="1.5"/>')
        for i, (x, y) in enumerate(zip(s["x"], s["y"], strict=True)):
            if not _ok(y):
                continue
            lo, hi = (s.get("lo") or [None] * len(s["x"]))[i], (s.get("hi") or [None] * len(s["x"]))[i]
            if _ok(lo) and _ok(hi):
                parts, tiny = _interval(f.x(x), f.y(lo), f.y(hi), "err", stroke)
                out += parts
                widened |= tiny
            out.append(f'<circle cx="{f.x(x):.1f}" cy="{f.y(y):.1f}" r="{MARK_R}" fill="{col}" class="mark">'
                       f"<title>{escape(s['name'])}, {fmt(x)}: {fmt(y)}</title></circle>")
        if len(c.series) > 1:
            name = wrap(s["name"], (f.w - f.left - RIGHT) / 2)
            out.append(text(f.w - RIGHT - 4, legend_y, name, "tick", anchor="end", extra=f' fill="{col}"'))
            legend_y += _height(name, TICK)
    return _svg(out, W, f.h, c)


def scatter(c: Chart) -> str:
    pts = [(a, b) for a, b in zip(c.x, c.y, strict=True) if _ok(a) and _ok(b)]
    xs, ys = [p[0] for p in pts], [p[1] for p in pts]
    if c.diagonal:
        lo, hi = min(xs + ys, default=0), max(xs + ys, default=1)
        f = _Frame(c, lo, hi, lo, hi)
    else:
        f = _Frame(c, min(xs, default=0), max(xs, default=1), min(ys, default=0), max(ys, default=1))
    xt = ticks(f.x0, f.x1)
    out = f.axes([(t, fmt(t, _step(xt))) for t in xt])
    if c.diagonal and pts:
        lo, hi = min(xs + ys), max(xs + ys)
        out.append(f'<line x1="{f.x(lo):.1f}" y1="{f.y(lo):.1f}" x2="{f.x(hi):.1f}" y2="{f.y(hi):.1f}" class="diag"/>')
    for i, (a, b) in enumerate(pts):
        out.append(f'<circle cx="{f.x(a):.1f}" cy="{f.y(b):.1f}" r="3" class="mark"><title>document {i}: '
                   f"{fmt(a)}, {fmt(b)}</title></circle>")
    return _svg(out, W, f.h, c)


def hbars(c: Chart) -> str:
    """Horizontal bars, one row per label; the label column as wide as the longest label up to
    BAR_LABEL px, longer labels wrapped onto more lines (the row grows)."""
    vals = [v if _ok(v) else None for v in c.y]
    fin = [v for v in vals if v is not None]
    lo, hi = min(fin + [0.0]), max(fin + [0.0])
    col = min(BAR_LABEL, max((text_width(lab) for lab in c.labels), default=30.0))
    wrapped = [wrap(lab, col) for lab in c.labels]
    plot_w = 340.0
    left = 8 + col
    width = left + 10 + plot_w + RIGHT
    title = wrap(c.title, width - 16, TITLE, bold=True)
    top = 10 + _height(title, TITLE) + 10
    rows = [max(18.0, _height(w, TICK) + 5) for w in wrapped]
    body = sum(rows)
    xtitle = wrap(c.xlabel, plot_w, AXIS)
    height = top + body + 8 + TICK * LINE + 6 + _height(xtitle, AXIS) + 4
    span = (hi - lo) or 1.0

    def x(v: float) -> float:
        return left + 10 + (v - lo) / span * plot_w

    base = top + body
    out = [
        text(width / 2, 10 + TITLE, title, "title", size=TITLE),
        f'<line x1="{x(0):.1f}" y1="{top:.1f}" x2="{x(0):.1f}" y2="{base:.1f}" class="axis"/>',
        text(left + 10 + plot_w / 2, base + 8 + TICK * LINE + 6 + AXIS, xtitle, "xtitle", size=AXIS),
    ]
    ht = ticks(lo, hi)
    for t in ht:
        out.append(f'<text x="{x(t):.1f}" y="{base + 8 + TICK:.1f}" text-anchor="middle" class="tick">'
                   f"{fmt(t, _step(ht))}</text>")
    y = top
    for label, v, w, rh in zip(c.labels, vals, wrapped, rows, strict=True):
        out.append(text(left, y + TICK + 2, w, "tick", anchor="end", tip=label))
        if v is None:
            out.append(f'<text x="{x(0) + 4:.1f}" y="{y + TICK + 2:.1f}" class="tick">undefined</text>')
        else:
            a, b = sorted((x(0), x(v)))
            out.append(f'<rect x="{a:.1f}" y="{y + 3:.1f}" width="{max(b - a, 2):.1f}" height="{rh - 5:.1f}" '
                       f'class="mark"><title>{escape(label)}: {fmt(v)}</title></rect>')
        y += rh
    return _svg(out, width, height, c)


def histogram(c: Chart) -> str:
    fin = [v for v in c.y if _ok(v)]
    lo, hi = (min(fin), max(fin)) if fin else (0.0, 1.0)
    if hi == lo:
        lo, hi = lo - 0.5, hi + 0.5
    width = (hi - lo) / c.bins
    counts = [0] * c.bins
    for v in fin:
        counts[min(int((v - lo) / width), c.bins - 1)] += 1
    f = _Frame(c, lo, hi, 0, max(counts, default=1))
    xt = ticks(lo, hi)
    out = f.axes([(t, fmt(t, _step(xt))) for t in xt])
    for i, n in enumerate(counts):
        x0, x1 = f.x(lo + i * width), f.x(lo + (i + 1) * width)
        out.append(f'<rect x="{x0:.1f}" y="{f.y(n):.1f}" width="{max(x1 - x0 - 1, 1):.1f}" '
                   f'height="{max(f.y(0) - f.y(n), 0):.1f}" class="mark"><title>{n}</title></rect>')
    return _svg(out, W, f.h, c)


def render(c: Chart) -> str:
    return {"points": points, "lines": lines, "scatter": scatter, "hbars": hbars,
            "hist": histogram}[c.kind](c)
