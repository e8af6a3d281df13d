"""The status page's HTML: server-rendered from ``templates/status.html.j2``, one
self-contained document (inline CSS and an inline SVG chart, nothing fetched), escaped
by Jinja's autoescape."""

from __future__ import annotations

from typing import Final

import jinja2

from bot.web.status_data import InstallationUsage, StatusInputs, StatusView, gather_status

__all__ = ["StatusInputs", "StatusView", "gather_status", "render_status"]

BAR_WIDTH: Final = 360
ROW_HEIGHT: Final = 28


def human_bytes(size: int | None) -> str:
    if size is None:
        return "unknown"
    value = float(size)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if value < 1024 or unit == "TiB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    raise AssertionError("unreachable")  # pragma: no cover


def _bar(row: InstallationUsage, widest: int) -> tuple[int, str]:
    """Width of the filled bar and its colour: the share of the budget, or (no budget)
    the share of the largest user."""
    share = row.share
    if share is None:
        return round(BAR_WIDTH * row.tokens / widest) if widest else 0, "#4a78c2"
    colour = "#2e8540" if share < 0.8 else ("#c77c02" if share < 1 else "#b3261e")
    return round(BAR_WIDTH * min(share, 1.0)), colour


_env = jinja2.Environment(
    loader=jinja2.PackageLoader("bot.web", "templates"),
    autoescape=True,
    undefined=jinja2.StrictUndefined,
)


def render_status(view: StatusView) -> str:
    widest = max((row.tokens for row in view.usage), default=0)
    rows = [(row, *_bar(row, widest)) for row in view.usage]
    return _env.get_template("status.html.j2").render(
        view=view,
        rows=rows,
        bar_width=BAR_WIDTH,
        row_height=ROW_HEIGHT,
        human_bytes=human_bytes,
    )
