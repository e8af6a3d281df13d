"""Golden items from the pull requests' human review comments (``--golden github``): each
inline comment a person (not a bot, not GitNeural) started on a pull request's diff, at
its line in the pull request's head.

A change is tied to its pull request by its merge's message (``Merge pull request #N``,
or a squash merge's ``(#N)``: :func:`pull_number`). Replies are left out (their thread's
first comment is the item), and so are comments on removed lines (``LEFT``) and comments
GitHub no longer places on the diff (outdated: no ``line``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import github

from bot.gh.api.errors import fresh_read
from bot.gh.pulls import lazy_pull
from bot.replay.items import GoldenItem, PastChange

_MERGE = re.compile(r"^Merge pull request #(\d+)\b")
_SQUASH = re.compile(r"\(#(\d+)\)\s*$")


def pull_number(change: PastChange) -> int | None:
    """The pull request a change came from, as its title (the merge's subject) says."""
    subject = change.title.split("\n", 1)[0].strip()
    found = _MERGE.match(subject) or _SQUASH.search(subject)
    return int(found[1]) if found else None


def by_person(user: Any, gitneural_login: str | None) -> bool:
    """Whether GitHub's ``user`` object is a person's account (not a bot's, not GitNeural's)."""
    if not isinstance(user, dict):
        return False
    login = str(user.get("login") or "")
    if not login or user.get("type") == "Bot" or login.lower().endswith("[bot]"):
        return False
    return gitneural_login is None or login.lower() != gitneural_login.lower()


def _item(change: PastChange, data: dict[str, Any]) -> GoldenItem | None:
    line, path = data.get("line"), data.get("path")
    if data.get("in_reply_to_id") is not None or data.get("side", "RIGHT") != "RIGHT":
        return None
    if not isinstance(line, int) or not isinstance(path, str):
        return None
    start = data.get("start_line")
    first = start if isinstance(start, int) and data.get("start_side") != "LEFT" else line
    return GoldenItem(
        change=change.key,
        path=path,
        lines=(min(first, line), line),
        text=str(data.get("body") or ""),
        source="github",
    )


def read_github_golden(
    gh: github.Github,
    full_name: str,
    changes: Mapping[int, PastChange],
    *,
    gitneural_login: str | None = None,
) -> dict[str, list[GoldenItem]]:
    """Each change's golden items (by :attr:`PastChange.key`) from the review comments of
    its pull request (``changes``: pull request number → change); one listing per pull."""
    found: dict[str, list[GoldenItem]] = {}
    for number, change in changes.items():
        items = found.setdefault(change.key, [])

        def read(number: int = number) -> list[dict[str, Any]]:
            pull = lazy_pull(gh, full_name, number)
            return [c.raw_data for c in pull.get_review_comments()]

        comments = fresh_read(read, f"reading the review comments of #{number}", None)
        for data in comments:
            if not by_person(data.get("user"), gitneural_login):
                continue
            item = _item(change, data)
            if item is not None:
                items.append(item)
    return found
