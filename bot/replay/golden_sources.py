"""Where a replay's golden items come from: later fixes in the history (the default,
:mod:`bot.replay.history_golden`), or a golden file (``--golden FILE``: GitNeural's JSON
list or the Code Review Bench's ``golden_comments``, :mod:`bot.replay.golden_file`), or
the pull requests' human review comments (``--golden github``)."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from pathlib import Path

import pygit2

from bot.replay.golden_file import read_golden_file
from bot.replay.history_golden import DEFAULT_FIX_WORDS, mine_history
from bot.replay.items import GoldenItem, PastChange

#: The words a fixing commit's message says (case-insensitive, whole words).
FIX_WORDS = tuple(DEFAULT_FIX_WORDS)
#: ``--golden github``: the pull requests' human inline review comments.
GITHUB = "github"


def golden_items(
    repo: pygit2.Repository,
    changes: Sequence[PastChange],
    source: str,
    *,
    words: Sequence[str] = FIX_WORDS,
    until: str = "HEAD",
    env: Mapping[str, str] | None = None,
    github_repo: str | None = None,
) -> dict[str, list[GoldenItem]]:
    """``change key -> golden items`` for each change: from the fixes made after it up to
    ``until`` (``source`` is ``history``), or from a golden file or folder
    (:mod:`bot.replay.golden_file`; an entry naming a change by its head sha goes to the
    replayed change of that head), or from the pull requests' human review comments
    (``github``: :mod:`bot.replay.github_access`, reading ``env``)."""
    root = Path(repo.workdir or repo.path)
    if source == "history":
        return mine_history(root, changes, words=words, until=until)
    if source == GITHUB:
        from bot.replay.github_access import github_golden

        return github_golden(repo, changes, env or {}, github_repo=github_repo)
    found = read_golden_file(Path(source), root)
    by_head = {key.partition("..")[2]: items for key, items in found.items()}
    return {c.key: _moved(found.get(c.key) or by_head.get(c.head, []), c.key) for c in changes}


def changes_in_file(repo: pygit2.Repository, source: str) -> list[PastChange]:
    """The changes a golden file names, to replay when none of them is in the history
    walked (a benchmark's pull requests, say): each titled from its head's subject."""
    found = read_golden_file(Path(source), Path(repo.workdir or repo.path))
    changes = []
    for key in found:
        base, _, head = key.partition("..")
        subject = repo.revparse_single(head).peel(pygit2.Commit).message.partition("\n")[0]
        changes.append(PastChange(base, head, subject.strip() or key, commit=head))
    return changes


def _moved(items: list[GoldenItem], key: str) -> list[GoldenItem]:
    return [dataclasses.replace(item, change=key) for item in items]
