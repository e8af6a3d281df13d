"""Where a replay's golden items come from: later fixes in the history (the default), or a
golden file (``--golden FILE``, the project's simple JSON format read here until the full
reader of :mod:`bot.replay.golden_file` takes over)."""

from __future__ import annotations

import importlib
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pygit2

from bot.errors import GitError, UsageError
from bot.git.repo import resolve_commit
from bot.replay.items import GoldenItem, PastChange

#: The words a fixing commit's message says (case-insensitive).
FIX_WORDS = ("fix", "fixes", "fixed", "bug", "regression", "revert", "crash", "broken")


def golden_items(
    repo: pygit2.Repository,
    changes: Sequence[PastChange],
    source: str,
    *,
    words: Sequence[str] = FIX_WORDS,
    until: str | None = None,
) -> dict[str, list[GoldenItem]]:
    """``change key -> golden items``: from history (``source`` is ``history``) or a file."""
    if source == "history":
        try:
            module = importlib.import_module("bot.replay.history_golden")
        except ImportError:
            return {c.key: [] for c in changes}
        mined: dict[str, list[GoldenItem]] = module.mine_history(
            repo.workdir or repo.path, list(changes), words=tuple(words), until=until
        )
        return mined
    return read_simple_golden(repo, changes, Path(source))


def _resolve(repo: pygit2.Repository, rev: str) -> str:
    try:
        return str(resolve_commit(repo, rev).id)
    except GitError:  # a change of another clone: it names nothing here
        return rev


def read_simple_golden(
    repo: pygit2.Repository, changes: Sequence[PastChange], path: Path
) -> dict[str, list[GoldenItem]]:
    """A JSON list of ``{"change": "BASE..HEAD" | HEAD_SHA, "comments": [{"path", "line",
    "text", "severity"}]}``, each entry given to the replayed change it names."""
    try:
        data: Any = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise UsageError(f"cannot read --golden {path}: {exc}") from None
    if not isinstance(data, list):
        raise UsageError(f"--golden {path}: a JSON list of changes was expected")
    by_head = {c.head: c for c in changes}
    by_key = {c.key: c for c in changes}
    out: dict[str, list[GoldenItem]] = {c.key: [] for c in changes}
    for entry in data:
        name = str(entry.get("change", ""))
        base, dots, head = name.partition("..")
        if dots:
            change = by_key.get(f"{_resolve(repo, base)}..{_resolve(repo, head)}")
        else:
            change = by_head.get(_resolve(repo, name))
        if change is None:
            continue
        for comment in entry.get("comments") or []:
            line = comment.get("line")
            lines = (int(line), int(line)) if isinstance(line, int) else None
            out[change.key].append(
                GoldenItem(
                    change=change.key,
                    path=comment.get("path"),
                    lines=lines,
                    text=str(comment.get("text", "")),
                    severity=comment.get("severity"),
                    source="file",
                )
            )
    return out
