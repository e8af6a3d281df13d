"""``gitneural init``: GitNeural's files for a repository, written once, on request.

``.gitneural.toml`` with every setting at its default (commented, made from the settings'
definitions); with ``--hook`` the pre-commit framework's entry (``.pre-commit-config.yaml``,
appended to when it exists); with ``--action`` the workflow
(``.github/workflows/gitneural.yml``). It says which files it writes before writing them,
writes no other, and overwrites none without ``--force``: every file is checked before
the first is written, so a refusal leaves the repository as it was. The one command of
GitNeural that writes into a work tree, and only because it is asked to.
"""

from __future__ import annotations

import argparse
import re
import sys
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from bot import __version__
from bot.config import CONFIG_FILE
from bot.errors import EXIT_OK, UsageError

PRE_COMMIT_CONFIG = ".pre-commit-config.yaml"
WORKFLOW = ".github/workflows/gitneural.yml"
REPOSITORY = "https://github.com/gitneural/gitneural"
APPENDED = "GitNeural's hook appended"
_HOOK_ENTRY = "- repo: {repo}\n  rev: v{version}\n  hooks: [{{id: gitneural}}]\n"


def add_parser(commands: Any) -> None:
    p: argparse.ArgumentParser = commands.add_parser(
        "init",
        help="write .gitneural.toml (every setting at its default), and the hook or workflow",
        description=f"Write {CONFIG_FILE} at the top of the repository: every setting at its "
        "default, commented out. --hook adds GitNeural to the pre-commit framework's "
        f"{PRE_COMMIT_CONFIG} (appended when it exists); --action writes the GitHub Action's "
        f"workflow, {WORKFLOW}. Existing files are not overwritten without --force.",
    )
    p.add_argument("--hook", action="store_true", help=f"add the hook to {PRE_COMMIT_CONFIG}")
    p.add_argument("--action", action="store_true", help=f"write {WORKFLOW}")
    p.add_argument(
        "--force",
        action="store_true",
        help=f"overwrite {CONFIG_FILE} and the workflow if they exist "
        f"({PRE_COMMIT_CONFIG} is only ever appended to)",
    )
    p.add_argument("-C", dest="repo", metavar="DIR", default=".", help="run in DIR")
    p.set_defaults(run=run)


@dataclass(frozen=True)
class _Write:
    path: Path
    text: str
    #: What the line announcing it says.
    what: str


def _top(directory: str) -> Path:
    from bot.git.repo import open_repo

    repo = open_repo(directory)
    if repo.workdir is None:
        raise UsageError("a bare repository has no work tree to write settings into")
    return Path(repo.workdir)


def hook_entry() -> str:
    return _HOOK_ENTRY.format(repo=REPOSITORY, version=__version__)


def workflow() -> str:
    text = resources.files("bot.cli").joinpath("templates/gitneural-workflow.yml").read_text()
    return re.sub(r"(gitneural/gitneural@v)[0-9][^\s]*", rf"\g<1>{__version__}", text)


def _with_hook(existing: str) -> str | None:
    """``existing`` with GitNeural's entry at the end of its ``repos:`` list; None when
    that cannot be done by appending (``repos:`` is not the last key)."""
    keys = [line for line in existing.splitlines() if re.match(r"[A-Za-z_][\w-]*\s*:", line)]
    if not keys or not keys[-1].startswith("repos:") or keys[-1].split(":", 1)[1].strip():
        return None
    items = re.findall(r"^( *)- ", existing, re.MULTILINE)
    indent = items[0] if items else "  "
    entry = "".join(f"{indent}{line}\n" for line in hook_entry().splitlines())
    return existing.rstrip("\n") + "\n" + entry


def _plan(top: Path, args: argparse.Namespace) -> list[_Write]:
    from bot.render.settings.init_file import default_settings_file

    writes = [_Write(top / CONFIG_FILE, default_settings_file(), "every setting at its default")]
    if args.hook:
        path = top / PRE_COMMIT_CONFIG
        if not path.exists():
            writes.append(_Write(path, "repos:\n" + _indent(hook_entry()), "GitNeural's hook"))
        else:  # another tool's hooks live there too: appended to, never overwritten
            existing = path.read_text(encoding="utf-8")
            if re.search(r"id:\s*gitneural\b", existing):
                print(
                    f"gitneural: {PRE_COMMIT_CONFIG} already runs GitNeural's hook", file=sys.stderr
                )
            else:
                appended = _with_hook(existing)
                if appended is None:
                    raise UsageError(
                        f"cannot append to {PRE_COMMIT_CONFIG} (repos: is not its last key): "
                        f"add this entry under repos: yourself: {hook_entry()!r}"
                    )
                writes.append(_Write(path, appended, APPENDED))
    if args.action:
        writes.append(_Write(top / WORKFLOW, workflow(), "the review workflow"))
    return writes


def _indent(text: str) -> str:
    return "".join(f"  {line}\n" for line in text.splitlines())


def run(args: argparse.Namespace) -> int:
    top = _top(args.repo)
    writes = _plan(top, args)
    clashes = [
        w.path.relative_to(top).as_posix() for w in writes if w.path.exists() and w.what != APPENDED
    ]
    if clashes and not args.force:
        raise UsageError(
            f"{' and '.join(clashes)} {'exists' if len(clashes) == 1 else 'exist'} already: "
            "nothing was written (--force overwrites)"
        )
    for w in writes:
        name = w.path.relative_to(top).as_posix()
        print(f"gitneural: writing {name} ({w.what})", file=sys.stderr, flush=True)
        w.path.parent.mkdir(parents=True, exist_ok=True)
        w.path.write_text(w.text, encoding="utf-8")
    print(
        "gitneural: done: review the files, then commit them (settings are read from the "
        "committed revision)",
        file=sys.stderr,
    )
    return EXIT_OK
