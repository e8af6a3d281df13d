"""``gitneural hook install`` / ``uninstall``: GitNeural as a plain git hook.

For developers without the pre-commit framework. The hooks directory is the one git
itself uses (``git rev-parse --git-path hooks``: ``core.hooksPath``, worktrees sharing
their main repository's hooks). A hook that is not GitNeural's is never overwritten
silently: ``--chain`` keeps it beside ours as ``<hook>.gitneural-chained`` and our script
runs it first (its failure stops the commit), ``--force`` sets it aside as
``<hook>.gitneural-saved``. ``uninstall`` removes our script and puts either back.

The script runs the interpreter that installed it (an absolute path: the hook works
without an activated virtualenv), falls back to ``gitneural`` on ``PATH``, and says how
to fix things when neither is there.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path

from bot.errors import GitError, UsageError

#: Identifies a script we wrote (and its format version).
MARKER = "# gitneural-hook 1"
CHAINED_SUFFIX = ".gitneural-chained"
SAVED_SUFFIX = ".gitneural-saved"
HOOK_TYPES = ("pre-commit", "pre-push")

_TEMPLATE = """#!/bin/sh
{marker}: written by `gitneural hook install`; `gitneural hook uninstall` removes it.
# The hook it replaced, if chained, runs first from "$0{chained}".
GITNEURAL_PYTHON={python}
HOOK_TYPE={hook_type}

input=/dev/null
if [ "$HOOK_TYPE" = pre-push ]; then
    # git sends the pushed refs on stdin; both hooks must read them.
    input=$(mktemp) || exit 1
    trap 'rm -f "$input"' EXIT
    cat > "$input"
fi

if [ -x "$0{chained}" ]; then
    "$0{chained}" "$@" < "$input" || exit $?
fi

if [ -x "$GITNEURAL_PYTHON" ]; then
    # -P: never import a bot/ or hooks/ package from the repository being committed to.
    "$GITNEURAL_PYTHON" -P -m bot.cli.main hook run --stage "$HOOK_TYPE" -- "$@" < "$input"
elif command -v gitneural > /dev/null 2>&1; then
    gitneural hook run --stage "$HOOK_TYPE" -- "$@" < "$input"
else
    echo "gitneural: cannot run the $HOOK_TYPE hook: $GITNEURAL_PYTHON is gone and" \\
        "there is no gitneural on PATH; install GitNeural again and run" \\
        "'gitneural hook install --force', or delete $0 (git --no-verify skips it once)" >&2
    exit 1
fi
"""


def hooks_dir(repo: str | Path = ".") -> Path:
    """The directory git runs hooks from for the repository at ``repo``."""
    try:
        out = subprocess.run(
            ["git", "rev-parse", "--git-path", "hooks"],
            cwd=repo,
            capture_output=True,
            text=True,
            check=False,
        )
    except OSError as exc:
        raise GitError(f"cannot run git ({exc.strerror}): install git and put it on PATH") from None
    if out.returncode != 0:
        raise GitError(f"not a git repository: {repo} (run this inside one, or use -C DIR)")
    return (Path(repo) / out.stdout.strip()).absolute()


def is_ours(path: Path) -> bool:
    try:
        with path.open("rb") as f:
            head = f.read(512)
    except OSError:
        return False
    return MARKER.encode() in head


def script(hook_type: str, python: str | None = None) -> str:
    if hook_type not in HOOK_TYPES:
        raise UsageError(f"hook type must be one of {', '.join(HOOK_TYPES)}, not {hook_type!r}")
    return _TEMPLATE.format(
        marker=MARKER,
        chained=CHAINED_SUFFIX,
        python=shlex.quote(python or str(Path(sys.executable).absolute())),
        hook_type=shlex.quote(hook_type),
    )


def _write_executable(path: Path, text: str) -> None:
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(text)
        Path(tmp).chmod(0o755)
        Path(tmp).replace(path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _exists(path: Path) -> bool:
    return path.exists() or path.is_symlink()


def install(
    repo: str | Path = ".",
    hook_type: str = "pre-commit",
    *,
    chain: bool = False,
    force: bool = False,
    python: str | None = None,
) -> str:
    """Install the hook; returns what was done, in one line."""
    text = script(hook_type, python)
    directory = hooks_dir(repo)
    path = directory / hook_type
    chained = path.with_name(path.name + CHAINED_SUFFIX)
    saved = path.with_name(path.name + SAVED_SUFFIX)
    kept = ""
    if _exists(path) and not is_ours(path):
        if not (chain or force):
            raise UsageError(
                f"{path} exists and is not GitNeural's: add --chain to run it before the "
                "review, or --force to set it aside (uninstall puts it back)"
            )
        aside = chained if chain else saved
        for other in (chained, saved):
            if _exists(other):
                raise UsageError(
                    f"{other} is in the way (left by an earlier install): move it, then retry"
                )
        path.replace(aside)
        kept = f"; the previous hook is kept as {aside.name}" + (
            " and runs first" if chain else " (uninstall restores it)"
        )
    try:
        directory.mkdir(parents=True, exist_ok=True)
        _write_executable(path, text)
    except OSError as exc:
        raise GitError(f"cannot write {path}: {exc.strerror}") from None
    return f"installed the GitNeural {hook_type} hook at {path}{kept}"


def uninstall(repo: str | Path = ".", hook_type: str = "pre-commit") -> str:
    """Remove our hook and restore what it replaced; returns what was done, in one line."""
    script(hook_type)  # validates the type
    path = hooks_dir(repo) / hook_type
    if not _exists(path):
        return f"no {hook_type} hook at {path}: nothing to do"
    if not is_ours(path):
        raise UsageError(f"{path} is not GitNeural's hook: left as it is")
    path.unlink()
    for suffix in (CHAINED_SUFFIX, SAVED_SUFFIX):
        previous = path.with_name(path.name + suffix)
        if _exists(previous):
            previous.replace(path)
            return f"removed the GitNeural {hook_type} hook; restored the previous one at {path}"
    return f"removed the GitNeural {hook_type} hook at {path}"
