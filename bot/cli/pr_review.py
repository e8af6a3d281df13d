"""``gitneural review --pr URL|OWNER/REPO#N``: review any pull request from a terminal.

With a token (``GITHUB_TOKEN``, or ``GH_TOKEN``: ``GITHUB_TOKEN=$(gh auth token)``) the
pull request is read with one API request (and the issues it closes with at most one
each, :func:`~bot.usecases.review.steps.read_threads_and_issues`) and its code fetched by
git into the mirror cache the App uses (``$GITNEURAL_DATA_DIR/token-mirrors``); settings
and instructions come from its repository's default branch (or ``--config``). The
review is printed like any CLI review and nothing is written to GitHub. ``--post``
hands the pull request to the App's job runner instead, which posts exactly what the App
would (one review, found again by its marker if it is already there) and the review is
printed as well.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import urllib.parse
from collections.abc import Mapping
from dataclasses import dataclass

from bot.action.report import RunFailedError, for_a_single_run
from bot.cli.review_output import exit_code, render, review_and_report, write_report
from bot.domain.results import Severity
from bot.errors import ConfigError, GitHubError, UsageError
from bot.gh.api.client import token_writer
from bot.gh.api.credentials import github_api_url
from bot.gh.api.hosts import api_host_matches, require_secure_github
from bot.gh.mirrors.cache import MirrorAuthError
from bot.gh.pulls import PullInfo, read_pull
from bot.jobs import ReviewJob
from bot.llm.settings import LLMSettings
from bot.render.progress import ProgressLine
from bot.settings.environment import data_dir
from bot.settings.repository import trusted_config
from bot.usecases.context import TOKEN_INSTALLATION, JobContext
from bot.usecases.images import pull_images
from bot.usecases.pull_change import PullChange, build_change
from bot.usecases.review.run import TransientJobError, run_review_job
from bot.usecases.review.steps import fetch_mirror, read_threads_and_issues

#: GitHub's own name rules, so nothing else (``..``, ``%2e``, a slash) reaches a URL path:
#: an owner is letters, digits and single hyphens inside, at most 39 characters; a
#: repository is letters, digits, ``.``, ``-`` and ``_``, at most 100, never ``.`` or ``..``.
_OWNER = r"[A-Za-z0-9](?:-?[A-Za-z0-9])*"
_REPO = r"[A-Za-z0-9._-]+"
_NUMBER = r"[1-9][0-9]{0,9}"
_SHORT = re.compile(rf"({_OWNER})/({_REPO})#({_NUMBER})")
_PATH = re.compile(rf"/({_OWNER})/({_REPO})/pull/({_NUMBER})/?")
_FORMS = (
    "--pr takes https://HOST/OWNER/REPO/pull/N or OWNER/REPO#N with GitHub's names "
    "(owner: letters, digits, single inner hyphens, at most 39; repository: letters, "
    "digits, '.', '-', '_', at most 100)"
)


@dataclass(frozen=True)
class PullRef:
    repo: str
    number: int


def parse_pull_ref(text: str, api_url: str, env: Mapping[str, str]) -> PullRef:
    """``OWNER/REPO#N`` or the pull request's web address (``https://HOST/OWNER/REPO/pull/N``
    on the GitHub of ``api_url``); anything else is a one-line :class:`UsageError`."""
    text = text.strip()
    short = _SHORT.fullmatch(text) if len(text) <= 200 else None
    if short:
        return _ref(short, text)
    parts = urllib.parse.urlsplit(text) if len(text) <= 300 else None
    found = None
    plain = parts and not (parts.query or parts.fragment or parts.username or parts.password)
    if parts and plain and parts.scheme in ("http", "https"):
        found = _PATH.fullmatch(parts.path)
    if parts is None or found is None:
        raise UsageError(f"{_FORMS}, not {_shown(text)}")
    ref = _ref(found, text)
    require_secure_github(text, "--pr", env)
    if not api_host_matches(api_url, text):
        raise UsageError(
            f"the pull request is on {parts.netloc}, but GITHUB_API_URL is {api_url}: "
            f"for GitHub Enterprise Server set GITHUB_API_URL=https://{parts.netloc}/api/v3"
        )
    return ref


def _ref(found: re.Match[str], text: str) -> PullRef:
    owner, repo, number = found[1], found[2], found[3]
    if len(owner) > 39 or len(repo) > 100 or repo in (".", ".."):
        raise UsageError(f"{_FORMS}, not {_shown(text)}")
    return PullRef(f"{owner}/{repo}", int(number))


def _shown(text: str) -> str:
    return repr(text) if len(text) <= 80 and text.isprintable() else "(not shown)"


def _token() -> str:
    token = (os.environ.get("GITHUB_TOKEN") or os.environ.get("GH_TOKEN") or "").strip()
    if not token:
        raise ConfigError(
            "no GitHub token: set GITHUB_TOKEN (for example "
            "GITHUB_TOKEN=$(gh auth token) gitneural review --pr …)"
        )
    return token


def _say(text: str) -> None:
    print(f"gitneural: {text}", file=sys.stderr, flush=True)


def run_pr(args: argparse.Namespace) -> int:
    if args.post and (args.config or args.dry_run):
        raise UsageError(
            "--post reviews with the repository's own settings (its default branch): "
            "drop --config and --dry-run"
        )
    api_url = github_api_url(os.environ)
    ref = parse_pull_ref(args.pr, api_url, os.environ)
    token = _token()
    llm = LLMSettings.from_env()
    ctx = JobContext.for_token(token, api_url, data=data_dir(os.environ), llm=llm, bot_login=None)
    gh = ctx.github(TOKEN_INSTALLATION)
    try:
        pull = read_pull(gh, ref.repo, ref.number)
        if pull is None:
            raise GitHubError(
                f"pull request {ref.repo}#{ref.number} not found: check the reference, or "
                "the token cannot see that repository",
                status=404,
            )
        if not args.post:
            return _print(args, ctx, pull)
        ctx.bot_login = token_writer(gh)  # that account's reviews are GitNeural's
        return _post(args, ctx, pull)
    except MirrorAuthError:
        raise GitHubError(
            f"GitHub refused the token for a git fetch of {ref.repo}: it needs read access "
            "to the repository's contents"
        ) from None
    except GitHubError as exc:
        if exc.status == 401:
            raise GitHubError(
                "GitHub refused the token (401): set GITHUB_TOKEN to a valid token, "
                "e.g. GITHUB_TOKEN=$(gh auth token)"
            ) from None
        if exc.status == 404 or not exc.transient:
            raise
        raise RunFailedError(for_a_single_run(str(exc))) from None
    except TransientJobError as exc:
        raise RunFailedError(for_a_single_run(str(exc))) from None


def _exit_code(worst: Severity | None, flag: str | None, default: str) -> int:
    return exit_code(worst, flag or default)


def _print(args: argparse.Namespace, ctx: JobContext, pull: PullInfo) -> int:
    mirror, refs = fetch_mirror(ctx, TOKEN_INSTALLATION, pull)
    pc: PullChange = build_change(
        mirror,
        pull,
        base_ref=refs.base,
        default_ref=refs.default,
        last_reviewed=None,
        incremental=False,
    )
    # The issues it closes: one GraphQL query (a read), one REST read per issue only its
    # description names.
    config = trusted_config(pc.change.trusted, args.config)
    gh = ctx.github(TOKEN_INSTALLATION)
    _, pc.change.linked_issues = read_threads_and_issues(gh, pull, config, threads=False)
    pc.change.images = pull_images(pull.body_html, pull.body, config)
    return review_and_report(pc.change, args)


def _post(args: argparse.Namespace, ctx: JobContext, pull: PullInfo) -> int:
    ctx.llm.require_key()
    job = ReviewJob(
        installation_id=TOKEN_INSTALLATION,
        repo=pull.repo,
        pr_number=pull.number,
        head_sha=pull.head_sha,
        trigger="command",
        # One review per head, whoever asks and however often.
        delivery_id=f"cli-{pull.head_sha[:12]}",
        # Like the App's /review: the flag, else GITNEURAL_REASONING_EFFORT, else settings.
        effort=args.effort
        or os.environ.get("GITNEURAL_REASONING_EFFORT", "").strip().lower()
        or None,
        full=True,
        requested_by=ctx.bot_login,
    )
    _say(f"reviewing {pull.repo}#{pull.number} at {pull.head_sha[:12]} with Kimi K3…")
    progress = ProgressLine(enabled=not args.quiet)
    if ctx.token_run is not None:
        ctx.token_run.on_progress = progress
    try:
        outcome = run_review_job(job, ctx)
    finally:
        progress.done()
    if outcome.status == "failed":
        raise outcome.error or RunFailedError(outcome.detail)
    if outcome.result is not None and outcome.pull_change is not None:
        write_report(render(outcome.result, outcome.pull_change.change, args.format), args.output)
        _say(f"review posted: {outcome.review_url}")
        return _exit_code(outcome.result.worst(), args.fail_on, "critical")
    found = outcome.found
    where = f": {found.html_url}" if found is not None and found.html_url else ""
    _say(f"no new review: {outcome.detail}{where}")
    worst = found.marker.worst if found is not None else None
    return _exit_code(Severity(worst) if worst else None, args.fail_on, "critical")
