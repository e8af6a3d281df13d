"""``gitneural``: the command line, and the one place errors become exit codes.

Exit codes: 0 fine, 1 a finding at or above ``--fail-on``, 2 usage or configuration
error, 3 model or API failure, 4 a run refused (``replay`` over ``--max-tokens``).
Subcommands import their heavy dependencies (Flask,
Celery, PyGithub, openai) only when they run, so the pre-commit path starts fast.
"""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Callable, Sequence
from typing import NoReturn

from bot import __version__
from bot.errors import EXIT_USAGE, GitNeuralError
from bot.extras import require
from bot.logs import configure_logging
from bot.metrics import count_nothing

Runner = Callable[[argparse.Namespace], int]

#: The server's commands: they need the ``app`` extra (Flask, Celery, the store…).
APP_COMMANDS = frozenset({"serve", "worker", "db", "usage", "setup", "doctor"})
#: The commands of a developer's machine and of a workflow: no ``/metrics`` to serve, so
#: nothing is counted and prometheus_client is never imported.
LIGHT_COMMANDS = frozenset({"review", "replay", "hook", "action", "init"})


class Parser(argparse.ArgumentParser):
    """argparse, with a mistake said in one line (not the whole usage block) and where
    to read more; subcommands' parsers are of this class too."""

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message} (see {self.prog} --help)\n")

    def parse_known_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> tuple[argparse.Namespace, list[str]]:
        parsed, extras = super().parse_known_args(args, namespace)
        # The innermost command's parser is recorded first (its namespace is copied up):
        # an unknown option is then blamed on the command it was given to.
        if not hasattr(parsed, "command_parser"):
            parsed.command_parser = self
        return parsed, extras


def _build_parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog="gitneural",
        description="Code review with Kimi K3 that only ever suggests.",
        epilog="Exit codes: 0 fine, 1 findings at or above --fail-on, "
        "2 usage or configuration error, 3 model or API failure, 4 refused (replay over "
        "--max-tokens).",
    )
    parser.add_argument("--version", action="version", version=f"gitneural {__version__}")
    parser.add_argument(
        "-v", "--verbose", action="count", default=0, help="log more (repeat for debug)"
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    from bot.cli import action_cmd, hook_cmd, init_cmd, replay_cmd, review_cmd
    from bot.cli.app_setup import doctor_cmd, setup_cmd
    from bot.cli.server import commands as server_cmd
    from bot.cli.server import db_cmd, relay_cmd, usage_cmd

    review_cmd.add_parser(commands)
    replay_cmd.add_parser(commands)
    hook_cmd.add_parser(commands)
    init_cmd.add_parser(commands)
    server_cmd.add_parser(commands)
    setup_cmd.add_parser(commands)
    doctor_cmd.add_parser(commands)
    db_cmd.add_parser(commands)
    action_cmd.add_parser(commands)
    usage_cmd.add_parser(commands)
    relay_cmd.add_parser(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = _build_parser()
    given = sys.argv[1:] if argv is None else list(argv)
    if not given:  # a bare `gitneural` asks what it can do: the help, not an error
        parser.print_help()
        return 0
    args, unknown = parser.parse_known_args(given)
    if unknown:
        args.command_parser.error(f"unrecognized arguments: {' '.join(unknown)}")
    run: Runner = args.run
    try:
        configure_logging(logging.WARNING - 10 * min(args.verbose, 2))
        if args.command in APP_COMMANDS:
            require("app", f"gitneural {args.command}")
        if args.command in LIGHT_COMMANDS:
            count_nothing()
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
