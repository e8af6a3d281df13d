"""What a command-line review prints, and where: the effort it runs at, the report in
the chosen format, on standard output or in ``-o FILE``. Shared by ``gitneural review``
on a local change and on a pull request (``--pr``)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from bot.config import Config
from bot.domain.change import Change
from bot.domain.results import ReviewResult
from bot.effort import EFFORTS, Effort
from bot.errors import UsageError


def resolve_effort(flag: str | None, config: Config) -> Effort:
    env = os.environ.get("GITNEURAL_REASONING_EFFORT", "").strip().lower()
    value = flag or env or config.review.effort
    if value not in EFFORTS:
        raise UsageError(f"GITNEURAL_REASONING_EFFORT must be one of low, high, max, not {env!r}")
    return value


def write_report(text: str, output: str | None) -> None:
    if output:
        Path(output).write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text if text.endswith("\n") else text + "\n")
        sys.stdout.flush()


def render(result: ReviewResult, change: Change, fmt: str) -> str:
    from bot import __version__

    if fmt == "json":
        from bot.render.json_report import render_json

        return render_json(result)
    if fmt == "sarif":
        import json

        from bot.render.sarif import render_sarif

        return json.dumps(render_sarif(result, tool_version=__version__, change=change), indent=2)
    from bot.render.text import render_text

    return render_text(result, change, color=sys.stdout.isatty())
