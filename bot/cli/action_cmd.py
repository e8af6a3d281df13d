"""``gitneural action``: the GitHub Action's step (``action.yml`` runs it)."""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from bot.errors import GitNeuralError


def add_parser(commands: Any) -> None:
    p: argparse.ArgumentParser = commands.add_parser(
        "action",
        help="review the pull request of a GitHub Actions job (run by action.yml)",
        description="Inside a GitHub Actions job: review the pull request of the workflow's "
        "event (pull_request, pull_request_target, or an issue_comment saying /review) and "
        "post one review with the workflow's token. Reads GITHUB_EVENT_NAME, "
        "GITHUB_EVENT_PATH, GITHUB_REPOSITORY, GITHUB_API_URL, GITHUB_WORKSPACE, "
        "GITHUB_TOKEN, KIMI_API_KEY and the action's inputs; writes GITHUB_STEP_SUMMARY "
        "and GITHUB_OUTPUT.",
    )
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from bot.action.report import workflow_command
    from bot.action.run import run_action

    try:
        return run_action(os.environ, sys.stdout)
    except GitNeuralError as exc:
        # An annotation on the run's page, which the job's log shows as the error line:
        # said once (not again by bot.cli.main on stderr, which the log interleaves).
        print(workflow_command("error", str(exc)), flush=True)
        return exc.exit_code
