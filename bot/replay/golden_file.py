"""Golden items from a file (``--golden FILE``): GitNeural's JSON list, or Martian's Code
Review Bench ``golden_comments/*.json`` as published.

GitNeural's format is a list of ``{"change": "BASE..HEAD" | HEAD_SHA, "comments": [{"path",
"line", "text", "severity"}]}`` (a bare sha is the change ``sha^..sha``; ``line`` is a
number or ``[first, last]``; a comment without path and line is text only, for the model
judge). Martian's is a list of ``{"pr_title", "url", "comments": [{"comment",
"severity"}]}``: each pull request's URL names ``refs/pull/N/head`` of the local clone,
reviewed from its merge base with the default branch. A folder reads every ``*.json`` in
it. Changes are keyed by full shas (:attr:`PastChange.key`).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pygit2

from bot.errors import UsageError
from bot.replay.items import GoldenItem

_PULL_URL = re.compile(r"/pull/(\d+)/?(?:[#?].*)?$")


class GoldenFileError(UsageError):
    """A golden file that cannot be read as either format."""


def _fail(source: Path, where: str, what: str) -> GoldenFileError:
    return GoldenFileError(f"golden file {source}: {where}: {what}")


def _commit(repo: pygit2.Repository, rev: str, source: Path, where: str) -> pygit2.Commit:
    try:
        return repo.revparse_single(rev).peel(pygit2.Commit)
    except (KeyError, ValueError, pygit2.GitError) as exc:
        raise _fail(
            source, where, f"{rev!r} is not a commit of this clone; fetch it or fix the file"
        ) from exc


def _change_key(repo: pygit2.Repository, change: Any, source: Path, where: str) -> str:
    if not isinstance(change, str) or not change.strip():
        raise _fail(source, where, '"change" must be "BASE..HEAD" or a commit sha')
    base, dots, head = change.strip().partition("..")
    if not dots:
        tip = _commit(repo, base, source, where)
        if not tip.parents:
            raise _fail(source, where, f"{base!r} has no parent; give the change as BASE..HEAD")
        return f"{tip.parents[0].id}..{tip.id}"
    return f"{_commit(repo, base, source, where).id}..{_commit(repo, head, source, where).id}"


def _lines(value: Any, source: Path, where: str) -> tuple[int, int] | None:
    if value is None:
        return None
    if isinstance(value, int) and not isinstance(value, bool) and value > 0:
        return (value, value)
    if (
        isinstance(value, list)
        and len(value) == 2
        and all(isinstance(n, int) and not isinstance(n, bool) and n > 0 for n in value)
        and value[0] <= value[1]
    ):
        return (value[0], value[1])
    raise _fail(source, where, '"line" must be a line number or [first, last]')


def _text(value: Any, source: Path, where: str, name: str) -> str:
    if value is None:
        return ""
    if not isinstance(value, str):
        raise _fail(source, where, f'"{name}" must be a string')
    return value


def _own_entry(
    repo: pygit2.Repository, entry: dict[str, Any], source: Path, where: str
) -> tuple[str, list[GoldenItem]]:
    key = _change_key(repo, entry.get("change"), source, where)
    comments = entry.get("comments", [])
    if not isinstance(comments, list):
        raise _fail(source, where, '"comments" must be a list')
    items = []
    for j, comment in enumerate(comments):
        at = f"{where}, comment {j}"
        if not isinstance(comment, dict):
            raise _fail(source, at, "must be an object")
        path = comment.get("path")
        if path is not None and (not isinstance(path, str) or not path):
            raise _fail(source, at, '"path" must be a file path')
        lines = _lines(comment.get("line"), source, at)
        if (path is None) != (lines is None):
            raise _fail(source, at, 'give both "path" and "line", or neither (text only)')
        severity = _text(comment.get("severity"), source, at, "severity").lower() or None
        text = _text(comment.get("text"), source, at, "text")
        items.append(GoldenItem(key, path, lines, text, severity, source="file"))
    return key, items


def _default_branch(repo: pygit2.Repository) -> pygit2.Commit:
    for name in ("refs/remotes/origin/HEAD", "HEAD"):
        ref = repo.references.get(name)
        if ref is not None:
            return ref.resolve().peel(pygit2.Commit)
    raise GoldenFileError(f"{repo.path}: no default branch (HEAD); clone the benchmark's fork")


def _martian_entry(
    repo: pygit2.Repository, entry: dict[str, Any], source: Path, where: str
) -> tuple[str, list[GoldenItem]]:
    url = entry.get("url")
    found = _PULL_URL.search(url) if isinstance(url, str) else None
    if found is None:
        raise _fail(source, where, '"url" must be a pull request\'s URL (…/pull/N)')
    ref = f"refs/pull/{found[1]}/head"
    head = repo.references.get(ref)
    if head is None:
        raise _fail(
            source,
            where,
            f"{ref} is not in {repo.path}; fetch it: "
            "git fetch origin '+refs/pull/*/head:refs/pull/*/head'",
        )
    tip = head.peel(pygit2.Commit)
    base = repo.merge_base(tip.id, _default_branch(repo).id)
    if base is None:
        raise _fail(source, where, f"{ref} shares no history with the default branch")
    key = f"{base}..{tip.id}"
    comments = entry.get("comments")
    if not isinstance(comments, list):
        raise _fail(source, where, '"comments" must be a list')
    items = []
    for j, comment in enumerate(comments):
        at = f"{where}, comment {j}"
        if not isinstance(comment, dict) or not isinstance(comment.get("comment"), str):
            raise _fail(source, at, 'must be an object with a "comment" string')
        severity = _text(comment.get("severity"), source, at, "severity").lower() or None
        items.append(GoldenItem(key, None, None, comment["comment"], severity, source="file"))
    return key, items


def _read_one(repo: pygit2.Repository, source: Path, found: dict[str, list[GoldenItem]]) -> None:
    try:
        data = json.loads(source.read_text(encoding="utf-8"))
    except OSError as exc:
        raise GoldenFileError(f"golden file {source}: cannot read it ({exc.strerror})") from exc
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise GoldenFileError(f"golden file {source}: not JSON ({exc}); fix the file") from exc
    if not isinstance(data, list):
        raise _fail(source, "top level", "must be a list of changes")
    for i, entry in enumerate(data):
        where = f"entry {i}"
        if not isinstance(entry, dict):
            raise _fail(source, where, "must be an object")
        if "url" in entry and "change" not in entry:
            key, items = _martian_entry(repo, entry, source, where)
        elif "change" in entry:
            key, items = _own_entry(repo, entry, source, where)
        else:
            raise _fail(source, where, 'needs "change" (GitNeural) or "url" (Code Review Bench)')
        found.setdefault(key, []).extend(items)


def read_golden_file(path: Path, repo_path: Path) -> dict[str, list[GoldenItem]]:
    """Each change's golden items (by ``BASE..HEAD`` of full shas) from ``path``: a file,
    or a folder of ``*.json`` files."""
    try:
        repo = pygit2.Repository(str(repo_path))
    except pygit2.GitError as exc:
        raise GoldenFileError(
            f"{repo_path} is not a git repository; run replay in a clone"
        ) from exc
    if path.is_dir():
        sources = sorted(path.glob("*.json"))
        if not sources:
            raise GoldenFileError(f"golden folder {path} holds no *.json file")
    else:
        sources = [path]
    found: dict[str, list[GoldenItem]] = {}
    for source in sources:
        _read_one(repo, source, found)
    return found
