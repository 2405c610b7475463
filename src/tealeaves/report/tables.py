"""The report's tables, kept as text (never HTML) until drawn, so one table renders three ways: HTML
(numbers right-aligned, text left-aligned and wrapped, optionally sortable by clicking a column
heading), booktabs LaTeX and GitHub Markdown for papers, every special character escaped.

A cell is text; a number is shown by the caller (`output.numbers`, the terminal's rule) before it
gets here, so the report, LaTeX and Markdown show the digits the terminal shows."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from html import escape

NUMERIC = re.compile(r"^\s*[-+−]?((\d[\d\u2009,]*(\.\d*)?|\.\d+)([eE][-+]?\d+)?|inf)\s*\*?\s*$")
# a number with its interval, "-0.1716 [-0.1910, -0.1522]": right-aligned, kept on one line, sorted by the number
WITH_INTERVAL = re.compile(r"^\s*(?P<v>[-+−]?\d+(\.\d+)?) \[[-+−]?\d+(\.\d+)?, [-+−]?\d+(\.\d+)?\]\s*$")
MISSING = ("–", "—", "-", "")


@dataclass
class Table:
    """`head` and `rows` of text cells; `sortable`: clicking a heading sorts the rows (HTML);
    `caption`: what the table shows (HTML, LaTeX and Markdown). HTML only: `row_classes` (a class
    per row: "junk", "caution" shade it), `fold` (show the first `fold` rows until the reader ticks
    "show all"), `extra_columns` (column indices shown only when the reader ticks "all columns");
    both controls are checkboxes read by CSS, so they work without the page's script."""

    head: list[str]
    rows: list[list[str]]
    caption: str = ""
    sortable: bool = False
    classes: list[str] = field(default_factory=list)
    row_classes: list[str] = field(default_factory=list)
    fold: int = 0
    extra_columns: list[int] = field(default_factory=list)


def is_number(text: str) -> bool:
    """A cell that reads as a number (or a missing value, or a number with its interval):
    right-aligned, sorted numerically."""
    return text.strip() in MISSING or bool(NUMERIC.match(text)) or bool(WITH_INTERVAL.match(text))


def _key(text: str) -> str:
    """The sort key of a numeric cell, for the page's script (missing values sort last)."""
    if m := WITH_INTERVAL.match(text):
        text = m.group("v")
    t = text.strip().rstrip("*").strip().replace("−", "-").replace("\u2009", "").replace(",", "")
    return "" if t in MISSING else t.replace("inf", "Infinity")  # as the page's parseFloat reads it


LONG_WORD = 24  # characters: a longer word may break anywhere (else the table outgrows the page)


def _long(text: str) -> str:
    """The class of a cell holding a word too long for a column: it may break inside that word;
    other cells break only between words, so headings and ordinary words stay whole."""
    return ' class="long"' if any(len(w) > LONG_WORD for w in text.split()) else ""


def _classes(*names: str) -> str:
    joined = " ".join(n for n in names if n)
    return f' class="{joined}"' if joined else ""


def html(t: Table) -> str:
    """The table as HTML: every cell escaped; sortable tables carry their numbers' sort keys; a
    folded table or one with extra columns comes with its checkboxes (`Table`)."""
    cls = " ".join((["sortable"] if t.sortable else []) + t.classes)
    cap = f"<caption>{escape(t.caption)}</caption>" if t.caption else ""
    extra = set(t.extra_columns)
    fold = t.fold if 0 < t.fold < len(t.rows) else 0
    head = "".join(f'<th scope="col"{_classes("long" if _long(h) else "", "x" if i in extra else "")}>'
                   f"{escape(h)}</th>" for i, h in enumerate(t.head))
    body = []
    for n, r in enumerate(t.rows):
        cells = []
        for i, c in enumerate(r):
            c = "" if c is None else str(c)
            x = "x" if i in extra else ""
            if is_number(c):
                cells.append(f'<td{_classes("n", x)} data-v="{escape(_key(c))}">{escape(c)}</td>')
            else:
                cells.append(f'<td{_classes("long" if _long(c) else "", x)}>{escape(c)}</td>')
        mark = t.row_classes[n] if n < len(t.row_classes) else ""
        body.append(f"<tr{_classes(mark, 'more' if fold and n >= fold else '')}>" + "".join(cells) + "</tr>")
    data = f' data-fold="{fold}"' if fold else ""
    out = (f'<div class="tablewrap"><table class="{cls}"{data}>{cap}<thead><tr>{head}</tr></thead>'
           f"<tbody>{''.join(body)}</tbody></table></div>")
    if not fold and not extra:
        return out
    controls = []
    if fold:
        controls.append(f'<label><input type="checkbox" class="rows"> show all {len(t.rows)} rows '
                        f"(the first {fold} are shown above)</label>")
    if extra:
        controls.append(f'<label><input type="checkbox" class="cols"> show all columns ({len(extra)} more: '
                        f"{escape(', '.join(t.head[i] for i in sorted(extra)))})</label>")
    # under the table it unfolds, apart from the next one: above, they read as the previous table's
    return f'<div class="folded">{out}<p class="controls">{" ".join(controls)}</p></div>'



LATEX = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_",
         "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}",
         "|": r"\textbar{}", "<": r"\textless{}", ">": r"\textgreater{}", "±": r"$\pm$",
         "−": "$-$", "…": r"\ldots{}", "–": "--", "—": "---", "\u2009": r"\,"}


def latex_escape(text: str) -> str:
    """`text` safe in a LaTeX table cell: special characters escaped, line breaks as spaces."""
    text = " ".join(str(text).split())
    return "".join(LATEX.get(ch, ch) for ch in text)


def latex(t: Table) -> str:
    """A booktabs table (\\usepackage{booktabs}): numbers right-aligned, text left-aligned."""
    cols = "".join("r" if t.rows and all(is_number(str(r[i])) for r in t.rows) else "l"
                   for i in range(len(t.head)))
    out = ["\\begin{table}[htbp]", "\\centering"]
    if t.caption:
        out.append(f"\\caption{{{latex_escape(t.caption)}}}")
    out += [f"\\begin{{tabular}}{{{cols}}}", "\\toprule",
            " & ".join(latex_escape(h) for h in t.head) + r" \\", "\\midrule"]
    out += [" & ".join(latex_escape("" if c is None else str(c)) for c in r) + r" \\" for r in t.rows]
    out += ["\\bottomrule", "\\end{tabular}", "\\end{table}"]
    return "\n".join(out)


MARKDOWN_SPECIAL = set("\\`*_[]<>|~&$")


def markdown_escape(text: str) -> str:
    """`text` safe in a GitHub Markdown table cell: the characters that format, link, make HTML or
    end a cell escaped with a backslash, line breaks as spaces."""
    text = " ".join(str(text).split())
    return "".join("\\" + ch if ch in MARKDOWN_SPECIAL else ch for ch in text)


def markdown(t: Table) -> str:
    """A GitHub Markdown table (numbers right-aligned), its caption as a line above it."""
    aligns = ["---:" if t.rows and all(is_number(str(r[i])) for r in t.rows) else ":---"
              for i in range(len(t.head))]
    out = [f"**{markdown_escape(t.caption)}**", ""] if t.caption else []
    out.append("| " + " | ".join(markdown_escape(h) or " " for h in t.head) + " |")
    out.append("| " + " | ".join(aligns) + " |")
    out += ["| " + " | ".join(markdown_escape("" if c is None else str(c)) for c in r) + " |" for r in t.rows]
    return "\n".join(out)


def documents(tables: Sequence[Table], kind: str) -> str:
    """Every table in one LaTeX (`kind` "latex") or Markdown ("markdown") document fragment."""
    draw = latex if kind == "latex" else markdown
    head = ("% tealeaves tables: \\usepackage{booktabs} in the preamble\n" if kind == "latex" else "")
    return head + "\n\n".join(draw(t) for t in tables) + "\n"


SORT_JS = """(() => {
const key = td => td.dataset.v === undefined ? null : (td.dataset.v === '' ? NaN : parseFloat(td.dataset.v));
for (const table of document.querySelectorAll('table.sortable')) {
  const heads = table.tHead.rows[0].cells;
  for (let i = 0; i < heads.length; i++) {
    const th = heads[i];
    th.tabIndex = 0; th.classList.add('sorter'); th.setAttribute('aria-sort', 'none');
    const sort = () => {
      const up = th.getAttribute('aria-sort') !== 'ascending';
      for (const h of heads) h.setAttribute('aria-sort', 'none');
      th.setAttribute('aria-sort', up ? 'ascending' : 'descending');
      const body = table.tBodies[0];
      const rows = [...body.rows];
      rows.sort((a, b) => {
        const x = a.cells[i], y = b.cells[i];
        const p = key(x), q = key(y);
        if (p !== null && q !== null) {
          if (isNaN(p) || isNaN(q)) return isNaN(p) - isNaN(q);  // missing values last
          return up ? p - q : q - p;
        }
        const c = x.textContent.localeCompare(y.textContent, undefined, {numeric: true});
        return up ? c : -c;
      });
      for (const r of rows) body.appendChild(r);
      const fold = parseInt(table.dataset.fold || '0');
      if (fold) rows.forEach((r, n) => r.classList.toggle('more', n >= fold));  // the first rows stay shown
    };
    th.addEventListener('click', sort);
    th.addEventListener('keydown', e => { if (e.key === 'Enter' || e.key === ' ') { e.preventDefault(); sort(); } });
  }
}
})();"""
