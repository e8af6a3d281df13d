"""``gitneural hook``: the pre-commit hook's entry (``run``) and its installer.

``run`` is what both the pre-commit framework (``.pre-commit-hooks.yaml``) and the hook
script written by ``install`` call. Its imports are deferred to the subcommand that needs
them: the commit path must not pay for anything it does not use.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

from bot.domain.results import Severity
from bot.effort import EFFORTS

SEVERITIES = tuple(str(s) for s in Severity)
HOOK_TYPES = ("pre-commit", "pre-push")


def positive_seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be > 0 seconds, not {text}")
    return value


def add_parser(commands: Any) -> None:
    hook: argparse.ArgumentParser = commands.add_parser(
        "hook",
        help="the pre-commit hook: run it, install it, uninstall it",
        description="Review what is about to be committed (or pushed) with Kimi K3.",
    )
    actions = hook.add_subparsers(dest="hook_action", metavar="ACTION", required=True)
    _add_run(actions)
    _add_install(actions)
    _add_uninstall(actions)


def _add_run(actions: Any) -> None:
    p: argparse.ArgumentParser = actions.add_parser(
        "run",
        help="review the staged change (or the pushed commits) and apply the hook's policy",
        description="Review exactly what is staged (or, in the pre-push stage, the pushed "
        "commits). Settings come from [hook] in .gitneural.toml at HEAD; flags override "
        "them. When the review cannot run (no key, network down, timeout, quota) the hook "
        "prints one line and lets the commit through, unless --strict.",
        epilog="Exit codes: 0 go ahead, 1 a finding at or above --fail-on (or, with "
        "--strict, the review could not run: 2 configuration, 3 model or API).",
    )
    p.add_argument(
        "--fail-on", choices=SEVERITIES, help="refuse at this severity (default: critical)"
    )
    p.add_argument("--effort", choices=EFFORTS, help="K3 reasoning effort (default: low)")
    p.add_argument(
        "--timeout",
        type=positive_seconds,
        metavar="SECONDS",
        help="time budget of the review (default: timeout in [hook], 20)",
    )
    p.add_argument(
        "--strict",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="refuse the commit when the review cannot run (default: strict in [hook], off)",
    )
    p.add_argument(
        "--patch-out",
        metavar="FILE",
        type=Path,
        help="write the suggestions as a patch for `git apply` (the hook changes no file)",
    )
    p.add_argument(
        "--stage",
        choices=HOOK_TYPES,
        help="what to review: the staged change, or the pushed commits (pre-push reads "
        "git's pre-push lines on stdin; default: pre-push when the pre-commit framework "
        "names a push, else pre-commit)",
    )
    p.add_argument("--config", type=Path, metavar="FILE", help="settings file (default: HEAD's)")
    p.add_argument("--no-cache", action="store_true", help="neither read nor write the cache")
    p.add_argument("--quiet", action="store_true", help="no progress line")
    p.add_argument(
        "hook_args",
        nargs="*",
        metavar="ARG",
        help="arguments git passes to the hook (pre-push: remote name and URL)",
    )
    p.set_defaults(run=run_hook)


def _add_install(actions: Any) -> None:
    p: argparse.ArgumentParser = actions.add_parser(
        "install",
        help="install the git hook in this repository (without the pre-commit framework)",
        description="Write the git hook that runs `gitneural hook run` (honours "
        "core.hooksPath and worktrees). A hook that is not GitNeural's is left alone unless "
        "--chain (it is kept and runs first; its failure stops the commit) or --force (it "
        "is set aside; uninstall puts it back).",
    )
    mode = p.add_mutually_exclusive_group()
    mode.add_argument("--chain", action="store_true", help="keep the existing hook, run it first")
    mode.add_argument("--force", action="store_true", help="set the existing hook aside")
    _add_common_install(p)
    p.set_defaults(run=run_install)


def _add_uninstall(actions: Any) -> None:
    p: argparse.ArgumentParser = actions.add_parser(
        "uninstall",
        help="remove GitNeural's git hook and restore the hook it replaced or chained",
        description="Remove the git hook written by `gitneural hook install` and put back "
        "the hook it set aside or chained; a hook that is not GitNeural's is left alone. "
        "(With the pre-commit framework, remove GitNeural from .pre-commit-config.yaml "
        "instead.)",
    )
    _add_common_install(p)
    p.set_defaults(run=run_uninstall)


def _add_common_install(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "-t",
        "--hook-type",
        choices=HOOK_TYPES,
        default="pre-commit",
        help="which git hook (default: pre-commit)",
    )
    p.add_argument("-C", dest="repo", metavar="DIR", default=".", help="run in DIR")


def run_hook(args: argparse.Namespace) -> int:
    from hooks.pre_commit import HookOptions, run

    options = HookOptions(
        fail_on=args.fail_on,
        effort=args.effort,
        timeout=args.timeout,
        strict=args.strict,
        patch_out=args.patch_out,
        stage=args.stage,
        config=args.config,
        use_cache=not args.no_cache,
        progress=not args.quiet,
        hook_args=tuple(args.hook_args),
    )
    return run(options, env=os.environ, stdin=sys.stdin, stdout=sys.stdout, stderr=sys.stderr)


def run_install(args: argparse.Namespace) -> int:
    from hooks.install import install

    message = install(args.repo, args.hook_type, chain=args.chain, force=args.force)
    print(message)
    return 0


def run_uninstall(args: argparse.Namespace) -> int:
    from hooks.install import uninstall

    print(uninstall(args.repo, args.hook_type))
    return 0
