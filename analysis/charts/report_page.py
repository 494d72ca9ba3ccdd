"""The report's HTML template and its building blocks: one self-contained page (style, plotly.js
and every figure inline; nothing is fetched), readable on screen and printed to PDF.

Every text from the store goes through ``text``/``table``/``pre`` here, which escape it
(``html.escape``, quotes included): model answers, instructions, rationales, names and settings
show as the characters they are, never as markup, markdown or a link. The template lives in
Python, not a data file, so an installed package always has it.
"""

from __future__ import annotations

import html
from string import Template
from typing import Any

import pandas as pd

from analysis.views.tables import fmt_num

# No @import, no url(), no web font: the system's fonts only (nothing may be fetched).
STYLE = """
:root { color-scheme: light; --ink: #1f2430; --muted: #5b6272; --line: #d9dce3;
        --warn: #8a1c1c; --warn-bg: #fdecec; --card: #f7f8fa; }
* { box-sizing: border-box; }
body { margin: 0; color: var(--ink); background: #fff;
       font: 15px/1.5 "Source Sans", "Source Sans 3", system-ui, -apple-system, "Segoe UI",
             Roboto, "Helvetica Neue", Arial, sans-serif; }
main { max-width: 1000px; margin: 0 auto; padding: 24px 20px 64px; }
h1 { font-size: 28px; margin: 0 0 4px; }
h2 { font-size: 22px; margin: 0 0 8px; padding-top: 8px; border-top: 2px solid var(--line); }
h3 { font-size: 17px; margin: 18px 0 6px; }
h4 { font-size: 15px; margin: 12px 0 4px; }
section { margin: 28px 0; }
.meta, .note, .caption { color: var(--muted); }
.caption { font-size: 13px; margin: 4px 0 10px; }
.note { font-style: italic; }
.simulated { border: 4px solid var(--warn); background: var(--warn-bg); color: var(--warn);
             padding: 16px 20px; margin: 18px 0; border-radius: 6px; }
.simulated strong { display: block; font-size: 40px; line-height: 1.1; letter-spacing: .04em; }
table { border-collapse: collapse; width: 100%; margin: 8px 0 14px; font-size: 13px; }
th, td { border: 1px solid var(--line); padding: 3px 6px; text-align: left;
         vertical-align: top; overflow-wrap: break-word; }
th { background: var(--card); }
table.pairs th { width: 24%; }
td.num { text-align: right; white-space: nowrap; }
.wide { overflow-x: auto; }
.figure { margin: 8px 0 16px; break-inside: avoid; page-break-inside: avoid; }
.exemplar { border: 1px solid var(--line); border-radius: 6px; padding: 10px 12px;
            margin: 10px 0 16px; background: #fff; }
.exemplar .head { font-weight: 600; }
.label { font-size: 12px; font-weight: 600; color: var(--muted); text-transform: uppercase;
         letter-spacing: .05em; margin: 8px 0 2px; }
pre.text { white-space: pre-wrap; overflow-wrap: anywhere; margin: 0; padding: 8px 10px;
           background: var(--card); border-radius: 4px; font: 13px/1.45 ui-monospace,
           "DejaVu Sans Mono", Menlo, Consolas, monospace; max-height: 420px; overflow: auto; }
nav ol { columns: 2; margin: 6px 0; }
@page { size: A4 landscape; margin: 12mm; }
@media print {
  body { font-size: 12px; }
  main { max-width: none; padding: 0; }
  nav, .modebar, .modebar-container { display: none !important; }
  section.page { break-before: page; page-break-before: always; }
  pre.text, .wide { max-height: none; overflow: visible; }
  pre.text, tr, .exemplar .head { break-inside: avoid; page-break-inside: avoid; }
  .exemplar .head, .label { break-after: avoid; page-break-after: avoid; }
  h2, h3, h4 { break-after: avoid; page-break-after: avoid; }
}
"""

# Plotly draws at the width the page has; a printed page is narrower or wider than the screen,
# so the figures are redrawn at the print width before printing and back after it.
RESIZE = """
(function () {
  function resize() {
    document.querySelectorAll('.js-plotly-plot').forEach(function (gd) {
      if (window.Plotly) { window.Plotly.Plots.resize(gd); }
    });
  }
  window.addEventListener('beforeprint', resize);
  window.addEventListener('afterprint', resize);
})();
"""

PAGE = Template(
    """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="Finegrain">
<title>$title</title>
<style>$style</style>
<script>window.PlotlyConfig = {MathJaxConfig: 'local'};</script>
<script>$plotlyjs</script>
</head>
<body>
<main>
$body
</main>
<script>$resize</script>
</body>
</html>
"""
)


def page(title: str, body: str, plotlyjs: str) -> str:
    """The whole file: ``title`` is escaped here; ``body`` is HTML built by this module's
    helpers; ``plotlyjs`` is plotly's bundle, inlined once."""
    return PAGE.substitute(
        title=text(title), style=STYLE, plotlyjs=plotlyjs, body=body, resize=RESIZE
    )


def text(value: Any) -> str:
    """Untrusted text as HTML text (quotes escaped too: safe in an attribute as well)."""
    return html.escape("" if value is None else str(value), quote=True)


def para(value: Any, cls: str | None = None) -> str:
    attr = f' class="{cls}"' if cls else ""
    return f"<p{attr}>{text(value)}</p>"


def pre(value: Any, empty: str = "(none)") -> str:
    """A long text (an answer, an instruction, a rationale) as it was written: line breaks
    kept, nothing rendered (no markdown, no HTML)."""
    shown = empty if value is None or str(value) == "" else value
    return f'<pre class="text">{text(shown)}</pre>'


def _cell(value: Any, digits: int | None = None) -> tuple[str, bool]:
    """(the cell's text, whether it is a number: right-aligned). A float has ``digits``
    decimals when given (views/tables.py's rule for its kind of number)."""
    if value is None or (isinstance(value, float) and pd.isna(value)) or value is pd.NA:
        return "", False
    if isinstance(value, bool):
        return ("yes" if value else "no"), False
    if isinstance(value, float) and digits is not None:
        return fmt_num(value, digits), True
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, int | float):
        return (f"{value:,}" if isinstance(value, int) else f"{value:g}"), True
    if hasattr(value, "item") and not isinstance(value, str):  # a numpy scalar
        return _cell(value.item(), digits)
    return str(value), False


def table(frame: pd.DataFrame, caption: str | None = None, digits: int | None = None) -> str:
    """A DataFrame whose cells are text for people (views/tables.py's formats), or numbers
    (floats with ``digits`` decimals), as an HTML table: headers and cells escaped, numbers
    right-aligned."""
    if frame is None or frame.empty:
        return ""
    head = "".join(f"<th>{text(c)}</th>" for c in frame.columns)
    rows = []
    for values in frame.itertuples(index=False):
        cells = []
        for v in values:
            shown, num = _cell(v, digits)
            cells.append(
                f'<td class="num">{text(shown)}</td>' if num else f"<td>{text(shown)}</td>"
            )
        rows.append(f"<tr>{''.join(cells)}</tr>")
    cap = f"<caption>{text(caption)}</caption>" if caption else ""
    body = f"<table>{cap}<thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>"
    return f'<div class="wide">{body}</div>'  # a wide table scrolls on a narrow screen


def pairs(rows: list[tuple[str, Any]] | tuple[tuple[str, Any], ...]) -> str:
    """A two-column table of (what, value) lines, both escaped."""
    body = "".join(f"<tr><th>{text(k)}</th><td>{text(_cell(v)[0])}</td></tr>" for k, v in rows)
    return f'<table class="pairs"><tbody>{body}</tbody></table>'


def section(anchor: str, title: str, body: str, *, new_page: bool = True) -> str:
    """One part of the report; in print each starts on a new page."""
    cls = ' class="page"' if new_page else ""
    return f'<section id="{text(anchor)}"{cls}><h2>{text(title)}</h2>{body}</section>'


def contents(entries: list[tuple[str, str]]) -> str:
    """The list of sections (on screen only: a printed page cannot be clicked)."""
    items = "".join(f'<li><a href="#{text(a)}">{text(t)}</a></li>' for a, t in entries)
    return f"<nav><h3>Contents</h3><ol>{items}</ol></nav>"
