"""Small inline SVG charts (no JavaScript, no network): estimates with error bars, a scatter of
one method against another, horizontal bars and a histogram. Every chart is a self-contained
`<svg>` element whose marks carry class="mark" (the report test counts them)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from html import escape

W, H = 560, 300
M = {"l": 70, "r": 20, "t": 34, "b": 54}


def _ticks(lo: float, hi: float, n: int = 5) -> list[float]:
    if not math.isfinite(lo) or not math.isfinite(hi):
        return []
    if hi <= lo:
        hi = lo + 1.0
    raw = (hi - lo) / n
    mag = 10 ** math.floor(math.log10(raw))
    step = next(s * mag for s in (1, 2, 2.5, 5, 10) if s * mag >= raw)
    first = math.ceil(lo / step) * step
    return [first + i * step for i in range(int((hi - first) / step + 1e-9) + 1)]


def _fmt(v: float, step: float | None = None) -> str:
    """A tick label with as many decimals as the tick step needs."""
    if step is not None and step > 0:
        decimals = max(
            0,
            -math.floor(math.log10(step) + 1e-9)
            + (0 if round(step / 10 ** math.floor(math.log10(step) + 1e-9), 6) in (1, 2, 5, 10) else 1),
        )
        return f"{v:.{decimals}f}"
    return f"{v:.4g}" if abs(v) < 1e5 else f"{v:.3e}"


def _step(ticks: list[float]) -> float | None:
    return ticks[1] - ticks[0] if len(ticks) > 1 else None


class _Frame:
    def __init__(self, x0: float, x1: float, y0: float, y1: float, width: int = W, height: int = H) -> None:
        pad_y = (y1 - y0) * 0.06 or 1.0
        pad_x = (x1 - x0) * 0.04 or 1.0
        self.x0, self.x1, self.y0, self.y1 = x0 - pad_x, x1 + pad_x, y0 - pad_y, y1 + pad_y
        self.w, self.h = width, height

    def x(self, v: float) -> float:
        return M["l"] + (v - self.x0) / (self.x1 - self.x0) * (self.w - M["l"] - M["r"])

    def y(self, v: float) -> float:
        return self.h - M["b"] - (v - self.y0) / (self.y1 - self.y0) * (self.h - M["t"] - M["b"])

    def axes(self, title: str, xlabel: str, ylabel: str, xticks: bool = True) -> list[str]:
        out = [
            f'<text x="{self.w / 2}" y="18" text-anchor="middle" class="title">{escape(title)}</text>',
            f'<line x1="{M["l"]}" y1="{self.h - M["b"]}" x2="{self.w - M["r"]}" y2="{self.h - M["b"]}" class="axis"/>',
            f'<line x1="{M["l"]}" y1="{M["t"]}" x2="{M["l"]}" y2="{self.h - M["b"]}" class="axis"/>',
            f'<text x="{self.w / 2}" y="{self.h - 8}" text-anchor="middle">{escape(xlabel)}</text>',
            f'<text transform="translate(14,{self.h / 2}) rotate(-90)" text-anchor="middle">{escape(ylabel)}</text>',
        ]
        yt = _ticks(self.y0, self.y1)
        for t in yt:
            out.append(
                f'<text x="{M["l"] - 6}" y="{self.y(t) + 4:.1f}" text-anchor="end" class="tick">{_fmt(t, _step(yt))}</text>'
            )
            out.append(
                f'<line x1="{M["l"]}" y1="{self.y(t):.1f}" x2="{self.w - M["r"]}" y2="{self.y(t):.1f}" class="grid"/>'
            )
        if xticks:
            xt = _ticks(self.x0, self.x1)
            for t in xt:
                out.append(
                    f'<text x="{self.x(t):.1f}" y="{self.h - M["b"] + 16}" text-anchor="middle" '
                    f'class="tick">{_fmt(t, _step(xt))}</text>'
                )
        return out


def _svg(parts: list[str], width: int = W, height: int = H) -> str:
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" width="{width}" '
        f'height="{height}" role="img">' + "".join(parts) + "</svg>"
    )


def _finite(values: Sequence[float]) -> list[float]:
    return [v for v in values if v is not None and math.isfinite(v)]


def error_bars(
    labels: Sequence[str], values: Sequence[float], errors: Sequence[float | None], title: str, ylabel: str
) -> str:
    """One point per label with +-1 error bar (figure 1 of Wallach et al. 2009)."""
    errs = [e if e is not None and math.isfinite(e) else 0.0 for e in errors]
    lo = _finite([v - e for v, e in zip(values, errs, strict=True)])
    hi = _finite([v + e for v, e in zip(values, errs, strict=True)])
    f = _Frame(-0.5, len(labels) - 0.5, min(lo, default=0), max(hi, default=1))
    out = f.axes(title, "", ylabel, xticks=False)
    for i, (label, v, e) in enumerate(zip(labels, values, errs, strict=True)):
        x = f.x(i)
        out.append(
            f'<text x="{x:.1f}" y="{H - M["b"] + 16}" text-anchor="middle" class="tick">{escape(label)}</text>'
        )
        if v is None or not math.isfinite(v):
            continue
        out.append(
            f'<line x1="{x:.1f}" y1="{f.y(v - e):.1f}" x2="{x:.1f}" y2="{f.y(v + e):.1f}" class="err"/>'
        )
        out.append(
            f'<circle cx="{x:.1f}" cy="{f.y(v):.1f}" r="5" class="mark"><title>{escape(label)}: '
            f"{_fmt(v)} ± {_fmt(e)}</title></circle>"
        )
    return _svg(out)


def scatter(
    x: Sequence[float], y: Sequence[float], title: str, xlabel: str, ylabel: str, diagonal: bool = True
) -> str:
    pts = [
        (a, b)
        for a, b in zip(x, y, strict=True)
        if a is not None and b is not None and math.isfinite(a) and math.isfinite(b)
    ]
    xs, ys = [p[0] for p in pts], [p[1] for p in pts]
    lo, hi = min(xs + ys, default=0), max(xs + ys, default=1)
    f = _Frame(
        lo if diagonal else min(xs, default=0),
        hi if diagonal else max(xs, default=1),
        lo if diagonal else min(ys, default=0),
        hi if diagonal else max(ys, default=1),
    )
    out = f.axes(title, xlabel, ylabel)
    if diagonal:
        out.append(
            f'<line x1="{f.x(lo):.1f}" y1="{f.y(lo):.1f}" x2="{f.x(hi):.1f}" y2="{f.y(hi):.1f}" class="diag"/>'
        )
    for i, (a, b) in enumerate(pts):
        out.append(
            f'<circle cx="{f.x(a):.1f}" cy="{f.y(b):.1f}" r="3" class="mark"><title>document {i}: '
            f"{_fmt(a)}, {_fmt(b)}</title></circle>"
        )
    return _svg(out)


def hbars(labels: Sequence[str], values: Sequence[float | None], title: str, xlabel: str) -> str:
    """Horizontal bars, one row per label (coherence per topic with its top words)."""
    n = len(labels)
    height = M["t"] + M["b"] + 18 * n
    vals = [v if v is not None and math.isfinite(v) else None for v in values]
    fin = [v for v in vals if v is not None]
    lo, hi = min(fin + [0.0]), max(fin + [0.0])
    left = 300
    span = (hi - lo) or 1.0
    xw = W + 220 - left - M["r"]

    def x(v: float) -> float:
        return left + (v - lo) / span * xw

    out = [
        f'<text x="{(W + 220) / 2}" y="18" text-anchor="middle" class="title">{escape(title)}</text>',
        f'<line x1="{x(0):.1f}" y1="{M["t"]}" x2="{x(0):.1f}" y2="{height - M["b"]}" class="axis"/>',
        f'<text x="{left + xw / 2}" y="{height - 8}" text-anchor="middle">{escape(xlabel)}</text>',
    ]
    ht = _ticks(lo, hi)
    for t in ht:
        out.append(
            f'<text x="{x(t):.1f}" y="{height - M["b"] + 16}" text-anchor="middle" class="tick">{_fmt(t, _step(ht))}</text>'
        )
    for i, (label, v) in enumerate(zip(labels, vals, strict=True)):
        y = M["t"] + 18 * i
        out.append(
            f'<text x="{left - 6}" y="{y + 13}" text-anchor="end" class="tick">{escape(label[:60])}</text>'
        )
        if v is None:
            out.append(f'<text x="{x(0) + 4:.1f}" y="{y + 13}" class="tick">undefined</text>')
            continue
        a, b = sorted((x(0), x(v)))
        out.append(
            f'<rect x="{a:.1f}" y="{y + 3}" width="{max(b - a, 1):.1f}" height="13" class="mark">'
            f"<title>{escape(label)}: {_fmt(v)}</title></rect>"
        )
    return _svg(out, W + 220, height)


def histogram(values: Sequence[float], title: str, xlabel: str, bins: int = 20) -> str:
    fin = _finite(values)
    lo, hi = (min(fin), max(fin)) if fin else (0.0, 1.0)
    if hi == lo:
        lo, hi = lo - 0.5, hi + 0.5
    width = (hi - lo) / bins
    counts = [0] * bins
    for v in fin:
        counts[min(int((v - lo) / width), bins - 1)] += 1
    f = _Frame(lo, hi, 0, max(counts, default=1))
    out = f.axes(title, xlabel, "count")
    for i, c in enumerate(counts):
        x0, x1 = f.x(lo + i * width), f.x(lo + (i + 1) * width)
        out.append(
            f'<rect x="{x0:.1f}" y="{f.y(c):.1f}" width="{max(x1 - x0 - 1, 1):.1f}" '
            f'height="{max(f.y(0) - f.y(c), 0):.1f}" class="mark"><title>{c}</title></rect>'
        )
    return _svg(out)
