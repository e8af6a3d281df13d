"""What a command-line review prints, and where: the effort it runs at, the report in
the chosen format, on standard output or in ``-o FILE``, and the exit code. Shared by
``gitneural review`` on a local change and on a pull request (``--pr``)."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from bot.config import Config, trusted_config
from bot.domain.change import Change
from bot.domain.results import ReviewResult, Severity
from bot.effort import EFFORTS, Effort
from bot.errors import EXIT_FINDINGS, EXIT_OK, UsageError


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


def review_and_report(change: Change, args: argparse.Namespace) -> int:
    """Review ``change`` (or, with ``--dry-run``, show what would be sent), write the report,
    and say whether a finding reached ``--fail-on`` (or the settings' ``fail_on``)."""
    config = trusted_config(change.trusted, args.config)
    effort = resolve_effort(args.effort, config)
    if args.dry_run:
        from bot.cli.dry_run import describe_plan
        from bot.review import plan_review

        plan = plan_review(change, config, effort=effort)
        write_report(describe_plan(plan, fmt=args.format), args.output)
        return EXIT_OK
    # Imported here: the dry run and the hook's fast path need no model client.
    from bot.llm.client import K3Client
    from bot.llm.settings import LLMSettings
    from bot.render.progress import ProgressLine
    from bot.review import review

    settings = LLMSettings.from_env(effort=effort)
    settings.require_key()
    progress = ProgressLine(enabled=not args.quiet)
    try:
        result = review(change, config, K3Client(settings), on_progress=progress)
    finally:
        progress.done()
    write_report(render(result, change, args.format), args.output)
    fail_on = Severity(args.fail_on or config.review.fail_on)
    worst = result.worst()
    return EXIT_FINDINGS if worst is not None and worst.at_least(fail_on) else EXIT_OK
