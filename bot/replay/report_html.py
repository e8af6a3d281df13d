"""A replay's report as one HTML page: the figures as an inline SVG chart (recall,
precision, and findings per change), the tables, no script and nothing from elsewhere."""

from __future__ import annotations

from html import escape
from typing import Any

from bot.replay.report import precision_text, recall_text

_BAR_W, _BAR_GAP, _CHART_H = 28, 8, 160


def _svg_chart(report: dict[str, Any]) -> str:
    """Two bars for recall and precision (0 to 100%), then one bar per change's findings."""
    t = report["totals"]
    bars: list[tuple[str, float, str]] = [
        ("recall", t["recall"] or 0.0, "#2b7a3d"),
        ("precision", t["precision"] or 0.0, "#2b5c9a"),
    ]
    most = max([len(c["findings"]) for c in report["changes"]] + [1])
    for c in report["changes"]:
        bars.append((c["head"][:7], len(c["findings"]) / most, "#999999"))
    width = len(bars) * (_BAR_W + _BAR_GAP) + _BAR_GAP
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{_CHART_H + 40}" '
        'role="img" aria-label="recall, precision and findings per change">'
    ]
    for n, (label, share, colour) in enumerate(bars):
        x = _BAR_GAP + n * (_BAR_W + _BAR_GAP)
        h = round(share * _CHART_H)
        parts.append(
            f'<rect x="{x}" y="{_CHART_H - h + 10}" width="{_BAR_W}" height="{h}" '
            f'fill="{colour}"><title>{escape(label)}</title></rect>'
        )
        parts.append(
            f'<text x="{x + _BAR_W / 2}" y="{_CHART_H + 28}" font-size="9" '
            f'text-anchor="middle">{escape(label)}</text>'
        )
    parts.append("</svg>")
    return "".join(parts)


def _cell(text: object) -> str:
    return f"<td>{escape(str(text))}</td>"


def render_html(report: dict[str, Any]) -> str:
    t = report["totals"]
    rows = []
    for c in report["changes"]:
        found = sum(1 for g in c["golden"] if g["found"])
        matched = sum(1 for f in c["findings"] if f["matches"])
        items = "".join(
            f"<li>{escape(f['severity'])} {escape(f['path'])}:{f['start_line']} "
            f"{escape(f['title'])}{' (matches a golden item)' if f['matches'] else ''}</li>"
            for f in c["findings"]
        )
        golden = "".join(
            f"<li>{escape(str(g['path']))}:{g['lines'][0] if g['lines'] else '?'} "
            f"{'found' if g['found'] else 'missed'}</li>"
            for g in c["golden"]
        )
        rows.append(
            "<tr>"
            + _cell(c["head"][:10])
            + _cell(c["title"])
            + f"<td>{matched}/{len(c['findings'])}<ul>{items}</ul></td>"
            + f"<td>{found}/{len(c['golden'])}<ul>{golden}</ul></td>"
            + _cell(f"{c['prompt_tokens']:,}")
            + _cell(f"{c['seconds']:.1f}")
            + "</tr>"
        )
    return (
        '<!doctype html>\n<html lang="en"><head><meta charset="utf-8">'
        "<title>GitNeural replay</title>"
        "<style>body{font-family:sans-serif;margin:2em}td,th{border:1px solid #ccc;"
        "padding:4px;vertical-align:top}table{border-collapse:collapse}</style></head><body>"
        "<h1>GitNeural replay</h1>"
        f"<p>Settings: {escape(report['settings'])}.</p>"
        f"<p>Recall: <b>{escape(recall_text(t))}</b>. "
        f"Precision: <b>{escape(precision_text(t))}</b>. "
        f"Tokens: {t['prompt_tokens']:,} prompt ({t['cached_tokens']:,} cached), "
        f"{t['completion_tokens']:,} completion.</p>"
        f"{_svg_chart(report)}"
        "<table><tr><th>head</th><th>title</th><th>matched/findings</th>"
        "<th>found/golden</th><th>tokens</th><th>seconds</th></tr>"
        + "".join(rows)
        + "</table></body></html>\n"
    )
