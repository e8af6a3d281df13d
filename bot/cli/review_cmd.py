"""``gitneural review``: review a change from the command line."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

from bot.config import Config, trusted_config
from bot.domain.change import Change
from bot.domain.results import ReviewResult, Severity
from bot.effort import EFFORTS, Effort
from bot.errors import EXIT_FINDINGS, EXIT_OK, UsageError

FORMATS = ("text", "json", "sarif")
SEVERITIES = tuple(str(s) for s in Severity)


def add_parser(commands: Any) -> None:
    p: argparse.ArgumentParser = commands.add_parser(
        "review",
        help="review a change (staged by default) and print the findings",
        description="Review a change with Kimi K3. Without a source option: the staged "
        "change if anything is staged, else the work tree's changes.",
    )
    src = p.add_mutually_exclusive_group()
    src.add_argument("--staged", action="store_true", help="the staged change (index vs HEAD)")
    src.add_argument("--worktree", action="store_true", help="the work tree's changes vs HEAD")
    src.add_argument(
        "--base",
        metavar="REV",
        help="merge-base(REV, HEAD)..HEAD, as GitHub's three-dot diff (see --head)",
    )
    src.add_argument("--diff", metavar="FILE", help="a unified diff file, or - for stdin")
    p.add_argument("--head", metavar="REV", help="with --base: the head revision (default HEAD)")
    p.add_argument("--format", choices=FORMATS, default="text", help="output format")
    p.add_argument("-o", "--output", metavar="FILE", help="write the report here, not stdout")
    p.add_argument("--effort", choices=EFFORTS, help="K3 reasoning effort (default: config, max)")
    p.add_argument(
        "--fail-on",
        choices=SEVERITIES,
        help="exit 1 when a finding is at least this severe (default: config, critical)",
    )
    p.add_argument(
        "--dry-run",
        action="store_true",
        help="show what would be sent (files, skipped, token estimate); no key, no model",
    )
    p.add_argument(
        "--config",
        metavar="FILE",
        type=Path,
        help="settings file (default: .gitneural.toml at the trusted revision)",
    )
    p.add_argument("-C", dest="repo", metavar="DIR", default=".", help="run in DIR")
    p.add_argument("--quiet", action="store_true", help="no progress line")
    p.set_defaults(run=run)


def _read_diff(source: str) -> bytes:
    if source == "-":
        return sys.stdin.buffer.read()
    try:
        return Path(source).read_bytes()
    except OSError as exc:
        raise UsageError(f"cannot read diff {source}: {exc.strerror}") from None


def load_change(args: argparse.Namespace) -> Change:
    """The change the arguments name (pygit2 is imported only here)."""
    from bot.domain.diff import parse_diff
    from bot.errors import GitError
    from bot.git.repo import (
        has_staged_changes,
        open_repo,
        range_change,
        resolve_commit,
        staged_change,
        worktree_change,
    )
    from bot.git.snapshots import TreeSnapshot

    if args.head and not args.base:
        raise UsageError("--head needs --base")
    if args.diff:
        diff = parse_diff(_read_diff(args.diff))
        try:
            repo = open_repo(args.repo)
        except GitError:
            return Change(diff=diff, title=f"diff {args.diff}")
        head = None if repo.head_is_unborn else resolve_commit(repo, "HEAD")
        trusted = TreeSnapshot(repo, head) if head is not None else None
        return Change(diff=diff, trusted=trusted, title=f"diff {args.diff}")
    repo = open_repo(args.repo)
    if args.base:
        return range_change(repo, args.base, args.head or "HEAD")
    if args.staged:
        return staged_change(repo)
    if args.worktree:
        return worktree_change(repo)
    if has_staged_changes(repo):
        return staged_change(repo)
    return worktree_change(repo)


def resolve_effort(flag: str | None, config: Config) -> Effort:
    env = os.environ.get("GITNEURAL_REASONING_EFFORT", "").strip().lower()
    value = flag or env or config.review.effort
    if value not in EFFORTS:
        raise UsageError(f"GITNEURAL_REASONING_EFFORT must be one of low, high, max, not {env!r}")
    return value


def _write(text: str, output: str | None) -> None:
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


def run(args: argparse.Namespace) -> int:
    change = load_change(args)
    if not change.diff.files:
        # Not an error: a script reviewing "whatever changed" has nothing to report.
        print(
            "gitneural: nothing to review: the change is empty "
            "(stage something, or try --base main, or --diff FILE)",
            file=sys.stderr,
        )
        return EXIT_OK
    config = trusted_config(change.trusted, args.config)
    effort = resolve_effort(args.effort, config)
    if args.dry_run:
        from bot.cli.dry_run import describe_plan
        from bot.review import plan_review

        plan = plan_review(change, config, effort=effort)
        _write(describe_plan(plan, fmt=args.format), args.output)
        return EXIT_OK
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
    _write(render(result, change, args.format), args.output)
    fail_on = Severity(args.fail_on or config.review.fail_on)
    worst = result.worst()
    return EXIT_FINDINGS if worst is not None and worst.at_least(fail_on) else EXIT_OK
