"""``gitneural init``: GitNeural's files for a repository, written once, on request.

``.gitneural.toml`` with every setting at its default (commented, made from the settings'
definitions); with ``--hook`` the pre-commit framework's entry (``.pre-commit-config.yaml``,
appended to when it exists); with ``--action`` the workflow
(``.github/workflows/gitneural.yml``). It adds what is missing and keeps what is there:
``init --hook`` after ``init`` adds the hook and leaves the settings the user edited
alone. ``--force`` replaces an existing file only after saying so, and keeps the old one
beside it (``NAME.bak``): nothing the user wrote is lost. Every file is planned before
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
from bot.errors import EXIT_OK, UsageError
from bot.settings.repository import CONFIG_FILE

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
        f"workflow, {WORKFLOW}. What exists already is kept (--force replaces it, keeping "
        "the old file as NAME.bak).",
    )
    p.add_argument("--hook", action="store_true", help=f"add the hook to {PRE_COMMIT_CONFIG}")
    p.add_argument("--action", action="store_true", help=f"write {WORKFLOW}")
    p.add_argument(
        "--force",
        action="store_true",
        help=f"replace {CONFIG_FILE} and the workflow if they exist, keeping each old one as "
        f"NAME.bak ({PRE_COMMIT_CONFIG} is only ever appended to)",
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
                _say(f"{PRE_COMMIT_CONFIG} already runs GitNeural's hook")
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
    return [w for w in writes if _wanted(w, top, force=args.force)]


def _wanted(write: _Write, top: Path, *, force: bool) -> bool:
    """Whether ``write`` happens: a new file, an append, or a replacement ``--force``
    asked for; an existing file is otherwise kept, and said to be."""
    if write.what == APPENDED or not write.path.exists():
        return True
    name = write.path.relative_to(top).as_posix()
    if write.path.read_text(encoding="utf-8") == write.text:
        _say(f"{name} is already what init writes: left as it is")
        return False
    if not force:
        _say(f"{name} exists already: kept as you wrote it (--force replaces it)")
        return False
    return True


def _say(line: str) -> None:
    print(f"gitneural: {line}", file=sys.stderr, flush=True)


def _indent(text: str) -> str:
    return "".join(f"  {line}\n" for line in text.splitlines())


def run(args: argparse.Namespace) -> int:
    top = _top(args.repo)
    writes = _plan(top, args)
    if not writes:
        _say("nothing to write")
        return EXIT_OK
    for w in writes:
        name = w.path.relative_to(top).as_posix()
        if w.what != APPENDED and w.path.exists():
            backup = w.path.with_name(w.path.name + ".bak")
            _say(f"replacing {name} (--force); the old one is kept as {backup.name}")
            backup.write_bytes(w.path.read_bytes())
        _say(f"writing {name} ({w.what})")
        w.path.parent.mkdir(parents=True, exist_ok=True)
        w.path.write_text(w.text, encoding="utf-8")
    _say("done: review the files, then commit them (settings are read from the committed revision)")
    return EXIT_OK
