"""``gitneural``: the command line, and the one place errors become exit codes.

Exit codes: 0 fine, 1 a finding at or above ``--fail-on``, 2 usage or configuration
error, 3 model or API failure. Subcommands import their heavy dependencies (Flask,
Celery, PyGithub, openai) only when they run, so the pre-commit path starts fast.
"""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Callable, Sequence

from bot import __version__
from bot.errors import EXIT_USAGE, GitNeuralError
from bot.logs import configure_logging

Runner = Callable[[argparse.Namespace], int]


def _build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="gitneural",
        description="Code review with Kimi K3 that only ever suggests.",
        epilog="Exit codes: 0 fine, 1 findings at or above --fail-on, "
        "2 usage or configuration error, 3 model or API failure.",
    )
    parser.add_argument("--version", action="version", version=f"gitneural {__version__}")
    parser.add_argument(
        "-v", "--verbose", action="count", default=0, help="log more (repeat for debug)"
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    from bot.cli import (
        action_cmd,
        db_cmd,
        doctor_cmd,
        hook_cmd,
        review_cmd,
        server_cmd,
        setup_cmd,
        usage_cmd,
    )

    review_cmd.add_parser(commands)
    hook_cmd.add_parser(commands)
    server_cmd.add_parser(commands)
    setup_cmd.add_parser(commands)
    doctor_cmd.add_parser(commands)
    db_cmd.add_parser(commands)
    action_cmd.add_parser(commands)
    usage_cmd.add_parser(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = _build_parser()
    args = parser.parse_args(argv)
    run: Runner = args.run
    try:
        configure_logging(logging.WARNING - 10 * min(args.verbose, 2))
        return run(args)
    except GitNeuralError as exc:
        print(f"gitneural: error: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print("gitneural: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return EXIT_USAGE


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
