"""``gitneural doctor``: the App's settings checked against the real things they name
(the model, GitHub, the broker, the stores), printed as a table with the fix for each
failure. Exit 0 when every check passes, 1 otherwise."""

from __future__ import annotations

import argparse
import itertools
import os
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any, TextIO

from bot.cli.app_setup.doctor_checks import Row


def add_parser(commands: Any) -> None:
    doctor: argparse.ArgumentParser = commands.add_parser(
        "doctor",
        help="check the App's settings, the model, GitHub, the broker and the stores",
        description="Check every setting of the App, then the model (key, base URL, model "
        "name, one tiny request), the GitHub App (its JWT, GET /app, its installations, "
        "its webhook secret), the broker and the stores, and print a table with the fix "
        "for each failure. Reads the environment and the settings file (gitneural.env). "
        "Exit 0 when every check passes, 1 otherwise.",
    )
    doctor.add_argument(
        "--settings-file",
        type=Path,
        metavar="FILE",
        help="the settings file to read (default GITNEURAL_SETTINGS_FILE, else ./gitneural.env)",
    )
    doctor.set_defaults(run=run_doctor)


def run_doctor(args: argparse.Namespace) -> int:
    from bot.cli.app_setup import doctor_checks
    from bot.cli.server.setting_names import unknown_names
    from bot.cli.server.settings_check import settings_problems
    from bot.settings.env_file import load_settings_file, read_settings

    original = dict(os.environ)
    source = load_settings_file(given=args.settings_file)
    in_file = read_settings(source) if source is not None else {}
    rows = itertools.chain(
        doctor_checks.settings_rows(
            settings_problems(("web", "worker")), str(source or "gitneural.env")
        ),
        doctor_checks.name_rows(unknown_names(original, in_file)),
        doctor_checks.model_rows(),
        doctor_checks.github_rows(),
        doctor_checks.queue_rows(),
    )
    # Each row as soon as its check is done: the model's and GitHub's can take seconds.
    failed = print_table(rows, sys.stdout)
    verdict = "every check passed" if not failed else f"{failed} check(s) failed"
    print(f"\ngitneural doctor: {verdict}", file=sys.stdout)
    return 0 if not failed else 1


#: The check column's width: the longest check's name ("webhook secret") and a margin.
WIDTH = 16


def print_table(rows: Iterable[Row], out: TextIO) -> int:
    """Print each row as it comes; the number that failed."""
    out.write(f"{'check':<{WIDTH}}  result  detail\n")
    out.flush()
    failed = 0
    for row in rows:
        out.write(f"{row.check:<{WIDTH}}  {'ok' if row.ok else 'FAIL':<6}  {row.detail}\n")
        if not row.ok and row.fix:
            out.write(f"{'':<{WIDTH}}  {'':<6}  fix: {row.fix}\n")
        out.flush()
        failed += not row.ok
    return failed
