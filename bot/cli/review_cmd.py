"""``gitneural review``: review a change from the command line."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bot.cli.hook_cmd import positive_seconds
from bot.cli.review_output import review_and_report
from bot.domain.change import Change
from bot.domain.results import Severity
from bot.effort import EFFORTS
from bot.errors import EXIT_OK, UsageError

if TYPE_CHECKING:
    from bot.code.index import SymbolIndex

FORMATS = ("text", "json", "sarif")
SEVERITIES = tuple(str(s) for s in Severity)


def add_parser(commands: Any) -> None:
    p: argparse.ArgumentParser = commands.add_parser(
        "review",
        help="review a change (staged by default) and print the findings",
        description="Review a change with Kimi K3. Without a source option: the staged "
        "change if anything is staged, else the work tree's changes. --pr reviews a pull "
        "request on GitHub (GITHUB_API_URL for GitHub Enterprise Server).",
        epilog="The model: KIMI_API_KEY (or MOONSHOT_API_KEY) holds the Moonshot API key; "
        "KIMI_BASE_URL another server with K3's API, GITNEURAL_MODEL the model (kimi-k3), "
        "GITNEURAL_REASONING_EFFORT the effort. Settings: .gitneural.toml at the trusted "
        "revision (HEAD; with --base, that revision). Exit codes: 0 fine, 1 a finding at or "
        "above --fail-on, 2 usage or configuration, 3 model or API failure.",
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
    src.add_argument(
        "--pr",
        metavar="URL|OWNER/REPO#N",
        help="a pull request on GitHub, fetched by git with GITHUB_TOKEN (or GH_TOKEN)",
    )
    p.add_argument(
        "--post",
        action="store_true",
        help="with --pr: post the review on the pull request, as the GitHub App would",
    )
    p.add_argument("--head", metavar="REV", help="with --base: the head revision (default HEAD)")
    p.add_argument("--format", choices=FORMATS, default="text", help="output format")
    p.add_argument("-o", "--output", metavar="FILE", help="write the report here, not stdout")
    p.add_argument("--effort", choices=EFFORTS, help="K3 reasoning effort (default: config, max)")
    p.add_argument(
        "--fail-on",
        choices=("none", *SEVERITIES),
        help="exit 1 when a finding is at least this severe; none: never "
        "(default: fail_on in [review], critical)",
    )
    p.add_argument(
        "--timeout",
        type=positive_seconds,
        metavar="SECONDS",
        help="give up when the review takes longer (default: timeout in [review], 1200)",
    )
    p.add_argument(
        "--yes",
        action="store_true",
        help="send the review even when its prompts are estimated above "
        "confirm_above_tokens in [review] (150,000)",
    )
    p.add_argument(
        "--dry-run",
        action="store_true",
        help="show what would be sent (files, skipped, token estimate, settings file); "
        "no key, no model",
    )
    p.add_argument(
        "--show-prompt",
        action="store_true",
        help="with --dry-run: print each request exactly as it would be sent (messages, tools)",
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
        snapshot_at,
        staged_change,
        worktree_change,
    )

    if args.head and not args.base:
        raise UsageError("--head needs --base")
    if args.diff:
        diff = parse_diff(_read_diff(args.diff))
        try:
            repo = open_repo(args.repo)
        except GitError:
            return Change(diff=diff, title=f"diff {args.diff}")
        trusted = None if repo.head_is_unborn else snapshot_at(repo, "HEAD")
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


def run(args: argparse.Namespace) -> int:
    if args.show_prompt and not args.dry_run:
        raise UsageError("--show-prompt needs --dry-run: it shows what would be sent")
    if args.dry_run and args.format == "sarif":
        raise UsageError(
            "--dry-run reports what would be sent, not findings: use --format text or json "
            "(SARIF holds findings)"
        )
    if args.post and not args.pr:
        raise UsageError("--post needs --pr: only a pull request can be posted to")
    if args.pr:
        if args.head:
            raise UsageError("--head needs --base, not --pr (a pull request has its own head)")
        from bot.cli.pr_review import run_pr

        return run_pr(args)
    change = load_change(args)
    if not change.diff.files:
        # Not an error: a script reviewing "whatever changed" has nothing to report.
        print(
            "gitneural: nothing to review: the change is empty "
            "(stage something, or try --base main, or --diff FILE)",
            file=sys.stderr,
        )
        return EXIT_OK
    return review_and_report(change, args, _symbol_index(change, args))


def _symbol_index(change: Change, args: argparse.Namespace) -> SymbolIndex | None:
    """The head's symbol index, kept in the repository's git folder for HEAD (where the
    hook finds it warm), brought to the reviewed files; none for a bare diff."""
    if args.diff or change.head is None:
        return None
    from bot.code.index import repository_index
    from bot.git.repo import open_repo, snapshot_at

    repo = open_repo(args.repo)
    if repo.head_is_unborn:
        return None
    head = str(repo.head.target)
    index = repository_index(snapshot_at(repo, "HEAD"), head, repo.path)
    if index is None or change.head_sha == head:
        return index
    if change.head_sha is not None:
        return repository_index(change.head, change.head_sha, repo.path)
    return index.with_files(change.head, [f.path for f in change.diff.files])
